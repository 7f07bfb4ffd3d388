//! Lines grouped by goal within a memory budget: an external merge sort.
//!
//! [`group_by_goal`] reads TREC lines (a run whose goals are not contiguous, or qrels whose goals
//! are not in order) and gives them back sorted by goal (first field) in a [`GoalOrder`], each
//! goal's lines in their original order (a stable sort), with each line's original number
//! ([`LineMap`]) so that errors found later still name the input's line. Blank and comment lines
//! are dropped.
//!
//! Input that fits in half the budget is sorted in memory. Larger input is cut into chunks of at
//! most half the budget, each sorted and written to a temporary file (a *run*); the runs are then
//! merged, at most [`fan_in`] at a time, into the sorted text and its line numbers, both temporary
//! files again. Every temporary file is *unnamed* (`O_TMPFILE`, or created and unlinked at once):
//! it never appears in the directory, and the kernel frees it when the process ends however it
//! ends (success, error, Ctrl-C, a kill), so nothing is ever left behind. A write that fails (a
//! full disk) is an error that names the directory and the budget.
//!
//! Costs: the input is read once and written about twice (runs, then the sorted text, plus 8 bytes
//! per line of numbers; one more pass per extra merge level when the runs outnumber the fan-in);
//! memory stays within the budget (one chunk and its index of 16 bytes per line and 16 per goal
//! group, or the merge's buffers), a single line longer than half the budget excepted.

use crate::error::{ErrorKind, InputError};
use crate::fields::first_field;
use crate::parse::order::GoalOrder;
use memmap2::Mmap;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The budget and the place of an external sort.
#[derive(Clone, Debug)]
pub struct SpillOptions {
    /// Bytes the sort may hold (at least 64 KiB are used).
    pub memory: usize,
    /// Where temporary files go (`None`: the system's temporary directory, `TMPDIR`).
    pub dir: Option<PathBuf>,
}

impl Default for SpillOptions {
    fn default() -> Self {
        SpillOptions {
            memory: DEFAULT_MEMORY,
            dir: None,
        }
    }
}

/// The default budget: 1 GiB.
pub const DEFAULT_MEMORY: usize = 1 << 30;

impl SpillOptions {
    /// Whether qrels of `bytes` fit in the budget once held as actual sets (about half their
    /// size: 4 to 12 bytes a judgment and the interned names).
    pub fn holds_qrels(&self, bytes: u64) -> bool {
        bytes / 2 <= self.memory as u64
    }

    /// The most bytes one goal's lines may take while it is read (a goal is held whole): half
    /// the budget.
    pub fn goal_bytes(&self) -> usize {
        (self.memory / 2).max(1)
    }

    /// What names [`SpillOptions::goal_bytes`] in an error: `half of --memory (64 MiB)`.
    pub fn goal_limit_name(&self) -> String {
        let m = self.memory;
        let size = match m % (1 << 20) {
            0 => format!("{} MiB", m >> 20),
            _ => format!("{m} bytes"),
        };
        format!("half of --memory, {size}")
    }

    /// The directory temporary files go to.
    pub fn directory(&self) -> PathBuf {
        self.dir.clone().unwrap_or_else(std::env::temp_dir)
    }
}

/// Each sorted line's number in the original input (1-based).
pub enum LineMap {
    /// Held.
    Memory(Vec<u64>),
    /// In a temporary file, 8 bytes per line (little-endian), mapped: pages are read only when a
    /// line number is asked for (an error).
    Mapped(Mmap),
}

impl LineMap {
    /// The original number of sorted line `index` (0-based).
    pub fn get(&self, index: usize) -> Option<u64> {
        match self {
            LineMap::Memory(v) => v.get(index).copied(),
            LineMap::Mapped(m) => {
                let b = m.get(index * 8..index * 8 + 8)?;
                Some(u64::from_le_bytes(b.try_into().expect("8 bytes")))
            }
        }
    }

