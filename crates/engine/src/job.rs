//! The front door for whole inputs: a [`Job`] takes the actual sets and the predictions as they
//! come (paths of any kind, a shard of a file, predictions already opened, actual sets already
//! read) and chooses how to read them from what it finds and the memory budget:
//!
//! - **joined**: sorted qrels (checked in one pass, or sorted on disk first when they are out of
//!   order and would not fit in [`EvalOptions::spill`]'s budget once held) read along a plain
//!   TREC run a few goals at a time ([`crate::join`]): memory independent of the number of goals;
//! - **held**: the actual sets read whole (or given), the predictions streamed against them
//!   ([`Evaluator`]): stores, matrices, JSONL, streams, shards, and whenever a travelling summary
//!   ([`Partial`]) is asked for.
//!
//! Sorted qrels opened (or sorted) by the caller are read along the predictions too
//! ([`Job::along`]). A [`Job`] is the one way in for whole inputs: a progress callback, a
//! travelling summary ([`Job::mergeable`]), a shard of a file ([`PredictedInput::Shard`]).
//! [`Evaluator::evaluate`] evaluates predictions already opened against actual sets already
//! held, the held engine alone.
//!
//! What it chose comes back as an [`ActualRead`], which the command prints and the Python
//! package exposes. The command, the Python package, Ray's tasks, `curve`, `report` and the async
//! `evaluate_read` (the `async` feature) evaluate through here, so that they give the
//! same numbers in the same memory.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use lemma_eval::{ActualRead, Evaluator, Job, SummaryOnly};
//! # let dir = tempfile::tempdir()?;
//! # let (qrels, run) = (dir.path().join("qrels"), dir.path().join("run"));
//! # std::fs::write(&qrels, "g1 0 a 1\ng2 0 b 1\n")?;
//! # std::fs::write(&run, "g1 Q0 a 1 0.9 t\ng1 Q0 b 2 0.8 t\ng2 Q0 a 1 0.9 t\ng2 Q0 b 2 0.8 t\n")?;
//! let builder = Evaluator::builder().measure_names(["RR"])?;
//! let done = Job::new(builder, qrels.as_path(), run.as_path()).run(&mut SummaryOnly, None)?;
//! assert_eq!(done.evaluation.summary.aggregates()[0].1.headline(), Some(0.75));
//! // The qrels' goals ascend: read along the run, never held whole.
//! assert!(matches!(done.actual_read, ActualRead::Joined { .. }));
//! # Ok(()) }
//! ```

use crate::evaluator::JoinEvaluator;
use crate::evaluator::{read_actual_within, Evaluation};
use crate::join::JoinReport;
use crate::{
    EvalError, EvalOptions, Evaluator, EvaluatorBuilder, InputKind, MatrixNames, Partial,
    Predictions, PremiseOptions, Premises, Sink,
};
use lemma_accum::{Aggregation, Plan};
use lemma_ingest::{ActualSets, GoalOrder, InputError, SortedQrels};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where the actual sets come from.
#[derive(Clone, Debug)]
pub enum ActualInput {
    /// A path: TREC qrels or JSONL (plain, gzip, zstd, `-` for stdin) or a binary store.
    Path(PathBuf),
    /// Actual sets already read, shared (several runs against one truth, a dict from Python).
    Sets(Arc<ActualSets>),
}

impl From<&Path> for ActualInput {
    fn from(p: &Path) -> Self {
        ActualInput::Path(p.to_path_buf())
    }
}

impl From<PathBuf> for ActualInput {
    fn from(p: PathBuf) -> Self {
        ActualInput::Path(p)
    }
}

impl From<ActualSets> for ActualInput {
    fn from(s: ActualSets) -> Self {
        ActualInput::Sets(Arc::new(s))
    }
}

impl From<Arc<ActualSets>> for ActualInput {
    fn from(s: Arc<ActualSets>) -> Self {
        ActualInput::Sets(s)
    }
}

