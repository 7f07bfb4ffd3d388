//! Predictions and sorted qrels read together: a merge join, memory independent of the number of
//! goals.
//!
//! When the qrels' goals ascend ([`SortedQrels`]: checked in one pass, the file mapped, nothing
//! held) and the predictions' goals ascend in the same order, each batch of predictions (whole
//! goals, about 4 MiB) needs only the actual sets of the goals from its first to its last: the
//! worker finds their lines by binary search and reads them into actual sets of their own, then
//! evaluates the batch as the text pipeline does ([`crate::text`]). The goals of the qrels that the
//! predictions never rank (between batches, or within a batch's range) are noted (a byte range, or
//! a name) and evaluated at the end, in qrels order, as the held pipeline does.
//!
//! Predictions whose goals do not ascend are found out at the first goal out of order: the batches
//! before it are done (their rows given, their values summed); the whole qrels are then read as
//! usual and the text pipeline takes over from that goal's first line, the goals ranked before
//! it marked as ranked. The output is the same either way; only memory and time differ.

use crate::options::{plan_for, EvalOptions, OrderMode};
use crate::outcome::{evaluate_unseen, EvalError, Predicted, Report};
use crate::pool::{run_ordered, OrderedJob, Window};
use crate::sink::Sink as RowSink;
use crate::text::{self, BatchResult, GoalRef, Resume, SharedInput};
use hashbrown::{HashMap, HashSet};
use lemma_accum::{Plan, Summary};
use lemma_ingest::{
    first_goal, last_goal, BatchReader, Format, GoalKey, GoalOrder, Input, InputError, Next,
    SortedQrels,
};
use std::cmp::Ordering;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What the join did: how much of the qrels it read, and whether the held pipeline took over.
#[derive(Clone, Debug, Default)]
pub struct JoinReport {
    /// Goals and judgments read from the qrels, in batches' ranges and at the end.
    pub goals_read: u64,
    /// The most bytes of actual sets held by one batch's worker.
    pub largest_batch_bytes: usize,
    /// The predictions' line where a goal came out of order, if one did (the whole qrels were
    /// then read and held from there on).
    pub fell_back_at_line: Option<u64>,
    /// Bytes the whole actual sets then held.
    pub held_bytes: usize,
}

/// Whether predictions `input` can be joined with sorted qrels under `opts`: TREC lines in a
/// plain file (so that the held pipeline can take over at any goal), not regrouped.
pub(crate) fn joinable(input: &Input, opts: &EvalOptions) -> bool {
    input.format == Format::Trec && (input.map.is_some() || input.file.is_some()) && !opts.regroup
}

/// A goal of the qrels not ranked by the predictions, evaluated at the end.
enum Pending {
    /// Every goal whose lines are in this range.
    Range(Range<usize>),
    /// One goal.
    Goal(Vec<u8>),
}

