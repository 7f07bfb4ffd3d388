//! Helpers shared by the integration tests.

use lemma_eval::text::evaluate;
use lemma_eval::{EvalOptions, GoalRow};
use lemma_ingest::ActualSets;
use std::path::Path;

/// A text run's per-goal rows and its summary's debug form, for exact comparison.
pub fn text_eval(actual: &ActualSets, run: &Path, o: &EvalOptions) -> (Vec<GoalRow>, String) {
    let mut rows: Vec<GoalRow> = Vec::new();
    let (s, _) = evaluate(actual, lemma_ingest::open(run).unwrap(), o, &mut rows, None).unwrap();
    (rows, format!("{:?} {:?}", s.aggregates(), s.counts()))
}