/// Where the predictions come from.
pub enum PredictedInput {
    /// A path of any kind the command reads: TREC or JSONL text (plain, gzip, zstd, `-`), a
    /// binary store, a `.npy` matrix (with [`Job::names`]).
    Path(PathBuf),
    /// Shard `index` (1-based) of `count` of a plain text file: a byte range cut at goal
    /// boundaries ([`lemma_ingest::open_shard`]); its [`Partial`] merges with the other shards'.
    Shard {
        /// The whole file.
        path: PathBuf,
        /// Which shard, from 1.
        index: u64,
        /// How many shards.
        count: u64,
    },
    /// Predictions already opened (text from a reader, a matrix in memory).
    Opened(Box<Predictions>),
}

impl From<&Path> for PredictedInput {
    fn from(p: &Path) -> Self {
        PredictedInput::Path(p.to_path_buf())
    }
}

impl From<PathBuf> for PredictedInput {
    fn from(p: PathBuf) -> Self {
        PredictedInput::Path(p)
    }
}

impl From<Predictions> for PredictedInput {
    fn from(p: Predictions) -> Self {
        PredictedInput::Opened(Box::new(p))
    }
}

/// How the actual sets were read: the way the [`Job`] chose, and what it cost.
#[derive(Clone, Debug)]
pub enum ActualRead {
    /// Read whole before the predictions.
    Held {
        /// The file.
        path: PathBuf,
        /// Goals, judgments and distinct lemmas.
        goals: u64,
        /// Judgment lines.
        judgments: u64,
        /// Distinct lemmas judged.
        lemmas: u64,
        /// Bytes held: the judgments and the names.
        bytes: usize,
        /// Bytes of the judgments alone.
        judgment_bytes: usize,
        /// Time to read them.
        elapsed: Duration,
    },
    /// Given already read ([`ActualInput::Sets`]).
    Given {
        /// Goals.
        goals: u64,
    },
    /// Sorted qrels read along the predictions, a few goals at a time (a merge join).
    Joined {
        /// The file.
        path: PathBuf,
        /// Goals in the qrels.
        goals: u64,
        /// The order their goals ascend in.
        order: GoalOrder,
        /// When they were not in order: how they were sorted on disk first.
        sorted: Option<String>,
        /// Time to check (or sort) them.
        elapsed: Duration,
        /// What the join did (after the evaluation).
        join: JoinReport,
    },
}

impl ActualRead {
    fn held(path: &Path, actual: &ActualSets, elapsed: Duration) -> ActualRead {
        ActualRead::Held {
            path: path.to_path_buf(),
            goals: actual.goals.len() as u64,
            judgments: actual.judgments() as u64,
            lemmas: actual.lemmas.len() as u64,
            bytes: actual.heap_bytes(),
            judgment_bytes: actual.judgment_bytes(),
            elapsed,
        }
    }

    /// A short name for the way: `held`, `given` or `joined`.
    pub fn kind(&self) -> &'static str {
        match self {
            ActualRead::Held { .. } => "held",
            ActualRead::Given { .. } => "given",
            ActualRead::Joined { .. } => "joined",
        }
    }
}

