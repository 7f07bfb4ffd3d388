//! The evaluation pipeline: batches of whole goals from the ingest crate, evaluated by worker
//! threads with the accumulator, merged in file order.
//!
//! ```text
//!  input (one lock) ──next batch──▶ workers (N) ──results (bounded)──▶ collector (caller's thread)
//! ```
//!
//! A worker takes the next batch itself: under the input's lock it reads about 4 MiB into its own
//! buffer and cuts it at a goal boundary (so the bytes are in its own core's cache when it parses
//! them, and N threads share N cores), then evaluates it. A window keeps the workers at most a few
//! batches ahead of the collector. A worker streams each goal's lines through the
//! order check (trec order: score descending, name descending; only tie runs are buffered; scores
//! of one printed shape are compared as text, others parsed), the
//! depth cut, duplicate removal and the accumulator. A goal whose lines are out of order is re-read
//! from its first line and sorted (memory: that goal). The collector takes results in batch order,
//! checks that no goal reappears, numbers lines, and hands per-goal rows to the caller in file
//! order. Summaries merge exactly, so the figures do not depend on the number of threads.

use crate::seen::SeenSet;
use crate::sink::Sink as RowSink;
use hashbrown::{HashMap, HashTable};
use lemma_accum::{
    trec_cmp, Config, GoalAccumulator, GoalError, GoalFate, GoalValues, Interpolation, Label,
    Measure, Plan, Summary, Ties, TrecOrder, Truth,
};
use lemma_ingest::{
    bytes::same_bytes, parse_prediction_line, parse_run_line, parse_score, score_error, show,
    split_run_at, ActualSets, Batch, BatchReader, ErrorKind, Format, GoalKey, GoalTruth, Input,
    InputError, RunLineVisitor, ScoreText, Step, VisitedLine,
};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How a goal's lemmas are ordered (METRICS.md §2).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OrderMode {
    /// Score descending (TREC runs' default).
    Score,
    /// As the lemmas arrive (JSONL's default).
    File,
}

/// How equal scores are ranked under [`OrderMode::Score`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum TieMode {
    /// trec_eval: lemma name descending (bytes).
    #[default]
    Trec,
    /// scikit-learn tie groups for AP (order inside a group does not matter).
    Group,
    /// Equal scores keep their file order.
    File,
}

impl TieMode {
    /// The order of two ranked items under score order: score descending, then trec_eval's name
    /// rule, or (other modes) equal, for a stable sort to keep file order.
    pub fn cmp(self, a_score: f64, a_name: &[u8], b_score: f64, b_name: &[u8]) -> Ordering {
        if self == TieMode::Trec {
            trec_cmp(a_score, a_name, b_score, b_name)
        } else {
            b_score.partial_cmp(&a_score).unwrap_or(Ordering::Equal)
        }
    }
}

/// What to do with a lemma repeated in one goal's ranking.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum DuplicateMode {
    /// The first occurrence counts; later ones are dropped before ranks are assigned.
    #[default]
    First,
    /// Stop with an error naming goal, lemma and lines.
    Error,
}

/// Goals with an actual set but no predictions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MissingMode {
    /// Evaluated as an empty ranking (every measure 0).
    Zero,
    /// Not evaluated (counted in the report).
    Skip,
}

/// Goals whose actual set has nothing at or above the relevance level (`R = 0`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ZeroRelMode {
    /// Skipped and counted (default).
    Skip,
    /// Evaluated, every measure 0 (trec_eval).
    Evaluate,
}

/// How a goal's ranking is built from its prediction lines: order, ties, repeats, depth. The same
/// for `eval` and `convert`, so a store holds exactly the rankings `eval` would evaluate.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct RankingOptions {
    /// Ranking order; `None` picks the format's default ([`RankingOptions::order_for`]).
    pub order: Option<OrderMode>,
    /// Ties under score order.
    pub ties: TieMode,
    /// Repeated lemmas.
    pub duplicates: DuplicateMode,
    /// Keep only the first `depth` lemmas of each goal, after ordering.
    pub depth: Option<u64>,
}

impl RankingOptions {
    /// The order for an input of `format`: the one asked for, else TREC runs by score and JSONL
    /// records in file order.
    pub fn order_for(&self, format: Format) -> OrderMode {
        self.order.unwrap_or(match format {
            Format::Trec => OrderMode::Score,
            Format::Jsonl => OrderMode::File,
        })
    }
}

/// Everything that decides the numbers. Built with [`EvaluatorBuilder`](crate::EvaluatorBuilder)
/// (or from `EvalOptions::default()` by setting fields: more may come).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct EvalOptions {
    /// Measures, in output order.
    pub measures: Vec<Measure>,
    /// Relevant means grade `>=` this.
    pub relevance_level: i32,
    /// Relevant count needed per recall level for IPrec/AP11.
    pub interpolation: Interpolation,
    /// How each goal's ranking is built from its lines (shared with `convert`).
    pub ranking: RankingOptions,
    /// Goals without predictions.
    pub missing: MissingMode,
    /// Goals with `R = 0`.
    pub zero_rel: ZeroRelMode,
    /// Buffer the whole predictions file and group its lines by goal (goals need not be contiguous).
    pub regroup: bool,
    /// Round scores to f32 before ordering (trec_eval 9.0.8).
    pub f32_scores: bool,
    /// Worker threads (at least 1).
    pub threads: usize,
    /// Target batch size in bytes.
    pub batch_bytes: usize,
    /// Universe size for AUC.
    pub universe: Option<u64>,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            measures: Vec::new(),
            relevance_level: 1,
            interpolation: Interpolation::Textbook,
            ranking: RankingOptions::default(),
            missing: MissingMode::Zero,
            zero_rel: ZeroRelMode::Skip,
            regroup: false,
            f32_scores: false,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            batch_bytes: 4 << 20,
            universe: None,
        }
    }
}

