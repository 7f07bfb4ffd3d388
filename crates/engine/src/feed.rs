//! What every streamed path shares between a goal's truth and the accumulator: the current goal's
//! judged lemmas, looked up per ranked lemma, and the accumulator as a ranking's consumer.

use crate::premise::{GoalMask, PremiseReport};
use crate::ranking::{Item, Ranked};
use hashbrown::HashTable;
use lemma_accum::{GoalAccumulator, Label, Truth};
use lemma_ingest::{bytes::same_bytes, GoalTruth, Interner};

/// The accumulator as a ranking's consumer.
pub(crate) struct AccFeed {
    pub(crate) acc: GoalAccumulator,
    /// Whether a measure reads scores.
    pub(crate) scored: bool,
    /// The premise mask and the unmasked ranking's leaks, with a corpus.
    pub(crate) mask: Option<Box<GoalMask>>,
}

impl AccFeed {
    /// Begins goal `goal` (first line `line`, batch-local; 0 for a push) of relevant premises
    /// `relevant` ([`relevant_names`]), evaluated as `t`: with a corpus, the premise mask's goal
    /// first (its place found, its relevant premises checked and counted in `report`, their
    /// origins told to `t`).
    pub(crate) fn begin_goal<'n>(
        &mut self,
        goal: &[u8],
        line: u64,
        relevant: impl Iterator<Item = (u64, &'n [u8])>,
        mut t: Truth<'_>,
        report: &mut PremiseReport,
    ) -> Result<(), crate::EvalError> {
        if let Some(mask) = &mut self.mask {
            mask.begin(goal, line, relevant, report)?;
            t = mask.with_origins(t);
        }
        self.acc.begin(&t);
        Ok(())
    }

    /// Begins the current goal again as `t` (it is read again from its first item).
    pub(crate) fn restart_goal(&mut self, mut t: Truth<'_>) {
        if let Some(mask) = &mut self.mask {
            mask.restart();
            t = mask.with_origins(t);
        }
        self.acc.begin(&t);
    }
}

impl Ranked for AccFeed {
    #[inline(always)]
    fn admit(&mut self, data: &[u8], it: &Item) -> bool {
        match &mut self.mask {
            None => true,
            Some(m) => m.admit(data, it, &mut self.acc),
        }
    }

    #[inline(always)]
    fn looks_ahead(&self) -> bool {
        self.mask.as_ref().is_some_and(|m| m.looks_ahead())
    }

    #[inline(always)]
    fn ask(&self, it: &Item) {
        if let Some(m) = &self.mask {
            m.prefetch(it.hash);
        }
    }

    #[inline(always)]
    fn ranked(&mut self, data: &[u8], it: &Item) {
        if let Some(m) = &self.mask {
            m.tell_origin(data, it, &mut self.acc);
        }
        if self.scored {
            // Scores are finite (checked by the parser and by the push API).
            let _ = self.acc.push_scored(it.label, it.score);
        } else {
            self.acc.push(it.label);
        }
    }
}

/// The relevant lemmas (grade `level` and above) of `truth`, named by `lemmas`, with their
/// hashes: what [`AccFeed::begin_goal`] checks against the corpus.
pub(crate) fn relevant_names<'n>(
    truth: GoalTruth<'n>,
    lemmas: &'n Interner,
    level: i32,
) -> impl Iterator<Item = (u64, &'n [u8])> + 'n {
    (truth.entries())
        .filter(move |&(_, grade)| grade >= level)
        .map(|(id, _)| (lemmas.hash_of(id), lemmas.name(id)))
}

/// The bit of a name hash in [`Judged`]'s filter: its top six bits (the table probes use the low
/// ones).
#[inline(always)]
fn judged_bit(hash: u64) -> u64 {
    1 << (hash >> 58)
}

/// The current goal's judged lemmas: (name hash, where the name lies in `names`, grade), and
/// their names, copied. A few entries that stay in L1 cache: the per-line relevance lookup never
/// touches the (large) interner, not even to compare a name whose hash matches. A one-word
/// filter holds bit [`judged_bit`] of each judged lemma's hash: a lemma whose bit is clear is not
/// judged (with R judged lemmas, at most R of 64 bits are set), and costs no probe.
#[derive(Default)]
pub(crate) struct Judged {
    table: HashTable<(u64, usize, u32, i32)>,
    names: Vec<u8>,
    bits: u64,
}

impl Judged {
    /// Holds `truth`'s judged lemmas (named by `lemmas`) from now on. Their hashes and names
    /// are read from the interner once per goal, in independent loads whose cache misses
    /// overlap.
    pub(crate) fn set(&mut self, truth: GoalTruth<'_>, lemmas: &Interner) {
        self.table.clear();
        self.names.clear();
        self.bits = 0;
        for (id, grade) in truth.entries() {
            let hash = lemmas.hash_of(id);
            let name = lemmas.name(id);
            let start = self.names.len();
            self.names.extend_from_slice(name);
            self.bits |= judged_bit(hash);
            self.table
                .insert_unique(hash, (hash, start, name.len() as u32, grade), |e| e.0);
        }
    }

    /// The label of lemma `name` (whose hash is `hash`) in the current goal.
    #[inline]
    pub(crate) fn label(&self, hash: u64, name: &[u8]) -> Label {
        if self.bits & judged_bit(hash) == 0 {
            // Most ranked lemmas: no judged lemma has this hash's bit, no table probe.
            return Label::UNJUDGED;
        }
        self.table
            .find(hash, |e| {
                e.0 == hash && same_bytes(&self.names[e.1..][..e.2 as usize], name)
            })
            .map_or(Label::UNJUDGED, |e| Label::judged(e.3))
    }
}
