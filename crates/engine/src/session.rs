//! The push API: a [`Session`] takes one goal's ranking at a time, in process, and answers with
//! that goal's values at once; finishing it evaluates the goals never pushed.
//!
//! A goal arrives as lemma names in rank order ([`Session::push_ranked`]), as (name, score) pairs
//! ranked by the evaluator's order and tie rule exactly as a TREC run's lines would be
//! ([`Session::push_scored`]), or as lemma ids ([`Session::push_ids`]: the ids
//! [`Evaluator::lemma_id`] gives, and the caller's own above [`Evaluator::lemma_count`]), or, under
//! a corpus, as the corpus's premise numbers ([`Session::push_premise_ids`]: ReProver's indices
//! into `corpus.all_premises`). Each goal
//! goes through the same ranking options (order, ties, depth, duplicates) and the same
//! accumulator as a file's, so a session fed a file's goals gives that file's summary, to the
//! bit.
//!
//! A push that fails (a repeated lemma, a score that is not finite, a goal pushed before, a
//! premise the protocol refuses) leaves the session as it was: nothing of the goal is counted,
//! and it may be pushed again; never pushed again, it is evaluated as never pushed.
//!
//! Sessions are `Send`: a caller may push from several threads, a session each, and
//! [`Session::merge`] them (summaries merge exactly; a goal pushed to two sessions is an error).
//!
//! Costs: a name is copied once into the session's buffer, hashed, looked up in the goal's judged
//! lemmas (a one-word filter first) and in the goal's seen names (duplicates); an id costs one
//! 8-byte load and store in a table of 8 bytes per id up to the largest id pushed. Memory: that
//! table, the longest goal's names, and one byte per goal of the actual sets (which were pushed).

use crate::evaluator::distinct_names;
use crate::evaluator::Evaluation;
use crate::feed::{relevant_names, AccFeed, Judged};
use crate::options::{DuplicateMode, OrderMode};
use crate::outcome::{evaluate_unseen, goal_values, truth_of, EvalError, Report};
use crate::partial::Partial;
use crate::premise::{columns::Columns, GoalMask, Premises};
use crate::ranking::{Item, RankStats, RankingBuilder};
use crate::sink::Sink;
use crate::Evaluator;
use hashbrown::HashSet;
use lemma_accum::{GoalAccumulator, GoalFate, Label, Summary};
use lemma_ingest::{bytes::next_delim, show, ActualSets, GoalTruth, Matrix, Names};
use std::cmp::Ordering;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// What a push did with its goal.
#[derive(Clone, Debug, PartialEq)]
pub enum Pushed<'s> {
    /// Evaluated: the goal's values, parallel to the plan's measures (`None`: undefined, e.g.
    /// `Depth` not reached).
    Evaluated(&'s [Option<f64>]),
    /// Counted but not evaluated: no actual set, or nothing relevant (as the options say).
    Skipped(GoalFate),
}

impl<'s> Pushed<'s> {
    /// The values, when the goal was evaluated.
    pub fn values(&self) -> Option<&'s [Option<f64>]> {
        match self {
            Pushed::Evaluated(v) => Some(v),
            Pushed::Skipped(_) => None,
        }
    }
}

/// Largest lemma id [`Session::push_ids`] takes, plus one: the id table is 8 bytes an id.
pub const MAX_LEMMA_IDS: u32 = 1 << 27;

/// A push session on an [`Evaluator`]: it takes one goal's ranking at a time, in process, and
/// answers with that goal's values at once (lemma names in rank order, (name, score) pairs ranked
/// as a TREC run's lines would be, or lemma ids); finishing it evaluates the goals never pushed.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use lemma_eval::{Evaluator, Pushed, SummaryOnly};
/// use lemma_ingest::ActualSets;
/// # let dir = tempfile::tempdir()?;
/// # let qrels = dir.path().join("qrels");
/// # std::fs::write(&qrels, "g1 0 a 1\ng1 0 b 1\ng2 0 c 1\n")?;
/// let evaluator = Evaluator::builder().measure_names(["RR", "P@2"])?.build_from_path(&qrels)?;
/// let mut session = evaluator.session()?;
/// // g1 as names in rank order: a at rank 2, b at rank 3.
/// let g1 = session.push_ranked("g1", &["x", "a", "b"])?;
/// assert_eq!(g1, Pushed::Evaluated(&[Some(0.5), Some(0.5)]));
/// // g2 as (name, score) pairs, ranked by score: c first.
/// let g2 = session.push_scored("g2", &[("y", 0.2), ("c", 0.9)])?;
/// assert_eq!(g2.values(), Some(&[Some(1.0), Some(0.5)][..]));
/// let done = session.finish(&mut SummaryOnly)?;
/// assert_eq!(done.summary.aggregates()[0].1.headline(), Some(0.75)); // mean RR
/// # Ok(()) }
/// ```
pub struct Session {
    ev: Evaluator,
    ranking: RankingBuilder<AccFeed>,
    judged: Judged,
    summary: Summary,
    /// The current goal's names, one a line (what the ranking's items point into).
    names: Vec<u8>,
    /// Per goal of the actual sets: pushed.
    seen: Vec<bool>,
    /// Goals pushed that no actual set has.
    unknown: HashSet<Vec<u8>>,
    /// Per lemma id: `seen generation << 32 | judged generation` ([`Session::push_ids`]).
    marks: Vec<u64>,
    /// The current goal's generation in `marks` (never 0).
    generation: u32,
    /// Order of scored pushes.
    scored_order: OrderMode,
    report: Report,
    /// The goal of the actual sets begun and not yet ended: a failed push un-marks it.
    begun: Option<u32>,
    /// The report as it was before that goal began (the premise protocol's counts and named
    /// cases included): a failed push puts it back ([`Session::abandon`]).
    report_before: Report,
    started: Instant,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("goals_pushed", &self.report.goals_in_predictions)
            .field("items", &self.report.items)
            .finish()
    }
}