/// One goal's values, handed to the caller in file order (then goals without predictions).
#[derive(Clone, Debug, PartialEq)]
pub struct GoalRow {
    /// Goal id.
    pub goal: Vec<u8>,
    /// Values parallel to the plan's measures.
    pub values: Vec<Option<f64>>,
    /// Whether the goal had no predictions (evaluated as empty).
    pub empty: bool,
}

impl GoalRow {
    /// The row of a goal's values.
    pub(crate) fn new(goal: &[u8], values: &GoalValues<'_>, empty: bool) -> GoalRow {
        GoalRow {
            goal: goal.to_vec(),
            values: values.values().to_vec(),
            empty,
        }
    }
}

/// A goal's values, or its error with the goal named.
pub(crate) fn goal_values<'v>(
    goal: &[u8],
    values: Result<GoalValues<'v>, GoalError>,
) -> Result<GoalValues<'v>, EvalError> {
    values.map_err(|error| EvalError::Goal {
        goal: show(goal),
        error,
    })
}

/// Adds an evaluated goal (with predictions) to a partial summary, and to the partial rows when
/// rows are asked for.
pub(crate) fn record_goal(
    summary: &mut Summary,
    rows: Option<&mut Vec<GoalRow>>,
    goal: &[u8],
    values: Result<GoalValues<'_>, GoalError>,
) -> Result<(), EvalError> {
    let values = goal_values(goal, values)?;
    summary.add(&values);
    if let Some(rows) = rows {
        rows.push(GoalRow::new(goal, &values, false));
    }
    Ok(())
}

/// What happened, for the report on stderr.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Predictions file.
    pub path: PathBuf,
    /// Lines read (all of them: blank and comment lines too).
    pub lines: u64,
    /// Decompressed bytes read.
    pub bytes: u64,
    /// Lemmas read in goals that were evaluated.
    pub items: u64,
    /// Repeated lemmas dropped (`--duplicates first`).
    pub duplicates_dropped: u64,
    /// Lemmas beyond `--depth`.
    pub beyond_depth: u64,
    /// Goals whose lines were out of score order and were sorted.
    pub goals_reordered: u64,
    /// Goal runs seen in the predictions.
    pub goals_in_predictions: u64,
    /// Whether the input was regrouped in memory.
    pub regrouped: bool,
    /// The tag of the last run line in the file (trec_eval's `runid`).
    pub runid: Vec<u8>,
    /// Wall time.
    pub elapsed: Duration,
    /// Worker threads used.
    pub threads: usize,
}

/// Why an evaluation stopped.
#[derive(Debug)]
pub enum EvalError {
    /// Bad input (file, line, what was expected).
    Input(InputError),
    /// A goal could not be evaluated.
    Goal {
        /// The goal, printable.
        goal: String,
        /// What went wrong.
        error: GoalError,
    },
    /// The caller's row sink failed.
    Sink(std::io::Error),
    /// The options cannot evaluate this input (AUC on text without a universe size).
    Options(String),
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EvalError::Input(e) => write!(f, "{e}"),
            EvalError::Goal { goal, error } => write!(f, "goal `{goal}`: {error}"),
            EvalError::Sink(e) => write!(f, "cannot write output: {e}"),
            EvalError::Options(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for EvalError {}

impl From<InputError> for EvalError {
    fn from(e: InputError) -> Self {
        EvalError::Input(e)
    }
}

/// Keeps producers at most `ahead` units in front of the in-order consumer, so that results
/// finished out of order (behind one slow batch) cannot pile up without bound.
pub(crate) struct Window {
    /// Units the consumer has taken, and whether the window is closed.
    state: std::sync::Mutex<(u64, bool)>,
    moved: std::sync::Condvar,
    ahead: u64,
}

impl Window {
    pub(crate) fn new(ahead: u64) -> Self {
        Window {
            state: std::sync::Mutex::new((0, false)),
            moved: std::sync::Condvar::new(),
            ahead,
        }
    }

    /// Blocks until unit `index` may start (or the window is closed).
    pub(crate) fn wait_for(&self, index: u64) {
        let mut state = self.state.lock().expect("window");
        while index >= state.0 + self.ahead && !state.1 {
            state = self.moved.wait(state).expect("window");
        }
    }

    /// The consumer has taken every unit below `done`.
    pub(crate) fn advance(&self, done: u64) {
        self.state.lock().expect("window").0 = done;
        self.moved.notify_all();
    }

    /// Lets every waiting producer go (end of work, or an error).
    pub(crate) fn close(&self) {
        self.state.lock().expect("window").1 = true;
        self.moved.notify_all();
    }
}

/// Closes a window when dropped: on every exit path of a collector, a panic included, producers
/// waiting on the window are let go.
pub(crate) struct CloseOnDrop<'a>(pub(crate) &'a Window);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// A goal's truth as the accumulator takes it: its grades, within `universe` lemmas when known.
pub(crate) fn truth_of(truth: &GoalTruth, universe: Option<u64>) -> Truth<'_> {
    let t = Truth::graded(&truth.grades_desc).expect("grades are stored sorted");
    match universe {
        Some(u) => t.with_universe(u),
        None => t,
    }
}

impl EvalOptions {
    /// Whether a goal with truth `t` is skipped for having no relevant lemma.
    pub(crate) fn skips_no_relevant(&self, t: &Truth<'_>) -> bool {
        t.counts(self.relevance_level).0 == 0 && self.zero_rel == ZeroRelMode::Skip
    }
}

/// Goals of the actual sets that the predictions never ranked: evaluated as empty rankings (every
/// measure 0), or skipped per `--missing skip`; goals with R = 0 skipped per the policy. Shared by
/// the text and the full-library pipelines; rows come in actual-set order.
pub(crate) fn evaluate_unseen(
    actual: &ActualSets,
    plan: &Arc<Plan>,
    opts: &EvalOptions,
    seen: impl Fn(usize) -> bool,
    universe: Option<u64>,
    summary: &mut Summary,
    rows: &mut dyn RowSink,
) -> Result<(), EvalError> {
    let mut acc = GoalAccumulator::new(plan.clone());
    for (gid, truth) in actual.truths.iter().enumerate() {
        if seen(gid) {
            continue;
        }
        let t = truth_of(truth, universe);
        if opts.skips_no_relevant(&t) {
            summary.skip(GoalFate::SkippedNoRelevant);
            continue;
        }
        if opts.missing == MissingMode::Skip {
            summary.skip(GoalFate::SkippedNoPredictions);
            continue;
        }
        let goal = actual.goals.name(gid as u32);
        let values = goal_values(goal, acc.evaluate_ranks(&t, 0, []))?;
        summary.add_empty(&values);
        if rows.wants_rows() {
            rows.row(GoalRow::new(goal, &values, true))
                .map_err(EvalError::Sink)?;
        }
    }
    Ok(())
}

