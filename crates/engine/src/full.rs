//! Full-library rankings: the binary store and dense score matrices, evaluated on all cores.
//!
//! Both paths reduce a goal to the ranks of its judged lemmas, then call the accumulator's
//! ranks-only entry point, which costs O(judged) whatever the ranking's length:
//!
//! - **store**: one pass over the goal's `u32` ids, blocks of 64 compared (packed) with the judged
//!   ids not found yet (more than 16 judged: a bitset over the universe, 25 KB for 200,000
//!   lemmas); the pass stops once every judged lemma has its rank, since the rest of the ranking
//!   cannot change a measure;
//! - **dense**: for each judged lemma, the number of lemmas that outrank it (score greater, or
//!   equal with a name greater in bytes: METRICS.md §2's rule), counted in one pass over the row
//!   in L1-sized blocks; a block whose maximum is below a judged lemma's score costs that lemma
//!   nothing (`ranking::dense`). No row is sorted.
//!
//! Goals are handed to worker threads in chunks by an atomic counter; each chunk's per-goal rows
//! and partial summary go to the collector through a bounded channel and are merged in chunk
//! order, so the output is the same for any number of threads, and a slow writer cannot make
//! memory grow. A worker drops a chunk's mapped pages when done with it, so resident file pages
//! stay at the chunks in flight and unmapping costs nothing at the end.

use crate::outcome::{record_goal, truth_of, Predicted};
use crate::premise::columns::{Access, Columns};
use crate::ranking::dense::{self, Score};
use crate::sink::Sink;
use crate::{plan_for, EvalError, EvalOptions, GoalRow, Report, TieMode};
use lemma_accum::{GoalAccumulator, GoalFate, Origin, Plan, Summary};
use lemma_ingest::{show, ActualSets, ErrorKind, InputError, Matrix, Names, Row, RowBuf, Store};
use lemma_par::{Ordered, OrderedJob, Window, Work};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Where per-goal rankings come from.
pub enum Source<'a> {
    /// A binary store.
    Store(&'a Store),
    /// A dense matrix with its goal names (rows) and lemma names (columns; ids are column numbers).
    Dense {
        /// The scores.
        matrix: &'a Matrix,
        /// Goal names, one per row.
        goals: &'a Names,
        /// Lemma names, one per column.
        lemmas: &'a Names,
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
            Source::Dense { goals, .. } => goals.get(g),
        }
    }
    pub(crate) fn universe(&self) -> usize {
        match self {
            Source::Store(s) => s.lemmas(),
            Source::Dense { matrix, .. } => matrix.cols(),
        }
    }
    pub(crate) fn path(&self) -> &std::path::Path {
        match self {
            Source::Store(s) => s.path(),
            Source::Dense { matrix, .. } => matrix.path(),
        }
    }
    fn bytes(&self) -> u64 {
        match self {
            Source::Store(s) => s.block_bytes(),
            Source::Dense { matrix, .. } => matrix.data_bytes(),
        }
    }
    /// An error if the mapped file changed while it was read.
    fn check_unchanged(&self) -> Result<(), InputError> {
        match self {
            Source::Store(s) => s.check_unchanged(),
            Source::Dense { matrix, .. } => matrix.check_unchanged(),
        }
    }
}

/// A chunk's output.
struct ChunkResult {
    summary: Summary,
    rows: Vec<GoalRow>,
    /// Goal ids of the actual sets that this chunk saw.
    seen: Vec<u32>,
    entries: u64,
    /// Entries actually read (a store scan stops once every judged lemma is found).
    scanned: u64,
    /// What the premise protocol met (with a corpus).
    premises: crate::PremiseReport,
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
    /// Each judged lemma's rank, grade and id in the source.
    ranks: Vec<(u64, i32, u32)>,
    judged: Vec<(u32, i32)>,
    /// Under `--ties group`: each judged lemma's tie group `(items above it, items of its score)`,
    /// its grade and id.
    groups: Vec<(u64, u64, i32, u32)>,
    /// With the origin measures: the origin of each judged lemma the corpus defines, by id in the
    /// source.
    origin_of: Vec<(u32, Origin)>,
    /// Whether the plan reads origins (`R(origin=...)@k`).
    origins: bool,
    want_rows: bool,
    /// Store entries actually read (a scan stops once every judged lemma is found).
    scanned: u64,
    /// A big-endian matrix's row, byte-swapped.
    rowbuf: RowBuf,
    /// With a corpus: the source's ids against it, and the goal's accessible ids.
    columns: Option<&'a Columns>,
    access: Access,
    /// The unmasked ranking's head (inaccessible or not, in rank order) and the rank of its
    /// first inaccessible lemma, for the leak measures; the head's columns (matrix).
    head: Vec<bool>,
    first_leak: Option<u64>,
    top: Vec<u32>,
    /// Every column (a matrix's unmasked count that selects the head too).
    ones: Vec<u64>,
}