    /// How many lines.
    pub fn len(&self) -> usize {
        match self {
            LineMap::Memory(v) => v.len(),
            LineMap::Mapped(m) => m.len() / 8,
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The sorted lines: held, or in a temporary file.
pub enum Grouped {
    /// Held: the lines, each ending in `\n`.
    Memory(Vec<u8>),
    /// In an unnamed temporary file.
    Spilled(File),
}

/// Lines sorted by goal ([`group_by_goal`]).
pub struct GroupedLines {
    /// The lines.
    pub lines: Grouped,
    /// Each line's original number.
    pub line_map: LineMap,
    /// The input's last line with a goal, as it was (its run tag names the run).
    pub last_line: Vec<u8>,
    /// What the sort did.
    pub report: SpillReport,
}

/// What a sort did and what it cost.
#[derive(Clone, Debug, Default)]
pub struct SpillReport {
    /// Lines with a goal.
    pub lines: u64,
    /// Goals.
    pub goals: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Sorted runs written to temporary files (0: sorted in memory).
    pub runs: usize,
    /// Bytes written to temporary files, runs and merges and result.
    pub spilled_bytes: u64,
    /// Merge levels before the last (runs merged into longer runs).
    pub extra_merges: usize,
    /// The budget.
    pub memory: usize,
    /// The temporary directory.
    pub dir: PathBuf,
    /// Time taken.
    pub elapsed: Duration,
}

impl std::fmt::Display for SpillReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mb = |b: u64| b as f64 / 1e6;
        if self.runs == 0 {
            write!(
                f,
                "{} lines ({:.1} MB) sorted by goal in memory in {:.2} s",
                self.lines,
                mb(self.bytes),
                self.elapsed.as_secs_f64()
            )
        } else {
            write!(
                f,
                "{} lines ({:.1} MB) sorted by goal on disk within --memory {}: {} sorted runs \
                 merged{}, {:.1} MB written to {} (unnamed files, gone on exit), {:.2} s",
                self.lines,
                mb(self.bytes),
                binary_size(self.memory),
                self.runs,
                if self.extra_merges > 0 {
                    format!(" in {} levels", self.extra_merges + 1)
                } else {
                    String::new()
                },
                mb(self.spilled_bytes),
                self.dir.display(),
                self.elapsed.as_secs_f64()
            )
        }
    }
}

/// `bytes` in binary units, as `--memory` takes them: `64 KiB`, `512 MiB`, `1.5 GiB`.
pub fn binary_size(bytes: usize) -> String {
    let b = bytes as f64;
    match bytes {
        b2 if b2 >= 1 << 30 => format!("{} GiB", trim(b / (1u64 << 30) as f64)),
        b2 if b2 >= 1 << 20 => format!("{} MiB", trim(b / (1u64 << 20) as f64)),
        b2 if b2 >= 1 << 10 => format!("{} KiB", trim(b / (1u64 << 10) as f64)),
        _ => format!("{bytes} bytes"),
    }
}

/// One decimal at most, none when whole.
fn trim(x: f64) -> String {
    let s = format!("{x:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// Most runs merged at once within `memory` (each run read through a buffer of at least 16 KiB)
/// and the descriptor limit ([`descriptor_fan_in`]).
fn fan_in(memory: usize) -> usize {
    descriptor_fan_in((memory / 2 / (16 << 10)).clamp(2, 512))
}

/// `want` runs merged at once, or fewer so that the open runs fit the limit on open files
/// (`RLIMIT_NOFILE`, its soft value): merges in levels hold at most `fan - 1` runs per level
/// plus the `fan` being merged, so a quarter of half the limit (the other half and 16 more left
/// to the process's other files) per merge keeps a few levels within it. At least 2.
pub fn descriptor_fan_in(want: usize) -> usize {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    let soft = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 {
        usize::try_from(lim.rlim_cur).unwrap_or(usize::MAX)
    } else {
        1024
    };
    want.min((soft / 2).saturating_sub(16) / 4).max(2)
}

/// One line of a chunk: where it is and its original number.
#[derive(Clone, Copy)]
struct Line {
    start: u32,
    end: u32,
    no: u64,
}

/// Consecutive lines of one goal in a chunk.
#[derive(Clone, Copy)]
struct Group {
    /// The goal: a range of the chunk.
    goal: (u32, u32),
    /// Its lines: a range of the chunk's lines.
    lines: (u32, u32),
}

/// Reads all of `reader` (`path` names it in errors) and sorts its lines by goal in `order` within
/// `opts`' budget (see the module documentation).
pub fn group_by_goal(
    path: &Path,
    reader: &mut dyn BufRead,
    order: GoalOrder,
    opts: &SpillOptions,
) -> Result<GroupedLines, InputError> {
    let started = Instant::now();
    let memory = opts.memory.max(64 << 10);
    let dir = opts.directory();
    let mut report = SpillReport {
        memory,
        dir: dir.clone(),
        ..SpillReport::default()
    };
    let spill = Spill {
        path,
        dir: &dir,
        memory,
        written: std::cell::Cell::new(0),
    };
    // A chunk: its bytes and index within half the budget (and 4 GiB, the index's reach).
    let limit = (memory / 2).min(u32::MAX as usize);
    let mut chunk = Chunk::default();
    // Runs by merge level: `fan_in` runs of a level are merged into one of the next at once, so
    // that no more than a few `fan_in` files are open.
    let mut levels: Vec<Vec<File>> = Vec::new();
    let mut last_line = Vec::new();
    let mut no = 0u64;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| InputError::read(path, e))?;
        if n == 0 {
            break;
        }
        no += 1;
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        let Some(goal) = first_field(body) else {
            continue;
        };
        if body.len() >= u32::MAX as usize {
            return Err(InputError::at(
                ErrorKind::Syntax,
                path,
                no,
                0,
                "a line of 4 GiB or more, expected a TREC line",
            ));
        }
        report.lines += 1;
        report.bytes += body.len() as u64 + 1;
        if chunk.cost() + body.len() + 40 > limit && !chunk.lines.is_empty() {
            let run = spill.run(&mut chunk, order)?;
            report.runs += 1;
            spill.add_run(&mut levels, run, order, &mut report)?;
        }
        chunk.push(body, goal, no);
        last_line.clear();
        last_line.extend_from_slice(body);
    }
    if levels.is_empty() {
        // All of it fits: sorted in memory.
        let mut out = Vec::with_capacity(chunk.bytes.len() + chunk.lines.len());
        let mut map = Vec::with_capacity(chunk.lines.len());
        let mut goals = GoalCount::default();
        chunk.emit(order, |l, no| {
            goals.see(l);
            out.extend_from_slice(l);
            out.push(b'\n');
            map.push(no);
            Ok(())
        })?;
        report.goals = goals.n;
        report.elapsed = started.elapsed();
        return Ok(GroupedLines {
            lines: Grouped::Memory(out),
            line_map: LineMap::Memory(map),
            last_line,
            report,
        });
    }
    if !chunk.lines.is_empty() {
        let run = spill.run(&mut chunk, order)?;
        report.runs += 1;
        levels.first_mut().expect("a level").push(run);
    }
    drop(chunk);
    // The runs left, earliest lines first: the higher levels hold the earlier chunks.
    let mut runs: Vec<File> = levels.into_iter().rev().flatten().collect();
    let fan = fan_in(memory);
    while runs.len() > fan {
        report.extra_merges += 1;
        let mut merged = Vec::with_capacity(runs.len().div_ceil(fan));
        let mut rest = runs.into_iter().peekable();
        while rest.peek().is_some() {
            let group: Vec<File> = rest.by_ref().take(fan).collect();
            merged.push(spill.merge_runs(group, order)?);
        }
        runs = merged;
    }
    let text = spill.temp()?;
    let numbers = spill.temp()?;
    {
        let (mut tw, mut nw) = (spill.writer(&text), spill.writer(&numbers));
        let mut goals = GoalCount::default();
        merge(&spill, runs, order, |l, no| {
            goals.see(l);
            spill.put(&mut tw, l)?;
            spill.put(&mut tw, b"\n")?;
            spill.put(&mut nw, &no.to_le_bytes())
        })?;
        spill.finish(tw)?;
        spill.finish(nw)?;
        report.goals = goals.n;
    }
    report.spilled_bytes = spill.written.get();
    // SAFETY: an unnamed temporary file of this process, never written again.
    let map = unsafe { Mmap::map(&numbers) }.map_err(|e| spill.error(e))?;
    report.elapsed = started.elapsed();
    Ok(GroupedLines {
        lines: Grouped::Spilled(text),
        line_map: LineMap::Mapped(map),
        last_line,
        report,
    })
}

/// Goals counted in sorted lines: a goal's lines are together.
#[derive(Default)]
struct GoalCount {
    last: Vec<u8>,
    n: u64,
}

impl GoalCount {
    fn see(&mut self, line: &[u8]) {
        let g = first_field(line).unwrap_or(&[]);
        if self.n == 0 || g != self.last.as_slice() {
            self.n += 1;
            self.last.clear();
            self.last.extend_from_slice(g);
        }
    }
}

/// A chunk of lines being gathered.
#[derive(Default)]
struct Chunk {
    bytes: Vec<u8>,
    lines: Vec<Line>,
    groups: Vec<Group>,
}

impl Chunk {
    /// Bytes held: the lines and their index.
    fn cost(&self) -> usize {
        self.bytes.len()
            + self.lines.len() * std::mem::size_of::<Line>()
            + self.groups.len() * std::mem::size_of::<Group>()
    }

