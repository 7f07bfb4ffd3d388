//! The premise-selection arguments (`--corpus`, `--mask`, `--goals`, `--strict`, `--strict-gold`),
//! `--group-by`/`--by` and a matrix's names, shared by `eval`, `compare` and `report`: their
//! arguments, and the premises, groups, strata and names they read.

use lemma_eval::{
    EvaluatorBuilder, GroupBy, MaskMode, MatrixNames, PremiseOptions, Premises, Strata,
    StrataSources,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A `.npy` matrix's names: `--names STORE`, or `--goal-names FILE` with `--lemma-names FILE`,
/// or (under `--corpus`) `--goal-names FILE` alone, the columns then the corpus's premises.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct MatrixNameArgs {
    /// For a .npy matrix: the goal names of its rows, one per line.
    #[arg(long)]
    goal_names: Option<PathBuf>,
    /// For a .npy matrix: the lemma names of its columns, one per line (under --corpus, left
    /// out: the corpus's premises, in its order).
    #[arg(long)]
    lemma_names: Option<PathBuf>,
    /// For a .npy matrix: take goal and lemma names from this store's tables.
    #[arg(long)]
    names: Option<PathBuf>,
}

impl MatrixNameArgs {
    /// The files the flags name.
    pub(crate) fn inputs(&self) -> impl Iterator<Item = &Path> {
        [&self.goal_names, &self.lemma_names, &self.names]
            .into_iter()
            .flatten()
            .map(|p| p.as_path())
    }

    /// The names as the flags give them (`corpus`: a corpus is given); none when no flag is (not
    /// a matrix); any other mixture is refused.
    pub(crate) fn names(&self, corpus: bool) -> Result<Option<MatrixNames>, crate::out::Fail> {
        match (&self.names, &self.goal_names, &self.lemma_names) {
            (Some(store), None, None) => Ok(Some(MatrixNames::Store(store.clone()))),
            (None, Some(goals), Some(lemmas)) => Ok(Some(MatrixNames::Lists {
                goals: goals.clone(),
                lemmas: lemmas.clone(),
            })),
            // Under a corpus, columns without names are its premises, in its order.
            (None, Some(goals), None) if corpus => Ok(Some(MatrixNames::Premises {
                goals: goals.clone(),
            })),
            (None, None, None) => Ok(None),
            _ => Err(crate::out::Fail(
                2,
                "a .npy matrix needs its names: --goal-names FILE and --lemma-names FILE, or \
                 --names STORE (under --corpus, --goal-names alone: its columns are the corpus's \
                 premises)"
                    .into(),
            )),
        }
    }
}

/// The premise-selection protocol's arguments (docs/METRICS.md §9).
#[derive(clap::Args, Clone, Debug, Default)]
pub(crate) struct PremiseArgs {
    /// LeanDojo's corpus.jsonl (plain, .gz, .zst): which premises each goal may use, from its
    /// file's imports and its theorem's position (README, "Premise selection"). Needed by --mask,
    /// the Leak and R(origin=...) measures; TREC and JSONL predictions, stores and .npy matrices
    /// (whose columns, without --lemma-names, are then the corpus's premises in its order).
    #[arg(long, value_name = "FILE")]
    pub(crate) corpus: Option<PathBuf>,
    /// Which predicted premises are ranked: `accessible` removes those not accessible at the
    /// goal's theorem before ranks are given (ranks count accessible premises only).
    #[arg(long, value_parser = crate::parsers::choice::<MaskMode>(), default_value = "none", requires = "corpus")]
    pub(crate) mask: MaskMode,
    /// JSONL of goal records {"goal_id", "file_path", "theorem_pos": [line, col]}: adds to and
    /// overrides the places the actual sets' JSONL records give (for TREC qrels, the only source).
    #[arg(long = "goals", value_name = "FILE")]
    pub(crate) goals: Option<PathBuf>,
    /// A goal whose file the corpus does not list, a predicted premise it does not define, or a
    /// goal without a group (--group-by) is an error (by default counted and named in a warning).
    #[arg(long)]
    pub(crate) strict: bool,
    /// With --corpus: a relevant premise not accessible at its goal is an error (by default
    /// counted and named in a warning).
    #[arg(long, requires = "corpus")]
    pub(crate) strict_gold: bool,
}

impl PremiseArgs {
    /// The files the protocol reads besides the actual sets and the predictions (`--corpus`,
    /// `--goals`), for the check that no output names an input.
    pub(crate) fn inputs(&self) -> impl Iterator<Item = &Path> {
        [&self.corpus, &self.goals]
            .into_iter()
            .flatten()
            .map(|p| p.as_path())
    }

