//! trec_eval compatibility: its output format and its command (METRICS.md §8). The `-m` rules
//! (trec_eval's table order, the first `-m` that gives a measure parameters wins, cutoff lists
//! sorted and never repeated) are the accumulator's one trec_eval parser,
//! [`lemma_accum::trec::resolve`], derived from the measures' declarations. Lines are
//! `format!("{:<22}\t{}\t{:.4}", name, goal, value)`, integers for the `num_*` counts.

use crate::trec_goals::GoalValues;
use crate::{
    DuplicateMode, EvalError, EvalOptions, GoalRow, MissingMode, OrderMode, TieMode, ZeroRelMode,
};
use crate::{Evaluation, Evaluator, Predictions, Sink, SummaryOnly};
use lemma_accum::{Aggregate, Measure, Summary};
use lemma_accum::{Interpolation, TrecAdder, TrecRules};
use std::fmt::Write as _;

pub use lemma_accum::trec::{resolve, TrecMeasure, TrecMeasureError};

/// Appends one trec_eval line.
pub fn line(out: &mut String, m: &TrecMeasure, goal: &str, value: f64) {
    if m.integer {
        let _ = writeln!(out, "{:<22}\t{}\t{}", m.name, goal, value as i64);
    } else {
        let _ = writeln!(out, "{:<22}\t{}\t{:.4}", m.name, goal, value);
    }
}

/// The summary block (`all`): each value from `trec_values` (trec_eval's arithmetic, in the
/// order of `summary`'s measures; see [`TrecAdder`]) when given, else from `summary`'s exact
/// sums.
pub fn summary_block(
    out: &mut String,
    measures: &[TrecMeasure],
    summary: &Summary,
    trec_values: Option<&[f64]>,
    runid: &str,
    num_rel_override: Option<u64>,
) {
    for m in measures {
        let Some(measure) = m.measure else {
            let _ = writeln!(out, "{:<22}\tall\t{}", m.name, runid);
            continue;
        };
        let i = summary
            .measures()
            .iter()
            .position(|x| *x == measure)
            .expect("measure in plan");
        let v = match (summary.aggregate(i), &trec_values) {
            (Aggregate::Depth { .. }, _) => unreachable!("no Depth in trec_eval"),
            (_, Some(values)) => values[i],
            (Aggregate::Mean(v) | Aggregate::Sum(v) | Aggregate::GeoMean(v), None) => v,
        };
        let v = match (measure, num_rel_override) {
            (Measure::NumRel, Some(n)) => n as f64,
            _ => v,
        };
        line(out, m, "all", v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_format() {
        let mut s = String::new();
        let m = TrecMeasure {
            name: "map".into(),
            measure: None,
            integer: false,
            per_goal: true,
        };
        line(&mut s, &m, "q1", 0.533_333);
        let n = TrecMeasure {
            name: "num_ret".into(),
            measure: None,
            integer: true,
            per_goal: true,
        };
        line(&mut s, &n, "all", 1000.0);
        assert_eq!(
            s,
            "map                   \tq1\t0.5333\nnum_ret               \tall\t1000\n"
        );
    }
}

/// Which trec_eval to reproduce.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum TrecVersion {
    /// trec_eval 9.0.8 (pytrec_eval's): scores rounded to f32, 9.0.8's interpolation, goals
    /// without predictions not printed under `-q`.
    V9,
    /// trec_eval 10.0.
    #[default]
    V10,
}

/// trec_eval's flags.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TrecOptions {
    /// `-m` arguments, as given (`P.5,10`, `official`, ...).
    pub measures: Vec<String>,
    /// `-q`: per-goal lines too.
    pub per_query: bool,
    /// `-c`: average over every qrels goal (missing ones count 0).
    pub complete: bool,
    /// `-n`: no summary.
    pub no_summary: bool,
    /// `-M`: evaluate only the first N lemmas of each goal.
    pub max_docs: Option<u64>,
    /// `-l`: relevance level.
    pub level: i32,
    /// The version reproduced.
    pub version: TrecVersion,
    /// Worker threads.
    pub threads: usize,
    /// Memory-map a plain run file.
    pub mmap: bool,
    /// The memory budget of a run whose goals are not contiguous (sorted by goal, in memory or
    /// on disk).
    pub spill: lemma_ingest::SpillOptions,
}

