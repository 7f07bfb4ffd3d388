//! Predictions and sorted qrels read together: a join, memory independent of the number of
//! goals.
//!
//! When the qrels' goals ascend ([`SortedQrels`]: checked in one pass and mapped, or sorted on
//! disk first) and the predictions' goals ascend in the same order, each batch of predictions
//! (whole goals, about 4 MiB) needs only the actual sets of the goals from its first to its last:
//! the worker finds their lines by binary search and reads them into actual sets of their own,
//! then evaluates the batch as the text pipeline does ([`crate::text`]). A batch whose goals lie
//! far apart in the qrels (its range holds more than four times as many goals, by the qrels' mean
//! bytes a goal) reads its own goals' lines alone. The goals of the qrels that the predictions
//! never rank (between batches, or within a batch's range) are noted (a byte range, or a name)
//! and evaluated at the end, in qrels order, as the held pipeline does: a merge join. They are
//! read a chunk at a time on threads of their own, ahead of their evaluation.
//!
//! Predictions whose goals leave that order (contiguous, but shuffled, or in another order) are
//! found out at the first batch out of order. The batches before it stand. From there:
//!
//! - qrels that fit in the memory budget once held (about half their size; `--memory`) are read
//!   whole, the goals ranked so far marked, and the text pipeline takes over from that batch's
//!   first line (the held pipeline: a hash lookup per goal);
//! - larger qrels stay mapped and every batch looks its goals up one by one (a search of a sparse
//!   index and of one 64 KiB step of the file each, a lookup join); the qrels goals ranked are
//!   remembered by where their lines begin, in a compressed bitmap (a few bytes per goal): a goal
//!   ranked twice is an error, as in the held pipeline, and the goals never ranked are evaluated
//!   at the end. The mapped pages are let go every so many searches, within the budget. Random
//!   searches of a large file cost a few microseconds each (cache and page misses).
//!
//! The output is the same every way, and the same as the held pipeline's; only memory and time
//! differ.

use crate::options::{plan_for, EvalOptions, OrderMode};
use crate::outcome::{evaluate_unseen, EvalError, Predicted, Report};
use crate::ranking::dedup_table;
use crate::seen::SeenSet;
use crate::sink::Sink as RowSink;
use crate::text::{self, BatchResult, GoalRef, Resume, SharedInput};
use crate::unknown::UnknownGoals;
use hashbrown::HashSet;
use lemma_accum::{Plan, Summary};
use lemma_ingest::{
    first_field, first_goal, last_goal, ActualSets, Batch, ErrorKind, Format, GoalKey, GoalOrder,
    Input, InputError, LineMap, Next, SortedQrels,
};
use lemma_par::{Ordered, OrderedJob, Window, Work};
use roaring::RoaringTreemap;
use std::cmp::Ordering;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What the join did: how much of the qrels it read, and how.
#[derive(Clone, Debug, Default)]
pub struct JoinReport {
    /// Goals read from the qrels, in batches and at the end.
    pub goals_read: u64,
    /// The most bytes of actual sets held by one batch's worker.
    pub largest_batch_bytes: usize,
    /// The predictions' line from which their goals left the qrels' order, if they did (each
    /// batch's goals were then looked up one by one).
    pub lookups_from_line: Option<u64>,
    /// Bytes of the bitmap of the goals ranked out of order.
    pub ranked_set_bytes: usize,
    /// The predictions' line from which their goals left the qrels' order and the qrels, small
    /// enough for the memory budget, were read whole (the held pipeline then took over).
    pub held_from_line: Option<u64>,
    /// Bytes of the whole actual sets, when held: from `held_from_line` on, or when the
    /// predictions could not be joined (JSONL, a stream).
    pub held_bytes: usize,
}

/// Whether predictions `input` can be joined with `qrels` under `opts`: TREC lines in a plain file
/// (read again to name where a goal ranked twice began, or from a goal on by the held pipeline),
/// or regrouped (sorted by goal in natural order: with qrels in that order, the goals never leave
/// it).
pub(crate) fn joinable(input: &Input, opts: &EvalOptions, qrels: &SortedQrels) -> bool {
    input.format == Format::Trec
        && match opts.regroup {
            true => qrels.order() == GoalOrder::Natural,
            false => input.map.is_some() || input.file.is_some(),
        }
}

