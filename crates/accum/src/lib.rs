//! # lemma-accum: ranked-retrieval measures, streamed
//!
//! This crate turns one goal's ranked items, arriving one at a time, into every per-goal measure of
//! lemma-eval's METRICS.md (precision and recall at cutoffs, AP and its cutoff variants, R-precision,
//! depth and precision at recall levels, interpolated precision, RR, F/E, set measures, nDCG, Bpref,
//! AUC, counts) **without keeping the ranking**, and merges per-goal values into exact summaries. It
//! does no I/O and knows no file format: the `lemma-ingest` crate parses inputs, the `lemma-eval`
//! binary wires the two.
//!
//! ```
//! use lemma_accum::{GoalAccumulator, Label, Measure, Plan, Config, Summary, Truth};
//! use std::sync::Arc;
//!
//! let measures = Measure::parse_all(["AP", "P@2", "Rprec", "Depth(recall=1.0)"]).unwrap();
//! let plan = Arc::new(Plan::new(&measures, Config::default()));
//! let mut acc = GoalAccumulator::new(plan.clone());
//! let mut summary = Summary::new(&plan);
//!
//! // The ranking `x a y b c z` with actual set {a, b, c} (METRICS.md §7).
//! acc.begin(&Truth::binary(3, 0));
//! for relevant in [false, true, false, true, true, false] {
//!     acc.push(if relevant { Label::judged(1) } else { Label::UNJUDGED });
//! }
//! let values = acc.finish().unwrap();
//! assert!((values.get(&measures[0]).unwrap() - 1.6 / 3.0).abs() < 1e-15);
//! assert_eq!(values.get(&measures[3]), Some(5.0));
//! summary.add(b"g1", &values);
//! ```
//!
//! ## Measures
//!
//! Each kind of [`Measure`] is declared once, in its family's file under `src/measures/` (after
//! trec_eval's `m_*.c`): its names, definition, trec_eval names, aggregation, what it reads from
//! the accumulator, and its tests. The parsers, `Display`, [`Measure::trec_name`], the `-m` help
//! ([`Measure::help_text`]), trec_eval's table and `-m` rules ([`trec`]) and the plan are derived
//! from those declarations. [`Measure::kinds`] lists them.
//!
//! ## Costs
//!
//! * An unjudged item costs one increment ([`GoalAccumulator::push`]); a run of them costs O(1)
//!   ([`GoalAccumulator::push_unjudged`]) or a scan for the next judged label
//!   ([`GoalAccumulator::push_labels`]).
//! * A judged item costs O(cutoffs passed + recall levels): it records the cutoffs the ranking
//!   crossed since the previous judged item, then updates the running sums.
//! * Memory per accumulator: O(cutoffs + recall levels + thresholds), independent of the ranking.
//! * A goal known only by the ranks of its judged items ([`GoalAccumulator::evaluate_ranks`], the
//!   dense-matrix path) costs O(judged), not O(n).
//! * [`Summary::add`] costs one exact addition per measure ([`ExactSum`]); merges are exact.

mod exact;
mod goal;
mod lists;
mod measure;
mod measures;
mod order;
mod plan;
mod pooled;
pub mod prefs;
mod summary;
pub mod trec;
mod trec_sum;
mod walk;

pub use exact::ExactSum;
pub use goal::{GoalAccumulator, GoalError, GoalValues, Label, Truth};
pub use lists::{Gains, Levels};
pub use measure::{
    Aggregation, ApNorm, Level, Measure, MeasureError, MeasureKind, Origin, RecallNorm, Syntax,
    TREC_CUTOFFS, TREC_SUCCESS_CUTOFFS,
};
pub use measures::{relstring_chunks, relstring_text};
pub use order::{trec_cmp, OutOfOrder, TrecOrder};
pub use plan::{Config, Interpolation, Plan, Ties};
pub use pooled::{
    ap_error_bound, equal_count, key_to_score, merge_runs, score_key, Bin, CurvePoint, CurveRow,
    CurveRows, CurveStats, Group, PooledCurve, PooledSpec, Run, SpillRuns,
};
pub use summary::{
    Aggregate, GoalCounts, GoalFate, Grouping, MergeError, Placed, Stratifier, Summary,
    SummaryState, GM_AP_FLOOR,
};
pub use trec_sum::{trec_stored, zscore, TrecAdder, TrecRules, TrecSum, MISSING_ZSCORE};
