//! Python values read into the engine's inputs: actual sets from dicts, a scored dict's goals
//! into reusable buffers, names checked as the command's readers check them.

use crate::value_err;
use lemma_ingest::{ActualSets, PushGoalError};
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Actual sets from `{goal: {lemma: grade}}` or `{goal: iterable of lemma names}` (grade 1),
/// built goal by goal with the checks the qrels reader makes (names without whitespace, grades
/// that fit, a lemma judged once a goal, at least one judgment). Not through qrels text: a goal
/// named `#...` would read as a comment line there.
pub(crate) fn actual_from_dict(actual: &Bound<'_, PyDict>) -> PyResult<ActualSets> {
    let mut sets = ActualSets::default();
    let mut entries: Vec<(u32, i32)> = Vec::new();
    for e in dict_entries(actual)? {
        let (goal, lemmas) = e?;
        let goal = text(&goal, "actual", "goal")?;
        check_name(&goal, "goal")?;
        entries.clear();
        if let Ok(graded) = lemmas.cast::<PyDict>() {
            for e in dict_entries(graded)? {
                let (lemma, grade) = e?;
                let lemma = text(&lemma, "actual", "lemma")?;
                check_name(&lemma, "lemma")?;
                let grade: i64 = grade.extract().map_err(|_| {
                    value_err(format!(
                        "actual: goal `{goal}`, lemma `{lemma}`: expected an integer grade"
                    ))
                })?;
                // As a qrels grade: a 32-bit integer (its lowest value reserved).
                let grade = i32::try_from(grade)
                    .ok()
                    .filter(|&g| g != i32::MIN)
                    .ok_or_else(|| {
                        value_err(format!(
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
                return Err(value_err(format!(
                    "actual: goal `{goal}`: expected {{lemma: grade}} or a list of lemma names, \
                     got a string"
                )));
            }
            for lemma in lemmas.try_iter()? {
                let lemma = text(&lemma?, "actual", "lemma")?;
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
                return Err(value_err(format!("actual: goal `{goal}` is given twice")))
            }
            Err(PushGoalError::LemmaRepeated(l)) => {
                return Err(value_err(format!(
                    "actual: goal `{goal}`: lemma `{}` is judged twice",
                    String::from_utf8_lossy(sets.lemmas.name(l))
                )))
            }
        }
    }
    if sets.goals.is_empty() {
        return Err(value_err(
            "actual: has no judgments, expected at least one goal with a lemma",
        ));
    }
    Ok(sets)
}

/// The UTF-8 bytes of a `str`, borrowed from the string object (CPython keeps them with the
/// string; an ASCII string's are its own characters): no copy, no allocation.
/// `PyUnicode_AsUTF8AndSize` is in the limited API from Python 3.10 and exported by every
/// CPython 3 before it, so the one abi3 wheel uses it on 3.9 too.
pub(crate) fn utf8<'a>(s: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
    if !s.is_instance_of::<pyo3::types::PyString>() {
        return Err(PyTypeError::new_err(format!(
            "predicted: expected a str as a goal or lemma name, got {} {}",
            type_name(s),
            s.repr().map_or_else(|_| "?".to_string(), |r| r.to_string())
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
pub(crate) fn check_name(name: &str, what: &str) -> PyResult<()> {
    if name.is_empty() || name.bytes().any(lemma_ingest::bytes::is_delim) {
        return Err(value_err(format!(
            "{what} name {name:?}: expected a non-empty name without whitespace"
        )));
    }
    Ok(())
}

/// Goals handed from the reading thread to the evaluating one at a time.
pub(crate) const BATCH_GOALS: usize = 32;

/// A goal read from a dict: its name, its lemmas' names each followed by a newline (the layout
/// `Session::push_scored_joined` takes), and each lemma's (name length, score).
#[derive(Default)]
pub(crate) struct ScoredGoal {
    pub(crate) goal: Vec<u8>,
    pub(crate) names: Vec<u8>,
    pub(crate) scored: Vec<(u32, f64)>,
}

impl ScoredGoal {
    /// Reads goal `goal`'s `{lemma: score}` dict into this (its buffers reused).
    pub(crate) fn read(
        &mut self,
        goal: &Bound<'_, PyAny>,
        scored: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.goal.clear();
        self.goal.extend_from_slice(utf8(goal)?);
        let shown = |g: &[u8], what: &str| {
            value_err(format!(
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
        for e in dict_entries(scored)? {
            let (lemma, score) = e?;
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

/// The name of `x`'s type.
pub(crate) fn type_name(x: &Bound<'_, PyAny>) -> String {
    x.get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string())
}

/// A goal or lemma name given as a `str`; anything else is a `TypeError` that says so (`side`:
/// "actual" or "predicted"; `what`: "goal" or "lemma").
pub(crate) fn text(x: &Bound<'_, PyAny>, side: &str, what: &str) -> PyResult<String> {
    if let Ok(s) = x.cast::<pyo3::types::PyString>() {
        return s.extract::<String>();
    }
    Err(PyTypeError::new_err(format!(
        "{side}: {what} names are str, got {} {} (convert the ids with str())",
        type_name(x),
        x.repr().map_or_else(|_| "?".to_string(), |r| r.to_string())
    )))
}

/// A `TypeError` for a set (or frozenset) given where an order matters (`ranked`: a ranking) or
/// is read as a list of names: a set's order is its hash order, another in every process.
pub(crate) fn refuse_unordered(
    x: &Bound<'_, PyAny>,
    side: &str,
    goal: &str,
    ranked: bool,
) -> PyResult<()> {
    if ranked
        && (x.is_instance_of::<pyo3::types::PySet>()
            || x.is_instance_of::<pyo3::types::PyFrozenSet>())
    {
        return Err(PyTypeError::new_err(format!(
            "{side}: goal `{goal}`: a ranking must be in rank order, got a {}: a set's order is \
             its hash order, another in every process (pass a list, or a dict of lemma -> score)",
            type_name(x)
        )));
    }
    Ok(())
}

/// The `(key, value)` pairs of `dict`, read through a snapshot of its keys: a dict changed while
/// it is read (by another thread while the GIL is released, or by code its values run) is a
/// `RuntimeError`, as Python's own iteration makes it, never a panic.
pub(crate) fn dict_entries<'py>(
    dict: &Bound<'py, PyDict>,
) -> PyResult<impl Iterator<Item = PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> + use<'py>> {
    let keys = dict.keys();
    let n = dict.len();
    let dict = dict.clone();
    Ok(keys.into_iter().map(move |key| {
        if dict.len() != n {
            return Err(PyRuntimeError::new_err(
                "dictionary changed size during iteration (changed by another thread while it \
                 was evaluated?)",
            ));
        }
        match dict.get_item(&key)? {
            Some(v) => Ok((key, v)),
            None => Err(PyRuntimeError::new_err(
                "dictionary keys changed during iteration (changed by another thread while it \
                 was evaluated?)",
            )),
        }
    }))
}
