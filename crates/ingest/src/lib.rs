//! # lemma-ingest: lemma-eval's inputs, read in bounded memory
//!
//! This crate knows file formats and nothing of measures. It opens inputs (plain, gzip, zstd,
//! stdin), sniffs TREC or JSONL, reads actual sets into sorted arrays of interned lemma ids
//! ([`ActualSets`]), parses run lines and JSONL prediction records without allocating per TREC
//! line, and cuts prediction files into batches of whole goals ([`BatchReader`]) so that workers
//! can evaluate goals in parallel while memory stays at the batch size plus the largest goal.
//! Full-library rankings live in a memory-mapped binary store ([`Store`], [`StoreWriter`]) or in
//! dense `.npy` score matrices ([`Matrix`]), both read zero-copy.
//! Every error names the file, the line, the byte offset and what was expected ([`InputError`]).
//!
//! Costs: a TREC run line is split in one pass over its bytes (a line of single-space-separated
//! fields by bit arithmetic on one 64-byte window, [`split_run_at`]); its lemma is hashed once
//! ([`Interner::hash`]) and looked up in the interner (only names of actual sets are interned), then
//! in the goal's bitmap when the interner knows it. A score need not be parsed: while a run's
//! scores keep one printed shape, [`ScoreText`] orders the next against the last by one 16-byte
//! compare, exactly as the parsed doubles would be ordered.

mod corpus;
mod error;
mod goal_lines;
mod goals;
mod groups;
mod input;
mod mapped;
mod names;
mod npy;
mod parse;
mod prefs;
mod qrels_jg;
mod shard;
mod sorted;
mod spill;
mod store;
mod truth;
mod zscores;

// The parsers under their own names too (`crate::fields`, ...): what reads them says what it reads.
use parse::{fields, jsonl, run};

pub use corpus::{
    Corpus, Found, Origin, Place, Pos, PremiseIndex, Skipped, MAX_CORPUS_FILES, MAX_CORPUS_LINE,
};
pub use error::{ErrorKind, InputError};
pub use fields::{first_field, parse_score, show, ScoreText};
pub use goal_lines::{GoalBlock, GoalLines};
pub use goals::{GoalPlace, GoalPlaces};
pub use groups::GoalGroups;
pub use input::{
    first_goal, from_chunks, from_reader, last_goal, open, open_file, open_with, read_once, Batch,
    BatchReader, ChunkSource, Compression, Format, GoalKey, Input, Next, Source, RELEASE_EVERY,
};
pub use jsonl::{scan_prediction, RecordSpans, Span};
pub use mapped::describe_fault;
pub use names::Names;
pub use npy::{write_f32_header, Dtype, Matrix, Row, RowBuf};
pub use parse::order::GoalOrder;
pub use prefs::{parse_prefs_line, PrefLine, PrefsFormat};
pub use qrels_jg::JudgmentGroups;
pub use run::{
    parse_prediction_general, parse_prediction_line, parse_prediction_unscored, parse_run_at,
    parse_run_line, score_error, split_run_at, visit_run_lines, Prediction, RunFields, RunLine,
    RunLineVisitor, Step, VisitedLine,
};
pub use shard::{open_shard, shift_error};
pub use sorted::SortedQrels;
pub use spill::{
    binary_size, descriptor_fan_in, group_by_goal, Grouped, LineMap, SpillOptions, SpillReport,
    DEFAULT_MEMORY,
};
pub use store::{
    Store, StoreRanking, StoreTies, StoreWriter, MAGIC as STORE_MAGIC, VERSION as STORE_VERSION,
};
pub use truth::{ActualSets, GoalTruth, Interner, PushGoalError};
pub use zscores::{GoalZScores, ZScores};

/// Byte-level helpers for code that works on a batch's bytes directly (the engine's duplicate
/// table): what ends a field, where it ends, equality, the lemma hash.
pub mod bytes {
    pub use crate::fields::first_field;
    pub use crate::fields::{
        is_delim, is_space, next_delim, prefetch, same_bytes, starts_with_field,
    };
    pub use crate::truth::name_hash;
}

/// The steps of the fingerprints that summary and values files record (docs/FORMAT.md): the
/// same on every machine.
pub mod fingerprint {
    /// Mixes `x` into `h` (a multiply-rotate step: order matters).
    #[inline]
    pub fn mix(h: u64, x: u64) -> u64 {
        (h ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29)
    }

    /// murmur3's final avalanche: terms added together must each be well spread.
    #[inline]
    pub fn fmix(mut h: u64) -> u64 {
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}
