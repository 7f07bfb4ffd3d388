//! Qrels sorted by goal, read a few goals at a time rather than held whole.
//!
//! A plain qrels file whose goals come in ascending order (byte order, as `LC_ALL=C sort` gives,
//! or natural order, numbers within names compared as numbers: `g9` before `g10`) is checked once
//! (one pass over its lines, no memory kept) and memory-mapped; the actual sets of any range of
//! goals are then found by binary search and read on their own ([`SortedQrels::sets`]). Sorted
//! means grouped: a goal's judgments are all in one place, so the judgments read for a goal are
//! all of them.

use crate::error::{ErrorKind, InputError};
use crate::fields::first_field;
use crate::fields::{same_bytes, starts_with_field};
use crate::input::{open_with, Compression, Format};
use crate::mapped::Stamp;
use crate::parse::lines::{each_line, real_line};
use crate::parse::order::{natural_cmp, GoalOrder};
use crate::spill::{group_by_goal, Grouped, LineMap, SpillOptions, SpillReport};
use crate::truth::ActualSets;
use memmap2::Mmap;
use std::cmp::Ordering;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A plain TREC qrels file whose goals are in ascending order, mapped; or qrels sorted by
/// goal ([`SortedQrels::sort`]), held or in a temporary file.
pub struct SortedQrels {
    path: PathBuf,
    map: Bytes,
    order: GoalOrder,
    goals: u64,
    /// Sorted qrels: each line's number in the file they were sorted from.
    line_map: Option<LineMap>,
    /// A sparse index: the first real line from every [`INDEX_STEP`] bytes on, and its goal.
    index: Index,
    /// Threads that may read the whole file ([`SortedQrels::sets_whole`]).
    threads: usize,
    /// A mapped file as it was mapped ([`SortedQrels::check_unchanged`]).
    stamp: Option<Stamp>,
}

/// Bytes between two entries of a [`SortedQrels`]' index.
const INDEX_STEP: usize = 64 << 10;

/// A sparse index of sorted lines: a search touches the index and one step of the file.
#[derive(Default)]
struct Index {
    /// Line starts, ascending.
    at: Vec<usize>,
    /// Their goals, end to end; goal `i` ends at `ends[i]`.
    names: Vec<u8>,
    ends: Vec<usize>,
}

impl Index {
    /// The first real line from every `step` bytes of `buf` on: a `memchr` each. `map`: `buf`
    /// is this mapping, whose pages are let go behind the reading (the kernel maps 64 KiB around
    /// each page read).
    fn build(buf: &[u8], step: usize, map: Option<&Mmap>) -> Index {
        let mut index = Index::default();
        let mut b = 0;
        let mut behind = crate::input::PagesBehind::new(map, 0);
        while b < buf.len() {
            behind.at(b);
            let at = if b == 0 {
                0
            } else {
                match memchr::memchr(b'\n', &buf[b - 1..]) {
                    Some(p) => b + p,
                    None => break,
                }
            };
            let Some((start, _, g)) = real_line(buf, at, buf.len()) else {
                break;
            };
            if index.at.last() != Some(&start) {
                index.at.push(start);
                index.names.extend_from_slice(g);
                index.ends.push(index.names.len());
            }
            b = (start / step + 1) * step;
        }
        index
    }

    fn goal(&self, i: usize) -> &[u8] {
        let s = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.names[s..self.ends[i]]
    }

