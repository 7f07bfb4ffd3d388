//! # `nDCG_rel`: nDCG averaged over the relevant items
//!
//! `nDCG` (nDCG.rs: gain = grade when positive, discount `log2(i + 1)`) measured at each item of
//! positive gain and averaged over the `P` positive grades judged: each such item retrieved at
//! rank `i` contributes `DCG@i / IDCG@i`, and each one not retrieved `DCG / IDCG` of the whole
//! ranking. Sum over `P`; 0 when nothing positive is judged. Unlike `nDCG@k` at fixed cutoffs it
//! is measured where the goal's own relevant items are.
//!
//! trec_eval: `ndcg_rel` (not official; experimental). Custom gains (`ndcg_rel.1=3`) are not
//! supported.

use super::{Alias, Def, Needs, Syntax, WalkNeed};
use crate::goal::GoalView;
use crate::measure::NativeName;
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `nDCG_rel`.
pub(crate) struct NdcgRel;

impl Def for NdcgRel {
    type Fields = ();
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "nDCG_rel",
        about: "nDCG@i averaged over the positive grades (DCG/IDCG for those not retrieved)",
    }];
    const EXAMPLES: &'static [&'static str] = &["nDCG_rel"];
    const TREC: &'static [Alias<()>] = &[Alias {
        entry: TrecEntry {
            name: "ndcg_rel",
            order: 24,
            official: false,
            params: TrecParams::Fixed {
                measure: Measure::NDCGRel,
                refused: Some("custom gains"),
            },
        },
        of: |()| Some(TrecArg::None),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["nDCG_rel"])
            .then(|| n.no_cutoff().map(|()| Measure::NDCGRel))
    }

    fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("nDCG_rel")
    }

    fn needs((): ()) -> Needs {
        Needs::walk(WalkNeed::Gain)
    }

    fn value((): (), g: &GoalView<'_>) -> Option<f64> {
        let (sum, found, p, dcg, idcg) = g.walk().0.rel_parts();
        // trec_eval's arithmetic: the missed items' term as ((P - found) · DCG) / IDCG; a sum
        // that is not positive (nothing positive judged: 0/0) gives 0.
        let sum = sum + ((p - found) as f64) * dcg / idcg;
        Some(if sum > 0.0 { sum / p as f64 } else { 0.0 })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, empty, eval_labels, seed};
    use crate::{Label, Truth};

    #[test]
    fn graded() {
        // Grades {3, 1}; ranking 1, unjudged, 3. Rank 1: DCG 1, IDCG 3. Rank 3: DCG
        // 1 + 3/log2(4) = 2.5, IDCG 3 + 1/log2(3).
        let truth = [3, 1];
        let labels = [Label::judged(1), Label::UNJUDGED, Label::judged(3)];
        let v = eval_labels(&["nDCG_rel"], &Truth::graded(&truth).unwrap(), &labels);
        let want = (1.0 / 3.0 + 2.5 / (3.0 + 1.0 / 3f64.log2())) / 2.0;
        assert!(close(v[0].unwrap(), want));
    }

    #[test]
    fn missed_items_take_the_whole_rankings_ndcg() {
        // x a y b c z with R = 4 (one relevant item never retrieved): at a (rank 2), DCG@2 /
        // IDCG@2; at b and c (ranks 4, 5) DCG@4 / IDCG@4 and DCG@5 / IDCG@4 (the ideal ranking
        // ends at 4); the missed one gets the whole ranking's DCG / IDCG.
        let l3 = 1.0 / 3f64.log2();
        let d4 = l3 + 1.0 / 5f64.log2();
        let (d2, d5) = (l3, d4 + 1.0 / 6f64.log2());
        let i = |k: usize| (1..=k).map(|r| 1.0 / ((r + 1) as f64).log2()).sum::<f64>();
        let want = (d2 / i(2) + d4 / i(4) + d5 / i(4) + d5 / i(4)) / 4.0;
        let labels: Vec<Label> = super::super::testing::SEED
            .iter()
            .map(|&r| if r { Label::judged(1) } else { Label::UNJUDGED })
            .collect();
        let v = eval_labels(&["nDCG_rel"], &Truth::binary(4, 0), &labels);
        assert!(close(v[0].unwrap(), want), "{v:?} {want}");
        assert!(seed("ndcg_rel") > 0.0);
    }

    #[test]
    fn nothing_positive() {
        assert_eq!(empty("nDCG_rel", 3), Some(0.0));
        let v = eval_labels(
            &["nDCG_rel"],
            &Truth::graded(&[0]).unwrap(),
            &[Label::judged(0)],
        );
        assert_eq!(v, [Some(0.0)]);
    }
}
