//! The binary store: full-library rankings as `u32` lemma ids, read zero-copy from a mapping.
//!
//! Layout (all integers little-endian; see `docs/FORMAT.md`):
//!
//! ```text
//! 0      header (256 bytes): magic "LEMMASTR", version, flags, counts, section table
//!        (offset, length, crc32 of each of the 8 sections), crc32 of the header itself
//! 256..  sections, each starting on a 64-byte boundary:
//!        0 blocks       per goal: n × u32 lemma ids in rank order, then n × f32 scores if present
//!        1 goal index   per goal: block offset u64, n u64, truth offset u64, truth length u64
//!                       (u64::MAX as block offset: no predictions; as truth offset: no actual set)
//!        2 goal names   names concatenated
//!        3 goal ends    u64 end offset of each goal name
//!        4 lemma names  names concatenated
//!        5 lemma ends   u64 end offset of each lemma name
//!        6 truths       per goal: u32 byte length + roaring portable bitmap of judged lemma ids,
//!                       u32 count + (u32 id, i32 grade) for every judged lemma whose grade is not 1
//!        7 reserved     empty
//! ```
//!
//! Opening checks the header checksum, every section's bounds and alignment, the checksums of all
//! sections but the blocks (which [`Store::verify`] checks: reading 1.6 GB to open a file would
//! halve the speed of evaluating it), and the consistency of the index. Lemma ids in blocks are
//! checked against the lemma count as they are read. A truncated or corrupt file is an error
//! that names the file and what is wrong, never a panic.

use crate::error::{ErrorKind, InputError};
use crate::mapped::Stamp;
use crate::truth::{ActualSets, Interner, PushGoalError};
use memmap2::Mmap;
use roaring::RoaringBitmap;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The first 8 bytes of every store.
pub const MAGIC: &[u8; 8] = b"LEMMASTR";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;
const HEADER: usize = 256;
const SECTIONS: usize = 8;
const ALIGN: u64 = 64;
const NONE: u64 = u64::MAX;
/// Flag bit: blocks carry scores.
const HAS_SCORES: u32 = 1;
/// Flag bits 1-2: the tie rule the rankings were ordered under (0: not recorded).
const TIES_SHIFT: u32 = 1;
const TIES_MASK: u32 = 0b11 << TIES_SHIFT;
/// Flag bit: some ranking was cut by a depth.
const DEPTH_CUT: u32 = 1 << 3;
/// Flag bit: some distinct scores of a ranking are equal as `f32` (the stored scores tie where
/// the scores ranked did not).
const F32_TIES: u32 = 1 << 4;
/// Flag bit: the rankings are in file order (not sorted by score).
const FILE_ORDER: u32 = 1 << 5;
/// Every flag bit this build knows: a store with another is refused.
const KNOWN_FLAGS: u32 = HAS_SCORES | TIES_MASK | DEPTH_CUT | F32_TIES | FILE_ORDER;

/// How equal scores were ordered when a store's rankings were made (`convert --ties`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StoreTies {
    /// By name descending (trec_eval's rule).
    Trec,
    /// In file order, to be read as tie groups.
    Group,
    /// In file order.
    File,
}

impl StoreTies {
    /// The option's word (`--ties trec`).
    pub fn word(self) -> &'static str {
        match self {
            StoreTies::Trec => "trec",
            StoreTies::Group => "group",
            StoreTies::File => "file",
        }
    }
}

/// How a store's rankings were made, as its writer recorded it ([`StoreWriter::set_ranking`]):
/// what an evaluation of the store under other options needs to know to give the numbers an
/// evaluation of the predictions it was made from gives.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StoreRanking {
    /// The tie rule the rankings were ordered under.
    pub ties: StoreTies,
    /// The rankings are in file order (`--order file`, or JSONL's default).
    pub file_order: bool,
    /// Some ranking was cut by `--depth`.
    pub depth_cut: bool,
    /// Some distinct scores of a ranking are equal as stored (`f32`).
    pub f32_ties: bool,
}

#[derive(Copy, Clone, Debug, Default)]
struct Section {
    offset: u64,
    len: u64,
    crc: u32,
}

/// One goal's entry in the index.
#[derive(Copy, Clone, Debug)]
struct GoalEntry {
    block: u64,
    n: u64,
    truth: u64,
    truth_len: u64,
}

/// A memory-mapped store. Cheap to share between threads (`&Store` is `Sync`).
pub struct Store {
    path: PathBuf,
    map: Mmap,
    /// The file as it was mapped.
    stamp: Stamp,
    sections: [Section; SECTIONS],
    goals: u64,
    lemmas: u64,
    scores: bool,
    flags: u32,
}

