//! The join (sorted qrels read along the predictions; qrels not in order sorted first, in memory or
//! on disk) against the held pipeline (the qrels read whole first): the same rows, in the same
//! order, and the same summary to the bit, on the fixtures and on generated workloads with goals
//! missing on either side, goals in different orders in the two files, repeated lemmas, one or two
//! workers and batches of any size. And `--regroup` sorting in memory and on disk alike.

use lemma_eval::join::JoinReport;
use lemma_eval::{ActualRead, EvalError, Evaluator, GoalRow, Job, Predictions};
use lemma_ingest::{ActualSets, SortedQrels, SpillOptions};
use lemma_tools::gen::{generate_trec, goal_blocks, shuffle, GenSpec};
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
        EvalError::Input(ie) => format!("{:?} line {:?}: {}", ie.kind, ie.line, ie.message),
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

/// Joined in place within `memory` (16 KiB: goals out of order are looked up, the qrels not
/// held).
fn joined(
    qrels: &Path,
    run: &Path,
    threads: usize,
    batch: usize,
    memory: usize,
) -> (Outcome, Option<JoinReport>) {
    let q = SortedQrels::open(qrels).unwrap().expect("sorted qrels");
    join_with(q, run, threads, batch, memory)
}

/// Qrels sorted within `memory` (in an empty directory that stays empty), then joined.
fn sorted_then_joined(
    qrels: &Path,
    run: &Path,
    threads: usize,
    batch: usize,
    memory: usize,
) -> (Outcome, Option<JoinReport>) {
    let tmp = tempfile::tempdir().unwrap();
    let spill = SpillOptions {
        memory,
        dir: Some(tmp.path().to_path_buf()),
    };
    let size = std::fs::metadata(qrels).unwrap().len() as usize;
    let (q, report) = SortedQrels::sort(qrels, &spill)
        .unwrap()
        .expect("TREC qrels");
    assert_eq!(report.runs > 0, size > memory / 2, "{report:?}");
    if memory >= 1 << 20 {
        assert_eq!(report.runs, 0, "{report:?}");
    }
    let out = join_with(q, run, threads, batch, memory);
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    out
}

/// What the join did, from a joined job's outcome.
fn join_report(read: &ActualRead) -> JoinReport {
    match read {
        ActualRead::Joined { join, .. } => join.clone(),
        other => panic!("sorted qrels read along the predictions, not {other:?}"),
    }
}

fn join_with(
    q: SortedQrels,
    run: &Path,
    threads: usize,
    batch: usize,
    memory: usize,
) -> (Outcome, Option<JoinReport>) {
    let builder = builder(threads, batch).spill(SpillOptions { memory, dir: None });
    let mut rows = Vec::new();
    let predicted = Predictions::Text(lemma_ingest::open(run).unwrap());
    match Job::along(builder, q, predicted).run(&mut rows, None) {
        Ok(done) => (
            Ok((key(&done.evaluation.summary), rows)),
            Some(join_report(&done.actual_read)),
        ),
        Err(e) => (Err(error_key(e)), None),
    }
}

/// Every way, with 1 and 2 workers and small and large batches: equal outcomes. The join's
/// reports (joined in place when the qrels are sorted; else sorted in memory, and on disk within
/// 64 KiB, first: the goals never ranked then come in natural order, as the held pipeline gives
/// them for qrels not in order).
fn check(qrels: &Path, run: &Path) -> Vec<JoinReport> {
    let mut reports = Vec::new();
    let in_place = SortedQrels::open(qrels).unwrap().is_some();
    for threads in [1, 2] {
        for batch in [256, 4096, 1 << 20] {
            let h = held(qrels, run, threads, batch);
            let what = format!(
                "{} {} threads {threads} batch {batch}",
                qrels.display(),
                run.display()
            );
            if in_place {
                for memory in [1 << 30, 16 << 10] {
                    let (j, jr) = joined(qrels, run, threads, batch, memory);
                    assert_eq!(j, h, "in place within {memory}: {what}");
                    reports.extend(jr);
                }
            }
            for memory in [64 << 10, 1 << 30].into_iter().filter(|_| !in_place) {
                let (j, jr) = sorted_then_joined(qrels, run, threads, batch, memory);
                assert_eq!(j, h, "sorted within {memory}: {what}");
                reports.extend(jr);
            }
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
        check(&q, &r);
        checked += 1;
    }
    assert_eq!(checked, 6);
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
            assert_eq!((jr.lookups_from_line, jr.held_from_line), (None, None));
            assert_eq!(jr.held_bytes, 0);
        }
    }
}