/// `e`, naming `path` if it names no file (a goal's error, found where the path is not known).
fn in_file(e: EvalError, path: &std::path::Path) -> EvalError {
    match e {
        EvalError::Input(mut ie) if ie.path.as_os_str().is_empty() => {
            ie.path = path.to_path_buf();
            EvalError::Input(ie)
        }
        e => e,
    }
}

fn goal_error(goal: &[u8], message: String) -> EvalError {
    syntax_error(format!("goal `{}`: {message}", show(goal)))
}

/// An input error of no file whose message says it all (it names the goal).
fn syntax_error(message: String) -> EvalError {
    EvalError::Input(InputError::file(
        ErrorKind::Syntax,
        std::path::Path::new(""),
        message,
    ))
}

/// The origin of the judged lemma of source id `id` among a goal's `(id, origin)` (a handful):
/// `None` for one the corpus does not define.
fn origin_by_id(origin_of: &[(u32, Origin)], id: u32) -> Option<Origin> {
    origin_of.iter().find(|e| e.0 == id).map(|e| e.1)
}

/// The error for a block of a store ranking (starting at rank `base + 1`) that holds an id
/// outside the store's lemma table: the first such id and its rank.
fn beyond_store(goal: &[u8], block: &[u32], base: usize, universe: u32) -> EvalError {
    let (i, id) = block
        .iter()
        .copied()
        .enumerate()
        .find(|&(_, id)| id >= universe)
        .expect("the block holds an id beyond the table");
    goal_error(
        goal,
        format!(
            "rank {} holds lemma id {id}, beyond the {universe} lemmas of the store",
            base + i + 1
        ),
    )
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
        let mut t = truth_of(truth, Some(self.source.universe() as u64));
        if self.opts.skips_no_relevant(&t) {
            chunk.seen.push(gid);
            summary.skip(GoalFate::SkippedNoRelevant);
            return Ok(());
        }
        // The origin measures: each judged premise's origin, the relevant ones counted.
        self.origin_of.clear();
        if let Some(p) = self.opts.premises.as_ref().filter(|_| self.origins) {
            let file = p.goal_file(name).map_err(|m| goal_error(name, m))?;
            let (lemmas, level) = (&self.actual.lemmas, self.opts.relevance_level);
            let mut counts = [0u64; 2];
            for (id, grade) in truth.entries() {
                let Some(o) = p.origin_of_name(file, lemmas.name(id)) else {
                    continue;
                };
                if grade >= level {
                    counts[o.index()] += 1;
                }
                if let Some(&sid) = self.to_source.get(id as usize).filter(|&&s| s != u32::MAX) {
                    self.origin_of.push((sid, o));
                }
            }
            t = t.with_origins(counts[0], counts[1]);
        }
        if let Source::Store(store) = self.source {
            if store.ranking(g).is_none() {
                return Ok(()); // no predictions: handled with the goals never seen
            }
        }
        if let Some(cols) = self.columns {
            let relevant =
                crate::feed::relevant_names(truth, &self.actual.lemmas, self.opts.relevance_level)
                    .map(|(_, name)| name);
            (self.access.begin(cols, name, relevant, &mut chunk.premises)).map_err(syntax_error)?;
        }
        // Under the mask, only the accessible ones are ranked.
        let masked = self.columns.is_some_and(Columns::masks) && self.access.placed;
        // The goal's judged lemmas in the source's id space.
        self.judged.clear();
        for (id, grade) in truth.entries() {
            let sid = self.to_source[id as usize];
            if sid != u32::MAX && (!masked || self.access.accessible(sid)) {
                self.judged.push((sid, grade));
            }
        }
        self.head.clear();
        self.first_leak = None;
        self.ranks.clear();
        self.groups.clear();
        let grouped = self.opts.ranking.ties == TieMode::Group;
        let depth = self.opts.ranking.depth.unwrap_or(u64::MAX);
        let n = match self.source {
            Source::Store(store) => {
                let Some((ids, scores)) = store.ranking(g) else {
                    return Ok(()); // no predictions: handled with the goals never seen
                };
                chunk.seen.push(gid);
                chunk.entries += ids.len() as u64;
                if let Some(cols) = self
                    .columns
                    .filter(|c| self.access.placed || !c.unknown().is_empty())
                {
                    if grouped && masked {
                        return Err(goal_error(
                            name,
                            "--ties group and --mask accessible: a store's tie groups are not \
                             masked (evaluate the predictions, or --ties trec)"
                                .into(),
                        ));
                    }
                    let n = self.scan_store_premises(ids, name, cols, depth, masked, chunk)?;
                    if grouped {
                        self.store_groups(scores, name)?;
                    }
                    n
                } else {
                    let n = (ids.len() as u64).min(depth) as usize;
                    // Tie groups: every judged lemma's group, to refuse a depth that cuts one.
                    self.scan_store(if grouped { ids } else { &ids[..n] }, name)?;
                    if grouped {
                        self.store_groups(scores, name)?;
                    }
                    n as u64
                }
            }
            Source::Dense { matrix, lemmas, .. } => {
                chunk.seen.push(gid);
                let mut buf = std::mem::take(&mut self.rowbuf);
                let row = matrix.row_in(g, &mut buf);
                let ranked = self.rank_dense(row, lemmas, depth, name, masked);
                self.rowbuf = buf;
                ranked?;
                let cols = matrix.cols() as u64;
                self.scanned += cols;
                chunk.entries += cols;
                if let Some(c) = self.columns {
                    self.dense_premises(c, name, lemmas, masked, &mut chunk.premises)?;
                }
                if masked {
                    self.access.count.min(depth)
                } else {
                    cols.min(depth)
                }
            }
        };
        let want_rows = self.want_rows;
        if grouped {
            if let Some(&(above, size, _, _)) =
                self.groups.iter().find(|&&(a, g, _, _)| a < n && a + g > n)
            {
                return Err(goal_error(
                    name,
                    format!(
                        "--depth {n} cuts the tie group at ranks {}..={}, which holds a judged \
                         lemma: which of its lemmas are evaluated would depend on their order",
                        above + 1,
                        above + size
                    ),
                ));
            }
        }
        let values = if grouped {
            self.by_groups(&t, n)
        } else {
            self.ranks.sort_unstable();
            let origin = |id: u32| origin_by_id(&self.origin_of, id);
            self.acc.evaluate_ranks_from(
                &t,
                n,
                (self.ranks.iter()).map(|&(rank, grade, id)| (rank, grade, origin(id))),
                &self.head,
                self.first_leak,
            )
        };
        if let Err(lemma_accum::GoalError::UniverseTooSmall { universe, .. }) = values {
            return Err(self.outside_universe(name, truth, n, universe));
        }
        let rows = want_rows.then_some(&mut chunk.rows);
        record_goal(summary, rows, name, values)
    }

    /// The error of goal `name` (actual set `truth`), `n` of the source's `universe` lemmas
    /// ranked, whose relevant lemmas that are none of them (never found) are too many for the
    /// rest: the universe holds the ranked and relevant lemmas (docs/METRICS.md, `AUC`). Names
    /// the least such lemma by name.
    fn outside_universe(
        &self,
        name: &[u8],
        truth: lemma_ingest::GoalTruth<'_>,
        n: u64,
        universe: u64,
    ) -> EvalError {
        let lemmas = &self.actual.lemmas;
        // How many, and the least by name, in one pass.
        let (count, least) = (truth.entries())
            .filter(|&(id, g)| {
                g >= self.opts.relevance_level && self.to_source[id as usize] == u32::MAX
            })
            .map(|(id, _)| lemmas.name(id))
            .fold((0usize, None::<&[u8]>), |(n, least), name| {
                (n + 1, Some(least.map_or(name, |l| l.min(name))))
            });
        let where_ = match self.source {
            Source::Store(_) => "the store's lemma table",
            Source::Dense { .. } => "the matrix's columns",
        };
        let Some(least) = least else {
            return goal_error(
                name,
                format!("{universe} lemmas in {where_}: fewer than it ranks and judges"),
            );
        };
        goal_error(
            name,
            format!(
                "relevant lemma `{}` is not among the {universe} lemmas of {where_} ({} of the \
                 goal's relevant lemmas are not): with the {n} it ranks, the goal counts more \
                 lemmas than they hold, and they are the universe its measures count in (AUC's); \
                 add the lemmas to them, or rank fewer (--depth N)",
                show(least),
                count
            ),
        )
    }

    /// One pass over a store ranking: the ranks of the judged ids. Blocks of 16 ids: their
    /// maximum (vectorised) proves every id in range, then each id is one bit test in a bitset
    /// that stays in cache; only a block with a hit is looked at again. The pass stops when
    /// every judged lemma has its rank.
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
                result = Err(beyond_store(goal, block, base, universe));
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
                        self.ranks.push(((base + k) as u64 + 1, grade, id));
                    }
                }
            }
            base += block.len();
            if self.ranks.len() == self.judged.len() {
                break; // every judged lemma has its rank
            }
        }
        self.scanned += base as u64;
        for &(id, _) in &self.judged {
            self.bits[(id >> 6) as usize] &= !(1 << (id & 63));
        }
        result
    }

    /// [`Worker::scan_store`] for a goal with at most 16 judged lemmas: blocks of 64 ids are
    /// compared with every judged id not found yet (packed equality compares, AVX2 when
    /// available) and their maximum proves them in range; only a block with a hit is looked at
    /// again. A found id leaves the compared set, so the scan gets cheaper as it goes, and it
    /// stops when every judged lemma has its rank: what follows cannot change any measure (ids
    /// after that point are not range-checked; `lemma-eval verify` checks the whole store).
    fn scan_store_few(&mut self, ids: &[u32], goal: &[u8], universe: u32) -> Result<(), EvalError> {
        // The judged ids not found yet, and their index in `self.judged`.
        let mut wanted = [u32::MAX; 16];
        let mut which = [0usize; 16];
        let mut live = self.judged.len();
        for (j, &(id, _)) in self.judged.iter().enumerate() {
            (wanted[j], which[j]) = (id, j);
        }
        let mut base = 0usize;
        for block in ids.chunks(64) {
            if live == 0 {
                break;
            }
            let (max, hit) = scan_block(block, &wanted[..live]);
            if max >= universe {
                return Err(beyond_store(goal, block, base, universe));
            }
            if hit {
                for (k, &id) in block.iter().enumerate() {
                    // First occurrence only: a found id is no longer wanted, so a repeat (a
                    // corrupt store) counts once.
                    if let Some(w) = wanted[..live].iter().position(|&x| x == id) {
                        self.ranks
                            .push(((base + k) as u64 + 1, self.judged[which[w]].1, id));
                        live -= 1;
                        wanted.swap(w, live);
                        which.swap(w, live);
                    }
                }
            }
            base += block.len();
        }
        self.scanned += base as u64;
        Ok(())
    }

    /// The rank of each judged lemma in a dense row, without sorting it.
    /// Under `--ties group`, the tie groups of a store ranking's judged lemmas (found by
    /// [`Worker::scan_store`] at their ranks): the run of equal scores around each, in a ranking
    /// that must be in score order.
    fn store_groups(&mut self, scores: Option<&[f32]>, goal: &[u8]) -> Result<(), EvalError> {
        let Some(scores) = scores else {
            return Err(goal_error(
                goal,
                "--ties group needs the store's scores (convert writes them; gen --scores)".into(),
            ));
        };
        if scores.windows(2).any(|w| w[1] > w[0]) {
            return Err(goal_error(
                goal,
                "--ties group needs a store ranking in score order (converted with --order score)"
                    .into(),
            ));
        }
        for &(rank, grade, id) in &self.ranks {
            let s = scores[rank as usize - 1];
            let above = scores.partition_point(|&x| x > s) as u64;
            let equal = scores.partition_point(|&x| x >= s) as u64 - above;
            self.groups.push((above, equal, grade, id));
        }
        Ok(())
    }

    /// Evaluates a goal from the tie groups of its judged lemmas: the stretches between them (no
    /// judged lemma) as groups of their own, each group whole (the caller has refused a depth that
    /// cuts a group holding a judged lemma).
    fn by_groups(
        &mut self,
        t: &lemma_accum::Truth<'_>,
        n: u64,
    ) -> Result<lemma_accum::GoalValues<'_>, lemma_accum::GoalError> {
        self.groups.sort_unstable();
        self.acc.begin(t);
        self.acc.set_unmasked(&self.head, self.first_leak);
        let mut pos = 0u64;
        let mut grades: Vec<i32> = Vec::new();
        let mut origins: Vec<Option<Origin>> = Vec::new();
        let mut i = 0;
        while i < self.groups.len() {
            let (above, size, _, _) = self.groups[i];
            grades.clear();
            origins.clear();
            while i < self.groups.len() && self.groups[i].0 == above {
                grades.push(self.groups[i].2);
                origins.push(origin_by_id(&self.origin_of, self.groups[i].3));
                i += 1;
            }
            if above >= n {
                break;
            }
            if above > pos {
                self.acc.push_group(above - pos, &[])?;
            }
            self.acc.push_group_from(size, &grades, &origins)?;
            pos = above + size;
        }
        if n > pos {
            self.acc.push_group(n - pos, &[])?;
        }
        self.acc.finish()
    }

    fn rank_dense(
        &mut self,
        row: Row<'_>,
        lemmas: &Names,
        depth: u64,
        goal: &[u8],
        masked: bool,
    ) -> Result<(), EvalError> {
        match row {
            Row::F32(r) => self.rank_dense_in(r, lemmas, depth, goal, masked),
            Row::F64(r) => self.rank_dense_in(r, lemmas, depth, goal, masked),
        }
    }

    fn rank_dense_in<T: Score>(
        &mut self,
        row: &[T],
        lemmas: &Names,
        depth: u64,
        goal: &[u8],
        masked: bool,
    ) -> Result<(), EvalError> {
        let ties = self.opts.ranking.ties;
        let plan = self.acc.plan();
        let leaks = self.access.placed && plan.needs_leaks();
        // The unmasked head the leak measures read: selected in the counting pass (at least 16
        // with `LeakRank`, whose lemma is then found there most of the time).
        let len = (row.len() as u64).min(depth);
        let k = if leaks {
            let k = plan.max_leak_cutoff();
            let k = if plan.needs_leak_rank() { k.max(16) } else { k };
            k.min(len) as usize
        } else {
            0
        };
        if leaks && !masked && self.ones.len() < row.len().div_ceil(64) {
            self.ones.resize(row.len().div_ceil(64), u64::MAX);
        }
        let mask = if masked {
            Some(&self.access.bits[..])
        } else if leaks {
            Some(&self.ones[..])
        } else {
            None
        };
        let mut select = leaks.then(|| dense::Select::new(row, lemmas, k, &mut self.top));
        let (ranks, groups) = (&mut self.ranks, &mut self.groups);
        let judged = &mut self.judged;
        dense::rank_judged(
            row,
            judged,
            lemmas,
            ties,
            depth,
            mask,
            select.as_mut(),
            ranks,
            groups,
        )
        .map_err(|col| {
            goal_error(
                goal,
                format!(
                    "the score of lemma `{}` is NaN",
                    show(lemmas.get(col as usize))
                ),
            )
        })?;
        if let Some(s) = select {
            s.finish();
            self.dense_leaks(row, lemmas, len, k);
        }
        Ok(())
    }
}

