//! The report under the premise protocol (docs/METRICS.md §9), on the hand-built library of
//! `fixtures/premise` (its README): the leak rate, recall by origin, the premise counts and a
//! summary per stratum, worked by hand. Masked, `g1` (at A.lean, relevant a2 in-file, c2 and b1
//! imported) ranks `a2 c1 c2 b1 a1` (unmasked `d1 a2 a3 c1 zz c2 a4 b1 a1`); `g2` (at B.lean,
//! c1 and a1 imported, a1 inaccessible) `c1 b1` (unmasked `a1 c1 b1 d1`); `g3` (at C.lean, c2
//! in-file) `c2 c1`.

use lemma_accum::Aggregate;
use lemma_eval::pooled::PooledSetup;
use lemma_eval::{
    read_actual, Evaluator, EvaluatorBuilder, GroupBy, MaskMode, Predictions, PremiseOptions,
    Premises, Strata, StrataSources,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/premise")
        .join(p)
}

/// The builder with the corpus, `--mask accessible` and `--by file`.
fn builder() -> EvaluatorBuilder {
    let opts = PremiseOptions {
        corpus: fixture("corpus.jsonl"),
        mask: MaskMode::Accessible,
        ..PremiseOptions::default()
    };
    let premises = Premises::load(&opts, Some(&fixture("actual.jsonl"))).unwrap();
    let from = StrataSources {
        actual: Some(fixture("actual.jsonl")),
        goals: None,
        train_premises: None,
        relevance_level: 1,
        strict: false,
    };
    Evaluator::builder()
        .threads(1)
        .premises(Arc::new(premises))
        .strata(Arc::new(Strata::load(&["file".into()], &from).unwrap()))
}

fn report(builder: EvaluatorBuilder) -> lemma_report::RunReport {
    let actual = Arc::new(read_actual(&fixture("actual.jsonl")).unwrap());
    let setup = PooledSetup::exact(1 << 20, 1, std::env::temp_dir());
    let run = Predictions::open(&fixture("run.txt"), None, false).unwrap();
    lemma_report::evaluate_run("run.txt", builder, actual, run, &setup).unwrap()
}

/// `(name, headline, goals it is over)` of each aggregate.
fn figures(table: &[(lemma_accum::Measure, Aggregate)]) -> Vec<(String, Option<f64>, u64)> {
    (table.iter())
        .map(|(m, a)| {
            let over = match *a {
                Aggregate::Depth { reached, .. } | Aggregate::Covered { reached, .. } => reached,
                _ => 3,
            };
            (m.to_string(), a.headline(), over)
        })
        .collect()
}

#[test]
fn leak_rate_origins_counts_and_strata() {
    let r = report(builder());
    let p = r.premises.as_ref().expect("a corpus was given");
    assert!(p.masked);
    let want = [
        // Inaccessible first premises: g1 d1, g2 a1, g3 none.
        ("Leak@1", Some(2.0 / 3.0), 3),
        // g1: d1 a3 zz a4 among its 9; g2: a1 d1; g3 none: (4/10 + 2/10 + 0) / 3.
        ("Leak@10", Some(0.2), 3),
        // Rank 1 for g1 and g2; g3 has none.
        ("LeakRank", Some(1.0), 2),
        // In-file: g1's a2 (rank 1), g3's c2 (rank 1); g2 has none.
        ("R(origin=in-file)@10", Some(1.0), 2),
        // Imported: g1 c2 and b1 (ranks 3, 4) 2/2, g2 c1 of {c1, a1} 1/2; g3 has none.
        ("R(origin=imported)@10", Some(0.75), 2),
    ];
    let got = figures(&p.table);
    assert_eq!(got.len(), want.len());
    for ((m, v, over), (wm, wv, wo)) in got.iter().zip(want) {
        assert_eq!((m.as_str(), *over), (wm, wo));
        assert!((v.unwrap() - wv.unwrap()).abs() < 1e-15, "{m}: {v:?}");
    }
    // Masked: g1 d1 a3 zz a4, g2 a1 d1; zz not in the corpus; g2's a1 not accessible.
    assert_eq!(
        p.counts,
        [
            ("goals", 3),
            ("masked", 6),
            ("not_in_corpus", 1),
            ("goals_in_unlisted_files", 0),
            ("relevant_inaccessible", 1),
            ("goals_past_last_premise", 0)
        ]
    );
    // A stratum per file, each one goal: the table's measures, then the premise measures.
    let labels: Vec<&str> = r.strata.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["file=A.lean", "file=B.lean", "file=C.lean"]);
    let a = &r.strata[0];
    assert_eq!(a.counts.evaluated, 1);
    let a = figures(&a.table);
    assert_eq!(a.len(), 11 + 5);
    let ap = a.iter().find(|f| f.0 == "AP").unwrap().1.unwrap();
    assert!((ap - (1.0 + 2.0 / 3.0 + 3.0 / 4.0) / 3.0).abs() < 1e-15);
    assert_eq!(
        a[11..13],
        [
            ("Leak@1".into(), Some(1.0), 3),
            ("Leak@10".into(), Some(0.4), 3)
        ]
    );
    // B.lean: g2 has no in-file premise (no value, over no goal), c1 of {c1, a1} imported.
    let b = figures(&r.strata[1].table);
    assert_eq!(b[14], ("R(origin=in-file)@10".into(), None, 0));
    assert_eq!(b[15], ("R(origin=imported)@10".into(), Some(0.5), 1));
    // The page shows them.
    let page = lemma_report::Page {
        command: "lemma-eval report".into(),
        inputs: Vec::new(),
        runs: vec![r],
        comparison: None,
    };
    let html = lemma_report::html(&page).unwrap();
    for s in [
        "<h2>Premise selection</h2>",
        "<tr><td>R(origin=imported)@10</td><td>0.7500 (over 2 goals)</td></tr>",
        "<tr><td>predicted premises masked (inaccessible)</td><td>6</td></tr>",
        "<h2>Stratum <code>file=B.lean</code></h2>",
        "<tr><td>R(origin=imported)@10</td><td>0.5000 (over 1 goal)</td></tr>",
        "<tr><td>R(origin=in-file)@10</td><td>–</td></tr>",
    ] {
        assert!(html.contains(s), "{s}");
    }
}

/// Under `--group-by`, the measures with no mean over groups (Depth, LeakRank, the origin
/// measures) are left out, and no Depth histogram is drawn.
#[test]
fn grouped_reports_leave_out_what_has_no_group_mean() {
    let groups = GroupBy::load("file", Some(&fixture("actual.jsonl")), None, false).unwrap();
    let r = report(builder().group_by(Arc::new(groups)));
    let names: Vec<String> = r.table.iter().map(|(m, _)| m.to_string()).collect();
    assert_eq!(names.len(), 10);
    assert!(!names.iter().any(|n| n.starts_with("Depth")));
    let p = figures(&r.premises.unwrap().table);
    let names: Vec<&str> = p.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(names, ["Leak@1", "Leak@10"]);
    assert_eq!((r.depth_hist.len(), r.depth_never), (0, 0));
}
