//! # `NumNonRelJudgedRet`: judged non-relevant items retrieved
//!
//! Per goal: the retrieved items judged non-relevant, that is with a grade `>= 0` and below the
//! relevance level. Items without a judgment and items with a negative grade (judged as
//! unjudged) are not counted, nor are relevant ones: `NumRet` is `NumRelRet`, plus
//! `NumNonRelJudgedRet`, plus the retrieved items that are unjudged or graded negative. Summed
//! over goals, not averaged, like the other counts.
//!
//! trec_eval: `num_nonrel_judged_ret` (printed as an integer; not official).

use super::{Alias, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::{Aggregation, NativeName};
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `NumNonRelJudgedRet`.
pub(crate) struct NumNonRelJudgedRet;

impl Def for NumNonRelJudgedRet {
    type Fields = ();
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "NumNonRelJudgedRet",
        about: "judged non-relevant items ranked (grade >= 0, below the level; summed)",
    }];
    const EXAMPLES: &'static [&'static str] = &["NumNonRelJudgedRet"];
    const TREC: &'static [Alias<()>] = &[Alias {
        entry: TrecEntry {
            name: "num_nonrel_judged_ret",
            order: 35,
            official: false,
            params: TrecParams::Fixed {
                measure: Measure::NumNonRelJudgedRet,
                refused: None,
            },
        },
        of: |()| Some(TrecArg::None),
    }];
    const AGGREGATION: Aggregation = Aggregation::Sum;

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["NumNonRelJudgedRet"])
            .then(|| n.no_cutoff().map(|()| Measure::NumNonRelJudgedRet))
    }

    fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NumNonRelJudgedRet")
    }

    fn needs((): ()) -> Needs {
        Needs::NOTHING
    }

    fn value((): (), g: &GoalView<'_>) -> Option<f64> {
        Some(g.nonrelevant_judged() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{eval, eval_labels, SEED};
    use crate::{Label, Truth};

    #[test]
    fn counts_only_judged_non_relevant_items() {
        // Grades 3 (relevant), 0, -1 (judged unjudged), unjudged, 0, 1 (relevant at level 1).
        let grades = [3, 1, 0, 0, -1];
        let truth = Truth::graded(&grades).unwrap();
        let labels = [
            Label::judged(3),
            Label::judged(0),
            Label::judged(-1),
            Label::UNJUDGED,
            Label::judged(0),
            Label::judged(1),
        ];
        let v = eval_labels(
            &["NumNonRelJudgedRet", "NumRet", "NumRelRet"],
            &truth,
            &labels,
        );
        assert_eq!(v, [Some(2.0), Some(6.0), Some(2.0)]);
    }

    #[test]
    fn nothing_judged_non_relevant() {
        // The seed ranks relevant and unjudged items only; an empty ranking counts nothing.
        assert_eq!(eval(&["NumNonRelJudgedRet"], 3, &SEED), [Some(0.0)]);
        assert_eq!(eval(&["NumNonRelJudgedRet"], 3, &[]), [Some(0.0)]);
    }
}
