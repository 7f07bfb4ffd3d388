//! The report's figures on the scores_A / scores_B fixture (goals A and B; relevant lemmas l0,
//! l1, l4, l5 of each), worked by hand: the TREC run ranks by score, the JSONL run in file order.

use lemma_eval::pooled::PooledSetup;
use lemma_eval::{read_actual, Evaluator, Predictions};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/pooled")
        .join(p)
}

fn report(run: &str) -> lemma_report::RunReport {
    let actual = Arc::new(read_actual(&fixture("qrels.txt")).unwrap());
    let setup = PooledSetup::exact(1 << 20, 1, std::env::temp_dir());
    lemma_report::evaluate_run(
        run,
        Evaluator::builder().threads(1),
        actual,
        Predictions::open(&fixture(run), None, false).unwrap(),
        &setup,
    )
    .unwrap()
}

#[test]
fn per_goal_distributions_and_pooled_figures() {
    // By score, A ranks its relevant lemmas at 1, 2, 5, 6 (AP (1 + 1 + 3/5 + 4/6) / 4 = 0.82,
    // all found at rank 6); B at 3, 4, 7, 8 (AP (1/3 + 2/4 + 3/7 + 4/8) / 4 = 0.44, rank 8).
    let trec = report("run.txt");
    assert_eq!(trec.ap_hist, [0, 0, 0, 0, 1, 0, 0, 0, 1, 0]);
    assert_eq!(
        (trec.depth_hist.as_slice(), trec.depth_never),
        (&[0, 0, 1, 1][..], 0)
    );
    let table: Vec<(String, Option<f64>)> = (trec.table.iter())
        .map(|(m, a)| (m.to_string(), a.headline()))
        .collect();
    assert_eq!(table.len(), 11);
    assert_eq!(table[6].0, "AP");
    let ap_a = (1.0 + 1.0 + 3.0 / 5.0 + 4.0 / 6.0) / 4.0;
    let ap_b = (1.0 / 3.0 + 0.5 + 3.0 / 7.0 + 0.5) / 4.0;
    assert!((table[6].1.unwrap() - (ap_a + ap_b) / 2.0).abs() < 1e-12);
    assert_eq!(table[10], ("Depth(recall=1.0)".to_string(), Some(7.0)));
    assert_eq!(trec.counts.evaluated, 2);
    // The macro curve: 11 levels from 0 to 1; at recall 1 each goal's precision is its last,
    // 4/6 and 4/8.
    assert_eq!(trec.macro_curve.len(), 11);
    assert_eq!(trec.macro_curve[10].0, 1.0);
    assert!((trec.macro_curve[10].1 - (4.0 / 6.0 + 0.5) / 2.0).abs() < 1e-12);
    // Pooled: the 16 scores of both goals (the curve worked in the CLI's tests).
    let pooled_ap =
        (0.5 + 0.5 + 3.0 / 7.0 + 0.5 + 5.0 / 9.0 + 6.0 / 11.0 + 7.0 / 13.0 + 8.0 / 15.0) / 8.0;
    assert!((trec.pooled_ap - pooled_ap).abs() < 1e-15);
    assert_eq!(trec.distinct_scores, 16);
    let (f1, at) = trec.best_f1.unwrap();
    assert!((f1 - 16.0 / 23.0).abs() < 1e-15 && at == 0.09);
    assert_eq!(trec.pooled_curve.len(), 16);
    assert_eq!(trec.pooled_curve[15], (1.0, 0.5));
    // In file order B finds its relevant lemmas at 1, 2, 5, 6 as A does; the scores, and so the
    // pooled curve, are the same.
    let jsonl = report("predictions.jsonl");
    assert_eq!(jsonl.ap_hist, [0, 0, 0, 0, 0, 0, 0, 0, 2, 0]);
    assert_eq!(jsonl.depth_hist, [0, 0, 2]);
    assert_eq!(jsonl.pooled_ap, trec.pooled_ap);
}
