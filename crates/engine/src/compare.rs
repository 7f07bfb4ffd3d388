//! Comparing runs: is run B better than run A, on which measures, and how sure is that?
//!
//! [`Compare`] evaluates each run through a [`Job`] (any predictions `eval` reads, streamed as
//! `eval` streams them, against actual sets read once and shared), keeps every goal's value of
//! every measure, aligns the goals by id across runs, and tests each pair of runs on each
//! measure with [`lemma_stats`]: the paired t-test, Fisher's randomization test, a percentile
//! bootstrap interval of the mean difference, the effect size and the goals won, tied and lost.
//! One p-value per comparison decides ([`Test`]); it is adjusted for multiple comparisons
//! ([`Correction`]) over every comparison made (every measure, every pair). Over more than two
//! runs, Tukey's HSD ([`Test::Tukey`]) tests every pair of runs at once, its p-values adjusted
//! for every pair already.
//!
//! A run given as a path to a values file ([`crate::values`], `eval --values-out`) is read, not
//! evaluated: its values, checked against the comparison's options and measures, enter as the
//! run's would have, in the order it was evaluated in, with its goal counts and warnings. When
//! every run is a values file the actual sets are not read at all.
//!
//! **Goals.** A goal enters the tests when every run has a value for it. Which goals have values
//! follows `eval`'s rules: goals of the actual sets with no relevant lemma are skipped (unless
//! [`ZeroRelMode::Evaluate`](crate::ZeroRelMode)); goals a run has no predictions for are
//! evaluated as an empty ranking (every measure 0) under [`MissingMode::Zero`](crate::MissingMode),
//! the default, so every run has every goal; under [`MissingMode::Skip`](crate::MissingMode) they
//! have no value in that run, and are then left out of every comparison (the pairs must be
//! pairs). Goals of the predictions with no actual set are skipped, as `eval` skips them.
//! [`RunInfo`] says, for each run, how many goals it had no predictions for and how many goals of
//! the other runs it lacked; [`Comparison::warnings`] says it in words.
//!
//! **Systems.** Several runs of one system (seeds, folds) compare as one ([`System`],
//! [`Compare::systems`]): each goal's value is the mean of its runs' values (a goal one of them
//! lacks has none), and [`RunInfo::spread`] is the standard deviation of the runs' means.
//!
//! **Groups.** Under `--group-by` ([`crate::EvaluatorBuilder::group_by`]) the goals of one
//! group (states of one theorem, say) are not independent: the units of every test are then the
//! groups, each run's value of a group the mean of its goals' values (a goal no record places in
//! a group is one of its own), so the randomization test flips groups, the bootstrap resamples
//! groups, wins, ties and losses count groups, and the means are means over groups, as
//! `eval --group-by` gives them.
//!
//! **Memory.** 8 bytes × goals × runs × measures for the values, plus each goal's id once; each
//! run's evaluation costs what `eval`'s does, one run at a time. **Time.** The evaluations, then
//! per comparison `O(permutations × goals)` for the randomization test and as much for the
//! bootstrap (which draws as many resamples as the test draws permutations), the comparisons
//! shared among the evaluation's threads.
//!
//! Measures must be means of per-goal values (`AP`, `P@k`, `nDCG@k`, `RR`, ...): a sum (`NumRel`),
//! a geometric mean (`GMAP`) or a depth (`Depth(recall=r)`, undefined for goals that never reach
//! it) is refused. Higher is better for every such measure but `Leak@k`, a share of inaccessible
//! premises ([`Measure::lower_is_better`]): the best run on a measure is the one with the highest
//! mean, or the lowest.

use crate::values::{is_values_file, Values};
use crate::{ActualInput, EvalError, EvaluatorBuilder, Job, MatrixNames, PredictedInput, RowFn};
use hashbrown::HashMap;
use lemma_accum::{Aggregation, ExactSum, GoalCounts, Measure};
use lemma_stats::{adjust, Paired, Rng, TukeyHsd};
use std::sync::Arc;

pub use lemma_stats::Correction;

