//! The premise protocol on full-library rankings: binary stores and `.npy` matrices, whose
//! lemmas are ids (store ids, matrix columns) with a names table.
//!
//! - [`Columns`], built once per evaluation: each id's corpus file, as runs of consecutive ids
//!   of one file (a source in the corpus's order is one run a file), and per file its ids by end
//!   position; the ids the corpus does not define. No name is looked up per entry or per goal.
//! - [`Access`], one worker's view of the current goal: its place, and the ids accessible there
//!   as a bitset, built once per distinct place (consecutive goals of a theorem share it): the
//!   runs of the files the goal's file imports set whole words (ids in no file order: each id
//!   one bit test in the file's imports, a word at a time), then its own file's premises ending
//!   at or before the theorem position. Ranking a goal then costs one bit test an entry
//!   (store) or one AND a compare (matrix: `ranking::dense`).

use super::{GoalAt, PremiseReport, Premises};
use lemma_ingest::{show, Place, Pos};
use std::sync::Arc;

/// No corpus file: an id the corpus does not define.
const NONE: u32 = u32::MAX;

/// A source's ids against the corpus: see the [module documentation](self).
pub(crate) struct Columns {
    premises: Arc<Premises>,
    ids: usize,
    /// `(first id, file)`: a run of ids defined in one file (`NONE`: not in the corpus), ending
    /// where the next run starts; the last entry is `(ids, NONE)`.
    runs: Vec<(u32, u32)>,
    /// Per id: its file (`files` when the corpus does not define it), when the runs are short
    /// (ids in no file order, as a store converted from a run numbers them): the bitset is then
    /// built a word of 64 ids at a time.
    id_file: Option<Vec<u32>>,
    /// Per corpus file `f`: `own[own_at[f]..own_at[f + 1]]`, its ids with their premises' end
    /// positions, by end position.
    own_at: Vec<u32>,
    own: Vec<(Pos, u32)>,
    /// Ids the corpus does not define, ascending, and as a bitset.
    unknown: Vec<u32>,
    unknown_bits: Vec<u64>,
    /// Per id the corpus does not define, its name's rank among theirs (the least first; the
    /// warnings name the least of a goal's, whatever the columns' or ranking's order); empty
    /// when the corpus defines every id.
    unknown_rank: Vec<u32>,
    /// The one of rank 0.
    least_unknown: Option<u32>,
    /// Whether each goal needs its place (`--mask accessible`, or a leak measure).
    placed: bool,
}

