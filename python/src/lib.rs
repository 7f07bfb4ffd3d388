//! The native module of the `lemma_eval` Python package. Every evaluation goes through the
//! engine's doors, as the command's do: whole inputs through [`lemma_eval::Job`] (paths of any
//! kind, shards, score matrices in memory), pushed goals through [`lemma_eval::Session`]. Options
//! are parsed by the engine's own parsers ([`Choice`], [`lemma_eval::check_threads`],
//! [`lemma_eval::parse_size`]); what this module adds is the conversion of Python values and
//! errors that name Python's arguments rather than the command's flags.

mod dicts;
mod session;
mod trec_prefs;

use dicts::{actual_from_dict, check_name, type_name};
use lemma_accum::{Interpolation, Measure, Summary};
use lemma_eval::output::{named_counts, warnings};
use lemma_eval::{
    trec, ActualInput, ActualRead, Choice, DuplicateMode, EvalError, Evaluator, EvaluatorBuilder,
    GoalRow, InputKind, Job, MaskMode, MatrixNames, MissingMode, OrderMode, Outcome as JobOutcome,
    PredictedInput, Predictions, PremiseOptions, Premises, RowFn, Sink, SummaryOnly, TieMode,
    ZeroRelMode,
};
use lemma_ingest::{Dtype, ErrorKind, InputError, Matrix, Names};
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::path::PathBuf;
use std::sync::{mpsc, Mutex};
use std::time::Duration;

/// The command's flags, as this package's arguments name them: what an error message says.
/// `(flag, argument, boolean)`: a boolean flag reads `argument=True`; another's value follows
/// the `=` (`--depth 10` reads `depth=10`, `--universe N` reads `universe=N`).
const ARGUMENTS: [(&str, &str, bool); 26] = [
    ("--group-by", "group_by", false),
    ("--train-premises", "train_premises", false),
    ("--by", "by", false),
    ("--corpus", "corpus", false),
    ("--mask", "mask", false),
    ("--goals", "goals", false),
    ("--strict-gold", "strict_gold", true),
    ("--strict", "strict", true),
    ("--goal-names", "goal_names", false),
    ("--lemma-names", "lemma_names", false),
    ("--names", "names", false),
    ("--universe", "universe", false),
    ("--regroup", "regroup", true),
    ("--order", "order", false),
    ("--ties", "ties", false),
    ("--duplicates", "duplicates", false),
    ("--depth", "depth", false),
    ("--memory", "memory", false),
    ("--missing", "missing", false),
    ("--keep-zero-relevant", "keep_zero_relevant", true),
    ("--hold-actual", "hold_actual", true),
    ("--relevance-level", "relevance_level", false),
    ("--interpolation", "interpolation", false),
    ("--threads", "threads", false),
    ("--shard", "shard", false),
    ("--mmap", "mmap", true),
];

/// A score matrix given without the names it needs.
const NEEDS_NAMES: &str = "a score matrix needs its names: goal_names= and lemma_names=, or \
                           names= (with corpus=, goal_names= alone: its columns are the corpus's \
                           premises)";

/// Words that go on a sentence after a flag rather than give its value (`--universe is`,
/// `leave --universe out`).
const PROSE: &[&str] = &[
    "alone", "and", "applies", "are", "as", "at", "but", "by", "cannot", "counts", "does", "for",
    "from", "given", "has", "in", "is", "makes", "needs", "not", "of", "on", "only", "or", "out",
    "reads", "takes", "to", "was", "with", "without",
];

/// `message` with the command's flags written as this package's arguments.
fn pythonic(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    'scan: while let Some(at) = rest.find("--") {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        for (flag, arg, boolean) in ARGUMENTS {
            let Some(after) = tail.strip_prefix(flag) else {
                continue;
            };
            // The whole flag only (`--names` is not the start of `--names-x`).
            if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-') {
                continue;
            }
            out.push_str(arg);
            if boolean {
                out.push_str("=True");
                rest = after;
                continue 'scan;
            }
            // A value: a word (quoted) or a number, or a placeholder (N, FILE) kept bare.
            let value = after.strip_prefix(' ').unwrap_or("");
            let len = value
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-'))
                .unwrap_or(value.len());
            // A word ends before a closing `-` (`--x a-`): no hyphen ends a value.
            let len = value[..len].trim_end_matches('-').len();
            let word = &value[..len];
            if PROSE.contains(&word) {
                // The sentence goes on (`--train-premises is read by ...`): the name alone.
                rest = after;
                continue 'scan;
            }
            out.push('=');
            if word.is_empty() || word == "FILE" || word == "STORE" {
                // A placeholder for a path reads as nothing after the `=`.
                rest = if word.is_empty() {
                    after
                } else {
                    &value[len..]
                };
            } else {
                if word.starts_with(|c: char| c.is_ascii_lowercase())
                    && word.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                {
                    out.push_str(&format!("\"{word}\""));
                } else {
                    out.push_str(word);
                }
                rest = &value[len..];
            }
            continue 'scan;
        }
        out.push_str("--");
        rest = &tail[2..];
    }
    out.push_str(rest);
    out
}

/// A `ValueError` with `message`, its flags written as arguments.
pub(crate) fn value_err(message: impl AsRef<str>) -> PyErr {
    PyValueError::new_err(pythonic(message.as_ref()))
}

/// A Python exception carrying the engine's message: `FileNotFoundError` for a missing file,
/// `ValueError` for everything else a caller can get wrong.
pub(crate) fn py_err(e: EvalError) -> PyErr {
    if let EvalError::Input(ie) = &e {
        if ie.kind == ErrorKind::Io && !ie.path.as_os_str().is_empty() && !ie.path.exists() {
            return PyFileNotFoundError::new_err(e.to_string());
        }
    }
    value_err(e.to_string())
}

fn input_err(e: InputError) -> PyErr {
    py_err(EvalError::Input(e))
}

/// A panic's message.
pub(crate) fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

