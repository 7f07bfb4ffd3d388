//! # `SetP`, `SetR`, `SetF(beta=b)`: measures of the retrieved set
//!
//! The ranking read as a set: all `n` retrieved items, or with `threshold=t` the `n_t` items
//! scored `>= t` (`s_t` of them relevant), in any order.
//!
//! * `SetP = s(n)/n` (`s_t/n_t` with a threshold): 0 for an empty set.
//! * `SetR = s(n)/R` (`s_t/R`): 0 when `R = 0`.
//! * `SetF(beta=b) = (1 + b²)·P·Rc / (b²·P + Rc)` of those two; 0 when nothing relevant is in the
//!   set or `R = 0`. Without a threshold it is computed with trec_eval's `set_F` arithmetic,
//!   operation for operation, so that exact decimal ties (5/32 = 0.15625) print as trec_eval
//!   prints them; with a threshold, as the count form of `F` (f.rs).
//!
//! A threshold makes the plan need scores ([`crate::GoalAccumulator::push_scored`]).
//!
//! trec_eval: `set_P`, `set_recall`, `set_F` (`-m set_F.x` with `x = b²`, printed `set_F_x`).

use super::f::f_beta;
use super::{div, Alias, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::{fmt_beta, fmt_level, parse_number, take_beta2, NativeName};
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `SetP[(threshold=t)]`.
pub(crate) struct SetP;

/// `SetR[(threshold=t)]`.
pub(crate) struct SetR;

/// `SetF(beta=b[,threshold=t])`.
pub(crate) struct SetF;

/// Claims `base` with no cutoff, and takes `threshold`.
fn parse_threshold(n: &mut NativeName<'_>) -> Result<Option<f64>, String> {
    n.no_cutoff()?;
    n.take("threshold").map(parse_number).transpose()
}

fn needs(threshold: Option<f64>) -> Needs {
    Needs {
        threshold,
        ..Needs::NOTHING
    }
}

/// `(items, relevant items)` of the set.
fn set(threshold: Option<f64>, g: &GoalView<'_>) -> (u64, u64) {
    match threshold {
        None => (g.n(), g.s()),
        Some(_) => g.threshold(),
    }
}

fn fmt_threshold(t: Option<f64>) -> String {
    t.map(|t| format!("threshold={}", fmt_level(t)))
        .unwrap_or_default()
}

impl Def for SetP {
    type Fields = (Option<f64>,);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "SetP[(threshold=t)]",
        about: "precision of the retrieved set (of the items scored >= t)",
    }];
    const EXAMPLES: &'static [&'static str] = &["SetP", "SetP(threshold=0.5)"];
    const TREC: &'static [Alias<(Option<f64>,)>] = &[Alias {
        entry: TrecEntry {
            name: "set_P",
            order: 30,
            official: false,
            params: TrecParams::Fixed {
                measure: Measure::SetP { threshold: None },
                refused: None,
            },
        },
        of: |(threshold,)| threshold.is_none().then_some(TrecArg::None),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["SetP"])
            .then(|| parse_threshold(n).map(|threshold| Measure::SetP { threshold }))
    }

    fn fmt((threshold,): (Option<f64>,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match threshold {
            None => f.write_str("SetP"),
            Some(_) => write!(f, "SetP({})", fmt_threshold(threshold)),
        }
    }

    fn needs((threshold,): (Option<f64>,)) -> Needs {
        needs(threshold)
    }

    fn value((threshold,): (Option<f64>,), g: &GoalView<'_>) -> Option<f64> {
        let (n, s) = set(threshold, g);
        Some(div(s as f64, n as f64))
    }
}

impl Def for SetR {
    type Fields = (Option<f64>,);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "SetR[(threshold=t)]",
        about: "recall of the retrieved set (of the items scored >= t)",
    }];
    const EXAMPLES: &'static [&'static str] = &["SetR", "SetR(threshold=1.25)"];
    const TREC: &'static [Alias<(Option<f64>,)>] = &[Alias {
        entry: TrecEntry {
            name: "set_recall",
            order: 32,
            official: false,
            params: TrecParams::Fixed {
                measure: Measure::SetR { threshold: None },
                refused: None,
            },
        },
        of: |(threshold,)| threshold.is_none().then_some(TrecArg::None),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["SetR"])
            .then(|| parse_threshold(n).map(|threshold| Measure::SetR { threshold }))
    }

    fn fmt((threshold,): (Option<f64>,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match threshold {
            None => f.write_str("SetR"),
            Some(_) => write!(f, "SetR({})", fmt_threshold(threshold)),
        }
    }

    fn needs((threshold,): (Option<f64>,)) -> Needs {
        needs(threshold)
    }

    fn value((threshold,): (Option<f64>,), g: &GoalView<'_>) -> Option<f64> {
        let (_, s) = set(threshold, g);
        Some(div(s as f64, g.r() as f64))
    }
}

