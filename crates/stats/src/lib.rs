//! # lemma-stats: paired significance tests for comparing runs
//!
//! Two runs scored on the same goals give two values per goal; this crate answers whether their
//! difference is more than chance, over those paired values alone (no I/O, no formats; `libm`
//! for `erfc`). [`Paired`] holds the differences `d_i = b_i - a_i` (run B minus run A, so
//! that a positive difference means B scored higher) and gives:
//!
//! - [`Paired::t_test`]: the paired t-test's two-sided p-value, as SciPy's `stats.ttest_rel`;
//! - [`Paired::randomization`]: Fisher's randomization test by random sign flips, seeded;
//!   [`Paired::exact_randomization`] the same over all `2^n` sign patterns (small `n`);
//! - [`Paired::bootstrap`]: a percentile bootstrap confidence interval of the mean difference
//!   and a bootstrap p-value, seeded;
//! - [`Paired::effect`] (mean over standard deviation of the differences) and
//!   [`Paired::wins_ties_losses`];
//!
//! Over more than two runs, [`TukeyHsd`] is Tukey's honestly significant difference test, as
//! SciPy's `stats.tukey_hsd`, on the studentized range distribution's tail
//! [`studentized_range_sf`];
//! and [`adjust`] corrects a family of p-values for multiple comparisons (Holm, Bonferroni,
//! Benjamini-Hochberg), as statsmodels' `multipletests` does.
//!
//! ```
//! use lemma_stats::{adjust, Correction, Paired};
//! let a = [0.2, 0.5, 0.1, 0.4, 0.3];
//! let b = [0.3, 0.6, 0.1, 0.7, 0.5];
//! let p = Paired::new(&a, &b).unwrap();
//! assert_eq!(p.wins_ties_losses(), (4, 1, 0));
//! // scipy.stats.ttest_rel(a, b).pvalue
//! assert!((p.t_test().p - 0.051605957811174726).abs() < 1e-12);
//! // Of the 32 sign patterns, 4 give a sum as far from 0 as the observed one: all four
//! // non-zero differences of one sign, the zero one either way.
//! assert_eq!(p.exact_randomization(), Some(4.0 / 32.0));
//! assert_eq!(adjust(&[0.25, 0.125, 0.5], Correction::Holm), [0.5, 0.375, 0.5]);
//! ```

#![deny(missing_docs)]

mod rng;
mod srange;
mod tdist;

pub use rng::Rng;
pub use srange::{studentized_range_sf, TukeyHsd};
pub use tdist::t_two_sided;

use std::fmt;

/// The two value slices of a [`Paired`] differ in length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LengthMismatch {
    /// Values of run A.
    pub a: usize,
    /// Values of run B.
    pub b: usize,
}

impl fmt::Display for LengthMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "paired values must be of equal length: {} against {}",
            self.a, self.b
        )
    }
}

impl std::error::Error for LengthMismatch {}

/// A paired t-test's outcome.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct TTest {
    /// The statistic `mean(d) / (sd(d) / sqrt(n))` (`sd` with `n - 1` degrees of freedom).
    pub t: f64,
    /// Degrees of freedom, `n - 1`.
    pub df: u64,
    /// The two-sided p-value `P(|T| >= |t|)`.
    pub p: f64,
}

/// A percentile bootstrap's outcome.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Bootstrap {
    /// The interval's lower end: the `(1 - level) / 2` quantile of the resampled means.
    pub low: f64,
    /// Its upper end: the `(1 + level) / 2` quantile.
    pub high: f64,
    /// The two-sided bootstrap p-value: `(1 + #{|m*_j - mean(d)| >= |mean(d)|}) / (B + 1)` over
    /// the `B` resampled means `m*_j` (the resamples shifted to a zero mean: the null
    /// hypothesis).
    pub p: f64,
}

