use super::*;

/// Generated paired values: `n` goals, B better than A by `shift` on average.
fn generated(n: usize, shift: f64, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut r = Rng::new(seed);
    let mut u = move || (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let a: Vec<f64> = (0..n).map(|_| u()).collect();
    let b: Vec<f64> = a
        .iter()
        .map(|x| (x + shift + 0.3 * (u() - 0.5)).clamp(0.0, 1.0))
        .collect();
    (a, b)
}

#[test]
fn t_test_by_hand() {
    // d = (1, 3): mean 2, sd sqrt(2), t = 2 on 1 df (Cauchy): p = 2 atan(1/2) / pi.
    let p = Paired::new(&[0.0, 0.0], &[1.0, 3.0]).unwrap().t_test();
    assert_eq!((p.t, p.df), (2.0, 1));
    let want = 2.0 * 0.5f64.atan() / std::f64::consts::PI;
    assert!((p.p - want).abs() <= 1e-14 * want, "{} vs {want}", p.p);
    // d = (1, 2, 6): mean 3, sd sqrt(7), t = 3 / sqrt(7/3) on 2 df: p = 2 / (s (s + t)),
    // s = sqrt(2 + t²).
    let p = Paired::new(&[1.0, 1.0, 1.0], &[2.0, 3.0, 7.0])
        .unwrap()
        .t_test();
    let t = 3.0 / (7.0f64 / 3.0).sqrt();
    let s = (2.0 + t * t).sqrt();
    assert!((p.t - t).abs() < 1e-15 * t);
    assert!((p.p - 2.0 / (s * (s + t))).abs() < 1e-14);
}

#[test]
fn fewer_than_two_pairs_give_nan() {
    for n in [0, 1] {
        let p = Paired::new(&vec![0.5; n], &vec![0.7; n]).unwrap();
        assert!(p.t_test().p.is_nan());
        assert!(p.randomization(100, &mut Rng::new(1)).is_nan());
        assert!(p.exact_randomization().unwrap().is_nan());
        let b = p.bootstrap(100, 0.95, &mut Rng::new(1));
        assert!(b.low.is_nan() && b.high.is_nan() && b.p.is_nan());
        assert!(p.effect().is_nan());
    }
    assert_eq!(
        Paired::new(&[1.0], &[1.0, 2.0]).unwrap_err(),
        LengthMismatch { a: 1, b: 2 }
    );
}

#[test]
fn a_run_against_itself() {
    let (a, _) = generated(50, 0.0, 3);
    let p = Paired::new(&a, &a).unwrap();
    assert_eq!(p.mean(), 0.0);
    assert_eq!(p.t_test().p, 1.0);
    assert_eq!(p.randomization(1000, &mut Rng::new(9)), 1.0);
    assert_eq!(p.exact_randomization(), None);
    let b = p.bootstrap(1000, 0.95, &mut Rng::new(9));
    assert_eq!((b.low, b.high, b.p), (0.0, 0.0, 1.0));
    assert_eq!(p.effect(), 0.0);
    assert_eq!(p.wins_ties_losses(), (0, 50, 0));
}

#[test]
fn constant_non_zero_differences() {
    let p = Paired::new(&[0.1, 0.2, 0.3], &[0.6, 0.7, 0.8]).unwrap();
    // 0.6 - 0.1 and 0.7 - 0.2 round differently: not quite constant; shift by exact halves.
    let q = Paired::new(&[0.0, 0.25, 0.5], &[0.5, 0.75, 1.0]).unwrap();
    assert_eq!(q.t_test().t, f64::INFINITY);
    assert_eq!(q.t_test().p, 0.0);
    assert_eq!(q.effect(), f64::INFINITY);
    assert!(p.t_test().p < 1e-10);
    // All 8 patterns: only the two of one sign reach |sum| = 1.5.
    assert_eq!(q.exact_randomization(), Some(0.25));
}

#[test]
fn randomization_within_monte_carlo_error_of_the_exact_value() {
    let mut checked = 0;
    for (n, shift, seed) in [
        (6, 0.05, 1),
        (10, 0.02, 2),
        (12, 0.1, 3),
        (16, 0.0, 4),
        (16, 0.04, 5),
        (14, 0.08, 6),
    ] {
        let (a, b) = generated(n, shift, seed);
        let p = Paired::new(&a, &b).unwrap();
        let exact = p.exact_randomization().unwrap();
        let permutations = 20_000u64;
        let estimate = p.randomization(permutations, &mut Rng::new(seed));
        // (b + 1) / (N + 1) has mean about `exact` and sd sqrt(exact (1 - exact) / N); allow
        // 4.5 sd (and the +1's bias).
        let sd = (exact * (1.0 - exact) / permutations as f64).sqrt();
        let tol = 4.5 * sd + 1.0 / permutations as f64;
        assert!(
            (estimate - exact).abs() <= tol,
            "n={n}: randomization {estimate} vs exact {exact} (tolerance {tol})"
        );
        assert!(exact > 0.0 && exact <= 1.0);
        checked += 1;
    }
    assert_eq!(checked, 6);
}

#[test]
fn exact_randomization_by_hand() {
    // d = (1, 2, 3): observed |6|; patterns' |sums|: 6, 4, 2, 0, 0, 2, 4, 6 -> 2 of 8.
    let p = Paired::from_differences(vec![1.0, 2.0, 3.0]);
    assert_eq!(p.exact_randomization(), Some(0.25));
    // d = (1, -1, 2): observed 2; sums over sign patterns: ±1 ±1 ±2 -> |.| in {4, 2, 0, 2, 2, 0, 2, 4}:
    // 6 of 8 reach 2.
    let p = Paired::from_differences(vec![1.0, -1.0, 2.0]);
    assert_eq!(p.exact_randomization(), Some(0.75));
}

#[test]
fn seeded_results_repeat_and_seeds_differ() {
    let (a, b) = generated(200, 0.01, 11);
    let p = Paired::new(&a, &b).unwrap();
    let r1 = p.randomization(2000, &mut Rng::stream(5, &[0, 1]));
    let r2 = p.randomization(2000, &mut Rng::stream(5, &[0, 1]));
    assert_eq!(r1, r2);
    let b1 = p.bootstrap(2000, 0.95, &mut Rng::stream(5, &[0, 2]));
    let b2 = p.bootstrap(2000, 0.95, &mut Rng::stream(5, &[0, 2]));
    assert_eq!(b1, b2);
    let b3 = p.bootstrap(2000, 0.95, &mut Rng::stream(6, &[0, 2]));
    assert_ne!(b1, b3);
}

#[test]
fn bootstrap_interval_covers_the_mean_and_shrinks_with_n() {
    let (a, b) = generated(400, 0.05, 12);
    let p = Paired::new(&a, &b).unwrap();
    let ci = p.bootstrap(4000, 0.95, &mut Rng::new(1));
    let m = p.mean();
    assert!(ci.low < m && m < ci.high, "{ci:?} around {m}");
    // Half-width about 1.96 sd / sqrt(n).
    let half = 1.96 * p.sd() / (p.len() as f64).sqrt();
    let got = (ci.high - ci.low) / 2.0;
    assert!((got - half).abs() < 0.15 * half, "{got} vs {half}");
    // A shift of 0.05 on 400 goals with sd ~0.09: far from 0.
    assert!(ci.low > 0.0);
    assert!(ci.p < 0.01);
}

#[test]
fn quantile_is_numpys_linear() {
    let x = [1.0, 2.0, 4.0, 8.0];
    // numpy.quantile([1, 2, 4, 8], [0, 0.025, 0.5, 0.975, 1]) = [1, 1.075, 3, 7.7, 8]
    assert_eq!(quantile(&x, 0.0), 1.0);
    assert!((quantile(&x, 0.025) - 1.075).abs() < 1e-15);
    assert_eq!(quantile(&x, 0.5), 3.0);
    assert!((quantile(&x, 0.975) - 7.7).abs() < 1e-14);
    assert_eq!(quantile(&x, 1.0), 8.0);
}

#[test]
fn corrections_by_hand() {
    let p = [0.01, 0.04, 0.03, 0.2];
    // Sorted 0.01 0.03 0.04 0.2 (m = 4).
    // Bonferroni: 0.04 0.16 0.12 0.8.
    let b = adjust(&p, Correction::Bonferroni);
    for (x, want) in b.iter().zip([0.04, 0.16, 0.12, 0.8]) {
        assert!((x - want).abs() < 1e-15, "{b:?}");
    }
    // Holm: 4*0.01 = 0.04, 3*0.03 = 0.09, max(0.09, 2*0.04 = 0.08) = 0.09, 1*0.2 = 0.2.
    let h = adjust(&p, Correction::Holm);
    for (x, want) in h.iter().zip([0.04, 0.09, 0.09, 0.2]) {
        assert!((x - want).abs() < 1e-15, "{h:?}");
    }
    // BH: from the top: 0.2*4/4 = 0.2; 0.04*4/3 = 0.0533; 0.03*4/2 = 0.06 -> min 0.0533;
    // 0.01*4/1 = 0.04.
    let q = adjust(&p, Correction::Bh);
    for (x, want) in q
        .iter()
        .zip([0.04, 0.04 * 4.0 / 3.0, 0.04 * 4.0 / 3.0, 0.2])
    {
        assert!((x - want).abs() < 1e-15, "{q:?}");
    }
    assert_eq!(adjust(&p, Correction::None), p);
    // Capped at 1; NaN left out of m.
    let c = adjust(&[0.6, f64::NAN, 0.3], Correction::Bonferroni);
    assert_eq!(c[0], 1.0);
    assert!(c[1].is_nan());
    assert_eq!(c[2], 0.6);
}