/// Evaluates `input` against `qrels`, a merge join ([`joinable`] inputs only).
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
    let job = JoinJob {
        qrels,
        opts,
        plan: &plan,
        order,
        want_rows: rows.wants_rows(),
        progress,
        input: SharedInput::new(BatchReader::new(
            input,
            GoalKey::FirstField,
            opts.batch_bytes,
        )),
    };
    let mut report = Report {
        path: path.clone(),
        threads: opts.threads.max(1),
        ..Report::default()
    };
    let mut jr = JoinReport::default();
    let mut collector = Collector {
        qrels,
        path: &path,
        rows,
        report: &mut report,
        join: &mut jr,
        unknown: HashMap::new(),
        lines_before: 0,
        last: None,
        pending: Vec::new(),
        out_of_order: None,
        released: 0,
        summary: Summary::new(&plan),
    };
    let (_, collected) = run_ordered(&job, opts.threads, |res| collector.take(res));
    let Collector {
        unknown,
        lines_before,
        last,
        pending,
        out_of_order,
        mut summary,
        ..
    } = collector;
    match collected {
        Ok(()) => {}
        Err(Stop::Error(e)) => return Err(e),
        Err(Stop::OutOfOrder) => {
            let (byte, line) = out_of_order.expect("set when stopping");
            jr.fell_back_at_line = Some(line);
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
        return Err(e.into());
    }
    report.lines = lines_before;
    report.bytes = input.reader.bytes_read();
    // The goals after the last ranked one.
    let tail = last.as_deref().map_or(0, |l| qrels.upper_bound(l));
    let mut pending = pending;
    push_range(&mut pending, tail..qrels.bytes().len());
    for p in pending {
        let range = match p {
            Pending::Goal(name) => qrels.lower_bound(&name)..qrels.upper_bound(&name),
            Pending::Range(r) => r,
        };
        // Long ranges a few MiB of lines at a time.
        let mut start = range.start;
        while start < range.end {
            let mut end = (start + (4 << 20)).min(range.end);
            if end < range.end {
                end = match qrels.goal_at(end, range.end) {
                    Some((_, e)) => e,
                    None => range.end,
                };
            }
            let sets = qrels.sets(start..end)?;
            jr.goals_read += sets.goal_count() as u64;
            evaluate_unseen(
                &sets,
                &plan,
                opts,
                &|_| false,
                opts.universe,
                &mut summary,
                rows,
            )?;
            start = end;
        }
    }
    report.elapsed = started.elapsed();
    Ok((summary, report, jr))
}

fn push_range(pending: &mut Vec<Pending>, r: Range<usize>) {
    if r.start < r.end {
        pending.push(Pending::Range(r));
    }
}

/// The join's state when a goal came out of order.
struct FallBack {
    reopen: std::path::PathBuf,
    byte: u64,
    lines_before: u64,
    last: Option<Vec<u8>>,
    pending: Vec<Pending>,
    unknown: HashMap<Vec<u8>, u64>,
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
    let actual = qrels.sets(0..qrels.bytes().len())?;
    jr.held_bytes = actual.heap_bytes();
    let mut unranked: HashSet<&[u8]> = HashSet::new();
    for p in &f.pending {
        match p {
            Pending::Goal(name) => {
                unranked.insert(name);
            }
            Pending::Range(r) => {
                let mut at = r.start;
                while let Some((g, end)) = qrels.goal_at(at, r.end) {
                    unranked.insert(g);
                    at = end;
                }
            }
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
    input: Mutex<SharedInput>,
}

/// A batch's result, with what the join needs.
struct Joined {
    res: BatchResult,
    /// The batch's first and last goals.
    first: Option<Vec<u8>>,
    last: Option<Vec<u8>>,
    /// Its goals did not ascend.
    out_of_order: bool,
    /// Goals in its range that it did not rank.
    unranked: Vec<Vec<u8>>,
    sets_bytes: usize,
    sets_goals: usize,
    /// The batch's values.
    summary: Option<Summary>,
    /// An error in the qrels (not the predictions').
    qrels_error: Option<InputError>,
}

impl<'a> OrderedJob for JoinJob<'a> {
    type Worker = Vec<u8>;
    type Unit = Next;
    type Output = Joined;
    type Done = ();

    fn worker(&self) -> Self::Worker {
        Vec::new()
    }

    fn next(&self, buf: &mut Self::Worker, window: &Window) -> Option<(u64, Next)> {
        SharedInput::next(&self.input, buf, window, self.progress)
    }

    fn run(&self, buf: &mut Self::Worker, _: u64, next: Next) -> Joined {
        let mut joined = Joined {
            res: BatchResult::default(),
            first: None,
            last: None,
            out_of_order: false,
            unranked: Vec::new(),
            sets_bytes: 0,
            sets_goals: 0,
            summary: None,
            qrels_error: None,
        };
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
        let range = match (first, last) {
            (Some(f), Some(l)) if order.cmp(f, l) != Ordering::Greater => {
                self.qrels.lower_bound(f)..self.qrels.upper_bound(l)
            }
            (Some(_), Some(_)) => {
                joined.out_of_order = true;
                return joined;
            }
            _ => 0..0,
        };
        joined.first = first.map(<[u8]>::to_vec);
        joined.last = last.map(<[u8]>::to_vec);
        let sets = match self.qrels.sets(range) {
            Ok(s) => s,
            Err(e) => {
                joined.qrels_error = Some(e);
                return joined;
            }
        };
        joined.sets_bytes = sets.heap_bytes();
        joined.sets_goals = sets.goal_count();
        let mut w = text::Worker::new(&sets, self.opts, self.plan, self.order, self.want_rows);
        w.batch(Format::Trec, &batch, &mut joined.res);
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
                Some((b, _)) if order.cmp(b, name) != Ordering::Less => {
                    joined.out_of_order = true;
                    return joined;
                }
                _ => {}
            }
            before = Some((name, *line));
        }
        // Summed by the collector, in order: the batches after one out of order are evaluated
        // again by the held pipeline.
        joined.summary = Some(w.into_summary());
        joined.unranked = (0..sets.goal_count() as u32)
            .filter(|&g| !ranked[g as usize])
            .map(|g| sets.goals.name(g).to_vec())
            .collect();
        if let Some(b) = batch.data.release() {
            *buf = b;
        }
        joined
    }

