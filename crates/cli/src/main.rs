//! `lemma-eval`: evaluate ranked premise predictions against the lemmas actually used.

//!
//! A thin layer over the `lemma-eval` library: argument parsing, progress bars, logging, exit
//! codes, and where the output goes.

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use lemma_accum::Interpolation;
use lemma_eval::output::{counts_text, report_text, OutFormat, Writer};
use lemma_eval::trec::{self, TrecOptions, TrecVersion};
use lemma_eval::{
    Choice, DuplicateMode, EvalError, Evaluator, Job, MaskMode, MatrixNames, MissingMode,
    OrderMode, Partial, PredictedInput, PremiseOptions, Premises, RankingOptions, RowFn, Sink,
    SummaryOnly, TieMode, ZeroRelMode,
};
use lemma_ingest::{ActualSets, SpillOptions};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
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
    /// Convert TREC or JSONL predictions and actual sets into a binary store.
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
        #[arg(long, default_value_t = 1)]
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
    #[arg(long, value_enum, default_value = "tsv")]
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

/// What decides the numbers of `curve` and `report`: relevance, ranking, interpolation, threads.
#[derive(Args)]
struct Scoring {
    /// A lemma is relevant when its grade is at least this.
    #[arg(
        long = "relevance-level",
        default_value_t = 1,
        allow_negative_numbers = true
    )]
    relevance_level: i32,
    #[command(flatten)]
    ranking: RankingArgs,
    /// Relevant count needed at a recall level (the macro curve's IPrec).
    #[arg(long, value_parser = choice::<Interpolation>(), default_value = "textbook")]
    interpolation: Interpolation,
    /// Worker threads (default: all cores), also those that read the actual sets.
    #[arg(long)]
    threads: Option<usize>,
}

impl Scoring {
    /// Worker threads: as given, or all cores.
    fn threads(&self) -> usize {
        self.threads.unwrap_or_else(lemma_eval::default_threads)
    }

    /// An evaluator's builder with these settings (measures to be named).
    fn builder(&self) -> lemma_eval::EvaluatorBuilder {
        Evaluator::builder()
            .relevance_level(self.relevance_level)
            .interpolation(self.interpolation)
            .ranking((&self.ranking).into())
            .threads(self.threads())
    }
}

/// Formats of `curve`.
#[derive(Copy, Clone, ValueEnum, PartialEq, Eq)]
enum CurveFormat {
    /// A header line, then one point per line, tab-separated, full precision.
    Tsv,
    /// One JSON object.
    Json,
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
    actual: PathBuf,
    /// Predictions (TREC run or JSONL).
    predicted: PathBuf,
    /// The store to write.
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
    #[command(flatten)]
    ranking: RankingArgs,
}

/// How each goal's ranking is formed from its lines (shared by `eval` and `convert`).
#[derive(Args)]
struct RankingArgs {
    /// Evaluate (or keep) only the first N lemmas of each goal, after ordering.
    #[arg(long)]
    depth: Option<u64>,
    /// Ranking order (default: score for TREC runs, file for JSONL).
    #[arg(long, value_parser = choice::<OrderMode>())]
    order: Option<OrderMode>,
    /// Equal scores under score order.
    #[arg(long, value_parser = choice::<TieMode>(), default_value = "trec")]
    ties: TieMode,
    /// A lemma repeated in one goal.
    #[arg(long, value_parser = choice::<DuplicateMode>(), default_value = "first")]
    duplicates: DuplicateMode,
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
    /// Worker threads (default: all cores), also those that read the actual sets.
    #[arg(long)]
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

/// A finite number (`1e400` overflows to infinity, and no score is infinite).
fn parse_finite(s: &str) -> Result<f64, String> {
    (s.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("expected a finite number, found `{s}`"))
}

/// `512M`, `2G`, `1.5G`, `64K` (binary units) or a number of bytes ([`lemma_eval::parse_size`]).
fn parse_size(s: &str) -> Result<usize, String> {
    lemma_eval::parse_size(s)
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
    /// A lemma is relevant when its grade is at least this.
    #[arg(
        long = "relevance-level",
        default_value_t = 1,
        allow_negative_numbers = true
    )]
    relevance_level: i32,
    #[command(flatten)]
    ranking: RankingArgs,
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
    /// Relevant count needed at a recall level for IPrec/AP11.
    #[arg(long, value_parser = choice::<Interpolation>(), default_value = "textbook")]
    interpolation: Interpolation,
    /// Evaluate goals with no relevant lemma (R = 0) as all zeros instead of skipping them.
    #[arg(long)]
    keep_zero_relevant: bool,
    /// The lemmas scored at or above T as a set: macro-averaged SetP, SetR and SetF(beta=1)
    /// over goals, and the pooled precision, recall and F1 of every goal's lemmas as one set
    /// (`pooled:` lines, from the counts NumRet(threshold=T), NumRelRet(threshold=T), NumRel;
    /// not in --format trec, where trec_eval has no name for them).
    #[arg(long, value_name = "T", allow_negative_numbers = true, value_parser = parse_finite)]
    threshold: Option<f64>,
    /// Size of the lemma universe (enables AUC; stores and matrices know theirs).
    #[arg(long)]
    universe: Option<u64>,
    /// LeanDojo's corpus.jsonl (plain, .gz, .zst): which premises each goal may use, from its
    /// file's imports and its theorem's position (README, "Premise selection"). Needed by --mask
    /// and the Leak measures; TREC and JSONL predictions.
    #[arg(long, value_name = "FILE")]
    corpus: Option<PathBuf>,
    /// Which predicted premises are ranked: `accessible` removes those not accessible at the
    /// goal's theorem before ranks are given (ranks count accessible premises only).
    #[arg(long, value_parser = choice::<MaskMode>(), default_value = "none", requires = "corpus")]
    mask: MaskMode,
    /// JSONL of goal records {"goal_id", "file_path", "theorem_pos": [line, col]}: adds to and
    /// overrides the places the actual sets' JSONL records give (for TREC qrels, the only source).
    #[arg(long = "goals", value_name = "FILE", requires = "corpus")]
    goals: Option<PathBuf>,
    /// With --corpus: a goal whose file the corpus does not list, or a predicted premise it does
    /// not define, is an error (by default counted and named in a warning).
    #[arg(long, requires = "corpus")]
    strict: bool,
    /// With --corpus: a relevant premise not accessible at its goal is an error (by default
    /// counted and named in a warning).
    #[arg(long, requires = "corpus")]
    strict_gold: bool,
    /// For a .npy matrix: the goal names of its rows, one per line.
    #[arg(long)]
    goal_names: Option<PathBuf>,
    /// For a .npy matrix: the lemma names of its columns, one per line.
    #[arg(long)]
    lemma_names: Option<PathBuf>,
    /// For a .npy matrix: take goal and lemma names from this store's tables.
    #[arg(long)]
    names: Option<PathBuf>,
    /// Also write the summary as a file that `lemma-eval merge` combines with other shards'
    /// (atomically, with -o; docs/FORMAT.md); `-` is stdout, then with -o FILE.
    #[arg(long, value_name = "FILE")]
    summary_out: Option<PathBuf>,
    /// Evaluate shard I of N (1-based) of a plain text PREDICTED: a byte range cut at goal
    /// boundaries; the shards' --summary-out files merge into the whole file's evaluation.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<(u64, u64)>,
    #[command(flatten)]
    common: Common,
}

