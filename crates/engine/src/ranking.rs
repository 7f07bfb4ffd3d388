//! One goal's ranking, built from its items as they arrive: the one place where the ranking
//! options (docs/METRICS.md §2) take effect, for every input (TREC lines, JSONL records) and every
//! consumer (the accumulator in `eval`, the store in `convert`), so a store holds exactly the
//! rankings `eval` evaluates. A row of a dense score matrix is ranked by the same rule in
//! [`dense`], by counting (a row of the whole library is never sorted).
//!
//! ```text
//!  items in arrival order ──▶ order (score + tie rule, or file) ──▶ admitted (the premise mask)
//!                          ──▶ depth cut ──▶ duplicates ──▶ Ranked
//! ```
//!
//! Under score order an item is placed as it arrives when the goal is already in order (only a run
//! of equal scores is held back, [`TrecOrder`]); an item that would go up is reported, and the
//! caller then collects the goal whole ([`RankingBuilder::collect`]) to be sorted at its end. The
//! depth cut counts ranks after ordering, repeated lemmas included ("first" is first in rank
//! order). Items name their lemma by position in bytes the caller holds (a batch, or a record's
//! names joined by newlines): the duplicate table hashes and compares those bytes, copying none.

pub(crate) mod dense;

use crate::options::{DuplicateMode, OrderMode, RankingOptions, TieMode};
use crate::seen::SeenSet;
use lemma_accum::{trec_cmp, Label, TrecOrder};
use std::cmp::Ordering;

/// One item on its way to a ranking: where its name is in the caller's bytes, its hash, score and
/// label. 32 bytes, copied a few times per line.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Item {
    /// The score (NaN when only compared as text: then no consumer reads it).
    pub(crate) score: f64,
    /// The name's hash ([`lemma_ingest::bytes::name_hash`]).
    pub(crate) hash: u64,
    /// Where the name starts in the caller's bytes.
    pub(crate) start: usize,
    /// Its length.
    pub(crate) len: u32,
    /// Relevance, for the accumulator.
    pub(crate) label: Label,
}

impl Item {
    /// Where the name ends.
    #[inline(always)]
    pub(crate) fn end(&self) -> usize {
        self.start + self.len as usize
    }

    /// The name, in `data`.
    #[inline(always)]
    pub(crate) fn name<'d>(&self, data: &'d [u8]) -> &'d [u8] {
        &data[self.start..self.end()]
    }
}

/// What a ranking is for: receives each ranked item, in rank order.
pub(crate) trait Ranked {
    /// The next ranked item; `data` holds its name.
    fn ranked(&mut self, data: &[u8], it: &Item);

    /// Whether the next item in order stays in the ranking: asked once per item, in order,
    /// before the depth cut and repeats (`--mask accessible` answers `false` for a premise that
    /// is not accessible at the goal, so ranks count accessible premises only).
    #[inline(always)]
    fn admit(&mut self, _data: &[u8], _it: &Item) -> bool {
        true
    }

    /// Whether [`Ranked::admit`] reads memory worth asking for ahead (a table larger than the
    /// cache): items then wait [`ADMIT_AHEAD`] items before they are admitted, and
    /// [`Ranked::ask`] is called for each as it arrives.
    #[inline(always)]
    fn looks_ahead(&self) -> bool {
        false
    }

    /// Asks the cache for what [`Ranked::admit`] of `it` will read.
    #[inline(always)]
    fn ask(&self, _it: &Item) {}
}

/// Items waiting for [`Ranked::admit`] when the consumer looks ahead: each item's lookup is asked
/// for while the items before it are admitted, so that the cache misses of several overlap rather
/// than follow one another.
pub(crate) const ADMIT_AHEAD: usize = 8;

/// Counts of what the ranking options did.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct RankStats {
    /// Items ranked (handed to the consumer).
    pub(crate) items: u64,
    /// Repeated lemmas dropped.
    pub(crate) duplicates_dropped: u64,
    /// Items beyond the depth.
    pub(crate) beyond_depth: u64,
    /// Items the consumer did not admit ([`Ranked::admit`]: premises masked out).
    pub(crate) masked: u64,
}

/// A repeated lemma under `--duplicates error`: where both occurrences start in the caller's
/// bytes.
#[derive(Debug)]
pub(crate) struct Dup {
    /// The first occurrence's name.
    pub(crate) first: usize,
    /// The repeat's name.
    pub(crate) second: usize,
    /// The repeat's name's end.
    pub(crate) end: usize,
}

