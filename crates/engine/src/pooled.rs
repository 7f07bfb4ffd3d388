//! The pooled precision-recall curve (docs/METRICS.md §5) of an evaluation: every ranked lemma of
//! every evaluated goal is one scored instance, positive when relevant.
//!
//! - **Exact** ([`PooledSetup::exact`]): one row per distinct score. Each worker's summary counts
//!   items per distinct score in memory; past a share of the memory budget the counts are written,
//!   sorted, to an unnamed temporary file (a run, 24 bytes per distinct score), and the runs and
//!   the held counts are merged at the end ([`PooledView`]). Memory: at most `--memory` for the
//!   counts (each of the `threads + 1` summaries holds the scores whose table and sorted run fit
//!   `memory / (threads + 1)`, [`lemma_accum::PooledCurve::bins_within`]: 67 bytes a score, a table
//!   of a power of two of slots using between half that share and all of it), plus 16 bytes per
//!   ranked lemma of the largest goal, plus 64 KiB per run while merging (runs are merged in
//!   levels, at most 64 at a time and fewer under a low limit on open files, so that the files
//!   held open stay within that limit however many runs are spilled).
//! - **Binned** ([`PooledSetup::binned`]): the binned estimate, `K` groups of equal count over the
//!   scores in descending order, in one pass. The counts are a sketch of at most
//!   [`SKETCH_BINS`] bins (exact while the distinct scores fit; past that, coarser key bins), so
//!   memory does not depend on the number of items. Every row is the exact curve's row at its
//!   threshold, and the pooled AP read from the groups is within [`PooledView::ap_bound`] of the
//!   exact curve's (see [`lemma_accum::ap_error_bound`]).
//!
//! The temporary files are unnamed: they never appear in the directory and are freed when the
//! process ends, however it ends. The curve is kept by an [`crate::Evaluator`] (text predictions,
//! the qrels held) and by a [`crate::Session`] pushed with scores; a [`crate::Job`] reading sorted
//! qrels along the predictions refuses it (a join may evaluate a batch twice), and so do summary
//! files, stores and matrices, and rankings without scores (every score would be 0).

use crate::EvalError;
use lemma_accum::{
    ap_error_bound, equal_count, merge_runs, CurveRows, CurveStats, Group, PooledCurve, PooledSpec,
    Run, SpillRuns,
};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Bins of the binned curve's sketch: 4 MiB of table per summary.
pub const SKETCH_BINS: usize = 1 << 16;

/// How an evaluation keeps its pooled curve, and where the exact curve's runs go.
#[derive(Clone, Debug)]
pub struct PooledSetup {
    spec: PooledSpec,
    files: Option<Arc<RunFiles>>,
    bins: Option<u64>,
}

impl PooledSetup {
    /// The exact curve within `memory` bytes of counts for `threads` workers, runs spilled to
    /// `dir`.
    pub fn exact(memory: usize, threads: usize, dir: PathBuf) -> PooledSetup {
        let files = Arc::new(RunFiles {
            dir,
            fan: lemma_ingest::descriptor_fan_in(64),
            runs: Mutex::new(Runs::default()),
            error: Mutex::new(None),
        });
        let max_bins = PooledCurve::bins_within(memory / (threads.max(1) + 1)).max(64);
        PooledSetup {
            spec: PooledSpec::Exact {
                max_bins,
                spill: Some(files.clone() as Arc<dyn SpillRuns>),
            },
            files: Some(files),
            bins: None,
        }
    }

    /// The binned estimate with `k` groups of equal count.
    pub fn binned(k: u64) -> PooledSetup {
        PooledSetup {
            spec: PooledSpec::Sketch {
                max_bins: SKETCH_BINS,
            },
            files: None,
            bins: Some(k.max(1)),
        }
    }

    /// What the plan keeps ([`crate::EvaluatorBuilder::pooled`]).
    pub fn spec(&self) -> PooledSpec {
        self.spec.clone()
    }