impl Default for TrecOptions {
    fn default() -> Self {
        TrecOptions {
            measures: Vec::new(),
            per_query: false,
            complete: false,
            no_summary: false,
            max_docs: None,
            level: 1,
            version: TrecVersion::V10,
            threads: EvalOptions::default().threads,
            mmap: false,
            spill: lemma_ingest::SpillOptions::default(),
        }
    }
}

/// A trec_eval failure and trec_eval's exit code for it: 1 for a bad measure, 4 for a repeated
/// lemma ("Can't calculate measure"), 7 when no goal has both predictions and judgments, 2
/// otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrecError {
    /// The exit code trec_eval would give.
    pub code: u8,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for TrecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TrecError {}

impl From<lemma_ingest::InputError> for TrecError {
    fn from(e: lemma_ingest::InputError) -> Self {
        TrecError {
            code: 2,
            message: e.to_string(),
        }
    }
}

impl From<EvalError> for TrecError {
    fn from(e: EvalError) -> Self {
        let code = match &e {
            EvalError::Input(ie) if ie.kind == lemma_ingest::ErrorKind::Duplicate => 4,
            _ => 2,
        };
        TrecError {
            code,
            message: e.to_string(),
        }
    }
}

/// What trec_eval prints for `qrels` and `run` under `o`, byte for byte, and the evaluation
/// behind it. See [`run_to`].
pub fn run(
    qrels: &std::path::Path,
    run: &std::path::Path,
    o: &TrecOptions,
) -> Result<(String, Evaluation), TrecError> {
    let mut out = Vec::new();
    let done = run_to(qrels, run, o, &mut out)?;
    let text = String::from_utf8(out).map_err(|e| TrecError {
        code: 2,
        message: format!("output is not UTF-8: {e}"),
    })?;
    Ok((text, done))
}

/// Writes what trec_eval prints for `qrels` and `run` under `o` to `out`, byte for byte, and
/// returns the evaluation behind it. The run is streamed; goals that are not contiguous make it
/// sorted by goal within `o.spill`'s budget (trec_eval accepts any order). The evaluated goals'
/// values, which the summary (trec_eval's running sum in goal-id order) and `-q` (lines in that
/// order) need, are held within half that budget and go to sorted temporary files past it.
/// Nothing is written before the run has been read whole: an error in the inputs leaves `out`
/// untouched.
pub fn run_to(
    qrels: &std::path::Path,
    run: &std::path::Path,
    o: &TrecOptions,
    out: &mut dyn std::io::Write,
) -> Result<Evaluation, TrecError> {
    use lemma_ingest::{ActualSets, ErrorKind};
    let tm = resolve(&o.measures).map_err(|e| TrecError {
        code: e.code as u8,
        message: e.message,
    })?;
    let v10 = o.version == TrecVersion::V10;
    let opts = EvalOptions {
        measures: tm.iter().filter_map(|m| m.measure).collect(),
        relevance_level: o.level,
        interpolation: if v10 {
            Interpolation::Trec10
        } else {
            Interpolation::Trec9
        },
        ranking: crate::RankingOptions {
            order: Some(OrderMode::Score),
            ties: TieMode::Trec,
            duplicates: DuplicateMode::Error,
            depth: o.max_docs,
        },
        missing: if o.complete {
            MissingMode::Zero
        } else {
            MissingMode::Skip
        },
        zero_rel: ZeroRelMode::Evaluate,
        regroup: run == std::path::Path::new("-"),
        f32_scores: !v10,
        threads: o.threads.max(1),
        spill: o.spill.clone(),
        ..EvalOptions::default()
    };
    if qrels == std::path::Path::new("-") && run == std::path::Path::new("-") {
        return Err(TrecError {
            code: 2,
            message: "only one of QRELS and RUN can be - (stdin)".into(),
        });
    }
    let actual = ActualSets::read_path(qrels)?;
    // Stream, and regroup in memory only if a goal reappears.
    let mut evaluator = Evaluator::builder().options(opts).build(actual);
    let (goals, done) = match evaluate_run(&evaluator, run, o) {
        Err(EvalError::Input(e))
            if e.kind == ErrorKind::GoalNotContiguous && !evaluator.options().regroup =>
        {
            tracing::info!("goals are not contiguous: sorting the run by goal");
            let mut opts = evaluator.options().clone();
            opts.regroup = true;
            evaluator = Evaluator::builder()
                .options(opts)
                .build(evaluator.into_actual());
            evaluate_run(&evaluator, run, o)?
        }
        r => r?,
    };
    let num_rel = evaluator.actual().positive_rows;
    finish(
        &tm,
        goals,
        done,
        num_rel,
        evaluator.plan().measures(),
        o,
        out,
    )
}