/// Paired values of two runs over the same goals, as their differences `d_i = b_i - a_i`.
/// Memory: 8 bytes a pair.
#[derive(Clone, Debug)]
pub struct Paired {
    d: Vec<f64>,
    /// Twice a bound on a sum's rounding error, `2 n eps sum |d_i|`: sums of sign-flipped
    /// differences this close to the observed one count as equal to it (the same pattern summed
    /// in another order, tied values swapped).
    tolerance: f64,
}

impl Paired {
    /// The pairs `(a_i, b_i)`; an error when the lengths differ. Cost: `O(n)`.
    pub fn new(a: &[f64], b: &[f64]) -> Result<Paired, LengthMismatch> {
        if a.len() != b.len() {
            return Err(LengthMismatch {
                a: a.len(),
                b: b.len(),
            });
        }
        Ok(Paired::from_differences(
            a.iter().zip(b).map(|(x, y)| y - x).collect(),
        ))
    }

    /// The pairs given as their differences `b_i - a_i`.
    pub fn from_differences(d: Vec<f64>) -> Paired {
        let l1: f64 = d.iter().map(|x| x.abs()).sum();
        let tolerance = 2.0 * d.len() as f64 * f64::EPSILON * l1;
        Paired { d, tolerance }
    }

    /// The differences `b_i - a_i`.
    pub fn differences(&self) -> &[f64] {
        &self.d
    }

    /// The number of pairs `n`.
    pub fn len(&self) -> usize {
        self.d.len()
    }

    /// Whether there are no pairs.
    pub fn is_empty(&self) -> bool {
        self.d.is_empty()
    }

    /// The mean difference `sum(d) / n`, the sum compensated (Neumaier), so that the t
    /// statistic is within a few ulps of its exact value (NaN for no pairs). Cost: `O(n)`.
    pub fn mean(&self) -> f64 {
        mean(&self.d)
    }

    /// The sample standard deviation of the differences, `sqrt(sum((d_i - mean)²) / (n - 1))`
    /// (two passes, sums compensated; NaN below two pairs). Cost: `O(n)`.
    pub fn sd(&self) -> f64 {
        let n = self.d.len();
        if n < 2 {
            return f64::NAN;
        }
        let m = self.mean();
        let ss = compensated_sum(self.d.iter().map(|x| (x - m) * (x - m)));
        (ss / (n - 1) as f64).sqrt()
    }

    /// The paired t-test, two-sided, as `scipy.stats.ttest_rel(a, b)` computes it (whose `t` is
    /// the negative of this one: it takes `a - b`): `t = mean(d) / (sd(d) / sqrt(n))` on
    /// `n - 1` degrees of freedom, `p = P(|T| >= |t|)` from Student's t distribution
    /// ([`t_two_sided`]). Below two pairs, `t` and `p` are NaN (SciPy's too). When every
    /// difference is zero, `t = 0` and `p = 1` (two identical runs: nothing to tell apart; SciPy
    /// gives NaN, from `0 / 0`); when the differences are equal and non-zero, `t` is infinite
    /// and `p = 0`. Cost: `O(n)`.
    pub fn t_test(&self) -> TTest {
        let n = self.d.len();
        if n < 2 {
            return TTest {
                t: f64::NAN,
                df: n.saturating_sub(1) as u64,
                p: f64::NAN,
            };
        }
        let df = (n - 1) as u64;
        let m = self.mean();
        let sd = self.sd();
        let t = if sd == 0.0 {
            if m == 0.0 {
                0.0
            } else {
                m.signum() * f64::INFINITY
            }
        } else {
            m / (sd / (n as f64).sqrt())
        };
        TTest {
            t,
            df,
            p: t_two_sided(t, df),
        }
    }