/// The exception for a panic met while Python values were read: Python's own `RuntimeError` for
/// a container changed while it was read (by another thread: PyO3's iterators stop at that), a
/// `RuntimeError` naming a bug otherwise. Never a `PanicException`, which `except Exception`
/// misses.
pub(crate) fn panic_err(p: &(dyn std::any::Any + Send)) -> PyErr {
    let text = panic_text(p);
    if text.contains("changed size during iteration") || text.contains("changed during iteration") {
        return PyRuntimeError::new_err(format!(
            "{text}: the dict was changed (by another thread?) while it was evaluated"
        ));
    }
    PyRuntimeError::new_err(format!(
        "lemma-eval failed inside the evaluation (a bug; please report it): {text}"
    ))
}

/// Runs `f` with the GIL held, a panic raised as [`panic_err`] says.
pub(crate) fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|p| Err(panic_err(&*p)))
}

/// Runs `f` on a thread of its own with the GIL released, checking for signals (Ctrl-C) every
/// 50 ms: an interrupt raises `KeyboardInterrupt` at once; the abandoned evaluation's thread
/// ends on its own.
fn run_released<T: Send + 'static>(
    py: Python<'_>,
    f: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("lemma-eval".into())
        .spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
            let _ = tx.send(r.map_err(|p| panic_text(&p)));
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start a thread: {e}")))?;
    let mut rx = rx;
    loop {
        let (got, back) = py.detach(move || (rx.recv_timeout(Duration::from_millis(50)), rx));
        rx = back;
        match got {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(panic)) => {
                return Err(PyRuntimeError::new_err(format!(
                    "lemma-eval failed inside the evaluation (a bug; please report it): {panic}"
                )))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                py.check_signals()?;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err("the evaluation thread stopped"))
            }
        }
    }
}

/// One evaluation's result, as Python values: the summary as (key, value) pairs, the per-goal
/// rows when asked for, the goal counts, the travelling summary's bytes (when kept), the
/// warnings, how the actual sets were read (a kind and its figures), and each stratum's
/// summary and goal counts (`by=`), labelled, and what the premise protocol counted (with a
/// corpus).
type Outcome = (
    Vec<(String, Option<f64>)>,
    Option<Vec<(String, Vec<Option<f64>>)>>,
    Vec<(&'static str, u64)>,
    Option<Vec<u8>>,
    Vec<String>,
    Vec<(&'static str, ReadValue)>,
    Vec<StratumOutcome>,
    Option<Counts>,
);

/// A summary's `(key, headline)` pairs.
type Values = Vec<(String, Option<f64>)>;

/// Goal counts by name.
type Counts = Vec<(&'static str, u64)>;

/// One stratum of an [`Outcome`]: its label, summary and goal counts.
type StratumOutcome = (String, Values, Counts);

/// A summary's `(key, headline)` pairs (over no goal a mean is missing, None, as the command
/// prints it; a sum is 0) and its goal counts (with `groups` when grouped).
fn summary_values(keys: &[String], summary: &Summary) -> (Values, Counts) {
    let evaluated = summary.counts().evaluated;
    let values = summary
        .aggregates()
        .into_iter()
        .zip(keys)
        .map(|((_, a), k)| (k.clone(), a.headline_over(evaluated)))
        .collect();
    let mut counts = named_counts(&summary.counts()).to_vec();
    if let Some((groups, _)) = summary.group_counts() {
        counts.push(("groups", groups));
    }
    (values, counts)
}

/// A figure of [`ActualRead`], as a Python value.
#[derive(IntoPyObject)]
enum ReadValue {
    Text(String),
    Int(u64),
    Float(f64),
    None(Option<u8>),
}

/// The actual sets' reading as `(key, value)` pairs: `kind` (`held`, `given`, `joined`),
/// `description` (the command's line) and its figures.
fn read_pairs(r: &ActualRead) -> Vec<(&'static str, ReadValue)> {
    let mut v = vec![
        ("kind", ReadValue::Text(r.kind().into())),
        ("description", ReadValue::Text(r.to_string())),
    ];
    match r {
        ActualRead::Held {
            goals,
            judgments,
            bytes,
            elapsed,
            ..
        } => v.extend([
            ("goals", ReadValue::Int(*goals)),
            ("judgments", ReadValue::Int(*judgments)),
            ("bytes_held", ReadValue::Int(*bytes as u64)),
            ("seconds", ReadValue::Float(elapsed.as_secs_f64())),
        ]),
        ActualRead::Given { goals } => v.push(("goals", ReadValue::Int(*goals))),
        ActualRead::Joined {
            goals,
            sorted,
            elapsed,
            join,
            ..
        } => v.extend([
            ("goals", ReadValue::Int(*goals)),
            ("goals_read", ReadValue::Int(join.goals_read)),
            (
                "bytes_held",
                ReadValue::Int(join.largest_batch_bytes.max(join.held_bytes) as u64),
            ),
            (
                "sorted_on_disk",
                match sorted {
                    Some(s) => ReadValue::Text(s.clone()),
                    None => ReadValue::None(None),
                },
            ),
            ("seconds", ReadValue::Float(elapsed.as_secs_f64())),
        ]),
    }
    v
}

/// An [`Outcome`] of a summary and what came with it.
pub(crate) fn outcome(
    keys: &[String],
    summary: &Summary,
    rows: Option<Vec<GoalRow>>,
    partial: Option<Vec<u8>>,
    warned: Vec<String>,
    read: Vec<(&'static str, ReadValue)>,
    premises: Option<&lemma_eval::PremiseReport>,
) -> Outcome {
    let (values, counts) = summary_values(keys, summary);
    let rows = rows.map(|rows| {
        rows.into_iter()
            .map(|r| (String::from_utf8_lossy(&r.goal).into_owned(), r.values))
            .collect()
    });
    let strata = (summary.strata().into_iter())
        .map(|(label, sub)| {
            let (v, c) = summary_values(keys, sub);
            (label, v, c)
        })
        .collect();
    let premises = premises.map(|p| p.counts().to_vec());
    (
        values, rows, counts, partial, warned, read, strata, premises,
    )
}

/// The [`Outcome`] of a whole evaluation.
/// `corpus`: with the premise protocol's counts (`Result.premises`).
fn job_outcome(
    keys: &[String],
    done: JobOutcome,
    rows: Option<Vec<GoalRow>>,
    corpus: bool,
) -> Outcome {
    let e = &done.evaluation;
    let warned = warnings(&e.report, &e.summary.counts());
    outcome(
        keys,
        &e.summary,
        rows,
        done.partial.as_ref().map(lemma_eval::Partial::encode),
        warned,
        read_pairs(&done.actual_read),
        corpus.then_some(&e.report.premises),
    )
}

/// The keys of the plan's measures: a name as given when it names one measure, the measure's
/// own name for each of a list (`P.5,10`, bare `P`).
fn measure_keys(given: &[String], plan: &[Measure]) -> Vec<String> {
    let mut keys: Vec<(Measure, String)> = Vec::new();
    for g in given {
        if let Ok(ms) = Measure::parse(g) {
            let one = ms.len() == 1;
            for m in ms {
                if !keys.iter().any(|(k, _)| *k == m) {
                    let name = if one {
                        g.clone()
                    } else {
                        m.trec_name().unwrap_or_else(|| m.to_string())
                    };
                    keys.push((m, name));
                }
            }
        }
    }
    plan.iter()
        .map(|m| {
            keys.iter()
                .find(|(k, _)| k == m)
                .map_or_else(|| m.to_string(), |(_, n)| n.clone())
        })
        .collect()
}

/// An integer argument `name` in `range`, or a `ValueError` (a `TypeError` for a non-integer)
/// naming it; `bool` is refused (it is an int in Python, rarely meant as one).
fn int_arg(
    x: &Bound<'_, PyAny>,
    name: &str,
    range: std::ops::RangeInclusive<i128>,
    expected: &str,
) -> PyResult<i128> {
    if x.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "{name}={x}: expected {expected}"
        )));
    }
    let v: i128 = x.extract().map_err(|_| {
        PyTypeError::new_err(format!("{name}: expected {expected}, got {}", type_name(x)))
    })?;
    if !range.contains(&v) {
        return Err(PyValueError::new_err(format!(
            "{name}={v}: expected {expected}"
        )));
    }
    Ok(v)
}