impl Evaluator {
    /// A push session (see [`Session`]). An error when the options cannot evaluate pushed
    /// rankings (AUC without [`EvaluatorBuilder::universe`](crate::EvaluatorBuilder::universe)).
    pub fn session(&self) -> Result<Session, EvalError> {
        self.check_text_options()?;
        crate::evaluator::check_premise_measures(self.options())?;
        let plan = self.plan().clone();
        let opts = self.options();
        Ok(Session {
            ranking: RankingBuilder::new(
                &opts.ranking,
                OrderMode::File,
                AccFeed {
                    acc: GoalAccumulator::new(plan.clone()),
                    scored: plan.needs_scores(),
                    // Names pushed are masked as a TREC run's are; ids and score rows refuse a
                    // corpus (`check_unmasked`).
                    mask: (opts.premises.as_ref())
                        .map(|p| Box::new(GoalMask::new(p.clone(), &plan, opts.ranking.depth))),
                },
            ),
            judged: Judged::default(),
            summary: Summary::new(&plan),
            names: Vec::new(),
            seen: vec![false; self.actual().goals.len()],
            unknown: HashSet::new(),
            marks: Vec::new(),
            generation: 0,
            scored_order: opts.ranking.order.unwrap_or(OrderMode::Score),
            report: Report {
                path: "(pushed)".into(),
                threads: 1,
                ..Report::default()
            },
            begun: None,
            report_before: Report::default(),
            started: Instant::now(),
            ev: self.clone(),
        })
    }

    /// The id of lemma `name` among the actual sets' lemmas (for [`Session::push_ids`]).
    pub fn lemma_id(&self, name: impl AsRef<[u8]>) -> Option<u32> {
        self.actual().lemmas.get(name.as_ref())
    }

    /// How many lemmas the actual sets name: their ids are `0..lemma_count()`; a caller numbers
    /// the other lemmas of its universe from `lemma_count()` up.
    pub fn lemma_count(&self) -> u32 {
        self.actual().lemmas.len() as u32
    }
}

/// A score matrix's lemma names (its columns), matched once with the actual sets' lemmas: what
/// [`Session::push_dense`] needs beside each batch of rows. Build it once per list of names
/// ([`Evaluator::dense_lemmas`]): matching costs a hash lookup per name.
pub struct DenseLemmas {
    names: Names,
    columns: Vec<u32>,
    actual: Arc<ActualSets>,
    /// With a corpus: the columns against it (matched once for every batch of rows).
    premises: Option<Columns>,
    /// The columns are the corpus's premises in its order ([`Evaluator::premise_lemmas`]).
    of_corpus: bool,
}

impl std::fmt::Debug for DenseLemmas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DenseLemmas")
            .field("lemmas", &self.names.len())
            .finish()
    }
}

impl DenseLemmas {
    /// The names, one a column.
    pub fn names(&self) -> &Names {
        &self.names
    }
}

impl Evaluator {
    /// The lemma names of score matrices' columns, matched with the actual sets' lemmas (for
    /// [`Session::push_dense`]). A name given to two columns is an error, as in a `.npy`
    /// matrix's list of names.
    pub fn dense_lemmas(&self, names: Names) -> Result<DenseLemmas, EvalError> {
        distinct_names(&names, "column", Path::new("lemma_names"))?;
        let ids = names.iter().enumerate().map(|(c, n)| (c as u32, n));
        let columns = crate::full::name_ids(self.actual(), ids)?;
        let premises = (self.options().premises.clone())
            .map(|p| Columns::new(p, names.iter(), self.plan().needs_leaks()));
        Ok(DenseLemmas {
            names,
            columns,
            actual: self.actual_arc().clone(),
            premises,
            of_corpus: false,
        })
    }

    /// [`Evaluator::dense_lemmas`] of the corpus's premises in its order
    /// ([`Corpus::premise_names`](lemma_ingest::Corpus::premise_names): ReProver's
    /// `corpus.all_premises`): the columns of a matrix that scores every premise, a width other
    /// than theirs refused naming the corpus. An error without a corpus.
    pub fn premise_lemmas(&self) -> Result<DenseLemmas, EvalError> {
        let Some(p) = &self.options().premises else {
            return Err(EvalError::Options(crate::evaluator::NO_CORPUS.into()));
        };
        Ok(DenseLemmas {
            of_corpus: true,
            ..self.dense_lemmas(p.corpus().premise_names())?
        })
    }
}

