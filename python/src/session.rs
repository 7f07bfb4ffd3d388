//! Push sessions from Python: goals pushed one at a time or in batches (a dict's goals, the rows
//! of a score matrix), each goal's values back at once, the summary and the travelling summary at
//! any moment, sessions merged.

use crate::dicts::{refuse_unordered, text, utf8, ScoredGoal, BATCH_GOALS};
use crate::{matrix_arg, outcome, panic_text, py_err, value_err, Outcome};
use lemma_eval::output::warnings;
use lemma_eval::{DenseLemmas, EvalError, Evaluation, GoalRow, Partial, Sink, SummaryOnly};
use lemma_ingest::Names;
use lemma_par::{Feeder, Work};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Mutex;

/// Goals pushed one at a time (scored pairs, ranked names, rows of a score matrix).
#[pyclass(module = "lemma_eval._native")]
pub(crate) struct NativeSession {
    session: Option<lemma_eval::Session>,
    /// The error that ended the session early.
    failed: Option<String>,
    keys: Vec<String>,
    rows: Vec<GoalRow>,
    per_goal: bool,
    /// The columns of the score matrices to come.
    dense: Option<DenseLemmas>,
    /// A goal's buffers, reused.
    scratch: ScoredGoal,
}

impl NativeSession {
    pub(crate) fn new(ev: &lemma_eval::Evaluator, keys: Vec<String>) -> PyResult<Self> {
        Ok(NativeSession {
            session: Some(ev.session().map_err(py_err)?),
            failed: None,
            keys,
            rows: Vec::new(),
            per_goal: false,
            dense: None,
            scratch: ScoredGoal::default(),
        })
    }

    fn live(&mut self) -> PyResult<&mut lemma_eval::Session> {
        if self.session.is_none() {
            return Err(self.finished());
        }
        Ok(self.session.as_mut().expect("checked"))
    }