/// `memory=`: a size in bytes, or a str the command's `--memory` takes (`"512M"`).
fn memory_arg(memory: Option<&Bound<'_, PyAny>>) -> PyResult<Option<usize>> {
    let Some(m) = memory.filter(|m| !m.is_none()) else {
        return Ok(None);
    };
    Ok(Some(if let Ok(s) = m.cast::<PyString>() {
        lemma_eval::parse_size(&s.extract::<String>()?)
            .map_err(|e| PyValueError::new_err(format!("memory={e}")))?
    } else {
        int_arg(
            m,
            "memory",
            1..=usize::MAX as i128,
            "a size in bytes or a str such as \"512M\"",
        )? as usize
    }))
}

/// A choice argument (`ties="group"`) through the engine's parser.
fn choice<T: Choice>(word: &str) -> PyResult<T> {
    T::parse(word).map_err(PyValueError::new_err)
}

/// Worker threads as given (`threads=`): the engine's check ([`lemma_eval::check_threads`]),
/// then at most this machine's cores (more only costs memory here).
fn threads_arg(x: Option<&Bound<'_, PyAny>>) -> PyResult<Option<usize>> {
    let Some(x) = x else { return Ok(None) };
    if x.is_none() {
        return Ok(None);
    }
    let n = int_arg(x, "threads", i128::MIN..=i128::MAX, "an int")?;
    let n = lemma_eval::check_threads(n).map_err(PyValueError::new_err)?;
    Ok(Some(n.min(lemma_eval::default_threads())))
}

/// The options, parsed as the command parses its flags.
#[allow(clippy::too_many_arguments)]
fn builder(
    measures: &[String],
    relevance_level: &Bound<'_, PyAny>,
    missing: &str,
    ties: &str,
    order: Option<&str>,
    duplicates: &str,
    depth: Option<&Bound<'_, PyAny>>,
    interpolation: &str,
    keep_zero_relevant: bool,
    universe: Option<&Bound<'_, PyAny>>,
    regroup: bool,
    memory: Option<&Bound<'_, PyAny>>,
    threads: Option<&Bound<'_, PyAny>>,
) -> PyResult<EvaluatorBuilder> {
    let mut b = Evaluator::builder();
    if !measures.is_empty() {
        b = b
            .measure_names(measures)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
    }
    let level = int_arg(
        relevance_level,
        "relevance_level",
        i32::MIN as i128 + 1..=i32::MAX as i128,
        "a 32-bit int",
    )? as i32;
    let depth = match depth.filter(|d| !d.is_none()) {
        Some(d) => Some(int_arg(d, "depth", 0..=u64::MAX as i128, "an int >= 0")? as u64),
        None => None,
    };
    let universe = match universe.filter(|u| !u.is_none()) {
        Some(u) => Some(int_arg(u, "universe", 1..=u64::MAX as i128, "an int >= 1")? as u64),
        None => None,
    };
    b = b
        .relevance_level(level)
        .missing(choice::<MissingMode>(missing)?)
        .ties(choice::<TieMode>(ties)?)
        .duplicates(choice::<DuplicateMode>(duplicates)?)
        .interpolation(choice::<Interpolation>(interpolation)?)
        .depth(depth)
        .universe(universe)
        .regroup(regroup)
        .zero_relevant(if keep_zero_relevant {
            ZeroRelMode::Evaluate
        } else {
            ZeroRelMode::Skip
        });
    if let Some(o) = order {
        b = b.order(choice::<OrderMode>(o)?);
    }
    if let Some(bytes) = memory_arg(memory)? {
        b = b.spill(lemma_ingest::SpillOptions {
            memory: bytes,
            dir: None,
        });
    }
    if let Some(t) = threads_arg(threads)? {
        b = b.threads(t);
    }
    Ok(b)
}

