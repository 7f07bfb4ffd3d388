//! Full-library rankings: the binary store and dense score matrices, evaluated on all cores.
//!
//! Both paths reduce a goal to the ranks of its judged lemmas, then call the accumulator's
//! ranks-only entry point, which costs O(judged) whatever the ranking's length:
//!
//! - **store**: one pass over the goal's `u32` ids, testing each against a bitset of the goal's
//!   judged ids (the bitset covers the universe: 25 KB for 200,000 lemmas, in L1/L2 cache);
//! - **dense**: for each judged lemma, the number of lemmas that outrank it (score greater, or
//!   equal with a name greater in bytes: METRICS.md §2's rule) by vectorisable counting passes over
//!   the row, which stays in cache between passes. No row is sorted.
//!
//! Goals are handed to worker threads in chunks by an atomic counter; each chunk's per-goal rows
//! and partial summary go to the collector through a bounded channel and are merged in chunk
//! order, so the output is the same for any number of threads, and a slow writer cannot make
//! memory grow.

use crate::engine::{
    evaluate_unseen, plan_for, EvalError, EvalOptions, GoalRow, Report, Window, ZeroRelMode,
};
use lemma_accum::{GoalAccumulator, GoalFate, Summary, Truth};
use lemma_ingest::{show, ActualSets, ErrorKind, GoalTruth, InputError, Matrix, Row, Store};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::sync_channel;
use std::time::Instant;

/// Where per-goal rankings come from.
pub enum Source<'a> {
    /// A binary store.
    Store(&'a Store),
    /// A dense matrix with its goal names (rows) and lemma names (columns; ids are column numbers).
    Dense {
        matrix: &'a Matrix,
        goals: &'a [Vec<u8>],
        lemmas: &'a [Vec<u8>],
    },
}

impl Source<'_> {
    fn goals(&self) -> usize {
        match self {
            Source::Store(s) => s.goals(),
            Source::Dense { matrix, .. } => matrix.rows(),
        }
    }
    fn goal_name(&self, g: usize) -> &[u8] {
        match self {
            Source::Store(s) => s.goal_name(g),
            Source::Dense { goals, .. } => &goals[g],
        }
    }
    fn universe(&self) -> usize {
        match self {
            Source::Store(s) => s.lemmas(),
            Source::Dense { matrix, .. } => matrix.cols(),
        }
    }
    fn bytes(&self) -> u64 {
        match self {
            Source::Store(s) => s.block_bytes(),
            Source::Dense { matrix, .. } => matrix.data_bytes(),
        }
    }
}

/// A chunk's output.
struct ChunkResult {
    index: usize,
    summary: Summary,
    rows: Vec<GoalRow>,
    /// Goal ids of the actual sets that this chunk saw.
    seen: Vec<u32>,
    entries: u64,
    error: Option<EvalError>,
}

/// Per-worker state.
struct Worker<'a> {
    actual: &'a ActualSets,
    opts: &'a EvalOptions,
    source: &'a Source<'a>,
    /// Actual lemma id -> id in the source's universe (`u32::MAX`: the source does not know it).
    to_source: &'a [u32],
    acc: GoalAccumulator,
    bits: Vec<u64>,
    ranks: Vec<(u64, i32)>,
    judged: Vec<(u32, i32)>,
    want_rows: bool,
}

fn goal_error(goal: &[u8], message: String) -> EvalError {
    EvalError::Input(InputError::file(
        ErrorKind::Syntax,
        std::path::Path::new(""),
        format!("goal `{}`: {message}", show(goal)),
    ))
}