/// The compiled plan for `opts` (the measures and the options that change numbers).
pub fn plan_for(opts: &EvalOptions) -> Arc<Plan> {
    Arc::new(Plan::new(
        &opts.measures,
        Config {
            relevance_level: opts.relevance_level,
            interpolation: opts.interpolation,
            ties: if opts.ranking.ties == TieMode::Group {
                Ties::Group
            } else {
                Ties::Given
            },
        },
    ))
}

/// A goal as the worker reports it, for the collector's contiguity check.
#[derive(Debug)]
enum GoalRef {
    Known(u32),
    Unknown(Vec<u8>),
}

#[derive(Debug, Default)]
struct BatchResult {
    index: u64,
    /// Where the batch starts in the input: error byte offsets are the batch's own.
    first_byte: u64,
    lines: u64,
    goals: Vec<(GoalRef, u64)>,
    rows: Vec<GoalRow>,
    error: Option<EvalError>,
    stats: Stats,
    last_tag: Option<Vec<u8>>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Stats {
    items: u64,
    duplicates_dropped: u64,
    beyond_depth: u64,
    goals_reordered: u64,
}

/// One ranked item on its way to the accumulator: where its name is in the batch, its hash, label.
/// 32 bytes, copied a few times per line: its line is counted only for an error message.
#[derive(Copy, Clone, Debug)]
struct Item {
    score: f64,
    hash: u64,
    start: usize,
    len: u32,
    label: Label,
}

impl Item {
    /// Where the name ends in the batch.
    #[inline(always)]
    fn end(&self) -> usize {
        self.start + self.len as usize
    }

    /// The name, in the batch `data`.
    #[inline(always)]
    fn name<'d>(&self, data: &'d [u8]) -> &'d [u8] {
        &data[self.start..self.end()]
    }
}

/// The batch-local line (1-based) of byte `at`: counted on error paths only.
fn line_at(data: &[u8], at: usize) -> u64 {
    1 + memchr::memchr_iter(b'\n', &data[..at]).count() as u64
}

/// The part of a worker after ordering: depth cut, duplicates, accumulator.
struct Sink {
    acc: GoalAccumulator,
    /// Lemmas of the current goal seen so far.
    dedup: SeenSet,
    emitted: u64,
    depth: u64,
    dup_mode: DuplicateMode,
    scored: bool,
    stats: Stats,
}

impl Sink {
    /// Feeds one ordered item. `data` holds the names.
    #[inline(always)]
    fn emit(&mut self, data: &[u8], it: Item) -> Result<(), Box<Dup>> {
        if self.emitted >= self.depth {
            self.stats.beyond_depth += 1;
            return Ok(());
        }
        self.emitted += 1;
        if let Some(first) = self.dedup.insert(data, it.hash, it.start, it.end()) {
            if self.dup_mode == DuplicateMode::Error {
                // Both lines (batch-local), counted now.
                return Err(Box::new(Dup {
                    first: line_at(data, first),
                    second: line_at(data, it.start),
                    start: it.start,
                    end: it.end(),
                }));
            }
            self.stats.duplicates_dropped += 1;
            return Ok(());
        }
        self.stats.items += 1;
        if self.scored {
            // Scores are finite (checked by the parser).
            let _ = self.acc.push_scored(it.label, it.score);
        } else {
            self.acc.push(it.label);
        }
        Ok(())
    }
}

/// A repeated lemma under `--duplicates error`.
#[derive(Debug)]
struct Dup {
    first: u64,
    second: u64,
    start: usize,
    end: usize,
}

/// The goal whose lines a TREC batch is reading.
struct OpenGoal<'a> {
    /// Where the goal id is in the batch.
    name: (usize, usize),
    /// Its first line (batch-local) and that line's offset, to re-read it if it is out of order.
    first_line: u64,
    first_pos: usize,
    state: GoalState<'a>,
    /// Being re-read to be sorted whole.
    reread: bool,
}

/// Per-goal state while its lines stream by.
enum GoalState<'a> {
    /// Evaluated: truth known.
    Eval { truth: &'a GoalTruth },
    /// Lines validated but not evaluated.
    Skip,
}

/// The bit of a name hash in [`Worker`]'s judged filter: its top six bits (the table probes use
/// the low ones).
#[inline(always)]
fn judged_bit(hash: u64) -> u64 {
    1 << (hash >> 58)
}

struct Worker<'a> {
    actual: &'a ActualSets,
    opts: &'a EvalOptions,
    order: OrderMode,
    order_buf: TrecOrder<Item>,
    items: Vec<Item>,
    sink: Sink,
    summary: Summary,
    want_rows: bool,
    /// The current goal's judged lemmas: (name hash, lemma id, grade). A few entries that stay in
    /// L1 cache: the per-line relevance lookup never touches the (large) interner.
    judged: HashTable<(u64, u32, i32)>,
    /// A one-word filter of `judged`: bit [`judged_bit`] of each judged lemma's hash. A lemma
    /// whose bit is clear is not judged (with R judged lemmas, at most R of 64 bits are set).
    judged_bits: u64,
    /// Sink statistics when the current goal began (restored if the goal is re-read).
    goal_stats: Stats,
    /// The current goal's previous score.
    last_score: LastScore,
}