/// How a goal's ranking was handed over.
enum Kind {
    Names,
    Ids,
}

/// Copies `names` one a line into `buf` (emptied first), or the error for the first name it
/// cannot hold: whitespace inside (each name must end where its newline is, checked eight bytes a
/// step after the copy), or 4 GiB long.
fn join<S: AsRef<[u8]>>(
    buf: &mut Vec<u8>,
    goal: &[u8],
    names: impl Iterator<Item = S> + Clone,
) -> Result<(), EvalError> {
    join_unchecked(buf, names.clone());
    let mut start = 0;
    for n in names {
        let n = n.as_ref();
        if n.len() >= u32::MAX as usize || next_delim(buf, start) != start + n.len() {
            return Err(bad_name(goal, n));
        }
        start += n.len() + 1;
    }
    Ok(())
}

/// Copies `names` one a line into `buf` (emptied first), unchecked.
fn join_unchecked<S: AsRef<[u8]>>(buf: &mut Vec<u8>, names: impl Iterator<Item = S>) {
    buf.clear();
    for n in names {
        buf.extend_from_slice(n.as_ref());
        buf.push(b'\n');
    }
}

/// The error for a name [`join`] refuses: whitespace inside, or 4 GiB long.
#[cold]
fn bad_name(goal: &[u8], name: &[u8]) -> EvalError {
    push_error(
        goal,
        format!(
            "expected a lemma name without whitespace, got `{}`",
            show(name)
        ),
    )
}

/// The first pair (name start in the joined names, length, score) whose score is not finite.
fn first_not_finite(items: impl Iterator<Item = (usize, f64)>) -> Option<(usize, usize, f64)> {
    let mut start = 0;
    for (len, s) in items {
        if !s.is_finite() {
            return Some((start, len, s));
        }
        start += len + 1;
    }
    None
}

/// Whether the scores never rise.
fn descending(mut items: impl Iterator<Item = (usize, f64)>) -> bool {
    let Some((_, mut last)) = items.next() else {
        return true;
    };
    items.all(|(_, s)| {
        let ok = last >= s;
        last = s;
        ok
    })
}

/// The ranking item of lemma `name`, at `start` in the goal's names.
#[inline(always)]
fn item(actual: &ActualSets, judged: &Judged, start: usize, name: &[u8], score: f64) -> Item {
    let hash = actual.lemmas.hash(name);
    Item {
        score,
        hash,
        start,
        len: name.len() as u32,
        label: judged.label(hash, name),
    }
}

/// A repeated lemma under `--duplicates error`, the repeat at `at` in the goal's names.
fn duplicate(goal: &[u8], names: &[u8], at: usize) -> EvalError {
    let end = next_delim(names, at);
    push_error(
        goal,
        format!("lemma `{}` appears twice", show(&names[at..end])),
    )
}

/// An error of the premise protocol about a pushed goal, named by the goal (pushes have no lines).
fn premise_error(goal: &[u8], e: EvalError) -> EvalError {
    match e {
        EvalError::Input(e) => push_error(goal, e.message),
        e => e,
    }
}

fn push_error(goal: &[u8], message: String) -> EvalError {
    EvalError::Push {
        goal: show(goal),
        message,
    }
}

impl Session {
    /// Refuses a push without scores when the plan keeps the pooled curve (every score would
    /// be 0).
    fn scores_needed(&self, goal: &[u8]) -> Result<(), EvalError> {
        match self.ev.plan().pooled() {
            Some(_) => Err(push_error(
                goal,
                "the pooled curve needs scores: push (lemma, score) pairs".into(),
            )),
            None => Ok(()),
        }
    }

    /// The evaluator.
    pub fn evaluator(&self) -> &Evaluator {
        &self.ev
    }

    /// The summary of the goals pushed so far.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// Counts so far: goals pushed, lemmas ranked, repeats dropped, lemmas beyond the depth.
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// Starts goal `goal`: its id, or why it is not evaluated (counted in the summary).
    /// A push that fails leaves the session as it was: the goal is counted as pushed only once
    /// it begins, and [`Session::abandon`] takes that back.
    fn begin(&mut self, goal: &[u8], kind: Kind) -> Result<Result<u32, GoalFate>, EvalError> {
        self.settle();
        let actual = self.ev.actual_arc().clone();
        let Some((gid, truth)) = actual.goal(goal) else {
            if !self.unknown.insert(goal.to_vec()) {
                return Err(push_error(goal, "the goal was pushed twice".into()));
            }
            self.report.goals_in_predictions += 1;
            self.summary.skip(GoalFate::SkippedNoActual);
            return Ok(Err(GoalFate::SkippedNoActual));
        };
        if std::mem::replace(&mut self.seen[gid as usize], true) {
            return Err(push_error(goal, "the goal was pushed twice".into()));
        }
        self.report_before.clone_from(&self.report);
        self.begun = Some(gid);
        self.report.goals_in_predictions += 1;
        let opts = self.ev.options();
        let t = truth_of(truth, opts.universe);
        if opts.skips_no_relevant(&t) {
            self.begun = None;
            self.summary.skip(GoalFate::SkippedNoRelevant);
            return Ok(Err(GoalFate::SkippedNoRelevant));
        }
        self.ranking.reset();
        let relevant = relevant_names(truth, &actual.lemmas, opts.relevance_level);
        let begun =
            (self.ranking.consumer()).begin_goal(goal, 0, relevant, t, &mut self.report.premises);
        if let Err(e) = begun {
            self.abandon();
            return Err(premise_error(goal, e));
        }
        match kind {
            Kind::Names => self.judged.set(truth, &actual.lemmas),
            Kind::Ids => self.mark_judged(truth),
        }
        Ok(Ok(gid))
    }

