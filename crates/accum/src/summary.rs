//! Aggregation over goals (METRICS.md §4): a [`Summary`] that merges exactly.
//!
//! Means are exact sums ([`ExactSum`]) divided by the number of evaluated goals; counts are integer
//! sums; `Depth(recall=r)` keeps, for the median, how many goals reached the level at each depth
//! (a histogram: 16 bytes per distinct depth, so at most the longest ranking's length, whatever
//! the number of goals). Two summaries of disjoint goal sets merge into the summary of their
//! union, identical to the last bit whatever the order of goals or shards; a summary of a subset
//! can be retracted from one of a superset, exactly ([`Summary::retract`]; not when either keeps
//! groups or strata).
//!
//! Grouped ([`crate::Plan::with_grouping`]): a goal of a group adds its values to its group's
//! entry (its goal count and, per measure, a compensated sum of its values: 16 bytes a measure);
//! a goal of no group is a group of its own and enters the summary at once. The aggregates are
//! then those of a summary in which every group entered as one goal whose values are its
//! group's means (a sum measure: its group's sum). Summaries of disjoint goal sets merge group
//! by group.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::exact::ExactSum;
use crate::goal::GoalValues;
use crate::measure::{Aggregation, Measure};
use crate::plan::Plan;
use crate::pooled::{PooledCurve, PooledSpec};

/// Floor applied to AP before the logarithm of `GM_AP` (trec_eval's `MIN_GEO_MEAN`).
pub const GM_AP_FLOOR: f64 = 1e-5;

/// Why a goal was not evaluated, or was evaluated as empty (METRICS.md §4).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum GoalFate {
    /// Predictions but no actual set: skipped (trec_eval ignores it too).
    SkippedNoActual,
    /// Actual set with no lemma at or above the relevance level (`R = 0`): skipped by default.
    SkippedNoRelevant,
    /// Actual set but no predictions, skipped under `--missing skip`.
    SkippedNoPredictions,
    /// Actual set but no predictions, evaluated as an empty ranking (default).
    EvaluatedEmpty,
}

/// How many goals met each fate. Merges by addition.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct GoalCounts {
    /// Goals whose values entered the summary.
    pub evaluated: u64,
    /// See [`GoalFate::SkippedNoActual`].
    pub skipped_no_actual: u64,
    /// See [`GoalFate::SkippedNoRelevant`].
    pub skipped_no_relevant: u64,
    /// See [`GoalFate::SkippedNoPredictions`].
    pub skipped_no_predictions: u64,
    /// See [`GoalFate::EvaluatedEmpty`] (also counted in `evaluated`).
    pub evaluated_empty: u64,
}

impl GoalCounts {
    /// The five counts in declaration order (evaluated, skipped for no actual set, for no
    /// relevant lemma, for no predictions, evaluated as empty): what an encoding writes.
    pub fn to_array(self) -> [u64; 5] {
        [
            self.evaluated,
            self.skipped_no_actual,
            self.skipped_no_relevant,
            self.skipped_no_predictions,
            self.evaluated_empty,
        ]
    }

    /// The counts of [`GoalCounts::to_array`]'s order.
    pub fn from_array(a: [u64; 5]) -> GoalCounts {
        let [evaluated, skipped_no_actual, skipped_no_relevant, skipped_no_predictions, evaluated_empty] =
            a;
        GoalCounts {
            evaluated,
            skipped_no_actual,
            skipped_no_relevant,
            skipped_no_predictions,
            evaluated_empty,
        }
    }

    /// Count by count, `self + other`; `None` where a sum passes `u64::MAX`.
    fn checked_plus(self, other: GoalCounts) -> Option<GoalCounts> {
        let (a, b) = (self.to_array(), other.to_array());
        let mut d = [0; 5];
        for i in 0..5 {
            d[i] = a[i].checked_add(b[i])?;
        }
        Some(GoalCounts::from_array(d))
    }

    /// Count by count, `self - other`; `None` where `other` has more.
    fn checked_minus(self, other: GoalCounts) -> Option<GoalCounts> {
        let (a, b) = (self.to_array(), other.to_array());
        let mut d = [0; 5];
        for i in 0..5 {
            d[i] = a[i].checked_sub(b[i])?;
        }
        Some(GoalCounts::from_array(d))
    }
}

/// One aggregate figure.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Aggregate {
    /// Arithmetic mean over evaluated goals (0 when none).
    Mean(f64),
    /// Sum over goals.
    Sum(f64),
    /// `Depth(recall=r)`: over the goals that reach `r`.
    Depth {
        /// Mean depth over goals that reach the level.
        mean: Option<f64>,
        /// Median depth over goals that reach the level (mean of the middle two for an even count).
        median: Option<f64>,
        /// Fraction of evaluated goals that reach the level.
        coverage: f64,
        /// Number of goals that reach the level.
        reached: u64,
    },
    /// Geometric mean (GM_AP).
    GeoMean(f64),
    /// A mean over the goals where the measure is defined (`R(origin=in-file)@k`).
    Covered {
        /// The mean over those goals; `None` when there is none.
        mean: Option<f64>,
        /// Fraction of evaluated goals where it is defined.
        coverage: f64,
        /// Number of goals where it is defined.
        reached: u64,
    },
}

impl Aggregate {
    /// The headline number: the mean, sum, geometric mean, or for Depth the mean depth.
    pub fn headline(&self) -> Option<f64> {
        match *self {
            Aggregate::Mean(v) | Aggregate::Sum(v) | Aggregate::GeoMean(v) => Some(v),
            Aggregate::Depth { mean, .. } | Aggregate::Covered { mean, .. } => mean,
        }
    }