/// The p-value that decides whether a difference is significant.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Test {
    /// The paired t-test's (`p_t`).
    T,
    /// Fisher's randomization test's (`p_randomization`).
    Randomization,
    /// The bootstrap's: the share of resampled mean differences, shifted to a zero mean, at
    /// least as far from zero as the observed one.
    Bootstrap,
    /// Tukey's honestly significant difference test over every run (`p_tukey`, as SciPy's
    /// `stats.tukey_hsd`; [`lemma_stats::TukeyHsd`]): the runs' values of a measure as
    /// independent samples, each pair's p-value adjusted for every pair of runs already, so no
    /// further correction is made. Needs [`CompareOptions::all_pairs`].
    Tukey,
}

impl crate::Choice for Test {
    const OPTION: &'static str = "test";
    const VALUES: &'static [(&'static str, &'static str, Self)] = &[
        (
            "t",
            "the paired t-test (two-sided; scipy's ttest_rel)",
            Test::T,
        ),
        (
            "randomization",
            "Fisher's randomization test: random sign flips of the paired differences",
            Test::Randomization,
        ),
        (
            "bootstrap",
            "the paired bootstrap: resampled goals, the mean difference shifted to zero",
            Test::Bootstrap,
        ),
        (
            "tukey",
            "Tukey's HSD over every run (scipy's tukey_hsd; with --all-pairs; no further \
             correction)",
            Test::Tukey,
        ),
    ];
}

impl crate::Choice for Correction {
    const OPTION: &'static str = "correction";
    const VALUES: &'static [(&'static str, &'static str, Self)] = &[
        (
            "holm",
            "Holm's step-down (family-wise error rate)",
            Correction::Holm,
        ),
        (
            "bonferroni",
            "each p-value times the number of comparisons",
            Correction::Bonferroni,
        ),
        (
            "bh",
            "Benjamini-Hochberg's step-up (false discovery rate)",
            Correction::Bh,
        ),
        ("none", "no correction", Correction::None),
    ];
}

/// How runs are compared.
#[derive(Clone, Debug)]
pub struct CompareOptions {
    /// Every pair of runs (`i < j`), instead of the first run against each other.
    pub all_pairs: bool,
    /// The p-value that decides.
    pub test: Test,
    /// The correction over every comparison made.
    pub correction: Correction,
    /// A difference is significant when its adjusted p-value is below this.
    pub alpha: f64,
    /// Random sign patterns of the randomization test, and resamples of the bootstrap.
    pub permutations: u64,
    /// The seed: the same seed, runs and options give the same p-values and intervals.
    pub seed: u64,
    /// The bootstrap interval's confidence level.
    pub level: f64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            all_pairs: false,
            test: Test::T,
            correction: Correction::Holm,
            alpha: 0.05,
            permutations: 10_000,
            seed: 0,
            level: 0.95,
        }
    }
}

impl CompareOptions {
    /// Refuses an alpha outside (0, 1), a level outside (0, 1), Tukey's test without every
    /// pair.
    pub fn check(&self) -> Result<(), String> {
        if self.test == Test::Tukey && !self.all_pairs {
            return Err(
                "Tukey's HSD compares every pair of runs: add --all-pairs (all_pairs=True)".into(),
            );
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(format!("alpha must be in (0, 1), not {}", self.alpha));
        }
        if !(self.level > 0.0 && self.level < 1.0) {
            return Err(format!("level must be in (0, 1), not {}", self.level));
        }
        Ok(())
    }
}

/// One run to compare: its label and where its per-goal values come from.
pub struct Run {
    /// The name its rows and columns carry.
    pub label: String,
    /// Its predictions, or its values.
    pub predicted: RunSource,
}

/// Where a compared run's per-goal values come from: predictions to evaluate (any input a
/// [`Job`] reads; a values file given by path is read, not evaluated), or the values an
/// evaluation recorded as it ran ([`crate::values::ValuesRecorder`]: what a values file holds,
/// in memory, so that a run read once, from a pipe say, can be both shown and compared).
pub enum RunSource {
    /// Predictions, or a values file by path.
    Predicted(PredictedInput),
    /// Values recorded by an evaluation of the same actual sets.
    Recorded(Arc<Values>),
}

impl From<PredictedInput> for RunSource {
    fn from(p: PredictedInput) -> Self {
        RunSource::Predicted(p)
    }
}

impl From<&std::path::Path> for RunSource {
    fn from(p: &std::path::Path) -> Self {
        RunSource::Predicted(p.into())
    }
}

