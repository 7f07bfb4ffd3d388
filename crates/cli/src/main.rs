//! `lemma-eval`: evaluate ranked premise predictions against the lemmas actually used.

//!
//! A thin layer over the `lemma-eval` library: the arguments parsed here (those that decide a
//! goal's numbers, shared by every command that evaluates, in `rules.rs`), each command's call of
//! the library in `eval.rs`, `curve.rs`, `compare.rs` and `gen.rs`, where outputs go and how
//! errors end the process in `out.rs`.

mod compare;
mod curve;
mod eval;
mod gen;
mod groups;
mod out;
mod parsers;
mod rules;
mod trec_flags;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use lemma_eval::output::{CurveFormat, OutFormat};
use lemma_eval::trec::TrecVersion;
use lemma_eval::MissingMode;
use lemma_ingest::SpillOptions;
use out::Fail;
use parsers::{choice, parse_finite, parse_shard, parse_size, parse_threads};
use rules::{RankingArgs, Rules, Scoring};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "lemma-eval",
    version,
    about = "Score ranked premise predictions against the truth, streamed, in bounded memory"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Evaluate predictions (TREC run or JSONL) against actual sets (TREC qrels or JSONL).
    Eval(EvalArgs),
    /// Precision-recall curves: each run's macro-averaged interpolated curve, or one goal's exact
    /// curve (`--goal`); as TSV or JSON, and drawn as SVG with `--plot`.
    Curve(CurveArgs),
    /// Compare runs: each measure's means, paired tests, a bootstrap interval of the difference,
    /// effect sizes, wins/ties/losses; p-values corrected over every comparison.
    Compare(compare::CompareArgs),
    /// One self-contained HTML page: every run's summary (best in bold), goal counts, macro and
    /// pooled precision-recall curves, per-goal AP and Depth(recall=1.0) distributions, the
    /// command line and the inputs.
    Report(ReportArgs),
    /// trec_eval's flags and byte-identical output.
    #[command(name = "trec_eval")]
    TrecEval(TrecArgs),
    /// Merge summaries written by `eval --summary-out` (shards of one evaluation): print what one
    /// `eval` over all the shards' predictions would have printed (with --threshold, its pooled:
    /// lines too).
    Merge(MergeArgs),
    /// Generate a deterministic premise-selection-like workload (TREC, binary store or .npy).
    Gen(GenArgs),
    /// Convert TREC or JSONL predictions and actual sets into a binary store (or, with --corpus, a
    /// corpus.jsonl into binary form).
    Convert(ConvertArgs),
    /// Read a binary store whole and check every checksum.
    Verify {
        /// The store.
        store: PathBuf,
    },
    /// Read a LeanDojo corpus.jsonl and print what it holds and what reading it cost.
    #[command(hide = true)]
    ReadCorpus { corpus: PathBuf },
    /// Measure how fast this machine reads a file: a plain pass summing it as u32 words (mapped).
    #[command(hide = true)]
    ReadRate {
        file: PathBuf,
        #[arg(long, default_value_t = 1, value_parser = parse_threads)]
        threads: usize,
    },
}

#[derive(Args)]
#[command(mut_arg("memory", |a| a.help("Memory for each run's exact pooled curve (one count per distinct score): beyond it the \
     counts go to sorted temporary files in TMPDIR, merged at the end. 512M, 2G, 1.5G (binary \
     units), or bytes")))]
struct ReportArgs {
    /// Actual sets: TREC qrels or JSONL; plain, .gz, .zst, or - for stdin.
    actual: PathBuf,
    /// Predictions, one run or several: TREC or JSONL.
    #[arg(required = true)]
    predicted: Vec<PathBuf>,
    #[command(flatten)]
    scoring: Scoring,
    #[command(flatten)]
    memory: MemoryArg,
    #[command(flatten)]
    grouping: groups::GroupArgs,
    #[command(flatten)]
    premise: groups::PremiseArgs,
    /// Write the page here (atomically: nothing partial is left on error); default stdout, as `-`.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
}

#[derive(Args)]
#[command(mut_arg("memory", |a| a.help("Memory for the exact pooled curve's counts (one per distinct score): beyond it they go \
     to sorted temporary files in TMPDIR, merged at the end. Unused without --pooled or with \
     --bins. 512M, 2G, 1.5G (binary units), or bytes")))]
