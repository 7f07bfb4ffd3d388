//! Ranks in a row of scores over the whole library (a dense `.npy` matrix): the ranking rule of
//! [`RankingBuilder`](super::RankingBuilder) (score descending, equal scores by [`trec_cmp`]'s
//! name rule or as one tie group, then the depth cut), applied by counting instead of sorting.
//!
//! A row is never sorted: for each judged lemma, the lemmas that outrank it are counted (score
//! greater, or equal with a name that ranks first), in one pass over the row in L1-sized blocks;
//! a block whose maximum is below a judged lemma's score costs that lemma nothing
//! ([`count_sorted`]). The result is what the builder would give the accumulator for those
//! lemmas: their ranks, or (tie groups) the lemmas above and the size of their group.
//!
//! Under `--mask accessible` (docs/METRICS.md §9) the same pass counts accessible lemmas only: a
//! bitset over the columns (one `u64` a block of 64 scores) is ANDed with each compare, and a
//! block without an accessible lemma is skipped. The leak measures read the unmasked ranking's
//! head, found in the same pass by a bounded selection ([`Select`]: a block whose maximum cannot
//! enter it costs one compare), and the rank of its best inaccessible lemma ([`best_outside`]).

use crate::options::TieMode;
use lemma_accum::trec_cmp;
use lemma_ingest::Names;

/// For the judged columns `judged` (column, grade) of `row`: each one's rank, pushed with its
/// grade and column to `ranks` when within `depth`; or, under `TieMode::Group`, (lemmas scored
/// above, lemmas of its score, grade, column) pushed to `groups` (the caller refuses a depth that
/// cuts a group).
/// `judged` is reordered (by score). `Err(column)`: a judged lemma's score is NaN. With `mask`
/// (a bit a column: accessible), only the columns it holds are counted (the judged ones must be
/// among them). With `select` (which needs `mask`: all ones when nothing is masked), the same
/// pass selects the row's first columns.
#[allow(clippy::too_many_arguments)]
pub(crate) fn rank_judged<T: Score>(
    row: &[T],
    judged: &mut [(u32, i32)],
    lemmas: &Names,
    ties: TieMode,
    depth: u64,
    mask: Option<&[u64]>,
    select: Option<&mut Select<'_, T>>,
    ranks: &mut Vec<(u64, i32, u32)>,
    groups: &mut Vec<(u64, u64, i32, u32)>,
) -> Result<(), u32> {
    if let Some(&(col, _)) = judged.iter().find(|&&(c, _)| row[c as usize].is_nan()) {
        return Err(col);
    }
    // Thresholds ascending (none is NaN): the counting pass skips those above a block.
    judged.sort_unstable_by(|a, b| {
        row[a.0 as usize]
            .partial_cmp(&row[b.0 as usize])
            .expect("no NaN")
    });
    let ts: Vec<T> = judged.iter().map(|&(c, _)| row[c as usize]).collect();
    let k = ts.len();
    let (mut gt, mut eq) = (vec![0u64; k], vec![0u64; k]);
    match mask {
        Some(m) => T::count_masked(row, &ts, m, &mut gt, &mut eq, select),
        None => count_sorted(row, &ts, &mut gt, &mut eq),
    }
    if ties == TieMode::Group {
        // Tie groups: a judged lemma's group is the lemmas of its score, after those above.
        for j in 0..k {
            groups.push((gt[j], eq[j], judged[j].1, judged[j].0));
        }
        return Ok(());
    }
    for j in 0..k {
        let (col, grade) = judged[j];
        let mut rank = gt[j] + 1;
        if eq[j] > 1 {
            rank += tied_above(row, ts[j], col, lemmas, mask);
        }
        if rank <= depth {
            ranks.push((rank, grade, col));
        }
    }
    Ok(())
}

const BLOCK: usize = 64;