/// Joins a JSONL record's lemma names in `buf`, one a line (the bytes the record's items point
/// into, reused from record to record), and yields each name with where it starts in `buf`.
pub(crate) fn join_names<'n, S: AsRef<str>>(
    buf: &mut Vec<u8>,
    names: &'n [S],
) -> impl Iterator<Item = (usize, &'n [u8])> + 'n {
    buf.clear();
    for n in names {
        buf.extend_from_slice(n.as_ref().as_bytes());
        buf.push(b'\n');
    }
    names.iter().scan(0usize, |at, n| {
        let start = *at;
        *at += n.as_ref().len() + 1;
        Some((start, n.as_ref().as_bytes()))
    })
}

/// An empty duplicate table for a goal's lemma names, hashed as the callers hash the items they
/// insert ([`Item::hash`]). Every builder's table, and any table swapped into one
/// ([`RankingBuilder::swap_dedup`]), comes from here: a table whose hash differed would place the
/// names it moves when it grows where no lookup finds them.
pub(crate) fn dedup_table() -> SeenSet {
    SeenSet::new(lemma_ingest::bytes::name_hash)
}

/// The batch-local line (1-based) of byte `at`: counted on error paths only.
pub(crate) fn line_at(data: &[u8], at: usize) -> u64 {
    1 + memchr::memchr_iter(b'\n', &data[..at]).count() as u64
}

/// How items of equal score are ordered: by name descending (trec), or kept in arrival order.
#[inline]
fn tie_rule(data: &[u8], ties: TieMode) -> impl Fn(&Item, &Item) -> Ordering + '_ {
    move |a, b| {
        if ties == TieMode::Trec {
            trec_cmp(a.score, a.name(data), b.score, b.name(data))
        } else {
            Ordering::Equal
        }
    }
}

/// Items a goal ranks before its duplicate table is taken to outgrow the cache.
const CACHED_ITEMS: u64 = 8192;
/// Items held back, each with its table slot asked for, in a goal beyond [`CACHED_ITEMS`].
const AHEAD: usize = 16;

/// The part after ordering: depth cut, duplicates, consumer.
struct Tail<C> {
    consumer: C,
    /// Lemmas of the current goal ranked so far.
    dedup: SeenSet,
    /// Past [`CACHED_ITEMS`] items, the next items for the duplicate table and the consumer, in
    /// order: each waits [`AHEAD`] items while its table slot is fetched (the table of a deep
    /// goal's names no longer fits the cache; a lookup that waits for memory costs several
    /// lines' parsing).
    ahead: std::collections::VecDeque<Item>,
    /// Items waiting for the consumer's admission ([`Ranked::looks_ahead`]), in order.
    admitting: std::collections::VecDeque<Item>,
    /// The caller knows the goal's lemmas are distinct (a map's keys): no duplicate table.
    distinct: bool,
    emitted: u64,
    depth: u64,
    duplicates: DuplicateMode,
    stats: RankStats,
}

impl<C: Ranked> Tail<C> {
    /// Ranks one ordered item (after [`ADMIT_AHEAD`] more, when the consumer looks ahead).
    #[inline(always)]
    fn emit(&mut self, data: &[u8], it: Item) -> Result<(), Box<Dup>> {
        if !self.consumer.looks_ahead() {
            return self.admit(data, it);
        }
        self.consumer.ask(&it);
        self.admitting.push_back(it);
        if self.admitting.len() <= ADMIT_AHEAD {
            return Ok(());
        }
        let it = self
            .admitting
            .pop_front()
            .expect("more than ADMIT_AHEAD items");
        self.admit(data, it)
    }

    /// Ranks one ordered item now: the consumer's admission, then the depth cut and repeats.
    #[inline(always)]
    fn admit(&mut self, data: &[u8], it: Item) -> Result<(), Box<Dup>> {
        if !self.consumer.admit(data, &it) {
            self.stats.masked += 1;
            // Removed by the mask, yet a line of the ranking: under `--duplicates error` its
            // repeat is refused as any other (after the repeats of the items held back).
            if self.duplicates == DuplicateMode::Error
                && !self.distinct
                && self.emitted < self.depth
            {
                while let Some(held) = self.ahead.pop_front() {
                    self.rank(data, held)?;
                }
                if let Some(first) = self.dedup.insert(data, it.hash, it.start, it.end()) {
                    return Err(Box::new(Dup {
                        first,
                        second: it.start,
                        end: it.end(),
                    }));
                }
            }
            return Ok(());
        }
        if self.emitted >= self.depth {
            self.stats.beyond_depth += 1;
            return Ok(());
        }
        self.emitted += 1;
        if self.distinct {
            self.stats.items += 1;
            self.consumer.ranked(data, &it);
            return Ok(());
        }
        if self.emitted > CACHED_ITEMS {
            self.dedup.prefetch(it.hash);
            self.ahead.push_back(it);
            if self.ahead.len() <= AHEAD {
                return Ok(());
            }
            let it = self.ahead.pop_front().expect("more than AHEAD items");
            return self.rank(data, it);
        }
        self.rank(data, it)
    }

