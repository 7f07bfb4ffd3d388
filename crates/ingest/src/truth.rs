//! Actual sets in memory: interned lemma ids, each goal's sorted in one shared array, grades where
//! they are not binary.
//!
//! Only lemmas named by some actual set are interned; a predicted lemma the interner has never seen
//! is unjudged (non-relevant) for every goal and is never stored. Lookups hash a name once
//! ([`Interner::hash`]) so that the caller can reuse the hash (for duplicate detection, say).

use crate::error::{ErrorKind, InputError};
use crate::fields::{parse_grade, prefetch, same_bytes, show, split_line_checked};
use crate::input::{BatchReader, Format, GoalKey, Input};
use crate::names::Names;
use crate::run::PremiseRef;
use crate::spill::SpillOptions;
use memmap2::Mmap;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

mod held;

/// The hash of a lemma or goal name, computed once per ranked line.
///
/// Folded multiplies (the 128-bit product's halves XORed, as foldhash and wyhash do) over 8-byte
/// words: a name of up to 16 bytes is two overlapping words and two multiplies; one of 17 to 32
/// bytes (most lemma names) its first and last 16 bytes in two independent multiplies; a longer
/// one one multiply per 16 bytes plus the last 16. Called directly on the bytes, it skips the
/// `Hasher` trait's length prefix and buffering, about a third of the instructions for a 20-byte
/// name.
/// Every bit of the result depends on every input byte (hash tables use the low bits for buckets
/// and the high bits for tags). Not keyed: inputs are the user's own files, not an adversary's.
#[inline(always)]
pub fn name_hash(name: &[u8]) -> u64 {
    const K: [u64; 4] = [
        0x243f_6a88_85a3_08d3,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
        0x082e_fa98_ec4e_6c89,
    ];
    #[inline(always)]
    fn fold(a: u64, b: u64) -> u64 {
        let p = (a as u128).wrapping_mul(b as u128);
        (p as u64) ^ ((p >> 64) as u64)
    }
    #[inline(always)]
    fn w64(s: &[u8], i: usize) -> u64 {
        u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"))
    }
    #[inline(always)]
    fn w32(s: &[u8], i: usize) -> u64 {
        u32::from_le_bytes(s[i..i + 4].try_into().expect("4 bytes")) as u64
    }
    let n = name.len();
    if n > 16 && n <= 32 {
        // Most lemma names: the first and the last 16 bytes (overlapping below 32), each folded
        // with its own constants, in two independent multiplies; the length in the second word.
        return fold(w64(name, 0) ^ K[0], w64(name, 8) ^ K[1] ^ (n as u64) << 56)
            ^ fold(w64(name, n - 16) ^ K[2], w64(name, n - 8) ^ K[3]);
    }
    let (a, b) = if n > 16 {
        let mut h = K[0] ^ n as u64;
        let mut i = 0;
        while i + 16 < n {
            h = fold(w64(name, i) ^ h, w64(name, i + 8) ^ K[1]);
            i += 16;
        }
        (w64(name, n - 16) ^ h, w64(name, n - 8) ^ K[2])
    } else if n >= 8 {
        (w64(name, 0), w64(name, n - 8))
    } else if n >= 4 {
        (w32(name, 0), w32(name, n - 4))
    } else if n > 0 {
        let bytes = name[0] as u64 | (name[n / 2] as u64) << 8 | (name[n - 1] as u64) << 16;
        (bytes, 0)
    } else {
        (0, 0)
    };
    // Length in the second operand: prefixes and overlapping reads of different lengths differ.
    fold(
        fold(a ^ K[3], b ^ K[1] ^ (n as u64) << 56) ^ K[2],
        K[0] ^ n as u64,
    )
}

/// Names to dense `u32` ids, in order of first interning. Names live in one buffer ([`Names`]);
/// the table is open addressing with linear probing, each 16-byte slot holding 32 bits of the
/// name's hash, its id and where its bytes lie, so a lookup touches one slot and the name (no
/// side arrays), and the slot can be fetched ahead ([`Interner::intern_many`]).
///
/// A *listed* interner ([`Interner::push_listed`]) holds names without a table: each name pushed
/// is a new id, repeats included. The actual sets of a batch of predictions are read so (their
/// lemmas are only read back by id, [`Interner::hash_of`] and [`Interner::name`]), which spares
/// a table lookup a judgment. A lookup by name in a listed interner scans its names; interning
/// into it indexes them first (a name listed twice is then found under its first id).
#[derive(Clone, Debug, Default)]
pub struct Interner {
    /// A power of two of slots (or none), at most 3/4 full (linear probing's probes stay short).
    slots: Vec<Slot>,
    names: Names,
    hashes: Vec<u64>,
    /// Names were pushed by [`Interner::push_listed`] and are in no slot.
    listed: bool,
}

/// A table slot: `tag_id` is the hash's high 32 bits over the id (`u32::MAX`: empty); `at` the
/// name's start (low 40 bits) and length (high 24 bits; all ones: read it from the names).
#[derive(Copy, Clone, Debug)]
struct Slot {
    tag_id: u64,
    at: u64,
}

const EMPTY: Slot = Slot {
    tag_id: u32::MAX as u64,
    at: 0,
};
/// A length too long for a slot's 24 bits.
const LONG: u64 = (1 << 24) - 1;

/// The slots of a table for `names` names: a power of two, at most 3/4 full.
fn table_size(names: usize) -> usize {
    (names * 4 / 3 + 1).next_power_of_two().max(16)
}

impl Slot {
    #[inline(always)]
    fn new(hash: u64, id: u32, start: usize, len: usize) -> Slot {
        Slot {
            tag_id: (hash >> 32) << 32 | id as u64,
            at: start as u64 | (len as u64).min(LONG) << 40,
        }
    }

    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.tag_id as u32 == u32::MAX
    }

    #[inline(always)]
    fn id(&self) -> u32 {
        self.tag_id as u32
    }

    #[inline(always)]
    fn tag_matches(&self, hash: u64) -> bool {
        self.tag_id >> 32 == hash >> 32
    }

    #[inline(always)]
    fn start(&self) -> usize {
        (self.at & ((1 << 40) - 1)) as usize
    }
}

impl Interner {
    /// An empty interner.
    pub fn new() -> Self {
        Self::default()
    }

    /// The hash this interner uses for `name` (reusable with [`Interner::get_hashed`]):
    /// [`name_hash`].
    #[inline(always)]
    pub fn hash(&self, name: &[u8]) -> u64 {
        name_hash(name)
    }

    /// The id of `name`, if interned.
    #[inline]
    pub fn get(&self, name: &[u8]) -> Option<u32> {
        self.get_hashed(self.hash(name), name)
    }

    /// Where the probe for `hash` starts.
    #[inline(always)]
    fn home(&self, hash: u64) -> usize {
        hash as usize & (self.slots.len() - 1)
    }

    /// Whether slot `s` holds `name` (hash `hash`).
    #[inline(always)]
    fn holds(&self, s: &Slot, hash: u64, name: &[u8]) -> bool {
        if !s.tag_matches(hash) {
            return false;
        }
        let len = (s.at >> 40) as usize;
        if len != LONG as usize {
            len == name.len() && same_bytes(self.names.bytes(s.start(), len), name)
        } else {
            same_bytes(self.names.get(s.id() as usize), name)
        }
    }

