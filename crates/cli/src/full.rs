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

use crate::engine::{plan_for, EvalError, EvalOptions, GoalRow, MissingMode, Report, ZeroRelMode};
use lemma_accum::{GoalAccumulator, GoalFate, Summary, Truth};
use lemma_ingest::{
    show, ActualSets, ErrorKind, GoalTruth, InputError, Interner, Matrix, Row, Store,
};
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
        lemmas: &'a Interner,
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

    /// One pass over a store ranking: the ranks of the judged ids.
    fn scan_store(&mut self, ids: &[u32], goal: &[u8]) -> Result<(), EvalError> {
        let universe = self.source.universe() as u32;
        for &(id, _) in &self.judged {
            self.bits[(id >> 6) as usize] |= 1 << (id & 63);
        }
        let mut bad = None;
        for (i, &id) in ids.iter().enumerate() {
            if id >= universe {
                bad = Some((i, id));
                break;
            }
            if (self.bits[(id >> 6) as usize] >> (id & 63)) & 1 != 0 {
                // First occurrence only: a repeated id (a corrupt store) counts once.
                self.bits[(id >> 6) as usize] &= !(1 << (id & 63));
                let grade = self.judged.iter().find(|e| e.0 == id).map_or(1, |e| e.1);
                self.ranks.push((i as u64 + 1, grade));
            }
        }
        for &(id, _) in &self.judged {
            self.bits[(id >> 6) as usize] &= !(1 << (id & 63));
        }
        if let Some((i, id)) = bad {
            return Err(goal_error(
                goal,
                format!(
                    "rank {} holds lemma id {id}, beyond the {universe} lemmas of the store",
                    i + 1
                ),
            ));
        }
        Ok(())
    }

    /// The rank of each judged lemma in a dense row, without sorting it.
    fn rank_dense(
        &mut self,
        row: Row<'_>,
        lemmas: &Interner,
        depth: u64,
        goal: &[u8],
    ) -> Result<(), EvalError> {
        for k in 0..self.judged.len() {
            let (col, grade) = self.judged[k];
            let (above, ties) = match row {
                Row::F32(r) => count_above(r, r[col as usize]),
                Row::F64(r) => count_above(r, r[col as usize]),
            };
            let Some(above) = above else {
                return Err(goal_error(
                    goal,
                    format!("the score of lemma `{}` is NaN", show(lemmas.name(col))),
                ));
            };
            // Equal scores: lemmas with a greater name (bytes) rank above (trec_eval's rule).
            let mut rank = above + 1;
            if ties > 1 {
                let name = lemmas.name(col);
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

/// Scores that can be counted with vectorisable passes.
trait Score: Copy + PartialOrd {
    fn is_nan(self) -> bool;
}
impl Score for f32 {
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
}
impl Score for f64 {
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
}

/// `(number of scores greater than t, number equal to t)`; `None` if `t` is NaN.
#[inline]
fn count_above<T: Score>(row: &[T], t: T) -> (Option<u64>, u64) {
    if t.is_nan() {
        return (None, 0);
    }
    // Branch-free counting in chunks: compiles to packed compares and adds.
    let (mut gt, mut eq) = (0u64, 0u64);
    for chunk in row.chunks(4096) {
        let (mut g, mut e) = (0u32, 0u32);
        for &s in chunk {
            g += (s > t) as u32;
            e += (s == t) as u32;
        }
        gt += g as u64;
        eq += e as u64;
    }
    (Some(gt), eq)
}

/// Among columns whose score equals `t`, how many have a name greater than `name`.
fn tied_above<T: Score>(row: &[T], t: T, col: u32, name: &[u8], lemmas: &Interner) -> u64 {
    row.iter()
        .enumerate()
        .filter(|&(k, &s)| s == t && k as u32 != col && lemmas.name(k as u32) > name)
        .count() as u64
}

fn graded(truth: &GoalTruth) -> Truth<'_> {
    Truth::graded(&truth.grades_desc).expect("grades are stored sorted")
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
    // Actual lemma ids -> source ids, by name.
    let to_source: Vec<u32> = match source {
        Source::Store(store) => {
            let mut index = Interner::new();
            for id in 0..store.lemmas() as u32 {
                index.intern(store.lemma_name(id));
            }
            (0..actual.lemmas.len() as u32)
                .map(|id| index.get(actual.lemmas.name(id)).unwrap_or(u32::MAX))
                .collect()
        }
        Source::Dense { lemmas, .. } => (0..actual.lemmas.len() as u32)
            .map(|id| lemmas.get(actual.lemmas.name(id)).unwrap_or(u32::MAX))
            .collect(),
    };
    let goals = source.goals();
    let chunk = match source {
        Source::Store(_) => 16,
        Source::Dense { .. } => 1,
    };
    let chunks = goals.div_ceil(chunk);
    let threads = opts.threads.max(1);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let want_rows = rows.is_some();
    let (tx, rx) = sync_channel::<ChunkResult>(threads * 2);
    let mut summary = Summary::new(&plan);
    let mut seen = vec![false; actual.goals.len()];
    let mut entries = 0u64;
    let mut first_error = None;
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, stop, plan, to_source) = (&next, &stop, &plan, &to_source);
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
        // Collector: merge in chunk order (rows in goal order).
        let mut pending: BTreeMap<usize, ChunkResult> = BTreeMap::new();
        let mut expect = 0;
        for res in rx.iter() {
            pending.insert(res.index, res);
            while let Some(mut r) = pending.remove(&expect) {
                expect += 1;
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
    let mut acc = GoalAccumulator::new(plan.clone());
    for (gid, &was_seen) in seen.iter().enumerate() {
        if was_seen {
            continue;
        }
        let truth = &actual.truths[gid];
        let t = graded(truth).with_universe(source.universe() as u64);
        if t.counts(opts.relevance_level).0 == 0 && opts.zero_rel == ZeroRelMode::Skip {
            summary.skip(GoalFate::SkippedNoRelevant);
            continue;
        }
        if opts.missing == MissingMode::Skip {
            summary.skip(GoalFate::SkippedNoPredictions);
            continue;
        }
        let goal = actual.goals.name(gid as u32);
        let values = acc
            .evaluate_ranks(&t, 0, [])
            .map_err(|error| EvalError::Goal {
                goal: show(goal),
                error,
            })?;
        summary.add_empty(&values);
        if let Some(sink) = rows.as_mut() {
            sink(GoalRow {
                goal: goal.to_vec(),
                values: values.values().to_vec(),
                empty: true,
            })
            .map_err(EvalError::Sink)?;
        }
    }
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
