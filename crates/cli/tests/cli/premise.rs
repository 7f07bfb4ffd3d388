//! The premise-selection protocol through the command (docs/METRICS.md §9): the hand-built
//! library of `fixtures/premise` (README there), masked and unmasked values computed by hand,
//! every input shape giving the same numbers, and what the protocol refuses or warns of.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::common;
use common::{ok, run};

/// A file of `fixtures/premise`, as an argument.
fn fixture(p: &str) -> String {
    common::fixture_arg(&format!("premise/{p}"))
}

const MEASURES: &[&str] = &[
    "-m", "AP", "-m", "P@3", "-m", "R@3", "-m", "RR", "-m", "Leak@1", "-m", "Leak@3", "-m",
    "Leak@5", "-m", "LeakRank",
];

/// `eval ACTUAL PREDICTED --corpus corpus.jsonl MEASURES extra --per-goal --format tsv`: the
/// output and stderr.
fn eval(actual: &str, predicted: &str, extra: &[&str]) -> (String, String) {
    // A fixture's name, or a path (a file made by the test).
    let p = if std::path::Path::new(predicted).is_absolute() {
        predicted.to_string()
    } else {
        fixture(predicted)
    };
    let (a, c) = (fixture(actual), fixture("corpus.jsonl"));
    let mut args = vec![
        "eval",
        &a,
        &p,
        "--corpus",
        &c,
        "--per-goal",
        "--format",
        "tsv",
    ];
    args.extend_from_slice(MEASURES);
    args.extend_from_slice(extra);
    let o = run(&args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "exit {:?}: {err}", o.status);
    (String::from_utf8(o.stdout).unwrap(), err)
}

/// `goal measure` -> value (`None` for NA).
fn values(tsv: &str) -> BTreeMap<(String, String), Option<f64>> {
    tsv.lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let v = (f[2] != "NA").then(|| f[2].parse().unwrap());
            ((f[0].to_string(), f[1].to_string()), v)
        })
        .collect()
}

fn check(got: &BTreeMap<(String, String), Option<f64>>, want: &[(&str, &str, Option<f64>)]) {
    for &(g, m, v) in want {
        let had = got
            .get(&(g.to_string(), m.to_string()))
            .unwrap_or_else(|| panic!("no {g} {m}"));
        match (had, v) {
            (Some(a), Some(b)) => assert!((a - b).abs() < 1e-12, "{g} {m}: {a} != {b}"),
            (a, b) => assert_eq!(*a, b, "{g} {m}"),
        }
    }
}

/// Leak@k and LeakRank read the unmasked rankings (fixtures/premise/README.md):
/// g1 `d1 a2 a3 c1 zz c2 a4 b1 a1`, inaccessible at ranks 1, 3, 5, 7;
/// g2 `a1 c1 b1 d1`, inaccessible at 1 and 4; g3 `c2 c1`, none.
const LEAKS: &[(&str, &str, Option<f64>)] = &[
    ("g1", "Leak@1", Some(1.0)),
    ("g1", "Leak@3", Some(2.0 / 3.0)),
    ("g1", "Leak@5", Some(3.0 / 5.0)),
    ("g1", "LeakRank", Some(1.0)),
    ("g2", "Leak@1", Some(1.0)),
    ("g2", "Leak@3", Some(1.0 / 3.0)),
    ("g2", "Leak@5", Some(2.0 / 5.0)),
    ("g2", "LeakRank", Some(1.0)),
    ("g3", "Leak@1", Some(0.0)),
    ("g3", "Leak@5", Some(0.0)),
    ("g3", "LeakRank", None),
    ("all", "Leak@3", Some((2.0 / 3.0 + 1.0 / 3.0 + 0.0) / 3.0)),
    ("all", "Leak@5", Some((3.0 / 5.0 + 2.0 / 5.0 + 0.0) / 3.0)),
    ("all", "LeakRank", Some(1.0)),
    ("all", "LeakRank:median", Some(1.0)),
    ("all", "LeakRank:coverage", Some(2.0 / 3.0)),
];

#[test]
fn masked_values_are_the_hand_computed_ones() {
    let (out, err) = eval("actual.jsonl", "run.txt", &["--mask", "accessible"]);
    let v = values(&out);
    // Masked: g1 `a2 c1 c2 b1 a1` (relevant a2, c2, b1 at 1, 3, 4), g2 `c1 b1` (relevant c1 at
    // 1; a1 is inaccessible at B.lean and stays in R = 2), g3 `c2 c1`.
    let g1_ap = (1.0 / 1.0 + 2.0 / 3.0 + 3.0 / 4.0) / 3.0;
    check(
        &v,
        &[
            ("g1", "AP", Some(g1_ap)),
            ("g1", "P@3", Some(2.0 / 3.0)),
            ("g1", "R@3", Some(2.0 / 3.0)),
            ("g1", "RR", Some(1.0)),
            ("g2", "AP", Some(1.0 / 2.0)),
            ("g2", "P@3", Some(1.0 / 3.0)),
            ("g2", "R@3", Some(1.0 / 2.0)),
            ("g2", "RR", Some(1.0)),
            ("g3", "AP", Some(1.0)),
            ("g3", "P@3", Some(1.0 / 3.0)),
            ("g3", "R@3", Some(1.0)),
            ("all", "AP", Some((g1_ap + 0.5 + 1.0) / 3.0)),
            (
                "all",
                "P@3",
                Some((2.0 / 3.0 + 1.0 / 3.0 + 1.0 / 3.0) / 3.0),
            ),
            ("all", "R@3", Some((2.0 / 3.0 + 1.0 / 2.0 + 1.0) / 3.0)),
            ("all", "RR", Some(1.0)),
        ],
    );
    check(&v, LEAKS);
    // Masked: d1, a3, zz, a4 of g1 and a1, d1 of g2.
    assert!(
        err.contains("6 predicted premises masked (inaccessible), 1 not in the corpus"),
        "{err}"
    );
    assert!(
        err.contains(
            "warning: 1 predicted premises are not defined by the corpus (the first by name: `zz` for \
             goal `g1`)"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "warning: 1 relevant premises are not accessible at their goal (the first by name: `a1` of \
             goal `g2`)"
        ),
        "{err}"
    );
}

/// The warnings' first cases are the least by name, not the first met: the same on one thread,
/// on two, and through the JSONL or regrouped paths. Here g3 comes first in the file with `zy`,
/// g1 later with `zz` and `aa` (the run turned goal by goal): `zy` of g3 is met first, `aa` of
/// g1 is the least (goal, premise).
#[test]
fn warnings_name_the_least_case_whatever_the_order() {
    let dir = tempfile::tempdir().unwrap();
    let run_file = dir.path().join("turned.txt");
    let text = std::fs::read_to_string(fixture("run.txt")).unwrap();
    let mut goals: Vec<Vec<&str>> = Vec::new();
    for line in text.lines() {
        let g = line.split(' ').next().unwrap();
        match goals.last_mut() {
            Some(v) if v[0].starts_with(&format!("{g} ")) => v.push(line),
            _ => goals.push(vec![line]),
        }
    }
    goals.reverse();
    let mut turned = String::new();
    for lines in &goals {
        for l in lines {
            turned.push_str(l);
            turned.push('\n');
        }
        if lines[0].starts_with("g3 ") {
            turned.push_str("g3 Q0 zy 3 0.1 premise\n");
        }
        if lines[0].starts_with("g1 ") {
            turned.push_str("g1 Q0 aa 10 0.05 premise\n");
        }
    }
    std::fs::write(&run_file, turned).unwrap();
    let run_arg = run_file.to_str().unwrap();
    for extra in [&["--threads", "1"][..], &["--threads", "2"], &["--regroup"]] {
        let (_, err) = eval("actual.jsonl", run_arg, extra);
        assert!(
            err.contains(
                "warning: 3 predicted premises are not defined by the corpus (the first by name: \
                 `aa` for goal `g1`)"
            ),
            "{extra:?}: {err}"
        );
    }
}

#[test]
fn json_counts_what_the_protocol_met() {
    let (a, p, c) = (
        fixture("actual.jsonl"),
        fixture("run.txt"),
        fixture("corpus.jsonl"),
    );
    let json = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["eval", &a, &p, "-m", "AP", "--format", "json"];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert!(o.status.success());
        serde_json::from_slice(&o.stdout).unwrap()
    };
    // Masked: d1, a3, zz, a4 of g1 and a1, d1 of g2; zz is not in the corpus; g2's relevant a1
    // is not accessible at B.lean.
    let v = json(&["--corpus", &c, "--mask", "accessible"]);
    assert_eq!(
        v["premises"],
        serde_json::json!({"goals": 3, "masked": 6, "not_in_corpus": 1,
            "goals_in_unlisted_files": 0, "relevant_inaccessible": 1,
            "goals_past_last_premise": 0})
    );
    // Unmasked, the corpus only checks: nothing masked, the rest counted the same.
    let v = json(&["--corpus", &c, "-m", "Leak@3"]);
    assert_eq!(v["premises"]["masked"], 0);
    assert_eq!(v["premises"]["not_in_corpus"], 1);
    assert!(json(&[]).get("premises").is_none());
}

#[test]
fn unmasked_values_with_the_corpus_are_plain_eval_s_and_leaks() {
    let (out, _) = eval("actual.jsonl", "run.txt", &[]);
    let v = values(&out);
    // g1 unmasked: relevant at ranks 2, 6, 8; g2 `a1 c1 b1 d1`: relevant at 1 and 2.
    let g1_ap = (1.0 / 2.0 + 2.0 / 6.0 + 3.0 / 8.0) / 3.0;
    check(
        &v,
        &[
            ("g1", "AP", Some(g1_ap)),
            ("g1", "P@3", Some(1.0 / 3.0)),
            ("g1", "RR", Some(1.0 / 2.0)),
            ("g2", "AP", Some(1.0)),
            ("g2", "R@3", Some(1.0)),
            ("all", "AP", Some((g1_ap + 1.0 + 1.0) / 3.0)),
        ],
    );
    check(&v, LEAKS);
    // Without the corpus (and the Leak measures) the same rankings give the same numbers.
    let (a, p) = (fixture("actual.jsonl"), fixture("run.txt"));
    let o = run(&[
        "eval",
        &a,
        &p,
        "-m",
        "AP",
        "-m",
        "P@3",
        "-m",
        "R@3",
        "-m",
        "RR",
        "--per-goal",
        "--format",
        "tsv",
    ]);
    assert!(o.status.success());
    let plain = values(&String::from_utf8(o.stdout).unwrap());
    for (k, x) in &plain {
        assert_eq!(v.get(k), Some(x), "{k:?}");
    }
}

