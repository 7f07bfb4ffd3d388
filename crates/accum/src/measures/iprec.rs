//! # `IPrec@r` and `AP11`: interpolated precision
//!
//! * `IPrec@r = max p(k)` over the ranks `k` with `s(k) >= need(r)`: the best precision once a
//!   fraction `r` of the relevant items is found (0 when the ranking never gets there).
//!   `need(r)` follows `--interpolation`: `ceil(r·R)` by default (METRICS.md §1), trec_eval 10.0's
//!   `lround(r·R)` or trec_eval 9's `(long)(r·R + 0.9)` (METRICS.md §8).
//! * `AP11 = (IPrec@0.0 + IPrec@0.1 + ... + IPrec@1.0) / 11`: the 11-point average.
//!
//! The maximum is attained at a relevant rank, so it is tracked at relevant items only. `R = 0`
//! and an empty ranking give 0.
//!
//! trec_eval: `iprec_at_recall` (official; default levels 0.0, 0.1, ..., 1.0, printed
//! `iprec_at_recall_0.10`) and `11pt_avg`.

use super::{Alias, Def, LevelNeed, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::{fmt_level, parse_level, Level, NativeName};
use crate::plan::LevelRule;
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `IPrec@r`.
pub(crate) struct IPrec;

/// `AP11`.
pub(crate) struct Ap11;

/// trec_eval's eleven recall levels.
const ELEVEN: [f64; 11] = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];

impl Def for IPrec {
    type Fields = (Level,);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "IPrec@r",
        about: "interpolated precision at recall r: max p(k) with s(k) >= need(r)",
    }];
    const EXAMPLES: &'static [&'static str] = &["IPrec@0.0", "IPrec@0.25", "IPrec@1.0"];
    const TREC: &'static [Alias<(Level,)>] = &[Alias {
        entry: TrecEntry {
            name: "iprec_at_recall",
            order: 10,
            official: true,
            params: TrecParams::Levels {
                default: &ELEVEN,
                make: |r| Measure::IPrec { recall: Level(r) },
            },
        },
        of: |(recall,)| Some(TrecArg::Level(recall.0)),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        // The text after `@` is a recall level, not a cutoff.
        n.is(&["IPrec"]).then(|| {
            let r = n.at().ok_or("`IPrec` needs a recall level: `IPrec@0.5`")?;
            Ok(Measure::IPrec {
                recall: parse_level(r)?,
            })
        })
    }

    fn fmt((recall,): (Level,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IPrec@{}", fmt_level(recall.0))
    }

    fn needs((recall,): (Level,)) -> Needs {
        Needs {
            level: LevelNeed::One(recall.0, LevelRule::Interpolated),
            ..Needs::NOTHING
        }
    }

    fn value(_: (Level,), g: &GoalView<'_>) -> Option<f64> {
        Some(if g.r() == 0 { 0.0 } else { g.level().max_p })
    }
}

impl Def for Ap11 {
    type Fields = ();
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "AP11",
        about: "11-point average: mean of IPrec@r at r = 0.0, 0.1, ..., 1.0",
    }];
    const EXAMPLES: &'static [&'static str] = &["AP11"];
    const TREC: &'static [Alias<()>] = &[Alias {
        entry: TrecEntry {
            name: "11pt_avg",
            order: 18,
            official: false,
            params: TrecParams::Fixed {
                measure: Measure::AP11,
                refused: Some("custom levels"),
            },
        },
        of: |()| Some(TrecArg::None),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["AP11"])
            .then(|| n.no_cutoff().map(|()| Measure::AP11))
    }

    fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AP11")
    }

    fn needs((): ()) -> Needs {
        Needs {
            level: LevelNeed::Eleven,
            ..Needs::NOTHING
        }
    }

    fn value((): (), g: &GoalView<'_>) -> Option<f64> {
        Some(if g.r() == 0 {
            0.0
        } else {
            // Added from IPrec@1.0 down to IPrec@0.0, as trec_eval adds them: the same double.
            g.max_p_run(11).iter().rev().sum::<f64>() / 11.0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, empty, eval, seed};

    #[test]
    fn seed_interpolated_precision() {
        // p at the relevant ranks 2, 4, 5: 1/2, 2/4, 3/5; the best from any level on is 3/5.
        for r in ["0.0", "0.1", "0.5", "0.9", "1.0"] {
            assert_eq!(seed(&format!("IPrec@{r}")), 0.6, "{r}");
        }
        assert!(close(seed("AP11"), 0.6));
    }

    #[test]
    fn the_maximum_looks_deeper() {
        // a x x x b c, R = 3: p = 1, 2/5, 3/6. IPrec@0.2 = 1 (one relevant needed);
        // IPrec@0.5 needs 2 (ceil 1.5): max(2/5, 3/6) = 1/2.
        let v = eval(
            &["IPrec@0.2", "IPrec@0.5", "IPrec@1.0"],
            3,
            &[true, false, false, false, true, true],
        );
        assert_eq!(v, [Some(1.0), Some(0.5), Some(0.5)]);
        // AP11: the 4 levels 0.0 .. 0.3 need at most 1 relevant item (1 each); the 7 levels
        // 0.4 .. 1.0 need 2 or 3 (1/2 each).
        let ap11 = eval(&["AP11"], 3, &[true, false, false, false, true, true])[0].unwrap();
        assert!(close(ap11, (4.0 * 1.0 + 7.0 * 0.5) / 11.0));
    }

    #[test]
    fn unreached_empty_and_no_relevant() {
        assert_eq!(eval(&["IPrec@1.0"], 4, &[true, false]), [Some(0.0)]);
        assert_eq!(empty("IPrec@0.0", 3), Some(0.0));
        assert_eq!(empty("AP11", 3), Some(0.0));
        assert_eq!(
            eval(&["IPrec@0.0", "AP11"], 0, &[false; 3]),
            [Some(0.0), Some(0.0)]
        );
    }

    #[test]
    fn trec_names() {
        use crate::Measure;
        let m = Measure::parse("iprec_at_recall.0.25").unwrap();
        assert_eq!(m[0].to_string(), "IPrec@0.25");
        assert_eq!(m[0].trec_name().unwrap(), "iprec_at_recall_0.25");
        assert!(Measure::parse("11pt_avg.0.5").is_err());
    }
}
