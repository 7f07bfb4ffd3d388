//! The native module of the `lemma_eval` Python package: the engine's evaluator and push sessions,
//! evaluations with the GIL released, results as plain Python values. The Python layer
//! (`lemma_eval/__init__.py`) chooses the way in from the shape of the inputs.

use lemma_accum::{Measure, Summary};
use lemma_eval::{
    trec, EvalError, Evaluation, Evaluator, GoalRow, MatrixNames, MissingMode, OrderMode, Partial,
    Predictions, Sink, SummaryOnly, TieMode, ZeroRelMode,
};
use lemma_ingest::{ActualSets, ErrorKind, InputError, PushGoalError};
use pyo3::exceptions::{PyFileNotFoundError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

/// A Python exception carrying the command's message: `FileNotFoundError` for a missing file,
/// `ValueError` for everything else a caller can get wrong.
fn py_err(e: EvalError) -> PyErr {
    if let EvalError::Input(ie) = &e {
        if ie.kind == ErrorKind::Io && !ie.path.as_os_str().is_empty() && !ie.path.exists() {
            return PyFileNotFoundError::new_err(e.to_string());
        }
    }
    PyValueError::new_err(e.to_string())
}

fn input_err(e: InputError) -> PyErr {
    py_err(EvalError::Input(e))
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
        .map_err(|e| PyValueError::new_err(format!("cannot start a thread: {e}")))?;
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

/// A panic's message.
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

/// One evaluation's result, as Python values: the summary as (key, value) pairs, the per-goal
/// rows when asked for, the goal counts, and the travelling summary's bytes.
type Outcome = (
    Vec<(String, Option<f64>)>,
    Option<Vec<(String, Vec<Option<f64>>)>>,
    Vec<(&'static str, u64)>,
    Option<Vec<u8>>,
);

fn outcome(
    keys: &[String],
    summary: &Summary,
    rows: Option<Vec<GoalRow>>,
    partial: Option<&Partial>,
) -> Outcome {
    let values = summary
        .aggregates()
        .into_iter()
        .zip(keys)
        .map(|((_, a), k)| (k.clone(), a.headline()))
        .collect();
    let rows = rows.map(|rows| {
        rows.into_iter()
            .map(|r| (String::from_utf8_lossy(&r.goal).into_owned(), r.values))
            .collect()
    });
    let c = summary.counts();
    let counts = vec![
        ("evaluated", c.evaluated),
        ("evaluated_empty", c.evaluated_empty),
        ("skipped_no_actual", c.skipped_no_actual),
        ("skipped_no_relevant", c.skipped_no_relevant),
        ("skipped_no_predictions", c.skipped_no_predictions),
    ];
    (values, rows, counts, partial.map(Partial::encode))
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

/// Actual sets from `{goal: {lemma: grade}}` or `{goal: iterable of lemma names}` (grade 1),
/// built goal by goal with the checks the qrels reader makes (names without whitespace, grades
/// that fit, a lemma judged once a goal, at least one judgment). Not through qrels text: a goal
/// named `#...` would read as a comment line there.
fn actual_from_dict(actual: &Bound<'_, PyDict>) -> PyResult<ActualSets> {
    let mut sets = ActualSets::default();
    let mut entries: Vec<(u32, i32)> = Vec::new();
    for (goal, lemmas) in actual.iter() {
        let goal: String = goal.extract()?;
        check_name(&goal, "goal")?;
        entries.clear();
        if let Ok(graded) = lemmas.cast::<PyDict>() {
            for (lemma, grade) in graded.iter() {
                let lemma: String = lemma.extract()?;
                check_name(&lemma, "lemma")?;
                let grade: i64 = grade.extract().map_err(|_| {
                    PyValueError::new_err(format!(
                        "actual: goal `{goal}`, lemma `{lemma}`: expected an integer grade"
                    ))
                })?;
                // As a qrels grade: a 32-bit integer (its lowest value reserved).
                let grade = i32::try_from(grade)
                    .ok()
                    .filter(|&g| g != i32::MIN)
                    .ok_or_else(|| {
                        PyValueError::new_err(format!(
                            "actual: goal `{goal}`, lemma `{lemma}`: grade {grade} is out of range \
                             (expected a 32-bit integer)"
                        ))
                    })?;
                entries.push((sets.lemmas.intern(lemma.as_bytes()), grade));
            }
        } else {
            if lemmas.is_instance_of::<pyo3::types::PyString>()
                || lemmas.is_instance_of::<pyo3::types::PyBytes>()
            {
                return Err(PyValueError::new_err(format!(
                    "actual: goal `{goal}`: expected {{lemma: grade}} or a list of lemma names, \
                     got a string"
                )));
            }
            for lemma in lemmas.try_iter()? {
                let lemma: String = lemma?.extract()?;
                check_name(&lemma, "lemma")?;
                entries.push((sets.lemmas.intern(lemma.as_bytes()), 1));
            }
        }
        // A goal without judgments has no lines in qrels: no actual set.
        if entries.is_empty() {
            continue;
        }
        match sets.push_goal(goal.as_bytes(), &mut entries) {
            Ok(_) => {}
            Err(PushGoalError::GoalRepeated) => {
                return Err(PyValueError::new_err(format!(
                    "actual: goal `{goal}` is given twice"
                )))
            }
            Err(PushGoalError::LemmaRepeated(l)) => {
                return Err(PyValueError::new_err(format!(
                    "actual: goal `{goal}`: lemma `{}` is judged twice",
                    String::from_utf8_lossy(sets.lemmas.name(l))
                )))
            }
        }
    }
    if sets.goals.is_empty() {
        return Err(PyValueError::new_err(
            "actual: has no judgments, expected at least one goal with a lemma",
        ));
    }
    Ok(sets)
}

/// The UTF-8 bytes of a `str`, borrowed from the string object (CPython keeps them with the
/// string; an ASCII string's are its own characters): no copy, no allocation.
/// `PyUnicode_AsUTF8AndSize` is in the limited API from Python 3.10 and exported by every
/// CPython 3 before it, so the one abi3 wheel uses it on 3.9 too.
fn utf8<'a>(s: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
    if !s.is_instance_of::<pyo3::types::PyString>() {
        return Err(PyValueError::new_err(format!(
            "expected a str as a goal or lemma name, got {}",
            s.get_type()
                .name()
                .map_or_else(|_| "?".to_string(), |n| n.to_string())
        )));
    }
    // SAFETY: `s` is a live `str` (checked above) and the GIL is held (`Bound`); the bytes
    // belong to the string object, which `s` keeps alive for 'a.
    match unsafe { utf8_raw(s.as_ptr()) } {
        Some(b) => Ok(b),
        None => Err(PyErr::fetch(s.py())),
    }
}

/// The UTF-8 bytes of the `str` at `s`, or `None` with a Python error set.
///
/// # Safety
/// `s` is a live `str` object, the GIL is held, and the bytes are used only while it lives.
unsafe fn utf8_raw<'a>(s: *mut pyo3::ffi::PyObject) -> Option<&'a [u8]> {
    unsafe extern "C" {
        fn PyUnicode_AsUTF8AndSize(
            unicode: *mut pyo3::ffi::PyObject,
            size: *mut pyo3::ffi::Py_ssize_t,
        ) -> *const std::os::raw::c_char;
    }
    let mut len: pyo3::ffi::Py_ssize_t = 0;
    // SAFETY: the caller's promise.
    let p = unsafe { PyUnicode_AsUTF8AndSize(s, &mut len) };
    if p.is_null() {
        return None;
    }
    // SAFETY: CPython keeps `len` bytes at `p`, unchanged while the string lives.
    Some(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len as usize) })
}

/// Reads a dict of exact `str` keys and exact `float` (or `int`) values into `g` (emptied first) by
/// `PyDict_Next`'s borrowed references: no reference counting, no conversion that could run Python
/// code (and so change the dict under the loop). `false` at the first entry of another type
/// (`g` then holds a prefix: the caller starts over the general way).
fn read_exact_pairs(dict: &Bound<'_, PyDict>, g: &mut ScoredGoal) -> bool {
    use pyo3::ffi;
    let mut pos: ffi::Py_ssize_t = 0;
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    g.names.clear();
    g.scored.clear();
    // SAFETY: the GIL is held (`Bound`); nothing below runs Python code, so the dict is not
    // changed while it is walked and the borrowed references stay valid for each step.
    unsafe {
        while ffi::PyDict_Next(dict.as_ptr(), &mut pos, &mut key, &mut value) != 0 {
            if ffi::PyUnicode_CheckExact(key) == 0 {
                return false;
            }
            let score = if ffi::PyFloat_CheckExact(value) != 0 {
                ffi::PyFloat_AsDouble(value)
            } else if ffi::PyLong_CheckExact(value) != 0 {
                let v = ffi::PyLong_AsDouble(value);
                if v == -1.0 && !ffi::PyErr_Occurred().is_null() {
                    ffi::PyErr_Clear();
                    return false;
                }
                v
            } else {
                return false;
            };
            let Some(name) = utf8_raw(key) else {
                ffi::PyErr_Clear();
                return false;
            };
            if name.len() >= u32::MAX as usize {
                return false; // refused by the general way
            }
            g.push(name, score);
        }
    }
    true
}

/// A goal or lemma name must be one field: not empty, no whitespace.
fn check_name(name: &str, what: &str) -> PyResult<()> {
    if name.is_empty() || name.bytes().any(lemma_ingest::bytes::is_delim) {
        return Err(PyValueError::new_err(format!(
            "{what} name {name:?}: expected a non-empty name without whitespace"
        )));
    }
    Ok(())
}

fn missing_mode(s: &str) -> PyResult<MissingMode> {
    Ok(match s {
        "zero" => MissingMode::Zero,
        "skip" => MissingMode::Skip,
        _ => {
            return Err(PyValueError::new_err(format!(
                "missing={s:?}: expected \"zero\" or \"skip\""
            )))
        }
    })
}

fn tie_mode(s: &str) -> PyResult<TieMode> {
    Ok(match s {
        "trec" => TieMode::Trec,
        "group" => TieMode::Group,
        "file" => TieMode::File,
        _ => {
            return Err(PyValueError::new_err(format!(
                "ties={s:?}: expected \"trec\", \"group\" or \"file\""
            )))
        }
    })
}

/// Actual sets and options, ready to evaluate predictions of any shape.
#[pyclass(frozen, module = "lemma_eval._native")]
struct NativeEvaluator {
    ev: Evaluator,
    keys: Vec<String>,
}

#[pymethods]
impl NativeEvaluator {
    /// `actual` is a path or a dict; `trec9` selects pytrec_eval's trec_eval 9.0.8 rules
    /// (scores as f32, goals without predictions skipped, the run's order by score).
    #[new]
    #[pyo3(signature = (actual, measures=None, relevance_level=1, missing="zero", ties="trec", depth=None, threads=None, trec9=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        actual: &Bound<'_, PyAny>,
        measures: Option<Vec<String>>,
        relevance_level: i32,
        missing: &str,
        ties: &str,
        depth: Option<u64>,
        threads: Option<usize>,
        trec9: bool,
    ) -> PyResult<Self> {
        let mut b = Evaluator::builder();
        let given = measures.unwrap_or_default();
        if !given.is_empty() {
            b = b
                .measure_names(&given)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
        }
        b = b
            .relevance_level(relevance_level)
            .missing(missing_mode(missing)?)
            .ties(tie_mode(ties)?)
            .depth(depth);
        if let Some(t) = threads {
            b = b.threads(t);
        }
        if trec9 {
            b = b
                .order(OrderMode::Score)
                .missing(MissingMode::Skip)
                .zero_relevant(ZeroRelMode::Evaluate)
                .interpolation(lemma_accum::Interpolation::Trec9)
                .f32_scores(true)
                .duplicates(lemma_eval::DuplicateMode::Error);
        }
        // The actual sets are read on the evaluator's threads.
        let threads = threads.unwrap_or(lemma_eval::EvalOptions::default().threads);
        let actual = if let Ok(d) = actual.cast::<PyDict>() {
            actual_from_dict(d)?
        } else {
            let path: PathBuf = actual.extract()?;
            py.detach(|| lemma_eval::read_actual_with_threads(&path, threads))
                .map_err(input_err)?
        };
        let ev = b.build(actual);
        let keys = measure_keys(&given, ev.plan().measures());
        Ok(NativeEvaluator { ev, keys })
    }

    /// The keys of the results, in the order of the values.
    #[getter]
    fn keys(&self) -> Vec<String> {
        self.keys.clone()
    }

    /// Evaluates a file of predictions (any format the command reads; a `.npy` matrix with
    /// files of goal and lemma names).
    /// `shard` is `(I, N)`, 1-based: a byte range of a plain text file (`eval --shard I/N`).
    #[pyo3(signature = (path, per_goal=false, goal_names=None, lemma_names=None, shard=None))]
    fn evaluate_path(
        &self,
        py: Python<'_>,
        path: PathBuf,
        per_goal: bool,
        goal_names: Option<PathBuf>,
        lemma_names: Option<PathBuf>,
        shard: Option<(u64, u64)>,
    ) -> PyResult<Outcome> {
        if let Some((i, n)) = shard {
            if i == 0 || i > n {
                return Err(PyValueError::new_err(format!(
                    "shard ({i}, {n}): expected (I, N) with 1 <= I <= N"
                )));
            }
        }
        let names = match (goal_names, lemma_names) {
            (Some(goals), Some(lemmas)) => Some(MatrixNames::Lists { goals, lemmas }),
            (None, None) => None,
            _ => {
                return Err(PyValueError::new_err(
                    "a matrix needs both goal_names and lemma_names",
                ))
            }
        };
        let ev = self.ev.clone();
        let keys = self.keys.clone();
        if shard.is_some()
            && matches!(
                lemma_eval::InputKind::of(&path),
                Ok(lemma_eval::InputKind::Store | lemma_eval::InputKind::Matrix)
            )
        {
            return Err(PyValueError::new_err(format!(
                "{}: shard: a shard is a byte range of a text file (TREC or JSONL); a store or a \
                 matrix is not cut",
                path.display()
            )));
        }
        let done = run_released(py, move || -> Result<Outcome, EvalError> {
            let mut rows = Vec::new();
            let sink: &mut dyn Sink = if per_goal {
                &mut rows
            } else {
                &mut SummaryOnly
            };
            let (done, partial) = match shard {
                Some((i, n)) => ev.evaluate_shard(&path, i - 1, n, sink, None)?,
                None => {
                    let predictions = Predictions::open(&path, names.as_ref(), false)?;
                    ev.evaluate_partial(predictions, sink, None)?
                }
            };
            Ok(outcome(
                &keys,
                &done.summary,
                per_goal.then_some(rows),
                Some(&partial),
            ))
        })?;
        done.map_err(py_err)
    }

    /// A push session.
    fn session(&self) -> PyResult<NativeSession> {
        let s = self.ev.session().map_err(py_err)?;
        Ok(NativeSession {
            session: Some(s),
            failed: None,
            keys: self.keys.clone(),
            rows: Vec::new(),
            per_goal: false,
            lemmas: Vec::new(),
        })
    }

    /// The measures trec_eval computes for `-m` arguments, in its order: each printed name with
    /// the measure behind it (`None` for `runid`).
    #[staticmethod]
    fn trec_measures(measures: Vec<String>) -> PyResult<Vec<(String, Option<String>)>> {
        let tm = trec::resolve(&measures).map_err(|e| PyValueError::new_err(e.message))?;
        Ok(tm
            .into_iter()
            .map(|m| (m.name.to_string(), m.measure.map(|x| x.to_string())))
            .collect())
    }
}

