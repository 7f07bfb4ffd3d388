//! What an evaluation gives back: per-goal rows, the report, errors; and the goals no prediction
//! ranked, evaluated the same way by every pipeline.

use crate::options::{EvalOptions, MissingMode};
use crate::sink::Sink as RowSink;
use lemma_accum::{GoalAccumulator, GoalError, GoalFate, GoalValues, Plan, Summary, Truth};
use lemma_ingest::{show, ActualSets, GoalOrder, GoalTruth, InputError, Interner};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

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
    summary.add(goal, &values);
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
    /// When the input's lines were grouped by goal first (`--regroup`): how, in memory or sorted
    /// on disk.
    pub spill: Option<lemma_ingest::SpillReport>,
    /// The tag of the last run line in the file (trec_eval's `runid`).
    pub runid: Vec<u8>,
    /// Wall time.
    pub elapsed: Duration,
    /// Worker threads used.
    pub threads: usize,
    /// What the premise protocol did (with a corpus: docs/METRICS.md §9).
    pub premises: crate::PremiseReport,
    /// What `--group-by` did.
    pub groups: Option<crate::GroupReport>,
    /// What `--by` met.
    pub strata: Option<crate::StrataReport>,
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
    /// A pushed goal could not be evaluated (pushed twice, a repeated lemma under
    /// `--duplicates error`, a bad score or id).
    Push {
        /// The goal, printable.
        goal: String,
        /// What went wrong.
        message: String,
    },
    /// A summary file could not be read or merged.
    Partial(crate::PartialError),
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EvalError::Input(e) => write!(f, "{e}"),
            EvalError::Goal { goal, error } => write!(f, "goal `{goal}`: {error}"),
            EvalError::Sink(e) => write!(f, "cannot write output: {e}"),
            EvalError::Options(m) => write!(f, "{m}"),
            EvalError::Push { goal, message } => write!(f, "goal `{goal}`: {message}"),
            EvalError::Partial(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for EvalError {}

impl From<InputError> for EvalError {
    fn from(e: InputError) -> Self {
        EvalError::Input(e)
    }
}

/// A goal's truth as the accumulator takes it: its grades, within `universe` lemmas when known.
pub(crate) fn truth_of(truth: GoalTruth<'_>, universe: Option<u64>) -> Truth<'_> {
    let t = Truth::graded(truth.grades_desc()).expect("grades are stored sorted");
    match universe {
        Some(u) => t.with_universe(u),
        None => t,
    }
}

/// What the predictions gave, before the goals they never ranked are evaluated.
pub(crate) struct Predicted {
    /// The goals the predictions ranked (and those they skipped).
    pub(crate) summary: Summary,
    /// Per goal of the actual sets: ranked by the predictions.
    pub(crate) seen: Vec<bool>,
    /// The universe the goals without predictions are evaluated within.
    pub(crate) universe: Option<u64>,
    /// What happened.
    pub(crate) report: Report,
}

impl Predicted {
    /// Adds the goals never ranked ([`evaluate_unseen`]): the summary of every goal.
    pub(crate) fn finish(
        mut self,
        actual: &ActualSets,
        plan: &Arc<Plan>,
        opts: &EvalOptions,
        rows: &mut dyn RowSink,
    ) -> Result<(Summary, Report), EvalError> {
        let seen = &self.seen;
        evaluate_unseen(
            actual,
            plan,
            opts,
            &|g| seen[g],
            self.universe,
            &mut self.summary,
            rows,
        )?;
        Ok((self.summary, self.report))
    }
}

/// A goal without predictions, as every pipeline treats it.
pub(crate) enum EmptyGoal<'v> {
    /// Not evaluated: nothing relevant, or `--missing skip`.
    Skipped(GoalFate),
    /// Evaluated as an empty ranking.
    Evaluated(GoalValues<'v>),
}

/// Goal `goal` (truth `truth`) without predictions: skipped when it has nothing relevant (per
/// the policy) or per `--missing skip`, else evaluated as an empty ranking within `universe`
/// (`lemmas` names the truth's lemmas: the origin measures look them up in the corpus).
pub(crate) fn empty_goal<'a>(
    acc: &'a mut GoalAccumulator,
    goal: &[u8],
    truth: GoalTruth<'_>,
    lemmas: &Interner,
    opts: &EvalOptions,
    universe: Option<u64>,
) -> Result<EmptyGoal<'a>, EvalError> {
    let mut t = truth_of(truth, universe);
    if opts.skips_no_relevant(&t) {
        return Ok(EmptyGoal::Skipped(GoalFate::SkippedNoRelevant));
    }
    if opts.missing == MissingMode::Skip {
        return Ok(EmptyGoal::Skipped(GoalFate::SkippedNoPredictions));
    }
    if let Some(p) = opts
        .premises
        .as_ref()
        .filter(|_| acc.plan().needs_origins())
    {
        let level = opts.relevance_level;
        let relevant = (truth.entries())
            .filter(|&(_, grade)| grade >= level)
            .map(|(id, _)| (lemmas.hash_of(id), lemmas.name(id)));
        let [in_file, imported] = p.origin_counts(goal, relevant).map_err(|m| {
            EvalError::Input(InputError::file(
                lemma_ingest::ErrorKind::Syntax,
                std::path::Path::new(""),
                m,
            ))
        })?;
        t = t.with_origins(in_file, imported);
    }
    Ok(EmptyGoal::Evaluated(goal_values(
        goal,
        acc.evaluate_ranks(&t, 0, []),
    )?))
}

/// Goals of the actual sets that the predictions never ranked: evaluated as empty rankings (every
/// measure 0), or skipped per `--missing skip`; goals with R = 0 skipped per the policy. Shared by
/// every pipeline. Rows come in the actual sets' order when their goals ascend (byte or natural
/// order: sorted qrels), in natural order otherwise, so that qrels read whole, read along the
/// predictions or sorted on disk first give the same rows.
pub(crate) fn evaluate_unseen(
    actual: &ActualSets,
    plan: &Arc<Plan>,
    opts: &EvalOptions,
    seen: &dyn Fn(usize) -> bool,
    universe: Option<u64>,
    summary: &mut Summary,
    rows: &mut dyn RowSink,
) -> Result<(), EvalError> {
    let mut acc = GoalAccumulator::new(plan.clone());
    let want_rows = rows.wants_rows();
    let n = actual.goal_count();
    let name = |g: usize| actual.goals.name(g as u32);
    let ascending = |o: GoalOrder| (1..n).all(|g| o.cmp(name(g - 1), name(g)).is_lt());
    let order: Box<dyn Iterator<Item = usize>> =
        if want_rows && !ascending(GoalOrder::Bytes) && !ascending(GoalOrder::Natural) {
            let mut ids: Vec<usize> = (0..n).filter(|&g| !seen(g)).collect();
            ids.sort_by(|&a, &b| GoalOrder::Natural.cmp(name(a), name(b)));
            Box::new(ids.into_iter())
        } else {
            Box::new((0..n).filter(|&g| !seen(g)))
        };
    for gid in order {
        let truth = actual.truth(gid as u32);
        let goal = name(gid);
        match empty_goal(&mut acc, goal, truth, &actual.lemmas, opts, universe)? {
            EmptyGoal::Skipped(fate) => summary.skip(fate),
            EmptyGoal::Evaluated(values) => {
                summary.add_empty(goal, &values);
                if want_rows {
                    rows.row(GoalRow::new(goal, &values, true))
                        .map_err(EvalError::Sink)?;
                }
            }
        }
    }
    Ok(())
}
