//! Precision-recall curves (docs/METRICS.md §5), read from the measures that define their points,
//! so that a curve's numbers are the measures' own, under every ranking option:
//!
//! - the **macro-averaged interpolated curve** at `n` recall levels `0, 1/(n-1), ..., 1`: at each
//!   level, the mean over the evaluated goals of `IPrec@level` ([`macro_measures`],
//!   [`macro_points`]);
//! - **one goal's exact curve**: with `R` relevant lemmas, `Depth(recall=i/R)` is the rank where
//!   the goal has found `i` of them (`c(i/R) = i`). One row per distinct rank `k` among those: the
//!   count `s(k)` found there, recall `s(k)/R`, precision `s(k)/k`, and the interpolated
//!   precision, the best precision at that recall or beyond ([`goal_measures`], [`goal_points`]).
//!   Under `--ties group` the depths are group ends, so the rows are too.
//!
//! ```
//! use lemma_eval::curve::{goal_points, GoalPoint};
//! // The seed example: x a y b c z against {a, b, c}: relevant lemmas at ranks 2, 4, 5.
//! let rows = goal_points(3, &[Some(2.0), Some(4.0), Some(5.0)]);
//! assert_eq!(rows[0], GoalPoint { rank: 2, found: 1, recall: 1.0 / 3.0, precision: 0.5, interpolated: 0.6 });
//! assert_eq!(rows[2], GoalPoint { rank: 5, found: 3, recall: 1.0, precision: 0.6, interpolated: 0.6 });
//! ```

use crate::{EvalError, EvaluatorBuilder, GoalRow, Job, RowFn, SummaryOnly};
use lemma_accum::{Measure, Summary};
use lemma_ingest::ActualSets;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A point of a macro-averaged curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecallPoint {
    /// The recall level.
    pub recall: f64,
    /// The mean interpolated precision at that level over the evaluated goals (`None`: no goal
    /// was evaluated).
    pub precision: Option<f64>,
}

/// A row of one goal's exact curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GoalPoint {
    /// The rank `k`.
    pub rank: u64,
    /// Relevant lemmas found by rank `k`, `s(k)`.
    pub found: u64,
    /// `s(k) / R`.
    pub recall: f64,
    /// `s(k) / k`.
    pub precision: f64,
    /// The best precision at this recall or beyond.
    pub interpolated: f64,
}

/// The recall levels `0, 1/(n-1), ..., 1` (`n >= 2`), each the nearest double to `i/(n-1)`.
pub fn recall_levels(n: usize) -> Vec<f64> {
    assert!(n >= 2, "a curve needs at least 2 points");
    (0..n).map(|i| i as f64 / (n - 1) as f64).collect()
}

/// The measures of the macro-averaged curve at `levels`: `IPrec@level`, in order.
pub fn macro_measures(levels: &[f64]) -> Vec<String> {
    levels.iter().map(|r| format!("IPrec@{r}")).collect()
}

/// The macro-averaged curve from a summary of [`macro_measures`]`(levels)` (its first
/// `levels.len()` measures).
pub fn macro_points(levels: &[f64], summary: &Summary) -> Vec<RecallPoint> {
    let aggregates = summary.aggregates();
    (levels.iter().zip(&aggregates))
        .map(|(&recall, (_, a))| RecallPoint {
            recall,
            precision: a.headline(),
        })
        .collect()
}

/// The measures of one goal's exact curve, for a goal with `r` relevant lemmas:
/// `Depth(recall=i/r)` for `i = 1..=r`.
pub fn goal_measures(r: usize) -> Vec<String> {
    (1..=r)
        .map(|i| format!("Depth(recall={})", i as f64 / r as f64))
        .collect()
}

/// One goal's exact curve from its values of [`goal_measures`]`(r)` (the ranks where it found
/// 1, 2, ..., r relevant lemmas; `None` from the first count it never reaches).
pub fn goal_points(r: usize, depths: &[Option<f64>]) -> Vec<GoalPoint> {
    let mut rows: Vec<GoalPoint> = Vec::new();
    for (i, d) in depths.iter().take(r).enumerate() {
        let Some(k) = d.map(|k| k as u64) else {
            break;
        };
        let found = i as u64 + 1;
        let point = GoalPoint {
            rank: k,
            found,
            recall: found as f64 / r as f64,
            precision: found as f64 / k as f64,
            interpolated: 0.0,
        };
        match rows.last_mut() {
            // Several counts reached at one rank (a tie group's end): the largest.
            Some(last) if last.rank == k => *last = point,
            _ => rows.push(point),
        }
    }
    let mut best = 0.0f64;
    for p in rows.iter_mut().rev() {
        best = best.max(p.precision);
        p.interpolated = best;
    }
    rows
}