#[test]
fn every_input_shape_gives_the_same_numbers() {
    let want = eval("actual.jsonl", "run.txt", &["--mask", "accessible"]).0;
    // JSONL predictions (the same rankings in file order).
    assert_eq!(
        eval(
            "actual.jsonl",
            "predictions.jsonl",
            &["--mask", "accessible"]
        )
        .0,
        want
    );
    // TREC qrels, places from --goals (`path`, `start`), read along the run (joined) or held.
    let goals = fixture("goals.jsonl");
    for extra in [&[][..], &["--hold-actual"][..], &["--threads", "1"][..]] {
        let mut args = vec!["--mask", "accessible", "--goals", &goals];
        args.extend_from_slice(extra);
        assert_eq!(eval("qrels.txt", "run.txt", &args).0, want, "{extra:?}");
        assert_eq!(
            eval("qrels.txt", "predictions.jsonl", &args).0,
            want,
            "{extra:?}"
        );
    }
}

#[test]
fn the_mask_comes_before_the_depth_cut() {
    let (out, _) = eval(
        "actual.jsonl",
        "run.txt",
        &["--mask", "accessible", "--depth", "3"],
    );
    // g1 masked, then cut: `a2 c1 c2` (relevant at 1 and 3); unmasked, cut: `d1 a2 a3`.
    check(
        &values(&out),
        &[
            ("g1", "AP", Some((1.0 + 2.0 / 3.0) / 3.0)),
            ("g1", "P@3", Some(2.0 / 3.0)),
            ("g1", "Leak@5", Some(2.0 / 5.0)),
            ("g1", "LeakRank", Some(1.0)),
            ("g2", "Leak@5", Some(1.0 / 5.0)),
        ],
    );
}

fn fails(args: &[&str]) -> String {
    let o = run(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn problems_are_errors_when_asked_and_named() {
    let (a, r, c) = (
        fixture("actual.jsonl"),
        fixture("run.txt"),
        fixture("corpus.jsonl"),
    );
    let base = ["eval", &a, &r, "--corpus", &c, "--mask", "accessible"];
    let with = |extra: &[&str]| {
        let mut v = base.to_vec();
        v.extend_from_slice(extra);
        fails(&v)
    };
    let e = with(&["--strict"]);
    assert!(
        e.contains("run.txt:5: premise `zz` (goal `g1`) is not defined by the corpus"),
        "{e}"
    );
    let e = with(&["--strict-gold"]);
    assert!(
        e.contains("run.txt:10: goal `g2`: relevant premise `a1`: it is not accessible at the goal's theorem (--strict-gold)"),
        "{e}"
    );
    // TREC qrels give no place: an error at the goal's first line, saying where places come from.
    let q = fixture("qrels.txt");
    let e = fails(&["eval", &q, &r, "--corpus", &c, "--mask", "accessible"]);
    assert!(
        e.contains("run.txt:1: goal `g1` has no record giving its place: --mask accessible, the Leak and R(origin=...) measures need"),
        "{e}"
    );
    // A file the corpus does not list: a warning (nothing is accessible there), or an error.
    let dir = tempfile::tempdir().unwrap();
    let goals = dir.path().join("goals.jsonl");
    std::fs::write(&goals, "{\"goal_id\": \"g1\", \"file_path\": \"Z.lean\"}\n").unwrap();
    let g = goals.to_string_lossy().into_owned();
    let (out, err) = eval(
        "actual.jsonl",
        "run.txt",
        &["--mask", "accessible", "--goals", &g],
    );
    assert!(
        err.contains(
            "1 goals stand in files the corpus does not list (the first by name: goal `g1` in `Z.lean`)"
        ),
        "{err}"
    );
    check(
        &values(&out),
        &[
            ("g1", "AP", Some(0.0)),
            ("g1", "Leak@5", Some(1.0)),
            ("g1", "LeakRank", Some(1.0)),
        ],
    );
    let e = with(&["--goals", &g, "--strict"]);
    assert!(
        e.contains("run.txt:1: goal `g1` stands in `Z.lean`, which the corpus"),
        "{e}"
    );
    // A bad goals file names its line.
    std::fs::write(
        &goals,
        "{\"goal_id\": \"g3\"}\n{\"goal_id\": \"g1\", \"theorem_pos\": 4}\n",
    )
    .unwrap();
    let e = with(&["--goals", &g]);
    assert!(e.contains("goals.jsonl:2: expected a goal record"), "{e}");
    // The Leak measures need the corpus; --mask needs it too.
    let e = fails(&["eval", &a, &r, "-m", "LeakRank"]);
    assert!(
        e.contains("LeakRank needs the corpus: pass --corpus FILE"),
        "{e}"
    );
    let e = fails(&["eval", &a, &r, "--mask", "accessible"]);
    assert!(e.contains("--corpus"), "{e}");
    // The corpus is read beside the actual sets: when both are bad, the corpus's error is the
    // one reported (as when it was read first), and either alone is reported.
    let bad_corpus = dir.path().join("corpus.jsonl");
    std::fs::write(
        &bad_corpus,
        "{\"path\": \"A.lean\", \"imports\": [\"Q.lean\"]}\n",
    )
    .unwrap();
    let bad_actual = dir.path().join("actual.jsonl");
    std::fs::write(&bad_actual, "{\"goal_id\": \"g1\", \"premises\": 3}\n").unwrap();
    let (bc, ba) = (
        bad_corpus.to_string_lossy().into_owned(),
        bad_actual.to_string_lossy().into_owned(),
    );
    for actual in [&ba, &a] {
        let e = fails(&["eval", actual, &r, "--corpus", &bc, "--mask", "accessible"]);
        assert!(e.contains("corpus.jsonl:1:"), "{e}");
        assert!(e.contains("Q.lean"), "{e}");
    }
    let e = fails(&["eval", &ba, &r, "--corpus", &c, "--mask", "accessible"]);
    assert!(e.contains("actual.jsonl:1:"), "{e}");
}

/// A goal placed past the end of its file's last premise (its theorem would be one of them: the
/// position is not one of the file's): counted and named in a warning, ranked as placed, an
/// error under `--strict`; a place at that end exactly is not. The count travels in summary
/// files: two shards merged count what the whole run does.
#[test]
fn a_place_past_its_files_last_premise_is_counted_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let goals = dir.path().join("late.jsonl");
    // B.lean's last premise, B.bar, ends at (10, 9); C.lean's, C.baz, at (11, 2).
    std::fs::write(
        &goals,
        concat!(
            "{\"goal_id\": \"g3\", \"file_path\": \"C.lean\", \"theorem_pos\": [11, 2]}\n",
            "{\"goal_id\": \"g2\", \"file_path\": \"B.lean\", \"theorem_pos\": [10, 10]}\n",
            "{\"goal_id\": \"g1\", \"file_path\": \"A.lean\", \"theorem_pos\": [20, 2]}\n",
        ),
    )
    .unwrap();
    let g = goals.to_string_lossy().into_owned();
    for predicted in ["run.txt", "predictions.jsonl"] {
        let (out, err) = eval(
            "actual.jsonl",
            predicted,
            &["--mask", "accessible", "--goals", &g],
        );
        assert!(
            err.contains(
                "warning: 2 goals stand past the end of their file's last premise (the first by \
                 name: goal `g1` in `A.lean`)"
            ),
            "{predicted}: {err}"
        );
        assert!(
            err.contains(", 2 goals past their file's last premise"),
            "{err}"
        );
        // Ranked as placed: g1 at (20, 2) is past a4 (20, 1), so a3, a4 and A.foo are
        // accessible: `d1 a2 a3 c1 zz c2 a4 b1 a1` masks to `a2 a3 c1 c2 a4 b1 a1`, relevant
        // a2, c2, b1 at 1, 4, 6: AP = (1 + 2/4 + 3/6) / 3 = 2/3. g2 at (10, 10): `c1 b1` as
        // before (AP 1/2); g3 at (11, 2), C.baz's end: `c2 c1` (AP 1).
        check(
            &values(&out),
            &[
                ("g1", "AP", Some(2.0 / 3.0)),
                ("g2", "AP", Some(0.5)),
                ("g3", "AP", Some(1.0)),
            ],
        );
    }
    let (a, r, c) = (
        fixture("actual.jsonl"),
        fixture("run.txt"),
        fixture("corpus.jsonl"),
    );
    let base = [
        "eval",
        &a,
        &r,
        "--corpus",
        &c,
        "--mask",
        "accessible",
        "--goals",
        &g,
    ];
    let json = ok(&[&base[..], &["-m", "AP", "--format", "json", "--quiet"]].concat());
    assert!(json.contains(r#""goals_past_last_premise":2"#), "{json}");
    let e = fails(&[&base[..], &["--strict"]].concat());
    assert!(
        e.contains(
            "run.txt:1: goal `g1` stands at 20:2 in `A.lean`, past the end of the file's last \
             premise in the corpus"
        ),
        "{e}"
    );
    assert!(
        e.contains("(20:1): not a theorem of that file (--strict)"),
        "{e}"
    );
    // Two shards' summary files hold the count; merged, the whole run's json.
    let sums: Vec<String> = ["1/2", "2/2"]
        .iter()
        .map(|k| {
            let out = dir.path().join(format!("{}.sum", &k[..1]));
            let out = out.to_string_lossy().into_owned();
            let args = [
                &base[..],
                &["-m", "AP", "--shard", k, "--summary-out", &out],
            ];
            ok(&[&args.concat()[..], &["-o", "/dev/null", "--quiet"]].concat());
            out
        })
        .collect();
    let merged = ok(&["merge", &sums[0], &sums[1], "--format", "json", "--quiet"]);
    assert_eq!(merged, json);
}

/// A converted store gives the TREC run's values, masked or not, with the same counts.
#[test]
fn stores_are_masked_as_their_runs() {
    let dir = tempfile::tempdir().unwrap();
    let store: PathBuf = dir.path().join("run.store");
    let (a, r) = (fixture("actual.jsonl"), fixture("run.txt"));
    let s = store.to_string_lossy().into_owned();
    assert!(run(&["convert", &a, &r, "-o", &s]).status.success());
    for extra in [
        &[][..],
        &["--mask", "accessible"],
        &["--mask", "accessible", "--depth", "3"],
    ] {
        let (text, text_err) = eval("actual.jsonl", "run.txt", extra);
        let (stored, stored_err) = eval("actual.jsonl", &s, extra);
        assert_eq!(stored, text, "{extra:?}");
        let counts = |e: &str| {
            e.lines()
                .find(|l| l.contains("premises:"))
                .map(str::to_string)
        };
        assert_eq!(counts(&stored_err), counts(&text_err), "{extra:?}");
    }
    // g2's relevant a1 (in A.lean, which B.lean does not import) is not accessible: an error
    // under --strict-gold, naming the goal and the premise.
    let c = fixture("corpus.jsonl");
    let e = fails(&["eval", &a, &s, "--corpus", &c, "--strict-gold"]);
    assert!(
        e.contains(
            "goal `g2`: relevant premise `a1`: it is not accessible at the goal's theorem \
             (--strict-gold)"
        ),
        "{e}"
    );
    // Recall by origin: each judged premise's origin from the corpus, as for the run, masked or
    // not, and under tie groups (the store keeps its scores).
    for extra in [&[][..], &["--mask", "accessible"], &["--ties", "group"]] {
        let mut args = vec!["-m", "R(origin=in-file)@3", "-m", "R(origin=imported)@3"];
        args.extend_from_slice(extra);
        let origin = |p: &str| {
            let mut v = vec![
                "eval",
                &a,
                p,
                "--corpus",
                &c,
                "--per-goal",
                "--format",
                "tsv",
            ];
            v.extend_from_slice(&args);
            ok(&v)
        };
        let (text, stored) = (origin(&r), origin(&s));
        assert_eq!(stored, text, "{extra:?}");
        assert!(text.contains("R(origin=in-file)@3"), "{text}");
    }
}

/// Writes a little-endian f32 `.npy` matrix of `rows`.
fn write_npy(path: &std::path::Path, rows: &[&[f32]]) {
    let mut h = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, {}), }}",
        rows.len(),
        rows[0].len()
    );
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend_from_slice(&(h.len() as u16).to_le_bytes());
    b.extend_from_slice(h.as_bytes());
    for row in rows {
        for x in *row {
            b.extend_from_slice(&x.to_le_bytes());
        }
    }
    std::fs::write(path, b).unwrap();
}