impl<'a> Worker<'a> {
    /// Evaluates goal `g` of the source. `Ok(None)`: skipped (reason counted in `summary`).
    fn goal(
        &mut self,
        g: usize,
        summary: &mut Summary,
        chunk: &mut ChunkResult,
    ) -> Result<(), EvalError> {
        let name = self.source.goal_name(g);
        let Some((gid, truth)) = self.actual.goal(name) else {
            summary.skip(GoalFate::SkippedNoActual);
            return Ok(());
        };
        let t = graded(truth).with_universe(self.source.universe() as u64);
        if t.counts(self.opts.relevance_level).0 == 0 && self.opts.zero_rel == ZeroRelMode::Skip {
            chunk.seen.push(gid);
            summary.skip(GoalFate::SkippedNoRelevant);
            return Ok(());
        }
        // The goal's judged lemmas in the source's id space.
        self.judged.clear();
        for id in truth.judged.iter() {
            let sid = self.to_source[id as usize];
            if sid != u32::MAX {
                self.judged.push((sid, truth.grade(id).expect("judged")));
            }
        }
        self.ranks.clear();
        let depth = self.opts.depth.unwrap_or(u64::MAX);
        let n = match self.source {
            Source::Store(store) => {
                let Some((ids, _)) = store.ranking(g) else {
                    return Ok(()); // no predictions: handled with the goals never seen
                };
                chunk.seen.push(gid);
                let n = (ids.len() as u64).min(depth) as usize;
                self.scan_store(&ids[..n], name)?;
                chunk.entries += ids.len() as u64;
                n as u64
            }
            Source::Dense { matrix, lemmas, .. } => {
                chunk.seen.push(gid);
                let row = matrix.row(g);
                self.rank_dense(row, lemmas, depth, name)?;
                chunk.entries += matrix.cols() as u64;
                (matrix.cols() as u64).min(depth)
            }
        };
        self.ranks.sort_unstable();
        let values = self
            .acc
            .evaluate_ranks(&t, n, self.ranks.iter().copied())
            .map_err(|error| EvalError::Goal {
                goal: show(name),
                error,
            })?;
        summary.add(&values);
        if self.want_rows {
            chunk.rows.push(GoalRow {
                goal: name.to_vec(),
                values: values.values().to_vec(),
                empty: false,
            });
        }
        Ok(())
    }

    /// One pass over a store ranking: the ranks of the judged ids. Blocks of 16 ids: their
    /// maximum (vectorised) proves every id in range, then each id is one bit test in a bitset
    /// that stays in cache; only a block with a hit is looked at again.
    fn scan_store(&mut self, ids: &[u32], goal: &[u8]) -> Result<(), EvalError> {
        let universe = self.source.universe() as u32;
        if self.judged.len() <= 16 {
            return self.scan_store_few(ids, goal, universe);
        }
        for &(id, _) in &self.judged {
            self.bits[(id >> 6) as usize] |= 1 << (id & 63);
        }
        let bits = &mut self.bits;
        let mut result = Ok(());
        let mut base = 0usize;
        for block in ids.chunks(16) {
            let max = block.iter().copied().fold(0u32, u32::max);
            if max >= universe {
                let i = block
                    .iter()
                    .position(|&id| id >= universe)
                    .expect("the maximum is in the block");
                result = Err(goal_error(
                    goal,
                    format!(
                        "rank {} holds lemma id {max}, beyond the {universe} lemmas of the store",
                        base + i + 1
                    ),
                ));
                break;
            }
            let mut hit = 0u64;
            for &id in block {
                // SAFETY: id < universe (checked by the block maximum) and `bits` covers the
                // universe: the index is in bounds.
                hit |= unsafe { *bits.get_unchecked((id >> 6) as usize) } >> (id & 63);
            }
            // Bit 0 of `hit` is the OR of every tested bit.
            if hit & 1 != 0 {
                for (k, &id) in block.iter().enumerate() {
                    if (bits[(id >> 6) as usize] >> (id & 63)) & 1 != 0 {
                        // First occurrence only: a repeated id (a corrupt store) counts once.
                        bits[(id >> 6) as usize] &= !(1 << (id & 63));
                        let grade = self.judged.iter().find(|e| e.0 == id).map_or(1, |e| e.1);
                        self.ranks.push(((base + k) as u64 + 1, grade));
                    }
                }
            }
            base += block.len();
        }
        for &(id, _) in &self.judged {
            self.bits[(id >> 6) as usize] &= !(1 << (id & 63));
        }
        result
    }