/// Names from a path (one a line, read as the command reads a matrix's name lists) or a list of
/// `str` (each checked as a name).
pub(crate) fn names_arg(x: &Bound<'_, PyAny>, what: &str) -> PyResult<NamesArg> {
    if x.is_instance_of::<PyString>() || x.hasattr("__fspath__")? {
        return Ok(NamesArg::Path(x.extract()?));
    }
    let mut names = Names::default();
    for n in x.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what}: expected a path or a list of names, got {}",
            type_name(x)
        ))
    })? {
        let n = n?;
        let n: String = n.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "{what}: names are str, got {} {}",
                type_name(&n),
                n.repr().map_or_else(|_| "?".into(), |r| r.to_string())
            ))
        })?;
        check_name(&n, what)?;
        names.push(n.as_bytes());
    }
    Ok(NamesArg::List(names))
}

/// Names as given: a file of them, or a list.
pub(crate) enum NamesArg {
    Path(PathBuf),
    List(Names),
}

impl NamesArg {
    /// The names (a file read as the command reads a matrix's name lists).
    pub(crate) fn read(self) -> PyResult<Names> {
        match self {
            NamesArg::Path(p) => Names::read(&p).map_err(input_err),
            NamesArg::List(l) => Ok(l),
        }
    }
}

/// A score matrix in memory, named `name` (the argument, in errors): the array's buffer,
/// borrowed while `owner` (the array) lives. `typestr` is NumPy's (`<f4`, `>f8`, ...).
#[allow(clippy::too_many_arguments)]
pub(crate) fn matrix_arg(
    name: &str,
    owner: Py<PyAny>,
    ptr: usize,
    nbytes: usize,
    rows: usize,
    cols: usize,
    typestr: &str,
) -> PyResult<Matrix> {
    let (dtype, big) = match typestr {
        "<f4" => (Dtype::F32, false),
        ">f4" => (Dtype::F32, true),
        "<f8" => (Dtype::F64, false),
        ">f8" => (Dtype::F64, true),
        t => {
            return Err(PyValueError::new_err(format!(
                "{name}: expected float32 or float64 scores, got dtype {t}"
            )))
        }
    };
    // SAFETY: the Python layer passes a C-contiguous array's data pointer and size; `owner` is
    // the array, kept alive with the matrix, and the evaluation only reads it (the package's
    // documentation asks that it not be written meanwhile).
    unsafe {
        Matrix::from_raw(
            name,
            ptr as *const u8,
            nbytes,
            rows,
            cols,
            dtype,
            big,
            Box::new(owner),
        )
    }
    .map_err(input_err)
}

/// Actual sets and options, ready to evaluate predictions of any shape.
#[pyclass(frozen, module = "lemma_eval._native")]
struct NativeEvaluator {
    builder: EvaluatorBuilder,
    actual: ActualInput,
    /// The evaluator of the actual sets held, once a session or a matrix needed them.
    held: Mutex<Option<Evaluator>>,
    hold_actual: bool,
    keys: Vec<String>,
}

impl NativeEvaluator {
    /// The evaluator with the actual sets held (read once, with the GIL released).
    fn held(&self, py: Python<'_>) -> PyResult<Evaluator> {
        let mut held = self.held.lock().expect("not poisoned");
        if let Some(ev) = &*held {
            return Ok(ev.clone());
        }
        let ev = match &self.actual {
            ActualInput::Sets(s) => self.builder.clone().build(s.clone()),
            ActualInput::Path(p) => {
                let settings = self.builder.settings();
                let (threads, spill) = (settings.threads, settings.spill.clone());
                let sets = py
                    .detach(|| lemma_eval::read_actual_within(p, threads, &spill))
                    .map_err(input_err)?;
                self.builder.clone().build(sets)
            }
        };
        *held = Some(ev.clone());
        Ok(ev)
    }

    /// The actual sets as a job takes them: held already, or the path.
    fn actual_input(&self) -> ActualInput {
        match &*self.held.lock().expect("not poisoned") {
            Some(ev) => ActualInput::Sets(ev.clone().into_actual()),
            None => self.actual.clone(),
        }
    }

    /// Runs `job` with the GIL released.
    fn run(&self, py: Python<'_>, job: Job, per_goal: bool) -> PyResult<Outcome> {
        Ok(self.run_values(py, job, per_goal, false)?.0)
    }

    /// [`Self::run`], and with `values` the values file's bytes (`eval --values-out`).
    fn run_values(
        &self,
        py: Python<'_>,
        job: Job,
        per_goal: bool,
        values: bool,
    ) -> PyResult<(Outcome, Option<Vec<u8>>)> {
        let keys = self.keys.clone();
        let corpus = self.builder.settings().premises.is_some();
        let mut recorder = values.then(|| {
            let plan = self.builder.plan();
            lemma_eval::values::ValuesRecorder::new(self.builder.settings(), plan.measures())
        });
        let done = run_released(py, move || -> Result<_, EvalError> {
            let mut rows = Vec::new();
            let mut both = RowFn(|row: GoalRow| {
                if let Some(r) = recorder.as_mut() {
                    r.add(&row);
                }
                if per_goal {
                    rows.push(row);
                }
                Ok(())
            });
            let sink: &mut dyn Sink = if per_goal || values {
                &mut both
            } else {
                &mut SummaryOnly
            };
            let done = job.run(sink, None)?;
            let bytes = recorder.map(|r| {
                let e = &done.evaluation;
                let counts = e.summary.counts();
                r.encode(&counts, &warnings(&e.report, &counts))
            });
            Ok((
                job_outcome(&keys, done, per_goal.then_some(rows), corpus),
                bytes,
            ))
        })?;
        done.map_err(py_err)
    }
}

