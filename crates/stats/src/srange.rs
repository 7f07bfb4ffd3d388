//! The studentized range distribution's upper tail, and Tukey's HSD test built on it.

use std::f64::consts::{LN_2, PI, SQRT_2};

/// Kronrod nodes on [-1, 1] (the positive half and 0), QUADPACK's `qk15`.
const XGK: [f64; 8] = [
    0.991_455_371_120_812_6,
    0.949_107_912_342_758_5,
    0.864_864_423_359_769_1,
    0.741_531_185_599_394_4,
    0.586_087_235_467_691_1,
    0.405_845_151_377_397_2,
    0.207_784_955_007_898_5,
    0.0,
];
/// Kronrod weights.
const WGK: [f64; 8] = [
    0.022_935_322_010_529_22,
    0.063_092_092_629_978_55,
    0.104_790_010_322_250_18,
    0.140_653_259_715_525_92,
    0.169_004_726_639_267_9,
    0.190_350_578_064_785_4,
    0.204_432_940_075_298_9,
    0.209_482_141_084_727_83,
];
/// Gauss weights of the nodes `XGK[1], XGK[3], XGK[5]` and 0.
const WG: [f64; 4] = [
    0.129_484_966_168_869_7,
    0.279_705_391_489_276_7,
    0.381_830_050_505_118_9,
    0.417_959_183_673_469_4,
];

/// One panel: its ends, the Kronrod estimate and `|K15 - G7|`.
#[derive(Clone, Copy)]
struct Panel {
    a: f64,
    b: f64,
    k: f64,
    err: f64,
}

fn gk15(f: &mut dyn FnMut(f64) -> f64, a: f64, b: f64) -> Panel {
    let c = 0.5 * (a + b);
    let h = 0.5 * (b - a);
    let fc = f(c);
    let mut k = fc * WGK[7];
    let mut g = fc * WG[3];
    for j in 0..7 {
        let x = h * XGK[j];
        let s = f(c - x) + f(c + x);
        k += WGK[j] * s;
        if j % 2 == 1 {
            g += WG[j / 2] * s;
        }
    }
    Panel {
        a,
        b,
        k: k * h,
        err: ((k - g) * h).abs(),
    }
}

/// `∫ f` over the consecutive panels between the points `edges` (ascending), halving the panel
/// of largest error estimate until the estimates add up to at most `rel` of the integral (or
/// 2,000 panels: the best estimate then).
fn integrate(f: &mut dyn FnMut(f64) -> f64, edges: &[f64], rel: f64) -> f64 {
    let mut panels: Vec<Panel> = edges.windows(2).map(|e| gk15(f, e[0], e[1])).collect();
    loop {
        let total: f64 = panels.iter().map(|p| p.k).sum();
        let err: f64 = panels.iter().map(|p| p.err).sum();
        if err <= rel * total.abs() || panels.len() >= 2_000 {
            return total;
        }
        let worst = (0..panels.len())
            .max_by(|&i, &j| panels[i].err.total_cmp(&panels[j].err))
            .expect("at least one panel");
        let p = panels.swap_remove(worst);
        let m = 0.5 * (p.a + p.b);
        panels.push(gk15(f, p.a, m));
        panels.push(gk15(f, m, p.b));
    }
}

/// The standard normal's upper tail `Φc(x) = P(Z > x)`.
fn upper(x: f64) -> f64 {
    0.5 * libm::erfc(x / SQRT_2)
}

/// The standard normal density.
fn density(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * PI).sqrt()
}

/// `H(w) = P(R > w)`, `R` the range of `k` standard normal values.
fn range_sf(w: f64, k: u64) -> f64 {
    if w <= 0.0 {
        return 1.0;
    }
    let kf = k as f64;
    let mut f = |z: f64| {
        let top = upper(z + w);
        let phi = density(z);
        if phi == 0.0 || top == 0.0 {
            return 0.0;
        }
        let above = upper(z); // Φc(z)
                              // Φ(z + w) - Φ(z), from the tails on the side where they are small.
        let inside = if z >= 0.0 {
            above - top
        } else {
            (1.0 - top) - (1.0 - above)
        }
        .max(0.0);
        // Σ above^i inside^(m-i), i = 0..=m, m = k - 2: S_m = inside S_(m-1) + above^m.
        let (mut sum, mut pa) = (1.0, 1.0);
        for _ in 0..k - 2 {
            pa *= above;
            sum = inside * sum + pa;
        }
        kf * phi * top * sum
    };
    let c = -0.5 * w;
    let edges: Vec<f64> = (0..=13).map(|i| c - 14.0 + 2.0 * i as f64).collect();
    integrate(&mut f, &edges, 1e-12).clamp(0.0, 1.0)
}

