//! The held engine: an [`Evaluator`] built once from actual sets and options, run on
//! [`Predictions`] of any kind, per-goal rows delivered to a [`Sink`]. Whole inputs (paths,
//! shards, sorted qrels read along the predictions) come in through [`crate::Job`].

use crate::full::{self, Source};
use crate::outcome::Predicted;
use crate::sink::Sink;
use crate::{
    DuplicateMode, EvalError, EvalOptions, MissingMode, OrderMode, Partial, RankingOptions, Report,
    TieMode, ZeroRelMode,
};
use lemma_accum::{Interpolation, Measure, Plan, Summary};
use lemma_ingest::{
    show, ActualSets, ErrorKind, Input, InputError, Matrix, Names, SortedQrels, Store,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The measures evaluated when none are named: the usual ones for premise selection.
pub const DEFAULT_MEASURES: [&str; 11] = [
    "R@1",
    "R@10",
    "R@100",
    "P@1",
    "P@10",
    "RR",
    "AP",
    "AP@100",
    "nDCG@10",
    "Rprec",
    "Depth(recall=1.0)",
];

/// What a file holds, recognised from its first bytes (never from its name).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// TREC or JSONL text, plain, gzip or zstd (also stdin, `-`).
    Text,
    /// A binary store (docs/FORMAT.md): rankings and actual sets.
    Store,
    /// A dense NumPy `.npy` score matrix `[goals, lemmas]`.
    Matrix,
}

impl InputKind {
    /// The kind of `path`'s content (`-`, stdin, is text). Only a regular file is read to tell
    /// (stores and matrices are memory-mapped, so they are regular files): anything else (a pipe,
    /// `/dev/stdin`, process substitution, a FIFO, a device) is text, and is not read here, since
    /// what is read from it could not be read again when the input is opened.
    pub fn of(path: &Path) -> Result<InputKind, InputError> {
        if lemma_ingest::read_once(path) {
            return Ok(InputKind::Text);
        }
        let mut head = [0u8; 8];
        let mut f = std::fs::File::open(path)
            .map_err(|e| InputError::file(ErrorKind::Io, path, format!("cannot open: {e}")))?;
        let mut n = 0;
        while n < head.len() {
            match std::io::Read::read(&mut f, &mut head[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(InputError::read(path, e)),
            }
        }
        Ok(if n == 8 && &head == lemma_ingest::STORE_MAGIC {
            InputKind::Store
        } else if n >= 6 && &head[..6] == b"\x93NUMPY" {
            InputKind::Matrix
        } else {
            InputKind::Text
        })
    }
}

/// Reads actual sets from a path of any kind that holds them: TREC qrels or JSONL (plain, gzip,
/// zstd, `-` for stdin) or a binary store's.
pub fn read_actual(path: &Path) -> Result<ActualSets, InputError> {
    read_actual_with_threads(path, EvalOptions::default().threads)
}

/// [`read_actual`] on at most `threads` threads (at least one; TREC qrels are read in parts).
pub fn read_actual_with_threads(path: &Path, threads: usize) -> Result<ActualSets, InputError> {
    read_actual_within(path, threads, &lemma_ingest::SpillOptions::default())
}

/// [`read_actual_with_threads`] within `spill`'s memory budget: text from a stream (compressed,
/// a pipe) is read a block of whole goals at a time, one goal's lines at most half the budget
/// ([`ActualSets::read_within`]).
pub fn read_actual_within(
    path: &Path,
    threads: usize,
    spill: &lemma_ingest::SpillOptions,
) -> Result<ActualSets, InputError> {
    match InputKind::of(path)? {
        InputKind::Text => ActualSets::read_path_within(path, threads, spill),
        InputKind::Store => Store::open(path)?.actual_sets(),
        InputKind::Matrix => Err(InputError::file(
            ErrorKind::Syntax,
            path,
            "a .npy matrix holds scores, not actual sets",
        )),
    }
}

/// Where a dense matrix's goal (row) and lemma (column) names come from.
#[derive(Clone, Debug)]
pub enum MatrixNames {
    /// Two files of names, one per line: the rows', then the columns'.
    Lists {
        /// The goal names, one per row.
        goals: PathBuf,
        /// The lemma names, one per column.
        lemmas: PathBuf,
    },
    /// A store's goal and lemma tables (a store converted from the same goals and universe).
    Store(PathBuf),
    /// A file of goal names, one per row; the columns are the corpus's premises in its order
    /// ([`Corpus::premise_names`](lemma_ingest::Corpus::premise_names): ReProver's
    /// `corpus.all_premises`, the columns of its similarity matrix). Needs a corpus.
    Premises {
        /// The goal names, one per row.
        goals: PathBuf,
    },
}

/// A matrix whose columns are a corpus's premises, asked for without one.
pub(crate) const NO_CORPUS: &str =
    "without --lemma-names FILE a matrix's columns are the corpus's premises: \
                         give the corpus (--corpus FILE)";

/// What is wrong with `matrix`, whose columns are `corpus`'s premises, of a width other than
/// theirs (its path left to the error).
pub(crate) fn premise_width(matrix: &Matrix, corpus: &lemma_ingest::Corpus) -> String {
    format!(
        "shape ({}, {}): without --lemma-names FILE its columns are the premises of the corpus \
         {}, which has {}",
        matrix.rows(),
        matrix.cols(),
        corpus.path().display(),
        corpus.premises()
    )
}

/// Predictions of any kind, opened.
pub enum Predictions {
    /// TREC run or JSONL text, streamed.
    Text(Input),
    /// A binary store, memory-mapped.
    Store(Store),
    /// A dense score matrix, memory-mapped, with its names.
    Matrix {
        /// The scores.
        matrix: Matrix,
        /// Goal names, one per row.
        goals: Names,
        /// Lemma names, one per column.
        lemmas: Names,
    },
}

impl Predictions {
    /// Opens `path` as what its content is. A matrix needs its names: pass them in `names` (an
    /// error names the missing option otherwise). `mmap` lets a plain text file be memory-mapped
    /// rather than read in chunks.
    pub fn open(
        path: &Path,
        names: Option<&MatrixNames>,
        mmap: bool,
    ) -> Result<Predictions, InputError> {
        Self::open_in(path, names, mmap, None)
    }

