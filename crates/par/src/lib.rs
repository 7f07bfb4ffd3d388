//! # lemma-par: ordered parallel work
//!
//! The one way lemma-eval runs work on several threads. Units of work are numbered `0, 1, 2, ...`;
//! workers do them in parallel; their outputs reach the caller's thread in unit order:
//!
//! ```text
//!  units ──▶ workers (N, each with its own state) ──outputs──▶ in order, on the caller's thread
//!              ▲                                                   │
//!              └──────── window: at most `ahead` units past ───────┘
//!                        the last output consumed
//! ```
//!
//! - **Bounded.** A unit may start only while it is fewer than `ahead` units past the last output
//!   consumed ([`Ordered::window`]; default `4 × threads + 4`): outputs finished out of order,
//!   behind one slow unit, cannot pile up, and a slow consumer (a writer) holds the workers back.
//! - **In order.** The caller consumes outputs strictly in unit order, whatever the thread count,
//!   so results do not depend on it.
//! - **First error wins.** An output the job calls failed ([`Work::failed`]) stops the workers at
//!   once: no later unit starts, and the outputs of later units are dropped. Units before it were
//!   all taken already (units are taken in order) and are consumed first, so the error of the
//!   earliest failing unit is the one the consumer meets. An error the consumer returns stops the
//!   workers likewise.
//! - **Cancellable, scoped.** A flag ([`Ordered::cancel`]) stops the workers between units; a
//!   panic on either side stops them too. The workers are scoped threads: none outlives the call.
//! - **Long-lived workers with state.** Each worker makes its state once, on its own thread
//!   ([`Work::worker`]: accumulators, buffers), keeps it for all the units it does, and hands it
//!   back at the end ([`Work::finish`]): the memory a thread allocated is reused by that thread
//!   (its allocator's arena stays warm), not freed and faulted in again for every unit.
//!
//! Units come from one of three places:
//!
//! - the workers take them themselves ([`OrderedJob::next`], [`Ordered::run`]): a worker claims
//!   the next unit (under a lock it owns) and reads it into its own buffers, so the bytes are in
//!   its core's cache when it parses them (the text pipeline's batches, a store's chunks);
//! - an iterator, pulled by the workers in turn ([`Ordered::each`], [`Ordered::map`]);
//! - the caller's thread, which hands them over one at a time while it consumes the outputs that
//!   are ready ([`Ordered::feed`]): for a producer that must stay on that thread (one holding
//!   Python's GIL).
//!
//! ```
//! use lemma_par::Ordered;
//! let mut squares = Vec::new();
//! let r = Ordered::new(4).each(0..100u64, |i| i * i, |sq| {
//!     squares.push(sq);
//!     Ok::<(), ()>(())
//! });
//! assert_eq!(r, Ok(()));
//! assert_eq!(squares, (0..100u64).map(|i| i * i).collect::<Vec<_>>());
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Condvar, Mutex};

/// The default number of worker threads: the cores this process may run on.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Keeps workers at most `ahead` units in front of the in-order consumer. A job that takes its own
/// units ([`OrderedJob::next`]) waits on it ([`Window::wait_for`]) before it takes unit `index`.
pub struct Window {
    /// Units the consumer has taken, and whether the window is closed.
    state: Mutex<(u64, bool)>,
    moved: Condvar,
    ahead: u64,
}

impl Window {
    fn new(ahead: u64) -> Self {
        Window {
            state: Mutex::new((0, false)),
            moved: Condvar::new(),
            ahead: ahead.max(1),
        }
    }

    /// Blocks until unit `index` may start (or the work is over: an error, the end, a
    /// cancellation; the job then finds out by itself, or its next unit is dropped).
    pub fn wait_for(&self, index: u64) {
        let mut state = self.state.lock().expect("window");
        while index >= state.0.saturating_add(self.ahead) && !state.1 {
            state = self.moved.wait(state).expect("window");
        }
    }

    /// The consumer has taken every unit below `done`.
    fn advance(&self, done: u64) {
        self.state.lock().expect("window").0 = done;
        self.moved.notify_all();
    }

