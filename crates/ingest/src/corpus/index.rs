//! The corpus's premises by name for ranked names: one cache line a premise.
//!
//! Masking a ranking of names looks every ranked name up in the corpus: its id, its file and where
//! it ends, to test its access. Through the corpus's interner that is three dependent loads from
//! tables of several megabytes (the name's slot, the name's bytes to compare, the premise's file
//! and end): on a ranking of 10 million names against 200,000 premises, most of the time a masked
//! evaluation adds. [`PremiseIndex`] puts all of it in one 64-byte entry, aligned to a cache line:
//! 32 bits of the name's hash, the id, the file, the end, the name's length and its first 40
//! bytes; only a name longer than that reads its tail from the interner. A lookup costs one cache
//! line (or a few neighbouring ones, as the table is probed linearly), which a prefetch can ask for
//! from the hash alone.
//!
//! Held: 64 bytes a slot, the smallest power of two of slots above twice the premises: 32 MiB for
//! 131,072 to 262,143 premises (16 MiB below), in zeroed pages; built once, from the corpus, by
//! the first ranking of names masked.

use super::{Corpus, Origin, Place, Pos};
use crate::fields::{prefetch, same_bytes};

/// Bytes of a name held in its entry.
const HEAD: usize = 40;

/// One premise: see the [module documentation](self). All zeros is an empty entry (`id1`, the
/// id plus one, is 0), so a table starts as zeroed pages.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Entry {
    tag: u32,
    id1: u32,
    file: u32,
    len: u32,
    end_line: u32,
    end_col: u32,
    head: [u8; HEAD],
}

// SAFETY: `Entry` is `repr(C)`, its fields integers and bytes filling its 64 bytes (no padding):
// every bit pattern is a valid entry.
unsafe impl bytemuck::Zeroable for Entry {}
// SAFETY: as above.
unsafe impl bytemuck::Pod for Entry {}

/// A premise found by name: its id, file and end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    /// The premise's id ([`Corpus::premise_id`]).
    pub id: u32,
    /// Its file.
    pub file: u32,
    /// Where it ends.
    pub end: Pos,
}

/// The corpus's premises by name, one cache line each: a 64-byte entry a premise (its hash's
/// tag, id, file, end, name length and first 40 bytes), at most half the slots full.
pub struct PremiseIndex {
    /// The entries: a power of two of them, at most half full.
    table: Table,
    /// Where the lookups read it.
    slots: Slots,
}

/// The table's first entry and its length less one (a lookup's mask), read once: the lookups of
/// a ranking of names run in its hottest loop.
struct Slots {
    first: std::ptr::NonNull<Entry>,
    mask: usize,
}

// SAFETY: `first` points into the index's `table`, which the index owns and never changes after
// it is built; sharing it between threads shares read-only memory.
unsafe impl Send for Slots {}
// SAFETY: as above.
unsafe impl Sync for Slots {}

/// Zeroed memory for the entries: an anonymous mapping (whose pages the kernel is asked to back
/// with huge pages before they are first touched: a lookup at random in a table of tens of
/// megabytes then rarely misses the TLB, where each prefetch of an entry would otherwise wait
/// for a page walk), or a vector where a mapping cannot be had.
enum Table {
    Mapped(memmap2::MmapMut),
    Held(Vec<Entry>),
}

impl Table {
    fn zeroed(n: usize) -> Table {
        let bytes = n * std::mem::size_of::<Entry>();
        match memmap2::MmapMut::map_anon(bytes) {
            Ok(map) => {
                #[cfg(target_os = "linux")]
                let _ = map.advise(memmap2::Advice::HugePage);
                Table::Mapped(map)
            }
            Err(_) => Table::Held(vec![bytemuck::Zeroable::zeroed(); n]),
        }
    }

    #[inline(always)]
    fn entries(&self) -> &[Entry] {
        match self {
            // A mapping is page-aligned: aligned for `Entry`.
            Table::Mapped(m) => bytemuck::cast_slice(m),
            Table::Held(v) => v,
        }
    }

    fn entries_mut(&mut self) -> &mut [Entry] {
        match self {
            Table::Mapped(m) => bytemuck::cast_slice_mut(m),
            Table::Held(v) => v,
        }
    }
}

impl std::fmt::Debug for PremiseIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PremiseIndex({} slots)", self.table.entries().len())
    }
}

impl PremiseIndex {
    /// The index of `corpus`'s premises. Entries are placed in id order, each one's first slot
    /// asked for 16 ids ahead (the writes' cache misses overlap).
    pub fn new(corpus: &Corpus) -> PremiseIndex {
        const AHEAD: u32 = 16;
        let n = corpus.premises() as u32;
        let slots = (2 * n as usize + 1).next_power_of_two().max(16);
        let mut table = Table::zeroed(slots);
        let entries = table.entries_mut();
        let mask = slots - 1;
        for id in 0..n {
            if id + AHEAD < n {
                prefetch(&entries[corpus.premises.hash_of(id + AHEAD) as usize & mask]);
            }
            let name = corpus.premise_name(id);
            let hash = corpus.premises.hash_of(id);
            let mut i = hash as usize & mask;
            while entries[i].id1 != 0 {
                i = (i + 1) & mask;
            }
            let mut head = [0; HEAD];
            let k = name.len().min(HEAD);
            head[..k].copy_from_slice(&name[..k]);
            let end = corpus.premise_end[id as usize];
            entries[i] = Entry {
                tag: (hash >> 32) as u32,
                id1: id + 1,
                file: corpus.premise_file[id as usize],
                len: name.len() as u32,
                end_line: end.line,
                end_col: end.col,
                head,
            };
        }
        let first = std::ptr::NonNull::from(&table.entries()[0]);
        PremiseIndex {
            table,
            slots: Slots { first, mask },
        }
    }