    /// The headline number as every output shows it, over `evaluated` goals: over none, a mean
    /// (a geometric mean, Depth's mean) is missing, `None`; a sum is 0.
    pub fn headline_over(&self, evaluated: u64) -> Option<f64> {
        match self {
            Aggregate::Sum(_) => self.headline(),
            _ if evaluated == 0 => None,
            _ => self.headline(),
        }
    }
}

/// `Σ depth · goals` over a histogram, exactly: what the sum of its goals' depths must be.
fn histogram_sum(depths: &[(u64, u64)]) -> ExactSum {
    let mut sum = ExactSum::new();
    for &(d, n) in depths {
        // At most 2^53 · 2^64 = 2^117: three pieces of 52 bits, each an exact f64.
        let x = d as u128 * n as u128;
        for k in 0..3 {
            let piece = ((x >> (52 * k)) & ((1 << 52) - 1)) as f64;
            sum.add(piece * (2.0f64).powi(52 * k));
        }
    }
    sum
}

/// Which group each goal's values count in (`--group-by`): given by the caller, held by the
/// plan ([`crate::Plan::with_grouping`]).
pub trait Grouping: Send + Sync + std::fmt::Debug {
    /// The group of goal `goal`; `None`: the goal is a group of its own.
    fn group_of(&self, goal: &[u8]) -> Option<u32>;
}

/// Which strata each goal's values count in besides the whole (`--by`): given by the caller,
/// held by the plan ([`crate::Plan::with_strata`]). A stratum is a `u64`; the summaries list
/// theirs in ascending order.
pub trait Stratifier: Send + Sync + std::fmt::Debug {
    /// Pushes onto `out` where goal `goal`, whose actual set holds `relevant` relevant lemmas,
    /// is placed: [`Placed::In`] each of its strata (none: the goal counts in the whole only),
    /// and [`Placed::Nowhere`] each key of the caller's that places it in none of its strata
    /// (the summary counts those goals and keeps the least name: [`Summary::unplaced`]).
    fn strata_of(&self, goal: &[u8], relevant: u64, out: &mut Vec<Placed>);
    /// How stratum `stratum` is shown (`KEY=VALUE`).
    fn label(&self, stratum: u64) -> String;
}

/// Where [`Stratifier::strata_of`] places a goal.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Placed {
    /// In this stratum.
    In(u64),
    /// In no stratum of this key (the caller's numbering).
    Nowhere(u32),
}

/// Goals of a summary that a key placed in none of its strata: how many, and the least by
/// name (the same whatever the order goals came in or summaries merged).
#[derive(Clone, Debug, Default, PartialEq)]
struct Unplaced {
    goals: u64,
    least: Option<Box<[u8]>>,
}

impl Unplaced {
    fn add(&mut self, goal: &[u8]) {
        self.goals += 1;
        keep_least(&mut self.least, goal);
    }

    fn merge(&mut self, other: &Unplaced) {
        self.goals += other.goals;
        if let Some(g) = &other.least {
            keep_least(&mut self.least, g);
        }
    }
}

/// `least` becomes `goal` when `goal` is less by name (or `least` is none).
fn keep_least(least: &mut Option<Box<[u8]>>, goal: &[u8]) {
    if least.as_deref().is_none_or(|l| goal < l) {
        *least = Some(goal.into());
    }
}

/// The strata of a stratified summary.
#[derive(Clone, Debug)]
struct Strata {
    of: Arc<dyn Stratifier>,
    table: BTreeMap<u64, Summary>,
    /// Per key ([`Placed::Nowhere`]'s): the goals it placed in no stratum.
    unplaced: BTreeMap<u32, Unplaced>,
    /// Reused by [`Summary::add`].
    scratch: Vec<Placed>,
}

impl PartialEq for Strata {
    fn eq(&self, other: &Strata) -> bool {
        self.table == other.table && self.unplaced == other.unplaced
    }
}

/// A compensated (Neumaier) sum: the sum of a group's few values to within an ulp, in 16 bytes.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
struct Compensated {
    sum: f64,
    err: f64,
}

impl Compensated {
    fn add(&mut self, v: f64) {
        let t = self.sum + v;
        self.err += if self.sum.abs() >= v.abs() {
            (self.sum - t) + v
        } else {
            (v - t) + self.sum
        };
        self.sum = t;
    }

    fn value(&self) -> f64 {
        self.sum + self.err
    }
}

/// One group's entry: its goals and, per measure, the sum of its goals' values.
#[derive(Clone, Debug, PartialEq)]
struct GroupEntry {
    goals: u64,
    sums: Vec<Compensated>,
}

/// The groups of a grouped summary.
#[derive(Clone, Debug)]
struct Groups {
    of: Arc<dyn Grouping>,
    table: hashbrown::HashMap<u32, GroupEntry>,
    /// Goals counted in `table`'s entries.
    goals: u64,
    /// The least by name of the goals of no group (their count: the goals evaluated but not
    /// in `goals`).
    least_ungrouped: Option<Box<[u8]>>,
}

impl PartialEq for Groups {
    fn eq(&self, other: &Groups) -> bool {
        self.table == other.table
            && self.goals == other.goals
            && self.least_ungrouped == other.least_ungrouped
    }
}

/// Partial aggregates of a set of goals. See the module documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    measures: Vec<Measure>,
    sums: Vec<ExactSum>,
    reached: Vec<u64>,
    kept: Vec<BTreeMap<u64, u64>>,
    counts: GoalCounts,
    pooled: Option<PooledCurve>,
    groups: Option<Groups>,
    strata: Option<Box<Strata>>,
}

