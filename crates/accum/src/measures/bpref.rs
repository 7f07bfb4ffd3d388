//! # `Bpref`: binary preference (trec_eval's `bpref`)
//!
//! For `R` relevant and `N` judged non-relevant items (grade `>= 0` but below the relevance
//! level; negative grades are "judged unjudged" and count as neither), each retrieved relevant
//! item `a` scores `1 - min(n_a, R) / min(R, N)`, where `n_a` is the number of judged non-relevant
//! items ranked above it (1 when `n_a = 0` or `N = 0`). `Bpref` is the sum over `R`; unretrieved
//! relevant items score 0. Unjudged items are ignored.
//!
//! `R = 0` gives 0; an empty ranking gives 0.
//!
//! trec_eval: `bpref` (official).

use super::{div, Alias, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::NativeName;
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `Bpref`.
pub(crate) struct Bpref;

impl Def for Bpref {
    type Fields = ();
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "Bpref",
        about: "binary preference: judged non-relevant items ranked above each relevant one",
    }];
    const EXAMPLES: &'static [&'static str] = &["Bpref"];
    const TREC: &'static [Alias<()>] = &[Alias {
        entry: TrecEntry {
            name: "bpref",
            order: 8,
            official: true,
            params: TrecParams::Fixed {
                measure: Measure::Bpref,
                refused: None,
            },
        },
        of: |()| Some(TrecArg::None),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["Bpref"])
            .then(|| n.no_cutoff().map(|()| Measure::Bpref))
    }

    fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Bpref")
    }

    fn needs((): ()) -> Needs {
        Needs::NOTHING
    }

    fn value((): (), g: &GoalView<'_>) -> Option<f64> {
        Some(div(g.bpref_sum(), g.r() as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{empty, eval_labels, seed};
    use crate::{Label, Truth};

    #[test]
    fn seed_without_judged_nonrelevant() {
        // N = 0: every retrieved relevant item scores 1.
        assert_eq!(seed("Bpref"), 1.0);
    }

    #[test]
    fn seed_with_x_and_y_judged_nonrelevant() {
        // x a y b c z with x, y judged non-relevant: R = 3, N = 2.
        // a: 1 above: 1 - 1/2; b: 2 above: 1 - 2/2 = 0; c: 0. Bpref = (1/2)/3.
        let (n, rel) = (Label::judged(0), Label::judged(1));
        let labels = [n, rel, n, rel, rel, Label::UNJUDGED];
        let v = eval_labels(&["Bpref"], &Truth::binary(3, 2), &labels);
        assert_eq!(v, [Some(0.5 / 3.0)]);
        // An unretrieved relevant item scores 0: R = 4.
        let v = eval_labels(&["Bpref"], &Truth::binary(4, 2), &labels);
        // min(R, N) = 2 still: a = 1/2, b = 0, c = 0; over 4.
        assert_eq!(v, [Some(0.125)]);
    }

    #[test]
    fn empty_ranking_and_no_relevant() {
        assert_eq!(empty("Bpref", 3), Some(0.0));
        let v = eval_labels(&["Bpref"], &Truth::binary(0, 2), &[Label::judged(0)]);
        assert_eq!(v, [Some(0.0)]);
    }
}
