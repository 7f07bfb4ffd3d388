//! examples/async_push.rs (compiled here as a module) pushes a run's goals one by one into a pool
//! of 8 goals in flight while a task reads the rows, and prints what `lemma-eval eval --format
//! tsv` prints, byte for byte: on a generated run of 300 goals and on the run of every third goal
//! (the others' rows come after `finish`); its reading task receives every goal's row.

#[path = "../../examples/async_push.rs"]
#[allow(dead_code)]
mod example;

use example::RowsRead;
use lemma_eval::{Evaluator, GoalRow, Predictions};
use lemma_tools::gen::{generate_trec, goal_blocks, GenSpec};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_lemma-eval");

/// What `lemma-eval eval ACTUAL PREDICTED --format tsv` prints.
fn eval_tsv(q: &Path, r: &Path) -> String {
    let out = Command::new(BIN)
        .arg("eval")
        .args([q, r])
        .args(["--format", "tsv"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The rows the sync evaluation gives, counted as the example's reading task counts them.
fn sync_rows(q: &Path, r: &Path) -> RowsRead {
    let ev = Evaluator::builder().build_from_path(q).unwrap();
    let mut rows: Vec<GoalRow> = Vec::new();
    ev.evaluate(Predictions::open(r, None, false).unwrap(), &mut rows)
        .unwrap();
    let unpushed = rows.iter().filter(|r| r.empty).count() as u64;
    RowsRead {
        pushed: rows.len() as u64 - unpushed,
        unpushed,
    }
}

#[test]
fn the_push_example_prints_what_eval_prints() {
    let dir = tempfile::tempdir().unwrap();
    let spec = GenSpec {
        goals: 300,
        universe: 5000,
        depth: 60,
        empty_share: 0.1,
        tie_share: 0.2,
        graded: true,
        seed: 23,
        ..GenSpec::default()
    };
    let (q, r) = (dir.path().join("gen.qrels"), dir.path().join("gen.run"));
    let (mut qf, mut rf) = (
        std::fs::File::create(&q).unwrap(),
        std::fs::File::create(&r).unwrap(),
    );
    generate_trec(&spec, &mut qf, &mut rf).unwrap();
    let third = dir.path().join("third.run");
    let blocks = goal_blocks(&std::fs::read_to_string(&r).unwrap());
    std::fs::write(
        &third,
        blocks.iter().step_by(3).cloned().collect::<String>(),
    )
    .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for run in [&r, &third] {
        let mut out = Vec::new();
        let read = rt
            .block_on(async {
                let pushed = example::run(&q, run, 8, &mut out);
                tokio::time::timeout(Duration::from_secs(60), pushed).await
            })
            .expect("the example ends within 60 s")
            .unwrap();
        let want = eval_tsv(&q, run);
        assert!(want.lines().count() > 10, "{want}");
        assert_eq!(String::from_utf8(out).unwrap(), want, "{}", run.display());
        assert_eq!(read, sync_rows(&q, run), "{}", run.display());
        if run == &third {
            assert!(read.unpushed > 150, "{read:?}");
        }
    }
}
