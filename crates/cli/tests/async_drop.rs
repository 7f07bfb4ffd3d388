//! Dropping an async evaluation mid-way leaves no thread of it running (its own test binary: it
//! counts this process's threads by name).

use lemma_eval::aio::{evaluate_read, evaluate_stream, PoolOptions, RankedGoal};
use lemma_eval::Evaluator;
use std::pin::Pin;
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

#[test]
fn dropped_mid_way_no_thread_outlives_it() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q");
    std::fs::write(&q, "g1 0 l5 1\ng2 0 l7 1\n").unwrap();
    let ev = Evaluator::builder().threads(2).build_from_path(&q).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    assert_eq!(lemma_threads(), 0);
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
    assert_eq!(lemma_threads(), 0, "none left after the drop");
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
    assert_eq!(lemma_threads(), 0, "none left after the drop");
}
