//! # `RnDCG`: nDCG at the R-levels
//!
//! The ideal ranking (every positive grade judged, descending) falls into runs of one grade; the
//! rank ending each run is an R-level (grades 3, 3, 1 give R-levels 2 and 3). `RnDCG` is the mean
//! of `nDCG@c` (nDCG.rs) over the R-levels `c`, and also over `c = n` when the ranking is longer
//! than the ideal one by two items or more (trec_eval's `n > P + 1`, `P` the positive grades
//! judged). `nDCG` swings where the ideal ranking changes grade; measuring it there makes goals of
//! different grade profiles comparable. `R = 0`, or nothing positive judged, gives 0 (trec_eval
//! divides 0 by 0 when `R > 0` and nothing is positive, which takes `-l 0`).
//!
//! trec_eval: `Rndcg` (not official; experimental). Custom gains are not supported.

use super::{Alias, Def, Needs, Syntax, WalkNeed};
use crate::goal::GoalView;
use crate::measure::NativeName;
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `RnDCG`.
pub(crate) struct Rndcg;

impl Def for Rndcg {
    type Fields = ();
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "RnDCG",
        about: "mean nDCG@c over the ranks c where the ideal ranking's grade changes",
    }];
    const EXAMPLES: &'static [&'static str] = &["RnDCG"];
    const TREC: &'static [Alias<()>] = &[Alias {
        entry: TrecEntry {
            name: "Rndcg",
            order: 25,
            official: false,
            params: TrecParams::Fixed {
                measure: Measure::RNDCG,
                refused: Some("custom gains"),
            },
        },
        of: |()| Some(TrecArg::None),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["RnDCG"])
            .then(|| n.no_cutoff().map(|()| Measure::RNDCG))
    }

    fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RnDCG")
    }

    fn needs((): ()) -> Needs {
        Needs::walk(WalkNeed::GainLevels)
    }

    fn value((): (), g: &GoalView<'_>) -> Option<f64> {
        if g.r() == 0 {
            return Some(0.0);
        }
        let (levels, p, n, dcg, idcg) = g.walk().0.level_parts();
        let (mut sum, mut count) = (0.0, 0u64);
        for (d, i) in levels {
            sum += d / i;
            count += 1;
        }
        if n > p + 1 && idcg > 0.0 {
            sum += dcg / idcg;
            count += 1;
        }
        Some(if count == 0 { 0.0 } else { sum / count as f64 })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, empty, eval, eval_labels};
    use crate::{Label, Truth};

    #[test]
    fn graded() {
        // Grades {3, 1}: R-levels 1 (IDCG 3) and 2 (IDCG 3 + 1/log2 3). Ranking 1, unjudged, 3:
        // DCG@1 = DCG@2 = 1; n = 3 is not past P + 1.
        let truth = [3, 1];
        let idcg2 = 3.0 + 1.0 / 3f64.log2();
        let labels = [Label::judged(1), Label::UNJUDGED, Label::judged(3)];
        let v = eval_labels(&["RnDCG"], &Truth::graded(&truth).unwrap(), &labels);
        assert!(close(v[0].unwrap(), (1.0 / 3.0 + 1.0 / idcg2) / 2.0));
        // One more item: n = 4 > P + 1, nDCG of the whole ranking (DCG 2.5) joins.
        let labels = [labels[0], labels[1], labels[2], Label::UNJUDGED];
        let v = eval_labels(&["Rndcg"], &Truth::graded(&truth).unwrap(), &labels);
        let want = (1.0 / 3.0 + 1.0 / idcg2 + 2.5 / idcg2) / 3.0;
        assert!(close(v[0].unwrap(), want));
    }

    #[test]
    fn binary_has_one_level() {
        // R = 3 on a b x: one R-level, c = 3, nDCG@3 = DCG(2 of 3)/IDCG(3).
        let i3 = 1.0 + 1.0 / 3f64.log2() + 0.5;
        let v = eval(&["RnDCG"], 3, &[true, true, false]);
        assert!(close(v[0].unwrap(), (1.0 + 1.0 / 3f64.log2()) / i3));
    }

    #[test]
    fn no_relevant() {
        assert_eq!(empty("RnDCG", 3), Some(0.0));
        assert_eq!(eval(&["RnDCG"], 0, &[false; 4]), [Some(0.0)]);
    }
}