impl Def for SetF {
    type Fields = (f64, Option<f64>);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "SetF(beta=b[,threshold=t])",
        about: "F-measure of the retrieved set (of the items scored >= t)",
    }];
    const EXAMPLES: &'static [&'static str] = &[
        "SetF(beta=1)",
        "SetF(beta=0.3)",
        "SetF(beta=2,threshold=0.75)",
    ];
    const TREC: &'static [Alias<(f64, Option<f64>)>] = &[Alias {
        entry: TrecEntry {
            name: "set_F",
            order: 34,
            official: false,
            params: TrecParams::Float {
                default: Measure::SetF {
                    beta2: 1.0,
                    threshold: None,
                },
                make: |beta2| Measure::SetF {
                    beta2,
                    threshold: None,
                },
            },
        },
        of: |(beta2, threshold)| match threshold {
            Some(_) => None,
            None if beta2 == 1.0 => Some(TrecArg::None),
            None => Some(TrecArg::Float(beta2)),
        },
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["SetF"]).then(|| {
            let threshold = parse_threshold(n)?;
            let beta2 = take_beta2(n)?.unwrap_or(1.0);
            Ok(Measure::SetF { beta2, threshold })
        })
    }

    fn fmt((beta2, threshold): (f64, Option<f64>), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match threshold {
            None => write!(f, "SetF({})", fmt_beta(beta2)),
            Some(_) => write!(f, "SetF({},{})", fmt_beta(beta2), fmt_threshold(threshold)),
        }
    }

    fn needs((_, threshold): (f64, Option<f64>)) -> Needs {
        needs(threshold)
    }

    fn value((beta2, threshold): (f64, Option<f64>), g: &GoalView<'_>) -> Option<f64> {
        let r = g.r();
        Some(match threshold {
            Some(_) => {
                let (n, s) = g.threshold();
                f_beta(beta2, s as f64, n, r)
            }
            None if g.s() == 0 || r == 0 => 0.0,
            None => {
                // trec_eval's set_F, operation for operation.
                let (p, rc) = (g.s() as f64 / g.n() as f64, g.s() as f64 / r as f64);
                (beta2 + 1.0) * p * rc / (beta2 * p + rc)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, empty, eval, seed, SEED};
    use crate::{Config, GoalAccumulator, Label, Measure, Plan, Truth};
    use std::sync::Arc;

    /// trec_eval's `set_F.0.5` keeps beta² = 0.5, which no `beta=b` gives (sqrt(0.5)² is
    /// 0.5000000000000001): its name says `beta2=0.5` and parses back to the same measure, whose
    /// value is trec_eval's operation for operation (P = 2/3, R = 1: 1.5·P·R / (0.5·P + R) =
    /// 0.75 exactly, where beta² one ulp off gives 0.7499999999999999). A beta whose square
    /// squares back keeps `beta=`.
    #[test]
    fn a_beta_squared_that_is_no_square_keeps_its_name() {
        let m = Measure::parse("set_F.0.5").unwrap()[0];
        assert_eq!(m.to_string(), "SetF(beta2=0.5)");
        assert_eq!(Measure::parse(&m.to_string()).unwrap(), [m]);
        let ranking = [true, false, true];
        assert_eq!(eval(&["SetF(beta2=0.5)"], 2, &ranking), [Some(0.75)]);
        assert_eq!(eval(&["set_F.0.5"], 2, &ranking), [Some(0.75)]);
        assert_eq!(
            eval(&["SetF(beta=0.7071067811865476)"], 2, &ranking),
            [Some(0.7499999999999999)]
        );
        for (name, shown) in [
            ("SetF(beta=2)", "SetF(beta=2)"),
            ("F(beta=0.5)@5", "F(beta=0.5)@5"),
            ("F(beta2=2)@5", "F(beta2=2)@5"),
            ("E(beta2=0.25)", "E(beta=0.5)"),
        ] {
            let m = Measure::parse(name).unwrap()[0];
            assert_eq!(m.to_string(), shown);
            assert_eq!(Measure::parse(shown).unwrap(), [m]);
        }
        let both = Measure::parse("SetF(beta=1,beta2=1)")
            .unwrap_err()
            .to_string();
        assert!(both.contains("not both"), "{both}");
        assert!(Measure::parse("F1(beta2=2)").is_err());
        assert!(Measure::parse("SetF(beta2=0)").is_err());
    }

    #[test]
    fn seed_sets() {
        // The seed's six items hold all three relevant: P = 3/6, R = 3/3.
        assert_eq!(seed("SetP"), 0.5);
        assert_eq!(seed("SetR"), 1.0);
        // F1 = 2·(1/2)·1 / (1/2 + 1) = 2/3.
        assert!(close(seed("SetF(beta=1)"), 2.0 / 3.0));
        // b² = 4: 5·(1/2)·1 / (4·(1/2) + 1) = 5/6.
        assert!(close(seed("SetF(beta=2)"), 5.0 / 6.0));
    }

    /// The seed scored 6, 5, 4, 3, 2, 1 (x highest), measures with thresholds.
    fn scored(names: &[&str]) -> Vec<Option<f64>> {
        let ms = Measure::parse_all(names.iter().copied()).unwrap();
        let plan = Arc::new(Plan::new(&ms, Config::default()));
        assert!(plan.needs_scores());
        let mut acc = GoalAccumulator::new(plan);
        acc.begin(&Truth::binary(3, 0));
        for (rel, score) in SEED.iter().zip([6.0, 5.0, 4.0, 3.0, 2.0, 1.0]) {
            let label = if *rel {
                Label::judged(1)
            } else {
                Label::UNJUDGED
            };
            acc.push_scored(label, score).unwrap();
        }
        acc.finish().unwrap().values().to_vec()
    }

    #[test]
    fn thresholds_cut_the_set_by_score() {
        // Scores >= 3.5: x a y, one relevant of three: P = 1/3, R = 1/3, F1 = 2·1/(3 + 3) = 1/3.
        let v = scored(&[
            "SetP(threshold=3.5)",
            "SetR(threshold=3.5)",
            "SetF(beta=1,threshold=3.5)",
        ]);
        for x in v {
            assert!(close(x.unwrap(), 1.0 / 3.0));
        }
        // Scores >= 2: x a y b c: P = 3/5, R = 1, F1 = 2·3/(3 + 5) = 3/4.
        let v = scored(&[
            "SetP(threshold=2)",
            "SetR(threshold=2)",
            "SetF(beta=1,threshold=2)",
        ]);
        assert_eq!(v, [Some(0.6), Some(1.0), Some(0.75)]);
        // Above every score: the empty set.
        let v = scored(&[
            "SetP(threshold=7)",
            "SetR(threshold=7)",
            "SetF(beta=1,threshold=7)",
        ]);
        assert_eq!(v, [Some(0.0), Some(0.0), Some(0.0)]);
    }

    #[test]
    fn empty_ranking_and_no_relevant() {
        for name in ["SetP", "SetR", "SetF(beta=1)"] {
            assert_eq!(empty(name, 3), Some(0.0), "{name}");
            assert_eq!(eval(&[name], 0, &[false; 2]), [Some(0.0)], "{name}");
        }
    }

    #[test]
    fn trec_names() {
        assert_eq!(Measure::parse("set_P").unwrap()[0].to_string(), "SetP");
        assert_eq!(Measure::parse("set_recall").unwrap()[0].to_string(), "SetR");
        // set_F's parameter is b², as in trec_eval.
        let f = Measure::parse("set_F.0.25").unwrap()[0];
        assert_eq!(f.to_string(), "SetF(beta=0.5)");
        assert_eq!(f.trec_name().unwrap(), "set_F_0.25");
        assert_eq!(
            Measure::parse("SetF(beta=1)").unwrap()[0]
                .trec_name()
                .unwrap(),
            "set_F"
        );
        assert_eq!(
            Measure::parse("SetP(threshold=0.5)").unwrap()[0].trec_name(),
            None
        );
    }
}
