//! The pooled (micro) precision-recall curve of METRICS.md §5, estimated in bounded memory.
//!
//! All (score, relevant?) pairs of all goals form one ranking by score. Keeping them all would grow
//! with the file, so scores are binned: each score's order-preserving 64-bit key (IEEE bits with
//! the sign handled) is cut to its top `bits` bits, a bin counts predicted and relevant items, and
//! the curve is read from the top bin down with each bin as one threshold (a tie group). No score
//! range is needed in advance, merging is adding counts (exact, order-independent), and the bin
//! edges are reported so the estimate is honest. With distinct scores in distinct bins the pooled
//! AP equals the exact AP of the pooled ranking under [`crate::Ties::Group`].

use hashbrown::HashMap;

/// Order-preserving map from a finite `f64` to `u64` (larger score, larger key).
#[inline]
pub fn score_key(score: f64) -> u64 {
    // -0.0 and 0.0 are the same score.
    let b = (score + 0.0).to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

fn key_to_score(key: u64) -> f64 {
    if key >> 63 == 1 {
        f64::from_bits(key & !(1 << 63))
    } else {
        f64::from_bits(!key)
    }
}

/// One point of the pooled curve: the bin's lowest score edge and the cumulative counts above it.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct CurvePoint {
    /// Every item with a score at or above this edge is counted as predicted at this point.
    pub score_edge: f64,
    /// Cumulative true positives.
    pub tp: u64,
    /// Cumulative predicted positives.
    pub predicted: u64,
    /// `tp / predicted`.
    pub precision: f64,
    /// `tp / total relevant`.
    pub recall: f64,
}

/// Binned pooled PR curve. `bits` (1..=64) sets the resolution: 64 bits is one bin per distinct
/// score; 16 bits gives bins of about 1/16 relative width (sign, exponent and 4 mantissa bits).
#[derive(Clone, Debug)]
pub struct PooledCurve {
    bits: u32,
    bins: HashMap<u64, (u64, u64)>,
    total_relevant: u64,
}

impl PooledCurve {
    /// An empty curve with `bits` of key resolution.
    pub fn new(bits: u32) -> Self {
        assert!((1..=64).contains(&bits), "bits must be in 1..=64");
        PooledCurve {
            bits,
            bins: HashMap::new(),
            total_relevant: 0,
        }
    }

    /// Adds relevant items that were never predicted (they lower recall, not precision).
    pub fn add_unretrieved_relevant(&mut self, count: u64) {
        self.total_relevant += count;
    }

    /// Adds one predicted item.
    #[inline]
    pub fn add(&mut self, score: f64, relevant: bool) {
        let bin = score_key(score) >> (64 - self.bits);
        let e = self.bins.entry(bin).or_insert((0, 0));
        e.0 += 1;
        e.1 += relevant as u64;
        self.total_relevant += relevant as u64;
    }

    /// Adds the counts of another curve with the same resolution.
    pub fn merge(&mut self, other: &PooledCurve) {
        assert_eq!(self.bits, other.bits, "curves of different resolution");
        for (&k, &(p, r)) in &other.bins {
            let e = self.bins.entry(k).or_insert((0, 0));
            e.0 += p;
            e.1 += r;
        }
        self.total_relevant += other.total_relevant;
    }

    /// The curve from the highest bin down.
    pub fn points(&self) -> Vec<CurvePoint> {
        let mut keys: Vec<_> = self.bins.iter().map(|(&k, &c)| (k, c)).collect();
        keys.sort_unstable_by_key(|k| std::cmp::Reverse(k.0));
        let (mut tp, mut pp) = (0u64, 0u64);
        keys.into_iter()
            .map(|(k, (p, r))| {
                tp += r;
                pp += p;
                let edge_key = if self.bits == 64 {
                    k
                } else {
                    k << (64 - self.bits)
                };
                CurvePoint {
                    score_edge: key_to_score(edge_key),
                    tp,
                    predicted: pp,
                    precision: tp as f64 / pp as f64,
                    recall: if self.total_relevant == 0 {
                        0.0
                    } else {
                        tp as f64 / self.total_relevant as f64
                    },
                }
            })
            .collect()
    }

    /// Pooled AP: `sum over bins of (recall gained) * (precision at the bin's end)`.
    pub fn average_precision(&self) -> f64 {
        let mut prev_tp = 0;
        let mut ap = 0.0;
        for p in self.points() {
            ap += (p.tp - prev_tp) as f64 * p.precision;
            prev_tp = p.tp;
        }
        if self.total_relevant == 0 {
            0.0
        } else {
            ap / self.total_relevant as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_preserve_order() {
        let xs = [-1e300, -2.0, -0.5, 0.0, 1e-300, 0.04, 0.5, 0.95, 1.0, 7e10];
        for w in xs.windows(2) {
            assert!(score_key(w[0]) <= score_key(w[1]), "{w:?}");
            assert_eq!(key_to_score(score_key(w[0])).to_bits(), w[0].to_bits());
        }
    }
}