    /// Finishes the goal: its values go to the summary and back to the caller.
    fn end(&mut self, goal: &[u8]) -> Result<Pushed<'_>, EvalError> {
        debug_assert!(self.ranking.holds_nothing(), "the ranking was finished");
        if let Some(mask) = &mut self.ranking.consumer().mask {
            // The goal's names are still in `self.names`.
            if let Err(e) = mask.end(goal, &self.names, |_| 0, &mut self.report.premises) {
                self.abandon();
                return Err(premise_error(goal, e));
            }
        }
        let stats = std::mem::take(self.ranking.stats());
        self.add_stats(stats);
        let summary = &mut self.summary;
        let added = goal_values(goal, self.ranking.consumer().acc.finish())
            .map(|values| summary.add(goal, &values));
        if let Err(e) = added {
            self.abandon();
            return Err(e);
        }
        self.begun = None;
        Ok(Pushed::Evaluated(self.ranking.consumer().acc.last_values()))
    }

    fn add_stats(&mut self, s: RankStats) {
        self.report.premises.masked += s.masked;
        self.report.items += s.items;
        self.report.duplicates_dropped += s.duplicates_dropped;
        self.report.beyond_depth += s.beyond_depth;
    }

    /// Ends a goal that failed after it began: its ranking and counts are dropped (the premise
    /// protocol's too), and it is no longer pushed: the session is as it was before the push,
    /// and the goal may be pushed again (or is evaluated as never pushed).
    /// Takes back a goal begun and never ended (a push that panicked under a caller that went
    /// on, Python's say): every push, merge and ending starts from a session of whole goals.
    fn settle(&mut self) {
        if self.begun.is_some() {
            self.abandon();
        }
    }

    /// Which goals of the actual sets were pushed, and the report: a goal begun and never ended
    /// ([`Session::settle`]) in neither, for what reads the session without changing it.
    fn settled(&self) -> (std::borrow::Cow<'_, [bool]>, &Report) {
        match self.begun {
            None => (std::borrow::Cow::Borrowed(&self.seen), &self.report),
            Some(gid) => {
                let mut seen = self.seen.clone();
                seen[gid as usize] = false;
                (std::borrow::Cow::Owned(seen), &self.report_before)
            }
        }
    }

    fn abandon(&mut self) {
        self.ranking.reset();
        *self.ranking.stats() = RankStats::default();
        if let Some(gid) = self.begun.take() {
            self.seen[gid as usize] = false;
            std::mem::swap(&mut self.report, &mut self.report_before);
        }
    }

    /// Evaluates goal `goal` ranked as `lemmas` (best first). Repeats, the depth and (under tie
    /// groups or score thresholds) scores are as for a JSONL record without scores: every lemma
    /// scores 0.
    pub fn push_ranked<S: AsRef<[u8]>>(
        &mut self,
        goal: impl AsRef<[u8]>,
        lemmas: &[S],
    ) -> Result<Pushed<'_>, EvalError> {
        self.ranked(goal.as_ref(), lemmas.iter(), true)
    }

    /// [`Session::push_ranked`]; `checked`: a name with whitespace refused (no line of a file
    /// holds one; a corpus's premise names are taken as they are, as a matrix's columns are).
    fn ranked<S: AsRef<[u8]>>(
        &mut self,
        goal: &[u8],
        lemmas: impl Iterator<Item = S> + Clone,
        checked: bool,
    ) -> Result<Pushed<'_>, EvalError> {
        self.scores_needed(goal)?;
        if let Err(fate) = self.begin(goal, Kind::Names)? {
            return Ok(Pushed::Skipped(fate));
        }
        self.ranking.set_order(OrderMode::File);
        let mut names = std::mem::take(&mut self.names);
        let actual = self.ev.actual_arc();
        // The names first (a tight copy), then the items: faster than one loop doing both.
        let joined = match checked {
            true => join(&mut names, goal, lemmas.clone()),
            false => {
                join_unchecked(&mut names, lemmas.clone());
                Ok(())
            }
        };
        let mut repeat = None;
        let mut start = 0;
        if joined.is_ok() {
            for name in lemmas {
                let name = name.as_ref();
                let it = item(actual, &self.judged, start, name, 0.0);
                start += name.len() + 1;
                if let Err(d) = self.ranking.push(&names, Ordering::Equal, it) {
                    repeat = Some(d.second);
                    break;
                }
            }
            if repeat.is_none() {
                // The items a deep goal holds back.
                if let Err(d) = self.ranking.finish(&names) {
                    repeat = Some(d.second);
                }
            }
        }
        let result = joined.and_then(|()| match repeat {
            Some(at) => Err(duplicate(goal, &names, at)),
            None => Ok(()),
        });
        self.names = names;
        if let Err(e) = result {
            self.abandon();
            return Err(e);
        }
        self.end(goal)
    }

    /// Evaluates goal `goal` ranked as premises of the evaluator's corpus (best first), given by
    /// number (`u32` or `u64`): premise `i` is the corpus's `i`-th premise in its own order (its
    /// files in order, each file's premises in order, those ReProver's rules skip left out:
    /// ReProver's `corpus.all_premises`, the columns of its similarity matrix;
    /// [`Corpus::premise_name`]). Evaluated as [`Session::push_ranked`] of their names (taken as
    /// the corpus gives them): masked, leaks and origins alike. Needs a corpus
    /// ([`Session::numbered_premises`]); a number past the corpus's premises is an error, and
    /// the session is then as it was.
    ///
    /// [`Corpus::premise_name`]: lemma_ingest::Corpus::premise_name
    pub fn push_premise_ids<T: Copy + Into<u64>>(
        &mut self,
        goal: impl AsRef<[u8]>,
        ids: &[T],
    ) -> Result<Pushed<'_>, EvalError> {
        let goal = goal.as_ref();
        let premises = self.numbered_premises(goal)?.clone();
        let corpus = premises.corpus();
        let n = corpus.premises() as u64;
        if let Some(at) = ids.iter().position(|&id| id.into() >= n) {
            return Err(push_error(
                goal,
                format!(
                    "premise number {} (at position {at}): expected a number below {n}, the \
                     premises of the corpus {}",
                    ids[at].into(),
                    corpus.path().display()
                ),
            ));
        }
        // Below the corpus's premises: each number fits a premise id.
        let names = ids.iter().map(|&id| corpus.premise_name(id.into() as u32));
        self.ranked(goal, names, false)
    }

    /// The premises [`Session::push_premise_ids`] numbers for goal `goal`: the evaluator's
    /// corpus, or the error of a session without one.
    pub fn numbered_premises(&self, goal: impl AsRef<[u8]>) -> Result<&Arc<Premises>, EvalError> {
        self.ev.options().premises.as_ref().ok_or_else(|| {
            push_error(
                goal.as_ref(),
                "premise numbers index a corpus's premises: give the session a corpus (--corpus \
                 FILE)"
                    .into(),
            )
        })
    }

    /// Evaluates goal `goal` from `(lemma, score)` pairs in any order, ranked as a TREC run's
    /// lines would be: by score descending under the evaluator's tie rule (or in the given order
    /// under [`OrderMode::File`]). Scores must be finite.
    pub fn push_scored<S: AsRef<[u8]>>(
        &mut self,
        goal: impl AsRef<[u8]>,
        items: &[(S, f64)],
    ) -> Result<Pushed<'_>, EvalError> {
        self.scored(goal.as_ref(), items, false)
    }

    /// [`Session::push_scored`] for pairs whose lemma names are distinct by construction (the
    /// keys of a map, a Python dict's): no table of the goal's names is kept to find repeats, and
    /// names are taken as they are (one with whitespace is refused by `push_scored`; here it
    /// matches no judged lemma). A repeated name here is counted twice: use
    /// [`Session::push_scored`] when names may repeat.
    pub fn push_scored_distinct<S: AsRef<[u8]>>(
        &mut self,
        goal: impl AsRef<[u8]>,
        items: &[(S, f64)],
    ) -> Result<Pushed<'_>, EvalError> {
        self.scored(goal.as_ref(), items, true)
    }

    /// [`Session::push_scored_distinct`] for names already joined: `names` holds each lemma's
    /// name followed by `b'\n'`, and `scored[i]` is the `i`-th name's length and score (so the
    /// lengths with one byte each for the newlines add up to `names.len()`). The buffer is
    /// exchanged with the session's own (no copy): on return `names` holds a buffer to reuse,
    /// its contents unspecified.
    pub fn push_scored_joined(
        &mut self,
        goal: impl AsRef<[u8]>,
        names: &mut Vec<u8>,
        scored: &[(u32, f64)],
    ) -> Result<Pushed<'_>, EvalError> {
        let goal = goal.as_ref();
        let total: usize = scored.iter().map(|&(n, _)| n as usize + 1).sum();
        if total != names.len() {
            return Err(push_error(
                goal,
                format!(
                    "expected names of {total} bytes with their newlines, got {}",
                    names.len()
                ),
            ));
        }
        std::mem::swap(names, &mut self.names);
        let items = scored.iter().map(|&(n, s)| (n as usize, s));
        self.scored_core(goal, items, None, true)
    }

    fn scored<S: AsRef<[u8]>>(
        &mut self,
        goal: &[u8],
        items: &[(S, f64)],
        distinct: bool,
    ) -> Result<Pushed<'_>, EvalError> {
        let mut names = std::mem::take(&mut self.names);
        // A map's keys are names as they are (one with whitespace matches no judged lemma).
        let joined = if distinct {
            join_unchecked(&mut names, items.iter().map(|(n, _)| n));
            Ok(())
        } else {
            join(&mut names, goal, items.iter().map(|(n, _)| n))
        };
        self.names = names;
        let lens = items.iter().map(|(n, s)| (n.as_ref().len(), *s));
        self.scored_core(goal, lens, joined.err(), distinct)
    }

    /// Evaluates the pairs whose names are joined one a line in `self.names`, given as (name
    /// length, score); `refused` is the joining's error, reported once the scores are checked.
    fn scored_core(
        &mut self,
        goal: &[u8],
        items: impl Iterator<Item = (usize, f64)> + Clone,
        refused: Option<EvalError>,
        distinct: bool,
    ) -> Result<Pushed<'_>, EvalError> {
        if let Some((at, len, s)) = first_not_finite(items.clone()) {
            return Err(push_error(
                goal,
                format!(
                    "lemma `{}`: expected a finite score, got {s}",
                    show(&self.names[at..at + len])
                ),
            ));
        }
        if let Err(fate) = self.begin(goal, Kind::Names)? {
            return Ok(Pushed::Skipped(fate));
        }
        self.ranking.set_distinct(distinct);
        self.ranking.set_order(self.scored_order);
        let f32_scores = self.ev.options().f32_scores;
        // Under score order, pairs whose scores already descend are streamed (only tie runs are
        // held back); others are collected and sorted at the goal's end. Rounding to f32 keeps a
        // descending order descending.
        let streamed = self.scored_order == OrderMode::File || descending(items.clone());
        self.report.goals_reordered += u64::from(!streamed);
        let names = std::mem::take(&mut self.names);
        let actual = self.ev.actual_arc();
        let mut result = match refused {
            Some(e) => Err(e),
            None => Ok(()),
        };
        let (mut start, mut last) = (0, f64::NAN);
        for (len, score) in items.take_while(|_| result.is_ok()) {
            let name = &names[start..start + len];
            let score = if f32_scores {
                score as f32 as f64
            } else {
                score
            };
            let it = item(actual, &self.judged, start, name, score);
            start += len + 1;
            if !streamed {
                self.ranking.collect(it);
                continue;
            }
            // Never `Greater`: a streamed goal's items are never out of order.
            let vs_last = score.partial_cmp(&last).unwrap_or(Ordering::Equal);
            last = score;
            if let Err(d) = self.ranking.push(&names, vs_last, it) {
                result = Err(duplicate(goal, &names, d.second));
                break;
            }
        }
        if result.is_ok() {
            if let Err(d) = self.ranking.finish(&names) {
                result = Err(duplicate(goal, &names, d.second));
            }
        }
        self.names = names;
        if let Err(e) = result {
            self.abandon();
            return Err(e);
        }
        self.end(goal)
    }

    /// Marks the goal's judged lemmas in the id table (a new generation).
    fn mark_judged(&mut self, truth: GoalTruth<'_>) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.marks.iter_mut().for_each(|m| *m = 0);
            self.generation = 1;
        }
        let need = self.ev.lemma_count() as usize;
        if self.marks.len() < need {
            self.marks.resize(need, 0);
        }
        let g = self.generation as u64;
        for &id in truth.judged() {
            let m = &mut self.marks[id as usize];
            *m = (*m & !0xffff_ffff) | g;
        }
    }

    /// Evaluates goal `goal` ranked as `ids` (best first): ids below
    /// [`Evaluator::lemma_count`] are the actual sets' lemmas ([`Evaluator::lemma_id`]), ids
    /// from there up (below [`MAX_LEMMA_IDS`]) the caller's other lemmas, judged nowhere. Repeats
    /// and the depth as in [`Session::push_ranked`].
    pub fn push_ids(
        &mut self,
        goal: impl AsRef<[u8]>,
        ids: &[u32],
    ) -> Result<Pushed<'_>, EvalError> {
        let goal = goal.as_ref();
        self.scores_needed(goal)?;
        crate::evaluator::check_unmasked(self.ev.options(), "lemma ids pushed")?;
        if let Some(&bad) = ids.iter().find(|&&id| id >= MAX_LEMMA_IDS) {
            return Err(push_error(
                goal,
                format!("lemma id {bad}: expected an id below {MAX_LEMMA_IDS}"),
            ));
        }
        let truth = match self.begin(goal, Kind::Ids)? {
            Ok(gid) => gid,
            Err(fate) => return Ok(Pushed::Skipped(fate)),
        };
        if let Some(&top) = ids.iter().max() {
            if top as usize >= self.marks.len() {
                self.marks.resize(top as usize + 1, 0);
            }
        }
        let opts = self.ev.options();
        let depth = opts.ranking.depth.unwrap_or(u64::MAX).min(ids.len() as u64) as usize;
        let dup_error = opts.ranking.duplicates == DuplicateMode::Error;
        let g = self.generation as u64;
        let seen = g << 32;
        let actual = self.ev.actual_arc().clone();
        let goal_truth = actual.truth(truth);
        let feed = self.ranking.consumer();
        let mut dropped = 0u64;
        for &id in &ids[..depth] {
            let m = &mut self.marks[id as usize];
            if *m >> 32 == g {
                if dup_error {
                    let name = match actual.lemmas.len() > id as usize {
                        true => show(actual.lemmas.name(id)),
                        false => format!("#{id}"),
                    };
                    // Leave the accumulator ready for the next goal.
                    let _ = feed.acc.finish();
                    self.abandon();
                    return Err(push_error(goal, format!("lemma `{name}` appears twice")));
                }
                dropped += 1;
                continue;
            }
            let label = if *m as u32 == g as u32 {
                Label::judged(goal_truth.grade(id).expect("marked judged"))
            } else {
                Label::UNJUDGED
            };
            *m = seen | (*m & 0xffff_ffff);
            if feed.scored {
                let _ = feed.acc.push_scored(label, 0.0);
            } else {
                feed.acc.push(label);
            }
        }
        self.report.items += (depth as u64) - dropped;
        self.report.duplicates_dropped += dropped;
        self.report.beyond_depth += (ids.len() - depth) as u64;
        self.end(goal)
    }

    /// Evaluates a batch of goals given as the rows of a score matrix (`goals` names the rows,
    /// `lemmas` the columns), as a `.npy` matrix's goals are: a judged lemma's rank is one plus
    /// the lemmas that outrank it (greater score, or equal with a greater name), counted in one
    /// pass over its row; no row is sorted. The rows run on the evaluator's threads; their
    /// values go to `rows` in row order (goals without an actual set, or with nothing relevant,
    /// have none). A goal pushed before, or named twice, is an error, and then nothing of the
    /// batch is added.
    pub fn push_dense(
        &mut self,
        matrix: &Matrix,
        goals: &Names,
        lemmas: &DenseLemmas,
        rows: &mut dyn Sink,
    ) -> Result<(), EvalError> {
        self.settle();
        if !Arc::ptr_eq(&lemmas.actual, self.ev.actual_arc()) {
            return Err(EvalError::Options(
                "these lemma names were matched with another evaluator's actual sets".into(),
            ));
        }
        if let (true, Some(p)) = (lemmas.of_corpus, &self.ev.options().premises) {
            if lemmas.names.len() != matrix.cols() {
                return Err(EvalError::Options(format!(
                    "{}: {}",
                    matrix.path().display(),
                    crate::evaluator::premise_width(matrix, p.corpus())
                )));
            }
        }
        if goals.len() != matrix.rows() || lemmas.names.len() != matrix.cols() {
            return Err(EvalError::Options(format!(
                "{}: shape ({}, {}) but {} goal names and {} lemma names",
                matrix.path().display(),
                matrix.rows(),
                matrix.cols(),
                goals.len(),
                lemmas.names.len()
            )));
        }
        distinct_names(goals, "row", matrix.path())?;
        let actual = self.ev.actual_arc().clone();
        for g in goals.iter() {
            let again = match actual.goal(g) {
                Some((gid, _)) => self.seen[gid as usize],
                None => self.unknown.contains(g),
            };
            if again {
                return Err(push_error(g, "the goal was pushed twice".into()));
            }
        }
        let source = crate::full::Source::Dense {
            matrix,
            goals,
            lemmas: &lemmas.names,
        };
        let p = crate::full::predict(
            &actual,
            &source,
            self.ev.options(),
            rows,
            Some(&lemmas.columns),
            lemmas.premises.as_ref(),
        )?;
        for (s, new) in self.seen.iter_mut().zip(&p.seen) {
            *s |= *new;
        }
        self.unknown.extend(
            goals
                .iter()
                .filter(|g| actual.goal(g).is_none())
                .map(<[u8]>::to_vec),
        );
        self.summary.merge(&p.summary).expect("same plan");
        self.report.goals_in_predictions += goals.len() as u64;
        self.report.items += p.report.items;
        self.report.premises.add(&p.report.premises);
        Ok(())
    }

    /// The summary of every goal as [`Session::finish`] would give it now (the goals never
    /// pushed evaluated as empty, or skipped), the session going on: O(goals of the actual sets).
    pub fn snapshot(&self) -> Result<Summary, EvalError> {
        let mut summary = self.summary.clone();
        let opts = self.ev.options();
        let (seen, _) = self.settled();
        evaluate_unseen(
            self.ev.actual(),
            self.ev.plan(),
            opts,
            &|g| seen[g],
            opts.universe,
            &mut summary,
            &mut crate::SummaryOnly,
        )?;
        Ok(summary)
    }

    /// The session so far as a summary that travels ([`Session::into_partial`]), the session
    /// going on.
    pub fn partial(&self) -> Result<Partial, EvalError> {
        let (seen, report) = self.settled();
        Partial::new(
            &self.ev,
            self.summary.clone(),
            &seen,
            self.ev.options().universe,
            &report.premises,
        )
    }

    /// Adds `other`'s goals (pushed on another thread, say) to this session. An error names a
    /// goal pushed to both (then this session is unchanged).
    pub fn merge(&mut self, mut other: Session) -> Result<(), EvalError> {
        self.settle();
        other.settle();
        if !Evaluator::same(&self.ev, &other.ev) {
            return Err(EvalError::Options(
                "sessions of different evaluators cannot be merged".into(),
            ));
        }
        if let Some(gid) = (0..self.seen.len()).find(|&g| self.seen[g] && other.seen[g]) {
            let goal = self.ev.actual().goals.name(gid as u32);
            return Err(push_error(
                goal,
                "the goal was pushed to both sessions".into(),
            ));
        }
        if let Some(goal) = other.unknown.iter().find(|g| self.unknown.contains(*g)) {
            return Err(push_error(
                goal,
                "the goal was pushed to both sessions".into(),
            ));
        }
        for (a, b) in self.seen.iter_mut().zip(&other.seen) {
            *a |= *b;
        }
        self.unknown.extend(other.unknown);
        self.summary.merge(&other.summary).expect("same plan");
        let (a, b) = (&mut self.report, &other.report);
        a.items += b.items;
        a.duplicates_dropped += b.duplicates_dropped;
        a.beyond_depth += b.beyond_depth;
        a.goals_reordered += b.goals_reordered;
        a.goals_in_predictions += b.goals_in_predictions;
        a.threads += b.threads;
        a.premises.add(&b.premises);
        Ok(())
    }

    /// Ends the session: the goals of the actual sets never pushed are evaluated as empty, or
    /// skipped (`missing`), their rows going to `rows`; the summary of every goal comes back.
    pub fn finish(mut self, rows: &mut dyn Sink) -> Result<Evaluation, EvalError> {
        self.settle();
        let Session {
            ev,
            mut summary,
            seen,
            mut report,
            started,
            ..
        } = self;
        evaluate_unseen(
            ev.actual(),
            ev.plan(),
            ev.options(),
            &|g| seen[g],
            ev.options().universe,
            &mut summary,
            rows,
        )?;
        report.elapsed = started.elapsed();
        Evaluation { summary, report }.finish_groups(ev.options())
    }

    /// [`Session::finish`] without rows, and which goals of the actual sets were pushed (by goal
    /// id): what the rows of the others, made later, need ([`crate::aio::Pool::rows`]).
    #[cfg(feature = "async")]
    pub(crate) fn finish_pushed(mut self) -> Result<(Evaluation, Vec<bool>), EvalError> {
        self.settle();
        let seen = self.seen.clone();
        Ok((self.finish(&mut crate::SummaryOnly)?, seen))
    }

    /// [`Session::finish`], and the session as a summary that travels ([`Session::into_partial`]):
    /// both from one session, for a caller that prints its result and hands it on.
    pub fn finish_partial(self, rows: &mut dyn Sink) -> Result<(Evaluation, Partial), EvalError> {
        let partial = self.partial()?;
        Ok((self.finish(rows)?, partial))
    }

    /// Ends the session as a summary that travels: mergeable with other processes' (see
    /// [`Partial`]), the goals never pushed left for after the merge.
    pub fn into_partial(mut self) -> Result<Partial, EvalError> {
        self.settle();
        let Session {
            ev,
            summary,
            seen,
            report,
            ..
        } = self;
        Partial::new(&ev, summary, &seen, ev.options().universe, &report.premises)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SummaryOnly;

    /// A goal begun and never ended (a push that panicked under a caller that went on) is in
    /// nothing the session gives: its snapshot, partial, merge and finish are a clean session's,
    /// and the goal may be pushed again.
    #[test]
    fn a_goal_begun_and_never_ended_is_taken_back() {
        let dir = tempfile::tempdir().unwrap();
        let qrels = dir.path().join("qrels.txt");
        std::fs::write(&qrels, "g1 0 a 1\ng1 0 b 1\ng2 0 c 1\ng3 0 d 1\n").unwrap();
        let ev = Evaluator::builder()
            .measure_names(["AP", "RR"])
            .unwrap()
            .build_from_path(&qrels)
            .unwrap();
        let clean = || {
            let mut s = ev.session().unwrap();
            s.push_ranked("g2", &["x", "c"]).unwrap();
            s
        };
        let broken = || {
            let mut s = clean();
            assert!(matches!(s.begin(b"g1", Kind::Names), Ok(Ok(_))));
            assert_eq!(s.report().goals_in_predictions, 2);
            s
        };
        let want = clean().snapshot().unwrap();
        assert_eq!(broken().snapshot().unwrap(), want);
        assert_eq!(
            broken().partial().unwrap().encode(),
            clean().partial().unwrap().encode()
        );
        assert_eq!(
            broken().into_partial().unwrap().encode(),
            clean().into_partial().unwrap().encode()
        );
        let done = broken().finish(&mut SummaryOnly).unwrap();
        assert_eq!(
            done.summary,
            clean().finish(&mut SummaryOnly).unwrap().summary
        );
        assert_eq!(done.report.goals_in_predictions, 1);
        // g2 at rank 2 (AP 1/2), g1 and g3 never pushed: (0 + 1/2 + 0) / 3.
        assert_eq!(
            done.summary.aggregate(0),
            lemma_accum::Aggregate::Mean(0.5 / 3.0)
        );
        // Merged both ways, then g1 pushed after all.
        let mut a = broken();
        let mut b = ev.session().unwrap();
        assert!(matches!(b.begin(b"g3", Kind::Names), Ok(Ok(_))));
        a.merge(b).unwrap();
        a.push_ranked("g1", &["a", "b"]).unwrap();
        let done = a.finish(&mut SummaryOnly).unwrap();
        assert_eq!(done.report.goals_in_predictions, 2);
        assert_eq!(
            done.summary.aggregate(0),
            lemma_accum::Aggregate::Mean(1.5 / 3.0)
        );
    }
}
