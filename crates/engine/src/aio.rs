//! The async API (cargo feature `async`): goals from a [`Stream`] or into a
//! [`futures::Sink`], and text from an [`AsyncRead`], evaluated on worker threads of their own.
//!
//! Nothing here runs an evaluation on the runtime's threads: a [`Pool`] owns `workers` plain
//! threads, each with a push [`Session`]; goals reach them through a queue guarded by a
//! semaphore of `in_flight` permits, so at most `in_flight` goals are queued, being evaluated or
//! holding their row (below), and a faster producer waits ([`Pool::push`] awaits a permit).
//! Dropping the pool (or a future that owns it) stops the workers and joins them: no thread
//! outlives it.
//!
//! Per-goal rows (with [`PoolOptions::rows`]) come back as a [`Stream`] ([`Pool::rows`]): the
//! pushed goals' rows in the order the workers finish them; then, once [`Pool::finish`] has
//! returned, the rows of the actual sets' goals never pushed, in the order [`Session::finish`]
//! gives them, made on a thread of the pool as the stream is read (at most two chunks of
//! `in_flight` rows ahead of the reader). Goals that are not evaluated (no actual set, nothing
//! relevant, skipped by the options) have no row, as in every evaluation. The stream ends after
//! the last of them or, when the pool fails or is dropped, after the rows already made.
//!
//! Read the rows on a task of their own while pushing (the second example below). Rows wait for
//! the reader in a queue of `in_flight` rows; a worker whose row finds the queue full keeps the
//! row, and its goal's permit, until the reader makes room. So with nobody reading, pushes go on
//! until `in_flight` rows wait and `in_flight` more goals are in flight (`2 × in_flight` goals
//! with rows), then the next push waits for the reader: at most `2 × in_flight` rows are held,
//! whatever the number of goals. [`Pool::finish`] never waits for the reader: the rows the workers
//! still hold (at most `in_flight`) join the queue beyond its bound, and the goals never pushed
//! give their rows only as the stream is read. Taking the rows, pushing up to that bound,
//! awaiting `finish` and collecting the rows afterwards therefore works too, however many goals
//! the actual sets have.
//!
//! The [`Pool`] is the one place where worker threads are not run by [`lemma_par::Ordered`], the
//! ordered mechanism under every other path (the file pipelines, the join, the reading of qrels,
//! Python's dict pushes), and on purpose: its producer is async (a push awaits a tokio permit
//! rather than blocking a thread), its workers outlive any one call (they live as long as the
//! pool, across the caller's awaits), and its rows go out as a [`Stream`] in the order the workers
//! finish them, each row holding its goal's permit until it is read, which is what bounds the
//! goals and rows in flight without an in-order window. [`evaluate_read`], on the other hand,
//! runs the file pipeline, and so [`lemma_par::Ordered`], on a thread of its own.
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
//!
//! Rows of more goals than `in_flight`, read by a task of their own while the goals are pushed:
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use futures::StreamExt;
//! use lemma_eval::aio::{PoolOptions, RankedGoal};
//! use lemma_eval::{Evaluator, GoalRow};
//! # let dir = tempfile::tempdir()?;
//! # let qrels = dir.path().join("qrels");
//! // 30 goals, g0 to g29, each with lemma `a` relevant.
//! # std::fs::write(&qrels, (0..30).map(|g| format!("g{g} 0 a 1\n")).collect::<String>())?;
//! let evaluator = Evaluator::builder().measure_names(["RR"])?.build_from_path(&qrels)?;
//! let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build()?;
//! let (done, rows) = rt.block_on(async {
//!     let mut pool = evaluator.pool(PoolOptions { workers: Some(2), in_flight: 4, rows: true })?;
//!     let reader = tokio::spawn(pool.rows().unwrap().collect::<Vec<GoalRow>>());
//!     for g in 0..20 {
//!         pool.push(RankedGoal::ranked(format!("g{g}"), ["x", "a"])).await?; // RR 1/2
//!     }
//!     let done = pool.finish().await?;
//!     Ok::<_, Box<dyn std::error::Error>>((done, reader.await?))
//! })?;
//! assert_eq!(rows.len(), 30); // the 20 pushed goals', then those of g20 to g29, empty
//! assert!(rows[..20].iter().all(|r| !r.empty && r.values == [Some(0.5)]));
//! assert!(rows[20..].iter().all(|r| r.empty && r.values == [Some(0.0)]));
//! assert_eq!(done.summary.aggregates()[0].1.headline(), Some(20.0 * 0.5 / 30.0));
//! # Ok(()) }
//! ```