    /// [`Worker::scan_store`] for a goal with at most 16 judged lemmas: blocks of 64 ids are
    /// compared with every judged id at once (packed equality compares, AVX2 when available) and
    /// their maximum proves them in range; only a block with a hit is looked at again.
    fn scan_store_few(&mut self, ids: &[u32], goal: &[u8], universe: u32) -> Result<(), EvalError> {
        let mut wanted = [u32::MAX; 16];
        for (w, &(id, _)) in wanted.iter_mut().zip(&self.judged) {
            *w = id;
        }
        let mut found = 0u32; // judged ids already ranked (a repeat counts once)
        let mut base = 0usize;
        for block in ids.chunks(64) {
            let (max, hit) = scan_block(block, &wanted[..self.judged.len()]);
            if max >= universe {
                let i = block
                    .iter()
                    .position(|&id| id >= universe)
                    .expect("the maximum is in the block");
                return Err(goal_error(
                    goal,
                    format!(
                        "rank {} holds lemma id {max}, beyond the {universe} lemmas of the store",
                        base + i + 1
                    ),
                ));
            }
            if hit {
                for (k, &id) in block.iter().enumerate() {
                    if let Some(j) = wanted.iter().position(|&w| w == id) {
                        if found & (1 << j) == 0 {
                            found |= 1 << j;
                            self.ranks.push(((base + k) as u64 + 1, self.judged[j].1));
                        }
                    }
                }
            }
            base += block.len();
        }
        Ok(())
    }

    /// The rank of each judged lemma in a dense row, without sorting it.
    fn rank_dense(
        &mut self,
        row: Row<'_>,
        lemmas: &[Vec<u8>],
        depth: u64,
        goal: &[u8],
    ) -> Result<(), EvalError> {
        let k = self.judged.len();
        let (mut gt, mut eq) = (vec![0u64; k], vec![0u64; k]);
        let nan = match row {
            Row::F32(r) => {
                let ts: Vec<f32> = self.judged.iter().map(|&(c, _)| r[c as usize]).collect();
                count_many(r, &ts, &mut gt, &mut eq);
                ts.iter().position(|t| t.is_nan())
            }
            Row::F64(r) => {
                let ts: Vec<f64> = self.judged.iter().map(|&(c, _)| r[c as usize]).collect();
                count_many(r, &ts, &mut gt, &mut eq);
                ts.iter().position(|t| t.is_nan())
            }
        };
        if let Some(j) = nan {
            return Err(goal_error(
                goal,
                format!(
                    "the score of lemma `{}` is NaN",
                    show(&lemmas[self.judged[j].0 as usize])
                ),
            ));
        }
        for j in 0..k {
            let (col, grade) = self.judged[j];
            // Equal scores: lemmas with a greater name (bytes) rank above (trec_eval's rule).
            let mut rank = gt[j] + 1;
            if eq[j] > 1 {
                let name = &lemmas[col as usize];
                rank += match row {
                    Row::F32(r) => tied_above(r, r[col as usize], col, name, lemmas),
                    Row::F64(r) => tied_above(r, r[col as usize], col, name, lemmas),
                };
            }
            if rank <= depth {
                self.ranks.push((rank, grade));
            }
        }
        Ok(())
    }
}

/// The maximum of a block of ids and whether any equals one of `wanted`.
fn scan_block(block: &[u32], wanted: &[u32]) -> (u32, bool) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { scan_block_avx2(block, wanted) };
        }
    }
    scan_block_portable(block, wanted)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan_block_avx2(block: &[u32], wanted: &[u32]) -> (u32, bool) {
    scan_block_portable(block, wanted)
}

#[inline(always)]
fn scan_block_portable(block: &[u32], wanted: &[u32]) -> (u32, bool) {
    if let Ok(b) = <&[u32; 64]>::try_from(block) {
        // Lane-wise accumulators, reduced once: the compiler keeps them in vector registers.
        let (mut max, mut acc) = ([0u32; 64], [0u32; 64]);
        max.copy_from_slice(b);
        for &w in wanted {
            for k in 0..64 {
                acc[k] |= (b[k] == w) as u32;
            }
        }
        return (
            max.iter().copied().fold(0, u32::max),
            acc.iter().fold(0, |x, &y| x | y) != 0,
        );
    }
    let max = block.iter().copied().fold(0u32, u32::max);
    let any = block.iter().any(|id| wanted.contains(id));
    (max, any)
}