/// The measures of the view at score threshold `t` (`eval --threshold`): the macro averages
/// `SetP`, `SetR`, `SetF(beta=1)` of the lemmas scored `>= t`, and the counts whose sums over
/// goals give the pooled view, `NumRet(threshold=t)`, `NumRelRet(threshold=t)` and `NumRel`.
pub fn threshold_measures(t: f64) -> Vec<String> {
    vec![
        format!("SetP(threshold={t})"),
        format!("SetR(threshold={t})"),
        format!("SetF(beta=1,threshold={t})"),
        format!("NumRet(threshold={t})"),
        format!("NumRelRet(threshold={t})"),
        "NumRel".to_string(),
    ]
}

/// The pooled precision, recall and F1 at threshold `t` from a summary holding
/// [`threshold_measures`]`(t)`: every ranked lemma of every goal is one instance, positive when
/// relevant; `Σ s_t / Σ n_t`, `Σ s_t / Σ R` (relevant lemmas never ranked count) and their
/// harmonic mean, each 0 on an empty denominator. Named `pooled:SetP(threshold=t)` and so on.
pub fn pooled_at_threshold(t: f64, summary: &Summary) -> Vec<(String, Option<f64>)> {
    let aggregates = summary.aggregates();
    // Found as measures, not by name: `NumRet(threshold=2)` prints as `NumRet(threshold=2.0)`.
    let ms = measures_at(t);
    let sum = |m: &Measure| {
        (aggregates.iter())
            .find(|(a, _)| a == m)
            .and_then(|(_, a)| a.headline())
    };
    let (Some(n), Some(s), Some(r)) = (sum(&ms[3]), sum(&ms[4]), sum(&ms[5])) else {
        return Vec::new();
    };
    let div = |a: f64, b: f64| if b == 0.0 { 0.0 } else { a / b };
    let (p, rc) = (div(s, n), div(s, r));
    let f1 = div(2.0 * p * rc, p + rc);
    (ms[..3].iter())
        .zip([p, rc, f1])
        .map(|(m, v)| (format!("pooled:{m}"), Some(v)))
        .collect()
}

/// [`threshold_measures`]`(t)` as measures, in that order.
fn measures_at(t: f64) -> Vec<Measure> {
    let names = threshold_measures(t);
    Measure::parse_all(names.iter().map(String::as_str)).expect("valid measure names")
}

/// The thresholds `t` whose [`threshold_measures`] a summary holds, all six (what `eval
/// --threshold t` adds), in the order of their `NumRet(threshold=t)`: the summaries of such an
/// evaluation merged have their [`pooled_at_threshold`] lines too.
pub fn pooled_thresholds(summary: &Summary) -> Vec<f64> {
    let held: Vec<Measure> = summary.aggregates().iter().map(|(m, _)| *m).collect();
    (held.iter())
        .filter_map(|m| match *m {
            Measure::NumRetAbove { threshold } => Some(threshold),
            _ => None,
        })
        .filter(|&t| measures_at(t).iter().all(|m| held.contains(m)))
        .collect()
}

/// Which curve [`Curves::compute`] draws.
#[derive(Clone, Debug, PartialEq)]
pub enum CurveKind {
    /// Each run's macro-averaged interpolated curve at `levels` recall levels.
    Macro {
        /// The number of recall levels, `0` to `1` evenly (at least 2).
        levels: u32,
    },
    /// One goal's exact curve.
    Goal {
        /// The goal's id.
        goal: String,
    },
}

/// The points of one run's curve.
#[derive(Clone, Debug, PartialEq)]
pub enum RunPoints {
    /// A macro-averaged curve and the number of goals it averages.
    Macro {
        /// Goals evaluated.
        evaluated: u64,
        /// A point per recall level.
        points: Vec<RecallPoint>,
    },
    /// One goal's exact curve.
    Goal(Vec<GoalPoint>),
}

/// One run's curve.
#[derive(Clone, Debug, PartialEq)]
pub struct RunCurve {
    /// The run's name (its path, as the command shows it).
    pub name: String,
    /// Its points.
    pub points: RunPoints,
}

/// The curves of several runs against one set of actual sets (`lemma-eval curve`): computed by
/// [`Curves::compute`], written by [`crate::output::write_curves`], drawn from
/// [`Curves::series`].
#[derive(Clone, Debug, PartialEq)]
pub struct Curves {
    /// What was drawn.
    pub kind: CurveKind,
    /// For a goal's curve, its number of relevant lemmas `R`.
    pub relevant: usize,
    /// A curve per run, in the order given.
    pub runs: Vec<RunCurve>,
}

