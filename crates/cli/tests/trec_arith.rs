//! `trec_eval` mode's summary lines follow trec_eval's arithmetic: each goal's value added to a
//! running double sum, goals in byte order of their ids, then divided. Built from the definition:
//! a goal ranking k relevant lemmas has `P_200 = k/200`; the expected lines were worked out by
//! hand (and with Python's floats, which are IEEE doubles as C's are):
//!
//! * values 1, 1, 4, 1 (/200) in byte order: the running sum is 0.034999999999999996, over 4
//!   0.008749999999999999, printed `0.0087`; the exact mean 0.00875 would print `0.0088`;
//! * values 4, 1, 1, 1 in byte order: the running sum is exactly 0.035, `0.0088`;
//! * under `-c` with four more goals in the qrels only: values 5, 4, 1, 4, then four zeros, over
//!   8: 0.008749999999999999, `0.0087` (exact mean 0.00875).

use std::path::Path;
use std::process::Command;

/// A goal: its id, relevant lemmas ranked first, then non-relevant ones, then relevant ones
/// (seen only without `-M`), and its grade for the relevant lemmas.
struct Goal {
    id: &'static str,
    first: usize,
    nonrel: usize,
    late: usize,
}

fn goal(id: &'static str, first: usize) -> Goal {
    Goal {
        id,
        first,
        nonrel: 0,
        late: 0,
    }
}

/// Writes qrels and run for `goals` (in that file order) plus `qrels_only` goals with one
/// relevant lemma each; relevant lemmas graded `grade`, and each goal's non-relevant lemmas
/// judged 1 (relevant only at `-l 1`).
fn write(dir: &Path, goals: &[Goal], qrels_only: &[&str], grade: i32) -> (String, String) {
    let (mut q, mut r) = (String::new(), String::new());
    for g in goals {
        let mut rank = 0;
        let mut line = |name: String, r: &mut String| {
            rank += 1;
            r.push_str(&format!("{} Q0 {name} {rank} {} run\n", g.id, 1000 - rank));
        };
        for i in 0..g.first {
            q.push_str(&format!("{} 0 {}_rel{i} {grade}\n", g.id, g.id));
            line(format!("{}_rel{i}", g.id), &mut r);
        }
        for i in 0..g.nonrel {
            line(format!("{}_non{i}", g.id), &mut r);
        }
        for i in 0..g.late {
            q.push_str(&format!("{} 0 {}_late{i} {grade}\n", g.id, g.id));
            line(format!("{}_late{i}", g.id), &mut r);
        }
    }
    for id in qrels_only {
        q.push_str(&format!("{id} 0 {id}_rel 1\n"));
    }
    let (qp, rp) = (dir.join("qrels"), dir.join("run"));
    std::fs::write(&qp, q).unwrap();
    std::fs::write(&rp, r).unwrap();
    (
        qp.to_string_lossy().into_owned(),
        rp.to_string_lossy().into_owned(),
    )
}

/// `lemma-eval trec_eval ARGS... -m P.200 QRELS RUN`'s stdout.
fn trec_eval(args: &[&str], q: &str, r: &str) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_lemma-eval"))
        .arg("trec_eval")
        .args(args)
        .args(["-m", "P.200", q, r])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// The `all` line of P_200.
fn all_p200(out: &str) -> &str {
    out.lines()
        .find(|l| l.starts_with("P_200 ") && l.contains("\tall\t"))
        .expect("an all line")
        .rsplit('\t')
        .next()
        .unwrap()
}