/// Notes `range` of the qrels (whole goals' lines) as not ranked, joined to the range before it
/// when they touch.
fn push_pending(pending: &mut Vec<Range<usize>>, range: Range<usize>) {
    match pending.last_mut() {
        _ if range.is_empty() => {}
        Some(last) if last.end == range.start => last.end = range.end,
        _ => pending.push(range),
    }
}

/// Evaluates `input` against `qrels`, a join ([`joinable`] inputs only).
pub(crate) fn evaluate(
    qrels: &SortedQrels,
    input: Input,
    opts: &EvalOptions,
    rows: &mut dyn RowSink,
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> Result<(Summary, Report, JoinReport), EvalError> {
    let started = Instant::now();
    let plan = plan_for(opts);
    let path = input.path.clone();
    let order = opts.ranking.order_for(Format::Trec);
    let mut report = Report {
        path: path.clone(),
        threads: opts.threads.max(1),
        ..Report::default()
    };
    // Regrouped: sorted by goal first; errors then name the input's lines through the line map.
    let (input, line_map) = match opts.regroup {
        true => {
            let (inner, map) = text::grouped(input, opts, &mut report)?;
            (inner, Some(map))
        }
        false => (input, None),
    };
    let job = JoinJob {
        qrels,
        opts,
        plan: &plan,
        order,
        want_rows: rows.wants_rows(),
        progress,
        lookup: AtomicBool::new(false),
        input: SharedInput::new(text::batch_reader(input, GoalKey::FirstField, opts)),
    };
    let mut jr = JoinReport::default();
    let mut collector = Collector {
        qrels,
        job: &job,
        path: &path,
        line_map: line_map.as_ref(),
        rows,
        report: &mut report,
        join: &mut jr,
        unknown: UnknownGoals::default(),
        lines_before: 0,
        last: None,
        pending: Vec::new(),
        released: 0,
        lookup: None,
        ranked_goals: 0,
        summary: Summary::new(&plan),
    };
    let (_, collected) = Ordered::new(opts.threads).run(&job, |res| collector.take(res));
    let Collector {
        unknown,
        lines_before,
        last,
        pending,
        lookup,
        ranked_goals,
        mut summary,
        ..
    } = collector;
    match collected {
        Ok(()) => {}
        Err(Stop::Error(e)) => return Err(SharedInput::changed_or(&job.input, e)),
        Err(Stop::OutOfOrder { .. }) if line_map.is_some() => {
            return Err(EvalError::Options(
                "internal: regrouped predictions left the qrels' order".into(),
            ));
        }
        Err(Stop::OutOfOrder { byte, line }) => {
            // What was read so far is resumed from: the file reopened must be the one read.
            if let Ok(input) = job.input.lock() {
                input.reader.check_unchanged()?;
            }
            jr.held_from_line = Some(line);
            report.elapsed = started.elapsed();
            return fall_back(
                qrels,
                FallBack {
                    reopen: path.clone(),
                    byte,
                    lines_before,
                    last,
                    pending,
                    unknown,
                    summary,
                    report,
                },
                opts,
                &plan,
                rows,
                progress,
                jr,
            );
        }
    }
    let mut input = job.input.into_inner().expect("input");
    if let Some(e) = input.error.take() {
        return Err(text::reader_error(
            e,
            &path,
            line_map.as_ref(),
            lines_before,
        ));
    }
    // A plain file changed at any time before the evaluation's end is an error, whether or not
    // the workers had read past the change (they read a window of batches ahead of the rows).
    input.reader.check_unchanged()?;
    report.lines = lines_before;
    report.bytes = input.reader.bytes_read();
    // The goals never ranked: those noted, and those after the last ranked in order (none when
    // every goal was ranked).
    let mut regions = match &lookup {
        Some(l) => l.pending.clone(),
        None => pending,
    };
    let tail = match &lookup {
        Some(l) => l.merge_end,
        None => last.as_deref().map_or(0, |l| qrels.upper_bound(l)),
    };
    push_pending(&mut regions, tail..qrels.bytes().len());
    if ranked_goals == qrels.goal_count() {
        regions.clear();
    }
    // Chunks of about a batch's bytes, at most about 512 KiB (larger ones cost more in fresh memory
    // than they save), each ending where a goal's lines end (found just before the chunk is read:
    // finding it reads the page there).
    let chunk = opts.batch_bytes.clamp(1, 512 << 10);
    let mut pieces = regions.into_iter().flat_map(|range| {
        let mut start = range.start;
        std::iter::from_fn(move || {
            if start >= range.end {
                return None;
            }
            let mut end = (start + chunk).min(range.end);
            if end < range.end {
                end = qrels.goal_at(end, range.end).map_or(range.end, |(_, e)| e);
            }
            if end <= start {
                // Defensive: a region of whole goals' lines always moves on (a goal's lines end
                // past the line it is found on); the rest at once rather than no progress.
                end = range.end;
            }
            let piece = start..end;
            start = end;
            Some(piece)
        })
    });
    // Handed to a thread a chunk's bytes at a time: short regions (the goals between two ranked
    // ones) go together.
    let chunks = std::iter::from_fn(|| {
        let (mut group, mut bytes) = (Vec::new(), 0);
        while bytes < chunk {
            let Some(r) = pieces.next() else { break };
            bytes += r.len();
            group.push(r);
        }
        (!group.is_empty()).then_some(group)
    });
    // The chunks are read on `threads` threads (the reading is the cost), at most two a thread
    // ahead of this one, which evaluates them in order. The threads live for all the chunks, so
    // that their memory is reused from one chunk to the next; with one thread, the chunks are
    // read on this one. Read as a batch's goals are (lemmas
    // listed, not interned: only their count and grades matter here). The regions of a chunk
    // whose span is at most two chunks are read as that one span, the ranked goals between them
    // passed over, rather than as a set of sets a region. Out of order, some of them may have
    // been ranked: where each goal's lines begin names it in the bitmap of those ranked.
    let mut each = |sets: Result<SetsAndStarts, InputError>, regions: &[Range<usize>]| {
        let (sets, starts) = sets?;
        // Whether goal `g` lies in one of the regions (not between them).
        let mine = |g: usize| {
            let i = regions.partition_point(|r| r.end <= starts[g]);
            regions.get(i).is_some_and(|r| r.start <= starts[g])
        };
        jr.goals_read += (0..sets.goal_count()).filter(|&g| mine(g)).count() as u64;
        let ranked = |g: usize| {
            !mine(g) || (lookup.as_ref()).is_some_and(|l| l.ranked.contains(starts[g] as u64))
        };
        evaluate_unseen(
            &sets,
            &plan,
            opts,
            &ranked,
            opts.universe,
            &mut summary,
            rows,
        )
    };
    let span = |group: &[Range<usize>]| group[0].start..group[group.len() - 1].end;
    let threads = opts.threads.max(1);
    Ordered::new(threads)
        .window(2 * threads)
        .inline_single()
        .each(
            chunks,
            |group: Vec<Range<usize>>| {
                let read: Vec<_> = if span(&group).len() <= 2 * chunk {
                    vec![(group.clone(), qrels.sets_and_starts(span(&group)))]
                } else {
                    (group.iter())
                        .map(|r| (vec![r.clone()], qrels.sets_and_starts(r.clone())))
                        .collect()
                };
                (group, read)
            },
            |(group, read)| {
                for (regions, sets) in read {
                    each(sets, &regions)?;
                }
                // One call for the chunk (each call stops both cores a moment to drop their
                // mappings; the pages between its regions are of goals already read).
                qrels.release(span(&group));
                Ok::<(), EvalError>(())
            },
        )?;
    if let Some(l) = &lookup {
        jr.ranked_set_bytes = l.ranked.serialized_size();
    }
    report.elapsed = started.elapsed();
    Ok((summary, report, jr))
}

/// A chunk's actual sets, and where each goal's lines begin ([`SortedQrels::sets_and_starts`]).
type SetsAndStarts = (ActualSets, Vec<usize>);

/// The join's state when a goal came out of order.
struct FallBack {
    reopen: std::path::PathBuf,
    byte: u64,
    lines_before: u64,
    last: Option<Vec<u8>>,
    pending: Vec<Range<usize>>,
    unknown: UnknownGoals,
    summary: Summary,
    report: Report,
}

/// The held pipeline from the goal out of order on: the whole qrels read, the goals ranked before
/// it marked (those up to the last ranked goal, but for the ones noted as unranked).
#[allow(clippy::too_many_arguments)]
fn fall_back(
    qrels: &SortedQrels,
    f: FallBack,
    opts: &EvalOptions,
    plan: &Arc<Plan>,
    rows: &mut dyn RowSink,
    progress: Option<&(dyn Fn(u64) + Sync)>,
    mut jr: JoinReport,
) -> Result<(Summary, Report, JoinReport), EvalError> {
    let actual = qrels.sets_whole()?;
    jr.held_bytes = actual.heap_bytes();
    let mut unranked: HashSet<&[u8]> = HashSet::new();
    for r in &f.pending {
        let mut at = r.start;
        while let Some((g, end)) = qrels.goal_at(at, r.end) {
            unranked.insert(g);
            at = end;
        }
    }
    let order = qrels.order();
    let ranked = (0..actual.goal_count() as u32)
        .map(|g| {
            let name = actual.goals.name(g);
            f.last
                .as_deref()
                .is_some_and(|l| order.cmp(name, l) != Ordering::Greater)
                && !unranked.contains(name)
        })
        .collect();
    let input = lemma_ingest::open_with(&f.reopen, true)?;
    let resume = Resume {
        byte: f.byte,
        lines_before: f.lines_before,
        ranked,
        unknown: f.unknown,
        summary: f.summary,
        report: f.report,
    };
    let before = resume.report.elapsed;
    let p: Predicted = text::predict_from(&actual, input, opts, rows, progress, Some(resume))?;
    let (summary, mut report) = p.finish(&actual, plan, opts, rows)?;
    report.elapsed += before;
    jr.goals_read += actual.goal_count() as u64;
    Ok((summary, report, jr))
}

struct JoinJob<'a> {
    qrels: &'a SortedQrels,
    opts: &'a EvalOptions,
    plan: &'a Arc<Plan>,
    order: OrderMode,
    want_rows: bool,
    progress: Option<&'a (dyn Fn(u64) + Sync)>,
    /// Set once the predictions left the qrels' order: batches look their goals up one by one.
    lookup: AtomicBool,
    input: Mutex<SharedInput>,
}