/// A matrix ranks every one of its columns: a relevant lemma that is none of them cannot be
/// counted in its universe, an error naming the goal and the lemma. Ranking fewer (`--depth`)
/// leaves room for it: never found, in `R`.
#[test]
fn a_relevant_lemma_outside_the_matrix_s_columns_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.npy");
    write_npy(&m, &[&[0.9, 0.1, 0.5], &[0.2, 0.3, 0.4]]);
    let path = |n: &str, text: &str| {
        let p = dir.path().join(n);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    let lemmas = path("lemmas.txt", "a\nb\nc\n");
    let goals = path("goals.txt", "g1\ng2\n");
    let qrels = path("qrels.txt", "g1 0 a 1\ng1 0 zz 1\ng1 0 yy 1\ng2 0 b 1\n");
    let m = m.to_string_lossy().into_owned();
    let args = [
        "eval",
        &qrels,
        &m,
        "--goal-names",
        &goals,
        "--lemma-names",
        &lemmas,
        "-m",
        "R@2",
    ];
    let e = fails(&args);
    assert!(
        e.contains(
            "goal `g1`: relevant lemma `yy` is not among the 3 lemmas of the matrix's columns (2 \
             of the goal's relevant lemmas are not): with the 3 it ranks, the goal counts more \
             lemmas than they hold"
        ),
        "{e}"
    );
    // Two ranked and two never found are one more than the three columns, too.
    let mut a = args.to_vec();
    a.extend_from_slice(&["--depth", "2"]);
    assert!(fails(&a).contains("with the 2 it ranks"));
    // g1 ranks a: found, of {a, yy, zz}; g2 ranks c: b not found.
    a.truncate(args.len());
    a.extend_from_slice(&["--depth", "1", "--format", "tsv"]);
    let out = ok(&a);
    assert_eq!(out, format!("all\tR@2\t{}\n", (1.0 / 3.0 + 0.0) / 2.0));
}

/// A one-row matrix by hand. Goal g1 stands in A.lean at (10, 5), relevant {a2, c2, b1}; A
/// imports B, which imports C. Columns and scores:
///
/// | a1  | a2  | a3  | a4  | b1  | c1   | c2  | d1  | zz  |
/// | 0.1 | 0.5 | 0.9 | 0.3 | 0.5 | 0.95 | 0.2 | 0.8 | 0.6 |
///
/// a2 ends at (10, 5), exactly the theorem's position: accessible; a3 ends at (10, 6) and a4
/// later: not; d1 is not imported; zz is not in the corpus. Unmasked ranking (b1 before a2: equal
/// scores, the greater name first): c1 a3* d1* zz* b1 a2 a4* c2 a1 (* inaccessible). Masked: c1
/// b1 a2 c2 a1, the relevant at 2, 3, 4: AP = (1/2 + 2/3 + 3/4) / 3, RR 1/2, P@3 = R@3 = 2/3.
/// Unmasked: relevant at 5, 6, 8: AP = (1/5 + 2/6 + 3/8) / 3, RR 1/5, P@3 0, R@3 0. Leaks read
/// the unmasked ranking: Leak@1 0, Leak@3 2/3, Leak@5 3/5, LeakRank 2. `--depth 3` masked: c1
/// b1 a2, AP (1/2 + 2/3) / 3, and the unmasked ranking cut at 3 holds 2 inaccessible: Leak@5 2/5.
#[test]
fn a_matrix_is_masked_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("s.npy");
    write_npy(&npy, &[&[0.1, 0.5, 0.9, 0.3, 0.5, 0.95, 0.2, 0.8, 0.6]]);
    let (goals, lemmas) = (dir.path().join("goals.txt"), dir.path().join("lemmas.txt"));
    std::fs::write(&goals, "g1\n").unwrap();
    std::fs::write(&lemmas, "a1\na2\na3\na4\nb1\nc1\nc2\nd1\nzz\n").unwrap();
    let (m, g, l) = (
        npy.to_string_lossy().into_owned(),
        goals.to_string_lossy().into_owned(),
        lemmas.to_string_lossy().into_owned(),
    );
    let names = ["--goal-names", g.as_str(), "--lemma-names", l.as_str()];
    let with = |extra: &[&str]| {
        let mut args = names.to_vec();
        args.extend_from_slice(extra);
        let (out, err) = eval("actual.jsonl", &m, &args);
        (values(&out), err)
    };
    let leaks = |l5: f64| {
        [
            ("g1", "Leak@1", Some(0.0)),
            ("g1", "Leak@3", Some(2.0 / 3.0)),
            ("g1", "Leak@5", Some(l5)),
            ("g1", "LeakRank", Some(2.0)),
        ]
    };
    let (masked, err) = with(&["--mask", "accessible"]);
    check(
        &masked,
        &[
            ("g1", "AP", Some((0.5 + 2.0 / 3.0 + 0.75) / 3.0)),
            ("g1", "RR", Some(0.5)),
            ("g1", "P@3", Some(2.0 / 3.0)),
            ("g1", "R@3", Some(2.0 / 3.0)),
        ],
    );
    check(&masked, &leaks(0.6));
    assert!(
        err.contains(
            "premises: 1 goals ranked under the corpus, 4 predicted premises masked \
             (inaccessible), 1 not in the corpus, 0 goals in files it does not list, 0 relevant"
        ),
        "{err}"
    );
    assert!(
        err.contains("(the first by name: `zz` for goal `g1`)"),
        "{err}"
    );
    let (unmasked, _) = with(&[]);
    check(
        &unmasked,
        &[
            ("g1", "AP", Some((0.2 + 2.0 / 6.0 + 3.0 / 8.0) / 3.0)),
            ("g1", "RR", Some(0.2)),
            ("g1", "P@3", Some(0.0)),
            ("g1", "R@3", Some(0.0)),
        ],
    );
    check(&unmasked, &leaks(0.6));
    let (cut, _) = with(&["--mask", "accessible", "--depth", "3"]);
    check(&cut, &[("g1", "AP", Some((0.5 + 2.0 / 3.0) / 3.0))]);
    check(&cut, &leaks(0.4));
    // --strict: zz, which the corpus does not define, is an error naming it.
    let (a, c) = (fixture("actual.jsonl"), fixture("corpus.jsonl"));
    let mut args = vec![
        "eval",
        &a,
        &m,
        "--corpus",
        &c,
        "--mask",
        "accessible",
        "--strict",
    ];
    args.extend_from_slice(&names);
    let e = fails(&args);
    assert!(
        e.contains("goal `g1`: premise `zz` is not defined by the corpus"),
        "{e}"
    );
    // A goal placed in a file the corpus does not list: under --strict, the text path's words.
    let placed = dir.path().join("placed.jsonl");
    std::fs::write(
        &placed,
        "{\"goal_id\": \"g1\", \"file_path\": \"Z.lean\", \"theorem_pos\": [1, 1]}\n",
    )
    .unwrap();
    let placed = placed.to_string_lossy().into_owned();
    args.extend_from_slice(&["--goals", &placed]);
    let e = fails(&args);
    assert!(
        e.contains("goal `g1` stands in `Z.lean`, which the corpus"),
        "{e}"
    );
    assert!(e.contains("does not list (--strict)"), "{e}");
}