/// For each threshold `ts[j]` (sorted ascending, no NaN): how many scores of `row` are greater
/// (`gt[j]`) and equal (`eq[j]`).
///
/// The row is walked once, in blocks of [`BLOCK`] scores. A block's maximum is taken first (one
/// packed max per eight scores); a threshold above it gains nothing from the block, so only the
/// thresholds at or below it (a prefix, the thresholds being sorted) are counted, each by two
/// packed compares and two adds per eight scores into per-lane counters. The cost is therefore one
/// load and one max per score plus, for each threshold *within the block's range*, a quarter of
/// an instruction per score. In premise-selection rows the judged lemmas tend to score near the
/// top, so most blocks count nothing; the worst case (every threshold below every block maximum)
/// is the plain count of every threshold. NaN scores are never greater nor equal. AVX2 for f32
/// when the CPU has it, chosen at run time; a portable loop otherwise.
fn count_sorted<T: Score>(row: &[T], ts: &[T], gt: &mut [u64], eq: &mut [u64]) {
    debug_assert!(ts.windows(2).all(|w| w[0] <= w[1]));
    T::count_sorted(row, ts, gt, eq)
}

/// The 64 scores of `block`, loaded as eight vectors, and their maximum ignoring NaN:
/// `max(x, acc)` returns its second operand when either is NaN, so accumulators that start at
/// -inf never become NaN (a tree of maxima could: a NaN would hide a larger score). Two chains
/// for throughput.
///
/// # Safety
/// The CPU has AVX2, and `block` holds at least 64 scores.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn load_block_avx2(block: &[f32]) -> ([std::arch::x86_64::__m256; 8], f32) {
    use std::arch::x86_64::*;
    debug_assert!(block.len() >= BLOCK);
    let p = block.as_ptr();
    // SAFETY: the caller's contract: 64 f32, eight unaligned loads of eight.
    let v: [__m256; 8] = std::array::from_fn(|i| unsafe { _mm256_loadu_ps(p.add(8 * i)) });
    let (mut a, mut b) = (
        _mm256_set1_ps(f32::NEG_INFINITY),
        _mm256_set1_ps(f32::NEG_INFINITY),
    );
    for pair in v.chunks_exact(2) {
        a = _mm256_max_ps(pair[0], a);
        b = _mm256_max_ps(pair[1], b);
    }
    let m = _mm256_max_ps(a, b);
    let m = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps::<1>(m));
    let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    (v, _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps::<1>(m, m))))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn count_sorted_f32_avx2(row: &[f32], ts: &[f32], gt: &mut [u64], eq: &mut [u64]) {
    use std::arch::x86_64::*;
    let zero = _mm256_setzero_si256();
    let mut lanes = vec![(zero, zero); ts.len()];
    // Parts of 2^24 scores: a lane counts at most 2^21 of them, far from overflowing its u32.
    for part in row.chunks(1 << 24) {
        let blocks = part.chunks_exact(BLOCK);
        let tail = blocks.remainder();
        for block in blocks {
            // SAFETY: the block holds 64 f32 (AVX2 is enabled in this function).
            let (v, m) = unsafe { load_block_avx2(block) };
            for (&t, (g, e)) in ts.iter().zip(lanes.iter_mut()) {
                if t > m {
                    break; // this threshold and every later one are above the whole block
                }
                let tv = _mm256_set1_ps(t);
                for x in v {
                    // A true compare is all ones (-1): subtracting it counts one.
                    *g = _mm256_sub_epi32(
                        *g,
                        _mm256_castps_si256(_mm256_cmp_ps::<_CMP_GT_OQ>(x, tv)),
                    );
                    *e = _mm256_sub_epi32(
                        *e,
                        _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(x, tv)),
                    );
                }
            }
        }
        for (j, &t) in ts.iter().enumerate() {
            let (g, e) = lanes[j];
            let (mut gs, mut es) = ([0u32; 8], [0u32; 8]);
            // SAFETY: eight u32 to and from a 256-bit register, unaligned stores.
            unsafe {
                _mm256_storeu_si256(gs.as_mut_ptr().cast(), g);
                _mm256_storeu_si256(es.as_mut_ptr().cast(), e);
            }
            gt[j] += gs.iter().map(|&c| c as u64).sum::<u64>()
                + tail.iter().filter(|&&s| s > t).count() as u64;
            eq[j] += es.iter().map(|&c| c as u64).sum::<u64>()
                + tail.iter().filter(|&&s| s == t).count() as u64;
            lanes[j] = (zero, zero);
        }
    }
}

