//! # `nDCG`, `nDCG@k`: normalised discounted cumulative gain
//!
//! `DCG@k = sum over ranks i <= k of gain(i) / log2(i + 1)`, with `gain(i)` the grade of the item
//! at rank `i` when it is positive, else 0 (every positive grade is a gain, whatever the relevance
//! level, as in trec_eval's `ndcg`). `nDCG@k = DCG@k / IDCG@k`, where `IDCG@k` is the DCG of the
//! first `k` of the ideal ranking: every positive grade of the actual set, in descending order.
//! Without a cutoff, both run over the whole ranking (`IDCG` over all positive grades).
//!
//! No positive grade (`IDCG = 0`) gives 0; an empty ranking gives 0; fewer than `k` items:
//! `DCG@k = DCG@n` (the ideal still runs to `k`).
//!
//! trec_eval: `ndcg` (with custom gains: gain_dcg.rs) and `ndcg_cut` (default cutoffs 5, 10, ...,
//! 1000).

use super::{div, Alias, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::{fmt_at, NativeName, TREC_CUTOFFS};
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `nDCG[@k]`.
pub(crate) struct Ndcg;

impl Def for Ndcg {
    type Fields = (Option<u32>,);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "nDCG, nDCG@k",
        about: "normalised DCG (gain = grade, discount log2(rank+1)) of the first k",
    }];
    const EXAMPLES: &'static [&'static str] = &["nDCG", "nDCG@3", "nDCG@10"];
    const TREC: &'static [Alias<(Option<u32>,)>] = &[
        Alias {
            entry: TrecEntry {
                name: "ndcg",
                order: 23,
                official: false,
                params: TrecParams::Pairs {
                    default: Measure::NDCG { cutoff: None },
                    make: |pairs| {
                        super::gain_dcg::trec_gains(pairs).map(|gains| Measure::NDCGGains { gains })
                    },
                },
            },
            of: |(cutoff,)| cutoff.is_none().then_some(TrecArg::None),
        },
        Alias {
            entry: TrecEntry {
                name: "ndcg_cut",
                order: 26,
                official: false,
                params: TrecParams::Cutoffs {
                    default: &TREC_CUTOFFS,
                    make: |k| Measure::NDCG { cutoff: Some(k) },
                },
            },
            of: |(cutoff,)| cutoff.map(TrecArg::Cutoff),
        },
    ];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        (n.is(&["nDCG", "NDCG"]) && !n.has("gains"))
            .then(|| n.cutoff().map(|cutoff| Measure::NDCG { cutoff }))
    }

    fn fmt((cutoff,): (Option<u32>,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "nDCG{}", fmt_at(cutoff))
    }

    fn needs((cutoff,): (Option<u32>,)) -> Needs {
        Needs {
            ideal_dcg: true,
            ..Needs::cutoff(cutoff)
        }
    }

    fn value(_: (Option<u32>,), g: &GoalView<'_>) -> Option<f64> {
        Some(div(g.dcg_k(), g.ideal_dcg_k()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, empty, eval, eval_labels, seed};
    use crate::{Label, Truth};

    #[test]
    fn seed_ndcg() {
        // Gains 1 at ranks 2, 4, 5; the ideal puts them at 1, 2, 3.
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2() + 1.0 / 6f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2() + 1.0 / 4f64.log2();
        assert!(close(seed("nDCG"), dcg / idcg));
        assert_eq!(format!("{:.4}", seed("nDCG")), "0.6797");
        // k = 2: DCG = 1/log2(3), IDCG = 1 + 1/log2(3).
        let l3 = 1.0 / 3f64.log2();
        assert!(close(seed("nDCG@2"), l3 / (1.0 + l3)));
        assert_eq!(seed("nDCG@1"), 0.0);
        assert!(close(seed("nDCG@10"), seed("nDCG")));
    }

    #[test]
    fn graded_gains() {
        // Ranking: grade 1, unjudged, grade 3; actual grades {3, 1}.
        let truth = [3, 1];
        let labels = [Label::judged(1), Label::UNJUDGED, Label::judged(3)];
        let v = eval_labels(
            &["nDCG", "nDCG@1"],
            &Truth::graded(&truth).unwrap(),
            &labels,
        );
        let dcg = 1.0 + 3.0 / 4f64.log2();
        let idcg = 3.0 + 1.0 / 3f64.log2();
        assert!(close(v[0].unwrap(), dcg / idcg));
        assert!(close(v[1].unwrap(), 1.0 / 3.0));
    }

    #[test]
    fn empty_ranking_and_no_gain() {
        assert_eq!(empty("nDCG", 3), Some(0.0));
        assert_eq!(empty("nDCG@5", 3), Some(0.0));
        assert_eq!(eval(&["nDCG"], 0, &[false; 3]), [Some(0.0)]);
    }
}
