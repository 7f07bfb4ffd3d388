//! # lemma-tools: workloads and a read-rate probe for lemma-eval's tests and benchmarks
//!
//! [`gen`] writes deterministic premise-selection-like workloads in every input format, and
//! [`gen_corpus`] a LeanDojo-shaped library with goals in its files (the
//! `lemma-eval gen` command); [`read_rate`] measures how fast this machine reads a file, the
//! yardstick of the benchmarks (the hidden `lemma-eval read-rate` command). Neither is part of
//! the evaluation library.

#![deny(missing_docs)]

pub mod gen;
pub mod gen_corpus;

use std::path::Path;

/// How fast a plain pass over `file` runs: the file mapped and summed as little-endian `u32`
/// words on `threads` threads. Returns (bytes, seconds, the sum, which keeps the pass honest).
pub fn read_rate(file: &Path, threads: usize) -> std::io::Result<(usize, f64, u64)> {
    let f = std::fs::File::open(file)?;
    // SAFETY: a read-only mapping of a file nobody truncates during the measurement.
    let map = unsafe { memmap2::Mmap::map(&f) }?;
    let words: &[u32] = bytemuck::cast_slice(&map[..map.len() / 4 * 4]);
    let started = std::time::Instant::now();
    let part = words.len().div_ceil(threads.max(1)).max(1);
    let total: u64 = std::thread::scope(|s| {
        let hs: Vec<_> = words
            .chunks(part)
            .map(|c| s.spawn(move || c.iter().map(|&w| w as u64).sum::<u64>()))
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("summing thread"))
            .fold(0u64, |a, b| a.wrapping_add(b))
    });
    Ok((map.len(), started.elapsed().as_secs_f64(), total))
}