/// A summary's contents, field by field: what an encoding writes and reads back
/// ([`Summary::state`], [`Summary::from_state`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryState {
    /// The measures, in plan order.
    pub measures: Vec<Measure>,
    /// Per measure: the exact sum of its values (of their logarithms for `GM_AP`).
    pub sums: Vec<ExactSum>,
    /// Per measure: goals with a value (`Depth`: goals that reached the level; `Covered`: goals
    /// where it is defined; else 0).
    pub reached: Vec<u64>,
    /// Per measure: `(depth, goals)` for `Depth`, ascending by depth, no zero counts (else empty).
    pub depths: Vec<Vec<(u64, u64)>>,
    /// Goal counts by fate.
    pub counts: GoalCounts,
}

/// Why two summaries cannot merge (or one cannot be retracted from another).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MergeError {
    /// Their measure sets differ.
    Measures,
    /// A count of the merge would pass 2^64 - 1: no real pair of summaries gets there.
    Overflow,
    /// [`Summary::retract`]: the summary retracted holds what the other does not.
    NotASubset,
    /// [`Summary::retract`]: one of the summaries keeps groups or strata, which a retraction
    /// does not take apart.
    Grouped,
}

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MergeError::Measures => "summaries of different measure sets cannot be merged",
            MergeError::Overflow => {
                "the merged goal counts would pass 2^64 - 1: the summaries' counts cannot be right"
            }
            MergeError::NotASubset => "the summary retracted holds goals the other does not",
            MergeError::Grouped => {
                "a summary of grouped or stratified goals cannot be retracted from another"
            }
        })
    }
}

impl std::error::Error for MergeError {}

impl Summary {
    /// An empty summary for `plan`'s measures.
    pub fn new(plan: &Plan) -> Self {
        let m = plan.measures().len();
        Summary {
            measures: plan.measures().to_vec(),
            sums: vec![ExactSum::new(); m],
            reached: vec![0; m],
            kept: vec![BTreeMap::new(); m],
            counts: GoalCounts::default(),
            pooled: plan.pooled().map(PooledSpec::curve),
            groups: plan.grouping().map(|of| Groups {
                of: of.clone(),
                table: hashbrown::HashMap::new(),
                goals: 0,
                least_ungrouped: None,
            }),
            strata: plan.strata().map(|of| {
                Box::new(Strata {
                    of: of.clone(),
                    table: BTreeMap::new(),
                    unplaced: BTreeMap::new(),
                    scratch: Vec::new(),
                })
            }),
        }
    }

    /// An empty summary of the same measures and grouping, of no pooled curve and no strata:
    /// a stratum's.
    fn blank(&self) -> Summary {
        let m = self.measures.len();
        Summary {
            measures: self.measures.clone(),
            sums: vec![ExactSum::new(); m],
            reached: vec![0; m],
            kept: vec![BTreeMap::new(); m],
            counts: GoalCounts::default(),
            pooled: None,
            groups: self.groups.as_ref().map(|g| Groups {
                of: g.of.clone(),
                table: hashbrown::HashMap::new(),
                goals: 0,
                least_ungrouped: None,
            }),
            strata: None,
        }
    }

    /// Adds `goal` (of group `group`) to the summaries of its strata (`empty`: evaluated as an
    /// empty ranking).
    fn add_to_strata(
        &mut self,
        goal: &[u8],
        group: Option<u32>,
        values: &GoalValues<'_>,
        empty: bool,
    ) {
        let Some(mut strata) = self.strata.take() else {
            return;
        };
        let mut scratch = std::mem::take(&mut strata.scratch);
        scratch.clear();
        strata.of.strata_of(goal, values.pooled().1, &mut scratch);
        for &placed in &scratch {
            let st = match placed {
                Placed::In(st) => st,
                Placed::Nowhere(key) => {
                    strata.unplaced.entry(key).or_default().add(goal);
                    continue;
                }
            };
            let sub = strata.table.entry(st).or_insert_with(|| self.blank());
            sub.add_here(goal, group, values);
            if empty {
                sub.counts.evaluated_empty += 1;
            }
        }
        strata.scratch = scratch;
        self.strata = Some(strata);
    }

    /// The summary of each stratum that holds a goal, labelled, in the strata's order; empty
    /// when the plan has no strata ([`crate::Plan::with_strata`]).
    pub fn strata(&self) -> Vec<(String, &Summary)> {
        let Some(s) = &self.strata else {
            return Vec::new();
        };
        (s.table.iter())
            .map(|(&st, sub)| (s.of.label(st), sub))
            .collect()
    }

    /// Whether the plan keeps strata ([`crate::Plan::with_strata`]).
    pub fn is_stratified(&self) -> bool {
        self.strata.is_some()
    }

    /// The pooled curve of the evaluated goals' ranked items, when the plan keeps one
    /// ([`crate::Plan::with_pooled`]). Summaries read back from their state do not hold it.
    pub fn pooled(&self) -> Option<&PooledCurve> {
        self.pooled.as_ref()
    }

    /// Adds the values of `goal`, evaluated (to its group's entry when the plan groups goals and
    /// `goal` has a group).
    pub fn add(&mut self, goal: &[u8], values: &GoalValues<'_>) {
        let group = self.group_of(goal);
        self.add_to_strata(goal, group, values, false);
        self.add_here(goal, group, values);
    }

    /// The group of `goal` when the plan groups goals.
    fn group_of(&self, goal: &[u8]) -> Option<u32> {
        self.groups.as_ref().and_then(|g| g.of.group_of(goal))
    }