/// What a worker thread keeps from one batch to the next: the buffer batches are read into, and
/// the duplicate table (each batch is evaluated by a worker of its own, against its own actual
/// sets; a deep goal's table would otherwise grow again from 64 slots in every batch: 13
/// doublings to 4 MiB for a goal of 100,000 lemmas, two thirds of the time of such a run).
struct JoinScratch {
    buf: Vec<u8>,
    dedup: SeenSet,
}

/// A batch's result, with what the join needs.
#[derive(Default)]
struct Joined {
    res: BatchResult,
    /// The batch's first and last goals.
    first: Option<Vec<u8>>,
    last: Option<Vec<u8>>,
    /// Its goals were read as one range and ascend.
    ascending: bool,
    /// The lines of the goals in its range that it did not rank, and how many it did (a range
    /// read only).
    unranked: Vec<Range<usize>>,
    ranked: u64,
    /// Where the lines of each goal it ranked that has an actual set begin in the qrels, in
    /// the order of `res.goals`.
    ranked_at: Vec<usize>,
    sets_bytes: usize,
    sets_goals: usize,
    /// The batch's values.
    summary: Option<Summary>,
    /// An error in the qrels (not the predictions').
    qrels_error: Option<InputError>,
}

impl JoinJob<'_> {
    /// Evaluates `batch` against `sets` with the thread's duplicate table; each ranked goal's id.
    fn evaluate(&self, sets: &ActualSets, batch: &Batch, joined: &mut Joined, dedup: &mut SeenSet) {
        joined.sets_bytes = sets.heap_bytes();
        joined.sets_goals = sets.goal_count();
        let mut w = text::Worker::new(sets, self.opts, self.plan, self.order, self.want_rows);
        w.swap_dedup(dedup);
        w.batch(Format::Trec, batch, &mut joined.res);
        w.swap_dedup(dedup);
        joined.summary = Some(w.into_summary());
    }

    /// `batch` read against the actual sets of the goals from its first to its last (`range`
    /// of the qrels), if they ascend: `false` if they do not. `sparse`: only the batch's own
    /// goals are read from the range (each looked up), the others noted as unranked.
    fn in_order(
        &self,
        batch: &Batch,
        range: Range<usize>,
        sparse: bool,
        joined: &mut Joined,
        dedup: &mut SeenSet,
    ) -> bool {
        let order = self.qrels.order();
        // The sets, where each goal's lines begin, and (sparse) where each one's end.
        let read = if sparse {
            let (bytes, ranges) = self.goal_lines(&batch.data[..]);
            (self.qrels.sets_of(&bytes, &ranges)).map(|s| {
                let starts = ranges.iter().map(|r| r.start).collect();
                (s, starts, Some(ranges.iter().map(|r| r.end).collect()))
            })
        } else {
            (self.qrels.sets_and_starts(range.clone())).map(|(s, starts)| (s, starts, None))
        };
        let (sets, starts, ends): (_, Vec<usize>, Option<Vec<usize>>) = match read {
            Ok(s) => s,
            Err(e) => {
                joined.qrels_error = Some(e);
                return true;
            }
        };
        self.evaluate(&sets, batch, joined, dedup);
        // The goals must ascend: each after the one before.
        let mut ranked = vec![false; sets.goal_count()];
        let mut before: Option<(&[u8], u64)> = None;
        for (g, line) in &joined.res.goals {
            let name = match g {
                GoalRef::Known(id) => {
                    ranked[*id as usize] = true;
                    sets.goals.name(*id)
                }
                GoalRef::Unknown(n) => n,
            };
            match before {
                // A goal read again from its first line (its lines out of order).
                Some((b, l)) if l == *line && b == name => continue,
                Some((b, _)) if order.cmp(b, name) != Ordering::Less => return false,
                _ => {}
            }
            before = Some((name, *line));
        }
        debug_assert_eq!(starts.len(), sets.goal_count());
        joined.ranked = ranked.iter().filter(|&&r| r).count() as u64;
        // Every line of the range but the ranked goals' (the goals between them, when sparse).
        let end = |g: usize| match &ends {
            Some(e) => e[g],
            None => starts.get(g + 1).copied().unwrap_or(range.end),
        };
        let mut at = range.start;
        for g in (0..starts.len()).filter(|&g| ranked[g]) {
            push_pending(&mut joined.unranked, at..starts[g]);
            at = end(g);
        }
        push_pending(&mut joined.unranked, at..range.end);
        joined.ranked_at = known_starts(&joined.res.goals, &starts);
        joined.ascending = true;
        true
    }

    /// `batch` read against the actual sets of its goals, each looked up.
    fn looked_up(&self, batch: &Batch, joined: &mut Joined, dedup: &mut SeenSet) {
        let (bytes, ranges) = self.goal_lines(&batch.data[..]);
        let sets = match self.qrels.sets_of(&bytes, &ranges) {
            Ok(s) => s,
            Err(e) => {
                joined.qrels_error = Some(e);
                return;
            }
        };
        drop(bytes);
        debug_assert_eq!(sets.goal_count(), ranges.len());
        self.evaluate(&sets, batch, joined, dedup);
        let starts: Vec<usize> = ranges.iter().map(|r| r.start).collect();
        joined.ranked_at = known_starts(&joined.res.goals, &starts);
    }

    /// The qrels' lines of each goal of the predictions `data` (each goal once, in the order
    /// first met), copied one goal after another, and where each goal's lines lie in the qrels.
    fn goal_lines(&self, data: &[u8]) -> (Vec<u8>, Vec<Range<usize>>) {
        let q = self.qrels.bytes();
        let mut ranges: Vec<Range<usize>> = Vec::new();
        let mut bytes = Vec::new();
        let mut found: HashSet<usize> = HashSet::new();
        let mut last: Option<&[u8]> = None;
        let mut at = 0;
        // A search and the copy of the goal's lines map a few pages (the kernel maps 64 KiB
        // around a page read, some 256 KiB a goal): those between the goals read since the
        // last release go every so many goals, `RELEASE_EVERY`'s worth (less under a budget
        // below 128 MiB), as a reader walking the mapping lets them go.
        let every =
            (lemma_ingest::RELEASE_EVERY.min(self.opts.spill.memory / 4) / (256 << 10)).max(16);
        let mut touched: Option<Range<usize>> = None;
        while at < data.len() {
            let nl = memchr::memchr(b'\n', &data[at..]).map_or(data.len(), |p| at + p);
            if let Some(g) = first_field(&data[at..nl]) {
                if last != Some(g) {
                    last = Some(g);
                    // Where its first real line begins: the place that names the goal in
                    // the bitmap, as the in-order batches and the end find it.
                    if let Some(r) = self.qrels.goal_range(g).filter(|r| found.insert(r.start)) {
                        bytes.extend_from_slice(&q[r.clone()]);
                        if bytes.last() != Some(&b'\n') {
                            bytes.push(b'\n');
                        }
                        touched = Some(match touched {
                            Some(t) => t.start.min(r.start)..t.end.max(r.end),
                            None => r.clone(),
                        });
                        ranges.push(r);
                        if ranges.len() % every == 0 {
                            if let Some(t) = touched.take() {
                                self.qrels.release(t);
                            }
                        }
                    }
                }
            }
            at = nl + 1;
        }
        (bytes, ranges)
    }
}