/// `I/N` with 1 <= I <= N.
fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("`{s}`: expected I/N with 1 <= I <= N, like 3/8");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u64, u64) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if i == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
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

/// The parser of a word option (`--ties group`): the engine's words for it ([`Choice`]), each
/// with its help, and the value it names. The Python package parses through the same list.
fn choice<T: Choice + Clone + Send + Sync>() -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::TypedValueParser;
    let values = T::VALUES
        .iter()
        .map(|&(word, help, _)| clap::builder::PossibleValue::new(word).help(help));
    clap::builder::PossibleValuesParser::new(values)
        .map(|word: String| T::parse(&word).expect("clap takes only the listed words"))
}

/// An error and its exit code.
struct Fail(u8, String);

impl From<EvalError> for Fail {
    fn from(e: EvalError) -> Self {
        Fail(2, e.to_string())
    }
}

impl From<lemma_ingest::InputError> for Fail {
    fn from(e: lemma_ingest::InputError) -> Self {
        Fail(2, e.to_string())
    }
}

/// A memory-mapped input cut short while it is read (a sorted qrels file read along the
/// predictions, or a run read with `--mmap`, truncated by another process) raises SIGBUS when a
/// page past its new end is touched: reported as an error with exit 2 instead of a crash. An
/// `-o` file is an unnamed temporary file until it is committed, so nothing partial is left.
fn report_bus_errors() {
    extern "C" fn on_bus(_: libc::c_int) {
        const MSG: &[u8] = b"lemma-eval: error: an input file was cut short while it was read (a \
            memory-mapped page past its new end: SIGBUS); the evaluation stopped and no -o file \
            was written\n";
        // SAFETY: write and _exit are async-signal-safe; MSG is a static buffer.
        unsafe {
            libc::write(2, MSG.as_ptr().cast(), MSG.len());
            libc::_exit(2);
        }
    }
    // SAFETY: a zeroed sigaction is valid; the handler calls only async-signal-safe functions.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_bus as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
    }
}

fn main() -> ExitCode {
    report_bus_errors();
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
        Cmd::Curve(_) | Cmd::Report(_) => 0,
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
        Cmd::Eval(a) => run_eval(a),
        Cmd::Curve(a) => run_curve(a),
        Cmd::Report(a) => run_report(a),
        Cmd::TrecEval(a) => run_trec(a),
        Cmd::Merge(a) => run_merge(a),
        Cmd::Gen(a) => run_gen(a),
        Cmd::Convert(a) => run_convert(a),
        Cmd::Verify { store } => lemma_ingest::Store::open(&store)
            .and_then(|s| s.verify())
            .map_err(Fail::from)
            .map(|_| eprintln!("lemma-eval: {}: every checksum matches", store.display())),
        Cmd::ReadRate { file, threads } => read_rate(&file, threads),
        Cmd::ReadCorpus { corpus } => read_corpus(&corpus),
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
        Cmd::Eval(a) => a.summary_out.is_none(),
        Cmd::Curve(a) => a.plot.is_none(),
        Cmd::Gen(_) => false,
        Cmd::Report(_)
        | Cmd::TrecEval(_)
        | Cmd::Merge(_)
        | Cmd::Convert(_)
        | Cmd::Verify { .. }
        | Cmd::ReadCorpus { .. }
        | Cmd::ReadRate { .. } => true,
    }
}

/// Refuses outputs that name an input's file or each other's ([`lemma_outfile::check_distinct`]):
/// exit 2 before anything is read. Outputs given as `-` are stdout ([`one_stdout`]).
fn distinct(outputs: &[Option<&Path>], inputs: &[&Path]) -> Result<(), Fail> {
    let outputs: Vec<&Path> = (outputs.iter().flatten().copied())
        .filter(|p| !is_dash(p))
        .collect();
    lemma_outfile::check_distinct(&outputs, inputs).map_err(|e| Fail(2, e.to_string()))
}

/// An output path `-`: stdout.
fn is_dash(p: &Path) -> bool {
    p == Path::new("-")
}

/// What [`one_stdout`] calls the `-o` output: `-o -`, or the table when `-o` is left out.
fn table_label(output: Option<&Path>) -> &'static str {
    match output {
        None => "the output (no -o)",
        Some(_) => "-o -",
    }
}

/// Refuses two outputs to stdout: `outputs` are each output's option and whether it goes there.
fn one_stdout(outputs: &[(&str, bool)]) -> Result<(), Fail> {
    let there: Vec<&str> = (outputs.iter()).filter(|o| o.1).map(|o| o.0).collect();
    match there[..] {
        [a, b, ..] => Err(Fail(
            2,
            format!("{a} and {b} would both write to stdout: give one of them a file"),
        )),
        _ => Ok(()),
    }
}

