//! The async API (cargo feature `async`): goals from a [`Stream`] or into a
//! [`futures::Sink`], and text from an [`AsyncRead`], evaluated on worker threads of their own.
//!
//! Nothing here runs an evaluation on the runtime's threads: a [`Pool`] owns `workers` plain
//! threads, each with a push [`Session`]; goals reach them through a queue guarded by a
//! semaphore of `in_flight` permits, so at most `in_flight` goals are queued or being evaluated
//! and a faster producer waits ([`Pool::push`] awaits a permit). Per-goal rows come back as a
//! [`Stream`] ([`Pool::rows`]), in the order the workers finish them. Dropping the pool (or a
//! future that owns it) stops the workers and joins them: no thread outlives it.
//!
//! [`evaluate_read`] reads bytes from any [`AsyncRead`] (a socket, an HTTP body, an object store)
//! on the calling task and hands them, a bounded number of chunks at a time, to the file pipeline
//! running on its own threads: TREC or JSONL, plain, gzip or zstd, in the memory of a file.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use futures::StreamExt;
//! use lemma_eval::aio::{evaluate_stream, PoolOptions, RankedGoal};
//! use lemma_eval::Evaluator;
//! # let dir = tempfile::tempdir()?;
//! # let qrels = dir.path().join("qrels");
//! # std::fs::write(&qrels, "g1 0 a 1\ng2 0 b 1\n")?;
//! let evaluator = Evaluator::builder().measure_names(["RR"])?.build_from_path(&qrels)?;
//! let goals = futures::stream::iter([
//!     RankedGoal::ranked("g1", ["x", "a"]),
//!     RankedGoal::scored("g2", [("b", 0.9), ("y", 0.1)]),
//! ]);
//! let rt = tokio::runtime::Builder::new_current_thread().build()?;
//! let done = rt.block_on(evaluate_stream(&evaluator, goals, PoolOptions::default()))?;
//! assert_eq!(done.summary.aggregates()[0].1.headline(), Some(0.75)); // (1/2 + 1) / 2
//! # Ok(()) }
//! ```

use crate::evaluator::Evaluation;
use crate::{EvalError, Evaluator, GoalRow, Predictions, Pushed, Session, Sink};
use futures::{Stream, StreamExt};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::{mpsc, oneshot, OwnedSemaphorePermit, Semaphore};

/// One goal's ranking, as the push API takes it.
#[derive(Clone, Debug, PartialEq)]
pub enum RankedGoal {
    /// Lemma names, best first ([`Session::push_ranked`]).
    Ranked {
        /// The goal id.
        goal: String,
        /// The lemmas in rank order.
        lemmas: Vec<String>,
    },
    /// `(lemma, score)` pairs, ranked as a TREC run's lines ([`Session::push_scored`]).
    Scored {
        /// The goal id.
        goal: String,
        /// The pairs, in any order.
        items: Vec<(String, f64)>,
    },
    /// Lemma ids, best first ([`Session::push_ids`]).
    Ids {
        /// The goal id.
        goal: String,
        /// The ids in rank order.
        ids: Vec<u32>,
    },
}

impl RankedGoal {
    /// A goal ranked as `lemmas`, best first.
    pub fn ranked<S: Into<String>>(
        goal: impl Into<String>,
        lemmas: impl IntoIterator<Item = S>,
    ) -> Self {
        RankedGoal::Ranked {
            goal: goal.into(),
            lemmas: lemmas.into_iter().map(Into::into).collect(),
        }
    }

    /// A goal of scored lemmas.
    pub fn scored<S: Into<String>>(
        goal: impl Into<String>,
        items: impl IntoIterator<Item = (S, f64)>,
    ) -> Self {
        RankedGoal::Scored {
            goal: goal.into(),
            items: items.into_iter().map(|(n, s)| (n.into(), s)).collect(),
        }
    }