    /// The curve of an evaluation made with [`spec`](Self::spec), read from its summary's
    /// pooled counts and the runs spilled. Each evaluation needs a setup of its own.
    pub fn view<'a>(&'a self, curve: &'a PooledCurve) -> Result<PooledView<'a>, EvalError> {
        if let Some(f) = &self.files {
            f.check()?;
            f.compact()?;
        }
        let groups = self.bins.map(|k| {
            let run = curve.run();
            equal_count(&run, curve.bits() == 64, k)
        });
        let mut view = PooledView {
            curve,
            files: self.files.as_deref(),
            groups,
            stats: None,
        };
        let mut rows = CurveRows::new(curve.total_relevant());
        view.each(|k, n, r| {
            rows.next(k, n, r);
        })?;
        view.stats = Some(rows.stats());
        Ok(view)
    }
}

/// An evaluation's pooled curve, ready to be read: its groups (distinct scores, or the binned
/// groups), highest first.
pub struct PooledView<'a> {
    curve: &'a PooledCurve,
    files: Option<&'a RunFiles>,
    groups: Option<Vec<Group>>,
    stats: Option<CurveStats>,
}

impl PooledView<'_> {
    /// The totals: rows, items, relevant items, pooled AP, best F1.
    pub fn stats(&self) -> CurveStats {
        self.stats.expect("computed when the view is made")
    }

    /// The binned curve's bound on its pooled AP's distance to the exact curve's (`None`: exact).
    pub fn ap_bound(&self) -> Option<f64> {
        (self.groups.as_ref()).map(|g| ap_error_bound(g, self.curve.total_relevant()))
    }

    /// Runs spilled to disk, and their bytes.
    pub fn spilled(&self) -> (usize, u64) {
        self.files.map_or((0, 0), |f| {
            let runs = f.runs.lock().expect("not poisoned");
            (runs.spilled, runs.bytes)
        })
    }

    /// Calls `row` for each row, highest threshold first.
    pub fn rows(&self, mut row: impl FnMut(lemma_accum::CurveRow)) -> Result<(), EvalError> {
        let mut rows = CurveRows::new(self.curve.total_relevant());
        self.each(|k, n, r| row(rows.next(k, n, r)))
    }

    /// Calls `f(lowest key, items, relevant)` for each group, highest first.
    fn each(&self, mut f: impl FnMut(u64, u64, u64)) -> Result<(), EvalError> {
        if let Some(groups) = &self.groups {
            for g in groups {
                f(g.key, g.n, g.rel);
            }
            return Ok(());
        }
        let held = self.curve.run();
        let Some(files) = self.files.filter(|_| self.curve.spilled()) else {
            for (k, n, r) in held {
                f(k, n, r);
            }
            return Ok(());
        };
        let failed = Mutex::new(None);
        {
            // At most `fan` runs, merged down by `view` (the files stay open, read in place).
            let held_runs = files.runs.lock().expect("not poisoned");
            let mut runs: Vec<Box<dyn Iterator<Item = (u64, u64, u64)> + '_>> =
                vec![Box::new(held.into_iter())];
            for r in &held_runs.held {
                runs.push(Box::new(
                    RunReader::new(&r.file, r.len, &failed).map_err(|e| files.error(e))?,
                ));
            }
            for (k, n, r) in merge_runs(runs) {
                f(k, n, r);
            }
        }
        match failed.into_inner().expect("not poisoned") {
            Some(e) => Err(files.error(e)),
            None => Ok(()),
        }
    }
}

/// The exact curve's runs: unnamed temporary files in one directory, 24 bytes per distinct score
/// (key, items, relevant; little-endian). Runs are merged in levels as they come, `fan` runs of a
/// level into one of the next, so that the open files stay within the descriptor limit
/// ([`lemma_ingest::descriptor_fan_in`]) however many runs are spilled.
#[derive(Debug)]
pub struct RunFiles {
    dir: PathBuf,
    /// Most runs merged at once.
    fan: usize,
    runs: Mutex<Runs>,
    /// The first failure to write a run, kept (every later view fails too).
    error: Mutex<Option<String>>,
}

impl RunFiles {
    fn error(&self, e: impl std::fmt::Display) -> EvalError {
        EvalError::Options(format!(
            "cannot keep the pooled curve's counts on disk: temporary file in {}: {e} (set \
             TMPDIR to a directory with room, or raise --memory)",
            self.dir.display()
        ))
    }

    fn check(&self) -> Result<(), EvalError> {
        match &*self.error.lock().expect("not poisoned") {
            Some(e) => Err(self.error(e)),
            None => Ok(()),
        }
    }

