//! The async API (lemma-eval's `async` feature): streams, sinks and `AsyncRead` inputs give the
//! file path's summary to the bit, with 1 and 2 workers; a fast producer never has more than N
//! goals in flight; per-goal rows arrive as a stream.

use futures::{SinkExt, StreamExt};
use lemma_eval::aio::{evaluate_read, evaluate_stream, PoolOptions, RankedGoal};
use lemma_eval::{Evaluator, GoalRow, Predictions, SummaryOnly, TieMode};
use std::io::Write;
use std::path::{Path, PathBuf};

const BIN: &str = env!("CARGO_BIN_EXE_lemma-eval");

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(p)
}

/// The summary as text: every aggregate's bits and the goal counts.
fn key(s: &lemma_accum::Summary) -> String {
    format!("{:?} {:?}", s.aggregates(), s.counts())
}

/// A run's goals as scored goals, in file order.
fn goals_of(run: &Path) -> Vec<RankedGoal> {
    let mut goals: Vec<(String, Vec<(String, f64)>)> = Vec::new();
    for line in std::fs::read_to_string(run).unwrap().lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let item = (f[2].to_string(), f[4].parse::<f64>().unwrap());
        match goals.last_mut() {
            Some((g, items)) if g == f[0] => items.push(item),
            _ => goals.push((f[0].to_string(), vec![item])),
        }
    }
    goals
        .into_iter()
        .map(|(g, items)| RankedGoal::Scored { goal: g, items })
        .collect()
}

fn generated(dir: &Path, goals: u64, depth: u64) -> (PathBuf, PathBuf) {
    let (q, r) = (dir.join("gen.qrels"), dir.join("gen.run"));
    let s = |x: u64| x.to_string();
    let out = std::process::Command::new(BIN)
        .args([
            "gen",
            "--goals",
            &s(goals),
            "--depth",
            &s(depth),
            "--universe",
            "3000",
        ])
        .args([
            "--graded",
            "--ties",
            "0.2",
            "--empty-share",
            "0.1",
            "--seed",
            "9",
        ])
        .args(["--qrels", q.to_str().unwrap(), "--run", r.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    (q, r)
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

const MEASURES: [&str; 10] = [
    "AP",
    "P@5",
    "RR",
    "nDCG@10",
    "Rprec",
    "Depth(recall=1.0)",
    "Bpref",
    "GM_AP",
    "NumRel",
    "AP11",
];

fn evaluator(q: &Path, ties: TieMode) -> Evaluator {
    Evaluator::builder()
        .measure_names(MEASURES)
        .unwrap()
        .ties(ties)
        .threads(2)
        .batch_bytes(8192)
        .build_from_path(q)
        .unwrap()
}

/// The file path, the stream, the sink and the async reader (plain, gzip, zstd) agree.
fn check(q: &Path, r: &Path, ties: TieMode) {
    let ev = evaluator(q, ties);
    let want = key(&ev
        .evaluate(Predictions::open(r, None, false).unwrap(), &mut SummaryOnly)
        .unwrap()
        .summary);
    let goals = goals_of(r);
    let rt = rt();
    for workers in [1, 2] {
        let opts = PoolOptions {
            workers: Some(workers),
            in_flight: 4,
            rows: false,
        };
        let stream = futures::stream::iter(goals.clone());
        let done = rt.block_on(evaluate_stream(&ev, stream, opts)).unwrap();
        assert_eq!(key(&done.summary), want, "stream, {workers} workers");
        // The sink.
        let done = rt
            .block_on(async {
                let pool = ev.pool(opts)?;
                let mut sink = pool.sink();
                let mut all = futures::stream::iter(goals.clone().into_iter().map(Ok));
                sink.send_all(&mut all).await?;
                sink.close().await?;
                drop(sink);
                pool.finish().await
            })
            .unwrap();
        assert_eq!(key(&done.summary), want, "sink, {workers} workers");
    }
    // The async reader, on every container.
    let bytes = std::fs::read(r).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&bytes).unwrap();
    let gz = gz.finish().unwrap();
    let zst = zstd::encode_all(&bytes[..], 3).unwrap();
    for (name, data) in [("plain", bytes.clone()), ("gzip", gz), ("zstd", zst)] {
        let done = rt
            .block_on(evaluate_read(&ev, name, std::io::Cursor::new(data)))
            .unwrap();
        assert_eq!(key(&done.summary), want, "async read, {name}");
    }
}

#[test]
fn every_async_way_equals_the_file_path() {
    for dir in ["seed", "graded", "ties", "missing"] {
        let (q, r) = (fixture(dir).join("qrels.txt"), fixture(dir).join("run.txt"));
        check(&q, &r, TieMode::Trec);
        check(&q, &r, TieMode::Group);
    }
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = generated(dir.path(), 400, 80);
    check(&q, &r, TieMode::Trec);
    check(&q, &r, TieMode::Group);
}

#[test]
fn async_read_errors_are_the_files() {
    let ev = evaluator(&fixture("seed/qrels.txt"), TieMode::Trec);
    let rt = rt();
    let bad = b"g1 Q0 a 1 0.9 t\ng1 Q0 b 2 high t\n".to_vec();
    let e = rt
        .block_on(evaluate_read(&ev, "socket", std::io::Cursor::new(bad)))
        .unwrap_err();
    assert!(e.to_string().starts_with("socket:2:"), "{e}");
    let e = rt
        .block_on(evaluate_read(
            &ev,
            "socket",
            std::io::Cursor::new(Vec::new()),
        ))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "socket: is empty, expected at least one line"
    );
}

#[test]
fn a_fast_producer_never_has_more_than_n_goals_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let (q, _) = generated(dir.path(), 250, 10);
    let ev = evaluator(&q, TieMode::Trec);
    // Goals of the actual sets (evaluated, not skipped).
    let text = std::fs::read_to_string(&q).unwrap();
    let mut names: Vec<String> = text
        .lines()
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect();
    names.dedup();
    // Goals of 200,000 ids take the workers about a millisecond each; pushing one takes
    // microseconds.
    let ids: Vec<u32> = (0..200_000).collect();
    let rt = rt();
    let (max_seen, n) = rt.block_on(async {
        let pool = ev
            .pool(PoolOptions {
                workers: Some(2),
                in_flight: 5,
                rows: false,
            })
            .unwrap();
        let mut max_seen = 0;
        for g in names.iter().take(200) {
            let goal = RankedGoal::Ids {
                goal: g.clone(),
                ids: ids.clone(),
            };
            pool.push(goal).await.unwrap();
            max_seen = max_seen.max(pool.in_flight());
        }
        let done = pool.finish().await.unwrap();
        let c = done.summary.counts();
        (max_seen, c.evaluated - c.evaluated_empty)
    });
    assert_eq!(n, 200);
    assert_eq!(max_seen, 5, "the bound is reached, and never passed");
}