/// For each threshold `ts[j]`: how many scores of `row` are greater (`gt[j]`) and equal (`eq[j]`).
/// The row is walked in L1-sized chunks, every threshold counted per chunk; the inner loop is packed
/// compares and adds (AVX2 when the CPU has it, chosen at run time; SSE2 otherwise).
fn count_many<T: Score>(row: &[T], ts: &[T], gt: &mut [u64], eq: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            unsafe { count_many_avx2(row, ts, gt, eq) };
            return;
        }
    }
    count_many_portable(row, ts, gt, eq)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn count_many_avx2<T: Score>(row: &[T], ts: &[T], gt: &mut [u64], eq: &mut [u64]) {
    count_many_portable(row, ts, gt, eq)
}

#[inline(always)]
fn count_many_portable<T: Score>(row: &[T], ts: &[T], gt: &mut [u64], eq: &mut [u64]) {
    for chunk in row.chunks(4096) {
        // Four thresholds per pass: each loaded score serves eight compares.
        let mut j = 0;
        while j + 4 <= ts.len() {
            let (t0, t1, t2, t3) = (ts[j], ts[j + 1], ts[j + 2], ts[j + 3]);
            let (mut g, mut e) = ([0u32; 4], [0u32; 4]);
            for &s in chunk {
                g[0] += (s > t0) as u32;
                g[1] += (s > t1) as u32;
                g[2] += (s > t2) as u32;
                g[3] += (s > t3) as u32;
                e[0] += (s == t0) as u32;
                e[1] += (s == t1) as u32;
                e[2] += (s == t2) as u32;
                e[3] += (s == t3) as u32;
            }
            for k in 0..4 {
                gt[j + k] += g[k] as u64;
                eq[j + k] += e[k] as u64;
            }
            j += 4;
        }
        for (k, &t) in ts.iter().enumerate().skip(j) {
            let (mut g, mut e) = (0u32, 0u32);
            for &s in chunk {
                g += (s > t) as u32;
                e += (s == t) as u32;
            }
            gt[k] += g as u64;
            eq[k] += e as u64;
        }
    }
}

/// Scores that can be counted with vectorisable passes.
trait Score: Copy + PartialOrd {}
impl Score for f32 {}
impl Score for f64 {}

/// Among columns whose score equals `t`, how many have a name greater than `name`.
fn tied_above<T: Score>(row: &[T], t: T, col: u32, name: &[u8], lemmas: &[Vec<u8>]) -> u64 {
    row.iter()
        .enumerate()
        .filter(|&(k, &s)| s == t && k as u32 != col && lemmas[k].as_slice() > name)
        .count() as u64
}

fn graded(truth: &GoalTruth) -> Truth<'_> {
    Truth::graded(&truth.grades_desc).expect("grades are stored sorted")
}

