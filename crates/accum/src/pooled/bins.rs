//! The pooled curve's bins by key: an open-addressing table (linear probing, 32-byte slots, at
//! most 3/4 full) that counts a stretch of items at a time.
//!
//! A curve meets a key per ranked lemma, and its bins outgrow the caches (65,536 bins are 4 MiB
//! of slots), so each lookup is a cache miss: [`BinTable::count`] starts the miss of an item a
//! few items ahead, so that the misses overlap instead of following each other.
//! Memory: at most [`SLOT_BYTES`] `/ (3/8)` bytes a bin, just after the table doubles.

use super::Bin;

/// Bytes a slot takes: the key and its [`Bin`], aligned so that no slot straddles a cache line.
pub(super) const SLOT_BYTES: usize = std::mem::size_of::<Slot>();

#[derive(Copy, Clone, Debug)]
#[repr(C, align(32))]
struct Slot {
    key: u64,
    /// `n == 0`: the slot is free (a held bin counts at least one item).
    bin: Bin,
}

const FREE: Slot = Slot {
    key: 0,
    bin: Bin {
        n: 0,
        rel: 0,
        min_key: u64::MAX,
    },
};

/// Bins by key. Every bin handed out by [`bin`](Self::bin) must be given at least one item
/// before the next call: a bin of no item reads as a free slot.
#[derive(Clone, Debug, Default)]
pub(super) struct BinTable {
    /// A power of two long, or empty.
    slots: Vec<Slot>,
    len: usize,
    /// The hash's multiplier, odd and drawn afresh for each new table (a clone keeps it, at the
    /// same size): a table read in slot order into another of another size (merging curves,
    /// growing) meets its keys in an order unrelated to the other's slots, which keeps linear
    /// probing from piling them into long runs.
    seed: u64,
    /// Slots read by lookups (the tests' measure of probing).
    #[cfg(test)]
    pub(super) reads: std::cell::Cell<usize>,
}

/// The most bins a table may hold, without growing, so that its slots and `extra` bytes for each
/// bin take at most `bytes` (a power of two of slots at most 3/4 full, one bin short of full so
/// that the bin past the limit is held without growing; at least 11).
pub(super) fn bins_within(bytes: usize, extra: usize) -> usize {
    let slots = (bytes / (SLOT_BYTES + extra * 3 / 4)).max(16);
    let slots = 1 << (usize::BITS - 1 - slots.leading_zeros());
    slots * 3 / 4 - 1
}

/// The slots for `bins` bins at most 3/4 full (at least 16).
fn slots_for(bins: usize) -> usize {
    bins.saturating_mul(4)
        .div_ceil(3)
        .next_power_of_two()
        .max(16)
}

/// A key's hash: the two halves of its product with the table's odd `seed`, folded (every bit
/// of the key reaches the low bits that pick the slot).
#[inline(always)]
fn mix(key: u64, seed: u64) -> u64 {
    let p = u128::from(key ^ 0x243f_6a88_85a3_08d3) * u128::from(seed);
    (p as u64) ^ ((p >> 64) as u64)
}

/// A fresh odd multiplier (the standard library's random hash keys).
fn new_seed() -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(0x9e37_79b9_7f4a_7c15_u64) | 1
}

/// Asks for the cache line at `p` ahead of its use (a hint: no effect on results).
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults nor changes memory, whatever the address.
    #[allow(unused_unsafe)]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

impl BinTable {
    /// A table that holds `bins` bins without growing.
    pub(super) fn with_capacity(bins: usize) -> Self {
        BinTable {
            slots: vec![FREE; slots_for(bins)],
            len: 0,
            seed: new_seed(),
            #[cfg(test)]
            reads: Default::default(),
        }
    }

    /// Bins held.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        mix(key, self.seed) as usize & (self.slots.len() - 1)
    }

    /// The slot holding `key`, or the free slot where it would go (`false`). The table has
    /// slots, and a free one.
    #[inline(always)]
    fn find(&self, key: u64) -> (usize, bool) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            #[cfg(test)]
            self.reads.set(self.reads.get() + 1);
            let s = &self.slots[i];
            if s.bin.n == 0 {
                return (i, false);
            }
            if s.key == key {
                return (i, true);
            }
            i = (i + 1) & mask;
        }
    }

    /// The bin of `key`, a new one (no item, lowest key `u64::MAX`) if there is none.
    #[inline]
    pub(super) fn bin(&mut self, key: u64) -> &mut Bin {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let (i, held) = self.find(key);
        if !held {
            self.len += 1;
            self.slots[i].key = key;
        }
        &mut self.slots[i].bin
    }

    /// How many new bins the table takes before it grows (growing first if it takes none).
    pub(super) fn room(&mut self) -> usize {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        self.slots.len() * 3 / 4 - self.len
    }

    /// Counts the items `items[from..to]` (`(key, relevant)`) in the bins of their keys cut by
    /// `shift` bits, each bin keeping its lowest uncut key; returns how many are relevant. The
    /// table must have [`room`](Self::room) for `to - from` new bins (it does not grow here).
    /// The slot of item `i + AHEAD` of `items` (past `to` too) is asked for while item `i` is
    /// counted.
    #[inline]
    pub(super) fn count(
        &mut self,
        items: &[(u64, bool)],
        from: usize,
        to: usize,
        shift: u32,
    ) -> u64 {
        const AHEAD: usize = 16;
        debug_assert!(self.len + (to - from) <= self.slots.len() * 3 / 4);
        let mut found = 0;
        for i in from..to {
            if let Some(&(next, _)) = items.get(i + AHEAD) {
                prefetch(&self.slots[self.home(next >> shift)]);
            }
            let (key, relevant) = items[i];
            let (j, held) = self.find(key >> shift);
            let s = &mut self.slots[j];
            if !held {
                s.key = key >> shift;
                self.len += 1;
            }
            s.bin.n += 1;
            s.bin.rel += relevant as u64;
            s.bin.min_key = s.bin.min_key.min(key);
            found += relevant as u64;
        }
        found
    }

    /// The bin of `key`, if held.
    pub(super) fn get(&self, key: u64) -> Option<&Bin> {
        if self.slots.is_empty() {
            return None;
        }
        let (i, held) = self.find(key);
        held.then_some(&self.slots[i].bin)
    }

    #[cold]
    fn grow(&mut self) {
        let old = std::mem::replace(self, BinTable::with_capacity(self.len + 1));
        for (k, b) in old.iter() {
            *self.bin(k) = *b;
        }
        #[cfg(test)]
        self.reads.set(self.reads.get() + old.reads.get());
    }

    /// The held bins, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u64, &Bin)> + '_ {
        (self.slots.iter())
            .filter(|s| s.bin.n > 0)
            .map(|s| (s.key, &s.bin))
    }

    /// Forgets every bin, keeping the slots.
    pub(super) fn clear(&mut self) {
        self.slots.fill(FREE);
        self.len = 0;
    }
}