#[pymethods]
impl NativeEvaluator {
    /// `actual` is a path or a dict; the options are `lemma_eval.evaluate`'s; `trec9` selects
    /// pytrec_eval's trec_eval 9.0.8 rules (scores as f32, goals without predictions skipped, the
    /// run's order by score).
    #[new]
    #[pyo3(signature = (actual, measures=None, relevance_level=None, missing="zero", ties="trec", depth=None, threads=None, trec9=false, order=None, duplicates="first", interpolation="textbook", keep_zero_relevant=false, universe=None, regroup=false, hold_actual=false, memory=None, corpus=None, mask="none", goals=None, strict=false, strict_gold=false, group_by=None, by=None, train_premises=None, judged_only=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        actual: &Bound<'_, PyAny>,
        measures: Option<Vec<String>>,
        relevance_level: Option<&Bound<'_, PyAny>>,
        missing: &str,
        ties: &str,
        depth: Option<&Bound<'_, PyAny>>,
        threads: Option<&Bound<'_, PyAny>>,
        trec9: bool,
        order: Option<&str>,
        duplicates: &str,
        interpolation: &str,
        keep_zero_relevant: bool,
        universe: Option<&Bound<'_, PyAny>>,
        regroup: bool,
        hold_actual: bool,
        memory: Option<&Bound<'_, PyAny>>,
        corpus: Option<PathBuf>,
        mask: &str,
        goals: Option<PathBuf>,
        strict: bool,
        strict_gold: bool,
        group_by: Option<String>,
        by: Option<Vec<String>>,
        train_premises: Option<PathBuf>,
        judged_only: bool,
    ) -> PyResult<Self> {
        let given = measures.unwrap_or_default();
        let one = 1i32.into_pyobject(py)?.into_any();
        let mut b = builder(
            &given,
            relevance_level.unwrap_or(&one),
            missing,
            ties,
            order,
            duplicates,
            depth,
            interpolation,
            keep_zero_relevant,
            universe,
            regroup,
            memory,
            threads,
        )?;
        if trec9 {
            b = b.trec_eval(trec::TrecVersion::V9, false);
        }
        b = b.judged_only(judged_only);
        let actual = if let Ok(d) = actual.cast::<PyDict>() {
            ActualInput::Sets(std::sync::Arc::new(guarded(|| actual_from_dict(d))?))
        } else if actual.is_instance_of::<PyString>() || actual.hasattr("__fspath__")? {
            ActualInput::Path(actual.extract()?)
        } else {
            return Err(PyTypeError::new_err(format!(
                "actual: expected a path, {{goal: {{lemma: grade}}}} or {{goal: iterable of lemma \
                 names}}, got {}",
                type_name(actual)
            )));
        };
        let mask = choice::<MaskMode>(mask)?;
        let by = by.unwrap_or_default();
        if !by.is_empty() || train_premises.is_some() {
            let from = lemma_eval::StrataSources {
                actual: match &actual {
                    ActualInput::Path(p) => Some(p.clone()),
                    _ => None,
                },
                goals: goals.clone(),
                train_premises,
                relevance_level: b.settings().relevance_level,
                strict,
            };
            let strata = py
                .detach(|| lemma_eval::Strata::load(&by, &from))
                .map_err(py_err)?;
            b = b.strata(std::sync::Arc::new(strata));
        }
        if let Some(by) = &group_by {
            if by.is_empty() {
                // As the command refuses `--group-by ""`.
                return Err(PyValueError::new_err(
                    "group_by: expected theorem, file or a record key",
                ));
            }
            let path = match &actual {
                ActualInput::Path(p) => Some(p.clone()),
                _ => None,
            };
            let groups = py
                .detach(|| lemma_eval::GroupBy::load(by, path.as_deref(), goals.as_deref(), strict))
                .map_err(input_err)?;
            b = b.group_by(std::sync::Arc::new(groups));
        }
        match corpus {
            Some(corpus) => {
                let opts = PremiseOptions {
                    corpus,
                    mask,
                    goals,
                    strict,
                    strict_gold,
                };
                let path = match &actual {
                    ActualInput::Path(p) => Some(p.clone()),
                    _ => None,
                };
                let premises = py
                    .detach(|| Premises::load(&opts, path.as_deref()))
                    .map_err(input_err)?;
                b = b.premises(std::sync::Arc::new(premises));
            }
            None => {
                let grouped = group_by.is_some() || !by.is_empty();
                let given = [
                    ("mask", mask != MaskMode::None),
                    ("goals", goals.is_some() && !grouped),
                    ("strict", strict && !grouped),
                    ("strict_gold", strict_gold),
                ];
                if let Some((name, _)) = given.iter().find(|(_, set)| *set) {
                    let or = match *name {
                        "goals" | "strict" => ", group_by= or by=",
                        _ => "",
                    };
                    return Err(PyValueError::new_err(format!(
                        "{name}= needs corpus= (LeanDojo's corpus.jsonl){or}"
                    )));
                }
            }
        }
        let keys = measure_keys(&given, b.plan().measures());
        Ok(NativeEvaluator {
            builder: b,
            actual,
            held: Mutex::new(None),
            hold_actual,
            keys,
        })
    }

    /// The keys of the results, in the order of the values.
    #[getter]
    fn keys(&self) -> Vec<String> {
        self.keys.clone()
    }

    /// Evaluates a file of predictions (any format the command reads): as `eval` does, through
    /// the engine's front door (sorted qrels read along a plain TREC run; held otherwise). A
    /// `.npy` matrix takes its names from `goal_names` and `lemma_names` (paths or lists) or
    /// `names` (a store). `shard` is `(I, N)`, 1-based: a byte range of a plain text file
    /// (`eval --shard I/N`); `mergeable` keeps the travelling summary (a shard's always).
    /// `keep_values` also returns the values file's bytes (`eval --values-out`).
    #[pyo3(signature = (path, per_goal=false, goal_names=None, lemma_names=None, shard=None, mergeable=false, names=None, mmap=false, keep_values=false))]
    #[allow(clippy::too_many_arguments)]
    fn evaluate_path(
        &self,
        py: Python<'_>,
        path: PathBuf,
        per_goal: bool,
        goal_names: Option<&Bound<'_, PyAny>>,
        lemma_names: Option<&Bound<'_, PyAny>>,
        shard: Option<&Bound<'_, PyAny>>,
        mergeable: bool,
        names: Option<PathBuf>,
        mmap: bool,
        keep_values: bool,
    ) -> PyResult<(Outcome, Option<Vec<u8>>)> {
        let shard = match shard.filter(|s| !s.is_none()) {
            None => None,
            Some(s) => {
                let bad = || {
                    PyValueError::new_err(format!(
                        "shard={}: expected (I, N) with 1 <= I <= N",
                        s.repr().map_or_else(|_| "?".into(), |r| r.to_string())
                    ))
                };
                let (i, n): (Bound<'_, PyAny>, Bound<'_, PyAny>) =
                    s.extract().map_err(|_| bad())?;
                let (i, n) = (
                    int_arg(&i, "shard", 1..=u64::MAX as i128, "(I, N) with 1 <= I <= N")
                        .map_err(|_| bad())?,
                    int_arg(&n, "shard", 1..=u64::MAX as i128, "(I, N) with 1 <= I <= N")
                        .map_err(|_| bad())?,
                );
                if i > n {
                    return Err(bad());
                }
                Some((i as u64, n as u64))
            }
        };
        let goal_names = goal_names
            .filter(|g| !g.is_none())
            .map(|g| names_arg(g, "goal_names"))
            .transpose()?;
        let lemma_names = lemma_names
            .filter(|g| !g.is_none())
            .map(|g| names_arg(g, "lemma_names"))
            .transpose()?;
        let kind = InputKind::of(&path).map_err(input_err)?;
        if shard.is_some() && kind != InputKind::Text {
            return Err(PyValueError::new_err(format!(
                "{}: shard: a shard is a byte range of a text file (TREC or JSONL); a store or a \
                 matrix is not cut",
                path.display()
            )));
        }
        let mut matrix_names = None;
        let predicted = match (goal_names, lemma_names, names) {
            (None, None, None) => None,
            (None, None, Some(store)) => {
                matrix_names = Some(MatrixNames::Store(store));
                None
            }
            (Some(NamesArg::Path(goals)), Some(NamesArg::Path(lemmas)), None) => {
                matrix_names = Some(MatrixNames::Lists { goals, lemmas });
                None
            }
            (Some(g), Some(l), None) if kind == InputKind::Matrix => {
                let (g, l) = (g.read()?, l.read()?);
                let m = Matrix::open(&path).map_err(input_err)?;
                Some(PredictedInput::from(
                    Predictions::matrix(m, g, l).map_err(input_err)?,
                ))
            }
            (Some(_), Some(_), None) => None,
            // Under a corpus, columns without names are its premises, in its order.
            (Some(g), None, None) if self.builder.settings().premises.is_some() => match g {
                NamesArg::Path(goals) => {
                    matrix_names = Some(MatrixNames::Premises { goals });
                    None
                }
                g if kind == InputKind::Matrix => {
                    let corpus = self.builder.settings().premises.as_ref().expect("checked");
                    let m = Matrix::open(&path).map_err(input_err)?;
                    let p = Predictions::premise_matrix(m, g.read()?, corpus.corpus());
                    Some(PredictedInput::from(p.map_err(input_err)?))
                }
                _ => None,
            },
            _ => return Err(PyValueError::new_err(NEEDS_NAMES)),
        };
        let predicted = match (predicted, shard) {
            (Some(p), _) => p,
            (None, Some((index, count))) => PredictedInput::Shard { path, index, count },
            (None, None) => PredictedInput::Path(path),
        };
        let job = Job::new(self.builder.clone(), self.actual_input(), predicted)
            .names(matrix_names)
            .mmap(mmap)
            .hold_actual(self.hold_actual)
            .mergeable(mergeable || shard.is_some());
        self.run_values(py, job, per_goal, keep_values)
    }

    /// Compares runs as `lemma-eval compare` does ([`lemma_eval::compare`]): each a path of any
    /// kind the command reads (`.npy` matrices named by `goal_names` and `lemma_names`, paths,
    /// or `names`, a store), labelled by `labels` (default: the paths as given). Returns the
    /// rows (dicts of the tsv's fields, with `p_bootstrap`, `p_tukey` and `significant`), the warnings and
    /// the number of goals compared.
    #[pyo3(signature = (runs, labels=None, all_pairs=false, test="t", correction="holm", alpha=0.05, permutations=None, seed=None, goal_names=None, lemma_names=None, names=None, mmap=false, systems=None))]
    #[allow(clippy::too_many_arguments)]
    fn compare<'py>(
        &self,
        py: Python<'py>,
        runs: Vec<PathBuf>,
        labels: Option<Vec<String>>,
        all_pairs: bool,
        test: &str,
        correction: &str,
        alpha: f64,
        permutations: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
        goal_names: Option<PathBuf>,
        lemma_names: Option<PathBuf>,
        names: Option<PathBuf>,
        mmap: bool,
        systems: Option<Vec<(String, Vec<PathBuf>)>>,
    ) -> PyResult<(Vec<Bound<'py, PyDict>>, Vec<String>, u64)> {
        use lemma_eval::compare::{Compare, CompareOptions, System};
        let labels = match labels {
            None => runs.iter().map(|p| p.display().to_string()).collect(),
            Some(l) if l.len() == runs.len() => l,
            Some(l) => {
                return Err(PyValueError::new_err(format!(
                    "labels: {} names for {} runs: give one per run",
                    l.len(),
                    runs.len()
                )))
            }
        };
        let mut options = CompareOptions {
            all_pairs,
            test: choice(test)?,
            correction: choice(correction)?,
            alpha,
            ..CompareOptions::default()
        };
        if let Some(p) = permutations.filter(|p| !p.is_none()) {
            options.permutations =
                int_arg(p, "permutations", 1..=u64::MAX as i128, "an int >= 1")? as u64;
        }
        if let Some(s) = seed.filter(|s| !s.is_none()) {
            options.seed = int_arg(s, "seed", 0..=u64::MAX as i128, "an int >= 0")? as u64;
        }
        options
            .check()
            .map_err(|e| PyValueError::new_err(e.replace("level", "the interval's level")))?;
        let matrix_names = match (goal_names, lemma_names, names) {
            (None, None, None) => None,
            (None, None, Some(store)) => Some(MatrixNames::Store(store)),
            (Some(goals), Some(lemmas), None) => Some(MatrixNames::Lists { goals, lemmas }),
            (Some(goals), None, None) if self.builder.settings().premises.is_some() => {
                Some(MatrixNames::Premises { goals })
            }
            _ => return Err(PyValueError::new_err(NEEDS_NAMES)),
        };
        let mut runs: Vec<System> = (labels.into_iter().zip(runs))
            .map(|(label, p)| System {
                label,
                runs: vec![PredictedInput::Path(p).into()],
            })
            .collect();
        for (label, paths) in systems.unwrap_or_default() {
            runs.push(System {
                label,
                runs: (paths.into_iter())
                    .map(|p| PredictedInput::Path(p).into())
                    .collect(),
            });
        }
        let compare = Compare::systems(self.builder.clone(), self.actual_input(), runs)
            .names(matrix_names)
            .mmap(mmap);
        let c = run_released(py, move || compare.run(&options))?.map_err(py_err)?;
        let mut rows = Vec::with_capacity(c.rows.len());
        for r in &c.rows {
            let d = PyDict::new(py);
            d.set_item("measure", c.measures[r.measure].to_string())?;
            d.set_item("run_a", &c.runs[r.a].label)?;
            d.set_item("run_b", &c.runs[r.b].label)?;
            for (k, v) in [
                ("mean_a", r.mean_a),
                ("mean_b", r.mean_b),
                ("diff", r.diff),
                ("p_t", r.p_t),
                ("p_randomization", r.p_randomization),
                ("p_adjusted", r.p_adjusted),
                ("ci_low", r.ci_low),
                ("ci_high", r.ci_high),
                ("effect", r.effect),
            ] {
                d.set_item(k, v)?;
            }
            d.set_item("wins", r.wins)?;
            d.set_item("ties", r.ties)?;
            d.set_item("losses", r.losses)?;
            d.set_item("p_bootstrap", r.p_bootstrap)?;
            // None, not NaN, where Tukey's test was not asked for: rows compare equal.
            if c.options.test == lemma_eval::compare::Test::Tukey {
                d.set_item("p_tukey", r.p_tukey)?;
            } else {
                d.set_item("p_tukey", py.None())?;
            }
            d.set_item("significant", r.significant)?;
            rows.push(d);
        }
        let warned = c.warnings.iter().map(|w| pythonic(w)).collect();
        Ok((rows, warned, c.goals))
    }

    /// `lemma-eval report`'s page of `runs` (paths of any kind a run file is: TREC, JSONL),
    /// made as the command makes it (`lemma_report::page`), with the actual sets held;
    /// `command` is shown as the page's command line, `inputs` (role, path) listed before the
    /// runs. With `output`, the page is written there as the command writes `-o` (whole or not
    /// at all; refused before any work when it would replace one of `read`, the files read).
    /// The page's HTML.
    #[pyo3(signature = (runs, inputs, command, output=None, read=Vec::new()))]
    fn report(
        &self,
        py: Python<'_>,
        runs: Vec<PathBuf>,
        inputs: Vec<(String, PathBuf)>,
        command: String,
        output: Option<PathBuf>,
        read: Vec<PathBuf>,
    ) -> PyResult<String> {
        if let Some(out) = &output {
            let read: Vec<&std::path::Path> = read.iter().map(|p| p.as_path()).collect();
            lemma_outfile::check_distinct(&[out.as_path()], &read)
                .map_err(|e| PyValueError::new_err(format!("output: {e}")))?;
        }
        let actual = self.held(py)?.into_actual();
        let builder = self.builder.clone();
        let page = run_released(py, move || -> Result<String, EvalError> {
            let inputs = (inputs.iter())
                .map(|(role, path)| lemma_report::InputFile::of(role, path))
                .collect();
            let page = lemma_report::page(builder, actual, inputs, &runs, command)?;
            lemma_report::html(&page).map_err(EvalError::Options)
        })?
        .map_err(py_err)?;
        if let Some(out) = &output {
            let mut o = lemma_outfile::Output::create(Some(out.as_path()))
                .map_err(|e| PyOSError::new_err(e.to_string()))?;
            let written = std::io::Write::write_all(o.writer(), page.as_bytes());
            written.map_err(|e| PyOSError::new_err(o.write_error(e).to_string()))?;
            lemma_outfile::commit_outputs([o]).map_err(|e| PyOSError::new_err(e.to_string()))?;
        }
        Ok(page)
    }

    /// Evaluates a score matrix in memory, `[goals, lemmas]`: `ptr` and `nbytes` are the data of
    /// the C-contiguous array `owner` (kept alive while it is read), `typestr` its NumPy type
    /// (`<f4`, `>f8`, ...); rows named by `goal_names`, columns by `lemma_names` (lists of str or
    /// paths; `None` under a corpus: its premises, in its order). Evaluated as a `.npy` file is,
    /// on all cores, no row sorted.
    #[pyo3(signature = (owner, ptr, nbytes, rows, cols, typestr, goal_names, lemma_names, per_goal=false, mergeable=false))]
    #[allow(clippy::too_many_arguments)]
    fn evaluate_array(
        &self,
        py: Python<'_>,
        owner: Py<PyAny>,
        ptr: usize,
        nbytes: usize,
        rows: usize,
        cols: usize,
        typestr: &str,
        goal_names: &Bound<'_, PyAny>,
        lemma_names: Option<&Bound<'_, PyAny>>,
        per_goal: bool,
        mergeable: bool,
    ) -> PyResult<Outcome> {
        let goals = names_arg(goal_names, "goal_names")?.read()?;
        let m = matrix_arg("predicted", owner, ptr, nbytes, rows, cols, typestr)?;
        let p = match (
            lemma_names.filter(|l| !l.is_none()),
            &self.builder.settings().premises,
        ) {
            (Some(l), _) => Predictions::matrix(m, goals, names_arg(l, "lemma_names")?.read()?),
            (None, Some(premises)) => Predictions::premise_matrix(m, goals, premises.corpus()),
            (None, None) => return Err(PyValueError::new_err(NEEDS_NAMES)),
        };
        let p = p.map_err(input_err)?;
        let job = Job::new(self.builder.clone(), self.actual_input(), p)
            .hold_actual(self.hold_actual)
            .mergeable(mergeable);
        self.run(py, job, per_goal)
    }

    /// A push session.
    fn session(&self, py: Python<'_>) -> PyResult<session::NativeSession> {
        let ev = self.held(py)?;
        session::NativeSession::new(&ev, self.keys.clone())
    }

    /// The measures trec_eval computes for `-m` arguments, in its order: each printed name with
    /// the measure behind it (`None` for `runid`).
    #[staticmethod]
    fn trec_measures(measures: Vec<String>) -> PyResult<Vec<(String, Option<String>)>> {
        let tm = trec::resolve(&measures).map_err(|e| PyValueError::new_err(e.message))?;
        Ok(trec_pairs(tm))
    }

    /// [`NativeEvaluator::trec_measures`] of a set of names as pytrec_eval reads them
    /// ([`trec::resolve_pytrec`]: `P_5` spellings, parameters of one measure taken together).
    #[staticmethod]
    fn pytrec_measures(measures: Vec<String>) -> PyResult<Vec<(String, Option<String>)>> {
        let tm = trec::resolve_pytrec(&measures).map_err(|e| PyValueError::new_err(e.message))?;
        Ok(trec_pairs(tm))
    }

    /// The trec_eval measure names pytrec_eval takes that lemma-eval computes (`runid` included,
    /// as pytrec_eval lists it), and the nicknames pytrec_eval takes with their members among
    /// them.
    #[staticmethod]
    fn pytrec_supported() -> (Vec<String>, Vec<(String, Vec<String>)>) {
        let names = (trec::table().iter())
            .filter(|e| e.in_pytrec())
            .map(|e| e.name.to_string())
            .collect();
        let nicknames = trec::PYTREC_NICKNAMES
            .iter()
            .map(|n| {
                let members = trec::pytrec_nickname(n).unwrap_or_default();
                (
                    n.to_string(),
                    members.into_iter().map(String::from).collect(),
                )
            })
            .collect();
        (names, nicknames)
    }
}