/// The report's line (or lines) on the actual sets, as the command prints it on stderr
/// (`lemma-eval: ` before it).
impl fmt::Display for ActualRead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ActualRead::Held {
                path,
                goals,
                judgments,
                lemmas,
                bytes,
                judgment_bytes,
                elapsed,
            } => write!(
                f,
                "actual sets: {goals} goals, {judgments} judgments of {lemmas} lemmas from {} in \
                 {:.3} s; {:.1} MB held ({:.1} MB for the judgments, the rest the names)",
                path.display(),
                elapsed.as_secs_f64(),
                *bytes as f64 / 1e6,
                *judgment_bytes as f64 / 1e6,
            ),
            ActualRead::Given { goals } => write!(f, "actual sets: {goals} goals, given in memory"),
            ActualRead::Joined {
                path,
                goals,
                order,
                sorted,
                elapsed,
                join: jr,
            } => {
                write!(
                    f,
                    "actual sets: {goals} goals in {} order in {} ({}), read along the predictions",
                    match order {
                        GoalOrder::Bytes => "byte",
                        GoalOrder::Natural => "natural",
                    },
                    path.display(),
                    match sorted {
                        None => format!("checked in {:.3} s", elapsed.as_secs_f64()),
                        Some(r) => format!("not in order: {r}"),
                    },
                )?;
                write!(
                    f,
                    ": {} goals read, at most {:.1} MB of them held at once",
                    jr.goals_read,
                    jr.largest_batch_bytes as f64 / 1e6
                )?;
                if let Some(line) = jr.held_from_line {
                    write!(
                        f,
                        "; the predictions' goals leave that order at line {line}: the actual sets \
                         were then read whole ({:.1} MB held)",
                        jr.held_bytes as f64 / 1e6
                    )?;
                } else if let Some(line) = jr.lookups_from_line {
                    write!(
                        f,
                        "; the predictions' goals leave that order at line {line}, and the actual \
                         sets would not fit in --memory once held: from there each batch's goals \
                         were looked up ({:.1} MB to remember those ranked)",
                        jr.ranked_set_bytes as f64 / 1e6
                    )?;
                }
                if jr.held_bytes > 0 && jr.held_from_line.is_none() {
                    write!(
                        f,
                        "; the predictions cannot be joined (not a plain TREC file): read whole \
                         ({:.1} MB held)",
                        jr.held_bytes as f64 / 1e6
                    )?;
                }
                Ok(())
            }
        }
    }
}

/// A whole evaluation's outcome: the summary and report, the travelling summary when one was
/// asked for ([`Job::mergeable`], or a shard), and how the actual sets were read.
#[derive(Debug)]
pub struct Outcome {
    /// The summary (exact, mergeable) and what happened.
    pub evaluation: Evaluation,
    /// The travelling summary, for `merge`.
    pub partial: Option<Partial>,
    /// How the actual sets were read.
    pub actual_read: ActualRead,
    /// The actual sets, when they were held (a process about to exit may `std::mem::forget`
    /// them rather than free a million small sets one by one).
    pub held: Option<Arc<ActualSets>>,
}

/// One evaluation of whole inputs: see the [module documentation](self).
pub struct Job {
    builder: EvaluatorBuilder,
    actual: Actual,
    predicted: PredictedInput,
    names: Option<MatrixNames>,
    mmap: bool,
    hold_actual: bool,
    mergeable: bool,
    premises: Option<PremiseOptions>,
}

impl Job {
    /// The evaluation of `predicted` against `actual` with `builder`'s options.
    pub fn new(
        builder: EvaluatorBuilder,
        actual: impl Into<ActualInput>,
        predicted: impl Into<PredictedInput>,
    ) -> Job {
        Job {
            builder,
            actual: Actual::Input(actual.into()),
            predicted: predicted.into(),
            names: None,
            mmap: false,
            hold_actual: false,
            mergeable: false,
            premises: None,
        }
    }

    /// The evaluation of `predicted` along `qrels`, sorted qrels opened or sorted already
    /// ([`SortedQrels::open`], [`SortedQrels::sort`]), read a few goals at a time: the actual sets
    /// are read whole only when the predictions cannot be joined (not TREC text in a plain file;
    /// a shard; [`Job::mergeable`]; [`Job::hold_actual`]).
    pub fn along(
        builder: EvaluatorBuilder,
        qrels: SortedQrels,
        predicted: impl Into<PredictedInput>,
    ) -> Job {
        Job {
            actual: Actual::Sorted(Box::new(qrels)),
            ..Job::new(builder, ActualInput::Path(PathBuf::new()), predicted)
        }
    }

    /// The evaluation of `predicted` by `evaluator` (its options, its actual sets: held).
    pub fn on(evaluator: &Evaluator, predicted: impl Into<PredictedInput>) -> Job {
        let builder = Evaluator::builder().options(evaluator.options().clone());
        Job::new(builder, evaluator.actual_arc().clone(), predicted)
    }

