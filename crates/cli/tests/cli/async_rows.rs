//! The async pool's rows read after `finish`: with more goals in the actual sets than `in_flight`,
//! and with workers holding rows that found the row queue full, `finish` returns and the stream
//! then gives every goal's row, with the values the sync evaluation gives; beyond the documented
//! bound a push waits for the reader, and goes on once it reads.

use futures::StreamExt;
use lemma_eval::aio::{PoolOptions, RankedGoal};
use lemma_eval::{Evaluator, GoalRow, Predictions};
use lemma_tools::gen::{generate_trec, goal_blocks, GenSpec};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Generated qrels and a run of `goals` goals (a tenth of them without an actual set), in `dir`.
fn generated(dir: &Path, goals: u64) -> (PathBuf, PathBuf) {
    let spec = GenSpec {
        goals,
        universe: 2000,
        depth: 30,
        empty_share: 0.1,
        graded: true,
        tie_share: 0.2,
        seed: 17,
        ..GenSpec::default()
    };
    let (q, r) = (dir.join("gen.qrels"), dir.join("gen.run"));
    let (mut qf, mut rf) = (
        std::fs::File::create(&q).unwrap(),
        std::fs::File::create(&r).unwrap(),
    );
    generate_trec(&spec, &mut qf, &mut rf).unwrap();
    (q, r)
}

/// The goals of the run's blocks, scored, in file order.
fn goals_of(blocks: &[String]) -> Vec<RankedGoal> {
    blocks
        .iter()
        .map(|b| {
            let mut goal = String::new();
            let items: Vec<(String, f64)> = b
                .lines()
                .map(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    goal = f[0].to_string();
                    (f[2].to_string(), f[4].parse().unwrap())
                })
                .collect();
            RankedGoal::scored(goal, items)
        })
        .collect()
}

/// The goal of a run block.
fn goal_of(block: &str) -> &str {
    block.split_whitespace().next().unwrap()
}

fn evaluator(q: &Path) -> Evaluator {
    Evaluator::builder()
        .measure_names(["AP", "P@5", "RR", "nDCG@10", "Rprec", "Bpref", "NumRel"])
        .unwrap()
        .threads(2)
        .build_from_path(q)
        .unwrap()
}

/// The rows the sync evaluation gives for the run of `blocks` (written into `dir`).
fn sync_rows(ev: &Evaluator, dir: &Path, blocks: &[String]) -> Vec<GoalRow> {
    let r = dir.join("part.run");
    std::fs::write(&r, blocks.concat()).unwrap();
    let mut rows: Vec<GoalRow> = Vec::new();
    ev.evaluate(Predictions::open(&r, None, false).unwrap(), &mut rows)
        .unwrap();
    rows
}

/// Checks `got` against the sync rows: the pushed goals' rows first (in the order the workers
/// finished them: compared sorted), then the goals never pushed, in the sync evaluation's order.
fn same_rows(mut got: Vec<GoalRow>, want: Vec<GoalRow>) {
    assert_eq!(got.len(), want.len(), "one row a goal");
    let pushed = want.iter().filter(|r| !r.empty).count();
    assert!(got[..pushed].iter().all(|r| !r.empty));
    assert_eq!(got[pushed..], want[pushed..], "the goals never pushed");
    let (mut got, mut want) = (got.drain(..pushed).collect::<Vec<_>>(), want);
    want.truncate(pushed);
    got.sort_by(|a, b| a.goal.cmp(&b.goal));
    want.sort_by(|a, b| a.goal.cmp(&b.goal));
    assert_eq!(got, want, "the goals pushed");
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

const OPTS: PoolOptions = PoolOptions {
    workers: Some(2),
    in_flight: 8,
    rows: true,
};

/// Rows taken, goals pushed, `finish` awaited, the rows collected afterwards: the actual sets'
/// other goals (over 80 of them, ten times `in_flight`) come after `finish`, as the stream is read.
#[test]
fn rows_collected_after_finish() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = generated(dir.path(), 100);
    let ev = evaluator(&q);
    let blocks = goal_blocks(&std::fs::read_to_string(&r).unwrap());
    let (blocks, goals) = (&blocks[..8], goals_of(&blocks[..8]));
    let want = sync_rows(&ev, dir.path(), blocks);
    assert!(
        want.iter().filter(|r| r.empty).count() > 80,
        "{}",
        want.len()
    );
    let got = rt().block_on(async {
        let run = async {
            let mut pool = ev.pool(OPTS).unwrap();
            let rows = pool.rows().unwrap();
            for g in goals {
                pool.push(g).await.unwrap();
            }
            let done = pool.finish().await.unwrap();
            let rows: Vec<GoalRow> = rows.collect().await;
            (done, rows)
        };
        tokio::time::timeout(Duration::from_secs(30), run)
            .await
            .expect("finish and the rows within 30 s")
    });
    let (done, got) = got;
    assert_eq!(done.summary.counts().evaluated as usize, want.len());
    same_rows(got, want);
}

