//! # `AUC`: area under the ROC curve, over the whole universe
//!
//! With a universe of `U` lemmas (`R` relevant, `U - R` non-relevant), `AUC` is the fraction of
//! (relevant, non-relevant) pairs in which the relevant lemma ranks higher. Unretrieved lemmas
//! share the bottom: an unretrieved relevant lemma beats no retrieved lemma and ties (1/2) with
//! each unretrieved non-relevant lemma:
//!
//! `AUC = (sum over retrieved relevant a of (U - R - n_a) + (R - s(n))·(U - n - (R - s(n)))/2)
//!        / (R·(U - R))`, with `n_a` the non-relevant items ranked above `a`.
//!
//! Undefined without a universe size. `R = 0` or `R = U` gives 0. A universe smaller than the
//! ranked and relevant lemmas is an error ([`crate::GoalError::UniverseTooSmall`]).
//!
//! No trec_eval equivalent.

use super::{Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::NativeName;
use crate::Measure;
use std::fmt;

/// `AUC`.
pub(crate) struct Auc;

impl Def for Auc {
    type Fields = ();
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "AUC",
        about: "fraction of (relevant, non-relevant) pairs of the universe in order",
    }];
    const EXAMPLES: &'static [&'static str] = &["AUC"];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["AUC"]).then(|| n.no_cutoff().map(|()| Measure::AUC))
    }

    fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AUC")
    }

    fn needs((): ()) -> Needs {
        Needs {
            universe: true,
            ..Needs::NOTHING
        }
    }

    fn value((): (), g: &GoalView<'_>) -> Option<f64> {
        let (n, r, s) = (g.n(), g.r(), g.s());
        g.universe().map(|u| {
            let nonrel_total = u - r;
            if r == 0 || nonrel_total == 0 {
                return 0.0;
            }
            // Each retrieved relevant item beats every non-relevant below it; unretrieved
            // relevant items tie with the unretrieved non-relevant ones (1/2 each).
            // A (relevant, non-relevant) pair inside one tie group counts 1/2.
            let retrieved_pairs =
                (s * nonrel_total - g.nonrelevant_above_sum()) as f64 - 0.5 * g.tied_pairs() as f64;
            let unret_rel = r - s;
            let unret_nonrel = u - n - unret_rel;
            let num = retrieved_pairs + 0.5 * (unret_rel as f64 * unret_nonrel as f64);
            num / (r as f64 * nonrel_total as f64)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{eval, eval_labels, SEED};
    use crate::{Label, Truth};

    fn labels(ranking: &[bool]) -> Vec<Label> {
        ranking
            .iter()
            .map(|&r| if r { Label::judged(1) } else { Label::UNJUDGED })
            .collect()
    }

    #[test]
    fn seed_in_a_universe_of_ten() {
        // R = 3, 7 non-relevant. a beats 6 of them (not x), b and c beat 5 (not x, y): 16/21.
        let v = eval_labels(
            &["AUC"],
            &Truth::binary(3, 0).with_universe(10),
            &labels(&SEED),
        );
        assert_eq!(v, [Some(16.0 / 21.0)]);
    }

    #[test]
    fn unretrieved_relevant_items_tie_at_the_bottom() {
        // a x, actual {a, b}, U = 5: b is unretrieved with y, z unretrieved non-relevant.
        // a beats x, y, z: 3; b ties with y and z: 1/2 + 1/2. Pairs: 2·3. AUC = 4/6.
        let v = eval_labels(
            &["AUC"],
            &Truth::binary(2, 0).with_universe(5),
            &labels(&[true, false]),
        );
        assert_eq!(v, [Some(4.0 / 6.0)]);
    }

    #[test]
    fn undefined_without_universe_and_zero_without_relevant() {
        assert_eq!(eval(&["AUC"], 3, &SEED), [None]);
        let v = eval_labels(
            &["AUC"],
            &Truth::binary(0, 0).with_universe(4),
            &labels(&[false]),
        );
        assert_eq!(v, [Some(0.0)]);
        // Everything relevant: no pair.
        let v = eval_labels(
            &["AUC"],
            &Truth::binary(2, 0).with_universe(2),
            &labels(&[true, true]),
        );
        assert_eq!(v, [Some(0.0)]);
    }
}
