//! Helpers shared by the integration tests.

// The command's tests (crates/cli/tests/cli/full.rs) compile it too and use a part of it.
#![allow(dead_code)]

use lemma_eval::text::evaluate;
use lemma_eval::{EvalOptions, GoalRow, Report};
use lemma_ingest::ActualSets;
use std::path::Path;

/// A text run's per-goal rows and its summary's debug form, for exact comparison.
pub fn text_eval(actual: &ActualSets, run: &Path, o: &EvalOptions) -> (Vec<GoalRow>, String) {
    let (rows, summary, _) = text_eval_report(actual, run, o);
    (rows, summary)
}

/// [`text_eval`] and the evaluation's report (lines, duplicates dropped, ...).
pub fn text_eval_report(
    actual: &ActualSets,
    run: &Path,
    o: &EvalOptions,
) -> (Vec<GoalRow>, String, Report) {
    let mut rows: Vec<GoalRow> = Vec::new();
    let (s, report) =
        evaluate(actual, lemma_ingest::open(run).unwrap(), o, &mut rows, None).unwrap();
    let summary = format!("{:?} {:?}", s.aggregates(), s.counts());
    (rows, summary, report)
}