impl<'a> Worker<'a> {
    /// What the leak measures read of a dense row's unmasked ranking (`len` long, cut at the
    /// depth): the accessibility of its first `k` lemmas (selected by the counting pass in
    /// `top`), and when none of them is inaccessible, the rank of the best inaccessible lemma
    /// (1 + the accessible lemmas that outrank it).
    fn dense_leaks<T: Score>(&mut self, row: &[T], lemmas: &Names, len: u64, k: usize) {
        let plan = self.acc.plan();
        self.head.clear();
        self.head
            .extend(self.top.iter().map(|&c| !self.access.accessible(c)));
        self.first_leak = self.head.iter().position(|&b| b).map(|i| i as u64 + 1);
        if self.first_leak.is_none() && plan.needs_leak_rank() && (k as u64) < len {
            self.first_leak =
                dense::best_outside(row, &self.access.bits, lemmas).filter(|&r| r <= len);
        }
    }

    /// Counts a dense goal's lemmas that the corpus does not define (every column of them; an
    /// error under `--strict`) and, under the mask, the lemmas masked.
    fn dense_premises(
        &self,
        cols: &Columns,
        goal: &[u8],
        lemmas: &Names,
        masked: bool,
        report: &mut crate::PremiseReport,
    ) -> Result<(), EvalError> {
        if let Some(&first) = cols.unknown().first() {
            if cols.strict() {
                return Err(goal_error(
                    goal,
                    cols.strict_error(lemmas.get(first as usize)),
                ));
            }
            let least = lemmas.get(cols.least_unknown().unwrap_or(first) as usize);
            cols.count_unknown(goal, cols.unknown().len() as u64, least, report);
        }
        if masked {
            report.masked += lemmas.len() as u64 - self.access.count;
        }
        Ok(())
    }