/// The previous score of the goal being read, to order the next one against: as text while the
/// scores keep one shape ([`ScoreText`]: no parsing), else as a parsed value.
struct LastScore {
    /// The goal's previous score.
    last: Last,
    /// Round parsed scores to f32 (trec_eval 9.0.8).
    f32_scores: bool,
    /// Whether scores may be compared as text: not when they are rounded to f32 first (the text
    /// order is the f64 order), nor when a measure needs their values.
    text_allowed: bool,
}

/// A goal's previous score: none yet, its text (a comparable shape, which also gives its value),
/// or its parsed value.
enum Last {
    None,
    Text(ScoreText),
    Value(f64),
}

impl LastScore {
    fn new(opts: &EvalOptions, plan: &Plan) -> Self {
        LastScore {
            last: Last::None,
            f32_scores: opts.f32_scores,
            text_allowed: !opts.f32_scores && !plan.needs_scores(),
        }
    }

    /// A parsed score as the options round it.
    #[inline(always)]
    fn round(&self, v: f64) -> f64 {
        if self.f32_scores {
            v as f32 as f64
        } else {
            v
        }
    }

    /// Forgets the previous score (a new goal).
    fn clear(&mut self) {
        self.last = Last::None;
    }

    /// The score in `field` (at `at` in `data`) and its order against the previous one (`Equal`
    /// for a goal's first). The value is NaN when the score was only compared as text. `None`:
    /// not a finite number.
    #[inline(always)]
    fn next(&mut self, data: &[u8], at: usize, field: &[u8]) -> Option<(f64, Ordering)> {
        if let Last::Text(t) = &mut self.last {
            if let Some(order) = t.advance(data, at, field.len()) {
                return Some((f64::NAN, order));
            }
        }
        let v = self.round(parse_score(field)?);
        let last = match &self.last {
            Last::None => None,
            Last::Text(t) => Some(t.value()),
            Last::Value(l) => Some(*l),
        };
        let order = last.map_or(Ordering::Equal, |l| {
            v.partial_cmp(&l).unwrap_or(Ordering::Equal)
        });
        self.last = match self.text_allowed.then(|| ScoreText::new(field)).flatten() {
            Some(t) => Last::Text(t),
            None => Last::Value(v),
        };
        Some((v, order))
    }
}

impl<'a> Worker<'a> {
    fn new(
        actual: &'a ActualSets,
        opts: &'a EvalOptions,
        plan: &Arc<Plan>,
        order: OrderMode,
        want_rows: bool,
    ) -> Self {
        Worker {
            actual,
            opts,
            order,
            order_buf: TrecOrder::new(),
            items: Vec::new(),
            sink: Sink {
                acc: GoalAccumulator::new(plan.clone()),
                dedup: SeenSet::new(lemma_ingest::bytes::name_hash),
                emitted: 0,
                depth: opts.ranking.depth.unwrap_or(u64::MAX),
                dup_mode: opts.ranking.duplicates,
                scored: plan.needs_scores(),
                stats: Stats::default(),
            },
            summary: Summary::new(plan),
            want_rows,
            judged: HashTable::new(),
            judged_bits: 0,
            goal_stats: Stats::default(),
            last_score: LastScore::new(opts, plan),
        }
    }