/// Several runs of one system (seeds, folds) compared as one: for each goal the mean of the
/// runs' values enters the tests, and [`RunInfo::spread`] says how far the runs' means lie
/// apart.
pub struct System {
    /// The name its rows and columns carry.
    pub label: String,
    /// Its runs (one or more).
    pub runs: Vec<RunSource>,
}

impl From<Run> for System {
    fn from(r: Run) -> System {
        System {
            label: r.label,
            runs: vec![r.predicted],
        }
    }
}

/// What became of one run's goals.
#[derive(Clone, Debug)]
pub struct RunInfo {
    /// Its label.
    pub label: String,
    /// Its evaluation's goal counts, as `eval` reports them (a system's: its first run's).
    pub counts: GoalCounts,
    /// Goals of the other runs with no value in this one (only under `--missing skip`): left
    /// out of every comparison.
    pub lacking: u64,
    /// For a [`System`] of several runs: how many.
    pub members: usize,
    /// For a [`System`] of several runs, for each measure the standard deviation (`n - 1`) of
    /// its runs' means over the goals compared; empty for a single run.
    pub spread: Vec<f64>,
}

/// One comparison: run B against run A on one measure, over the goals every run has.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareRow {
    /// The measure's index in [`Comparison::measures`].
    pub measure: usize,
    /// Run A's index in [`Comparison::runs`].
    pub a: usize,
    /// Run B's index.
    pub b: usize,
    /// Run A's mean (exact sum over the goals, divided by their number).
    pub mean_a: f64,
    /// Run B's mean.
    pub mean_b: f64,
    /// The mean of the paired differences `b_i - a_i` (exactly summed): positive when B scored
    /// higher.
    pub diff: f64,
    /// The paired t-test's two-sided p-value ([`Paired::t_test`]).
    pub p_t: f64,
    /// The randomization test's p-value ([`Paired::randomization`]).
    pub p_randomization: f64,
    /// The bootstrap's p-value ([`lemma_stats::Bootstrap::p`]).
    pub p_bootstrap: f64,
    /// Tukey's HSD p-value ([`lemma_stats::TukeyHsd::p`]) under [`Test::Tukey`], NaN otherwise.
    pub p_tukey: f64,
    /// The deciding p-value ([`CompareOptions::test`]), adjusted over every comparison made
    /// (Tukey's as it is: adjusted for every pair of runs already).
    pub p_adjusted: f64,
    /// The bootstrap interval of `diff`: its lower end.
    pub ci_low: f64,
    /// Its upper end.
    pub ci_high: f64,
    /// `diff / sd(differences)` ([`Paired::effect`]).
    pub effect: f64,
    /// Goals where B scored higher.
    pub wins: u64,
    /// Goals where they scored the same.
    pub ties: u64,
    /// Goals where B scored lower.
    pub losses: u64,
    /// Whether `p_adjusted < alpha`.
    pub significant: bool,
}

/// Every comparison's outcome.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The measures, in the order asked.
    pub measures: Vec<Measure>,
    /// The runs, in the order given.
    pub runs: Vec<RunInfo>,
    /// Goals that entered the tests (every run has a value for them).
    pub goals: u64,
    /// Under `--group-by` ([`crate::EvaluatorBuilder::group_by`]), the groups of those goals:
    /// the units of the tests, each run's value of a group the mean of its goals'.
    pub groups: Option<u64>,
    /// Each run's mean of each measure over those goals (grouped, over the groups' means, as
    /// `eval --group-by` summarizes): `means[run][measure]`.
    pub means: Vec<Vec<f64>>,
    /// The comparisons: for each measure, each pair.
    pub rows: Vec<CompareRow>,
    /// The options compared with (under [`Test::Tukey`], the correction [`Correction::None`]).
    pub options: CompareOptions,
    /// What the command prints on stderr as warnings (the Python package raises them).
    pub warnings: Vec<String>,
}

impl Comparison {
    /// The letter naming run `i` in the table (`a`, `b`, ...; beyond 26 runs, its number).
    pub fn letter(i: usize) -> String {
        if i < 26 {
            ((b'a' + i as u8) as char).to_string()
        } else {
            (i + 1).to_string()
        }
    }