/// Goals handed from the reading thread to the evaluating one at a time.
const BATCH_GOALS: usize = 32;

/// A goal read from a dict: its name, its lemmas' names each followed by a newline (the layout
/// `Session::push_scored_joined` takes), and each lemma's (name length, score).
#[derive(Default)]
struct ScoredGoal {
    goal: Vec<u8>,
    names: Vec<u8>,
    scored: Vec<(u32, f64)>,
}

impl ScoredGoal {
    /// Reads goal `goal`'s `{lemma: score}` dict into this (its buffers reused).
    fn read(&mut self, goal: &Bound<'_, PyAny>, scored: &Bound<'_, PyAny>) -> PyResult<()> {
        self.goal.clear();
        self.goal.extend_from_slice(utf8(goal)?);
        let shown = |g: &[u8], what: &str| {
            PyValueError::new_err(format!(
                "predicted: goal `{}`: expected {what}",
                String::from_utf8_lossy(g)
            ))
        };
        let scored = scored
            .cast::<PyDict>()
            .map_err(|_| shown(&self.goal, "a dict of lemma -> score"))?;
        if read_exact_pairs(scored, self) {
            return Ok(());
        }
        // Keys or scores of other types (a str or float subclass, a numpy float): read through
        // their conversions.
        self.names.clear();
        self.scored.clear();
        for (lemma, score) in scored.iter() {
            let score = score
                .extract::<f64>()
                .map_err(|_| shown(&self.goal, "a number as a score"))?;
            let name = utf8(&lemma)?;
            if name.len() >= u32::MAX as usize {
                return Err(shown(&self.goal, "lemma names below 4 GiB"));
            }
            self.push(name, score);
        }
        Ok(())
    }

