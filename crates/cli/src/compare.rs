//! `compare`: its arguments, the library's comparison called, its output committed.

use crate::out::{commit_all, distinct, write_fail, Fail};
use crate::{choice, Scoring};
use clap::Args;
use lemma_eval::compare::{Compare, CompareOptions, Correction, System, Test};
use lemma_eval::output::{write_comparison, CompareFormat};
use lemma_eval::{MissingMode, ZeroRelMode};
use lemma_outfile::Output;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub(crate) struct CompareArgs {
    /// Actual sets: TREC qrels or JSONL; plain, .gz, .zst, or - for stdin.
    actual: PathBuf,
    /// Runs (RUN_A RUN_B [RUN...]): TREC or JSONL (plain, .gz, .zst, -), binary stores, .npy
    /// matrices, or values files (`eval --values-out`). The first is compared with each other,
    /// or every pair with --all-pairs.
    #[arg(num_args = 0.., value_name = "RUN")]
    runs: Vec<PathBuf>,
    /// Several runs of one system (seeds, folds) as one, after the RUNs (repeatable): each
    /// goal's value the mean of the runs', the table showing the spread of their means.
    #[arg(long = "system", value_name = "NAME=RUN1,RUN2,...", value_parser = parse_system)]
    systems: Vec<(String, Vec<PathBuf>)>,
    /// A measure (repeatable), a mean of per-goal values: METRICS.md names (`AP`, `P@10`,
    /// `nDCG@10`) or trec_eval's (`P.5,10`). Default: eval's default measures but
    /// `Depth(recall=1.0)`, which is no mean.
    #[arg(short = 'm', long = "measure")]
    measures: Vec<String>,
    /// Compare every pair of runs, not only the first with each other.
    #[arg(long)]
    all_pairs: bool,
    /// The p-value that decides significance.
    #[arg(long, value_parser = choice::<Test>(), default_value = "t")]
    test: Test,
    /// The correction for multiple comparisons, over every comparison made (measures × pairs);
    /// default holm (none with --test tukey, whose p-values are adjusted already).
    #[arg(long, value_parser = choice::<Correction>())]
    correction: Option<Correction>,
    /// Significance level: a difference is significant when its adjusted p-value is below it.
    #[arg(long, default_value_t = 0.05, value_parser = parse_alpha)]
    alpha: f64,
    /// Random sign patterns of the randomization test, and resamples of the bootstrap.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    permutations: u64,
    /// Seed of the randomization test and the bootstrap: the same seed gives the same output.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[arg(long, value_parser = choice::<CompareFormat>(), default_value = "table")]
    format: CompareFormat,
    /// The RUNs' names in the output, comma-separated, one per RUN (default: the paths given;
    /// a --system is named by its NAME).
    #[arg(long, value_delimiter = ',', value_name = "A,B,...")]
    labels: Vec<String>,
    /// Goals with an actual set but no predictions in a run: evaluated as empty rankings (zero),
    /// or without a value in that run and then left out of every comparison (skip).
    #[arg(long, value_parser = choice::<MissingMode>(), default_value = "zero")]
    missing: MissingMode,
    /// Evaluate goals with no relevant lemma (R = 0) as all zeros instead of skipping them.
    #[arg(long)]
    keep_zero_relevant: bool,
    /// Size of the lemma universe (enables AUC; stores and matrices know theirs).
    #[arg(long)]
    universe: Option<u64>,
    #[command(flatten)]
    scoring: Scoring,
    /// Goals grouped (as eval's --group-by, the groups read from the actual sets' JSONL
    /// records): the tests run on the groups' means, the bootstrap resamples groups.
    #[command(flatten)]
    grouping: crate::groups::GroupArgs,
    #[command(flatten)]
    premise: crate::groups::PremiseArgs,
    #[command(flatten)]
    matrix: crate::groups::MatrixNameArgs,
    /// Write the output here (atomically: nothing partial is left on error); `-` is stdout.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// No warnings on stderr.
    #[arg(long)]
    quiet: bool,
}