/// Where an output goes: stdout (no path, or `-`), or a file written through
/// [`lemma_outfile::OutFile`] (a regular file replaced atomically when the command's outputs
/// are committed, [`commit_all`]; a device or FIFO written in place; nothing left behind on an
/// error).
enum Out {
    Stdout(std::io::BufWriter<std::io::Stdout>),
    File(std::io::BufWriter<lemma_outfile::OutFile>),
}

impl Out {
    fn new(path: Option<&Path>) -> Result<Out, Fail> {
        match path {
            None => Ok(Out::Stdout(std::io::BufWriter::with_capacity(
                1 << 16,
                std::io::stdout(),
            ))),
            Some(p) if is_dash(p) => Out::new(None),
            Some(p) => {
                let f = lemma_outfile::OutFile::create(p).map_err(|e| {
                    Fail(
                        2,
                        format!("{}: cannot create the output file: {e}", p.display()),
                    )
                })?;
                Ok(Out::File(std::io::BufWriter::with_capacity(1 << 16, f)))
            }
        }
    }

    /// What an error message calls this output.
    fn name(&self) -> String {
        match self {
            Out::Stdout(_) => "stdout".into(),
            Out::File(w) => w.get_ref().path().display().to_string(),
        }
    }

    fn writer(&mut self) -> &mut dyn Write {
        match self {
            Out::Stdout(w) => w,
            Out::File(w) => w,
        }
    }

    /// Flushes, and for a file commits it (sync and rename, or nothing more for a device): the
    /// command's only output.
    fn commit(self) -> Result<(), Fail> {
        commit_all([self])
    }
}

/// Commits a command's outputs as one set, in the order given: every output's last bytes are
/// written (stdout flushed, files' buffers emptied into their temporary files) and only then
/// are the files committed together ([`lemma_outfile::commit_all`]: all synced, then renamed
/// back to back). Any failure before the renames leaves every file as it was.
fn commit_all(outs: impl IntoIterator<Item = Out>) -> Result<(), Fail> {
    let mut files = Vec::new();
    for out in outs {
        let name = out.name();
        match out {
            Out::Stdout(mut w) => w.flush().map_err(|e| write_fail(&name, e))?,
            Out::File(w) => files.push(
                w.into_inner()
                    .map_err(|e| write_fail(&name, e.into_error()))?,
            ),
        }
    }
    lemma_outfile::commit_all(files).map_err(|e| Fail(2, e.to_string()))
}

/// An evaluation's error; the row sink's errors are the output's ([`write_fail`]).
fn eval_fail(out: &str, e: EvalError) -> Fail {
    match e {
        EvalError::Sink(e) => write_fail(out, e),
        e => Fail::from(e),
    }
}

/// A writer that keeps the first error it returned.
struct WriteErrors<'a> {
    inner: &'a mut dyn Write,
    error: Option<std::io::Error>,
}

impl WriteErrors<'_> {
    fn keep<T>(&mut self, r: std::io::Result<T>) -> std::io::Result<T> {
        r.map_err(|e| {
            let copy = std::io::Error::new(e.kind(), e.to_string());
            self.error.get_or_insert(e);
            copy
        })
    }
}

impl Write for WriteErrors<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        self.keep(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        self.keep(r)
    }
}

/// An error of a write to several outputs (`writers`, named by the first of `names`): the one
/// whose writer failed is named, or else all `names` (an error of none of them: a store's).
fn which_failed(writers: &mut [WriteErrors], names: &[String], e: std::io::Error) -> Fail {
    match (writers.iter_mut().zip(names)).find_map(|(w, n)| Some((n, w.error.take()?))) {
        Some((name, e)) => write_fail(name, e),
        None => write_fail(&names.join(", "), e),
    }
}

/// A failed write to an output: an error naming the output (a full disk: exit 2). A closed pipe
/// (`... | head`) is `Fail(0, ..)`: when it is the command's only output the run ends quietly
/// with exit 0, as `cat` and ripgrep end ([`one_output`]); otherwise it is an error (exit 2),
/// and the command's other outputs, dropped uncommitted, are not written.
fn write_fail(name: &str, e: std::io::Error) -> Fail {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Fail(
            0,
            format!("{name}: cannot write: {e}: its reader has gone; no output file was written"),
        )
    } else {
        Fail(2, format!("{name}: cannot write: {e}"))
    }
}

fn progress_bar(quiet: bool, size: Option<u64>) -> Option<indicatif::ProgressBar> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let size = size.filter(|&s| s >= 64 << 20)?;
    let pb = indicatif::ProgressBar::new(size);
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Some(pb)
}