/// [`count_sorted`] without SIMD intrinsics (f64 rows, CPUs without AVX2): the same blocks, the
/// same skipping, plain loops.
fn count_sorted_portable<T: Score>(row: &[T], ts: &[T], gt: &mut [u64], eq: &mut [u64]) {
    for block in row.chunks(BLOCK) {
        let m = block_max(block);
        for (j, &t) in ts.iter().enumerate() {
            if t > m {
                break;
            }
            let (mut g, mut e) = (0u32, 0u32);
            for &s in block {
                g += (s > t) as u32;
                e += (s == t) as u32;
            }
            gt[j] += g as u64;
            eq[j] += e as u64;
        }
    }
}

/// Scores that can be counted: f32 and f64.
pub(crate) trait Score: Copy + PartialOrd {
    const NEG_INFINITY: Self;
    fn is_nan(self) -> bool;
    /// [`count_sorted`] for this score type: its fastest implementation on this CPU.
    fn count_sorted(row: &[Self], ts: &[Self], gt: &mut [u64], eq: &mut [u64]);
    /// [`count_sorted`] of the columns `mask` holds (bit `c % 64` of word `c / 64`), every
    /// block's maximum told to `select`.
    fn count_masked(
        row: &[Self],
        ts: &[Self],
        mask: &[u64],
        gt: &mut [u64],
        eq: &mut [u64],
        select: Option<&mut Select<'_, Self>>,
    );
}
impl Score for f32 {
    const NEG_INFINITY: Self = f32::NEG_INFINITY;
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    fn count_sorted(row: &[f32], ts: &[f32], gt: &mut [u64], eq: &mut [u64]) {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above).
                unsafe { count_sorted_f32_avx2(row, ts, gt, eq) };
                return;
            }
        }
        count_sorted_portable(row, ts, gt, eq)
    }
    fn count_masked(
        row: &[f32],
        ts: &[f32],
        mask: &[u64],
        gt: &mut [u64],
        eq: &mut [u64],
        select: Option<&mut Select<'_, f32>>,
    ) {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above).
                unsafe { count_masked_f32_avx2(row, ts, mask, gt, eq, select) };
                return;
            }
        }
        count_masked_portable(row, ts, mask, gt, eq, select)
    }
}
impl Score for f64 {
    const NEG_INFINITY: Self = f64::NEG_INFINITY;
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    fn count_sorted(row: &[f64], ts: &[f64], gt: &mut [u64], eq: &mut [u64]) {
        count_sorted_portable(row, ts, gt, eq)
    }
    fn count_masked(
        row: &[f64],
        ts: &[f64],
        mask: &[u64],
        gt: &mut [u64],
        eq: &mut [u64],
        select: Option<&mut Select<'_, f64>>,
    ) {
        count_masked_portable(row, ts, mask, gt, eq, select)
    }
}