#[test]
fn summary_is_the_running_sum_in_goal_id_byte_order() {
    let dir = tempfile::tempdir().unwrap();
    // Values 1, 1, 4, 1 in byte order (q0 q1 q2 q3), whatever the file order.
    for order in [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1]] {
        let ids = ["q0", "q1", "q2", "q3"];
        let k = [1, 1, 4, 1];
        let goals: Vec<Goal> = order.iter().map(|&i| goal(ids[i], k[i])).collect();
        let (q, r) = write(dir.path(), &goals, &[], 1);
        for version in ["10", "9"] {
            let out = trec_eval(&["--trec-version", version], &q, &r);
            assert_eq!(
                all_p200(&out),
                "0.0087",
                "file order {order:?}, version {version}"
            );
        }
        // -q: the per-goal lines as they were, the summary the same.
        let out = trec_eval(&["-q"], &q, &r);
        assert!(
            out.contains("P_200                 \tq2\t0.0200\n"),
            "{out}"
        );
        assert_eq!(all_p200(&out), "0.0087");
    }
    // Values 4, 1, 1, 1 in byte order: the running sum is exact, the last digit up.
    let goals = [goal("b", 1), goal("a", 4), goal("d", 1), goal("c", 1)];
    let (q, r) = write(dir.path(), &goals, &[], 1);
    assert_eq!(all_p200(&trec_eval(&[], &q, &r)), "0.0088");
    // Byte order, not numeric order: q10 comes before q9, so the 4 is added second here
    // (values 1, 4, 1, 1: sums 0.005, 0.025, 0.030000000000000002, 0.035 — exact again).
    let goals = [goal("q8", 1), goal("q9", 1), goal("q10", 4), goal("q11", 1)];
    let (q, r) = write(dir.path(), &goals, &[], 1);
    assert_eq!(all_p200(&trec_eval(&[], &q, &r)), "0.0088");
}

#[test]
fn summary_under_c_m_and_l() {
    let dir = tempfile::tempdir().unwrap();
    // -c: values 5, 4, 1, 4 then four goals of the qrels only (zeros), over 8.
    let goals = [goal("q3", 4), goal("q1", 4), goal("q0", 5), goal("q2", 1)];
    let (q, r) = write(dir.path(), &goals, &["q4", "q5", "q6", "q7"], 1);
    for version in ["10", "9"] {
        let out = trec_eval(&["-c", "--trec-version", version], &q, &r);
        assert_eq!(all_p200(&out), "0.0087", "version {version}");
    }
    // Without -c the divisor is 4: (5 + 4 + 1 + 4) / 200 / 4 = 0.0175, as a running sum
    // 0.06999999999999999 / 4 = 0.017499999999999998, printed 0.0175.
    assert_eq!(all_p200(&trec_eval(&[], &q, &r)), "0.0175");

    // -M 9: q2's two late relevant lemmas fall past the first 9, leaving 1, 1, 4, 1.
    let mut goals = vec![goal("q0", 1), goal("q1", 1), goal("q2", 4), goal("q3", 1)];
    goals[2].nonrel = 5;
    goals[2].late = 2;
    let (q, r) = write(dir.path(), &goals, &[], 1);
    assert_eq!(all_p200(&trec_eval(&["-M", "9"], &q, &r)), "0.0087");
    // Without -M: 1, 1, 6, 1, an exact running sum (0.045), over 4: 0.01125, printed 0.0112
    // (0.01125 is 0.011249999999999999… as a double).
    assert_eq!(all_p200(&trec_eval(&[], &q, &r)), "0.0112");

    // -l 2: relevant lemmas graded 2 count; with -l 3 none do.
    let goals = [goal("q0", 1), goal("q1", 1), goal("q2", 4), goal("q3", 1)];
    let (q, r) = write(dir.path(), &goals, &[], 2);
    assert_eq!(all_p200(&trec_eval(&["-l", "2"], &q, &r)), "0.0087");
    assert_eq!(all_p200(&trec_eval(&["-l", "3"], &q, &r)), "0.0000");
}