    /// Lets every waiting worker go.
    fn close(&self) {
        self.state.lock().expect("window").1 = true;
        self.moved.notify_all();
    }
}

/// What a worker does with a unit: the part of a job shared by every way units arrive.
pub trait Work: Sync {
    /// A worker's own state (an accumulator, buffers), made on its thread and kept for every
    /// unit it does.
    type Worker;
    /// What a worker takes to do.
    type Unit;
    /// One unit's result, consumed in unit order on the caller's thread.
    type Output: Send;
    /// What a worker leaves when the work is done.
    type Done: Send;

    /// A new worker's state.
    fn worker(&self) -> Self::Worker;
    /// Does unit `index`.
    fn run(&self, w: &mut Self::Worker, index: u64, unit: Self::Unit) -> Self::Output;
    /// Whether an output is an error: the workers then stop taking units at once, before the
    /// consumer reaches it in order.
    fn failed(_out: &Self::Output) -> bool {
        false
    }
    /// The worker's state at the end.
    fn finish(&self, w: Self::Worker) -> Self::Done;
}

/// Work whose workers take their units themselves ([`Ordered::run`]).
pub trait OrderedJob: Work {
    /// The next unit and its index (`0, 1, 2, ...`, taken in that order), after waiting on
    /// `window` for that index; `None`: no more (or the source failed, which the job keeps for
    /// its caller).
    fn next(&self, w: &mut Self::Worker, window: &Window) -> Option<(u64, Self::Unit)>;
}

/// How a piece of ordered work runs: threads, window, cancellation. Cheap to copy; see the
/// [crate documentation](crate).
#[derive(Clone, Copy, Debug)]
pub struct Ordered<'c> {
    threads: usize,
    ahead: Option<usize>,
    inline: bool,
    cancel: Option<&'c AtomicBool>,
}

impl<'c> Ordered<'c> {
    /// Work on `threads` worker threads (at least one).
    pub fn new(threads: usize) -> Self {
        Ordered {
            threads: threads.max(1),
            ahead: None,
            inline: false,
            cancel: None,
        }
    }

    /// Units may start at most `units` past the last output consumed (at least one; default
    /// `4 × threads + 4`).
    pub fn window(mut self, units: usize) -> Self {
        self.ahead = Some(units.max(1));
        self
    }

    /// With one thread, do the units on the caller's thread, each consumed as soon as done,
    /// rather than on a worker beside it.
    pub fn inline_single(mut self) -> Self {
        self.inline = true;
        self
    }

    /// Stop the workers (between units) once `flag` is set; the consumer then gets no more
    /// outputs and the call returns what it had (the caller, who set the flag, knows why).
    pub fn cancel(mut self, flag: &'c AtomicBool) -> Self {
        self.cancel = Some(flag);
        self
    }

