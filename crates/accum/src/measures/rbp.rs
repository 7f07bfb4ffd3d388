//! # `RBP(p=x)`, `RBPResid(p=x)`: rank-biased precision and its residual
//!
//! A user reads rank 1, then each next rank with probability `p` (the persistence):
//! `RBP = (1 - p) · sum over ranks i of gain(i) · p^(i-1)` (Moffat and Zobel, TOIS 2008), the
//! gain being 1 for a relevant item and 0 otherwise; with grades above 1 judged, the gain is
//! `grade / G`, `G` the goal's largest grade (trec_eval scales the gains into [0, 1]). Each
//! item's weight is `p^(i-1)` multiplied out rank by rank, as trec_eval forms it.
//!
//! `RBPResid` bounds what the unjudged items could add: `p^n + (1 - p) · sum of p^(i-1)` over the
//! ranks `i` of items the qrels do not mention or grade negative (every unjudged item relevant,
//! and every rank past the ranking); 0 when every ranked item is judged. `RBP + RBPResid` is
//! then RBP's upper bound.
//!
//! Native names: `RBP(p=x)` as ir_measures names it (`p` 0.8 when not given, ir_measures'
//! default). trec_eval 10.0: `rbp` and `rbp_resid` (not official; 9.0.8 has neither), `p` 0.9
//! unless given as `-m rbp.p=0.8` (printed `rbp_p=0.8`); trec_eval's custom gains
//! (`rbp.1=3`) are not supported.

use super::{Alias, Def, Needs, Syntax, WalkNeed};
use crate::goal::GoalView;
use crate::measure::{parse_number, NativeName};
use crate::trec::{is_level_name, TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `RBP(p=x)`.
pub(crate) struct Rbp;

/// `RBPResid(p=x)`.
pub(crate) struct RbpResid;

/// trec_eval's persistence.
const TREC_P: f64 = 0.9;

/// ir_measures' persistence, for a native name without `p`.
const NATIVE_P: f64 = 0.8;

/// The persistence of trec_eval's pairs: the last `p=`; a gain pair is refused.
fn trec_p(pairs: &[(&str, f64)]) -> Result<f64, String> {
    let mut p = TREC_P;
    for &(k, v) in pairs {
        if is_level_name(k) {
            return Err(format!("custom gains (`{k}={v}`) are not supported"));
        }
        if k == "p" {
            p = v;
        }
    }
    Ok(p)
}

fn parse_p(n: &mut NativeName<'_>) -> Result<f64, String> {
    n.no_cutoff()?;
    match n.take("p") {
        None => Ok(NATIVE_P),
        Some(v) => {
            let p = parse_number(v)?;
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("p must be in [0, 1], found `{v}`"));
            }
            Ok(p)
        }
    }
}

fn trec_arg(p: f64) -> Option<TrecArg> {
    Some(if p == TREC_P {
        TrecArg::None
    } else {
        TrecArg::P(p)
    })
}

impl Def for Rbp {
    type Fields = (f64,);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "RBP(p=x)",
        about: "(1 - p) sum of gain(i) p^(i-1); gain 1 when relevant (grade/max when graded)",
    }];
    const EXAMPLES: &'static [&'static str] = &["RBP(p=0.8)", "RBP(p=0.95)"];
    const TREC: &'static [Alias<(f64,)>] = &[Alias {
        entry: TrecEntry {
            name: "rbp",
            order: 54,
            official: false,
            params: TrecParams::Pairs {
                default: Measure::RBP { p: TREC_P },
                make: |pairs| trec_p(pairs).map(|p| Measure::RBP { p }),
            },
        },
        of: |(p,)| trec_arg(p),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["RBP"])
            .then(|| parse_p(n).map(|p| Measure::RBP { p }))
    }

    fn fmt((p,): (f64,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RBP(p={p})")
    }

    fn needs((p,): (f64,)) -> Needs {
        Needs::walk(WalkNeed::Rbp(p))
    }

    fn value((p,): (f64,), g: &GoalView<'_>) -> Option<f64> {
        let (w, i) = g.walk();
        Some((1.0 - p) * w.rbp(i).gain_sum())
    }
}

