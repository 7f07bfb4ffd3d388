//! A [`Plan`]: a measure list compiled once into the crossings the accumulator must watch.
//!
//! Every cutoff of every measure becomes one slot in a sorted array (`P@10`, `R@10` and `AP@10`
//! share the slot for 10); every recall level becomes a level slot; every score threshold a
//! threshold slot. Per goal, the accumulator records its state when the ranking crosses a slot, so
//! the cost of a measure set is paid at relevant items and at crossings, not at every item.

use crate::measure::{Aggregation, Measure};
use crate::measures::{LevelNeed, Needs, WalkNeed};

/// How many relevant items a recall level `r` requires, for interpolated precision (METRICS.md §8).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Interpolation {
    /// `ceil(r * R - 1e-9)`: the textbook `r(k) >= r` (METRICS.md §1). The default.
    #[default]
    Textbook,
    /// trec_eval 10.0: `lround(r * R)`.
    Trec10,
    /// trec_eval 9.0.8 (pytrec_eval, ir_measures): `(long)(r * R + 0.9)`.
    Trec9,
}

impl Interpolation {
    /// The number of relevant items level `r` requires, for `R` relevant.
    pub fn need(self, r: f64, num_rel: u64) -> u64 {
        let x = r * num_rel as f64;
        match self {
            Interpolation::Textbook => (x - 1e-9).ceil().max(0.0) as u64,
            Interpolation::Trec10 => x.round() as u64,
            Interpolation::Trec9 => (x + 0.9) as u64,
        }
    }
}

/// How items with equal scores are credited (METRICS.md §2).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Ties {
    /// The arrival order is the ranking (file order, or trec order after [`crate::TrecOrder`]).
    #[default]
    Given,
    /// Equal scores form one tie group whose inner order is unknown, and no measure depends on it
    /// (docs/METRICS.md §2): threshold measures (AP, AP@k pro rata, IPrec, AP11, P(recall),
    /// Depth) credit each relevant item the precision at its group's end (scikit-learn's
    /// convention); counts at a cutoff inside a group (P, R, Rprec, Success, F, E, DCG) and RR take
    /// their expected value over the group's orderings; Bpref and AUC count a tied non-relevant
    /// item as half above. Items arrive in non-increasing score order through
    /// [`crate::GoalAccumulator::push_scored`]; a group costs O(its size) when it closes.
    Group,
}

/// Options that change numbers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// An item is relevant when its grade is `>= relevance_level` (default 1). `nDCG` ignores it,
    /// as trec_eval's `ndcg` does: every positive grade is a gain.
    pub relevance_level: i32,
    /// The relevant count a recall level needs for `IPrec@r` and `AP11`.
    pub interpolation: Interpolation,
    /// The tie policy.
    pub ties: Ties,
    /// trec_eval's `-J`: only the judged items (grade `>= 0`) are ranked; the others (not in
    /// the actual set, or graded negative) are dropped before ranks are given.
    pub judged_only: bool,
    /// trec_eval's `-N`: the collection's size, which `Utility`'s fourth cell reads (0: unknown,
    /// trec_eval's default).
    pub collection_size: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            relevance_level: 1,
            interpolation: Interpolation::Textbook,
            ties: Ties::Given,
            judged_only: false,
            collection_size: 0,
        }
    }
}

/// Which requirement a level slot uses.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum LevelRule {
    /// `c(r)` of METRICS.md §1 (Depth, P(recall=r)).
    Textbook,
    /// The configured [`Interpolation`] (IPrec, AP11).
    Interpolated,
}

/// Where a measure reads its inputs from: the records its [`Needs`] asked for.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct Slot {
    /// Index into the plan's cutoffs.
    pub cut: Option<usize>,
    /// Index into the plan's levels (the first of eleven for AP11).
    pub level: Option<usize>,
    /// Index into the plan's thresholds.
    pub threshold: Option<usize>,
    /// Index into the plan's leak cutoffs.
    pub leak: Option<usize>,
    /// Index into the plan's walk needs.
    pub walk: Option<usize>,
}

