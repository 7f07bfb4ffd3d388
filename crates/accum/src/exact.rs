//! Exact, order-independent summation of `f64` values.
//!
//! A per-goal measure is an `f64`; a summary adds millions of them, and two shards summed apart and
//! then merged must give *the same bits* as one pass. Floating-point addition is not associative, so
//! [`ExactSum`] keeps the sum as a wide fixed-point integer (a "superaccumulator" in the sense of
//! Neal's xsum): every finite `f64` is an integer multiple of 2^-1074, so the sum is an integer in
//! those units, held in 32-bit digits stored in `i64` limbs. Adding a value touches three limbs;
//! merging two sums adds limb by limb; [`ExactSum::value`] rounds the exact total to the nearest
//! `f64` (ties to even) once. The result is therefore independent of the order of additions and of
//! how the values were split into shards.
//!
//! Cost: about a dozen integer operations per [`ExactSum::add`]; 568 bytes per accumulator.

/// Number of 32-bit digits: values span 2^-1074 .. 2^1024 (2098 bits), plus 3 digits of headroom so
/// that carries out of the largest value never fall off the top.
const LIMBS: usize = 71;
/// Limbs may absorb this many additions (each adds < 2^32 in magnitude) before a carry pass.
const ADDS_BEFORE_NORMALISE: u32 = 1 << 30;

/// An exact sum of finite `f64` values. See the module documentation.
#[derive(Clone, Debug)]
pub struct ExactSum {
    limbs: [i64; LIMBS],
    pending: u32,
}

impl Default for ExactSum {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for ExactSum {
    fn eq(&self, other: &Self) -> bool {
        let (mut a, mut b) = (self.clone(), other.clone());
        a.normalise();
        b.normalise();
        a.limbs == b.limbs
    }
}

impl ExactSum {
    /// An empty sum (zero).
    pub const fn new() -> Self {
        ExactSum {
            limbs: [0; LIMBS],
            pending: 0,
        }
    }

    /// Adds `x` exactly. Non-finite values are a caller bug: they are ignored in release builds.
    #[inline]
    pub fn add(&mut self, x: f64) {
        debug_assert!(x.is_finite(), "ExactSum::add({x})");
        if !x.is_finite() || x == 0.0 {
            return;
        }
        let bits = x.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as u32;
        let frac = bits & ((1u64 << 52) - 1);
        // x = mantissa * 2^(pos - 1074)
        let (mantissa, pos) = if exp == 0 {
            (frac, 0u32)
        } else {
            (frac | (1u64 << 52), exp - 1)
        };
        let limb = (pos / 32) as usize;
        let wide = (mantissa as u128) << (pos % 32);
        let parts = [
            (wide & 0xffff_ffff) as i64,
            ((wide >> 32) & 0xffff_ffff) as i64,
            (wide >> 64) as i64,
        ];
        if bits >> 63 == 0 {
            for (i, p) in parts.into_iter().enumerate() {
                self.limbs[limb + i] += p;
            }
        } else {
            for (i, p) in parts.into_iter().enumerate() {
                self.limbs[limb + i] -= p;
            }
        }
        self.pending += 1;
        if self.pending >= ADDS_BEFORE_NORMALISE {
            self.normalise();
        }
    }

    /// Adds another exact sum (the merge of two shards).
    pub fn merge(&mut self, other: &ExactSum) {
        self.combine(other, 1);
    }

    /// Subtracts another exact sum (exact: the result is the sum of the values added to `self`
    /// and not to `other`, when `other`'s values are among them).
    pub fn retract(&mut self, other: &ExactSum) {
        self.combine(other, -1);
    }

    /// `self + sign * other`, limb by limb, both normalised first (each limb then absorbs one
    /// more term without overflow).
    fn combine(&mut self, other: &ExactSum, sign: i64) {
        let mut o = other.clone();
        o.normalise();
        self.normalise();
        for (a, b) in self.limbs.iter_mut().zip(o.limbs.iter()) {
            *a += sign * *b;
        }
        self.pending = 2;
        self.normalise();
    }

