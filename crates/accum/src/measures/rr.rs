//! # `RR`, `RR@k`: reciprocal rank
//!
//! `RR = 1 / k1`, with `k1` the rank of the first relevant item; 0 when no relevant item is
//! ranked. `RR@k` is 0 when `k1 > k`. Averaged over goals it is the MRR.
//!
//! `R = 0` and an empty ranking give 0.
//!
//! trec_eval: `recip_rank` (official; no cutoff).

use super::{Alias, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::{fmt_at, NativeName};
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `RR[@k]`.
pub(crate) struct Rr;

impl Def for Rr {
    type Fields = (Option<u32>,);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "RR, RR@k",
        about: "reciprocal rank 1/k1 of the first relevant item (within k); 0 if none",
    }];
    const EXAMPLES: &'static [&'static str] = &["RR", "RR@3"];
    const TREC: &'static [Alias<(Option<u32>,)>] = &[Alias {
        entry: TrecEntry {
            name: "recip_rank",
            order: 9,
            official: true,
            params: TrecParams::Fixed {
                measure: Measure::RR { cutoff: None },
                refused: None,
            },
        },
        of: |(cutoff,)| cutoff.is_none().then_some(TrecArg::None),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["RR", "MRR"])
            .then(|| n.cutoff().map(|cutoff| Measure::RR { cutoff }))
    }

    fn fmt((cutoff,): (Option<u32>,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RR{}", fmt_at(cutoff))
    }

    fn needs((cutoff,): (Option<u32>,)) -> Needs {
        Needs::cutoff(cutoff)
    }

    fn value(_: (Option<u32>,), g: &GoalView<'_>) -> Option<f64> {
        Some(g.rr_k())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{empty, eval, seed};

    #[test]
    fn seed_reciprocal_rank() {
        // x a y b c z: the first relevant item is a, at rank 2.
        assert_eq!(seed("RR"), 0.5);
        assert_eq!(seed("RR@1"), 0.0);
        assert_eq!(seed("RR@2"), 0.5);
        assert_eq!(seed("RR@100"), 0.5);
    }

    #[test]
    fn empty_ranking_and_no_relevant() {
        assert_eq!(empty("RR", 3), Some(0.0));
        assert_eq!(eval(&["RR"], 0, &[false; 3]), [Some(0.0)]);
        assert_eq!(eval(&["RR"], 2, &[false; 3]), [Some(0.0)]);
    }
}