/// How many goals `lines` hold, if they ascend in `order` (each goal's lines together).
fn ascending(lines: &[u8], order: GoalOrder) -> Option<usize> {
    let mut last: Option<&[u8]> = None;
    let mut goals = 0;
    let mut at = 0;
    while at < lines.len() {
        let nl = memchr::memchr(b'\n', &lines[at..]).map_or(lines.len(), |p| at + p);
        if let Some(g) = first_field(&lines[at..nl]) {
            match last {
                Some(l) if l == g => {}
                Some(l) if order.cmp(l, g) != Ordering::Less => return None,
                _ => {
                    last = Some(g);
                    goals += 1;
                }
            }
        }
        at = nl + 1;
    }
    Some(goals)
}

/// The qrels position of each goal with an actual set in `goals`, from its id.
fn known_starts(goals: &[(GoalRef, u64)], starts: &[usize]) -> Vec<usize> {
    goals
        .iter()
        .filter_map(|(g, _)| match g {
            GoalRef::Known(id) => Some(starts[*id as usize]),
            GoalRef::Unknown(_) => None,
        })
        .collect()
}

impl<'a> Work for JoinJob<'a> {
    type Worker = JoinScratch;
    type Unit = Next;
    type Output = Joined;
    type Done = ();

    fn worker(&self) -> Self::Worker {
        JoinScratch {
            buf: Vec::new(),
            dedup: dedup_table(),
        }
    }

