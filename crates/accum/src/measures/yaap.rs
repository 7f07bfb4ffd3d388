//! # `Yaap`: yet another average precision
//!
//! `Yaap = ln((1 + A) / (1 + R - A))`, `A` being AP's sum `sum of p(i)` over the relevant ranks
//! `i` (AP = A/R). Monotonic with AP for one goal, but unbounded at both ends, so that a mean over
//! goals weighs the extremes as a logit would (Robertson, "On smoothing average precision",
//! ECIR 2012). An empty ranking gives `ln(1 / (1 + R))`; `R = 0`, 0.
//!
//! trec_eval: `yaap` (not official; not in trec_eval's `all_trec`).

use super::{Alias, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::NativeName;
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `Yaap`.
pub(crate) struct Yaap;

impl Def for Yaap {
    type Fields = ();
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "Yaap",
        about: "ln((1 + A)/(1 + R - A)), A the sum of p(i) over relevant ranks (AP = A/R)",
    }];
    const EXAMPLES: &'static [&'static str] = &["Yaap"];
    const TREC: &'static [Alias<()>] = &[Alias {
        entry: TrecEntry {
            name: "yaap",
            order: 53,
            official: false,
            params: TrecParams::Fixed {
                measure: Measure::Yaap,
                refused: None,
            },
        },
        of: |()| Some(TrecArg::None),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["Yaap", "YAAP"])
            .then(|| n.no_cutoff().map(|()| Measure::Yaap))
    }

    fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Yaap")
    }

    fn needs((): ()) -> Needs {
        Needs::NOTHING
    }

    fn value((): (), g: &GoalView<'_>) -> Option<f64> {
        let a = g.ap_sum();
        Some(((1.0 + a) / (1.0 + g.r() as f64 - a)).ln())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, empty, eval, seed};

    #[test]
    fn seed_yaap() {
        // A = 1/2 + 2/4 + 3/5 = 1.6, R = 3.
        assert!(close(seed("Yaap"), (2.6f64 / 2.4).ln()));
        assert_eq!(seed("yaap"), seed("Yaap"));
    }

    #[test]
    fn extremes() {
        // Everything relevant first: A = R: ln(1 + R).
        assert!(close(
            eval(&["Yaap"], 2, &[true, true])[0].unwrap(),
            3f64.ln()
        ));
        assert!(close(empty("Yaap", 3).unwrap(), (0.25f64).ln()));
        assert_eq!(eval(&["Yaap"], 0, &[false]), [Some(0.0)]);
    }
}