/// `s² - 1 - ln s²`, by its series in `t = s² - 1` near `s = 1`.
fn sq_minus_log(s: f64) -> f64 {
    let t = (s - 1.0) * (s + 1.0);
    if t.abs() < 0.1 {
        // t - ln(1 + t) = Σ_{j>=2} (-1)^j t^j / j
        let mut term = t * t;
        let mut sum = 0.0;
        for j in 2..40 {
            let add = term / j as f64;
            sum += if j % 2 == 0 { add } else { -add };
            if add.abs() < 1e-18 * sum.abs() {
                break;
            }
            term *= t;
        }
        sum
    } else {
        // Not ln(1 + t): 1 + t rounds s² away from 0.
        t - 2.0 * s.ln()
    }
}

/// `ln Γ(a) - (a - 1/2) ln a + a - ln(2π)/2` (Stirling's remainder).
fn stirling_remainder(a: f64) -> f64 {
    if a >= 10.0 {
        let r = 1.0 / (a * a);
        (1.0 / 12.0 - r * (1.0 / 360.0 - r * (1.0 / 1260.0 - r * (1.0 / 1680.0 - r / 1188.0)))) / a
    } else {
        libm::lgamma(a) - (a - 0.5) * a.ln() + a - 0.5 * (2.0 * PI).ln()
    }
}

/// The survival function of the studentized range distribution with `k` means and `df`
/// degrees of freedom, `P(Q > q)`, as SciPy's `stats.studentized_range.sf(q, k, df)`, the
/// limit `df = ∞` taken from `df >= 100,000` as SciPy does. 1 for `q <= 0`; 0 for `q = ∞`;
/// NaN for a NaN argument, `k < 2` or `df <= 0`. Cost: about `10^5` evaluations of `erfc`
/// (`10^3` from `df >= 100,000`), some 15 ms.
///
/// `Q = R / S`, `R` the range of `k` independent standard normal values and `S² = χ²_ν / ν`
/// (`ν = df`)
/// independent of them. Its survival function is
///
/// ```text
/// P(Q > q) = ∫_0^∞ f_S(s) H(s q) ds,    f_S(s) = 2 a^a s^(2a-1) e^(-a s²) / Γ(a),  a = ν/2,
/// H(w) = P(R > w) = k ∫ φ(z) ([1 - Φ(z)]^(k-1) - [Φ(z+w) - Φ(z)]^(k-1)) dz
///      = k ∫ φ(z) Φc(z+w) Σ_{i=0}^{k-2} Φc(z)^i [Φ(z+w) - Φ(z)]^(k-2-i) dz,
/// ```
///
/// the second form of `H` factoring `x^(k-1) - y^(k-1)` with `x - y = Φc(z + w)`: every term
/// positive, so the tail is computed as itself, not as `1 - P(Q <= q)`, and keeps its relative
/// precision far below SciPy's absolute `1e-11` (SciPy's `studentized_range.sf` is `1 - cdf`).
/// `Φc` comes from `libm`'s `erfc` (musl's, within an ulp or two); `Φ(z+w) - Φ(z)` is formed
/// from the upper tails when `z >= 0`, where the lower ones would cancel. `f_S` is taken in
/// logarithms with Stirling's series for `ln Γ(a)`, `a ≥ 10` (`ln Γ(a) - (a - 1/2) ln a + a -
/// ln(2π)/2` as its asymptotic series; `libm`'s `lgamma` below), and `s² - 1 - ln s²` by its own
/// series near `s = 1`, so that nothing of size `ν` cancels.
///
/// Both integrals are adaptive Gauss-Kronrod (7-point Gauss, 15-point Kronrod, QUADPACK's
/// `qk15` rule), globally adaptive: the interval of largest error estimate `|K15 - G7|` is
/// halved until the estimates add up to at most `1e-12` of the integral (inner) and `1e-11`
/// (outer), starting from panels placed on the integrand's mass: for the inner one `z` in
/// `[-w/2 - 14, -w/2 + 12]` (outside it the integrand is below `e^-70` of its peak), for the
/// outer one `s` around the mode `sqrt((ν-1)/ν)` of `f_S` by steps of its spread
/// `1/sqrt(2ν)`, out to where `f_S` is below `e^-300` of its peak, and down to 0, with more
/// edges where `H(s q)` falls from 1 to 0 (`s q` from 0 to 13).
///
/// Like SciPy, for `ν >= 100,000` the distribution is taken as its limit `ν = ∞` (`S = 1`):
/// `P(Q > q) = H(q)`, a single integral. Checked against SciPy's `studentized_range.sf` and
/// `tukey_hsd` (`python/tests/test_compare_tukey.py`: within `1e-10` absolute), and for `k = 2`
/// against the closed forms `P(|T_ν| > q/√2)` and `erfc(q/2)` (this crate's unit tests:
/// `1e-10` relative, down to tails of `1e-100`).
pub fn studentized_range_sf(q: f64, k: u64, df: f64) -> f64 {
    if q.is_nan() || df.is_nan() || k < 2 || df <= 0.0 {
        return f64::NAN;
    }
    if q <= 0.0 {
        return 1.0;
    }
    if q.is_infinite() {
        return 0.0;
    }
    if df >= 100_000.0 {
        return range_sf(q, k);
    }
    let a = 0.5 * df;
    let log_front = LN_2 + 0.5 * a.ln() - 0.5 * (2.0 * PI).ln() - stirling_remainder(a);
    let mut f = |s: f64| {
        if s <= 0.0 {
            return 0.0;
        }
        let log_f = log_front - s.ln() - a * sq_minus_log(s);
        let fs = log_f.exp();
        if fs == 0.0 {
            return 0.0;
        }
        fs * range_sf(s * q, k)
    };
    // Panels by steps of the spread around the mode, out to where f_S has fallen by e^-300,
    // and from 0.
    let mode = ((df - 1.0).max(0.0) / df).sqrt();
    let spread = 1.0 / (2.0 * df).sqrt();
    let log_shape = |s: f64| -s.ln() - a * sq_minus_log(s);
    let peak = log_shape(mode.max(spread));
    let mut edges = vec![0.0];
    let last;
    let mut j = -12i32;
    loop {
        let e = mode + j as f64 * spread;
        if e > *edges.last().expect("not empty") {
            edges.push(e);
        }
        if j >= 12 && log_shape(e) < peak - 300.0 {
            last = e;
            break;
        }
        j += if j < 12 { 1 } else { 8 };
    }
    // And where H(s q) falls from 1 to 0, s q from 0 to about 12: for a large q, far below the
    // mode (the heavy tail of few degrees of freedom comes from there).
    for x in [
        0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 13.0,
    ] {
        edges.push(x / q);
    }
    edges.sort_by(f64::total_cmp);
    edges.dedup();
    edges.retain(|&e| e <= last);
    integrate(&mut f, &edges, 1e-11).clamp(0.0, 1.0)
}