    /// The slot index holding `name`, or the empty slot where it would go.
    #[inline]
    fn find(&self, hash: u64, name: &[u8]) -> Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(hash);
        loop {
            let s = &self.slots[i];
            if s.is_empty() {
                return Err(i);
            }
            if self.holds(s, hash, name) {
                return Ok(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// The id of `name` whose hash is `hash`.
    #[inline]
    pub fn get_hashed(&self, hash: u64, name: &[u8]) -> Option<u32> {
        if self.listed {
            // No table: the names one by one (lists are a batch's judgments, and are read by id).
            return (0..self.len()).find_map(|i| {
                (self.hashes[i] == hash && same_bytes(self.names.get(i), name)).then_some(i as u32)
            });
        }
        if self.slots.is_empty() {
            return None;
        }
        self.find(hash, name).ok().map(|i| self.slots[i].id())
    }

    /// Interns `name`, returning its id (existing or new).
    pub fn intern(&mut self, name: &[u8]) -> u32 {
        let hash = self.hash(name);
        self.intern_hashed(hash, name)
    }

    /// [`Interner::intern`] for `name` whose hash is `hash`.
    #[inline]
    fn intern_hashed(&mut self, hash: u64, name: &[u8]) -> u32 {
        if self.listed {
            self.index_listed();
        }
        if (self.names.len() + 1) * 4 > self.slots.len() * 3 {
            self.grow(self.names.len() + 1);
        }
        match self.find(hash, name) {
            Ok(i) => self.slots[i].id(),
            Err(i) => {
                let id = self.names.len() as u32;
                assert!(id < u32::MAX, "more than 2^32 - 1 names");
                let start = self.names.push(name);
                self.hashes.push(hash);
                self.slots[i] = Slot::new(hash, id, start, name.len());
                id
            }
        }
    }

    /// Interns every name of `names` in order, their ids pushed to `ids` (as [`Interner::intern`]
    /// one after another would give). A software pipeline: while name `i` is interned, the
    /// bytes of name `i + D` are fetched (its slot already in cache) and the slot of name
    /// `i + 2 D`, so a large table's cache misses overlap rather than follow one another (about
    /// 3 times faster on 200,000 lemma names than one at a time).
    pub fn intern_many(&mut self, names: &[&[u8]], ids: &mut Vec<u32>) {
        if names.is_empty() {
            return;
        }
        if self.listed {
            self.index_listed();
        }
        if (self.names.len() + names.len()) * 4 > self.slots.len() * 3 {
            self.grow(self.names.len() + names.len());
        }
        let hashes: Vec<u64> = names.iter().map(|n| name_hash(n)).collect();
        ids.reserve(names.len());
        for (i, (&h, name)) in hashes.iter().zip(names).enumerate() {
            self.ask_ahead(&hashes, i);
            ids.push(self.intern_hashed(h, name));
        }
    }

    /// The ids of `names` ([`Interner::get`] of each, in order), appended to `ids`: looked up
    /// in the software pipeline of [`Interner::intern_many`].
    pub fn get_many(&self, names: &[&[u8]], ids: &mut Vec<Option<u32>>) {
        let pipelined = !self.listed && !self.slots.is_empty();
        let hashes: Vec<u64> = names.iter().map(|n| name_hash(n)).collect();
        ids.reserve(names.len());
        for (i, (&h, name)) in hashes.iter().zip(names).enumerate() {
            if pipelined {
                self.ask_ahead(&hashes, i);
            }
            ids.push(self.get_hashed(h, name));
        }
    }

    /// The pipeline's step before looking up name `i` of a batch hashed `hashes`: the slot of
    /// name `i + 2 D` is asked for, and the bytes of name `i + D` (its slot in cache by now).
    #[inline(always)]
    fn ask_ahead(&self, hashes: &[u64], i: usize) {
        const D: usize = 16;
        let mask = self.slots.len() - 1;
        if let Some(&far) = hashes.get(i + 2 * D) {
            prefetch(&self.slots[self.home(far)]);
        }
        if let Some(&near) = hashes.get(i + D) {
            // The first slot of the probe whose tag matches: most likely the name's.
            let mut j = self.home(near);
            for _ in 0..8 {
                let s = &self.slots[j];
                if s.is_empty() {
                    break;
                }
                if s.tag_matches(near) {
                    prefetch(self.names.bytes(s.start(), 0).as_ptr());
                    break;
                }
                j = (j + 1) & mask;
            }
        }
    }

    /// Appends `name` (whose hash is `hash`, as [`Interner::hash`] gives it) as a new id without
    /// looking for it: the interner becomes a list (see the type's documentation).
    #[inline]
    pub fn push_listed(&mut self, hash: u64, name: &[u8]) -> u32 {
        let id = self.names.len() as u32;
        assert!(id < u32::MAX, "more than 2^32 - 1 names");
        self.listed = true;
        self.names.push(name);
        self.hashes.push(hash);
        id
    }

    /// Makes room for `names` more names of `bytes` bytes in all pushed with
    /// [`Interner::push_listed`] (no table).
    pub fn reserve_listed(&mut self, names: usize, bytes: usize) {
        self.hashes.reserve(names);
        self.names.reserve(names, bytes);
    }

    /// Whether names were pushed with [`Interner::push_listed`] (and are in no table).
    pub fn is_listed(&self) -> bool {
        self.listed
    }

    /// Puts a listed interner's names in a table (a repeated name keeps its first id).
    fn index_listed(&mut self) {
        self.listed = false;
        self.slots = vec![EMPTY; table_size(self.names.len())];
        for id in 0..self.names.len() {
            let (hash, name) = (self.hashes[id], self.names.get(id));
            if let Err(i) = self.find(hash, name) {
                let start = self.names.start(id);
                self.slots[i] = Slot::new(hash, id as u32, start, name.len());
            }
        }
    }

    /// Resizes the table for `names` names (at most 3/4 full).
    fn grow(&mut self, names: usize) {
        if self.listed {
            self.index_listed();
        }
        let want = table_size(names);
        if want <= self.slots.len() {
            return;
        }
        let mut slots = vec![EMPTY; want];
        let mask = want - 1;
        for s in self.slots.iter().filter(|s| !s.is_empty()) {
            let mut i = self.hashes[s.id() as usize] as usize & mask;
            while !slots[i].is_empty() {
                i = (i + 1) & mask;
            }
            slots[i] = *s;
        }
        self.slots = slots;
    }

    /// Hints the cache to bring in name `id`'s hash and offsets: the first of two steps ahead of
    /// [`Interner::hash_of`] and [`Interner::name`].
    #[inline(always)]
    pub fn prefetch_entry(&self, id: u32) {
        if (id as usize) < self.hashes.len() {
            prefetch(&self.hashes[id as usize]);
            prefetch(self.names.offset_at(id as usize));
        }
    }

    /// Hints the cache to bring in the table slot where a lookup of a name hashed `hash` starts
    /// (a lookup asked a little ahead of [`Interner::get_hashed`]).
    #[inline(always)]
    pub fn prefetch_slot(&self, hash: u64) {
        if !self.slots.is_empty() {
            prefetch(&self.slots[self.home(hash)]);
        }
    }

    /// Hints the cache to bring in name `id`'s bytes (best after [`Interner::prefetch_entry`]).
    #[inline(always)]
    pub fn prefetch_name(&self, id: u32) {
        if (id as usize) < self.hashes.len() {
            prefetch(self.names.text_at(id as usize));
        }
    }

    /// The hash of name `id` (as [`Interner::hash`] computes it).
    #[inline]
    pub fn hash_of(&self, id: u32) -> u64 {
        self.hashes[id as usize]
    }

    /// The name of `id`.
    #[inline]
    pub fn name(&self, id: u32) -> &[u8] {
        self.names.get(id as usize)
    }

    /// Makes room for `additional` more names.
    pub fn reserve(&mut self, additional: usize) {
        self.grow(self.names.len() + additional);
        self.hashes.reserve(additional);
        self.names.reserve(additional, additional * 24);
    }

    /// Number of names.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// The bytes held (allocated capacity): the names, 8 bytes of offset and 8 of hash each, and
    /// the table (16 bytes a slot, at least 4/3 of a slot a name).
    pub fn heap_bytes(&self) -> usize {
        self.names.heap_bytes()
            + self.hashes.capacity() * 8
            + self.slots.capacity() * std::mem::size_of::<Slot>()
    }

    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// The actual set of one goal, borrowed from its [`ActualSets`].
#[derive(Clone, Copy, Debug)]
pub struct GoalTruth<'a> {
    /// The judged lemma ids, ascending.
    ids: &'a [u32],
    /// Their grades, when some grade of the sets is not 1.
    grades: Option<&'a [i32]>,
    /// Every judged grade, sorted descending.
    grades_desc: &'a [i32],
}

impl<'a> GoalTruth<'a> {
    /// Every judged lemma of the goal (any grade), ascending.
    #[inline]
    pub fn judged(&self) -> &'a [u32] {
        self.ids
    }

    /// The number of judged lemmas.
    #[inline]
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the goal judges no lemma (an empty actual set).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The grade of lemma `id` in this goal, if judged.
    #[inline]
    pub fn grade(&self, id: u32) -> Option<i32> {
        let i = self.ids.binary_search(&id).ok()?;
        Some(self.grades.map_or(1, |g| g[i]))
    }

    /// `(lemma id, grade)` for every judged lemma, ascending by id.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = (u32, i32)> + 'a {
        let (ids, grades) = (self.ids, self.grades);
        (0..ids.len()).map(move |i| (ids[i], grades.map_or(1, |g| g[i])))
    }

    /// Whether some judged grade is not 1.
    pub fn is_graded(&self) -> bool {
        self.grades_desc.iter().any(|&g| g != 1)
    }

    /// Every judged grade, sorted descending (what the accumulator's `Truth::graded` takes).
    #[inline]
    pub fn grades_desc(&self) -> &'a [i32] {
        self.grades_desc
    }
}