    /// Fisher's randomization test (the paired permutation test): under the null hypothesis
    /// each difference's sign is as likely flipped, so `permutations` random sign patterns
    /// (each sign a fair coin from [`Rng`]) are drawn and `b` counts those whose
    /// `|sum(s_i d_i)|` is at least the observed `|sum(d_i)|` (within the rounding tolerance of
    /// the sums); `p = (b + 1) / (permutations + 1)`, which is never 0 and is a valid p-value
    /// for any number of draws. NaN below two pairs. The same `rng` state gives the same
    /// p-value. Cost: `O(permutations * n)` additions, one random bit a pair.
    pub fn randomization(&self, permutations: u64, rng: &mut Rng) -> f64 {
        if self.d.len() < 2 {
            return f64::NAN;
        }
        let observed = self.d.iter().sum::<f64>().abs();
        let mut b = 0u64;
        for _ in 0..permutations {
            // Four partial sums (no chain of dependent additions); a sign flipped by its bit.
            let mut s = [0.0f64; 4];
            for chunk in self.d.chunks(64) {
                let bits = rng.next_u64();
                for (i, &x) in chunk.iter().enumerate() {
                    s[i & 3] += f64::from_bits(x.to_bits() ^ ((bits >> i & 1) << 63));
                }
            }
            if ((s[0] + s[1]) + (s[2] + s[3])).abs() >= observed - self.tolerance {
                b += 1;
            }
        }
        (b + 1) as f64 / (permutations + 1) as f64
    }

    /// The exact randomization p-value: the share of all `2^n` sign patterns (the observed one
    /// included) whose `|sum(s_i d_i)|` is at least the observed `|sum(d_i)|`, as
    /// [`Paired::randomization`] counts them. The reference the random version estimates;
    /// `None` above 24 pairs (16 million patterns), NaN below two. Cost: `O(2^n * n)`.
    pub fn exact_randomization(&self) -> Option<f64> {
        let n = self.d.len();
        if n > 24 {
            return None;
        }
        if n < 2 {
            return Some(f64::NAN);
        }
        let observed = self.d.iter().sum::<f64>().abs();
        let mut b = 0u64;
        for pattern in 0u64..(1 << n) {
            let s: f64 = (self.d.iter().enumerate())
                .map(|(i, &x)| if pattern >> i & 1 == 1 { -x } else { x })
                .sum();
            if s.abs() >= observed - self.tolerance {
                b += 1;
            }
        }
        Some(b as f64 / (1u64 << n) as f64)
    }

    /// The percentile bootstrap: `resamples` samples of `n` pairs drawn with replacement (from
    /// [`Rng`]), the mean difference of each; the interval is their `(1 - level) / 2` and
    /// `(1 + level) / 2` quantiles, interpolated linearly between order statistics as
    /// `numpy.quantile`'s default does (`level` 0.95: a 95% interval); the p-value is
    /// [`Bootstrap::p`]. NaN below two pairs or without resamples. Cost: `O(resamples * n)`
    /// draws and additions, and `O(resamples log resamples)` to sort the means; memory: 8 bytes
    /// a resample.
    pub fn bootstrap(&self, resamples: u64, level: f64, rng: &mut Rng) -> Bootstrap {
        let n = self.d.len();
        if n < 2 || resamples == 0 {
            return Bootstrap {
                low: f64::NAN,
                high: f64::NAN,
                p: f64::NAN,
            };
        }
        let mut means: Vec<f64> = (0..resamples)
            .map(|_| {
                let mut s = [0.0f64; 4];
                for i in 0..n {
                    s[i & 3] += self.d[rng.below(n as u64) as usize];
                }
                ((s[0] + s[1]) + (s[2] + s[3])) / n as f64
            })
            .collect();
        let m = self.mean();
        // The shifted means m*_j - mean(d) against |mean(d)|, with the sums' tolerance.
        let tol = self.tolerance / n as f64;
        let b = (means.iter())
            .filter(|&&x| (x - m).abs() >= m.abs() - tol)
            .count();
        means.sort_by(f64::total_cmp);
        Bootstrap {
            low: quantile(&means, (1.0 - level) / 2.0),
            high: quantile(&means, (1.0 + level) / 2.0),
            p: (b + 1) as f64 / (resamples + 1) as f64,
        }
    }