    /// The sum as 32-bit digits in units of 2^-1074, least significant first, normalised: every
    /// digit but the last is in `0..2^32`, the last carries the sign. Equal sums give equal
    /// digits, whatever the order of their additions ([`ExactSum::from_digits`] is the inverse).
    pub fn digits(&self) -> [i64; ExactSum::DIGITS] {
        let mut s = self.clone();
        s.normalise();
        s.limbs
    }

    /// The sum whose [`ExactSum::digits`] are `digits`; `None` when they are not normalised.
    pub fn from_digits(digits: [i64; ExactSum::DIGITS]) -> Option<ExactSum> {
        let top = LIMBS - 1;
        let in_range = digits[..top].iter().all(|&d| (0..1 << 32).contains(&d))
            && (-(1i64 << 32)..1 << 32).contains(&digits[top]);
        in_range.then_some(ExactSum {
            limbs: digits,
            pending: 0,
        })
    }

    /// Number of digits in [`ExactSum::digits`].
    pub const DIGITS: usize = LIMBS;

    /// Propagates carries so that every limb but the top one is in `0..2^32`.
    fn normalise(&mut self) {
        let mut carry = 0i64;
        for limb in self.limbs.iter_mut() {
            let v = *limb + carry;
            carry = v >> 32;
            *limb = v - (carry << 32);
        }
        // The top limb keeps the sign (and any carry, which headroom makes impossible for sums of
        // fewer than 2^60 finite values).
        self.limbs[LIMBS - 1] += carry << 32;
        self.pending = 0;
    }

