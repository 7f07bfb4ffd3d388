//! What the worker pools of the text and full-library pipelines share: a window that keeps
//! producers at most a few units ahead of the in-order consumer.

/// Keeps producers at most `ahead` units in front of the in-order consumer, so that results
/// finished out of order (behind one slow batch) cannot pile up without bound.
pub(crate) struct Window {
    /// Units the consumer has taken, and whether the window is closed.
    state: std::sync::Mutex<(u64, bool)>,
    moved: std::sync::Condvar,
    ahead: u64,
}

impl Window {
    pub(crate) fn new(ahead: u64) -> Self {
        Window {
            state: std::sync::Mutex::new((0, false)),
            moved: std::sync::Condvar::new(),
            ahead,
        }
    }

    /// Blocks until unit `index` may start (or the window is closed).
    pub(crate) fn wait_for(&self, index: u64) {
        let mut state = self.state.lock().expect("window");
        while index >= state.0 + self.ahead && !state.1 {
            state = self.moved.wait(state).expect("window");
        }
    }

    /// The consumer has taken every unit below `done`.
    pub(crate) fn advance(&self, done: u64) {
        self.state.lock().expect("window").0 = done;
        self.moved.notify_all();
    }

    /// Lets every waiting producer go (end of work, or an error).
    pub(crate) fn close(&self) {
        self.state.lock().expect("window").1 = true;
        self.moved.notify_all();
    }
}

/// Closes a window when dropped: on every exit path of a collector, a panic included, producers
/// waiting on the window are let go.
struct CloseOnDrop<'a>(&'a Window);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// A unit of parallel work whose results are consumed in order: the text pipeline's batches, the
/// full-library pipeline's chunks of goals.
pub(crate) trait OrderedJob: Sync {
    /// A worker's own state (its accumulator, buffers), made on its thread.
    type Worker;
    /// What a worker takes to do.
    type Unit;
    /// One unit's result, consumed in index order on the caller's thread.
    type Output: Send;
    /// What a worker leaves when the work is done.
    type Done: Send;

    /// A new worker's state.
    fn worker(&self) -> Self::Worker;
    /// The next unit and its index (`0, 1, 2, ...`), after waiting on `window` for that index;
    /// `None`: no more (or the source failed, which it keeps for the caller).
    fn next(&self, w: &mut Self::Worker, window: &Window) -> Option<(u64, Self::Unit)>;
    /// Does one unit.
    fn run(&self, w: &mut Self::Worker, index: u64, unit: Self::Unit) -> Self::Output;
    /// Whether an output is an error: the other workers then stop taking units at once, before
    /// the consumer reaches it in order.
    fn failed(out: &Self::Output) -> bool;
    /// The worker's state at the end.
    fn finish(&self, w: Self::Worker) -> Self::Done;
}