/// With no goal in both files, `-c` evaluates the qrels' goals as empty rankings under 10.0's
/// rules, while 9.0.8 stops with exit 7 ("No queries with both results and relevance info").
#[test]
fn c_with_no_goal_in_both_files() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = write(dir.path(), &[], &["q0", "q1"], 1);
    std::fs::write(&r, "other Q0 x 1 1 run\n").unwrap();
    let out = trec_eval(&["-c"], &q, &r);
    assert_eq!(all_p200(&out), "0.0000");
    let o = Command::new(env!("CARGO_BIN_EXE_lemma-eval"))
        .args([
            "trec_eval",
            "-c",
            "--trec-version",
            "9",
            "-m",
            "P.200",
            &q,
            &r,
        ])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(7),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.stdout.is_empty());
}

/// Past the memory budget (`--memory 64K`: the goals' values go to sorted temporary files) the
/// lines are those of the goals held in memory, and both follow the definition: 3,000 goals
/// `q0`..`q2999`, in a scrambled file order, goal `qi` ranking `k = 1 + (7i mod 5)` relevant
/// lemmas (`P_200 = k/200`). The expectation is computed here the slow way: the ids sorted as
/// strings, `-q` lines in that order, the summary the running double sum in that order over
/// 3,000. With `-c` and 500 goals only in the qrels (ids `z…`, after every `q` id), 10.0
/// prints a zero line for each and divides by 3,500; 9.0.8 prints none and divides by 3,500.
#[test]
fn spilled_per_goal_values_follow_the_definition() {
    let dir = tempfile::tempdir().unwrap();
    let n = 3000usize;
    let k = |i: usize| 1 + (7 * i) % 5;
    let (mut q, mut r) = (String::new(), String::new());
    for j in 0..n {
        let i = (j * 1237) % n;
        for l in 0..k(i) {
            q.push_str(&format!("q{i} 0 q{i}_rel{l} 1\n"));
            r.push_str(&format!("q{i} Q0 q{i}_rel{l} {} {} run\n", l + 1, 100 - l));
        }
    }
    let extra: Vec<String> = (0..500).map(|i| format!("z{i}")).collect();
    for id in &extra {
        q.push_str(&format!("{id} 0 {id}_rel 1\n"));
    }
    let (qp, rp) = (dir.path().join("qrels"), dir.path().join("run"));
    std::fs::write(&qp, q).unwrap();
    std::fs::write(&rp, r).unwrap();
    let (qp, rp) = (qp.to_str().unwrap(), rp.to_str().unwrap());

    let mut ids: Vec<(String, usize)> = (0..n).map(|i| (format!("q{i}"), k(i))).collect();
    ids.sort();
    let mut sum = 0.0f64;
    let mut want = String::new();
    for (id, k) in &ids {
        let v = *k as f64 / 200.0;
        sum += v;
        want.push_str(&format!("P_200                 \t{id}\t{v:.4}\n"));
    }
    let summary = |n: usize| format!("P_200                 \tall\t{:.4}\n", sum / n as f64);
    let mut extra_sorted = extra.clone();
    extra_sorted.sort();
    let zeros: String = (extra_sorted.iter())
        .map(|id| format!("P_200                 \t{id}\t0.0000\n"))
        .collect();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    for memory in ["64K", "1G"] {
        let run = |args: &[&str]| {
            let o = Command::new(env!("CARGO_BIN_EXE_lemma-eval"))
                .env("TMPDIR", &tmp)
                .args(["trec_eval", "--memory", memory, "-m", "P.200"])
                .args(args)
                .args([qp, rp])
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            String::from_utf8(o.stdout).unwrap()
        };
        for version in ["9", "10"] {
            let v = ["--trec-version", version];
            assert_eq!(run(&[&v[..], &["-q"]].concat()), want.clone() + &summary(n));
            let c = run(&[&v[..], &["-q", "-c"]].concat());
            let zeros = if version == "10" { &zeros[..] } else { "" };
            assert_eq!(c, want.clone() + zeros + &summary(n + 500), "{version}");
        }
        assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "left behind");
    }
}
