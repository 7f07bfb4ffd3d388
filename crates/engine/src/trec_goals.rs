//! trec_eval mode's per-goal values: what its summary lines (trec_eval's running sum, goals in
//! byte order of their ids) and its `-q` lines (printed in that order) need, in bounded memory.
//!
//! Goals are held as a [`TrecSum`] until it holds half the `--memory` budget; then they are
//! written, sorted, to an unnamed temporary file (a sorted run) and forgotten. At the end the
//! runs and the goals still held are merged and visited in byte order, once. A run's record,
//! little-endian: the name's length (`u32`), the name, `1` if the goal had no predictions else
//! `0` (`u8`), then one `f64` per measure. At most [`FAN_IN`] runs are open at once: more are
//! merged into one first.

use lemma_accum::{Measure, TrecSum};
use lemma_ingest::SpillOptions;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, Write};
use std::path::PathBuf;

/// Sorted runs merged at once (each read through a 64 KiB buffer).
pub(crate) const FAN_IN: usize = 64;

/// The least budget for the goals held in memory.
const MIN_BUDGET: usize = 64 << 10;

/// Evaluated goals' values, in memory up to a budget, then in sorted runs on disk.
pub(crate) struct GoalValues {
    held: TrecSum,
    measures: usize,
    budget: usize,
    dir: PathBuf,
    runs: Vec<File>,
    /// Bytes written to temporary files.
    pub(crate) spilled: u64,
}

impl GoalValues {
    /// No goals yet, for `measures` (the plan's, in its order), within half of `spill`'s budget.
    pub(crate) fn new(measures: &[Measure], spill: &SpillOptions) -> GoalValues {
        GoalValues {
            held: TrecSum::new(measures),
            measures: measures.len(),
            budget: (spill.memory / 2).max(MIN_BUDGET),
            dir: spill.directory(),
            runs: Vec::new(),
            spilled: 0,
        }
    }

    /// Adds goal `goal`'s values (`None`: not defined, counted 0 as trec_eval does).
    pub(crate) fn push(
        &mut self,
        goal: &[u8],
        values: &[Option<f64>],
        empty: bool,
    ) -> io::Result<()> {
        self.held.push(goal, values, empty);
        if self.held.bytes() > self.budget {
            self.spill()?;
        }
        Ok(())
    }

    /// Whether some goals went to disk.
    pub(crate) fn spilled_runs(&self) -> usize {
        self.runs.len()
    }

    /// The goals held, sorted, to a new run.
    fn spill(&mut self) -> io::Result<()> {
        let mut w = BufWriter::with_capacity(1 << 16, self.temp()?);
        let mut bytes = 0u64;
        self.held.drain_sorted(|name, empty, values| {
            bytes += write_record(&mut w, name, empty, values)?;
            Ok::<(), io::Error>(())
        })?;
        self.runs.push(self.rewound(w)?);
        self.spilled += bytes;
        if self.runs.len() >= FAN_IN {
            let runs = std::mem::take(&mut self.runs);
            let mut w = BufWriter::with_capacity(1 << 16, self.temp()?);
            let mut bytes = 0u64;
            merge(runs, self.measures, |name, empty, values| {
                bytes += write_record(&mut w, name, empty, values)?;
                Ok(())
            })?;
            self.runs.push(self.rewound(w)?);
            self.spilled += bytes;
        }
        Ok(())
    }

    fn temp(&self) -> io::Result<File> {
        tempfile::tempfile_in(&self.dir).map_err(|e| self.error(e))
    }

    fn rewound(&self, w: BufWriter<File>) -> io::Result<File> {
        let mut file = w.into_inner().map_err(|e| self.error(e.into_error()))?;
        file.rewind().map_err(|e| self.error(e))?;
        Ok(file)
    }

    fn error(&self, e: io::Error) -> io::Error {
        io::Error::new(
            e.kind(),
            format!(
                "temporary file in {} (trec_eval's per-goal values): {e}",
                self.dir.display()
            ),
        )
    }

    /// Visits every goal once, in byte order of their ids: its name, whether it had no
    /// predictions, its values in the measures' order.
    pub(crate) fn visit_sorted(
        mut self,
        mut visit: impl FnMut(&[u8], bool, &[f64]) -> io::Result<()>,
    ) -> io::Result<()> {
        if self.runs.is_empty() {
            return self.held.drain_sorted(visit);
        }
        if !self.held.is_empty() {
            self.spill()?;
        }
        tracing::info!(
            "trec_eval per-goal values: {} MB in {} sorted runs in {}",
            self.spilled.div_ceil(1 << 20),
            self.spilled_runs(),
            self.dir.display()
        );
        let dir = self.dir.clone();
        merge(std::mem::take(&mut self.runs), self.measures, &mut visit).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof || e.kind() == io::ErrorKind::InvalidData {
                io::Error::new(
                    e.kind(),
                    format!("temporary file in {} read back short: {e}", dir.display()),
                )
            } else {
                e
            }
        })
    }
}

