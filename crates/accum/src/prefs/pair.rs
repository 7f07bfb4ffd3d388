//! # `prefs_pair`, `prefs_pair_ret`, `prefs_pair_imp`: the pairs' shares of preferences fulfilled
//!
//! For two lemmas `a` ranked above `b` (`d(a) < d(b)`), `c(a, b)` preferences over all groups
//! prefer `a` and `c(b, a)` prefer `b`; the pair scores `c(a, b) / (c(a, b) + c(b, a))` (3 users
//! of 5 agreeing with the ranking: 3/5). The value is the mean over the pairs with a preference:
//!
//! * `prefs_pair`: pairs with both lemmas ranked or one ranked, and pairs with neither ranked,
//!   which score 0;
//! * `prefs_pair_ret`: pairs with both ranked;
//! * `prefs_pair_imp`: pairs with both or one ranked.
//!
//! 0 without such a pair. The pairs are added in place order (`a` ascending, then `b`), both
//! ranked first, then one. The counts are trec_eval's 16-bit ones, which wrap past 65,535.
//!
//! trec_eval: `prefs_pair`, `prefs_pair_ret`, `prefs_pair_imp`.

use super::GoalPrefs;

/// The sum of the pairs' scores and the number of pairs, over the pairs `a < b` of places
/// `as_` × `bs(a)` that have a preference.
fn pairs(
    g: &GoalPrefs,
    as_: std::ops::Range<u32>,
    bs: impl Fn(u32) -> std::ops::Range<u32>,
    sum: &mut f64,
    n: &mut u64,
    scored: bool,
) {
    for a in as_ {
        for b in bs(a) {
            let (ab, ba) = (g.pair(a, b), g.pair(b, a));
            if ab != 0 || ba != 0 {
                *n += 1;
                if scored {
                    *sum += f64::from(ab) / f64::from(u32::from(ab) + u32::from(ba));
                }
            }
        }
    }
}

/// The mean score of the pair kinds asked for: both ranked, one ranked, neither.
fn mean(g: &GoalPrefs, one: bool, neither: bool) -> f64 {
    let (j, r) = (g.judged(), g.retrieved());
    let (mut sum, mut n) = (0.0, 0);
    pairs(g, 0..r, |a| a + 1..r, &mut sum, &mut n, true);
    if one {
        pairs(g, 0..r, |_| r..j, &mut sum, &mut n, true);
    }
    if neither {
        pairs(g, r..j, |a| a + 1..j, &mut sum, &mut n, false);
    }
    if n > 0 {
        sum / n as f64
    } else {
        0.0
    }
}

/// `prefs_pair`.
pub(super) fn pair(g: &GoalPrefs) -> f64 {
    mean(g, true, true)
}

/// `prefs_pair_ret`.
pub(super) fn pair_ret(g: &GoalPrefs) -> f64 {
    mean(g, false, false)
}

/// `prefs_pair_imp`.
pub(super) fn pair_imp(g: &GoalPrefs) -> f64 {
    mean(g, true, false)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, count};
    use super::*;

    #[test]
    fn users_disagreeing() {
        // Places a 0, b 1 ranked; c 2, d 3 not. Groups u, v, w over a and b: u, v prefer a, w
        // prefers b: the pair (a, b) scores 2/3. Group u also prefers c > a (a ranked, c not:
        // 0/1) and c > d (neither: counted, scores 0).
        let g = count(
            &[
                ("u", "s", 2, 3.0),
                ("u", "s", 0, 2.0),
                ("u", "s", 1, 1.0),
                ("u", "t", 2, 1.0),
                ("u", "t", 3, 0.0),
                ("v", "s", 0, 1.0),
                ("v", "s", 1, 0.0),
                ("w", "s", 1, 1.0),
                ("w", "s", 0, 0.0),
            ],
            4,
            2,
        );
        // Group u is a relation (subgroups s, t): c>a, c>b, a>b, c>d.
        // Pairs: (a,b) 2/3; (a,c) 0/1; (b,c) 0/1; (c,d) neither: 0.
        assert!(close(pair_ret(&g), 2.0 / 3.0));
        assert!(close(pair_imp(&g), (2.0 / 3.0) / 3.0));
        assert!(close(pair(&g), (2.0 / 3.0) / 4.0));
    }
}
