//! # `binG`: binary gain
//!
//! Each relevant item retrieved at rank `i` is worth `1 / log2(2 + i - s(i))`, `i - s(i)` being
//! the items ranked above it that are not relevant (judged or not); `binG` is the sum over the
//! retrieved relevant items, over `R`. A relevant item with nothing but relevant items above it
//! is worth 1, as in `AP`, but a non-relevant item above costs less than it does in `AP`. No
//! relevant item retrieved (or `R = 0`) gives 0.
//!
//! trec_eval: `binG` (not official; an experimental measure of 2008).

use super::{Alias, Def, Needs, Syntax, WalkNeed};
use crate::goal::GoalView;
use crate::measure::NativeName;
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `binG`.
pub(crate) struct BinG;

impl Def for BinG {
    type Fields = ();
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "BinG",
        about: "sum over retrieved relevant items of 1/log2(2 + non-relevant above), over R",
    }];
    const EXAMPLES: &'static [&'static str] = &["BinG"];
    const TREC: &'static [Alias<()>] = &[Alias {
        entry: TrecEntry {
            name: "binG",
            order: 19,
            official: false,
            params: TrecParams::Fixed {
                measure: Measure::BinG,
                refused: None,
            },
        },
        of: |()| Some(TrecArg::None),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["BinG"])
            .then(|| n.no_cutoff().map(|()| Measure::BinG))
    }

    fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BinG")
    }

    fn needs((): ()) -> Needs {
        Needs::walk(WalkNeed::BinG)
    }

    fn value((): (), g: &GoalView<'_>) -> Option<f64> {
        let (w, _) = g.walk();
        Some(if w.s() == 0 {
            0.0
        } else {
            w.bing_sum() / g.r() as f64
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, empty, eval, seed};
    use crate::{Config, GoalAccumulator, Label, Measure, Plan, Ties, Truth};
    use std::sync::Arc;

    #[test]
    fn seed_bing() {
        // x a y b c z: a has 1 non-relevant item above, b and c 2.
        let want = (1.0 / 3f64.log2() + 0.5 + 0.5) / 3.0;
        assert!(close(seed("BinG"), want));
        assert_eq!(seed("binG"), seed("BinG"));
        assert_eq!(format!("{:.4}", want), "0.5436");
    }

    #[test]
    fn nothing_relevant_retrieved() {
        assert_eq!(empty("BinG", 3), Some(0.0));
        assert_eq!(eval(&["BinG"], 2, &[false, false]), [Some(0.0)]);
        assert_eq!(eval(&["BinG"], 0, &[false]), [Some(0.0)]);
    }

    #[test]
    fn a_tie_group_is_read_relevant_items_last() {
        // One group of three (relevant, unjudged, judged non-relevant), R = 1: the walk puts
        // the relevant item third, below two non-relevant items: 1/log2(4).
        let ms = Measure::parse_all(["BinG"]).unwrap();
        let config = Config {
            ties: Ties::Group,
            ..Config::default()
        };
        let mut acc = GoalAccumulator::new(Arc::new(Plan::new(&ms, config)));
        acc.begin(&Truth::binary(1, 1));
        for l in [Label::judged(1), Label::UNJUDGED, Label::judged(0)] {
            acc.push_scored(l, 0.5).unwrap();
        }
        assert_eq!(acc.finish().unwrap().values(), [Some(0.5)]);
    }
}