fn run_eval(a: EvalArgs) -> Result<(), Fail> {
    let mut inputs = vec![a.actual.as_path(), a.predicted.as_path()];
    inputs.extend(
        [&a.goal_names, &a.lemma_names, &a.names, &a.corpus, &a.goals]
            .into_iter()
            .flatten()
            .map(|p| p.as_path()),
    );
    distinct(
        &[a.common.output.as_deref(), a.summary_out.as_deref()],
        &inputs,
    )?;
    let summary_to_stdout = a.summary_out.as_deref().is_some_and(is_dash);
    one_stdout(&[
        (
            table_label(a.common.output.as_deref()),
            a.common.output.as_deref().is_none_or(is_dash),
        ),
        ("--summary-out -", summary_to_stdout),
    ])?;
    if summary_to_stdout && std::io::stdout().is_terminal() {
        return Err(Fail(
            2,
            "--summary-out -: the summary is binary and stdout is a terminal: redirect stdout, \
             or give --summary-out FILE"
                .into(),
        ));
    }
    if a.actual == Path::new("-") && a.predicted == Path::new("-") {
        return Err(Fail(
            2,
            "only one of ACTUAL and PREDICTED can be - (stdin)".into(),
        ));
    }
    let mut builder = Evaluator::builder()
        .relevance_level(a.relevance_level)
        .interpolation(a.interpolation)
        .ranking((&a.ranking).into())
        .missing(a.missing)
        .zero_relevant(if a.keep_zero_relevant {
            ZeroRelMode::Evaluate
        } else {
            ZeroRelMode::Skip
        })
        .regroup(a.regroup)
        .spill(a.memory.spill())
        .universe(a.universe);
    if let Some(t) = a.common.threads {
        builder = builder.threads(t);
    }
    if let Some(corpus) = &a.corpus {
        let opts = PremiseOptions {
            corpus: corpus.clone(),
            mask: a.mask,
            goals: a.goals.clone(),
            strict: a.strict,
            strict_gold: a.strict_gold,
        };
        let premises = Premises::load(&opts, Some(&a.actual))?;
        builder = builder.premises(std::sync::Arc::new(premises));
    }
    let mut measures = a.measures.clone();
    if let Some(t) = a.threshold {
        if measures.is_empty() {
            measures.extend(lemma_eval::DEFAULT_MEASURES.iter().map(|m| m.to_string()));
        }
        // Names already given are evaluated once (the measures are deduplicated).
        measures.extend(lemma_eval::curve::threshold_measures(t));
    }
    if !measures.is_empty() {
        builder = builder
            .measure_names(&measures)
            .map_err(|e| Fail(2, e.to_string()))?;
    }
    let names = match (&a.names, &a.goal_names, &a.lemma_names) {
        (Some(store), None, None) => Some(MatrixNames::Store(store.clone())),
        (None, Some(goals), Some(lemmas)) => Some(MatrixNames::Lists {
            goals: goals.clone(),
            lemmas: lemmas.clone(),
        }),
        (None, None, None) => None,
        _ => {
            return Err(Fail(
                2,
                "a .npy matrix needs its names: --goal-names FILE and --lemma-names FILE, or --names STORE".into(),
            ))
        }
    };
    let predicted = match a.shard {
        Some((index, count)) => PredictedInput::Shard {
            path: a.predicted.clone(),
            index,
            count,
        },
        None => PredictedInput::Path(a.predicted.clone()),
    };
    let job = Job::new(builder, a.actual.as_path(), predicted)
        .names(names)
        .mmap(a.common.mmap)
        .hold_actual(a.hold_actual)
        .mergeable(a.summary_out.is_some())
        .open()?;
    // Created first: a summary path that cannot be written fails before the evaluation.
    let summary_out = match &a.summary_out {
        Some(p) => Some(Out::new(Some(p))?),
        None => None,
    };
    let mut out = Out::new(a.common.output.as_deref())?;
    let out_name = out.name();
    let plan = job.plan().clone();
    let done = {
        let mut w = Writer::new(out.writer(), a.format, plan.measures());
        w.begin(a.per_goal).map_err(|e| write_fail(&out_name, e))?;
        let pb = progress_bar(a.common.quiet, job.size_on_disk());
        let progress = pb.as_ref().map(|pb| move |b: u64| pb.set_position(b));
        let progress = progress.as_ref().map(|p| p as &(dyn Fn(u64) + Sync));
        let mut per_goal_rows = RowFn(|row| w.row(&row));
        let sink: &mut dyn Sink = if a.per_goal {
            &mut per_goal_rows
        } else {
            &mut SummaryOnly
        };
        let done = job.evaluate(sink, progress);
        if let Some(pb) = pb {
            pb.finish_and_clear();
        }
        let done = done.map_err(|e| eval_fail(&out_name, e))?;
        let summary = &done.evaluation.summary;
        if let Some(t) = a.threshold {
            w.set_extra(lemma_eval::curve::pooled_at_threshold(t, summary));
        }
        w.finish(summary, a.per_goal)
            .map_err(|e| write_fail(&out_name, e))?;
        done
    };
    // The table before the summary: a summary replaced means its table was (lemma_outfile's
    // crate documentation says what a kill between the two renames leaves).
    let mut outs = vec![out];
    if let (Some(mut so), Some(partial)) = (summary_out, &done.partial) {
        let name = so.name();
        so.writer()
            .write_all(&partial.encode())
            .map_err(|e| write_fail(&name, e))?;
        outs.push(so);
    }
    commit_all(outs)?;
    if !a.common.quiet {
        let done_eval = &done.evaluation;
        eprint!(
            "lemma-eval: {}\n{}",
            done.actual_read,
            report_text(&done_eval.report, &done_eval.summary.counts())
        );
    }
    // The process ends here: freeing the sets would only delay it.
    std::mem::forget(done.held);
    Ok(())
}

fn run_merge(a: MergeArgs) -> Result<(), Fail> {
    let inputs: Vec<&Path> = a.summaries.iter().map(|p| p.as_path()).collect();
    distinct(&[a.output.as_deref()], &inputs)?;
    let read = |p: &Path| -> Result<Partial, Fail> {
        let bytes =
            std::fs::read(p).map_err(|e| Fail(2, format!("{}: cannot read: {e}", p.display())))?;
        Partial::decode(&bytes).map_err(|e| Fail(2, format!("{}: {e}", p.display())))
    };
    // One file at a time: of the earlier ones only their names, goals and shards are kept.
    let mut merger = lemma_eval::PartialMerger::new();
    for p in &a.summaries {
        let part = read(p)?;
        merger
            .add(&p.display().to_string(), part)
            .map_err(|e| Fail(2, e.0))?;
    }
    let (merged, lacking) = merger
        .finish(a.partial)
        .map_err(|e| Fail(2, format!("{e}; --partial merges the shards given")))?;
    let first = &a.summaries[0];
    let summary = merged
        .summary()
        .map_err(|e| Fail(2, format!("{}: {e}", first.display())))?;
    let mut out = Out::new(a.output.as_deref())?;
    let out_name = out.name();
    let mut w = Writer::new(out.writer(), a.format, merged.measures());
    // Shards of `eval --threshold T`: the pooled lines one `eval` prints.
    let pooled: Vec<_> = (lemma_eval::curve::pooled_thresholds(&summary).into_iter())
        .flat_map(|t| lemma_eval::curve::pooled_at_threshold(t, &summary))
        .collect();
    w.set_extra(pooled);
    w.set_lacking(lacking.clone());
    w.begin(false).map_err(|e| write_fail(&out_name, e))?;
    w.finish(&summary, false)
        .map_err(|e| write_fail(&out_name, e))?;
    out.commit()?;
    if !a.quiet {
        let counts = counts_text(&summary.counts());
        eprintln!(
            "lemma-eval: {} summaries merged: {counts}",
            a.summaries.len()
        );
        for l in &lacking {
            eprintln!(
                "lemma-eval: lacking {l}: the summary is of the goals the shards given ranked"
            );
        }
    }
    Ok(())
}