    /// The entry in slot `i & mask`.
    #[inline(always)]
    fn entry(&self, i: usize) -> &Entry {
        // SAFETY: `first` is the first of `mask + 1` entries that live as long as `self`.
        unsafe { &*self.slots.first.as_ptr().add(i & self.slots.mask) }
    }

    /// Hints the cache to bring in the entry where the lookup of a name hashed `hash` starts.
    /// Its neighbour is asked for too: about one lookup in five probes past its first slot,
    /// and the neighbour (on the same page) costs no second walk of the page tables, where the
    /// first line's prefetch waits for one.
    #[inline(always)]
    pub fn prefetch(&self, hash: u64) {
        prefetch(self.entry(hash as usize));
        prefetch(self.entry((hash as usize).wrapping_add(1)));
    }

    /// The premise named `name` (hashed `hash`, as [`Corpus::premise_hash`] hashes it) in
    /// `corpus` (the one this index was built from).
    #[inline(always)]
    pub fn find(&self, corpus: &Corpus, hash: u64, name: &[u8]) -> Option<Found> {
        let tag = (hash >> 32) as u32;
        let mut i = hash as usize;
        loop {
            let e = self.entry(i);
            if e.id1 == 0 {
                return None;
            }
            if e.tag == tag && e.len as usize == name.len() {
                let id = e.id1 - 1;
                let k = name.len().min(HEAD);
                if same_bytes(&e.head[..k], &name[..k])
                    && (k == name.len() || same_bytes(&corpus.premise_name(id)[k..], &name[k..]))
                {
                    return Some(Found {
                        id,
                        file: e.file,
                        end: Pos::new(e.end_line, e.end_col),
                    });
                }
            }
            i = i.wrapping_add(1);
        }
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(self.table.entries())
    }
}

impl Corpus {
    /// [`Corpus::accessible`] of a premise found by [`PremiseIndex::find`].
    #[inline]
    pub fn accessible_found(&self, at: Place, p: Found) -> bool {
        self.origin_of(at, p) != Origin::Inaccessible
    }

    /// [`Corpus::origin`] of a premise found by [`PremiseIndex::find`] (no table read but the
    /// place's file's row of imports).
    #[inline]
    pub fn origin_of(&self, at: Place, p: Found) -> Origin {
        if p.file == at.file {
            if p.end <= at.pos {
                Origin::InFile
            } else {
                Origin::Inaccessible
            }
        } else if self.imports(at.file, p.file) {
            Origin::Imported
        } else {
            Origin::Inaccessible
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn every_premise_is_found_with_its_place_and_nothing_else() {
        // Names of every length about the entry's 40 bytes, two files, one importing the other.
        let names: Vec<String> = (0..120)
            .map(|i| format!("{}{i}", "N.".repeat(i % 30)))
            .collect();
        let premises = |r: std::ops::Range<usize>| {
            r.map(|i| {
                format!(
                    r#"{{"full_name": "{}", "code": "c", "end": [{}, 1]}}"#,
                    names[i],
                    i + 1
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
        };
        let text = format!(
            "{{\"path\": \"A\", \"premises\": [{}]}}\n{{\"path\": \"B\", \"imports\": [\"A\"], \
             \"premises\": [{}]}}\n",
            premises(0..60),
            premises(60..120)
        );
        let c = Corpus::from_reader(Path::new("c.jsonl"), text.as_bytes()).unwrap();
        let index = PremiseIndex::new(&c);
        assert_eq!(index.table.entries().len(), 256);
        let at_b = Place {
            file: 1,
            pos: Pos::new(70, 1),
        };
        for (i, name) in names.iter().enumerate() {
            let n = name.as_bytes();
            let f = index.find(&c, c.premise_hash(n), n).unwrap();
            assert_eq!(f.id, c.premise_id(n).unwrap());
            assert_eq!(
                (f.file, f.end),
                ((i >= 60) as u32, Pos::new(i as u32 + 1, 1))
            );
            assert_eq!(c.origin_of(at_b, f), c.origin(at_b, f.id), "{name}");
        }
        // Seen from B at line 70: 68 ends before (in-file), 70 after, 5 is A's (imported).
        let origin = |i: usize| {
            let n = names[i].as_bytes();
            c.origin_of(at_b, index.find(&c, c.premise_hash(n), n).unwrap())
        };
        assert_eq!(origin(68), Origin::InFile);
        assert_eq!(origin(70), Origin::Inaccessible);
        assert_eq!(origin(5), Origin::Imported);
        // Names not in the corpus, among them one sharing a premise's 58-byte head.
        let longer = format!("{}x", names[29]);
        for miss in ["", "N.", longer.as_str(), "zz"] {
            let m = miss.as_bytes();
            assert_eq!(index.find(&c, c.premise_hash(m), m), None, "{miss}");
        }
        // A hash whose tag and length match but whose name does not (the same hash given for
        // another name): not found.
        let long = names[59].as_bytes();
        let mut other = long.to_vec();
        *other.last_mut().unwrap() ^= 1;
        assert_eq!(index.find(&c, c.premise_hash(long), &other), None);
        let short = names[1].as_bytes();
        assert_eq!(index.find(&c, c.premise_hash(short), b"N.2"), None);
    }
}
