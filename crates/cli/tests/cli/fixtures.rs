//! Runs the `lemma-eval` binary on every fixture in `fixtures/` and compares its output with the
//! expected files (values derived by hand from METRICS.md; see fixtures/README.md).

use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::common;
use common::{fails, fixture_arg as fixture, run};

fn run_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(common::BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout_ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}; stderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn expected(p: &str) -> String {
    std::fs::read_to_string(fixture(p)).unwrap()
}

fn eval_tsv(actual: &str, predicted: &str, extra: &[&str]) -> String {
    let (a, p) = (fixture(actual), fixture(predicted));
    let mut args = vec!["eval", &a, &p, "--format", "tsv", "--per-goal", "--quiet"];
    args.extend_from_slice(extra);
    stdout_ok(&run(&args))
}

const SEED_MEASURES: &[&str] = &[
    "-m",
    "P@2",
    "-m",
    "R@4",
    "-m",
    "AP",
    "-m",
    "AP@2",
    "-m",
    "AP(norm=min)@2",
    "-m",
    "AP(norm=hits)@2",
    "-m",
    "AP@4",
    "-m",
    "Rprec",
    "-m",
    "Depth(recall=0.3)",
    "-m",
    "Depth(recall=0.5)",
    "-m",
    "Depth(recall=1.0)",
    "-m",
    "P(recall=1.0)",
    "-m",
    "RR",
    "-m",
    "AP11",
    "-m",
    "F(beta=1)@5",
    "-m",
    "E(beta=1)@5",
    "-m",
    "nDCG",
    "-m",
    "Bpref",
    "-m",
    "SetF(beta=1)",
];

#[test]
fn seed_trec_and_jsonl_give_metrics_section_7() {
    let want = expected("seed/expected-eval.tsv");
    assert_eq!(
        eval_tsv("seed/qrels.txt", "seed/run.txt", SEED_MEASURES),
        want
    );
    assert_eq!(
        eval_tsv("seed/actual.jsonl", "seed/predictions.jsonl", SEED_MEASURES),
        want
    );
    // Mixed formats: JSONL truth with a TREC run.
    assert_eq!(
        eval_tsv("seed/actual.jsonl", "seed/run.txt", SEED_MEASURES),
        want
    );
}

#[test]
fn seed_trec_eval_output_is_trec_eval_s() {
    let out = stdout_ok(&run(&[
        "trec_eval",
        "-q",
        &fixture("seed/qrels.txt"),
        &fixture("seed/run.txt"),
    ]));
    assert_eq!(out, expected("seed/expected-trec_eval-q.txt"));
    // -n drops the summary; without -q only the summary remains.
    let want = expected("seed/expected-trec_eval-q.txt");
    let (per_goal, summary) = want.split_at(want.find("runid").unwrap());
    let out = stdout_ok(&run(&[
        "trec_eval",
        "-q",
        "-n",
        &fixture("seed/qrels.txt"),
        &fixture("seed/run.txt"),
    ]));
    assert_eq!(out, per_goal);
    let out = stdout_ok(&run(&[
        "trec_eval",
        &fixture("seed/qrels.txt"),
        &fixture("seed/run.txt"),
    ]));
    assert_eq!(out, summary);
}

#[test]
fn pooled_seed_003_trec_and_jsonl() {
    let m = [
        "-m",
        "AP",
        "-m",
        "SetP(threshold=0.5)",
        "-m",
        "SetR(threshold=0.5)",
        "-m",
        "SetF(beta=1,threshold=0.5)",
    ];
    let want = expected("pooled/expected-eval.tsv");
    // B's lines are out of score order: the goal is re-read and sorted.
    assert_eq!(eval_tsv("pooled/qrels.txt", "pooled/run.txt", &m), want);
    let mut mj = m.to_vec();
    mj.extend(["--order", "score"]);
    assert_eq!(
        eval_tsv("pooled/qrels.txt", "pooled/predictions.jsonl", &mj),
        want
    );
    assert_eq!(
        eval_tsv("pooled/qrels-relevant-only.txt", "pooled/run.txt", &m),
        want
    );
    // In file order, B's AP is that of the unsorted lines: relevant at ranks 1, 2, 5, 6.
    let file = eval_tsv(
        "pooled/qrels.txt",
        "pooled/run.txt",
        &["-m", "AP", "--order", "file"],
    );
    let b: f64 = file
        .lines()
        .find(|l| l.starts_with("B\t"))
        .unwrap()
        .rsplit('\t')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((b - (1.0 + 1.0 + 3.0 / 5.0 + 4.0 / 6.0) / 4.0).abs() < 1e-15);
}