    /// Pushes the goal into `session`.
    pub fn push_into<'s>(&self, session: &'s mut Session) -> Result<Pushed<'s>, EvalError> {
        match self {
            RankedGoal::Ranked { goal, lemmas } => session.push_ranked(goal, lemmas),
            RankedGoal::Scored { goal, items } => session.push_scored(goal, items),
            RankedGoal::Ids { goal, ids } => session.push_ids(goal, ids),
        }
    }

    /// The goal id.
    pub fn goal(&self) -> &str {
        match self {
            RankedGoal::Ranked { goal, .. }
            | RankedGoal::Scored { goal, .. }
            | RankedGoal::Ids { goal, .. } => goal,
        }
    }
}

/// How a [`Pool`] runs.
#[derive(Copy, Clone, Debug)]
pub struct PoolOptions {
    /// Worker threads (at least 1; default: the evaluator's thread count).
    pub workers: Option<usize>,
    /// Goals queued or being evaluated, at most (at least `workers`; default 64).
    pub in_flight: usize,
    /// Whether per-goal rows are wanted ([`Pool::rows`]).
    pub rows: bool,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            workers: None,
            in_flight: 64,
            rows: false,
        }
    }
}

type Job = (RankedGoal, OwnedSemaphorePermit);

/// What the workers share.
struct Shared {
    jobs: Mutex<mpsc::UnboundedReceiver<Job>>,
    /// Set when the pool is dropped: workers stop at once (even while waiting to deliver a row).
    cancelled: AtomicBool,
    /// The first error a worker met; the others then drop their goals.
    error: Mutex<Option<EvalError>>,
    failed: AtomicBool,
}

/// Sends `row` on `tx`, waiting (without a runtime) while the channel is full, until the pool is
/// cancelled or the receiver gone.
fn deliver(tx: &mpsc::Sender<GoalRow>, mut row: GoalRow, cancelled: &AtomicBool) {
    loop {
        match tx.try_send(row) {
            Ok(()) => return,
            Err(mpsc::error::TrySendError::Closed(_)) => return,
            Err(mpsc::error::TrySendError::Full(r)) => {
                if cancelled.load(Ordering::Relaxed) {
                    return;
                }
                row = r;
                std::thread::park_timeout(Duration::from_micros(200));
            }
        }
    }
}

/// Evaluates goals on worker threads: see the [module documentation](self).
pub struct Pool {
    ev: Evaluator,
    jobs: Option<mpsc::UnboundedSender<Job>>,
    permits: Arc<Semaphore>,
    in_flight: usize,
    rows_tx: Option<mpsc::Sender<GoalRow>>,
    rows_rx: Option<mpsc::Receiver<GoalRow>>,
    shared: Arc<Shared>,
    workers: Vec<(JoinHandle<()>, oneshot::Receiver<Session>)>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("workers", &self.workers.len())
            .field("in_flight", &self.in_flight())
            .finish()
    }
}

impl Evaluator {
    /// A pool of worker threads evaluating pushed goals (see [`aio`](crate::aio)).
    pub fn pool(&self, opts: PoolOptions) -> Result<Pool, EvalError> {
        let workers = opts.workers.unwrap_or(self.options().threads).max(1);
        let in_flight = opts.in_flight.max(workers);
        let (jobs_tx, jobs_rx) = mpsc::unbounded_channel::<Job>();
        let (rows_tx, rows_rx) = if opts.rows {
            let (t, r) = mpsc::channel(in_flight);
            (Some(t), Some(r))
        } else {
            (None, None)
        };
        let shared = Arc::new(Shared {
            jobs: Mutex::new(jobs_rx),
            cancelled: AtomicBool::new(false),
            error: Mutex::new(None),
            failed: AtomicBool::new(false),
        });
        let mut handles = Vec::with_capacity(workers);
        for k in 0..workers {
            let mut session = self.session()?;
            let (done_tx, done_rx) = oneshot::channel();
            let shared = shared.clone();
            let rows = rows_tx.clone();
            let h = std::thread::Builder::new()
                .name(format!("lemma-eval-pool-{k}"))
                .spawn(move || {
                    worker(&mut session, &shared, rows.as_ref());
                    let _ = done_tx.send(session);
                })
                .map_err(|e| EvalError::Options(format!("cannot start a worker thread: {e}")))?;
            handles.push((h, done_rx));
        }
        Ok(Pool {
            ev: self.clone(),
            jobs: Some(jobs_tx),
            permits: Arc::new(Semaphore::new(in_flight)),
            in_flight,
            rows_tx,
            rows_rx,
            shared,
            workers: handles,
        })
    }
}