    /// Starts a goal: decides whether it is evaluated, and records it for the collector.
    fn begin_goal(&mut self, goal: &[u8], line: u64, res: &mut BatchResult) -> GoalState<'a> {
        self.reset_goal();
        self.goal_stats = self.sink.stats;
        match self.actual.goal(goal) {
            None => {
                res.goals.push((GoalRef::Unknown(goal.to_vec()), line));
                self.summary.skip(GoalFate::SkippedNoActual);
                GoalState::Skip
            }
            Some((gid, truth)) => {
                res.goals.push((GoalRef::Known(gid), line));
                let t = self.truth(truth);
                if self.opts.skips_no_relevant(&t) {
                    self.summary.skip(GoalFate::SkippedNoRelevant);
                    return GoalState::Skip;
                }
                self.sink.acc.begin(&t);
                self.judged.clear();
                self.judged_bits = 0;
                let lemmas = &self.actual.lemmas;
                for id in truth.judged.iter() {
                    let grade = truth.grade(id).expect("judged");
                    let hash = lemmas.hash_of(id);
                    self.judged_bits |= judged_bit(hash);
                    self.judged.insert_unique(hash, (hash, id, grade), |e| e.0);
                }
                GoalState::Eval { truth }
            }
        }
    }

    /// Empties the per-goal state: a new goal, or a goal read again from its first line.
    fn reset_goal(&mut self) {
        self.order_buf.reset();
        self.items.clear();
        self.last_score.clear();
        self.sink.dedup.clear();
        self.sink.emitted = 0;
    }

    fn truth<'t>(&self, truth: &'t GoalTruth) -> Truth<'t> {
        truth_of(truth, self.opts.universe)
    }

    /// The label of a lemma of the current goal.
    #[inline]
    fn label(&self, hash: u64, name: &[u8]) -> Label {
        if self.judged_bits & judged_bit(hash) == 0 {
            // Most ranked lemmas: no judged lemma has this hash's bit, no table probe.
            return Label::UNJUDGED;
        }
        let lemmas = &self.actual.lemmas;
        self.judged
            .find(hash, |e| e.0 == hash && same_bytes(lemmas.name(e.1), name))
            .map_or(Label::UNJUDGED, |e| Label::judged(e.2))
    }

    /// Ends a goal: flushes ordering, finishes the accumulator, adds to the summary.
    fn end_goal(
        &mut self,
        goal: &[u8],
        data: &[u8],
        reorder: bool,
        res: &mut BatchResult,
    ) -> Result<(), EvalError> {
        if reorder {
            // Sort the whole goal (stable: file order breaks what the tie rule leaves equal).
            let ties = self.opts.ranking.ties;
            self.items
                .sort_by(|a, b| ties.cmp(a.score, a.name(data), b.score, b.name(data)));
            for it in std::mem::take(&mut self.items) {
                self.sink
                    .emit(data, it)
                    .map_err(|d| dup_error(goal, data, &d))?;
            }
        } else if self.order == OrderMode::Score {
            let sink = &mut self.sink;
            let mut err = None;
            self.order_buf
                .finish(tie_rule(data, self.opts.ranking.ties), |it| {
                    if err.is_none() {
                        err = sink.emit(data, it).err();
                    }
                });
            if let Some(d) = err {
                return Err(dup_error(goal, data, &d));
            }
        }
        self.record(goal, res)
    }

    /// Finishes the accumulator's goal: its values go to the summary, and to a row when asked.
    fn record(&mut self, goal: &[u8], res: &mut BatchResult) -> Result<(), EvalError> {
        let rows = self.want_rows.then_some(&mut res.rows);
        record_goal(&mut self.summary, rows, goal, self.sink.acc.finish())
    }

    /// Ends the goal a TREC batch was reading, if it was being evaluated.
    fn close(
        &mut self,
        goal: Option<OpenGoal<'a>>,
        data: &[u8],
        res: &mut BatchResult,
    ) -> Result<(), EvalError> {
        match goal {
            Some(OpenGoal {
                name: (s, e),
                state: GoalState::Eval { .. },
                reread,
                ..
            }) => self.end_goal(&data[s..e], data, reread, res),
            _ => Ok(()),
        }
    }

    /// Evaluates one batch of TREC run lines: parse, group by goal, order, evaluate.
    fn trec_batch(&mut self, batch: &Batch, res: &mut BatchResult) -> Result<(), EvalError> {
        let data = &batch.data[..];
        if data.len() >= SeenSet::MAX_DATA {
            // A batch holds whole goals: this is one goal's lines.
            let msg = "expected a goal's lines to take less than 1 TiB".to_string();
            return Err(InputError::at(ErrorKind::Syntax, Path::new(""), 1, 0, msg).into());
        }
        // UTF-8 is checked line by line by the parser (free for ASCII lines).
        let mut lines = TrecLines {
            w: self,
            data,
            res,
            cur: None,
            last_line: None,
            error: None,
        };
        let line_no = lemma_ingest::visit_run_lines(data, &mut lines);
        let TrecLines {
            cur,
            last_line,
            error,
            ..
        } = lines;
        if let Some(e) = error {
            return Err(e);
        }
        self.close(cur, data, res)?;
        res.lines = line_no;
        res.last_tag = last_line
            .and_then(|at| split_run_at(data, at).0.ok().flatten())
            .map(|rl| rl.tag.to_vec());
        Ok(())
    }

    /// Evaluates one batch of JSONL prediction records (one goal a line).
    fn jsonl_batch(&mut self, batch: &Batch, res: &mut BatchResult) -> Result<(), EvalError> {
        let data = &batch.data[..];
        let path = Path::new("");
        check_utf8(data)?;
        let text = std::str::from_utf8(data).expect("checked");
        let (mut pos, mut line_no) = (0usize, 0u64);
        for line in text.split_inclusive('\n') {
            line_no += 1;
            let here = pos;
            pos += line.len();
            let l = line.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let err = |m: String| {
                EvalError::Input(InputError::at(
                    ErrorKind::Syntax,
                    path,
                    line_no,
                    here as u64,
                    m,
                ))
            };
            let p = parse_prediction_line(l).map_err(err)?;
            let goal = p.goal.as_bytes();
            let state = self.begin_goal(goal, line_no, res);
            let GoalState::Eval { .. } = state else {
                continue;
            };
            let order = self.opts.ranking.order_for(Format::Jsonl);
            if order == OrderMode::Score && p.scores.is_none() {
                return Err(err(
                    "--order score needs `scores` in every prediction record".into(),
                ));
            }
            let mut items: Vec<(f64, &str, Label, usize)> = p
                .lemmas
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    let score = self
                        .last_score
                        .round(p.scores.as_ref().map_or(0.0, |s| s[i]));
                    let hash = self.actual.lemmas.hash(name.as_bytes());
                    (score, name.as_ref(), self.label(hash, name.as_bytes()), i)
                })
                .collect();
            if order == OrderMode::Score {
                let ties = self.opts.ranking.ties;
                items.sort_by(|a, b| ties.cmp(a.0, a.1.as_bytes(), b.0, b.1.as_bytes()));
            }
            let mut seen: hashbrown::HashSet<&str> = hashbrown::HashSet::with_capacity(items.len());
            let mut emitted = 0u64;
            for (score, name, label, _) in items {
                if emitted >= self.sink.depth {
                    res.stats.beyond_depth += 1;
                    continue;
                }
                emitted += 1;
                if !seen.insert(name) {
                    if self.opts.ranking.duplicates == DuplicateMode::Error {
                        return Err(EvalError::Input(InputError {
                            kind: ErrorKind::Duplicate,
                            path: PathBuf::new(),
                            line: Some(line_no),
                            byte: Some(here as u64),
                            first_line: None,
                            message: format!(
                                "lemma `{}` appears twice in goal `{}`",
                                show(name.as_bytes()),
                                show(goal)
                            ),
                        }));
                    }
                    res.stats.duplicates_dropped += 1;
                    continue;
                }
                res.stats.items += 1;
                if self.sink.scored {
                    let _ = self.sink.acc.push_scored(label, score);
                } else {
                    self.sink.acc.push(label);
                }
            }
            self.record(goal, res)?;
        }
        res.lines = line_no;
        Ok(())
    }
}

/// A TREC batch's line loop, as the ingest crate's line visitor: one goal open at a time.
struct TrecLines<'w, 'a, 'd> {
    w: &'w mut Worker<'a>,
    /// The batch's bytes.
    data: &'d [u8],
    res: &'w mut BatchResult,
    /// The goal being read.
    cur: Option<OpenGoal<'a>>,
    /// Where the last run line starts: its tag (the run's name) is read again at the end.
    last_line: Option<usize>,
    /// What stopped the loop.
    error: Option<EvalError>,
}

impl TrecLines<'_, '_, '_> {
    #[cold]
    fn stop(&mut self, e: EvalError) -> Step {
        self.error = Some(e);
        Step::Stop
    }
}

