//! The pooled (micro) precision-recall curve of METRICS.md §5.
//!
//! All (score, relevant?) pairs of all goals form one ranking by score. A [`PooledCurve`] counts
//! them in bins keyed by an order-preserving 64-bit key of the score (IEEE bits with the sign
//! handled, [`score_key`]) cut to its top `bits` bits; each bin counts its items and relevant
//! items, and the curve is read from the top bin down, each bin one threshold (one tie group).
//! No score range is needed in advance, and merging is adding counts (exact and order-free).
//!
//! Three ways to bound it:
//!
//! - **exact, held** ([`PooledCurve::exact`]): one bin per distinct score, in memory;
//! - **exact, spilled** ([`PooledCurve::exact_spilling`]): one bin per distinct score; past
//!   `max_bins` bins the bins are handed, sorted, to a [`SpillRuns`] (the caller writes them to
//!   disk and merges the runs at the end: [`merge_runs`]). This crate does no I/O;
//! - **sketch** ([`PooledCurve::sketch`]): at most `max_bins` bins. Past that, the key resolution
//!   drops one bit at a time (neighbouring bins merge) until they fit. The resolution reached is
//!   the finest at which the whole input fits, whatever the order of adding and merging, so the
//!   counts do not depend on how the input was split. Each bin keeps its lowest key, so every
//!   threshold reported is a score of the input and every row is a row of the exact curve
//!   ([`equal_count`]).
//!
//! Rows and their statistics (pooled AP as scikit-learn's `average_precision_score`, best F1)
//! come from any descending stream of `(threshold, items, relevant)` ([`CurveRows`]).

mod bins;

use bins::BinTable;
use std::sync::Arc;

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

/// The score of a key of [`score_key`].
pub fn key_to_score(key: u64) -> f64 {
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

/// A bin's counts: items, relevant items, and the lowest key among them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Bin {
    /// Items in the bin.
    pub n: u64,
    /// Relevant items in the bin.
    pub rel: u64,
    /// The lowest [`score_key`] of the bin's items.
    pub min_key: u64,
}

impl Bin {
    fn absorb(&mut self, o: &Bin) {
        self.n += o.n;
        self.rel += o.rel;
        self.min_key = self.min_key.min(o.min_key);
    }
}

/// A run of bins handed over by an exact curve that outgrew its memory: `(key, items, relevant)`
/// per distinct score, keys strictly descending.
pub type Run = [(u64, u64, u64)];

/// Where an exact [`PooledCurve`] puts its bins when they outgrow `max_bins`: the caller keeps
/// each run (on disk, typically) and merges them at the end ([`merge_runs`]). A failure is the
/// receiver's to record and report: the curve goes on counting.
pub trait SpillRuns: Send + Sync + std::fmt::Debug {
    /// Keeps one sorted run.
    fn spill(&self, run: &Run);
}

/// The pooled curve's bins. See the module documentation.
#[derive(Clone)]
pub struct PooledCurve {
    bits: u32,
    max_bins: usize,
    spill: Option<Arc<dyn SpillRuns>>,
    bins: BinTable,
    total_relevant: u64,
    spilled: bool,
}

impl std::fmt::Debug for PooledCurve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PooledCurve")
            .field("bits", &self.bits)
            .field("max_bins", &self.max_bins)
            .field("bins", &self.bins.len())
            .field("total_relevant", &self.total_relevant)
            .field("spilled", &self.spilled)
            .finish()
    }
}

impl PartialEq for PooledCurve {
    fn eq(&self, o: &Self) -> bool {
        self.bits == o.bits
            && self.bins == o.bins
            && self.total_relevant == o.total_relevant
            && !self.spilled
            && !o.spilled
    }
}

/// How a [`crate::Plan`] keeps the pooled curve of the goals it evaluates.
#[derive(Clone, Debug)]
pub enum PooledSpec {
    /// [`PooledCurve::exact`], or [`PooledCurve::exact_spilling`] with a receiver.
    Exact {
        /// Bins held before a run is spilled.
        max_bins: usize,
        /// The runs' receiver (`None`: everything held).
        spill: Option<Arc<dyn SpillRuns>>,
    },
    /// [`PooledCurve::sketch`].
    Sketch {
        /// Bins held at most.
        max_bins: usize,
    },
}