/// Closes a window when dropped (on every exit path of the collector).
struct CloseOnDrop<'a>(&'a Window);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Evaluates every goal of `source` against `actual`. Rows (when asked for) come in the source's
/// goal order, then the actual goals the source does not have (evaluated as empty, or skipped per
/// `--missing`).
pub fn evaluate_full(
    actual: &ActualSets,
    source: &Source<'_>,
    opts: &EvalOptions,
    mut rows: Option<&mut dyn FnMut(GoalRow) -> std::io::Result<()>>,
) -> Result<(Summary, Report), EvalError> {
    let started = Instant::now();
    let plan = plan_for(opts);
    // Actual lemma ids -> source ids, by name: one pass over the source's names, each looked up
    // in the (small) interner of the actual sets; no table over the whole universe is built.
    let mut to_source = vec![u32::MAX; actual.lemmas.len()];
    let source_names: Box<dyn Iterator<Item = (u32, &[u8])>> = match source {
        Source::Store(store) => {
            Box::new((0..store.lemmas() as u32).map(|id| (id, store.lemma_name(id))))
        }
        Source::Dense { lemmas, .. } => Box::new(
            lemmas
                .iter()
                .enumerate()
                .map(|(c, n)| (c as u32, n.as_slice())),
        ),
    };
    for (sid, name) in source_names {
        if let Some(aid) = actual.lemmas.get(name) {
            if to_source[aid as usize] != u32::MAX {
                return Err(goal_error(
                    b"",
                    format!(
                        "lemma `{}` appears twice among the ranked lemma names",
                        show(name)
                    ),
                ));
            }
            to_source[aid as usize] = sid;
        }
    }
    let goals = source.goals();
    // About 64k entries a chunk: small goals are batched, full-library goals go one at a time.
    let per_goal = (source.bytes() / 4 / goals.max(1) as u64).max(1);
    let chunk = (65_536 / per_goal).clamp(1, 64) as usize;
    let chunks = goals.div_ceil(chunk);
    let threads = opts.threads.max(1);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let window = Window::new(4 * threads as u64 + 4);
    let want_rows = rows.is_some();
    let (tx, rx) = sync_channel::<ChunkResult>(threads * 2);
    let mut summary = Summary::new(&plan);
    let mut seen = vec![false; actual.goals.len()];
    let mut entries = 0u64;
    let mut first_error = None;
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, stop, plan, to_source, window) = (&next, &stop, &plan, &to_source, &window);
            scope.spawn(move || {
                let mut w = Worker {
                    actual,
                    opts,
                    source,
                    to_source,
                    acc: GoalAccumulator::new(plan.clone()),
                    bits: vec![0; source.universe().div_ceil(64) + 1],
                    ranks: Vec::new(),
                    judged: Vec::new(),
                    want_rows,
                };
                loop {
                    let c = next.fetch_add(1, Ordering::Relaxed);
                    if c >= chunks || stop.load(Ordering::Relaxed) {
                        break;
                    }
                    window.wait_for(c as u64);
                    let mut res = ChunkResult {
                        index: c,
                        summary: Summary::new(plan),
                        rows: if want_rows {
                            Vec::with_capacity(chunk)
                        } else {
                            Vec::new()
                        },
                        seen: Vec::new(),
                        entries: 0,
                        error: None,
                    };
                    let mut s = Summary::new(plan);
                    for g in c * chunk..((c + 1) * chunk).min(goals) {
                        if let Err(e) = w.goal(g, &mut s, &mut res) {
                            res.error = Some(e);
                            break;
                        }
                    }
                    res.summary = s;
                    if tx.send(res).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        // When the collector stops early (an error), producers waiting on the window must go.
        let _close = CloseOnDrop(&window);
        // Collector: merge in chunk order (rows in goal order).
        let mut pending: BTreeMap<usize, ChunkResult> = BTreeMap::new();
        let mut expect = 0;
        for res in rx.iter() {
            pending.insert(res.index, res);
            while let Some(mut r) = pending.remove(&expect) {
                expect += 1;
                window.advance(expect as u64);
                if first_error.is_some() {
                    continue;
                }
                if let Some(e) = r.error.take() {
                    first_error = Some(e);
                    stop.store(true, Ordering::Relaxed);
                    continue;
                }
                summary.merge(&r.summary).expect("same plan");
                entries += r.entries;
                for gid in r.seen {
                    seen[gid as usize] = true;
                }
                if let Some(sink) = rows.as_mut() {
                    for row in r.rows {
                        if let Err(e) = sink(row) {
                            first_error = Some(EvalError::Sink(e));
                            stop.store(true, Ordering::Relaxed);
                            break;
                        }
                    }
                }
            }
        }
    });
    if let Some(e) = first_error {
        return Err(e);
    }
    // Actual goals the source never ranked.
    evaluate_unseen(
        actual,
        &plan,
        opts,
        |gid| seen[gid],
        Some(source.universe() as u64),
        &mut summary,
        &mut rows,
    )?;
    let report = Report {
        lines: entries,
        bytes: source.bytes(),
        items: entries,
        goals_in_predictions: goals as u64,
        elapsed: started.elapsed(),
        threads,
        ..Report::default()
    };
    Ok((summary, report))
}
