//! # `SetRelP`: relative precision of the retrieved set
//!
//! `SetRelP = s(n) / min(n, R)`: the set's precision over the best precision a set of `n` items
//! could have (all relevant while `n <= R`; `R/n` beyond), which is also the set's recall while
//! `n >= R`. 0 when `n = 0` or `R = 0`.
//!
//! trec_eval: `set_relative_P` (not official). It is not `relative_P@k` at `k = n`: that divides
//! by `min(k, R)` too, but over a ranking padded to `k`.

use super::{div, Alias, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::NativeName;
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `SetRelP`.
pub(crate) struct SetRelP;

impl Def for SetRelP {
    type Fields = ();
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "SetRelP",
        about: "relative precision of the retrieved set: s(n)/min(n, R)",
    }];
    const EXAMPLES: &'static [&'static str] = &["SetRelP"];
    const TREC: &'static [Alias<()>] = &[Alias {
        entry: TrecEntry {
            name: "set_relative_P",
            order: 31,
            official: false,
            params: TrecParams::Fixed {
                measure: Measure::SetRelP,
                refused: None,
            },
        },
        of: |()| Some(TrecArg::None),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["SetRelP"])
            .then(|| n.no_cutoff().map(|()| Measure::SetRelP))
    }

    fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SetRelP")
    }

    fn needs((): ()) -> Needs {
        Needs::NOTHING
    }

    fn value((): (), g: &GoalView<'_>) -> Option<f64> {
        Some(div(g.s() as f64, g.n().min(g.r()) as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{empty, eval, seed};

    #[test]
    fn seed_set_rel_p() {
        // n = 6, R = 3, s = 3: 3 / 3.
        assert_eq!(seed("SetRelP"), 1.0);
        assert_eq!(seed("set_relative_P"), 1.0);
    }

    #[test]
    fn fewer_items_than_relevant_and_empty_cases() {
        // n = 2 < R = 4, one relevant: 1 / 2.
        assert_eq!(eval(&["SetRelP"], 4, &[false, true]), [Some(0.5)]);
        // n = 4 > R = 2, one relevant: 1 / 2.
        assert_eq!(
            eval(&["SetRelP"], 2, &[false, true, false, false]),
            [Some(0.5)]
        );
        assert_eq!(empty("SetRelP", 3), Some(0.0));
        assert_eq!(eval(&["SetRelP"], 0, &[false]), [Some(0.0)]);
    }
}