    /// Ranks the items held back (the goal's end).
    fn drain(&mut self, data: &[u8]) -> Result<(), Box<Dup>> {
        while let Some(it) = self.admitting.pop_front() {
            self.admit(data, it)?;
        }
        while let Some(it) = self.ahead.pop_front() {
            self.rank(data, it)?;
        }
        Ok(())
    }

    /// Ranks one item past the depth cut: dropped or refused if its lemma was ranked before.
    #[inline(always)]
    fn rank(&mut self, data: &[u8], it: Item) -> Result<(), Box<Dup>> {
        if let Some(first) = self.dedup.insert(data, it.hash, it.start, it.end()) {
            if self.duplicates == DuplicateMode::Error {
                return Err(Box::new(Dup {
                    first,
                    second: it.start,
                    end: it.end(),
                }));
            }
            self.stats.duplicates_dropped += 1;
            return Ok(());
        }
        self.stats.items += 1;
        self.consumer.ranked(data, &it);
        Ok(())
    }
}

/// Builds one goal's ranking at a time for a consumer `C`: see the [module documentation](self).
pub(crate) struct RankingBuilder<C> {
    order: OrderMode,
    ties: TieMode,
    order_buf: TrecOrder<Item>,
    /// Items collected to be sorted at the goal's end.
    items: Vec<Item>,
    tail: Tail<C>,
    /// A repeat found while the goal streams under a depth cut: certain only once the goal is
    /// known to be in order (a later item that goes up has the goal sorted again, and the cut
    /// may then leave one of the two out).
    pending: Option<Box<Dup>>,
}

impl<C: Ranked> RankingBuilder<C> {
    /// A builder for rankings in `order` under `opts` (its `order` field is the caller's to
    /// resolve, as it depends on the input's format).
    pub(crate) fn new(opts: &RankingOptions, order: OrderMode, consumer: C) -> Self {
        RankingBuilder {
            order,
            ties: opts.ties,
            order_buf: TrecOrder::new(),
            items: Vec::new(),
            tail: Tail {
                consumer,
                dedup: dedup_table(),
                ahead: std::collections::VecDeque::with_capacity(AHEAD + 1),
                admitting: std::collections::VecDeque::with_capacity(ADMIT_AHEAD + 1),
                distinct: false,
                emitted: 0,
                depth: opts.depth.unwrap_or(u64::MAX),
                duplicates: opts.duplicates,
                stats: RankStats::default(),
            },
            pending: None,
        }
    }

    /// Exchanges the duplicate table with `other`: a caller that makes a builder per batch keeps
    /// one table across them, so that a deep goal's table does not grow again from 64 slots in
    /// every batch (each goal clears it at its start).
    pub(crate) fn swap_dedup(&mut self, other: &mut SeenSet) {
        std::mem::swap(&mut self.tail.dedup, other);
    }

    /// Ranks the goals that follow in `order`.
    pub(crate) fn set_order(&mut self, order: OrderMode) {
        self.order = order;
    }

    /// Whether the current goal's lemmas are known to be distinct (set after [`Self::reset`]):
    /// then no duplicate table is kept.
    pub(crate) fn set_distinct(&mut self, yes: bool) {
        self.tail.distinct = yes;
    }

    /// The consumer.
    #[inline(always)]
    pub(crate) fn consumer(&mut self) -> &mut C {
        &mut self.tail.consumer
    }

    /// What the options did so far (items ranked, repeats dropped, items beyond the depth).
    pub(crate) fn stats(&mut self) -> &mut RankStats {
        &mut self.tail.stats
    }

    /// Asks for the duplicate table's slot of a lemma hashed `hash`, ranked soon (a streamed item
    /// is ranked when the next one arrives: one line ahead).
    #[inline(always)]
    pub(crate) fn prefetch(&self, hash: u64) {
        if !self.tail.distinct {
            self.tail.dedup.prefetch(hash);
        }
    }