fn run_trec(a: TrecArgs) -> Result<(), Fail> {
    distinct(&[a.common.output.as_deref()], &[&a.qrels, &a.run])?;
    let mut o = TrecOptions::default();
    o.measures = a.measures.clone();
    o.per_query = a.per_query;
    o.complete = a.complete;
    o.no_summary = a.no_summary;
    o.max_docs = a.max_docs;
    o.level = a.level;
    o.version = a.version;
    if let Some(t) = a.common.threads {
        o.threads = t.max(1);
    }
    o.mmap = a.common.mmap;
    o.spill = a.memory.spill();
    let mut out = Out::new(a.common.output.as_deref())?;
    let out_name = out.name();
    // A write error is told apart from the evaluation's own (a closed pipe ends quietly).
    let mut w = WriteErrors {
        inner: out.writer(),
        error: None,
    };
    let done = match trec::run_to(&a.qrels, &a.run, &o, &mut w) {
        Ok(done) => done,
        Err(e) => match w.error.take() {
            Some(io) => return Err(write_fail(&out_name, io)),
            None => return Err(Fail(e.code, e.message)),
        },
    };
    out.commit()?;
    if !a.common.quiet && a.report {
        eprint!("{}", report_text(&done.report, &done.summary.counts()));
    }
    Ok(())
}

fn run_gen(a: GenArgs) -> Result<(), Fail> {
    let outputs = [
        Some(a.qrels.as_path()),
        Some(a.run.as_path()),
        a.goal_names.as_deref(),
        a.lemma_names.as_deref(),
    ];
    distinct(&outputs, &[])?;
    let dash = |p: Option<&Path>| p.is_some_and(is_dash);
    one_stdout(&[
        ("--qrels -", dash(Some(&a.qrels))),
        ("--run -", dash(Some(&a.run))),
        ("--goal-names -", dash(a.goal_names.as_deref())),
        ("--lemma-names -", dash(a.lemma_names.as_deref())),
    ])?;
    if a.format == GenFormat::Store && is_dash(&a.run) {
        return Err(Fail(
            2,
            "--run -: a store cannot go to stdout: its header is written last, at its start \
             (give --run FILE)"
                .into(),
        ));
    }
    if let Some(corpus) = &a.corpus {
        return gen_corpus(&a, corpus);
    }
    let spec = lemma_tools::gen::GenSpec {
        goals: a.goals,
        universe: a.universe.max(1),
        depth: if a.full { a.universe } else { a.depth },
        empty_share: a.empty_share,
        relevant_mean: a.relevant_mean,
        relevant_max: a.relevant_max.max(1),
        tie_share: a.ties,
        unretrieved_share: a.unretrieved_share,
        graded: a.graded,
        seed: a.seed,
    };
    let mut q = Out::new(Some(&a.qrels))?;
    // A write error names the output whose writer failed; the store's own, both files.
    fn tag(o: &mut Out) -> WriteErrors<'_> {
        WriteErrors {
            inner: o.writer(),
            error: None,
        }
    }
    // The files are committed together, the qrels last.
    let outs = match a.format {
        GenFormat::Trec | GenFormat::Jsonl => {
            let mut r = Out::new(Some(&a.run))?;
            let names = [r.name(), q.name()];
            let mut w = [tag(&mut r), tag(&mut q)];
            let [rw, qw] = &mut w;
            let made = match a.format {
                GenFormat::Trec => lemma_tools::gen::generate_trec(&spec, qw, rw),
                _ => lemma_tools::gen::generate_jsonl(&spec, qw, rw),
            };
            made.map_err(|e| which_failed(&mut w, &names, e))?;
            vec![r, q]
        }
        GenFormat::Store => {
            let names = [q.name(), a.run.display().to_string()];
            let mut w = [tag(&mut q)];
            let [qw] = &mut w;
            let store = lemma_tools::gen::generate_store(&spec, &a.run, qw, a.scores)
                .map_err(|e| which_failed(&mut w, &names, e))?;
            vec![Out::File(std::io::BufWriter::new(store)), q]
        }
        GenFormat::Npy => {
            let (Some(gn), Some(ln)) = (&a.goal_names, &a.lemma_names) else {
                return Err(Fail(
                    2,
                    "--format npy needs --goal-names FILE and --lemma-names FILE".into(),
                ));
            };
            let (mut r, mut g, mut l) = (
                Out::new(Some(&a.run))?,
                Out::new(Some(gn))?,
                Out::new(Some(ln))?,
            );
            let names = [r.name(), g.name(), l.name(), q.name()];
            let mut w = [tag(&mut r), tag(&mut g), tag(&mut l), tag(&mut q)];
            let [rw, gw, lw, qw] = &mut w;
            lemma_tools::gen::generate_npy(&spec, rw, gw, lw, qw)
                .map_err(|e| which_failed(&mut w, &names, e))?;
            vec![r, g, l, q]
        }
    };
    commit_all(outs)
}

/// `gen --corpus`: a library, its goals' actual sets and a run or matrix, committed together.
fn gen_corpus(a: &GenArgs, corpus: &Path) -> Result<(), Fail> {
    distinct(&[Some(corpus)], &[a.qrels.as_path(), a.run.as_path()])?;
    let spec = lemma_tools::gen_corpus::CorpusSpec {
        files: a.files.unwrap_or(a.universe / 50).max(1),
        premises: a.universe.max(1),
        goals: a.goals,
        depth: a.depth,
        relevant_mean: a.relevant_mean.min(20.0),
        inaccessible_gold: a.inaccessible_gold,
        seed: a.seed,
        ..lemma_tools::gen_corpus::CorpusSpec::default()
    };
    let (mut c, mut q, mut r) = (
        Out::new(Some(corpus))?,
        Out::new(Some(&a.qrels))?,
        Out::new(Some(&a.run))?,
    );
    let names = format!("{}, {}, {}", c.name(), q.name(), r.name());
    let io = |e: std::io::Error| write_fail(&names, e);
    let outs = match a.format {
        GenFormat::Trec => {
            lemma_tools::gen_corpus::generate_corpus(&spec, c.writer(), q.writer(), r.writer())
                .map_err(io)?;
            vec![r, c, q]
        }
        GenFormat::Npy => {
            let (Some(gn), Some(ln)) = (&a.goal_names, &a.lemma_names) else {
                return Err(Fail(
                    2,
                    "--corpus with --format npy needs --goal-names FILE and --lemma-names FILE"
                        .into(),
                ));
            };
            let (mut g, mut l) = (Out::new(Some(gn))?, Out::new(Some(ln))?);
            lemma_tools::gen_corpus::generate_corpus_npy(
                &spec,
                c.writer(),
                q.writer(),
                r.writer(),
                g.writer(),
                l.writer(),
            )
            .map_err(io)?;
            vec![r, g, l, c, q]
        }
        _ => {
            return Err(Fail(
                2,
                "--corpus writes a TREC run (--format trec) or a score matrix (--format npy)"
                    .into(),
            ))
        }
    };
    commit_all(outs)
}