/// All actual sets: the lemma interner, the goal interner and each goal's judgments.
///
/// Memory: the two interners (each name once, with 24 bytes of table and offsets), 8 bytes per
/// goal, and 4 bytes per judgment (the lemma id) when every grade is 1, 12 when grades vary (the
/// grade, and the grades sorted for the measures).
#[derive(Clone, Debug, Default)]
pub struct ActualSets {
    /// Lemma names of all actual sets.
    pub lemmas: Interner,
    /// Goal ids.
    pub goals: Interner,
    /// Goal `g`'s judgments are `ids[starts[g]..starts[g + 1]]` (one more entry than goals).
    starts: Vec<u64>,
    /// Judged lemma ids, each goal's ascending.
    ids: Vec<u32>,
    /// Whether some grade is not 1 (`grades` and `grades_desc` are kept from then on).
    graded: bool,
    /// Grades beside `ids`; empty while every grade is 1.
    grades: Vec<i32>,
    /// Each goal's grades sorted descending; empty while every grade is 1.
    grades_desc: Vec<i32>,
    /// 1s, as many as the largest goal's judgments (the sorted grades of binary goals).
    ones: Vec<i32>,
    /// Judgment rows with grade > 0 (trec_eval's `-c` summary `num_rel`).
    pub positive_rows: u64,
    /// Judgment rows read.
    pub rows: u64,
}

/// Sorts a goal's `(lemma id, grade)` judgments by lemma; `Err(lemma)`: one judged twice.
fn sort_distinct(entries: &mut [(u32, i32)]) -> Result<(), u32> {
    entries.sort_unstable_by_key(|&(l, _)| l);
    match entries.windows(2).find(|w| w[0].0 == w[1].0) {
        Some(w) => Err(w[0].0),
        None => Ok(()),
    }
}

/// Why [`ActualSets::push_goal`] refused a goal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushGoalError {
    /// The goal already has its judgments.
    GoalRepeated,
    /// This lemma id is judged twice.
    LemmaRepeated(u32),
}

impl ActualSets {
    /// Goal `g`'s actual set (`g` below `goals.len()`).
    #[inline]
    pub fn truth(&self, g: u32) -> GoalTruth<'_> {
        let (a, b) = (
            self.starts[g as usize] as usize,
            self.starts[g as usize + 1] as usize,
        );
        if !self.graded {
            GoalTruth {
                ids: &self.ids[a..b],
                grades: None,
                grades_desc: &self.ones[..b - a],
            }
        } else {
            GoalTruth {
                ids: &self.ids[a..b],
                grades: Some(&self.grades[a..b]),
                grades_desc: &self.grades_desc[a..b],
            }
        }
    }

    /// Hints the cache ahead of goal `g`'s evaluation (nothing for a goal id out of range): for
    /// `g + 2`, its judged lemmas' hashes and name offsets; for `g + 1` (brought in by the call
    /// for the goal before), their names' bytes. Goals read in the sets' order then find what
    /// they need in cache.
    #[inline]
    pub fn prefetch_after(&self, g: u32) {
        for (ahead, deep) in [(2, false), (1, true)] {
            let Some(next) = g
                .checked_add(ahead)
                .filter(|&n| (n as usize) < self.goal_count())
            else {
                continue;
            };
            for &id in self.truth(next).judged() {
                if deep {
                    self.lemmas.prefetch_name(id);
                } else {
                    self.lemmas.prefetch_entry(id);
                }
            }
        }
    }

    /// Every goal's actual set, in goal id order.
    pub fn truths(&self) -> impl ExactSizeIterator<Item = GoalTruth<'_>> + '_ {
        (0..self.goal_count() as u32).map(|g| self.truth(g))
    }

    /// The number of goals with an actual set.
    #[inline]
    pub fn goal_count(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// The number of judgments held.
    pub fn judgments(&self) -> usize {
        self.ids.len()
    }

    /// The bytes held (allocated capacity), interners included.
    pub fn heap_bytes(&self) -> usize {
        self.lemmas.heap_bytes() + self.goals.heap_bytes() + self.judgment_bytes()
    }

    /// The bytes held for the judgments themselves, beyond the interned names: 4 a judgment (12
    /// with grades other than 1) and 8 a goal.
    pub fn judgment_bytes(&self) -> usize {
        self.starts.capacity() * 8
            + (self.ids.capacity() + self.grades.capacity() + self.grades_desc.capacity()) * 4
            + self.ones.capacity() * 4
    }

    /// Adds goal `name`'s judgments `(lemma id, grade)` (sorted here by lemma id; the lemma ids
    /// are the caller's, normally from `self.lemmas`), returning the goal's id. Counts `rows` and
    /// `positive_rows`.
    pub fn push_goal(
        &mut self,
        name: &[u8],
        entries: &mut [(u32, i32)],
    ) -> Result<u32, PushGoalError> {
        if self.goals.get(name).is_some() {
            return Err(PushGoalError::GoalRepeated);
        }
        // Checked before the goal is interned: a refused goal changes nothing.
        sort_distinct(entries).map_err(PushGoalError::LemmaRepeated)?;
        let g = self.goals.intern(name);
        self.append_goal(g, entries);
        Ok(g)
    }

    /// Appends goal `g`'s judgments (the next goal id in order): sorted by lemma id, a repeated
    /// lemma refused (its id returned, nothing appended).
    fn finish_goal(&mut self, g: u32, entries: &mut [(u32, i32)]) -> Result<(), u32> {
        sort_distinct(entries)?;
        self.append_goal(g, entries);
        Ok(())
    }

    /// Appends goal `g`'s judgments, sorted by lemma id and distinct.
    fn append_goal(&mut self, g: u32, entries: &[(u32, i32)]) {
        debug_assert_eq!(g as usize, self.goal_count());
        if self.starts.is_empty() {
            self.starts.push(0);
        }
        if !self.graded && entries.iter().any(|e| e.1 != 1) {
            // The first grade other than 1: every earlier judgment's grade is 1.
            self.graded = true;
            self.grades = vec![1; self.ids.len()];
            self.grades_desc = vec![1; self.ids.len()];
        }
        self.ids.extend(entries.iter().map(|e| e.0));
        if self.graded {
            self.grades.extend(entries.iter().map(|e| e.1));
            let at = self.grades_desc.len();
            self.grades_desc.extend(entries.iter().map(|e| e.1));
            self.grades_desc[at..].sort_unstable_by(|a, b| b.cmp(a));
        }
        if self.ones.len() < entries.len() {
            self.ones.resize(entries.len(), 1);
        }
        self.starts.push(self.ids.len() as u64);
        self.rows += entries.len() as u64;
        self.positive_rows += entries.iter().filter(|e| e.1 > 0).count() as u64;
    }

    /// Every judgment as a row (goal id, lemma id, grade), the sets emptied (goals and lemmas
    /// kept): for qrels whose goals come back after other goals.
    fn take_rows(&mut self) -> Vec<Row> {
        let mut rows = Vec::with_capacity(self.ids.len());
        for g in 0..self.goal_count() as u32 {
            rows.extend(self.truth(g).entries().map(|(l, grade)| (g, l, grade)));
        }
        self.starts.clear();
        self.ids = Vec::new();
        self.graded = false;
        self.grades = Vec::new();
        self.grades_desc = Vec::new();
        self.rows = 0;
        self.positive_rows = 0;
        rows
    }
}

