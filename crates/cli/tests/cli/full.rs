//! Full-library paths: TREC → store → eval equals eval on the TREC files; a dense matrix exported
//! as a TREC run evaluates identically through both paths (ties included, property-tested); the
//! output does not depend on the thread count; corrupt stores and matrices give named errors.

use lemma_accum::Measure;
use lemma_eval::convert::convert;
#[path = "../../../engine/tests/engine/common.rs"]
mod common;

use common::text_eval;
use lemma_eval::full::{evaluate_full, Source};
use lemma_eval::SummaryOnly;
use lemma_eval::{DuplicateMode, EvalOptions, GoalRow, RankingOptions, TieMode};
use lemma_ingest::{ActualSets, Matrix, Names, Store};
use proptest::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const MEASURES: &[&str] = &[
    "AP",
    "AP@5",
    "P@1",
    "P@5",
    "R@10",
    "Rprec",
    "RR",
    "nDCG",
    "nDCG@5",
    "Bpref",
    "Depth(recall=1.0)",
    "AP11",
    "NumRet",
    "NumRelRet",
    "Success@3",
    "F(beta=1)@5",
    "SetF(beta=1)",
    "R(norm=min)@5",
];

fn opts(threads: usize) -> EvalOptions {
    let mut o = EvalOptions::default();
    o.measures = Measure::parse_all(MEASURES.iter().copied()).unwrap();
    o.threads = threads;
    o
}

fn full_eval(actual: &ActualSets, source: &Source<'_>, o: &EvalOptions) -> (Vec<GoalRow>, String) {
    let mut rows: Vec<GoalRow> = Vec::new();
    let (s, _) = evaluate_full(actual, source, o, &mut rows).unwrap();
    (rows, format!("{:?} {:?}", s.aggregates(), s.counts()))
}

fn sorted(mut rows: Vec<GoalRow>) -> Vec<GoalRow> {
    rows.sort_by(|a, b| a.goal.cmp(&b.goal));
    rows
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_lemma-eval")
}