    fn push(&mut self, body: &[u8], goal: &[u8], no: u64) {
        let start = self.bytes.len();
        let goal_at = start + (goal.as_ptr() as usize - body.as_ptr() as usize);
        self.bytes.extend_from_slice(body);
        let i = self.lines.len() as u32;
        self.lines.push(Line {
            start: start as u32,
            end: self.bytes.len() as u32,
            no,
        });
        if let Some(g) = self.groups.last_mut() {
            let (s, e) = g.goal;
            if &self.bytes[s as usize..e as usize] == goal {
                g.lines.1 = i + 1;
                return;
            }
        }
        self.groups.push(Group {
            goal: (goal_at as u32, (goal_at + goal.len()) as u32),
            lines: (i, i + 1),
        });
    }

    /// Its lines in goal order (stable), each with its original number; then empty.
    fn emit(
        &mut self,
        order: GoalOrder,
        mut each: impl FnMut(&[u8], u64) -> Result<(), InputError>,
    ) -> Result<(), InputError> {
        let bytes = &self.bytes;
        let goal = |g: &Group| &bytes[g.goal.0 as usize..g.goal.1 as usize];
        self.groups.sort_by(|a, b| order.cmp(goal(a), goal(b)));
        for g in &self.groups {
            for l in &self.lines[g.lines.0 as usize..g.lines.1 as usize] {
                each(&bytes[l.start as usize..l.end as usize], l.no)?;
            }
        }
        self.bytes.clear();
        self.lines.clear();
        self.groups.clear();
        Ok(())
    }
}

/// Temporary files and what was written to them.
struct Spill<'a> {
    path: &'a Path,
    dir: &'a Path,
    memory: usize,
    written: std::cell::Cell<u64>,
}

