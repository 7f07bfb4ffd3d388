//! # `Utility(a=..,b=..,c=..,d=..)`: linear utility of the retrieved set
//!
//! The retrieved set against the actual set as a contingency table: `s(n)` relevant items
//! retrieved, `n - s(n)` other items retrieved, `R - s(n)` relevant items not retrieved, and
//! `N - n - R + s(n)` other items not retrieved, `N` being the collection's size. Each cell has a
//! worth (`a`, `b`, `c`, `d`) and
//!
//! `Utility = a·s(n) + b·(n - s(n)) + c·(R - s(n)) + d·(N - n - R + s(n))`,
//!
//! added in that order. The defaults are `a = 1`, `b = -1`, `c = d = 0` (a relevant item retrieved
//! gains 1, another item retrieved costs 1). `N` is the plan's collection size (trec_eval's
//! `-N`), 0 when not given, as trec_eval takes it: then a non-zero `d` multiplies
//! `s(n) - n - R`. Averaged over goals.
//!
//! trec_eval: `utility` (not official), `-m utility.a,b,c,d`: four numbers, each read as C's
//! `atof` reads it (the longest prefix that is a number, 0 when there is none), the printed name
//! `utility_` followed by the parameters as given. Another count of numbers is an error.

use super::{Alias, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::{fmt_level, parse_number, NativeName};
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `Utility(a=..,b=..,c=..,d=..)`.
pub(crate) struct Utility;

/// trec_eval's coefficients without parameters.
pub(crate) const DEFAULT: [f64; 4] = [1.0, -1.0, 0.0, 0.0];

const KEYS: [&str; 4] = ["a", "b", "c", "d"];

/// The measure of trec_eval's `utility.x1,...`: exactly four coefficients.
fn from_trec(xs: &[f64]) -> Result<Measure, String> {
    match *xs {
        [a, b, c, d] => Ok(Measure::Utility {
            coefficients: [a, b, c, d],
        }),
        _ => Err(format!(
            "measure `utility`: expected four coefficients a,b,c,d, found {}",
            xs.len()
        )),
    }
}

impl Def for Utility {
    type Fields = ([f64; 4],);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "Utility[(a=x,b=x,c=x,d=x)]",
        about: "a s(n) + b (n - s(n)) + c (R - s(n)) + d (s(n) - n - R); default a=1, b=-1",
    }];
    const EXAMPLES: &'static [&'static str] = &["Utility", "Utility(a=2.0,b=-1.0,c=0.0,d=0.5)"];
    const TREC: &'static [Alias<([f64; 4],)>] = &[Alias {
        entry: TrecEntry {
            name: "utility",
            order: 17,
            official: false,
            params: TrecParams::Numbers {
                default: Measure::Utility {
                    coefficients: DEFAULT,
                },
                make: from_trec,
            },
        },
        of: |(c,)| (c == DEFAULT).then_some(TrecArg::None),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["Utility"]).then(|| {
            n.no_cutoff()?;
            let mut coefficients = DEFAULT;
            for (c, key) in coefficients.iter_mut().zip(KEYS) {
                if let Some(v) = n.take(key) {
                    *c = parse_number(v)?;
                }
            }
            Ok(Measure::Utility { coefficients })
        })
    }

    fn fmt((c,): ([f64; 4],), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if c == DEFAULT {
            return f.write_str("Utility");
        }
        let parts: Vec<String> = KEYS
            .iter()
            .zip(c)
            .map(|(k, v)| format!("{k}={}", fmt_level(v)))
            .collect();
        write!(f, "Utility({})", parts.join(","))
    }

    fn needs(_: ([f64; 4],)) -> Needs {
        Needs::NOTHING
    }

    fn value((c,): ([f64; 4],), g: &GoalView<'_>) -> Option<f64> {
        let (n, r, s) = (g.n() as i64, g.r() as i64, g.s() as i64);
        let big_n = g.collection_size() as i64;
        // trec_eval's arithmetic: counts subtracted as integers, then each term in doubles.
        Some(
            c[0] * s as f64
                + c[1] * (n - s) as f64
                + c[2] * (r - s) as f64
                + c[3] * (big_n + s - n - r) as f64,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{empty, eval, seed};

    #[test]
    fn seed_utility() {
        // n = 6, R = 3, s = 3: 3 - 3 = 0 by default; 2·3 - 3 = 3 with a = 2.
        assert_eq!(seed("Utility"), 0.0);
        assert_eq!(seed("utility"), 0.0);
        assert_eq!(seed("utility.2,-1,0,0"), 3.0);
        // c = 1, d = 0.5: 3 - 3 + 0 + 0.5·(3 - 6 - 3) = -3.
        assert_eq!(seed("Utility(a=1,b=-1,c=1,d=0.5)"), -3.0);
    }

    #[test]
    fn missed_relevant_items_and_the_empty_ranking() {
        // R = 4, ranking x a (s = 1, n = 2): 2·1 - 1·1 - 0.5·3 = -0.5.
        assert_eq!(
            eval(&["Utility(a=2,b=-1,c=-0.5)"], 4, &[false, true]),
            [Some(-0.5)]
        );
        assert_eq!(empty("Utility(c=-1)", 3), Some(-3.0));
    }

    #[test]
    fn collection_size() {
        // N = 100, n = 6, R = 3, s = 3, d = 0.5: 0 + 0.5 · (100 - 6 - 3 + 3) = 47.
        use crate::{Config, GoalAccumulator, Label, Measure, Plan, Truth};
        let ms = Measure::parse("Utility(d=0.5)").unwrap();
        let config = Config {
            collection_size: 100,
            ..Config::default()
        };
        let mut acc = GoalAccumulator::new(std::sync::Arc::new(Plan::new(&ms, config)));
        acc.begin(&Truth::binary(3, 0));
        for r in super::super::testing::SEED {
            acc.push(if r { Label::judged(1) } else { Label::UNJUDGED });
        }
        assert_eq!(acc.finish().unwrap().values(), [Some(47.0)]);
    }
}
