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

/// `#` lines: 10.0 skips them; 9.0.8 has no comments (a `#` line is a judgment or ranked line of
/// goal `#…` when it has the fields of one, "Malformed line" otherwise), which lemma-eval
/// refuses to guess at under `--trec-version 9`: exit 2, naming the file and the line, whether
/// the file is read from disk, from stdin or gzip-compressed, qrels or run.
#[test]
fn comment_lines_under_each_version() {
    use std::io::Write as _;
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let qrels = p("q", "g1 0 a 1\ng2 0 b 1\n");
    let run = p("r", "g1 Q0 a 1 0.9 x\ng2 Q0 c 1 0.9 x\ng2 Q0 b 2 0.5 x\n");
    // A 4-field comment in the qrels (a judgment of goal `#` in 9.0.8), at line 2.
    let qrels_hash = p("qh", "g1 0 a 1\n# 0 b 1\ng2 0 b 1\n");
    // An indented one-field comment in the run after a blank line, at line 3.
    let run_hash = p(
        "rh",
        "g1 Q0 a 1 0.9 x\n\n   #note\ng2 Q0 c 1 0.9 x\ng2 Q0 b 2 0.5 x\n",
    );
    let gz = dir.path().join("rh.gz");
    let mut e = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::fast(),
    );
    e.write_all(&std::fs::read(&run_hash).unwrap()).unwrap();
    e.finish().unwrap();
    let gz = gz.to_str().unwrap().to_string();
    let lemma_eval = |version: &str, q: &str, r: &str, stdin: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_lemma-eval"));
        c.args(["trec_eval", "--trec-version", version, "-m", "P.1", q, r]);
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        input
            .write_all(&stdin.map(|f| std::fs::read(f).unwrap()).unwrap_or_default())
            .unwrap();
        drop(input);
        child.wait_with_output().unwrap()
    };
    // P_1 = 1 for g1, 0 for g2: 0.5.
    let want = "P_1                   \tall\t0.5000\n";
    for (q, r, stdin) in [
        (&qrels, &run, None),
        (&qrels_hash, &run, None),
        (&qrels, &run_hash, None),
        (&qrels, &gz, None),
        (&"-".to_string(), &run, Some(&qrels_hash)),
        (&qrels, &"-".to_string(), Some(&run_hash)),
    ] {
        let stdin = stdin.map(|s| s.as_str());
        let o = lemma_eval("10", q, r, stdin);
        assert!(o.status.success(), "{q} {r}");
        assert_eq!(String::from_utf8_lossy(&o.stdout), want, "{q} {r}");
        let o = lemma_eval("9", q, r, stdin);
        let has_hash = |f: &str| f.ends_with("/qh") || f.ends_with("/rh") || f.ends_with("/rh.gz");
        let hashed = has_hash(q) || has_hash(r) || stdin.is_some_and(has_hash);
        if !hashed {
            assert!(o.status.success());
            assert_eq!(String::from_utf8_lossy(&o.stdout), want);
            continue;
        }
        assert_eq!(o.status.code(), Some(2), "{q} {r}");
        assert!(o.stdout.is_empty());
        let err = String::from_utf8_lossy(&o.stderr);
        let (file, line) = match (has_hash(q) || stdin == Some(qrels_hash.as_str()), stdin) {
            (true, None) => (qrels_hash.as_str(), 2),
            (true, Some(_)) => ("-", 2),
            (false, None) => (r.as_str(), 3),
            (false, Some(_)) => ("-", 3),
        };
        assert!(
            err.contains(&format!("{file}:{line}: a line starting with `#`")),
            "{err}"
        );
        assert!(err.contains("9.0.8 has no comment lines"), "{err}");
    }
}

/// Where trec_eval stops or prints `-nan` (docs/METRICS.md §8.3), lemma-eval prints numbers:
/// a goal judged only negatively (trec_eval: exit 4) is a goal with `R = 0`, every measure 0 and
/// counted in `num_q`; under `-M 0` (trec_eval: `-nan` for `iprec_at_recall_0.00`) the empty
/// ranking's interpolated precision is 0.
#[test]
fn numbers_where_trec_eval_stops_or_prints_nan() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q");
    let r = dir.path().join("r");
    std::fs::write(&q, "g1 0 a -1\ng1 0 b -2\ng2 0 c 1\n").unwrap();
    std::fs::write(&r, "g1 Q0 a 1 0.9 x\ng1 Q0 b 2 0.5 x\ng2 Q0 c 1 0.9 x\n").unwrap();
    let (q, r) = (q.to_str().unwrap(), r.to_str().unwrap());
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_lemma-eval"))
            .arg("trec_eval")
            .args(args)
            .args([q, r])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    for version in ["9", "10"] {
        let out = run(&[
            "--trec-version",
            version,
            "-q",
            "-m",
            "num_q",
            "-m",
            "map",
            "-m",
            "P.1",
        ]);
        // g1: R = 0, everything 0; g2: its one relevant lemma first. Means over 2 goals.
        assert_eq!(
            out,
            "map                   \tg1\t0.0000\nP_1                   \tg1\t0.0000\n\
             map                   \tg2\t1.0000\nP_1                   \tg2\t1.0000\n\
             num_q                 \tall\t2\nmap                   \tall\t0.5000\n\
             P_1                   \tall\t0.5000\n",
            "{version}"
        );
        let out = run(&[
            "--trec-version",
            version,
            "-M",
            "0",
            "-m",
            "iprec_at_recall.0,0.5",
        ]);
        assert_eq!(
            out, "iprec_at_recall_0.00  \tall\t0.0000\niprec_at_recall_0.50  \tall\t0.0000\n",
            "{version}"
        );
    }
}