struct CurveArgs {
    /// Actual sets: TREC qrels or JSONL; plain, .gz, .zst, or - for stdin.
    actual: PathBuf,
    /// Predictions, one run or several (one curve each): TREC, JSONL or a binary store.
    #[arg(required = true)]
    predicted: Vec<PathBuf>,
    /// One goal's exact curve: a row per rank where it finds relevant lemmas (rank, recall,
    /// precision, interpolated precision), instead of the macro-averaged curve.
    #[arg(long)]
    goal: Option<String>,
    /// The pooled curve instead: every ranked lemma of every goal one scored instance, positive
    /// when relevant; a row per distinct score (threshold, tp, fp, precision, recall, F1), with
    /// the pooled average precision and the best F1's threshold. Exact: the counts beyond --memory
    /// go to temporary files in TMPDIR.
    #[arg(long, conflicts_with = "goal")]
    pooled: bool,
    /// With --pooled: K groups of equal count over the scores (the binned estimate), in one pass
    /// and memory independent of the number of lemmas; the bound on its pooled AP is printed.
    #[arg(long, value_name = "K", requires = "pooled",
          value_parser = clap::value_parser!(u64).range(1..=65_536))]
    bins: Option<u64>,
    #[command(flatten)]
    memory: MemoryArg,
    /// Evaluate goals with no relevant lemma (R = 0) instead of skipping them: with --pooled,
    /// their lemmas count as negatives.
    #[arg(long)]
    keep_zero_relevant: bool,
    /// Recall levels of the macro-averaged curve: 0, 1/(N-1), ..., 1.
    #[arg(long, default_value_t = 11, value_parser = clap::value_parser!(u32).range(2..=100_001))]
    points: u32,
    #[arg(long, value_parser = choice::<CurveFormat>(), default_value = "tsv")]
    format: CurveFormat,
    /// Also draw the curves, every run on one chart, as an SVG picture written here (`-`: stdout,
    /// then with -o FILE).
    #[arg(long)]
    plot: Option<PathBuf>,
    #[command(flatten)]
    scoring: Scoring,
    /// Write the output here (atomically, with the command's other outputs: nothing partial is
    /// left on error); `-` is stdout.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
}

#[derive(Args)]
struct MergeArgs {
    /// Summary files, one per shard (`eval --summary-out`).
    #[arg(required = true)]
    summaries: Vec<PathBuf>,
    #[arg(long, value_parser = choice::<OutFormat>(), default_value = "table")]
    format: OutFormat,
    /// Write the output here (atomically, with the command's other outputs: nothing partial is
    /// left on error); `-` is stdout.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// No report on stderr.
    #[arg(long)]
    quiet: bool,
    /// Merge a set of shards with some missing (`eval --shard I/N`): the summary is then of the
    /// goals the shards given ranked, and the output names the shards it lacks.
    #[arg(long)]
    partial: bool,
}

#[derive(Args)]
struct ConvertArgs {
    /// Actual sets (TREC qrels or JSONL).
    #[arg(required_unless_present = "corpus")]
    actual: Option<PathBuf>,
    /// Predictions (TREC run or JSONL).
    #[arg(required_unless_present = "corpus")]
    predicted: Option<PathBuf>,
    /// Instead: a LeanDojo corpus.jsonl (plain, .gz, .zst) to write in binary form, which
    /// `--corpus` reads with no parsing (no actual sets or predictions then).
    #[arg(long, value_name = "CORPUS", conflicts_with_all = ["actual", "predicted"])]
    corpus: Option<PathBuf>,
    /// The store (or binary corpus) to write.
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
    #[command(flatten)]
    ranking: RankingArgs,
}

#[derive(Copy, Clone, ValueEnum, PartialEq, Eq)]
enum GenFormat {
    Trec,
    Jsonl,
    Store,
    Npy,
}