impl Columns {
    /// The table of a source whose ids are named `names` (in id order).
    pub(crate) fn new<'n>(
        premises: Arc<Premises>,
        names: impl Iterator<Item = &'n [u8]>,
        leaks: bool,
    ) -> Columns {
        let corpus = &premises.corpus;
        let mut runs: Vec<(u32, u32)> = Vec::new();
        let mut own: Vec<(u32, Pos, u32)> = Vec::new();
        let mut unknown = Vec::new();
        let names: Vec<&[u8]> = names.collect();
        let mut found = Vec::with_capacity(names.len());
        corpus.premise_ids(&names, &mut found);
        let mut ids = 0usize;
        for (id, &p) in found.iter().enumerate() {
            let id = id as u32;
            let file = match p {
                Some(p) => {
                    let f = corpus.premise_file(p);
                    own.push((f, corpus.premise_end(p), id));
                    f
                }
                None => {
                    unknown.push(id);
                    NONE
                }
            };
            if runs.last().is_none_or(|&(_, f)| f != file) {
                runs.push((id, file));
            }
            ids += 1;
        }
        runs.push((ids as u32, NONE));
        let files = corpus.files();
        let id_file = (runs.len() > ids / 16).then(|| {
            let mut f = vec![files as u32; ids];
            for &(file, _, id) in &own {
                f[id as usize] = file;
            }
            f
        });
        own.sort_unstable();
        let mut own_at = vec![0u32; files + 1];
        for &(f, _, _) in &own {
            own_at[f as usize + 1] += 1;
        }
        for f in 0..files {
            own_at[f + 1] += own_at[f];
        }
        let mut unknown_bits = vec![0u64; ids.div_ceil(64)];
        for &u in &unknown {
            unknown_bits[u as usize / 64] |= 1 << (u % 64);
        }
        let placed = premises.mask || leaks;
        let mut by_name = unknown.clone();
        by_name.sort_unstable_by_key(|&u| names[u as usize]);
        let mut unknown_rank = match unknown.is_empty() {
            true => Vec::new(),
            false => vec![u32::MAX; ids],
        };
        for (rank, &id) in by_name.iter().enumerate() {
            unknown_rank[id as usize] = rank as u32;
        }
        Columns {
            premises,
            ids,
            runs,
            id_file,
            own_at,
            own: own.into_iter().map(|(_, end, id)| (end, id)).collect(),
            unknown,
            unknown_bits,
            unknown_rank,
            least_unknown: by_name.first().copied(),
            placed,
        }
    }

    /// Whether ranks count accessible ids only (`--mask accessible`).
    pub(crate) fn masks(&self) -> bool {
        self.premises.mask
    }

    /// Whether `--strict` makes an id the corpus does not define an error.
    pub(crate) fn strict(&self) -> bool {
        self.premises.strict
    }

    /// The ids the corpus does not define, ascending.
    pub(crate) fn unknown(&self) -> &[u32] {
        &self.unknown
    }

    /// The rank of id `id`'s name among the ids the corpus does not define (the least 0;
    /// `u32::MAX` for an id it defines): the least of a goal's is the warnings' case.
    #[inline]
    pub(crate) fn unknown_rank(&self, id: u32) -> u32 {
        self.unknown_rank
            .get(id as usize)
            .copied()
            .unwrap_or(u32::MAX)
    }

    /// The id the corpus does not define whose name is least (a matrix's goals all rank it).
    pub(crate) fn least_unknown(&self) -> Option<u32> {
        self.least_unknown
    }

    /// Whether the corpus does not define id `id`.
    #[inline(always)]
    pub(crate) fn is_unknown(&self, id: u32) -> bool {
        (self.unknown_bits[id as usize / 64] >> (id % 64)) & 1 == 1
    }

    /// The error for id `id` (named `name`) the corpus does not define, under `--strict`.
    pub(crate) fn strict_error(&self, name: &[u8]) -> String {
        format!(
            "premise `{}` is not defined by the corpus {} (--strict)",
            show(name),
            self.premises.corpus.path().display()
        )
    }

    /// Counts `count` ids of goal `goal` the corpus does not define, the least named `least`.
    pub(crate) fn count_unknown(
        &self,
        goal: &[u8],
        count: u64,
        least: &[u8],
        report: &mut PremiseReport,
    ) {
        report.unknown_premises += count;
        super::keep_least(&mut report.first_unknown_premise, goal, least);
    }

    /// Sets `bits` to the ids accessible at `at` (`None`: nothing is); their number.
    fn build(&self, at: Option<Place>, bits: &mut Vec<u64>) -> u64 {
        bits.clear();
        bits.resize(self.ids.div_ceil(64) + 1, 0);
        let Some(at) = at else {
            return 0;
        };
        let corpus = &self.premises.corpus;
        match &self.id_file {
            Some(id_file) => {
                // The files `at.file` imports as a bitset, one more bit (`files`: never set) for
                // the ids the corpus does not define.
                let files = corpus.files();
                let mut row = vec![0u64; (files + 1).div_ceil(64)];
                for f in 0..files as u32 {
                    row[f as usize / 64] |= (corpus.imports(at.file, f) as u64) << (f % 64);
                }
                for (word, chunk) in bits.iter_mut().zip(id_file.chunks(64)) {
                    let mut w = 0u64;
                    for (i, &f) in chunk.iter().enumerate() {
                        w |= ((row[f as usize / 64] >> (f % 64)) & 1) << i;
                    }
                    *word = w;
                }
            }
            None => {
                for w in self.runs.windows(2) {
                    let ((start, file), (end, _)) = (w[0], w[1]);
                    if file != NONE && corpus.imports(at.file, file) {
                        set_range(bits, start as usize, end as usize);
                    }
                }
            }
        }
        let f = at.file as usize;
        for &(end, id) in &self.own[self.own_at[f] as usize..self.own_at[f + 1] as usize] {
            if end > at.pos {
                break;
            }
            bits[id as usize / 64] |= 1 << (id % 64);
        }
        bits.iter().map(|w| w.count_ones() as u64).sum()
    }
}