    fn run(&self, s: &mut Self::Worker, _: u64, next: Next) -> Joined {
        let JoinScratch { buf, dedup } = s;
        let mut joined = Joined::default();
        let batch = match next.read(buf) {
            Ok(b) => b,
            Err(e) => {
                joined.res.error = Some(e.into());
                return joined;
            }
        };
        joined.res.first_byte = batch.first_byte;
        let data = &batch.data[..];
        let order = self.qrels.order();
        let (first, last) = (first_goal(data), last_goal(data));
        joined.first = first.map(<[u8]>::to_vec);
        joined.last = last.map(<[u8]>::to_vec);
        let range = match (first, last) {
            (Some(f), Some(l)) if order.cmp(f, l) != Ordering::Greater => {
                Some(self.qrels.lower_bound(f)..self.qrels.upper_bound(l))
            }
            (Some(_), Some(_)) => None,
            _ => Some(0..0),
        };
        let lookup = self.lookup.load(AtomicOrdering::Relaxed);
        let in_order = match range {
            Some(r) if !lookup && r.len() <= 4 * data.len() => {
                self.in_order(&batch, r, false, &mut joined, dedup)
            }
            // A range much longer than the batch's lines: read if the goals ascend, and only
            // theirs (the others noted) when the range holds far more goals than the batch (by
            // the qrels' mean bytes a goal: the predictions skip goals, rather than rank few
            // lemmas of each).
            Some(r) if !lookup => match ascending(data, order) {
                Some(goals) => {
                    let q = self.qrels;
                    let mean = q.bytes().len() as u64 / q.goal_count().max(1);
                    let sparse = r.len() as u64 > 4 * goals as u64 * mean.max(1);
                    self.in_order(&batch, r, sparse, &mut joined, dedup)
                }
                None => false,
            },
            _ => false,
        };
        if !in_order {
            joined = Joined {
                first: joined.first,
                last: joined.last,
                ..Joined::default()
            };
            joined.res.first_byte = batch.first_byte;
            self.looked_up(&batch, &mut joined, dedup);
        }
        if let Some(b) = batch.data.release() {
            *buf = b;
        }
        joined
    }