#[derive(Args)]
struct GenArgs {
    /// Goals.
    #[arg(long, default_value_t = 1000)]
    goals: u64,
    /// Lemmas in the universe.
    #[arg(long, default_value_t = 200_000)]
    universe: u64,
    /// Lemmas ranked per goal.
    #[arg(long, default_value_t = 100)]
    depth: u64,
    /// Rank the whole universe for every goal (overrides --depth).
    #[arg(long)]
    full: bool,
    /// Share of goals with no actual premise.
    #[arg(long, default_value_t = 0.0)]
    empty_share: f64,
    /// Mean of the geometric part of the relevant count (relevant = 1 + geometric).
    #[arg(long, default_value_t = 7.0)]
    relevant_mean: f64,
    /// Largest relevant count.
    #[arg(long, default_value_t = 40)]
    relevant_max: u64,
    /// Share of ranked items tied with the previous one.
    #[arg(long, default_value_t = 0.03)]
    ties: f64,
    /// Share of relevant lemmas left out of the ranking.
    #[arg(long, default_value_t = 0.1)]
    unretrieved_share: f64,
    /// Grades 1..=3 and judged non-relevant lemmas.
    #[arg(long)]
    graded: bool,
    /// Seed of the generator: the same seed and options give the same files.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// What to write: TREC qrels and run, JSONL actual sets (to --qrels) and predictions (to --run),
    /// a binary store (and qrels), or a .npy matrix (and qrels and name lists).
    #[arg(long, value_enum, default_value = "trec")]
    format: GenFormat,
    /// Where to write the qrels (`-`: stdout, for one output only).
    #[arg(long)]
    qrels: PathBuf,
    /// Where to write the run (trec), the store (store, a file) or the matrix (npy).
    #[arg(long)]
    run: PathBuf,
    /// store: also store each ranking's scores (f32).
    #[arg(long)]
    scores: bool,
    /// npy: where to write the goal names (one per line, the matrix's rows).
    #[arg(long)]
    goal_names: Option<PathBuf>,
    /// npy: where to write the lemma names (one per line, the matrix's columns).
    #[arg(long)]
    lemma_names: Option<PathBuf>,
    /// A LeanDojo-shaped library instead: its corpus.jsonl written here, the actual sets as JSONL
    /// (to --qrels) with each goal's file_path, theorem and theorem_pos, and a TREC run (or, with
    /// --format npy, a score matrix over every premise) ranking premises regardless of access.
    /// --universe counts the premises, --goals the tactic states.
    #[arg(long, value_name = "FILE")]
    corpus: Option<PathBuf>,
    /// With --corpus: the library's files (default: one per 50 premises).
    #[arg(long, requires = "corpus")]
    files: Option<u64>,
    /// With --corpus: share of goals whose used premises include an inaccessible one.
    #[arg(long, default_value_t = 0.0, requires = "corpus")]
    inaccessible_gold: f64,
}

#[derive(Args)]
struct Common {
    /// Write the output here (atomically, with the command's other outputs: nothing partial is
    /// left on error); `-` is stdout.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Worker threads, 1 to 1024 (default: all cores), also those that read the actual sets.
    #[arg(long, value_parser = parse_threads)]
    threads: Option<usize>,
    /// No report or progress on stderr.
    #[arg(long)]
    quiet: bool,
    /// Memory-map plain input files instead of reading them in chunks (about 5% faster on the M
    /// benchmark; chunked reads bound resident memory more tightly, and do not depend on the file
    /// staying in the page cache).
    #[arg(long)]
    mmap: bool,
    /// Log what happens (-v, -vv).
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    verbose: u8,
}

/// The memory budget of what must be sorted or held.
#[derive(Args)]
struct MemoryArg {
    /// Memory for what must be sorted or held: runs whose goals are not contiguous (--regroup),
    /// qrels whose goals are not in order and too large to hold (about half their size). Beyond
    /// it they are sorted on disk, in TMPDIR (a sort takes at least 64 KiB). 512M, 2G, 1.5G
    /// (binary units), or bytes.
    #[arg(long = "memory", value_name = "SIZE", default_value = "1G", value_parser = parse_size)]
    memory: usize,
}

impl MemoryArg {
    fn spill(&self) -> SpillOptions {
        SpillOptions {
            memory: self.memory,
            dir: None,
        }
    }
}