    /// A `.npy` matrix's goal and lemma names.
    pub fn names(mut self, names: Option<MatrixNames>) -> Self {
        self.names = names;
        self
    }

    /// Memory-map a plain text predictions file rather than read it in chunks.
    pub fn mmap(mut self, yes: bool) -> Self {
        self.mmap = yes;
        self
    }

    /// Read the actual sets whole even when they could be read along the predictions.
    pub fn hold_actual(mut self, yes: bool) -> Self {
        self.hold_actual = yes;
        self
    }

    /// Keep the travelling summary ([`Outcome::partial`]); the actual sets are then held (a
    /// partial evaluates every goal of them as empty once).
    pub fn mergeable(mut self, yes: bool) -> Self {
        self.mergeable = yes;
        self
    }

    /// The premise-selection protocol (docs/METRICS.md §9), its corpus and the goals' places
    /// loaded by [`Job::open`] on a thread of their own while the actual sets are read (the
    /// places from the actual sets' JSONL records, when the actual sets are a path); as
    /// [`EvaluatorBuilder::premises`] with [`Premises::load`], sooner. `None`: no protocol.
    pub fn premises(mut self, opts: Option<PremiseOptions>) -> Self {
        self.premises = opts;
        self
    }

    /// Opens the inputs: the actual sets read (held) or checked (joined), the predictions opened.
    /// Errors in either come out here, before any output is begun; an error in the corpus or the
    /// places comes before any other.
    pub fn open(mut self) -> Result<OpenJob, EvalError> {
        let actual_path = match &self.actual {
            Actual::Input(ActualInput::Path(p)) => Some(p.clone()),
            Actual::Sorted(q) => Some(q.path().to_path_buf()),
            Actual::Input(ActualInput::Sets(_)) => None,
        };
        let mut loading =
            Loading(self.premises.take().map(|opts| {
                std::thread::spawn(move || Premises::load(&opts, actual_path.as_deref()))
            }));
        self.open_loading(&mut loading)
            .map_err(|e| loading.first_error(e))
    }

    /// [`Job::open`], the premises joined into the builder before it is built.
    fn open_loading(self, loading: &mut Loading) -> Result<OpenJob, EvalError> {
        let started = Instant::now();
        let Job {
            builder,
            actual,
            mut predicted,
            names,
            mmap,
            hold_actual,
            mergeable,
            premises: _,
        } = self;
        let shard = matches!(predicted, PredictedInput::Shard { .. });
        check_group_by(&builder)?;
        if shard || mergeable {
            crate::partial::refuse_unheld(builder.settings())?;
        }
        if let PredictedInput::Shard { path, index, count } = &predicted {
            check_shard(path, *index, *count, builder.settings().regroup)?;
        }
        let threads = builder.settings().threads;
        let held = shard || hold_actual || mergeable;
        let actual = match actual {
            Actual::Input(a) => a,
            Actual::Sorted(q) => {
                let q = *q;
                let text = match &predicted {
                    PredictedInput::Path(p) => InputKind::of(p)? == InputKind::Text,
                    PredictedInput::Opened(p) => p.kind() == InputKind::Text,
                    PredictedInput::Shard { .. } => true,
                };
                if held || !text {
                    let q = q.with_threads(threads);
                    let sets = q.sets_whole()?;
                    let read = ActualRead::held(q.path(), &sets, started.elapsed());
                    let engine = Engine::Held(
                        loading
                            .ready(builder, &mut predicted, names.as_ref(), mmap)?
                            .build(sets),
                    );
                    return open_predictions(engine, read, predicted, names, mmap, mergeable);
                }
                let read = ActualRead::Joined {
                    path: q.path().to_path_buf(),
                    goals: q.goal_count(),
                    order: q.order(),
                    sorted: None,
                    elapsed: started.elapsed(),
                    join: JoinReport::default(),
                };
                let engine = Engine::Joined(Box::new(
                    loading
                        .ready(builder, &mut predicted, names.as_ref(), mmap)?
                        .build_joined(q),
                ));
                return open_predictions(engine, read, predicted, names, mmap, mergeable);
            }
        };
        let path = match &actual {
            ActualInput::Path(p) => Some(p.as_path()),
            ActualInput::Sets(_) => None,
        };
        let sorted = match (path, &predicted) {
            (Some(actual), PredictedInput::Path(p))
                if !held && joinable_paths(actual, p, &builder)? =>
            {
                sorted_qrels(actual, &builder, threads)?
            }
            _ => None,
        };
        let (engine, read) = match (sorted, actual) {
            (Some((q, sorted)), ActualInput::Path(path)) => {
                let read = ActualRead::Joined {
                    path,
                    goals: q.goal_count(),
                    order: q.order(),
                    sorted,
                    elapsed: started.elapsed(),
                    join: JoinReport::default(),
                };
                let builder = loading.ready(builder, &mut predicted, names.as_ref(), mmap)?;
                (Engine::Joined(Box::new(builder.build_joined(q))), read)
            }
            (_, ActualInput::Path(path)) => {
                let sets = read_actual_within(&path, threads, &builder.settings().spill)?;
                tracing::info!(
                    goals = sets.goals.len(),
                    lemmas = sets.lemmas.len(),
                    "actual sets read"
                );
                let read = ActualRead::held(&path, &sets, started.elapsed());
                (
                    Engine::Held(
                        loading
                            .ready(builder, &mut predicted, names.as_ref(), mmap)?
                            .build(sets),
                    ),
                    read,
                )
            }
            (_, ActualInput::Sets(sets)) => {
                let read = ActualRead::Given {
                    goals: sets.goals.len() as u64,
                };
                (
                    Engine::Held(
                        loading
                            .ready(builder, &mut predicted, names.as_ref(), mmap)?
                            .build(sets),
                    ),
                    read,
                )
            }
        };
        open_predictions(engine, read, predicted, names, mmap, mergeable)
    }