impl Def for RbpResid {
    type Fields = (f64,);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "RBPResid(p=x)",
        about: "p^n + (1 - p) sum of p^(i-1) over unjudged ranks: what they could add to RBP",
    }];
    const EXAMPLES: &'static [&'static str] = &["RBPResid(p=0.8)", "RBPResid(p=0.5)"];
    const TREC: &'static [Alias<(f64,)>] = &[Alias {
        entry: TrecEntry {
            name: "rbp_resid",
            order: 55,
            official: false,
            params: TrecParams::Pairs {
                default: Measure::RBPResid { p: TREC_P },
                make: |pairs| trec_p(pairs).map(|p| Measure::RBPResid { p }),
            },
        },
        of: |(p,)| trec_arg(p),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["RBPResid"])
            .then(|| parse_p(n).map(|p| Measure::RBPResid { p }))
    }

    fn fmt((p,): (f64,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RBPResid(p={p})")
    }

    fn needs((p,): (f64,)) -> Needs {
        Needs::walk(WalkNeed::Rbp(p))
    }

    fn value(_: (f64,), g: &GoalView<'_>) -> Option<f64> {
        let (w, i) = g.walk();
        Some(w.rbp(i).residual())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, empty, eval, eval_labels, seed};
    use crate::{Label, Measure, Truth};

    #[test]
    fn seed_rbp() {
        // x a y b c z, p = 0.9: relevant at ranks 2, 4, 5: 0.1 · (0.9 + 0.729 + 0.6561).
        assert!(close(seed("rbp"), 0.1 * 2.2851));
        assert!(close(seed("RBP(p=0.9)"), 0.1 * 2.2851));
        // p = 0.5: 0.5 · (0.5 + 0.125 + 0.0625).
        assert!(close(seed("rbp.p=0.5"), 0.34375));
        assert_eq!(seed("RBP"), seed("RBP(p=0.8)"));
    }

    #[test]
    fn seed_residual() {
        // Unjudged at ranks 1, 3, 6: 1 + 0.81 + 0.59049; p^6 = 0.531441.
        assert!(close(seed("rbp_resid"), 0.531441 + 0.1 * 2.40049));
        // Everything judged: 0; an empty ranking: 0 (nothing unjudged).
        let judged = [Label::judged(1), Label::judged(0)];
        let v = eval_labels(&["rbp_resid"], &Truth::binary(1, 1), &judged);
        assert_eq!(v, [Some(0.0)]);
        assert_eq!(empty("rbp_resid", 2), Some(0.0));
        // One unjudged item: p^1 + 0.1 · 1.
        assert!(close(eval(&["rbp_resid"], 1, &[false])[0].unwrap(), 1.0));
    }

    #[test]
    fn graded_gains_are_scaled() {
        // Grades {3, 1}; ranking 1, unjudged, 3: gains 1/3 and 1.
        let truth = [3, 1];
        let labels = [Label::judged(1), Label::UNJUDGED, Label::judged(3)];
        let v = eval_labels(&["rbp"], &Truth::graded(&truth).unwrap(), &labels);
        assert!(close(v[0].unwrap(), 0.1 * (1.0 / 3.0 + 0.81)));
    }

    #[test]
    fn trec_eval_names() {
        let v = crate::trec::resolve(&["rbp.p=0.8", "rbp_resid"]).unwrap();
        let names: Vec<&str> = v.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["rbp_p=0.8", "rbp_resid"]);
        assert_eq!(v[0].measure, Some(Measure::RBP { p: 0.8 }));
        assert_eq!(Measure::RBP { p: 0.8 }.trec_name().unwrap(), "rbp_p=0.8");
        assert_eq!(
            Measure::parse("rbp_resid").unwrap(),
            [Measure::RBPResid { p: 0.9 }]
        );
        assert_eq!(crate::trec::resolve(&["rbp.1=3"]).unwrap_err().code, 2);
        assert_eq!(crate::trec::resolve(&["rbp.p"]).unwrap_err().code, 2);
        assert!(crate::trec::resolve_for(&["rbp"], crate::TrecRules::V9).is_err());
    }
}