impl Curves {
    /// Each run of `predicted` (name, path) evaluated against `actual` (read from
    /// `actual_path`, which errors name) with `builder`'s options and the measures that define
    /// the curve's points, one pass per run.
    pub fn compute(
        builder: &EvaluatorBuilder,
        actual: Arc<ActualSets>,
        actual_path: &Path,
        predicted: &[(String, PathBuf)],
        kind: CurveKind,
    ) -> Result<Curves, EvalError> {
        let mut runs = Vec::with_capacity(predicted.len());
        let mut relevant = 0;
        match &kind {
            CurveKind::Macro { levels } => {
                let levels = recall_levels(*levels as usize);
                let builder = builder
                    .clone()
                    .measure_names(macro_measures(&levels))
                    .map_err(|e| EvalError::Options(e.to_string()))?;
                for (name, path) in predicted {
                    let done = Job::new(builder.clone(), actual.clone(), path.as_path())
                        .run(&mut SummaryOnly, None)?
                        .evaluation;
                    runs.push(RunCurve {
                        name: name.clone(),
                        points: RunPoints::Macro {
                            evaluated: done.summary.counts().evaluated,
                            points: macro_points(&levels, &done.summary),
                        },
                    });
                }
            }
            CurveKind::Goal { goal } => {
                let level = builder.settings().relevance_level;
                let Some((_, truth)) = actual.goal(goal.as_bytes()) else {
                    return Err(EvalError::Options(format!(
                        "{}: no goal `{goal}` in the actual sets",
                        actual_path.display()
                    )));
                };
                relevant = truth.entries().filter(|&(_, g)| g >= level).count();
                if relevant == 0 {
                    return Err(EvalError::Options(format!(
                        "{}: goal `{goal}` has no relevant lemma (R = 0 at relevance level \
                         {level}): it has no curve",
                        actual_path.display()
                    )));
                }
                let builder = builder
                    .clone()
                    .measure_names(goal_measures(relevant))
                    .map_err(|e| EvalError::Options(e.to_string()))?;
                for (name, path) in predicted {
                    let mut depths = Vec::new();
                    let mut sink = RowFn(|row: GoalRow| {
                        if row.goal == goal.as_bytes() {
                            depths = row.values;
                        }
                        Ok(())
                    });
                    Job::new(builder.clone(), actual.clone(), path.as_path())
                        .run(&mut sink, None)?;
                    runs.push(RunCurve {
                        name: name.clone(),
                        points: RunPoints::Goal(goal_points(relevant, &depths)),
                    });
                }
            }
        }
        Ok(Curves {
            kind,
            relevant,
            runs,
        })
    }

    /// The plot's title.
    pub fn title(&self) -> String {
        match &self.kind {
            CurveKind::Macro { levels } => {
                let n = recall_levels(*levels as usize).len();
                format!("interpolated precision, mean over goals ({n} levels)")
            }
            CurveKind::Goal { goal } => format!(
                "goal {goal}: interpolated precision ({} relevant)",
                self.relevant
            ),
        }
    }

    /// Each run's curve as (recall, precision) points to draw: a macro curve's defined points,
    /// a goal's interpolated curve as steps (flat from each point back to the last).
    pub fn series(&self) -> Vec<Vec<(f64, f64)>> {
        (self.runs.iter())
            .map(|run| match &run.points {
                RunPoints::Macro { points, .. } => (points.iter())
                    .filter_map(|q| Some((q.recall, q.precision?)))
                    .collect(),
                RunPoints::Goal(points) => {
                    let mut steps = Vec::new();
                    let mut from = 0.0;
                    for q in points {
                        steps.push((from, q.interpolated));
                        steps.push((q.recall, q.interpolated));
                        from = q.recall;
                    }
                    steps
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_print_as_written() {
        let l = recall_levels(11);
        assert_eq!(l.len(), 11);
        assert_eq!(format!("{} {} {}", l[0], l[3], l[10]), "0 0.3 1");
        assert_eq!(macro_measures(&l[2..4]), ["IPrec@0.2", "IPrec@0.3"]);
        assert_eq!(recall_levels(2), [0.0, 1.0]);
    }

    #[test]
    fn goal_measures_name_each_count() {
        assert_eq!(
            goal_measures(3),
            [
                "Depth(recall=0.3333333333333333)",
                "Depth(recall=0.6666666666666666)",
                "Depth(recall=1)"
            ]
        );
    }

    /// A tie group of ranks 3..5 holding two relevant lemmas: counts 2 and 3 both reached at its
    /// end, one row; a count never reached ends the curve.
    #[test]
    fn counts_reached_at_one_rank_are_one_row() {
        let rows = goal_points(4, &[Some(1.0), Some(5.0), Some(5.0), None]);
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].rank, rows[0].found, rows[0].precision),
            (1, 1, 1.0)
        );
        assert_eq!((rows[1].rank, rows[1].found, rows[1].recall), (5, 3, 0.75));
        assert_eq!(rows[1].precision, 0.6);
        assert_eq!(rows[0].interpolated, 1.0);
        assert!(goal_points(2, &[None, None]).is_empty());
    }
}
