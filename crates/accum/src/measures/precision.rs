//! # `P@k`: precision at cutoff `k`
//!
//! `P@k = s(k) / k`: the fraction of the first `k` ranked items that are relevant.
//!
//! * Fewer than `k` items ranked: the missing ranks count as non-relevant; the divisor stays `k`
//!   (trec_eval's `P_k`), so a ranking of 6 items has `P@10 = s(6)/10`.
//! * Empty ranking: 0. `R = 0`: 0 (nothing is relevant).
//!
//! trec_eval: `P` (default cutoffs 5, 10, 15, 20, 30, 100, 200, 500, 1000), `-m P.k1,k2`, printed
//! `P_k`; in the `official` set.

use super::{Alias, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::{NativeName, TREC_CUTOFFS};
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `P@k`.
pub(crate) struct Precision;

impl Def for Precision {
    type Fields = (u32,);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "P@k",
        about: "precision at k: s(k)/k",
    }];
    const EXAMPLES: &'static [&'static str] = &["P@1", "P@10", "P@3000"];
    const TREC: &'static [Alias<(u32,)>] = &[
        Alias {
            entry: TrecEntry {
                name: "P",
                order: 11,
                official: true,
                params: TrecParams::Cutoffs {
                    default: &TREC_CUTOFFS,
                    make: |k| Measure::P { k },
                },
            },
            of: |(k,)| Some(TrecArg::Cutoff(k)),
        },
        // trec_eval's `P_avgjg`: the same per judgment group (`-R qrels_jg`), the engine
        // averaging over the groups; no name of its own.
        Alias {
            entry: TrecEntry {
                name: "P_avgjg",
                order: 51,
                official: false,
                params: TrecParams::Cutoffs {
                    default: &TREC_CUTOFFS,
                    make: |k| Measure::P { k },
                },
            },
            of: |_| None,
        },
    ];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        // `P(recall=r)` is precision at a recall level (depth.rs).
        if !n.is(&["P"]) || n.has("recall") {
            return None;
        }
        Some(n.need_cutoff().map(|k| Measure::P { k }))
    }

    fn fmt((k,): (u32,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "P@{k}")
    }

    fn needs((k,): (u32,)) -> Needs {
        Needs::cutoff(Some(k))
    }

    fn value(_: (u32,), g: &GoalView<'_>) -> Option<f64> {
        Some(g.s_k() / g.k() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, empty, eval, seed};

    #[test]
    fn seed_at_every_rank() {
        // x a y b c z: s(k) = 0, 1, 1, 2, 3, 3.
        assert_eq!(seed("P@1"), 0.0);
        assert_eq!(seed("P@2"), 0.5);
        assert!(close(seed("P@3"), 1.0 / 3.0));
        assert_eq!(seed("P@4"), 0.5);
        assert_eq!(seed("P@5"), 0.6);
        assert_eq!(seed("P@6"), 0.5);
    }

    #[test]
    fn fewer_than_k_items_divide_by_k() {
        assert_eq!(seed("P@10"), 0.3);
        assert_eq!(seed("P@3000"), 0.001);
    }

    #[test]
    fn empty_ranking_and_no_relevant() {
        assert_eq!(empty("P@5", 3), Some(0.0));
        assert_eq!(eval(&["P@2"], 0, &[false; 6]), [Some(0.0)]);
    }

    #[test]
    fn trec_names() {
        use crate::Measure;
        assert_eq!(Measure::P { k: 5 }.trec_name().unwrap(), "P_5");
        assert_eq!(Measure::parse("P").unwrap().len(), 9);
    }
}