    /// The worker threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    fn ahead(&self) -> u64 {
        self.ahead.unwrap_or(4 * self.threads + 4) as u64
    }

    fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// Runs `job`, whose workers take their own units, and hands each output to `consume` in
    /// unit order on this thread. An error from `consume` stops the workers and is returned with
    /// what the workers left.
    pub fn run<J: OrderedJob, E>(
        &self,
        job: &J,
        mut consume: impl FnMut(J::Output) -> Result<(), E>,
    ) -> (Vec<J::Done>, Result<(), E>) {
        let source = |w: &mut J::Worker, window: &Window| job.next(w, window);
        if self.inline && self.threads == 1 {
            return self.inline(job, &source, consume);
        }
        self.scoped(job, &source, &|| {}, |mut outs| {
            while let Some(out) = outs.next(true) {
                consume(out)?;
            }
            Ok(())
        })
    }

    /// `work` of each item of `items` (pulled in turn by the workers), each output handed to
    /// `consume` in the items' order on this thread, until `consume` fails.
    pub fn each<T: Send, R: Send, E>(
        &self,
        items: impl Iterator<Item = T> + Send,
        work: impl Fn(T) -> R + Sync,
        consume: impl FnMut(R) -> Result<(), E>,
    ) -> Result<(), E> {
        let job = Each {
            items: Mutex::new(items.enumerate()),
            work,
        };
        self.run(&job, consume).1
    }

    /// `work` of every item, in the items' order: on `min(threads, items)` workers, on this
    /// thread when that is one.
    pub fn map<T: Send, R: Send>(&self, items: Vec<T>, work: impl Fn(T) -> R + Sync) -> Vec<R> {
        let n = items.len();
        let mut out = Vec::with_capacity(n);
        let this = Ordered {
            threads: self.threads.min(n).max(1),
            ahead: Some(n.max(1)),
            ..*self
        }
        .inline_single();
        let done = this.each(items.into_iter(), work, |r| {
            out.push(r);
            Ok::<(), std::convert::Infallible>(())
        });
        match done {
            Ok(()) => out,
            Err(never) => match never {},
        }
    }

    /// Runs `job` on units handed over by `produce` on this thread ([`Feeder::push`]), each
    /// output handed to `consume` in unit order, also on this thread: while `produce` runs
    /// (between its pushes, and while a push waits for the window) and after it, when the rest is
    /// consumed ([`Feeder::finish`], which `produce` may call itself, to wait elsewhere than where
    /// it was called: with a lock released, say). `Err`: the first error `consume` returned;
    /// `Ok`: what `produce` returned.
    pub fn feed<W, E, R, C>(
        &self,
        job: &W,
        produce: impl FnOnce(&mut Feeder<'_, W::Unit, W::Output, C, E>) -> R,
        consume: C,
    ) -> (Vec<W::Done>, Result<R, E>)
    where
        W: Work,
        W::Unit: Send,
        C: FnMut(W::Output) -> Result<(), E>,
    {
        let queue = Queue {
            units: Mutex::new((VecDeque::new(), false)),
            ready: Condvar::new(),
        };
        let queue = &queue;
        let stop_flag: &AtomicBool = &AtomicBool::new(false);
        let source = |_: &mut W::Worker, _: &Window| queue.pop(stop_flag, self.cancel);
        let wake = || queue.close();
        let mut consume = consume;
        let (done, (produced, error)) = self.scoped_with(job, &source, &wake, stop_flag, |outs| {
            let mut feeder = Feeder {
                outs,
                queue,
                consume: &mut consume,
                error: None,
                ahead: self.ahead(),
                next: 0,
                finished: false,
                stop: stop_flag,
                cancel: self.cancel,
            };
            let r = produce(&mut feeder);
            feeder.finish();
            (r, feeder.error.take())
        });
        (
            done,
            match error {
                Some(e) => Err(e),
                None => Ok(produced),
            },
        )
    }

    /// `job` on this thread alone, each output consumed as soon as it is done.
    fn inline<W: Work, E>(
        &self,
        job: &W,
        source: &impl Fn(&mut W::Worker, &Window) -> Option<(u64, W::Unit)>,
        mut consume: impl FnMut(W::Output) -> Result<(), E>,
    ) -> (Vec<W::Done>, Result<(), E>) {
        let window = Window::new(u64::MAX);
        let mut w = job.worker();
        let mut result = Ok(());
        while !self.cancelled() {
            let Some((index, unit)) = source(&mut w, &window) else {
                break;
            };
            if let Err(e) = consume(job.run(&mut w, index, unit)) {
                result = Err(e);
                break;
            }
        }
        (vec![job.finish(w)], result)
    }

    /// Starts the workers on units from `source` and calls `body` with their outputs; `wake`
    /// lets workers waiting in `source` go when the work stops.
    fn scoped<W: Work, R>(
        &self,
        job: &W,
        source: &(impl Fn(&mut W::Worker, &Window) -> Option<(u64, W::Unit)> + Sync),
        wake: &(impl Fn() + Sync),
        body: impl FnOnce(Outputs<'_, W::Output>) -> R,
    ) -> (Vec<W::Done>, R) {
        self.scoped_with(job, source, wake, &AtomicBool::new(false), body)
    }

    /// [`Ordered::scoped`] with the flag that stops the workers given.
    fn scoped_with<W: Work, R>(
        &self,
        job: &W,
        source: &(impl Fn(&mut W::Worker, &Window) -> Option<(u64, W::Unit)> + Sync),
        wake: &(impl Fn() + Sync),
        stop: &AtomicBool,
        body: impl FnOnce(Outputs<'_, W::Output>) -> R,
    ) -> (Vec<W::Done>, R) {
        let threads = self.threads;
        let window = Window::new(self.ahead());
        let (tx, rx) = sync_channel::<(u64, W::Output)>(threads * 2);
        let halt = Halt {
            stop,
            window: &window,
            wake,
        };
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    let (tx, halt) = (tx.clone(), &halt);
                    scope.spawn(move || {
                        // A panic here stops the others (the consumer waits for this worker's
                        // unit in vain otherwise); the panic is raised again on the caller's
                        // thread when the workers are joined.
                        let _on_panic = OnPanic(halt);
                        let mut w = job.worker();
                        while !halt.stop.load(Ordering::Relaxed) && !self.cancelled() {
                            let Some((index, unit)) = source(&mut w, halt.window) else {
                                break;
                            };
                            let out = job.run(&mut w, index, unit);
                            if W::failed(&out) {
                                halt.halt();
                            }
                            if tx.send((index, out)).is_err() {
                                break;
                            }
                        }
                        job.finish(w)
                    })
                })
                .collect();
            drop(tx);
            let outs = Outputs {
                rx,
                pending: BTreeMap::new(),
                expect: 0,
                window: &window,
                cancel: self.cancel,
            };
            // On every exit of the body, a panic included, the workers are stopped and let go;
            // the outputs (dropped by the body) close the channel, so that workers blocked on it
            // stop too.
            let guard = HaltOnDrop(&halt);
            let r = body(outs);
            drop(guard);
            let done = workers
                .into_iter()
                .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect();
            (done, r)
        })
    }
}