#[test]
fn ties_break_by_name_bytes_and_orders_are_selectable() {
    let m = [
        "-m", "AP", "-m", "P@1", "-m", "RR", "-m", "Rprec", "-m", "nDCG",
    ];
    assert_eq!(
        eval_tsv("ties/qrels.txt", "ties/run.txt", &m),
        expected("ties/expected-trec-order.tsv")
    );
    let m4 = [
        "-m", "AP", "-m", "P@1", "-m", "RR", "-m", "Rprec", "--order", "file",
    ];
    assert_eq!(
        eval_tsv("ties/qrels.txt", "ties/run.txt", &m4),
        expected("ties/expected-file-order.tsv")
    );
    // Tie groups: {b, 9, 10} is one threshold holding 2 relevant at its end (rank 4): AP = 2 * (2/4) / 2.
    let g = eval_tsv(
        "ties/qrels.txt",
        "ties/run.txt",
        &["-m", "AP", "--ties", "group"],
    );
    assert_eq!(g, "t1\tAP\t0.5\nall\tAP\t0.5\n");
}

#[test]
fn graded_and_judged_nonrelevant() {
    let m = [
        "-m", "AP", "-m", "Bpref", "-m", "nDCG", "-m", "nDCG@2", "-m", "NumRel",
    ];
    assert_eq!(
        eval_tsv("graded/qrels.txt", "graded/run.txt", &m),
        expected("graded/expected-level1.tsv")
    );
    let mut m2 = m.to_vec();
    m2.extend(["--relevance-level", "2"]);
    assert_eq!(
        eval_tsv("graded/qrels.txt", "graded/run.txt", &m2),
        expected("graded/expected-level2.tsv")
    );
}

#[test]
fn missing_goals_on_either_side_and_zero_relevant() {
    let m = ["-m", "AP", "-m", "NumRet"];
    assert_eq!(
        eval_tsv("missing/qrels.txt", "missing/run.txt", &m),
        expected("missing/expected-zero.tsv")
    );
    let mut ms = m.to_vec();
    ms.extend(["--missing", "skip"]);
    assert_eq!(
        eval_tsv("missing/qrels.txt", "missing/run.txt", &ms),
        expected("missing/expected-skip.tsv")
    );
    let o = run(&[
        "eval",
        &fixture("missing/qrels.txt"),
        &fixture("missing/run.txt"),
        "--format",
        "json",
        "-m",
        "AP",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["goals"]["evaluated"], 2);
    assert_eq!(v["goals"]["evaluated_empty"], 1);
    assert_eq!(v["goals"]["skipped_no_actual_set"], 1);
    assert_eq!(v["goals"]["skipped_no_relevant"], 1);
    assert_eq!(v["summary"]["AP"], 0.5);
    let report = String::from_utf8_lossy(&o.stderr);
    assert!(
        report.contains("2 goals evaluated (1 with no predictions"),
        "{report}"
    );
    assert!(
        report.contains("1 with no actual set, 1 with no relevant lemma"),
        "{report}"
    );
    let tm = [
        "-m",
        "num_q",
        "-m",
        "num_ret",
        "-m",
        "num_rel",
        "-m",
        "num_rel_ret",
        "-m",
        "map",
    ];
    let (q, r) = (fixture("missing/qrels.txt"), fixture("missing/run.txt"));
    for (flags, file) in [
        (vec!["-q"], "missing/expected-trec_eval-q.txt"),
        (vec!["-q", "-c"], "missing/expected-trec_eval-q-c.txt"),
        (
            vec!["-q", "-c", "--trec-version", "9"],
            "missing/expected-trec_eval-q-c-v9.txt",
        ),
    ] {
        let mut args = vec!["trec_eval"];
        args.extend(flags);
        args.extend(tm);
        args.extend([q.as_str(), r.as_str()]);
        assert_eq!(stdout_ok(&run(&args)), expected(file), "{file}");
    }
}

#[test]
fn interrupted_goals_need_regroup_in_eval_but_not_in_trec_eval() {
    let (q, r) = (fixture("split/qrels.txt"), fixture("split/run.txt"));
    let o = run(&["eval", &q, &r, "-m", "AP"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("run.txt:3: goal `s1` appears again; its lines began at line 1"),
        "{err}"
    );
    assert!(err.contains("--regroup"), "{err}");
    assert!(o.stdout.is_empty() || !String::from_utf8_lossy(&o.stdout).contains("all"));
    assert_eq!(
        eval_tsv(
            "split/qrels.txt",
            "split/run.txt",
            &["-m", "AP", "--regroup"]
        ),
        expected("split/expected-regroup.tsv")
    );
    let out = stdout_ok(&run(&["trec_eval", "-m", "map", &q, &r]));
    assert_eq!(out, "map                   \tall\t0.7500\n");
}

#[test]
fn compressed_and_stdin_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let run_txt = std::fs::read(fixture("seed/run.txt")).unwrap();
    let gz = dir.path().join("run.gz");
    let mut e = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::default(),
    );
    e.write_all(&run_txt).unwrap();
    e.finish().unwrap();
    let zst = dir.path().join("run.zst");
    std::fs::write(&zst, zstd::encode_all(&run_txt[..], 3).unwrap()).unwrap();
    let want = expected("seed/expected-eval.tsv");
    for p in [&gz, &zst] {
        let out = stdout_ok(&run(&[
            &[
                "eval",
                &fixture("seed/qrels.txt"),
                p.to_str().unwrap(),
                "--format",
                "tsv",
                "--per-goal",
                "--quiet",
            ][..],
            SEED_MEASURES,
        ]
        .concat()));
        assert_eq!(out, want, "{}", p.display());
    }
    let out = stdout_ok(&run_stdin(
        &[
            &[
                "eval",
                &fixture("seed/qrels.txt"),
                "-",
                "--format",
                "tsv",
                "--per-goal",
                "--quiet",
            ][..],
            SEED_MEASURES,
        ]
        .concat(),
        &run_txt,
    ));
    assert_eq!(out, want);
    let out = stdout_ok(&run_stdin(
        &["trec_eval", "-q", &fixture("seed/qrels.txt"), "-"],
        &run_txt,
    ));
    assert_eq!(out, expected("seed/expected-trec_eval-q.txt"));
}

