//! Everything that decides the numbers: [`EvalOptions`] and the ranking options.

use lemma_accum::{trec_cmp, Config, Interpolation, Measure, Plan, Ties, Truth};
use lemma_ingest::Format;
use std::cmp::Ordering;
use std::sync::Arc;

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
    /// Tie groups: no measure depends on the order of equal scores (docs/METRICS.md §2:
    /// threshold measures see group ends, counts at a cutoff take their expected value).
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
    /// Group the predictions' lines by goal first (goals need not be contiguous): sorted by goal
    /// in natural order, in memory or on disk within [`EvalOptions::spill`]'s budget.
    pub regroup: bool,
    /// The memory budget of what must be sorted or held (`--memory`), and where temporary files
    /// go beyond it.
    pub spill: lemma_ingest::SpillOptions,
    /// Round scores to f32 before ordering (trec_eval 9.0.8).
    pub f32_scores: bool,
    /// Worker threads (at least 1).
    pub threads: usize,
    /// Target batch size in bytes.
    pub batch_bytes: usize,
    /// Universe size for AUC.
    pub universe: Option<u64>,
    /// The pooled curve the summary keeps, if any ([`crate::pooled`]).
    pub pooled: Option<lemma_accum::PooledSpec>,
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
            spill: lemma_ingest::SpillOptions::default(),
            f32_scores: false,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            batch_bytes: 4 << 20,
            universe: None,
            pooled: None,
        }
    }
}

impl EvalOptions {
    /// Whether a goal with truth `t` is skipped for having no relevant lemma.
    pub(crate) fn skips_no_relevant(&self, t: &Truth<'_>) -> bool {
        t.counts(self.relevance_level).0 == 0 && self.zero_rel == ZeroRelMode::Skip
    }
}

/// The compiled plan for `opts` (the measures and the options that change numbers).
pub fn plan_for(opts: &EvalOptions) -> Arc<Plan> {
    let plan = Plan::new(
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
    );
    Arc::new(match &opts.pooled {
        Some(p) => plan.with_pooled(p.clone()),
        None => plan,
    })
}