impl PooledSpec {
    /// An empty curve of this kind.
    pub fn curve(&self) -> PooledCurve {
        match self {
            PooledSpec::Exact {
                max_bins,
                spill: Some(s),
            } => PooledCurve::exact_spilling(*max_bins, s.clone()),
            PooledSpec::Exact { spill: None, .. } => PooledCurve::exact(),
            PooledSpec::Sketch { max_bins } => PooledCurve::sketch(*max_bins),
        }
    }
}

impl PooledCurve {
    /// An empty curve of fixed resolution: `bits` (1..=64) of key; 64 is one bin per distinct
    /// score, 16 gives bins of about 1/16 relative width (sign, exponent and 4 mantissa bits).
    pub fn new(bits: u32) -> Self {
        assert!((1..=64).contains(&bits), "bits must be in 1..=64");
        PooledCurve {
            bits,
            max_bins: usize::MAX,
            spill: None,
            bins: BinTable::default(),
            total_relevant: 0,
            spilled: false,
        }
    }

    /// The exact curve, held in memory: a bin per distinct score.
    pub fn exact() -> Self {
        Self::new(64)
    }

    /// The exact curve, whose bins go to `spill` as a sorted run whenever they number more than
    /// `max_bins`.
    pub fn exact_spilling(max_bins: usize, spill: Arc<dyn SpillRuns>) -> Self {
        PooledCurve {
            max_bins: max_bins.max(1),
            spill: Some(spill),
            ..Self::new(64)
        }
    }

    /// The most bins ([`exact_spilling`](Self::exact_spilling)'s `max_bins`) an exact curve may
    /// hold so that they and the run of 24 bytes a bin they become take at most `bytes`: its table
    /// is a power of two of 32-byte slots at most 3/4 full (while it doubles, the old table and
    /// the new one take less than that). A sketch's table takes at most 86 bytes a bin (4 MiB
    /// for 65,536 bins).
    pub fn bins_within(bytes: usize) -> usize {
        bins::bins_within(bytes, std::mem::size_of::<(u64, u64, u64)>())
    }

    /// A curve of at most `max_bins` (at least 2) bins, exact while the distinct scores fit.
    pub fn sketch(max_bins: usize) -> Self {
        PooledCurve {
            max_bins: max_bins.max(2),
            ..Self::new(64)
        }
    }

    /// The key resolution in bits (64: a bin per distinct score).
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Bins held.
    pub fn len(&self) -> usize {
        self.bins.len()
    }

    /// Whether no bin is held.
    pub fn is_empty(&self) -> bool {
        self.bins.len() == 0
    }

    /// Whether runs went to the spill receiver: the held bins are then only part of the curve.
    pub fn spilled(&self) -> bool {
        self.spilled
    }

    /// Relevant items counted, predicted or not.
    pub fn total_relevant(&self) -> u64 {
        self.total_relevant
    }

    /// Adds relevant items that were never predicted (they lower recall, not precision).
    pub fn add_unretrieved_relevant(&mut self, count: u64) {
        self.total_relevant += count;
    }

    /// Adds one predicted item.
    #[inline]
    pub fn add(&mut self, score: f64, relevant: bool) {
        self.add_key(score_key(score), relevant)
    }

