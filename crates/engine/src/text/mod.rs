//! The evaluation pipeline: batches of whole goals from the ingest crate, evaluated by worker
//! threads with the accumulator, merged in file order.
//!
//! ```text
//!  input (one lock) ──next batch──▶ workers (N) ──results (bounded)──▶ collector (caller's thread)
//! ```
//!
//! A worker takes the next batch itself: under the input's lock it reads about 4 MiB into its own
//! buffer and cuts it at a goal boundary (so the bytes are in its own core's cache when it parses
//! them, and N threads share N cores), then evaluates it. A window keeps the workers at most a few
//! batches ahead of the collector. A worker streams each goal's lines through the
//! order check (trec order: score descending, name descending; only tie runs are buffered; scores
//! of one printed shape are compared as text, others parsed), the
//! depth cut, duplicate removal and the accumulator. A goal whose lines are out of order is re-read
//! from its first line and sorted (memory: that goal). The collector takes results in batch order,
//! checks that no goal reappears, numbers lines, and hands per-goal rows to the caller in file
//! order. Summaries merge exactly, so the figures do not depend on the number of threads.

mod worker;

use crate::options::{plan_for, EvalOptions, OrderMode};
use crate::outcome::{EvalError, GoalRow, Predicted, Report};
use crate::sink::Sink as RowSink;
use crate::unknown::UnknownGoals;
use lemma_accum::{Plan, Summary};
use lemma_ingest::{
    show, ActualSets, BatchReader, ErrorKind, Format, GoalKey, Input, InputError, LineMap, Next,
};
use lemma_par::{Ordered, OrderedJob, Window, Work};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;
pub(crate) use worker::Worker;

/// A goal as the worker reports it, for the collector's contiguity check.
#[derive(Debug)]
pub(crate) enum GoalRef {
    Known(u32),
    Unknown(Vec<u8>),
}

#[derive(Debug, Default)]
pub(crate) struct BatchResult {
    /// Where the batch starts in the input: error byte offsets are the batch's own.
    pub(crate) first_byte: u64,
    pub(crate) lines: u64,
    pub(crate) goals: Vec<(GoalRef, u64)>,
    pub(crate) rows: Vec<GoalRow>,
    pub(crate) error: Option<EvalError>,
    pub(crate) stats: Stats,
    pub(crate) last_tag: Option<Vec<u8>>,
}

#[derive(Debug, Default, Clone)]
pub(crate) struct Stats {
    pub(crate) items: u64,
    pub(crate) duplicates_dropped: u64,
    pub(crate) beyond_depth: u64,
    pub(crate) goals_reordered: u64,
    pub(crate) premises: crate::PremiseReport,
}