impl Spill<'_> {
    fn error(&self, e: std::io::Error) -> InputError {
        InputError::file(
            ErrorKind::Io,
            self.path,
            format!(
                "cannot sort by goal on disk: temporary file in {}: {e} ({:.1} MB written so far \
                 within --memory {}; set TMPDIR to a directory with room, or raise --memory)",
                self.dir.display(),
                self.written.get() as f64 / 1e6,
                binary_size(self.memory)
            ),
        )
    }

    /// Adds `run` to the first level, merging a level's runs into one of the next once there
    /// are `fan_in` of them.
    fn add_run(
        &self,
        levels: &mut Vec<Vec<File>>,
        run: File,
        order: GoalOrder,
        report: &mut SpillReport,
    ) -> Result<(), InputError> {
        if levels.is_empty() {
            levels.push(Vec::new());
        }
        levels[0].push(run);
        let fan = fan_in(self.memory);
        let mut k = 0;
        while levels[k].len() >= fan {
            let group = std::mem::take(&mut levels[k]);
            let merged = self.merge_runs(group, order)?;
            if levels.len() == k + 1 {
                levels.push(Vec::new());
                report.extra_merges = report.extra_merges.max(k + 1);
            }
            levels[k + 1].push(merged);
            k += 1;
        }
        Ok(())
    }

    /// Merges `runs` into one run.
    fn merge_runs(&self, runs: Vec<File>, order: GoalOrder) -> Result<File, InputError> {
        let out = self.temp()?;
        let mut w = self.writer(&out);
        merge(self, runs, order, |l, no| self.put_record(&mut w, l, no))?;
        self.finish(w)?;
        Ok(out)
    }

    /// A run's record: (number: u64, length: u32, line), little-endian.
    fn put_record(&self, w: &mut BufWriter<&File>, line: &[u8], no: u64) -> Result<(), InputError> {
        self.put(w, &no.to_le_bytes())?;
        self.put(w, &(line.len() as u32).to_le_bytes())?;
        self.put(w, line)
    }

    fn temp(&self) -> Result<File, InputError> {
        tempfile::tempfile_in(self.dir).map_err(|e| self.error(e))
    }

    fn writer<'f>(&self, f: &'f File) -> BufWriter<&'f File> {
        BufWriter::with_capacity((self.memory / 8).clamp(8 << 10, 1 << 20), f)
    }

    fn put(&self, w: &mut BufWriter<&File>, b: &[u8]) -> Result<(), InputError> {
        self.written.set(self.written.get() + b.len() as u64);
        w.write_all(b).map_err(|e| self.error(e))
    }

    fn finish(&self, w: BufWriter<&File>) -> Result<(), InputError> {
        let f = w.into_inner().map_err(|e| self.error(e.into_error()))?;
        // A full disk may only show when the data reaches it.
        f.sync_data().map_err(|e| self.error(e))
    }

    /// Sorts `chunk` into a run of records ([`Spill::put_record`]).
    fn run(&self, chunk: &mut Chunk, order: GoalOrder) -> Result<File, InputError> {
        let file = self.temp()?;
        let mut w = self.writer(&file);
        chunk.emit(order, |l, no| self.put_record(&mut w, l, no))?;
        self.finish(w)?;
        Ok(file)
    }
}