    /// Whether mean `x` is better than mean `y` on measure `m`.
    fn better(&self, m: usize, x: f64, y: f64) -> bool {
        match self.measures[m].lower_is_better() {
            true => x < y,
            false => x > y,
        }
    }

    /// The runs each run beats significantly on measure `m`, by index: `beats[run]`.
    pub fn beaten(&self, m: usize) -> Vec<Vec<usize>> {
        let mut beats = vec![Vec::new(); self.runs.len()];
        for r in self.rows.iter().filter(|r| r.measure == m && r.significant) {
            if self.better(m, r.mean_b, r.mean_a) {
                beats[r.b].push(r.a);
            } else if self.better(m, r.mean_a, r.mean_b) {
                beats[r.a].push(r.b);
            }
        }
        for b in &mut beats {
            b.sort_unstable();
        }
        beats
    }

    /// The run with the best mean on measure `m`, the highest or the lowest
    /// ([`Measure::lower_is_better`]; the first of equal ones); `None` when no mean is defined.
    pub fn best(&self, m: usize) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, means) in self.means.iter().enumerate() {
            if means[m].is_nan() {
                continue;
            }
            if best.is_none_or(|b| self.better(m, means[m], self.means[b][m])) {
                best = Some(i);
            }
        }
        best
    }
}

/// A comparison of runs: see the [module documentation](self).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use lemma_eval::compare::{Compare, CompareOptions, Run};
/// use lemma_eval::Evaluator;
/// # let dir = tempfile::tempdir()?;
/// # let (qrels, a, b) = (dir.path().join("q"), dir.path().join("a"), dir.path().join("b"));
/// # std::fs::write(&qrels, "g1 0 a 1\ng2 0 b 1\ng3 0 c 1\n")?;
/// # std::fs::write(&a, "g1 Q0 x 1 2 t\ng1 Q0 a 2 1 t\ng2 Q0 b 1 2 t\ng3 Q0 x 1 2 t\ng3 Q0 c 2 1 t\n")?;
/// # std::fs::write(&b, "g1 Q0 a 1 2 t\ng2 Q0 b 1 2 t\ng3 Q0 c 1 2 t\n")?;
/// let builder = Evaluator::builder().measure_names(["RR"])?;
/// let runs = vec![
///     Run { label: "A".into(), predicted: a.as_path().into() },
///     Run { label: "B".into(), predicted: b.as_path().into() },
/// ];
/// let c = Compare::new(builder, qrels.as_path(), runs).run(&CompareOptions::default())?;
/// // RR per goal: A (0.5, 1, 0.5), B (1, 1, 1).
/// let row = &c.rows[0];
/// assert_eq!((row.mean_a, row.mean_b, row.diff), (2.0 / 3.0, 1.0, 1.0 / 3.0));
/// assert_eq!((row.wins, row.ties, row.losses), (2, 1, 0));
/// # Ok(()) }
/// ```
pub struct Compare {
    builder: EvaluatorBuilder,
    actual: ActualInput,
    runs: Vec<System>,
    names: Option<MatrixNames>,
    mmap: bool,
}

impl Compare {
    /// The comparison of `runs` against `actual` with `builder`'s options and measures (the
    /// default measures when none were named).
    pub fn new(builder: EvaluatorBuilder, actual: impl Into<ActualInput>, runs: Vec<Run>) -> Self {
        Compare::systems(
            builder,
            actual,
            runs.into_iter().map(System::from).collect(),
        )
    }

    /// The comparison of systems, each of one run or several ([`System`]).
    pub fn systems(
        builder: EvaluatorBuilder,
        actual: impl Into<ActualInput>,
        systems: Vec<System>,
    ) -> Self {
        Compare {
            builder,
            actual: actual.into(),
            runs: systems,
            names: None,
            mmap: false,
        }
    }

    /// The names of `.npy` matrices' rows and columns (the same for every run).
    pub fn names(mut self, names: Option<MatrixNames>) -> Self {
        self.names = names;
        self
    }

    /// Memory-map plain input files ([`Job::mmap`]).
    pub fn mmap(mut self, yes: bool) -> Self {
        self.mmap = yes;
        self
    }