fn corrupt(path: &Path, what: impl Into<String>) -> InputError {
    InputError::file(
        ErrorKind::Syntax,
        path,
        format!("corrupt or truncated store: {}", what.into()),
    )
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

impl Store {
    /// Maps and checks a store (see the module documentation for what is checked).
    pub fn open(path: &Path) -> Result<Store, InputError> {
        let f = File::open(path)
            .map_err(|e| InputError::file(ErrorKind::Io, path, format!("cannot open: {e}")))?;
        // SAFETY: read-only private mapping, never written; a file changed under it is found by
        // its stamp ([`Store::check_unchanged`]) or, cut short, reported on SIGBUS.
        let map = unsafe { crate::mapped::map(&f, path) }
            .map_err(|e| InputError::file(ErrorKind::Io, path, format!("cannot map: {e}")))?;
        let stamp = Stamp::new(std::sync::Arc::new(f), map.len() as u64);
        if map.len() < HEADER {
            return Err(corrupt(
                path,
                format!("{} bytes, shorter than the {HEADER}-byte header", map.len()),
            ));
        }
        if &map[..8] != MAGIC {
            return Err(corrupt(
                path,
                "bad magic (expected \"LEMMASTR\"): not a lemma-eval store",
            ));
        }
        let version = u32_at(&map, 8);
        if version != VERSION {
            return Err(corrupt(
                path,
                format!("format version {version}, this build reads version {VERSION}"),
            ));
        }
        let want_crc = u32_at(&map, HEADER - 4);
        if crc32fast::hash(&map[..HEADER - 4]) != want_crc {
            return Err(corrupt(path, "header checksum mismatch"));
        }
        let flags = u32_at(&map, 12);
        if flags & !KNOWN_FLAGS != 0 {
            return Err(corrupt(
                path,
                format!(
                    "unknown flag bits {:#x} (this build knows {KNOWN_FLAGS:#x})",
                    flags & !KNOWN_FLAGS
                ),
            ));
        }
        let goals = u64_at(&map, 16);
        let lemmas = u64_at(&map, 24);
        let mut sections = [Section::default(); SECTIONS];
        for (i, s) in sections.iter_mut().enumerate() {
            let at = 64 + 20 * i;
            *s = Section {
                offset: u64_at(&map, at),
                len: u64_at(&map, at + 8),
                crc: u32_at(&map, at + 16),
            };
            let end = s
                .offset
                .checked_add(s.len)
                .ok_or_else(|| corrupt(path, format!("section {i} overflows")))?;
            if s.offset < HEADER as u64 || s.offset % ALIGN != 0 || end > map.len() as u64 {
                return Err(corrupt(
                    path,
                    format!(
                        "section {i} at {}+{} does not fit a {}-byte file",
                        s.offset,
                        s.len,
                        map.len()
                    ),
                ));
            }
        }
        let store = Store {
            path: path.to_path_buf(),
            map,
            stamp,
            sections,
            goals,
            lemmas,
            scores: flags & HAS_SCORES != 0,
            flags,
        };
        for i in 1..SECTIONS {
            if crc32fast::hash(store.section(i)) != store.sections[i].crc {
                return Err(corrupt(path, format!("section {i} checksum mismatch")));
            }
        }
        let expect = |i: usize, len: u64, what: &str| -> Result<(), InputError> {
            if store.sections[i].len != len {
                return Err(corrupt(
                    path,
                    format!("{what}: {} bytes, expected {len}", store.sections[i].len),
                ));
            }
            Ok(())
        };
        expect(
            1,
            goals
                .checked_mul(32)
                .ok_or_else(|| corrupt(path, "goal count"))?,
            "goal index",
        )?;
        expect(3, goals * 8, "goal name ends")?;
        expect(
            5,
            lemmas
                .checked_mul(8)
                .ok_or_else(|| corrupt(path, "lemma count"))?,
            "lemma name ends",
        )?;
        if lemmas > u32::MAX as u64 {
            return Err(corrupt(path, "more lemmas than u32 ids"));
        }
        store.check_ends(3, 2, "goal")?;
        store.check_ends(5, 4, "lemma")?;
        let width = if store.scores { 8 } else { 4 };
        for g in 0..goals as usize {
            let e = store.entry(g);
            if e.block != NONE {
                let bytes =
                    e.n.checked_mul(width)
                        .ok_or_else(|| corrupt(path, format!("goal {g}: ranking length")))?;
                if e.block % 4 != 0
                    || e.block
                        .checked_add(bytes)
                        .is_none_or(|x| x > store.sections[0].len)
                {
                    return Err(corrupt(
                        path,
                        format!("goal {g}: ranking outside the blocks section"),
                    ));
                }
            }
            if e.truth != NONE
                && e.truth
                    .checked_add(e.truth_len)
                    .is_none_or(|x| x > store.sections[6].len)
            {
                return Err(corrupt(
                    path,
                    format!("goal {g}: actual set outside the truths section"),
                ));
            }
        }
        Ok(store)
    }

    fn check_ends(&self, ends: usize, blob: usize, what: &str) -> Result<(), InputError> {
        let (e, len) = (self.section(ends), self.sections[blob].len);
        let mut prev = 0;
        for i in 0..e.len() / 8 {
            let x = u64_at(e, 8 * i);
            if x < prev || x > len {
                return Err(corrupt(
                    &self.path,
                    format!("{what} name {i} ends at {x}, outside its table"),
                ));
            }
            prev = x;
        }
        Ok(())
    }

    fn section(&self, i: usize) -> &[u8] {
        let s = self.sections[i];
        &self.map[s.offset as usize..(s.offset + s.len) as usize]
    }

    fn entry(&self, g: usize) -> GoalEntry {
        let b = self.section(1);
        let at = 32 * g;
        GoalEntry {
            block: u64_at(b, at),
            n: u64_at(b, at + 8),
            truth: u64_at(b, at + 16),
            truth_len: u64_at(b, at + 24),
        }
    }

    /// `goal 3 ("name")`, for errors.
    fn goal_label(&self, g: usize) -> String {
        format!(
            "goal {g} ({:?})",
            String::from_utf8_lossy(self.goal_name(g))
        )
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// An error if the file is no longer as it was mapped (its length or modification time
    /// moved): what was read of it may be of another file.
    pub fn check_unchanged(&self) -> Result<(), InputError> {
        self.stamp.check(&self.path)
    }

    /// Number of goals.
    pub fn goals(&self) -> usize {
        self.goals as usize
    }

    /// Number of lemmas (ids are `0..lemmas`).
    pub fn lemmas(&self) -> usize {
        self.lemmas as usize
    }

    /// Whether rankings carry scores.
    pub fn has_scores(&self) -> bool {
        self.scores
    }

    /// How the rankings were made, when the writer recorded it (`convert` does; `None` for
    /// stores that record nothing, such as `gen`'s).
    pub fn ranking_made(&self) -> Option<StoreRanking> {
        let ties = match (self.flags & TIES_MASK) >> TIES_SHIFT {
            1 => StoreTies::Trec,
            2 => StoreTies::Group,
            3 => StoreTies::File,
            _ => return None,
        };
        Some(StoreRanking {
            ties,
            file_order: self.flags & FILE_ORDER != 0,
            depth_cut: self.flags & DEPTH_CUT != 0,
            f32_ties: self.flags & F32_TIES != 0,
        })
    }

    /// Total bytes of ranking blocks (for throughput figures).
    pub fn block_bytes(&self) -> u64 {
        self.sections[0].len
    }

    fn name(&self, blob: usize, ends: usize, i: usize) -> &[u8] {
        let e = self.section(ends);
        let start = if i == 0 {
            0
        } else {
            u64_at(e, 8 * (i - 1)) as usize
        };
        &self.section(blob)[start..u64_at(e, 8 * i) as usize]
    }

    /// Goal `g`'s id.
    pub fn goal_name(&self, g: usize) -> &[u8] {
        self.name(2, 3, g)
    }

    /// Lemma `id`'s name.
    pub fn lemma_name(&self, id: u32) -> &[u8] {
        self.name(4, 5, id as usize)
    }

    /// Goal `g`'s ranking (lemma ids in rank order) and scores, zero-copy; `None` when the goal had
    /// no predictions.
    pub fn ranking(&self, g: usize) -> Option<(&[u32], Option<&[f32]>)> {
        let e = self.entry(g);
        if e.block == NONE {
            return None;
        }
        let (start, n) = (
            self.sections[0].offset as usize + e.block as usize,
            e.n as usize,
        );
        // Bounds and 4-byte alignment were checked at open; the mapping is page-aligned.
        let ids: &[u32] = bytemuck::cast_slice(&self.map[start..start + 4 * n]);
        let scores = self
            .scores
            .then(|| bytemuck::cast_slice(&self.map[start + 4 * n..start + 8 * n]));
        Some((ids, scores))
    }

    /// Drops the mapped pages of the rankings of goals `goals` (done with them): `MADV_DONTNEED`
    /// on the pages covering their bytes (rankings are stored in goal order, so the goals'
    /// blocks are one byte range). Resident file pages stay at the goals in use, and the
    /// page-table work of unmapping happens now, on the caller's thread.
    pub fn release(&self, goals: std::ops::Range<usize>) {
        let mut blocks = goals.map(|g| self.entry(g)).filter(|e| e.block != NONE);
        let per = if self.scores { 8 } else { 4 };
        let Some(first) = blocks.next() else {
            return;
        };
        let last = blocks.next_back().unwrap_or(first);
        let base = self.sections[0].offset as usize;
        crate::input::drop_pages(
            &self.map,
            base + first.block as usize..base + last.block as usize + per * last.n as usize,
        );
    }

    /// Goal `g`'s actual set, decoded as `(lemma id, grade)` ascending by id; `None` when the
    /// goal has none.
    pub fn truth(&self, g: usize) -> Result<Option<Vec<(u32, i32)>>, InputError> {
        let e = self.entry(g);
        if e.truth == NONE {
            return Ok(None);
        }
        let b = &self.section(6)[e.truth as usize..(e.truth + e.truth_len) as usize];
        let bad = |w: &str| {
            corrupt(
                &self.path,
                format!("{}: actual set {w}", self.goal_label(g)),
            )
        };
        if b.len() < 4 {
            return Err(bad("too short"));
        }
        let blen = u32_at(b, 0) as usize;
        if 4 + blen + 4 > b.len() {
            return Err(bad("bitmap length outside the record"));
        }
        let judged = RoaringBitmap::deserialize_from(&b[4..4 + blen])
            .map_err(|e| bad(&format!("bitmap: {e}")))?;
        if judged.serialized_size() != blen {
            return Err(bad(&format!(
                "bitmap record of {blen} bytes holds a {}-byte bitmap",
                judged.serialized_size()
            )));
        }
        if judged.max().is_some_and(|m| m as u64 >= self.lemmas) {
            return Err(bad("names a lemma id beyond the lemma table"));
        }
        let count = u32_at(b, 4 + blen) as usize;
        let rest = &b[8 + blen..];
        if rest.len() != 8 * count {
            return Err(bad("grade list length"));
        }
        let special: Vec<(u32, i32)> = (0..count)
            .map(|i| (u32_at(rest, 8 * i), u32_at(rest, 8 * i + 4) as i32))
            .collect();
        if special.windows(2).any(|w| w[0].0 >= w[1].0)
            || special.iter().any(|&(id, _)| !judged.contains(id))
        {
            return Err(bad("grade list not sorted or not within the judged set"));
        }
        // The file keeps only the grades that are not 1.
        let all: Vec<(u32, i32)> = judged
            .iter()
            .map(|id| {
                (
                    id,
                    special
                        .binary_search_by_key(&id, |&(l, _)| l)
                        .map_or(1, |i| special[i].1),
                )
            })
            .collect();
        Ok(Some(all))
    }

    /// The actual sets of the store, with lemma ids equal to the store's ids.
    pub fn actual_sets(&self) -> Result<ActualSets, InputError> {
        let mut sets = ActualSets::default();
        for id in 0..self.lemmas as u32 {
            sets.lemmas.intern(self.lemma_name(id));
        }
        if sets.lemmas.len() as u64 != self.lemmas {
            return Err(corrupt(&self.path, "the lemma table repeats a name"));
        }
        for g in 0..self.goals() {
            if let Some(mut t) = self.truth(g)? {
                match sets.push_goal(self.goal_name(g), &mut t) {
                    Ok(_) => {}
                    Err(PushGoalError::GoalRepeated) => {
                        return Err(corrupt(&self.path, "the goal table repeats a name"))
                    }
                    Err(PushGoalError::LemmaRepeated(_)) => {
                        return Err(corrupt(&self.path, "an actual set repeats a lemma"))
                    }
                }
            }
        }
        self.check_unchanged()?;
        Ok(sets)
    }

    /// Checks everything [`Store::open`] leaves out and every reader relies on: the blocks'
    /// checksum; the reserved header bytes zero and section 7 empty; the header's entry count
    /// against the index; every ranking's ids within the lemma table and no id twice in one
    /// ranking; every actual set decoding exactly (its bitmap as long as its record says, ids
    /// within the lemma table, its grade list sorted and within the judged set); an index entry
    /// without a ranking or an actual set has no length; goal and lemma names valid UTF-8 and
    /// distinct. Each error names the file, the goal (index and name) and what was expected.
    pub fn verify(&self) -> Result<(), InputError> {
        if crc32fast::hash(self.section(0)) != self.sections[0].crc {
            return Err(corrupt(&self.path, "ranking blocks checksum mismatch"));
        }
        let header = &self.map[..HEADER];
        for (range, what) in [(40..64, "bytes 40..64"), (224..252, "bytes 224..252")] {
            if let Some(i) = header[range.clone()].iter().position(|&b| b != 0) {
                return Err(corrupt(
                    &self.path,
                    format!(
                        "header {what} are reserved and must be zero, byte {} is {:#04x}",
                        range.start + i,
                        header[range.start + i]
                    ),
                ));
            }
        }
        if self.sections[7].len != 0 {
            return Err(corrupt(
                &self.path,
                format!(
                    "section 7 is reserved and must be empty, it holds {} bytes",
                    self.sections[7].len
                ),
            ));
        }
        let goal = |g: usize| self.goal_label(g);
        let mut entries: u64 = 0;
        let mut seen = vec![0u64; (self.lemmas as usize).div_ceil(64)];
        for g in 0..self.goals() {
            let e = self.entry(g);
            if e.block == NONE && e.n != 0 {
                return Err(corrupt(
                    &self.path,
                    format!(
                        "{}: no ranking, but a ranking length of {} (expected 0)",
                        goal(g),
                        e.n
                    ),
                ));
            }
            if e.truth == NONE && e.truth_len != 0 {
                return Err(corrupt(
                    &self.path,
                    format!(
                        "{}: no actual set, but an actual set length of {} (expected 0)",
                        goal(g),
                        e.truth_len
                    ),
                ));
            }
            entries = entries.saturating_add(e.n);
            if let Some((ids, scores)) = self.ranking(g) {
                for (rank, &id) in ids.iter().enumerate() {
                    let bad = |what: String| {
                        corrupt(
                            &self.path,
                            format!("{}, rank {}: {what}", goal(g), rank + 1),
                        )
                    };
                    if id as u64 >= self.lemmas {
                        return Err(bad(format!(
                            "lemma id {id}, expected below the lemma count {}",
                            self.lemmas
                        )));
                    }
                    let (w, bit) = (id as usize / 64, 1u64 << (id % 64));
                    if seen[w] & bit != 0 {
                        return Err(bad(format!(
                            "lemma id {id} ranked twice, expected each lemma once"
                        )));
                    }
                    seen[w] |= bit;
                }
                for &id in ids {
                    seen[id as usize / 64] = 0;
                }
                if let Some(rank) = scores.and_then(|s| s.iter().position(|x| x.is_nan())) {
                    return Err(corrupt(
                        &self.path,
                        format!(
                            "{}, rank {}: score is NaN, expected a number",
                            goal(g),
                            rank + 1
                        ),
                    ));
                }
            }
            if e.truth != NONE {
                self.truth(g)?;
            }
        }
        let want = u64_at(header, 32);
        if entries != want {
            return Err(corrupt(
                &self.path,
                format!("the header counts {want} ranking entries, the goal index {entries}"),
            ));
        }
        self.check_names(2, 3, "goal")?;
        self.check_names(4, 5, "lemma")?;
        self.check_unchanged()
    }

    fn check_names(&self, blob: usize, ends: usize, what: &str) -> Result<(), InputError> {
        let n = self.sections[ends].len as usize / 8;
        let mut seen = std::collections::HashSet::with_capacity(n);
        for i in 0..n {
            let name = self.name(blob, ends, i);
            if std::str::from_utf8(name).is_err() {
                return Err(corrupt(
                    &self.path,
                    format!(
                        "{what} {i} ({:?}): name is not valid UTF-8",
                        String::from_utf8_lossy(name)
                    ),
                ));
            }
            if !seen.insert(name) {
                return Err(corrupt(
                    &self.path,
                    format!(
                        "{what} {i} ({:?}): name repeated, expected each {what} once",
                        String::from_utf8_lossy(name)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Writes a store: goals one at a time (rankings streamed to disk), names and actual sets at the
/// end, then the header. The file appears under its name only when [`StoreWriter::finish`]
/// succeeds ([`lemma_outfile::OutFile`]: a temporary file synced and renamed over a regular file;
/// a device is written in place; a FIFO cannot take a store, whose header is written last).
pub struct StoreWriter {
    out: BufWriter<lemma_outfile::OutFile>,
    scores: bool,
    ranking: Option<StoreRanking>,
    block_crc: crc32fast::Hasher,
    block_len: u64,
    index: Vec<GoalEntry>,
    goal_names: Vec<u8>,
    goal_ends: Vec<u64>,
    truths: Vec<u8>,
}

impl StoreWriter {
    /// Starts a store at `path`; `scores` says whether every ranking carries scores.
    pub fn create(path: &Path, scores: bool) -> io::Result<StoreWriter> {
        let mut out = BufWriter::with_capacity(1 << 20, lemma_outfile::OutFile::create(path)?);
        out.write_all(&[0u8; HEADER])?;
        Ok(StoreWriter {
            out,
            scores,
            ranking: None,
            block_crc: crc32fast::Hasher::new(),
            block_len: 0,
            index: Vec::new(),
            goal_names: Vec::new(),
            goal_ends: Vec::new(),
            truths: Vec::new(),
        })
    }

    /// Records how the rankings were made (written in the header's flags by
    /// [`StoreWriter::finish`]; [`Store::ranking_made`] reads it back).
    pub fn set_ranking(&mut self, ranking: StoreRanking) {
        self.ranking = Some(ranking);
    }

    /// Adds a goal: its ranking (lemma ids in rank order, `None` if it had no predictions) with
    /// scores when the store has them, and its actual set (judged ids with grades; `None` if none).
    pub fn add_goal(
        &mut self,
        name: &[u8],
        ranking: Option<(&[u32], Option<&[f32]>)>,
        truth: Option<&[(u32, i32)]>,
    ) -> io::Result<()> {
        self.goal_names.extend_from_slice(name);
        self.goal_ends.push(self.goal_names.len() as u64);
        let (block, n) =
            match ranking {
                None => (NONE, 0),
                Some((ids, scores)) => {
                    let at = self.block_len;
                    let ids_bytes: &[u8] = bytemuck::cast_slice(ids);
                    self.write_block(ids_bytes)?;
                    match (self.scores, scores) {
                        (true, Some(s)) if s.len() == ids.len() => {
                            self.write_block(bytemuck::cast_slice(s))?
                        }
                        (false, None) => {}
                        _ => return Err(io::Error::other(
                            "scores must be given for every goal of a scored store, and only then",
                        )),
                    }
                    (at, ids.len() as u64)
                }
            };
        let (truth_at, truth_len) = match truth {
            None => (NONE, 0),
            Some(judged) => {
                let at = self.truths.len() as u64;
                let bitmap: RoaringBitmap = judged.iter().map(|&(id, _)| id).collect();
                self.truths
                    .extend_from_slice(&(bitmap.serialized_size() as u32).to_le_bytes());
                bitmap.serialize_into(&mut self.truths)?;
                let mut special: Vec<(u32, i32)> =
                    judged.iter().copied().filter(|&(_, g)| g != 1).collect();
                special.sort_unstable();
                special.dedup_by_key(|e| e.0);
                self.truths
                    .extend_from_slice(&(special.len() as u32).to_le_bytes());
                for (id, g) in special {
                    self.truths.extend_from_slice(&id.to_le_bytes());
                    self.truths.extend_from_slice(&g.to_le_bytes());
                }
                (at, self.truths.len() as u64 - at)
            }
        };
        self.index.push(GoalEntry {
            block,
            n,
            truth: truth_at,
            truth_len,
        });
        Ok(())
    }

    fn write_block(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.block_crc.update(bytes);
        self.block_len += bytes.len() as u64;
        Ok(())
    }

    /// Writes the lemma table (`lemmas`' ids are the ids used in rankings and actual sets), the
    /// index and the header, then renames the file into place.
    pub fn finish(self, lemmas: &Interner) -> io::Result<()> {
        self.finish_uncommitted(lemmas)?.commit()
    }

    /// [`StoreWriter::finish`] but the commit: the store, written whole, for the caller to commit
    /// with its other outputs ([`lemma_outfile::commit_all`]); dropped, it leaves nothing.
    pub fn finish_uncommitted(mut self, lemmas: &Interner) -> io::Result<lemma_outfile::OutFile> {
        let mut sections = [Section::default(); SECTIONS];
        sections[0] = Section {
            offset: HEADER as u64,
            len: self.block_len,
            crc: self.block_crc.clone().finalize(),
        };
        let mut pos = HEADER as u64 + self.block_len;
        let mut index = Vec::with_capacity(self.index.len() * 32);
        for e in &self.index {
            for x in [e.block, e.n, e.truth, e.truth_len] {
                index.extend_from_slice(&x.to_le_bytes());
            }
        }
        let ends = |v: &[u64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let mut lemma_names = Vec::new();
        let mut lemma_ends = Vec::with_capacity(lemmas.len());
        for id in 0..lemmas.len() as u32 {
            lemma_names.extend_from_slice(lemmas.name(id));
            lemma_ends.push(lemma_names.len() as u64);
        }
        let goal_names = std::mem::take(&mut self.goal_names);
        let truths = std::mem::take(&mut self.truths);
        let bodies: [Vec<u8>; SECTIONS - 1] = [
            index,
            goal_names,
            ends(&self.goal_ends),
            lemma_names,
            ends(&lemma_ends),
            truths,
            Vec::new(),
        ];
        for (i, body) in bodies.iter().enumerate() {
            let pad = (ALIGN - pos % ALIGN) % ALIGN;
            self.out.write_all(&vec![0u8; pad as usize])?;
            pos += pad;
            sections[i + 1] = Section {
                offset: pos,
                len: body.len() as u64,
                crc: crc32fast::hash(body),
            };
            self.out.write_all(body)?;
            pos += body.len() as u64;
        }
        // Section 0 must be 64-aligned too: it starts right after the 256-byte header.
        let mut header = vec![0u8; HEADER];
        header[..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&VERSION.to_le_bytes());
        let mut flags = if self.scores { HAS_SCORES } else { 0 };
        if let Some(r) = self.ranking {
            let ties = match r.ties {
                StoreTies::Trec => 1,
                StoreTies::Group => 2,
                StoreTies::File => 3,
            };
            flags |= ties << TIES_SHIFT;
            for (bit, yes) in [
                (DEPTH_CUT, r.depth_cut),
                (F32_TIES, r.f32_ties),
                (FILE_ORDER, r.file_order),
            ] {
                if yes {
                    flags |= bit;
                }
            }
        }
        header[12..16].copy_from_slice(&flags.to_le_bytes());
        header[16..24].copy_from_slice(&(self.index.len() as u64).to_le_bytes());
        header[24..32].copy_from_slice(&(lemmas.len() as u64).to_le_bytes());
        let entries: u64 = self.index.iter().map(|e| e.n).sum();
        header[32..40].copy_from_slice(&entries.to_le_bytes());
        for (i, s) in sections.iter().enumerate() {
            let at = 64 + 20 * i;
            header[at..at + 8].copy_from_slice(&s.offset.to_le_bytes());
            header[at + 8..at + 16].copy_from_slice(&s.len.to_le_bytes());
            header[at + 16..at + 20].copy_from_slice(&s.crc.to_le_bytes());
        }
        let crc = crc32fast::hash(&header[..HEADER - 4]);
        header[HEADER - 4..].copy_from_slice(&crc.to_le_bytes());
        let mut tmp = self.out.into_inner().map_err(|e| e.into_error())?;
        tmp.seek(SeekFrom::Start(0))?;
        tmp.write_all(&header)?;
        Ok(tmp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(dir: &Path, scores: bool) -> (PathBuf, Interner) {
        let mut lemmas = Interner::new();
        for n in ["a", "b", "c", "x", "y"] {
            lemmas.intern(n.as_bytes());
        }
        let p = dir.join("s.store");
        let mut w = StoreWriter::create(&p, scores).unwrap();
        let s = [0.9f32, 0.5, 0.1];
        w.add_goal(
            b"g1",
            Some((&[3, 0, 1], scores.then_some(&s[..]))),
            Some(&[(0, 1), (1, 2), (2, 0)]),
        )
        .unwrap();
        w.add_goal(b"g2", None, Some(&[(4, 1)])).unwrap();
        w.add_goal(b"g3", Some((&[], scores.then_some(&[][..]))), None)
            .unwrap();
        w.finish(&lemmas).unwrap();
        (p, lemmas)
    }

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        for scores in [false, true] {
            let (p, _) = sample(dir.path(), scores);
            let s = Store::open(&p).unwrap();
            s.verify().unwrap();
            assert_eq!((s.goals(), s.lemmas(), s.has_scores()), (3, 5, scores));
            assert_eq!(s.goal_name(1), b"g2");
            assert_eq!(s.lemma_name(3), b"x");
            let (ids, sc) = s.ranking(0).unwrap();
            assert_eq!(ids, &[3, 0, 1]);
            assert_eq!(
                sc.map(|x| x.to_vec()),
                scores.then(|| vec![0.9f32, 0.5, 0.1])
            );
            assert!(s.ranking(1).is_none());
            assert_eq!(s.ranking(2).unwrap().0.len(), 0);
            let t = s.truth(0).unwrap().unwrap();
            assert_eq!(t, vec![(0, 1), (1, 2), (2, 0)]);
            assert!(s.truth(2).unwrap().is_none());
            let sets = s.actual_sets().unwrap();
            assert_eq!(sets.goals.len(), 2);
            let (_, t) = sets.goal(b"g1").unwrap();
            assert_eq!(
                (t.grade(0), t.grade(1), t.grade(2), t.grade(3)),
                (Some(1), Some(2), Some(0), None)
            );
            assert_eq!(t.grades_desc(), &[2, 1, 0]);
            assert_eq!(sets.lemmas.get(b"y"), Some(4));
        }
    }

    #[test]
    fn how_the_rankings_were_made_reads_back_and_unknown_flags_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (p, lemmas) = sample(dir.path(), true);
        assert_eq!(Store::open(&p).unwrap().ranking_made(), None);
        for ties in [StoreTies::Trec, StoreTies::Group, StoreTies::File] {
            for bits in 0..8u8 {
                let made = StoreRanking {
                    ties,
                    file_order: bits & 1 != 0,
                    depth_cut: bits & 2 != 0,
                    f32_ties: bits & 4 != 0,
                };
                let mut w = StoreWriter::create(&p, false).unwrap();
                w.set_ranking(made);
                w.add_goal(b"g", Some((&[1, 0], None)), None).unwrap();
                w.finish(&lemmas).unwrap();
                assert_eq!(Store::open(&p).unwrap().ranking_made(), Some(made));
            }
        }
        // Bit 6 means nothing to this build: refused, the header's checksum made right.
        let mut b = std::fs::read(&p).unwrap();
        b[12] |= 1 << 6;
        let crc = crc32fast::hash(&b[..HEADER - 4]);
        b[HEADER - 4..HEADER].copy_from_slice(&crc.to_le_bytes());
        std::fs::write(&p, &b).unwrap();
        let e = Store::open(&p).err().expect("refused");
        assert!(e.to_string().contains("unknown flag bits 0x40"), "{e}");
    }

    /// `bytes` with every section's checksum and the header's made right again: corruption that
    /// only [`Store::verify`]'s invariants can find.
    fn recrc(bytes: &mut [u8]) {
        for i in 0..SECTIONS {
            let at = 64 + 20 * i;
            let (off, len) = (u64_at(bytes, at) as usize, u64_at(bytes, at + 8) as usize);
            let crc = crc32fast::hash(&bytes[off..off + len]);
            bytes[at + 16..at + 20].copy_from_slice(&crc.to_le_bytes());
        }
        let crc = crc32fast::hash(&bytes[..HEADER - 4]);
        bytes[HEADER - 4..HEADER].copy_from_slice(&crc.to_le_bytes());
    }

    #[test]
    fn verify_checks_what_readers_rely_on_beyond_checksums() {
        let dir = tempfile::tempdir().unwrap();
        let (p, _) = sample(dir.path(), true);
        let good = std::fs::read(&p).unwrap();
        let s = Store::open(&p).unwrap();
        s.verify().unwrap();
        let sec = s.sections;
        let truth0 = (sec[6].offset + s.entry(0).truth) as usize;
        let blen0 = u32_at(&good, truth0) as usize;
        let block0 = (sec[0].offset + s.entry(0).block) as usize;
        drop(s);
        let q = dir.path().join("crafted.store");
        let verify = |edit: &dyn Fn(&mut Vec<u8>)| -> String {
            let mut b = good.clone();
            edit(&mut b);
            recrc(&mut b);
            std::fs::write(&q, &b).unwrap();
            let s = Store::open(&q).expect("opens: only verify finds it");
            let e = s.verify().expect_err("verify refuses it").to_string();
            assert!(
                e.starts_with(&format!("{}: corrupt or truncated store: ", q.display())),
                "{e}"
            );
            e
        };
        // A judged id past the lemma table, inside goal g1's bitmap (its last array value).
        let e = verify(&|b| {
            b[truth0 + 4 + blen0 - 2..truth0 + 4 + blen0].copy_from_slice(&9u16.to_le_bytes())
        });
        assert!(
            e.ends_with("goal 0 (\"g1\"): actual set names a lemma id beyond the lemma table"),
            "{e}"
        );
        // The bitmap's cookie broken: roaring refuses it.
        let e = verify(&|b| b[truth0 + 4] ^= 0xff);
        assert!(e.contains("goal 0 (\"g1\"): actual set bitmap: "), "{e}");
        // The header's entry count (3) off by one.
        let e = verify(&|b| b[32] = 4);
        assert!(
            e.ends_with("the header counts 4 ranking entries, the goal index 3"),
            "{e}"
        );
        // A ranked id past the lemma table, and one ranked twice (g1 ranks 3, 0, 1).
        let e = verify(&|b| b[block0 + 8..block0 + 12].copy_from_slice(&9u32.to_le_bytes()));
        assert!(
            e.ends_with("goal 0 (\"g1\"), rank 3: lemma id 9, expected below the lemma count 5"),
            "{e}"
        );
        let e = verify(&|b| b[block0 + 8..block0 + 12].copy_from_slice(&3u32.to_le_bytes()));
        assert!(
            e.ends_with(
                "goal 0 (\"g1\"), rank 3: lemma id 3 ranked twice, expected each lemma once"
            ),
            "{e}"
        );
        let e = verify(&|b| b[block0 + 12..block0 + 16].copy_from_slice(&f32::NAN.to_le_bytes()));
        assert!(
            e.ends_with("goal 0 (\"g1\"), rank 1: score is NaN, expected a number"),
            "{e}"
        );
        // g2 has no ranking, yet a length.
        let e = verify(&|b| b[sec[1].offset as usize + 32 + 8] = 2);
        assert!(
            e.ends_with("goal 1 (\"g2\"): no ranking, but a ranking length of 2 (expected 0)"),
            "{e}"
        );
        // Reserved header bytes, and a repeated goal name ("g1g2g3" made "g1g1g3").
        let e = verify(&|b| b[50] = 7);
        assert!(
            e.ends_with("header bytes 40..64 are reserved and must be zero, byte 50 is 0x07"),
            "{e}"
        );
        let e = verify(&|b| b[sec[2].offset as usize + 3] = b'1');
        assert!(
            e.ends_with("goal 1 (\"g1\"): name repeated, expected each goal once"),
            "{e}"
        );
        let e = verify(&|b| b[sec[4].offset as usize] = 0xff);
        assert!(
            e.ends_with("lemma 0 (\"\u{fffd}\"): name is not valid UTF-8"),
            "{e}"
        );
        // Unknown flag bits are refused on open already.
        let mut b = good.clone();
        b[13] |= 0x80;
        recrc(&mut b);
        std::fs::write(&q, &b).unwrap();
        let e = Store::open(&q).err().expect("refused").to_string();
        assert!(e.contains("unknown flag bits 0x8000"), "{e}");
    }

    #[test]
    fn corruption_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let (p, _) = sample(dir.path(), true);
        let good = std::fs::read(&p).unwrap();
        let check = |bytes: &[u8], want: &str| {
            let q = dir.path().join("bad.store");
            std::fs::write(&q, bytes).unwrap();
            let e = Store::open(&q)
                .and_then(|s| s.verify().map(|_| s))
                .err()
                .unwrap_or_else(|| panic!("{want}: opened"));
            assert!(e.to_string().contains(want), "{want}: {e}");
        };
        check(&good[..100], "shorter than the 256-byte header");
        check(&good[..good.len() - 10], "does not fit");
        let mut b = good.clone();
        b[0] = b'X';
        check(&b, "bad magic");
        let mut b = good.clone();
        b[8] = 9;
        check(&b, "format version 9");
        let mut b = good.clone();
        b[20] ^= 1;
        check(&b, "header checksum mismatch");
        // Flip a byte in each section's body: its checksum names it.
        let s = Store::open(&p).unwrap();
        for i in 0..7 {
            let sec = s.sections[i];
            if sec.len == 0 {
                continue;
            }
            let mut b = good.clone();
            b[sec.offset as usize] ^= 0x55;
            let want = if i == 0 {
                "ranking blocks checksum mismatch".to_string()
            } else {
                format!("section {i} checksum mismatch")
            };
            check(&b, &want);
        }
        assert!(Store::open(&dir.path().join("missing"))
            .err()
            .unwrap()
            .to_string()
            .contains("cannot open"));
    }
}
