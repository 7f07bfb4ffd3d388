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
use crate::lists::Levels;
use crate::measure::{fmt_level, parse_level, Level, NativeName};
use crate::plan::LevelRule;
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `IPrec@r`.
pub(crate) struct IPrec;

/// `AP11`.
pub(crate) struct Ap11;

/// `AP11(levels=...)`.
pub(crate) struct Ap11Levels;

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
            params: TrecParams::Numbers {
                default: Measure::AP11,
                make: |xs| {
                    Ok(Measure::AP11Levels {
                        levels: Levels::new(xs),
                    })
                },
            },
        },
        of: |()| Some(TrecArg::None),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        (n.is(&["AP11"]) && !n.has("levels")).then(|| n.no_cutoff().map(|()| Measure::AP11))
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

impl Def for Ap11Levels {
    type Fields = (Levels,);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "AP11(levels=r1/r2/...)",
        about: "trec_eval's 11pt_avg at the recall levels given: the mean of their IPrec",
    }];
    const EXAMPLES: &'static [&'static str] = &["AP11(levels=0.25/0.5/0.75)"];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        if !(n.is(&["AP11"]) && n.has("levels")) {
            return None;
        }
        Some(n.no_cutoff().and_then(|()| {
            let text = n.take("levels").unwrap_or_default();
            let xs = (text.split('/'))
                .map(|x| {
                    x.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| format!("expected recall levels `r1/r2/...`, found `{x}`"))
                })
                .collect::<Result<Vec<f64>, String>>()?;
            Ok(Measure::AP11Levels {
                levels: Levels::new(&xs),
            })
        }))
    }

    fn fmt((levels,): (Levels,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AP11(levels={levels})")
    }

    fn needs((levels,): (Levels,)) -> Needs {
        Needs {
            level: LevelNeed::Run(levels.get()),
            ..Needs::NOTHING
        }
    }

    fn value((levels,): (Levels,), g: &GoalView<'_>) -> Option<f64> {
        let m = levels.get().len();
        let (need, max_p) = g.level_run(m + 1);
        Some(trec_average(&need[..m], &max_p[..m], max_p[m], g.s()) / m as f64)
    }
}

/// trec_eval's sum behind `11pt_avg`, given each level's need and interpolated precision in the
/// order given, the best precision of the whole ranking (`last`) and `s(n)`. The levels are read
/// from the last one down: those at the end needing more than `s(n)` add nothing; walking the
/// relevant counts from `s(n)` down to 1, the next level adds its precision when the count equals
/// its need; every level not reached so (a need of 0, or a need above the count once an earlier
/// level of a list not in ascending order was taken) adds `last`. Ascending levels give the mean
/// of `IPrec` (0 where unreached), added from the last level down.
fn trec_average(need: &[u64], max_p: &[f64], last: f64, s: u64) -> f64 {
    let mut sum = 0.0;
    let mut at = need.len();
    while at > 0 && need[at - 1] > s {
        at -= 1;
    }
    for v in (1..=s).rev() {
        while at > 0 && need[at - 1] == v {
            sum += max_p[at - 1];
            at -= 1;
        }
        if at == 0 {
            break;
        }
    }
    while at > 0 {
        sum += last;
        at -= 1;
    }
    sum
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
        let m = Measure::parse("11pt_avg..25,.5").unwrap();
        assert_eq!(m[0].to_string(), "AP11(levels=0.25/0.5)");
        let v = crate::trec::resolve(&["11pt_avg..25,.5"]).unwrap();
        assert_eq!(v[0].name, "11pt_avg_.25,.5");
        assert_eq!(v[0].measure, Some(m[0]));
    }

    #[test]
    fn custom_levels_by_hand() {
        // a x x x b c, R = 3: p = 1, 2/5, 3/6 at the relevant ranks 1, 5, 6.
        let ranking = [true, false, false, false, true, true];
        // Levels 0.25, 0.5, 0.75 need 1, 2, 3 relevant items (ceil(x·R)): IPrec 1, 1/2, 1/2.
        let v = eval(&["AP11(levels=0.25/0.5/0.75)"], 3, &ranking)[0].unwrap();
        assert!(close(v, (0.5 + 0.5 + 1.0) / 3.0));
        // trec_eval reads the levels from the last: 0.25 (1 needed) is taken when the count
        // walks down to 1, which leaves 0.75 (3 needed, above 1) to the best precision, 1:
        // (1 + 1) / 2 where the ascending list gives (1 + 1/2) / 2.
        let v = eval(&["AP11(levels=0.75/0.25)"], 3, &ranking)[0].unwrap();
        assert!(close(v, 1.0));
        let v = eval(&["AP11(levels=0.25/0.75)"], 3, &ranking)[0].unwrap();
        assert!(close(v, 0.75));
        // A level needing 0 (0.0) takes the best precision; 1.0 needs 3: (1 + 1/2) / 2.
        let v = eval(&["AP11(levels=0/1)"], 3, &ranking)[0].unwrap();
        assert!(close(v, 0.75));
        // Levels needing more than s(n) at the end add 0: R = 4, one found at rank 1;
        // 0.25 needs 1 (IPrec 1), 0.5 needs 2 (not reached): 1/2.
        let v = eval(&["AP11(levels=0.25/0.5)"], 4, &[true, false])[0].unwrap();
        assert!(close(v, 0.5));
        assert_eq!(empty("AP11(levels=0.5)", 3), Some(0.0));
        // The eleven default levels give AP11 bit for bit.
        let ap11 = eval(&["AP11"], 3, &ranking)[0].unwrap();
        let levels = "AP11(levels=0/0.1/0.2/0.3/0.4/0.5/0.6/0.7/0.8/0.9/1)";
        assert_eq!(eval(&[levels], 3, &ranking)[0].unwrap(), ap11);
    }
}
