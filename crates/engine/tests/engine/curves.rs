//! `curve`'s library side: [`Curves::compute`] and [`write_curves`] on hand-checked examples.

use lemma_eval::curve::{CurveKind, Curves, RunPoints};
use lemma_eval::output::{write_curves, CurveFormat};
use lemma_eval::{EvalError, Evaluator};
use std::path::PathBuf;
use std::sync::Arc;

/// g1: x a y b c z against {a, b, c} (relevant at ranks 2, 4, 5); g2: a w against {a, q}
/// (recall 1/2 at rank 1, never 1).
fn inputs(dir: &std::path::Path) -> (PathBuf, Vec<(String, PathBuf)>) {
    let q = dir.join("qrels");
    std::fs::write(&q, "g1 0 a 1\ng1 0 b 1\ng1 0 c 1\ng2 0 a 1\ng2 0 q 1\n").unwrap();
    let mut runs = Vec::new();
    for name in ["one", "two"] {
        let r = dir.join(name);
        let mut text = String::new();
        for (i, l) in ["x", "a", "y", "b", "c", "z"].iter().enumerate() {
            text += &format!("g1 Q0 {l} {} {} t\n", i + 1, 1.0 - i as f64 / 10.0);
        }
        text += "g2 Q0 a 1 0.9 t\ng2 Q0 w 2 0.8 t\n";
        std::fs::write(&r, text).unwrap();
        runs.push((name.to_string(), r));
    }
    (q, runs)
}

#[test]
fn a_goal_curve_is_a_row_per_rank_that_finds_a_relevant_lemma() {
    let dir = tempfile::tempdir().unwrap();
    let (q, runs) = inputs(dir.path());
    let actual = Arc::new(lemma_eval::read_actual(&q).unwrap());
    let kind = CurveKind::Goal { goal: "g1".into() };
    let c = Curves::compute(&Evaluator::builder(), actual, &q, &runs[..1], kind).unwrap();
    assert_eq!(c.relevant, 3);
    assert_eq!(c.title(), "goal g1: interpolated precision (3 relevant)");
    let mut tsv = Vec::new();
    write_curves(&mut tsv, &c, CurveFormat::Tsv).unwrap();
    // Precision 1/2, 2/4, 3/5; the best at that recall or beyond is 3/5 throughout.
    let third = 1.0f64 / 3.0;
    let two_thirds = 2.0f64 / 3.0;
    assert_eq!(
        String::from_utf8(tsv).unwrap(),
        format!(
            "rank\trecall\tprecision\tinterpolated_precision\n\
             2\t{third}\t0.5\t0.6\n4\t{two_thirds}\t0.5\t0.6\n5\t1\t0.6\t0.6\n"
        )
    );
    // Drawn as steps: flat from each point back to the last.
    assert_eq!(
        c.series()[0],
        [
            (0.0, 0.6),
            (third, 0.6),
            (third, 0.6),
            (two_thirds, 0.6),
            (two_thirds, 0.6),
            (1.0, 0.6)
        ]
    );
}

#[test]
fn a_macro_curve_is_the_mean_of_interpolated_precision_at_each_level() {
    let dir = tempfile::tempdir().unwrap();
    let (q, runs) = inputs(dir.path());
    let actual = Arc::new(lemma_eval::read_actual(&q).unwrap());
    let kind = CurveKind::Macro { levels: 3 };
    let c = Curves::compute(&Evaluator::builder(), actual, &q, &runs, kind).unwrap();
    // g1: 0.6 at every level; g2: 1 at recall 0 and 1/2, 0 at 1 (never reached).
    let RunPoints::Macro { evaluated, points } = &c.runs[1].points else {
        panic!("a macro curve");
    };
    assert_eq!(*evaluated, 2);
    let got: Vec<(f64, Option<f64>)> = points.iter().map(|p| (p.recall, p.precision)).collect();
    assert_eq!(got, [(0.0, Some(0.8)), (0.5, Some(0.8)), (1.0, Some(0.3))]);
    let mut tsv = Vec::new();
    write_curves(&mut tsv, &c, CurveFormat::Tsv).unwrap();
    assert_eq!(
        String::from_utf8(tsv).unwrap(),
        "run\trecall\tprecision\none\t0\t0.8\none\t0.5\t0.8\none\t1\t0.3\n\
         two\t0\t0.8\ntwo\t0.5\t0.8\ntwo\t1\t0.3\n"
    );
    let mut json = Vec::new();
    write_curves(&mut json, &c, CurveFormat::Json).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(doc["curve"], "macro");
    assert_eq!(doc["levels"], 3);
    assert_eq!(doc["runs"][1]["run"], "two");
    assert_eq!(doc["runs"][1]["goals_evaluated"], 2);
    assert_eq!(doc["runs"][1]["points"][2]["precision"], 0.3);
}

#[test]
fn a_goal_without_a_curve_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (q, runs) = inputs(dir.path());
    let actual = Arc::new(lemma_eval::read_actual(&q).unwrap());
    let kind = CurveKind::Goal { goal: "g9".into() };
    let e = Curves::compute(&Evaluator::builder(), actual.clone(), &q, &runs, kind).unwrap_err();
    assert!(matches!(e, EvalError::Options(_)));
    assert_eq!(
        e.to_string(),
        format!("{}: no goal `g9` in the actual sets", q.display())
    );
    let b = Evaluator::builder().relevance_level(2);
    let kind = CurveKind::Goal { goal: "g1".into() };
    let e = Curves::compute(&b, actual, &q, &runs, kind).unwrap_err();
    assert!(e
        .to_string()
        .contains("goal `g1` has no relevant lemma (R = 0 at relevance level 2)"));
}