/// What stops the workers: the flag they check between units, the window some wait on, and
/// `wake` for those waiting in their source.
struct Halt<'a, F: Fn() + Sync> {
    stop: &'a AtomicBool,
    window: &'a Window,
    wake: &'a F,
}

impl<F: Fn() + Sync> Halt<'_, F> {
    fn halt(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.window.close();
        (self.wake)();
    }
}

/// Halts on drop.
struct HaltOnDrop<'h, 'a, F: Fn() + Sync>(&'h Halt<'a, F>);

impl<F: Fn() + Sync> Drop for HaltOnDrop<'_, '_, F> {
    fn drop(&mut self) {
        self.0.halt();
    }
}

/// Halts when dropped by a panic.
struct OnPanic<'h, 'a, F: Fn() + Sync>(&'h Halt<'a, F>);

impl<F: Fn() + Sync> Drop for OnPanic<'_, '_, F> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.halt();
        }
    }
}

/// The workers' outputs, put back in unit order.
struct Outputs<'a, O> {
    rx: Receiver<(u64, O)>,
    /// Outputs that came before their turn.
    pending: BTreeMap<u64, O>,
    /// The next unit to consume.
    expect: u64,
    window: &'a Window,
    cancel: Option<&'a AtomicBool>,
}

impl<O> Outputs<'_, O> {
    /// The next output in unit order: waiting for it (`block`) or only if it is there. `None`
    /// when the workers are all gone without it (the end, an error or a panic) or the work
    /// was cancelled.
    fn next(&mut self, block: bool) -> Option<O> {
        loop {
            if self.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                return None;
            }
            if let Some(out) = self.pending.remove(&self.expect) {
                self.expect += 1;
                // The workers may start the next units while this one is consumed.
                self.window.advance(self.expect);
                return Some(out);
            }
            let (index, out) = match block {
                true => self.rx.recv().ok()?,
                false => self.rx.try_recv().ok()?,
            };
            self.pending.insert(index, out);
        }
    }
}

/// The units handed over by the caller's thread, waiting for a worker; and whether no more come.
struct Queue<U> {
    units: Mutex<(VecDeque<(u64, U)>, bool)>,
    ready: Condvar,
}