    /// A store ranking under the corpus: one pass over every entry (the masked ranking's length
    /// is the accessible entries'), each id one bit test in the goal's accessible ids. Gives the
    /// ranks of the judged ids (among accessible entries under the mask, cut at `depth`), the
    /// unmasked ranking's head and first inaccessible entry (leak measures), the entries the
    /// corpus does not define (an error under `--strict`) and those masked; returns the ranking's
    /// length.
    fn scan_store_premises(
        &mut self,
        ids: &[u32],
        goal: &[u8],
        cols: &Columns,
        depth: u64,
        masked: bool,
        chunk: &mut ChunkResult,
    ) -> Result<u64, EvalError> {
        let universe = self.source.universe() as u32;
        let placed = self.access.placed;
        let plan = self.acc.plan();
        let in_range = |id: u32| id < universe;
        // The unmasked ranking's head and first inaccessible entry (leak measures): prefixes.
        if placed && plan.needs_leaks() {
            let want = plan.max_leak_cutoff().min(depth) as usize;
            let access = &self.access;
            self.head.extend(
                ids.iter()
                    .take(want)
                    .map(|&id| !(in_range(id) && access.accessible(id))),
            );
            if plan.needs_leak_rank() {
                self.first_leak = ids
                    .iter()
                    .take(depth.min(ids.len() as u64) as usize)
                    .position(|&id| !(in_range(id) && access.accessible(id)))
                    .map(|i| i as u64 + 1);
            }
        }
        // The ids the corpus does not define (only when it lacks some of the store's names).
        if !cols.unknown().is_empty() {
            let mut unknown = ids
                .iter()
                .filter(|&&id| in_range(id) && cols.is_unknown(id));
            if let Some(&first) = unknown.next() {
                // Their count, and the least by name (the warnings' case, whatever the ranking).
                let (mut count, mut least) = (1u64, first);
                for &id in unknown {
                    count += 1;
                    if cols.unknown_rank(id) < cols.unknown_rank(least) {
                        least = id;
                    }
                }
                let least = self.source_name(least);
                let first = self.source_name(first);
                if cols.strict() {
                    return Err(goal_error(goal, cols.strict_error(first)));
                }
                cols.count_unknown(goal, count, least, &mut chunk.premises);
            }
        }
        for &(id, _) in &self.judged {
            self.bits[(id >> 6) as usize] |= 1 << (id & 63);
        }
        let result = if masked {
            self.scan_store_ranks::<true>(ids, goal, depth, universe)
        } else {
            self.scan_store_ranks::<false>(ids, goal, depth, universe)
        };
        for &(id, _) in &self.judged {
            self.bits[(id >> 6) as usize] &= !(1 << (id & 63));
        }
        let pos = result?;
        self.scanned += ids.len() as u64;
        if masked {
            chunk.premises.masked += ids.len() as u64 - pos;
        }
        Ok(pos.min(depth))
    }