    /// The protocol's options; `None` without `--corpus`.
    pub(crate) fn options(&self) -> Option<PremiseOptions> {
        Some(PremiseOptions {
            corpus: self.corpus.clone()?,
            mask: self.mask,
            goals: self.goals.clone(),
            strict: self.strict,
            strict_gold: self.strict_gold,
        })
    }
}

/// `builder` with the premise protocol `p` asks for (the corpus read, goals placed from `actual`
/// and --goals), then grouped and stratified as `g` says ([`apply`]); relevant lemmas at `level`.
pub(crate) fn apply_all(
    mut builder: EvaluatorBuilder,
    p: &PremiseArgs,
    g: &GroupArgs,
    actual: &Path,
    level: i32,
) -> Result<EvaluatorBuilder, crate::out::Fail> {
    if let Some(opts) = p.options() {
        let premises = Premises::load(&opts, Some(actual))?;
        builder = builder.premises(Arc::new(premises));
    }
    apply_groups(builder, p, g, actual, level)
}

/// `builder` grouped and stratified as `g` says ([`apply`]), the premises left to the job
/// ([`PremiseArgs::options`], loaded as the actual sets are read).
pub(crate) fn apply_groups(
    builder: EvaluatorBuilder,
    p: &PremiseArgs,
    g: &GroupArgs,
    actual: &Path,
    level: i32,
) -> Result<EvaluatorBuilder, crate::out::Fail> {
    apply(
        builder,
        g,
        p.corpus.as_ref(),
        actual,
        p.goals.as_deref(),
        p.strict,
        level,
    )
}

/// How goals are grouped for the summary.
#[derive(clap::Args, Clone, Debug, Default)]
pub(crate) struct GroupArgs {
    /// The summary is the mean over groups of each group's mean (per-goal rows unchanged):
    /// `theorem` (records' `theorem` or `full_name`), `file` (`file_path` or `path`), or any key
    /// of the records (the actual sets' JSONL records, then --goals FILE). A goal no record
    /// places in a group is a group of its own (--strict: an error).
    #[arg(long = "group-by", value_name = "theorem|file|ATTR")]
    pub(crate) group_by: Option<String>,
    /// Besides the overall summary, one per stratum (repeatable): `gold-size` (R in `1`, `2-3`,
    /// `4-7`, `8-15`, `16+`), `novelty` (`novel` when a relevant premise is not in
    /// --train-premises, else `seen`), or a record key as --group-by reads it (`theorem`,
    /// `file`, any key); labelled KEY=VALUE. `origin` splits recall instead: each R@k is
    /// followed by R(origin=in-file)@k and R(origin=imported)@k (needs --corpus). compare takes
    /// `origin` alone.
    #[arg(long = "by", value_name = "gold-size|novelty|origin|ATTR")]
    pub(crate) by: Vec<String>,
    /// The premises used in training, one name a line (plain, gzip or zstd): what --by novelty
    /// reads.
    #[arg(long = "train-premises", value_name = "FILE")]
    pub(crate) train_premises: Option<PathBuf>,
}

impl GroupArgs {
    /// The files these options read (for the check that no output replaces an input).
    pub(crate) fn inputs(&self) -> impl Iterator<Item = &Path> {
        self.train_premises.iter().map(|p| p.as_path())
    }
}

/// `builder` grouping and stratifying goals as `g` says, the groups and strata read from
/// `actual`, `goals` (and --train-premises; relevant lemmas at `level`); an error for --goals or
/// --strict given with none of --corpus, --group-by and --by.
pub(crate) fn apply(
    mut builder: EvaluatorBuilder,
    g: &GroupArgs,
    corpus: Option<&PathBuf>,
    actual: &Path,
    goals: Option<&Path>,
    strict: bool,
    level: i32,
) -> Result<EvaluatorBuilder, crate::out::Fail> {
    if !g.by.is_empty() || g.train_premises.is_some() {
        let from = StrataSources {
            actual: Some(actual.to_path_buf()),
            goals: goals.map(Path::to_path_buf),
            train_premises: g.train_premises.clone(),
            relevance_level: level,
            strict,
        };
        builder = builder.strata(Arc::new(Strata::load(&g.by, &from)?));
    }
    let Some(by) = &g.group_by else {
        if corpus.is_none() && g.by.is_empty() && (goals.is_some() || strict) {
            let flag = if goals.is_some() {
                "--goals"
            } else {
                "--strict"
            };
            return Err(crate::out::Fail(
                2,
                format!("{flag} needs --corpus FILE, --group-by or --by"),
            ));
        }
        return Ok(builder);
    };
    if by.is_empty() {
        return Err(crate::out::Fail(
            2,
            "--group-by: expected theorem, file or a record key".into(),
        ));
    }
    let groups = GroupBy::load(by, Some(actual), goals, strict)?;
    Ok(builder.group_by(Arc::new(groups)))
}
