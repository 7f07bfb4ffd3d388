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

use lemma_accum::{Measure, Summary};

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