/// Runs `job` on `threads` worker threads and hands each unit's output to `consume` in index
/// order on this thread, with at most about `4 × threads` units in flight (the window). An error
/// from `consume` stops the workers (units already taken finish; no thread outlives the call) and
/// is returned with what the workers left.
pub(crate) fn run_ordered<J: OrderedJob, E>(
    job: &J,
    threads: usize,
    mut consume: impl FnMut(J::Output) -> Result<(), E>,
) -> (Vec<J::Done>, Result<(), E>) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let threads = threads.max(1);
    let stop = AtomicBool::new(false);
    let window = Window::new(4 * threads as u64 + 4);
    let (tx, rx) = std::sync::mpsc::sync_channel::<(u64, J::Output)>(threads * 2);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let (tx, stop, window) = (tx.clone(), &stop, &window);
                scope.spawn(move || {
                    let mut w = job.worker();
                    while !stop.load(Ordering::Relaxed) {
                        let Some((index, unit)) = job.next(&mut w, window) else {
                            break;
                        };
                        let out = job.run(&mut w, index, unit);
                        if J::failed(&out) {
                            stop.store(true, Ordering::Relaxed);
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
        // Producers waiting on the window are let go on every exit path, a panic included.
        let close = CloseOnDrop(&window);
        let mut pending = std::collections::BTreeMap::new();
        let mut expect = 0u64;
        let mut result = Ok(());
        'collect: for (index, out) in rx.iter() {
            pending.insert(index, out);
            while let Some(out) = pending.remove(&expect) {
                expect += 1;
                window.advance(expect);
                if let Err(e) = consume(out) {
                    result = Err(e);
                    break 'collect;
                }
            }
        }
        if result.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        drop(close);
        // Workers blocked on a full channel see it closed and stop.
        drop(rx);
        let done = workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect();
        (done, result)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

    /// Units 0..n, each squared after a delay that makes later units finish first.
    struct Squares {
        n: u64,
        next: AtomicU64,
        /// Units taken and not yet consumed, at most.
        in_flight: AtomicUsize,
        peak: AtomicUsize,
        fail_at: Option<u64>,
    }

    impl OrderedJob for Squares {
        type Worker = u64;
        type Unit = u64;
        type Output = Result<u64, u64>;
        type Done = u64;

        fn worker(&self) -> u64 {
            0
        }
        fn next(&self, _: &mut u64, window: &Window) -> Option<(u64, u64)> {
            let i = self.next.fetch_add(1, Ordering::SeqCst);
            if i >= self.n {
                return None;
            }
            window.wait_for(i);
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.peak.fetch_max(now, Ordering::SeqCst);
            Some((i, i))
        }
        fn run(&self, done: &mut u64, _: u64, i: u64) -> Result<u64, u64> {
            std::thread::sleep(std::time::Duration::from_micros((7 - i % 8) * 50));
            *done += 1;
            if Some(i) == self.fail_at {
                Err(i)
            } else {
                Ok(i * i)
            }
        }
        fn failed(out: &Result<u64, u64>) -> bool {
            out.is_err()
        }
        fn finish(&self, done: u64) -> u64 {
            done
        }
    }

    fn job(n: u64, fail_at: Option<u64>) -> Squares {
        Squares {
            n,
            next: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            fail_at,
        }
    }

    #[test]
    fn outputs_arrive_in_order_and_in_flight_stays_in_the_window() {
        for threads in [1, 2, 4] {
            let j = job(300, None);
            let mut got = Vec::new();
            let (done, r) = run_ordered(&j, threads, |out| {
                got.push(out.unwrap());
                j.in_flight.fetch_sub(1, Ordering::SeqCst);
                Ok::<(), ()>(())
            });
            assert_eq!(r, Ok(()));
            assert_eq!(got, (0..300u64).map(|i| i * i).collect::<Vec<_>>());
            assert_eq!(done.len(), threads);
            assert_eq!(done.iter().sum::<u64>(), 300, "every unit ran once");
            let bound = 4 * threads + 4;
            assert!(j.peak.load(Ordering::SeqCst) <= bound, "threads {threads}");
        }
    }

    #[test]
    fn an_error_stops_the_workers_early() {
        // A unit's error: the consumer returns it in order; the workers stop taking units.
        let j = job(100_000, Some(10));
        let mut consumed = 0u64;
        let (done, r) = run_ordered(&j, 2, |out| {
            consumed += 1;
            out.map(|_| ())
        });
        assert_eq!(r, Err(10));
        assert_eq!(consumed, 11);
        let ran: u64 = done.iter().sum();
        assert!(ran < 100, "{ran} units ran after an error at unit 10");

        // The consumer's own error (a closed pipe, say) stops them too.
        let j = job(100_000, None);
        let (done, r) = run_ordered(&j, 2, |_| Err::<(), &str>("closed"));
        assert_eq!(r, Err("closed"));
        assert!(done.iter().sum::<u64>() < 100);
    }
}
