//! The command's tests, one binary: each module is one subject (what its own documentation
//! says), sharing `common`. The fault and kill suites (`tests/faults.rs`, `tests/kills.rs`), which
//! measure the process's memory and time, and `tests/async_drop.rs`, which counts its threads,
//! are binaries of their own.

mod common;

mod async_api;
mod async_push;
mod async_rows;
mod compare;
mod compare_values;
mod curve;
mod doors;
mod fixtures;
mod full;
mod group;
mod merge;
mod outputs;
mod pipes;
mod premise;
mod robust;
mod spill;
mod strata;
mod trec_arith;
mod trec_flags;
mod trec_jg;
mod trec_prefs;
mod trec_zscores;
