//! # `prefs_avgjg_Rnonrel`, `prefs_avgjg_Rnonrel_ret`: groups with as many non-relevant lemmas as relevant ones
//!
//! The number of non-relevant lemmas judged can decide a goal's weight; these measures set each
//! group's non-relevant lemmas to `R`, its relevant ones. For a group with `R` relevant and `N`
//! non-relevant lemmas:
//!
//! * `R >= N`: `R - N` non-relevant lemmas are added below everything, unranked: each ranked
//!   relevant lemma fulfils `R - N` more preferences, each relevant lemma has `R - N` more
//!   possible. The group scores `(fulfilled + rel_ret · (R - N)) / (possible + rel · (R - N))`,
//!   over every preference (ranked, implied, neither).
//! * `R < N`: only the first `R` non-relevant lemmas are kept and the group is counted again
//!   ([`recount`]). A list of classes keeps the first `R` places of its lowest class, and counts
//!   the preferences between any two classes but the lowest, then of every class (the lowest
//!   too: a lemma kept is paired with itself, possible and not fulfilled) over the kept lemmas;
//!   a relation drops its level-0 lemmas from the `(R+1)`-th on, in place order. A preference
//!   `a > b` is fulfilled when `a` is ranked above `b` (`b` ranked lower or not at all).
//!
//! `prefs_avgjg_Rnonrel` averages the group scores over the groups; a group with no possible
//! preference scores 0/0, which makes the goal's value 0, as a sum that is not above 0 does.
//!
//! `prefs_avgjg_Rnonrel_ret` does the same over the ranked lemmas: `R = rel_ret`,
//! `N = nonrel_ret`; `R >= N` scores `(fulfilled_ret + rel_ret · (R - N)) / (possible_ret +
//! rel · (R - N))`; `R < N` keeps `rel_ret` places of the lowest class and counts only
//! preferences between ranked lemmas (a relation: the `(rel + 1)`-th level-0 lemma among the
//! ranked ones starts the dropped ones: `rel`, not `rel_ret`, as trec_eval has it).
//!
//! trec_eval's recount reads the first `R` places of the lowest class whatever its size; when the
//! lowest class has fewer (its level below 0, under a class of level 0), it reads past the class
//! into whatever memory follows. lemma-eval keeps the class's own places.
//!
//! trec_eval: `prefs_avgjg_Rnonrel`, `prefs_avgjg_Rnonrel_ret`.

use super::form::{GroupCounts, GroupForm};
use super::{ratio, GoalPrefs};

/// `prefs_avgjg_Rnonrel`.
pub(super) fn avgjg_rnonrel(g: &GoalPrefs) -> f64 {
    average(g, |c| {
        if c.rel >= c.nonrel {
            let extra = c.rel - c.nonrel;
            (
                c.fulfilled_ret + c.fulfilled_imp + c.rel_ret * extra,
                c.possible_ret + c.possible_imp + c.possible_neither + c.rel * extra,
            )
        } else {
            c.recount.expect("counted for prefs_avgjg_Rnonrel")
        }
    })
}

/// `prefs_avgjg_Rnonrel_ret`.
pub(super) fn avgjg_rnonrel_ret(g: &GoalPrefs) -> f64 {
    average(g, |c| {
        if c.rel_ret >= c.nonrel_ret {
            let extra = c.rel_ret - c.nonrel_ret;
            (
                c.fulfilled_ret + c.rel_ret * extra,
                c.possible_ret + c.rel * extra,
            )
        } else {
            c.recount_ret.expect("counted for prefs_avgjg_Rnonrel_ret")
        }
    })
}

/// The groups' `fulfilled / possible` averaged; 0 unless the sum is above 0 (a 0/0 group makes
/// it NaN).
fn average(g: &GoalPrefs, counts: impl Fn(&GroupCounts) -> (u64, u64)) -> f64 {
    let mut sum = 0.0;
    for c in g.groups() {
        let (fulfilled, possible) = counts(c);
        sum += ratio(fulfilled, possible);
    }
    if sum > 0.0 {
        sum / g.groups().len() as f64
    } else {
        0.0
    }
}