    /// Adds one lemma and its score.
    #[inline(always)]
    fn push(&mut self, name: &[u8], score: f64) {
        self.names.extend_from_slice(name);
        self.names.push(b'\n');
        self.scored.push((name.len() as u32, score));
    }
}

/// Goals pushed one at a time (scored pairs, ranked names, rows of a score matrix).
#[pyclass(module = "lemma_eval._native")]
struct NativeSession {
    session: Option<lemma_eval::Session>,
    /// The error that ended the session early.
    failed: Option<String>,
    keys: Vec<String>,
    rows: Vec<GoalRow>,
    per_goal: bool,
    lemmas: Vec<String>,
}

impl NativeSession {
    fn live(&mut self) -> PyResult<&mut lemma_eval::Session> {
        if self.session.is_none() {
            return Err(self.finished());
        }
        Ok(self.session.as_mut().expect("checked"))
    }

    /// Why the session takes no more goals.
    fn finished(&self) -> PyErr {
        match &self.failed {
            Some(why) => PyValueError::new_err(format!("the session stopped at an error: {why}")),
            None => PyValueError::new_err("the session is finished"),
        }
    }

    /// Ends the session at `e`: its goals so far would give a wrong result.
    fn fail(&mut self, e: PyErr) -> PyErr {
        self.session = None;
        self.failed = Python::attach(|py| Some(e.value(py).to_string()));
        e
    }