    /// The measures compared, checked: each must be a mean of per-goal values. With none named,
    /// those of `eval`'s default measures ([`crate::DEFAULT_MEASURES`]) that are (the depth
    /// `Depth(recall=1.0)` left out).
    pub fn measures(&self) -> Result<Vec<Measure>, EvalError> {
        if self.builder.settings().measures.is_empty() {
            let all = Measure::parse_all(crate::DEFAULT_MEASURES)
                .map_err(|e| EvalError::Options(e.to_string()))?;
            return Ok(all.into_iter().filter(comparable).collect());
        }
        let measures = self.builder.plan().measures().to_vec();
        for m in &measures {
            if !comparable(m) {
                return Err(EvalError::Options(format!(
                    "compare tests means of per-goal values: `{m}` is {}; choose measures such as \
                     AP, P@10, RR, nDCG@10",
                    match m.aggregation() {
                        Aggregation::Sum => "a sum over goals",
                        Aggregation::GeoMean => "a geometric mean",
                        Aggregation::Depth => "a depth, undefined for goals that never reach it",
                        Aggregation::Mean => "a summary of all goals at once",
                        Aggregation::Covered => "a mean over the goals where it is defined",
                    }
                )));
            }
        }
        Ok(measures)
    }

    /// Evaluates every run, then compares them. Errors: a run's (its file, line and what was
    /// expected, as `eval` words them), or options: fewer than two runs, a measure that is not
    /// a mean of per-goal values, alpha or level outside (0, 1).
    pub fn run(self, options: &CompareOptions) -> Result<Comparison, EvalError> {
        options.check().map_err(EvalError::Options)?;
        if self.runs.len() < 2 {
            return Err(EvalError::Options(format!(
                "compare needs at least two runs, given {}",
                self.runs.len()
            )));
        }
        let measures = self.measures()?;
        // The plan's measures are these, in this order: rows' values line up with them.
        let builder = self.builder.measures(measures);
        if let Some(s) = (builder.settings().strata.as_ref()).filter(|s| s.stratifies()) {
            return Err(EvalError::Options(format!(
                "--by {}: compare tests the runs over all their goals and does not compare \
                 strata of goals yet (--by origin, which splits R@k, it does); compare each \
                 stratum's goals on their own",
                s.keys().collect::<Vec<_>>().join(" --by ")
            )));
        }
        let measures = builder.plan().measures().to_vec();
        // Read once, when a run is first evaluated: values files alone need no actual sets.
        let mut actual = Some(self.actual);
        let mut read: Option<ActualInput> = None;
        let nm = measures.len();
        let mut ids: HashMap<Vec<u8>, usize> = HashMap::new();
        // The goals by index, as `ids` numbers them.
        // The goals compared, by index: their names end to end (one allocation, not one a goal).
        let mut order = lemma_ingest::Names::default();
        // values[run][measure][goal], NaN where the run has no value.
        let mut values: Vec<Vec<Vec<f64>>> = Vec::with_capacity(self.runs.len());
        let mut infos = Vec::with_capacity(self.runs.len());
        let mut warnings = Vec::new();
        // members[run]: a system's runs' values, [member][measure][goal].
        let mut members: Vec<Vec<Vec<Vec<f64>>>> = Vec::with_capacity(self.runs.len());
        for system in self.runs {
            if system.runs.is_empty() {
                return Err(EvalError::Options(format!(
                    "system `{}` has no runs",
                    system.label
                )));
            }
            let several = system.runs.len() > 1;
            let mut first_counts = None;
            let mut member_values = Vec::with_capacity(system.runs.len());
            for (member, predicted) in system.runs.into_iter().enumerate() {
                let label = if several {
                    format!("{} (run {})", system.label, member + 1)
                } else {
                    system.label.clone()
                };
                let run = Run { label, predicted };
                let mut v: Vec<Vec<f64>> = vec![Vec::new(); nm];
                // Runs over the same goals in the same order (values files of one evaluation's
                // goals, say) are matched in sequence, without a hash look-up.
                // The first run's goals (distinct: one evaluation's) are taken in order; the
                // map from names to indexes is built only when a later run leaves that order.
                let mut pos = 0usize;
                let first = order.is_empty();
                let mut add = |goal: &[u8], row: &mut dyn Iterator<Item = f64>| {
                    let g = if pos < order.len() && order.get(pos) == goal {
                        pos
                    } else if first {
                        order.push(goal);
                        order.len() - 1
                    } else {
                        if ids.is_empty() {
                            ids.reserve(order.len());
                            ids.extend((0..order.len()).map(|g| (order.get(g).to_vec(), g)));
                        }
                        match ids.get(goal) {
                            Some(&g) => g,
                            None => {
                                let next = order.len();
                                ids.insert(goal.to_vec(), next);
                                order.push(goal);
                                next
                            }
                        }
                    };
                    pos = g + 1;
                    for (m, x) in row.enumerate() {
                        if v[m].len() <= g {
                            v[m].resize(g + 1, f64::NAN);
                        }
                        v[m][g] = x;
                    }
                };
                let (saved, predicted) = match run.predicted {
                    RunSource::Predicted(PredictedInput::Path(p)) if is_values_file(&p) => {
                        let v = Values::read(&p).map_err(EvalError::Options)?;
                        (Some((Arc::new(v), p.display().to_string())), None)
                    }
                    RunSource::Recorded(v) => (Some((v, run.label.clone())), None),
                    RunSource::Predicted(p) => (None, Some(p)),
                };
                let (counts, run_warnings) = if let Some((file, name)) = saved {
                    // Saved values: read, checked against this comparison's options, fed in the
                    // order they were evaluated.
                    let cols = (file.columns(builder.settings(), &measures))
                        .map_err(|e| EvalError::Options(format!("{name}: {e}")))?;
                    for i in 0..file.goal_count() {
                        add(file.goal(i), &mut cols.iter().map(|&c| file.values[c][i]));
                    }
                    (file.counts, file.warnings.clone())
                } else {
                    let predicted = predicted.expect("predictions when no values");
                    let mut sink = RowFn(|row: crate::GoalRow| {
                        add(
                            &row.goal,
                            &mut row.values.iter().map(|x| x.unwrap_or(f64::NAN)),
                        );
                        Ok(())
                    });
                    if read.is_none() {
                        read = Some(match actual.take().expect("taken once") {
                            ActualInput::Path(p) => ActualInput::Sets(Arc::new(
                                crate::read_actual_with_threads(&p, builder.settings().threads)?,
                            )),
                            sets => sets,
                        });
                    }
                    let actual = read.clone().expect("read above");
                    let done = Job::new(builder.clone(), actual, predicted)
                        .names(self.names.clone())
                        .mmap(self.mmap)
                        .run(&mut sink, None)?;
                    let ev = &done.evaluation;
                    let counts = ev.summary.counts();
                    (counts, crate::output::warnings(&ev.report, &counts))
                };
                for w in run_warnings {
                    warnings.push(format!("{}: {w}", run.label));
                }
                member_values.push(v);
                first_counts.get_or_insert(counts);
            }
            members.push(member_values);
            infos.push(RunInfo {
                label: system.label,
                counts: first_counts.expect("a system has a run"),
                lacking: 0,
                members: members.last().map_or(0, |m| m.len()),
                spread: Vec::new(),
            });
        }
        let total = order.len();
        for system in &mut members {
            for v in system.iter_mut() {
                for col in v.iter_mut() {
                    col.resize(total, f64::NAN);
                }
            }
        }
        // A system's value of a goal: the mean of its runs' (NaN when one lacks it).
        for system in &mut members {
            if system.len() == 1 {
                values.push(std::mem::take(&mut system[0]));
                continue;
            }
            let k = system.len() as f64;
            values.push(
                (0..nm)
                    .map(|m| {
                        (0..total)
                            .map(|g| system.iter().map(|v| v[m][g]).sum::<f64>() / k)
                            .collect()
                    })
                    .collect(),
            );
        }
        // The goals every run has a value of every measure for (of those defined for some goals
        // only, each is compared over the goals of its own below).
        let always: Vec<usize> = (0..nm).filter(|&m| !covered(&measures[m])).collect();
        if builder.settings().group_by.is_some() && always.len() < nm {
            return Err(EvalError::Options(format!(
                "--group-by: {} has no mean over groups (a mean over the goals where it is \
                 defined)",
                measures[(0..nm)
                    .find(|m| !always.contains(m))
                    .expect("a covered measure")]
            )));
        }
        let has = |v: &Vec<Vec<f64>>, g: usize| match always.is_empty() {
            true => v.iter().any(|col| !col[g].is_nan()),
            false => always.iter().all(|&m| !v[m][g].is_nan()),
        };
        let keep: Vec<usize> = (0..total)
            .filter(|&g| values.iter().all(|v| has(v, g)))
            .collect();
        for (info, v) in infos.iter_mut().zip(&values) {
            info.lacking = (0..total).filter(|&g| !has(v, g)).count() as u64;
            if info.lacking > 0 {
                warnings.push(format!(
                    "{}: {} goals of the other runs have no value here (no predictions, \
                     --missing skip): left out of every comparison",
                    info.label, info.lacking
                ));
            }
            if info.counts.evaluated_empty > 0 {
                warnings.push(format!(
                    "{}: {} goals have no predictions: evaluated as empty rankings, every \
                     measure 0 (--missing zero)",
                    info.label, info.counts.evaluated_empty
                ));
            }
        }
        // A mean of the values that are defined (NaN over none).
        let mean = |x: &[f64]| -> f64 {
            let mut s = ExactSum::default();
            let mut n = 0usize;
            for &v in x.iter().filter(|v| !v.is_nan()) {
                s.add(v);
                n += 1;
            }
            if n == 0 {
                return f64::NAN;
            }
            s.value() / n as f64
        };
        // The units of the tests: the kept goals, or under --group-by their groups (a goal no
        // record places in a group is one of its own), by first appearance.
        let units: Option<Vec<Vec<usize>>> = (builder.settings().group_by.as_ref()).map(|by| {
            let names = &order;
            let mut index: HashMap<u32, usize> = HashMap::new();
            let mut units: Vec<Vec<usize>> = Vec::new();
            for &g in &keep {
                let u = match by.get(names.get(g)) {
                    Some(id) => *index.entry(id).or_insert_with(|| {
                        units.push(Vec::new());
                        units.len() - 1
                    }),
                    None => {
                        units.push(Vec::new());
                        units.len() - 1
                    }
                };
                units[u].push(g);
            }
            units
        });
        let n = units.as_ref().map_or(keep.len(), |u| u.len());
        if n < 2 {
            let what = if units.is_some() { "group" } else { "goal" };
            warnings.push(format!(
                "{n} {what}{} in common: no test can be made (p-values, intervals and effects \
                 are NaN)",
                if n == 1 { "" } else { "s" }
            ));
        }
        // The units' values, packed: packed[run][measure] is a column of n values (a group's
        // the mean of its goals').
        let pack = |col: &[f64]| -> Vec<f64> {
            match &units {
                None => keep.iter().map(|&g| col[g]).collect(),
                Some(units) => (units.iter())
                    .map(|u| mean(&u.iter().map(|&g| col[g]).collect::<Vec<_>>()))
                    .collect(),
            }
        };
        // Every goal kept and no groups: the columns are already packed (no copy).
        let mut packed: Vec<Vec<Vec<f64>>> = if units.is_none() && keep.len() == total {
            values
        } else {
            (values.iter())
                .map(|v| v.iter().map(|col| pack(col)).collect())
                .collect()
        };
        // A measure defined for some goals only keeps the goals every run has a value for.
        for m in (0..nm).filter(|&m| covered(&measures[m])) {
            let defined: Vec<bool> = (0..packed[0][m].len())
                .map(|g| packed.iter().all(|run| !run[m][g].is_nan()))
                .collect();
            for run in &mut packed {
                let mut g = 0;
                run[m].retain(|_| {
                    g += 1;
                    defined[g - 1]
                });
            }
        }
        // A system's spread: the sd of its runs' means over the same units.
        for (info, system) in infos.iter_mut().zip(&members) {
            if system.len() > 1 {
                info.spread = (0..nm)
                    .map(|m| {
                        let means: Vec<f64> = (system.iter()).map(|v| mean(&pack(&v[m]))).collect();
                        let mu = means.iter().sum::<f64>() / means.len() as f64;
                        let ss: f64 = means.iter().map(|x| (x - mu) * (x - mu)).sum();
                        (ss / (means.len() - 1) as f64).sqrt()
                    })
                    .collect();
            }
        }
        drop(members);
        let means: Vec<Vec<f64>> = (packed.iter())
            .map(|run| run.iter().map(|col| mean(col)).collect())
            .collect();
        let runs = packed.len();
        let pairs: Vec<(usize, usize)> = if options.all_pairs {
            (0..runs)
                .flat_map(|a| (a + 1..runs).map(move |b| (a, b)))
                .collect()
        } else {
            (1..runs).map(|b| (0, b)).collect()
        };
        // Tukey's test pools each measure's values over every run.
        let tukey: Vec<Option<TukeyHsd>> = (0..nm)
            .map(|m| {
                (options.test == Test::Tukey).then(|| {
                    let groups: Vec<&[f64]> = packed.iter().map(|run| &run[m][..]).collect();
                    TukeyHsd::new(&groups)
                })
            })
            .collect();
        // One unit of parallel work per comparison, on the evaluation's threads.
        let work: Vec<(usize, usize, usize)> = (0..nm)
            .flat_map(|m| pairs.iter().map(move |&(a, b)| (m, a, b)))
            .collect();
        let mut rows =
            lemma_par::Ordered::new(builder.settings().threads).map(work, |(m, a, b)| {
                let (va, vb) = (&packed[a][m], &packed[b][m]);
                let means = (means[a][m], means[b][m]);
                let mut row = compare_pair(m, (a, va), (b, vb), means, options, &mean);
                if let Some(t) = &tukey[m] {
                    row.p_tukey = t.p(a, b);
                }
                row
            });
        let mut options = options.clone();
        if options.test == Test::Tukey {
            options.correction = Correction::None;
        }
        let deciding: Vec<f64> = (rows.iter())
            .map(|r| match options.test {
                Test::T => r.p_t,
                Test::Randomization => r.p_randomization,
                Test::Bootstrap => r.p_bootstrap,
                Test::Tukey => r.p_tukey,
            })
            .collect();
        for (r, p) in rows.iter_mut().zip(adjust(&deciding, options.correction)) {
            r.p_adjusted = p;
            r.significant = p < options.alpha;
        }
        Ok(Comparison {
            measures,
            runs: infos,
            goals: keep.len() as u64,
            groups: units.as_ref().map(|u| u.len() as u64),
            means,
            rows,
            options,
            warnings,
        })
    }
}