    /// The pass of [`Worker::scan_store_premises`] over a whole ranking: blocks of 64 ids, whose
    /// maximum proves them in range; each id one bit test in the goal's accessible ids (`MASKED`)
    /// and one in the judged ids (`self.bits`), branch-free; a block with a judged id is walked
    /// again for its ranks. Returns the number of entries ranked (accessible ones when masked).
    fn scan_store_ranks<const MASKED: bool>(
        &mut self,
        ids: &[u32],
        goal: &[u8],
        depth: u64,
        universe: u32,
    ) -> Result<u64, EvalError> {
        let grouped = self.opts.ranking.ties == TieMode::Group;
        let (acc, judged_bits) = (&self.access.bits, &mut self.bits);
        let mut pos = 0u64;
        for (b, block) in ids.chunks(64).enumerate() {
            if block.iter().copied().fold(0u32, u32::max) >= universe {
                return Err(beyond_store(goal, block, b * 64, universe));
            }
            let (mut n, mut hit) = (0u64, 0u64);
            for &id in block {
                let (w, sh) = ((id >> 6) as usize, id & 63);
                // SAFETY: id < universe (the block's maximum), and both bitsets cover the
                // universe: the indexes are in bounds.
                unsafe {
                    n += if MASKED {
                        (*acc.get_unchecked(w) >> sh) & 1
                    } else {
                        1
                    };
                    hit |= (*judged_bits.get_unchecked(w) >> sh) & 1;
                }
            }
            if hit != 0 {
                let mut p = pos;
                for &id in block {
                    let ranked = !MASKED || (acc[(id >> 6) as usize] >> (id & 63)) & 1 == 1;
                    p += ranked as u64;
                    let bit = 1u64 << (id & 63);
                    let word = &mut judged_bits[(id >> 6) as usize];
                    if *word & bit != 0 {
                        // First occurrence only: a repeated id (a corrupt store) counts once.
                        *word &= !bit;
                        // Tie groups: every judged rank, to refuse a depth that cuts its group.
                        if ranked && (p <= depth || grouped) {
                            let grade = self.judged.iter().find(|e| e.0 == id).map_or(1, |e| e.1);
                            self.ranks.push((p, grade, id));
                        }
                    }
                }
            }
            pos += n;
        }
        Ok(pos)
    }