    /// [`Predictions::open`] under `corpus`, which names the columns of a matrix given
    /// [`MatrixNames::Premises`].
    pub fn open_in(
        path: &Path,
        names: Option<&MatrixNames>,
        mmap: bool,
        corpus: Option<&lemma_ingest::Corpus>,
    ) -> Result<Predictions, InputError> {
        Ok(match InputKind::of(path)? {
            InputKind::Text => Predictions::Text(lemma_ingest::open_with(path, mmap)?),
            InputKind::Store => Predictions::Store(Store::open(path)?),
            InputKind::Matrix => {
                let matrix = Matrix::open(path)?;
                let Some(names) = names else {
                    return Err(InputError::file(
                        ErrorKind::Syntax,
                        path,
                        "a .npy matrix needs its names: --goal-names FILE and --lemma-names FILE, \
                         or --names STORE",
                    ));
                };
                let (goals, lemmas) = match names {
                    MatrixNames::Store(store) => {
                        let s = Store::open(store)?;
                        (
                            (0..s.goals()).map(|g| s.goal_name(g)).collect(),
                            (0..s.lemmas() as u32).map(|l| s.lemma_name(l)).collect(),
                        )
                    }
                    MatrixNames::Lists { goals, lemmas } => {
                        (Names::read(goals)?, Names::read(lemmas)?)
                    }
                    MatrixNames::Premises { goals } => {
                        let Some(corpus) = corpus else {
                            return Err(InputError::file(ErrorKind::Syntax, path, NO_CORPUS));
                        };
                        return Predictions::premise_matrix(matrix, Names::read(goals)?, corpus);
                    }
                };
                Predictions::matrix(matrix, goals, lemmas)?
            }
        })
    }

    /// A matrix whose columns are `corpus`'s premises in its order
    /// ([`Corpus::premise_names`](lemma_ingest::Corpus::premise_names)), its rows named by
    /// `goals`: [`Predictions::matrix`], a width other than the corpus's premises refused.
    pub fn premise_matrix(
        matrix: Matrix,
        goals: Names,
        corpus: &lemma_ingest::Corpus,
    ) -> Result<Predictions, InputError> {
        if matrix.cols() != corpus.premises() {
            let m = premise_width(&matrix, corpus);
            return Err(InputError::file(ErrorKind::Syntax, matrix.path(), m));
        }
        Predictions::matrix(matrix, goals, corpus.premise_names())
    }

    /// A matrix with its names, checked against its shape; a name given to two rows (goals) or
    /// two columns (lemmas) is an error.
    pub fn matrix(matrix: Matrix, goals: Names, lemmas: Names) -> Result<Predictions, InputError> {
        if goals.len() != matrix.rows() || lemmas.len() != matrix.cols() {
            return Err(InputError::file(
                ErrorKind::Syntax,
                matrix.path(),
                format!(
                    "shape ({}, {}) but {} goal names and {} lemma names",
                    matrix.rows(),
                    matrix.cols(),
                    goals.len(),
                    lemmas.len()
                ),
            ));
        }
        for (names, what) in [(&goals, "row"), (&lemmas, "column")] {
            distinct_names(names, what, matrix.path())?;
        }
        Ok(Predictions::Matrix {
            matrix,
            goals,
            lemmas,
        })
    }

