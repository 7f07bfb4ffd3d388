use super::*;
use std::sync::atomic::{AtomicU64, AtomicUsize};

/// Units 0..n, each squared after a delay that makes later units finish first.
struct Squares {
    n: u64,
    next: AtomicU64,
    /// Units taken and not yet consumed, at most.
    in_flight: AtomicUsize,
    peak: AtomicUsize,
    fail_at: Option<u64>,
    /// Units run, by every worker.
    ran: AtomicU64,
}

/// A unit's delay: later units of each eight finish first.
fn delay(i: u64) {
    std::thread::sleep(std::time::Duration::from_micros((7 - i % 8) * 50));
}

impl Work for Squares {
    /// The units this worker ran.
    type Worker = u64;
    type Unit = u64;
    type Output = Result<u64, u64>;
    type Done = u64;

    fn worker(&self) -> u64 {
        0
    }
    fn run(&self, done: &mut u64, index: u64, i: u64) -> Result<u64, u64> {
        assert_eq!(index, i);
        delay(i);
        *done += 1;
        self.ran.fetch_add(1, Ordering::SeqCst);
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

impl OrderedJob for Squares {
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
}

fn job(n: u64, fail_at: Option<u64>) -> Squares {
    Squares {
        n,
        next: AtomicU64::new(0),
        in_flight: AtomicUsize::new(0),
        peak: AtomicUsize::new(0),
        fail_at,
        ran: AtomicU64::new(0),
    }
}

#[test]
fn outputs_arrive_in_order_and_in_flight_stays_in_the_window() {
    for threads in [1, 2, 4] {
        let j = job(300, None);
        let mut got = Vec::new();
        let (done, r) = Ordered::new(threads).run(&j, |out| {
            got.push(out.unwrap());
            j.in_flight.fetch_sub(1, Ordering::SeqCst);
            Ok::<(), ()>(())
        });
        assert_eq!(r, Ok(()));
        assert_eq!(got, (0..300u64).map(|i| i * i).collect::<Vec<_>>());
        assert_eq!(done.len(), threads);
        assert_eq!(done.iter().sum::<u64>(), 300, "every unit ran once");
        // The default window, and the unit being consumed: the window moves on when an output is
        // taken, before the consumer is done with it (and takes it out of `in_flight` here).
        let bound = 4 * threads + 4 + 1;
        let peak = j.peak.load(Ordering::SeqCst);
        assert!(peak <= bound, "threads {threads}: {peak} in flight");
    }
    // A window of its own.
    let j = job(200, None);
    let (_, r) = Ordered::new(3).window(2).run(&j, |out| {
        out.map(|_| {
            j.in_flight.fetch_sub(1, Ordering::SeqCst);
        })
    });
    assert_eq!(r, Ok(()));
    // Two past the last consumed, and the one being consumed (the window moves on before it is).
    assert!(j.peak.load(Ordering::SeqCst) <= 3);
}

#[test]
fn an_error_stops_the_workers_early() {
    // A unit's error: the consumer returns it in order; the workers stop taking units.
    let j = job(100_000, Some(10));
    let mut consumed = 0u64;
    let (done, r) = Ordered::new(2).run(&j, |out| {
        consumed += 1;
        out.map(|_| ())
    });
    assert_eq!(r, Err(10));
    assert_eq!(consumed, 11);
    let ran: u64 = done.iter().sum();
    assert!(ran < 100, "{ran} units ran after an error at unit 10");

    // The consumer's own error (a closed pipe, say) stops them too.
    let j = job(100_000, None);
    let (done, r) = Ordered::new(2).run(&j, |_| Err::<(), &str>("closed"));
    assert_eq!(r, Err("closed"));
    assert!(done.iter().sum::<u64>() < 100);
}

#[test]
fn the_earliest_error_wins() {
    // Units 5 and 6 both fail (6 first, by its shorter delay): the consumer meets unit 5's.
    struct TwoFail;
    impl Work for TwoFail {
        type Worker = ();
        type Unit = u64;
        type Output = Result<u64, u64>;
        type Done = ();
        fn worker(&self) {}
        fn run(&self, _: &mut (), _: u64, i: u64) -> Result<u64, u64> {
            if i == 5 {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            if i == 5 || i == 6 {
                Err(i)
            } else {
                Ok(i)
            }
        }
        fn failed(out: &Result<u64, u64>) -> bool {
            out.is_err()
        }
        fn finish(&self, _: ()) {}
    }
    let mut got = Vec::new();
    let (_, r) = Ordered::new(4).feed(
        &TwoFail,
        |f| (0..1000).take_while(|&i| f.push(i)).count(),
        |out| out.map(|i| got.push(i)),
    );
    assert_eq!(r, Err(5));
    assert_eq!(got, [0, 1, 2, 3, 4]);
}

#[test]
fn one_thread_inline_runs_on_the_callers_thread() {
    let me = std::thread::current().id();
    let mut seen = Vec::new();
    let r = Ordered::new(1).inline_single().each(
        0..5u64,
        |i| (i, std::thread::current().id()),
        |(i, t)| {
            assert_eq!(t, me);
            seen.push(i);
            Ok::<(), ()>(())
        },
    );
    assert_eq!(r, Ok(()));
    assert_eq!(seen, [0, 1, 2, 3, 4]);
    // Without it, the one worker is a thread of its own.
    let r = Ordered::new(1).each(
        0..3u64,
        |_| std::thread::current().id(),
        |t| {
            assert_ne!(t, me);
            Ok::<(), ()>(())
        },
    );
    assert_eq!(r, Ok(()));
}

#[test]
fn map_keeps_the_items_order() {
    for threads in [1, 2, 3, 8] {
        let items: Vec<u64> = (0..40).collect();
        let out = Ordered::new(threads).map(items, |i| {
            delay(i);
            i * 3
        });
        assert_eq!(out, (0..40).map(|i| i * 3).collect::<Vec<u64>>());
    }
    assert_eq!(
        Ordered::new(4).map(Vec::<u8>::new(), |x| x),
        Vec::<u8>::new()
    );
}

#[test]
fn each_stops_at_the_consumers_error() {
    let pulled = AtomicU64::new(0);
    let items = (0..1_000_000u64).inspect(|_| {
        pulled.fetch_add(1, Ordering::SeqCst);
    });
    let mut got = Vec::new();
    let r = Ordered::new(3).each(
        items,
        |i| i + 1,
        |x| {
            got.push(x);
            if x == 20 {
                Err("enough")
            } else {
                Ok(())
            }
        },
    );
    assert_eq!(r, Err("enough"));
    assert_eq!(got, (1..=20).collect::<Vec<u64>>());
    // Pulled: the consumed items, at most a window (4 × 3 + 4) more, and one a worker taken as
    // the work stopped.
    assert!(pulled.load(Ordering::SeqCst) <= 20 + 16 + 2 * 3);
}

/// Each worker's state: the units it ran; outputs: a unit's square.
struct Fed;

impl Work for Fed {
    type Worker = Vec<u64>;
    type Unit = u64;
    type Output = Result<u64, u64>;
    type Done = Vec<u64>;
    fn worker(&self) -> Vec<u64> {
        Vec::new()
    }
    fn run(&self, w: &mut Vec<u64>, _: u64, i: u64) -> Result<u64, u64> {
        delay(i);
        w.push(i);
        if i == 777 {
            Err(i)
        } else {
            Ok(i * i)
        }
    }
    fn failed(out: &Result<u64, u64>) -> bool {
        out.is_err()
    }
    fn finish(&self, w: Vec<u64>) -> Vec<u64> {
        w
    }
}

#[test]
fn fed_units_come_back_in_order_while_the_caller_produces() {
    for threads in [1, 2, 5] {
        let mut got = Vec::new();
        // Pushed from this thread; outputs consumed between pushes, never more than the
        // window behind.
        let (done, r) = Ordered::new(threads).window(6).feed(
            &Fed,
            |f| {
                for i in 0..300u64 {
                    assert!(f.push(i));
                }
                "produced"
            },
            |out| {
                got.push(out?);
                Ok::<(), u64>(())
            },
        );
        assert_eq!(r, Ok("produced"));
        assert_eq!(got, (0..300u64).map(|i| i * i).collect::<Vec<_>>());
        assert_eq!(done.len(), threads);
        let mut all: Vec<u64> = done.into_iter().flatten().collect();
        all.sort_unstable();
        assert_eq!(all, (0..300).collect::<Vec<u64>>(), "every unit ran once");
    }
}

#[test]
fn a_fed_units_error_stops_the_producer_and_the_workers() {
    let mut got = 0u64;
    let mut pushed = 0u64;
    let (done, r) = Ordered::new(2).feed(
        &Fed,
        |f| {
            for i in 0..100_000u64 {
                if !f.push(i) {
                    break;
                }
                pushed += 1;
            }
        },
        |out| {
            out?;
            got += 1;
            Ok::<(), u64>(())
        },
    );
    assert_eq!(r, Err(777));
    assert_eq!(got, 777, "every unit before the error consumed");
    let ran = done.iter().map(Vec::len).sum::<usize>();
    assert!(pushed < 777 + 20, "{pushed} units pushed");
    assert!(ran < 777 + 20, "{ran} units ran");
}

#[test]
fn finish_inside_the_producer_consumes_the_rest() {
    let mut got = Vec::new();
    let (_, r) = Ordered::new(2).feed(
        &Fed,
        |f| {
            for i in 0..50 {
                f.push(i);
            }
            f.finish();
            // Nothing more is taken once finished.
            assert!(!f.push(50));
            f.failed()
        },
        |out| {
            got.push(out?);
            Ok::<(), u64>(())
        },
    );
    assert_eq!(r, Ok(false));
    assert_eq!(got.len(), 50);
}

#[test]
fn a_cancel_flag_stops_the_workers() {
    let flag = AtomicBool::new(false);
    let j = job(1_000_000, None);
    let mut consumed = 0u64;
    let (done, r) = Ordered::new(2).cancel(&flag).run(&j, |_| {
        consumed += 1;
        if consumed == 30 {
            flag.store(true, Ordering::SeqCst);
        }
        Ok::<(), ()>(())
    });
    assert_eq!(r, Ok(()));
    assert_eq!(consumed, 30, "no output is consumed after the flag");
    assert!(done.iter().sum::<u64>() < 30 + 16);

    // Fed: pushes are refused once the flag is set.
    let flag = AtomicBool::new(false);
    let (_, r) = Ordered::new(2).cancel(&flag).feed(
        &Fed,
        |f| {
            let mut n = 0;
            while f.push(n) {
                n += 1;
                if n == 40 {
                    flag.store(true, Ordering::SeqCst);
                }
            }
            n
        },
        |_| Ok::<(), ()>(()),
    );
    assert_eq!(r, Ok(40));
}

#[test]
fn a_workers_panic_stops_the_others_and_reaches_the_caller() {
    struct Panics;
    impl Work for Panics {
        type Worker = ();
        type Unit = u64;
        type Output = u64;
        type Done = ();
        fn worker(&self) {}
        fn run(&self, _: &mut (), _: u64, i: u64) -> u64 {
            assert!(i != 3, "unit 3 panics");
            i
        }
        fn finish(&self, _: ()) {}
    }
    let pushed = AtomicU64::new(0);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Ordered::new(2).window(4).feed(
            &Panics,
            |f| {
                while f.push(pushed.load(Ordering::SeqCst)) {
                    pushed.fetch_add(1, Ordering::SeqCst);
                }
            },
            |_| Ok::<(), ()>(()),
        )
    }));
    assert!(caught.is_err(), "the panic is raised again");
    assert!(pushed.load(Ordering::SeqCst) < 20);
    // Workers that take their own units: the window no longer holds the others back forever.
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Ordered::new(3).each(
            0..1000u64,
            |i| Panics.run(&mut (), i, i),
            |_| Ok::<(), ()>(()),
        )
    }));
    assert!(caught.is_err());
}