/// Whether `m` is a mean of per-goal values (what the tests compare).
fn comparable(m: &Measure) -> bool {
    (m.aggregation() == Aggregation::Mean && m.per_goal()) || covered(m)
}

/// Whether `m` is defined for some goals only (`R(origin=...)@k`): it is compared over the goals
/// every run has a value of it for.
fn covered(m: &Measure) -> bool {
    m.aggregation() == Aggregation::Covered
}

/// One measure's comparison of runs `a` and `b` over their aligned values. Each comparison
/// draws from streams of its own, named by the seed, the measure and the two runs: its
/// p-values and interval do not depend on which other comparisons are made. `mean_a`, `mean_b`:
/// the two columns' means, computed once per run and measure.
fn compare_pair(
    m: usize,
    (a, va): (usize, &[f64]),
    (b, vb): (usize, &[f64]),
    (mean_a, mean_b): (f64, f64),
    o: &CompareOptions,
    mean: &dyn Fn(&[f64]) -> f64,
) -> CompareRow {
    let paired = Paired::new(va, vb).expect("columns of the same goals");
    let key = |stream: u64| [m as u64, a as u64, b as u64, stream];
    let t = paired.t_test();
    let p_randomization = paired.randomization(o.permutations, &mut Rng::stream(o.seed, &key(0)));
    let boot = paired.bootstrap(o.permutations, o.level, &mut Rng::stream(o.seed, &key(1)));
    let (wins, ties, losses) = paired.wins_ties_losses();
    CompareRow {
        measure: m,
        a,
        b,
        mean_a,
        mean_b,
        diff: mean(paired.differences()),
        p_t: t.p,
        p_randomization,
        p_bootstrap: boot.p,
        p_tukey: f64::NAN,
        p_adjusted: f64::NAN,
        ci_low: boot.low,
        ci_high: boot.high,
        effect: paired.effect(),
        wins,
        ties,
        losses,
        significant: false,
    }
}