    /// [`Job::open`], then [`OpenJob::evaluate`].
    pub fn run(
        self,
        sink: &mut dyn Sink,
        progress: Option<&(dyn Fn(u64) + Sync)>,
    ) -> Result<Outcome, EvalError> {
        self.open()?.evaluate(sink, progress)
    }
}

/// The premises a [`Job`] loads while it reads the actual sets.
struct Loading(Option<std::thread::JoinHandle<Result<Premises, InputError>>>);

impl Loading {
    /// `builder` with the premises, once loaded (waits for them). Predictions in a matrix or a
    /// store are opened first (their names read and checked while the premises may still load).
    fn ready(
        &mut self,
        builder: EvaluatorBuilder,
        predicted: &mut PredictedInput,
        names: Option<&MatrixNames>,
        mmap: bool,
    ) -> Result<EvaluatorBuilder, EvalError> {
        // A matrix whose columns are the corpus's premises waits for the corpus.
        let early = !matches!(names, Some(MatrixNames::Premises { .. }));
        if let (Some(_), PredictedInput::Path(p), true) = (&self.0, &*predicted, early) {
            if InputKind::of(p)? != InputKind::Text {
                let opened = Predictions::open(p, names, mmap)?;
                *predicted = PredictedInput::Opened(Box::new(opened));
            }
        }
        match self.0.take() {
            None => Ok(builder),
            Some(h) => {
                let p = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))?;
                Ok(builder.premises(Arc::new(p)))
            }
        }
    }

    /// The error to report when opening failed with `e`: the corpus's or the places', if they
    /// failed too (they were read first before they were read beside the actual sets).
    fn first_error(&mut self, e: EvalError) -> EvalError {
        match self.0.take().map(|h| h.join()) {
            Some(Ok(Err(p))) => p.into(),
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            _ => e,
        }
    }
}