/// A compiled measure set. Build it once; share it (it is `Sync`) between accumulators.
#[derive(Clone, Debug)]
pub struct Plan {
    pub(crate) measures: Vec<Measure>,
    pub(crate) config: Config,
    /// Sorted, distinct cutoffs.
    pub(crate) cutoffs: Vec<u64>,
    /// Level slots: (r, rule), distinct.
    pub(crate) levels: Vec<(f64, LevelRule)>,
    pub(crate) thresholds: Vec<f64>,
    pub(crate) slots: Vec<Slot>,
    pub(crate) needs_scores: bool,
    pub(crate) needs_ndcg: bool,
    /// Sorted, distinct cutoffs of `Leak@k`.
    pub(crate) leak_cutoffs: Vec<u64>,
    /// Whether a measure reads the unmasked ranking (`Leak@k`, `LeakRank`).
    pub(crate) needs_leaks: bool,
    /// Whether `LeakRank` is asked for.
    pub(crate) needs_leak_rank: bool,
    /// Whether a measure reads the relevant premises' origins (`R(origin=...)@k`).
    pub(crate) needs_origins: bool,
    /// What the walk over the judged items keeps (crate::walk), distinct.
    pub(crate) walk: Vec<WalkNeed>,
    /// The pooled curve the summaries keep ([`Plan::with_pooled`]).
    pub(crate) pooled: Option<crate::PooledSpec>,
    /// How goals are grouped for the summary ([`Plan::with_grouping`]).
    pub(crate) grouping: Option<std::sync::Arc<dyn crate::Grouping>>,
    /// The strata whose summaries the plan's summaries keep besides the whole
    /// ([`Plan::with_strata`]).
    pub(crate) strata: Option<std::sync::Arc<dyn crate::Stratifier>>,
}

impl Plan {
    /// Compiles `measures` (duplicates removed, order kept) under `config`.
    pub fn new(measures: &[Measure], config: Config) -> Plan {
        let mut ms: Vec<Measure> = Vec::with_capacity(measures.len());
        for m in measures {
            if !ms.contains(m) {
                ms.push(*m);
            }
        }
        let needs: Vec<Needs> = ms.iter().map(Measure::needs).collect();
        let mut cutoffs: Vec<u64> = Vec::new();
        let mut levels: Vec<(f64, LevelRule)> = Vec::new();
        let mut thresholds: Vec<f64> = Vec::new();
        let mut slots: Vec<Slot> = vec![Slot::default(); ms.len()];
        // First pass: collect cutoffs (sorted later) and levels / thresholds (indices are final).
        for (need, slot) in needs.iter().zip(&mut slots) {
            if let Some(k) = need.cutoff {
                cutoffs.push(k as u64);
            }
            slot.level = match need.level {
                LevelNeed::None => None,
                LevelNeed::One(r, rule) => Some(
                    match levels.iter().position(|&(x, ru)| x == r && ru == rule) {
                        Some(i) => i,
                        None => {
                            levels.push((r, rule));
                            levels.len() - 1
                        }
                    },
                ),
                LevelNeed::Eleven => {
                    // Eleven consecutive slots, so that AP11 can read them as a run.
                    let first = levels.len();
                    for j in 0..=10 {
                        levels.push((j as f64 / 10.0, LevelRule::Interpolated));
                    }
                    Some(first)
                }
                LevelNeed::Run(run) => {
                    // The levels in the order given, then 0.0: consecutive slots.
                    let first = levels.len();
                    for &x in run.iter().chain([&0.0]) {
                        levels.push((x, LevelRule::Interpolated));
                    }
                    Some(first)
                }
            };
            slot.threshold =
                need.threshold
                    .map(|t| match thresholds.iter().position(|&x| x == t) {
                        Some(j) => j,
                        None => {
                            thresholds.push(t);
                            thresholds.len() - 1
                        }
                    });
        }
        cutoffs.sort_unstable();
        cutoffs.dedup();
        let mut leak_cutoffs: Vec<u64> =
            needs.iter().filter_map(|n| n.leak).map(u64::from).collect();
        leak_cutoffs.sort_unstable();
        leak_cutoffs.dedup();
        for (need, slot) in needs.iter().zip(&mut slots) {
            slot.cut = need.cutoff.map(|k| {
                cutoffs
                    .binary_search(&(k as u64))
                    .expect("cutoff collected")
            });
            slot.leak = need.leak.map(|k| {
                leak_cutoffs
                    .binary_search(&(k as u64))
                    .expect("leak cutoff collected")
            });
        }
        let mut walk: Vec<WalkNeed> = Vec::new();
        for (need, slot) in needs.iter().zip(&mut slots) {
            slot.walk = need.walk.map(|w| match walk.iter().position(|&x| x == w) {
                Some(i) => i,
                None => {
                    walk.push(w);
                    walk.len() - 1
                }
            });
        }
        let needs_leak_rank = needs.iter().any(|n| n.leak_rank);
        let needs_leaks = needs_leak_rank || !leak_cutoffs.is_empty();
        let needs_scores =
            needs.iter().any(|n| n.threshold.is_some()) || config.ties == Ties::Group;
        let needs_ndcg = needs.iter().any(|n| n.ideal_dcg);
        let needs_origins = needs.iter().any(|n| n.origin);
        Plan {
            measures: ms,
            config,
            cutoffs,
            levels,
            thresholds,
            slots,
            needs_scores,
            needs_ndcg,
            leak_cutoffs,
            needs_leaks,
            needs_leak_rank,
            needs_origins,
            walk,
            pooled: None,
            grouping: None,
            strata: None,
        }
    }