fn run_curve(a: CurveArgs) -> Result<(), Fail> {
    let mut inputs = vec![a.actual.as_path()];
    inputs.extend(a.predicted.iter().map(|p| p.as_path()));
    distinct(&[a.output.as_deref(), a.plot.as_deref()], &inputs)?;
    one_stdout(&[
        (
            table_label(a.output.as_deref()),
            a.output.as_deref().is_none_or(is_dash),
        ),
        ("--plot -", a.plot.as_deref().is_some_and(is_dash)),
    ])?;
    use lemma_eval::curve;
    use std::fmt::Write as _;
    if a.pooled {
        return run_pooled(a);
    }
    let actual = lemma_eval::read_actual_with_threads(&a.actual, a.scoring.threads())?;
    let actual = std::sync::Arc::new(actual);
    let builder = a.scoring.builder();
    let run_names: Vec<String> = a
        .predicted
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let several = a.predicted.len() > 1;
    let run_col = |i: usize| match several {
        true => format!("{}\t", run_names[i]),
        false => String::new(),
    };
    let num = |v: Option<f64>| v.map_or_else(|| "NA".to_string(), |v| format!("{v}"));
    let json_num = |v: Option<f64>| v.map_or(serde_json::Value::Null, |v| serde_json::json!(v));
    let mut text = String::new();
    let mut runs_json = Vec::new();
    let mut series: Vec<Vec<(f64, f64)>> = Vec::new();
    let title;
    match &a.goal {
        None => {
            let levels = curve::recall_levels(a.points as usize);
            let builder = builder
                .measure_names(curve::macro_measures(&levels))
                .map_err(|e| Fail(2, e.to_string()))?;
            let _ = writeln!(
                text,
                "{}recall\tprecision",
                if several { "run\t" } else { "" }
            );
            for (i, p) in a.predicted.iter().enumerate() {
                let done = Job::new(builder.clone(), actual.clone(), p.as_path())
                    .run(&mut SummaryOnly, None)?
                    .evaluation;
                let points = curve::macro_points(&levels, &done.summary);
                for q in &points {
                    let _ = writeln!(text, "{}{}\t{}", run_col(i), q.recall, num(q.precision));
                }
                runs_json.push(serde_json::json!({
                    "run": run_names[i],
                    "goals_evaluated": done.summary.counts().evaluated,
                    "points": points.iter().map(|q| serde_json::json!({
                        "recall": q.recall, "precision": json_num(q.precision)
                    })).collect::<Vec<_>>(),
                }));
                series.push(
                    points
                        .iter()
                        .filter_map(|q| Some((q.recall, q.precision?)))
                        .collect(),
                );
            }
            title = format!(
                "interpolated precision, mean over goals ({} levels)",
                levels.len()
            );
        }
        Some(goal) => {
            let Some((_, truth)) = actual.goal(goal.as_bytes()) else {
                return Err(Fail(
                    2,
                    format!(
                        "{}: no goal `{goal}` in the actual sets",
                        a.actual.display()
                    ),
                ));
            };
            let r = truth
                .entries()
                .filter(|&(_, g)| g >= a.scoring.relevance_level)
                .count();
            if r == 0 {
                return Err(Fail(
                    2,
                    format!(
                        "{}: goal `{goal}` has no relevant lemma (R = 0 at relevance level {}): \
                         it has no curve",
                        a.actual.display(),
                        a.scoring.relevance_level
                    ),
                ));
            }
            let builder = builder
                .measure_names(curve::goal_measures(r))
                .map_err(|e| Fail(2, e.to_string()))?;
            let _ = writeln!(
                text,
                "{}rank\trecall\tprecision\tinterpolated_precision",
                if several { "run\t" } else { "" }
            );
            for (i, p) in a.predicted.iter().enumerate() {
                let mut depths = Vec::new();
                let mut sink = RowFn(|row: lemma_eval::GoalRow| {
                    if row.goal == goal.as_bytes() {
                        depths = row.values;
                    }
                    Ok(())
                });
                Job::new(builder.clone(), actual.clone(), p.as_path()).run(&mut sink, None)?;
                let points = curve::goal_points(r, &depths);
                for q in &points {
                    let _ = writeln!(
                        text,
                        "{}{}\t{}\t{}\t{}",
                        run_col(i),
                        q.rank,
                        q.recall,
                        q.precision,
                        q.interpolated
                    );
                }
                runs_json.push(serde_json::json!({
                    "run": run_names[i],
                    "points": points.iter().map(|q| serde_json::json!({
                        "rank": q.rank, "recall": q.recall, "precision": q.precision,
                        "interpolated_precision": q.interpolated,
                    })).collect::<Vec<_>>(),
                }));
                // The interpolated curve as steps: flat from each point back to the last.
                let mut steps = Vec::new();
                let mut from = 0.0;
                for q in &points {
                    steps.push((from, q.interpolated));
                    steps.push((q.recall, q.interpolated));
                    from = q.recall;
                }
                series.push(steps);
            }
            title = format!("goal {goal}: interpolated precision ({r} relevant)");
        }
    }
    let mut out = Out::new(a.output.as_deref())?;
    let name = out.name();
    let written = match a.format {
        CurveFormat::Tsv => out.writer().write_all(text.as_bytes()),
        CurveFormat::Json => {
            let mut doc =
                serde_json::json!({ "curve": if a.goal.is_some() { "goal" } else { "macro" } });
            if let Some(g) = &a.goal {
                doc["goal"] = serde_json::json!(g);
            } else {
                doc["levels"] = serde_json::json!(a.points);
            }
            doc["runs"] = serde_json::Value::Array(runs_json);
            writeln!(out.writer(), "{doc}")
        }
    };
    written.map_err(|e| write_fail(&name, e))?;
    let mut outs = vec![out];
    if let Some(plot) = &a.plot {
        outs.push(write_plot(plot, &title, &run_names, &series)?);
    }
    commit_all(outs)
}

