//! # `AP`, `AP@k`, `AP(norm=min)@k`, `AP(norm=hits)@k`: average precision
//!
//! `AP@k = (sum of p(i) over the relevant ranks i <= k) / D`, with `p(i) = s(i)/i` and the
//! denominator `D` chosen by `norm`:
//!
//! * `D = R` (default): trec_eval's `map` (no cutoff, `k = n`) and `map_cut_k`;
//! * `D = min(k, R)` (`norm=min`): Kaggle's `apk`, 1 when the first `k` are all relevant;
//! * `D = s(k)` (`norm=hits`): the mean precision at the retrieved relevant ranks.
//!
//! `D = 0` gives 0 (`R = 0`; no relevant item in the first `k` for `hits`); an empty ranking
//! gives 0; fewer than `k` items: the sum runs to `n` (`min(k, R)` keeps `k`). `norm=min` and
//! `norm=hits` need a cutoff. Under `--ties group` (scikit-learn), `AP` without a cutoff credits
//! every relevant item of a tie group with the precision at the group's end.
//!
//! trec_eval: `map` (official) and `map_cut` (default cutoffs 5, 10, ..., 1000).

use super::{div, Alias, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::{fmt_at, ApNorm, NativeName, TREC_CUTOFFS};
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `AP[(norm=...)][@k]`.
pub(crate) struct Ap;

impl Def for Ap {
    type Fields = (Option<u32>, ApNorm);
    const SYNTAX: &'static [Syntax] = &[
        Syntax {
            syntax: "AP, AP@k",
            about: "average precision: sum of p(i) at relevant i <= k, over R",
        },
        Syntax {
            syntax: "AP(norm=min)@k",
            about: "the same sum over min(k,R) (Kaggle's apk)",
        },
        Syntax {
            syntax: "AP(norm=hits)@k",
            about: "the same sum over s(k)",
        },
    ];
    const EXAMPLES: &'static [&'static str] =
        &["AP", "AP@5", "AP(norm=min)@10", "AP(norm=hits)@2500"];
    const TREC: &'static [Alias<(Option<u32>, ApNorm)>] = &[
        Alias {
            entry: TrecEntry {
                name: "map",
                order: 5,
                official: true,
                params: TrecParams::Fixed {
                    measure: Measure::AP {
                        cutoff: None,
                        norm: ApNorm::Rel,
                    },
                    refused: None,
                },
            },
            of: |(cutoff, norm)| (cutoff.is_none() && norm == ApNorm::Rel).then_some(TrecArg::None),
        },
        Alias {
            entry: TrecEntry {
                name: "map_cut",
                order: 27,
                official: false,
                params: TrecParams::Cutoffs {
                    default: &TREC_CUTOFFS,
                    make: |k| Measure::AP {
                        cutoff: Some(k),
                        norm: ApNorm::Rel,
                    },
                },
            },
            of: |(cutoff, norm)| match (cutoff, norm) {
                (Some(k), ApNorm::Rel) => Some(TrecArg::Cutoff(k)),
                (None, ApNorm::Rel) | (_, ApNorm::Min | ApNorm::Hits) => None,
            },
        },
        // trec_eval's `map_avgjg`: `AP` per judgment group (`-R qrels_jg`), the engine
        // averaging over the groups; no name of its own.
        Alias {
            entry: TrecEntry {
                name: "map_avgjg",
                order: 50,
                official: false,
                params: TrecParams::Fixed {
                    measure: Measure::AP {
                        cutoff: None,
                        norm: ApNorm::Rel,
                    },
                    refused: None,
                },
            },
            of: |_| None,
        },
    ];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["AP", "MAP"]).then(|| parse(n))
    }

    fn fmt((cutoff, norm): (Option<u32>, ApNorm), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = match norm {
            ApNorm::Rel => "",
            ApNorm::Min => "(norm=min)",
            ApNorm::Hits => "(norm=hits)",
        };
        write!(f, "AP{n}{}", fmt_at(cutoff))
    }

    fn needs((cutoff, _): (Option<u32>, ApNorm)) -> Needs {
        Needs::cutoff(cutoff)
    }

    fn value((_, norm): (Option<u32>, ApNorm), g: &GoalView<'_>) -> Option<f64> {
        Some(match norm {
            ApNorm::Rel => div(g.ap_sum_k(), g.r() as f64),
            ApNorm::Min => div(g.ap_sum_k(), g.k().min(g.r()) as f64),
            ApNorm::Hits => div(g.ap_sum_k(), g.s_k()),
        })
    }
}

fn parse(n: &mut NativeName<'_>) -> Result<Measure, String> {
    let cutoff = n.cutoff()?;
    let norm = match n.take("norm") {
        None | Some("rel") | Some("R") => ApNorm::Rel,
        Some("min") => ApNorm::Min,
        Some("hits") => ApNorm::Hits,
        Some(o) => {
            return Err(format!(
                "`norm` for AP is `min` or `hits` (or absent), found `{o}`"
            ))
        }
    };
    if norm != ApNorm::Rel && cutoff.is_none() {
        return Err("AP(norm=...) needs a cutoff: `AP(norm=min)@k`".into());
    }
    Ok(Measure::AP { cutoff, norm })
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, empty, eval, seed};

    #[test]
    fn seed_average_precision() {
        // x a y b c z: relevant at ranks 2, 4, 5 with p = 1/2, 2/4, 3/5.
        assert!(close(seed("AP"), (1.0 / 2.0 + 2.0 / 4.0 + 3.0 / 5.0) / 3.0));
        assert!(close(seed("AP@10"), seed("AP")));
    }

    #[test]
    fn seed_cutoffs_and_normalisations() {
        // k = 2: sum = 1/2, s(2) = 1, min(2, 3) = 2.
        assert!(close(seed("AP@2"), 1.0 / 6.0));
        assert_eq!(seed("AP(norm=min)@2"), 0.25);
        assert_eq!(seed("AP(norm=hits)@2"), 0.5);
        // k = 4: sum = 1/2 + 2/4 = 1, s(4) = 2, min(4, 3) = 3.
        assert!(close(seed("AP@4"), 1.0 / 3.0));
        assert!(close(seed("AP(norm=min)@4"), 1.0 / 3.0));
        assert_eq!(seed("AP(norm=hits)@4"), 0.5);
        // k = 1: nothing relevant yet; hits divides by s(1) = 0.
        assert_eq!(seed("AP(norm=hits)@1"), 0.0);
    }

    #[test]
    fn empty_ranking_and_no_relevant() {
        assert_eq!(empty("AP", 3), Some(0.0));
        assert_eq!(empty("AP(norm=min)@3", 3), Some(0.0));
        assert_eq!(
            eval(&["AP", "AP(norm=min)@2"], 0, &[false; 4]),
            [Some(0.0), Some(0.0)]
        );
    }

    #[test]
    fn norms_other_than_r_need_a_cutoff() {
        use crate::Measure;
        assert!(Measure::parse("AP(norm=min)").is_err());
        assert_eq!(Measure::parse("MAP@10").unwrap()[0].to_string(), "AP@10");
        assert_eq!(
            Measure::parse("AP(norm=min)@3").unwrap()[0].trec_name(),
            None
        );
    }
}