impl PartialEq for BinTable {
    fn eq(&self, o: &Self) -> bool {
        self.len == o.len && self.iter().all(|(k, b)| o.get(k) == Some(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        /// The table holds what a `BTreeMap` holds, through growth and clearing, whatever the
        /// keys (few distinct low bits, high bits only, the extremes).
        #[test]
        fn holds_what_a_map_holds(
            ops in prop::collection::vec(
                (prop_oneof![0u64..40, (0u64..40).prop_map(|k| k << 58), Just(u64::MAX), any::<u64>()],
                 1u64..4, 0u64..2, 0usize..300),
                0..2000,
            ),
        ) {
            let mut t = BinTable::default();
            let mut m: BTreeMap<u64, Bin> = BTreeMap::new();
            for (key, n, rel, clear) in ops {
                if clear == 0 {
                    t.clear();
                    m.clear();
                }
                let b = t.bin(key);
                b.n += n;
                b.rel += rel.min(n);
                b.min_key = b.min_key.min(key ^ n);
                let e = m.entry(key).or_insert(Bin { n: 0, rel: 0, min_key: u64::MAX });
                e.n += n;
                e.rel += rel.min(n);
                e.min_key = e.min_key.min(key ^ n);
                prop_assert_eq!(t.len(), m.len());
            }
            let got: BTreeMap<u64, Bin> = t.iter().map(|(k, b)| (k, *b)).collect();
            prop_assert_eq!(&got, &m);
            for (k, b) in &m {
                prop_assert_eq!(t.get(*k), Some(b));
            }
            prop_assert!(t.len() * 4 <= t.slots.len() * 3 || t.slots.is_empty());
        }
    }

    /// A table of `bins_within` bins, filled one past it (the bin that makes a curve spill),
    /// never grows, and its slots and extra bytes fit the budget.
    #[test]
    fn bins_within_fit_their_budget() {
        for (bytes, extra, want) in [
            (0, 24, 11),
            (50 * 16, 24, 11),
            (50 * 32, 24, 23),
            (50 * 32 - 1, 24, 11),
            (64 << 20, 24, 1_048_576 * 3 / 4 - 1),
        ] {
            let n = bins_within(bytes, extra);
            assert_eq!(n, want, "{bytes} {extra}");
            let mut t = BinTable::with_capacity(0);
            for k in 0..=n as u64 {
                t.bin(k).n = 1;
            }
            assert_eq!(t.slots.len(), slots_for(n + 1));
            assert_eq!(t.slots.len(), (n + 1) * 4 / 3);
            if bytes >= 50 * 16 {
                assert!(t.slots.len() * SLOT_BYTES + (n + 1) * extra <= bytes);
            }
        }
    }

    /// A table more than half full read in slot order into one that grows on the way (as an
    /// evaluation merges its workers' curves into an empty one) costs a few slot reads a key, as
    /// random keys do.
    /// With one hash for every table, the receiver at half the size meets the second half of
    /// the slots' keys in the order of its own slots, over the first half's: where the two add
    /// up to more than one key a slot, the keys pile into one run that each next key reads
    /// through (5,500 reads a key here; 10 M distinct scores took 5 times as long).
    #[test]
    fn a_table_read_into_a_growing_one_keeps_probes_short() {
        let n = (1 << 20) * 6 / 10;
        let mut a = BinTable::default();
        for k in 0..n as u64 {
            a.bin(k.wrapping_mul(0x2545_f491_4f6c_dd1d)).n = 1;
        }
        assert_eq!(a.slots.len(), 1 << 20);
        let mut b = BinTable::default();
        for (k, bin) in a.iter() {
            *b.bin(k) = *bin;
        }
        assert_eq!(b.len(), n);
        let mean = b.reads.get() as f64 / n as f64;
        // Random keys: about 5 (the inserts up to 3/4 full, and the growing).
        assert!(mean < 8.0, "{mean} slot reads a key");
    }

    #[test]
    fn a_slot_is_half_a_cache_line() {
        assert_eq!(SLOT_BYTES, 32);
        assert_eq!(slots_for(0), 16);
        assert_eq!(slots_for(12), 16);
        assert_eq!(slots_for(13), 32);
        assert_eq!(slots_for(65_536), 131_072);
    }
}