#[derive(Deserialize)]
struct ActualLine<'a> {
    #[serde(borrow)]
    goal_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    premises: Option<PremiseSet<'a>>,
    #[serde(borrow)]
    all_pos_premises: Option<Vec<PremiseRef<'a>>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum PremiseSet<'a> {
    #[serde(borrow)]
    List(Vec<PremiseRef<'a>>),
    #[serde(borrow)]
    Graded(HashMap<Cow<'a, str>, i64>),
}

/// One judgment row, for qrels whose goals come back after other goals: goal id, lemma id,
/// grade (12 bytes; the lines of a repeated judgment are found again in the text).
type Row = (u32, u32, i32);

/// Bytes of text read at once from a stream of actual sets (more for a goal that takes more),
/// a quarter of `--memory` when that is less.
const STREAM_BLOCK: usize = 16 << 20;

/// What [`ActualSets::append`] keeps from one block to the next.
#[derive(Default)]
struct Appended {
    /// Every judgment, once a goal came back after others.
    rows: Option<Vec<Row>>,
    /// The block's lemma ids, renumbered.
    ids: Vec<u32>,
    entries: Vec<(u32, i32)>,
}

/// The lines (1-based) of the first two qrels rows that judge `lemma` for `goal`: the error path
/// of a repeated judgment reads the text again rather than keep a line number per row.
fn judgment_lines(all: &[u8], goal: &[u8], lemma: &[u8]) -> Option<(u64, u64)> {
    let mut lines = all
        .split(|&b| b == b'\n')
        .enumerate()
        .filter_map(|(i, line)| {
            let mut f = [&b""[..]; 4];
            let judges =
                crate::fields::split_fields(line, &mut f) == 4 && f[0] == goal && f[2] == lemma;
            judges.then_some(i as u64 + 1)
        });
    // Both rows were read from lines of this shape, so both are found; were they not, the error
    // would still name the lemma and goal, without lines.
    Some((lines.next()?, lines.next()?))
}

/// The error for lemma `lemma` judged twice for goal `goal`, at `lines` (first, second).
fn judged_twice(
    path: &Path,
    sets: &ActualSets,
    goal: &[u8],
    lemma: u32,
    lines: Option<(u64, u64)>,
) -> InputError {
    InputError {
        kind: ErrorKind::Duplicate,
        path: path.to_path_buf(),
        line: lines.map(|l| l.1),
        byte: None,
        first_line: lines.map(|l| l.0),
        message: format!(
            "lemma `{}` is judged twice for goal `{}`",
            show(sets.lemmas.name(lemma)),
            show(goal)
        ),
    }
}

/// Qrels lines gathered into goals: the current goal's judgments (qrels usually come grouped:
/// no row per judgment), or every row once a goal came back after others.
#[derive(Default)]
struct Gather<'t> {
    current: Option<u32>,
    entries: Vec<(u32, i32)>,
    rows: Option<Vec<Row>>,
    last_goal: Option<(&'t [u8], u32)>,
    /// Lines read, their lemmas not yet interned: (goal, lemma, grade).
    pending: Vec<(&'t [u8], &'t [u8], i32)>,
    names: Vec<&'t [u8]>,
    ids: Vec<u32>,
    goal_ids: Vec<u32>,
    runs: Vec<u32>,
}

/// Lines whose lemmas are interned together.
const PENDING: usize = 1024;

impl<'t> Gather<'t> {
    /// Adds qrels line `(goal, lemma, grade)`. `Err((goal, lemma))`: a lemma judged twice.
    #[inline]
    fn line(
        &mut self,
        sets: &mut ActualSets,
        goal: &'t [u8],
        lemma: &'t [u8],
        grade: i32,
    ) -> Result<(), (u32, u32)> {
        self.pending.push((goal, lemma, grade));
        if self.pending.len() == PENDING {
            self.flush(sets)?;
        }
        Ok(())
    }

    /// Interns the pending lines' lemmas together (their table slots and names fetched ahead:
    /// the cache misses overlap, where one line at a time waits for each in turn), then adds
    /// their rows in order.
    fn flush(&mut self, sets: &mut ActualSets) -> Result<(), (u32, u32)> {
        self.ids.clear();
        self.names.clear();
        self.names.extend(self.pending.iter().map(|p| p.1));
        sets.lemmas.intern_many(&self.names, &mut self.ids);
        // The goals likewise, once per run of lines: `runs[k]` is line k's run (0: the goal the
        // lines before these ended with; r > 0: the r-th name interned here).
        self.names.clear();
        self.runs.clear();
        let mut last = self.last_goal.map(|(name, _)| name);
        for &(goal, _, _) in &self.pending {
            if last.is_none_or(|l| !same_bytes(l, goal)) {
                self.names.push(goal);
                last = Some(goal);
            }
            self.runs.push(self.names.len() as u32);
        }
        self.goal_ids.clear();
        sets.goals.intern_many(&self.names, &mut self.goal_ids);
        for k in 0..self.pending.len() {
            let grade = self.pending[k].2;
            let g = match self.runs[k] {
                0 => self.last_goal.expect("run 0 continues the last goal").1,
                r => self.goal_ids[r as usize - 1],
            };
            self.add(sets, g, self.ids[k], grade)?;
        }
        if let (Some(&(goal, _, _)), Some(&r)) = (self.pending.last(), self.runs.last()) {
            if r > 0 {
                self.last_goal = Some((goal, self.goal_ids[r as usize - 1]));
            }
        }
        self.pending.clear();
        Ok(())
    }

    fn add(&mut self, sets: &mut ActualSets, g: u32, l: u32, grade: i32) -> Result<(), (u32, u32)> {
        if let Some(rows) = &mut self.rows {
            rows.push((g, l, grade));
            return Ok(());
        }
        if self.current != Some(g) {
            if let Some(c) = self.current.take() {
                sets.finish_goal(c, &mut self.entries).map_err(|l| (c, l))?;
                self.entries.clear();
            }
            if (g as usize) < sets.goal_count() {
                // A goal back after others: hold every row, group at the end.
                let mut r = sets.take_rows();
                r.push((g, l, grade));
                self.rows = Some(r);
                return Ok(());
            }
            self.current = Some(g);
        }
        self.entries.push((l, grade));
        Ok(())
    }

    /// The last goal, or every row grouped by goal.
    fn finish(mut self, sets: &mut ActualSets) -> Result<(), (u32, u32)> {
        self.flush(sets)?;
        if let Some(c) = self.current {
            sets.finish_goal(c, &mut self.entries).map_err(|l| (c, l))?;
        }
        if let Some(mut rows) = self.rows {
            // Group by goal. Unstable: each goal's rows are sorted by lemma when added, and a
            // repeated judgment's lines are found again in the text.
            rows.sort_unstable_by_key(|r| r.0);
            let mut rest = &rows[..];
            for g in 0..sets.goals.len() as u32 {
                let n = rest.iter().take_while(|r| r.0 == g).count();
                let (these, tail) = rest.split_at(n);
                rest = tail;
                self.entries.clear();
                self.entries.extend(these.iter().map(|r| (r.1, r.2)));
                sets.finish_goal(g, &mut self.entries).map_err(|l| (g, l))?;
            }
        }
        Ok(())
    }
}

impl ActualSets {
    /// Reads qrels (`goal iter lemma grade`, exactly 4 fields) or JSONL actual sets, by format.
    /// A lemma judged twice for one goal is an error naming both lines.
    ///
    /// Qrels whose goals come grouped (each goal's lines together, the usual case) are read in
    /// parts, one a core, cut where goals begin, and joined; any other shape is gathered one goal
    /// at a time, and once a goal comes back after others, every judgment is held as a 12-byte
    /// row and grouped at the end.
    pub fn read(input: Input) -> Result<ActualSets, InputError> {
        Self::read_with_threads(input, lemma_par::default_threads())
    }

    /// [`read`](Self::read) on at most `threads` threads (at least one).
    pub fn read_with_threads(input: Input, threads: usize) -> Result<ActualSets, InputError> {
        Self::read_within(input, threads, &SpillOptions::default())
    }

    /// [`read_with_threads`](Self::read_with_threads) within `spill`'s memory budget: one goal's
    /// lines may take at most half of it ([`SpillOptions::goal_bytes`]) when the text is read from
    /// a stream (compressed, a pipe), in blocks of whole goals (16 MiB, or a quarter of the
    /// budget when that is less) rather than whole, and a lemma judged on two lines in a row of a long goal is refused as it arrives.
    /// A mapped file is read in place.
    pub fn read_within(
        input: Input,
        threads: usize,
        spill: &SpillOptions,
    ) -> Result<ActualSets, InputError> {
        let path = input.path.clone();
        let format = input.format;
        let Some(map) = &input.map else {
            let sets = Self::read_streamed(input, threads, spill)?;
            if sets.goals.is_empty() {
                return Err(InputError::file(
                    ErrorKind::Empty,
                    &path,
                    "has no judgments, expected at least one line",
                ));
            }
            return Ok(sets);
        };
        // The mapping's pages are let go behind the reading.
        let all: &[u8] = map;
        let stamp = match (&input.map, &input.file) {
            (Some(m), Some(f)) => Some(crate::mapped::Stamp::new(f.clone(), m.len() as u64)),
            _ => None,
        };
        let sets = Self::parse(&path, format, all, input.map.as_deref(), threads.max(1));
        // A mapped file changed while it was read: that is the error, whatever the lines gave.
        if let Some(s) = &stamp {
            s.check(&path)?;
        }
        let sets = sets?;
        if sets.goals.is_empty() {
            return Err(InputError::file(
                ErrorKind::Empty,
                &path,
                "has no judgments, expected at least one line",
            ));
        }
        Ok(sets)
    }

    /// Actual sets from a stream, a block of whole goals at a time (about `STREAM_BLOCK`
    /// bytes, more for a longer goal, up to the goal limit), each block read as a text of its
    /// own ([`ActualSets::parse`], on `threads` threads) and appended.
    fn read_streamed(
        input: Input,
        threads: usize,
        spill: &SpillOptions,
    ) -> Result<ActualSets, InputError> {
        let (path, format) = (input.path.clone(), input.format);
        let key = match format {
            Format::Trec => GoalKey::FirstField,
            Format::Jsonl => GoalKey::Line,
        };
        let block = STREAM_BLOCK.min(spill.memory / 4).max(64 << 10);
        let mut reader = BatchReader::new(input, key, block);
        reader.set_max_goal(spill.goal_bytes(), spill.goal_limit_name());
        reader.set_repeats_fatal(true);
        let mut sets = ActualSets::default();
        let mut appended = Appended::default();
        let mut lines_before = 0u64;
        let mut buf = Vec::new();
        loop {
            let batch = match reader.next_batch(std::mem::take(&mut buf)) {
                Ok(Some(b)) => b,
                Ok(None) => break,
                Err(mut e) => {
                    // About the goal after the blocks read, its lines counted from its start.
                    e.line = e.line.map(|l| l + lines_before);
                    e.first_line = e.first_line.map(|l| l + lines_before);
                    return Err(e);
                }
            };
            let shift = |mut e: InputError| {
                e.line = e.line.map(|l| l + lines_before);
                e.first_line = e.first_line.map(|l| l + lines_before);
                e.byte = e.byte.map(|b| b + batch.first_byte);
                e
            };
            let block = Self::parse(&path, format, &batch.data, None, threads).map_err(shift)?;
            sets.append(block, &mut appended, format)
                .map_err(|m| InputError::file(ErrorKind::Syntax, &path, m))?;
            lines_before += memchr::memchr_iter(b'\n', &batch.data).count() as u64;
            buf = batch.data.release().unwrap_or_default();
        }
        sets.finish_appended(appended).map_err(|(g, l)| {
            let goal = sets.goals.name(g).to_vec();
            judged_twice(&path, &sets, &goal, l, None)
        })?;
        sets.ids.shrink_to_fit();
        sets.grades.shrink_to_fit();
        sets.grades_desc.shrink_to_fit();
        Ok(sets)
    }

    /// Appends the goals of `block` (actual sets read from the next whole goals of the same text):
    /// its lemmas interned here in their order, each goal's judgments renumbered and sorted. A
    /// goal already here (qrels whose goals come back) makes every judgment held as a row from
    /// then on, grouped at the end ([`ActualSets::finish_appended`]); in JSONL it is an error.
    fn append(
        &mut self,
        block: ActualSets,
        a: &mut Appended,
        format: Format,
    ) -> Result<(), String> {
        let names: Vec<&[u8]> = (0..block.lemmas.len() as u32)
            .map(|l| block.lemmas.name(l))
            .collect();
        a.ids.clear();
        self.lemmas.intern_many(&names, &mut a.ids);
        for g in 0..block.goal_count() as u32 {
            let name = block.goals.name(g);
            let t = block.truth(g);
            if a.rows.is_none() && self.goals.get(name).is_some() {
                if format == Format::Jsonl {
                    return Err(format!(
                        "goal `{}` has a second line of actual premises",
                        show(name)
                    ));
                }
                a.rows = Some(self.take_rows());
            }
            let ids = &a.ids;
            if let Some(rows) = &mut a.rows {
                let gid = self.goals.intern(name);
                rows.extend(t.entries().map(|(l, grade)| (gid, ids[l as usize], grade)));
                continue;
            }
            a.entries.clear();
            a.entries
                .extend(t.entries().map(|(l, grade)| (ids[l as usize], grade)));
            let gid = self.goals.intern(name);
            // Distinct: the block's goal was checked.
            self.finish_goal(gid, &mut a.entries)
                .map_err(|l| format!("lemma `{}` is judged twice", show(self.lemmas.name(l))))?;
        }
        Ok(())
    }

    /// The rows held by [`ActualSets::append`], grouped by goal. `Err((goal, lemma))`: a lemma
    /// judged twice.
    fn finish_appended(&mut self, a: Appended) -> Result<(), (u32, u32)> {
        let Some(mut rows) = a.rows else {
            return Ok(());
        };
        rows.sort_unstable_by_key(|r| r.0);
        let mut entries = a.entries;
        let mut rest = &rows[..];
        for g in 0..self.goals.len() as u32 {
            let n = rest.iter().take_while(|r| r.0 == g).count();
            let (these, tail) = rest.split_at(n);
            rest = tail;
            entries.clear();
            entries.extend(these.iter().map(|r| (r.1, r.2)));
            self.finish_goal(g, &mut entries).map_err(|l| (g, l))?;
        }
        Ok(())
    }

    /// The actual sets of `all` (the whole text, or whole goals' lines of it: line numbers in
    /// errors are `all`'s), none if it has no judgment. `map`: `all` is this mapping, whose pages
    /// are let go behind the reading. `threads`: how many threads may read grouped qrels.
    pub(crate) fn parse(
        path: &Path,
        format: Format,
        all: &[u8],
        map: Option<&Mmap>,
        threads: usize,
    ) -> Result<ActualSets, InputError> {
        if format == Format::Trec {
            // Grouped qrels of the usual shape: read in parts, a thread each; anything else, and
            // every error, by the general path.
            if let Some(sets) = held::parse(all, map, threads) {
                return Ok(sets);
            }
        }
        Self::parse_general(path, format, all, map)
    }

    /// [`ActualSets::parse`] of TREC qrels on this thread, with where each goal's lines begin in
    /// `all` (goal `g`'s at `[g]`): the fast path notes them as it reads; after the general path
    /// (any other shape) the lines are read again for them.
    pub(crate) fn parse_noting_goals(
        path: &Path,
        all: &[u8],
    ) -> Result<(ActualSets, Vec<usize>), InputError> {
        if let Some(r) = held::parse_one(all) {
            return Ok(r);
        }
        let sets = Self::parse_general(path, Format::Trec, all, None)?;
        Ok((sets, crate::parse::lines::goal_starts(all)))
    }

    /// [`ActualSets::parse`] one line at a time, on this thread: any shape, every error.
    fn parse_general(
        path: &Path,
        format: Format,
        all: &[u8],
        map: Option<&Mmap>,
    ) -> Result<ActualSets, InputError> {
        let mut sets = ActualSets::default();
        // Room for the lemmas of about one judgment per 32 bytes (capped): no table regrowth on
        // qrels of typical size, little memory on small ones.
        sets.lemmas.reserve((all.len() / 32).min(1 << 17));
        let mut gather = Gather::default();
        let mut entries: Vec<(u32, i32)> = Vec::new();
        let mut spans = crate::jsonl::RecordSpans::default();
        // A lemma judged twice for a goal of the qrels.
        let twice = |sets: &ActualSets, (g, l): (u32, u32)| {
            let (goal, lemma) = (sets.goals.name(g), sets.lemmas.name(l));
            judged_twice(path, sets, goal, l, judgment_lines(all, goal, lemma))
        };
        let (mut line_no, mut pos) = (0u64, 0usize);
        let mut behind = crate::input::PagesBehind::new(map, 0);
        while pos < all.len() {
            line_no += 1;
            let here = pos;
            behind.at(pos);
            let err = |m: String| InputError::at(ErrorKind::Syntax, path, line_no, here as u64, m);
            let mut f = [&b""[..]; 4];
            let ((count, end), utf8) = split_line_checked(all, pos, &mut f);
            pos = end + 1;
            if let Err(col) = utf8 {
                return Err(err(format!("invalid UTF-8 at column {}", col + 1)));
            }
            if count == 0 || f[0].first() == Some(&b'#') {
                continue;
            }
            match format {
                Format::Trec => {
                    if count != 4 {
                        let found = if count > 4 {
                            "more".to_string()
                        } else {
                            count.to_string()
                        };
                        return Err(err(format!(
                            "expected 4 fields (goal iter lemma grade), found {found}"
                        )));
                    }
                    let grade = parse_grade(f[3]).ok_or_else(|| {
                        err(format!("expected an integer grade, found `{}`", show(f[3])))
                    })?;
                    gather
                        .line(&mut sets, f[0], f[2], grade)
                        .map_err(|d| twice(&sets, d))?;
                }
                Format::Jsonl => {
                    let text = std::str::from_utf8(&all[here..end])
                        .expect("checked")
                        .trim();
                    entries.clear();
                    // The common shape by the scanner (names borrowed, no allocation); any other
                    // record, and every error, by serde_json.
                    let goal = if crate::jsonl::scan_actual(text, &mut spans) {
                        for n in &spans.names {
                            entries.push((sets.lemmas.intern(n.of(text).as_bytes()), 1));
                        }
                        Cow::Borrowed(spans.goal.of(text))
                    } else {
                        let rec: ActualLine = serde_json::from_str(text).map_err(|e| {
                            err(format!(
                                "expected a JSON object with goal_id and premises (a list of names, or name → grade) \
                                 or all_pos_premises: {e}"
                            ))
                        })?;
                        let goal = rec
                            .goal_id
                            .ok_or_else(|| err("expected a `goal_id` field".into()))?;
                        let mut add = |name: &str, grade: i32| {
                            entries.push((sets.lemmas.intern(name.as_bytes()), grade));
                        };
                        let mut any = false;
                        match rec.premises {
                            Some(PremiseSet::List(v)) => {
                                any = true;
                                v.into_iter().for_each(|p| add(&p.into_name(), 1));
                            }
                            Some(PremiseSet::Graded(m)) => {
                                any = true;
                                // Sorted: lemma ids are given in the same order on every run.
                                let mut v: Vec<_> = m.into_iter().collect();
                                v.sort();
                                for (name, grade) in v {
                                    let grade = i32::try_from(grade)
                                        .ok()
                                        .filter(|&g| g != i32::MIN)
                                        .ok_or_else(|| {
                                            err(format!(
                                                "grade {grade} of `{name}` is out of range"
                                            ))
                                        })?;
                                    add(&name, grade);
                                }
                            }
                            None => {}
                        }
                        if let Some(v) = rec.all_pos_premises {
                            any = true;
                            v.into_iter().for_each(|p| add(&p.into_name(), 1));
                        }
                        if !any {
                            return Err(err("expected `premises` or `all_pos_premises`".into()));
                        }
                        goal
                    };
                    // Names are fields, as in predictions (TREC or JSONL): a goal or premise
                    // with whitespace could never be ranked, and would count as missed.
                    let spaced = crate::fields::holds_delim;
                    if spaced(goal.as_bytes()) {
                        return Err(err(format!(
                            "expected a `goal_id` without whitespace, found `{}`",
                            crate::fields::show(goal.as_bytes())
                        )));
                    }
                    if let Some(&(l, _)) =
                        entries.iter().find(|(l, _)| spaced(sets.lemmas.name(*l)))
                    {
                        return Err(err(format!(
                            "expected premise names without whitespace, found `{}`",
                            crate::fields::show(sets.lemmas.name(l))
                        )));
                    }
                    match sets.push_goal(goal.as_bytes(), &mut entries) {
                        Ok(_) => {}
                        Err(PushGoalError::GoalRepeated) => {
                            return Err(err(format!(
                                "goal `{goal}` has a second line of actual premises"
                            )))
                        }
                        Err(PushGoalError::LemmaRepeated(l)) => {
                            // The goal is not interned: a refused goal changes nothing.
                            let lines = Some((line_no, line_no));
                            return Err(judged_twice(path, &sets, goal.as_bytes(), l, lines));
                        }
                    }
                }
            }
        }
        gather.finish(&mut sets).map_err(|d| twice(&sets, d))?;
        sets.ids.shrink_to_fit();
        sets.grades.shrink_to_fit();
        sets.grades_desc.shrink_to_fit();
        Ok(sets)
    }

    /// Reads actual sets from a file (`-` for stdin), on as many threads as the machine has cores.
    pub fn read_path(path: &Path) -> Result<ActualSets, InputError> {
        Self::read_path_with_threads(path, lemma_par::default_threads())
    }

    /// [`read_path`](Self::read_path) on at most `threads` threads (at least one).
    pub fn read_path_with_threads(path: &Path, threads: usize) -> Result<ActualSets, InputError> {
        Self::read_path_within(path, threads, &SpillOptions::default())
    }

    /// [`read_path_with_threads`](Self::read_path_with_threads) within `spill`'s memory budget
    /// ([`ActualSets::read_within`]).
    pub fn read_path_within(
        path: &Path,
        threads: usize,
        spill: &SpillOptions,
    ) -> Result<ActualSets, InputError> {
        // Mapped when it is a plain file: held whole anyway, no copy.
        Self::read_within(crate::input::open_with(path, true)?, threads, spill)
    }

    /// The truth of goal `name`, with its id.
    #[inline]
    pub fn goal(&self, name: &[u8]) -> Option<(u32, GoalTruth<'_>)> {
        self.goals.get(name).map(|g| (g, self.truth(g)))
    }

    /// [`ActualSets::goal`], trying first the goal after goal `after`: predictions that list
    /// their goals in the actual sets' order find each one by comparing one name read in order
    /// (no hash, no random access into the goal table).
    #[inline]
    pub fn goal_after(&self, after: Option<u32>, name: &[u8]) -> Option<(u32, GoalTruth<'_>)> {
        if let Some(next) = after.and_then(|a| a.checked_add(1)) {
            if (next as usize) < self.goal_count() && same_bytes(self.goals.name(next), name) {
                return Some((next, self.truth(next)));
            }
        }
        self.goal(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_hash_spreads_names_of_every_length() {
        // Equal bytes, equal hashes; prefixes and lengths matter.
        assert_eq!(
            name_hash(b"Nat.add_comm"),
            name_hash(&b"xNat.add_comm"[1..])
        );
        assert_ne!(name_hash(b"a"), name_hash(b"a\0"));
        assert_ne!(name_hash(b""), name_hash(b"\0"));
        // 200,000 distinct names of 1 to 40 bytes: no full collision, and the low bits (buckets),
        // the top six bits (the judged-lemma filter) and bits 40..46 spread evenly.
        let mut seen = std::collections::HashSet::new();
        let (mut low, mut top, mut tag) = ([0u32; 64], [0u32; 64], [0u32; 64]);
        for i in 0..200_000u32 {
            let name = match i % 6 {
                0 => format!("{i}"),
                1 => format!("Mathlib.Algebra.Group.Basic.lemma_{i}"),
                2 => format!("L{i}"),
                // 15 to 20 bytes: on both sides of the 17-32-byte case.
                3 => format!("Nat.add_assoc_{i}"),
                // 17 to 32 bytes, each length in turn: the whole 17-32-byte case.
                4 => {
                    let mut n = format!("{i}.");
                    while n.len() < 17 + (i as usize / 6) % 16 {
                        n.push('x');
                    }
                    n
                }
                _ => format!("{:x}.{i}", i.wrapping_mul(2_654_435_761)),
            };
            let h = name_hash(name.as_bytes());
            assert!(seen.insert(h), "collision at {name}");
            low[(h & 63) as usize] += 1;
            top[(h >> 58) as usize] += 1;
            // Bits 40..46: part of the duplicate table's tag.
            tag[(h >> 40 & 63) as usize] += 1;
        }
        let expected = 200_000 / 64;
        for c in low.iter().chain(&top).chain(&tag) {
            assert!(
                (*c as i64 - expected as i64).abs() < expected as i64 / 10,
                "{c} vs {expected}"
            );
        }
    }

    fn read(text: &str, format: Format) -> Result<ActualSets, InputError> {
        ActualSets::read(Input {
            path: "actual".into(),
            reader: crate::input::Source::stream(std::io::Cursor::new(text.as_bytes().to_vec())),
            size_on_disk: None,
            compression: crate::input::Compression::None,
            format,
            map: None,
            file: None,
        })
    }

    proptest::proptest! {
        /// JSONL actual sets of the common shape (read by the scanner, some with keys it skips)
        /// and the same records with one key more, whose value holds an escape (read by serde):
        /// the same sets, lemma ids in the same order, or the same error (a lemma twice in a
        /// goal, a goal twice).
        #[test]
        fn jsonl_scanner_and_serde_read_the_same_sets(
            records in proptest::collection::vec(
                (0u8..20, proptest::collection::vec((0u8..40, proptest::bool::ANY), 0..6), 0u8..3),
                1..30,
            ),
            spaced: bool,
        ) {
            let sep = if spaced { ", " } else { "," };
            let (mut plain, mut extra) = (String::new(), String::new());
            // Goals distinct but for a rare repeat (an error, to be worded alike).
            for (i, (g, names, key)) in records.iter().enumerate() {
                let g = if *g == 0 && i > 0 { i - 1 } else { i };
                let names: Vec<String> = (names.iter())
                    .map(|(l, object)| match object {
                        false => format!("\"L.{l}\""),
                        true => format!("{{\"full_name\": \"L.{l}\"}}"),
                    })
                    .collect();
                // The third kind with keys the scanner skips (and serde ignores).
                let skipped = if *key == 2 { "\"path\":[1,{\"a\":null}],\"url\":\"u v\"," } else { "" };
                let key = ["premises", "all_pos_premises", "premises"][*key as usize];
                let body = format!("{skipped}\"goal_id\":\"g{g}\"{sep}\"{key}\":[{}]", names.join(sep));
                plain.push_str(&format!("{{{body}}}\n"));
                // An escape: the scanner leaves the record to serde.
                extra.push_str(&format!("{{{body}{sep}\"other\":\"\\u0041\"}}\n"));
            }
            let mut spans = crate::jsonl::RecordSpans::default();
            for line in plain.lines() {
                proptest::prop_assert!(crate::jsonl::scan_actual(line, &mut spans), "{}", line);
            }
            for line in extra.lines() {
                proptest::prop_assert!(!crate::jsonl::scan_actual(line, &mut spans), "{}", line);
            }
            let (a, b) = (read(&plain, Format::Jsonl), read(&extra, Format::Jsonl));
            match (a, b) {
                (Ok(a), Ok(b)) => {
                    let names = |s: &ActualSets, n: &Interner| -> Vec<Vec<u8>> {
                        let _ = s;
                        (0..n.len() as u32).map(|i| n.name(i).to_vec()).collect()
                    };
                    proptest::prop_assert_eq!(names(&a, &a.lemmas), names(&b, &b.lemmas));
                    proptest::prop_assert_eq!(names(&a, &a.goals), names(&b, &b.goals));
                    let truths = |s: &ActualSets| -> Vec<Vec<(u32, i32)>> {
                        s.truths().map(|t| t.entries().collect()).collect()
                    };
                    proptest::prop_assert_eq!(truths(&a), truths(&b));
                    proptest::prop_assert_eq!((a.rows, a.positive_rows), (b.rows, b.positive_rows));
                }
                // The lines differ in length: the same error but for its byte offset.
                (Err(a), Err(b)) => proptest::prop_assert_eq!(
                    (a.kind, a.line, a.first_line, a.message),
                    (b.kind, b.line, b.first_line, b.message)
                ),
                (a, b) => proptest::prop_assert!(false, "{:?} against {:?}", a.is_ok(), b.is_ok()),
            }
        }
    }

    proptest::proptest! {
        /// Qrels in any goal order (grouped, interleaved, goals coming back), binary or graded:
        /// every goal's judgments and sorted grades equal a map built line by line; the counts
        /// add up.
        #[test]
        fn sets_equal_a_map_of_the_lines(
            lines in proptest::collection::vec((0u8..6, 0u8..12, 0i32..4), 1..120),
            binary: bool,
            grouped: bool,
        ) {
            use std::collections::BTreeMap;
            let mut want: BTreeMap<String, BTreeMap<String, i32>> = BTreeMap::new();
            let mut rows = Vec::new();
            for &(g, l, grade) in &lines {
                let grade = if binary { 1 } else { grade - 1 };
                let (g, l) = (format!("g{g}"), format!("L{l}"));
                // A repeated judgment is an error (tested elsewhere): keep the first.
                if want.entry(g.clone()).or_default().insert(l.clone(), grade).is_none() {
                    rows.push((g, l, grade));
                } else {
                    want.get_mut(&g).unwrap().insert(l.clone(), rows.iter().find(|r| r.0 == g && r.1 == l).unwrap().2);
                }
            }
            if grouped {
                // Goals in first-appearance order, each goal's lines together.
                let order: Vec<String> = rows.iter().fold(Vec::new(), |mut v, r| {
                    if !v.contains(&r.0) { v.push(r.0.clone()); }
                    v
                });
                rows.sort_by_key(|r| order.iter().position(|g| *g == r.0));
            }
            let text: String = rows.iter().map(|(g, l, x)| format!("{g} 0 {l} {x}\n")).collect();
            let s = read(&text, Format::Trec).unwrap();
            proptest::prop_assert_eq!(s.goals.len(), want.len());
            proptest::prop_assert_eq!(s.judgments(), rows.len());
            proptest::prop_assert_eq!(s.rows, rows.len() as u64);
            proptest::prop_assert_eq!(s.positive_rows, rows.iter().filter(|r| r.2 > 0).count() as u64);
            for (g, lemmas) in &want {
                let (_, t) = s.goal(g.as_bytes()).unwrap();
                let got: BTreeMap<String, i32> = t
                    .entries()
                    .map(|(id, grade)| (String::from_utf8(s.lemmas.name(id).to_vec()).unwrap(), grade))
                    .collect();
                proptest::prop_assert_eq!(&got, lemmas);
                let mut desc: Vec<i32> = lemmas.values().copied().collect();
                desc.sort_by(|a, b| b.cmp(a));
                proptest::prop_assert_eq!(t.grades_desc(), &desc[..]);
                for (l, &grade) in lemmas {
                    let id = s.lemmas.get(l.as_bytes()).unwrap();
                    proptest::prop_assert_eq!(t.grade(id), Some(grade));
                }
                proptest::prop_assert!(t.judged().windows(2).all(|w| w[0] < w[1]));
            }
        }
    }

    proptest::proptest! {
        /// The interner against a map: ids in order of first interning, one at a time or many
        /// at once (in chunks of any size), across table growth; lookups of absent names miss.
        #[test]
        fn interner_equals_a_map(
            names in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(b"ab.\xce\xbb_0".to_vec()), 0..40),
                1..600,
            ),
            chunk in 1usize..80,
        ) {
            use std::collections::HashMap;
            let mut want: HashMap<&[u8], u32> = HashMap::new();
            let mut one = Interner::new();
            let mut many = Interner::new();
            let mut ids = Vec::new();
            for part in names.chunks(chunk) {
                let slices: Vec<&[u8]> = part.iter().map(|n| &n[..]).collect();
                many.intern_many(&slices, &mut ids);
            }
            for (k, n) in names.iter().enumerate() {
                let next = want.len() as u32;
                let id = *want.entry(&n[..]).or_insert(next);
                proptest::prop_assert_eq!(one.intern(n), id);
                proptest::prop_assert_eq!(ids[k], id);
            }
            proptest::prop_assert_eq!(one.len(), want.len());
            proptest::prop_assert_eq!(many.len(), want.len());
            for (n, &id) in &want {
                proptest::prop_assert_eq!(one.get(n), Some(id));
                proptest::prop_assert_eq!(many.name(id), *n);
                proptest::prop_assert_eq!(many.hash_of(id), name_hash(n));
            }
            proptest::prop_assert_eq!(one.get(b"absent name, longer than any"), None);
            // Looked up many at once: each as `get` gives it, absent names among them (a
            // listed interner, with no table, alike).
            let mut asked: Vec<&[u8]> = names.iter().map(|n| &n[..]).collect();
            asked.insert(asked.len() / 2, b"absent name, longer than any");
            asked.push(b"\xff");
            let mut got = Vec::new();
            many.get_many(&asked, &mut got);
            let want_got: Vec<Option<u32>> = asked.iter().map(|n| want.get(n).copied()).collect();
            proptest::prop_assert_eq!(&got, &want_got);
            let mut listed = Interner::new();
            for (n, _) in {
                let mut v: Vec<_> = want.iter().collect();
                v.sort_by_key(|(_, &id)| id);
                v
            } {
                listed.push_listed(name_hash(n), n);
            }
            let mut got = Vec::new();
            listed.get_many(&asked, &mut got);
            proptest::prop_assert_eq!(&got, &want_got);
        }
    }

    #[test]
    fn names_too_long_for_a_slot_are_interned() {
        // Above 2^24 - 1 bytes the slot cannot hold the length: read from the names instead.
        let long = vec![b'x'; (1 << 24) + 5];
        let longer = vec![b'x'; (1 << 24) + 6];
        let mut i = Interner::new();
        assert_eq!(i.intern(b"short"), 0);
        assert_eq!(i.intern(&long), 1);
        assert_eq!(i.intern(&longer), 2);
        assert_eq!(i.intern(&long), 1);
        assert_eq!(i.get(&longer), Some(2));
        assert_eq!(i.get(&long[1..]), None);
        assert_eq!(i.name(2).len(), (1 << 24) + 6);
    }

    #[test]
    fn a_jsonl_record_judging_a_lemma_twice_is_an_error() {
        // Found by the actual_sets fuzz target (a panic): the refused goal is not interned.
        let e = read(
            "{\"goal_id\": \"g0\", \"premises\": [\"a\"]}\n{\"goal_id\": \"g1\", \"premises\": [\"a\", \"c\", \"c\"]}\n",
            Format::Jsonl,
        )
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Duplicate);
        assert_eq!(
            e.to_string(),
            "actual:2: lemma `c` is judged twice for goal `g1` (first at line 2)"
        );
    }

    #[test]
    fn a_graded_first_goal_keeps_its_grades() {
        // The first goal graded (no earlier judgment to fill in), then binary ones, then a
        // goal coming back (every row held and grouped again).
        let s = read(
            "g 0 a 2
g 0 b 0
h 0 a 1
g 0 c 1
",
            Format::Trec,
        )
        .unwrap();
        let id = |n: &str| s.lemmas.get(n.as_bytes()).unwrap();
        let (_, g) = s.goal(b"g").unwrap();
        let (_, h) = s.goal(b"h").unwrap();
        assert_eq!(
            g.entries().collect::<Vec<_>>(),
            vec![(id("a"), 2), (id("b"), 0), (id("c"), 1)]
        );
        assert_eq!(g.grades_desc(), &[2, 1, 0]);
        assert_eq!(h.entries().collect::<Vec<_>>(), vec![(id("a"), 1)]);
        assert_eq!(h.grades_desc(), &[1]);
        // Binary goals first, a graded one last: the earlier grades read as 1.
        let s = read(
            "g 0 a 1
h 0 a 1
h 0 b 1
k 0 b 3
",
            Format::Trec,
        )
        .unwrap();
        let (_, h) = s.goal(b"h").unwrap();
        let (_, k) = s.goal(b"k").unwrap();
        assert_eq!(h.grades_desc(), &[1, 1]);
        assert_eq!(k.grade(s.lemmas.get(b"b").unwrap()), Some(3));
        assert!(k.is_graded() && !h.is_graded());
    }

    #[test]
    fn qrels_with_grades() {
        let s = read(
            "g1 0 a 1\ng1 0 b 0\n# comment\ng2 0 a 2\ng2 0 c 1\n\n",
            Format::Trec,
        )
        .unwrap();
        assert_eq!(s.goals.len(), 2);
        assert_eq!(s.lemmas.len(), 3);
        let (_, g1) = s.goal(b"g1").unwrap();
        let a = s.lemmas.get(b"a").unwrap();
        let b = s.lemmas.get(b"b").unwrap();
        let c = s.lemmas.get(b"c").unwrap();
        assert_eq!(
            (g1.grade(a), g1.grade(b), g1.grade(c)),
            (Some(1), Some(0), None)
        );
        assert_eq!(g1.grades_desc(), &[1, 0]);
        let (_, g2) = s.goal(b"g2").unwrap();
        assert_eq!((g2.grade(a), g2.grade(c)), (Some(2), Some(1)));
        assert_eq!(s.positive_rows, 3);
        assert!(s.goal(b"g3").is_none());
    }

    #[test]
    fn jsonl_shapes() {
        let text = r#"{"goal_id": "g1", "premises": ["A", "B"]}
{"goal_id": "g2", "premises": {"A": 2, "C": 0}}
{"goal_id": "g3", "all_pos_premises": ["A", {"full_name": "D", "code": "x"}], "other": 1}
"#;
        let s = read(text, Format::Jsonl).unwrap();
        let id = |n: &str| s.lemmas.get(n.as_bytes()).unwrap();
        let (_, g1) = s.goal(b"g1").unwrap();
        assert_eq!((g1.grade(id("A")), g1.grade(id("B"))), (Some(1), Some(1)));
        assert!(!g1.is_graded());
        let (_, g2) = s.goal(b"g2").unwrap();
        assert_eq!((g2.grade(id("A")), g2.grade(id("C"))), (Some(2), Some(0)));
        let (_, g3) = s.goal(b"g3").unwrap();
        assert_eq!((g3.grade(id("A")), g3.grade(id("D"))), (Some(1), Some(1)));
    }

    #[test]
    fn goals_with_empty_sets_and_ungrouped_qrels_keep_their_own_truths() {
        // A goal with an empty list has a truth of its own (R = 0); the goals after it keep theirs.
        let text = r#"{"goal_id": "g1", "premises": ["A"]}
{"goal_id": "g0", "premises": []}
{"goal_id": "g2", "premises": ["B", "A"]}
"#;
        let s = read(text, Format::Jsonl).unwrap();
        let id = |n: &str| s.lemmas.get(n.as_bytes()).unwrap();
        assert_eq!(s.truths().len(), 3);
        assert_eq!(s.goal(b"g0").unwrap().1.judged(), &[] as &[u32]);
        let (_, g2) = s.goal(b"g2").unwrap();
        assert_eq!((g2.grade(id("A")), g2.grade(id("B"))), (Some(1), Some(1)));
        assert_eq!(s.goal(b"g1").unwrap().1.len(), 1);
        // Qrels whose goals interleave: each goal gets its own rows, grades and all.
        let s = read("g 0 a 1\nh 0 b 2\ng 0 c 0\nh 0 a 1\n", Format::Trec).unwrap();
        let id = |n: &str| s.lemmas.get(n.as_bytes()).unwrap();
        let (_, g) = s.goal(b"g").unwrap();
        let (_, h) = s.goal(b"h").unwrap();
        assert_eq!(
            (g.grade(id("a")), g.grade(id("c")), g.grade(id("b"))),
            (Some(1), Some(0), None)
        );
        assert_eq!(
            (h.grade(id("a")), h.grade(id("b")), h.grade(id("c"))),
            (Some(1), Some(2), None)
        );
        assert_eq!(
            (g.grades_desc(), h.grades_desc()),
            (&[1, 0][..], &[2, 1][..])
        );
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = read("g 0 a 1\ng 0 b\n", Format::Trec).unwrap_err();
        assert_eq!(
            e.to_string(),
            "actual:2: expected 4 fields (goal iter lemma grade), found 3 (byte 8)"
        );
        let e = read("g 0 a x\n", Format::Trec).unwrap_err();
        assert!(
            e.to_string()
                .contains("expected an integer grade, found `x`"),
            "{e}"
        );
        let e = read("g 0 a 1\nh 0 a 1\ng 0 a 0\n", Format::Trec).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Duplicate);
        assert_eq!(e.line, Some(3));
        assert!(e.to_string().contains("(first at line 1)"), "{e}");
        assert_eq!(e.first_line, Some(1));
        let e = read("{\"goal_id\": \"g\"}\n", Format::Jsonl).unwrap_err();
        assert!(e.to_string().contains("expected `premises`"), "{e}");
        // Names with whitespace (never matched by a prediction) are refused, in either shape.
        for (text, found) in [
            (
                "{\"goal_id\": \"g 1\", \"premises\": [\"a\"]}\n",
                "a `goal_id` without whitespace, found `g 1`",
            ),
            (
                "{\"goal_id\": \"g1\", \"premises\": [\"a\", \"b c\"]}\n",
                "premise names without whitespace, found `b c`",
            ),
            (
                "{\"goal_id\": \"g1\", \"premises\": {\"a\\tb\": 2}}\n",
                "premise names without whitespace, found `a\tb`",
            ),
            (
                "{\"goal_id\": \"g1\", \"all_pos_premises\": [{\"full_name\": \"x y\"}]}\n",
                "found `x y`",
            ),
        ] {
            let e = read(text, Format::Jsonl).unwrap_err();
            assert_eq!(e.line, Some(1), "{e}");
            assert!(e.to_string().contains(found), "{e}");
        }
        let e = read("{\"goal_id\": \"g\", \"premises\": [1]}\n", Format::Jsonl).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("actual:1: expected a JSON object"),
            "{e}"
        );
        let e = read("g 0 a 1\ng 0 \u{0}\u{fffd} 1\n", Format::Trec).unwrap();
        assert_eq!(e.rows, 2);
        let e = ActualSets::read(Input {
            path: "actual".into(),
            reader: crate::input::Source::stream(std::io::Cursor::new(b"g 0 \xff 1\n".to_vec())),
            size_on_disk: None,
            compression: crate::input::Compression::None,
            format: Format::Trec,
            map: None,
            file: None,
        })
        .unwrap_err();
        assert!(e.to_string().contains("invalid UTF-8"), "{e}");
    }
}
