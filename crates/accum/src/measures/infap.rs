//! # `infAP`: inferred average precision
//!
//! AP estimated from a judged sample of a pool (Yilmaz and Aslam, CIKM 2006). The qrels'
//! negative grades mark items of the pool left unjudged; items the qrels do not mention are
//! outside the pool. Each relevant item retrieved at rank `i` contributes 1 at rank 1, else
//!
//! `1/i + ((i-1)/i) · (|pool above| / (i-1)) · ((s' + ε) / (s' + m + 2ε))`,
//!
//! `|pool above|` being the items above it in the pool (relevant `s'`, judged non-relevant `m`,
//! or negative grade) and `ε = 0.00001`: precision above it estimated from its judged part,
//! with the items outside the pool counted as non-relevant. `infAP` is the sum over `R`; when
//! every retrieved item is judged, or none is in the pool, it is `AP` to within `ε`'s effect.
//!
//! trec_eval: `infAP` (not official).

use super::{Alias, Def, Needs, Syntax, WalkNeed};
use crate::goal::GoalView;
use crate::measure::NativeName;
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `infAP`.
pub(crate) struct InfAp;

impl Def for InfAp {
    type Fields = ();
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "infAP",
        about: "inferred AP: precision above each relevant item estimated from its judged part",
    }];
    const EXAMPLES: &'static [&'static str] = &["infAP"];
    const TREC: &'static [Alias<()>] = &[Alias {
        entry: TrecEntry {
            name: "infAP",
            order: 14,
            official: false,
            params: TrecParams::Fixed {
                measure: Measure::InfAP,
                refused: None,
            },
        },
        of: |()| Some(TrecArg::None),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["infAP", "InfAP"])
            .then(|| n.no_cutoff().map(|()| Measure::InfAP))
    }

    fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("infAP")
    }

    fn needs((): ()) -> Needs {
        Needs::walk(WalkNeed::InfAp)
    }

    fn value((): (), g: &GoalView<'_>) -> Option<f64> {
        let sum = g.walk().0.infap_sum();
        Some(match g.r() {
            0 => sum,
            r => sum / r as f64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, empty, eval_labels, seed};
    use crate::{Label, Truth};

    #[test]
    fn fully_judged_is_ap() {
        let labels = [0, 1, 0, 1, 1, 0].map(Label::judged);
        let v = eval_labels(&["infAP", "AP"], &Truth::binary(3, 3), &labels);
        assert!((v[0].unwrap() - v[1].unwrap()).abs() < 1e-5);
        // Rank 2: 1/2 + 1/2 · 1/1 · ε/(1 + 2ε); ranks 4 and 5 likewise, all above judged.
        let eps = 0.00001;
        let rank2 = 0.5 + 0.5 * (eps / (1.0 + 2.0 * eps));
        let rank4 = 0.25 + 0.75 * (3.0 / 3.0) * ((1.0 + eps) / (3.0 + 2.0 * eps));
        let rank5 = 0.2 + 0.8 * (4.0 / 4.0) * ((2.0 + eps) / (4.0 + 2.0 * eps));
        assert!(close(v[0].unwrap(), (rank2 + rank4 + rank5) / 3.0));
    }

    #[test]
    fn pool_and_sample() {
        // Grades {2, 1, 0, -1}; ranking: 1, outside the pool, -1, 0, 2. Rank 1: 1. Rank 5: above
        // it 3 of the pool (1 relevant, 1 non-relevant, 1 unjudged):
        // 1/5 + 4/5 · 3/4 · (1 + ε)/(2 + 2ε) = 0.5.
        let truth = [2, 1, 0, -1];
        let labels = [
            Label::judged(1),
            Label::UNJUDGED,
            Label::judged(-1),
            Label::judged(0),
            Label::judged(2),
        ];
        let v = eval_labels(&["infAP"], &Truth::graded(&truth).unwrap(), &labels);
        assert!(close(v[0].unwrap(), 0.75));
        // Outside the pool only: rank 2 gives 1/2, rank 4 1/4 + 3/4 · 1/3 · (1 + ε)/(1 + 2ε),
        // rank 5 1/5 + 4/5 · 2/4 · (2 + ε)/(2 + 2ε).
        let eps = 0.00001;
        let want = (0.5
            + (0.25 + 0.75 * (1.0 / 3.0) * ((1.0 + eps) / (1.0 + 2.0 * eps)))
            + (0.2 + 0.8 * (2.0 / 4.0) * ((2.0 + eps) / (2.0 + 2.0 * eps))))
            / 3.0;
        assert!(close(seed("infAP"), want));
        assert!((seed("infAP") - seed("AP")).abs() < 1e-5);
    }

    #[test]
    fn nothing_relevant() {
        assert_eq!(empty("infAP", 3), Some(0.0));
    }
}
