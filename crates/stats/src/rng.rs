//! The seeded generator of the randomization test and the bootstrap: xoshiro256** (Blackman and
//! Vigna), its state filled by SplitMix64. Written out here rather than taken from `rand`, whose
//! `SmallRng` may change algorithm between versions: a seed gives the same p-values and
//! intervals in every build.

/// xoshiro256**: 256 bits of state, period 2^256 - 1, about 1 ns a draw.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

/// SplitMix64's step: the next state and its output.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    /// The generator of `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng::stream(seed, &[])
    }

    /// An independent stream of `seed`, named by `keys` (a comparison's numbers, say): the same
    /// seed and keys give the same draws, whatever other streams are drawn from.
    pub fn stream(seed: u64, keys: &[u64]) -> Rng {
        let mut state = seed;
        for &k in keys {
            // Each key moves the SplitMix state to a point that depends on all keys so far.
            state = splitmix64(&mut state) ^ k.wrapping_mul(0xd605_bbb5_8c8a_bbc1);
        }
        let mut s = [0u64; 4];
        for w in &mut s {
            *w = splitmix64(&mut state);
        }
        Rng { s }
    }

    /// 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `0..n` (`n > 0`), without bias: Lemire's multiply and reject, the
    /// division that sets the rejection threshold done only in the rare case (`2^-64 n` of the
    /// draws) where it can matter.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        (m >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xoshiro_reference_output() {
        // The reference implementation (xoshiro256starstar.c) from the state {1, 2, 3, 4}.
        let mut r = Rng { s: [1, 2, 3, 4] };
        let first: Vec<u64> = (0..4).map(|_| r.next_u64()).collect();
        assert_eq!(first, [11520, 0, 1509978240, 1215971899390074240]);
    }

    #[test]
    fn splitmix_reference_output() {
        // SplitMix64 from 1234567 (the reference splitmix64.c's first outputs).
        let mut s = 1234567u64;
        assert_eq!(splitmix64(&mut s), 6457827717110365317);
        assert_eq!(splitmix64(&mut s), 3203168211198807973);
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut r = Rng::new(7);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            counts[r.below(3) as usize] += 1;
        }
        // Each count is Binomial(30000, 1/3): mean 10000, sd 82.
        assert!(
            counts.iter().all(|&c| (9_600..10_400).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn streams_differ_and_repeat() {
        let a: Vec<u64> = (0..3)
            .map({
                let mut r = Rng::stream(1, &[0, 1]);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..3)
            .map({
                let mut r = Rng::stream(1, &[0, 1]);
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..3)
            .map({
                let mut r = Rng::stream(1, &[1, 0]);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