/// Sorted qrels given to a job are read whole when the job needs them so (a travelling summary
/// asked for): the join's summary and rows, and the partial of the held pipeline.
#[test]
fn sorted_qrels_given_are_held_for_a_travelling_summary() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r, _) = workload(dir.path(), 4);
    let want = held(&q, &r, 2, 4096).unwrap();
    let along = |mergeable: bool| {
        let qrels = SortedQrels::open(&q)
            .unwrap()
            .expect("generated qrels ascend");
        let mut rows = Vec::new();
        let done = Job::along(builder(2, 4096), qrels, r.as_path())
            .mergeable(mergeable)
            .run(&mut rows, None)
            .unwrap();
        let got = (key(&done.evaluation.summary), rows);
        (got, done.actual_read.kind(), done.partial)
    };
    let (joined, kind, partial) = along(false);
    assert_eq!((joined, kind), (want.clone(), "joined"));
    assert!(partial.is_none());
    let (whole, kind, partial) = along(true);
    assert_eq!((whole, kind), (want.clone(), "held"));
    let partial = partial.expect("asked for");
    assert_eq!(key(&partial.summary().unwrap()), want.0);
}

#[test]
fn predictions_out_of_the_qrels_order_are_looked_up_goal_by_goal() {
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
    let reports = check(&q, &r);
    assert_eq!(reports.len(), 12);
    for jr in reports {
        // At the batch holding the first goal out of order (or an earlier one): held whole
        // within the default budget, looked up within 16 KiB.
        let line = match (jr.held_from_line, jr.lookups_from_line) {
            (Some(l), None) => {
                assert!(jr.held_bytes > 0);
                l
            }
            (None, Some(l)) => {
                assert!(jr.ranked_set_bytes > 0 && jr.held_bytes == 0);
                l
            }
            other => panic!("{other:?}"),
        };
        assert!(line <= first_out, "{line} > {first_out}");
    }
    // A goal back after others: the same error either way, naming the same line.
    let mut back = blocks.clone();
    let again = back[3].clone();
    back.insert(10, again);
    let r = write_run(dir.path(), "back", &back);
    check(&q, &r);
    let e = held(&q, &r, 2, 4096).unwrap_err();
    let first = blocks[..3].iter().map(|b| b.len()).sum::<usize>() + 1;
    assert!(
        e.contains("GoalNotContiguous") && e.contains(&format!("its lines began at line {first} ")),
        "{e}"
    );
}

/// `blocks` shuffled (a goal's lines kept together), deterministically.
fn shuffled<T: Clone>(blocks: &[T], seed: u64) -> Vec<T> {
    let mut v = blocks.to_vec();
    shuffle(&mut v, seed);
    v
}

/// The qrels' goals as blocks of lines.
fn qrels_blocks(q: &Path) -> Vec<String> {
    goal_blocks(&std::fs::read_to_string(q).unwrap())
}

#[test]
fn goals_in_different_orders_in_the_two_files() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r, blocks) = workload(dir.path(), 6);
    // The run's goals shuffled: looked up.
    let r_shuffled = write_run(dir.path(), "run-shuffled", &shuffled(&blocks, 1));
    let reports = check(&q, &r_shuffled);
    assert!(reports.iter().any(|jr| jr.lookups_from_line.is_some()));
    assert!(reports.iter().any(|jr| jr.held_from_line.is_some()));
    // The qrels' goals shuffled: sorted first, against the run in order and shuffled.
    let qs = dir.path().join("qrels-shuffled");
    std::fs::write(&qs, shuffled(&qrels_blocks(&q), 2).concat()).unwrap();
    assert!(SortedQrels::open(&qs).unwrap().is_none());
    let size = std::fs::metadata(&qs).unwrap().len();
    assert!(size > 32 << 10, "{size} bytes: too small to spill");
    check(&qs, &r);
    check(&qs, &r_shuffled);
    // The qrels in byte order (g10 before g9), the run in natural order.
    let mut qb = qrels_blocks(&q);
    qb.sort();
    let qbp = dir.path().join("qrels-bytes");
    std::fs::write(&qbp, qb.concat()).unwrap();
    assert_eq!(
        SortedQrels::open(&qbp).unwrap().unwrap().order(),
        lemma_ingest::GoalOrder::Bytes
    );
    check(&qbp, &r);
    // Comment and blank lines in sorted qrels (before a goal's first line, too): the run in
    // order, shuffled, and with a goal back.
    let qc = dir.path().join("qrels-comments");
    let commented: String = qrels_blocks(&q)
        .iter()
        .enumerate()
        .map(|(i, b)| match i % 3 {
            0 => format!("# goal {i}\n{b}"),
            1 => format!("\n{b}\n"),
            _ => b.clone(),
        })
        .collect();
    std::fs::write(&qc, commented).unwrap();
    assert!(SortedQrels::open(&qc).unwrap().is_some());
    check(&qc, &r);
    check(&qc, &r_shuffled);
    // A goal back after others, the run shuffled: the same error every way.
    let mut back = shuffled(&blocks, 3);
    let again = back[20].clone();
    back.insert(40, again);
    let rb = write_run(dir.path(), "run-back", &back);
    check(&qs, &rb);
    check(&qc, &rb);
    assert!(held(&q, &rb, 1, 4096).is_err());
}

