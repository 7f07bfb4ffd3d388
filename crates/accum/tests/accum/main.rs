//! The accumulator's tests, one binary: each module is one subject (what its own documentation
//! says); `trec_reference` is the slow reference two of them share.

mod trec_reference;

mod pooled;
mod properties;
mod ties_reference;
mod worked_examples;