/// Twice `in_flight` goals pushed with nobody reading: `in_flight` rows fill the queue and the
/// workers hold rows that find no room; `finish` sets them aside and returns.
#[test]
fn finish_returns_while_workers_wait_for_room() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = generated(dir.path(), 60);
    let blocks = goal_blocks(&std::fs::read_to_string(&r).unwrap());
    // Goals of the actual sets only (each pushed goal gives a row, and holds a place until then),
    // and actual sets of those goals only (no goal is left for after finish).
    let ev = evaluator(&q);
    let blocks: Vec<String> = blocks
        .into_iter()
        .filter(|b| ev.actual().goal(goal_of(b).as_bytes()).is_some())
        .take(2 * OPTS.in_flight)
        .collect();
    assert_eq!(blocks.len(), 2 * OPTS.in_flight);
    let qrels: String = std::fs::read_to_string(&q)
        .unwrap()
        .lines()
        .filter(|l| blocks.iter().any(|b| goal_of(b) == goal_of(l)))
        .map(|l| format!("{l}\n"))
        .collect();
    let q = dir.path().join("pushed.qrels");
    std::fs::write(&q, qrels).unwrap();
    let ev = evaluator(&q);
    assert_eq!(ev.actual().goal_count(), 2 * OPTS.in_flight);
    let want = sync_rows(&ev, dir.path(), &blocks);
    let goals = goals_of(&blocks);
    let (done, got) = rt().block_on(async {
        let run = async {
            let mut pool = ev.pool(OPTS).unwrap();
            let rows = pool.rows().unwrap();
            for g in goals {
                pool.push(g).await.unwrap();
            }
            let done = pool.finish().await.unwrap();
            (done, rows.collect::<Vec<GoalRow>>().await)
        };
        tokio::time::timeout(Duration::from_secs(30), run)
            .await
            .expect("finish and the rows within 30 s")
    });
    assert_eq!(done.summary.counts().evaluated as usize, want.len());
    assert!(want.iter().all(|r| !r.empty));
    same_rows(got, want);
}

/// With nobody reading, the push after twice `in_flight` goals waits; it goes on once a task
/// reads the rows, and every goal's row arrives.
#[test]
fn a_push_beyond_the_bound_waits_for_the_reader() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = generated(dir.path(), 60);
    let ev = evaluator(&q);
    let blocks = goal_blocks(&std::fs::read_to_string(&r).unwrap());
    let blocks: Vec<String> = blocks
        .into_iter()
        .filter(|b| ev.actual().goal(goal_of(b).as_bytes()).is_some())
        .take(2 * OPTS.in_flight + 5)
        .collect();
    let want = sync_rows(&ev, dir.path(), &blocks);
    let mut goals = goals_of(&blocks).into_iter();
    let got = rt().block_on(async {
        let mut pool = ev.pool(OPTS).unwrap();
        let rows = pool.rows().unwrap();
        for g in goals.by_ref().take(2 * OPTS.in_flight) {
            pool.push(g).await.unwrap();
        }
        let next = goals.next().unwrap();
        let waited = tokio::time::timeout(Duration::from_millis(300), pool.push(next.clone()));
        assert!(waited.await.is_err(), "the push waits for the reader");
        let reader = tokio::spawn(rows.collect::<Vec<GoalRow>>());
        let run = async {
            pool.push(next).await.unwrap();
            for g in goals {
                pool.push(g).await.unwrap();
            }
            pool.finish().await.unwrap();
            reader.await.unwrap()
        };
        tokio::time::timeout(Duration::from_secs(30), run)
            .await
            .expect("the pushes go on once the rows are read")
    });
    same_rows(got, want);
}

/// A pool that keeps rows refuses a push before its row stream is taken: nobody could read
/// those rows, and once the queue filled the workers would wait for ever. Taken, it goes on.
#[test]
fn a_push_before_the_rows_are_taken_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (q, _) = generated(dir.path(), 20);
    let ev = evaluator(&q);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let opts = PoolOptions {
            workers: Some(2),
            in_flight: 2,
            rows: true,
        };
        let mut pool = ev.pool(opts).unwrap();
        let e = pool
            .push(RankedGoal::ranked("g1", ["a"]))
            .await
            .unwrap_err();
        assert!(
            e.to_string().contains("take Pool::rows() before pushing"),
            "{e}"
        );
        let rows = pool.rows().unwrap();
        pool.push(RankedGoal::ranked("g1", ["a"])).await.unwrap();
        let done = tokio::time::timeout(Duration::from_secs(30), pool.finish())
            .await
            .expect("finish returns")
            .unwrap();
        let rows: Vec<GoalRow> = rows.collect().await;
        // Every goal with an actual set and something relevant has its row: g1 pushed, the
        // others evaluated as empty.
        assert_eq!(rows.len() as u64, done.summary.counts().evaluated);
        assert_eq!(rows.iter().filter(|r| !r.empty).count(), 1);
    });
}