/// `--regroup` on a run whose goals are not contiguous: sorted in memory and on disk (64 KiB),
/// the same outcome; each the same as the run sorted by goal beforehand (natural order).
#[test]
fn regrouped_in_memory_and_on_disk_alike() {
    let dir = tempfile::tempdir().unwrap();
    let (q, _, blocks) = workload(dir.path(), 7);
    // Every goal's lines cut in two, the halves far apart.
    let mut halves: Vec<Vec<String>> = Vec::new();
    for b in shuffled(&blocks, 4) {
        let mid = b.len() / 2;
        halves.push(b[..mid].to_vec());
        halves.push(b[mid..].to_vec());
    }
    let split = write_run(dir.path(), "split", &shuffled(&halves, 5));
    let mut by_goal = blocks.clone();
    by_goal.sort_by(|a, b| natural(&a[0], &b[0]));
    let sorted_run = write_run(dir.path(), "sorted", &by_goal);
    let actual = std::sync::Arc::new(ActualSets::read_path(&q).unwrap());
    // Held, and joined (the regrouped lines read along the sorted qrels).
    let regrouped = |run: &Path, memory: usize, threads: usize, joined: bool| {
        let tmp = tempfile::tempdir().unwrap();
        let builder = builder(threads, 4096).regroup(true).spill(SpillOptions {
            memory,
            dir: Some(tmp.path().to_path_buf()),
        });
        let mut rows = Vec::new();
        let done = if joined {
            let qrels = SortedQrels::open(&q).unwrap().unwrap();
            let predicted = Predictions::Text(lemma_ingest::open(run).unwrap());
            let done = Job::along(builder, qrels, predicted)
                .run(&mut rows, None)
                .unwrap();
            let jr = join_report(&done.actual_read);
            assert_eq!((jr.held_bytes, jr.held_from_line), (0, None), "{jr:?}");
            done.evaluation
        } else {
            let ev = builder.build(actual.clone());
            ev.evaluate(Predictions::open(run, None, false).unwrap(), &mut rows)
                .unwrap()
        };
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
        let spill = done.report.spill.clone().unwrap();
        assert_eq!(spill.runs > 0, memory < 1 << 20, "{spill:?}");
        (key(&done.summary), rows)
    };
    let want = held(&q, &sorted_run, 2, 4096).unwrap();
    for threads in [1, 2] {
        for joined in [false, true] {
            assert_eq!(regrouped(&split, 1 << 30, threads, joined), want);
            assert_eq!(regrouped(&split, 64 << 10, threads, joined), want);
        }
    }
}

/// Natural order of two run lines' goals (`g9` before `g10`).
fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    let g = |s: &str| s.split_whitespace().next().unwrap().to_string();
    lemma_ingest::GoalOrder::Natural.cmp(g(a).as_bytes(), g(b).as_bytes())
}

#[test]
fn only_the_goals_of_a_batch_are_held() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r, _) = workload(dir.path(), 5);
    let whole = ActualSets::read_path(&q).unwrap();
    let (_, jr) = joined(&q, &r, 1, 256, 1 << 30);
    let jr = jr.unwrap();
    assert!(
        jr.largest_batch_bytes * 10 < whole.heap_bytes(),
        "{jr:?} against {}",
        whole.heap_bytes()
    );
    // Every goal of the qrels is read once: in a batch's range or at the end.
    assert_eq!(jr.goals_read, whole.goal_count() as u64);
}

/// A lemma judged twice for a goal of sorted qrels is the error the held pipeline gives (kind,
/// message and both lines, numbered in the file), in a goal of a few judgments and in one of
/// forty, judged again with the same grade (binary qrels) or another (graded), with batches that
/// read that goal with others and alone.
#[test]
fn a_lemma_judged_twice_is_the_held_pipelines_error() {
    let dir = tempfile::tempdir().unwrap();
    for (judged, grade) in [(3usize, 1), (40, 1), (3, 0), (40, 2)] {
        // g1: two judgments; g2: `judged` distinct lemmas, then its third again; g3: one.
        let mut q = String::from("g1 0 a 1\ng1 0 b 1\n");
        for l in 0..judged {
            q += &format!("g2 0 Lemma.l{l} 1\n");
        }
        q += &format!("g2 0 Lemma.l2 {grade}\ng3 0 e 1\n");
        let qp = dir.path().join(format!("qrels{judged}-{grade}"));
        std::fs::write(&qp, q).unwrap();
        let run = write_run(
            dir.path(),
            "run",
            &[
                vec!["g1 Q0 a 1 2 t".into()],
                vec!["g2 Q0 Lemma.l1 1 2 t".into(), "g2 Q0 x 2 1 t".into()],
                vec!["g3 Q0 e 1 2 t".into()],
            ],
        );
        let held = ActualSets::read_path(&qp).unwrap_err();
        let second = judged as u64 + 3;
        assert_eq!(
            (held.line, held.first_line, held.message.as_str()),
            (
                Some(second),
                Some(5),
                "lemma `Lemma.l2` is judged twice for goal `g2`"
            ),
        );
        for threads in [1, 2] {
            for batch in [16, 1 << 20] {
                let (j, _) = joined(&qp, &run, threads, batch, 1 << 30);
                assert_eq!(
                    j.unwrap_err(),
                    format!("Duplicate line Some({second}): {}", held.message),
                    "{judged} judged, grade {grade}, {threads} threads, batch {batch}"
                );
            }
        }
    }
}