/// The job once the engine is chosen: the predictions opened.
fn open_predictions(
    engine: Engine,
    read: ActualRead,
    predicted: PredictedInput,
    names: Option<MatrixNames>,
    mmap: bool,
    mergeable: bool,
) -> Result<OpenJob, EvalError> {
    let predictions = match predicted {
        PredictedInput::Path(p) => {
            let corpus = engine.options().premises.as_ref().map(|p| p.corpus());
            let opened = Predictions::open_in(&p, names.as_ref(), mmap, corpus)?;
            Opened::Predictions(Box::new(opened))
        }
        PredictedInput::Opened(p) => Opened::Predictions(p),
        PredictedInput::Shard { path, index, count } => Opened::Shard { path, index, count },
    };
    Ok(OpenJob {
        engine,
        predictions,
        read,
        mergeable,
    })
}

/// Where a [`Job`]'s actual sets come from: an input, or sorted qrels given ([`Job::along`]).
enum Actual {
    Input(ActualInput),
    Sorted(Box<SortedQrels>),
}

/// `--group-by` with measures whose aggregate is no mean (`Depth`, `LeakRank`, `R(origin=...)@k`):
/// an error naming them.
fn check_group_by(builder: &EvaluatorBuilder) -> Result<(), EvalError> {
    crate::evaluator::check_origin_groups(builder.settings())?;
    let Some(g) = &builder.settings().group_by else {
        return Ok(());
    };
    let plan = builder.plan();
    if let Some(m) = (plan.measures().iter()).find(|m| m.aggregation() == Aggregation::Depth) {
        return Err(EvalError::Options(format!(
            "--group-by {}: {m} has no mean over groups (its median and coverage are over \
             goals); evaluate it without --group-by",
            g.by()
        )));
    }
    if let Some(m) = (plan.measures().iter()).find(|m| m.aggregation() == Aggregation::Covered) {
        return Err(EvalError::Options(format!(
            "--group-by {}: {m} has no mean over groups (it is a mean over the goals where it \
             is defined); evaluate it without --group-by",
            g.by()
        )));
    }
    Ok(())
}

/// `I/N` with 1 <= I <= N, of predictions that are not regrouped.
fn check_shard(path: &Path, index: u64, count: u64, regroup: bool) -> Result<(), EvalError> {
    if index == 0 || index > count {
        return Err(EvalError::Options(format!(
            "{}: shard {index}/{count}: expected I/N with 1 <= I <= N",
            path.display()
        )));
    }
    if regroup {
        return Err(EvalError::Options(
            "--shard with --regroup: a shard is a byte range cut at goal boundaries, which holds \
             whole goals only when each goal's lines are together; regrouped lines are not, and \
             each shard would evaluate parts of goals. Sort the file by goal and shard that, or \
             evaluate it whole with --regroup"
                .into(),
        ));
    }
    Ok(())
}

/// Whether the actual sets at `actual` could be read along the predictions at `predicted`: both
/// text, and the predictions not a stream (unless regrouped: then they are sorted first).
fn joinable_paths(
    actual: &Path,
    predicted: &Path,
    builder: &EvaluatorBuilder,
) -> Result<bool, EvalError> {
    Ok((predicted != Path::new("-") || builder.settings().regroup)
        && InputKind::of(actual)? == InputKind::Text
        && InputKind::of(predicted)? == InputKind::Text)
}

/// The qrels at `actual` as sorted qrels, if their goals ascend, or, when they do not and would
/// not fit in the budget once held, sorted on disk first (with how); `None` to hold them.
fn sorted_qrels(
    actual: &Path,
    builder: &EvaluatorBuilder,
    threads: usize,
) -> Result<Option<(SortedQrels, Option<String>)>, EvalError> {
    let spill = &builder.settings().spill;
    Ok(match SortedQrels::open_with_threads(actual, threads)? {
        Some(q) => Some((q, None)),
        None if std::fs::metadata(actual)
            .is_ok_and(|m| m.is_file() && !spill.holds_qrels(m.len())) =>
        {
            SortedQrels::sort(actual, spill)?
                .map(|(q, r)| (q.with_threads(threads), Some(r.to_string())))
        }
        None => None,
    })
}

/// The actual sets held whole, or sorted qrels read along the predictions.
enum Engine {
    Held(Evaluator),
    Joined(Box<JoinEvaluator>),
}

