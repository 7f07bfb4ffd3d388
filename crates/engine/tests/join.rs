//! The merge join (sorted qrels read along the predictions) against the held pipeline (the qrels
//! read whole first): the same rows, in the same order, and the same summary to the bit, on the
//! fixtures and on generated workloads with goals missing on either side, goals out of the
//! qrels' order, repeated lemmas, one or two workers and batches of any size.

use lemma_eval::join::JoinReport;
use lemma_eval::{EvalError, Evaluator, GoalRow, Predictions};
use lemma_ingest::{ActualSets, SortedQrels};
use lemma_tools::gen::{generate_trec, GenSpec};
use std::path::{Path, PathBuf};

const MEASURES: &[&str] = &[
    "AP",
    "RR",
    "R@10",
    "P@5",
    "nDCG@10",
    "Rprec",
    "Bpref",
    "NumRet",
    "NumRel",
    "Depth(recall=1.0)",
];

/// Summary (every aggregate's bits and the counts) and rows, or the error's kind and line.
type Outcome = Result<(String, Vec<GoalRow>), String>;

fn builder(threads: usize, batch: usize) -> lemma_eval::EvaluatorBuilder {
    Evaluator::builder()
        .measure_names(MEASURES)
        .unwrap()
        .threads(threads)
        .batch_bytes(batch)
}

fn error_key(e: EvalError) -> String {
    match e {
        EvalError::Input(ie) => format!("{:?} line {:?}", ie.kind, ie.line),
        e => e.to_string(),
    }
}

/// The summary as text: every aggregate's bits and the goal counts.
fn key(s: &lemma_accum::Summary) -> String {
    format!("{:?} {:?}", s.aggregates(), s.counts())
}

fn held(qrels: &Path, run: &Path, threads: usize, batch: usize) -> Outcome {
    let ev = builder(threads, batch).build(ActualSets::read_path(qrels).unwrap());
    let mut rows = Vec::new();
    let done = ev
        .evaluate(Predictions::open(run, None, false).unwrap(), &mut rows)
        .map_err(error_key)?;
    Ok((key(&done.summary), rows))
}

fn joined(qrels: &Path, run: &Path, threads: usize, batch: usize) -> (Outcome, Option<JoinReport>) {
    let q = SortedQrels::open(qrels).unwrap().expect("sorted qrels");
    let ev = builder(threads, batch).build_joined(q);
    let mut rows = Vec::new();
    match ev.evaluate_with_progress(lemma_ingest::open(run).unwrap(), &mut rows, None) {
        Ok((done, jr)) => (Ok((key(&done.summary), rows)), Some(jr)),
        Err(e) => (Err(error_key(e)), None),
    }
}