    /// The name of id `id` of the source.
    fn source_name(&self, id: u32) -> &'a [u8] {
        match self.source {
            Source::Store(s) => s.lemma_name(id),
            Source::Dense { lemmas, .. } => lemmas.get(id as usize),
        }
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

/// Scores per block: the unit whose maximum decides which thresholds it can affect (64 f32 scores
/// are eight AVX2 registers, 256 bytes).
/// The full-library pipeline as an ordered job: units are chunks of consecutive goals, handed out
/// by an atomic counter.
struct FullJob<'a> {
    actual: &'a ActualSets,
    opts: &'a EvalOptions,
    source: &'a Source<'a>,
    to_source: &'a [u32],
    columns: Option<&'a Columns>,
    plan: &'a Arc<Plan>,
    want_rows: bool,
    /// Goals a chunk.
    chunk: usize,
    chunks: usize,
    goals: usize,
    next: AtomicUsize,
}

impl<'a> Work for FullJob<'a> {
    type Worker = Worker<'a>;
    type Unit = ();
    type Output = ChunkResult;
    type Done = ();

    fn worker(&self) -> Worker<'a> {
        Worker {
            actual: self.actual,
            opts: self.opts,
            source: self.source,
            to_source: self.to_source,
            acc: GoalAccumulator::new(self.plan.clone()),
            bits: vec![0; self.source.universe().div_ceil(64) + 1],
            ranks: Vec::new(),
            judged: Vec::new(),
            groups: Vec::new(),
            origin_of: Vec::new(),
            origins: self.plan.needs_origins(),
            want_rows: self.want_rows,
            scanned: 0,
            rowbuf: RowBuf::default(),
            columns: self.columns,
            access: Access::default(),
            head: Vec::new(),
            first_leak: None,
            top: Vec::new(),
            ones: Vec::new(),
        }
    }

    fn run(&self, w: &mut Worker<'a>, index: u64, _: ()) -> ChunkResult {
        let c = index as usize;
        let mut res = ChunkResult {
            summary: Summary::new(self.plan),
            rows: if self.want_rows {
                Vec::with_capacity(self.chunk)
            } else {
                Vec::new()
            },
            seen: Vec::new(),
            entries: 0,
            scanned: 0,
            premises: crate::PremiseReport::default(),
            error: None,
        };
        let mut s = Summary::new(self.plan);
        let goals = c * self.chunk..((c + 1) * self.chunk).min(self.goals);
        for g in goals.clone() {
            if let Err(e) = w.goal(g, &mut s, &mut res) {
                res.error = Some(e);
                break;
            }
        }
        // Done with the chunk's rankings: unmapping their pages now, on this thread, spreads over
        // the workers what the final unmap would do alone.
        match self.source {
            Source::Store(store) => store.release(goals),
            Source::Dense { matrix, .. } => matrix.release(goals),
        }
        res.summary = s;
        res.scanned = std::mem::take(&mut w.scanned);
        res
    }

    fn failed(res: &ChunkResult) -> bool {
        res.error.is_some()
    }

    fn finish(&self, _: Worker<'a>) {}
}