/// Evaluates `input` (predictions) against `actual`. Per-goal rows, when `rows` is given, arrive
/// in file order, followed by goals that had no predictions (in actual-set order). `progress`
/// receives the decompressed bytes read so far.
pub fn evaluate(
    actual: &ActualSets,
    input: Input,
    opts: &EvalOptions,
    rows: &mut dyn RowSink,
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> Result<(Summary, Report), EvalError> {
    predict(actual, input, opts, rows, progress)?.finish(actual, &plan_for(opts), opts, rows)
}

/// Where an evaluation takes over from a join ([`crate::join`]) that found the predictions' goals
/// out of order: at byte `byte` (a goal's first line) of a plain file, after `lines_before` lines.
pub(crate) struct Resume {
    pub(crate) byte: u64,
    pub(crate) lines_before: u64,
    /// Per goal of the actual sets: ranked before `byte`.
    pub(crate) ranked: Vec<bool>,
    /// The goals without actual sets ranked before `byte`, with their first lines.
    pub(crate) unknown: UnknownGoals,
    /// The evaluation so far.
    pub(crate) summary: Summary,
    pub(crate) report: Report,
}

/// A goal's first line when it came before the resumed part ([`Resume`]).
const BEFORE: u64 = u64::MAX;

/// [`evaluate`] but for the goals the predictions never ranked.
pub(crate) fn predict(
    actual: &ActualSets,
    input: Input,
    opts: &EvalOptions,
    rows: &mut dyn RowSink,
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> Result<Predicted, EvalError> {
    predict_from(actual, input, opts, rows, progress, None)
}

/// [`predict`], from where a join stopped when given `resume`.
pub(crate) fn predict_from(
    actual: &ActualSets,
    input: Input,
    opts: &EvalOptions,
    rows: &mut dyn RowSink,
    progress: Option<&(dyn Fn(u64) + Sync)>,
    resume: Option<Resume>,
) -> Result<Predicted, EvalError> {
    let started = Instant::now();
    let plan = plan_for(opts);
    let path = input.path.clone();
    let format = input.format;
    let key = if format == Format::Trec {
        GoalKey::FirstField
    } else {
        GoalKey::Line
    };
    let order = opts.ranking.order_for(format);
    let mut first_line = vec![0u64; actual.goals.len()];
    let mut unknown_first = UnknownGoals::default();
    let mut lines_before = 0;
    let mut before = None;
    let mut report = Report {
        path: path.clone(),
        threads: opts.threads.max(1),
        ..Report::default()
    };
    if let Some(r) = resume {
        for (slot, _) in first_line.iter_mut().zip(&r.ranked).filter(|(_, &r)| r) {
            *slot = BEFORE;
        }
        unknown_first = r.unknown;
        lines_before = r.lines_before;
        before = Some((r.byte, r.summary));
        report = r.report;
    }
    let (reader, line_map) = if opts.regroup && format == Format::Trec {
        let (inner, map) = grouped(input, opts, &mut report)?;
        (batch_reader(inner, key, opts), Some(map))
    } else {
        let mut reader = batch_reader(input, key, opts);
        if let Some((byte, _)) = &before {
            if !reader.start_at(*byte) {
                return Err(EvalError::Options(
                    "internal: a join resumed on predictions that are not a plain file".into(),
                ));
            }
        }
        (reader, None)
    };
    let job = TextJob {
        actual,
        opts,
        plan: &plan,
        order,
        format,
        want_rows: rows.wants_rows(),
        progress,
        input: SharedInput::new(reader),
    };
    let mut collector = Collector {
        actual,
        format,
        path: &path,
        line_map: line_map.as_ref(),
        rows,
        report: &mut report,
        first_line,
        unknown_first,
        resumed_after: lines_before,
        lines_before,
    };
    let (summaries, collected) = Ordered::new(opts.threads).run(&job, |res| collector.take(res));
    // An error the collector found is about an earlier batch than any read error (unless the
    // file changed under the reader: then that is what is wrong).
    let collected = collected.map_err(|e| SharedInput::changed_or(&job.input, e));
    collected?;
    let mut input = job.input.into_inner().expect("input");
    if let Some(e) = input.error.take() {
        return Err(reader_error(
            e,
            &path,
            line_map.as_ref(),
            collector.lines_before,
        ));
    }
    // A plain file changed at any time before the evaluation's end is an error, whether or not
    // the workers had read past the change (they read a window of batches ahead of the rows).
    input.reader.check_unchanged()?;
    let Collector {
        report: rep,
        first_line,
        lines_before,
        ..
    } = collector;
    rep.lines = lines_before;
    rep.bytes = input.reader.bytes_read();
    let mut summary = match before {
        Some((_, s)) => s,
        None => Summary::new(&plan),
    };
    for s in &summaries {
        summary.merge(s).expect("same plan");
    }
    report.elapsed = started.elapsed();
    Ok(Predicted {
        summary,
        seen: first_line.iter().map(|&l| l != 0).collect(),
        universe: opts.universe,
        report,
    })
}

/// The batch reader of predictions `input` under `opts`: batches of about `opts.batch_bytes`,
/// one goal's lines at most half of `--memory`, and a lemma repeated on the next line of a goal
/// longer than a batch found as its lines arrive when repeats are fatal (`--duplicates error`
/// with no `--depth`, which may leave a repeat out).
pub(crate) fn batch_reader(input: Input, key: GoalKey, opts: &EvalOptions) -> BatchReader {
    let mut reader = BatchReader::new(input, key, opts.batch_bytes);
    reader.set_max_goal(opts.spill.goal_bytes(), opts.spill.goal_limit_name());
    reader.set_repeats_fatal(
        opts.ranking.duplicates == crate::DuplicateMode::Error && opts.ranking.depth.is_none(),
    );
    reader
}

/// An error of the batch reader (about the goal after every batch collected, its lines counted
/// from that goal's start), with file-wide lines: `lines_before`, the lines of those batches.
pub(crate) fn reader_error(
    e: InputError,
    path: &Path,
    line_map: Option<&LineMap>,
    lines_before: u64,
) -> EvalError {
    fix_error(e.into(), path, line_map, lines_before, 0)
}

/// `--regroup`: `input`'s lines sorted by goal (natural order) within the memory budget, as an
/// input of their own, and each line's original number; `report` says how.
pub(crate) fn grouped(
    input: Input,
    opts: &EvalOptions,
    report: &mut Report,
) -> Result<(Input, LineMap), EvalError> {
    let (path, format) = (input.path.clone(), input.format);
    let mut input = input;
    let grouped = lemma_ingest::group_by_goal(
        &path,
        &mut input.reader,
        lemma_ingest::GoalOrder::Natural,
        &opts.spill,
    )?;
    drop(input);
    report.runid = lemma_ingest::parse_run_line(&grouped.last_line)
        .ok()
        .flatten()
        .map(|l| l.tag.to_vec())
        .unwrap_or_default();
    report.spill = Some(grouped.report);
    let inner = match grouped.lines {
        lemma_ingest::Grouped::Memory(bytes) => Input {
            path: path.clone(),
            reader: lemma_ingest::Source::stream(std::io::Cursor::new(bytes)),
            size_on_disk: None,
            compression: lemma_ingest::Compression::None,
            format,
            map: None,
            file: None,
        },
        lemma_ingest::Grouped::Spilled(mut f) => {
            std::io::Seek::rewind(&mut f).map_err(|e| InputError::read(&path, e))?;
            // The lines as they were read: not sniffed again.
            let mut inner = lemma_ingest::open_file(&path, f, true)?;
            inner.format = format;
            inner
        }
    };
    Ok((inner, grouped.line_map))
}

/// The input, shared by the workers: each takes the next batch under the lock.
pub(crate) struct SharedInput {
    pub(crate) reader: BatchReader,
    done: bool,
    pub(crate) error: Option<InputError>,
}

impl SharedInput {
    /// `e`, or if the plain file read changed while it was read (its lines may then be another
    /// file's: zeros where it was cut short), that change.
    pub(crate) fn changed_or(this: &Mutex<SharedInput>, e: EvalError) -> EvalError {
        match this.lock().map(|i| i.reader.check_unchanged()) {
            Ok(Err(changed)) => changed.into(),
            _ => e,
        }
    }

    pub(crate) fn new(reader: BatchReader) -> Mutex<SharedInput> {
        Mutex::new(SharedInput {
            reader,
            done: false,
            error: None,
        })
    }

    /// The next batch (a plain file's only claimed here, and read by the worker while the others
    /// claim and read theirs), once `window` lets it be taken; `None` at the end or after an
    /// error, which is kept.
    pub(crate) fn next(
        this: &Mutex<SharedInput>,
        buf: &mut Vec<u8>,
        window: &Window,
        progress: Option<&(dyn Fn(u64) + Sync)>,
    ) -> Option<(u64, Next)> {
        let mut input = this.lock().expect("input");
        if input.done {
            return None;
        }
        window.wait_for(input.reader.next_index());
        match input.reader.next(buf) {
            Ok(Some(next)) => {
                if let Some(p) = progress {
                    p(input.reader.bytes_read());
                }
                Some((next.index(), next))
            }
            Ok(None) => {
                input.done = true;
                None
            }
            Err(e) => {
                input.done = true;
                input.error = Some(e);
                None
            }
        }
    }
}

impl Report {
    /// Adds a batch's counts.
    pub(crate) fn add(&mut self, stats: &Stats) {
        self.items += stats.items;
        self.duplicates_dropped += stats.duplicates_dropped;
        self.beyond_depth += stats.beyond_depth;
        self.goals_reordered += stats.goals_reordered;
        self.premises.add(&stats.premises);
    }
}

/// The text pipeline as an ordered job: units are batches of whole goals. No reader thread: each
/// worker takes the next batch itself, so the bytes it copies in are in its own core's cache when
/// it parses them, and two threads share two cores rather than three. A plain file's batches are
/// only claimed under the lock (their last 64 KiB read to find the cut, some microseconds) and
/// read outside it, by both workers at once; a stream's are read under the lock (a few hundred
/// microseconds per batch).
struct TextJob<'a> {
    actual: &'a ActualSets,
    opts: &'a EvalOptions,
    plan: &'a Arc<Plan>,
    order: OrderMode,
    format: Format,
    want_rows: bool,
    progress: Option<&'a (dyn Fn(u64) + Sync)>,
    input: Mutex<SharedInput>,
}

impl<'a> Work for TextJob<'a> {
    /// The worker and its batch buffer.
    type Worker = (Worker<'a>, Vec<u8>);
    type Unit = Next;
    type Output = BatchResult;
    type Done = Summary;

    fn worker(&self) -> Self::Worker {
        let w = Worker::new(
            self.actual,
            self.opts,
            self.plan,
            self.order,
            self.want_rows,
        );
        (w, Vec::new())
    }

    fn run(&self, (w, buf): &mut Self::Worker, _: u64, next: Next) -> BatchResult {
        let batch = match next.read(buf) {
            Ok(b) => b,
            // In batch order, like an error in the batch's lines.
            Err(e) => {
                return BatchResult {
                    error: Some(e.into()),
                    ..BatchResult::default()
                }
            }
        };
        let mut res = BatchResult {
            first_byte: batch.first_byte,
            ..BatchResult::default()
        };
        w.batch(self.format, &batch, &mut res);
        // Done with the bytes: keep the buffer for the next batch, or drop the mapped pages now
        // rather than when the collector reaches this batch in order.
        if let Some(b) = batch.data.release() {
            *buf = b;
        }
        res
    }

    fn failed(res: &BatchResult) -> bool {
        res.error.is_some()
    }

    fn finish(&self, (w, _): Self::Worker) -> Summary {
        w.into_summary()
    }
}

impl OrderedJob for TextJob<'_> {
    fn next(&self, (_, buf): &mut Self::Worker, window: &Window) -> Option<(u64, Next)> {
        SharedInput::next(&self.input, buf, window, self.progress)
    }
}

/// A batch's error (the batch starting at byte `first_byte`, after `lines_before` lines), with
/// file-wide lines and bytes of `path` (`line_map`: the original lines of regrouped input).
pub(crate) fn fix_error(
    e: EvalError,
    path: &Path,
    line_map: Option<&LineMap>,
    lines_before: u64,
    first_byte: u64,
) -> EvalError {
    let original =
        |global: u64| line_map.map_or(global, |m| m.get(global as usize - 1).unwrap_or(global));
    match e {
        EvalError::Input(mut ie) => {
            ie.path = path.to_path_buf();
            ie.line = ie.line.map(|l| original(l + lines_before));
            ie.byte = match line_map {
                Some(_) => None,
                None => ie.byte.map(|b| b + first_byte),
            };
            ie.first_line = ie.first_line.map(|l| original(l + lines_before));
            EvalError::Input(ie)
        }
        other => other,
    }
}

/// What is wrong with goal `name` whose lines began `began` ("at line N") and come again.
pub(crate) fn again_message(name: &[u8], began: &str) -> String {
    format!(
        "goal `{}` appears again; its lines began {began} and were interrupted by other \
         goals. A goal's lines must be contiguous: sort the file by goal, or pass --regroup (which \
         sorts it by goal, in memory or on disk within --memory)",
        show(name)
    )
}

/// The collector: batch results in order; contiguity, line numbers, the report, rows.
struct Collector<'c> {
    actual: &'c ActualSets,
    /// The predictions' format (a JSONL goal is one record: another is not a regroupable line).
    format: Format,
    path: &'c Path,
    /// Regrouped input: each line's original number.
    line_map: Option<&'c LineMap>,
    rows: &'c mut dyn RowSink,
    report: &'c mut Report,
    /// Each known goal's first line (0: not seen).
    first_line: Vec<u64>,
    unknown_first: UnknownGoals,
    lines_before: u64,
    /// Lines before a resumed evaluation's first ([`Resume`]).
    resumed_after: u64,
}

