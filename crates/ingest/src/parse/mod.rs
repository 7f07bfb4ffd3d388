//! The formats' grammars as functions over bytes: no I/O, no allocation per TREC line, each
//! usable (and fuzzable) alone. Opening, decompressing, mapping, sharding and spilling inputs is
//! [`crate::input`]'s, [`crate::shard`]'s and [`crate::spill`]'s; holding actual sets is
//! [`crate::truth`]'s.
//!
//! - [`fields`]: a line's fields, scores ([`crate::ScoreText`]), the 64-byte bitmaps of
//!   delimiters and newlines;
//! - [`run`]: TREC run lines and prediction records, one at a time;
//! - [`jsonl`]: JSONL records (predictions and actual sets) scanned in one pass;
//! - [`lines`]: lines and goal starts in a buffer of TREC-shaped text;
//! - [`order`]: orders of goal names.

pub(crate) mod fields;
pub(crate) mod jsonl;
pub(crate) mod lines;
pub(crate) mod order;
pub(crate) mod run;
