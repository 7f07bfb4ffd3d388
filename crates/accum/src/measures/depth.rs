//! # `Depth(recall=r)` and `P(recall=r)`: how deep to reach a recall level
//!
//! With `c(r) = ceil(r·R)` relevant items required (METRICS.md §1, computed as
//! `ceil(r·R - 1e-9)` so that `0.7 · 10` is 7):
//!
//! * `Depth(recall=r)` is the smallest `k` with `s(k) >= c(r)`: how many items a user reads to
//!   find a fraction `r` of the relevant ones. Undefined (no value) when the ranking never gets
//!   there, when `R = 0`, or when the ranking is empty; `c(0) = 0` is reached at `k = 1`. It
//!   aggregates as the mean and median over the goals that reach the level, with the fraction
//!   that do (coverage).
//! * `P(recall=r) = p(Depth(recall=r)) = c(r) / Depth`: the precision there; 0 where the depth is
//!   undefined. `P(recall=0) = p(1) = s(1)`.
//!
//! No trec_eval equivalent.

use super::{Def, LevelNeed, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::{fmt_level, parse_level, Aggregation, Level, NativeName};
use crate::plan::LevelRule;
use crate::Measure;
use std::fmt;

/// `Depth(recall=r)`.
pub(crate) struct Depth;

/// `P(recall=r)`.
pub(crate) struct PAtRecall;

/// Both read the level `r` under METRICS.md's `c(r)`; `r = 0` also reads the cutoff 1.
fn needs(r: f64) -> Needs {
    Needs {
        level: LevelNeed::One(r, LevelRule::Textbook),
        ..Needs::cutoff((r == 0.0).then_some(1))
    }
}

/// The depth, if reached.
fn depth(g: &GoalView<'_>) -> Option<u64> {
    let level = g.level();
    if g.r() == 0 || g.n() == 0 {
        None
    } else if level.need == 0 {
        Some(1)
    } else {
        level.depth
    }
}

impl Def for Depth {
    type Fields = (Level,);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "Depth(recall=r)",
        about: "smallest k with s(k) >= ceil(r*R); mean, median and coverage over goals",
    }];
    const EXAMPLES: &'static [&'static str] = &[
        "Depth(recall=0.0)",
        "Depth(recall=0.7)",
        "Depth(recall=1.0)",
    ];
    const AGGREGATION: Aggregation = Aggregation::Depth;

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["Depth"]).then(|| {
            n.no_cutoff()?;
            let r = n.take("recall").ok_or("`Depth` needs `(recall=r)`")?;
            Ok(Measure::Depth {
                recall: parse_level(r)?,
            })
        })
    }

    fn fmt((recall,): (Level,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Depth(recall={})", fmt_level(recall.0))
    }

    fn needs((recall,): (Level,)) -> Needs {
        needs(recall.0)
    }

    fn value(_: (Level,), g: &GoalView<'_>) -> Option<f64> {
        depth(g).map(|d| d as f64)
    }
}

impl Def for PAtRecall {
    type Fields = (Level,);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "P(recall=r)",
        about: "precision at Depth(recall=r); 0 if not reached",
    }];
    const EXAMPLES: &'static [&'static str] = &["P(recall=0.0)", "P(recall=0.3)", "P(recall=1.0)"];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        (n.is(&["P"]) && n.has("recall")).then(|| {
            n.no_cutoff()?;
            let r = n.take("recall").expect("claimed with `recall`");
            Ok(Measure::PAtRecall {
                recall: parse_level(r)?,
            })
        })
    }

    fn fmt((recall,): (Level,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "P(recall={})", fmt_level(recall.0))
    }

    fn needs((recall,): (Level,)) -> Needs {
        needs(recall.0)
    }

    fn value(_: (Level,), g: &GoalView<'_>) -> Option<f64> {
        let need = g.level().need;
        Some(match depth(g) {
            None => 0.0,
            // p(1) = s(1): the cutoff 1 was planned for r = 0.
            Some(_) if need == 0 => g.s_k(),
            Some(_) => g.level().p_at_depth,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{empty, eval, seed};

    #[test]
    fn seed_depths() {
        // x a y b c z, R = 3: s(k) reaches 1 at k = 2, 2 at k = 4, 3 at k = 5.
        assert_eq!(seed("Depth(recall=0.0)"), 1.0);
        assert_eq!(seed("Depth(recall=1/3)"), 2.0);
        assert_eq!(seed("Depth(recall=0.5)"), 4.0); // c(0.5) = ceil(1.5) = 2
        assert_eq!(seed("Depth(recall=2/3)"), 4.0);
        assert_eq!(seed("Depth(recall=1.0)"), 5.0);
    }

    #[test]
    fn seed_precision_at_recall() {
        assert_eq!(seed("P(recall=0.0)"), 0.0); // p(1) = s(1) = 0: x is not relevant
        assert_eq!(seed("P(recall=1/3)"), 0.5); // 1/2
        assert_eq!(seed("P(recall=2/3)"), 0.5); // 2/4
        assert_eq!(seed("P(recall=1.0)"), 0.6); // 3/5
        assert_eq!(eval(&["P(recall=0.0)"], 1, &[true]), [Some(1.0)]);
    }

    #[test]
    fn unreached_levels_are_undefined_and_zero() {
        // R = 4: the seed's three relevant items never reach c(1.0) = 4.
        let v = eval(
            &["Depth(recall=1.0)", "P(recall=1.0)", "Depth(recall=0.5)"],
            4,
            &super::super::testing::SEED,
        );
        assert_eq!(v, [None, Some(0.0), Some(4.0)]);
        assert_eq!(empty("Depth(recall=0.0)", 3), None);
        assert_eq!(empty("P(recall=0.5)", 3), Some(0.0));
        assert_eq!(eval(&["Depth(recall=0.0)"], 0, &[false]), [None]);
    }
}
