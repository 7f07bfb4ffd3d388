//! A JSONL prediction file ranks as the same rankings written as TREC lines.
//!
//! The worker reads a record of the common shape by copying the line's names region whole (from
//! the first name to the last one's closing quote, each closing quote made a newline) and pointing
//! its items into that copy; any other record goes through serde. Random rankings drawn from names
//! that are prefixes of one another (`a`, `ab`, `a.b`, ...), multi-byte names, long names and
//! repeated lemmas, longer than the duplicate table's first size, are written as JSONL (names as
//! strings, as `full_name` objects with or without other keys, or mixed in one record; compact or
//! spaced; some records with keys the scanner skips, some with an escape, which sends them to
//! serde) and as TREC lines with falling scores. Every per-goal value
//! and the summary (duplicates counted) must be equal.

use crate::common;
use lemma_accum::Measure;

use common::text_eval_report;
use lemma_eval::{EvalOptions, GoalRow};
use lemma_ingest::ActualSets;
use proptest::prelude::*;
use std::fmt::Write as _;
use std::path::Path;

/// The per-goal rows, the summary's debug form and the duplicates dropped.
fn text_eval(actual: &ActualSets, run: &Path, o: &EvalOptions) -> (Vec<GoalRow>, String, u64) {
    let (rows, summary, report) = text_eval_report(actual, run, o);
    (rows, summary, report.duplicates_dropped)
}

/// Names that are prefixes of one another, multi-byte, long, or alike but for their last byte.
fn name(i: u8) -> String {
    const FIXED: &[&str] = &[
        "a",
        "ab",
        "a.b",
        "ab.c",
        "abc",
        "b",
        "λ",
        "λx",
        "Nat.add",
        "Nat.add_comm",
        "Nat.add_comm'",
        "Nat.add_comm''",
    ];
    match FIXED.get(i as usize) {
        Some(n) => n.to_string(),
        None if i % 5 == 0 => format!("Mathlib.Algebra.Group.Basic.mul_left_cancel_{i}"),
        None => format!("L{i}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn jsonl_records_rank_as_trec_lines(
        goals in prop::collection::vec(
            (
                // (lemma, how it is written)
                prop::collection::vec((0u8..60, 0u8..4), 1..70),
                prop::collection::vec(0u8..60, 0..12),
                any::<bool>(),
                any::<bool>(),
                0u8..3,
            ),
            1..6,
        ),
        threads in 1usize..3,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let (mut qrels, mut trec, mut jsonl) = (String::new(), String::new(), String::new());
        for (g, (items, judged, spaced, scored, extra)) in goals.iter().enumerate() {
            let judged: std::collections::BTreeSet<u8> = judged.iter().copied().collect();
            for l in &judged {
                writeln!(qrels, "g{g} 0 {} {}", name(*l), 1 + l % 3).unwrap();
            }
            if judged.is_empty() {
                writeln!(qrels, "g{g} 0 none 1").unwrap();
            }
            let sep = if *spaced { ", " } else { "," };
            let names: Vec<String> = (items.iter())
                .map(|&(l, style)| match style {
                    0 => format!("\"{}\"", name(l)),
                    1 => format!("{{\"full_name\":\"{}\"}}", name(l)),
                    2 => format!("{{ \"full_name\" : \"{}\" }}", name(l)),
                    // LeanDojo's premise with its other keys (skipped).
                    _ => format!(
                        "{{\"path\":\"Mathlib/A.lean\",\"full_name\":\"{}\",\"start\":[1,2],\"code\":\"theorem x : 1 = 1\"}}",
                        name(l)
                    ),
                })
                .collect();
            let n = items.len();
            let scores: Vec<String> = (0..n).map(|r| format!("{}", (n - r) as f64 / 4.0)).collect();
            let mut record = format!("{{\"goal_id\":\"g{g}\"{sep}\"ranked\":[{}]", names.join(sep));
            if *scored {
                write!(record, "{sep}\"scores\":[{}]", scores.join(sep)).unwrap();
            }
            match extra {
                // Keys the scanner skips.
                1 => record.push_str(",\"split\":\"test\",\"meta\":{\"k\":[1,2.5,null]}"),
                // An escape: the record is serde's to read.
                2 => record.push_str(",\"split\":\"te\\u0073t\""),
                _ => {}
            }
            writeln!(jsonl, "{record}}}").unwrap();
            for (r, &(l, _)) in items.iter().enumerate() {
                writeln!(trec, "g{g} Q0 {} {r} {} run", name(l), scores[r]).unwrap();
            }
        }
        let q = dir.path().join("q");
        std::fs::write(&q, &qrels).unwrap();
        let (t, j) = (dir.path().join("run.txt"), dir.path().join("run.jsonl"));
        std::fs::write(&t, &trec).unwrap();
        std::fs::write(&j, &jsonl).unwrap();
        let actual = ActualSets::read_path(&q).unwrap();
        let mut o = EvalOptions::default();
        o.measures = Measure::parse_all(
            ["AP", "P@5", "R@10", "Rprec", "RR", "nDCG", "nDCG@10", "Bpref", "NumRet", "NumRelRet"]
        ).unwrap();
        o.threads = threads;
        let trec = text_eval(&actual, &t, &o);
        let jsonl = text_eval(&actual, &j, &o);
        prop_assert_eq!(trec, jsonl);
    }
}

/// A worked example: the judged lemmas `a.b` and `ab` behind their prefixes and a repeat (the
/// same lemma once as an object, once as a string) are found at ranks 3 and 4.
#[test]
fn prefixes_and_a_repeat_as_object_and_string() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q");
    std::fs::write(&q, "g 0 a.b 1\ng 0 ab 1\n").unwrap();
    let j = dir.path().join("p.jsonl");
    std::fs::write(
        &j,
        r#"{"goal_id":"g","ranked":["a",{"full_name":"a"},"a.",{"full_name":"a.b"},"ab","a.b"]}"#,
    )
    .unwrap();
    let actual = ActualSets::read_path(&q).unwrap();
    let mut o = EvalOptions::default();
    o.measures = Measure::parse_all(["AP", "RR", "NumRet"]).unwrap();
    o.threads = 1;
    let (rows, summary, dropped) = text_eval(&actual, &j, &o);
    assert_eq!(dropped, 2);
    // Ranked after dropping the two repeats: a, a., a.b, ab. AP = (1/3 + 2/4) / 2 = 5/12.
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].goal, b"g");
    let v: Vec<f64> = rows[0].values.iter().map(|v| v.unwrap()).collect();
    assert!((v[0] - 5.0 / 12.0).abs() < 1e-15, "{v:?}");
    assert_eq!(v[1], 1.0 / 3.0);
    assert_eq!(v[2], 4.0);
    assert!(summary.contains("evaluated: 1"), "{summary}");
}
