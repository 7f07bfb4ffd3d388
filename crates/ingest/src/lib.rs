//! # lemma-ingest (placeholder until issue 3)