fn gen_trec(dir: &Path, extra: &[&str]) -> (PathBuf, PathBuf) {
    let (q, r) = (dir.join("g.qrels"), dir.join("g.run"));
    let mut args = vec![
        "gen",
        "--qrels",
        q.to_str().unwrap(),
        "--run",
        r.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    assert!(Command::new(bin()).args(&args).status().unwrap().success());
    (q, r)
}

#[test]
fn trec_to_store_round_trip_on_generated_workloads() {
    let dir = tempfile::tempdir().unwrap();
    for extra in [
        &[
            "--goals",
            "120",
            "--universe",
            "800",
            "--depth",
            "60",
            "--ties",
            "0.4",
            "--graded",
            "--empty-share",
            "0.2",
        ][..],
        &[
            "--goals",
            "40",
            "--universe",
            "300",
            "--full",
            "--ties",
            "0.1",
            "--seed",
            "9",
        ][..],
    ] {
        let (q, r) = gen_trec(dir.path(), extra);
        let actual = ActualSets::read_path(&q).unwrap();
        let store = dir.path().join("g.store");
        let mut copt = RankingOptions::default();
        copt.ties = TieMode::Trec;
        copt.duplicates = DuplicateMode::First;
        convert(&actual, lemma_ingest::open(&r).unwrap(), &copt, &store).unwrap();
        let s = Store::open(&store).unwrap();
        s.verify().unwrap();
        let (want_rows, want) = text_eval(&actual, &r, &opts(2));
        for threads in [1, 2, 5] {
            let (rows, got) = full_eval(&actual, &Source::Store(&s), &opts(threads));
            assert_eq!(got, want, "summary, {threads} threads");
            assert_eq!(
                sorted(rows),
                sorted(want_rows.clone()),
                "rows, {threads} threads"
            );
        }
        // The store's own actual sets give the same figures.
        let from_store = s.actual_sets().unwrap();
        let (_, got) = full_eval(&from_store, &Source::Store(&s), &opts(2));
        assert_eq!(got, want);
        // --depth behaves as a cut of the ordered ranking on both paths.
        let mut cut = opts(2);
        cut.ranking.depth = Some(7);
        assert_eq!(
            full_eval(&actual, &Source::Store(&s), &cut).1,
            text_eval(&actual, &r, &cut).1
        );
        // Tie groups read the store's scores (gen's 4-decimal scores are distinct as f32 too):
        // the same figures as the TREC run, and a permutation-free result.
        let mut grouped = opts(2);
        grouped.ranking.ties = TieMode::Group;
        let (rows, got) = full_eval(&actual, &Source::Store(&s), &grouped);
        let (want_rows, want) = text_eval(&actual, &r, &grouped);
        assert_eq!(got, want, "--ties group");
        assert_eq!(sorted(rows), sorted(want_rows), "--ties group rows");
        assert_ne!(want, text_eval(&actual, &r, &opts(2)).1, "the run has ties");
    }
}

/// Writes a matrix as .npy + names, and the same scores as a TREC run.
fn write_dense(
    dir: &Path,
    scores: &[Vec<f32>],
    judged: &[Vec<(usize, i32)>],
) -> (PathBuf, PathBuf, Names, Names) {
    let (rows, cols) = (scores.len(), scores[0].len());
    let npy = dir.join("m.npy");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&npy).unwrap());
    lemma_ingest::write_f32_header(&mut f, rows, cols).unwrap();
    for row in scores {
        for s in row {
            f.write_all(&s.to_le_bytes()).unwrap();
        }
    }
    f.flush().unwrap();
    // Names chosen so that byte order and numeric order differ ("L10" < "L9").
    let lemma_names: Vec<Vec<u8>> = (0..cols).map(|c| format!("L{c}").into_bytes()).collect();
    let lemmas: Names = lemma_names.iter().map(|n| n.as_slice()).collect();
    let goals = Names::from_lines(
        (0..rows)
            .map(|g| format!("q{g}\n"))
            .collect::<String>()
            .as_bytes(),
    );
    let (run, qrels) = (dir.join("m.run"), dir.join("m.qrels"));
    let mut r = std::fs::File::create(&run).unwrap();
    let mut q = std::fs::File::create(&qrels).unwrap();
    for (g, row) in scores.iter().enumerate() {
        for (c, s) in row.iter().enumerate() {
            // An f32 printed as the shortest f64 that parses back to it: exact.
            writeln!(
                r,
                "q{g} Q0 {} {} {} dense",
                String::from_utf8_lossy(&lemma_names[c]),
                c + 1,
                *s as f64
            )
            .unwrap();
        }
        for &(c, grade) in &judged[g] {
            writeln!(
                q,
                "q{g} 0 {} {grade}",
                String::from_utf8_lossy(&lemma_names[c])
            )
            .unwrap();
        }
    }
    (npy, qrels, goals, lemmas)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn dense_matrix_equals_its_trec_export(
        rows in 1usize..6,
        cols in 2usize..300,
        levels in 2u32..40,
        seed in any::<u64>(),
        depth in proptest::option::of(1u64..50),
        group in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut x = seed | 1;
        let mut next = move || { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x };
        // Few distinct score levels: many ties, broken by name.
        let scores: Vec<Vec<f32>> = (0..rows).map(|_| (0..cols).map(|_| (next() % levels as u64) as f32 / levels as f32).collect()).collect();
        let judged: Vec<Vec<(usize, i32)>> = (0..rows).map(|_| {
            let mut v: Vec<(usize, i32)> = (0..1 + next() as usize % 6).map(|_| (next() as usize % cols, (next() % 4) as i32)).collect();
            v.sort_by_key(|e| e.0);
            v.dedup_by_key(|e| e.0);
            v
        }).collect();
        // Some judged lemmas score above every other lemma (as relevant lemmas tend to): the blocks
        // below them are skipped by the counting pass, which must not change any rank.
        let mut scores = scores;
        for (g, js) in judged.iter().enumerate() {
            for &(c, _) in js {
                if next() % 2 == 0 {
                    scores[g][c] += 1.0 + (next() % 3) as f32;
                }
            }
        }
        let (npy, qrels, goals, lemmas) = write_dense(dir.path(), &scores, &judged);
        let actual = ActualSets::read_path(&qrels).unwrap();
        let m = Matrix::open(&npy).unwrap();
        let mut o = opts(2);
        o.measures.push(Measure::AUC);
        o.universe = Some(cols as u64);
        o.ranking.depth = depth;
        if group {
            // Tie groups: no depth (one that cuts a group holding a judged lemma is an error for
            // a matrix, whose items have no order inside a group).
            o.ranking.ties = TieMode::Group;
            o.ranking.depth = None;
        }
        let dense = full_eval(&actual, &Source::Dense { matrix: &m, goals: &goals, lemmas: &lemmas }, &o);
        let text = text_eval(&actual, &dir.path().join("m.run"), &o);
        prop_assert_eq!(&dense.1, &text.1);
        prop_assert_eq!(sorted(dense.0), sorted(text.0));
    }
}