    /// The kind.
    pub fn kind(&self) -> InputKind {
        match self {
            Predictions::Text(_) => InputKind::Text,
            Predictions::Store(_) => InputKind::Store,
            Predictions::Matrix { .. } => InputKind::Matrix,
        }
    }

    /// The file's size on disk, when known (for progress).
    pub fn size_on_disk(&self) -> Option<u64> {
        match self {
            Predictions::Text(i) => i.size_on_disk,
            Predictions::Store(_) | Predictions::Matrix { .. } => None,
        }
    }
}

/// An error when a name is given to two rows (`what`: "row") or two columns of the matrix at
/// `path`.
pub(crate) fn distinct_names(names: &Names, what: &str, path: &Path) -> Result<(), InputError> {
    let mut first = hashbrown::HashMap::with_capacity(names.len());
    for (i, n) in names.iter().enumerate() {
        if let Some(j) = first.insert(n, i) {
            return Err(InputError::file(
                ErrorKind::Duplicate,
                path,
                format!(
                    "`{}` names {what} {} and {what} {}: each {what} needs a name of its own",
                    show(n),
                    j + 1,
                    i + 1
                ),
            ));
        }
    }
    Ok(())
}

/// An evaluation's outcome: the summary (exact, mergeable) and what happened.
#[derive(Debug)]
pub struct Evaluation {
    /// Aggregates and goal counts.
    pub summary: Summary,
    /// Lines, bytes, goals reordered, duplicates dropped, time.
    pub report: Report,
}

impl Evaluation {
    /// What `--group-by` and `--by` met, into the report (goals without a group or stratum,
    /// counted for the warnings), or an error under `--strict`. Every door's evaluation ends
    /// here (a front door, an evaluator, a session); doing it twice gives the same report.
    pub(crate) fn finish_groups(mut self, opts: &EvalOptions) -> Result<Evaluation, EvalError> {
        if let Some(g) = &opts.group_by {
            self.report.groups = Some(g.finish(&self.summary)?);
        }
        if let Some(s) = &opts.strata {
            self.report.strata = Some(s.finish(&self.summary)?);
        }
        Ok(self)
    }
}

/// Actual sets and options, ready to evaluate any number of predictions. Cloning is cheap (the
/// actual sets are shared), and an evaluator is `Send + Sync`: a clone per thread or task.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use lemma_eval::{Evaluator, Predictions, SummaryOnly};
/// let dir = tempfile::tempdir()?;
/// let (qrels, run) = (dir.path().join("qrels"), dir.path().join("run"));
/// std::fs::write(&qrels, "g1 0 a 1\ng1 0 b 1\ng1 0 c 1\n")?;
/// std::fs::write(&run, "g1 Q0 x 1 6 t\ng1 Q0 a 2 5 t\ng1 Q0 y 3 4 t\n\
///                       g1 Q0 b 4 3 t\ng1 Q0 c 5 2 t\ng1 Q0 z 6 1 t\n")?;
/// let evaluator = Evaluator::builder()
///     .measure_names(["AP", "P@2", "RR"])?
///     .threads(1)
///     .build_from_path(&qrels)?;
/// let done = evaluator.evaluate(Predictions::open(&run, None, false)?, &mut SummaryOnly)?;
/// let means: Vec<f64> = done.summary.aggregates().iter().filter_map(|(_, a)| a.headline()).collect();
/// // The ranking x a y b c z against {a, b, c}: AP = (1/2 + 2/4 + 3/5) / 3, P@2 = 1/2, RR = 1/2.
/// assert_eq!(means, [(1.0 / 2.0 + 2.0 / 4.0 + 3.0 / 5.0) / 3.0, 0.5, 0.5]);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Evaluator {
    actual: Arc<ActualSets>,
    options: Arc<EvalOptions>,
    plan: Arc<Plan>,
}

impl std::fmt::Debug for Evaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluator")
            .field("goals", &self.actual.goals.len())
            .field("lemmas", &self.actual.lemmas.len())
            .field("options", &self.options)
            .finish()
    }
}

impl Evaluator {
    /// Options first, actual sets last ([`EvaluatorBuilder::build`]).
    pub fn builder() -> EvaluatorBuilder {
        EvaluatorBuilder::default()
    }

    /// The actual sets.
    pub fn actual(&self) -> &ActualSets {
        &self.actual
    }

    /// The options.
    pub fn options(&self) -> &EvalOptions {
        &self.options
    }