    fn failed(j: &Joined) -> bool {
        j.res.error.is_some() || j.out_of_order || j.qrels_error.is_some()
    }

    fn finish(&self, _: Self::Worker) {}
}

/// Why the collector stopped.
enum Stop {
    Error(EvalError),
    OutOfOrder,
}

struct Collector<'c> {
    qrels: &'c SortedQrels,
    path: &'c std::path::Path,
    rows: &'c mut dyn RowSink,
    report: &'c mut Report,
    join: &'c mut JoinReport,
    /// Goals without actual sets, with their first lines (to hand over if the held pipeline
    /// takes over).
    unknown: HashMap<Vec<u8>, u64>,
    lines_before: u64,
    /// The last goal ranked.
    last: Option<Vec<u8>>,
    pending: Vec<Pending>,
    /// Where the goal out of order begins: (byte, line).
    out_of_order: Option<(u64, u64)>,
    /// The qrels' pages before this were let go.
    released: usize,
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
                None,
                self.lines_before,
                j.res.first_byte,
            )));
        }
        let order: GoalOrder = self.qrels.order();
        let after_last = match (&self.last, &j.first) {
            (Some(l), Some(f)) => order.cmp(l, f) == Ordering::Less,
            _ => true,
        };
        if j.out_of_order || !after_last {
            self.out_of_order = Some((j.res.first_byte, self.lines_before + 1));
            return Err(Stop::OutOfOrder);
        }
        if let Some(f) = &j.first {
            let from = self
                .last
                .as_deref()
                .map_or(0, |l| self.qrels.upper_bound(l));
            push_range(&mut self.pending, from..self.qrels.lower_bound(f));
        }
        // Those left unranked are read again at the end.
        self.join.goals_read += (j.sets_goals - j.unranked.len()) as u64;
        self.pending.extend(j.unranked.drain(..).map(Pending::Goal));
        for (g, local) in j.res.goals.drain(..) {
            if let GoalRef::Unknown(name) = g {
                self.unknown.insert(name, self.lines_before + local);
            }
            self.report.goals_in_predictions += 1;
        }
        if let Some(s) = &j.summary {
            self.summary.merge(s).expect("same plan");
        }
        self.join.largest_batch_bytes = self.join.largest_batch_bytes.max(j.sets_bytes);
        if j.last.is_some() {
            self.last = j.last.take();
        }
        // The qrels' pages before the next batch's goals are let go, some MiB at a time (the
        // goals noted as unranked are read again at the end).
        if let Some(l) = &self.last {
            let done = self.qrels.upper_bound(l);
            if done - self.released >= 32 << 20 {
                self.qrels.release(self.released..done);
                self.released = done;
            }
        }
        self.lines_before += j.res.lines;
        self.report.add(&j.res.stats);
        if let Some(tag) = j.res.last_tag.take() {
            self.report.runid = tag;
        }
        for row in j.res.rows.drain(..) {
            self.rows
                .row(row)
                .map_err(|e| Stop::Error(EvalError::Sink(e)))?;
        }
        Ok(())
    }
}