/// `--plot`: the runs' curves on one chart, written to `plot` as SVG, to be committed with the
/// command's other output.
fn write_plot(
    plot: &Path,
    title: &str,
    run_names: &[String],
    series: &[Vec<(f64, f64)>],
) -> Result<Out, Fail> {
    let named: Vec<lemma_plot::Series<'_>> = (run_names.iter().zip(series))
        .map(|(n, s)| lemma_plot::Series { name: n, points: s })
        .collect();
    let svg = lemma_plot::pr_curves_svg(title, &named, lemma_plot::SIZE).map_err(|e| Fail(2, e))?;
    let mut f = Out::new(Some(plot))?;
    let fname = f.name();
    f.writer()
        .write_all(svg.as_bytes())
        .map_err(|e| write_fail(&fname, e))?;
    Ok(f)
}

fn run_convert(a: ConvertArgs) -> Result<(), Fail> {
    distinct(&[Some(a.output.as_path())], &[&a.actual, &a.predicted])?;
    if is_dash(&a.output) {
        return Err(Fail(
            2,
            "-o -: a store cannot go to stdout: its header is written last, at its start (give \
             -o FILE)"
                .into(),
        ));
    }
    let actual = ActualSets::read_path(&a.actual)?;
    let input = lemma_ingest::open(&a.predicted)?;
    let opts = RankingOptions::from(&a.ranking);
    let r = lemma_eval::convert::convert(&actual, input, &opts, &a.output)?;
    eprintln!(
        "lemma-eval: {}: {} goals, {} ranked lemmas, {} distinct lemmas, {} duplicates dropped",
        a.output.display(),
        r.goals,
        r.entries,
        r.lemmas,
        r.duplicates_dropped
    );
    Ok(())
}

/// What a corpus holds, and the time to read it.
fn read_corpus(path: &Path) -> Result<(), Fail> {
    let started = std::time::Instant::now();
    let c = lemma_ingest::Corpus::read(path)?;
    let s = c.skipped();
    println!(
        "{}: {} files, {} premises ({} skipped: {} without a name, {} user__.n, {} with empty \
         code, {} mutual) in {:.3} s; {:.1} MB held",
        path.display(),
        c.files(),
        c.premises(),
        s.total(),
        s.no_name,
        s.user_n,
        s.empty_code,
        s.mutual,
        started.elapsed().as_secs_f64(),
        c.heap_bytes() as f64 / 1e6
    );
    Ok(())
}

/// The machine's read rate for `file` ([`lemma_tools::read_rate`]).
fn read_rate(file: &Path, threads: usize) -> Result<(), Fail> {
    let (bytes, secs, total) = lemma_tools::read_rate(file, threads)
        .map_err(|e| Fail(2, format!("{}: {e}", file.display())))?;
    println!(
        "{bytes} bytes in {secs:.4} s: {:.2} GB/s ({threads} threads; sum {total})",
        bytes as f64 / secs / 1e9
    );
    Ok(())
}