/// `NAME=RUN1,RUN2,...`: a system's name and its runs.
fn parse_system(s: &str) -> Result<(String, Vec<PathBuf>), String> {
    let (name, runs) = s
        .split_once('=')
        .filter(|(n, r)| !n.is_empty() && !r.is_empty())
        .ok_or_else(|| format!("expected NAME=RUN1,RUN2,..., found `{s}`"))?;
    let runs: Vec<PathBuf> = runs.split(',').map(PathBuf::from).collect();
    if runs.iter().any(|r| r.as_os_str().is_empty()) {
        return Err(format!("an empty run path in `{s}`"));
    }
    Ok((name.to_string(), runs))
}

/// A level strictly between 0 and 1.
fn parse_alpha(s: &str) -> Result<f64, String> {
    (s.trim().parse::<f64>().ok())
        .filter(|v| *v > 0.0 && *v < 1.0)
        .ok_or_else(|| format!("expected a number between 0 and 1 (exclusive), found `{s}`"))
}

pub(crate) fn run_compare(a: CompareArgs) -> Result<(), Fail> {
    let mut inputs = vec![a.actual.as_path()];
    inputs.extend(a.runs.iter().map(|p| p.as_path()));
    inputs.extend(
        a.systems
            .iter()
            .flat_map(|(_, r)| r.iter().map(|p| p.as_path())),
    );
    let stdin = inputs.iter().filter(|p| **p == Path::new("-")).count();
    inputs.extend(
        a.matrix
            .inputs()
            .chain(a.premise.inputs())
            .chain(a.grouping.inputs()),
    );
    distinct(&[a.output.as_deref()], &inputs)?;
    if stdin > 1 {
        return Err(Fail(
            2,
            "only one of ACTUAL and the runs can be - (stdin)".into(),
        ));
    }
    let labels: Vec<String> = if a.labels.is_empty() {
        a.runs.iter().map(|p| p.display().to_string()).collect()
    } else if a.labels.len() == a.runs.len() {
        a.labels.clone()
    } else {
        return Err(Fail(
            2,
            format!(
                "--labels gives {} names for {} runs: give one per run, comma-separated",
                a.labels.len(),
                a.runs.len()
            ),
        ));
    };
    let mut builder = (a.scoring.builder())
        .missing(a.missing)
        .zero_relevant(if a.keep_zero_relevant {
            ZeroRelMode::Evaluate
        } else {
            ZeroRelMode::Skip
        })
        .universe(a.universe);
    builder = crate::groups::apply_all(
        builder,
        &a.premise,
        &a.grouping,
        &a.actual,
        a.scoring.rules.relevance_level,
    )?;
    if !a.measures.is_empty() {
        builder = builder
            .measure_names(&a.measures)
            .map_err(|e| Fail(2, e.to_string()))?;
    }
    let names = a.matrix.names(a.premise.corpus.is_some())?;
    let mut runs: Vec<System> = (labels.into_iter().zip(&a.runs))
        .map(|(label, p)| System {
            label,
            runs: vec![p.as_path().into()],
        })
        .collect();
    runs.extend(a.systems.iter().map(|(name, r)| System {
        label: name.clone(),
        runs: r.iter().map(|p| p.as_path().into()).collect(),
    }));
    if runs.len() < 2 {
        return Err(Fail(
            2,
            format!(
                "compare needs at least two runs or systems (RUN_A RUN_B, --system NAME=R1,R2), \
                 given {}",
                runs.len()
            ),
        ));
    }
    let correction =
        match (a.test, a.correction) {
            (Test::Tukey, Some(c)) if c != Correction::None => return Err(Fail(
                2,
                "--test tukey: Tukey's HSD p-values are adjusted for every pair of runs already; \
                 --correction does not apply"
                    .into(),
            )),
            (_, c) => c.unwrap_or(Correction::Holm),
        };
    let options = CompareOptions {
        all_pairs: a.all_pairs,
        test: a.test,
        correction,
        alpha: a.alpha,
        permutations: a.permutations,
        seed: a.seed,
        ..CompareOptions::default()
    };
    options.check().map_err(|e| Fail(2, e))?;
    // Created first: an output that cannot be written fails before the evaluations.
    let mut out = Output::create(a.output.as_deref())?;
    let name = out.name();
    let c = Compare::systems(builder, a.actual.as_path(), runs)
        .names(names)
        .run(&options)?;
    if !a.quiet {
        for w in &c.warnings {
            eprintln!("lemma-eval: warning: {w}");
        }
    }
    write_comparison(out.writer(), &c, a.format).map_err(|e| write_fail(&name, e))?;
    commit_all([out])
}
