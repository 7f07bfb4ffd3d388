//! # `Success@k`
//!
//! `Success@k = 1` if at least one of the first `k` items is relevant (`s(k) >= 1`), else 0.
//! Averaged over goals, the fraction of goals with a hit in the top `k`.
//!
//! `R = 0` and an empty ranking give 0; fewer than `k` items: `s(k) = s(n)`.
//!
//! trec_eval: `success` (default cutoffs 1, 5, 10), printed `success_k`.

use super::{Alias, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::{NativeName, TREC_SUCCESS_CUTOFFS};
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `Success@k`.
pub(crate) struct Success;

impl Def for Success {
    type Fields = (u32,);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "Success@k",
        about: "1 if s(k) >= 1, else 0",
    }];
    const EXAMPLES: &'static [&'static str] = &["Success@1", "Success@10"];
    const TREC: &'static [Alias<(u32,)>] = &[Alias {
        entry: TrecEntry {
            name: "success",
            order: 29,
            official: false,
            params: TrecParams::Cutoffs {
                default: &TREC_SUCCESS_CUTOFFS,
                make: |k| Measure::Success { k },
            },
        },
        of: |(k,)| Some(TrecArg::Cutoff(k)),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["Success"])
            .then(|| n.need_cutoff().map(|k| Measure::Success { k }))
    }

    fn fmt((k,): (u32,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Success@{k}")
    }

    fn needs((k,): (u32,)) -> Needs {
        Needs::cutoff(Some(k))
    }

    fn value(_: (u32,), g: &GoalView<'_>) -> Option<f64> {
        Some(g.hit_k())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{empty, eval, seed};

    #[test]
    fn seed_success() {
        // x a y b c z: the first hit is at rank 2.
        assert_eq!(seed("Success@1"), 0.0);
        assert_eq!(seed("Success@2"), 1.0);
        assert_eq!(seed("Success@10"), 1.0);
    }

    #[test]
    fn empty_ranking_and_no_relevant() {
        assert_eq!(empty("Success@5", 3), Some(0.0));
        assert_eq!(eval(&["Success@5"], 0, &[false; 6]), [Some(0.0)]);
    }

    #[test]
    fn trec_defaults() {
        use crate::Measure;
        let names: Vec<String> = Measure::parse("success")
            .unwrap()
            .iter()
            .map(|m| m.trec_name().unwrap())
            .collect();
        assert_eq!(names, ["success_1", "success_5", "success_10"]);
    }
}