    /// The measures in output order, and what a summary holds.
    pub fn plan(&self) -> &Arc<Plan> {
        &self.plan
    }

    /// Evaluates `predictions` against the actual sets held; per-goal rows go to `sink`. For
    /// whole inputs (paths, shards, a progress callback, a travelling summary, sorted qrels read
    /// along the predictions) see [`crate::Job`].
    pub fn evaluate(
        &self,
        predictions: Predictions,
        sink: &mut dyn Sink,
    ) -> Result<Evaluation, EvalError> {
        self.evaluate_with_progress(predictions, sink, None)
    }

    /// [`Evaluator::evaluate`], telling `progress` (from worker threads) how many bytes of a
    /// text input have been read.
    pub(crate) fn evaluate_with_progress(
        &self,
        predictions: Predictions,
        sink: &mut dyn Sink,
        progress: Option<&(dyn Fn(u64) + Sync)>,
    ) -> Result<Evaluation, EvalError> {
        let p = self.predict(predictions, sink, progress)?;
        self.finish_predicted(p, sink)
    }

    /// [`Evaluator::evaluate_with_progress`], and the evaluation as a summary that travels (a
    /// shard's, to be merged with the others': see [`Partial`]).
    pub(crate) fn evaluate_partial(
        &self,
        predictions: Predictions,
        sink: &mut dyn Sink,
        progress: Option<&(dyn Fn(u64) + Sync)>,
    ) -> Result<(Evaluation, Partial), EvalError> {
        let p = self.predict(predictions, sink, progress)?;
        let partial = Partial::new(
            self,
            p.summary.clone(),
            &p.seen,
            p.universe,
            &p.report.premises,
        )?;
        Ok((self.finish_predicted(p, sink)?, partial))
    }

    /// [`Evaluator::evaluate_partial`] of shard `index` (0-based) of `count` of a plain text
    /// predictions file: a byte range cut at goal boundaries ([`lemma_ingest::open_shard`]), so
    /// that the shards' summaries merge into the whole file's evaluation. Errors name the whole
    /// file's lines. The partial records that it is shard `index + 1` of `count` of this file
    /// ([`crate::PredictionsFile`]): [`Partial::merge_all`] refuses an incomplete set.
    pub(crate) fn evaluate_shard(
        &self,
        path: &Path,
        index: u64,
        count: u64,
        sink: &mut dyn Sink,
        progress: Option<&(dyn Fn(u64) + Sync)>,
    ) -> Result<(Evaluation, Partial), EvalError> {
        let (input, start) = lemma_ingest::open_shard(path, index, count)?;
        let file = crate::PredictionsFile::of(path)
            .map_err(|e| EvalError::Input(lemma_ingest::InputError::read(path, e)))?;
        let (done, mut partial) = self
            .evaluate_partial(Predictions::Text(input), sink, progress)
            .map_err(|e| match e {
                EvalError::Input(ie) => {
                    EvalError::Input(lemma_ingest::shift_error(ie, path, start))
                }
                e => e,
            })?;
        partial.set_shard(file, index + 1, count);
        Ok((done, partial))
    }

    /// The goals the predictions ranked.
    fn predict(
        &self,
        predictions: Predictions,
        sink: &mut dyn Sink,
        progress: Option<&(dyn Fn(u64) + Sync)>,
    ) -> Result<Predicted, EvalError> {
        match predictions {
            Predictions::Text(input) => {
                self.check_text_options()?;
                crate::text::predict(&self.actual, input, &self.options, sink, progress)
            }
            Predictions::Store(store) => {
                check_premise_measures(&self.options)?;
                let source = Source::Store(&store);
                check_known_universe(&self.options, &source)?;
                check_store_ties(&self.options, &store)?;
                full::predict(&self.actual, &source, &self.options, sink, None, None)
            }
            Predictions::Matrix {
                matrix,
                goals,
                lemmas,
            } => {
                check_premise_measures(&self.options)?;
                let source = Source::Dense {
                    matrix: &matrix,
                    goals: &goals,
                    lemmas: &lemmas,
                };
                check_known_universe(&self.options, &source)?;
                full::predict(&self.actual, &source, &self.options, sink, None, None)
            }
        }
    }

    /// Adds the goals the predictions never ranked.
    fn finish_predicted(&self, p: Predicted, sink: &mut dyn Sink) -> Result<Evaluation, EvalError> {
        let (summary, report) = p.finish(&self.actual, &self.plan, &self.options, sink)?;
        Evaluation { summary, report }.finish_groups(&self.options)
    }