/// [`count_sorted`] counting only the columns `mask` holds, AVX2: the same blocks and skipping,
/// a block without an accessible column skipped whole; each compare is ANDed with the block's
/// lanes of `mask` (eight lanes from a byte of it: a broadcast, an AND and a compare, once a
/// block), so the count stays branch-free. With `select`, every block is read and its maximum
/// told to it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn count_masked_f32_avx2(
    row: &[f32],
    ts: &[f32],
    mask: &[u64],
    gt: &mut [u64],
    eq: &mut [u64],
    mut select: Option<&mut Select<'_, f32>>,
) {
    use std::arch::x86_64::*;
    let zero = _mm256_setzero_si256();
    let sel = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    let mut lanes = vec![(zero, zero); ts.len()];
    const PART: usize = 1 << 24;
    for (pi, part) in row.chunks(PART).enumerate() {
        let blocks = part.chunks_exact(BLOCK);
        let tail = blocks.remainder();
        let first_word = pi * PART / BLOCK;
        for (bi, block) in blocks.enumerate() {
            let word = mask[first_word + bi];
            if word == 0 && select.is_none() {
                continue;
            }
            // SAFETY: the block holds 64 f32 (AVX2 is enabled in this function).
            let (v, m) = unsafe { load_block_avx2(block) };
            if let Some(s) = select.as_deref_mut() {
                s.block((first_word + bi) * BLOCK, BLOCK, m);
            }
            if word == 0 || ts.first().is_none_or(|&t| t > m) {
                continue;
            }
            let on: [__m256i; 8] = std::array::from_fn(|i| {
                let byte = _mm256_set1_epi32(((word >> (8 * i)) & 0xff) as i32);
                _mm256_cmpeq_epi32(_mm256_and_si256(byte, sel), sel)
            });
            for (&t, (g, e)) in ts.iter().zip(lanes.iter_mut()) {
                if t > m {
                    break;
                }
                let tv = _mm256_set1_ps(t);
                for (x, on) in v.iter().zip(&on) {
                    let gt = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_GT_OQ>(*x, tv));
                    let eq = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(*x, tv));
                    *g = _mm256_sub_epi32(*g, _mm256_and_si256(gt, *on));
                    *e = _mm256_sub_epi32(*e, _mm256_and_si256(eq, *on));
                }
            }
        }
        let tail_start = pi * PART + part.len() - tail.len();
        if let Some(s) = select.as_deref_mut() {
            s.block(tail_start, tail.len(), block_max(tail));
        }
        for (j, &t) in ts.iter().enumerate() {
            let (g, e) = lanes[j];
            let (mut gs, mut es) = ([0u32; 8], [0u32; 8]);
            // SAFETY: eight u32 to and from a 256-bit register, unaligned stores.
            unsafe {
                _mm256_storeu_si256(gs.as_mut_ptr().cast(), g);
                _mm256_storeu_si256(es.as_mut_ptr().cast(), e);
            }
            let (tg, te) = count_tail(tail, tail_start, t, mask);
            gt[j] += gs.iter().map(|&c| c as u64).sum::<u64>() + tg;
            eq[j] += es.iter().map(|&c| c as u64).sum::<u64>() + te;
            lanes[j] = (zero, zero);
        }
    }
}

/// Scores of `tail` (columns from `start`) that `mask` holds: how many are greater than `t`, and
/// how many equal.
fn count_tail<T: Score>(tail: &[T], start: usize, t: T, mask: &[u64]) -> (u64, u64) {
    let (mut g, mut e) = (0, 0);
    for (i, &s) in tail.iter().enumerate() {
        let c = start + i;
        let on = (mask[c / 64] >> (c % 64)) & 1;
        g += (s > t) as u64 & on;
        e += (s == t) as u64 & on;
    }
    (g, e)
}

/// [`count_sorted_portable`] counting only the columns `mask` holds.
#[inline(always)]
fn count_masked_portable<T: Score>(
    row: &[T],
    ts: &[T],
    mask: &[u64],
    gt: &mut [u64],
    eq: &mut [u64],
    mut select: Option<&mut Select<'_, T>>,
) {
    for (b, block) in row.chunks(BLOCK).enumerate() {
        let word = mask[b];
        if word == 0 && select.is_none() {
            continue;
        }
        let m = block_max(block);
        if let Some(s) = select.as_deref_mut() {
            s.block(b * BLOCK, block.len(), m);
        }
        if word == 0 {
            continue;
        }
        for (j, &t) in ts.iter().enumerate() {
            if t > m {
                break;
            }
            let (g, e) = count_tail(block, b * BLOCK, t, mask);
            gt[j] += g;
            eq[j] += e;
        }
    }
}

