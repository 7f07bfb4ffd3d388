//! Dropping an async evaluation mid-way leaves no thread of it running (its own test binary: it
//! counts this process's threads by name; its tests take turns).

use futures::StreamExt;
use lemma_eval::aio::{evaluate_read, evaluate_stream, PoolOptions, RankedGoal};
use lemma_eval::Evaluator;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, ReadBuf};

/// Threads of this process whose name begins with `lemma-eval` (the pool's workers, the reader's
/// pipeline and the pipeline's workers, which inherit its name).
fn lemma_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter(|t| {
            let comm = std::fs::read_to_string(t.as_ref().unwrap().path().join("comm"));
            comm.is_ok_and(|c| c.starts_with("lemma-eval"))
        })
        .count()
}

/// [`lemma_threads`] once it has come down to `want`, waiting up to 2 s: a thread joined may
/// still be listed in `/proc/self/task` for a moment, as the kernel wakes the joiner while the
/// thread exits, before it takes the thread's entry away.
fn lemma_threads_down_to(want: usize) -> usize {
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    loop {
        let n = lemma_threads();
        if n <= want || std::time::Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// An endless TREC run: goal after goal of 100 lines.
struct Endless {
    line: u64,
    pending: Vec<u8>,
}

impl AsyncRead for Endless {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        while self.pending.len() < buf.remaining() {
            let l = self.line;
            self.line += 1;
            let line = format!(
                "g{} Q0 l{} {} {} t\n",
                l / 100,
                l % 100,
                l % 100 + 1,
                1000 - l % 100
            );
            self.pending.extend_from_slice(line.as_bytes());
        }
        let n = buf.remaining();
        buf.put_slice(&self.pending[..n]);
        self.pending.drain(..n);
        Poll::Ready(Ok(()))
    }
}

/// Held by each test: they count the same threads.
static TURN: Mutex<()> = Mutex::new(());

#[test]
fn dropped_mid_way_no_thread_outlives_it() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q");
    std::fs::write(&q, "g1 0 l5 1\ng2 0 l7 1\n").unwrap();
    let ev = Evaluator::builder().threads(2).build_from_path(&q).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    assert_eq!(lemma_threads_down_to(0), 0);
    // An endless stream of goals, dropped after 300 ms.
    let ids: Vec<u32> = (0..50_000).collect();
    let goals = futures::stream::iter((0u64..).map(move |g| RankedGoal::Ids {
        goal: format!("x{g}"),
        ids: ids.clone(),
    }));
    let opts = PoolOptions {
        workers: Some(2),
        in_flight: 16,
        rows: false,
    };
    let during = rt.block_on(async {
        let eval = evaluate_stream(&ev, goals, opts);
        let probe = async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            lemma_threads()
        };
        tokio::select! {
            _ = eval => unreachable!("the stream is endless"),
            n = probe => n,
        }
    });
    assert_eq!(during, 2, "two workers ran");
    assert_eq!(lemma_threads_down_to(0), 0, "none left after the drop");
    // An endless AsyncRead, dropped after 300 ms.
    let during = rt.block_on(async {
        let reader = Endless {
            line: 0,
            pending: Vec::new(),
        };
        let eval = evaluate_read(&ev, "endless", reader);
        let probe = async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            lemma_threads()
        };
        tokio::select! {
            _ = eval => unreachable!("the input is endless"),
            n = probe => n,
        }
    });
    assert!(during >= 1, "the pipeline ran ({during} threads)");
    assert_eq!(lemma_threads_down_to(0), 0, "none left after the drop");
}

/// The row stream makes the rows of the goals never pushed on a thread of the pool, after
/// `finish`, as it is read: dropping the stream mid-way stops that thread and joins it. A pool
/// dropped while its workers wait for room in the row queue joins them, and its stream ends.
#[test]
fn a_row_stream_dropped_mid_way_joins_its_thread() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q");
    let qrels: String = (0..5000).map(|g| format!("g{g} 0 a 1\n")).collect();
    std::fs::write(&q, qrels).unwrap();
    let ev = Evaluator::builder()
        .measure_names(["RR"])
        .unwrap()
        .build_from_path(&q)
        .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let opts = PoolOptions {
        workers: Some(2),
        in_flight: 4,
        rows: true,
    };
    assert_eq!(lemma_threads_down_to(0), 0);
    let (first, during) = rt.block_on(async {
        let mut pool = ev.pool(opts).unwrap();
        let mut rows = Box::pin(pool.rows().unwrap());
        pool.push(RankedGoal::ranked("g0", ["x", "a"]))
            .await
            .unwrap();
        let done = tokio::time::timeout(Duration::from_secs(30), pool.finish())
            .await
            .expect("finish within 30 s")
            .unwrap();
        assert_eq!(done.summary.counts().evaluated, 5000);
        let mut first = Vec::new();
        for _ in 0..3 {
            let r = rows.next().await.unwrap();
            first.push((String::from_utf8(r.goal).unwrap(), r.values, r.empty));
        }
        (first, lemma_threads())
    });
    assert_eq!(
        first,
        [
            ("g0".to_string(), vec![Some(0.5)], false),
            ("g1".to_string(), vec![Some(0.0)], true),
            ("g2".to_string(), vec![Some(0.0)], true),
        ]
    );
    assert_eq!(
        during, 1,
        "the thread making the rows of the goals never pushed"
    );
    assert_eq!(
        lemma_threads_down_to(0),
        0,
        "none left after the stream's drop"
    );
    // Eight goals pushed, nobody reading: four rows queued, the two workers each holding one more,
    // two goals queued.
    let got = rt.block_on(async {
        let mut pool = ev.pool(opts).unwrap();
        let rows = pool.rows().unwrap();
        for g in 0..8 {
            pool.push(RankedGoal::ranked(format!("g{g}"), ["a"]))
                .await
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(
            pool.in_flight(),
            4,
            "two goals queued, two rows waiting for room"
        );
        assert_eq!(lemma_threads(), 2);
        drop(pool);
        assert_eq!(
            lemma_threads_down_to(0),
            0,
            "none left after the pool's drop"
        );
        rows.collect::<Vec<_>>().await
    });
    // The rows queued and the two the workers held; the goals still queued were dropped.
    assert_eq!(got.len(), 6);
    assert!(got.iter().all(|r| r.values == [Some(1.0)] && !r.empty));
}
