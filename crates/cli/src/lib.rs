//! # lemma-eval: the command line and the pipeline behind it
//!
//! This crate wires the ingest crate (formats) to the accumulator crate (measures): [`engine`]
//! cuts a predictions file into batches of whole goals, evaluates them on worker threads and merges
//! the exact summaries in file order; [`full`] evaluates binary stores and dense `.npy` matrices on
//! all cores and [`convert`] writes stores; [`output`] writes `table`, `tsv`, `json` and `trec` formats;
//! [`trec`] reproduces trec_eval's `-m` rules and output; [`gen`] writes deterministic workloads. The `lemma-eval` binary is a thin layer of
//! argument parsing over these, and pipeline stages can call [`engine::evaluate`] directly.

pub mod convert;
pub mod engine;
pub mod full;
pub mod gen;
pub mod output;
mod seen;
pub mod trec;

pub use engine::{evaluate, EvalError, EvalOptions, GoalRow, RankingOptions, Report};