/// The maximum of a block's scores, ignoring NaN (`NEG_INFINITY` for a block of NaN). Eight
/// lane-wise maxima, reduced at the end: no chain of dependent compares, so the compiler keeps
/// them in vector registers.
#[inline(always)]
fn block_max<T: Score>(block: &[T]) -> T {
    let mut lanes = [T::NEG_INFINITY; 8];
    let chunks = block.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for i in 0..8 {
            lanes[i] = if c[i] > lanes[i] { c[i] } else { lanes[i] };
        }
    }
    let mut m = T::NEG_INFINITY;
    for &x in lanes.iter().chain(tail) {
        m = if x > m { x } else { m };
    }
    m
}

/// Whether column `a` ranks above column `b` (both of `row`): a greater score, or an equal one
/// and the tie rule ([`trec_cmp`]); a NaN score ranks below every other, NaN ones by the rule.
#[inline]
fn outranks<T: Score>(row: &[T], lemmas: &Names, a: u32, b: u32) -> bool {
    let (x, y) = (row[a as usize], row[b as usize]);
    match (x.is_nan(), y.is_nan()) {
        (false, true) => true,
        (true, false) => false,
        (true, true) => trec_cmp(0.0, lemmas.get(a as usize), 0.0, lemmas.get(b as usize)).is_lt(),
        (false, false) => {
            x > y
                || (x == y
                    && trec_cmp(0.0, lemmas.get(a as usize), 0.0, lemmas.get(b as usize)).is_lt())
        }
    }
}

/// A bounded selection of a row's first `k` columns in rank order ([`outranks`]), told of the
/// row block by block with each block's maximum: no sort of the row, a list of the best so far,
/// which a block enters only when its maximum reaches the list's last score. NaN scores come
/// last, by the tie rule ([`Select::finish`]).
pub(crate) struct Select<'a, T> {
    row: &'a [T],
    lemmas: &'a Names,
    k: usize,
    top: &'a mut Vec<u32>,
}

impl<'a, T: Score> Select<'a, T> {
    /// An empty selection of `k` columns of `row` into `top`.
    pub(crate) fn new(row: &'a [T], lemmas: &'a Names, k: usize, top: &'a mut Vec<u32>) -> Self {
        top.clear();
        Select {
            row,
            lemmas,
            k: k.min(row.len()),
            top,
        }
    }

    /// The block of columns `first..first + len`, whose maximum score (NaN ignored) is `m`.
    #[inline(always)]
    fn block(&mut self, first: usize, len: usize, m: T) {
        let (k, row, lemmas) = (self.k, self.row, self.lemmas);
        if k == 0 {
            return;
        }
        // The score a column needs to enter: the last one's when the list is full.
        let mut worst = match self.top.len() == k {
            true => row[self.top[k - 1] as usize],
            false => T::NEG_INFINITY,
        };
        if m < worst {
            return; // (a block maximum is never NaN)
        }
        for c in first as u32..(first + len) as u32 {
            let s = row[c as usize];
            // A lower score (or NaN) cannot enter; an equal one only by the tie rule.
            if s.is_nan()
                || s < worst
                || (s == worst && self.top.len() == k && !outranks(row, lemmas, c, self.top[k - 1]))
            {
                continue;
            }
            let at = self.top.partition_point(|&x| outranks(row, lemmas, x, c));
            self.top.insert(at, c);
            if self.top.len() > k {
                self.top.pop();
            }
            if self.top.len() == k {
                worst = row[self.top[k - 1] as usize];
            }
        }
    }