impl<'d> RunLineVisitor<'d> for TrecLines<'_, '_, 'd> {
    #[inline(always)]
    fn line(&mut self, l: VisitedLine<'d>) -> Step {
        let data = self.data;
        let path = Path::new("");
        let (pos, line_no) = (l.start, l.line);
        let rl = match l.fields {
            Err(msg) => {
                let e = InputError::at(ErrorKind::Syntax, path, line_no, pos as u64, msg);
                return self.stop(e.into());
            }
            Ok(None) => return Step::Next,
            Ok(Some(rl)) => rl,
        };
        self.last_line = Some(pos);
        let same = match &self.cur {
            Some(c) => same_bytes(&data[c.name.0..c.name.1], rl.goal),
            None => false,
        };
        if !same {
            if let Err(e) = self.w.close(self.cur.take(), data, self.res) {
                return self.stop(e);
            }
            let state = self.w.begin_goal(rl.goal, line_no, self.res);
            let goal_start = rl.goal.as_ptr() as usize - data.as_ptr() as usize;
            self.cur = Some(OpenGoal {
                name: (goal_start, goal_start + rl.goal.len()),
                first_line: line_no,
                first_pos: pos,
                state,
                reread: false,
            });
        }
        let w = &mut *self.w;
        let c = self.cur.as_mut().expect("a goal is open");
        let syntax = |line_no| {
            let msg = score_error(rl.score);
            EvalError::from(InputError::at(
                ErrorKind::Syntax,
                path,
                line_no,
                pos as u64,
                msg,
            ))
        };
        let GoalState::Eval { truth } = c.state else {
            // Not evaluated, but the line must still be valid.
            if parse_score(rl.score).is_none() {
                let e = syntax(line_no);
                return self.stop(e);
            }
            return Step::Next;
        };
        // The score, and how it orders against the previous line's (re-read goals are sorted
        // whole, with parsed scores).
        let scored = if c.reread {
            parse_score(rl.score).map(|v| (w.last_score.round(v), Ordering::Equal))
        } else {
            let at = rl.score.as_ptr() as usize - data.as_ptr() as usize;
            w.last_score.next(data, at, rl.score)
        };
        let Some((score, vs_last)) = scored else {
            let e = syntax(line_no);
            return self.stop(e);
        };
        let start = rl.lemma.as_ptr() as usize - data.as_ptr() as usize;
        let Ok(len) = u32::try_from(rl.lemma.len()) else {
            let msg = "expected a lemma name shorter than 4 GiB".to_string();
            let e = InputError::at(ErrorKind::Syntax, path, line_no, pos as u64, msg);
            return self.stop(e.into());
        };
        let hash = w.actual.lemmas.hash(rl.lemma);
        let label = w.label(hash, rl.lemma);
        let it = Item {
            score,
            hash,
            start,
            len,
            label,
        };
        // `Ok(false)`: out of order.
        let fed: Result<bool, Box<Dup>> = if c.reread {
            // Re-reading an out-of-order goal: collect, sort at its end.
            w.items.push(it);
            Ok(true)
        } else if w.order == OrderMode::File {
            w.sink.emit(data, it).map(|()| true)
        } else if let Ok(previous) = w.order_buf.replace_lone(vs_last, it) {
            // The previous item, alone at its score: its rank is certain.
            w.sink.emit(data, previous).map(|()| true)
        } else {
            let sink = &mut w.sink;
            let mut err = None;
            let pushed = w
                .order_buf
                .push(vs_last, it, tie_rule(data, w.opts.ranking.ties), |it| {
                    if err.is_none() {
                        err = sink.emit(data, it).err();
                    }
                });
            match (pushed, err) {
                // The previous item, alone at its score: its rank is certain.
                (Ok(Some(previous)), _) => sink.emit(data, previous).map(|()| true),
                (Ok(None), None) => Ok(true),
                (Ok(None), Some(d)) => Err(d),
                (Err(_), _) => Ok(false),
            }
        };
        match fed {
            Ok(true) => Step::Next,
            Ok(false) => {
                // Out of order: restart this goal from its first line and sort it whole.
                self.res.stats.goals_reordered += 1;
                w.sink.stats = w.goal_stats;
                w.reset_goal();
                w.sink.acc.begin(&w.truth(truth));
                c.reread = true;
                Step::Restart {
                    at: c.first_pos,
                    line: c.first_line,
                }
            }
            Err(d) => {
                let e = dup_error(&data[c.name.0..c.name.1], data, &d);
                self.stop(e)
            }
        }
    }
}

/// How items of equal score are ordered: by name descending (trec), or kept in file order.
#[inline]
fn tie_rule(data: &[u8], ties: TieMode) -> impl Fn(&Item, &Item) -> std::cmp::Ordering + '_ {
    move |a, b| {
        if ties == TieMode::Trec {
            b.name(data).cmp(a.name(data))
        } else {
            std::cmp::Ordering::Equal
        }
    }
}

fn dup_error(goal: &[u8], data: &[u8], d: &Dup) -> EvalError {
    EvalError::Input(InputError {
        kind: ErrorKind::Duplicate,
        path: PathBuf::new(),
        line: Some(d.second),
        byte: None,
        first_line: Some(d.first),
        message: format!(
            "lemma `{}` appears twice in goal `{}`",
            show(&data[d.start..d.end]),
            show(goal)
        ),
    })
}

/// Checks a batch is UTF-8; the error names the line.
fn check_utf8(data: &[u8]) -> Result<(), InputError> {
    if let Err(e) = std::str::from_utf8(data) {
        let off = e.valid_up_to();
        let line_start = memchr::memrchr(b'\n', &data[..off]).map_or(0, |p| p + 1);
        let line = memchr::memchr_iter(b'\n', &data[..off]).count() as u64 + 1;
        return Err(InputError::at(
            ErrorKind::Syntax,
            Path::new(""),
            line,
            line_start as u64,
            format!(
                "invalid UTF-8 at column {}, expected UTF-8 text",
                off - line_start + 1
            ),
        ));
    }
    Ok(())
}