impl Collector<'_> {
    /// A line's number in the original input.
    fn original(&self, global: u64) -> u64 {
        self.line_map
            .map_or(global, |m| m.get(global as usize - 1).unwrap_or(global))
    }

    /// A batch's error, with file-wide lines and bytes.
    fn fix(&self, e: EvalError, first_byte: u64) -> EvalError {
        fix_error(e, self.path, self.line_map, self.lines_before, first_byte)
    }

    /// The next batch's result, in order.
    fn take(&mut self, mut res: BatchResult) -> Result<(), EvalError> {
        if let Some(e) = res.error.take() {
            return Err(self.fix(e, res.first_byte));
        }
        for (g, local) in res.goals.drain(..) {
            let line = self.lines_before + local;
            let earlier = match &g {
                GoalRef::Known(id) => {
                    let slot = &mut self.first_line[*id as usize];
                    let e = *slot;
                    if e == 0 {
                        *slot = line;
                    }
                    e
                }
                GoalRef::Unknown(name) => self.unknown_first.first_line(name, line),
            };
            if earlier != 0 && earlier != line {
                let name = match &g {
                    GoalRef::Known(id) => self.actual.goals.name(*id),
                    GoalRef::Unknown(n) => n,
                };
                let began = match earlier {
                    // Before a join handed over: the file read again to find it.
                    BEFORE => first_line_of(self.path, name, self.resumed_after + 1).map_or_else(
                        || format!("before line {}", self.resumed_after + 1),
                        |l| format!("at line {l}"),
                    ),
                    e => format!("at line {}", self.original(e)),
                };
                let message = match self.format {
                    Format::Jsonl => format!(
                        "goal `{}` has a second prediction record (its first is {began}); a JSONL \
                         file holds one record per goal, its whole ranking, goals in any order",
                        show(name)
                    ),
                    Format::Trec => again_message(name, &began),
                };
                return Err(EvalError::Input(InputError {
                    kind: ErrorKind::GoalNotContiguous,
                    path: self.path.to_path_buf(),
                    line: Some(self.original(line)),
                    byte: None,
                    first_line: None,
                    message,
                }));
            }
            self.report.goals_in_predictions += 1;
        }
        self.lines_before += res.lines;
        self.report.add(&res.stats);
        if let (Some(tag), None) = (res.last_tag.take(), self.line_map) {
            self.report.runid = tag;
        }
        for row in res.rows.drain(..) {
            self.rows.row(row).map_err(EvalError::Sink)?;
        }
        Ok(())
    }
}

/// The first line of `path` (before `before`) whose goal is `name`.
pub(crate) fn first_line_of(path: &std::path::Path, name: &[u8], before: u64) -> Option<u64> {
    use std::io::BufRead;
    let mut r = std::io::BufReader::new(std::fs::File::open(path).ok()?);
    let mut line = Vec::new();
    for no in 1..before {
        line.clear();
        if r.read_until(b'\n', &mut line).ok()? == 0 {
            return None;
        }
        if lemma_ingest::first_field(&line) == Some(name) {
            return Some(no);
        }
    }
    None
}
