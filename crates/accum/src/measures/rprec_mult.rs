//! # `Rprec(mult=x)`: precision at a multiple of R
//!
//! `Rprec(mult=x) = s(c) / c` with `c = floor(x·R + 0.9)` (trec_eval's `(long)(x * R + 0.9)`):
//! precision at the rank that is `x` times the relevant count, so that goals of different `R`
//! are measured at the same milestones (`x = 1` is `Rprec`). Fewer than `c` items: `s(c) = s(n)`,
//! the divisor stays `c`. `c < 1` (`R = 0`, or `x·R < 0.1`) gives 0.
//!
//! trec_eval: `Rprec_mult` (not official), `-m Rprec_mult.x1,x2,...`: the numbers read as C's
//! `atof` reads them, sorted, no two equal, each printed `Rprec_mult_%3.2f`; default 0.2, 0.4,
//! ..., 2.0.

use super::{Alias, Def, Needs, Syntax, WalkNeed};
use crate::goal::GoalView;
use crate::measure::{fmt_level, parse_number, NativeName};
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `Rprec(mult=x)`.
pub(crate) struct RprecMult;

/// trec_eval's multiples without parameters.
const DEFAULT: [f64; 10] = [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0];

impl Def for RprecMult {
    type Fields = (f64,);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "Rprec(mult=x)",
        about: "precision at rank c = floor(x R + 0.9): s(c)/c",
    }];
    const EXAMPLES: &'static [&'static str] = &["Rprec(mult=0.2)", "Rprec(mult=1.5)"];
    const TREC: &'static [Alias<(f64,)>] = &[
        Alias {
            entry: TrecEntry {
                name: "Rprec_mult",
                order: 16,
                official: false,
                params: TrecParams::Doubles {
                    default: &DEFAULT,
                    make: |mult| Measure::RprecMult { mult },
                },
            },
            of: |(x,)| Some(TrecArg::Double(x)),
        },
        // trec_eval's `Rprec_mult_avgjg`: the same per judgment group (`-R qrels_jg`), the
        // engine averaging over the groups; no name of its own.
        Alias {
            entry: TrecEntry {
                name: "Rprec_mult_avgjg",
                order: 52,
                official: false,
                params: TrecParams::Doubles {
                    default: &DEFAULT,
                    make: |mult| Measure::RprecMult { mult },
                },
            },
            of: |_| None,
        },
    ];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        (n.is(&["Rprec", "RPrec"]) && n.has("mult")).then(|| {
            n.no_cutoff()?;
            let mult = parse_number(n.take("mult").expect("present"))?;
            Ok(Measure::RprecMult { mult })
        })
    }

    fn fmt((mult,): (f64,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Rprec(mult={})", fmt_level(mult))
    }

    fn needs((mult,): (f64,)) -> Needs {
        Needs::walk(WalkNeed::RMult(mult))
    }

    fn value(_: (f64,), g: &GoalView<'_>) -> Option<f64> {
        let (w, i) = g.walk();
        let (c, s) = w.cut(i);
        Some(if c == 0 { 0.0 } else { s as f64 / c as f64 })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{empty, eval, seed};
    use crate::Measure;

    #[test]
    fn seed_rprec_mult() {
        // R = 3 on x a y b c z: x = 1 gives c = floor(3.9) = 3, s(3) = 1; x = 0.2 gives
        // floor(1.5) = 1, s(1) = 0; x = 2: c = floor(6.9) = 6, s(6) = 3.
        assert_eq!(seed("Rprec(mult=1.0)"), 1.0 / 3.0);
        assert_eq!(seed("Rprec(mult=0.2)"), 0.0);
        assert_eq!(seed("Rprec(mult=2.0)"), 0.5);
        // x = 1.4: floor(5.1) = 5, s(5) = 3.
        assert_eq!(seed("Rprec_mult_1.40"), 0.6);
        assert_eq!(seed("Rprec(mult=1)"), seed("Rprec"));
    }

    #[test]
    fn past_the_ranking_and_below_rank_one() {
        // R = 2, ranking a b (both relevant), x = 3: c = floor(6.9) = 6, s(6) = 2.
        assert_eq!(
            eval(&["Rprec(mult=3)"], 2, &[true, true]),
            [Some(2.0 / 6.0)]
        );
        // x = 0.01, R = 2: floor(0.92) = 0: no rank, 0.
        assert_eq!(eval(&["Rprec(mult=0.01)"], 2, &[true, true]), [Some(0.0)]);
        assert_eq!(empty("Rprec(mult=1)", 3), Some(0.0));
        assert_eq!(eval(&["Rprec(mult=1)"], 0, &[false; 3]), [Some(0.0)]);
    }

    #[test]
    fn trec_eval_names() {
        let ms = Measure::parse("Rprec_mult").unwrap();
        assert_eq!(ms.len(), 10);
        assert_eq!(ms[0].trec_name().unwrap(), "Rprec_mult_0.20");
        let v = crate::trec::resolve(&["Rprec_mult.5.0,0.2,0.35"]).unwrap();
        let names: Vec<&str> = v.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            ["Rprec_mult_0.20", "Rprec_mult_0.35", "Rprec_mult_5.00"]
        );
        assert_eq!(
            Measure::parse("Rprec_mult_0.35").unwrap(),
            [Measure::RprecMult { mult: 0.35 }]
        );
        assert_eq!(
            crate::trec::resolve(&["Rprec_mult.1,1.0"])
                .unwrap_err()
                .code,
            2
        );
    }
}
