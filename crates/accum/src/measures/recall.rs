//! # `R@k` and `R(norm=min)@k`: recall at cutoff `k`
//!
//! * `R@k = s(k) / R`: the fraction of the relevant items found in the first `k`.
//! * `R(norm=min)@k = s(k) / min(k, R)` ("capped recall", trec_eval's `relative_P`): 1 when the
//!   first `k` items are as relevant as they can be, even if `R > k`.
//!
//! Edge cases: `R = 0` gives 0 for both; an empty ranking gives 0; fewer than `k` items: `s(k)` is
//! `s(n)` (and `min(k, R)` keeps `k`, not `n`).
//!
//! trec_eval: `recall` and `relative_P` (default cutoffs 5, 10, ..., 1000), printed `recall_k`
//! and `relative_P_k`.

use super::{div, Alias, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::{fmt_at, NativeName, RecallNorm, TREC_CUTOFFS};
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `R@k`, `R(norm=min)@k`.
pub(crate) struct Recall;

impl Def for Recall {
    type Fields = (u32, RecallNorm);
    const SYNTAX: &'static [Syntax] = &[
        Syntax {
            syntax: "R@k",
            about: "recall at k: s(k)/R",
        },
        Syntax {
            syntax: "R(norm=min)@k",
            about: "capped recall at k: s(k)/min(k,R)",
        },
    ];
    const EXAMPLES: &'static [&'static str] = &["R@10", "R@3000", "R(norm=min)@10"];
    const TREC: &'static [Alias<(u32, RecallNorm)>] = &[
        Alias {
            entry: TrecEntry {
                name: "recall",
                order: 13,
                official: false,
                params: TrecParams::Cutoffs {
                    default: &TREC_CUTOFFS,
                    make: |k| Measure::R {
                        k,
                        norm: RecallNorm::Rel,
                    },
                },
            },
            of: |(k, norm)| (norm == RecallNorm::Rel).then_some(TrecArg::Cutoff(k)),
        },
        Alias {
            entry: TrecEntry {
                name: "relative_P",
                order: 28,
                official: false,
                params: TrecParams::Cutoffs {
                    default: &TREC_CUTOFFS,
                    make: |k| Measure::R {
                        k,
                        norm: RecallNorm::Min,
                    },
                },
            },
            of: |(k, norm)| (norm == RecallNorm::Min).then_some(TrecArg::Cutoff(k)),
        },
    ];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        // `R(origin=...)@k` is origin.rs's.
        (n.is(&["R", "Recall"]) && !n.has("origin")).then(|| parse(n))
    }

    fn fmt((k, norm): (u32, RecallNorm), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match norm {
            RecallNorm::Rel => write!(f, "R{}", fmt_at(Some(k))),
            RecallNorm::Min => write!(f, "R(norm=min){}", fmt_at(Some(k))),
        }
    }

    fn needs((k, _): (u32, RecallNorm)) -> Needs {
        Needs::cutoff(Some(k))
    }

    fn value((_, norm): (u32, RecallNorm), g: &GoalView<'_>) -> Option<f64> {
        let s = g.s_k();
        Some(match norm {
            RecallNorm::Rel => div(s, g.r() as f64),
            RecallNorm::Min => div(s, g.k().min(g.r()) as f64),
        })
    }
}

fn parse(n: &mut NativeName<'_>) -> Result<Measure, String> {
    let cutoff = n.cutoff()?;
    let norm = match n.take("norm") {
        None | Some("rel") | Some("R") => RecallNorm::Rel,
        Some("min") => RecallNorm::Min,
        Some(o) => return Err(format!("`norm` for R@k is `min` (or absent), found `{o}`")),
    };
    let k = cutoff.map_or_else(|| n.need_cutoff(), Ok)?;
    Ok(Measure::R { k, norm })
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, empty, eval, seed};

    #[test]
    fn seed_at_every_rank() {
        // x a y b c z, R = 3: s(k) = 0, 1, 1, 2, 3, 3.
        assert_eq!(seed("R@1"), 0.0);
        assert!(close(seed("R@2"), 1.0 / 3.0));
        assert!(close(seed("R@3"), 1.0 / 3.0));
        assert!(close(seed("R@4"), 2.0 / 3.0));
        assert_eq!(seed("R@5"), 1.0);
        assert_eq!(seed("R@10"), 1.0);
    }

    #[test]
    fn capped_recall_divides_by_min_k_r() {
        assert_eq!(seed("R(norm=min)@1"), 0.0);
        assert_eq!(seed("R(norm=min)@2"), 0.5); // 1 / min(2, 3)
        assert!(close(seed("R(norm=min)@4"), 2.0 / 3.0)); // 2 / min(4, 3)
                                                          // R = 5 with the first two items relevant: R@2 = 2/5 but capped recall is 1.
        assert_eq!(
            eval(&["R@2", "R(norm=min)@2"], 5, &[true, true]),
            [Some(0.4), Some(1.0)]
        );
    }

    #[test]
    fn empty_ranking_and_no_relevant() {
        assert_eq!(empty("R@5", 3), Some(0.0));
        assert_eq!(empty("R(norm=min)@5", 3), Some(0.0));
        assert_eq!(
            eval(&["R@2", "R(norm=min)@2"], 0, &[false; 3]),
            [Some(0.0), Some(0.0)]
        );
    }

    #[test]
    fn trec_names() {
        use crate::Measure;
        assert_eq!(Measure::parse("recall_10").unwrap()[0].to_string(), "R@10");
        assert_eq!(
            Measure::parse("relative_P.5").unwrap()[0].to_string(),
            "R(norm=min)@5"
        );
    }
}