    fn record(&mut self, goal: &str, values: Option<&[Option<f64>]>) {
        if let (true, Some(v)) = (self.per_goal, values) {
            self.rows.push(GoalRow {
                goal: goal.as_bytes().to_vec(),
                values: v.to_vec(),
                empty: false,
            });
        }
    }
}

#[pymethods]
impl NativeSession {
    /// Keep every pushed goal's values for the result.
    fn keep_rows(&mut self, yes: bool) {
        self.per_goal = yes;
    }

    /// The column names of the matrix rows to come.
    fn set_lemma_names(&mut self, names: Vec<String>) -> PyResult<()> {
        for n in &names {
            check_name(n, "lemma")?;
        }
        self.lemmas = names;
        Ok(())
    }

    /// A whole `{goal: {lemma: score}}` dict (pytrec_eval's run). Two stages at once: this
    /// thread reads the dict (it needs the GIL), copying each goal's names into one buffer (no
    /// allocation per name); a second thread evaluates the goals read before (no GIL).
    fn push_scored_dict(&mut self, py: Python<'_>, run: &Bound<'_, PyDict>) -> PyResult<()> {
        let session = self.session.take().ok_or_else(|| self.finished())?;
        let per_goal = self.per_goal;
        // Goals travel in numbered batches (fewer hand-overs between the threads) to the
        // evaluating threads (the evaluator's thread count), each with a session of its own,
        // merged at the end; rows and the first error are put back in the dict's order.
        let workers = session.evaluator().options().threads.max(1);
        let mut sessions = vec![session];
        for _ in 1..workers {
            match sessions[0].evaluator().session() {
                Ok(s) => sessions.push(s),
                Err(e) => return Err(self.fail(py_err(e))),
            }
        }
        let (tx, rx) = mpsc::sync_channel::<(u64, Vec<ScoredGoal>)>(2 * workers + 2);
        let rx = std::sync::Mutex::new(rx);
        let (back_tx, back_rx) = mpsc::channel::<Vec<ScoredGoal>>();
        // Set by a worker at its error: the reader stops handing over batches.
        let stop = std::sync::atomic::AtomicBool::new(false);
        type Placed<T> = ((u64, usize), T);
        let (read, evaluated) = std::thread::scope(|scope| {
            let handles: Vec<_> = sessions
                .into_iter()
                .map(|mut session| {
                    let (rx, back_tx, stop) = (&rx, back_tx.clone(), &stop);
                    scope.spawn(move || {
                        let mut rows: Vec<Placed<GoalRow>> = Vec::new();
                        let mut error: Option<Placed<EvalError>> = None;
                        // One taker at a time; the lock is let go before the batch is evaluated.
                        let next = || rx.lock().ok().and_then(|r| r.recv().ok());
                        while let Some((seq, mut batch)) = next() {
                            for (k, g) in batch.iter_mut().enumerate() {
                                match session.push_scored_joined(&g.goal, &mut g.names, &g.scored) {
                                    Ok(p) => {
                                        if let (true, Some(v)) = (per_goal, p.values()) {
                                            let row = GoalRow {
                                                goal: g.goal.clone(),
                                                values: v.to_vec(),
                                                empty: false,
                                            };
                                            rows.push(((seq, k), row));
                                        }
                                    }
                                    Err(e) => {
                                        error = Some(((seq, k), e));
                                        stop.store(true, std::sync::atomic::Ordering::Relaxed);
                                        break;
                                    }
                                }
                            }
                            let _ = back_tx.send(batch);
                            if error.is_some() {
                                // The reader may be waiting to hand over a batch (the channel
                                // is bounded): taken and dropped until it sees the flag and
                                // closes the channel, so that it never waits on stopped workers.
                                while let Some((_, b)) = next() {
                                    let _ = back_tx.send(b);
                                }
                                break;
                            }
                        }
                        (session, rows, error)
                    })
                })
                .collect();
            drop(back_tx);
            let read = (|| -> PyResult<()> {
                let mut batch: Vec<ScoredGoal> = Vec::new();
                let (mut used, mut seq) = (0, 0u64);
                for (goal, scored) in run.iter() {
                    if used == batch.len() {
                        batch.push(ScoredGoal::default());
                    }
                    let g = &mut batch[used];
                    used += 1;
                    g.read(&goal, &scored)?;
                    if used == BATCH_GOALS {
                        // Ctrl-C while a large dict is read.
                        py.check_signals()?;
                        batch.truncate(used);
                        if stop.load(std::sync::atomic::Ordering::Relaxed) {
                            return Ok(()); // a worker stopped at an error: it says which
                        }
                        let next = back_rx.try_recv().unwrap_or_default();
                        if tx.send((seq, std::mem::replace(&mut batch, next))).is_err() {
                            return Ok(());
                        }
                        seq += 1;
                        used = 0;
                    }
                }
                batch.truncate(used);
                if !batch.is_empty() {
                    let _ = tx.send((seq, batch));
                }
                Ok(())
            })();
            drop(tx);
            let evaluated: Vec<_> = py.detach(|| handles.into_iter().map(|h| h.join()).collect());
            (read, evaluated)
        });
        let mut merged: Option<lemma_eval::Session> = None;
        let mut rows: Vec<Placed<GoalRow>> = Vec::new();
        let mut first_error: Option<Placed<EvalError>> = None;
        let mut panicked = None;
        for e in evaluated {
            let (session, r, error) = match e {
                Ok(v) => v,
                Err(p) => {
                    panicked = Some(panic_text(&*p));
                    continue;
                }
            };
            rows.extend(r);
            if let Some(e) = error {
                if first_error.as_ref().is_none_or(|f| e.0 < f.0) {
                    first_error = Some(e);
                }
            }
            match &mut merged {
                None => merged = Some(session),
                Some(m) => {
                    if let Err(e) = m.merge(session) {
                        // A goal pushed before this dict, and again in it.
                        let e = match e {
                            EvalError::Push { goal, .. } => EvalError::Push {
                                goal,
                                message: "the goal was pushed twice".into(),
                            },
                            e => e,
                        };
                        first_error.get_or_insert(((u64::MAX, 0), e));
                    }
                }
            }
        }
        if let Some(p) = panicked {
            return Err(self.fail(PyRuntimeError::new_err(format!(
                "lemma-eval failed inside the evaluation (a bug; please report it): {p}"
            ))));
        }
        if let Some((_, e)) = first_error {
            return Err(self.fail(py_err(e)));
        }
        if let Err(e) = read {
            return Err(self.fail(e));
        }
        rows.sort_by_key(|(at, _)| *at);
        self.rows.extend(rows.into_iter().map(|(_, r)| r));
        self.session = merged;
        Ok(())
    }