/// The shards a partial merge lacks: per predictions file, its name, length, fingerprint, shard
/// count and the missing ranges of shards.
type Lacking = Vec<(String, u64, u64, u64, Vec<(u64, u64)>)>;

/// Each printed name with the measure behind it.
fn trec_pairs(tm: Vec<trec::TrecMeasure>) -> Vec<(String, Option<String>)> {
    // A text (`relstring`) has no number; pytrec_eval reports 0 for it.
    tm.into_iter()
        .map(|m| {
            let native = m.measure.filter(|_| !m.text).map(|x| x.to_string());
            (m.name.to_string(), native)
        })
        .collect()
}

/// Merges travelling summaries (from `summary_bytes()` or `--summary-out`) into one result, with
/// the command's checks (`Partial::merge_all`: each part named `parts[i]`); `keys` names the
/// measures (the measures' own names when `None`). With `partial`, a set of shards with some
/// missing merges, and the lacking shards are returned beside the result.
#[pyfunction]
#[pyo3(signature = (parts, keys=None, partial=false))]
fn merge(
    py: Python<'_>,
    parts: Vec<Vec<u8>>,
    keys: Option<Vec<String>>,
    partial: bool,
) -> PyResult<(Outcome, Lacking)> {
    if parts.is_empty() {
        return Err(PyValueError::new_err("no summaries to merge"));
    }
    let merged = py.detach(|| -> Result<_, lemma_eval::PartialError> {
        let mut m = lemma_eval::PartialMerger::new();
        for (i, p) in parts.iter().enumerate() {
            let name = format!("parts[{i}]");
            let p = lemma_eval::Partial::decode(p)
                .map_err(|e| lemma_eval::PartialError(format!("{name}: {}", e.0)))?;
            m.add(&name, p)?;
        }
        m.finish(partial).map_err(|e| {
            lemma_eval::PartialError(format!("{}; partial=True merges the shards given", e.0))
        })
    });
    let (merged, lacking) = merged.map_err(|e| PyValueError::new_err(e.0))?;
    let summary = merged.summary().map_err(|e| PyValueError::new_err(e.0))?;
    let keys = match keys {
        Some(k) if k.len() == merged.measures().len() => k,
        Some(k) => {
            return Err(PyValueError::new_err(format!(
                "{} keys for {} measures",
                k.len(),
                merged.measures().len()
            )))
        }
        None => merged.measures().iter().map(|m| m.to_string()).collect(),
    };
    let lacking = (lacking.into_iter())
        .map(|l| {
            let f = l.file;
            (f.name, f.bytes, f.fingerprint, l.count, l.missing)
        })
        .collect();
    let out = outcome(
        &keys,
        &summary,
        None,
        Some(merged.encode()),
        Vec::new(),
        Vec::new(),
        merged.premises(),
    );
    Ok((out, lacking))
}

/// Reads a corpus (text or binary) and writes it in binary form to `output`, whole or not at all
/// (`lemma-eval convert --corpus`); returns (files, premises, premises skipped).
#[pyfunction]
fn convert_corpus(
    py: Python<'_>,
    corpus: PathBuf,
    output: PathBuf,
) -> PyResult<(usize, usize, u64)> {
    guarded(|| {
        py.detach(|| {
            let c = lemma_ingest::Corpus::read(&corpus).map_err(input_err)?;
            c.write_binary_file(&output).map_err(input_err)?;
            Ok((c.files(), c.premises(), c.skipped().total()))
        })
    })
}

/// The engine's version: the package's `__version__`.
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeEvaluator>()?;
    m.add_class::<session::NativeSession>()?;
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    m.add_function(wrap_pyfunction!(convert_corpus, m)?)?;
    m.add_function(wrap_pyfunction!(trec_prefs::trec_eval_prefs, m)?)?;
    m.add("__version__", version())?;
    m.add("MAX_THREADS", lemma_eval::MAX_THREADS)?;
    Ok(())
}