    /// Why the session takes no more goals.
    fn finished(&self) -> PyErr {
        match &self.failed {
            Some(why) => value_err(format!("the session stopped at an error: {why}")),
            None => value_err("the session is finished"),
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

    /// [`NativeSession::push_ranked_dict`]'s loop.
    fn ranked_dict(&mut self, py: Python<'_>, run: &Bound<'_, PyDict>) -> PyResult<()> {
        let mut names: Vec<String> = Vec::new();
        for e in crate::dicts::dict_entries(run)? {
            let (goal, ranked) = e?;
            let goal = text(&goal, "predicted", "goal")?;
            refuse_unordered(&ranked, "predicted", &goal, true)?;
            if ranked.is_instance_of::<pyo3::types::PyString>()
                || ranked.is_instance_of::<pyo3::types::PyBytes>()
                || ranked.is_instance_of::<PyDict>()
            {
                return Err(value_err(format!(
                    "predicted: goal `{goal}`: expected a list of lemma names in rank order (every \
                     goal a list, or every goal a dict of lemma -> score), got a {}",
                    ranked.get_type().name().map_or_else(|_| "?".into(), |n| n.to_string())
                )));
            }
            names.clear();
            for n in ranked.try_iter()? {
                names.push(text(&n?, "predicted", "lemma")?);
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
}

#[pymethods]
impl NativeSession {
    /// Keep every pushed goal's values for the result.
    fn keep_rows(&mut self, yes: bool) {
        self.per_goal = yes;
    }

    /// A whole `{goal: {lemma: score}}` dict (pytrec_eval's run). Two stages at once: this
    /// thread reads the dict (it needs the GIL), copying each goal's names into one buffer (no
    /// allocation per name); the evaluator's threads evaluate the goals read before (no GIL).
    fn push_scored_dict(&mut self, py: Python<'_>, run: &Bound<'_, PyDict>) -> PyResult<()> {
        let session = self.session.take().ok_or_else(|| self.finished())?;
        // Goals travel in numbered batches (fewer hand-overs between the threads) to the
        // evaluating threads (the evaluator's thread count), each with a session of its own,
        // merged at the end; rows and the first error come back in the dict's order
        // (`lemma_par::Ordered::feed`).
        let workers = session.evaluator().options().threads.max(1);
        let mut sessions = vec![session];
        for _ in 1..workers {
            match sessions[0].evaluator().session() {
                Ok(s) => sessions.push(s),
                Err(e) => return Err(self.fail(py_err(e))),
            }
        }
        let job = ScoredBatches {
            sessions: Mutex::new(sessions),
            per_goal: self.per_goal,
        };
        // Spent batches, back from the workers for the reading to fill again.
        let spare: Mutex<Vec<Vec<ScoredGoal>>> = Mutex::new(Vec::new());
        let mut rows: Vec<GoalRow> = Vec::new();
        let consume = |done: Evaluated| {
            spare.lock().expect("spare").push(done.batch);
            rows.extend(done.rows);
            done.error.map_or(Ok(()), Err)
        };
        let produce = |feeder: &mut Feeder<'_, Vec<ScoredGoal>, Evaluated, _, EvalError>| {
            // A panic while the dict is read (another thread changed it) ends the reading as an
            // error.
            let read = crate::guarded(|| -> PyResult<()> {
                let mut batch: Vec<ScoredGoal> = Vec::new();
                let mut used = 0;
                for e in crate::dicts::dict_entries(run)? {
                    let (goal, scored) = e?;
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
                        let next = spare.lock().expect("spare").pop().unwrap_or_default();
                        if !feeder.push(std::mem::replace(&mut batch, next)) {
                            return Ok(()); // a goal's error: the evaluation says which
                        }
                        used = 0;
                    }
                }
                batch.truncate(used);
                if !batch.is_empty() {
                    feeder.push(batch);
                }
                Ok(())
            });
            // The goals still being evaluated, waited for without the GIL.
            py.detach(|| feeder.finish());
            read
        };
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            lemma_par::Ordered::new(workers).feed(&job, produce, consume)
        }));
        let (sessions, evaluated) = match ran {
            Ok(r) => r,
            Err(p) => {
                return Err(self.fail(PyRuntimeError::new_err(format!(
                    "lemma-eval failed inside the evaluation (a bug; please report it): {}",
                    panic_text(&*p)
                ))))
            }
        };
        let mut merged: Option<lemma_eval::Session> = None;
        let mut merge_error = None;
        for session in sessions.into_iter().flatten() {
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
                        merge_error.get_or_insert(e);
                    }
                }
            }
        }
        let read = match evaluated {
            Err(e) => return Err(self.fail(py_err(e))),
            Ok(read) => read,
        };
        if let Some(e) = merge_error {
            return Err(self.fail(py_err(e)));
        }
        if let Err(e) = read {
            return Err(self.fail(e));
        }
        self.rows.extend(rows);
        self.session = merged;
        Ok(())
    }

    /// A whole `{goal: [lemma, ...]}` dict, each list in rank order.
    fn push_ranked_dict(&mut self, py: Python<'_>, run: &Bound<'_, PyDict>) -> PyResult<()> {
        crate::guarded(|| self.ranked_dict(py, run))
    }

    /// One goal: `ranking` is lemma names in rank order (a list or tuple; a set is refused) or
    /// a dict of lemma -> score (ranked by score under the tie rule). Its values (`None`:
    /// skipped, no actual set or nothing relevant). A push that fails leaves the session as it
    /// was.
    fn push(
        &mut self,
        py: Python<'_>,
        goal: &Bound<'_, PyAny>,
        ranking: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Vec<Option<f64>>>> {
        crate::guarded(|| {
            let goal_name = text(goal, "predicted", "goal")?;
            if let Ok(scored) = ranking.cast::<PyDict>() {
                let mut g = std::mem::take(&mut self.scratch);
                let read = g.read(goal, scored);
                let r = read.and_then(|()| {
                    let s = self.live()?;
                    py.detach(|| {
                        s.push_scored_joined(&g.goal, &mut g.names, &g.scored)
                            .map(|p| p.values().map(<[_]>::to_vec))
                    })
                    .map_err(py_err)
                });
                self.scratch = g;
                // A push that fails leaves the session as it was (the goal may come again).
                let values = r?;
                self.record(&goal_name, values.as_deref());
                return Ok(values);
            }
            refuse_unordered(ranking, "predicted", &goal_name, true)?;
            if ranking.is_instance_of::<pyo3::types::PyString>()
                || ranking.is_instance_of::<pyo3::types::PyBytes>()
            {
                return Err(value_err(format!(
                    "predicted: goal `{goal_name}`: expected a list of lemma names in rank order \
                     or a dict of lemma -> score, got a {}",
                    crate::dicts::type_name(ranking)
                )));
            }
            let mut names: Vec<&[u8]> = Vec::new();
            let items: Vec<Bound<'_, PyAny>> = ranking.try_iter()?.collect::<PyResult<_>>()?;
            for n in &items {
                names.push(utf8(n)?);
            }
            let s = self.live()?;
            let values = py
                .detach(|| {
                    s.push_ranked(goal_name.as_bytes(), &names)
                        .map(|p| p.values().map(<[_]>::to_vec))
                })
                .map_err(py_err);
            let values = values?;
            self.record(&goal_name, values.as_deref());
            Ok(values)
        })
    }

    /// One goal ranked as the corpus's premise numbers (a sequence of int, best first): its
    /// values, as [`NativeSession::push`] gives them.
    fn push_premise_ids(
        &mut self,
        py: Python<'_>,
        goal: &Bound<'_, PyAny>,
        ids: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Vec<Option<f64>>>> {
        crate::guarded(|| {
            let goal_name = text(goal, "predicted", "goal")?;
            // Without a corpus, that before what the numbers are.
            self.live()?.numbered_premises(&goal_name).map_err(py_err)?;
            let expected = |got: &Bound<'_, PyAny>| {
                format!(
                    "predicted: goal `{goal_name}`: expected premise numbers in rank order (a \
                     list, a tuple or a 1-D array of int), got a {}",
                    crate::dicts::type_name(got)
                )
            };
            if ids.is_instance_of::<pyo3::types::PySet>()
                || ids.is_instance_of::<pyo3::types::PyFrozenSet>()
            {
                return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "{}: a set's order is its hash order, another in every process",
                    expected(ids)
                )));
            }
            if ids.is_instance_of::<pyo3::types::PyString>()
                || ids.is_instance_of::<pyo3::types::PyBytes>()
                || ids.is_instance_of::<PyDict>()
            {
                return Err(value_err(expected(ids)));
            }
            let Ok(items) = ids.try_iter() else {
                return Err(pyo3::exceptions::PyTypeError::new_err(expected(ids)));
            };
            let mut numbers: Vec<u64> = Vec::new();
            for (at, x) in items.enumerate() {
                let x = x?;
                let bad = || {
                    value_err(format!(
                        "predicted: goal `{goal_name}`: at position {at}: expected a premise \
                         number (an int >= 0), got {}",
                        x.repr().map_or_else(|_| "?".into(), |r| r.to_string())
                    ))
                };
                if x.is_instance_of::<pyo3::types::PyBool>() {
                    return Err(bad());
                }
                numbers.push(x.extract::<u64>().map_err(|_| bad())?);
            }
            let s = self.live()?;
            let values = py
                .detach(|| {
                    s.push_premise_ids(goal_name.as_bytes(), &numbers)
                        .map(|p| p.values().map(<[_]>::to_vec))
                })
                .map_err(py_err)?;
            self.record(&goal_name, values.as_deref());
            Ok(values)
        })
    }

    /// The lemma names of the score matrices' columns to come (a list of str, or a file of them
    /// one a line), matched once with the actual sets' lemmas.
    fn set_lemma_names(&mut self, py: Python<'_>, names: &Bound<'_, PyAny>) -> PyResult<()> {
        let n = crate::names_arg(names, "lemma_names")?.read()?;
        let ev = self.live()?.evaluator().clone();
        self.dense = Some(py.detach(|| ev.dense_lemmas(n)).map_err(py_err)?);
        Ok(())
    }

    /// A batch of goals as the rows of a score matrix in memory (`[goals, lemmas]`, the data of
    /// the C-contiguous array `owner`), columns named by [`NativeSession::set_lemma_names`]:
    /// each goal's values (`None`: skipped), in row order. Ranked as a `.npy` matrix's rows, on
    /// the evaluator's threads with the GIL released.
    #[allow(clippy::too_many_arguments)]
    fn push_dense(
        &mut self,
        py: Python<'_>,
        goals: &Bound<'_, PyAny>,
        owner: Py<PyAny>,
        ptr: usize,
        nbytes: usize,
        rows: usize,
        cols: usize,
        typestr: &str,
    ) -> PyResult<Vec<Option<Vec<Option<f64>>>>> {
        let mut names = Names::default();
        for g in goals.try_iter()? {
            let g = text(&g?, "predicted", "goal")?;
            crate::dicts::check_name(&g, "goal")?;
            names.push(g.as_bytes());
        }
        if self.dense.is_none() {
            // Under a corpus, columns without names are its premises, in its order.
            let ev = self.live()?.evaluator().clone();
            if ev.options().premises.is_some() {
                self.dense = Some(py.detach(|| ev.premise_lemmas()).map_err(py_err)?);
            }
        }
        let Some(dense) = self.dense.take() else {
            return Err(value_err(
                "lemma_names: the score matrix's columns need their names (Session(..., \
                 lemma_names=...), or corpus= for columns that are its premises)",
            ));
        };
        let matrix = matrix_arg("scores", owner, ptr, nbytes, rows, cols, typestr)?;
        let mut got: Vec<GoalRow> = Vec::new();
        let pushed = match self.session.as_mut() {
            None => Err(self.finished()),
            Some(s) => py
                .detach(|| s.push_dense(&matrix, &names, &dense, &mut got))
                .map_err(py_err),
        };
        self.dense = Some(dense);
        // A batch refused whole (a goal pushed before) leaves the session as it was.
        pushed?;
        let values = {
            let mut by_goal: hashbrown::HashMap<&[u8], &GoalRow> =
                got.iter().map(|r| (&r.goal[..], r)).collect();
            names
                .iter()
                .map(|g| by_goal.remove(g).map(|r| r.values.clone()))
                .collect()
        };
        if self.per_goal {
            self.rows.extend(got);
        }
        Ok(values)
    }

    /// The summary as finishing now would give it (the goals never pushed as `missing` says),
    /// the session going on.
    fn snapshot(&self, py: Python<'_>) -> PyResult<Outcome> {
        let Some(s) = &self.session else {
            return Err(self.finished());
        };
        let summary = py.detach(|| s.snapshot()).map_err(py_err)?;
        let warned = warnings(s.report(), &summary.counts());
        Ok(outcome(
            &self.keys,
            &summary,
            None,
            None,
            warned,
            Vec::new(),
            None,
        ))
    }

    /// The session so far as a travelling summary's bytes (merge them with `lemma_eval.merge`).
    fn partial(&self, py: Python<'_>) -> PyResult<Vec<u8>> {
        let Some(s) = &self.session else {
            return Err(self.finished());
        };
        py.detach(|| s.partial().map(|p| p.encode()))
            .map_err(py_err)
    }

    /// Adds `other`'s goals (a session of the same evaluator); `other` is finished by it.
    fn merge_from(&mut self, other: &mut NativeSession) -> PyResult<()> {
        let Some(theirs) = other.session.take() else {
            return Err(other.finished());
        };
        other.failed = Some("merged into another session".into());
        let s = self.live()?;
        s.merge(theirs).map_err(py_err)?;
        self.rows.append(&mut other.rows);
        Ok(())
    }

    /// Ends the session: the goals never pushed are evaluated as empty (or skipped).
    fn finish(&mut self, py: Python<'_>) -> PyResult<Outcome> {
        let s = self.session.take().ok_or_else(|| self.finished())?;
        let mut rows = std::mem::take(&mut self.rows);
        let per_goal = self.per_goal;
        // A summary does not record -J or -N, groups or strata: such a session hands none on.
        let o = s.evaluator().options();
        let travels = o.summary_travels();
        let corpus = o.premises.is_some();
        let (done, partial): (Evaluation, Option<Partial>) = py
            .detach(|| {
                let mut unseen = Vec::new();
                let sink: &mut dyn Sink = if per_goal {
                    &mut unseen
                } else {
                    &mut SummaryOnly
                };
                let r = match travels {
                    true => s.finish_partial(sink).map(|(d, p)| (d, Some(p))),
                    false => s.finish(sink).map(|d| (d, None)),
                };
                rows.extend(unseen);
                r
            })
            .map_err(py_err)?;
        let warned = warnings(&done.report, &done.summary.counts());
        // With a corpus, what the premise protocol counted (`Result.premises`).
        Ok(outcome(
            &self.keys,
            &done.summary,
            per_goal.then_some(rows),
            partial.map(|p| p.encode()),
            warned,
            Vec::new(),
            corpus.then_some(&done.report.premises),
        ))
    }
}

