//! Criterion benchmarks of lemma-eval; see `benches/`.