    /// An error when rankings without a known universe cannot be evaluated (AUC), or when the
    /// universe given is smaller than the actual sets' distinct lemmas.
    pub(crate) fn check_text_options(&self) -> Result<(), EvalError> {
        check_text_options(&self.options)?;
        let judged = self.actual.lemmas.len() as u64;
        match self.options.universe {
            Some(u) if u < judged => Err(EvalError::Options(format!(
                "--universe {u} is smaller than the {judged} distinct lemmas of the actual sets \
                 (the universe holds every lemma that can be ranked or judged)"
            ))),
            _ => Ok(()),
        }
    }
}

/// An error when rankings without a known universe cannot be evaluated (AUC), the universe
/// given is empty, or the leak measures have no corpus.
fn check_text_options(options: &EvalOptions) -> Result<(), EvalError> {
    if options.universe == Some(0) {
        return Err(EvalError::Options(
            "--universe 0: expected a universe of at least 1 lemma".into(),
        ));
    }
    if options.universe.is_none() && options.measures.contains(&Measure::AUC) {
        return Err(EvalError::Options(
            "AUC needs the universe size: pass --universe N".into(),
        ));
    }
    check_premise_measures(options)
}

/// An error for `--by origin` under `--group-by`: its measures have no mean over groups.
pub(crate) fn check_origin_groups(options: &EvalOptions) -> Result<(), EvalError> {
    match (&options.strata, &options.group_by) {
        (Some(s), Some(g)) if s.splits_origin() => Err(EvalError::Options(format!(
            "--by origin with --group-by {}: recall by origin is a mean over the goals that have \
             premises of each origin, with no mean over groups; leave out one of them",
            g.by()
        ))),
        _ => Ok(()),
    }
}

/// An error when a premise measure (a leak, recall by origin) is asked for without a corpus, or
/// `--by origin` without an `R@k` to split.
pub(crate) fn check_premise_measures(options: &EvalOptions) -> Result<(), EvalError> {
    check_origin_groups(options)?;
    if options.strata.as_ref().is_some_and(|s| s.splits_origin()) {
        if options.premises.is_none() {
            return Err(EvalError::Options(
                "--by origin splits recall by where the corpus defines each relevant premise: \
                 pass --corpus FILE"
                    .into(),
            ));
        }
        if !(options.measures.iter()).any(|m| matches!(m, Measure::ROrigin { .. })) {
            return Err(EvalError::Options(
                "--by origin splits R@k: ask for an R@k measure (R@10, say), or for \
                 R(origin=in-file)@k and R(origin=imported)@k by name"
                    .into(),
            ));
        }
    }
    // The leak measures read the unmasked ranking premise by premise, in an order a tie group
    // does not have.
    if options.ranking.ties == TieMode::Group {
        if let Some(m) = options.measures.iter().find(|m| m.reads_leaks()) {
            return Err(EvalError::Options(format!(
                "{m} under --ties group: the leak measures read the unmasked ranking premise by \
                 premise, and a tie group has no order (its value would be its lines' order's); \
                 evaluate them under --ties trec or --ties file"
            )));
        }
    }
    if options.premises.is_none() {
        if let Some(m) = options.measures.iter().find(|m| m.needs_corpus()) {
            return Err(EvalError::Options(format!(
                "{m} needs the corpus: pass --corpus FILE"
            )));
        }
    }
    Ok(())
}

/// An error when the premise protocol (a corpus, the Leak measures) meets predictions it does
/// not mask yet (`what`: "lemma ids pushed", "score rows pushed").
pub(crate) fn check_unmasked(options: &EvalOptions, what: &str) -> Result<(), EvalError> {
    let leaks = options.measures.iter().any(|m| m.needs_corpus());
    if options.premises.is_some() || leaks {
        return Err(EvalError::Options(format!(
            "--corpus (--mask, Leak@k, LeakRank) applies to TREC runs, JSONL predictions, \
             binary stores, .npy matrices and pushed lemma names; {what} cannot be masked yet"
        )));
    }
    Ok(())
}