    /// [`Summary::add`] of a goal of group `group` to this summary's own sums, not its strata.
    fn add_here(&mut self, goal: &[u8], group: Option<u32>, values: &GoalValues<'_>) {
        debug_assert_eq!(values.measures(), &self.measures[..]);
        self.counts.evaluated += 1;
        if let Some(curve) = &mut self.pooled {
            let (items, r) = values.pooled();
            let found = curve.add_keys(items);
            curve.add_unretrieved_relevant(r.saturating_sub(found));
        }
        if let Some(groups) = &mut self.groups {
            match group {
                Some(g) => {
                    let m = self.measures.len();
                    let entry = groups.table.entry(g).or_insert_with(|| GroupEntry {
                        goals: 0,
                        sums: vec![Compensated::default(); m],
                    });
                    entry.goals += 1;
                    groups.goals += 1;
                    for (sum, v) in entry.sums.iter_mut().zip(values.values()) {
                        if let Some(v) = v {
                            sum.add(*v);
                        }
                    }
                    return;
                }
                None => keep_least(&mut groups.least_ungrouped, goal),
            }
        }
        self.add_values(values.iter().map(|(_, v)| v));
    }

    /// Adds one goal's values (parallel to the measures) to the sums.
    fn add_values(&mut self, values: impl Iterator<Item = Option<f64>>) {
        for (i, v) in values.enumerate() {
            let Some(v) = v else { continue };
            match self.measures[i].aggregation() {
                Aggregation::Mean | Aggregation::Sum => self.sums[i].add(v),
                Aggregation::GeoMean => self.sums[i].add(v.max(GM_AP_FLOOR).ln()),
                Aggregation::Covered => {
                    self.sums[i].add(v);
                    self.reached[i] += 1;
                }
                Aggregation::Depth => {
                    self.sums[i].add(v);
                    self.reached[i] += 1;
                    *self.kept[i].entry(v as u64).or_insert(0) += 1;
                }
            }
        }
    }

    /// Adds an evaluated goal that had no predictions (counts it as [`GoalFate::EvaluatedEmpty`]).
    pub fn add_empty(&mut self, goal: &[u8], values: &GoalValues<'_>) {
        let group = self.group_of(goal);
        self.add_to_strata(goal, group, values, true);
        self.add_here(goal, group, values);
        self.counts.evaluated_empty += 1;
    }

    /// Counts a goal that was not evaluated.
    pub fn skip(&mut self, fate: GoalFate) {
        match fate {
            GoalFate::SkippedNoActual => self.counts.skipped_no_actual += 1,
            GoalFate::SkippedNoRelevant => self.counts.skipped_no_relevant += 1,
            GoalFate::SkippedNoPredictions => self.counts.skipped_no_predictions += 1,
            GoalFate::EvaluatedEmpty => self.counts.evaluated_empty += 1,
        }
    }

    /// Merges `other` (goals disjoint from this summary's) into `self`. Every count is added
    /// checked: a sum past `u64::MAX` (summaries read from files that claim absurd counts) is
    /// [`MergeError::Overflow`], and `self` is then unchanged.
    pub fn merge(&mut self, other: &Summary) -> Result<(), MergeError> {
        if self.measures != other.measures {
            return Err(MergeError::Measures);
        }
        let counts = (self.counts)
            .checked_plus(other.counts)
            .ok_or(MergeError::Overflow)?;
        let fits = (0..self.measures.len()).all(|i| {
            self.reached[i].checked_add(other.reached[i]).is_some()
                && (other.kept[i].iter()).all(|(d, &n)| {
                    self.kept[i]
                        .get(d)
                        .map_or(0, |&m| m)
                        .checked_add(n)
                        .is_some()
                })
        });
        if !fits {
            return Err(MergeError::Overflow);
        }
        for i in 0..self.measures.len() {
            self.sums[i].merge(&other.sums[i]);
            self.reached[i] += other.reached[i];
            for (&d, &n) in &other.kept[i] {
                *self.kept[i].entry(d).or_insert(0) += n;
            }
        }
        self.counts = counts;
        if let (Some(mine), Some(theirs)) = (&mut self.groups, &other.groups) {
            for (g, e) in &theirs.table {
                match mine.table.get_mut(g) {
                    Some(m) => {
                        m.goals += e.goals;
                        for (a, b) in m.sums.iter_mut().zip(&e.sums) {
                            a.add(b.sum);
                            a.add(b.err);
                        }
                    }
                    None => {
                        mine.table.insert(*g, e.clone());
                    }
                }
            }
            mine.goals += theirs.goals;
            if let Some(g) = &theirs.least_ungrouped {
                keep_least(&mut mine.least_ungrouped, g);
            }
        }
        if let (Some(mine), Some(theirs)) = (&mut self.strata, &other.strata) {
            for (st, sub) in &theirs.table {
                match mine.table.get_mut(st) {
                    Some(m) => m.merge(sub)?,
                    None => {
                        mine.table.insert(*st, sub.clone());
                    }
                }
            }
            for (key, u) in &theirs.unplaced {
                mine.unplaced.entry(*key).or_default().merge(u);
            }
        }
        match (&mut self.pooled, &other.pooled) {
            (Some(a), Some(b)) => a.merge(b),
            (None, Some(b)) => self.pooled = Some(b.clone()),
            _ => {}
        }
        Ok(())
    }

    /// Removes `other`, the summary of a subset of this summary's goals: the result is the
    /// summary of the other goals, exactly (sums, counts and depths). `MergeError` when the
    /// measures differ, either keeps groups or strata, or `other` holds what `self` does not
    /// (then `self` is unchanged).
    pub fn retract(&mut self, other: &Summary) -> Result<(), MergeError> {
        if self.measures != other.measures {
            return Err(MergeError::Measures);
        }
        let kept = |s: &Summary| s.groups.is_some() || s.strata.is_some();
        if kept(self) || kept(other) {
            return Err(MergeError::Grouped);
        }
        let counts = self.counts.checked_minus(other.counts);
        let depths_fit = (0..self.measures.len()).all(|i| {
            self.reached[i] >= other.reached[i]
                && other.kept[i]
                    .iter()
                    .all(|(d, &n)| self.kept[i].get(d).is_some_and(|&m| m >= n))
        });
        let (Some(counts), true) = (counts, depths_fit) else {
            return Err(MergeError::NotASubset);
        };
        for i in 0..self.measures.len() {
            self.sums[i].retract(&other.sums[i]);
            self.reached[i] -= other.reached[i];
            for (d, &n) in &other.kept[i] {
                let left = self.kept[i].get_mut(d).expect("checked");
                *left -= n;
                if *left == 0 {
                    self.kept[i].remove(d);
                }
            }
        }
        self.counts = counts;
        Ok(())
    }