    /// The bytes between which the first line failing `before` starts: after the last entry
    /// that passes, up to the first that fails.
    fn bounds(&self, len: usize, before: &impl Fn(&[u8]) -> bool) -> (usize, usize) {
        let (mut lo, mut hi) = (0, self.at.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if before(self.goal(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        (
            if lo == 0 { 0 } else { self.at[lo - 1] },
            self.at.get(lo).copied().unwrap_or(len),
        )
    }
}

/// The lines: mapped, or held.
enum Bytes {
    Map(Arc<Mmap>),
    Owned(Vec<u8>),
}

impl Bytes {
    /// The mapping, if mapped (its pages can be let go).
    fn mapped(&self) -> Option<&Mmap> {
        match self {
            Bytes::Map(m) => Some(m),
            Bytes::Owned(_) => None,
        }
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Map(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

impl std::fmt::Debug for SortedQrels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SortedQrels")
            .field("path", &self.path)
            .field("order", &self.order)
            .field("goals", &self.goals)
            .finish()
    }
}

impl SortedQrels {
    /// `path` as sorted qrels, or `None` when it is not a plain (uncompressed, mappable) TREC
    /// qrels file with at least one judgment whose goals ascend in byte or natural order (byte
    /// order when both hold). One pass over the lines; nothing else is read or kept. Only the
    /// first field of each line is looked at: the judgments themselves are checked when read.
    pub fn open(path: &Path) -> Result<Option<SortedQrels>, InputError> {
        Self::open_with_threads(path, lemma_par::default_threads())
    }

    /// [`open`](Self::open), its reads of the whole file (the order check and
    /// [`sets_whole`](Self::sets_whole)) on at most `threads` threads (at least one).
    pub fn open_with_threads(
        path: &Path,
        threads: usize,
    ) -> Result<Option<SortedQrels>, InputError> {
        let threads = threads.max(1);
        // Only a regular file can be mapped, and only it can be opened again: anything else (a
        // pipe, a FIFO) is left unread for the caller.
        if crate::input::read_once(path) {
            return Ok(None);
        }
        let input = open_with(path, true)?;
        let (Some(map), Compression::None, Format::Trec) =
            (input.map, input.compression, input.format)
        else {
            return Ok(None);
        };
        let stamp = input.file.map(|f| Stamp::new(f, map.len() as u64));
        let order = goal_order_in(&map, Some(&map), threads, ORDER_PART_MIN);
        let Some((order, goals)) = order else {
            crate::input::drop_pages(&map, 0..map.len());
            return Ok(None);
        };
        let index = Index::build(&map, INDEX_STEP, Some(&map));
        // The pages read are let go (they are read again, a range at a time, when needed).
        crate::input::drop_pages(&map, 0..map.len());
        let _ = map.advise(memmap2::Advice::Normal);
        Ok(Some(SortedQrels {
            path: input.path,
            map: Bytes::Map(map),
            order,
            goals,
            line_map: None,
            index,
            threads,
            stamp,
        }))
    }

    /// The TREC qrels at `path` (any order, plain or compressed, `-` for stdin) sorted by goal
    /// in natural order within `spill`'s budget ([`group_by_goal`]: in memory, or on disk in
    /// unnamed temporary files), and what the sort did; `None` for JSONL qrels. Errors in the
    /// lines, found when they are read, name the lines of `path`.
    pub fn sort(
        path: &Path,
        spill: &SpillOptions,
    ) -> Result<Option<(SortedQrels, SpillReport)>, InputError> {
        let mut input = open_with(path, false)?;
        if input.format != Format::Trec {
            return Ok(None);
        }
        let g = group_by_goal(path, &mut input.reader, GoalOrder::Natural, spill)?;
        let map = match g.lines {
            Grouped::Memory(v) => Bytes::Owned(v),
            Grouped::Spilled(f) => {
                // SAFETY: an unnamed temporary file of this process, never written again.
                let m = unsafe { Mmap::map(&f) }.map_err(|e| InputError::read(path, e))?;
                Bytes::Map(Arc::new(m))
            }
        };
        let index = Index::build(&map, INDEX_STEP, map.mapped());
        if let Some(m) = map.mapped() {
            crate::input::drop_pages(m, 0..m.len());
        }
        Ok(Some((
            SortedQrels {
                path: path.to_path_buf(),
                map,
                order: GoalOrder::Natural,
                goals: g.report.goals,
                line_map: Some(g.line_map),
                index,
                threads: lemma_par::default_threads(),
                stamp: None,
            },
            g.report,
        )))
    }

    /// These qrels, read whole ([`sets_whole`](Self::sets_whole)) on at most `threads` threads
    /// (at least one).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The order its goals ascend in.
    pub fn order(&self) -> GoalOrder {
        self.order
    }

    /// How many goals it judges.
    pub fn goal_count(&self) -> u64 {
        self.goals
    }

    /// Its bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Where the lines of the first goal not before `goal` begin (the file's length if none):
    /// a binary search, some dozens of lines read.
    pub fn lower_bound(&self, goal: &[u8]) -> usize {
        self.partition(|g| self.order.cmp(g, goal) == Ordering::Less)
    }

    /// Where the lines of the first goal after `goal` begin (the file's length if none).
    pub fn upper_bound(&self, goal: &[u8]) -> usize {
        self.partition(|g| self.order.cmp(g, goal) != Ordering::Greater)
    }

    /// The same with an index entry every `step` bytes (tests of the search).
    #[cfg(test)]
    fn with_index_step(mut self, step: usize) -> Self {
        self.index = Index::build(&self.map, step, None);
        self
    }

    /// The first line start from which every real line's goal fails `before` (the goals that
    /// pass come first: the file is sorted). The index narrows it to one step of the file.
    fn partition(&self, before: impl Fn(&[u8]) -> bool) -> usize {
        let buf = &self.map[..];
        // Real lines starting before `lo` pass; real lines starting at or after `hi` fail. `lo`
        // is a line start; `hi` a line start or the end.
        let (mut lo, mut hi) = self.index.bounds(buf.len(), &before);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let t = memchr::memrchr(b'\n', &buf[lo..mid]).map_or(lo, |p| lo + p + 1);
            match real_line(buf, t, hi) {
                Some((start, end, g)) => {
                    if before(g) {
                        lo = (end + 1).min(hi);
                    } else {
                        hi = start;
                    }
                }
                None => hi = t,
            }
        }
        lo
    }

    /// The lines of `goal`, from its first real line (not a blank or comment line before it) to
    /// the next goal's first line, or `None` when the qrels do not judge it.
    pub fn goal_range(&self, goal: &[u8]) -> Option<Range<usize>> {
        let lo = self.lower_bound(goal);
        let hi = self.upper_bound(goal);
        let (start, _, g) = real_line(&self.map, lo, hi)?;
        (g == goal).then_some(start..hi)
    }

    /// The goal of the first real line from the line holding byte `at` on (starting before
    /// `end`), and where its lines end (the next goal's first line, or `end`).
    pub fn goal_at(&self, at: usize, end: usize) -> Option<(&[u8], usize)> {
        let at = memchr::memrchr(b'\n', &self.map[..at]).map_or(0, |p| p + 1);
        let (_, _, g) = real_line(&self.map, at, end)?;
        Some((g, self.upper_bound(g).min(end)))
    }

    /// The actual sets of the lines in `range` (whole goals' lines: bounds from
    /// [`SortedQrels::lower_bound`] and [`SortedQrels::upper_bound`]); errors name the file's
    /// lines and bytes.
    pub fn sets(&self, range: Range<usize>) -> Result<ActualSets, InputError> {
        let start = range.start;
        // A batch's goals: on the calling thread (a worker among others).
        ActualSets::parse(&self.path, Format::Trec, &self.map[range], None, 1)
            .map_err(|e| self.in_file(e, start))
    }

    /// [`SortedQrels::sets`], with where each goal's lines begin in the file (goal `g`'s at
    /// `[g]`, ascending: the starts of the lines with a goal that differs from the last goal
    /// before them), noted while the lines are read.
    pub fn sets_and_starts(
        &self,
        range: Range<usize>,
    ) -> Result<(ActualSets, Vec<usize>), InputError> {
        let start = range.start;
        let (sets, mut starts) = ActualSets::parse_noting_goals(&self.path, &self.map[range])
            .map_err(|e| self.in_file(e, start))?;
        for s in &mut starts {
            *s += start;
        }
        Ok((sets, starts))
    }

    /// An error `e` in the lines from byte `start` on, said of the file: its line numbers in the
    /// file the lines came from (sorted qrels), or its lines and bytes shifted.
    fn in_file(&self, e: InputError, start: usize) -> InputError {
        let Some(lines) = &self.line_map else {
            return crate::shard::shift_error(e, &self.path, start as u64);
        };
        // Sorted lines: their numbers in the file they came from.
        let before = memchr::memchr_iter(b'\n', &self.map[..start]).count() as u64;
        let original = |l: u64| lines.get((l + before - 1) as usize).unwrap_or(l + before);
        InputError {
            line: e.line.map(original),
            first_line: e.first_line.map(original),
            byte: None,
            ..e
        }
    }

    /// The actual sets of all the goals, read with the mapped pages let go behind.
    pub fn sets_whole(&self) -> Result<ActualSets, InputError> {
        let whole = ActualSets::parse(
            &self.path,
            Format::Trec,
            &self.map,
            self.map.mapped(),
            self.threads,
        );
        match (&self.line_map, whole) {
            (Some(_), Err(_)) => self.sets(0..self.map.len()),
            (_, r) => r,
        }
    }

    /// The actual sets of the goals whose lines are in `ranges` (each a goal's lines, from
    /// [`SortedQrels::lower_bound`] and [`SortedQrels::upper_bound`]; distinct), given `bytes`,
    /// their lines end to end (each range's lines, a newline added where the file has none);
    /// goal `i` is the one of `ranges[i]`; errors name the file's lines.
    pub fn sets_of(&self, bytes: &[u8], ranges: &[Range<usize>]) -> Result<ActualSets, InputError> {
        ActualSets::parse(&self.path, Format::Trec, bytes, None, 1).map_err(|_| {
            // The error again, from the range it is in, to name the file's line.
            ranges
                .iter()
                .find_map(|r| self.sets(r.clone()).err())
                .unwrap_or_else(|| self.changed())
        })
    }

    /// Lets the mapped pages of `range` go (they are read again from the file if touched).
    pub fn release(&self, range: Range<usize>) {
        if let Some(m) = self.map.mapped() {
            crate::input::drop_pages(m, range);
        }
    }

    /// An error if the mapped file is no longer as it was mapped (its length or modification
    /// time moved: lines appended were not read, lines cut off read as zeros). Qrels sorted into
    /// a temporary file are never checked.
    pub fn check_unchanged(&self) -> Result<(), InputError> {
        match &self.stamp {
            Some(s) => s.check(&self.path),
            None => Ok(()),
        }
    }

    /// An error for a goal whose lines could not be found again (the file changed under the map).
    pub fn changed(&self) -> InputError {
        InputError::file(
            ErrorKind::Io,
            &self.path,
            "changed while being read: its goals are no longer in order",
        )
    }
}

/// Below this many bytes a part of [`goal_order_in`] is not worth a thread.
const ORDER_PART_MIN: usize = 8 << 20;

/// The order `buf`'s goals ascend in, and how many there are; `None` if they ascend in neither
/// (or there are none). `map`: `buf` is this mapping, whose pages are let go behind the reading.
/// A large text is read in parts (at most `threads`, of at least `part_min` bytes, cut where
/// lines begin), a thread each, the parts' ends compared.
fn goal_order_in(
    buf: &[u8],
    map: Option<&Mmap>,
    threads: usize,
    part_min: usize,
) -> Option<(GoalOrder, u64)> {
    let parts = (buf.len() / part_min.max(1)).clamp(1, threads.max(1));
    let mut cuts = vec![0];
    for k in 1..parts {
        let at = buf.len() / parts * k;
        let cut = memchr::memchr(b'\n', &buf[at..]).map_or(buf.len(), |p| at + p + 1);
        if cut > *cuts.last().expect("a cut") && cut < buf.len() {
            cuts.push(cut);
        }
    }
    cuts.push(buf.len());
    // A part a thread (one part: on this thread).
    let parts: Vec<&[usize]> = cuts.windows(2).collect();
    let orders: Vec<Option<PartOrder>> =
        lemma_par::Ordered::new(parts.len()).map(parts, |w| part_order(buf, w[0]..w[1], map));
    // The parts in order: a part's first goal after the one before's last (or the same goal,
    // its lines across the cut).
    let mut all = PartOrder::default();
    for p in orders {
        let p = p?;
        match (all.last, p.first) {
            (Some(l), Some(g)) if l == g => all.goals -= 1,
            (Some(l), Some(g)) => {
                all.bytes &= l < g;
                all.natural &= natural_cmp(l, g) == Ordering::Less;
            }
            _ => {}
        }
        all.bytes &= p.bytes;
        all.natural &= p.natural;
        all.goals += p.goals;
        all.first = all.first.or(p.first);
        all.last = p.last.or(all.last);
    }
    match (all.goals, all.bytes, all.natural) {
        (0, _, _) | (_, false, false) => None,
        (_, true, _) => Some((GoalOrder::Bytes, all.goals)),
        _ => Some((GoalOrder::Natural, all.goals)),
    }
}

/// What one part of the text says of its goals' order.
struct PartOrder<'a> {
    /// Its goals ascend in byte order; in natural order.
    bytes: bool,
    natural: bool,
    goals: u64,
    first: Option<&'a [u8]>,
    last: Option<&'a [u8]>,
}

impl Default for PartOrder<'_> {
    fn default() -> Self {
        PartOrder {
            bytes: true,
            natural: true,
            goals: 0,
            first: None,
            last: None,
        }
    }
}

/// The goals' order in the lines of `range` (which begins where a line does); `None` as soon as
/// they ascend in neither order.
fn part_order<'a>(buf: &'a [u8], range: Range<usize>, map: Option<&Mmap>) -> Option<PartOrder<'a>> {
    let mut o = PartOrder::default();
    let mut behind = crate::input::PagesBehind::new(map, range.start);
    let ascending = each_line(buf, range, |start, nl| {
        let line = &buf[start..nl];
        behind.at(start);
        // Most lines repeat the goal before: one comparison of its bytes.
        if o.last.is_some_and(|l| starts_with_field(line, l)) {
            return true;
        }
        let Some(g) = first_field(line) else {
            return true;
        };
        if let Some(l) = o.last {
            if same_bytes(l, g) {
                return true;
            }
            o.bytes &= l < g;
            o.natural &= natural_cmp(l, g) == Ordering::Less;
            if !o.bytes && !o.natural {
                return false;
            }
        }
        o.goals += 1;
        o.first = o.first.or(Some(g));
        o.last = Some(g);
        true
    });
    ascending.then_some(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `each_line` gives the lines `split` gives, from any line start, across the 64-byte
        /// blocks (lines of every length, newlines at block edges, none at the end), and stops
        /// when told.
        #[test]
        fn each_line_gives_every_line(
            lines in prop::collection::vec(prop_oneof![0usize..4, 60usize..70, 120usize..200], 0..12),
            end_newline: bool,
            skip in 0usize..4,
            stop_at in 0usize..14,
        ) {
            let mut text: Vec<u8> = Vec::new();
            for (k, &n) in lines.iter().enumerate() {
                text.extend((0..n).map(|i| b"ab \t\xce"[(i + k) % 5]));
                text.push(b'\n');
            }
            if !end_newline && text.last() == Some(&b'\n') {
                text.pop();
            }
            // From the start of line `skip` (or the end).
            let from = (text.split_inclusive(|&b| b == b'\n'))
                .take(skip)
                .map(|l| l.len())
                .sum::<usize>();
            let mut want = Vec::new();
            let mut at = from;
            for l in text[from..].split_inclusive(|&b| b == b'\n') {
                let end = at + l.len() - usize::from(l.last() == Some(&b'\n'));
                want.push((at, end));
                at += l.len();
            }
            let mut got = Vec::new();
            let whole = each_line(&text, from..text.len(), |a, b| {
                got.push((a, b));
                true
            });
            prop_assert!(whole);
            prop_assert_eq!(&got, &want);
            // Told to stop at line `stop_at`: the lines before it and that one.
            let mut seen = 0;
            let whole = each_line(&text, from..text.len(), |_, _| {
                seen += 1;
                seen <= stop_at
            });
            prop_assert_eq!(whole, stop_at >= want.len());
            prop_assert_eq!(seen, want.len().min(stop_at + 1));
        }
    }

    #[test]
    fn natural_order_compares_numbers_by_value() {
        let ordered: [&[u8]; 9] = [
            b"", b"a", b"g1", b"g2", b"g9", b"g010", b"g10", b"g10a", b"h",
        ];
        for (i, a) in ordered.iter().enumerate() {
            for (j, b) in ordered.iter().enumerate() {
                assert_eq!(natural_cmp(a, b), i.cmp(&j), "{a:?} {b:?}");
            }
        }
        assert_eq!(natural_cmp(b"x7y", b"x07y"), Ordering::Greater);
        assert_eq!(natural_cmp(b"1.10", b"1.9"), Ordering::Greater);
    }

    fn sorted(text: &str) -> Option<(GoalOrder, u64)> {
        goal_order_in(text.as_bytes(), None, 1, ORDER_PART_MIN)
    }

    #[test]
    fn the_order_is_found_or_refused() {
        assert_eq!(sorted("a 0 x 1\nb 0 x 1\n"), Some((GoalOrder::Bytes, 2)));
        assert_eq!(
            sorted("g9 0 x 1\ng10 0 x 1\ng10 0 y 1\n"),
            Some((GoalOrder::Natural, 2))
        );
        // Back to a goal seen before: not grouped, so not sorted.
        assert_eq!(sorted("a 0 x 1\nb 0 x 1\na 0 y 1\n"), None);
        assert_eq!(sorted("b 0 x 1\na 0 x 1\n"), None);
        // Blank and comment lines are passed over; a goal that is a prefix of the next is not
        // taken for it.
        assert_eq!(
            sorted("# c\na 0 x 1\n\nab 0 x 1\nab\t0 y 1\n"),
            Some((GoalOrder::Bytes, 2))
        );
        assert_eq!(sorted("# nothing\n"), None);
    }

    /// The order of `text`'s goals, the obvious way: every line's goal, runs of one goal made
    /// one, then each compared with the next.
    fn order_by_walk(text: &[u8]) -> Option<(GoalOrder, u64)> {
        let mut runs: Vec<&[u8]> = text
            .split(|&b| b == b'\n')
            .filter_map(first_field)
            .collect();
        runs.dedup();
        let ascend = |o: GoalOrder| runs.windows(2).all(|w| o.cmp(w[0], w[1]) == Ordering::Less);
        match (
            runs.len() as u64,
            ascend(GoalOrder::Bytes),
            ascend(GoalOrder::Natural),
        ) {
            (0, _, _) | (_, false, false) => None,
            (n, true, _) => Some((GoalOrder::Bytes, n)),
            (n, _, _) => Some((GoalOrder::Natural, n)),
        }
    }

    proptest! {
        /// Read in parts (cut anywhere, a goal's lines across a cut), the order and the goal
        /// count are the walk's: for goals in byte order, in natural order only, and in neither.
        #[test]
        fn parts_find_the_order_a_walk_finds(
            goals in prop::collection::vec((0u32..40, 1usize..4, 0u8..8), 0..60),
            sort in 0u8..3,
            threads in 1usize..6,
            part_min in 1usize..200,
        ) {
            let mut names: Vec<(String, usize, u8)> =
                goals.iter().map(|&(g, n, c)| (format!("g{g}"), n, c)).collect();
            match sort {
                0 => names.sort_by(|a, b| a.0.cmp(&b.0)),
                1 => names.sort_by(|a, b| natural_cmp(a.0.as_bytes(), b.0.as_bytes())),
                _ => {}
            }
            let mut text = String::new();
            for (name, lines, extra) in &names {
                for l in 0..*lines {
                    match extra {
                        0 => text.push_str("# a comment\n"),
                        1 => text.push('\n'),
                        _ => {}
                    }
                    text.push_str(&format!("{name}\t0 L{l} 1\n"));
                }
            }
            let t = text.as_bytes();
            prop_assert_eq!(goal_order_in(t, None, threads, part_min), order_by_walk(t));
        }
    }

    fn qrels(goals: &[u32], order: GoalOrder) -> (tempfile::NamedTempFile, Vec<String>) {
        let mut names: Vec<String> = goals.iter().map(|g| format!("g{g}")).collect();
        names.sort_by(|a, b| order.cmp(a.as_bytes(), b.as_bytes()));
        names.dedup();
        let mut text = String::new();
        for (k, n) in names.iter().enumerate() {
            if k % 3 == 0 {
                text.push_str("# a comment\n\n");
            }
            for l in 0..=(k % 3) {
                text.push_str(&format!("{n} 0 L{l} 1\n"));
            }
        }
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
        (f, names)
    }

    proptest! {
        /// Bounds found by binary search equal those found by reading every line, for goals in
        /// the file and between them, and the sets read from a goal's range are its judgments.
        #[test]
        fn bounds_agree_with_a_walk(goals in prop::collection::vec(0u32..200, 1..40), probe in 0u32..220, natural in any::<bool>(), step in 1usize..300) {
            let order = if natural { GoalOrder::Natural } else { GoalOrder::Bytes };
            let (f, names) = qrels(&goals, order);
            // An index entry every `step` bytes (one for the whole file when opened).
            let q = SortedQrels::open(f.path()).unwrap().expect("sorted").with_index_step(step);
            prop_assert_eq!(q.goal_count(), names.len() as u64);
            // Byte order when the goals ascend in both.
            let order = q.order();
            let buf = q.bytes();
            let key = format!("g{probe}");
            // The walk: the first real line whose goal is not before (after) the key.
            let walk = |pass: &dyn Fn(&[u8]) -> bool| {
                let mut at = 0;
                while let Some((s, e, g)) = real_line(buf, at, buf.len()) {
                    if !pass(g) {
                        return s;
                    }
                    at = e + 1;
                }
                buf.len()
            };
            let k = key.as_bytes();
            let lo = q.lower_bound(k);
            let hi = q.upper_bound(k);
            prop_assert_eq!(real_line(buf, lo, buf.len()).map(|l| l.0).unwrap_or(buf.len()),
                walk(&|g| order.cmp(g, k) == Ordering::Less));
            prop_assert_eq!(real_line(buf, hi, buf.len()).map(|l| l.0).unwrap_or(buf.len()),
                walk(&|g| order.cmp(g, k) != Ordering::Greater));
            let sets = q.sets(lo..hi).unwrap();
            match names.iter().position(|n| n == &key) {
                Some(k) => {
                    prop_assert_eq!(sets.goal_count(), 1);
                    prop_assert_eq!(sets.judgments(), k % 3 + 1);
                }
                None => prop_assert_eq!(sets.goal_count(), 0),
            }
        }
    }

    #[test]
    fn an_error_in_a_range_names_the_files_line() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, b"a 0 x 1\nb 0 x 1\nb 0 y z\n").unwrap();
        let q = SortedQrels::open(f.path()).unwrap().unwrap();
        let lo = q.lower_bound(b"b");
        assert_eq!(lo, 8);
        let e = q.sets(lo..q.upper_bound(b"b")).unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("integer grade"), "{}", e.message);
    }
}
