//! # `prefs_avgjg`, `prefs_avgjg_ret`, `prefs_avgjg_imp`: fulfilled over possible, per group
//!
//! Each group scores fulfilled over possible (0 when nothing is possible in it), as
//! `prefs_simp`, `prefs_simp_ret` and `prefs_simp_imp` count them; the goal's value is the mean
//! over its groups, so that a user of many preferences does not outweigh one of few.
//!
//! trec_eval: `prefs_avgjg`, `prefs_avgjg_ret`, `prefs_avgjg_imp`.

use super::form::GroupCounts;
use super::{ratio, GoalPrefs};

/// The groups' `fulfilled / possible` (0 when nothing is possible) averaged over the groups.
fn average(g: &GoalPrefs, counts: impl Fn(&GroupCounts) -> (u64, u64)) -> f64 {
    let mut sum = 0.0;
    for c in g.groups() {
        let (ful, poss) = counts(c);
        if poss > 0 {
            sum += ratio(ful, poss);
        }
    }
    if sum > 0.0 {
        sum / g.groups().len() as f64
    } else {
        0.0
    }
}

/// `prefs_avgjg`.
pub(super) fn avgjg(g: &GoalPrefs) -> f64 {
    average(g, |c| {
        (
            c.fulfilled_ret + c.fulfilled_imp,
            c.possible_ret + c.possible_imp + c.possible_neither,
        )
    })
}

/// `prefs_avgjg_ret`.
pub(super) fn avgjg_ret(g: &GoalPrefs) -> f64 {
    average(g, |c| (c.fulfilled_ret, c.possible_ret))
}

/// `prefs_avgjg_imp`.
pub(super) fn avgjg_imp(g: &GoalPrefs) -> f64 {
    average(g, |c| {
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
    fn groups_weigh_the_same() {
        // Group u: a (0) at 3 > b (1) at 2 > c (2) at 1, all ranked in that order: 3 of 3.
        // Group v: c (2) at 1 > a (0) at 0: both ranked, 2 > 0: 0 of 1.
        // avgjg (1 + 0) / 2; simp would be 3/4.
        let g = count(
            &[
                ("u", "s", 0, 3.0),
                ("u", "s", 1, 2.0),
                ("u", "s", 2, 1.0),
                ("v", "s", 2, 1.0),
                ("v", "s", 0, 0.0),
            ],
            3,
            3,
        );
        assert!(close(avgjg(&g), 0.5));
        assert!(close(avgjg_ret(&g), 0.5));
        assert!(close(avgjg_imp(&g), 0.5));
    }

    #[test]
    fn a_group_of_no_possible_preference_counts_zero() {
        // Group u: a > b both ranked in order: 1. Group v: one lemma: nothing possible: 0.
        let g = count(
            &[("u", "s", 0, 1.0), ("u", "s", 1, 0.0), ("v", "s", 0, 1.0)],
            2,
            2,
        );
        assert!(close(avgjg(&g), 0.5));
    }
}
