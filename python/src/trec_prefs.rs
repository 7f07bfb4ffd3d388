//! `lemma_eval.trec_eval`: trec_eval's command on a preference file (`-R prefs`, `-R
//! qrels_prefs`) and a run, through the engine's [`trec::evaluate_prefs`], the function the
//! command's output is printed from; the values as doubles rather than printed.

use crate::{choice, memory_arg, run_released};
use lemma_eval::trec::{self, RelFormat, TrecOptions, TrecVersion};
use pyo3::exceptions::{PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;
use std::path::PathBuf;

/// What `trec_eval` gives Python: the measures (name, whether a count), `runid` and `num_q` when
/// asked for, the summary values, each goal's values when asked for, the goal counts.
type PrefsResult = (
    Vec<(String, bool)>,
    Option<String>,
    Option<u64>,
    Vec<f64>,
    Option<Vec<(String, Vec<f64>)>>,
    Vec<(&'static str, u64)>,
);

/// trec_eval on `qrels` (a preference file, `relevance_format` `prefs` or `qrels_prefs`) and
/// `run` (TREC) with `measures` (`-m`), as the command's flags say: `per_goal` (`-q`),
/// `complete` (`-c`), `max_docs` (`-M`), `trec_version` (`9` or `10`), `zscores` (`-Z`).
#[pyfunction]
#[pyo3(signature = (qrels, run, measures, relevance_format, per_goal, complete, max_docs, trec_version, zscores, memory))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn trec_eval_prefs(
    py: Python<'_>,
    qrels: PathBuf,
    run: PathBuf,
    measures: Vec<String>,
    relevance_format: &str,
    per_goal: bool,
    complete: bool,
    max_docs: Option<u64>,
    trec_version: &str,
    zscores: Option<PathBuf>,
    memory: Option<&Bound<'_, PyAny>>,
) -> PyResult<PrefsResult> {
    let rel_format = match RelFormat::from_name(relevance_format) {
        Some(f @ (RelFormat::Prefs | RelFormat::QrelsPrefs)) => f,
        _ => {
            return Err(PyValueError::new_err(format!(
                "relevance_format={relevance_format:?}: expected \"prefs\" or \"qrels_prefs\" \
                 (qrels: RelevanceEvaluator, pytrec_eval's, or evaluate)"
            )))
        }
    };
    let mut o = TrecOptions::default();
    o.measures = measures;
    o.rel_format = rel_format;
    o.per_query = per_goal;
    o.complete = complete;
    o.max_docs = max_docs;
    o.version = choice::<TrecVersion>(trec_version)?;
    o.zscores = zscores;
    if let Some(bytes) = memory_arg(memory)? {
        o.spill.memory = bytes;
    }
    let paths = [qrels.clone(), run.clone()];
    let done = run_released(py, move || {
        let mut rows = Vec::new();
        let done = trec::evaluate_prefs(&qrels, &run, &o, &mut |goal, _empty, values| {
            if o.per_query {
                rows.push((String::from_utf8_lossy(goal).into_owned(), values.to_vec()));
            }
            Ok(())
        })?;
        Ok::<_, trec::TrecError>((done, o.per_query.then_some(rows)))
    })?;
    let (done, rows) = done.map_err(|e| {
        let missing = paths
            .iter()
            .any(|p| p.as_os_str() != "-" && !p.exists() && e.message.contains("cannot open"));
        match missing {
            true => PyFileNotFoundError::new_err(e.message),
            false => PyValueError::new_err(e.message),
        }
    })?;
    let sel = &done.selection;
    let names = (sel.measures.iter())
        .map(|m| (m.name().to_string(), m.is_count()))
        .collect();
    let counts = lemma_eval::output::named_counts(&done.evaluation.summary.counts()).to_vec();
    Ok((
        names,
        sel.runid.then(|| done.runid.clone()),
        sel.num_q.then_some(done.num_q),
        done.summary,
        rows,
        counts,
    ))
}