#[derive(Args)]
struct EvalArgs {
    /// Actual sets: TREC qrels (`goal iter lemma grade`) or JSONL; plain, .gz, .zst, or - for stdin.
    actual: PathBuf,
    /// Predictions: TREC run (`goal Q0 lemma rank score tag`) or JSONL; plain, .gz, .zst, or -.
    predicted: PathBuf,
    /// A measure (repeatable): METRICS.md names (`AP@100`, `Depth(recall=1.0)`) or trec_eval's (`P.5,10`).
    #[arg(short = 'm', long = "measure")]
    measures: Vec<String>,
    /// Print one row per goal before the summary.
    #[arg(long)]
    per_goal: bool,
    #[arg(long, value_parser = choice::<OutFormat>(), default_value = "table")]
    format: OutFormat,
    /// Goals with an actual set but no predictions.
    #[arg(long, value_parser = choice::<MissingMode>(), default_value = "zero")]
    missing: MissingMode,
    #[command(flatten)]
    rules: Rules,
    /// Accept goals whose lines are not contiguous: the lines are sorted by goal first (natural
    /// order; rows come in that order), in memory or on disk within --memory.
    #[arg(long)]
    regroup: bool,
    /// Read the actual sets whole before the predictions even when their goals are sorted (by
    /// default sorted qrels are read along the predictions, a few goals at a time).
    #[arg(long)]
    hold_actual: bool,
    #[command(flatten)]
    memory: MemoryArg,
    /// Evaluate goals with no relevant lemma (R = 0) as all zeros instead of skipping them.
    #[arg(long)]
    keep_zero_relevant: bool,
    /// The lemmas scored at or above T as a set: macro-averaged SetP, SetR and SetF(beta=1)
    /// over goals, and the pooled precision, recall and F1 of every goal's lemmas as one set
    /// (`pooled:` lines, from the counts NumRet(threshold=T), NumRelRet(threshold=T), NumRel;
    /// not in --format trec, where trec_eval has no name for them).
    #[arg(long, value_name = "T", allow_negative_numbers = true, value_parser = parse_finite)]
    threshold: Option<f64>,
    /// Size of the lemma universe, at least 1 (enables AUC; stores and matrices know theirs).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    universe: Option<u64>,
    #[command(flatten)]
    premise: groups::PremiseArgs,
    #[command(flatten)]
    matrix: groups::MatrixNameArgs,
    /// Also write the summary as a file that `lemma-eval merge` combines with other shards'
    /// (atomically, with -o; docs/FORMAT.md); `-` is stdout, then with -o FILE.
    #[arg(long, value_name = "FILE")]
    summary_out: Option<PathBuf>,
    /// Also write each goal's values, which `compare` reads in place of this run (atomically,
    /// with -o; docs/FORMAT.md).
    #[arg(long, value_name = "FILE")]
    values_out: Option<PathBuf>,
    /// Evaluate shard I of N (1-based) of a plain text PREDICTED: a byte range cut at goal
    /// boundaries; the shards' --summary-out files merge into the whole file's evaluation.
    #[arg(long, value_name = "I/N", value_parser = parse_shard, conflicts_with = "regroup")]
    shard: Option<(u64, u64)>,
    #[command(flatten)]
    grouping: groups::GroupArgs,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
#[command(mut_arg("memory", |a| a.help("Memory for what must be sorted or held: the run, when its goals are not contiguous \
     (trec_eval takes any order), and qrels whose goals are not in order and too large to hold \
     (about half their size). Beyond it they are sorted on disk, in TMPDIR (a sort takes at \
     least 64 KiB). 512M, 2G, 1.5G \
     (binary units), or bytes")))]
struct TrecArgs {
    /// Print per-goal values too.
    #[arg(short = 'q')]
    per_query: bool,
    /// Average over every qrels goal (missing ones count 0).
    #[arg(short = 'c')]
    complete: bool,
    /// No summary.
    #[arg(short = 'n')]
    no_summary: bool,
    /// trec_eval measure (repeatable): P.5,10 map ndcg_cut.10 official ...
    #[arg(short = 'm')]
    measures: Vec<String>,
    /// Evaluate only the first N lemmas of each goal.
    #[arg(short = 'M')]
    max_docs: Option<u64>,
    /// Relevance level.
    #[arg(short = 'l', default_value_t = 1, allow_negative_numbers = true)]
    level: i32,
    #[command(flatten)]
    flags: trec_flags::TrecFlags,
    /// trec_eval version to reproduce.
    #[arg(long = "trec-version", value_parser = choice::<TrecVersion>(), default_value = "10")]
    version: TrecVersion,
    /// Print lemma-eval's report on stderr (trec_eval prints none).
    #[arg(long)]
    report: bool,
    #[command(flatten)]
    memory: MemoryArg,
    /// Qrels (`goal iter lemma grade`): plain, .gz, .zst, or - for stdin.
    qrels: PathBuf,
    /// The run (`goal Q0 lemma rank score tag`): plain, .gz, .zst, or - for stdin.
    run: PathBuf,
    #[command(flatten)]
    common: Common,
}

fn main() -> ExitCode {
    out::report_bus_errors();
    // Before any other thread starts (they inherit the blocked signals).
    if let Err(e) = lemma_outfile::remove_temporaries_on_signals() {
        eprintln!(
            "lemma-eval: warning: no thread to take SIGINT and SIGTERM ({e}): a signal during \
             the outputs' commit may leave a temporary file"
        );
    }
    // `eval -m`'s long help lists every measure, from the measures' own declarations.
    let help = format!(
        "A measure (repeatable), native or trec_eval's name:\n\n{}",
        lemma_accum::Measure::help_text()
    );
    let command =
        Cli::command().mut_subcommand("eval", |c| c.mut_arg("measures", |a| a.long_help(help)));
    let cli = match Cli::from_arg_matches(&command.get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let verbose = match &cli.cmd {
        Cmd::Eval(a) => a.common.verbose,
        Cmd::Curve(_) | Cmd::Report(_) | Cmd::Compare(_) => 0,
        Cmd::TrecEval(a) => a.common.verbose,
        Cmd::Gen(_)
        | Cmd::Convert(_)
        | Cmd::Merge(_)
        | Cmd::Verify { .. }
        | Cmd::ReadCorpus { .. }
        | Cmd::ReadRate { .. } => 0,
    };
    if verbose > 0 {
        let level = if verbose > 1 { "debug" } else { "info" };
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_env_filter(tracing_subscriber::EnvFilter::new(level))
            .init();
    }
    let alone = one_output(&cli.cmd);
    let r = match cli.cmd {
        Cmd::Eval(a) => eval::run_eval(a),
        Cmd::Curve(a) => curve::run_curve(a),
        Cmd::Report(a) => curve::run_report(a),
        Cmd::Compare(a) => compare::run_compare(a),
        Cmd::TrecEval(a) => eval::run_trec(a),
        Cmd::Merge(a) => eval::run_merge(a),
        Cmd::Gen(a) => gen::run_gen(a),
        Cmd::Convert(a) => eval::run_convert(a),
        Cmd::Verify { store } => lemma_ingest::Store::open(&store)
            .and_then(|s| s.verify())
            .map_err(Fail::from)
            .map(|_| {
                eprintln!(
                    "lemma-eval: {}: every checksum matches, every invariant holds",
                    store.display()
                )
            }),
        Cmd::ReadRate { file, threads } => gen::read_rate(&file, threads),
        Cmd::ReadCorpus { corpus } => gen::read_corpus(&corpus),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe on the command's only output: a quiet end (write_fail).
        Err(Fail(0, _)) if alone => ExitCode::SUCCESS,
        Err(Fail(code, msg)) => {
            let _ = writeln!(std::io::stderr(), "lemma-eval: error: {msg}");
            ExitCode::from(if code == 0 { 2 } else { code })
        }
    }
}

/// Whether the command writes one output only (stdout, or the file, device or pipe `-o`
/// names): a closed pipe there ends it quietly. With others (`--summary-out`, `--plot`, `gen`'s
/// files) a closed pipe is an error and none of them is written.
fn one_output(cmd: &Cmd) -> bool {
    match cmd {
        Cmd::Eval(a) => a.summary_out.is_none() && a.values_out.is_none(),
        Cmd::Curve(a) => a.plot.is_none(),
        Cmd::Gen(_) => false,
        Cmd::Report(_)
        | Cmd::Compare(_)
        | Cmd::TrecEval(_)
        | Cmd::Merge(_)
        | Cmd::Convert(_)
        | Cmd::Verify { .. }
        | Cmd::ReadCorpus { .. }
        | Cmd::ReadRate { .. } => true,
    }
}