    /// The contents, field by field.
    pub fn state(&self) -> SummaryState {
        SummaryState {
            measures: self.measures.clone(),
            sums: self.sums.clone(),
            reached: self.reached.clone(),
            depths: self
                .kept
                .iter()
                .map(|k| k.iter().map(|(&d, &n)| (d, n)).collect())
                .collect(),
            counts: self.counts,
        }
    }

    /// The largest depth a `Depth` histogram holds: a rank whose `f64` is exact.
    pub const MAX_DEPTH: u64 = 1 << 53;

    /// The summary holding `state`; `None` when it is inconsistent (lengths differ, a depth
    /// histogram for a measure without depths, counts that do not add up to `reached`, a goal
    /// count below a measure's, a depth of 0 or past [`Summary::MAX_DEPTH`], a histogram whose
    /// depths do not add up to the measure's sum).
    pub fn from_state(state: SummaryState) -> Option<Summary> {
        let m = state.measures.len();
        if state.sums.len() != m || state.reached.len() != m || state.depths.len() != m {
            return None;
        }
        let mut kept = Vec::with_capacity(m);
        for (i, depths) in state.depths.into_iter().enumerate() {
            let is_depth = state.measures[i].aggregation() == Aggregation::Depth;
            let covered = state.measures[i].aggregation() == Aggregation::Covered;
            let total = depths
                .iter()
                .try_fold(0u64, |t, &(_, n)| t.checked_add(n))?;
            let ascending = depths.windows(2).all(|w| w[0].0 < w[1].0);
            if !ascending
                || depths.iter().any(|&(_, n)| n == 0)
                || (!is_depth && !depths.is_empty())
                || (!is_depth && !covered && state.reached[i] != 0)
                || (is_depth && total != state.reached[i])
                || state.reached[i] > state.counts.evaluated
                || depths
                    .iter()
                    .any(|&(d, _)| d == 0 || d > Summary::MAX_DEPTH)
                || (is_depth && histogram_sum(&depths) != state.sums[i])
            {
                return None;
            }
            kept.push(depths.into_iter().collect());
        }
        if state.counts.evaluated_empty > state.counts.evaluated {
            return None;
        }
        Some(Summary {
            measures: state.measures,
            sums: state.sums,
            reached: state.reached,
            kept,
            counts: state.counts,
            pooled: None,
            groups: None,
            strata: None,
        })
    }

    /// The measures.
    pub fn measures(&self) -> &[Measure] {
        &self.measures
    }

    /// Goal counts by fate.
    pub fn counts(&self) -> GoalCounts {
        self.counts
    }

    /// Whether the plan groups goals ([`crate::Plan::with_grouping`]).
    pub fn is_grouped(&self) -> bool {
        self.groups.is_some()
    }

    /// When goals are grouped: the groups (a goal of no group counted as a group of its own)
    /// and the goals evaluated.
    pub fn group_counts(&self) -> Option<(u64, u64)> {
        let g = self.groups.as_ref()?;
        let singles = self.counts.evaluated - g.goals;
        Some((singles + g.table.len() as u64, self.counts.evaluated))
    }

    /// When goals are grouped: the goals evaluated that the grouping placed in no group, and
    /// the least of them by name (the same whatever the order of goals and merges).
    pub fn ungrouped(&self) -> Option<(u64, Option<&[u8]>)> {
        let g = self.groups.as_ref()?;
        Some((
            self.counts.evaluated - g.goals,
            g.least_ungrouped.as_deref(),
        ))
    }

    /// Per key that placed goals in none of its strata ([`Placed::Nowhere`]'s, ascending):
    /// how many, and the least of them by name (the same whatever the order of goals and
    /// merges). Empty when the plan has no strata.
    pub fn unplaced(&self) -> Vec<(u32, u64, &[u8])> {
        let Some(s) = &self.strata else {
            return Vec::new();
        };
        (s.unplaced.iter())
            .map(|(&k, u)| (k, u.goals, u.least.as_deref().unwrap_or_default()))
            .collect()
    }

    /// The summary in which every group entered as one goal of its means (see the module
    /// documentation); `None` when goals are not grouped.
    fn folded(&self) -> Option<Summary> {
        let g = self.groups.as_ref()?;
        let mut s = Summary {
            measures: self.measures.clone(),
            sums: self.sums.clone(),
            reached: self.reached.clone(),
            kept: self.kept.clone(),
            counts: self.counts,
            pooled: None,
            groups: None,
            strata: None,
        };
        s.counts.evaluated -= g.goals;
        let mut means = vec![None; self.measures.len()];
        for e in g.table.values() {
            for (i, (mean, sum)) in means.iter_mut().zip(&e.sums).enumerate() {
                *mean = Some(match self.measures[i].aggregation() {
                    Aggregation::Sum => sum.value(),
                    _ => sum.value() / e.goals as f64,
                });
            }
            s.counts.evaluated += 1;
            s.add_values(means.iter().copied());
        }
        Some(s)
    }

    /// The aggregate of measure `i`.
    pub fn aggregate(&self, i: usize) -> Aggregate {
        match self.folded() {
            Some(s) => s.aggregate_here(i),
            None => self.aggregate_here(i),
        }
    }