    /// Ends the selection: fewer than `k` scored columns are followed by NaN ones, by name.
    pub(crate) fn finish(self) {
        if self.top.len() < self.k {
            let lemmas = self.lemmas;
            let mut rest: Vec<u32> = (0..self.row.len() as u32)
                .filter(|&c| self.row[c as usize].is_nan())
                .collect();
            rest.sort_unstable_by(|&a, &b| {
                trec_cmp(0.0, lemmas.get(a as usize), 0.0, lemmas.get(b as usize))
            });
            let more = self.k - self.top.len();
            self.top.extend(rest.into_iter().take(more));
        }
    }
}

/// The first `k` columns of the row's ranking, in rank order, into `top` ([`Select`] alone).
#[cfg(test)]
fn top_k<T: Score>(row: &[T], k: usize, lemmas: &Names, top: &mut Vec<u32>) {
    let mut s = Select::new(row, lemmas, k, top);
    for (b, block) in row.chunks(BLOCK).enumerate() {
        s.block(b * BLOCK, block.len(), block_max(block));
    }
    s.finish();
}

/// The rank (1-based) in the row's ranking of the best column that `mask` does not hold (the
/// first inaccessible lemma: every column above it is accessible), or `None` when the mask holds
/// every column. `cols` bits of `mask` are read.
pub(crate) fn best_outside<T: Score>(row: &[T], mask: &[u64], lemmas: &Names) -> Option<u64> {
    // The best column outside: blocks with one, their maximum over the columns outside.
    let mut best: Option<u32> = None;
    for (b, block) in row.chunks(BLOCK).enumerate() {
        let out = !mask[b]
            & if block.len() == BLOCK {
                u64::MAX
            } else {
                (1u64 << block.len()) - 1
            };
        if out == 0 {
            continue;
        }
        let mut lanes = [T::NEG_INFINITY; 8];
        for (j, c) in block.chunks(8).enumerate() {
            for (i, &s) in c.iter().enumerate() {
                let on = (out >> (8 * j + i)) & 1 == 1;
                lanes[i] = if on && s > lanes[i] { s } else { lanes[i] };
            }
        }
        let m = block_max(&lanes);
        if let Some(x) = best {
            if m < row[x as usize] {
                continue;
            }
        }
        for (i, _) in block.iter().enumerate() {
            let c = (b * BLOCK + i) as u32;
            if (out >> i) & 1 == 1 && best.is_none_or(|x| outranks(row, lemmas, c, x)) {
                best = Some(c);
            }
        }
    }
    let best = best?;
    let t = row[best as usize];
    if t.is_nan() {
        // Every column outside scores NaN: the scored columns inside, then NaN ones by name.
        let above = (0..row.len() as u32)
            .filter(|&c| (mask[c as usize / 64] >> (c % 64)) & 1 == 1)
            .filter(|&c| outranks(row, lemmas, c, best))
            .count() as u64;
        return Some(above + 1);
    }
    let (mut gt, mut eq) = ([0u64], [0u64]);
    T::count_masked(row, &[t], mask, &mut gt, &mut eq, None);
    let mut rank = gt[0] + 1;
    if eq[0] > 0 {
        rank += tied_above(row, t, best, lemmas, Some(mask));
    }
    Some(rank)
}