/// Both ways, with 1 and 2 workers and small and large batches: equal outcomes. The join's
/// reports.
fn check(qrels: &Path, run: &Path) -> Vec<JoinReport> {
    let mut reports = Vec::new();
    for threads in [1, 2] {
        for batch in [256, 4096, 1 << 20] {
            let h = held(qrels, run, threads, batch);
            let (j, jr) = joined(qrels, run, threads, batch);
            assert_eq!(
                j,
                h,
                "{} {} threads {threads} batch {batch}",
                qrels.display(),
                run.display()
            );
            reports.extend(jr);
        }
    }
    reports
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

#[test]
fn fixtures_joined_equal_held() {
    let mut checked = 0;
    for dir in ["seed", "graded", "missing", "ties", "split", "pooled"] {
        let d = fixtures().join(dir);
        let (q, r) = (d.join("qrels.txt"), d.join("run.txt"));
        if SortedQrels::open(&q).unwrap().is_some() {
            check(&q, &r);
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} fixtures have sorted qrels");
}

/// Goals `0..n` as `g0 ... g{n-1}` (natural order), the qrels without every 5th goal and the
/// run without every 7th (goals missing on either side), a goal no actual set has at the end,
/// one lemma repeated in every 11th goal.
fn workload(dir: &Path, seed: u64) -> (PathBuf, PathBuf, Vec<Vec<String>>) {
    let spec = GenSpec {
        goals: 200,
        universe: 3_000,
        depth: 40,
        tie_share: 0.2,
        graded: true,
        empty_share: 0.1,
        seed,
        ..GenSpec::default()
    };
    let (mut q, mut r) = (Vec::new(), Vec::new());
    generate_trec(&spec, &mut q, &mut r).unwrap();
    let goal_no = |line: &str| -> usize {
        line.split_whitespace().next().unwrap()[1..]
            .parse()
            .unwrap()
    };
    let qrels: String = String::from_utf8(q)
        .unwrap()
        .lines()
        .filter(|l| goal_no(l) % 5 != 2)
        .map(|l| format!("{l}\n"))
        .collect();
    let mut blocks: Vec<Vec<String>> = Vec::new();
    for line in String::from_utf8(r).unwrap().lines() {
        let g = goal_no(line);
        if g % 7 == 3 {
            continue;
        }
        match blocks.last_mut() {
            Some(b) if goal_no(&b[0]) == g => b.push(line.to_string()),
            _ => blocks.push(vec![line.to_string()]),
        }
    }
    for b in blocks.iter_mut() {
        if goal_no(&b[0]) % 11 == 0 && b.len() > 2 {
            let again = b[1].clone();
            b.push(again);
        }
    }
    blocks.push(vec![
        "zz.nobody Q0 a 1 1 t".into(),
        "zz.nobody Q0 b 2 0.5 t".into(),
    ]);
    let qp = dir.join("qrels");
    std::fs::write(&qp, qrels).unwrap();
    let rp = write_run(dir, "run", &blocks);
    (qp, rp, blocks)
}

fn write_run(dir: &Path, name: &str, blocks: &[Vec<String>]) -> PathBuf {
    let p = dir.join(name);
    let text: String = blocks.iter().flatten().map(|l| format!("{l}\n")).collect();
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn generated_workloads_joined_equal_held() {
    let dir = tempfile::tempdir().unwrap();
    for seed in 1..=3 {
        let (q, r, _) = workload(dir.path(), seed);
        for jr in check(&q, &r) {
            assert_eq!(jr.fell_back_at_line, None);
            assert_eq!(jr.held_bytes, 0);
        }
    }
}

#[test]
fn predictions_out_of_the_qrels_order_are_taken_over_by_the_held_pipeline() {
    let dir = tempfile::tempdir().unwrap();
    let (q, _, blocks) = workload(dir.path(), 4);
    // The second half of the goals in reverse: the join stops at the first goal out of order.
    let mut swapped = blocks.clone();
    let half = swapped.len() / 2;
    swapped[half..].reverse();
    let r = write_run(dir.path(), "swapped", &swapped);
    let first_out: u64 = blocks[..half + 1]
        .iter()
        .map(|b| b.len() as u64)
        .sum::<u64>()
        + 1;
    for jr in check(&q, &r) {
        let line = jr.fell_back_at_line.expect("the held pipeline took over");
        // At the batch holding the first goal out of order (or an earlier one).
        assert!(line <= first_out, "{line} > {first_out}");
        assert!(jr.held_bytes > 0);
    }
    // A goal back after others: the same error either way, naming the same line.
    let mut back = blocks.clone();
    let again = back[3].clone();
    back.insert(10, again);
    let r = write_run(dir.path(), "back", &back);
    check(&q, &r);
    assert!(held(&q, &r, 2, 4096)
        .unwrap_err()
        .contains("GoalNotContiguous"));
}

#[test]
fn only_the_goals_of_a_batch_are_held() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r, _) = workload(dir.path(), 5);
    let whole = ActualSets::read_path(&q).unwrap();
    let (_, jr) = joined(&q, &r, 1, 256);
    let jr = jr.unwrap();
    assert!(
        jr.largest_batch_bytes * 10 < whole.heap_bytes(),
        "{jr:?} against {}",
        whole.heap_bytes()
    );
    // Every goal of the qrels is read once: in a batch's range or at the end.
    assert_eq!(jr.goals_read, whole.goal_count() as u64);
}