/// Bad input: exit 2 (4 for a duplicate in trec_eval mode), a message naming file and line, no panic,
/// and with -o nothing left behind.
#[test]
fn bad_inputs_fail_clearly() {
    let q = fixture("seed/qrels.txt");
    let cases: &[(&str, &str)] = &[
        (
            "bad/run-4-fields.txt",
            "run-4-fields.txt:2: expected 6 fields (goal Q0 lemma rank score tag), found 4",
        ),
        (
            "bad/run-nan.txt",
            "run-nan.txt:2: expected a finite number as the score (field 5), found `nan`",
        ),
        (
            "bad/run-inf.txt",
            "run-inf.txt:2: expected a finite number as the score (field 5), found `inf`",
        ),
        (
            "bad/run-bad-utf8.txt",
            "run-bad-utf8.txt:2: invalid UTF-8 at column 7",
        ),
        ("bad/empty.txt", "empty.txt: is empty"),
        ("bad/does-not-exist.txt", "does-not-exist.txt: cannot open"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("out.tsv");
    for (file, msg) in cases {
        let o = run(&["eval", &q, &fixture(file), "-o", out_file.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{file}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(msg), "{file}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!out_file.exists(), "{file}: partial output left behind");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "temporary file left behind"
        );
    }
    let o = run(&[
        "eval",
        &fixture("bad/qrels-3-fields.txt"),
        &fixture("seed/run.txt"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("qrels-3-fields.txt:1: expected 4 fields (goal iter lemma grade), found 3"));
    // Duplicates: dropped by default (and counted), an error on request, fatal (exit 4) in trec_eval mode.
    let dup = fixture("bad/run-duplicate.txt");
    let qd = dir.path().join("q.txt");
    std::fs::write(&qd, "g1 0 a 1\n").unwrap();
    let o = run(&[
        "eval",
        qd.to_str().unwrap(),
        &dup,
        "-m",
        "NumRet",
        "--format",
        "tsv",
    ]);
    assert_eq!(stdout_ok(&o), "all\tNumRet\t2\n");
    assert!(String::from_utf8_lossy(&o.stderr).contains("1 duplicates dropped"));
    let o = run(&["eval", qd.to_str().unwrap(), &dup, "--duplicates", "error"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("run-duplicate.txt:3: lemma `a` appears twice in goal `g1` (first at line 1)"),
        "{err}"
    );
    let o = run(&["trec_eval", qd.to_str().unwrap(), &dup]);
    assert_eq!(o.status.code(), Some(4));
    // Unknown measures are named.
    let o = run(&["eval", &q, &fixture("seed/run.txt"), "-m", "Foo@3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("measure `Foo@3`: unknown measure"));
    let o = run(&[
        "trec_eval",
        "-m",
        "prefs_simp",
        &q,
        &fixture("seed/run.txt"),
    ]);
    // A preference measure with qrels: trec_eval's "Can't calculate measure" (exit 4).
    assert_eq!(o.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&o.stderr).contains("`prefs_simp` reads preference judgments"));
}

#[test]
fn output_file_is_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res.tsv");
    let o = run(&[
        &[
            "eval",
            &fixture("seed/qrels.txt"),
            &fixture("seed/run.txt"),
            "--format",
            "tsv",
            "--per-goal",
            "--quiet",
            "-o",
        ][..],
        &[out.to_str().unwrap()],
        SEED_MEASURES,
    ]
    .concat());
    assert!(o.status.success());
    assert!(o.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        expected("seed/expected-eval.tsv")
    );
}

#[test]
fn threads_and_batch_sizes_do_not_change_output() {
    // Many small goals, with a tiny batch size via many threads: same bytes as one thread.
    let dir = tempfile::tempdir().unwrap();
    let (mut qrels, mut runf) = (String::new(), String::new());
    for g in 0..300 {
        for l in 0..(g % 7) {
            qrels += &format!("g{g} 0 L{} {}\n", (g * 13 + l * 7) % 50, 1 + l % 2);
        }
        for r in 0..(g % 23) {
            runf += &format!(
                "g{g} Q0 L{} {r} {} t\n",
                (g * 5 + r * 3) % 50,
                1.0 / (1 + r / 2) as f64
            );
        }
    }
    qrels += "lonely 0 L1 1\n";
    let (qp, rp) = (dir.path().join("q"), dir.path().join("r"));
    std::fs::write(&qp, qrels).unwrap();
    std::fs::write(&rp, runf).unwrap();
    let args = |t: &str| {
        run(&[
            "eval",
            qp.to_str().unwrap(),
            rp.to_str().unwrap(),
            "--per-goal",
            "--format",
            "tsv",
            "--quiet",
            "--threads",
            t,
            "-m",
            "AP",
            "-m",
            "nDCG@5",
            "-m",
            "Depth(recall=0.5)",
            "-m",
            "P@3",
        ])
    };
    let one = stdout_ok(&args("1"));
    assert_eq!(one, stdout_ok(&args("2")));
    assert_eq!(one, stdout_ok(&args("7")));
    assert!(one.lines().count() > 1000);
}

/// A goal with an actual set and no predictions is an empty ranking under every tie policy and
/// with score-threshold measures: it never stops the evaluation (g2 below: AP 0, so the mean is
/// 0.5; skipped with `--missing skip`, the mean is g1's 1).
#[test]
fn goals_without_predictions_under_tie_groups_and_thresholds() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q");
    let trec = dir.path().join("r");
    let jsonl = dir.path().join("r.jsonl");
    std::fs::write(&q, "g1 0 a 1\ng2 0 a 1\n").unwrap();
    std::fs::write(&trec, "g1 Q0 a 1 0.5 t\n").unwrap();
    std::fs::write(
        &jsonl,
        "{\"goal_id\": \"g1\", \"retrieved_premises\": [\"a\"], \"scores\": [0.5]}\n",
    )
    .unwrap();
    for predicted in [&trec, &jsonl] {
        for (extra, want) in [
            (&["--ties", "group", "-m", "AP"][..], "all\tAP\t0.5\n"),
            (
                &["-m", "SetP(threshold=0.5)", "-m", "AP"][..],
                "all\tSetP(threshold=0.5)\t0.5\nall\tAP\t0.5\n",
            ),
            (
                &["--ties", "group", "-m", "AP", "--missing", "skip"][..],
                "all\tAP\t1\n",
            ),
        ] {
            let mut args = vec![
                "eval",
                q.to_str().unwrap(),
                predicted.to_str().unwrap(),
                "--format",
                "tsv",
                "--quiet",
            ];
            args.extend_from_slice(extra);
            let out = stdout_ok(&run(&args));
            let all: String = out
                .lines()
                .filter(|l| l.starts_with("all\t"))
                .map(|l| format!("{l}\n"))
                .collect();
            assert_eq!(all, want, "{} {extra:?}", predicted.display());
        }
    }
}

/// `eval --format trec` prints counts as integers per goal and in the summary, as trec_eval does.
#[test]
fn trec_format_prints_counts_as_integers() {
    let out = stdout_ok(&run(&[
        "eval",
        &fixture("seed/qrels.txt"),
        &fixture("seed/run.txt"),
        "-m",
        "NumRet",
        "-m",
        "AP",
        "--format",
        "trec",
        "--per-goal",
        "--quiet",
    ]));
    assert_eq!(
        out,
        "num_ret               \tg1\t6\nmap                   \tg1\t0.5333\n\
         num_ret               \tall\t6\nmap                   \tall\t0.5333\n"
    );
}

/// A JSONL record repeating a lemma far apart (after the duplicate table has grown): dropped
/// under `--duplicates first`, an error naming it under `--duplicates error`, whether the record
/// is read by the scanner (plain names) or by serde (an escaped name elsewhere in it).
#[test]
fn jsonl_duplicates_found_after_the_table_grows() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q.jsonl");
    std::fs::write(
        &q,
        "{\"goal_id\": \"g\", \"premises\": [\"n7\", \"dup\"]}\n",
    )
    .unwrap();
    for escaped in [false, true] {
        let mut names: Vec<String> = (0..300).map(|i| format!("\"n{i}\"")).collect();
        names[0] = "\"dup\"".into();
        names[250] = "\"dup\"".into();
        if escaped {
            names[10] = "\"n\\u0031x\"".into();
        }
        let runf = dir.path().join(format!("r{escaped}.jsonl"));
        std::fs::write(
            &runf,
            format!(
                "{{\"goal_id\": \"g\", \"retrieved_premises\": [{}]}}\n",
                names.join(", ")
            ),
        )
        .unwrap();
        let (q, r) = (q.to_str().unwrap(), runf.to_str().unwrap());
        let o = run(&["eval", q, r, "-m", "NumRet", "--format", "tsv"]);
        assert_eq!(stdout_ok(&o), "all\tNumRet\t299\n", "escaped {escaped}");
        let err = fails(&["eval", q, r, "--duplicates", "error"]);
        assert!(
            err.contains("lemma `dup` appears twice in goal `g`"),
            "escaped {escaped}: {err}"
        );
    }
}

/// A JSONL goal is one record: a second record of it, right after the first or later, is an
/// error saying so (with or without --regroup, which sorts TREC lines), in `eval` and in the
/// trec_eval subcommand; records of different goals come in any order.
#[test]
fn a_second_jsonl_record_of_a_goal_is_an_error_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q");
    std::fs::write(&q, "g1 0 a 1\ng2 0 c 1\n").unwrap();
    let rec = |g: &str, n: &str, s: f64| {
        format!("{{\"goal_id\":\"{g}\",\"retrieved_premises\":[\"{n}\"],\"scores\":[{s}]}}\n")
    };
    let q = q.to_str().unwrap();
    // Goals in any order: g2 first.
    let ok_run = dir.path().join("ok.jsonl");
    std::fs::write(&ok_run, rec("g2", "c", 1.0) + &rec("g1", "x", 2.0)).unwrap();
    let o = run(&[
        "eval",
        q,
        ok_run.to_str().unwrap(),
        "-m",
        "NumRelRet",
        "--format",
        "tsv",
    ]);
    assert_eq!(stdout_ok(&o), "all\tNumRelRet\t1\n");
    // The trec_eval subcommand ranks by score: a record without scores is an error saying so
    // (it has no --order option to name).
    let unscored = dir.path().join("unscored.jsonl");
    std::fs::write(
        &unscored,
        "{\"goal_id\":\"g1\",\"retrieved_premises\":[\"a\"]}\n",
    )
    .unwrap();
    let err = fails(&["trec_eval", q, unscored.to_str().unwrap()]);
    assert!(
        err.contains("ranking by score (--order score; the trec_eval subcommand) needs `scores`"),
        "{err}"
    );
    for (name, text) in [
        ("next", rec("g1", "a", 1.0) + &rec("g1", "x", 2.0)),
        (
            "later",
            rec("g1", "a", 1.0) + &rec("g2", "c", 1.0) + &rec("g1", "x", 2.0),
        ),
    ] {
        let r = dir.path().join(format!("{name}.jsonl"));
        std::fs::write(&r, text).unwrap();
        let r = r.to_str().unwrap();
        let line = if name == "next" { 2 } else { 3 };
        for args in [
            vec!["eval", q, r],
            vec!["eval", q, r, "--regroup"],
            vec!["trec_eval", q, r],
        ] {
            let err = fails(&args);
            assert!(
                err.contains(&format!(
                    "{name}.jsonl:{line}: goal `g1` has a second prediction record (its first is \
                     at line 1); a JSONL file holds one record per goal"
                )),
                "{args:?}: {err}"
            );
        }
    }
}

/// Goals of 20,000 ranked lemmas, past the size where the duplicate table is looked up ahead:
/// repeats anywhere (early, in the middle, among the last lines of a goal and of the file) give
/// what the same run gives with the repeats removed beforehand (the first kept), their count
/// in the report; under `--duplicates error` the first repeat is named with both its lines.
#[test]
fn deep_goals_drop_repeats_as_a_run_without_them() {
    let dir = tempfile::tempdir().unwrap();
    let (q, full, dedup) = (
        dir.path().join("q"),
        dir.path().join("full"),
        dir.path().join("dedup"),
    );
    let mut qrels = String::new();
    let (mut with, mut without) = (String::new(), String::new());
    let mut repeats = 0;
    for g in 0..3 {
        for l in (0..20_000).step_by(997) {
            qrels += &format!("g{g} 0 L{l} {}\n", 1 + l % 3);
        }
        let mut seen = std::collections::HashSet::new();
        for rank in 0..20_000usize {
            // Every 613th line from 8,500 on, and three of the goal's last 10, repeat earlier lemmas.
            let repeat = (rank >= 8_500 && rank % 613 == 0) || (rank >= 19_990 && rank % 3 == g);
            let l = if repeat { (rank * 7 + g) % 9_000 } else { rank };
            let line = format!("g{g} Q0 L{l} {} {} t\n", rank + 1, 30_000 - rank);
            with += &line;
            if seen.insert(l) {
                without += &line;
            } else {
                repeats += 1;
            }
        }
    }
    std::fs::write(&q, qrels).unwrap();
    std::fs::write(&full, &with).unwrap();
    std::fs::write(&dedup, &without).unwrap();
    assert!(repeats > 30, "{repeats}");
    let (q, full, dedup) = (
        q.to_str().unwrap(),
        full.to_str().unwrap(),
        dedup.to_str().unwrap(),
    );
    let measures = ["-m", "AP", "-m", "NDCG", "-m", "R@1000", "-m", "NumRet"];
    let eval = |run: &str, order: &str| {
        let mut args = vec![
            "eval",
            q,
            run,
            "--per-goal",
            "--format",
            "tsv",
            "--order",
            order,
        ];
        args.extend_from_slice(&measures);
        run_ok(&args)
    };
    for order in ["score", "file"] {
        let (out, err) = eval(full, order);
        let (want, _) = eval(dedup, order);
        assert_eq!(out, want, "order {order}");
        assert!(
            err.contains(&format!("{repeats} duplicates dropped")),
            "{err}"
        );
        assert!(
            out.contains(&format!("all\tNumRet\t{}\n", 60_000 - repeats)),
            "{out}"
        );
    }
    let err = fails(&["eval", q, full, "--duplicates", "error"]);
    // The first repeat of the file, found the slow way.
    let lemma = |line: &str| line.split(' ').nth(2).unwrap().to_string();
    let lines: Vec<&str> = with.lines().collect();
    let mut before = std::collections::HashSet::new();
    let second = (0..lines.len())
        .find(|&i| !before.insert(lemma(lines[i])))
        .unwrap();
    let name = lemma(lines[second]);
    let first = lines.iter().position(|l| lemma(l) == name).unwrap();
    assert!(
        second > 8_192,
        "a repeat past the looked-ahead size: {second}"
    );
    assert!(
        err.contains(&format!(
            ":{}: lemma `{name}` appears twice in goal `g0` (first at line {})",
            second + 1,
            first + 1
        )),
        "{err}"
    );
}

/// In a deep goal (past the items ranked ahead), a repeat is reported before a later error on a
/// line within the items held back: a malformed line, or a score that goes up (which would have
/// the goal re-read and sorted).
#[test]
fn deep_goals_report_a_repeat_before_a_later_error() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q");
    std::fs::write(&q, "g 0 L1 1\n").unwrap();
    for (k, tail) in ["g Q0 broken\n", "g Q0 L8995 9006 99999 t\n"]
        .iter()
        .enumerate()
    {
        let mut run = String::new();
        for rank in 0..9_000 {
            run += &format!("g Q0 L{rank} {} {} t\n", rank + 1, 20_000 - rank);
        }
        // L8990 again on line 9,001, then the error 5 lines later.
        run += "g Q0 L8990 9001 10999 t\n";
        for rank in 9_001..9_005 {
            run += &format!("g Q0 L{rank} {} {} t\n", rank + 1, 20_000 - rank);
        }
        run += tail;
        let r = dir.path().join(format!("r{k}"));
        std::fs::write(&r, run).unwrap();
        let (q, r) = (q.to_str().unwrap(), r.to_str().unwrap());
        let err = fails(&["eval", q, r, "--duplicates", "error"]);
        assert!(
            err.contains(":9001: lemma `L8990` appears twice in goal `g` (first at line 8991)"),
            "{tail}: {err}"
        );
    }
}

/// JSONL predictions with bytes that are not UTF-8: an error naming the line (counted over the
/// whole file, here past the first batch of about 4 MiB) and the column of the first bad byte,
/// exit 2. A `#` comment line is checked too.
#[test]
fn jsonl_invalid_utf8_names_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let q = fixture("seed/qrels.txt");
    let names: Vec<String> = (0..1000).map(|i| format!("\"lemma_{i}\"")).collect();
    let record = |g: usize| {
        format!(
            "{{\"goal_id\":\"g{g}\",\"retrieved_premises\":[{}]}}\n",
            names.join(",")
        )
    };
    let mut big: Vec<u8> = Vec::new();
    for g in 1..900 {
        big.extend_from_slice(record(g).as_bytes());
    }
    assert!(big.len() > 5 << 20, "the bad line is in a later batch");
    let bad = record(900).replacen("lemma_7\"", "lemma_\u{fffd}7\"", 1);
    let col = bad.find('\u{fffd}').unwrap() + 1;
    // U+FFFD's UTF-8 replaced by one byte that cannot start a character.
    big.extend_from_slice(&bad.as_bytes()[..col - 1]);
    big.push(0xff);
    big.extend_from_slice(&bad.as_bytes()[col - 1 + '\u{fffd}'.len_utf8()..]);
    big.extend_from_slice(record(901).as_bytes());
    let path = dir.path().join("pred.jsonl");
    std::fs::write(&path, &big).unwrap();
    let err = fails(&["eval", &q, path.to_str().unwrap()]);
    let want = format!("pred.jsonl:900: invalid UTF-8 at column {col}, expected UTF-8 text");
    assert!(err.contains(&want), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    let small = [
        record(1).as_bytes(),
        b"# a note \xe2\x82\n",
        record(2).as_bytes(),
    ]
    .concat();
    std::fs::write(&path, small).unwrap();
    let err = fails(&["eval", &q, path.to_str().unwrap()]);
    assert!(
        err.contains("pred.jsonl:2: invalid UTF-8 at column 10"),
        "{err}"
    );
}

/// Runs the command, expecting success: (stdout, stderr).
fn run_ok(args: &[&str]) -> (String, String) {
    let o = run(args);
    let out = stdout_ok(&o);
    (out, String::from_utf8(o.stderr).unwrap())
}

/// Under `--depth`, a repeat is an error only when both places are inside the cut of the goal's
/// final ranking (docs/METRICS.md §2: order, then the cut, then repeats). A repeat seen while the
/// goal looked in order is no error when a later line goes up and the sorted goal leaves the
/// repeat beyond the cut (found by the `reference` fuzz target); in order, it is one.
#[test]
fn a_repeat_cut_off_by_the_depth_is_no_error() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q");
    std::fs::write(&q, "g1 0 a 1\n").unwrap();
    let (up, in_order) = (dir.path().join("up"), dir.path().join("in-order"));
    // Ranked b a a c: cut at 2, b a (AP 1/2, two ranked); the repeat was met, in order, before
    // b went up.
    std::fs::write(
        &up,
        "g1 Q0 a 1 0.9 r\ng1 Q0 a 2 0.8 r\ng1 Q0 c 3 0.7 r\ng1 Q0 b 4 0.95 r\n",
    )
    .unwrap();
    // Ranked a a b: the repeat is inside the cut.
    std::fs::write(
        &in_order,
        "g1 Q0 a 1 0.9 r\ng1 Q0 a 2 0.8 r\ng1 Q0 b 3 0.7 r\n",
    )
    .unwrap();
    let (q, up, in_order) = (
        q.to_str().unwrap(),
        up.to_str().unwrap(),
        in_order.to_str().unwrap(),
    );
    for threads in ["1", "2"] {
        let common = [
            "-m",
            "AP",
            "-m",
            "NumRet",
            "--format",
            "tsv",
            "--threads",
            threads,
        ];
        let mut args = vec!["eval", q, up, "--depth", "2", "--duplicates", "error"];
        args.extend(common);
        assert_eq!(run_ok(&args).0, "all\tAP\t0.5\nall\tNumRet\t2\n");
        // Cut at 1, in order: the repeat is beyond the cut.
        let mut args = vec!["eval", q, in_order, "--depth", "1", "--duplicates", "error"];
        args.extend(common);
        assert_eq!(run_ok(&args).0, "all\tAP\t1\nall\tNumRet\t1\n");
        let mut args = vec!["eval", q, in_order, "--depth", "2", "--duplicates", "error"];
        args.extend(common);
        let err = fails(&args);
        assert!(
            err.contains("in-order:2: lemma `a` appears twice in goal `g1` (first at line 1)"),
            "{err}"
        );
        // trec_eval -M 2 on the goal that goes up: no repeat within the cut, as trec_eval.
        let o = run(&["trec_eval", "-M", "2", "-m", "num_ret", q, up]);
        assert_eq!(stdout_ok(&o), "num_ret               \tall\t2\n");
    }
}

/// `eval --threshold T` on the seed notes' scores_A / scores_B example (fixture `pooled`):
/// at 0.5 both goals keep 4 lemmas, 2 relevant, of 4 relevant: macro and pooled precision,
/// recall and F1 all 0.5. At 0.6, A keeps .95 T .85 T .73 F .62 F (2 of 4) and B keeps .97 F
/// .88 F (0 of 2): macro SetP = SetR = SetF = (1/2 + 0)/2 = 1/4; pooled, 2 relevant of 6 kept
/// out of 8 relevant: precision 1/3, recall 1/4, F1 = 2/7.
#[test]
fn threshold_gives_macro_and_pooled_set_measures() {
    let (q, r) = (fixture("pooled/qrels.txt"), fixture("pooled/run.txt"));
    let values = |t: &str| -> std::collections::HashMap<String, f64> {
        let out = stdout_ok(&run(&[
            "eval",
            &q,
            &r,
            "-m",
            "AP",
            "--threshold",
            t,
            "--format",
            "tsv",
            "--quiet",
        ]));
        (out.lines())
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                assert_eq!(f[0], "all", "{l}");
                (f[1].to_string(), f[2].parse().unwrap())
            })
            .collect()
    };
    let want = |t: &str, cases: &[(&str, f64)]| {
        let got = values(t);
        assert_eq!(got.len(), cases.len() + 1, "{got:?}"); // and AP
        assert!(
            (got["AP"] - (0.816_666_666_666_666_7 + 0.440_476_190_476_190_5) / 2.0).abs() < 1e-12
        );
        for (name, v) in cases {
            let name = name.replace("T", t);
            assert!(
                (got[&name] - v).abs() < 1e-12,
                "{name}: {} against {v}",
                got[&name]
            );
        }
    };
    want(
        "0.5",
        &[
            ("SetP(threshold=T)", 0.5),
            ("SetR(threshold=T)", 0.5),
            ("SetF(beta=1,threshold=T)", 0.5),
            ("NumRet(threshold=T)", 8.0),
            ("NumRelRet(threshold=T)", 4.0),
            ("NumRel", 8.0),
            ("pooled:SetP(threshold=T)", 0.5),
            ("pooled:SetR(threshold=T)", 0.5),
            ("pooled:SetF(beta=1,threshold=T)", 0.5),
        ],
    );
    want(
        "0.6",
        &[
            ("SetP(threshold=T)", 0.25),
            ("SetR(threshold=T)", 0.25),
            ("SetF(beta=1,threshold=T)", 0.25),
            ("NumRet(threshold=T)", 6.0),
            ("NumRelRet(threshold=T)", 2.0),
            ("NumRel", 8.0),
            ("pooled:SetP(threshold=T)", 1.0 / 3.0),
            ("pooled:SetR(threshold=T)", 0.25),
            ("pooled:SetF(beta=1,threshold=T)", 2.0 / 7.0),
        ],
    );
    // A threshold that is not a finite number is refused as itself, flag and text named.
    for t in ["1e400", "nan", "inf", "high"] {
        let o = run(&["eval", &q, &r, "--threshold", t]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{t}: {err}");
        assert!(err.contains("--threshold"), "{err}");
        assert!(
            err.contains(&format!("expected a finite number, found `{t}`")),
            "{err}"
        );
    }
}

