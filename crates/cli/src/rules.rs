//! The arguments that decide a goal's numbers, declared once for every command that evaluates:
//! relevance, ranking and interpolation ([`Rules`]), with the threads ([`Scoring`]).

use crate::parsers::{choice, parse_threads};
use clap::Args;
use lemma_accum::Interpolation;
use lemma_eval::{DuplicateMode, Evaluator, OrderMode, RankingOptions, TieMode};

/// What decides a goal's numbers, for every command that evaluates: relevance, ranking,
/// interpolation.
#[derive(Args)]
pub(crate) struct Rules {
    /// A lemma is relevant when its grade is at least this.
    #[arg(
        long = "relevance-level",
        default_value_t = 1,
        allow_negative_numbers = true
    )]
    pub(crate) relevance_level: i32,
    #[command(flatten)]
    pub(crate) ranking: RankingArgs,
    /// Relevant count needed at a recall level (IPrec, AP11, the macro curve).
    #[arg(long, value_parser = choice::<Interpolation>(), default_value = "textbook")]
    pub(crate) interpolation: Interpolation,
}

impl Rules {
    /// `b` with these rules.
    pub(crate) fn apply(&self, b: lemma_eval::EvaluatorBuilder) -> lemma_eval::EvaluatorBuilder {
        b.relevance_level(self.relevance_level)
            .interpolation(self.interpolation)
            .ranking((&self.ranking).into())
    }
}

/// What decides the numbers of `curve`, `report` and `compare`: the rules and the threads.
#[derive(Args)]
pub(crate) struct Scoring {
    #[command(flatten)]
    pub(crate) rules: Rules,
    /// Worker threads, 1 to 1024 (default: all cores), also those that read the actual sets.
    #[arg(long, value_parser = parse_threads)]
    pub(crate) threads: Option<usize>,
}

impl Scoring {
    /// Worker threads: as given, or all cores.
    pub(crate) fn threads(&self) -> usize {
        self.threads.unwrap_or_else(lemma_eval::default_threads)
    }

    /// An evaluator's builder with these settings (measures to be named).
    pub(crate) fn builder(&self) -> lemma_eval::EvaluatorBuilder {
        self.rules
            .apply(Evaluator::builder())
            .threads(self.threads())
    }
}

/// How each goal's ranking is formed from its lines (shared by `eval` and `convert`).
#[derive(Args)]
pub(crate) struct RankingArgs {
    /// Evaluate (or keep) only the first N lemmas of each goal, after ordering.
    #[arg(long)]
    pub(crate) depth: Option<u64>,
    /// Ranking order (default: score for TREC runs, file for JSONL).
    #[arg(long, value_parser = choice::<OrderMode>())]
    pub(crate) order: Option<OrderMode>,
    /// Equal scores under score order.
    #[arg(long, value_parser = choice::<TieMode>(), default_value = "trec")]
    pub(crate) ties: TieMode,
    /// A lemma repeated in one goal.
    #[arg(long, value_parser = choice::<DuplicateMode>(), default_value = "first")]
    pub(crate) duplicates: DuplicateMode,
}

impl From<&RankingArgs> for RankingOptions {
    fn from(a: &RankingArgs) -> RankingOptions {
        let mut r = RankingOptions::default();
        r.order = a.order;
        r.ties = a.ties;
        r.duplicates = a.duplicates;
        r.depth = a.depth;
        r
    }
}
