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
            // Twice the pairs in order, counted exactly in u128 (a universe near 2^64 makes
            // `s · (U - R)` overflow u64, and an f64 sum would lose the few pairs out of order
            // against billions in order). Each retrieved relevant item beats every non-relevant
            // one below it; a (relevant, non-relevant) pair inside one tie group counts 1/2, as
            // does an unretrieved relevant item against each unretrieved non-relevant one.
            // Bounds: every term is at most 2·R·(U - R) <= U²/2 < 2^127.
            let (u, n, r, s) = (u as u128, n as u128, r as u128, s as u128);
            let nonrel_total = nonrel_total as u128;
            let retrieved =
                2 * (s * nonrel_total - g.nonrelevant_above_sum() as u128) - g.tied_pairs() as u128;
            let unret_rel = r - s;
            let unret_nonrel = u - n - unret_rel;
            let twice_in_order = retrieved + unret_rel * unret_nonrel;
            twice_in_order as f64 / (2 * r * nonrel_total) as f64
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

    /// Twice the (relevant, non-relevant) pairs of the universe in order, counted pair by pair
    /// over the ranked items (`None`: unjudged, else relevant or not, with its score), the
    /// unretrieved ones by their counts; and twice the pairs. Equal scores tie when `group`.
    fn reference(items: &[(bool, f64)], r: u64, u: u64, group: bool) -> (u128, u128) {
        let mut twice = 0u128;
        let ranked_rel = items.iter().filter(|i| i.0).count() as u128;
        let ranked_nonrel = items.len() as u128 - ranked_rel;
        let unret_rel = r as u128 - ranked_rel;
        let unret_nonrel = (u - r) as u128 - ranked_nonrel;
        for (i, a) in items.iter().enumerate() {
            if !a.0 {
                continue;
            }
            for (j, b) in items.iter().enumerate() {
                if b.0 {
                    continue;
                }
                if group && a.1 == b.1 {
                    twice += 1;
                } else if i < j {
                    twice += 2;
                }
            }
            // Every unretrieved non-relevant lemma is below every ranked lemma.
            twice += 2 * unret_nonrel;
        }
        twice += unret_rel * unret_nonrel;
        (twice, 2 * r as u128 * (u - r) as u128)
    }

    #[test]
    fn huge_universes_against_a_pair_by_pair_reference() {
        use crate::{Config, GoalAccumulator, Measure, Plan, Ties};
        use std::sync::Arc;
        let ms = Measure::parse_all(["AUC"]).unwrap();
        // A small generator: deterministic rankings with ties and unretrieved relevant lemmas.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let universes = [
            6_148_914_691_236_517_210,
            u64::MAX,
            u64::MAX / 2 + 1,
            1 << 53,
            (1 << 32) + 7,
            40,
        ];
        for group in [false, true] {
            let ties = if group { Ties::Group } else { Ties::Given };
            let plan = Arc::new(Plan::new(
                &ms,
                Config {
                    ties,
                    ..Config::default()
                },
            ));
            let mut acc = GoalAccumulator::new(plan);
            for &u in &universes {
                for _ in 0..200 {
                    let n = next(12) as usize;
                    let mut score = 10.0;
                    let items: Vec<(bool, f64)> = (0..n)
                        .map(|_| {
                            if next(3) > 0 {
                                score -= 1.0;
                            }
                            (next(2) == 0, score)
                        })
                        .collect();
                    let s = items.iter().filter(|i| i.0).count() as u64;
                    let r = s + next(3);
                    if r == 0 {
                        continue;
                    }
                    acc.begin(&Truth::binary(r, 0).with_universe(u));
                    for &(rel, score) in &items {
                        let l = if rel {
                            Label::judged(1)
                        } else {
                            Label::UNJUDGED
                        };
                        acc.push_scored(l, score).unwrap();
                    }
                    let got = acc.finish().unwrap().values()[0].unwrap();
                    let (num, den) = reference(&items, r, u, group);
                    let want = num as f64 / den as f64;
                    assert!(
                        (got - want).abs() <= 1e-15,
                        "{items:?}, R = {r}, U = {u}, group {group}: {got} vs {want}"
                    );
                    assert!((0.0..=1.0).contains(&got));
                }
            }
        }
    }

    #[test]
    fn the_seed_in_a_universe_near_2_to_the_64() {
        // s·(U - R) = 3·(U - 3) overflowed u64: the value was 0.0 or 0.333. Out of order: x
        // above a, b, c and y above b, c: 5 pairs of 3·(U - 3), so AUC = 1 - 5/(3(U - 3)).
        for u in [6_148_914_691_236_517_210u64, u64::MAX] {
            let v = eval_labels(
                &["AUC"],
                &Truth::binary(3, 0).with_universe(u),
                &labels(&SEED),
            );
            let want = 1.0 - 5.0 / (3.0 * (u - 3) as f64);
            assert_eq!(v, [Some(want)], "U = {u}");
        }
        // Away from the top the same formula, exactly representable: 1 - 5/(3·(2^40 - 3)).
        let u = 1u64 << 40;
        let v = eval_labels(
            &["AUC"],
            &Truth::binary(3, 0).with_universe(u),
            &labels(&SEED),
        );
        let pairs = 3 * (u - 3);
        assert_eq!(v, [Some((pairs - 5) as f64 / pairs as f64)]);
    }
}
