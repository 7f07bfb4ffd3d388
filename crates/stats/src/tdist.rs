//! Student's t distribution's two-sided tail, through the regularized incomplete beta function:
//! `P(|T| >= |t|) = I_x(df/2, 1/2)` with `x = df / (df + t²)`.
//!
//! Degrees of freedom are whole numbers here (a paired test on `n` goals has `n - 1`), so the
//! beta function `B(df/2, 1/2)` is a product of `df/2` rational factors from `B(1, 1/2) = 2` or
//! `B(1/2, 1/2) = π`, with no log-gamma and its cancellation; `x^a` is `exp(-a ln(1 + t²/df))`,
//! so that neither `x` nor `1 - x` is formed by a subtraction. The continued fraction is
//! Lentz's evaluation of the standard one (DLMF 8.17.22), on the side where it converges fast
//! (`x < (a + 1) / (a + b + 2)`), the other side by `I_x(a, b) = 1 - I_{1-x}(b, a)`, taken only
//! where the result is above 0.08 so that the subtraction loses no relative precision. Agrees
//! with SciPy's `stats.t.sf` (Boost's incomplete beta) to about 1e-14 relative
//! (python/tests/test_compare.py checks 1e-12).

/// `B(a, 1/2)` for `a` a positive multiple of 1/2 (`a = k / 2`, `k >= 1`): `O(k)` products.
fn beta_half(k: u64) -> f64 {
    // B(j + 1, 1/2) = B(j, 1/2) * j / (j + 1/2), from B(1, 1/2) = 2 or B(1/2, 1/2) = pi.
    let (mut b, mut j) = if k % 2 == 0 {
        (2.0, 1.0)
    } else {
        (std::f64::consts::PI, 0.5)
    };
    let a = k as f64 / 2.0;
    while j < a {
        b *= j / (j + 0.5);
        j += 1.0;
    }
    b
}

/// The continued fraction of `I_x(a, b)` (without its prefactor `x^a (1-x)^b / (a B(a, b))`),
/// by Lentz's method; `None` when it has not converged in `max` steps.
fn beta_fraction(a: f64, b: f64, x: f64) -> Option<f64> {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    let max = 200 + (10.0 * (a.max(b)).sqrt()) as u64 * 20;
    for m in 1..=max {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() <= f64::EPSILON {
            return Some(h);
        }
    }
    None
}

/// The two-sided p-value of Student's t statistic `t` with `df` degrees of freedom:
/// `P(|T| >= |t|)`. NaN for `df = 0` or a NaN `t`; 0 for an infinite `t`; 1 for `t = 0`.
/// Cost: `O(df)` for the beta function plus `O(sqrt(df))` steps of the continued fraction.
pub fn t_two_sided(t: f64, df: u64) -> f64 {
    if df == 0 || t.is_nan() {
        return f64::NAN;
    }
    if t.is_infinite() {
        return 0.0;
    }
    if t == 0.0 {
        return 1.0;
    }
    let n = df as f64;
    let a = n / 2.0;
    let b = 0.5;
    // x = df / (df + t²) and 1 - x = t² / (df + t²), each without a subtraction.
    let r = t * t / n;
    let x = 1.0 / (1.0 + r);
    let y = r / (1.0 + r);
    // x^a (1-x)^b / B(a, b).
    let ln_x = -r.ln_1p();
    let front = (a * ln_x).exp() * y.sqrt() / beta_half(df);
    if x < (a + 1.0) / (a + b + 2.0) {
        match beta_fraction(a, b, x) {
            Some(h) => (front * h / a).clamp(0.0, 1.0),
            None => f64::NAN,
        }
    } else {
        match beta_fraction(b, a, y) {
            Some(h) => (1.0 - front * h / b).clamp(0.0, 1.0),
            None => f64::NAN,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn closed_forms() {
        // df = 1 (Cauchy): P(|T| >= t) = 1 - 2 atan(t) / pi.
        for t in [0.1f64, 0.5, 1.0, 3.0, 10.0, 1e3] {
            let want = 2.0 * (1.0 / t).atan() / std::f64::consts::PI;
            assert!(
                close(t_two_sided(t, 1), want, 1e-13),
                "t={t}: {} vs {want}",
                t_two_sided(t, 1)
            );
        }
        // df = 2: P(|T| >= t) = 1 - t / sqrt(2 + t²).
        for t in [0.1f64, 0.5, 1.0, 3.0, 10.0, 1e3] {
            let s = (2.0 + t * t).sqrt();
            let want = 2.0 / (s * (s + t)); // 1 - t/s, without the cancellation
            assert!(
                close(t_two_sided(t, 2), want, 1e-13),
                "t={t}: {} vs {want}",
                t_two_sided(t, 2)
            );
        }
        // df = 4: P(|T| >= t) = 1 - t (6 + t²) / (4 + t²)^{3/2}... checked at t = 2:
        // 1 - 2 * 10 / 8^{3/2} = 1 - 20 / 22.627416997969522 = 0.11611652351681556.
        assert!(close(t_two_sided(2.0, 4), 0.116_116_523_516_815_56, 1e-13));
    }

    #[test]
    fn edges() {
        assert!(t_two_sided(1.0, 0).is_nan());
        assert!(t_two_sided(f64::NAN, 5).is_nan());
        assert_eq!(t_two_sided(f64::INFINITY, 5), 0.0);
        assert_eq!(t_two_sided(0.0, 5), 1.0);
        assert_eq!(t_two_sided(-1.5, 7), t_two_sided(1.5, 7));
        // Large degrees of freedom: close to the normal tail 2 * (1 - Phi(1.96)) = 0.04999579.
        let p = t_two_sided(1.959_963_984_540_054, 2_000_000);
        assert!(close(p, 0.05, 1e-5), "{p}");
    }
}