impl<U> Queue<U> {
    /// The next unit, waiting for one; `None` once closed and empty, or stopped.
    fn pop(&self, stop: &AtomicBool, cancel: Option<&AtomicBool>) -> Option<(u64, U)> {
        let mut q = self.units.lock().expect("queue");
        loop {
            if stop.load(Ordering::Relaxed) || cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                return None;
            }
            if let Some(unit) = q.0.pop_front() {
                return Some(unit);
            }
            if q.1 {
                return None;
            }
            q = self.ready.wait(q).expect("queue");
        }
    }

    fn push(&self, index: u64, unit: U) {
        self.units.lock().expect("queue").0.push_back((index, unit));
        self.ready.notify_one();
    }

    /// No more units: the workers end when the queue is empty.
    fn close(&self) {
        self.units.lock().expect("queue").1 = true;
        self.ready.notify_all();
    }
}

/// The caller's end of [`Ordered::feed`]: hands units to the workers and consumes their outputs.
pub struct Feeder<'a, U, O, C, E> {
    outs: Outputs<'a, O>,
    queue: &'a Queue<U>,
    consume: &'a mut C,
    error: Option<E>,
    ahead: u64,
    /// The next unit's index.
    next: u64,
    finished: bool,
    /// Set when a unit failed (or the work stopped otherwise).
    stop: &'a AtomicBool,
    cancel: Option<&'a AtomicBool>,
}

impl<U, O, C, E> Feeder<'_, U, O, C, E>
where
    C: FnMut(O) -> Result<(), E>,
{
    /// Hands `unit` to the workers, first consuming the outputs that are ready (and, while the
    /// unit may not start yet, waiting for the next). `false`: the work stopped (an error, a
    /// cancellation, or [`Feeder::finish`] was called) and the unit was dropped; push no more.
    pub fn push(&mut self, unit: U) -> bool {
        if self.finished || self.error.is_some() || self.stop.load(Ordering::Relaxed) {
            return false;
        }
        while self.next >= self.outs.expect + self.ahead {
            let Some(out) = self.outs.next(true) else {
                return false; // the workers are gone: an error, or cancelled
            };
            if !self.take(out) {
                return false;
            }
        }
        while let Some(out) = self.outs.next(false) {
            if !self.take(out) {
                return false;
            }
        }
        if self.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return false;
        }
        self.queue.push(self.next, unit);
        self.next += 1;
        true
    }

    /// Whether the work stopped at an error (of a unit, or of the consumer).
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// No more units: waits for the workers and consumes every output left, in order (or up to
    /// the first error). Called by [`Ordered::feed`] when the producer did not.
    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        self.queue.close();
        if self.error.is_some() {
            return;
        }
        while let Some(out) = self.outs.next(true) {
            if !self.take(out) {
                return;
            }
        }
    }

    /// Consumes `out`; `false` at an error, which is kept.
    fn take(&mut self, out: O) -> bool {
        match (self.consume)(out) {
            Ok(()) => true,
            Err(e) => {
                self.error = Some(e);
                // Units still queued are never started.
                self.stop.store(true, Ordering::Relaxed);
                self.queue.close();
                self.outs.cancel_rest();
                false
            }
        }
    }
}

impl<O> Outputs<'_, O> {
    /// Drops every output not consumed yet.
    fn cancel_rest(&mut self) {
        self.pending.clear();
    }
}

/// [`Ordered::each`]'s job: items pulled from a shared iterator.
struct Each<I, F> {
    items: Mutex<I>,
    work: F,
}

impl<T: Send, R: Send, I, F> Work for Each<I, F>
where
    I: Iterator<Item = (usize, T)> + Send,
    F: Fn(T) -> R + Sync,
{
    type Worker = ();
    type Unit = T;
    type Output = R;
    type Done = ();

    fn worker(&self) {}

    fn run(&self, _: &mut (), _: u64, item: T) -> R {
        (self.work)(item)
    }

    fn finish(&self, _: ()) {}
}

impl<T: Send, R: Send, I, F> OrderedJob for Each<I, F>
where
    I: Iterator<Item = (usize, T)> + Send,
    F: Fn(T) -> R + Sync,
{
    fn next(&self, _: &mut (), window: &Window) -> Option<(u64, T)> {
        let mut items = self.items.lock().expect("items");
        let (index, item) = items.next()?;
        window.wait_for(index as u64);
        Some((index as u64, item))
    }
}

#[cfg(test)]
mod tests;