/// The table format's name column widens to its longest name (`pooled:SetF(beta=1,threshold=0.6)`
/// is 33 characters, past the usual 24): every value ends in one column, and the values are the
/// ones the tsv format gives (the threshold example above: 1/4 macro, 2/7 pooled F1).
#[test]
fn table_widens_for_long_measure_names() {
    let (q, r) = (fixture("pooled/qrels.txt"), fixture("pooled/run.txt"));
    let args = ["eval", &q, &r, "-m", "P@1", "--threshold", "0.6", "--quiet"];
    let out = stdout_ok(&run(&args));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("{:<33} {:>12}", "measure", "mean of 2"));
    for l in &lines {
        assert_eq!(l.len(), 33 + 1 + 12, "{l:?}");
        assert_eq!(l.as_bytes()[33], b' ', "{l:?}");
    }
    let value = |name: &str| -> &str {
        let l = lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(name));
        l.unwrap_or_else(|| panic!("{name} in {out}"))
            .split_whitespace()
            .nth(1)
            .unwrap()
    };
    assert_eq!(value("SetF(beta=1,threshold=0.6)"), "0.2500");
    assert_eq!(value("pooled:SetF(beta=1,threshold=0.6)"), "0.2857");
    assert_eq!(value("NumRet(threshold=0.6)"), "6");
    // Short names keep the 24-character column (P@1: A's top lemma, .95, is relevant, B's, .97,
    // is not).
    let out = stdout_ok(&run(&["eval", &q, &r, "-m", "P@1", "--quiet"]));
    assert_eq!(
        out,
        format!(
            "{:<24} {:>12}\n{:<24} {:>12}\n",
            "measure", "mean of 2", "P@1", "0.5000"
        )
    );
}