    /// Adds predicted items by their [`score_key`]s; returns how many are relevant. As
    /// [`add_key`](Self::add_key) one by one, faster: the items go in stretches of at most as
    /// many items as there are new bins the table takes without growing, nor more than would take
    /// it one past its limit, so that no item checks either (a table at its limit takes one item
    /// a stretch); and each item's bin is asked for a few items ahead, so that the cache misses
    /// of a large curve overlap.
    pub fn add_keys(&mut self, items: &[(u64, bool)]) -> u64 {
        let mut found = 0;
        let mut at = 0;
        while at < items.len() {
            // Again each stretch: a sketch past its limit coarsens its keys.
            let shift = 64 - self.bits;
            let limit = self
                .max_bins
                .saturating_add(1)
                .saturating_sub(self.bins.len());
            let n = (items.len() - at).min(self.bins.room()).min(limit.max(1));
            found += self.bins.count(items, at, at + n, shift);
            at += n;
            if self.bins.len() > self.max_bins {
                self.overflow();
            }
        }
        self.total_relevant += found;
        found
    }

    #[inline(always)]
    fn bin_of(&self, key: u64) -> u64 {
        key >> (64 - self.bits)
    }

    /// Adds one predicted item by its [`score_key`].
    #[inline]
    pub fn add_key(&mut self, key: u64, relevant: bool) {
        let e = self.bins.bin(self.bin_of(key));
        e.n += 1;
        e.rel += relevant as u64;
        e.min_key = e.min_key.min(key);
        self.total_relevant += relevant as u64;
        if self.bins.len() > self.max_bins {
            self.overflow();
        }
    }

    fn overflow(&mut self) {
        match &self.spill {
            Some(s) => {
                let mut run: Vec<(u64, u64, u64)> =
                    self.bins.iter().map(|(k, b)| (k, b.n, b.rel)).collect();
                run.sort_unstable_by_key(|x| std::cmp::Reverse(x.0));
                s.spill(&run);
                self.bins.clear();
                self.spilled = true;
            }
            None => {
                while self.bins.len() > self.max_bins {
                    self.coarsen_to(self.bits - 1);
                }
            }
        }
    }

    fn coarsen_to(&mut self, bits: u32) {
        if bits >= self.bits {
            return;
        }
        let shift = self.bits - bits;
        let mut next = BinTable::with_capacity(self.bins.len() / 2 + 1);
        for (k, b) in self.bins.iter() {
            next.bin(k >> shift).absorb(b);
        }
        self.bins = next;
        self.bits = bits;
    }

    /// Adds the counts of another curve. Curves of different resolution meet at the coarser.
    pub fn merge(&mut self, other: &PooledCurve) {
        let fits = self.spill.is_none() || other.bins.len() <= self.max_bins;
        if self.bins.len() == 0 && other.bits <= self.bits && fits {
            // An empty curve (an evaluation's summary before its workers' are added) takes a
            // copy of the other's table: one copy of its slots instead of a lookup per bin into a
            // table that doubles a dozen times on the way. Not for a spilling curve that could
            // not hold them: its table stays within its own budget. The copy keeps the other's
            // hash seed, at the other's size: a table read into one of the same seed and size
            // puts each key where it was (the long runs of `bins.rs` need half the size).
            self.bins = other.bins.clone();
            self.bits = other.bits;
            self.total_relevant += other.total_relevant;
            self.spilled |= other.spilled;
            if self.bins.len() > self.max_bins {
                self.overflow();
            }
            return;
        }
        if other.bits < self.bits {
            self.coarsen_to(other.bits);
        }
        for (k, b) in other.bins.iter() {
            // `self` may coarsen on the way: the shift is taken afresh.
            let shift = other.bits - self.bits;
            self.bins.bin(k >> shift).absorb(b);
            if self.bins.len() > self.max_bins {
                self.overflow();
            }
        }
        self.total_relevant += other.total_relevant;
        self.spilled |= other.spilled;
    }

    /// The held bins, highest key first: `(bin key at the curve's resolution, counts)`.
    pub fn sorted_bins(&self) -> Vec<(u64, Bin)> {
        let mut v: Vec<(u64, Bin)> = self.bins.iter().map(|(k, &b)| (k, b)).collect();
        v.sort_unstable_by_key(|x| std::cmp::Reverse(x.0));
        v
    }

    /// The held bins as a run of `(lowest key, items, relevant)`, highest first: for a curve of
    /// 64 bits, the exact curve's groups (to merge with spilled runs, [`merge_runs`]).
    pub fn run(&self) -> Vec<(u64, u64, u64)> {
        (self.sorted_bins().into_iter())
            .map(|(_, b)| (b.min_key, b.n, b.rel))
            .collect()
    }

