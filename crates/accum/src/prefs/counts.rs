//! # `prefs_num_prefs_poss`, `prefs_num_prefs_ful`, `prefs_num_prefs_ful_ret`: preferences counted
//!
//! Summed over the goal's groups: `prefs_num_prefs_poss` the possible preferences (ranked,
//! implied and neither), `prefs_num_prefs_ful` the fulfilled ones (ranked and implied),
//! `prefs_num_prefs_ful_ret` the fulfilled ranked ones. Summed over goals; printed as integers.
//!
//! trec_eval: `prefs_num_prefs_poss`, `prefs_num_prefs_ful`, `prefs_num_prefs_ful_ret`.

use super::GoalPrefs;

/// `prefs_num_prefs_poss`.
pub(super) fn num_prefs_poss(g: &GoalPrefs) -> f64 {
    let n: u64 = (g.groups().iter())
        .map(|c| c.possible_ret + c.possible_imp + c.possible_neither)
        .sum();
    n as f64
}

/// `prefs_num_prefs_ful`.
pub(super) fn num_prefs_ful(g: &GoalPrefs) -> f64 {
    let n: u64 = (g.groups().iter())
        .map(|c| c.fulfilled_ret + c.fulfilled_imp)
        .sum();
    n as f64
}

/// `prefs_num_prefs_ful_ret`.
pub(super) fn num_prefs_ful_ret(g: &GoalPrefs) -> f64 {
    let n: u64 = g.groups().iter().map(|c| c.fulfilled_ret).sum();
    n as f64
}

#[cfg(test)]
mod tests {
    use super::super::testing::count;
    use super::*;

    #[test]
    fn two_groups() {
        // Places a 0, c 1 ranked (r = 2); b 2, d 3 not.
        // Group u: a at 1 > b at 0: a>b, only a ranked: implied, fulfilled.
        // Group v: classes b (1) > c (0) > d (-1): b>c only c ranked: implied, not fulfilled;
        // b>d neither ranked; c>d only c ranked: implied, fulfilled.
        let g = count(
            &[
                ("u", "s", 0, 1.0),
                ("u", "s", 2, 0.0),
                ("v", "s", 2, 1.0),
                ("v", "s", 1, 0.0),
                ("v", "s", 3, -1.0),
            ],
            4,
            2,
        );
        // Possible 1 + 3, fulfilled 1 + 1, none between ranked lemmas.
        assert_eq!(num_prefs_poss(&g), 4.0);
        assert_eq!(num_prefs_ful(&g), 2.0);
        assert_eq!(num_prefs_ful_ret(&g), 0.0);
    }
}
