//! The premise-selection protocol through the command (docs/METRICS.md §9): the hand-built
//! library of `fixtures/premise` (README there), masked and unmasked values computed by hand,
//! every input shape giving the same numbers, and what the protocol refuses or warns of.

use std::collections::BTreeMap;
use std::path::PathBuf;

mod common;
use common::run;

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
            "warning: 1 predicted premises are not defined by the corpus (the first: `zz` for \
             goal `g1`)"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "warning: 1 relevant premises are not accessible at their goal (the first: `a1` of \
             goal `g2`)"
        ),
        "{err}"
    );
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
            "goals_in_unlisted_files": 0, "relevant_inaccessible": 1})
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
        e.contains("run.txt:1: goal `g1` has no record giving its place: --mask accessible and the Leak measures need"),
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
            "1 goals stand in files the corpus does not list (the first: goal `g1` in `Z.lean`)"
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
    assert!(err.contains("(the first: `zz` for goal `g1`)"), "{err}");
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