    /// The curve from the highest bin down.
    pub fn points(&self) -> Vec<CurvePoint> {
        let (mut tp, mut pp) = (0u64, 0u64);
        (self.sorted_bins().into_iter())
            .map(|(k, b)| {
                tp += b.rel;
                pp += b.n;
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
        let mut rows = CurveRows::new(self.total_relevant);
        for (_, b) in self.sorted_bins() {
            rows.next(b.min_key, b.n, b.rel);
        }
        rows.stats().average_precision
    }
}

/// One row of a pooled curve: the items scored at or above `threshold`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct CurveRow {
    /// The threshold: a score of the input (the lowest of its group).
    pub threshold: f64,
    /// Relevant items scored `>= threshold`.
    pub tp: u64,
    /// Non-relevant (or unjudged) items scored `>= threshold`.
    pub fp: u64,
    /// `tp / (tp + fp)`.
    pub precision: f64,
    /// `tp / R` over every relevant item, predicted or not (0 when there is none).
    pub recall: f64,
    /// The harmonic mean of precision and recall (0 when both are 0).
    pub f1: f64,
}

/// What a whole pooled curve gives besides its rows.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct CurveStats {
    /// Rows.
    pub rows: u64,
    /// Items.
    pub items: u64,
    /// Relevant items, predicted or not.
    pub total_relevant: u64,
    /// `sum over rows of (recall gained) * precision`: scikit-learn's `average_precision_score`
    /// when every relevant item is predicted (its recall counts only the items it is given).
    pub average_precision: f64,
    /// The best F1 and the row's threshold (the highest threshold among equal F1s; `None`
    /// without rows).
    pub best_f1: Option<(f64, f64)>,
}

/// Rows of a pooled curve from its groups, highest score first: [`CurveRows::next`] takes each
/// group's `(lowest key, items, relevant)` and gives its row; [`CurveRows::stats`] the totals.
#[derive(Clone, Debug)]
pub struct CurveRows {
    total_relevant: u64,
    tp: u64,
    pp: u64,
    rows: u64,
    ap: f64,
    best: Option<(f64, f64)>,
}

impl CurveRows {
    /// Rows over `total_relevant` relevant items.
    pub fn new(total_relevant: u64) -> Self {
        CurveRows {
            total_relevant,
            tp: 0,
            pp: 0,
            rows: 0,
            ap: 0.0,
            best: None,
        }
    }

    /// The next group's row.
    pub fn next(&mut self, key: u64, n: u64, rel: u64) -> CurveRow {
        self.tp += rel;
        self.pp += n;
        self.rows += 1;
        let precision = self.tp as f64 / self.pp as f64;
        let recall = div(self.tp as f64, self.total_relevant as f64);
        let f1 = div(2.0 * precision * recall, precision + recall);
        self.ap += div(rel as f64, self.total_relevant as f64) * precision;
        let threshold = key_to_score(key);
        if self.best.is_none_or(|(b, _)| f1 > b) {
            self.best = Some((f1, threshold));
        }
        CurveRow {
            threshold,
            tp: self.tp,
            fp: self.pp - self.tp,
            precision,
            recall,
            f1,
        }
    }

    /// The totals so far.
    pub fn stats(&self) -> CurveStats {
        CurveStats {
            rows: self.rows,
            items: self.pp,
            total_relevant: self.total_relevant,
            average_precision: self.ap,
            best_f1: self.best,
        }
    }
}

fn div(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        0.0
    } else {
        a / b
    }
}