/// A store's rankings are final: ordered when it was converted, under the tie rule of then. An
/// evaluation under another rule gives the numbers an evaluation of the predictions gives only
/// where the stored order holds what that rule reads: tie groups read scores alone (unless the
/// stored `f32` scores tie where the scores read did not, or a depth cut a group), file order
/// and tie groups keep the file's order of equal scores, rankings in file order have no tie
/// rule. Any other pair is refused, naming both rules.
fn check_store_ties(options: &EvalOptions, store: &lemma_ingest::Store) -> Result<(), EvalError> {
    use lemma_ingest::StoreTies as S;
    let Some(made) = store.ranking_made() else {
        return Ok(()); // a store that records nothing (gen's): its order is taken as it is
    };
    let want = options.ranking.ties;
    let cut = made.depth_cut || options.ranking.depth.is_some();
    let refuse = |why: &str| {
        Err(EvalError::Options(format!(
            "{}: its rankings were ordered under --ties {} when it was converted, and {why}: \
             evaluate it with --ties {}, or convert the predictions again with --ties {}",
            store.path().display(),
            made.ties.word(),
            made.ties.word(),
            match want {
                TieMode::Trec => "trec",
                TieMode::Group => "group",
                TieMode::File => "file",
            }
        )))
    };
    if want == TieMode::Group && made.f32_ties {
        return refuse(
            "under --ties group its scores, stored as f32, tie where the scores ranked did not",
        );
    }
    let fits = made.file_order
        || matches!(
            (made.ties, want),
            (S::Trec, TieMode::Trec) | (S::Group | S::File, TieMode::Group | TieMode::File)
        )
        || (made.ties == S::Trec && want == TieMode::Group && !cut);
    if fits {
        return Ok(());
    }
    refuse(match want {
        TieMode::Trec => "under --ties trec equal scores rank by name, which the store's order does not follow",
        TieMode::File => "under --ties file equal scores keep the file's order, which the store did not keep",
        TieMode::Group => "under --ties group a depth cuts a tie group where the store's order of it is not the file's",
    })
}

/// A store or matrix knows its universe (its lemmas, its columns): a `--universe` given with it
/// must be that size, as it would otherwise be silently replaced.
fn check_known_universe(options: &EvalOptions, source: &Source<'_>) -> Result<(), EvalError> {
    match options.universe {
        Some(u) if u != source.universe() as u64 => Err(EvalError::Options(format!(
            "--universe {u}, but {} holds a universe of {} lemmas: a store or a matrix \
             knows its universe: leave --universe out",
            source.path().display(),
            source.universe()
        ))),
        _ => Ok(()),
    }
}

impl Evaluator {
    /// The actual sets, shared.
    pub(crate) fn actual_arc(&self) -> &Arc<ActualSets> {
        &self.actual
    }

    /// Whether `a` and `b` are clones of one evaluator.
    pub(crate) fn same(a: &Evaluator, b: &Evaluator) -> bool {
        Arc::ptr_eq(&a.actual, &b.actual) && Arc::ptr_eq(&a.options, &b.options)
    }

    /// Gives the actual sets back (a process about to exit may `std::mem::forget` them rather than
    /// free a million small sets one by one).
    pub fn into_actual(self) -> Arc<ActualSets> {
        self.actual
    }
}

/// Builds an [`Evaluator`]: every option has the command's default.
#[derive(Clone, Debug, Default)]
pub struct EvaluatorBuilder {
    options: EvalOptions,
    /// The measures exactly as named: `--by origin` adds none ([`EvaluatorBuilder::as_named`]).
    as_named: bool,
}

impl EvaluatorBuilder {
    /// All options at once.
    pub fn options(mut self, options: EvalOptions) -> Self {
        self.options = options;
        self
    }

    /// The measures, in output order (default: [`DEFAULT_MEASURES`]).
    pub fn measures(mut self, measures: impl IntoIterator<Item = Measure>) -> Self {
        self.options.measures = measures.into_iter().collect();
        self
    }

    /// The measures by name, native (`AP@100`, `Depth(recall=1.0)`) or trec_eval's (`P.5,10`).
    pub fn measure_names<S: AsRef<str>>(
        self,
        names: impl IntoIterator<Item = S>,
    ) -> Result<Self, lemma_accum::MeasureError> {
        let names: Vec<S> = names.into_iter().collect();
        Ok(self.measures(Measure::parse_all(names.iter().map(|n| n.as_ref()))?))
    }

    /// A lemma is relevant when its grade is at least `level` (default 1).
    pub fn relevance_level(mut self, level: i32) -> Self {
        self.options.relevance_level = level;
        self
    }

    /// trec_eval's `-J`: rank only the judged lemmas (grade `>= 0`), dropping the others before
    /// ranks are given. Not recorded in summaries: such an evaluation writes none.
    pub fn judged_only(mut self, on: bool) -> Self {
        self.options.judged_only = on;
        self
    }

    /// trec_eval's `-N`: the collection's size, which `Utility` reads (default 0, trec_eval's).
    /// Not recorded in summaries: such an evaluation writes none.
    pub fn collection_size(mut self, n: u64) -> Self {
        self.options.collection_size = n;
        self
    }

    /// Relevant count needed at a recall level for IPrec and AP11 (default textbook).
    pub fn interpolation(mut self, i: Interpolation) -> Self {
        self.options.interpolation = i;
        self
    }

    /// How rankings are built from lines: order, ties, duplicates, depth.
    pub fn ranking(mut self, ranking: RankingOptions) -> Self {
        self.options.ranking = ranking;
        self
    }

