//! # lemma-eval: evaluate ranked premise predictions against the truth, as a library
//!
//! The engine behind the `lemma-eval` command, without its command line. It wires the ingest
//! crate (formats, no measures) to the accumulator crate (measures, no I/O). Three ways in, one
//! engine behind them (the command and the Python package take the same ones):
//!
//! - **Whole inputs**: a [`Job`] takes the actual sets and the predictions as they come (paths of
//!   any kind, shards of a file, predictions already opened) and chooses how to read them: sorted
//!   qrels along a TREC run a few goals at a time, or the actual sets held ([`ActualRead`] says
//!   which). TREC runs and JSONL are streamed in batches of whole goals on worker threads
//!   ([`text`]), binary stores and dense `.npy` matrices evaluated on all cores ([`full`]).
//!   Per-goal rows go to a [`Sink`], in order; the exact summary comes back, and a [`Partial`]
//!   that merges with other shards' when asked for.
//! - **Pushed goals**: a [`Session`] (from [`Evaluator::session`]) takes one goal's ranking at a
//!   time (names, scored pairs, ids, or rows of a score matrix) and answers with its values at
//!   once; sessions merge, and travel as [`Partial`]s.
//! - **Async** (cargo feature `async`): `aio::Pool` evaluates goals pushed from async tasks on
//!   worker threads of its own, rows coming back as a `Stream`; `aio::evaluate_read` reads any
//!   tokio `AsyncRead` through the same [`Job`].
//!
//! [`Evaluator`] (built by [`EvaluatorBuilder`]) holds the options (and, held, the actual sets);
//! [`compare`] evaluates several runs and tests their differences (`lemma-eval compare`);
//! [`output`] writes `table`, `tsv`, `json` and `trec`; [`convert`] writes binary stores; [`trec`]
//! reproduces trec_eval's `-m` rules and output. Every path runs its threads through
//! [`lemma_par`] (the async pool aside: the `aio` module's documentation says why).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use lemma_eval::{Evaluator, GoalRow, Predictions};
//! # let dir = tempfile::tempdir()?;
//! # let (qrels, run) = (dir.path().join("qrels"), dir.path().join("run"));
//! # std::fs::write(&qrels, "g1 0 a 1\ng2 0 b 1\n")?;
//! # std::fs::write(&run, "g1 Q0 a 1 0.9 t\ng1 Q0 b 2 0.8 t\ng2 Q0 a 1 0.9 t\ng2 Q0 b 2 0.8 t\n")?;
//! let evaluator = Evaluator::builder().measure_names(["RR", "P@1"])?.build_from_path(&qrels)?;
//! let mut rows: Vec<GoalRow> = Vec::new();
//! let done = evaluator.evaluate(Predictions::open(&run, None, false)?, &mut rows)?;
//! assert_eq!(rows[1].values, [Some(0.5), Some(0.0)]); // g2: b at rank 2
//! assert_eq!(done.summary.aggregates()[0].1.headline(), Some(0.75)); // mean RR
//! # Ok(()) }
//! ```

#![deny(missing_docs)]

#[cfg(feature = "async")]
pub mod aio;
pub mod compare;
pub mod convert;
pub mod curve;
mod evaluator;
mod feed;
pub mod full;
pub mod group;
pub mod job;
pub mod join;
mod options;
mod outcome;
pub mod output;
mod partial;
pub mod pooled;
pub mod premise;
mod ranking;
mod seen;
mod session;
mod sink;
pub mod strata;
pub mod text;
pub mod trec;
mod trec_goals;
mod trec_jg;
mod trec_prefs;
mod unknown;
pub mod values;

pub use evaluator::{
    read_actual, read_actual_with_threads, read_actual_within, Evaluation, Evaluator,
    EvaluatorBuilder, InputKind, MatrixNames, Predictions, DEFAULT_MEASURES,
};

pub use group::{GroupBy, GroupReport};
pub use job::{ActualInput, ActualRead, Job, OpenJob, Outcome, PredictedInput};
pub use strata::{Strata, StrataReport, StrataSources};

pub use options::{
    check_threads, default_threads, parse_size, plan_for, Choice, DuplicateMode, EvalOptions,
    MissingMode, OrderMode, RankingOptions, TieMode, ZeroRelMode, MAX_THREADS,
};

pub use outcome::{EvalError, GoalRow, Report};
pub use partial::{
    LackingShards, Partial, PartialError, PartialMerger, PredictionsFile, MAGIC as SUMMARY_MAGIC,
    VERSION as SUMMARY_VERSION,
};
pub use premise::{MaskMode, PremiseOptions, PremiseReport, Premises};
pub use session::{DenseLemmas, Pushed, Session, MAX_LEMMA_IDS};
pub use sink::{RowFn, Sink, SummaryOnly};

/// README.md's Rust examples, compiled and run as doc tests (one uses the `async` feature, which
/// the workspace's test build enables through the command's dev-dependencies).
#[cfg(all(doctest, feature = "async"))]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