/// The sink of trec_eval mode: every evaluated goal's values, for the summary in trec_eval's
/// arithmetic and the `-q` lines.
struct TrecRows(GoalValues);

impl Sink for TrecRows {
    fn row(&mut self, row: GoalRow) -> std::io::Result<()> {
        self.0.push(&row.goal, &row.values, row.empty)
    }
}

/// One evaluation of the run: every evaluated goal's values (with `-n` and no `-q`, none), and
/// the evaluation.
fn evaluate_run(
    evaluator: &Evaluator,
    run: &std::path::Path,
    o: &TrecOptions,
) -> Result<(GoalValues, Evaluation), EvalError> {
    let goals = GoalValues::new(evaluator.plan().measures(), &o.spill);
    let input = lemma_ingest::open_with(run, o.mmap)?;
    if o.no_summary && !o.per_query {
        let done = evaluator.evaluate(Predictions::Text(input), &mut SummaryOnly)?;
        return Ok((goals, done));
    }
    let mut sink = TrecRows(goals);
    let done = evaluator.evaluate(Predictions::Text(input), &mut sink)?;
    Ok((sink.0, done))
}

/// The per-goal lines (goals in byte order, measures in trec_eval's table order) and the summary,
/// from one pass over the goals in byte order.
fn finish(
    tm: &[TrecMeasure],
    goals: GoalValues,
    done: Evaluation,
    positive_rows: u64,
    plan_measures: &[Measure],
    o: &TrecOptions,
    out: &mut dyn std::io::Write,
) -> Result<Evaluation, TrecError> {
    let v10 = o.version == TrecVersion::V10;
    // 10.0 evaluates the goals of the qrels alone under -c (empty rankings); 9.0.8 needs a goal
    // in both files whatever the flags.
    let counts = done.summary.counts();
    let in_both = counts.evaluated - counts.evaluated_empty;
    if counts.evaluated == 0 || (!v10 && in_both == 0) {
        return Err(TrecError {
            code: 7,
            message: "no goals with both predictions and relevance judgments".into(),
        });
    }
    let io = |e: std::io::Error| TrecError {
        code: 2,
        message: e.to_string(),
    };
    let per_goal: Vec<(&TrecMeasure, usize)> = if o.per_query {
        (tm.iter().filter(|m| m.per_goal))
            .map(|m| {
                let measure = m.measure.expect("per-goal measures are computed");
                let i = plan_measures
                    .iter()
                    .position(|x| *x == measure)
                    .expect("in plan");
                (m, i)
            })
            .collect()
    } else {
        Vec::new()
    };
    let rules = if v10 { TrecRules::V10 } else { TrecRules::V9 };
    let mut adder = TrecAdder::new(plan_measures, rules);
    let mut text = String::new();
    goals
        .visit_sorted(|goal, empty, values| {
            adder.add(values, empty);
            if per_goal.is_empty() || (empty && !v10) {
                return Ok(());
            }
            text.clear();
            let goal = String::from_utf8_lossy(goal);
            for &(m, i) in &per_goal {
                line(&mut text, m, &goal, values[i]);
            }
            out.write_all(text.as_bytes())
        })
        .map_err(io)?;
    if !o.no_summary {
        let runid = String::from_utf8_lossy(&done.report.runid).into_owned();
        let num_rel = o.complete.then_some(positive_rows);
        let values = adder.finish(counts.evaluated);
        text.clear();
        summary_block(&mut text, tm, &done.summary, Some(&values), &runid, num_rel);
        out.write_all(text.as_bytes()).map_err(io)?;
    }
    Ok(done)
}