    /// Whether no item waits to be ranked (after [`Self::finish`]).
    pub(crate) fn holds_nothing(&self) -> bool {
        self.tail.ahead.is_empty() && self.tail.admitting.is_empty() && self.items.is_empty()
    }

    /// Ranks the items a deep goal holds back (a goal about to stop at an error: a repeat among
    /// them is on an earlier line, and is reported first).
    pub(crate) fn drain_held(&mut self, data: &[u8]) -> Result<(), Box<Dup>> {
        self.tail.drain(data)
    }

    /// Forgets the current goal's items: a new goal, or a goal about to be collected whole.
    pub(crate) fn reset(&mut self) {
        self.order_buf.reset();
        self.items.clear();
        self.tail.dedup.clear();
        self.tail.ahead.clear();
        self.tail.admitting.clear();
        self.tail.distinct = false;
        self.tail.emitted = 0;
        self.pending = None;
    }

    /// A repeat found while streaming: reported now when it is certain (no depth cut: both
    /// occurrences are ranked whatever the order), else held until the goal's end.
    fn streamed_repeat(&mut self, d: Box<Dup>) -> Result<bool, Box<Dup>> {
        if self.tail.depth == u64::MAX {
            return Err(d);
        }
        self.pending.get_or_insert(d);
        Ok(true)
    }

    /// Streams the goal's next item, whose score compares with the previous item's as `vs_last`
    /// (`Equal` for the goal's first). `Ok(false)`: it would go up, the goal is not in order; the
    /// caller resets, collects the goal whole and finishes it.
    #[inline(always)]
    pub(crate) fn push(
        &mut self,
        data: &[u8],
        vs_last: Ordering,
        it: Item,
    ) -> Result<bool, Box<Dup>> {
        if self.order == OrderMode::File {
            return self.tail.emit(data, it).map(|()| true);
        }
        if let Ok(previous) = self.order_buf.replace_lone(vs_last, it) {
            // The previous item, alone at its score: its rank is certain.
            return match self.tail.emit(data, previous) {
                Ok(()) => Ok(true),
                Err(d) => self.streamed_repeat(d),
            };
        }
        let tail = &mut self.tail;
        let mut err = None;
        let pushed = self
            .order_buf
            .push(vs_last, it, tie_rule(data, self.ties), |it| {
                if err.is_none() {
                    err = tail.emit(data, it).err();
                }
            });
        let err = match (&pushed, err) {
            // The previous item, alone at its score: its rank is certain.
            (Ok(Some(previous)), None) => tail.emit(data, *previous).err(),
            (_, err) => err,
        };
        match (pushed, err) {
            (Ok(_), None) => Ok(true),
            (Ok(_), Some(d)) => self.streamed_repeat(d),
            // Out of order: a certain repeat among the items held back comes first; under a
            // depth cut none is certain, the goal is sorted again.
            (Err(_), _) if self.tail.depth == u64::MAX => self.tail.drain(data).map(|()| false),
            (Err(_), _) => Ok(false),
        }
    }

    /// Collects an item of a goal that is ranked at its end (re-read goals, JSONL records under
    /// score order, `convert`).
    #[inline]
    pub(crate) fn collect(&mut self, it: Item) {
        self.items.push(it);
    }

    /// Ends the goal: ranks what is held back (the last tie run of a streamed goal) or the
    /// collected items (sorted under score order; stable, so what the tie rule leaves equal keeps
    /// arrival order).
    pub(crate) fn finish(&mut self, data: &[u8]) -> Result<(), Box<Dup>> {
        if !self.items.is_empty() {
            let mut items = std::mem::take(&mut self.items);
            if self.order == OrderMode::Score {
                let ties = self.ties;
                items.sort_by(|a, b| ties.cmp(a.score, a.name(data), b.score, b.name(data)));
            }
            let r = items.drain(..).try_for_each(|it| self.tail.emit(data, it));
            self.items = items;
            return r.and_then(|()| self.tail.drain(data));
        }
        if let Some(d) = self.pending.take() {
            // The goal streamed in order to its end: the repeat found on the way is certain.
            return Err(d);
        }
        if self.order == OrderMode::Score {
            let tail = &mut self.tail;
            let mut err = None;
            self.order_buf.finish(tie_rule(data, self.ties), |it| {
                if err.is_none() {
                    err = tail.emit(data, it).err();
                }
            });
            if let Some(d) = err {
                return Err(d);
            }
        }
        self.tail.drain(data)
    }
}