#[test]
fn rows_arrive_as_a_stream() {
    let dir = tempfile::tempdir().unwrap();
    let (q, full) = generated(dir.path(), 200, 40);
    // Every fifth goal left out: goals without predictions, whose rows come after finish.
    let text = std::fs::read_to_string(&full).unwrap();
    let mut names: Vec<&str> = text.lines().map(|l| l.split(' ').next().unwrap()).collect();
    names.dedup();
    let left_out: Vec<&str> = names.iter().step_by(5).copied().collect();
    let kept: String = text
        .lines()
        .filter(|l| !left_out.contains(&l.split(' ').next().unwrap()))
        .map(|l| format!("{l}\n"))
        .collect();
    let r = dir.path().join("kept.run");
    std::fs::write(&r, kept).unwrap();
    let ev = evaluator(&q, TieMode::Trec);
    let mut want: Vec<GoalRow> = Vec::new();
    ev.evaluate(Predictions::open(&r, None, false).unwrap(), &mut want)
        .unwrap();
    let goals = goals_of(&r);
    let rt = rt();
    let mut got: Vec<GoalRow> = rt.block_on(async {
        let mut pool = ev
            .pool(PoolOptions {
                workers: Some(2),
                in_flight: 8,
                rows: true,
            })
            .unwrap();
        let rows = pool.rows().unwrap();
        let collect = tokio::spawn(rows.collect::<Vec<GoalRow>>());
        for g in goals {
            pool.push(g).await.unwrap();
        }
        pool.finish().await.unwrap();
        collect.await.unwrap()
    });
    // Completion order: compare as sets, goals with predictions first then the empty ones.
    let sort = |v: &mut Vec<GoalRow>| v.sort_by(|a, b| (a.empty, &a.goal).cmp(&(b.empty, &b.goal)));
    sort(&mut got);
    sort(&mut want);
    assert!(want.iter().any(|r| r.empty));
    assert_eq!(got, want);
}

#[test]
fn errors_stop_the_pool_and_name_the_goal() {
    let ev = evaluator(&fixture("seed/qrels.txt"), TieMode::Trec);
    let rt = rt();
    let e = rt
        .block_on(async {
            let pool = ev.pool(PoolOptions::default())?;
            pool.push(RankedGoal::ranked("g1", ["a"])).await?;
            pool.push(RankedGoal::ranked("g1", ["b"])).await?;
            pool.finish().await
        })
        .unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("goal `g1`"), "{msg}");
    assert!(msg.contains("pushed"), "{msg}");
}