    fn write(&self, run: impl IntoIterator<Item = (u64, u64, u64)>) -> std::io::Result<HeldRun> {
        let file = tempfile::tempfile_in(&self.dir)?;
        let mut w = BufWriter::with_capacity(64 << 10, &file);
        let mut len = 0;
        for (k, n, r) in run {
            w.write_all(&k.to_le_bytes())?;
            w.write_all(&n.to_le_bytes())?;
            w.write_all(&r.to_le_bytes())?;
            len += 1;
        }
        w.flush()?;
        drop(w);
        Ok(HeldRun {
            file,
            len,
            level: 0,
        })
    }

    /// `runs` merged into one run of the level after theirs.
    fn merge(&self, runs: &[HeldRun]) -> std::io::Result<HeldRun> {
        let failed = Mutex::new(None);
        let readers = runs
            .iter()
            .map(|r| RunReader::new(&r.file, r.len, &failed))
            .collect::<std::io::Result<Vec<_>>>()?;
        let mut merged = self.write(merge_runs(readers))?;
        if let Some(e) = failed.into_inner().expect("not poisoned") {
            return Err(e);
        }
        merged.level = runs.iter().map(|r| r.level).max().unwrap_or(0) + 1;
        Ok(merged)
    }

    /// Merges the last `fan` runs while they are of one level: the runs held form a stack of
    /// levels, each of fewer than `fan` runs.
    fn merge_levels(&self, runs: &mut Runs) -> std::io::Result<()> {
        while runs.held.len() >= self.fan {
            let tail = &runs.held[runs.held.len() - self.fan..];
            if tail.iter().any(|r| r.level != tail[0].level) {
                break;
            }
            let merged = self.merge(tail)?;
            runs.held.truncate(runs.held.len() - self.fan);
            runs.held.push(merged);
        }
        Ok(())
    }

    /// Merges the runs held down to at most `fan` (what a view reads at once).
    fn compact(&self) -> Result<(), EvalError> {
        let mut runs = self.runs.lock().expect("not poisoned");
        while runs.held.len() > self.fan {
            let at = runs.held.len() - self.fan;
            let merged = self.merge(&runs.held[at..]).map_err(|e| self.error(e))?;
            runs.held.truncate(at);
            runs.held.push(merged);
        }
        Ok(())
    }
}

/// The runs on disk.
#[derive(Debug, Default)]
struct Runs {
    held: Vec<HeldRun>,
    /// Runs spilled (before any merge), and their bytes.
    spilled: usize,
    bytes: u64,
}

/// A run on disk: its file, its records, its merge level (0: as spilled).
#[derive(Debug)]
struct HeldRun {
    file: File,
    len: u64,
    level: u32,
}

impl SpillRuns for RunFiles {
    fn spill(&self, run: &Run) {
        let mut error = self.error.lock().expect("not poisoned");
        if error.is_some() {
            return;
        }
        let mut runs = self.runs.lock().expect("not poisoned");
        let done = self.write(run.iter().copied()).and_then(|held| {
            runs.spilled += 1;
            runs.bytes += held.len * 24;
            runs.held.push(held);
            self.merge_levels(&mut runs)
        });
        if let Err(e) = done {
            *error = Some(e.to_string());
        }
    }
}

/// A run read back, record by record; a read error ends it and is kept in `failed`.
struct RunReader<'a> {
    from: BufReader<&'a File>,
    left: u64,
    failed: &'a Mutex<Option<std::io::Error>>,
}

impl<'a> RunReader<'a> {
    /// Reads `file`'s `len` records from its start.
    fn new(
        mut file: &'a File,
        len: u64,
        failed: &'a Mutex<Option<std::io::Error>>,
    ) -> std::io::Result<Self> {
        file.seek(SeekFrom::Start(0))?;
        Ok(RunReader {
            from: BufReader::with_capacity(64 << 10, file),
            left: len,
            failed,
        })
    }
}

impl Iterator for RunReader<'_> {
    type Item = (u64, u64, u64);

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        let mut b = [0u8; 24];
        if let Err(e) = self.from.read_exact(&mut b) {
            *self.failed.lock().expect("not poisoned") = Some(e);
            self.left = 0;
            return None;
        }
        self.left -= 1;
        let word = |i: usize| u64::from_le_bytes(b[i * 8..][..8].try_into().expect("8 bytes"));
        Some((word(0), word(1), word(2)))
    }
}