#[test]
fn corrupt_store_and_bad_matrix_fail_clearly_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let fx = |p: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures")
            .join(p)
    };
    let store = dir.path().join("seed.store");
    let st = Command::new(bin())
        .args([
            "convert",
            fx("seed/qrels.txt").to_str().unwrap(),
            fx("seed/run.txt").to_str().unwrap(),
            "-o",
        ])
        .arg(&store)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let bytes = std::fs::read(&store).unwrap();
    let bad = dir.path().join("bad.store");
    for (cut, want) in [
        (bytes.len() - 7, "does not fit"),
        (300, "does not fit"),
        (100, "shorter than the 256-byte header"),
    ] {
        std::fs::write(&bad, &bytes[..cut]).unwrap();
        let o = Command::new(bin())
            .args(["eval", fx("seed/qrels.txt").to_str().unwrap()])
            .arg(&bad)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("bad.store: corrupt or truncated store") && err.contains(want),
            "{err}"
        );
        assert!(!err.contains("panicked"));
    }
    let mut flipped = bytes.clone();
    flipped[300] ^= 0xff; // inside the ranking blocks: open succeeds, verify names it
    std::fs::write(&bad, &flipped).unwrap();
    let o = Command::new(bin())
        .arg("verify")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("ranking blocks checksum mismatch"));
    // A matrix of the wrong dtype, and one without names.
    let npy = dir.path().join("i.npy");
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    let mut h = "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2), }".to_string();
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    b.extend_from_slice(&(h.len() as u16).to_le_bytes());
    b.extend_from_slice(h.as_bytes());
    b.extend_from_slice(&[0u8; 16]);
    std::fs::write(&npy, &b).unwrap();
    let o = Command::new(bin())
        .args(["eval", fx("seed/qrels.txt").to_str().unwrap()])
        .arg(&npy)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("dtype <i8, expected"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // A name given to two rows (the goal was evaluated twice, counted twice in the mean) or to
    // two columns: an error naming the matrix, the name and both places.
    let m = dir.path().join("m.npy");
    let mut f = std::fs::File::create(&m).unwrap();
    lemma_ingest::write_f32_header(&mut f, 2, 3).unwrap();
    for s in [0.1f32, 0.9, 0.5, 0.3, 0.2, 0.1] {
        f.write_all(&s.to_le_bytes()).unwrap();
    }
    drop(f);
    let q = dir.path().join("q.txt");
    std::fs::write(&q, "g1 0 l1 1\ng2 0 l0 1\n").unwrap();
    let names = |n: &str, text: &str| {
        let p = dir.path().join(n);
        std::fs::write(&p, text).unwrap();
        p
    };
    let (g, gdup) = (names("g", "g1\ng2\n"), names("gdup", "g1\ng1\n"));
    let (l, ldup) = (names("l", "l0\nl1\nl2\n"), names("ldup", "l0\nl1\nl1\n"));
    for (goals, lemmas, want) in [
        (
            &gdup,
            &l,
            "m.npy: `g1` names row 1 and row 2: each row needs a name of its own",
        ),
        (
            &g,
            &ldup,
            "m.npy: `l1` names column 2 and column 3: each column needs a name of its own",
        ),
    ] {
        let o = Command::new(bin())
            .arg("eval")
            .args([&q, &m])
            .arg("--goal-names")
            .arg(goals)
            .arg("--lemma-names")
            .arg(lemmas)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        assert!(o.stdout.is_empty());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{err}");
    }
    // A goal's error found while the rows are ranked names the matrix too (a tie group that
    // --depth cuts).
    let m = dir.path().join("tied.npy");
    let mut f = std::fs::File::create(&m).unwrap();
    lemma_ingest::write_f32_header(&mut f, 2, 3).unwrap();
    for _ in 0..6 {
        f.write_all(&0.5f32.to_le_bytes()).unwrap();
    }
    drop(f);
    let o = Command::new(bin())
        .arg("eval")
        .args([&q, &m])
        .arg("--goal-names")
        .arg(&g)
        .arg("--lemma-names")
        .arg(&l)
        .args(["--ties", "group", "--depth", "1", "-m", "RR"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("tied.npy: goal `g"), "{err}");
}

#[test]
fn generated_jsonl_evaluates_like_generated_trec() {
    let dir = tempfile::tempdir().unwrap();
    let common = [
        "--goals",
        "60",
        "--universe",
        "500",
        "--depth",
        "40",
        "--ties",
        "0.3",
        "--graded",
        "--seed",
        "3",
    ];
    let run = |args: &[&str]| {
        let o = Command::new(bin()).args(args).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    run(&[
        &["gen", "--qrels", &p("q.txt"), "--run", &p("r.txt")][..],
        &common,
    ]
    .concat());
    run(&[
        &[
            "gen",
            "--format",
            "jsonl",
            "--qrels",
            &p("a.jsonl"),
            "--run",
            &p("p.jsonl"),
        ][..],
        &common,
    ]
    .concat());
    let m = [
        "-m",
        "AP",
        "-m",
        "nDCG@10",
        "-m",
        "Bpref",
        "-m",
        "P@5",
        "--per-goal",
        "--format",
        "tsv",
        "--quiet",
    ];
    let trec = run(&[&["eval", &p("q.txt"), &p("r.txt")][..], &m].concat());
    let jsonl = run(&[&["eval", &p("a.jsonl"), &p("p.jsonl")][..], &m].concat());
    assert_eq!(jsonl, trec);
    assert!(trec.lines().count() > 100);
}

/// A store scan stops once every judged lemma has its rank: what follows (a repeated judged id, an
/// id beyond the lemma table) is never read and changes nothing; before that point a bad id is an
/// error naming its rank. Both scan paths: at most 16 judged lemmas (packed compares) and more (a
/// bitset).
#[test]
fn store_scan_stops_once_every_judged_lemma_is_ranked() {
    let dir = tempfile::tempdir().unwrap();
    let mut lemmas = lemma_ingest::Interner::new();
    for i in 0..3000 {
        lemmas.intern(format!("L{i}").as_bytes());
    }
    let p = dir.path().join("s.store");
    let mut w = lemma_ingest::StoreWriter::create(&p, false).unwrap();
    let base: Vec<u32> = (100..400).collect(); // 300 non-judged ids
                                               // a: judged 7 and 9 at ranks 5 and 70; then a repeat of 7 and an id beyond the table.
    let mut a = base.clone();
    (a[4], a[69], a[200], a[250]) = (7, 9, 7, 5000);
    w.add_goal(b"a", Some((&a, None)), Some(&[(7, 1), (9, 1)]))
        .unwrap();
    // c: 20 judged ids, all relevant, at ranks 1..=20; then a repeat and an id beyond the table.
    let judged_c: Vec<(u32, i32)> = (0..20).map(|i| (1000 + i, 1)).collect();
    let mut c = base.clone();
    for (k, &(id, _)) in judged_c.iter().enumerate() {
        c[k] = id;
    }
    (c[100], c[101]) = (1000, 5000);
    w.add_goal(b"c", Some((&c, None)), Some(&judged_c)).unwrap();
    w.finish(&lemmas).unwrap();
    let store = Store::open(&p).unwrap();
    let actual = store.actual_sets().unwrap();
    let mut o = opts(1);
    o.measures = Measure::parse_all(["AP", "NumRet", "NumRelRet"]).unwrap();
    let (rows, _) = full_eval(&actual, &Source::Store(&store), &o);
    let values: Vec<(&[u8], Vec<f64>)> = rows
        .iter()
        .map(|r| {
            (
                r.goal.as_slice(),
                r.values.iter().map(|v| v.unwrap()).collect(),
            )
        })
        .collect();
    // AP(a) = (1/5 + 2/70) / 2; AP(c) = 1.
    assert_eq!(
        values,
        [
            (&b"a"[..], vec![(1.0 / 5.0 + 2.0 / 70.0) / 2.0, 300.0, 2.0]),
            (&b"c"[..], vec![1.0, 300.0, 20.0]),
        ]
    );

    // The bad id before the last judged lemma: an error naming the goal and the rank.
    for judged in [vec![(7u32, 1), (9, 1)], judged_c.clone()] {
        let p = dir.path().join("bad.store");
        let mut w = lemma_ingest::StoreWriter::create(&p, false).unwrap();
        let mut b = base.clone();
        b[4] = 7;
        b[150] = judged[1].0;
        b[100] = 5000;
        w.add_goal(b"b", Some((&b, None)), Some(&judged)).unwrap();
        w.finish(&lemmas).unwrap();
        let store = Store::open(&p).unwrap();
        let actual = store.actual_sets().unwrap();
        let e = evaluate_full(&actual, &Source::Store(&store), &o, &mut SummaryOnly)
            .map(|_| ())
            .expect_err("an id beyond the lemma table")
            .to_string();
        assert!(
            e.contains("goal `b`") && e.contains("rank 101 holds lemma id 5000"),
            "{e}"
        );
    }
}

#[test]
fn tie_groups_and_thresholds_on_stores_fail_or_work_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let gen = |extra: &[&str], store: &str| {
        let mut args = vec![
            "gen",
            "--format",
            "store",
            "--goals",
            "20",
            "--universe",
            "200",
            "--full",
            "--seed",
            "3",
            "--qrels",
        ];
        let q = d.join(format!("{store}.qrels"));
        let s = d.join(store);
        args.push(q.to_str().unwrap());
        args.push("--run");
        args.push(s.to_str().unwrap());
        args.extend_from_slice(extra);
        assert!(Command::new(bin()).args(&args).status().unwrap().success());
        (q, s)
    };
    let eval = |q: &Path, s: &Path, extra: &[&str]| {
        Command::new(bin())
            .args(["eval", q.to_str().unwrap(), s.to_str().unwrap(), "--quiet"])
            .args(["--format", "tsv"])
            .args(extra)
            .output()
            .unwrap()
    };
    // Without scores, tie groups cannot be formed.
    let (q, s) = gen(&[], "plain.store");
    let o = eval(&q, &s, &["--ties", "group", "-m", "AP"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--ties group needs the store's scores"));
    // With scores they work; thresholds are refused by name, not answered with zeros.
    let (q, s) = gen(&["--scores"], "scored.store");
    let o = eval(&q, &s, &["--ties", "group", "-m", "AP", "-m", "RR"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = eval(&q, &s, &["-m", "SetP(threshold=0.5)"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("score thresholds"));
}