/// [`NativeSession::push_scored_dict`]'s evaluating side: batches of a dict's goals, each worker
/// pushing them into a session of its own.
struct ScoredBatches {
    /// A session for each worker.
    sessions: Mutex<Vec<lemma_eval::Session>>,
    per_goal: bool,
}

/// A batch evaluated: its buffers (to be filled again), its rows, the error it stopped at.
struct Evaluated {
    batch: Vec<ScoredGoal>,
    rows: Vec<GoalRow>,
    error: Option<EvalError>,
}

impl Work for ScoredBatches {
    type Worker = Option<lemma_eval::Session>;
    type Unit = Vec<ScoredGoal>;
    type Output = Evaluated;
    type Done = Option<lemma_eval::Session>;

    fn worker(&self) -> Self::Worker {
        self.sessions.lock().expect("sessions").pop()
    }

    fn run(&self, session: &mut Self::Worker, _: u64, mut batch: Vec<ScoredGoal>) -> Evaluated {
        let session = session.as_mut().expect("a session for each worker");
        let (mut rows, mut error) = (Vec::new(), None);
        for g in batch.iter_mut() {
            match session.push_scored_joined(&g.goal, &mut g.names, &g.scored) {
                Ok(p) => {
                    if let (true, Some(v)) = (self.per_goal, p.values()) {
                        rows.push(GoalRow {
                            goal: g.goal.clone(),
                            values: v.to_vec(),
                            empty: false,
                        });
                    }
                }
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        Evaluated { batch, rows, error }
    }

    fn failed(done: &Evaluated) -> bool {
        done.error.is_some()
    }

    fn finish(&self, session: Self::Worker) -> Self::Done {
        session
    }
}