use crate::evaluator::Evaluation;
use crate::{EvalError, Evaluator, GoalRow, Predictions, Pushed, Session, Sink};
use futures::{Stream, StreamExt};
use std::collections::VecDeque;
use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::thread::JoinHandle;
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
    /// The corpus's premise numbers, best first ([`Session::push_premise_ids`]: ReProver's
    /// indices into `corpus.all_premises`).
    PremiseIds {
        /// The goal id.
        goal: String,
        /// The numbers in rank order.
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

    /// A goal ranked as the corpus's premises numbered `ids`, best first.
    pub fn premise_ids(goal: impl Into<String>, ids: impl IntoIterator<Item = u32>) -> Self {
        RankedGoal::PremiseIds {
            goal: goal.into(),
            ids: ids.into_iter().collect(),
        }
    }

    /// Pushes the goal into `session`.
    pub fn push_into<'s>(&self, session: &'s mut Session) -> Result<Pushed<'s>, EvalError> {
        match self {
            RankedGoal::Ranked { goal, lemmas } => session.push_ranked(goal, lemmas),
            RankedGoal::Scored { goal, items } => session.push_scored(goal, items),
            RankedGoal::Ids { goal, ids } => session.push_ids(goal, ids),
            RankedGoal::PremiseIds { goal, ids } => session.push_premise_ids(goal, ids),
        }
    }

    /// The goal id.
    pub fn goal(&self) -> &str {
        match self {
            RankedGoal::Ranked { goal, .. }
            | RankedGoal::Scored { goal, .. }
            | RankedGoal::Ids { goal, .. }
            | RankedGoal::PremiseIds { goal, .. } => goal,
        }
    }
}