/// A predictions file with its lines grouped by goal.
struct Regrouped {
    bytes: Vec<u8>,
    /// The original line number of each line of `bytes`.
    line_map: Vec<u64>,
    /// The tag of the file's last run line.
    last_tag: Option<Vec<u8>>,
}

/// Reads all of `input` and groups its lines by goal (first appearance order), keeping each goal's
/// lines in file order.
fn regroup(input: Input, key: GoalKey) -> Result<Regrouped, InputError> {
    let path = input.path.clone();
    let mut reader = input.reader;
    let mut all = Vec::new();
    std::io::Read::read_to_end(&mut reader, &mut all).map_err(|e| InputError::read(&path, e))?;
    if all.last().is_some_and(|&b| b != b'\n') {
        all.push(b'\n');
    }
    // (goal index, line start, line end, line number) for every line with a goal.
    let mut goal_ids: HashMap<&[u8], u32> = HashMap::new();
    let mut lines: Vec<(u32, usize, usize, u64)> = Vec::new();
    let (mut pos, mut no) = (0usize, 0u64);
    while pos < all.len() {
        let end = memchr::memchr(b'\n', &all[pos..]).map_or(all.len(), |e| pos + e);
        no += 1;
        let g = match key {
            GoalKey::FirstField => lemma_ingest::bytes::first_field(&all[pos..end]),
            GoalKey::Line => Some(&all[pos..end]),
        };
        if let Some(g) = g {
            let n = goal_ids.len() as u32;
            let id = *goal_ids.entry(g).or_insert(n);
            lines.push((id, pos, end, no));
        }
        pos = end + 1;
    }
    let last_tag = lines.last().and_then(|&(_, s, e, _)| {
        parse_run_line(&all[s..e])
            .ok()
            .flatten()
            .map(|l| l.tag.to_vec())
    });
    lines.sort_by_key(|&(g, _, _, n)| (g, n));
    let mut out = Vec::with_capacity(all.len());
    let mut map = Vec::with_capacity(lines.len());
    for &(_, s, e, n) in &lines {
        out.extend_from_slice(&all[s..e]);
        out.push(b'\n');
        map.push(n);
    }
    Ok(Regrouped {
        bytes: out,
        line_map: map,
        last_tag,
    })
}