    fn failed(j: &Joined) -> bool {
        j.res.error.is_some() || j.qrels_error.is_some()
    }

    fn finish(&self, _: Self::Worker) {}
}

impl OrderedJob for JoinJob<'_> {
    fn next(&self, s: &mut Self::Worker, window: &Window) -> Option<(u64, Next)> {
        SharedInput::next(&self.input, &mut s.buf, window, self.progress)
    }
}

/// Why the collector stopped.
enum Stop {
    Error(EvalError),
    /// The predictions left the qrels' order at this byte and line, and the qrels are to be held.
    OutOfOrder {
        byte: u64,
        line: u64,
    },
}

/// The join once the predictions left the qrels' order.
struct Lookup {
    /// The qrels before this were covered in order: each goal ranked, but for those pending.
    merge_end: usize,
    /// The goals not ranked before `merge_end`, by their lines (ascending).
    pending: Vec<Range<usize>>,
    /// Where the lines of the goals ranked since begin.
    ranked: RoaringTreemap,
}

impl Lookup {
    /// Whether the goal whose lines begin at `at` is ranked now for the first time.
    fn first_time(&mut self, at: usize) -> bool {
        if at < self.merge_end {
            let i = self.pending.partition_point(|r| r.end <= at);
            if self.pending.get(i).is_none_or(|r| r.start > at) {
                return false;
            }
        }
        self.ranked.insert(at as u64)
    }
}

