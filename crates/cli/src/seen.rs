//! The lemmas of the current goal seen so far: duplicate detection on the hot path of every
//! ranked line.
//!
//! Open addressing with linear probing, at most half full (a quarter full costs 1% fewer
//! instructions per line on the M workload but twice the memory, which for a goal of 10,000
//! lemmas is 0.5 MB per worker). Each slot has a 4-byte control word
//! (a 16-bit generation and 16 bits of the name's hash) in one array, and the index of its name in
//! another that is read only when the control word matches; a name is kept as its hash and where
//! it starts (16 bytes). For a 1,000-lemma goal the control array is 8 KB and stays in L1 cache;
//! inserting a new name reads one control word and writes it back with the index. Clearing between goals bumps the generation (a slot of an older generation
//! is empty), so no pass over the table, except once every 65,535 goals. Names are compared byte
//! for byte on a full-hash match: two names whose hashes collide are still two lemmas.

use lemma_ingest::is_space;

/// A set of names (see the module documentation).
pub struct SeenSet {
    /// Per slot: generation (high 16 bits) and hash bits 32..48 (low 16 bits).
    control: Vec<u32>,
    /// Per slot: index into `names` (valid when the control word is of this generation).
    index: Vec<u32>,
    /// The current goal's names, in arrival order: hash (for growing) and where the name starts
    /// in the caller's buffer (16 bytes each: its end is the next delimiter, its line is counted
    /// only for an error message).
    names: Vec<(u64, usize)>,
    generation: u32,
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

    /// Inserts the name `data[start..end]` whose hash is `hash`; every name inserted must be
    /// followed in `data` by a delimiter (whitespace or newline, which no name contains) or end
    /// it. `Some(first)`: the name was already in the set, first seen at `data[first..]` (the set
    /// is unchanged).
    #[inline(always)]
    pub fn insert(&mut self, data: &[u8], hash: u64, start: usize, end: usize) -> Option<usize> {
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
                // The same bytes, and the earlier name ends there too (a delimiter follows).
                let len = end - start;
                if h == hash
                    && data.get(first..first + len) == Some(&data[start..end])
                    && data
                        .get(first + len)
                        .is_none_or(|&b| b == b'\n' || is_space(b))
                {
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
        self.names.push((hash, start));
        if self.names.len() * 2 > self.control.len() {
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
    fn repeats_colliding_hashes_prefixes_growth_and_clearing() {
        let data = b"alpha beta gamma alpha alp alphabet\n";
        let (alpha, beta, gamma, again) = ((0, 5), (6, 10), (11, 16), (17, 22));
        let (alp, alphabet) = ((23, 26), (27, 35));
        let mut s = SeenSet::new();
        let ins = |s: &mut SeenSet, (a, b): (usize, usize), h| s.insert(data, h, a, b);
        assert_eq!(ins(&mut s, alpha, 7), None);
        // Same hash, different name: a different lemma.
        assert_eq!(ins(&mut s, beta, 7), None);
        // The same name again, found past the colliding slot: its first occurrence.
        assert_eq!(ins(&mut s, again, 7), Some(0));
        assert_eq!(ins(&mut s, gamma, 9), None);
        // A prefix and an extension of a name, with its hash: other lemmas.
        assert_eq!(ins(&mut s, alp, 7), None);
        assert_eq!(ins(&mut s, alphabet, 7), None);
        assert_eq!(ins(&mut s, alphabet, 7), Some(27));
        // Cleared: nothing is a repeat any more.
        s.clear();
        assert_eq!(ins(&mut s, again, 7), None);
        assert_eq!(ins(&mut s, alpha, 7), Some(17));
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
            for _ in 0..lines {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let k = (x % (1000 + goal % 4000)) as usize;
                let (start, end) = spans[k];
                let hash = (k % 97) as u64 * 0x0001_0000_0001_0001; // collisions on purpose
                let got = s.insert(data, hash, start, end);
                assert_eq!(got, reference.get(&k).copied(), "goal {goal}");
                reference.entry(k).or_insert(start);
            }
        }
    }
}