/// Goals the predictions never rank, a long stretch of them (read a chunk at a time on each
/// thread, then evaluated in order): the same outcome as the held pipeline's, rows included, and
/// a lemma judged twice among them the same error.
#[test]
fn long_stretches_of_goals_never_ranked_equal_held() {
    let dir = tempfile::tempdir().unwrap();
    let (q, _, blocks) = workload(dir.path(), 5);
    // Only the first three goals ranked (the rest after the last ranked goal), and only the
    // first three and last three, three lemmas each (a long stretch between, whose qrels are
    // far longer than the predictions' lines).
    let first = write_run(dir.path(), "first", &blocks[..3]);
    let n = blocks.len() - 1; // the last block is a goal the qrels lack
    let ends: Vec<Vec<String>> = (blocks[..3].iter())
        .chain(&blocks[n - 3..n])
        .map(|b| b[..b.len().min(3)].to_vec())
        .collect();
    let ends = write_run(dir.path(), "ends", &ends);
    for run in [&first, &ends] {
        for jr in check(&q, run) {
            assert!(jr.goals_read > 100, "{jr:?}");
        }
    }
    // A batch whose goals are far apart in the qrels (the first three and the last three goals,
    // one batch) holds their actual sets alone, not those of every goal between.
    let all = ActualSets::read_path(&q).unwrap();
    let one_goal = all.heap_bytes() / all.goal_count();
    for threads in [1, 2] {
        let (j, jr) = joined(&q, &ends, threads, 1 << 20, 1 << 30);
        assert_eq!(j, held(&q, &ends, threads, 1 << 20));
        let jr = jr.unwrap();
        assert!(jr.largest_batch_bytes < 20 * one_goal, "{jr:?} {one_goal}");
        assert_eq!(jr.goals_read, all.goal_count() as u64, "{jr:?}");
    }
    // Comment and blank lines between goals (and before the first) are no goal's lines.
    let text = std::fs::read_to_string(&q).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut noted = vec!["# judged by hand", ""];
    for (i, l) in lines.iter().enumerate() {
        let goal = |l: &str| l.split_whitespace().next().map(str::to_string);
        if i > 0 && i % 7 == 0 && goal(l) != goal(lines[i - 1]) {
            noted.extend(["", "# the next goal"]);
        }
        noted.push(l);
    }
    let nq = dir.path().join("noted");
    std::fs::write(&nq, noted.join("\n") + "\n").unwrap();
    assert!(SortedQrels::open(&nq).unwrap().is_some(), "read along");
    for run in [&first, &ends] {
        check(&nq, run);
    }
    // A lemma judged twice for a goal in the stretch: the held error, whichever thread read it;
    // with two such goals, the first in the file.
    let at = lines.len() * 2 / 3;
    let mut twice = lines.clone();
    let goal = lines[at].split_whitespace().next().unwrap();
    let lemma = lines[at].split_whitespace().nth(2).unwrap();
    twice.insert(at + 1, lines[at]);
    let later = lines.len() * 5 / 6;
    twice.insert(later + 2, lines[later]);
    let tq = dir.path().join("twice");
    std::fs::write(&tq, twice.join("\n") + "\n").unwrap();
    let h = ActualSets::read_path(&tq).unwrap_err();
    assert_eq!(
        h.message,
        format!("lemma `{lemma}` is judged twice for goal `{goal}`")
    );
    for threads in [1, 2, 3] {
        for batch in [16, 4096, 1 << 20] {
            for run in [&first, &ends] {
                let (j, _) = joined(&tq, run, threads, batch, 1 << 30);
                assert_eq!(
                    j.unwrap_err(),
                    format!("Duplicate line Some({}): {}", at + 2, h.message),
                    "{threads} threads, batch {batch}, {}",
                    run.display()
                );
            }
        }
    }
}