/// A run being read: its current line.
struct RunReader {
    reader: BufReader<File>,
    line: Vec<u8>,
    no: u64,
    goal: (usize, usize),
}

impl RunReader {
    /// The next record, or `false` at the end.
    fn advance(&mut self) -> std::io::Result<bool> {
        let mut head = [0u8; 12];
        match self.reader.read_exact(&mut head[..1]) {
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(false),
            r => r?,
        }
        self.reader.read_exact(&mut head[1..])?;
        self.no = u64::from_le_bytes(head[..8].try_into().expect("8"));
        let len = u32::from_le_bytes(head[8..].try_into().expect("4")) as usize;
        self.line.resize(len, 0);
        self.reader.read_exact(&mut self.line)?;
        let g = first_field(&self.line).unwrap_or(&[]);
        let at = g.as_ptr() as usize - self.line.as_ptr() as usize;
        self.goal = (at, at + g.len());
        Ok(true)
    }

    fn goal(&self) -> &[u8] {
        &self.line[self.goal.0..self.goal.1]
    }
}

/// The head of a run in the merge's heap: its goal, the run's index (earlier runs first: their
/// lines came first).
struct Head {
    goal: Vec<u8>,
    run: usize,
    order: GoalOrder,
}

impl PartialEq for Head {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Head {}
impl PartialOrd for Head {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Head {
    fn cmp(&self, o: &Self) -> Ordering {
        self.order
            .cmp(&self.goal, &o.goal)
            .then(self.run.cmp(&o.run))
    }
}

/// Merges sorted `runs` (a stable merge: a goal's lines from earlier runs first), a goal of a run
/// at a time.
fn merge(
    spill: &Spill<'_>,
    runs: Vec<File>,
    order: GoalOrder,
    mut each: impl FnMut(&[u8], u64) -> Result<(), InputError>,
) -> Result<(), InputError> {
    let buf = (spill.memory / 2 / runs.len().max(1)).clamp(4 << 10, 4 << 20);
    let mut readers = Vec::with_capacity(runs.len());
    let mut heap = BinaryHeap::with_capacity(runs.len());
    for (i, mut f) in runs.into_iter().enumerate() {
        f.seek(SeekFrom::Start(0)).map_err(|e| spill.error(e))?;
        let mut r = RunReader {
            reader: BufReader::with_capacity(buf, f),
            line: Vec::new(),
            no: 0,
            goal: (0, 0),
        };
        if r.advance().map_err(|e| spill.error(e))? {
            heap.push(Reverse(Head {
                goal: r.goal().to_vec(),
                run: i,
                order,
            }));
        }
        readers.push(r);
    }
    while let Some(Reverse(mut head)) = heap.pop() {
        let r = &mut readers[head.run];
        let more = loop {
            each(&r.line, r.no)?;
            if !r.advance().map_err(|e| spill.error(e))? {
                break false;
            }
            if r.goal() != head.goal.as_slice() {
                break true;
            }
        };
        if more {
            head.goal.clear();
            head.goal.extend_from_slice(r.goal());
            heap.push(Reverse(head));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The slow, obvious sort: (goal, original number) for every line with a goal.
    fn reference(text: &[u8], order: GoalOrder) -> Vec<(Vec<u8>, u64)> {
        let mut v: Vec<(Vec<u8>, u64)> = text
            .split(|&b| b == b'\n')
            .enumerate()
            .filter(|(_, l)| first_field(l).is_some())
            .map(|(i, l)| (l.to_vec(), i as u64 + 1))
            .collect();
        v.sort_by(|a, b| {
            order
                .cmp(first_field(&a.0).unwrap(), first_field(&b.0).unwrap())
                .then(a.1.cmp(&b.1))
        });
        v
    }

    fn sorted(text: &[u8], order: GoalOrder, memory: usize) -> (Vec<(Vec<u8>, u64)>, SpillReport) {
        let dir = tempfile::tempdir().unwrap();
        let opts = SpillOptions {
            memory,
            dir: Some(dir.path().to_path_buf()),
        };
        let g = group_by_goal(Path::new("t"), &mut &text[..], order, &opts).unwrap();
        // Unnamed: nothing ever appears in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let bytes = match g.lines {
            Grouped::Memory(b) => b,
            Grouped::Spilled(mut f) => {
                let mut b = Vec::new();
                f.seek(SeekFrom::Start(0)).unwrap();
                f.read_to_end(&mut b).unwrap();
                b
            }
        };
        let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        assert_eq!(
            lines.last(),
            Some(&&b""[..]),
            "every line ends in a newline"
        );
        let out = lines[..lines.len() - 1]
            .iter()
            .enumerate()
            .map(|(i, l)| (l.to_vec(), g.line_map.get(i).unwrap()))
            .collect::<Vec<_>>();
        assert_eq!(g.line_map.len(), out.len());
        (out, g.report)
    }

    #[test]
    fn a_worked_example_in_memory_and_on_disk() {
        let text = b"g10 0 b 1 2.0 r\n\ng9 0 a 1 1.0 r\n# note\ng10 0 c 2 1.0 r\ng9 0 d 2 0.5 r";
        let want = vec![
            (b"g9 0 a 1 1.0 r".to_vec(), 3),
            (b"g9 0 d 2 0.5 r".to_vec(), 6),
            (b"g10 0 b 1 2.0 r".to_vec(), 1),
            (b"g10 0 c 2 1.0 r".to_vec(), 5),
        ];
        let (mem, r) = sorted(text, GoalOrder::Natural, 1 << 20);
        assert_eq!(
            (mem, r.runs, r.lines, r.goals, r.bytes),
            (want.clone(), 0, 4, 2, 62)
        );
        // A 64 KiB budget holds it all; one line per chunk needs lines longer than that.
        let long: Vec<u8> = text
            .split(|&b| b == b'\n')
            .flat_map(|l| {
                let mut l = l.to_vec();
                if first_field(&l).is_some() {
                    l.extend(std::iter::repeat_n(b'x', 40 << 10));
                }
                l.push(b'\n');
                l
            })
            .collect();
        let (disk, r) = sorted(&long, GoalOrder::Natural, 64 << 10);
        assert_eq!(r.runs, 4);
        assert_eq!(
            disk.iter().map(|(_, n)| *n).collect::<Vec<_>>(),
            vec![3, 6, 1, 5]
        );
        let (bytes, _) = sorted(text, GoalOrder::Bytes, 1 << 20);
        assert_eq!(
            bytes.iter().map(|(_, n)| *n).collect::<Vec<_>>(),
            vec![1, 5, 3, 6]
        );
    }

    #[test]
    fn many_runs_merge_in_levels() {
        // 3,000 lines of 40 goals, 64 KiB budget: chunks of 32 KiB, fan-in 2.
        let mut text = Vec::new();
        for i in 0..3000u64 {
            let pad = "p".repeat((i * 7 % 50) as usize);
            text.extend_from_slice(format!("q{} 0 d{i} {pad}\n", i * 13 % 40).as_bytes());
        }
        let (got, r) = sorted(&text, GoalOrder::Natural, 64 << 10);
        assert!(r.runs > 2 && r.extra_merges >= 1, "{r:?}");
        assert_eq!(r.goals, 40);
        assert_eq!(got, reference(&text, GoalOrder::Natural));
    }

    #[test]
    fn a_full_disk_is_an_error_naming_the_directory() {
        let opts = SpillOptions {
            memory: 64 << 10,
            dir: Some(PathBuf::from("/nonexistent-dir")),
        };
        let text = "g 0 d 1\n".repeat(20_000);
        let e = group_by_goal(
            Path::new("run.txt"),
            &mut text.as_bytes(),
            GoalOrder::Bytes,
            &opts,
        )
        .err()
        .unwrap();
        let s = e.to_string();
        assert!(
            s.starts_with(
                "run.txt: cannot sort by goal on disk: temporary file in /nonexistent-dir:"
            ),
            "{s}"
        );
    }

    #[test]
    fn hundreds_of_runs_merge_a_level_at_a_time() {
        // Lines of about 1 KiB, 64 KiB budget: 32 KiB chunks, fan-in 2, some 300 runs.
        let mut text = Vec::new();
        for i in 0..10_000u64 {
            let pad = "p".repeat(900 + (i * 7 % 100) as usize);
            text.extend_from_slice(format!("q{} 0 d{i} {pad}\n", i * 31 % 97).as_bytes());
        }
        let (got, r) = sorted(&text, GoalOrder::Natural, 64 << 10);
        assert!(r.runs > 250 && r.extra_merges >= 7, "{r:?}");
        assert_eq!(got, reference(&text, GoalOrder::Natural));
        assert_eq!(r.goals, 97);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn the_same_as_a_stable_sort(
            lines in proptest::collection::vec((0u8..12, 0usize..3, 0u8..30), 0..300),
            memory in 1usize..6,
            natural in any::<bool>(),
        ) {
            let order = if natural { GoalOrder::Natural } else { GoalOrder::Bytes };
            let mut text = Vec::new();
            for (g, kind, pad) in &lines {
                match kind {
                    0 => text.extend_from_slice(format!("g{g} 0 d{pad}\n").as_bytes()),
                    1 => text.extend_from_slice(format!("  g{g}\tx {}\n", "y".repeat(*pad as usize)).as_bytes()),
                    _ => text.extend_from_slice(if *pad % 2 == 0 { b"\n" } else { b"# c\n" }),
                }
            }
            // Budgets of 64 KiB and lines padded to reach it: from one run to many.
            let scale = 64 << 10;
            let padded: Vec<u8> = text
                .split(|&b| b == b'\n')
                .take(text.split(|&b| b == b'\n').count() - 1)
                .flat_map(|l| {
                    let mut l = l.to_vec();
                    if first_field(&l).is_some() {
                        l.extend(std::iter::repeat_n(b'z', scale / 16 * memory));
                    }
                    l.push(b'\n');
                    l
                })
                .collect();
            let (got, _) = sorted(&padded, order, scale);
            prop_assert_eq!(got, reference(&padded, order));
            let (got, _) = sorted(&text, order, scale);
            prop_assert_eq!(got, reference(&text, order));
        }
    }
}