impl<'a> OrderedJob for FullJob<'a> {
    fn next(&self, _: &mut Worker<'a>, window: &Window) -> Option<(u64, ())> {
        let c = self.next.fetch_add(1, Ordering::Relaxed);
        if c >= self.chunks {
            return None;
        }
        window.wait_for(c as u64);
        Some((c as u64, ()))
    }
}

/// Evaluates every goal of `source` against `actual`. Rows (when asked for) come in the source's
/// goal order, then the actual goals the source does not have (evaluated as empty, or skipped per
/// `--missing`).
pub fn evaluate_full(
    actual: &ActualSets,
    source: &Source<'_>,
    opts: &EvalOptions,
    rows: &mut dyn Sink,
) -> Result<(Summary, Report), EvalError> {
    predict(actual, source, opts, rows, None, None)?.finish(actual, &plan_for(opts), opts, rows)
}

/// Actual lemma ids -> source ids, by name: one pass over the source's names, each looked up in
/// the (small) interner of the actual sets; no table over the whole universe is built. A name
/// given to two of the source's lemmas is an error when the actual sets judge it.
pub(crate) fn source_ids(actual: &ActualSets, source: &Source<'_>) -> Result<Vec<u32>, EvalError> {
    match source {
        Source::Store(store) => name_ids(
            actual,
            (0..store.lemmas() as u32).map(|id| (id, store.lemma_name(id))),
        ),
        Source::Dense { lemmas, .. } => name_ids(
            actual,
            lemmas.iter().enumerate().map(|(c, n)| (c as u32, n)),
        ),
    }
}