/// Under `--corpus`, `--goal-names` alone: the matrix's columns are the corpus's premises in its
/// order (`c1 c2 C.baz b1 B.bar a1 a2 a3 A.foo a4 d1`, ReProver's `all_premises`). g1's row
/// scores the premises of `a_matrix_is_masked_by_hand` alike, C.baz 0.03, B.bar 0.02 and A.foo
/// 0.01 (the last: accessible, accessible, and not: it ends at (11, 8), after the theorem).
/// Masked: `c1 b1 a2 c2 a1 C.baz B.bar`, relevant at 2, 3, 4: AP (1/2 + 2/3 + 3/4) / 3, RR
/// 1/2; unmasked `c1 a3 d1 b1 a2 a4 c2 a1 C.baz B.bar A.foo`: relevant at 4, 5, 7, AP (1/4 +
/// 2/5 + 3/7) / 3, Leak@5 2/5. The same output as the columns named in that order; a matrix of
/// another width is refused naming the corpus's count, and without a corpus the columns need
/// names.
#[test]
fn a_matrix_of_every_premise_is_named_by_the_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("s.npy");
    let row = [0.95, 0.2, 0.03, 0.5, 0.02, 0.1, 0.5, 0.9, 0.01, 0.3, 0.8];
    write_npy(&npy, &[&row]);
    let (goals, lemmas) = (dir.path().join("goals.txt"), dir.path().join("lemmas.txt"));
    std::fs::write(&goals, "g1\n").unwrap();
    std::fs::write(
        &lemmas,
        "c1\nc2\nC.baz\nb1\nB.bar\na1\na2\na3\nA.foo\na4\nd1\n",
    )
    .unwrap();
    let (m, g, l) = (
        npy.to_string_lossy().into_owned(),
        goals.to_string_lossy().into_owned(),
        lemmas.to_string_lossy().into_owned(),
    );
    let (masked, _) = eval(
        "actual.jsonl",
        &m,
        &["--goal-names", &g, "--mask", "accessible"],
    );
    check(
        &values(&masked),
        &[
            ("g1", "AP", Some((0.5 + 2.0 / 3.0 + 0.75) / 3.0)),
            ("g1", "RR", Some(0.5)),
            ("g1", "Leak@3", Some(2.0 / 3.0)),
        ],
    );
    let (unmasked, _) = eval("actual.jsonl", &m, &["--goal-names", &g]);
    check(
        &values(&unmasked),
        &[
            ("g1", "AP", Some((0.25 + 2.0 / 5.0 + 3.0 / 7.0) / 3.0)),
            ("g1", "RR", Some(0.25)),
            ("g1", "Leak@5", Some(0.4)),
        ],
    );
    for (out, mask) in [(&masked, "accessible"), (&unmasked, "none")] {
        let named = ["--goal-names", &g, "--lemma-names", &l, "--mask", mask];
        assert_eq!(&eval("actual.jsonl", &m, &named).0, out, "{mask}");
    }
    // Two runs compared, the columns named by the corpus.
    let (a, c) = (fixture("actual.jsonl"), fixture("corpus.jsonl"));
    let o = run(&[
        "compare",
        &a,
        &m,
        &m,
        "--goal-names",
        &g,
        "--corpus",
        &c,
        "-m",
        "AP",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Twelve columns for eleven premises.
    let wide = dir.path().join("wide.npy");
    write_npy(&wide, &[&[0.5; 12]]);
    let w = wide.to_string_lossy().into_owned();
    let e = fails(&["eval", &a, &w, "--goal-names", &g, "--corpus", &c]);
    assert!(
        e.contains(
            "shape (1, 12): without --lemma-names FILE its columns are the premises of the corpus"
        ),
        "{e}"
    );
    assert!(e.contains("which has 11"), "{e}");
    let e = fails(&["eval", &a, &m, "--goal-names", &g]);
    assert!(e.contains("under --corpus, --goal-names alone"), "{e}");
}

/// `compare` takes the premise protocol's options as `eval` does: under `--mask accessible` each
/// run's mean is `eval`'s masked mean (AP 0.7685..., R@3 13/18 here), not the unmasked one (AP
/// 0.8009..., R@3 7/9); the TREC run and the JSONL predictions rank alike, so every difference is
/// 0 and every goal a tie.
#[test]
fn compare_masks_as_eval_does() {
    let (a, r, p, c) = (
        fixture("actual.jsonl"),
        fixture("run.txt"),
        fixture("predictions.jsonl"),
        fixture("corpus.jsonl"),
    );
    let mask = ["--corpus", c.as_str(), "--mask", "accessible"];
    let stdout = |args: &[&str]| {
        let o = run(args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    };
    let value = |tsv: &str, m: &str| -> f64 {
        let line = tsv
            .lines()
            .find(|l| l.starts_with(&format!("all\t{m}\t")))
            .unwrap();
        line.rsplit('\t').next().unwrap().parse().unwrap()
    };
    let ms = ["-m", "AP", "-m", "R@3", "--format", "tsv"];
    let mut args = vec!["eval", a.as_str(), r.as_str()];
    args.extend(ms);
    let plain = stdout(&args);
    args.extend(mask);
    let masked = stdout(&args);
    let mut args = vec!["compare", a.as_str(), r.as_str(), p.as_str()];
    args.extend(ms);
    args.extend(mask);
    let compared = stdout(&args);
    for m in ["AP", "R@3"] {
        let row: Vec<&str> = (compared.lines())
            .find(|l| l.starts_with(&format!("{m}\t")))
            .unwrap()
            .split('\t')
            .collect();
        let (mean_a, mean_b) = (
            row[3].parse::<f64>().unwrap(),
            row[4].parse::<f64>().unwrap(),
        );
        assert_eq!(mean_a, value(&masked, m), "{m}: {compared}");
        assert_eq!(mean_b, mean_a, "{m}");
        assert_ne!(mean_a, value(&plain, m), "{m}: masked equals unmasked");
        assert_eq!(
            (row[5], row[12], row[13], row[14]),
            ("0", "0", "3", "0"),
            "{m}"
        );
    }
    assert!((value(&masked, "R@3") - 13.0 / 18.0).abs() < 1e-15);
}

/// A library of two files for the origin measures, written to `dir`: `L.lean` (premises `l1`
/// ending at (1, 5), `l2` at (2, 5)) and `M.lean`, which imports it (`m1` ending at (3, 4), `m2`
/// exactly at (5, 2), `m3` at (5, 3)). Goals: `t1` at M.lean (5, 2), relevant `m2` and `m3`
/// (in-file; `m3` ends a column after the theorem: inaccessible), `l1` (imported) and `ghost`
/// (the corpus does not define it: of neither origin); `t2` at L.lean (9, 0), relevant `l1`
/// (in-file) and `m1` (another file, not imported: of origin imported, inaccessible); `t3` at
/// M.lean (9, 0), relevant `l2` (imported), no predictions. The run ranks `t1`
/// `m3 l2 m2 ghost l1` and `t2` `m1 l1`. Returns (actual, run, corpus, predictions.jsonl).
fn origin_library(dir: &std::path::Path) -> [String; 4] {
    let p = |l: &str, end: [u32; 2]| {
        format!(
            r#"{{"full_name": "{l}", "code": "theorem {l} : True := trivial", "start": [{}, 1], "end": [{}, {}], "kind": "theorem"}}"#,
            end[0], end[0], end[1]
        )
    };
    let corpus = format!(
        "{{\"path\": \"L.lean\", \"imports\": [], \"premises\": [{}, {}]}}\n\
         {{\"path\": \"M.lean\", \"imports\": [\"L.lean\"], \"premises\": [{}, {}, {}]}}\n",
        p("l1", [1, 5]),
        p("l2", [2, 5]),
        p("m1", [3, 4]),
        p("m2", [5, 2]),
        p("m3", [5, 3])
    );
    let actual = r#"{"goal_id": "t1", "file_path": "M.lean", "theorem_pos": [5, 2], "premises": ["m2", "m3", "l1", "ghost"]}
{"goal_id": "t2", "file_path": "L.lean", "theorem_pos": [9, 0], "premises": ["l1", "m1"]}
{"goal_id": "t3", "file_path": "M.lean", "theorem_pos": [9, 0], "premises": ["l2"]}
"#;
    let run = "t1 Q0 m3 1 0.9 r\nt1 Q0 l2 2 0.8 r\nt1 Q0 m2 3 0.7 r\nt1 Q0 ghost 4 0.6 r\n\
               t1 Q0 l1 5 0.5 r\nt2 Q0 m1 1 0.9 r\nt2 Q0 l1 2 0.8 r\n";
    let jsonl = "{\"goal_id\": \"t1\", \"retrieved_premises\": [\"m3\", \"l2\", \"m2\", \"ghost\", \"l1\"]}\n\
                 {\"goal_id\": \"t2\", \"retrieved_premises\": [\"m1\", \"l1\"]}\n";
    let mut out = Vec::new();
    for (name, text) in [
        ("actual.jsonl", actual),
        ("run.txt", run),
        ("corpus.jsonl", corpus.as_str()),
        ("predictions.jsonl", jsonl),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        out.push(path.to_string_lossy().into_owned());
    }
    out.try_into().unwrap()
}

const ORIGIN: &[&str] = &[
    "-m",
    "R(origin=in-file)@1",
    "-m",
    "R(origin=in-file)@2",
    "-m",
    "R(origin=imported)@2",
    "-m",
    "R(origin=imported)@3",
    "-m",
    "R@3",
];

/// `lemma-eval ARGS ORIGIN --format tsv`, successful: its values.
fn origin_values(args: &[&str]) -> BTreeMap<(String, String), Option<f64>> {
    let mut all = args.to_vec();
    all.extend_from_slice(ORIGIN);
    all.extend_from_slice(&["--format", "tsv"]);
    let o = run(&all);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{all:?}: {err}");
    values(&String::from_utf8(o.stdout).unwrap())
}

/// Masked, `t1` ranks `l2 m2 l1` (in-file R 2, imported R 1, `ghost` in neither, R 4) and `t2`
/// `l1` (in-file 1, imported 1: `m1` masked); `t3` is an empty ranking (imported 1, no in-file:
/// undefined). Means are over the goals with premises of the origin, coverage their share.
#[test]
fn recall_by_origin_is_the_hand_computed_one() {
    let dir = tempfile::tempdir().unwrap();
    let [a, r, c, p] = origin_library(dir.path());
    let masked = [
        ("t1", "R(origin=in-file)@1", Some(0.0)), // l2: imported
        ("t1", "R(origin=in-file)@2", Some(0.5)), // m2 at 2 of {m2, m3}
        ("t1", "R(origin=imported)@2", Some(0.0)),
        ("t1", "R(origin=imported)@3", Some(1.0)), // l1 at 3
        ("t1", "R@3", Some(2.0 / 4.0)),
        ("t2", "R(origin=in-file)@1", Some(1.0)),
        ("t2", "R(origin=imported)@3", Some(0.0)), // m1 masked: never found
        ("t3", "R(origin=in-file)@2", None),
        ("t3", "R(origin=imported)@2", Some(0.0)),
        ("all", "R(origin=in-file)@1", Some((0.0 + 1.0) / 2.0)),
        ("all", "R(origin=in-file)@1:coverage", Some(2.0 / 3.0)),
        ("all", "R(origin=in-file)@2", Some((0.5 + 1.0) / 2.0)),
        ("all", "R(origin=imported)@2", Some(0.0)),
        ("all", "R(origin=imported)@2:coverage", Some(1.0)),
        ("all", "R(origin=imported)@3", Some((1.0 + 0.0 + 0.0) / 3.0)),
        // R@3: (2/4 + 1/2 + 0) / 3.
        ("all", "R@3", Some(1.0 / 3.0)),
    ];
    let mask = ["--corpus", c.as_str(), "--mask", "accessible", "--per-goal"];
    for pred in [&r, &p] {
        let mut args = vec!["eval", a.as_str(), pred.as_str()];
        args.extend_from_slice(&mask);
        check(&origin_values(&args), &masked);
    }
    // Unmasked (the corpus alone): t1 `m3 l2 m2 ghost l1`, t2 `m1 l1`.
    let args = ["eval", &a, &r, "--corpus", &c, "--per-goal"];
    check(
        &origin_values(&args),
        &[
            ("t1", "R(origin=in-file)@1", Some(0.5)), // m3
            ("t2", "R(origin=in-file)@1", Some(0.0)),
            ("t2", "R(origin=imported)@2", Some(1.0)), // m1 at 1
            ("all", "R(origin=in-file)@1", Some((0.5 + 0.0) / 2.0)),
            ("all", "R(origin=in-file)@2", Some((0.5 + 1.0) / 2.0)),
            ("all", "R(origin=imported)@2", Some((0.0 + 1.0 + 0.0) / 3.0)),
            ("all", "R(origin=imported)@3", Some((0.0 + 1.0 + 0.0) / 3.0)),
        ],
    );
    // --missing skip leaves t3 out: imported@3 over t1 and t2.
    let mut args = vec!["eval", a.as_str(), r.as_str(), "--missing", "skip"];
    args.extend_from_slice(&mask);
    check(
        &origin_values(&args),
        &[
            ("all", "R(origin=imported)@3", Some(0.5)),
            ("all", "R(origin=imported)@3:coverage", Some(1.0)),
            ("all", "R(origin=in-file)@2:coverage", Some(1.0)),
        ],
    );
    // Per stratum: M.lean holds t1 and t3, L.lean t2.
    let mut args = vec!["eval", a.as_str(), r.as_str(), "--by", "file"];
    args.extend_from_slice(&mask);
    check(
        &origin_values(&args),
        &[
            ("file=M.lean", "R(origin=in-file)@2", Some(0.5)),
            ("file=M.lean", "R(origin=in-file)@2:coverage", Some(0.5)),
            (
                "file=M.lean",
                "R(origin=imported)@3",
                Some((1.0 + 0.0) / 2.0),
            ),
            ("file=L.lean", "R(origin=in-file)@2", Some(1.0)),
            ("file=L.lean", "R(origin=imported)@3", Some(0.0)),
        ],
    );
}

#[test]
fn recall_by_origin_in_json_table_and_compare() {
    let dir = tempfile::tempdir().unwrap();
    let [a, r, c, p] = origin_library(dir.path());
    let mask = ["--corpus", c.as_str(), "--mask", "accessible"];
    let mut args = vec!["eval", a.as_str(), r.as_str(), "--format", "json"];
    args.extend_from_slice(&mask);
    args.extend_from_slice(ORIGIN);
    let json: serde_json::Value = serde_json::from_str(&common::ok(&args)).unwrap();
    assert_eq!(
        json["summary"]["R(origin=in-file)@2"],
        serde_json::json!({"mean": 0.75, "coverage": 2.0 / 3.0, "reached": 2})
    );
    let mut args = vec!["eval", a.as_str(), r.as_str()];
    args.extend_from_slice(&mask);
    args.extend_from_slice(ORIGIN);
    let table = common::ok(&args);
    assert!(
        table.contains("R(origin=in-file)@2            0.7500  over 2 of 3 goals (66.7%)"),
        "{table}"
    );
    // compare: each origin measure over the goals that have premises of its origin (2 and 3),
    // its means eval's; R@3 over all three.
    let mut args = vec![
        "compare",
        a.as_str(),
        r.as_str(),
        p.as_str(),
        "--format",
        "tsv",
    ];
    args.extend_from_slice(&mask);
    args.extend_from_slice(ORIGIN);
    let out = common::ok(&args);
    for (m, mean, ties) in [
        ("R(origin=in-file)@2", 0.75, "2"),
        ("R(origin=imported)@3", 1.0 / 3.0, "3"),
        ("R@3", 1.0 / 3.0, "3"),
    ] {
        let row: Vec<&str> = (out.lines())
            .find(|l| l.starts_with(&format!("{m}\t")))
            .unwrap_or_else(|| panic!("{m}: {out}"))
            .split('\t')
            .collect();
        let got: f64 = row[3].parse().unwrap();
        assert!((got - mean).abs() < 1e-15, "{m}: {out}");
        assert_eq!((row[4], row[13]), (row[3], ties), "{m}");
    }
    // Without the corpus, under --group-by, and on a store: refused.
    let e = fails(&["eval", &a, &r, "-m", "R(origin=in-file)@2"]);
    assert!(e.contains("R(origin=in-file)@2 needs the corpus"), "{e}");
    let mut args = vec!["eval", a.as_str(), r.as_str(), "--group-by", "file"];
    args.extend_from_slice(&mask);
    args.extend_from_slice(&["-m", "R(origin=imported)@2"]);
    let e = fails(&args);
    assert!(e.contains("R(origin=imported)@2"), "{e}");
    let e = fails(&["eval", &a, &r, "-m", "R(origin=nowhere)@2", "--corpus", &c]);
    assert!(e.contains("`in-file` or `imported`"), "{e}");
}

/// `--by origin` splits each `R@k` asked for: the two origin measures follow it, with the values
/// of asking for them by name (t1's and t2's masked rankings as above), in the summary, per goal
/// and per stratum; what travels in a summary file and what `compare` compares alike.
#[test]
fn by_origin_splits_each_recall_at_k() {
    let dir = tempfile::tempdir().unwrap();
    let [a, r, c, _] = origin_library(dir.path());
    let mask = ["--corpus", c.as_str(), "--mask", "accessible"];
    let with = |extra: &[&str]| {
        let mut args = vec!["eval", a.as_str(), r.as_str(), "--format", "tsv"];
        args.extend_from_slice(&mask);
        args.extend_from_slice(extra);
        common::ok(&args)
    };
    let split = with(&["-m", "R@2", "-m", "AP", "--by", "origin", "--per-goal"]);
    let named = with(&[
        "-m",
        "R@2",
        "-m",
        "R(origin=in-file)@2",
        "-m",
        "R(origin=imported)@2",
        "-m",
        "AP",
        "--per-goal",
    ]);
    assert_eq!(split, named);
    check(
        &values(&split),
        &[
            ("t1", "R(origin=in-file)@2", Some(0.5)), // l2 m2: m2 of {m2, m3}
            ("t1", "R(origin=imported)@2", Some(0.0)), // l1 third
            ("t2", "R(origin=in-file)@2", Some(1.0)),
            ("t3", "R(origin=in-file)@2", None),
            ("all", "R(origin=in-file)@2", Some((0.5 + 1.0) / 2.0)),
            ("all", "R(origin=in-file)@2:coverage", Some(2.0 / 3.0)),
            ("all", "R(origin=imported)@2", Some(0.0)),
        ],
    );
    // In the given order, after each R@k; one asked for by name is not repeated.
    let names = |out: &str| -> Vec<String> {
        (out.lines())
            .filter(|l| l.starts_with("all\t") && !l.contains(":coverage"))
            .map(|l| l.split('\t').nth(1).unwrap().to_string())
            .collect()
    };
    let out = with(&[
        "-m",
        "R@1",
        "-m",
        "R(origin=imported)@3",
        "-m",
        "R@3",
        "--by",
        "origin",
    ]);
    assert_eq!(
        names(&out),
        [
            "R@1",
            "R(origin=in-file)@1",
            "R(origin=imported)@1",
            "R(origin=imported)@3",
            "R@3",
            "R(origin=in-file)@3"
        ]
    );
    // With strata of goals: each stratum split too (M.lean holds t1 and t3).
    let out = with(&["-m", "R@2", "--by", "origin", "--by", "file"]);
    check(
        &values(&out),
        &[
            ("file=M.lean", "R(origin=in-file)@2", Some(0.5)),
            ("file=M.lean", "R(origin=in-file)@2:coverage", Some(0.5)),
            ("file=L.lean", "R(origin=in-file)@2", Some(1.0)),
        ],
    );
    // Alone it makes no strata of goals: its summary travels, and merges to the same numbers.
    let sum = dir.path().join("o.sum").to_string_lossy().into_owned();
    let mut args = vec![
        "eval",
        a.as_str(),
        r.as_str(),
        "-m",
        "R@2",
        "--by",
        "origin",
    ];
    args.extend_from_slice(&mask);
    args.extend_from_slice(&["--summary-out", &sum, "--format", "tsv"]);
    let whole = common::ok(&args);
    let merged = common::ok(&["merge", &sum, "--format", "tsv"]);
    assert_eq!(merged, whole);
    assert!(
        merged.contains("all\tR(origin=imported)@2\t0\n"),
        "{merged}"
    );
    // compare compares the split measures.
    let mut args = vec!["compare", a.as_str(), r.as_str(), r.as_str()];
    args.extend_from_slice(&mask);
    args.extend_from_slice(&["-m", "R@2", "--by", "origin", "--format", "tsv"]);
    let out = common::ok(&args);
    assert!(
        out.lines().any(|l| l.starts_with("R(origin=in-file)@2\t")),
        "{out}"
    );
    // Strata of goals it does not compare: refused, not ignored.
    let mut args = vec!["compare", a.as_str(), r.as_str(), r.as_str(), "-m", "R@2"];
    args.extend_from_slice(&mask);
    args.extend_from_slice(&["--by", "origin", "--by", "file"]);
    let e = fails(&args);
    assert!(
        e.contains("--by file: compare tests the runs over all their goals"),
        "{e}"
    );
    // Refused: without the corpus, without an R@k, twice, and under --group-by (the origin
    // measures have no mean over groups).
    let e = fails(&["eval", &a, &r, "-m", "R@2", "--by", "origin"]);
    assert!(
        e.contains("--by origin splits recall by where the corpus defines"),
        "{e}"
    );
    let e = fails(&["eval", &a, &r, "-m", "AP", "--by", "origin", "--corpus", &c]);
    assert!(
        e.contains("--by origin splits R@k: ask for an R@k measure"),
        "{e}"
    );
    let e = fails(&[
        "eval", &a, &r, "-m", "R@2", "--by", "origin", "--by", "origin", "--corpus", &c,
    ]);
    assert!(e.contains("--by origin is given twice"), "{e}");
    let e = fails(&[
        "eval",
        &a,
        &r,
        "-m",
        "R@2",
        "--by",
        "origin",
        "--group-by",
        "file",
        "--corpus",
        &c,
    ]);
    assert!(
        e.contains(
            "--by origin with --group-by file: recall by origin is a mean over the goals that \
             have premises of each origin, with no mean over groups"
        ),
        "{e}"
    );
}

/// `Leak@k` is better lower: `compare` marks the run that leaks less as the best and as the one
/// that beats the other, as it marks the higher AP. Eight goals at A.lean's end (a1..a4
/// accessible; B.lean, not imported, inaccessible), a1 relevant. Run x ranks `i % 3 + 1` of
/// b1..b3 first, then a1 a2 a3: Leak@3 1/3, 2/3 or 1, AP 1/2, 1/3 or 1/4. Run y ranks a1 a2 a3
/// then b1: Leak@3 0, AP 1.
#[test]
fn compare_takes_the_lower_leak_as_the_better() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str, line: u32| {
        format!(r#"{{"full_name": "{n}", "code": "c", "start": [{line}, 1], "end": [{line}, 5]}}"#)
    };
    let corpus = format!(
        "{{\"path\": \"A.lean\", \"imports\": [], \"premises\": [{}]}}\n\
         {{\"path\": \"B.lean\", \"imports\": [], \"premises\": [{}]}}\n",
        (1..=4)
            .map(|i| p(&format!("a{i}"), i))
            .collect::<Vec<_>>()
            .join(", "),
        (1..=4)
            .map(|i| p(&format!("b{i}"), i))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let (mut actual, mut x, mut y) = (String::new(), String::new(), String::new());
    for g in 0..8 {
        actual += &format!(
            "{{\"goal_id\": \"g{g}\", \"file_path\": \"A.lean\", \"theorem_pos\": [100, 0], \
             \"premises\": [\"a1\"]}}\n"
        );
        let leaks = g % 3 + 1;
        let xs: Vec<String> = (1..=leaks)
            .map(|i| format!("b{i}"))
            .chain((1..=3).map(|i| format!("a{i}")))
            .collect();
        for (r, n) in xs.iter().enumerate() {
            x += &format!("g{g} Q0 {n} {} {} x\n", r + 1, 10 - r);
        }
        for (r, n) in ["a1", "a2", "a3", "b1"].iter().enumerate() {
            y += &format!("g{g} Q0 {n} {} {} y\n", r + 1, 10 - r);
        }
    }
    let path = |n: &str, text: &str| {
        let f = dir.path().join(n);
        std::fs::write(&f, text).unwrap();
        f.to_string_lossy().into_owned()
    };
    let (c, a) = (path("corpus.jsonl", &corpus), path("actual.jsonl", &actual));
    let (x, y) = (path("x.txt", &x), path("y.txt", &y));
    let table = ok(&[
        "compare", &a, &x, &y, "--corpus", &c, "-m", "Leak@3", "-m", "AP", "--quiet",
    ]);
    let row = |r: &str| -> Vec<String> {
        let line = (table.lines())
            .find(|l| l.starts_with(&format!("{r} ")))
            .unwrap_or_else(|| panic!("{table}"));
        line.split_whitespace()
            .skip(2)
            .map(str::to_string)
            .collect()
    };
    // x's means: Leak@3 (3 × 1/3 + 3 × 2/3 + 2 × 1) / 8 = 5/8, AP (3 × 1/2 + 3 × 1/3 + 2 × 1/4)
    // / 8 = 3/8.
    assert_eq!(row("a"), ["0.6250", "0.3750"], "{table}");
    assert_eq!(row("b"), ["0.0000*a", "1.0000*a"], "{table}");
    assert!(
        table.contains("*: the best mean of the measure (the lowest for Leak@3)"),
        "{table}"
    );
}

/// `--duplicates error` refuses a repeated premise the mask removes, as it refuses any repeat:
/// the line is the ranking's, masked or not (d1 is not accessible at g1).
#[test]
fn a_repeat_the_mask_removes_is_still_a_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let (a, c) = (fixture("actual.jsonl"), fixture("corpus.jsonl"));
    let run = dir.path().join("dup.txt");
    std::fs::write(
        &run,
        "g1 Q0 d1 1 0.9 x\ng1 Q0 a2 2 0.8 x\ng1 Q0 d1 3 0.7 x\ng1 Q0 c2 4 0.6 x\n",
    )
    .unwrap();
    let jsonl = dir.path().join("dup.jsonl");
    std::fs::write(
        &jsonl,
        "{\"goal_id\": \"g1\", \"retrieved_premises\": [\"d1\", \"a2\", \"d1\", \"c2\"]}\n",
    )
    .unwrap();
    for (p, at) in [(&run, "dup.txt:3: "), (&jsonl, "dup.jsonl:1: ")] {
        let p = p.to_string_lossy();
        let args = [
            "eval",
            &a,
            &p,
            "--corpus",
            &c,
            "--mask",
            "accessible",
            "-m",
            "AP",
        ];
        let mut strict = args.to_vec();
        strict.extend_from_slice(&["--duplicates", "error"]);
        let e = fails(&strict);
        assert!(
            e.contains(&format!("{at}lemma `d1` appears twice in goal `g1`")),
            "{e}"
        );
        // The default keeps the first: g1 masks to a2 c2.
        ok(&args);
    }
}

/// A goal evaluated without predictions needs its place too.
#[test]
fn recall_by_origin_needs_every_goal_s_place() {
    let dir = tempfile::tempdir().unwrap();
    let [_, r, c, _] = origin_library(dir.path());
    let a = dir.path().join("qrels.txt");
    std::fs::write(&a, "t1 0 m2 1\nt3 0 l2 1\n").unwrap();
    let goals = dir.path().join("goals.jsonl");
    std::fs::write(
        &goals,
        "{\"goal_id\": \"t1\", \"file_path\": \"M.lean\", \"theorem_pos\": [5, 2]}\n",
    )
    .unwrap();
    let (a, g) = (a.to_string_lossy(), goals.to_string_lossy());
    let e = fails(&[
        "eval",
        &a,
        &r,
        "--corpus",
        &c,
        "--goals",
        &g,
        "-m",
        "R(origin=imported)@2",
    ]);
    // The message alone: no empty file name before it.
    assert!(
        e.contains("lemma-eval: error: goal `t3` has no record giving its `file_path`"),
        "{e}"
    );
}

/// `report` takes the premise options as `eval` does: the leak rate and recall by origin (the
/// values of `eval` on the same files), the premise counts, a section per stratum; under
/// `--group-by` the measures with no mean over groups are left out.
#[test]
fn report_with_the_premise_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let (a, r, p, c) = (
        fixture("actual.jsonl"),
        fixture("run.txt"),
        fixture("predictions.jsonl"),
        fixture("corpus.jsonl"),
    );
    let out = page.to_string_lossy().into_owned();
    let mut args = vec!["report", &a, &r, &p, "--corpus", &c, "--mask", "accessible"];
    args.extend_from_slice(&["--by", "file", "--by", "gold-size", "-o", &out]);
    common::ok_err(&args);
    let html = std::fs::read_to_string(&page).unwrap();
    // Leak@1 (1 + 1 + 0) / 3; R(origin=imported)@10 (2/2 + 1/2) / 2 over g1 and g2; masked: g1
    // d1 a3 zz a4, g2 a1 d1.
    for s in [
        "<h2>Premise selection</h2>",
        "<tr><td>Leak@1</td><td>0.6667</td><td>0.6667</td></tr>",
        "<td>0.7500 (over 2 goals)</td>",
        "<tr><td>predicted premises masked (inaccessible)</td><td>6</td><td>6</td></tr>",
        "<tr><td>relevant premises not accessible</td><td>1</td><td>1</td></tr>",
        "<td>corpus</td>",
        "<h2>Stratum <code>file=A.lean</code></h2>",
        "<h2>Stratum <code>gold-size=2-3</code></h2>",
        // gold-size=2-3 holds g1 (R = 3) and g2 (R = 2).
        "<tr><td>goals evaluated</td><td>2</td><td>2</td></tr>",
    ] {
        assert!(html.contains(s), "{s}");
    }
    // Grouped by file: Depth and LeakRank (no mean over groups) are not on the page.
    let args = [
        "report",
        &a,
        &r,
        "--corpus",
        &c,
        "--group-by",
        "file",
        "-o",
        &out,
    ];
    common::ok_err(&args);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<tr><td>Leak@1</td>"), "no leak row");
    assert!(
        !html.contains("LeakRank") && !html.contains("Depth(recall=1.0)"),
        "{html}"
    );
    // The protocol's errors are eval's.
    let q = fixture("qrels.txt");
    let e = fails(&["report", &q, &r, "--corpus", &c, "--mask", "accessible"]);
    assert!(
        e.contains("goal `g1` has no record giving its place"),
        "{e}"
    );
}

/// Under `--ties group` a cutoff inside a tie group counts the expected share of its premises
/// of each origin: g3 ranks c2 (in-file, relevant) and c1 at one score, so the first rank holds
/// c2 with probability 1/2; g1's a2 ranks first alone.
#[test]
fn recall_by_origin_under_tie_groups() {
    // The leak measures (in `eval`'s MEASURES) are refused under tie groups: asked alone.
    let (a, r, c) = (
        fixture("actual.jsonl"),
        fixture("run.txt"),
        fixture("corpus.jsonl"),
    );
    let out = ok(&[
        "eval",
        &a,
        &r,
        "--corpus",
        &c,
        "--per-goal",
        "--format",
        "tsv",
        "--mask",
        "accessible",
        "--ties",
        "group",
        "-m",
        "R(origin=in-file)@1",
    ]);
    check(
        &values(&out),
        &[
            ("g1", "R(origin=in-file)@1", Some(1.0)),
            ("g2", "R(origin=in-file)@1", None),
            ("g3", "R(origin=in-file)@1", Some(0.5)),
            ("all", "R(origin=in-file)@1", Some((1.0 + 0.5) / 2.0)),
        ],
    );
}

/// `report` lays out its own measures: `--by origin` changes nothing on its page (recall by
/// origin at 10 is there with a corpus), and under `--ties group` the leak measures are left out
/// rather than refused.
#[test]
fn report_with_by_origin_and_tie_groups() {
    let dir = tempfile::tempdir().unwrap();
    let (a, r, p, c) = (
        fixture("actual.jsonl"),
        fixture("run.txt"),
        fixture("predictions.jsonl"),
        fixture("corpus.jsonl"),
    );
    let page = |extra: &[&str], name: &str| {
        let out = dir.path().join(name).to_string_lossy().into_owned();
        let mut args = vec!["report", a.as_str(), r.as_str(), p.as_str(), "--corpus", &c];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-o", &out]);
        ok(&args);
        // Without the command line and the timings.
        let html = std::fs::read_to_string(&out).unwrap();
        (html.lines())
            .filter(|l| !l.contains("lemma-eval report") && !l.contains(" s<"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(page(&["--by", "origin"], "o.html"), page(&[], "plain.html"));
    let tied = page(&["--ties", "group"], "tied.html");
    assert!(
        !tied.contains("<td>Leak@") && !tied.contains("<td>LeakRank"),
        "{tied}"
    );
    assert!(tied.contains("<td>R(origin=in-file)@10</td>"), "{tied}");
    assert!(!tied.contains("Leak@k: the share"), "{tied}");
}

/// The leak measures read the unmasked ranking premise by premise: under `--ties group`, where
/// a tie group has no order, they are refused (their value would be the lines' order's).
#[test]
fn leaks_are_refused_under_tie_groups() {
    let (a, r, c) = (
        fixture("actual.jsonl"),
        fixture("run.txt"),
        fixture("corpus.jsonl"),
    );
    for m in ["Leak@1", "LeakRank"] {
        let e = fails(&["eval", &a, &r, "--corpus", &c, "--ties", "group", "-m", m]);
        assert!(
            e.contains(&format!("{m} under --ties group: the leak measures read")),
            "{e}"
        );
        ok(&["eval", &a, &r, "--corpus", &c, "--ties", "file", "-m", m]);
    }
}

/// `convert --corpus` writes the corpus in binary form; `--corpus` reads it with the numbers,
/// counts and errors of the text it came from; damage to it, or a corpus that cannot be
/// converted, is an error naming the file that leaves nothing behind.
#[test]
fn a_binary_corpus_reads_as_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("corpus.lec");
    let b = bin.to_str().unwrap();
    let (a, r, c) = (
        fixture("actual.jsonl"),
        fixture("run.txt"),
        fixture("corpus.jsonl"),
    );
    let o = run(&["convert", "--corpus", &c, "-o", b]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    // fixtures/README.md: 4 files, 11 premises kept (the goals' three theorems among them), 4
    // skipped by ReProver's rules.
    assert!(
        err.contains("corpus.lec: 4 files, 11 premises (4 skipped)"),
        "{err}"
    );
    for predicted in [r.as_str(), &fixture("predictions.jsonl")] {
        for extra in [&["--mask", "accessible"][..], &[], &["--strict-gold"]] {
            let args = |corpus: &str| {
                let mut v = vec!["eval", &a, predicted, "--corpus", corpus, "--per-goal"];
                v.extend_from_slice(&["--format", "json"]);
                v.extend_from_slice(MEASURES);
                v.extend_from_slice(extra);
                v.iter().map(|s| s.to_string()).collect::<Vec<_>>()
            };
            let text = run(&args(&c).iter().map(String::as_str).collect::<Vec<_>>());
            let binary = run(&args(b).iter().map(String::as_str).collect::<Vec<_>>());
            assert_eq!(text.status.code(), binary.status.code(), "{extra:?}");
            assert_eq!(
                String::from_utf8_lossy(&text.stdout),
                String::from_utf8_lossy(&binary.stdout),
                "{predicted} {extra:?}"
            );
            // The same warnings, counts and errors, but for the corpus's name (timings aside).
            let said = |o: &std::process::Output, corpus: &str| {
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .filter(|l| {
                        ["warning:", "premises:", "error:"]
                            .iter()
                            .any(|w| l.contains(w))
                    })
                    .map(|l| l.replace(corpus, "CORPUS") + "\n")
                    .collect::<String>()
            };
            let said_text = said(&text, &c);
            assert!(
                said_text.contains("premises: 3 goals ranked under the corpus")
                    || !extra.is_empty()
            );
            assert_eq!(said_text, said(&binary, b), "{predicted} {extra:?}");
        }
    }
    // Masked values as by hand (masked_values_are_the_hand_computed_ones).
    let o = run(&[
        "eval",
        &a,
        &r,
        "--corpus",
        b,
        "--mask",
        "accessible",
        "-m",
        "AP",
        "--per-goal",
        "--format",
        "tsv",
    ]);
    let v = values(&String::from_utf8(o.stdout).unwrap());
    check(
        &v,
        &[
            ("g1", "AP", Some((1.0 + 2.0 / 3.0 + 3.0 / 4.0) / 3.0)),
            ("g2", "AP", Some(0.5)),
        ],
    );
    // Damage: one byte changed.
    let mut bytes = std::fs::read(&bin).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 1;
    let bad = dir.path().join("bad.lec");
    std::fs::write(&bad, &bytes).unwrap();
    let e = fails(&[
        "eval",
        &a,
        &r,
        "--corpus",
        bad.to_str().unwrap(),
        "--mask",
        "accessible",
    ]);
    assert!(
        e.contains("bad.lec: corrupt or truncated binary corpus: checksum mismatch"),
        "{e}"
    );
    // Truncated.
    std::fs::write(&bad, &bytes[..bytes.len() - 9]).unwrap();
    let e = fails(&["eval", &a, &r, "--corpus", bad.to_str().unwrap()]);
    assert!(
        e.contains("bad.lec: corrupt or truncated binary corpus"),
        "{e}"
    );
    // A corpus that cannot be read converts to nothing, and an existing file stays as it was.
    let cyc = dir.path().join("cycle.jsonl");
    std::fs::write(
        &cyc,
        "{\"path\": \"A\", \"imports\": [\"B\"], \"premises\": []}\n\
         {\"path\": \"B\", \"imports\": [\"A\"], \"premises\": []}\n",
    )
    .unwrap();
    let e = fails(&["convert", "--corpus", cyc.to_str().unwrap(), "-o", b]);
    assert!(e.contains("the imports form a cycle"), "{e}");
    assert!(std::fs::read(&bin).unwrap()[..] != bytes[..]);
    assert_eq!(std::fs::read(&bin).unwrap().len(), bytes.len());
    let none = dir.path().join("none.lec");
    fails(&[
        "convert",
        "--corpus",
        cyc.to_str().unwrap(),
        "-o",
        none.to_str().unwrap(),
    ]);
    assert!(!none.exists());
    // Not to stdout, not beside actual sets, not over its own input.
    let e = fails(&["convert", "--corpus", &c, "-o", "-"]);
    assert!(e.contains("a binary corpus goes to a file"), "{e}");
    let o = run(&["convert", "--corpus", &c, &a, &r, "-o", b]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["convert", "-o", b]);
    assert_eq!(o.status.code(), Some(2));
    let e = fails(&["convert", "--corpus", b, "-o", b]);
    assert!(e.contains("corpus.lec"), "{e}");
}

/// Summary files record the premise protocol (the mask, and a fingerprint of the corpus and the
/// goals' places): shards of one masked evaluation merge into its summary whatever the corpus's
/// form; shards without the corpus, unmasked, with another library or other places do not.
#[test]
fn shards_merge_only_under_one_corpus_mask_and_places() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    let (a, r, c) = (
        fixture("actual.jsonl"),
        fixture("run.txt"),
        fixture("corpus.jsonl"),
    );
    let ms = ["-m", "AP", "-m", "R@3", "-m", "RR"];
    let mut whole = vec!["eval", &a, &r, "--corpus", &c, "--mask", "accessible"];
    whole.extend(["--format", "tsv", "--quiet"]);
    whole.extend(ms);
    let want = ok(&whole);
    // The binary form, a library with a3 ending before g1's theorem, g1 placed elsewhere.
    let lec = d("corpus.lec");
    ok(&["convert", "--corpus", &c, "-o", &lec]);
    let text = std::fs::read_to_string(fixture("corpus.jsonl")).unwrap();
    let moved = text.replace(
        r#""full_name": "a3", "code": "theorem a3 : True := trivial", "start": [10, 1], "end": [10, 6]"#,
        r#""full_name": "a3", "code": "theorem a3 : True := trivial", "start": [10, 1], "end": [10, 4]"#,
    );
    assert_ne!(moved, text);
    let other = d("other.jsonl");
    std::fs::write(&other, moved).unwrap();
    let places = d("places.jsonl");
    std::fs::write(
        &places,
        r#"{"goal_id": "g1", "file_path": "A.lean", "theorem_pos": [20, 9]}"#,
    )
    .unwrap();
    // Shard `k` of the run against `actual`, its summary written to `name`.
    let shard_of = |actual: &str, k: &str, name: &str, extra: &[&str]| -> String {
        let out = d(name);
        let mut args = vec!["eval", actual, &r, "--shard", k, "--summary-out", &out];
        args.extend(["-o", "/dev/null", "--quiet"]);
        args.extend(ms);
        args.extend(extra);
        ok(&args);
        out
    };
    let shard = |k: &str, name: &str, extra: &[&str]| shard_of(&a, k, name, extra);
    let masked = ["--corpus", c.as_str(), "--mask", "accessible"];
    let first = shard("1/2", "1.sum", &masked);
    let binary = shard("2/2", "2b.sum", &["--corpus", &lec, "--mask", "accessible"]);
    let merged = ok(&["merge", &first, &binary, "--format", "tsv", "--quiet"]);
    assert_eq!(merged, want);
    // What the protocol counted travels too: json's `premises` object is the whole run's.
    let mut json = whole.clone();
    let tsv = json.iter().position(|x| *x == "tsv").unwrap();
    json[tsv] = "json";
    let merged = ok(&["merge", &first, &binary, "--format", "json", "--quiet"]);
    assert_eq!(merged, ok(&json));
    assert!(
        merged.contains(
            r#""premises":{"goals":3,"goals_in_unlisted_files":0,"goals_past_last_premise":0,"masked":6"#
        ),
        "{merged}"
    );
    // The same places restated by --goals, and the actual sets' lines in another order: the
    // same evaluation, merged.
    let goals = fixture("goals.jsonl");
    let restated = shard(
        "2/2",
        "2g.sum",
        &[&masked[..], &["--goals", &goals]].concat(),
    );
    let merged = ok(&["merge", &first, &restated, "--format", "tsv", "--quiet"]);
    assert_eq!(merged, want);
    let lines = std::fs::read_to_string(fixture("actual.jsonl")).unwrap();
    let reversed = d("reversed.jsonl");
    std::fs::write(
        &reversed,
        lines
            .lines()
            .rev()
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
    )
    .unwrap();
    let out = shard_of(&reversed, "2/2", "2r.sum", &masked);
    assert_eq!(
        ok(&["merge", &first, &out, "--format", "tsv", "--quiet"]),
        want
    );
    let cases = [
        (
            shard("2/2", "2n.sum", &[]),
            "different options: corpus: given vs none",
        ),
        (
            shard("2/2", "2u.sum", &["--corpus", &c]),
            "different options: mask: accessible vs none",
        ),
        (
            shard(
                "2/2",
                "2o.sum",
                &["--corpus", &other, "--mask", "accessible"],
            ),
            "different options: corpus or goal places: another library or other places",
        ),
        (
            shard(
                "2/2",
                "2p.sum",
                &[&masked[..], &["--goals", &places]].concat(),
            ),
            "different options: corpus or goal places: another library or other places",
        ),
    ];
    // The run's values file, written to `name`.
    let values_of = |name: &str, extra: &[&str]| -> String {
        let out = d(name);
        let mut args = vec![
            "eval",
            &a,
            &r,
            "--values-out",
            &out,
            "-o",
            "/dev/null",
            "--quiet",
        ];
        args.extend(ms);
        args.extend(extra);
        ok(&args);
        out
    };
    // A values file of the masked evaluation: read by a masked comparison, refused by another.
    let values = values_of("masked.values", &masked);
    let e = fails(&[
        "compare", &a, &values, &r, "-m", "AP", "-m", "R@3", "-m", "RR",
    ]);
    assert!(
        e.contains("evaluated with other options than this comparison's (corpus: given vs none)"),
        "{e}"
    );
    let mut args = vec!["compare", &a, &values, &r, "--quiet", "--corpus", &c];
    args.extend(["--mask", "accessible", "-m", "AP", "-m", "R@3", "-m", "RR"]);
    ok(&args);
    // A values file written before values files recorded the protocol (version 1): read by a
    // comparison without a corpus as before, refused by one with it.
    let plain = values_of("plain.values", &[]);
    let v1 = d("v1.values");
    std::fs::write(&v1, common::downgraded(&std::fs::read(&plain).unwrap(), 1)).unwrap();
    let table = |run: &str| {
        let m = ["-m", "AP", "-m", "R@3", "-m", "RR"];
        ok(&[
            &["compare", &a, run, &r, "--format", "tsv", "--quiet"][..],
            &m,
        ]
        .concat())
    };
    assert_eq!(table(&v1).replace(&v1, &plain), table(&plain));
    let mut args = vec!["compare", &a, &v1, &r, "--quiet", "--corpus", &c];
    args.extend(["--mask", "accessible", "-m", "AP", "-m", "R@3", "-m", "RR"]);
    let e = fails(&args);
    assert!(
        e.contains("(corpus: not recorded (a file written before"),
        "{e}"
    );
    // A summary written before summary files recorded the protocol (version 3) merges with
    // summaries of evaluations without a corpus, not with this one.
    let old = d("old.sum");
    std::fs::write(
        &old,
        common::downgraded(&std::fs::read(&cases[0].0).unwrap(), 3),
    )
    .unwrap();
    let e = fails(&["merge", &first, &old]);
    assert!(
        e.contains("different options: corpus: given vs not recorded (a file written before"),
        "{e}"
    );
    let plain = shard("1/2", "1n.sum", &[]);
    ok(&["merge", &plain, &old]);
    for (second, why) in &cases {
        let e = fails(&["merge", &first, second]);
        assert!(
            e.starts_with(&format!(
                "lemma-eval: error: cannot merge {first} with {second}: {why}"
            )),
            "{e}"
        );
    }
}

/// A pushed goal that fails after it began (a premise repeated under `--duplicates error`) adds
/// nothing to what the protocol counted: the session goes on, and its counts (and its summary
/// bytes') are those of a session without it.
#[test]
fn a_failed_push_leaves_no_premise_counts() {
    let a = std::path::PathBuf::from(fixture("actual.jsonl"));
    let opts = lemma_eval::PremiseOptions {
        corpus: fixture("corpus.jsonl").into(),
        mask: lemma_eval::MaskMode::Accessible,
        ..Default::default()
    };
    let premises = std::sync::Arc::new(lemma_eval::Premises::load(&opts, Some(&a)).unwrap());
    let ev = lemma_eval::Evaluator::builder()
        .measure_names(["AP"])
        .unwrap()
        .duplicates(lemma_eval::DuplicateMode::Error)
        .premises(premises)
        .build_from_path(&a)
        .unwrap();
    let (g1, g3) = (["a2", "d1", "c1", "zz"], ["c2", "c1"]);
    let mut clean = ev.session().unwrap();
    clean.push_ranked("g1", &g1).unwrap();
    clean.push_ranked("g3", &g3).unwrap();
    let mut failed = ev.session().unwrap();
    failed.push_ranked("g1", &g1).unwrap();
    // g2 (in B.lean, whose relevant a1 is not accessible there) fails at its repeated c1.
    let e = failed
        .push_ranked("g2", &["c1", "d1", "zz", "c1"])
        .unwrap_err();
    assert!(e.to_string().contains("appears twice"), "{e}");
    failed.push_ranked("g3", &g3).unwrap();
    let counts = |s: &lemma_eval::Session| s.partial().unwrap().premises().unwrap().counts();
    assert_eq!(counts(&failed), counts(&clean));
    let (a, b) = (
        clean.finish(&mut lemma_eval::SummaryOnly).unwrap(),
        failed.finish(&mut lemma_eval::SummaryOnly).unwrap(),
    );
    assert_eq!(b.report.premises.counts(), a.report.premises.counts());
    // Two goals ranked, d1 masked at g1 and g3's own file, zz not in the corpus.
    assert_eq!(a.report.premises.goals, 2);
    assert_eq!(a.report.premises.gold_inaccessible, 0);
}

/// A corpus lists at most 65,536 files: `gen --corpus` refuses to write a larger one (nothing
/// written), and reading one is an error at the first file past the bound.
#[test]
fn a_corpus_past_the_files_bound_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    let (c, q, r) = (p("c.jsonl"), p("q.jsonl"), p("r.txt"));
    let e = fails(&[
        "gen", "--corpus", &c, "--qrels", &q, "--run", &r, "--files", "65537", "--goals", "1",
    ]);
    assert!(
        e.contains("gen --corpus: 65537 files (--files, or --universe / 50): a corpus may list at most 65536 files"),
        "{e}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    let lines: String = (0..65_537)
        .map(|i| format!("{{\"path\": \"F{i}.lean\"}}\n"))
        .collect();
    std::fs::write(&c, lines).unwrap();
    let e = fails(&["read-corpus", &c]);
    assert!(
        e.contains("c.jsonl:65537: file `F65536.lean` is one more than a corpus may list"),
        "{e}"
    );
}