/// Sorted runs of `(key, items, relevant)` (keys strictly descending within a run) merged into
/// one such stream, equal keys added: the exact curve's groups from a curve's spilled runs and its
/// held bins ([`PooledCurve::run`]).
pub fn merge_runs<I>(runs: Vec<I>) -> impl Iterator<Item = (u64, u64, u64)>
where
    I: Iterator<Item = (u64, u64, u64)>,
{
    use std::collections::BinaryHeap;
    let mut runs = runs;
    let mut heap: BinaryHeap<(u64, usize, u64, u64)> = BinaryHeap::new();
    for (i, r) in runs.iter_mut().enumerate() {
        if let Some((k, n, rel)) = r.next() {
            heap.push((k, i, n, rel));
        }
    }
    std::iter::from_fn(move || {
        let (key, i, mut n, mut rel) = heap.pop()?;
        if let Some((k, a, b)) = runs[i].next() {
            heap.push((k, i, a, b));
        }
        while heap.peek().is_some_and(|top| top.0 == key) {
            let (_, j, a, b) = heap.pop().expect("peeked");
            n += a;
            rel += b;
            if let Some((k, a, b)) = runs[j].next() {
                heap.push((k, j, a, b));
            }
        }
        Some((key, n, rel))
    })
}

/// A group of [`equal_count`]: `(its lowest key, items, relevant)` and whether it holds one score.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The lowest key of the group's items.
    pub key: u64,
    /// Items.
    pub n: u64,
    /// Relevant items.
    pub rel: u64,
    /// Whether every item of the group has one score (a tie group of the exact curve).
    pub one_score: bool,
}

/// Groups `bins` (a curve's bins, highest first, as [`PooledCurve::run`] gives them; `exact`:
/// each bin is one score) into `k` groups of about equal count, the binned estimate: the `i`-th
/// group ends with the bin where the running count first reaches `ceil(i * N / k)`, `N` the items
/// in all. Each group's key is its lowest, so each row read from it ([`CurveRows`]) is the exact
/// curve's row at that threshold. A bin is never split: a group holds more than `N / k` items by
/// less than its last bin's count, and fewer than `k` groups come back when one bin crosses
/// several targets.
pub fn equal_count(bins: &[(u64, u64, u64)], exact: bool, k: u64) -> Vec<Group> {
    let total: u64 = bins.iter().map(|b| b.1).sum();
    let k = k.max(1) as u128;
    let target = |i: u128| (i * total as u128).div_ceil(k) as u64;
    let mut out = Vec::new();
    let (mut i, mut cum) = (1u128, 0u64);
    let (mut n, mut rel, mut parts) = (0u64, 0u64, 0u64);
    for &(key, bn, br) in bins {
        cum += bn;
        n += bn;
        rel += br;
        parts += 1;
        if cum >= target(i) {
            out.push(Group {
                key,
                n,
                rel,
                one_score: exact && parts == 1,
            });
            (n, rel, parts) = (0, 0, 0);
            while i <= k && target(i) <= cum {
                i += 1;
            }
        }
    }
    if parts > 0 {
        out.push(Group {
            key: bins.last().expect("counted").0,
            n,
            rel,
            one_score: exact && parts == 1,
        });
    }
    out
}

/// The most the pooled AP read from `groups` (highest first) can differ from the exact curve's,
/// whatever the order of the items inside each group: a relevant item of group `i` is credited
/// a precision between `(tp_{i-1} + 1) / pp_i` and `min(1, tp_i / (pp_{i-1} + 1))` (cumulative
/// counts before and after the group), the group's own precision `tp_i / pp_i` among them. The
/// bound is `(1/R) * sum over groups of relevant_i * (high_i - low_i)`, groups of one score
/// (which the exact curve also reads as one row) adding nothing.
pub fn ap_error_bound(groups: &[Group], total_relevant: u64) -> f64 {
    let (mut tp, mut pp) = (0u64, 0u64);
    let mut bound = 0.0;
    for g in groups {
        if g.rel > 0 && !g.one_score {
            let lo = (tp + 1) as f64 / (pp + g.n) as f64;
            let hi = ((tp + g.rel) as f64 / (pp + 1) as f64).min(1.0);
            bound += g.rel as f64 * (hi - lo);
        }
        tp += g.rel;
        pp += g.n;
    }
    div(bound, total_relevant as f64)
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
