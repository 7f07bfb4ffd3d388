//! # `Rprec`: R-precision
//!
//! `Rprec = s(R) / R`: precision at rank `R`, which is also recall at rank `R`.
//!
//! `R = 0` gives 0; fewer than `R` items: `s(R) = s(n)` (the divisor stays `R`); an empty ranking
//! gives 0.
//!
//! trec_eval: `Rprec` (official).

use super::{div, Alias, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::NativeName;
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `Rprec`.
pub(crate) struct Rprec;

impl Def for Rprec {
    type Fields = ();
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "Rprec",
        about: "R-precision: s(R)/R",
    }];
    const EXAMPLES: &'static [&'static str] = &["Rprec"];
    const TREC: &'static [Alias<()>] = &[Alias {
        entry: TrecEntry {
            name: "Rprec",
            order: 7,
            official: true,
            params: TrecParams::Fixed {
                measure: Measure::Rprec,
                refused: None,
            },
        },
        of: |()| Some(TrecArg::None),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        (n.is(&["Rprec", "RPrec"]) && !n.has("mult"))
            .then(|| n.no_cutoff().map(|()| Measure::Rprec))
    }

    fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Rprec")
    }

    fn needs((): ()) -> Needs {
        Needs::NOTHING
    }

    fn value((): (), g: &GoalView<'_>) -> Option<f64> {
        Some(div(g.s_at_r(), g.r() as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{empty, eval, seed};

    #[test]
    fn seed_rprec() {
        // R = 3: x a y holds one relevant item.
        assert_eq!(seed("Rprec"), 1.0 / 3.0);
    }

    #[test]
    fn fewer_than_r_items() {
        // R = 4, ranking a b (both relevant): s(4) = s(2) = 2.
        assert_eq!(eval(&["Rprec"], 4, &[true, true]), [Some(0.5)]);
        // Relevant items beyond rank R do not count.
        assert_eq!(eval(&["Rprec"], 2, &[true, false, true]), [Some(0.5)]);
    }

    #[test]
    fn empty_ranking_and_no_relevant() {
        assert_eq!(empty("Rprec", 3), Some(0.0));
        assert_eq!(eval(&["Rprec"], 0, &[false; 2]), [Some(0.0)]);
    }
}