    /// Ranking order (default: by score for TREC runs, file order for JSONL).
    pub fn order(mut self, order: OrderMode) -> Self {
        self.options.ranking.order = Some(order);
        self
    }

    /// Equal scores (default trec: name descending).
    pub fn ties(mut self, ties: TieMode) -> Self {
        self.options.ranking.ties = ties;
        self
    }

    /// A lemma repeated in a goal (default: the first counts).
    pub fn duplicates(mut self, d: DuplicateMode) -> Self {
        self.options.ranking.duplicates = d;
        self
    }

    /// Evaluate only the first `depth` lemmas of each goal, after ordering.
    pub fn depth(mut self, depth: Option<u64>) -> Self {
        self.options.ranking.depth = depth;
        self
    }

    /// Goals with an actual set and no predictions (default: evaluated as empty).
    pub fn missing(mut self, m: MissingMode) -> Self {
        self.options.missing = m;
        self
    }

    /// Goals with nothing relevant (default: skipped).
    pub fn zero_relevant(mut self, z: ZeroRelMode) -> Self {
        self.options.zero_rel = z;
        self
    }

    /// Accept goals whose lines are not contiguous: a TREC input's lines are first sorted by goal
    /// (natural order: per-goal rows come in that order), in memory or on disk within
    /// [`EvaluatorBuilder::spill`]'s budget.
    pub fn regroup(mut self, yes: bool) -> Self {
        self.options.regroup = yes;
        self
    }

    /// The memory budget of what must be sorted (`--regroup`), and where temporary files go
    /// beyond it (default: 1 GiB, `TMPDIR`).
    pub fn spill(mut self, spill: lemma_ingest::SpillOptions) -> Self {
        self.options.spill = spill;
        self
    }

    /// Round scores to f32 before ordering (trec_eval 9.0.8).
    pub fn f32_scores(mut self, yes: bool) -> Self {
        self.options.f32_scores = yes;
        self
    }

    /// Worker threads (default: all cores; at least 1).
    pub fn threads(mut self, n: usize) -> Self {
        self.options.threads = n.max(1);
        self
    }

    /// Target batch size of text inputs in bytes (default 4 MiB).
    pub fn batch_bytes(mut self, n: usize) -> Self {
        self.options.batch_bytes = n.max(1);
        self
    }

    /// Keep the pooled curve of the ranked lemmas in the summary
    /// ([`crate::pooled::PooledSetup::spec`]; TREC and JSONL predictions).
    pub fn pooled(mut self, spec: lemma_accum::PooledSpec) -> Self {
        self.options.pooled = Some(spec);
        self
    }

    /// `--group-by`: the summary's means are means over groups of each group's mean.
    pub fn group_by(mut self, group_by: Arc<crate::GroupBy>) -> Self {
        self.options.group_by = Some(group_by);
        self
    }

    /// `--by`: a summary per stratum of goals besides the whole.
    pub fn strata(mut self, strata: Arc<crate::Strata>) -> Self {
        self.options.strata = Some(strata);
        self
    }

    /// The premise-selection protocol: a corpus, the goals' places, `--mask` (docs/METRICS.md
    /// §9; TREC and JSONL predictions).
    pub fn premises(mut self, premises: Arc<crate::Premises>) -> Self {
        self.options.premises = Some(premises);
        self
    }

    /// The universe's size, for AUC on text inputs (stores and matrices know theirs).
    pub fn universe(mut self, n: Option<u64>) -> Self {
        self.options.universe = n;
        self
    }

    /// The measures exactly as named, in that order: `--by origin` adds no split measures (a
    /// caller that lays out its own, `report`'s page, which has recall by origin at 10).
    pub fn as_named(mut self) -> Self {
        self.as_named = true;
        self
    }

    /// These options without strata of goals: the measures named as the plan has them (`--by
    /// origin`'s split ones among them; none named, none), no `--by`. What a comparison of runs
    /// over all their goals takes (`report`'s; `compare` itself refuses strata).
    pub fn unstratified(mut self) -> Self {
        if self.options.strata.is_some() {
            if !self.options.measures.is_empty() {
                self.options.measures = self.plan().measures().to_vec();
            }
            self.options.strata = None;
        }
        self
    }

    /// The options as set so far.
    pub fn settings(&self) -> &EvalOptions {
        &self.options
    }

    /// The plan these options give (the default measures if none were named).
    pub fn plan(&self) -> Arc<Plan> {
        self.clone().finished().1
    }

