//! # `NumRet`, `NumRel`, `NumRelRet`, `NumQ`: counts
//!
//! Per goal: `NumRet = n` (items ranked), `NumRel = R` (relevant items in the actual set),
//! `NumRelRet = s(n)` (relevant items ranked), `NumQ = 1`. Summed over goals, not averaged
//! (`NumQ` is then the number of goals evaluated, and has no per-goal value of its own).
//!
//! With `threshold=t`, `NumRet(threshold=t) = n_t` and `NumRelRet(threshold=t) = s_t` count the
//! items scored `>= t` (METRICS.md's `SetP(threshold=t) = s_t/n_t`), summed over goals too: the
//! sums are the pooled view at that threshold (pooled precision `Σ s_t / Σ n_t`, pooled recall
//! `Σ s_t / Σ R`), which `eval --threshold t` prints beside the macro averages.
//!
//! trec_eval: `num_ret`, `num_rel`, `num_rel_ret`, `num_q` (all official, printed as integers).

use super::{Alias, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::{fmt_level, parse_number, Aggregation, NativeName};
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `NumRet`.
pub(crate) struct NumRet;
/// `NumRel`.
pub(crate) struct NumRel;
/// `NumRelRet`.
pub(crate) struct NumRelRet;
/// `NumQ`.
pub(crate) struct NumQ;
/// `NumRet(threshold=t)`.
pub(crate) struct NumRetAbove;
/// `NumRelRet(threshold=t)`.
pub(crate) struct NumRelRetAbove;

/// A count's declaration: native name, trec_eval name and place, value.
macro_rules! count {
    ($def:ident, $native:literal, $about:literal, $trec:literal, $order:literal, $per_goal:literal,
     |$g:ident| $value:expr) => {
        impl Def for $def {
            type Fields = ();
            const SYNTAX: &'static [Syntax] = &[Syntax {
                syntax: $native,
                about: $about,
            }];
            const EXAMPLES: &'static [&'static str] = &[$native];
            const TREC: &'static [Alias<()>] = &[Alias {
                entry: TrecEntry {
                    name: $trec,
                    order: $order,
                    official: true,
                    params: TrecParams::Fixed {
                        measure: Measure::$def,
                        refused: None,
                    },
                },
                of: |()| Some(TrecArg::None),
            }];
            const AGGREGATION: Aggregation = Aggregation::Sum;
            const PER_GOAL: bool = $per_goal;

            fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
                // With a threshold, the counts above it (below).
                (n.is(&[$native]) && !n.has("threshold"))
                    .then(|| n.no_cutoff().map(|()| Measure::$def))
            }

            fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str($native)
            }

            fn needs((): ()) -> Needs {
                Needs::NOTHING
            }

            fn value((): (), $g: &GoalView<'_>) -> Option<f64> {
                Some($value)
            }
        }
    };
}

count!(
    NumRet,
    "NumRet",
    "n: items ranked (summed)",
    "num_ret",
    2,
    true,
    |g| g.n() as f64
);
count!(
    NumRel,
    "NumRel",
    "R: relevant items (summed)",
    "num_rel",
    3,
    true,
    |g| g.r() as f64
);
count!(
    NumRelRet,
    "NumRelRet",
    "s(n): relevant items ranked (summed)",
    "num_rel_ret",
    4,
    true,
    |g| g.s() as f64
);
count!(
    NumQ,
    "NumQ",
    "goals evaluated (summary only)",
    "num_q",
    1,
    false,
    |_g| 1.0
);

/// A count of the items scored `>= threshold`: its declaration (`$field` of `GoalView::threshold`:
/// 0 items, 1 relevant items).
macro_rules! count_above {
    ($def:ident, $variant:ident, $native:literal, $syntax:literal, $about:literal, $example:literal,
     $field:tt) => {
        impl Def for $def {
            type Fields = (f64,);
            const SYNTAX: &'static [Syntax] = &[Syntax {
                syntax: $syntax,
                about: $about,
            }];
            const EXAMPLES: &'static [&'static str] = &[$example];
            const AGGREGATION: Aggregation = Aggregation::Sum;

            fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
                (n.is(&[$native]) && n.has("threshold")).then(|| {
                    n.no_cutoff()?;
                    let t = n.take("threshold").expect("claimed with `threshold`");
                    Ok(Measure::$variant {
                        threshold: parse_number(t)?,
                    })
                })
            }

            fn fmt((t,): (f64,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}(threshold={})", $native, fmt_level(t))
            }

            fn needs((t,): (f64,)) -> Needs {
                Needs {
                    threshold: Some(t),
                    ..Needs::NOTHING
                }
            }

            fn value(_: (f64,), g: &GoalView<'_>) -> Option<f64> {
                Some(g.threshold().$field as f64)
            }
        }
    };
}

count_above!(
    NumRetAbove,
    NumRetAbove,
    "NumRet",
    "NumRet(threshold=t)",
    "n_t: items scored >= t (summed: the pooled count)",
    "NumRet(threshold=0.5)",
    0
);
count_above!(
    NumRelRetAbove,
    NumRelRetAbove,
    "NumRelRet",
    "NumRelRet(threshold=t)",
    "s_t: relevant items scored >= t (summed: the pooled count)",
    "NumRelRet(threshold=0.25)",
    1
);

#[cfg(test)]
mod tests {
    use super::super::testing::{eval, SEED};

    #[test]
    fn seed_counts() {
        let v = eval(&["NumRet", "NumRel", "NumRelRet", "NumQ"], 3, &SEED);
        assert_eq!(v, [Some(6.0), Some(3.0), Some(3.0), Some(1.0)]);
        // Two of four relevant retrieved.
        let v = eval(&["NumRet", "NumRel", "NumRelRet"], 4, &SEED[..4]);
        assert_eq!(v, [Some(4.0), Some(4.0), Some(2.0)]);
    }

    #[test]
    fn summed_over_goals() {
        use crate::{Aggregate, Config, GoalAccumulator, Measure, Plan, Summary, Truth};
        use std::sync::Arc;
        let ms = Measure::parse_all(["NumRet", "NumQ"]).unwrap();
        let plan = Arc::new(Plan::new(&ms, Config::default()));
        let mut acc = GoalAccumulator::new(plan.clone());
        let mut sum = Summary::new(&plan);
        for n in [6, 0, 2] {
            acc.begin(&Truth::binary(1, 0));
            acc.push_unjudged(n);
            sum.add(b"g", &acc.finish().unwrap());
        }
        assert_eq!(sum.aggregate(0), Aggregate::Sum(8.0));
        assert_eq!(sum.aggregate(1), Aggregate::Sum(3.0));
    }
}
