//! # `Leak@k`, `LeakRank`: inaccessible premises a ranking proposes
//!
//! Premise selection ranks premises for a theorem, and only some premises are *accessible* there
//! (from a file the theorem's file imports, directly or transitively, or earlier in its own file:
//! METRICS.md §9). These two measures read the *unmasked* ranking: the ranking as the predictions
//! give it (ordered, cut at `--depth`, repeats removed), before `--mask accessible` takes the
//! inaccessible premises out. A premise the corpus does not define counts as inaccessible.
//!
//! * `Leak@k = (inaccessible premises among the first k of the unmasked ranking) / k`: the share
//!   of the top `k` a user could never use. Like `P@k` it divides by `k` even when fewer than `k`
//!   premises are ranked (the missing ranks are not inaccessible). Empty ranking: 0.
//! * `LeakRank`: the rank (1-based) in the unmasked ranking of the first inaccessible premise.
//!   Undefined (no value) when the ranking has none, as `Depth(recall=r)` is when a level is not
//!   reached; it aggregates the same way: the mean and median over the goals that have one, and
//!   the share of goals that do (coverage, "reached").
//!
//! Neither depends on relevance: `R = 0` changes nothing. Both need the corpus (the engine
//! refuses them without one) and are the same with or without the mask. No trec_eval equivalent.

use super::{Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::{Aggregation, NativeName};
use crate::Measure;
use std::fmt;

/// `Leak@k`.
pub(crate) struct Leak;

/// `LeakRank`.
pub(crate) struct LeakRank;

impl Def for Leak {
    type Fields = (u32,);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "Leak@k",
        about: "inaccessible premises among the first k of the unmasked ranking, over k (needs the corpus)",
    }];
    const EXAMPLES: &'static [&'static str] = &["Leak@1", "Leak@10"];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["Leak"])
            .then(|| n.need_cutoff().map(|k| Measure::Leak { k }))
    }

    fn fmt((k,): (u32,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Leak@{k}")
    }

    fn needs((k,): (u32,)) -> Needs {
        Needs {
            leak: Some(k),
            ..Needs::NOTHING
        }
    }

    fn value((k,): (u32,), g: &GoalView<'_>) -> Option<f64> {
        Some(g.leaked_k() as f64 / k as f64)
    }
}

impl Def for LeakRank {
    type Fields = ();
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "LeakRank",
        about: "rank of the first inaccessible premise of the unmasked ranking; mean, median and coverage over the goals that have one (needs the corpus)",
    }];
    const EXAMPLES: &'static [&'static str] = &["LeakRank"];
    const AGGREGATION: Aggregation = Aggregation::Depth;

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["LeakRank"])
            .then(|| n.no_cutoff().map(|()| Measure::LeakRank))
    }

    fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LeakRank")
    }

    fn needs((): ()) -> Needs {
        Needs {
            leak_rank: true,
            ..Needs::NOTHING
        }
    }

    fn value((): (), g: &GoalView<'_>) -> Option<f64> {
        g.leak_rank().map(|r| r as f64)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Config, GoalAccumulator, Label, Measure, Plan, Truth};
    use std::sync::Arc;

    /// `names` on a goal whose unmasked ranking is `inaccessible` (true: an inaccessible
    /// premise), every premise ranked (no mask).
    fn leaks(names: &[&str], inaccessible: &[bool]) -> Vec<Option<f64>> {
        let ms = Measure::parse_all(names.iter().copied()).unwrap();
        let plan = Arc::new(Plan::new(&ms, Config::default()));
        assert!(plan.needs_leaks());
        let mut acc = GoalAccumulator::new(plan);
        acc.begin(&Truth::binary(1, 0));
        for &bad in inaccessible {
            acc.push_unmasked(bad);
            acc.push(Label::UNJUDGED);
        }
        acc.finish().unwrap().values().to_vec()
    }

    #[test]
    fn leak_at_k_and_first_leak() {
        // ok bad ok bad bad: inaccessible at ranks 2, 4 and 5.
        let r = [false, true, false, true, true];
        let got = leaks(&["Leak@1", "Leak@2", "Leak@4", "Leak@10", "LeakRank"], &r);
        assert_eq!(
            got,
            [
                Some(0.0),
                Some(1.0 / 2.0),
                Some(2.0 / 4.0),
                Some(3.0 / 10.0),
                Some(2.0)
            ]
        );
    }

    #[test]
    fn no_leak_and_empty_ranking() {
        assert_eq!(
            leaks(&["Leak@3", "LeakRank"], &[false, false]),
            [Some(0.0), None]
        );
        assert_eq!(leaks(&["Leak@3", "LeakRank"], &[]), [Some(0.0), None]);
        assert_eq!(leaks(&["LeakRank"], &[true]), [Some(1.0)]);
    }
}