/// How a [`Pool`] runs.
#[derive(Copy, Clone, Debug)]
pub struct PoolOptions {
    /// Worker threads (at least 1; default: the evaluator's thread count).
    pub workers: Option<usize>,
    /// Goals queued, being evaluated or holding their row until the row queue has room, at most
    /// (at least `workers`; default 64); also the length of the row queue.
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

/// The pushed goals' rows on their way to the row stream ([`Pool::rows`]), and what follows them.
struct RowQueue {
    state: Mutex<RowState>,
    /// Signalled when a row leaves the queue, and when the workers no longer wait for room.
    room: Condvar,
}

struct RowState {
    rows: VecDeque<GoalRow>,
    /// Rows the queue holds before a worker waits for room: the pool's `in_flight`.
    cap: usize,
    /// Whether workers wait for room: until the pool finishes or is dropped.
    bounded: bool,
    /// Workers waiting for room.
    waiting: usize,
    /// Nobody will read the rows (the stream was dropped, or the pool before the stream was
    /// taken): rows are dropped, not queued.
    unread: bool,
    /// What follows the rows queued.
    then: Then,
    /// The stream's task, waiting for a row.
    waker: Option<Waker>,
}

/// What the row stream gives once the queue is empty.
enum Then {
    /// Wait: the pool runs, more rows may come.
    More,
    /// The rows of the goals never pushed: the pool finished.
    Unpushed(Unpushed),
    /// Nothing more: the pool failed or was dropped.
    End,
}

impl RowQueue {
    fn new(cap: usize) -> Self {
        RowQueue {
            state: Mutex::new(RowState {
                rows: VecDeque::with_capacity(cap),
                cap,
                bounded: true,
                waiting: 0,
                unread: false,
                then: Then::More,
                waker: None,
            }),
            room: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, RowState> {
        self.state.lock().expect("the row queue")
    }

    /// Queues a worker's row, waiting (without a runtime) while the queue is full and bounded.
    fn deliver(&self, row: GoalRow) {
        let mut s = self.lock();
        while s.bounded && !s.unread && s.rows.len() >= s.cap {
            s.waiting += 1;
            s = self.room.wait(s).expect("the row queue");
            s.waiting -= 1;
        }
        if s.unread {
            return;
        }
        s.rows.push_back(row);
        let waker = s.waker.take();
        drop(s);
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Workers no longer wait for room: their rows join the queue beyond its bound.
    fn unbound(&self) {
        self.lock().bounded = false;
        self.room.notify_all();
    }

    /// Ends the rows of pushed goals: `then` follows them, unless an end came before. Workers no
    /// longer wait for room. With `unread`, nobody will read: rows are dropped, and so is what
    /// follows them.
    fn end(&self, then: Then, unread: bool) {
        let mut s = self.lock();
        s.bounded = false;
        // Dropped after the lock is released: dropping the unpushed goals' rows joins a thread.
        let old = if unread {
            s.unread = true;
            s.rows = VecDeque::new();
            std::mem::replace(&mut s.then, Then::End)
        } else if matches!(s.then, Then::More) {
            std::mem::replace(&mut s.then, then)
        } else {
            then
        };
        let waker = s.waker.take();
        drop(s);
        self.room.notify_all();
        if let Some(w) = waker {
            w.wake();
        }
        drop(old);
    }
}

/// The rows of the goals never pushed, made on a thread of their own (which also merges the
/// workers' sessions and finishes them), a chunk at a time while the reader keeps up. Dropping it
/// stops the thread and joins it.
struct Unpushed {
    chunks: Option<mpsc::Receiver<Vec<GoalRow>>>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Unpushed {
    fn drop(&mut self) {
        // The thread's next send fails: it ends within the chunk it is making.
        drop(self.chunks.take());
        if let Some(h) = self.thread.take() {
            let _ = h.join();
        }
    }
}

/// Rows into chunks for the row stream.
struct ChunkSender {
    tx: mpsc::Sender<Vec<GoalRow>>,
    chunk: Vec<GoalRow>,
    size: usize,
}

impl ChunkSender {
    /// Sends the rows made so far, waiting (without a runtime) for the reader; an error when the
    /// stream is gone.
    fn flush(&mut self) -> io::Result<()> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.chunk, Vec::with_capacity(self.size));
        self.tx
            .blocking_send(chunk)
            .map_err(|_| io::Error::other("the row stream was dropped"))
    }
}

impl Sink for ChunkSender {
    fn row(&mut self, row: GoalRow) -> io::Result<()> {
        self.chunk.push(row);
        match self.chunk.len() >= self.size {
            true => self.flush(),
            false => Ok(()),
        }
    }
}

/// The row stream: see [`Pool::rows`].
struct Rows {
    queue: Arc<RowQueue>,
    /// The goals never pushed, once the queue has given every pushed goal's row.
    unpushed: Option<Unpushed>,
    chunk: std::vec::IntoIter<GoalRow>,
    done: bool,
}

impl Stream for Rows {
    type Item = GoalRow;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<GoalRow>> {
        let this = self.get_mut();
        loop {
            if let Some(row) = this.chunk.next() {
                return Poll::Ready(Some(row));
            }
            if this.done {
                return Poll::Ready(None);
            }
            if let Some(u) = &mut this.unpushed {
                let chunks = u.chunks.as_mut().expect("held until dropped");
                match chunks.poll_recv(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Some(chunk)) => this.chunk = chunk.into_iter(),
                    Poll::Ready(None) => {
                        // Every row made: the thread is ending.
                        this.unpushed = None;
                        this.done = true;
                    }
                }
                continue;
            }
            let mut s = this.queue.lock();
            if let Some(row) = s.rows.pop_front() {
                let waiting = s.waiting > 0;
                drop(s);
                if waiting {
                    this.queue.room.notify_one();
                }
                return Poll::Ready(Some(row));
            }
            match std::mem::replace(&mut s.then, Then::End) {
                Then::More => {
                    s.then = Then::More;
                    s.waker = Some(cx.waker().clone());
                    return Poll::Pending;
                }
                Then::End => this.done = true,
                Then::Unpushed(u) => this.unpushed = Some(u),
            }
        }
    }
}

impl Drop for Rows {
    /// Nobody reads any more: workers drop their rows instead of waiting for room, and the rows
    /// of the goals never pushed are no longer made (their thread is joined).
    fn drop(&mut self) {
        self.queue.end(Then::End, true);
        drop(self.unpushed.take());
    }
}

/// Evaluates goals on worker threads: see the [module documentation](self).
pub struct Pool {
    ev: Evaluator,
    jobs: Option<mpsc::UnboundedSender<Job>>,
    permits: Arc<Semaphore>,
    in_flight: usize,
    /// The rows' queue, when rows are wanted.
    rows: Option<Arc<RowQueue>>,
    /// Whether the row stream was taken ([`Pool::rows`]).
    rows_taken: bool,
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
        let rows = opts.rows.then(|| Arc::new(RowQueue::new(in_flight)));
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
            let rows = rows.clone();
            let h = std::thread::Builder::new()
                .name(format!("lemma-eval-pool-{k}"))
                .spawn(move || {
                    worker(&mut session, &shared, rows.as_deref());
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
            rows,
            rows_taken: false,
            shared,
            workers: handles,
        })
    }
}

/// A worker's loop: the next goal, pushed into its session, its row delivered, its permit
/// returned.
fn worker(session: &mut Session, shared: &Shared, rows: Option<&RowQueue>) {
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
                if let Some(q) = rows {
                    q.deliver(GoalRow {
                        goal: goal.goal().as_bytes().to_vec(),
                        values: values.to_vec(),
                        empty: false,
                    });
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
    /// Queues a goal, waiting while `in_flight` goals are queued, being evaluated or holding their
    /// row for a full row queue (rows are read from [`Pool::rows`] on another task). An error
    /// when an earlier goal failed (its error; later calls and [`Pool::finish`] say so too), and
    /// when the pool keeps rows whose stream was not taken yet (nobody could read them).
    pub async fn push(&self, goal: RankedGoal) -> Result<(), EvalError> {
        self.check()?;
        if self.rows.is_some() && !self.rows_taken {
            // Rows nobody could ever read would hold the workers once the queue is full.
            return Err(EvalError::Options(
                "the pool keeps rows (PoolOptions::rows): take Pool::rows() before pushing goals"
                    .into(),
            ));
        }
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

    /// Goals queued, being evaluated or holding their row for a full row queue now (at most the
    /// pool's `in_flight`).
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

    /// The per-goal rows: the pushed goals' as the workers finish them, then, once
    /// [`Pool::finish`] has returned, the goals never pushed (evaluated as empty, made as the
    /// stream is read). `None` unless the pool was made with [`PoolOptions::rows`], or when taken
    /// before. Read them on a task of their own while pushing: with nobody reading, a push waits
    /// once `in_flight` rows wait in the queue and `in_flight` more goals are in flight (see the
    /// [module documentation](self)); [`Pool::finish`] never waits for the reader.
    pub fn rows(&mut self) -> Option<impl Stream<Item = GoalRow> + Send + 'static> {
        if self.rows_taken {
            return None;
        }
        let queue = self.rows.clone()?;
        self.rows_taken = true;
        Some(Rows {
            queue,
            unpushed: None,
            chunk: Vec::new().into_iter(),
            done: false,
        })
    }

    /// Ends the pool: waits for the workers (without blocking the runtime, and never for the row
    /// stream's reader: rows the workers hold join the row queue beyond its bound), merges their
    /// sessions and evaluates the goals never pushed (their rows are made later, as the row stream
    /// reads them). Returns the summary of every goal, or the first error a goal met.
    pub async fn finish(mut self) -> Result<Evaluation, EvalError> {
        drop(self.jobs.take());
        if let Some(q) = &self.rows {
            q.unbound();
        }
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
        // The goals never pushed: O(goals of the actual sets), on a thread of its own, which then
        // makes their rows for the row stream (when it is read), a chunk at a time.
        let chunks = match &self.rows {
            Some(q) if self.rows_taken && !q.lock().unread => {
                Some(mpsc::channel::<Vec<GoalRow>>(1))
            }
            _ => None,
        };
        let (chunks_tx, chunks_rx) = chunks.unzip();
        let size = self.in_flight;
        let (tx, rx) = oneshot::channel();
        let h = std::thread::Builder::new()
            .name("lemma-eval-pool-finish".into())
            .spawn(move || {
                let mut it = sessions.into_iter();
                let mut first = it.next().expect("at least one worker");
                let ev = first.evaluator().clone();
                let r = it
                    .try_for_each(|s| first.merge(s))
                    .and_then(|()| first.finish_pushed());
                let seen = match r {
                    Ok((done, seen)) => match tx.send(Ok(done)) {
                        Ok(()) => seen,
                        Err(_) => return,
                    },
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                let Some(tx) = chunks_tx else { return };
                let mut rows = ChunkSender {
                    tx,
                    chunk: Vec::with_capacity(size),
                    size,
                };
                // Evaluated as for the summary, now with rows: an error is the stream's end.
                let opts = ev.options();
                let mut summary = lemma_accum::Summary::new(ev.plan());
                let made = crate::outcome::evaluate_unseen(
                    ev.actual(),
                    ev.plan(),
                    opts,
                    &|g| seen[g],
                    opts.universe,
                    &mut summary,
                    &mut rows,
                );
                if made.is_ok() {
                    let _ = rows.flush();
                }
            })
            .map_err(|e| EvalError::Options(format!("cannot start a thread: {e}")))?;
        // Dropped with this future, it stops the thread and joins it.
        let unpushed = Unpushed {
            chunks: chunks_rx,
            thread: Some(h),
        };
        let r = rx.await;
        let r =
            r.unwrap_or_else(|_| Err(EvalError::Options("the finishing thread panicked".into())));
        match (&r, &self.rows) {
            (Ok(_), Some(q)) if unpushed.chunks.is_some() => q.end(Then::Unpushed(unpushed), false),
            _ => drop(unpushed),
        }
        r
    }

    /// The evaluator.
    pub fn evaluator(&self) -> &Evaluator {
        &self.ev
    }
}

impl Drop for Pool {
    /// Stops the workers and joins them (each ends within the goal it is evaluating). The row
    /// stream, if taken, ends after the rows already made (or after the goals never pushed, when
    /// the pool finished).
    fn drop(&mut self) {
        self.shared.cancelled.store(true, Ordering::Relaxed);
        drop(self.jobs.take());
        if let Some(q) = &self.rows {
            q.end(Then::End, !self.rows_taken);
        }
        for (h, _) in self.workers.drain(..) {
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
                .and_then(|input| {
                    crate::Job::on(&ev, Predictions::Text(input))
                        .run(&mut crate::SummaryOnly, None)
                        .map(|done| done.evaluation)
                });
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