/// `curve --pooled [--bins K]`: each run's pooled curve, rows streamed to the output.
fn run_pooled(a: CurveArgs) -> Result<(), Fail> {
    use lemma_eval::pooled::PooledSetup;
    let threads = a.scoring.threads();
    let actual = std::sync::Arc::new(lemma_eval::read_actual_with_threads(&a.actual, threads)?);
    let several = a.predicted.len() > 1;
    let mut out = Out::new(a.output.as_deref())?;
    let name = out.name();
    let json = a.format == CurveFormat::Json;
    let mut series: Vec<Vec<(f64, f64)>> = Vec::new();
    let run_names: Vec<String> = (a.predicted.iter())
        .map(|p| p.display().to_string())
        .collect();
    let w = |r: std::io::Result<()>| r.map_err(|e| write_fail(&name, e));
    if json {
        let bins = a.bins.map_or("null".to_string(), |k| k.to_string());
        w(write!(
            out.writer(),
            "{{\"curve\":\"pooled\",\"bins\":{bins},\"runs\":["
        ))?;
    } else {
        w(writeln!(
            out.writer(),
            "{}threshold\ttp\tfp\tprecision\trecall\tf1",
            if several { "run\t" } else { "" }
        ))?;
    }
    for (i, p) in a.predicted.iter().enumerate() {
        let setup = match a.bins {
            Some(k) => PooledSetup::binned(k),
            None => {
                let dir = a.memory.spill().directory();
                PooledSetup::exact(a.memory.memory, threads, dir)
            }
        };
        let builder = (a.scoring.builder())
            .measure_names(["NumRel"])
            .map_err(|e| Fail(2, e.to_string()))?
            .zero_relevant(if a.keep_zero_relevant {
                ZeroRelMode::Evaluate
            } else {
                ZeroRelMode::Skip
            })
            .pooled(setup.spec());
        let done = Job::new(builder, actual.clone(), p.as_path())
            .run(&mut SummaryOnly, None)?
            .evaluation;
        let curve = done
            .summary
            .pooled()
            .expect("the plan keeps the pooled curve");
        let view = setup.view(curve)?;
        let st = view.stats();
        let (runs, bytes) = view.spilled();
        if runs > 0 {
            eprintln!(
                "lemma-eval: {}: the pooled curve's {} distinct scores outgrew --memory {}: \
                 {runs} sorted runs ({:.1} MB) written to {} and merged",
                run_names[i],
                st.rows,
                lemma_ingest::binary_size(a.memory.memory),
                bytes as f64 / 1e6,
                a.memory.spill().directory().display()
            );
        }
        let best = st.best_f1;
        let fnum = |v: Option<f64>| v.map_or("null".to_string(), |v| format!("{v}"));
        if json {
            w(write!(
                out.writer(),
                "{}{{\"run\":{},\"items\":{},\"relevant\":{},\"average_precision\":{},\
                 \"ap_error_bound\":{},\"best_f1\":{},\"best_f1_threshold\":{},\"points\":[",
                if i > 0 { "," } else { "" },
                serde_json::Value::from(run_names[i].as_str()),
                st.items,
                st.total_relevant,
                st.average_precision,
                fnum(view.ap_bound()),
                fnum(best.map(|b| b.0)),
                fnum(best.map(|b| b.1)),
            ))?;
        } else {
            let mut line = String::from("# ");
            if several {
                line += &format!("run={}\t", run_names[i]);
            }
            line += &format!(
                "items={}\trelevant={}\taverage_precision={}",
                st.items, st.total_relevant, st.average_precision
            );
            if let Some(b) = view.ap_bound() {
                line += &format!("\tap_error_bound={b}");
            }
            if let Some((f, t)) = best {
                line += &format!("\tbest_f1={f}\tbest_f1_threshold={t}");
            }
            w(writeln!(out.writer(), "{line}"))?;
        }
        let prefix = if several {
            format!("{}\t", run_names[i])
        } else {
            String::new()
        };
        let mut first = true;
        let mut failed = None;
        let mut points = lemma_plot::Thin::default();
        let writer = out.writer();
        // Rows are formatted into `buf` (the numbers as `Display` writes them, faster: a curve
        // may have millions of rows) and written 64 KiB at a time.
        let mut buf: Vec<u8> = Vec::with_capacity(80 << 10);
        let read = view.rows(|r| {
            if failed.is_some() {
                return;
            }
            use lemma_eval::output::{push_f64, push_u64};
            if json {
                buf.extend_from_slice(if first { b"{" } else { b",{" });
                first = false;
                buf.extend_from_slice(b"\"threshold\":");
                push_f64(&mut buf, r.threshold);
                buf.extend_from_slice(b",\"tp\":");
                push_u64(&mut buf, r.tp);
                buf.extend_from_slice(b",\"fp\":");
                push_u64(&mut buf, r.fp);
                buf.extend_from_slice(b",\"precision\":");
                push_f64(&mut buf, r.precision);
                buf.extend_from_slice(b",\"recall\":");
                push_f64(&mut buf, r.recall);
                buf.extend_from_slice(b",\"f1\":");
                push_f64(&mut buf, r.f1);
                buf.push(b'}');
            } else {
                buf.extend_from_slice(prefix.as_bytes());
                push_f64(&mut buf, r.threshold);
                buf.push(b'\t');
                push_u64(&mut buf, r.tp);
                buf.push(b'\t');
                push_u64(&mut buf, r.fp);
                for v in [r.precision, r.recall, r.f1] {
                    buf.push(b'\t');
                    push_f64(&mut buf, v);
                }
                buf.push(b'\n');
            }
            if buf.len() >= 64 << 10 {
                if let Err(e) = writer.write_all(&buf) {
                    failed = Some(e);
                }
                buf.clear();
            }
            if a.plot.is_some() {
                points.push((r.recall, r.precision));
            }
        });
        // The rows before a failure to read them (a spilled run) are written, as they were when
        // each went out on its own.
        if failed.is_none() {
            if let Err(e) = writer.write_all(&buf) {
                failed = Some(e);
            }
        }
        read?;
        if let Some(e) = failed {
            return Err(write_fail(&name, e));
        }
        if json {
            w(write!(out.writer(), "]}}"))?;
        }
        series.push(points.finish());
    }
    if json {
        w(writeln!(out.writer(), "]}}"))?;
    }
    if let Some(plot) = &a.plot {
        let title = match a.bins {
            Some(k) => format!("pooled precision over all goals ({k} bins of equal count)"),
            None => "pooled precision over all goals, a point per distinct score".to_string(),
        };
        let plot = write_plot(plot, &title, &run_names, &series)?;
        return commit_all([out, plot]);
    }
    out.commit()
}

/// `report`: one pass per run, then the page.
fn run_report(a: ReportArgs) -> Result<(), Fail> {
    let mut inputs = vec![a.actual.as_path()];
    inputs.extend(a.predicted.iter().map(|p| p.as_path()));
    distinct(&[a.output.as_deref()], &inputs)?;
    use lemma_eval::pooled::PooledSetup;
    let threads = a.scoring.threads();
    let actual = std::sync::Arc::new(lemma_eval::read_actual_with_threads(&a.actual, threads)?);
    let size = |p: &Path| {
        (p != Path::new("-"))
            .then(|| {
                std::fs::metadata(p)
                    .ok()
                    .filter(|m| m.is_file())
                    .map(|m| m.len())
            })
            .flatten()
    };
    let mut inputs = vec![lemma_report::InputFile {
        role: "actual sets".into(),
        path: a.actual.display().to_string(),
        bytes: size(&a.actual),
    }];
    let mut runs = Vec::new();
    for p in &a.predicted {
        inputs.push(lemma_report::InputFile {
            role: "predictions".into(),
            path: p.display().to_string(),
            bytes: size(p),
        });
        let builder = a.scoring.builder();
        let setup = PooledSetup::exact(a.memory.memory, threads, a.memory.spill().directory());
        let name = p.display().to_string();
        let r = lemma_report::evaluate_run(&name, builder, actual.clone(), p.as_path(), &setup)?;
        runs.push(r);
    }
    let command = std::env::args_os()
        .map(|w| w.to_string_lossy().into_owned())
        .map(|w| {
            let plain = !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,@+%".contains(&b));
            if plain {
                w
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    let page = lemma_report::Page {
        command,
        inputs,
        runs,
    };
    let html = lemma_report::html(&page).map_err(|e| Fail(2, e))?;
    let mut out = Out::new(a.output.as_deref())?;
    let name = out.name();
    out.writer()
        .write_all(html.as_bytes())
        .map_err(|e| write_fail(&name, e))?;
    out.commit()
}