/// `(fulfilled, possible)` of a group with `nonrel > rel`, its non-relevant lemmas cut to `rel`
/// (`r` lemmas ranked).
pub(super) fn recount(form: &GroupForm<'_>, c: &GroupCounts, r: u32) -> (u64, u64) {
    let (mut ful, mut poss) = (0u64, 0u64);
    let mut pair = |a: u32, b: u32| {
        if a < b && a < r {
            ful += 1;
        } else {
            poss += 1;
        }
    };
    match *form {
        GroupForm::Classes { classes, docs } => {
            let last = classes.len() - 1;
            let low = &classes[last].1;
            let kept = &docs[low.start..low.start + (c.rel as usize).min(low.len())];
            for (x, (_, rx)) in classes.iter().enumerate() {
                for (_, ry) in classes.get(x + 1..last).unwrap_or(&[]) {
                    for &a in &docs[rx.clone()] {
                        for &b in &docs[ry.clone()] {
                            pair(a, b);
                        }
                    }
                }
            }
            for (_, rx) in classes {
                for &a in &docs[rx.clone()] {
                    for &b in kept {
                        pair(a, b);
                    }
                }
            }
        }
        GroupForm::Relation { docs, levels, bits } => {
            let limit = (docs.iter().zip(levels))
                .filter(|(_, &l)| l == 0.0)
                .nth(c.rel as usize)
                .map(|(&d, _)| d);
            let dropped = |i: usize| levels[i] == 0.0 && limit.is_some_and(|t| docs[i] >= t);
            for i in (0..docs.len()).filter(|&i| !dropped(i)) {
                for j in bits.row(i).filter(|&j| !dropped(j)) {
                    pair(docs[i], docs[j]);
                }
            }
        }
    }
    (ful, poss + ful)
}

