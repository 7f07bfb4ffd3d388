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
    /// The premise-selection protocol: the corpus, the goals' places, `--mask` (docs/METRICS.md
    /// §9). Needed by `Leak@k` and `LeakRank`.
    pub premises: Option<Arc<crate::Premises>>,
    /// `--group-by`: the summary's means over groups of goals.
    pub group_by: Option<Arc<crate::GroupBy>>,
    /// `--by`: a summary per stratum of goals besides the whole.
    pub strata: Option<Arc<crate::Strata>>,
    /// trec_eval's `-J`: only judged lemmas (grade `>= 0`) are ranked ([`lemma_accum::Config`]).
    /// Not recorded in summaries: an evaluation with it writes none.
    pub judged_only: bool,
    /// trec_eval's `-N`: the collection's size, read by `Utility` (0: unknown). Not recorded in
    /// summaries: an evaluation with it writes none.
    pub collection_size: u64,
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
            threads: default_threads(),
            batch_bytes: 4 << 20,
            universe: None,
            pooled: None,
            premises: None,
            group_by: None,
            strata: None,
            judged_only: false,
            collection_size: 0,
        }
    }
}

impl EvalOptions {
    /// Whether a goal with truth `t` is skipped for having no relevant lemma.
    pub(crate) fn skips_no_relevant(&self, t: &Truth<'_>) -> bool {
        t.counts(self.relevance_level).0 == 0 && self.zero_rel == ZeroRelMode::Skip
    }

    /// Whether an evaluation under these options has a summary that travels (a
    /// [`crate::Partial`]): not with `-J`, `-N`, groups or strata, which a summary file does not
    /// record (making one is then an error saying which).
    pub fn summary_travels(&self) -> bool {
        !self.judged_only
            && self.collection_size == 0
            && self.group_by.is_none()
            && !self.strata.as_ref().is_some_and(|s| s.stratifies())
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
            judged_only: opts.judged_only,
            collection_size: opts.collection_size,
        },
    );
    let plan = match &opts.pooled {
        Some(p) => plan.with_pooled(p.clone()),
        None => plan,
    };
    // A plan that cannot be grouped (a Depth measure) is refused when the job opens.
    let plan = match &opts.group_by {
        Some(g) => plan.clone().with_grouping(g.clone()).unwrap_or(plan),
        None => plan,
    };
    Arc::new(match &opts.strata {
        Some(s) if s.stratifies() => plan.with_strata(s.clone()),
        _ => plan,
    })
}

/// An option whose value is one of a few words, as the command line (`--ties group`) and the
/// Python package (`ties="group"`) spell it: the words and their meaning are listed once, here,
/// and both doors parse through [`Choice::parse`].
pub trait Choice: Copy + PartialEq + Sized + 'static {
    /// The option's name, as the Python package spells it (`ties`); the command's flag is the
    /// same with dashes (`--ties`).
    const OPTION: &'static str;
    /// Every value: its word, what it means, and the value.
    const VALUES: &'static [(&'static str, &'static str, Self)];

    /// The value `word` names, or an error listing the words.
    fn parse(word: &str) -> Result<Self, String> {
        Self::VALUES
            .iter()
            .find(|(w, _, _)| *w == word)
            .map(|&(_, _, v)| v)
            .ok_or_else(|| {
                let words: Vec<String> = Self::VALUES
                    .iter()
                    .map(|(w, _, _)| format!("\"{w}\""))
                    .collect();
                format!("{}={word:?}: expected {}", Self::OPTION, words.join(", "))
            })
    }

    /// The word for `self`.
    fn word(self) -> &'static str {
        Self::VALUES
            .iter()
            .find(|(_, _, v)| *v == self)
            .map(|&(w, _, _)| w)
            .expect("every value is listed")
    }
}

impl Choice for OrderMode {
    const OPTION: &'static str = "order";
    const VALUES: &'static [(&'static str, &'static str, Self)] = &[
        (
            "score",
            "score descending (TREC runs' default)",
            OrderMode::Score,
        ),
        (
            "file",
            "as the lemmas come (JSONL's default)",
            OrderMode::File,
        ),
    ];
}

impl Choice for TieMode {
    const OPTION: &'static str = "ties";
    const VALUES: &'static [(&'static str, &'static str, Self)] = &[
        (
            "trec",
            "equal scores ranked by lemma name, descending (trec_eval)",
            TieMode::Trec,
        ),
        (
            "group",
            "tie groups: no measure depends on the order of equal scores",
            TieMode::Group,
        ),
        ("file", "equal scores keep their file order", TieMode::File),
    ];
}

impl Choice for DuplicateMode {
    const OPTION: &'static str = "duplicates";
    const VALUES: &'static [(&'static str, &'static str, Self)] = &[
        (
            "first",
            "a lemma repeated in a goal: the first counts",
            DuplicateMode::First,
        ),
        (
            "error",
            "a lemma repeated in a goal: an error",
            DuplicateMode::Error,
        ),
    ];
}

impl Choice for MissingMode {
    const OPTION: &'static str = "missing";
    const VALUES: &'static [(&'static str, &'static str, Self)] = &[
        (
            "zero",
            "goals without predictions evaluated as empty (every measure 0)",
            MissingMode::Zero,
        ),
        (
            "skip",
            "goals without predictions left out",
            MissingMode::Skip,
        ),
    ];
}

impl Choice for Interpolation {
    const OPTION: &'static str = "interpolation";
    const VALUES: &'static [(&'static str, &'static str, Self)] = &[
        (
            "textbook",
            "a recall level r needs ceil(r R) relevant lemmas",
            Interpolation::Textbook,
        ),
        (
            "trec10",
            "trec_eval 10.0: lround(r R)",
            Interpolation::Trec10,
        ),
        (
            "trec9",
            "trec_eval 9.0.8: (long)(r R + 0.9)",
            Interpolation::Trec9,
        ),
    ];
}

/// The most worker threads any evaluation takes (`--threads`, `threads=`): more is refused, not
/// tried (each thread holds buffers of a few MiB).
pub const MAX_THREADS: usize = 1024;

pub use lemma_par::default_threads;

/// A thread count as given (`--threads N`, `threads=N`): at least 1 and at most [`MAX_THREADS`],
/// or an error saying so.
pub fn check_threads(n: i128) -> Result<usize, String> {
    match usize::try_from(n) {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(format!(
            "threads={n}: expected 1 to {MAX_THREADS} worker threads (this machine has {} cores)",
            default_threads()
        )),
    }
}

/// A memory size as the command (`--memory 1.5G`) and the Python package (`memory="1.5G"`)
/// take it: `512M`, `2G`, `1.5G`, `64K` (binary units) or a number of bytes.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (num, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => (&t[..i], t[i..].to_ascii_uppercase()),
        None => (t, String::new()),
    };
    let scale: u64 = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => return Err(format!("`{s}`: expected a size such as 512M, 2G or 1.5G")),
    };
    let n: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}`: expected a size such as 512M, 2G or 1.5G"))?;
    if !(n.is_finite() && n > 0.0) {
        return Err(format!("`{s}`: expected a positive size"));
    }
    Ok((n * scale as f64).min(usize::MAX as f64) as usize)
}