    /// A whole `{goal: [lemma, ...]}` dict, each list in rank order.
    fn push_ranked_dict(&mut self, py: Python<'_>, run: &Bound<'_, PyDict>) -> PyResult<()> {
        let mut names: Vec<String> = Vec::new();
        for (goal, ranked) in run.iter() {
            let goal: String = goal.extract()?;
            if ranked.is_instance_of::<pyo3::types::PyString>()
                || ranked.is_instance_of::<pyo3::types::PyBytes>()
                || ranked.is_instance_of::<PyDict>()
            {
                return Err(PyValueError::new_err(format!(
                    "predicted: goal `{goal}`: expected a list of lemma names in rank order (every \
                     goal a list, or every goal a dict of lemma -> score), got a {}",
                    ranked.get_type().name().map_or_else(|_| "?".into(), |n| n.to_string())
                )));
            }
            names.clear();
            for n in ranked.try_iter()? {
                names.push(n?.extract()?);
            }
            let s = self.live()?;
            let values = py.detach(|| {
                s.push_ranked(&goal, &names)
                    .map(|p| p.values().map(<[_]>::to_vec))
            });
            let values = values.map_err(|e| self.fail(py_err(e)))?;
            self.record(&goal, values.as_deref());
        }
        Ok(())
    }

    /// One row of a score matrix: `scores` are the row's little-endian f32 or f64 values, one per
    /// lemma name given to `set_lemma_names`.
    fn push_row(
        &mut self,
        py: Python<'_>,
        goal: String,
        scores: &[u8],
        f64s: bool,
    ) -> PyResult<()> {
        let width = if f64s { 8 } else { 4 };
        if scores.len() != self.lemmas.len() * width {
            return Err(PyValueError::new_err(format!(
                "goal `{goal}`: a row of {} scores, expected {} (one per lemma name)",
                scores.len() / width,
                self.lemmas.len()
            )));
        }
        let pairs: Vec<(&str, f64)> = self
            .lemmas
            .iter()
            .zip(scores.chunks_exact(width))
            .map(|(n, b)| {
                let v = if f64s {
                    f64::from_le_bytes(b.try_into().expect("8 bytes"))
                } else {
                    f32::from_le_bytes(b.try_into().expect("4 bytes")) as f64
                };
                (n.as_str(), v)
            })
            .collect();
        if self.session.is_none() {
            return Err(self.finished());
        }
        let s = self.session.as_mut().expect("checked");
        let values = py
            .detach(|| {
                s.push_scored(&goal, &pairs)
                    .map(|p| p.values().map(<[_]>::to_vec))
            })
            .map_err(py_err)?;
        self.record(&goal, values.as_deref());
        Ok(())
    }

    /// Ends the session: the goals never pushed are evaluated as empty (or skipped).
    fn finish(&mut self, py: Python<'_>) -> PyResult<Outcome> {
        let s = self.session.take().ok_or_else(|| self.finished())?;
        let mut rows = std::mem::take(&mut self.rows);
        let per_goal = self.per_goal;
        let (done, partial): (Evaluation, Partial) = py
            .detach(|| {
                let mut unseen = Vec::new();
                let sink: &mut dyn Sink = if per_goal {
                    &mut unseen
                } else {
                    &mut SummaryOnly
                };
                let r = s.finish_partial(sink);
                rows.extend(unseen);
                r
            })
            .map_err(py_err)?;
        Ok(outcome(
            &self.keys,
            &done.summary,
            per_goal.then_some(rows),
            Some(&partial),
        ))
    }
}

/// A merge's lacking shards, one `(file name, bytes, fingerprint, N, [(first, last), ...])` each.
type Lacking = Vec<(String, u64, u64, u64, Vec<(u64, u64)>)>;

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
            let p = Partial::decode(p)
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
    Ok((outcome(&keys, &summary, None, Some(&merged)), lacking))
}

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeEvaluator>()?;
    m.add_class::<NativeSession>()?;
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    Ok(())
}