/// Among the other columns whose score equals `t` (the score of column `col`), how many rank
/// above it by the tie rule every ranking shares ([`trec_cmp`]: a greater name first). Blocks of
/// 64 scores are first counted with packed compares; names are compared only in the (rare)
/// blocks that hold an equal score.
/// With `mask`, only the columns it holds are counted.
fn tied_above<T: Score>(row: &[T], t: T, col: u32, lemmas: &Names, mask: Option<&[u64]>) -> u64 {
    let name = lemmas.get(col as usize);
    let mut above = 0;
    for (b, block) in row.chunks(BLOCK).enumerate() {
        let word = mask.map_or(u64::MAX, |m| m[b]);
        if word == 0 || block.iter().filter(|&&s| s == t).count() == 0 {
            continue;
        }
        for (i, &s) in block.iter().enumerate() {
            let k = b * BLOCK + i;
            // Equal scores: the order is the names'.
            if s == t
                && (word >> i) & 1 == 1
                && k != col as usize
                && trec_cmp(0.0, lemmas.get(k), 0.0, name).is_lt()
            {
                above += 1;
            }
        }
    }
    above
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain count: every score against every threshold.
    fn naive<T: Score>(row: &[T], ts: &[T]) -> (Vec<u64>, Vec<u64>) {
        let gt = ts
            .iter()
            .map(|&t| row.iter().filter(|&&s| s > t).count() as u64);
        let eq = ts
            .iter()
            .map(|&t| row.iter().filter(|&&s| s == t).count() as u64);
        (gt.collect(), eq.collect())
    }

    fn check<T: Score + std::fmt::Debug>(row: &[T], ts: &mut Vec<T>) {
        ts.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let want = naive(row, ts);
        let (mut gt, mut eq) = (vec![0; ts.len()], vec![0; ts.len()]);
        count_sorted(row, ts, &mut gt, &mut eq);
        assert_eq!((gt, eq), want, "dispatched path, thresholds {ts:?}");
        let (mut gt, mut eq) = (vec![0; ts.len()], vec![0; ts.len()]);
        count_sorted_portable(row, ts, &mut gt, &mut eq);
        assert_eq!((gt, eq), want, "portable path, thresholds {ts:?}");
        // Masked: every third column and a run of words left out, against the plain count of
        // the columns kept.
        let mut mask = vec![0u64; row.len().div_ceil(64) + 1];
        for c in 0..row.len() {
            if c % 3 != 0 && !(128..320).contains(&c) {
                mask[c / 64] |= 1 << (c % 64);
            }
        }
        let kept: Vec<T> = (0..row.len())
            .filter(|&c| (mask[c / 64] >> (c % 64)) & 1 == 1)
            .map(|c| row[c])
            .collect();
        let want = naive(&kept, ts);
        let (mut gt, mut eq) = (vec![0; ts.len()], vec![0; ts.len()]);
        T::count_masked(row, ts, &mask, &mut gt, &mut eq, None);
        assert_eq!((gt, eq), want, "masked, dispatched path, thresholds {ts:?}");
        let (mut gt, mut eq) = (vec![0; ts.len()], vec![0; ts.len()]);
        count_masked_portable(row, ts, &mask, &mut gt, &mut eq, None);
        assert_eq!((gt, eq), want, "masked, portable path, thresholds {ts:?}");
    }

    #[test]
    fn top_k_and_best_outside_equal_a_sort() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for len in [1usize, 5, 64, 130, 700] {
            for levels in [2u64, 7, 1000] {
                let text: String = (0..len)
                    .map(|i| format!("n{:04}\n", next() % 5000 + i as u64 * 10000))
                    .collect();
                let names = Names::from_lines(text.as_bytes());
                let row: Vec<f32> = (0..len)
                    .map(|_| match next() % 53 {
                        0 => f32::NAN,
                        _ => (next() % levels) as f32,
                    })
                    .collect();
                // The ranking by sorting: scores descending (NaN last), then the tie rule.
                let mut order: Vec<u32> = (0..len as u32).collect();
                order.sort_by(|&a, &b| {
                    if outranks(&row, &names, a, b) {
                        std::cmp::Ordering::Less
                    } else if outranks(&row, &names, b, a) {
                        std::cmp::Ordering::Greater
                    } else {
                        std::cmp::Ordering::Equal
                    }
                });
                for k in [1, 3, 64, len] {
                    let mut top = Vec::new();
                    top_k(&row, k, &names, &mut top);
                    assert_eq!(
                        top,
                        order[..k.min(len)],
                        "len {len}, levels {levels}, k {k}"
                    );
                    let mut top64 = Vec::new();
                    top_k(
                        &row.iter().map(|&s| s as f64).collect::<Vec<_>>(),
                        k,
                        &names,
                        &mut top64,
                    );
                    assert_eq!(top64, top);
                    // The same selection made by the counting pass.
                    let ones = vec![u64::MAX; len.div_ceil(64)];
                    let mut top2 = Vec::new();
                    let mut sel = Select::new(&row, &names, k, &mut top2);
                    let (mut gt, mut eq) = ([0u64], [0u64]);
                    f32::count_masked(&row, &[0.5], &ones, &mut gt, &mut eq, Some(&mut sel));
                    sel.finish();
                    assert_eq!(top2, top, "counting pass, len {len}, k {k}");
                    let mut top3 = Vec::new();
                    let mut sel = Select::new(&row, &names, k, &mut top3);
                    let (mut gt, mut eq) = ([0u64], [0u64]);
                    count_masked_portable(&row, &[0.5], &ones, &mut gt, &mut eq, Some(&mut sel));
                    sel.finish();
                    assert_eq!(top3, top, "portable counting pass, len {len}, k {k}");
                }
                for share in [0u64, 1, 10, 50, 100] {
                    let mut mask = vec![0u64; len.div_ceil(64) + 1];
                    for c in 0..len {
                        if next() % 100 >= share {
                            mask[c / 64] |= 1 << (c % 64);
                        }
                    }
                    let want = order
                        .iter()
                        .position(|&c| (mask[c as usize / 64] >> (c % 64)) & 1 == 0)
                        .map(|i| i as u64 + 1);
                    assert_eq!(
                        best_outside(&row, &mask, &names),
                        want,
                        "len {len}, share {share}"
                    );
                }
            }
        }
    }

    #[test]
    fn block_counting_equals_the_plain_count() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for len in [0, 1, 63, 64, 65, 200, 1000, 4099] {
            for levels in [3u64, 50, 1 << 20] {
                // Scores with ties, NaN, infinities and both zeros; a few thresholds taken from the
                // row, one above everything, one below.
                let row: Vec<f32> = (0..len)
                    .map(|_| match next() % 97 {
                        0 => f32::NAN,
                        1 => f32::INFINITY,
                        2 => f32::NEG_INFINITY,
                        3 => -0.0,
                        4 => 0.0,
                        _ => (next() % levels) as f32 / levels as f32 - 0.5,
                    })
                    .collect();
                let mut ts: Vec<f32> = (0..next() % 9)
                    .filter_map(|_| row.get((next() % len.max(1) as u64) as usize).copied())
                    .filter(|t| !t.is_nan())
                    .chain([2.0, -2.0, 0.0])
                    .collect();
                check(&row, &mut ts);
                let row64: Vec<f64> = row.iter().map(|&s| s as f64).collect();
                let mut ts64: Vec<f64> = ts.iter().map(|&t| t as f64).collect();
                check(&row64, &mut ts64);
            }
        }
    }

    #[test]
    fn ties_above_by_name() {
        // Columns 0..4 named c0..c4 (bytes order = column order here); scores tie at 0.5 for
        // columns 1, 2 and 4. For column 2, only c4 has a greater name among its ties.
        let names = Names::from_lines(b"c0\nc1\nc2\nc3\nc4\n");
        let row = [0.9f32, 0.5, 0.5, 0.1, 0.5];
        assert_eq!(tied_above(&row, 0.5, 2, &names, None), 1);
        assert_eq!(tied_above(&row, 0.5, 1, &names, None), 2);
        assert_eq!(tied_above(&row, 0.5, 4, &names, None), 0);
        // A long row: the tie sits in a later block.
        let mut long = vec![0.0f32; 300];
        long[3] = 0.25;
        long[299] = 0.25;
        let text: String = (0..300).map(|i| format!("n{i:03}\n")).collect();
        let names = Names::from_lines(text.as_bytes());
        assert_eq!(tied_above(&long, 0.25, 3, &names, None), 1);
        assert_eq!(tied_above(&long, 0.25, 299, &names, None), 0);
    }
}