struct Collector<'c> {
    qrels: &'c SortedQrels,
    job: &'c JoinJob<'c>,
    path: &'c std::path::Path,
    /// Regrouped predictions: each line's original number.
    line_map: Option<&'c LineMap>,
    rows: &'c mut dyn RowSink,
    report: &'c mut Report,
    join: &'c mut JoinReport,
    /// Goals without actual sets, with their first lines.
    unknown: UnknownGoals,
    lines_before: u64,
    /// The last goal ranked in order.
    last: Option<Vec<u8>>,
    /// The lines of the goals skipped before `last` (ascending, apart).
    pending: Vec<Range<usize>>,
    /// The qrels' pages before this were let go.
    released: usize,
    /// Set once the predictions left the qrels' order.
    lookup: Option<Lookup>,
    /// Goals of the qrels ranked so far.
    ranked_goals: u64,
    /// The values of the batches taken.
    summary: Summary,
}

impl Collector<'_> {
    fn take(&mut self, mut j: Joined) -> Result<(), Stop> {
        if let Some(e) = j.qrels_error.take() {
            return Err(Stop::Error(e.into()));
        }
        if let Some(e) = j.res.error.take() {
            return Err(Stop::Error(text::fix_error(
                e,
                self.path,
                self.line_map,
                self.lines_before,
                j.res.first_byte,
            )));
        }
        let order: GoalOrder = self.qrels.order();
        let after_last = match (&self.last, &j.first) {
            (Some(l), Some(f)) => order.cmp(l, f) == Ordering::Less,
            _ => true,
        };
        if self.lookup.is_none() && !(j.ascending && after_last) {
            // Qrels that fit in the budget once held are held.
            if self
                .job
                .opts
                .spill
                .holds_qrels(self.qrels.bytes().len() as u64)
            {
                return Err(Stop::OutOfOrder {
                    byte: j.res.first_byte,
                    line: self.lines_before + 1,
                });
            }
            self.start_lookups();
        }
        match &mut self.lookup {
            None => self.in_order(&mut j),
            Some(_) => self.looked_up(&mut j).map_err(Stop::Error)?,
        }
        if let Some(s) = &j.summary {
            self.summary.merge(s).expect("same plan");
        }
        self.join.largest_batch_bytes = self.join.largest_batch_bytes.max(j.sets_bytes);
        self.lines_before += j.res.lines;
        self.report.add(&j.res.stats);
        if let (Some(tag), None) = (j.res.last_tag.take(), self.line_map) {
            self.report.runid = tag;
        }
        for row in j.res.rows.drain(..) {
            self.rows
                .row(row)
                .map_err(|e| Stop::Error(EvalError::Sink(e)))?;
        }
        Ok(())
    }

    /// A batch in order: the goals it skipped noted, the pages behind let go.
    fn in_order(&mut self, j: &mut Joined) {
        if let Some(f) = &j.first {
            let from = self
                .last
                .as_deref()
                .map_or(0, |l| self.qrels.upper_bound(l));
            push_pending(&mut self.pending, from..self.qrels.lower_bound(f));
        }
        // Those left unranked are read again at the end.
        self.join.goals_read += j.ranked;
        self.ranked_goals += j.ranked;
        for r in j.unranked.drain(..) {
            push_pending(&mut self.pending, r);
        }
        for (g, local) in j.res.goals.drain(..) {
            if let GoalRef::Unknown(name) = g {
                self.unknown.first_line(&name, self.lines_before + local);
            }
            self.report.goals_in_predictions += 1;
        }
        if j.last.is_some() {
            self.last = j.last.take();
        }
        // The qrels' pages before the next batch's goals are let go, `RELEASE_EVERY` at a time
        // (the goals noted as unranked are read again at the end).
        if let Some(l) = &self.last {
            let done = self.qrels.upper_bound(l);
            if done - self.released >= lemma_ingest::RELEASE_EVERY {
                self.qrels.release(self.released..done);
                self.released = done;
            }
        }
    }

    /// From this batch on, goals are looked up one by one.
    fn start_lookups(&mut self) {
        self.job.lookup.store(true, AtomicOrdering::Relaxed);
        self.join.lookups_from_line = Some(self.lines_before + 1);
        self.lookup = Some(Lookup {
            merge_end: self
                .last
                .as_deref()
                .map_or(0, |l| self.qrels.upper_bound(l)),
            pending: std::mem::take(&mut self.pending),
            ranked: RoaringTreemap::new(),
        });
    }

    /// A batch whose goals may be anywhere: each must be ranked for the first time.
    fn looked_up(&mut self, j: &mut Joined) -> Result<(), EvalError> {
        let l = self.lookup.as_mut().expect("looking up");
        self.join.goals_read += j.sets_goals as u64;
        let mut ranked_at = j.ranked_at.iter();
        let mut before: Option<(usize, u64)> = None;
        for (g, local) in j.res.goals.drain(..) {
            let line = self.lines_before + local;
            let again = match g {
                GoalRef::Known(_) => {
                    let at = *ranked_at.next().expect("one per known goal");
                    // A goal read again from its first line (its lines out of order).
                    let repeated = before == Some((at, line));
                    before = Some((at, line));
                    let again = !repeated && !l.first_time(at);
                    self.ranked_goals += u64::from(!repeated && !again);
                    again.then(|| {
                        let end = self.qrels.bytes().len();
                        self.qrels
                            .goal_at(at, end)
                            .map_or_else(Vec::new, |(name, _)| name.to_vec())
                    })
                }
                GoalRef::Unknown(name) => {
                    let first = self.unknown.first_line(&name, line);
                    (first != line).then_some(name)
                }
            };
            if let Some(name) = again {
                return Err(again_error(self.path, &name, line));
            }
            self.report.goals_in_predictions += 1;
        }
        Ok(())
    }
}

/// The error for goal `name` ranked again at `line` of `path`, naming its first line (the file
/// read again up to it).
fn again_error(path: &std::path::Path, name: &[u8], line: u64) -> EvalError {
    let first = text::first_line_of(path, name, line).unwrap_or(line);
    EvalError::Input(InputError {
        kind: ErrorKind::GoalNotContiguous,
        path: path.to_path_buf(),
        line: Some(line),
        byte: None,
        first_line: None,
        message: text::again_message(name, &format!("at line {first}")),
    })
}