/// Tukey's honestly significant difference test of `k >= 2` groups' means, as SciPy's
/// `stats.tukey_hsd(*groups)` computes it (equal variances): the groups are independent samples
/// (one-way analysis of variance), the mean square error pooled over them,
/// `mse = Σ_i (n_i - 1) var_i / (N - k)` on `df = N - k` degrees of freedom (`N` values in
/// all); for groups `i`, `j` the statistic is `mean_i - mean_j`, its standard error
/// `sqrt(mse / 2 (1/n_i + 1/n_j))`, and the p-value the studentized range's tail
/// [`studentized_range_sf`] at `|mean_i - mean_j| / se` with `k` means: every pair's p-value is
/// adjusted for all `k (k - 1) / 2` pairs already.
///
/// ```
/// use lemma_stats::TukeyHsd;
/// let t = TukeyHsd::new(&[&[1.0, 2.0, 3.0], &[3.0, 5.0, 7.0], &[2.0, 2.5, 3.0]]);
/// assert_eq!((t.df, t.statistic(1, 0)), (6.0, 3.0));
/// // scipy.stats.tukey_hsd([1, 2, 3], [3, 5, 7], [2, 2.5, 3]).pvalue[0][1]
/// assert!((t.p(0, 1) - 0.07182194860078883).abs() < 1e-10);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TukeyHsd {
    means: Vec<f64>,
    sizes: Vec<usize>,
    /// The degrees of freedom `N - k`.
    pub df: f64,
    /// The pooled mean square error.
    pub mse: f64,
}

impl TukeyHsd {
    /// The groups' means and pooled variance. Cost: `O(N)`.
    pub fn new(groups: &[&[f64]]) -> TukeyHsd {
        let means: Vec<f64> = groups.iter().map(|g| crate::mean(g)).collect();
        let total: usize = groups.iter().map(|g| g.len()).sum();
        let df = total as f64 - groups.len() as f64;
        let ss: f64 = (groups.iter().zip(&means))
            .filter(|(g, _)| !g.is_empty())
            .map(|(g, &m)| crate::compensated_sum(g.iter().map(|x| (x - m) * (x - m))))
            .sum();
        TukeyHsd {
            means,
            sizes: groups.iter().map(|g| g.len()).collect(),
            df,
            mse: ss / df,
        }
    }

    /// The number of groups `k`.
    pub fn len(&self) -> usize {
        self.means.len()
    }

    /// Whether there are no groups.
    pub fn is_empty(&self) -> bool {
        self.means.is_empty()
    }

    /// `mean_i - mean_j` (SciPy's `statistic[i][j]`).
    pub fn statistic(&self, i: usize, j: usize) -> f64 {
        self.means[i] - self.means[j]
    }

