//! The goals of the predictions that no actual set has, each with the line where its lines began:
//! counted once, and refused when their lines come back after other goals. They are held for the
//! whole run (a run matched against the wrong actual sets may have millions), so compactly: the
//! names back to back in one buffer, per goal 16 bytes (where its name starts, its first line),
//! and a table of 4-byte indices at most 7/8 full with a control byte each (5.7 to 11.4 bytes a
//! goal, and the table it replaces while it grows). In all: a goal's name and 22 to 28 bytes,
//! about 40 at the moment the table doubles.

use lemma_ingest::bytes::name_hash;

/// Goals by name, with their first lines (see the [module documentation](self)).
#[derive(Default)]
pub(crate) struct UnknownGoals {
    /// The names, back to back.
    names: Vec<u8>,
    /// Per goal: where its name starts in `names` (it ends where the next one starts).
    starts: Vec<u64>,
    /// Per goal: the line where its lines began.
    first_lines: Vec<u64>,
    /// Goal indices, by their names' hashes.
    table: hashbrown::HashTable<u32>,
}

/// Goal `i`'s name: from its start to the next goal's.
fn name_at<'n>(names: &'n [u8], starts: &[u64], i: u32) -> &'n [u8] {
    let i = i as usize;
    let end = starts.get(i + 1).map_or(names.len(), |&e| e as usize);
    &names[starts[i] as usize..end]
}

impl UnknownGoals {
    /// The line where goal `name` began: the one recorded, or `line`, recorded now when the goal
    /// is new.
    pub(crate) fn first_line(&mut self, name: &[u8], line: u64) -> u64 {
        let hash = name_hash(name);
        let UnknownGoals {
            names,
            starts,
            first_lines,
            table,
        } = self;
        if let Some(&i) = table.find(hash, |&i| name_at(names, starts, i) == name) {
            return first_lines[i as usize];
        }
        let i = u32::try_from(starts.len()).expect("fewer than 2^32 goals");
        table.insert_unique(hash, i, |&i| name_hash(name_at(names, starts, i)));
        starts.push(names.len() as u64);
        names.extend_from_slice(name);
        first_lines.push(line);
        line
    }

    /// How many goals.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether goal `name` is here.
    #[cfg(test)]
    fn contains(&self, name: &[u8]) -> bool {
        let hash = name_hash(name);
        (self.table)
            .find(hash, |&i| name_at(&self.names, &self.starts, i) == name)
            .is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Against a map, across the table's growth, with names of every length (the empty one
    /// included) whose hashes share their low bits.
    #[test]
    fn first_lines_equal_a_maps() {
        let mut u = UnknownGoals::default();
        let mut m: HashMap<Vec<u8>, u64> = HashMap::new();
        let mut x = 1u64;
        for line in 1..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let name = format!("{:x}", x % 5_000)
                .repeat((x % 4) as usize)
                .into_bytes();
            let want = *m.entry(name.clone()).or_insert(line);
            assert_eq!(
                u.first_line(&name, line),
                want,
                "{}",
                String::from_utf8_lossy(&name)
            );
        }
        assert_eq!(u.len(), m.len());
        assert!(m.keys().all(|k| u.contains(k)));
        assert!(!u.contains(b"not there"));
    }
}