    /// The plan, with every summary of its goals averaging over groups ([`crate::Grouping`]):
    /// the summary's mean of a measure is the mean over groups of each group's mean. An error
    /// naming the first measure whose aggregate is no mean of goal values (`Depth(recall=r)`,
    /// `LeakRank`: a median and a coverage over goals; `R(origin=...)@k`: a mean over the goals
    /// where it is defined).
    pub fn with_grouping(
        mut self,
        grouping: std::sync::Arc<dyn crate::Grouping>,
    ) -> Result<Plan, Measure> {
        let no_mean =
            |m: &&Measure| matches!(m.aggregation(), Aggregation::Depth | Aggregation::Covered);
        if let Some(m) = self.measures.iter().find(no_mean) {
            return Err(*m);
        }
        self.grouping = Some(grouping);
        Ok(self)
    }

    /// How goals are grouped, if they are.
    pub fn grouping(&self) -> Option<&std::sync::Arc<dyn crate::Grouping>> {
        self.grouping.as_ref()
    }

    /// The plan, with every summary of its goals keeping a summary of each stratum
    /// ([`crate::Stratifier`]) besides the whole: the same measures, the same grouping.
    pub fn with_strata(mut self, strata: std::sync::Arc<dyn crate::Stratifier>) -> Plan {
        self.strata = Some(strata);
        self
    }

    /// The strata the plan's summaries keep, if any.
    pub fn strata(&self) -> Option<&std::sync::Arc<dyn crate::Stratifier>> {
        self.strata.as_ref()
    }

    /// The plan, with every summary of its goals keeping the pooled curve of their ranked items
    /// (METRICS.md §5) as `spec` says: items are then pushed with scores.
    pub fn with_pooled(mut self, spec: crate::PooledSpec) -> Plan {
        self.pooled = Some(spec);
        self.needs_scores = true;
        self
    }

    /// How summaries of this plan keep the pooled curve, if they do.
    pub fn pooled(&self) -> Option<&crate::PooledSpec> {
        self.pooled.as_ref()
    }

    /// The measures, in the order values are reported.
    pub fn measures(&self) -> &[Measure] {
        &self.measures
    }

    /// The options the plan was built with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether a measure counts the items scored at or above a threshold.
    pub fn has_thresholds(&self) -> bool {
        !self.thresholds.is_empty()
    }

    /// Whether a measure reads the unmasked ranking (`Leak@k`, `LeakRank`): the caller then tells
    /// the accumulator of each item of it, accessible or not
    /// ([`crate::GoalAccumulator::push_unmasked`]), and needs the corpus to.
    pub fn needs_leaks(&self) -> bool {
        self.needs_leaks
    }