    /// The effect size `mean(d) / sd(d)` (Cohen's d of paired samples, often `d_z`): 0 when
    /// every difference is zero, infinite when they are equal and non-zero, NaN below two pairs.
    /// Cost: `O(n)`.
    pub fn effect(&self) -> f64 {
        if self.d.len() < 2 {
            return f64::NAN;
        }
        let (m, sd) = (self.mean(), self.sd());
        if sd == 0.0 {
            if m == 0.0 {
                0.0
            } else {
                m.signum() * f64::INFINITY
            }
        } else {
            m / sd
        }
    }

    /// Goals where B scored higher (`d_i > 0`), equal (`d_i = 0`), lower (`d_i < 0`).
    pub fn wins_ties_losses(&self) -> (u64, u64, u64) {
        let mut w = (0, 0, 0);
        for &x in &self.d {
            if x > 0.0 {
                w.0 += 1;
            } else if x < 0.0 {
                w.2 += 1;
            } else {
                w.1 += 1;
            }
        }
        w
    }
}

/// The mean, its sum compensated (NaN when empty).
fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    compensated_sum(x.iter().copied()) / x.len() as f64
}

/// Neumaier's compensated sum: the rounding error of each addition carried, so the result is
/// within about one ulp of the exact sum unless the terms cancel almost entirely.
fn compensated_sum(x: impl Iterator<Item = f64>) -> f64 {
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for v in x {
        let t = s + v;
        c += if s.abs() >= v.abs() {
            (s - t) + v
        } else {
            (v - t) + s
        };
        s = t;
    }
    s + c
}

/// The `q` quantile of sorted values, linear between order statistics (`h = (len - 1) q`):
/// numpy's default (method 7 of Hyndman and Fan).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() || !(0.0..=1.0).contains(&q) {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    let frac = h - lo as f64;
    sorted[lo] + frac * (sorted[hi] - sorted[lo])
}

/// A correction for multiple comparisons.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Correction {
    /// Holm's step-down method (controls the family-wise error rate; never less powerful than
    /// Bonferroni).
    Holm,
    /// Bonferroni: each p-value times the number of comparisons.
    Bonferroni,
    /// Benjamini and Hochberg's step-up method (controls the false discovery rate).
    Bh,
    /// No correction.
    None,
}

/// The adjusted p-values of a family of comparisons, in the order given, as statsmodels'
/// `multipletests(p, method=...)[1]` gives them (`holm`, `bonferroni`, `fdr_bh`): with `m`
/// p-values sorted ascending, `p_(1) <= ... <= p_(m)`,
///
/// - Bonferroni: `min(1, m p_i)`;
/// - Holm: `max_{j <= i} min(1, (m - j + 1) p_(j))`;
/// - Benjamini-Hochberg: `min_{j >= i} min(1, m p_(j) / j)`.
///
/// NaN p-values (comparisons over fewer than two goals) stay NaN and are not counted in `m`.
/// Cost: `O(m log m)`.
pub fn adjust(p: &[f64], method: Correction) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p.len()).filter(|&i| !p[i].is_nan()).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let m = order.len() as f64;
    let mut out = vec![f64::NAN; p.len()];
    match method {
        Correction::None => {
            for &i in &order {
                out[i] = p[i];
            }
        }
        Correction::Bonferroni => {
            for &i in &order {
                out[i] = (m * p[i]).min(1.0);
            }
        }
        Correction::Holm => {
            let mut running: f64 = 0.0;
            for (j, &i) in order.iter().enumerate() {
                running = running.max(((m - j as f64) * p[i]).min(1.0));
                out[i] = running;
            }
        }
        Correction::Bh => {
            let mut running: f64 = 1.0;
            for (j, &i) in order.iter().enumerate().rev() {
                running = running.min((m * p[i] / (j + 1) as f64).min(1.0));
                out[i] = running;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