/// Sets bits `start..end` of `bits`.
fn set_range(bits: &mut [u64], start: usize, end: usize) {
    if start >= end {
        return;
    }
    let (first, last) = (start / 64, (end - 1) / 64);
    let head = u64::MAX << (start % 64);
    let tail = u64::MAX >> (63 - (end - 1) % 64);
    if first == last {
        bits[first] |= head & tail;
        return;
    }
    bits[first] |= head;
    for w in &mut bits[first + 1..last] {
        *w = u64::MAX;
    }
    bits[last] |= tail;
}

/// One worker's view of the current goal: see the [module documentation](self).
#[derive(Default)]
pub(crate) struct Access {
    /// The place `bits` holds the accessible ids of (`Some(None)`: a file the corpus does not
    /// list), if built.
    built: Option<Option<Place>>,
    /// The accessible ids (one bit each, the bits past the last id zero).
    pub(crate) bits: Vec<u64>,
    /// How many ids are accessible.
    pub(crate) count: u64,
    /// Whether the goal has a place (`--mask accessible` or a leak measure): `bits` are its.
    pub(crate) placed: bool,
}

impl Access {
    /// Starts goal `goal` of relevant premises `relevant` (names): finds its place, checks its
    /// relevant premises, builds the accessible ids when the place is new, and counts what it
    /// meets in `report` ([`Premises::goal_at`], [`Premises::relevant_premise`]). `Err`: the
    /// message (naming the goal) of a goal without a place when one is needed, and of `--strict`
    /// / `--strict-gold`.
    pub(crate) fn begin<'n>(
        &mut self,
        cols: &Columns,
        goal: &[u8],
        relevant: impl Iterator<Item = &'n [u8]>,
        report: &mut PremiseReport,
    ) -> Result<(), String> {
        let p = &*cols.premises;
        self.placed = false;
        let place = match p.goal_at(goal, cols.placed, report)? {
            GoalAt::Known(place) => Some(place),
            GoalAt::Unlisted => None,
            GoalAt::Unneeded => return Ok(()), // only the ids the corpus does not define are counted
        };
        for name in relevant {
            let id = p.corpus.premise_id(name);
            let accessible =
                id.is_some_and(|id| place.is_some_and(|at| p.corpus.accessible(at, id)));
            p.relevant_premise(goal, name, id.is_some(), accessible, report)?;
        }
        if cols.placed {
            if self.built != Some(place) {
                self.count = cols.build(place, &mut self.bits);
                self.built = Some(place);
            }
            self.placed = true;
        }
        Ok(())
    }

    /// Whether id `id` is accessible at the goal (its place known).
    #[inline(always)]
    pub(crate) fn accessible(&self, id: u32) -> bool {
        (self.bits[id as usize / 64] >> (id % 64)) & 1 == 1
    }
}

#[cfg(test)]
mod tests {
    use super::set_range;

    #[test]
    fn ranges_of_bits() {
        for (start, end) in [
            (0, 0),
            (0, 1),
            (3, 64),
            (0, 64),
            (63, 65),
            (5, 200),
            (64, 128),
        ] {
            let mut bits = vec![0u64; 4];
            set_range(&mut bits, start, end);
            for b in 0..256 {
                let on = (bits[b / 64] >> (b % 64)) & 1 == 1;
                assert_eq!(on, (start..end).contains(&b), "{start}..{end}: bit {b}");
            }
        }
    }
}