    /// Whether a measure reads the origins of the relevant premises (`R(origin=in-file)@k`,
    /// `R(origin=imported)@k`): the caller then gives each goal's counts of relevant premises by
    /// origin ([`crate::Truth::with_origins`]) and the origin of each judged item before pushing
    /// it ([`crate::GoalAccumulator::set_origin`]), and needs the corpus to.
    pub fn needs_origins(&self) -> bool {
        self.needs_origins
    }

    /// The largest `Leak@k` cutoff (0 without one): how much of the unmasked ranking's head
    /// [`crate::GoalAccumulator::evaluate_ranks_leaking`] needs.
    pub fn max_leak_cutoff(&self) -> u64 {
        self.leak_cutoffs.last().copied().unwrap_or(0)
    }

    /// Whether `LeakRank` is asked for.
    pub fn needs_leak_rank(&self) -> bool {
        self.needs_leak_rank
    }

    /// Whether items must be pushed with scores ([`crate::GoalAccumulator::push_scored`]): score
    /// thresholds or tie groups.
    pub fn needs_scores(&self) -> bool {
        self.needs_scores
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation_rules_differ_where_metrics_md_says() {
        // 0.7 * 10 = 7.000000000000001 in f64: the tolerance keeps it at 7.
        assert_eq!(Interpolation::Textbook.need(0.7, 10), 7);
        assert_eq!(Interpolation::Textbook.need(0.1, 3), 1);
        assert_eq!(Interpolation::Textbook.need(0.0, 3), 0);
        assert_eq!(Interpolation::Trec10.need(0.1, 3), 0); // lround(0.3)
        assert_eq!(Interpolation::Trec10.need(0.5, 3), 2); // lround(1.5) rounds away from zero
        assert_eq!(Interpolation::Trec9.need(0.1, 3), 1); // (long)(0.3 + 0.9)
        assert_eq!(Interpolation::Trec9.need(0.4, 3), 2); // (long)(1.2 + 0.9)
        assert_eq!(Interpolation::Textbook.need(0.4, 3), 2); // ceil(1.2)
        assert_eq!(Interpolation::Trec9.need(1.0, 3), 3);
    }

    #[test]
    fn judged_only_ranks_the_judged_items_alone() {
        use crate::{GoalAccumulator, Label, Truth};
        // Ranking: unjudged, 0, -1, 1, unjudged, 2 with grades {2, 1, 0, -1}, R = 2. Judged
        // only: 0, 1, 2 at ranks 1, 2, 3: AP = (1/2 + 2/3) / 2, n = 3. The dense path agrees.
        let ms = Measure::parse_all(["AP", "NumRet", "P@2"]).unwrap();
        let config = Config {
            judged_only: true,
            ..Config::default()
        };
        let plan = std::sync::Arc::new(Plan::new(&ms, config));
        let grades = [2, 1, 0, -1];
        let truth = Truth::graded(&grades).unwrap();
        let labels = [-9, 0, -1, 1, -9, 2].map(|g| match g {
            -9 => Label::UNJUDGED,
            g => Label::judged(g),
        });
        let want = [Some((0.5 + 2.0 / 3.0) / 2.0), Some(3.0), Some(0.5)];
        let mut acc = GoalAccumulator::new(plan.clone());
        acc.begin(&truth);
        acc.push_labels(&labels);
        assert_eq!(acc.finish().unwrap().values(), want);
        acc.begin(&truth);
        for l in labels {
            acc.push_scored(l, 1.0).unwrap();
        }
        assert_eq!(acc.finish().unwrap().values(), want);
        let judged = [(2, 0), (3, -1), (4, 1), (6, 2)];
        let v = acc.evaluate_ranks(&truth, 6, judged).unwrap();
        assert_eq!(v.values(), want);
    }

    #[test]
    fn cutoffs_are_shared_and_sorted() {
        let ms = Measure::parse_all(["P@10", "R@10", "AP@100", "P@1", "nDCG@10", "RR"]).unwrap();
        let plan = Plan::new(&ms, Config::default());
        assert_eq!(plan.cutoffs, vec![1, 10, 100]);
        assert!(!plan.needs_scores());
    }
}