/// A worker's loop: the next goal, pushed into its session, its row delivered, its permit
/// returned.
fn worker(session: &mut Session, shared: &Shared, rows: Option<&mpsc::Sender<GoalRow>>) {
    loop {
        let job = {
            let mut q = shared.jobs.lock().expect("queue");
            q.blocking_recv()
        };
        let Some((goal, permit)) = job else { return };
        if shared.cancelled.load(Ordering::Relaxed) {
            return;
        }
        if shared.failed.load(Ordering::Relaxed) {
            continue;
        }
        match goal.push_into(session) {
            Ok(Pushed::Evaluated(values)) => {
                if let Some(tx) = rows {
                    let row = GoalRow {
                        goal: goal.goal().as_bytes().to_vec(),
                        values: values.to_vec(),
                        empty: false,
                    };
                    deliver(tx, row, &shared.cancelled);
                }
            }
            Ok(Pushed::Skipped(_)) => {}
            Err(e) => {
                let mut slot = shared.error.lock().expect("error");
                slot.get_or_insert(e);
                shared.failed.store(true, Ordering::Relaxed);
            }
        }
        drop(permit);
    }
}

impl Pool {
    /// Queues a goal, waiting while `in_flight` goals are queued or being evaluated. An error when
    /// an earlier goal failed (its error; later calls and [`Pool::finish`] say so too).
    pub async fn push(&self, goal: RankedGoal) -> Result<(), EvalError> {
        self.check()?;
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        self.check()?;
        let jobs = self.jobs.as_ref().expect("open until finish");
        jobs.send((goal, permit))
            .map_err(|_| EvalError::Options("the pool's workers have stopped".into()))
    }

    fn check(&self) -> Result<(), EvalError> {
        if !self.shared.failed.load(Ordering::Relaxed) {
            return Ok(());
        }
        let e = self.shared.error.lock().expect("error");
        Err(EvalError::Options(format!(
            "evaluation stopped: {}",
            e.as_ref().map_or("a goal failed".into(), |e| e.to_string())
        )))
    }

    /// Goals queued or being evaluated now (at most the pool's `in_flight`).
    pub fn in_flight(&self) -> usize {
        self.in_flight - self.permits.available_permits()
    }