    /// The options, the default measures if none were named, and their plan.
    fn finished(mut self) -> (EvalOptions, Arc<Plan>) {
        if self.options.measures.is_empty() {
            self.options.measures =
                Measure::parse_all(DEFAULT_MEASURES).expect("the default measures parse");
            // Grouped, the defaults without those that have no mean over groups (Depth).
            if self.options.group_by.is_some() {
                (self.options.measures)
                    .retain(|m| m.aggregation() != lemma_accum::Aggregation::Depth);
            }
        }
        if let Some(s) = self.options.strata.as_ref().filter(|_| !self.as_named) {
            s.split_measures(&mut self.options.measures);
        }
        let plan = crate::plan_for(&self.options);
        (self.options, plan)
    }

    /// The evaluator of `actual` with these options.
    pub fn build(self, actual: impl Into<Arc<ActualSets>>) -> Evaluator {
        let (options, plan) = self.finished();
        Evaluator {
            actual: actual.into(),
            options: Arc::new(options),
            plan,
        }
    }

    /// The evaluator of sorted qrels read along the predictions, a few goals at a time (a merge
    /// join: [`crate::join`]), not held whole (or, when the predictions cannot be joined, read
    /// whole on the evaluator's threads). Reached through [`crate::Job`].
    pub(crate) fn build_joined(self, qrels: SortedQrels) -> JoinEvaluator {
        let (options, plan) = self.finished();
        JoinEvaluator {
            qrels: qrels.with_threads(options.threads),
            options,
            plan,
        }
    }

    /// The evaluator of the actual sets in `path` ([`read_actual`], on the evaluator's
    /// threads).
    pub fn build_from_path(self, path: &Path) -> Result<Evaluator, InputError> {
        let actual = read_actual_with_threads(path, self.options.threads)?;
        Ok(self.build(actual))
    }
}

/// Options and sorted qrels ([`SortedQrels`]), ready to evaluate text predictions with a merge
/// join: memory independent of the number of goals when the predictions' goals come in the
/// qrels' order.
#[derive(Debug)]
pub(crate) struct JoinEvaluator {
    qrels: SortedQrels,
    options: EvalOptions,
    plan: Arc<Plan>,
}

impl JoinEvaluator {
    /// The measures in output order, and what a summary holds.
    pub(crate) fn plan(&self) -> &Arc<Plan> {
        &self.plan
    }

    /// The options.
    pub(crate) fn options(&self) -> &EvalOptions {
        &self.options
    }

    /// Evaluates text predictions; per-goal rows go to `sink`, in the order the held pipeline
    /// gives them ([`Evaluator::evaluate`]). Predictions the join cannot take (JSONL, a stream
    /// or compressed file not regrouped, regrouped against qrels in byte order) are evaluated
    /// against the whole qrels, read first.
    pub(crate) fn evaluate_with_progress(
        &self,
        predictions: Input,
        sink: &mut dyn Sink,
        progress: Option<&(dyn Fn(u64) + Sync)>,
    ) -> Result<(Evaluation, crate::join::JoinReport), EvalError> {
        let done = self.evaluate_joined(predictions, sink, progress);
        // Mapped qrels that changed while they were read: that is the error, whatever their
        // lines gave (lines appended were not read; lines cut off read as zeros).
        self.qrels.check_unchanged()?;
        done
    }

    /// [`JoinEvaluator::evaluate_with_progress`] before the qrels are checked.
    fn evaluate_joined(
        &self,
        predictions: Input,
        sink: &mut dyn Sink,
        progress: Option<&(dyn Fn(u64) + Sync)>,
    ) -> Result<(Evaluation, crate::join::JoinReport), EvalError> {
        if self.plan.pooled().is_some() {
            // A join may evaluate a batch twice (goals found out of order): a curve's runs
            // already spilled could not be taken back.
            return Err(EvalError::Options(
                "the pooled curve is kept when the actual sets are held (Job::hold_actual), not \
                 when sorted qrels are read along the predictions"
                    .into(),
            ));
        }
        if crate::join::joinable(&predictions, &self.options, &self.qrels) {
            check_text_options(&self.options)?;
            let (summary, report, jr) =
                crate::join::evaluate(&self.qrels, predictions, &self.options, sink, progress)?;
            return Ok((
                Evaluation { summary, report }.finish_groups(&self.options)?,
                jr,
            ));
        }
        let actual = self.qrels.sets_whole()?;
        let jr = crate::join::JoinReport {
            goals_read: actual.goal_count() as u64,
            held_bytes: actual.heap_bytes(),
            ..Default::default()
        };
        let evaluator = Evaluator {
            actual: Arc::new(actual),
            options: Arc::new(self.options.clone()),
            plan: self.plan.clone(),
        };
        let done =
            evaluator.evaluate_with_progress(Predictions::Text(predictions), sink, progress)?;
        Ok((done, jr))
    }
}