    /// The exact total, rounded once to the nearest `f64` (ties to even).
    pub fn value(&self) -> f64 {
        let mut s = self.clone();
        s.normalise();
        let negative = s.limbs[LIMBS - 1] < 0;
        if negative {
            for limb in s.limbs.iter_mut() {
                *limb = -*limb;
            }
            s.normalise();
        }
        let digits: Vec<u64> = s.limbs.iter().map(|&l| l as u64).collect();
        let magnitude = round_to_f64(&digits);
        if negative {
            -magnitude
        } else {
            magnitude
        }
    }
}

/// Rounds the non-negative integer `sum(digits[i] * 2^(32 i))`, in units of 2^-1074, to an f64.
fn round_to_f64(digits: &[u64]) -> f64 {
    let Some(top) = digits.iter().rposition(|&d| d != 0) else {
        return 0.0;
    };
    let bit_len = 32 * top as u32 + (64 - digits[top].leading_zeros());
    let bit = |i: u32| -> u64 { (digits[(i / 32) as usize] >> (i % 32)) & 1 };
    if bit_len <= 53 {
        let mut v = 0u64;
        for i in (0..bit_len).rev() {
            v = (v << 1) | bit(i);
        }
        return v as f64 * pow2(-1074);
    }
    let shift = bit_len - 53;
    let mut mantissa = 0u64;
    for i in (shift..bit_len).rev() {
        mantissa = (mantissa << 1) | bit(i);
    }
    let half = bit(shift - 1) == 1;
    let sticky = (0..shift - 1).any(|i| bit(i) == 1);
    if half && (sticky || mantissa & 1 == 1) {
        mantissa += 1;
    }
    mantissa as f64 * pow2(shift as i32 - 1074)
}

/// 2^e as an f64, exact for -1074 <= e <= 1023 (subnormal powers included).
fn pow2(e: i32) -> f64 {
    if e >= -1022 {
        if e > 1023 {
            return f64::INFINITY;
        }
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(xs: &[f64]) -> f64 {
        let mut s = ExactSum::new();
        for &x in xs {
            s.add(x);
        }
        s.value()
    }

    #[test]
    fn small_integers_and_fractions() {
        assert_eq!(sum(&[]), 0.0);
        assert_eq!(sum(&[1.0, 2.0, 3.0]), 6.0);
        assert_eq!(sum(&[0.5, 0.25, -0.75]), 0.0);
        assert_eq!(sum(&[-1.5, -2.25]), -3.75);
        // 0.1 + 0.2 exactly is 0.3000000000000000166533453693773481063544750213623046875, whose
        // nearest double is 0.30000000000000004 (the naive sum happens to agree here).
        assert_eq!(sum(&[0.1, 0.2]), 0.30000000000000004);
    }

    #[test]
    fn cancellation_is_exact() {
        // Naive left-to-right summation loses the 1.0 entirely.
        assert_eq!(sum(&[1e100, 1.0, -1e100]), 1.0);
        assert_eq!(sum(&[1e308, 1e308, -1e308, -1e308, 5e-324]), 5e-324);
        assert_eq!(
            sum(&[f64::MIN_POSITIVE, -f64::MIN_POSITIVE / 2.0]),
            f64::MIN_POSITIVE / 2.0
        );
    }

    #[test]
    fn rounding_is_to_nearest_even() {
        let ulp = f64::EPSILON; // ulp of 1.0
                                // 1 + ulp/2 is a tie: rounds to even (1.0); 1 + ulp/2 + tiny rounds up.
        assert_eq!(sum(&[1.0, ulp / 2.0]), 1.0);
        assert_eq!(sum(&[1.0, ulp / 2.0, 1e-300]), 1.0 + ulp);
        // 1 + ulp + ulp/2 is a tie between 1+ulp (odd) and 1+2ulp (even).
        assert_eq!(sum(&[1.0, ulp, ulp / 2.0]), 1.0 + 2.0 * ulp);
    }

    #[test]
    fn order_and_sharding_do_not_matter() {
        let xs: Vec<f64> = (1..2000)
            .map(|i| 1.0 / i as f64 * if i % 3 == 0 { -1.0 } else { 1.0 })
            .collect();
        let forward = sum(&xs);
        let mut rev = xs.clone();
        rev.reverse();
        assert_eq!(forward.to_bits(), sum(&rev).to_bits());
        let (mut a, mut b) = (ExactSum::new(), ExactSum::new());
        for (i, &x) in xs.iter().enumerate() {
            if i % 7 < 3 {
                a.add(x)
            } else {
                b.add(x)
            }
        }
        b.merge(&a);
        assert_eq!(forward.to_bits(), b.value().to_bits());
        // Exact rational check on values k/2^20 where f64 arithmetic is exact.
        let ys: Vec<f64> = (0..5000)
            .map(|i| ((i * 7919) % 1_048_576) as f64 / 1_048_576.0)
            .collect();
        let exact: i64 = (0..5000).map(|i| (i * 7919) % 1_048_576).sum();
        assert_eq!(sum(&ys), exact as f64 / 1_048_576.0);
    }

    #[test]
    fn retract_undoes_a_merge_and_digits_round_trip() {
        let (mut a, mut b) = (ExactSum::new(), ExactSum::new());
        for i in 1..500 {
            a.add(1.0 / i as f64);
            b.add(-3.0 / (i * i) as f64);
        }
        let before = a.clone();
        a.merge(&b);
        assert_ne!(a.value(), before.value());
        a.retract(&b);
        assert_eq!(a, before);
        assert_eq!(a.value().to_bits(), before.value().to_bits());
        // Digits: equal sums, equal digits; the inverse rebuilds the same value.
        assert_eq!(a.digits(), before.digits());
        let back = ExactSum::from_digits(b.digits()).unwrap();
        assert_eq!(back.value().to_bits(), b.value().to_bits());
        // Not normalised: refused.
        let mut bad = b.digits();
        bad[3] = 1 << 32;
        assert!(ExactSum::from_digits(bad).is_none());
        // A negative total keeps its sign in the top digit.
        assert!(b.digits()[ExactSum::DIGITS - 1] < 0);
    }
}
