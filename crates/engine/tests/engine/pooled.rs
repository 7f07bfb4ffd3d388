//! The pooled curve through the library: kept by an evaluation and by a push session, the same
//! curve either way; refused where it would be silently wrong (rankings without scores, a join,
//! a summary file).

use lemma_accum::{CurveRows, PooledSpec};
use lemma_eval::{read_actual, Evaluator, Job, Predictions, SummaryOnly};
use lemma_ingest::SortedQrels;
use std::path::{Path, PathBuf};

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(p)
}

fn held() -> PooledSpec {
    PooledSpec::Exact {
        max_bins: usize::MAX,
        spill: None,
    }
}

fn rows(curve: &lemma_accum::PooledCurve) -> Vec<(f64, u64, u64)> {
    let mut rows = CurveRows::new(curve.total_relevant());
    (curve.run().into_iter())
        .map(|(k, n, r)| {
            let row = rows.next(k, n, r);
            (row.threshold, row.tp, row.fp)
        })
        .collect()
}

#[test]
fn an_evaluation_and_a_session_keep_the_same_curve() {
    let actual = read_actual(&fixture("pooled/qrels.txt")).unwrap();
    let ev = Evaluator::builder()
        .measure_names(["AP"])
        .unwrap()
        .pooled(held())
        .build(actual);
    let run = Predictions::open(&fixture("pooled/run.txt"), None, false).unwrap();
    let done = ev.evaluate(run, &mut SummaryOnly).unwrap();
    let from_file = rows(done.summary.pooled().unwrap());
    assert_eq!(from_file.len(), 16);
    assert_eq!(from_file[0], (0.97, 0, 1));
    assert_eq!(from_file[15], (0.04, 8, 8));
    // The same rankings pushed with their scores.
    let mut session = ev.session().unwrap();
    let a = [0.95, 0.85, 0.73, 0.62, 0.48, 0.39, 0.12, 0.04];
    let b = [0.55, 0.59, 0.88, 0.97, 0.20, 0.09, 0.43, 0.32];
    for (goal, scores) in [("A", a), ("B", b)] {
        let items: Vec<(String, f64)> = (scores.iter().enumerate())
            .map(|(i, &s)| (format!("l{i}"), s))
            .collect();
        session.push_scored(goal, &items).unwrap();
    }
    // Rankings without scores would pool every lemma at 0: refused, naming the goal.
    let err = session.push_ranked("A", &["l0"]).unwrap_err().to_string();
    assert!(
        err.contains("goal `A`") && err.contains("needs scores"),
        "{err}"
    );
    let pushed = session.finish(&mut SummaryOnly).unwrap();
    assert_eq!(rows(pushed.summary.pooled().unwrap()), from_file);
    // No summary file, no join.
    let run = Predictions::open(&fixture("pooled/run.txt"), None, false).unwrap();
    let err = (Job::on(&ev, run).mergeable(true))
        .run(&mut SummaryOnly, None)
        .unwrap_err();
    assert!(
        err.to_string().contains("does not hold the pooled curve"),
        "{err}"
    );
    let qrels = SortedQrels::open(&fixture("pooled/qrels.txt"))
        .unwrap()
        .unwrap();
    let builder = Evaluator::builder()
        .measure_names(["AP"])
        .unwrap()
        .pooled(held());
    let input = lemma_ingest::open(&fixture("pooled/run.txt")).unwrap();
    let err = Job::along(builder, qrels, Predictions::Text(input))
        .run(&mut SummaryOnly, None)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("not when sorted qrels are read along the predictions"),
        "{err}"
    );
}

/// JSONL records without scores: an error naming the file and line, not a curve at 0.
#[test]
fn jsonl_without_scores_has_no_pooled_curve() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.jsonl");
    std::fs::write(
        &p,
        "{\"goal_id\": \"A\", \"retrieved_premises\": [\"l0\", \"l1\"]}\n",
    )
    .unwrap();
    let actual = read_actual(&fixture("pooled/qrels.txt")).unwrap();
    let ev = Evaluator::builder().pooled(held()).build(actual);
    let err = ev
        .evaluate(
            Predictions::open(&p, None, false).unwrap(),
            &mut SummaryOnly,
        )
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("p.jsonl:1") && err.contains("needs `scores`"),
        "{err}"
    );
}