    /// The p-value of groups `i` and `j` (SciPy's `pvalue[i][j]`): 1 for `i = j`; NaN when
    /// `df <= 0` (no group of two values or more) or a group is empty; when the pooled variance
    /// is 0, 1 for equal means and 0 for different ones. Cost: one [`studentized_range_sf`].
    pub fn p(&self, i: usize, j: usize) -> f64 {
        if i == j {
            return 1.0;
        }
        let (ni, nj) = (self.sizes[i] as f64, self.sizes[j] as f64);
        let se = (self.mse / 2.0 * (1.0 / ni + 1.0 / nj)).sqrt();
        let d = self.statistic(i, j).abs();
        if self.df <= 0.0 || d.is_nan() || se.is_nan() {
            f64::NAN
        } else if se == 0.0 {
            if d == 0.0 {
                1.0
            } else {
                0.0
            }
        } else {
            studentized_range_sf(d / se, self.len() as u64, self.df)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, rel: f64) -> bool {
        (got - want).abs() <= rel * want.abs()
    }

    #[test]
    fn two_means_are_a_t_test() {
        // k = 2: Q = |Z1 - Z2| / S = sqrt(2) |T_df|: P(Q > q) = P(|T| > q / sqrt(2)).
        for df in [1u64, 2, 3, 7, 30, 500, 20_000] {
            for q in [0.05, 0.5, 1.0, 2.5, 4.0, 8.0, 20.0, 60.0] {
                let want = crate::t_two_sided(q / SQRT_2, df);
                if want < 1e-100 {
                    continue;
                }
                let got = studentized_range_sf(q, 2, df as f64);
                assert!(close(got, want, 1e-10), "q={q} df={df}: {got} vs {want}");
            }
        }
        // df = ∞: P(|Z1 - Z2| > q) = erfc(q / 2).
        for q in [0.1, 1.0, 3.0, 10.0, 25.0] {
            let want = libm::erfc(q / 2.0);
            let got = studentized_range_sf(q, 2, 1e6);
            assert!(close(got, want, 1e-12), "q={q}: {got} vs {want}");
        }
    }

    #[test]
    fn range_of_three_normals_at_zero_and_monotone() {
        // The range's tail at 0 is 1; Q's tail falls as q grows and rises with k.
        assert_eq!(range_sf(0.0, 3), 1.0);
        let mut last = 1.0;
        for i in 1..40 {
            let p = studentized_range_sf(i as f64 * 0.25, 4, 12.0);
            assert!(p < last && p > 0.0, "{i}: {p} after {last}");
            last = p;
        }
        for q in [1.0, 3.0, 5.0] {
            let (p3, p6) = (
                studentized_range_sf(q, 3, 20.0),
                studentized_range_sf(q, 6, 20.0),
            );
            assert!(p3 < p6, "q={q}: {p3} !< {p6}");
        }
    }

    #[test]
    fn edges() {
        assert!(studentized_range_sf(f64::NAN, 3, 10.0).is_nan());
        assert!(studentized_range_sf(1.0, 1, 10.0).is_nan());
        assert!(studentized_range_sf(1.0, 3, 0.0).is_nan());
        assert_eq!(studentized_range_sf(0.0, 3, 10.0), 1.0);
        assert_eq!(studentized_range_sf(f64::INFINITY, 3, 10.0), 0.0);
    }

    #[test]
    fn tukey_by_hand() {
        // Two groups: Tukey's HSD is the two-sample t-test with pooled variance.
        // (1, 2, 3) and (3, 5, 7): means 2 and 5, variances 1 and 4, mse = (2 + 8) / 4 = 2.5,
        // t = 3 / sqrt(2.5 (1/3 + 1/3)) on 4 df.
        let t = TukeyHsd::new(&[&[1.0, 2.0, 3.0], &[3.0, 5.0, 7.0]]);
        assert_eq!((t.statistic(0, 1), t.statistic(1, 0)), (-3.0, 3.0));
        assert_eq!((t.df, t.mse), (4.0, 2.5));
        let want = crate::t_two_sided(3.0 / (2.5f64 * 2.0 / 3.0).sqrt(), 4);
        assert!(close(t.p(0, 1), want, 1e-10), "{} vs {want}", t.p(0, 1));
        assert_eq!(t.p(1, 0), t.p(0, 1));
        assert_eq!(t.p(0, 0), 1.0);
        // No spread: equal means p = 1, different ones p = 0.
        let t = TukeyHsd::new(&[&[1.0, 1.0], &[1.0, 1.0], &[2.0, 2.0]]);
        assert_eq!((t.p(0, 1), t.p(0, 2)), (1.0, 0.0));
        // One value a group: no degrees of freedom.
        assert!(TukeyHsd::new(&[&[1.0], &[2.0]]).p(0, 1).is_nan());
    }
}