    /// The aggregate of measure `i` over the goals this summary's sums hold.
    fn aggregate_here(&self, i: usize) -> Aggregate {
        let goals = self.counts.evaluated;
        let mean = |sum: f64| if goals == 0 { 0.0 } else { sum / goals as f64 };
        match self.measures[i].aggregation() {
            Aggregation::Sum => Aggregate::Sum(self.sums[i].value()),
            Aggregation::Mean => Aggregate::Mean(mean(self.sums[i].value())),
            Aggregation::GeoMean => Aggregate::GeoMean(if goals == 0 {
                0.0
            } else {
                mean(self.sums[i].value()).exp()
            }),
            Aggregation::Covered => {
                let reached = self.reached[i];
                Aggregate::Covered {
                    mean: (reached > 0).then(|| self.sums[i].value() / reached as f64),
                    coverage: if goals == 0 {
                        0.0
                    } else {
                        reached as f64 / goals as f64
                    },
                    reached,
                }
            }
            Aggregation::Depth => {
                let reached = self.reached[i];
                let (mean_d, median) = if reached == 0 {
                    (None, None)
                } else {
                    // The values of 0-based positions `lo` and `hi` of the sorted depths.
                    let nth = |pos: u64| {
                        let mut before = 0;
                        for (&d, &n) in &self.kept[i] {
                            before += n;
                            if pos < before {
                                return d as f64;
                            }
                        }
                        unreachable!("the histogram holds `reached` goals")
                    };
                    let mid = reached / 2;
                    let median = if reached % 2 == 1 {
                        nth(mid)
                    } else {
                        (nth(mid - 1) + nth(mid)) / 2.0
                    };
                    (Some(self.sums[i].value() / reached as f64), Some(median))
                };
                Aggregate::Depth {
                    mean: mean_d,
                    median,
                    coverage: if goals == 0 {
                        0.0
                    } else {
                        reached as f64 / goals as f64
                    },
                    reached,
                }
            }
        }
    }

