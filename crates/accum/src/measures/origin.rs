//! # `R(origin=in-file)@k`, `R(origin=imported)@k`: recall split by where premises are defined
//!
//! Premise selection (METRICS.md §9): a goal's relevant premises are either defined in the goal's
//! own file (`in-file`) or in another file (`imported`). Each measure is `R@k` restricted to one
//! origin:
//!
//! * `R(origin=o)@k = s_o(k) / R_o`: `R_o` the goal's relevant items of origin `o`, `s_o(k)` those
//!   among the first `k` (under tie groups, its expected value, as `s(k)` is).
//!
//! Undefined (no value) when `R_o = 0`, and aggregated over the goals where it is defined (a
//! mean over them, and the share of evaluated goals they are: [`Aggregation::Covered`]), as `R@k`
//! leaves goals with `R = 0` out by default. An empty ranking gives 0 when `R_o > 0`. The caller
//! gives the origins (the engine, from the corpus: a relevant premise the corpus does not define
//! is of neither origin). No trec_eval equivalent.

use super::{div, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::{fmt_at, Aggregation, NativeName, Origin};
use crate::Measure;
use std::fmt;

/// `R(origin=in-file)@k`, `R(origin=imported)@k`.
pub(crate) struct RecallOrigin;

impl Def for RecallOrigin {
    type Fields = (u32, Origin);
    const SYNTAX: &'static [Syntax] = &[
        Syntax {
            syntax: "R(origin=in-file)@k",
            about: "recall at k of the relevant premises defined in the goal's own file; mean over the goals that have one (needs the corpus)",
        },
        Syntax {
            syntax: "R(origin=imported)@k",
            about: "recall at k of the relevant premises defined in another file; mean over the goals that have one (needs the corpus)",
        },
    ];
    const EXAMPLES: &'static [&'static str] = &["R(origin=in-file)@10", "R(origin=imported)@1"];
    const AGGREGATION: Aggregation = Aggregation::Covered;

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        (n.is(&["R", "Recall"]) && n.has("origin")).then(|| {
            let origin = match n.take("origin") {
                Some("in-file") => Origin::InFile,
                Some("imported") => Origin::Imported,
                Some(o) => {
                    return Err(format!(
                        "`origin` for R@k is `in-file` or `imported`, found `{o}`"
                    ))
                }
                None => unreachable!("`origin` is given"),
            };
            let k = n.need_cutoff()?;
            Ok(Measure::ROrigin { k, origin })
        })
    }

    fn fmt((k, origin): (u32, Origin), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "R(origin={}){}", origin.name(), fmt_at(Some(k)))
    }

    fn needs((k, _): (u32, Origin)) -> Needs {
        Needs {
            cutoff: Some(k),
            origin: true,
            ..Needs::NOTHING
        }
    }

    fn value((_, origin): (u32, Origin), g: &GoalView<'_>) -> Option<f64> {
        let r = g.r_origin(origin);
        (r > 0).then(|| div(g.s_origin_k(origin), r as f64))
    }
}

#[cfg(test)]
mod tests {
    use crate::{Config, GoalAccumulator, Label, Measure, Origin, Plan, Ties, Truth};
    use std::sync::Arc;

    const NAMES: [&str; 4] = [
        "R(origin=in-file)@2",
        "R(origin=imported)@2",
        "R(origin=in-file)@10",
        "R(origin=imported)@10",
    ];

    /// The four measures on a goal with `in_file` and `imported` relevant premises (and
    /// `r` relevant in all), ranked `items`: `Some(origin)` a relevant item of that origin, `None`
    /// an unjudged one.
    fn split(
        r: u64,
        (in_file, imported): (u64, u64),
        items: &[Option<Option<Origin>>],
        ties: Option<&[f64]>,
    ) -> Vec<Option<f64>> {
        let ms = Measure::parse_all(NAMES).unwrap();
        let config = Config {
            ties: if ties.is_some() {
                Ties::Group
            } else {
                Ties::Given
            },
            ..Config::default()
        };
        let plan = Arc::new(Plan::new(&ms, config));
        assert!(plan.needs_origins());
        let mut acc = GoalAccumulator::new(plan);
        acc.begin(&Truth::binary(r, 0).with_origins(in_file, imported));
        for (i, it) in items.iter().enumerate() {
            let label = match it {
                Some(o) => {
                    acc.set_origin(*o);
                    Label::judged(1)
                }
                None => Label::UNJUDGED,
            };
            match ties {
                Some(s) => acc.push_scored(label, s[i]).unwrap(),
                None => acc.push(label),
            }
        }
        acc.finish().unwrap().values().to_vec()
    }

    const F: Option<Option<Origin>> = Some(Some(Origin::InFile));
    const I: Option<Option<Origin>> = Some(Some(Origin::Imported));
    const U: Option<Option<Origin>> = Some(None);

    #[test]
    fn recall_of_each_origin() {
        // Relevant: 2 in-file, 3 imported, 1 of no origin (R = 6). Ranking: I x F U I.
        // At 2: in-file 0/2, imported 1/3; at 10: in-file 1/2, imported 2/3.
        let got = split(6, (2, 3), &[I, None, F, U, I], None);
        assert_eq!(
            got,
            [Some(0.0), Some(1.0 / 3.0), Some(0.5), Some(2.0 / 3.0)]
        );
    }

    #[test]
    fn no_premise_of_an_origin_is_undefined_and_empty_is_zero() {
        // Only imported premises: in-file is undefined; an empty ranking finds none (0).
        assert_eq!(
            split(2, (0, 2), &[], None),
            [None, Some(0.0), None, Some(0.0)]
        );
        assert_eq!(split(1, (0, 0), &[U], None), [None; 4]);
    }

    #[test]
    fn tie_groups_give_the_expected_count() {
        // Scores 3 | 2 2 2: F first, then a group of three holding I, I and an unjudged item.
        // At 2 the group gives 1 of its 3 places: expected imported found 2 * 1/3, over 2.
        let got = split(3, (1, 2), &[F, I, None, I], Some(&[3.0, 2.0, 2.0, 2.0]));
        assert_eq!(
            got,
            [Some(1.0), Some(2.0 / 3.0 / 2.0), Some(1.0), Some(1.0)]
        );
    }

    #[test]
    fn names() {
        let m = Measure::parse("R(origin=in-file)@5").unwrap();
        assert_eq!(
            m,
            [Measure::ROrigin {
                k: 5,
                origin: Origin::InFile
            }]
        );
        assert!(Measure::parse("R(origin=elsewhere)@5").is_err());
        assert!(Measure::parse("R(origin=imported)").is_err());
    }
}