/// `(fulfilled, possible)` among the ranked lemmas of a group with `nonrel_ret > rel_ret`, its
/// non-relevant lemmas cut to `rel_ret` (`r` lemmas ranked).
pub(super) fn recount_ret(form: &GroupForm<'_>, c: &GroupCounts, r: u32) -> (u64, u64) {
    let (mut ful, mut poss) = (0u64, 0u64);
    let mut pair = |a: u32, b: u32| {
        if a < b {
            ful += 1;
        } else {
            poss += 1;
        }
    };
    let ranked = |s: &[u32]| s.iter().take_while(|&&d| d < r).count();
    match *form {
        GroupForm::Classes { classes, docs } => {
            let last = classes.len() - 1;
            let low = &classes[last].1;
            let kept = &docs[low.start..low.start + (c.rel_ret as usize).min(low.len())];
            let kept = &kept[..ranked(kept)];
            let of = |range: &std::ops::Range<usize>| {
                let s = &docs[range.clone()];
                &s[..ranked(s)]
            };
            for (x, (_, rx)) in classes.iter().enumerate() {
                for (_, ry) in classes.get(x + 1..last).unwrap_or(&[]) {
                    for &a in of(rx) {
                        for &b in of(ry) {
                            pair(a, b);
                        }
                    }
                }
            }
            for (_, rx) in classes {
                for &a in of(rx) {
                    for &b in kept {
                        pair(a, b);
                    }
                }
            }
        }
        GroupForm::Relation { docs, levels, bits } => {
            let limit = (docs.iter().zip(levels))
                .filter(|(&d, &l)| d < r && l == 0.0)
                .nth(c.rel as usize)
                .map(|(&d, _)| d);
            let dropped = |i: usize| levels[i] == 0.0 && limit.is_some_and(|t| docs[i] >= t);
            let kept = |i: usize| docs[i] < r && !dropped(i);
            for i in (0..docs.len()).filter(|&i| kept(i)) {
                for j in bits.row(i).filter(|&j| kept(j)) {
                    pair(docs[i], docs[j]);
                }
            }
        }
    }
    (ful, poss + ful)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, count};
    use super::*;

    #[test]
    fn more_relevant_than_non_relevant() {
        // One subgroup: a (0), b (1) at 1, c (2) at 0; a and c ranked... places: a 0, c 1 ranked
        // (r = 2), b 2 unranked. R = 2, N = 1, rel_ret = 1 (a).
        // Preferences a>c (both ranked, 0 < 1: fulfilled), b>c (only c ranked: possible implied).
        // fulfilled 1, possible 2; plus R - N = 1: fulfilled 1 + 1·1 = 2, possible 2 + 2·1 = 4.
        let g = count(
            &[("u", "s", 0, 1.0), ("u", "s", 2, 1.0), ("u", "s", 1, 0.0)],
            3,
            2,
        );
        assert!(close(avgjg_rnonrel(&g), 2.0 / 4.0));
        // Ranked only: R = rel_ret = 1, N = nonrel_ret = 1: fulfilled_ret 1 / possible_ret 1.
        assert!(close(avgjg_rnonrel_ret(&g), 1.0));
    }

    #[test]
    fn more_non_relevant_than_relevant_classes() {
        // a (0) at 1; x (1), y (2), z (3) at 0; all ranked (r = 4). R = 1, N = 3: keep x.
        // Pairs between classes but the lowest: none. Every class over the kept {x}: a>x
        // (0 < 1, ranked: fulfilled), and x, y, z of the lowest class over x: x>x (possible),
        // y>x (2 > 1: possible), z>x (possible). fulfilled 1, possible 4 → 1/4.
        let g = count(
            &[
                ("u", "s", 0, 1.0),
                ("u", "s", 1, 0.0),
                ("u", "s", 2, 0.0),
                ("u", "s", 3, 0.0),
            ],
            4,
            4,
        );
        assert!(close(avgjg_rnonrel(&g), 1.0 / 4.0));
        assert!(close(avgjg_rnonrel_ret(&g), 1.0 / 4.0));
    }

    #[test]
    fn more_non_relevant_than_relevant_relation() {
        // Subgroups s: a (1) at 1 over x (0), y (2) at 0; t: a over z (3) at 0. Ranked: places
        // 0, 1 (x, a). R = 1, N = 3: the second level-0 lemma in place order (y, place 2) and
        // those after are dropped: a>x remains. x (0) ranked above a (1): not fulfilled. 0/1.
        // The goal's value is 0 (a sum of 0).
        let lines = [
            ("u", "s", 1, 1.0),
            ("u", "s", 0, 0.0),
            ("u", "s", 2, 0.0),
            ("u", "t", 1, 1.0),
            ("u", "t", 3, 0.0),
        ];
        let g = count(&lines, 4, 2);
        assert_eq!(g.groups()[0].recount, Some((0, 1)));
        assert_eq!(avgjg_rnonrel(&g), 0.0);
        // Ranked only: R = 1, N = 1 (x): fulfilled_ret 0 + 1·0, possible_ret 1 + 0: 0/1.
        assert_eq!(avgjg_rnonrel_ret(&g), 0.0);
    }

    #[test]
    fn a_group_of_no_possible_preference_makes_the_goal_zero() {
        // Group u: a at 1, b at 0, a ranked: fulfilled 1 of 1 plus R - N = 0: 1/1.
        // Group v: only level-0 lemmas: R = 0 < N = 1: recount 0/0 = NaN, and the goal is 0.
        let g = count(
            &[("u", "s", 0, 1.0), ("u", "s", 1, 0.0), ("v", "s", 1, 0.0)],
            2,
            1,
        );
        assert_eq!(avgjg_rnonrel(&g), 0.0);
    }
}