    /// Every `(measure, aggregate)`, in plan order.
    pub fn aggregates(&self) -> Vec<(Measure, Aggregate)> {
        let folded = self.folded();
        let s = folded.as_ref().unwrap_or(self);
        (0..self.measures.len())
            .map(|i| (self.measures[i], s.aggregate_here(i)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, GoalAccumulator, Label, Truth};
    use std::sync::Arc;

    /// A summary of `AP` and `Depth(recall=1.0)` over goals ranked `x a` (R = 1: depth 2, AP
    /// 1/2), `goals` of them.
    fn summary(goals: u64) -> (Arc<Plan>, Summary) {
        let ms = Measure::parse_all(["AP", "Depth(recall=1.0)"]).unwrap();
        let plan = Arc::new(Plan::new(&ms, Config::default()));
        let mut s = Summary::new(&plan);
        let mut acc = GoalAccumulator::new(plan.clone());
        for _ in 0..goals {
            acc.begin(&Truth::binary(1, 0));
            acc.push(Label::UNJUDGED);
            acc.push(Label::judged(1));
            s.add(b"g", &acc.finish().unwrap());
        }
        (plan, s)
    }

    /// Groups by a table of goal names.
    #[derive(Debug)]
    struct Table(Vec<(&'static [u8], u32)>);

    impl Grouping for Table {
        fn group_of(&self, goal: &[u8]) -> Option<u32> {
            self.0.iter().find(|(g, _)| *g == goal).map(|&(_, i)| i)
        }
    }

    /// Goals `(name, k)`, each with one relevant lemma ranked at `k` (AP = 1/k), added to
    /// summaries of `AP`, `NumRel` and `GM_AP` (one summary per part: goal `i` to part
    /// `part(i)`), grouped by `table` when given; the parts merged.
    fn grouped(goals: &[(&[u8], usize)], table: Option<Table>, parts: usize) -> Summary {
        let ms = Measure::parse_all(["AP", "NumRel", "GM_AP"]).unwrap();
        let mut plan = Plan::new(&ms, Config::default());
        if let Some(t) = table {
            plan = plan.with_grouping(Arc::new(t)).unwrap();
        }
        let plan = Arc::new(plan);
        let mut s: Vec<Summary> = (0..parts).map(|_| Summary::new(&plan)).collect();
        let mut acc = GoalAccumulator::new(plan.clone());
        for (i, &(goal, k)) in goals.iter().enumerate() {
            acc.begin(&Truth::binary(1, 0));
            for r in 1..=k {
                acc.push(if r == k {
                    Label::judged(1)
                } else {
                    Label::UNJUDGED
                });
            }
            s[(i * 7) % parts].add(goal, &acc.finish().unwrap());
        }
        let mut all = s.remove(0);
        for p in &s {
            all.merge(p).unwrap();
        }
        all
    }

    const GOALS: [(&[u8], usize); 7] = [
        (b"g1", 1),
        (b"g2", 2),
        (b"g3", 4),
        (b"g4", 1),
        (b"g5", 2),
        (b"g6", 3),
        (b"g7", 2),
    ];

    /// Groups of 1, 2 and 3 goals, and g7 in none.
    fn theorems() -> Table {
        Table(vec![
            (b"g1", 10),
            (b"g2", 20),
            (b"g3", 20),
            (b"g4", 30),
            (b"g5", 30),
            (b"g6", 30),
        ])
    }

    #[test]
    fn the_grouped_mean_is_the_mean_of_the_groups_means() {
        let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-15, "{a} != {b}");
        for parts in [1, 2, 3] {
            let s = grouped(&GOALS[..6], Some(theorems()), parts);
            // Groups: {g1} AP 1; {g2, g3} (1/2 + 1/4) / 2 = 3/8; {g4, g5, g6}
            // (1 + 1/2 + 1/3) / 3 = 11/18.
            assert_eq!(s.group_counts(), Some((3, 6)));
            assert_eq!(s.counts().evaluated, 6);
            let a = s.aggregates();
            close(
                a[0].1.headline().unwrap(),
                (1.0 + 3.0 / 8.0 + 11.0 / 18.0) / 3.0,
            );
            close(a[0].1.headline().unwrap(), 143.0 / 216.0);
            // A sum stays the sum over goals.
            assert_eq!(a[1].1, Aggregate::Sum(6.0));
            // The geometric mean of the groups' mean APs.
            close(
                a[2].1.headline().unwrap(),
                (3.0 / 8.0 * 11.0 / 18.0f64).cbrt(),
            );
            // g7, in no group, is a group of its own: (1 + 3/8 + 11/18 + 1/2) / 4 = 179/288.
            let s = grouped(&GOALS, Some(theorems()), parts);
            assert_eq!(s.group_counts(), Some((4, 7)));
            assert_eq!(s.ungrouped(), Some((1, Some(&b"g7"[..]))));
            close(s.aggregate(0).headline().unwrap(), 179.0 / 288.0);
            // Of goals g1..g7 in no group, the least by name is kept, whatever the parts.
            let none = Table(Vec::new());
            let mut backwards = GOALS;
            backwards.reverse();
            let s = grouped(&backwards, Some(none), parts);
            assert_eq!(s.ungrouped(), Some((7, Some(&b"g1"[..]))));
            assert_eq!(
                grouped(&GOALS[..6], Some(theorems()), parts).ungrouped(),
                Some((0, None))
            );
            // Ungrouped: (1 + 1/2 + 1/4 + 1 + 1/2 + 1/3 + 1/2) / 7.
            let flat = grouped(&GOALS, None, parts);
            assert_eq!(flat.group_counts(), None);
            close(flat.aggregate(0).headline().unwrap(), (49.0 / 12.0) / 7.0);
        }
    }

    #[test]
    fn every_goal_its_own_group_is_the_ungrouped_summary() {
        for parts in [1, 3] {
            let own = Table((0..).zip(GOALS).map(|(i, (g, _))| (g, i)).collect());
            let a = grouped(&GOALS, Some(own), parts);
            let b = grouped(&GOALS, None, parts);
            // Equal to the last bit.
            assert_eq!(a.aggregates(), b.aggregates());
            assert_eq!(a.counts(), b.counts());
            assert_eq!(a.group_counts(), Some((7, 7)));
        }
    }

    /// Strata by `R` (stratum `R`, shown `R=..`) and by a table of names (stratum `1 << 32 | i`,
    /// shown `half=x` or `half=y`; a goal not in it is in no such stratum).
    #[derive(Debug)]
    struct ByR(Vec<(&'static [u8], u64)>);

    impl Stratifier for ByR {
        fn strata_of(&self, goal: &[u8], relevant: u64, out: &mut Vec<Placed>) {
            out.push(Placed::In(relevant));
            out.push(match self.0.iter().find(|(g, _)| *g == goal) {
                Some(&(_, i)) => Placed::In(1 << 32 | i),
                None => Placed::Nowhere(1),
            });
        }
        fn label(&self, stratum: u64) -> String {
            match stratum >> 32 {
                0 => format!("R={stratum}"),
                _ => format!("half={}", ["x", "y"][(stratum & 0xffff_ffff) as usize]),
            }
        }
    }

    /// Goals `(name, ranks of the relevant lemmas)` (R = the ranks' count) added to summaries of
    /// `AP` and `NumRel` with strata [`ByR`] (goal `i` to part `i % parts`), grouped by `table`
    /// when given; the parts merged.
    fn stratified(goals: &[(&[u8], &[u64])], table: Option<Table>, parts: usize) -> Summary {
        let ms = Measure::parse_all(["AP", "NumRel"]).unwrap();
        let mut plan = Plan::new(&ms, Config::default());
        if let Some(t) = table {
            plan = plan.with_grouping(Arc::new(t)).unwrap();
        }
        let halves = ByR(vec![(b"a", 0), (b"c", 0), (b"b", 1), (b"d", 1)]);
        let plan = Arc::new(plan.with_strata(Arc::new(halves)));
        let mut s: Vec<Summary> = (0..parts).map(|_| Summary::new(&plan)).collect();
        let mut acc = GoalAccumulator::new(plan.clone());
        for (i, &(goal, ranks)) in goals.iter().enumerate() {
            acc.begin(&Truth::binary(ranks.len() as u64, 0));
            for r in 1..=ranks.iter().copied().max().unwrap_or(0) {
                acc.push(if ranks.contains(&r) {
                    Label::judged(1)
                } else {
                    Label::UNJUDGED
                });
            }
            s[i % parts].add(goal, &acc.finish().unwrap());
        }
        let mut all = s.remove(0);
        for p in &s {
            all.merge(p).unwrap();
        }
        all
    }

    #[test]
    fn goals_in_no_stratum_are_counted_with_the_least_name() {
        // The table places a, b, c, d; e, z, f are in no `half` stratum, whatever the parts and
        // the order they merge in.
        let goals: [(&[u8], &[u64]); 7] = [
            (b"z", &[1]),
            (b"a", &[1]),
            (b"f", &[2]),
            (b"b", &[1, 2]),
            (b"e", &[3]),
            (b"c", &[2, 4]),
            (b"d", &[1, 3, 5]),
        ];
        for parts in [1, 2, 3] {
            for reversed in [false, true] {
                let mut order = goals.to_vec();
                if reversed {
                    order.reverse();
                }
                let s = stratified(&order, None, parts);
                assert_eq!(s.unplaced(), [(1, 3, &b"e"[..])], "{parts} {reversed}");
                // Equal summaries whatever the order.
                assert_eq!(s, stratified(&goals, None, 1));
            }
        }
        // Retracting is refused with strata (or groups): it would not take them apart.
        let mut s = stratified(&goals, None, 1);
        let part = stratified(&goals[..2], None, 1);
        assert_eq!(s.retract(&part), Err(MergeError::Grouped));
        assert_eq!(s, stratified(&goals, None, 1));
    }

    #[test]
    fn each_stratum_is_the_summary_of_its_goals() {
        let close = |a: Option<f64>, b: f64| {
            let a = a.unwrap();
            assert!((a - b).abs() < 1e-15, "{a} != {b}")
        };
        // AP: a 1, b 1, c (1/2 + 2/4) / 2 = 1/2, d (1 + 2/3 + 3/5) / 3 = 34/45, e 1/4.
        let goals: [(&[u8], &[u64]); 5] = [
            (b"a", &[1]),
            (b"b", &[1, 2]),
            (b"c", &[2, 4]),
            (b"d", &[1, 3, 5]),
            (b"e", &[4]),
        ];
        for parts in [1, 2, 3] {
            let s = stratified(&goals, None, parts);
            close(s.aggregate(0).headline(), (2.5 + 34.0 / 45.0 + 0.25) / 5.0);
            let strata = s.strata();
            let labels: Vec<&str> = strata.iter().map(|(l, _)| l.as_str()).collect();
            assert_eq!(labels, ["R=1", "R=2", "R=3", "half=x", "half=y"]);
            let mean = |i: usize| strata[i].1.aggregate(0).headline();
            let sum = |i: usize| strata[i].1.aggregate(1);
            close(mean(0), (1.0 + 0.25) / 2.0);
            close(mean(1), (1.0 + 0.5) / 2.0);
            close(mean(2), 34.0 / 45.0);
            close(mean(3), (1.0 + 0.5) / 2.0);
            close(mean(4), (1.0 + 34.0 / 45.0) / 2.0);
            assert_eq!(
                [sum(0), sum(1), sum(2), sum(3), sum(4)],
                [2.0, 4.0, 3.0, 3.0, 5.0].map(Aggregate::Sum)
            );
            let goals_in = |i: usize| strata[i].1.counts().evaluated;
            assert_eq!([0, 1, 2, 3, 4].map(goals_in), [2, 2, 1, 2, 2]);
            assert!(strata.iter().all(|(_, t)| t.strata().is_empty()));
            // Grouped: b and c one theorem, so R=2 is one group of mean 3/4 and half=x
            // ({a}, {c}) two groups.
            let g = stratified(&goals, Some(Table(vec![(b"b", 1), (b"c", 1)])), parts);
            let gs = g.strata();
            assert_eq!(gs[1].1.group_counts(), Some((1, 2)));
            close(gs[1].1.aggregate(0).headline(), 0.75);
            assert_eq!(gs[3].1.group_counts(), Some((2, 2)));
            close(gs[4].1.aggregate(0).headline(), (1.0 + 34.0 / 45.0) / 2.0);
            // The whole: {a}, {b, c}, {d}, {e}.
            close(
                g.aggregate(0).headline(),
                (1.0 + 0.75 + 34.0 / 45.0 + 0.25) / 4.0,
            );
        }
    }

    #[test]
    fn depth_measures_have_no_group_mean() {
        let ms = Measure::parse_all(["AP", "Depth(recall=1.0)"]).unwrap();
        let plan = Plan::new(&ms, Config::default());
        assert_eq!(plan.with_grouping(Arc::new(theorems())).err(), Some(ms[1]));
    }

    #[test]
    fn counts_past_u64_max_are_refused_and_leave_the_summary_as_it_was() {
        let (_, s) = summary(3);
        let mut st = s.state();
        st.counts.skipped_no_actual = u64::MAX - 1;
        let big = Summary::from_state(st).unwrap();
        let mut a = big.clone();
        assert_eq!(a.merge(&big), Err(MergeError::Overflow));
        assert_eq!(a, big);
        // Near the top, with its depth histogram (consistent: its sum is 2·(2^64 - 2)), merged
        // with three goals more.
        let mut st = s.state();
        st.counts.evaluated = u64::MAX - 1;
        st.reached[1] = u64::MAX - 1;
        st.depths[1] = vec![(2, u64::MAX - 1)];
        st.sums[1] = histogram_sum(&st.depths[1]);
        assert_eq!(st.sums[1].value(), 2.0 * (u64::MAX - 1) as f64);
        let deep = Summary::from_state(st).unwrap();
        let (mut a, small) = (deep.clone(), s.clone());
        assert_eq!(a.merge(&small), Err(MergeError::Overflow));
        assert_eq!(a, deep);
        let mut one = s.clone();
        assert!(one.merge(&s).is_ok());
        assert_eq!(one.counts().evaluated, 6);
        assert_eq!(one.aggregate(0), Aggregate::Mean(0.5));
    }

    #[test]
    fn histograms_must_hold_the_depths_their_sum_holds() {
        let (_, s) = summary(3);
        let st = s.state();
        assert_eq!(st.depths[1], [(2, 3)]);
        assert!(Summary::from_state(st.clone()).is_some());
        for bad in [
            vec![(3, 3)],         // the sum is 6, not 9
            vec![(1, 1), (2, 2)], // 5, not 6
            vec![(0, 3)],         // no depth is 0
            vec![(u64::MAX, 3)],  // nor past 2^53
            vec![(6, 1), (0, 2)], // out of order, and a 0
        ] {
            let mut st = st.clone();
            st.depths[1] = bad.clone();
            assert!(Summary::from_state(st).is_none(), "{bad:?}");
        }
        // Another histogram of the same sum and goals is read: (1, 1), (2, 1), (3, 1).
        let mut st = st.clone();
        st.depths[1] = vec![(1, 1), (2, 1), (3, 1)];
        assert!(Summary::from_state(st).is_some());
    }
}