/// Writes one record; returns its size.
fn write_record(w: &mut impl Write, name: &[u8], empty: bool, values: &[f64]) -> io::Result<u64> {
    let len = u32::try_from(name.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "goal id over 4 GiB"))?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(name)?;
    w.write_all(&[u8::from(empty)])?;
    for v in values {
        w.write_all(&v.to_le_bytes())?;
    }
    Ok(4 + name.len() as u64 + 1 + 8 * values.len() as u64)
}

/// One sorted run being read: its current record.
struct Cursor {
    r: BufReader<File>,
    name: Vec<u8>,
    empty: bool,
    values: Vec<f64>,
}

impl Cursor {
    /// Reads the next record; false at the end of the run.
    fn next(&mut self) -> io::Result<bool> {
        let mut len = [0u8; 4];
        match self.r.read(&mut len[..1])? {
            0 => return Ok(false),
            _ => self.r.read_exact(&mut len[1..])?,
        }
        self.name.resize(u32::from_le_bytes(len) as usize, 0);
        self.r.read_exact(&mut self.name)?;
        let mut b = [0u8; 8];
        self.r.read_exact(&mut b[..1])?;
        self.empty = match b[0] {
            0 => false,
            1 => true,
            _ => return Err(io::Error::new(io::ErrorKind::InvalidData, "bad record")),
        };
        for v in &mut self.values {
            self.r.read_exact(&mut b)?;
            *v = f64::from_le_bytes(b);
        }
        Ok(true)
    }
}

/// Visits the records of sorted `runs` in byte order of their names.
fn merge(
    runs: Vec<File>,
    measures: usize,
    mut visit: impl FnMut(&[u8], bool, &[f64]) -> io::Result<()>,
) -> io::Result<()> {
    let mut live = Vec::with_capacity(runs.len());
    for file in runs {
        let mut c = Cursor {
            r: BufReader::with_capacity(1 << 16, file),
            name: Vec::new(),
            empty: false,
            values: vec![0.0; measures],
        };
        if c.next()? {
            live.push(c);
        }
    }
    while !live.is_empty() {
        let k = (0..live.len())
            .min_by(|&a, &b| live[a].name.cmp(&live[b].name))
            .expect("a live run");
        let c = &mut live[k];
        visit(&c.name, c.empty, &c.values)?;
        if !c.next()? {
            live.swap_remove(k);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Goals pushed in a scrambled order come back in byte order, values and flags intact,
    /// whether they stayed in memory, went to a few runs, or to more runs than [`FAN_IN`].
    #[test]
    fn sorted_whatever_the_budget() {
        let ms = Measure::parse_all(["P@5", "NumRet"]).unwrap();
        let n = 150_000u64;
        // A permutation of 0..n (n and 26_177 coprime).
        let ids: Vec<u64> = (0..n).map(|i| (i * 26_177) % n).collect();
        for memory in [1 << 30, 1 << 18, 1] {
            let dir = tempfile::tempdir().unwrap();
            let spill = SpillOptions {
                memory,
                dir: Some(dir.path().to_path_buf()),
            };
            let mut g = GoalValues::new(&ms, &spill);
            for &i in &ids {
                let name = format!("g{i}");
                g.push(name.as_bytes(), &[Some(i as f64 / 8.0), None], i % 7 == 0)
                    .unwrap();
            }
            let runs = g.spilled_runs();
            let records: u64 = (0..n)
                .map(|i| 4 + format!("g{i}").len() as u64 + 1 + 16)
                .sum();
            match memory {
                m if m == 1 << 30 => assert_eq!((runs, g.spilled), (0, 0)),
                m if m == 1 << 18 => assert!(runs >= 2 && g.spilled < records, "{runs}"),
                // 64 KiB a run: past FAN_IN runs, merged into one (written twice).
                _ => assert!(runs < FAN_IN && g.spilled > records, "{runs}"),
            }
            let mut want: Vec<String> = (0..n).map(|i| format!("g{i}")).collect();
            want.sort();
            let mut got = Vec::new();
            g.visit_sorted(|name, empty, values| {
                let s = String::from_utf8(name.to_vec()).unwrap();
                let i: u64 = s[1..].parse().unwrap();
                assert_eq!(values, [i as f64 / 8.0, 0.0]);
                assert_eq!(empty, i % 7 == 0);
                got.push(s);
                Ok(())
            })
            .unwrap();
            assert_eq!(got, want, "memory {memory}");
            // Unnamed files: nothing is left in the directory.
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        }
    }

    /// A directory that cannot take files: the error names it.
    #[test]
    fn spill_error_names_the_directory() {
        let ms = Measure::parse_all(["P@5"]).unwrap();
        let spill = SpillOptions {
            memory: 1,
            dir: Some(PathBuf::from("/nonexistent/lemma-eval-tmp")),
        };
        let mut g = GoalValues::new(&ms, &spill);
        let mut err = None;
        for i in 0..10_000 {
            if let Err(e) = g.push(format!("g{i}").as_bytes(), &[Some(0.5)], false) {
                err = Some(e);
                break;
            }
        }
        let e = err.expect("the spill fails").to_string();
        assert!(e.contains("/nonexistent/lemma-eval-tmp"), "{e}");
    }
}