    /// A [`futures::Sink`] of goals into this pool ([`Pool::push`] for each).
    pub fn sink(&self) -> impl futures::Sink<RankedGoal, Error = EvalError> + Unpin + '_ {
        Box::pin(futures::sink::unfold(self, |pool, goal| async move {
            pool.push(goal).await?;
            Ok(pool)
        }))
    }

    /// The per-goal rows, as the workers finish them (then, after [`Pool::finish`], the goals
    /// never pushed, evaluated as empty): `None` unless the pool was made with
    /// [`PoolOptions::rows`], or when taken before. Read them while pushing: a full row queue
    /// holds the workers, and then the producer.
    pub fn rows(&mut self) -> Option<impl Stream<Item = GoalRow> + Send + 'static> {
        let rx = self.rows_rx.take()?;
        Some(futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|row| (row, rx))
        }))
    }

    /// Ends the pool: waits for the workers (without blocking the runtime), merges their
    /// sessions and evaluates the goals never pushed (their rows go to the row stream). Returns
    /// the summary of every goal, or the first error a goal met.
    pub async fn finish(mut self) -> Result<Evaluation, EvalError> {
        drop(self.jobs.take());
        let mut sessions = Vec::with_capacity(self.workers.len());
        for (_, done) in self.workers.iter_mut() {
            match done.await {
                Ok(s) => sessions.push(s),
                Err(_) => return Err(EvalError::Options("a worker thread panicked".into())),
            }
        }
        for (h, _) in self.workers.drain(..) {
            let _ = h.join();
        }
        if let Some(e) = self.shared.error.lock().expect("error").take() {
            return Err(e);
        }
        // The goals never pushed: O(goals of the actual sets), on a thread of its own.
        let rows = self.rows_tx.take();
        let shared = self.shared.clone();
        let (tx, rx) = oneshot::channel();
        let h = std::thread::Builder::new()
            .name("lemma-eval-pool-finish".into())
            .spawn(move || {
                let mut it = sessions.into_iter();
                let mut first = it.next().expect("at least one worker");
                let r = it
                    .try_for_each(|s| first.merge(s))
                    .and_then(|()| match &rows {
                        Some(tx) => first.finish(&mut RowSender(tx, &shared.cancelled)),
                        None => first.finish(&mut crate::SummaryOnly),
                    });
                let _ = tx.send(r);
            })
            .map_err(|e| EvalError::Options(format!("cannot start a thread: {e}")))?;
        let r = rx.await;
        let _ = h.join();
        r.unwrap_or_else(|_| Err(EvalError::Options("the finishing thread panicked".into())))
    }

    /// The evaluator.
    pub fn evaluator(&self) -> &Evaluator {
        &self.ev
    }
}

/// Rows of the goals never pushed, into the row stream.
struct RowSender<'a>(&'a mpsc::Sender<GoalRow>, &'a AtomicBool);

impl Sink for RowSender<'_> {
    fn row(&mut self, row: GoalRow) -> io::Result<()> {
        deliver(self.0, row, self.1);
        Ok(())
    }
}

