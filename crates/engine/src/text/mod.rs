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

mod regroup;
mod worker;

use crate::options::{plan_for, EvalOptions};
use crate::outcome::{evaluate_unseen, EvalError, GoalRow, Report};
use crate::pool::{CloseOnDrop, Window};
use crate::sink::Sink as RowSink;
use hashbrown::HashMap;
use lemma_accum::{Plan, Summary};
use lemma_ingest::{show, ActualSets, BatchReader, ErrorKind, Format, GoalKey, Input, InputError};
use regroup::{regroup, Regrouped};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use worker::Worker;

/// A goal as the worker reports it, for the collector's contiguity check.
#[derive(Debug)]
enum GoalRef {
    Known(u32),
    Unknown(Vec<u8>),
}

#[derive(Debug, Default)]
struct BatchResult {
    index: u64,
    /// Where the batch starts in the input: error byte offsets are the batch's own.
    first_byte: u64,
    lines: u64,
    goals: Vec<(GoalRef, u64)>,
    rows: Vec<GoalRow>,
    error: Option<EvalError>,
    stats: Stats,
    last_tag: Option<Vec<u8>>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Stats {
    items: u64,
    duplicates_dropped: u64,
    beyond_depth: u64,
    goals_reordered: u64,
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
    let mut report = Report {
        path: path.clone(),
        threads: opts.threads.max(1),
        ..Report::default()
    };
    let (reader, line_map) = if opts.regroup && format == Format::Trec {
        let Regrouped {
            bytes,
            line_map: map,
            last_tag,
        } = regroup(input, key)?;
        report.regrouped = true;
        report.runid = last_tag.unwrap_or_default();
        let inner = Input {
            path: path.clone(),
            reader: Box::new(std::io::Cursor::new(bytes)),
            size_on_disk: None,
            compression: lemma_ingest::Compression::None,
            format,
            map: None,
            file: None,
        };
        (BatchReader::new(inner, key, opts.batch_bytes), Some(map))
    } else {
        (BatchReader::new(input, key, opts.batch_bytes), None)
    };
    let threads = opts.threads.max(1);
    let want_rows = rows.wants_rows();
    let stop = AtomicBool::new(false);
    let window = Window::new(4 * threads as u64 + 4);
    // No reader thread: each worker takes the next batch itself, so the bytes it copies in are in
    // its own core's cache when it parses them, and two threads share two cores rather than three.
    // A plain file's batches are only claimed under the lock (their last 64 KiB read to find the
    // cut, some microseconds) and read outside it, by both workers at once; a stream's are read
    // under the lock (a few hundred microseconds per batch).
    let input_state = Mutex::new(SharedInput {
        reader,
        done: false,
        error: None,
    });
    let (res_tx, res_rx) = sync_channel::<BatchResult>(threads * 2);

    let outcome = std::thread::scope(|scope| -> Result<(Summary, Report), EvalError> {
        let mut workers = Vec::new();
        for _ in 0..threads {
            let res_tx: SyncSender<BatchResult> = res_tx.clone();
            let plan = &plan;
            let stop = &stop;
            let window = &window;
            let input_state = &input_state;
            workers.push(scope.spawn(move || -> Summary {
                let mut w = Worker::new(actual, opts, plan, order, want_rows);
                let mut buf = Vec::new();
                loop {
                    if stop.load(AtomicOrdering::Relaxed) {
                        break;
                    }
                    let next = {
                        let mut input = input_state.lock().expect("input");
                        if input.done {
                            break;
                        }
                        window.wait_for(input.reader.next_index());
                        if stop.load(AtomicOrdering::Relaxed) {
                            break;
                        }
                        // A plain file's batch is only claimed here, and read below, while the
                        // other workers claim and read theirs.
                        match input.reader.next(&mut buf) {
                            Ok(Some(next)) => {
                                if let Some(p) = progress {
                                    p(input.reader.bytes_read());
                                }
                                next
                            }
                            Ok(None) => {
                                input.done = true;
                                break;
                            }
                            Err(e) => {
                                input.done = true;
                                input.error = Some(e);
                                break;
                            }
                        }
                    };
                    let index = next.index();
                    let batch = match next.read(&mut buf) {
                        Ok(b) => b,
                        Err(e) => {
                            // In batch order, like an error in the batch's lines: the collector
                            // stops there and lets waiting workers go; the other workers stop
                            // taking batches.
                            stop.store(true, AtomicOrdering::Relaxed);
                            let res = BatchResult {
                                index,
                                error: Some(e.into()),
                                ..BatchResult::default()
                            };
                            let _ = res_tx.send(res);
                            break;
                        }
                    };
                    let mut res = BatchResult {
                        index: batch.index,
                        first_byte: batch.first_byte,
                        ..BatchResult::default()
                    };
                    w.batch(format, &batch, &mut res);
                    // Done with the bytes: keep the buffer for the next batch, or drop the mapped
                    // pages now rather than when the collector reaches this batch in order.
                    if let Some(b) = batch.data.release() {
                        buf = b;
                    }
                    if res_tx.send(res).is_err() {
                        break;
                    }
                }
                w.into_summary()
            }));
        }
        drop(res_tx);
        // Workers waiting on the window are let go once the collector is done (even by a panic).
        let close = CloseOnDrop(&window);
        let collected = collect(
            &window,
            actual,
            &plan,
            opts,
            &path,
            res_rx,
            line_map.as_deref(),
            rows,
            &mut report,
        );
        if collected.is_err() {
            stop.store(true, AtomicOrdering::Relaxed);
        }
        drop(close);
        let mut summary = Summary::new(&plan);
        for w in workers {
            let s = w.join().expect("worker panicked");
            summary.merge(&s).expect("same plan");
        }
        // An error the collector found is about an earlier batch than any read error.
        let extra = collected?;
        let mut input = input_state.lock().expect("input");
        if let Some(e) = input.error.take() {
            return Err(e.into());
        }
        report.bytes = input.reader.bytes_read();
        summary.merge(&extra).expect("same plan");
        Ok((summary, std::mem::take(&mut report)))
    });
    let (summary, mut report) = outcome?;
    report.elapsed = started.elapsed();
    Ok((summary, report))
}

/// The input, shared by the workers: each takes the next batch under the lock.
struct SharedInput {
    reader: BatchReader,
    done: bool,
    error: Option<InputError>,
}

/// The collector: results in batch order, contiguity, line numbers, rows; then goals without
/// predictions. Returns the summary of those goals.
#[allow(clippy::too_many_arguments)]
fn collect(
    window: &Window,
    actual: &ActualSets,
    plan: &Arc<Plan>,
    opts: &EvalOptions,
    path: &Path,
    res_rx: Receiver<BatchResult>,
    line_map: Option<&[u64]>,
    rows: &mut dyn RowSink,
    report: &mut Report,
) -> Result<Summary, EvalError> {
    let mut first_line = vec![0u64; actual.goals.len()];
    let mut unknown_first: HashMap<Vec<u8>, u64> = HashMap::new();
    let mut pending: BTreeMap<u64, BatchResult> = BTreeMap::new();
    let mut next = 0u64;
    let mut lines_before = 0u64;
    let original = |global: u64| {
        line_map.map_or(global, |m| {
            m.get(global as usize - 1).copied().unwrap_or(global)
        })
    };
    let fix = |e: EvalError, lines_before: u64, first_byte: u64| -> EvalError {
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
    };
    for res in res_rx.iter() {
        pending.insert(res.index, res);
        while let Some(mut res) = pending.remove(&next) {
            next += 1;
            window.advance(next);
            if let Some(e) = res.error.take() {
                return Err(fix(e, lines_before, res.first_byte));
            }
            for (g, local) in res.goals.drain(..) {
                let line = lines_before + local;
                let earlier = match &g {
                    GoalRef::Known(id) => {
                        let slot = &mut first_line[*id as usize];
                        let e = *slot;
                        if e == 0 {
                            *slot = line;
                        }
                        e
                    }
                    GoalRef::Unknown(name) => *unknown_first.entry(name.clone()).or_insert(line),
                };
                if earlier != 0 && earlier != line {
                    let name = match &g {
                        GoalRef::Known(id) => show(actual.goals.name(*id)),
                        GoalRef::Unknown(n) => show(n),
                    };
                    return Err(EvalError::Input(InputError {
                        kind: ErrorKind::GoalNotContiguous,
                        path: path.to_path_buf(),
                                                line: Some(original(line)),
                        byte: None,
                        first_line: None,
                        message: format!(
                            "goal `{name}` appears again; its lines began at line {} and were interrupted by other \
                             goals. A goal's lines must be contiguous: sort the file by goal, or pass --regroup \
                             (which buffers the whole file in memory)",
                            original(earlier)
                        ),
                    }));
                }
                report.goals_in_predictions += 1;
            }
            lines_before += res.lines;
            report.items += res.stats.items;
            report.duplicates_dropped += res.stats.duplicates_dropped;
            report.beyond_depth += res.stats.beyond_depth;
            report.goals_reordered += res.stats.goals_reordered;
            if let (Some(tag), None) = (res.last_tag.take(), line_map) {
                report.runid = tag;
            }
            for row in res.rows.drain(..) {
                rows.row(row).map_err(EvalError::Sink)?;
            }
        }
    }
    report.lines = lines_before;
    let mut summary = Summary::new(plan);
    evaluate_unseen(
        actual,
        plan,
        opts,
        |gid| first_line[gid] != 0,
        opts.universe,
        &mut summary,
        rows,
    )?;
    Ok(summary)
}
