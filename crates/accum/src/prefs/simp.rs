//! # `prefs_simp`, `prefs_simp_ret`, `prefs_simp_imp`: fulfilled over possible
//!
//! Every preference of every group counted once (a pair preferred in two groups counts twice; a
//! conflict between groups caps the value below 1):
//!
//! * `prefs_simp = (ful_ret + ful_imp) / (poss_ret + poss_imp + poss_neither)`: a preference
//!   with neither lemma ranked is possible and never fulfilled;
//! * `prefs_simp_ret = ful_ret / poss_ret`: preferences between ranked lemmas only;
//! * `prefs_simp_imp = (ful_ret + ful_imp) / (poss_ret + poss_imp)`: those with neither lemma
//!   ranked left out.
//!
//! Sums over the goal's groups; 0 when nothing is possible.
//!
//! trec_eval: `prefs_simp`, `prefs_simp_ret`, `prefs_simp_imp`.

use super::form::GroupCounts;
use super::{ratio, GoalPrefs};

/// `fulfilled / possible` summed over the groups; 0 when nothing is possible.
fn over_groups(g: &GoalPrefs, counts: impl Fn(&GroupCounts) -> (u64, u64)) -> f64 {
    let (ful, poss) = (g.groups().iter())
        .map(counts)
        .fold((0, 0), |(f, p), (a, b)| (f + a, p + b));
    if poss > 0 {
        ratio(ful, poss)
    } else {
        0.0
    }
}

/// `prefs_simp`.
pub(super) fn simp(g: &GoalPrefs) -> f64 {
    over_groups(g, |c| {
        (
            c.fulfilled_ret + c.fulfilled_imp,
            c.possible_ret + c.possible_imp + c.possible_neither,
        )
    })
}

/// `prefs_simp_ret`.
pub(super) fn simp_ret(g: &GoalPrefs) -> f64 {
    over_groups(g, |c| (c.fulfilled_ret, c.possible_ret))
}

/// `prefs_simp_imp`.
pub(super) fn simp_imp(g: &GoalPrefs) -> f64 {
    over_groups(g, |c| {
        (
            c.fulfilled_ret + c.fulfilled_imp,
            c.possible_ret + c.possible_imp,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, count};
    use super::*;

    #[test]
    fn hand_counted() {
        // Classes {a (1), d (3)} at 2 > {b (0), c (2)} at 1; ranked: places 0, 1 (b, a).
        // a>b: both ranked, 1 > 0: possible ranked. a>c: only a: fulfilled implied.
        // d>b: only b: possible implied. d>c: neither.
        // simp 1/4, simp_ret 0/1, simp_imp 1/3.
        let g = count(
            &[
                ("u", "s", 1, 2.0),
                ("u", "s", 3, 2.0),
                ("u", "s", 0, 1.0),
                ("u", "s", 2, 1.0),
            ],
            4,
            2,
        );
        assert!(close(simp(&g), 0.25));
        assert_eq!(simp_ret(&g), 0.0);
        assert!(close(simp_imp(&g), 1.0 / 3.0));
        // Nothing possible: 0.
        let g = count(&[("u", "s", 0, 1.0)], 1, 1);
        assert_eq!((simp(&g), simp_ret(&g), simp_imp(&g)), (0.0, 0.0, 0.0));
    }
}
