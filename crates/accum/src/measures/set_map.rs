//! # `SetAP`: average precision of the retrieved set
//!
//! The retrieved set read without its order: each retrieved relevant item is given the set's
//! precision `s(n)/n`, each relevant item not retrieved 0, and the mean is taken over the `R`
//! relevant items: `SetAP = s(n)² / (n·R)`, which is `SetP · SetR`. 0 when `n = 0` or `R = 0`.
//!
//! trec_eval: `set_map` (not official).

use super::{Alias, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::NativeName;
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `SetAP`.
pub(crate) struct SetAp;

impl Def for SetAp {
    type Fields = ();
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "SetAP",
        about: "average precision of the retrieved set, order ignored: s(n)^2/(n R)",
    }];
    const EXAMPLES: &'static [&'static str] = &["SetAP"];
    const TREC: &'static [Alias<()>] = &[Alias {
        entry: TrecEntry {
            name: "set_map",
            order: 33,
            official: false,
            params: TrecParams::Fixed {
                measure: Measure::SetAP,
                refused: None,
            },
        },
        of: |()| Some(TrecArg::None),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["SetAP"])
            .then(|| n.no_cutoff().map(|()| Measure::SetAP))
    }

    fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SetAP")
    }

    fn needs((): ()) -> Needs {
        Needs::NOTHING
    }

    fn value((): (), g: &GoalView<'_>) -> Option<f64> {
        let (n, r, s) = (g.n(), g.r(), g.s());
        if n == 0 || r == 0 {
            return Some(0.0);
        }
        // trec_eval's order of operations: (s·s) / (n·R), each product in doubles.
        Some((s as f64 * s as f64) / (n as f64 * r as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{empty, eval, seed};

    #[test]
    fn seed_set_ap() {
        // n = 6, R = 3, s = 3: 9 / 18.
        assert_eq!(seed("SetAP"), 0.5);
        assert_eq!(seed("set_map"), 0.5);
    }

    #[test]
    fn order_is_ignored_and_empty_cases_are_zero() {
        // s = 1 of n = 3, R = 2: 1 / 6 whatever the order.
        for ranking in [[true, false, false], [false, false, true]] {
            assert_eq!(eval(&["SetAP"], 2, &ranking), [Some(1.0 / 6.0)]);
        }
        assert_eq!(empty("SetAP", 3), Some(0.0));
        assert_eq!(eval(&["SetAP"], 0, &[false, false]), [Some(0.0)]);
    }
}