/// Evaluates `input` (predictions) against `actual`. Per-goal rows, when `rows` is given, arrive
/// in file order, followed by goals that had no predictions (in actual-set order). `progress`
/// receives the decompressed bytes read so far.
pub fn evaluate(
    actual: &ActualSets,
    input: Input,
    opts: &EvalOptions,
    rows: &mut dyn RowSink,
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> Result<(Summary, Report), EvalError> {
    let started = Instant::now();
    let plan = plan_for(opts);
    let path = input.path.clone();
    let format = input.format;
    let key = if format == Format::Trec {
        GoalKey::FirstField
    } else {
        GoalKey::Line
    };
    let order = opts.ranking.order_for(format);
    let mut report = Report {
        path: path.clone(),
        threads: opts.threads.max(1),
        ..Report::default()
    };
    let (reader, line_map) = if opts.regroup && format == Format::Trec {
        let Regrouped {
            bytes,
            line_map: map,
            last_tag,
        } = regroup(input, key)?;
        report.regrouped = true;
        report.runid = last_tag.unwrap_or_default();
        let inner = Input {
            path: path.clone(),
            reader: Box::new(std::io::Cursor::new(bytes)),
            size_on_disk: None,
            compression: lemma_ingest::Compression::None,
            format,
            map: None,
            file: None,
        };
        (BatchReader::new(inner, key, opts.batch_bytes), Some(map))
    } else {
        (BatchReader::new(input, key, opts.batch_bytes), None)
    };
    let threads = opts.threads.max(1);
    let want_rows = rows.wants_rows();
    let stop = AtomicBool::new(false);
    let window = Window::new(4 * threads as u64 + 4);
    // No reader thread: each worker takes the next batch itself, so the bytes it copies in are in
    // its own core's cache when it parses them, and two threads share two cores rather than three.
    // A plain file's batches are only claimed under the lock (their last 64 KiB read to find the
    // cut, some microseconds) and read outside it, by both workers at once; a stream's are read
    // under the lock (a few hundred microseconds per batch).
    let input_state = Mutex::new(SharedInput {
        reader,
        done: false,
        error: None,
    });
    let (res_tx, res_rx) = sync_channel::<BatchResult>(threads * 2);

    let outcome = std::thread::scope(|scope| -> Result<(Summary, Report), EvalError> {
        let mut workers = Vec::new();
        for _ in 0..threads {
            let res_tx: SyncSender<BatchResult> = res_tx.clone();
            let plan = &plan;
            let stop = &stop;
            let window = &window;
            let input_state = &input_state;
            workers.push(scope.spawn(move || -> Summary {
                let mut w = Worker::new(actual, opts, plan, order, want_rows);
                let mut buf = Vec::new();
                loop {
                    if stop.load(AtomicOrdering::Relaxed) {
                        break;
                    }
                    let next = {
                        let mut input = input_state.lock().expect("input");
                        if input.done {
                            break;
                        }
                        window.wait_for(input.reader.next_index());
                        if stop.load(AtomicOrdering::Relaxed) {
                            break;
                        }
                        // A plain file's batch is only claimed here, and read below, while the
                        // other workers claim and read theirs.
                        match input.reader.next(&mut buf) {
                            Ok(Some(next)) => {
                                if let Some(p) = progress {
                                    p(input.reader.bytes_read());
                                }
                                next
                            }
                            Ok(None) => {
                                input.done = true;
                                break;
                            }
                            Err(e) => {
                                input.done = true;
                                input.error = Some(e);
                                break;
                            }
                        }
                    };
                    let index = next.index();
                    let batch = match next.read(&mut buf) {
                        Ok(b) => b,
                        Err(e) => {
                            // In batch order, like an error in the batch's lines: the collector
                            // stops there and lets waiting workers go; the other workers stop
                            // taking batches.
                            stop.store(true, AtomicOrdering::Relaxed);
                            let res = BatchResult {
                                index,
                                error: Some(e.into()),
                                ..BatchResult::default()
                            };
                            let _ = res_tx.send(res);
                            break;
                        }
                    };
                    let mut res = BatchResult {
                        index: batch.index,
                        first_byte: batch.first_byte,
                        ..BatchResult::default()
                    };
                    let r = match format {
                        Format::Trec => w.trec_batch(&batch, &mut res),
                        Format::Jsonl => w.jsonl_batch(&batch, &mut res),
                    };
                    if let Err(e) = r {
                        res.error = Some(e);
                    }
                    res.stats.items += std::mem::take(&mut w.sink.stats.items);
                    res.stats.duplicates_dropped +=
                        std::mem::take(&mut w.sink.stats.duplicates_dropped);
                    res.stats.beyond_depth += std::mem::take(&mut w.sink.stats.beyond_depth);
                    // Done with the bytes: keep the buffer for the next batch, or drop the mapped
                    // pages now rather than when the collector reaches this batch in order.
                    if let Some(b) = batch.data.release() {
                        buf = b;
                    }
                    if res_tx.send(res).is_err() {
                        break;
                    }
                }
                w.summary
            }));
        }
        drop(res_tx);
        // Workers waiting on the window are let go once the collector is done (even by a panic).
        let close = CloseOnDrop(&window);
        let collected = collect(
            &window,
            actual,
            &plan,
            opts,
            &path,
            res_rx,
            line_map.as_deref(),
            rows,
            &mut report,
        );
        if collected.is_err() {
            stop.store(true, AtomicOrdering::Relaxed);
        }
        drop(close);
        let mut summary = Summary::new(&plan);
        for w in workers {
            let s = w.join().expect("worker panicked");
            summary.merge(&s).expect("same plan");
        }
        // An error the collector found is about an earlier batch than any read error.
        let extra = collected?;
        let mut input = input_state.lock().expect("input");
        if let Some(e) = input.error.take() {
            return Err(e.into());
        }
        report.bytes = input.reader.bytes_read();
        summary.merge(&extra).expect("same plan");
        Ok((summary, std::mem::take(&mut report)))
    });
    let (summary, mut report) = outcome?;
    report.elapsed = started.elapsed();
    Ok((summary, report))
}

/// The input, shared by the workers: each takes the next batch under the lock.
struct SharedInput {
    reader: BatchReader,
    done: bool,
    error: Option<InputError>,
}

/// The collector: results in batch order, contiguity, line numbers, rows; then goals without
/// predictions. Returns the summary of those goals.
#[allow(clippy::too_many_arguments)]
fn collect(
    window: &Window,
    actual: &ActualSets,
    plan: &Arc<Plan>,
    opts: &EvalOptions,
    path: &Path,
    res_rx: Receiver<BatchResult>,
    line_map: Option<&[u64]>,
    rows: &mut dyn RowSink,
    report: &mut Report,
) -> Result<Summary, EvalError> {
    let mut first_line = vec![0u64; actual.goals.len()];
    let mut unknown_first: HashMap<Vec<u8>, u64> = HashMap::new();
    let mut pending: BTreeMap<u64, BatchResult> = BTreeMap::new();
    let mut next = 0u64;
    let mut lines_before = 0u64;
    let original = |global: u64| {
        line_map.map_or(global, |m| {
            m.get(global as usize - 1).copied().unwrap_or(global)
        })
    };
    let fix = |e: EvalError, lines_before: u64, first_byte: u64| -> EvalError {
        match e {
            EvalError::Input(mut ie) => {
                ie.path = path.to_path_buf();
                ie.line = ie.line.map(|l| original(l + lines_before));
                ie.byte = match line_map {
                    Some(_) => None,
                    None => ie.byte.map(|b| b + first_byte),
                };
                ie.first_line = ie.first_line.map(|l| original(l + lines_before));
                EvalError::Input(ie)
            }
            other => other,
        }
    };
    for res in res_rx.iter() {
        pending.insert(res.index, res);
        while let Some(mut res) = pending.remove(&next) {
            next += 1;
            window.advance(next);
            if let Some(e) = res.error.take() {
                return Err(fix(e, lines_before, res.first_byte));
            }
            for (g, local) in res.goals.drain(..) {
                let line = lines_before + local;
                let earlier = match &g {
                    GoalRef::Known(id) => {
                        let slot = &mut first_line[*id as usize];
                        let e = *slot;
                        if e == 0 {
                            *slot = line;
                        }
                        e
                    }
                    GoalRef::Unknown(name) => *unknown_first.entry(name.clone()).or_insert(line),
                };
                if earlier != 0 && earlier != line {
                    let name = match &g {
                        GoalRef::Known(id) => show(actual.goals.name(*id)),
                        GoalRef::Unknown(n) => show(n),
                    };
                    return Err(EvalError::Input(InputError {
                        kind: ErrorKind::GoalNotContiguous,
                        path: path.to_path_buf(),
                                                line: Some(original(line)),
                        byte: None,
                        first_line: None,
                        message: format!(
                            "goal `{name}` appears again; its lines began at line {} and were interrupted by other \
                             goals. A goal's lines must be contiguous: sort the file by goal, or pass --regroup \
                             (which buffers the whole file in memory)",
                            original(earlier)
                        ),
                    }));
                }
                report.goals_in_predictions += 1;
            }
            lines_before += res.lines;
            report.items += res.stats.items;
            report.duplicates_dropped += res.stats.duplicates_dropped;
            report.beyond_depth += res.stats.beyond_depth;
            report.goals_reordered += res.stats.goals_reordered;
            if let (Some(tag), None) = (res.last_tag.take(), line_map) {
                report.runid = tag;
            }
            for row in res.rows.drain(..) {
                rows.row(row).map_err(EvalError::Sink)?;
            }
        }
    }
    report.lines = lines_before;
    let mut summary = Summary::new(plan);
    evaluate_unseen(
        actual,
        plan,
        opts,
        |gid| first_line[gid] != 0,
        opts.universe,
        &mut summary,
        rows,
    )?;
    Ok(summary)
}