/// With a corpus: the source's ids against it (built once, before the workers start).
pub(crate) fn options_columns(
    opts: &EvalOptions,
    plan: &Plan,
    source: &Source<'_>,
) -> Option<Columns> {
    let premises = opts.premises.clone()?;
    let leaks = plan.needs_leaks();
    Some(match source {
        Source::Store(s) => Columns::new(
            premises,
            (0..s.lemmas() as u32).map(|id| s.lemma_name(id)),
            leaks,
        ),
        Source::Dense { lemmas, .. } => Columns::new(premises, lemmas.iter(), leaks),
    })
}

/// [`source_ids`] of the source's `(id, name)` pairs.
pub(crate) fn name_ids<'n>(
    actual: &ActualSets,
    names: impl Iterator<Item = (u32, &'n [u8])>,
) -> Result<Vec<u32>, EvalError> {
    let mut to_source = vec![u32::MAX; actual.lemmas.len()];
    for (sid, name) in names {
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
    Ok(to_source)
}

/// [`evaluate_full`] but for the goals the source never ranked; `columns`: the source ids of the
/// actual sets' lemmas when known already ([`source_ids`]).
pub(crate) fn predict(
    actual: &ActualSets,
    source: &Source<'_>,
    opts: &EvalOptions,
    rows: &mut dyn Sink,
    columns: Option<&[u32]>,
    premise_columns: Option<&Columns>,
) -> Result<Predicted, EvalError> {
    let started = Instant::now();
    let plan = plan_for(opts);
    if plan.has_thresholds() {
        return Err(EvalError::Options(
            "score thresholds (SetP/SetR/SetF with threshold=) are evaluated on TREC runs and \
             JSONL only, not on stores and matrices"
                .into(),
        ));
    }
    if plan.pooled().is_some() {
        return Err(EvalError::Options(
            "the pooled curve is read from TREC runs and JSONL only, not from stores and matrices"
                .into(),
        ));
    }
    let computed;
    let to_source = match columns {
        Some(c) => c,
        None => {
            computed = source_ids(actual, source)?;
            &computed[..]
        }
    };
    // The source's ids against the corpus: given (built once for many pushes), or built here.
    let built;
    let columns = match premise_columns {
        Some(c) => Some(c),
        None => {
            built = options_columns(opts, &plan, source);
            built.as_ref()
        }
    };
    let goals = source.goals();
    // About 4 M entries a chunk (fewer hand-offs between threads): small goals are batched.
    let per_goal = (source.bytes() / 4 / goals.max(1) as u64).max(1);
    let chunk = ((1 << 22) / per_goal).clamp(1, 64) as usize;
    // At least four chunks a thread, so that the threads finish together.
    let threads = opts.threads.max(1);
    let chunk = chunk.min(goals.div_ceil(4 * threads)).max(1);
    let chunks = goals.div_ceil(chunk);
    let job = FullJob {
        actual,
        opts,
        source,
        to_source,
        columns,
        plan: &plan,
        want_rows: rows.wants_rows(),
        chunk,
        chunks,
        goals,
        next: AtomicUsize::new(0),
    };
    let mut summary = Summary::new(&plan);
    let mut seen = vec![false; actual.goals.len()];
    let mut entries = 0u64;
    let mut scanned = 0u64;
    let mut premises = crate::PremiseReport::default();
    let (_, collected) = Ordered::new(threads).run(&job, |mut r: ChunkResult| {
        if let Some(e) = r.error.take() {
            return Err(in_file(e, source.path()));
        }
        summary.merge(&r.summary).expect("same plan");
        entries += r.entries;
        scanned += r.scanned;
        premises.add(&r.premises);
        for gid in r.seen {
            seen[gid as usize] = true;
        }
        for row in r.rows {
            rows.row(row).map_err(EvalError::Sink)?;
        }
        Ok(())
    });
    // A file changed under its mapping is the error, whatever its bytes gave.
    source.check_unchanged()?;
    collected?;
    tracing::debug!(entries, scanned, "ranked entries, and how many were read");
    let report = Report {
        path: source.path().to_path_buf(),
        bytes: source.bytes(),
        items: entries,
        goals_in_predictions: goals as u64,
        elapsed: started.elapsed(),
        threads,
        premises,
        ..Report::default()
    };
    Ok(Predicted {
        summary,
        seen,
        universe: Some(source.universe() as u64),
        report,
    })
}
