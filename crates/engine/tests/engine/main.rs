//! The engine's tests, one binary: each module is one subject (what its own documentation says),
//! sharing `common`.

mod common;

mod batches;
mod curves;
mod join;
mod jsonl_names;
mod pooled;
mod premise;
mod push;
mod score_text;
mod shards;
mod strata;