impl Drop for Pool {
    /// Stops the workers and joins them (each ends within the goal it is evaluating).
    fn drop(&mut self) {
        self.shared.cancelled.store(true, Ordering::Relaxed);
        drop(self.jobs.take());
        drop(self.rows_rx.take());
        for (h, _) in self.workers.drain(..) {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

/// Evaluates a stream of goals on a [`Pool`]; the summary of every goal (those never in the
/// stream evaluated as empty, or skipped, per the options). Dropping the future stops the
/// workers.
pub async fn evaluate_stream<S>(
    evaluator: &Evaluator,
    goals: S,
    opts: PoolOptions,
) -> Result<Evaluation, EvalError>
where
    S: Stream<Item = RankedGoal>,
{
    let pool = evaluator.pool(PoolOptions {
        rows: false,
        ..opts
    })?;
    let mut goals = std::pin::pin!(goals);
    while let Some(g) = goals.next().await {
        pool.push(g).await?;
    }
    pool.finish().await
}

/// The chunks read by the task, handed to the pipeline whole: its batches are cut from them.
struct ChannelChunks {
    rx: mpsc::Receiver<io::Result<Vec<u8>>>,
    /// Spent chunks go back to the reading task (no fresh pages to fault in for every chunk).
    spent: mpsc::UnboundedSender<Vec<u8>>,
    cancelled: Arc<AtomicBool>,
}

impl lemma_ingest::ChunkSource for ChannelChunks {
    fn next_chunk(&mut self, spent: &mut Vec<Vec<u8>>) -> io::Result<Option<Vec<u8>>> {
        for b in spent.drain(..).filter(|b| b.capacity() >= CHUNK) {
            let _ = self.spent.send(b);
        }
        loop {
            if self.cancelled.load(Ordering::Relaxed) {
                return Err(io::Error::other("the evaluation was cancelled"));
            }
            match self.rx.blocking_recv() {
                None => return Ok(None),
                Some(Err(e)) => return Err(e),
                Some(Ok(c)) if c.is_empty() => {}
                Some(Ok(c)) => return Ok(Some(c)),
            }
        }
    }
}

/// Size of the chunks read from an [`AsyncRead`].
const CHUNK: usize = 2 << 20;
/// Chunks read ahead of the pipeline, at most.
const CHUNKS_AHEAD: usize = 2;

/// Stops the pipeline's thread and joins it when the future is dropped before it ends. It owns the
/// chunks' sender: dropped first, so a pipeline waiting for a chunk sees the end at once.
struct Cancel {
    tx: Option<mpsc::Sender<io::Result<Vec<u8>>>>,
    cancelled: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Cancel {
    fn drop(&mut self) {
        self.cancelled.store(true, Ordering::Relaxed);
        drop(self.tx.take());
        if let Some(h) = self.thread.take() {
            let _ = h.join();
        }
    }
}

/// Evaluates predictions read from `reader` (TREC or JSONL; plain, gzip or zstd, recognised from
/// the bytes as a file's are), named `name` in errors. The bytes are read on this task in 2 MiB
/// chunks, at most two ahead of the pipeline, which runs on threads of its own and cuts its
/// batches out of the chunks without copying them (a compressed input is decompressed from them):
/// the memory of a file's evaluation plus a few chunks. Dropping the future stops the pipeline and
/// joins its threads.
pub async fn evaluate_read<R>(
    evaluator: &Evaluator,
    name: impl AsRef<Path>,
    mut reader: R,
) -> Result<Evaluation, EvalError>
where
    R: AsyncRead + Unpin,
{
    let (tx, rx) = mpsc::channel::<io::Result<Vec<u8>>>(CHUNKS_AHEAD);
    let (spent_tx, mut spent_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let cancelled = Arc::new(AtomicBool::new(false));
    let (done_tx, done_rx) = oneshot::channel();
    let ev = evaluator.clone();
    let path = name.as_ref().to_path_buf();
    let source = ChannelChunks {
        rx,
        spent: spent_tx,
        cancelled: cancelled.clone(),
    };
    let thread = std::thread::Builder::new()
        .name("lemma-eval-read".into())
        .spawn(move || {
            let r = lemma_ingest::from_chunks(&path, Box::new(source))
                .map_err(EvalError::from)
                .and_then(|input| ev.evaluate(Predictions::Text(input), &mut crate::SummaryOnly));
            let _ = done_tx.send(r);
        })
        .map_err(|e| EvalError::Options(format!("cannot start a thread: {e}")))?;
    let mut guard = Cancel {
        tx: Some(tx),
        cancelled,
        thread: Some(thread),
    };
    loop {
        let mut chunk = match spent_rx.try_recv() {
            Ok(mut c) if c.capacity() >= CHUNK => {
                c.clear();
                c
            }
            _ => Vec::with_capacity(CHUNK),
        };
        let read = (&mut reader)
            .take(CHUNK as u64)
            .read_to_end(&mut chunk)
            .await;
        let end = matches!(read, Ok(0) | Err(_));
        let item = read.map(|_| chunk);
        let item = match item {
            Ok(c) if c.is_empty() => break,
            other => other,
        };
        // The pipeline stopped (an error in the input): its result says why.
        let tx = guard.tx.as_ref().expect("held until the end");
        if tx.send(item).await.is_err() || end {
            break;
        }
        // A reader that is always ready (an in-memory source) must not hold the runtime's thread:
        // let the other tasks run once a chunk.
        tokio::task::yield_now().await;
    }
    drop(guard.tx.take());
    let r = done_rx.await;
    if let Some(h) = guard.thread.take() {
        let _ = h.join();
    }
    r.unwrap_or_else(|_| Err(EvalError::Options("the evaluation thread panicked".into())))
}