impl Engine {
    fn options(&self) -> &crate::EvalOptions {
        match self {
            Engine::Held(ev) => ev.options(),
            Engine::Joined(j) => j.options(),
        }
    }
}

/// The predictions, opened, or the shard to open when evaluating.
enum Opened {
    Predictions(Box<Predictions>),
    Shard {
        path: PathBuf,
        index: u64,
        count: u64,
    },
}

/// A [`Job`] with its inputs open, ready to evaluate.
pub struct OpenJob {
    engine: Engine,
    predictions: Opened,
    read: ActualRead,
    mergeable: bool,
}

impl OpenJob {
    /// The measures in output order, and what a summary holds.
    pub fn plan(&self) -> &Arc<Plan> {
        match &self.engine {
            Engine::Held(e) => e.plan(),
            Engine::Joined(j) => j.plan(),
        }
    }

    /// The options.
    pub fn options(&self) -> &EvalOptions {
        match &self.engine {
            Engine::Held(e) => e.options(),
            Engine::Joined(j) => j.options(),
        }
    }

    /// How the actual sets are read (the join's figures come with the [`Outcome`]).
    pub fn actual_read(&self) -> &ActualRead {
        &self.read
    }

    /// The bytes the progress callback counts up to, when known (a file's size on disk; a
    /// shard's share of it).
    pub fn size_on_disk(&self) -> Option<u64> {
        match &self.predictions {
            Opened::Predictions(p) => p.size_on_disk(),
            Opened::Shard { path, count, .. } => std::fs::metadata(path)
                .ok()
                .map(|m| m.len() / (*count).max(1)),
        }
    }

    /// Evaluates: per-goal rows go to `sink`, in order; `progress` hears (from worker threads)
    /// how many bytes of a text input have been read.
    pub fn evaluate(
        self,
        sink: &mut dyn Sink,
        progress: Option<&(dyn Fn(u64) + Sync)>,
    ) -> Result<Outcome, EvalError> {
        let OpenJob {
            engine,
            predictions,
            mut read,
            mergeable,
        } = self;
        let mut outcome =
            evaluate_engine(engine, predictions, &mut read, mergeable, sink, progress)?;
        outcome.actual_read = read;
        Ok(outcome)
    }
}

/// [`OpenJob::evaluate`] by `engine`.
fn evaluate_engine(
    engine: Engine,
    predictions: Opened,
    read: &mut ActualRead,
    mergeable: bool,
    sink: &mut dyn Sink,
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> Result<Outcome, EvalError> {
    {
        match engine {
            Engine::Joined(j) => {
                let Opened::Predictions(p) = predictions else {
                    return Err(EvalError::Options(
                        "internal: only text predictions are read along sorted qrels".into(),
                    ));
                };
                let Predictions::Text(input) = *p else {
                    return Err(EvalError::Options(
                        "internal: only text predictions are read along sorted qrels".into(),
                    ));
                };
                let (evaluation, jr) = j.evaluate_with_progress(input, sink, progress)?;
                if let ActualRead::Joined { join, .. } = read {
                    *join = jr;
                }
                Ok(Outcome {
                    evaluation,
                    partial: None,
                    actual_read: read.clone(),
                    held: None,
                })
            }
            Engine::Held(ev) => {
                let (evaluation, partial) = match predictions {
                    Opened::Shard { path, index, count } => {
                        let (e, p) = ev.evaluate_shard(&path, index - 1, count, sink, progress)?;
                        (e, Some(p))
                    }
                    Opened::Predictions(p) if mergeable => {
                        let (e, p) = ev.evaluate_partial(*p, sink, progress)?;
                        (e, Some(p))
                    }
                    Opened::Predictions(p) => {
                        (ev.evaluate_with_progress(*p, sink, progress)?, None)
                    }
                };
                Ok(Outcome {
                    evaluation,
                    partial,
                    actual_read: read.clone(),
                    held: Some(ev.into_actual()),
                })
            }
        }
    }
}
