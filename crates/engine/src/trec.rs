//! trec_eval compatibility: `-m` parsing with trec_eval's rules and its output format
//! (METRICS.md §8).
//!
//! trec_eval prints measures in its own table order, not in `-m` order; the first `-m` that gives a
//! measure parameters wins; cutoff lists are sorted ascending and must not repeat. Lines are
//! `format!("{:<22}\t{}\t{:.4}", name, goal, value)`, integers for the `num_*` counts.

use crate::{
    DuplicateMode, EvalError, EvalOptions, GoalRow, MissingMode, OrderMode, TieMode, ZeroRelMode,
};
use crate::{Evaluation, Evaluator, Predictions, Sink, SummaryOnly};
use lemma_accum::Interpolation;
use lemma_accum::{
    Aggregate, ApNorm, Level, Measure, RecallNorm, Summary, TREC_CUTOFFS, TREC_SUCCESS_CUTOFFS,
};
use std::fmt::Write as _;

/// trec_eval's measure table order, restricted to what lemma-eval computes.
pub const TABLE: [&str; 22] = [
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
    "recall",
    "11pt_avg",
    "ndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_recall",
    "set_F",
];

/// trec_eval measures lemma-eval does not compute (named in the error).
const UNSUPPORTED: [&str; 30] = [
    "relstring",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "binG",
    "G",
    "dcg",
    "ideal_dcg",
    "ndcg_rel",
    "Rndcg",
    "set_relative_P",
    "set_map",
    "num_nonrel_judged_ret",
    "prefs_num_prefs_poss",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "map_avgjg",
    "P_avgjg",
    "yaap",
    "rbp",
    "rbp_resid",
    "unj",
    "all_trec",
    "all_prefs",
    "prefs",
    "qrels_jg",
    "set",
    "Rprec_mult_avgjg",
];

/// The `official` nickname (trec_eval's default): the first twelve entries of the table.
pub const OFFICIAL: &[&str] = TABLE.split_at(12).0;

/// One measure as trec_eval prints it.
#[derive(Clone, Debug, PartialEq)]
pub struct TrecMeasure {
    /// The printed name (`P_5`, `set_F_0.5`).
    pub name: String,
    /// What lemma-eval computes for it (`None` for `runid`).
    pub measure: Option<Measure>,
    /// Printed as an integer.
    pub integer: bool,
    /// Printed per goal with `-q` (runid, num_q and gm_map only in the summary).
    pub per_goal: bool,
}

/// A `-m` error: `(exit code, message)` with trec_eval's exit codes (1 for an illegal measure, 2 for
/// a parameter that cannot initialise).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrecMeasureError {
    /// Exit code.
    pub code: i32,
    /// Message.
    pub message: String,
}

fn err(code: i32, message: String) -> TrecMeasureError {
    TrecMeasureError { code, message }
}

fn parse_cutoffs(base: &str, params: &str) -> Result<Vec<u32>, TrecMeasureError> {
    let mut v = Vec::new();
    for p in params.split(',') {
        let k: u32 = p.trim().parse().map_err(|_| {
            err(
                2,
                format!("measure `{base}`: expected whole-number cutoffs, found `{p}`"),
            )
        })?;
        if k == 0 {
            return Err(err(
                2,
                format!("measure `{base}`: cutoffs must be positive, found `{p}`"),
            ));
        }
        v.push(k);
    }
    v.sort_unstable();
    if v.windows(2).any(|w| w[0] == w[1]) {
        return Err(err(
            2,
            format!("measure `{base}`: duplicate cutoffs in `{params}`"),
        ));
    }
    Ok(v)
}

fn parse_levels(base: &str, params: &str) -> Result<Vec<f64>, TrecMeasureError> {
    let mut v = Vec::new();
    for p in params.split(',') {
        let x: f64 = p
            .trim()
            .parse()
            .ok()
            .filter(|x: &f64| (0.0..=1.0).contains(x))
            .ok_or_else(|| {
                err(
                    2,
                    format!("measure `{base}`: expected recall levels in [0, 1], found `{p}`"),
                )
            })?;
        v.push(x);
    }
    v.sort_by(|a, b| a.partial_cmp(b).expect("finite"));
    if v.windows(2).any(|w| w[0] == w[1]) {
        return Err(err(
            2,
            format!("measure `{base}`: duplicate levels in `{params}`"),
        ));
    }
    Ok(v)
}

/// Resolves `-m` arguments (empty: `official`) to the measures trec_eval would print, in its order.
pub fn resolve(args: &[String]) -> Result<Vec<TrecMeasure>, TrecMeasureError> {
    let mut marked: Vec<&str> = Vec::new();
    let mut params: Vec<(&str, &str)> = Vec::new();
    let official: Vec<String> = OFFICIAL.iter().map(|s| s.to_string()).collect();
    let args = if args.is_empty() { &official[..] } else { args };
    for a in args {
        let (base, p) = match a.split_once('.') {
            Some((b, p)) => (b, Some(p)),
            None => (a.as_str(), None),
        };
        if p == Some("") {
            return Err(err(
                1,
                format!("illegal measure `{a}`: empty parameter list"),
            ));
        }
        if base == "official" {
            marked.extend_from_slice(OFFICIAL);
            continue;
        }
        if let Some(pos) = TABLE.iter().position(|t| *t == base) {
            marked.push(TABLE[pos]);
            if let Some(p) = p {
                if !params.iter().any(|(b, _)| *b == base) {
                    params.push((TABLE[pos], p));
                }
            }
        } else if UNSUPPORTED.contains(&base) {
            return Err(err(
                1,
                format!(
                    "trec_eval measure `{base}` is not supported by lemma-eval; supported: {}",
                    TABLE.join(", ")
                ),
            ));
        } else {
            return Err(err(
                1,
                format!(
                    "illegal measure `{a}`; supported: official, {}",
                    TABLE.join(", ")
                ),
            ));
        }
    }
    let mut out = Vec::new();
    for base in TABLE {
        if !marked.contains(&base) {
            continue;
        }
        let p = params.iter().find(|(b, _)| *b == base).map(|(_, p)| *p);
        let no_params = |m: Measure,
                         integer: bool,
                         per_goal: bool|
         -> Result<Vec<TrecMeasure>, TrecMeasureError> {
            if let Some(p) = p {
                return Err(err(
                    2,
                    format!("measure `{base}` takes no parameters, found `{p}`"),
                ));
            }
            Ok(vec![TrecMeasure {
                name: base.to_string(),
                measure: Some(m),
                integer,
                per_goal,
            }])
        };
        let cut = |f: &dyn Fn(u32) -> Measure,
                   default: &[u32]|
         -> Result<Vec<TrecMeasure>, TrecMeasureError> {
            let ks = match p {
                Some(p) => parse_cutoffs(base, p)?,
                None => default.to_vec(),
            };
            Ok(ks
                .into_iter()
                .map(|k| TrecMeasure {
                    name: format!("{base}_{k}"),
                    measure: Some(f(k)),
                    integer: false,
                    per_goal: true,
                })
                .collect())
        };
        let ms = match base {
            "runid" => vec![TrecMeasure {
                name: "runid".into(),
                measure: None,
                integer: false,
                per_goal: false,
            }],
            "num_q" => no_params(Measure::NumQ, true, false)?,
            "num_ret" => no_params(Measure::NumRet, true, true)?,
            "num_rel" => no_params(Measure::NumRel, true, true)?,
            "num_rel_ret" => no_params(Measure::NumRelRet, true, true)?,
            "map" => no_params(
                Measure::AP {
                    cutoff: None,
                    norm: ApNorm::Rel,
                },
                false,
                true,
            )?,
            "gm_map" => no_params(Measure::GMAP, false, false)?,
            "Rprec" => no_params(Measure::Rprec, false, true)?,
            "bpref" => no_params(Measure::Bpref, false, true)?,
            "recip_rank" => no_params(Measure::RR { cutoff: None }, false, true)?,
            "iprec_at_recall" => {
                let levels = match p {
                    Some(p) => parse_levels(base, p)?,
                    None => (0..=10).map(|i| i as f64 / 10.0).collect(),
                };
                levels
                    .into_iter()
                    .map(|x| TrecMeasure {
                        name: format!("iprec_at_recall_{x:.2}"),
                        measure: Some(Measure::IPrec { recall: Level(x) }),
                        integer: false,
                        per_goal: true,
                    })
                    .collect()
            }
            "P" => cut(&|k| Measure::P { k }, &TREC_CUTOFFS)?,
            "recall" => cut(
                &|k| Measure::R {
                    k,
                    norm: RecallNorm::Rel,
                },
                &TREC_CUTOFFS,
            )?,
            "11pt_avg" => {
                if let Some(p) = p {
                    return Err(err(
                        2,
                        format!("11pt_avg with custom levels (`{p}`) is not supported"),
                    ));
                }
                no_params(Measure::AP11, false, true)?
            }
            "ndcg" => {
                if let Some(p) = p {
                    return Err(err(
                        2,
                        format!("ndcg with custom gains (`{p}`) is not supported"),
                    ));
                }
                no_params(Measure::NDCG { cutoff: None }, false, true)?
            }
            "ndcg_cut" => cut(&|k| Measure::NDCG { cutoff: Some(k) }, &TREC_CUTOFFS)?,
            "map_cut" => cut(
                &|k| Measure::AP {
                    cutoff: Some(k),
                    norm: ApNorm::Rel,
                },
                &TREC_CUTOFFS,
            )?,
            "relative_P" => cut(
                &|k| Measure::R {
                    k,
                    norm: RecallNorm::Min,
                },
                &TREC_CUTOFFS,
            )?,
            "success" => cut(&|k| Measure::Success { k }, &TREC_SUCCESS_CUTOFFS)?,
            "set_P" => no_params(Measure::SetP { threshold: None }, false, true)?,
            "set_recall" => no_params(Measure::SetR { threshold: None }, false, true)?,
            "set_F" => {
                let (beta2, name) = match p {
                    None => (1.0, "set_F".to_string()),
                    Some(p) => {
                        let first = p.split(',').next().unwrap_or(p);
                        let x: f64 = first
                            .trim()
                            .parse()
                            .ok()
                            .filter(|x: &f64| *x > 0.0 && x.is_finite())
                            .ok_or_else(|| {
                                err(
                                    2,
                                    format!(
                                        "measure `set_F`: expected a positive number, found `{p}`"
                                    ),
                                )
                            })?;
                        (x, format!("set_F_{p}"))
                    }
                };
                vec![TrecMeasure {
                    name,
                    measure: Some(Measure::SetF {
                        beta2,
                        threshold: None,
                    }),
                    integer: false,
                    per_goal: true,
                }]
            }
            _ => unreachable!("every TABLE entry is handled"),
        };
        out.extend(ms);
    }
    Ok(out)
}

/// Appends one trec_eval line.
pub fn line(out: &mut String, m: &TrecMeasure, goal: &str, value: f64) {
    if m.integer {
        let _ = writeln!(out, "{:<22}\t{}\t{}", m.name, goal, value as i64);
    } else {
        let _ = writeln!(out, "{:<22}\t{}\t{:.4}", m.name, goal, value);
    }
}

/// The summary block (`all`).
pub fn summary_block(
    out: &mut String,
    measures: &[TrecMeasure],
    summary: &Summary,
    runid: &str,
    num_rel_override: Option<u64>,
) {
    for m in measures {
        let Some(measure) = m.measure else {
            let _ = writeln!(out, "{:<22}\tall\t{}", m.name, runid);
            continue;
        };
        let i = summary
            .measures()
            .iter()
            .position(|x| *x == measure)
            .expect("measure in plan");
        let v = match summary.aggregate(i) {
            Aggregate::Mean(v) | Aggregate::Sum(v) | Aggregate::GeoMean(v) => v,
            Aggregate::Depth { .. } => unreachable!("no Depth in trec_eval"),
        };
        let v = match (measure, num_rel_override) {
            (Measure::NumRel, Some(n)) => n as f64,
            _ => v,
        };
        line(out, m, "all", v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(args: &[&str]) -> Vec<String> {
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        resolve(&a).unwrap().into_iter().map(|m| m.name).collect()
    }

    #[test]
    fn official_is_thirty_lines_in_table_order() {
        let n = names(&[]);
        assert_eq!(n.len(), 30);
        assert_eq!(
            &n[..6],
            &["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map"]
        );
        assert_eq!(n[10], "iprec_at_recall_0.00");
        assert_eq!(n[20], "iprec_at_recall_1.00");
        assert_eq!(n[21], "P_5");
        assert_eq!(n[29], "P_1000");
    }

    #[test]
    fn table_order_first_params_win_sorted_cutoffs() {
        assert_eq!(names(&["P.10,5", "map", "P.20"]), ["map", "P_5", "P_10"]);
        assert_eq!(
            names(&["set_F.0.5", "ndcg_cut.10"]),
            ["ndcg_cut_10", "set_F_0.5"]
        );
        assert_eq!(
            names(&["success"]),
            ["success_1", "success_5", "success_10"]
        );
        assert_eq!(
            names(&["iprec_at_recall.0.5,0.1"]),
            ["iprec_at_recall_0.10", "iprec_at_recall_0.50"]
        );
        assert_eq!(names(&["map", "map"]), ["map"]);
    }

    #[test]
    fn errors() {
        let e = resolve(&["infAP".to_string()]).unwrap_err();
        assert_eq!(e.code, 1);
        assert!(
            e.message.contains("`infAP` is not supported"),
            "{}",
            e.message
        );
        assert_eq!(resolve(&["foo".to_string()]).unwrap_err().code, 1);
        assert_eq!(resolve(&["P.5,5".to_string()]).unwrap_err().code, 2);
        assert_eq!(resolve(&["P.".to_string()]).unwrap_err().code, 1);
        assert_eq!(resolve(&["map.3".to_string()]).unwrap_err().code, 2);
    }

    #[test]
    fn line_format() {
        let mut s = String::new();
        let m = TrecMeasure {
            name: "map".into(),
            measure: None,
            integer: false,
            per_goal: true,
        };
        line(&mut s, &m, "q1", 0.533_333);
        let n = TrecMeasure {
            name: "num_ret".into(),
            measure: None,
            integer: true,
            per_goal: true,
        };
        line(&mut s, &n, "all", 1000.0);
        assert_eq!(
            s,
            "map                   \tq1\t0.5333\nnum_ret               \tall\t1000\n"
        );
    }
}

/// Which trec_eval to reproduce.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum TrecVersion {
    /// trec_eval 9.0.8 (pytrec_eval's): scores rounded to f32, 9.0.8's interpolation, goals
    /// without predictions not printed under `-q`.
    V9,
    /// trec_eval 10.0.
    #[default]
    V10,
}

/// trec_eval's flags.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TrecOptions {
    /// `-m` arguments, as given (`P.5,10`, `official`, ...).
    pub measures: Vec<String>,
    /// `-q`: per-goal lines too.
    pub per_query: bool,
    /// `-c`: average over every qrels goal (missing ones count 0).
    pub complete: bool,
    /// `-n`: no summary.
    pub no_summary: bool,
    /// `-M`: evaluate only the first N lemmas of each goal.
    pub max_docs: Option<u64>,
    /// `-l`: relevance level.
    pub level: i32,
    /// The version reproduced.
    pub version: TrecVersion,
    /// Worker threads.
    pub threads: usize,
    /// Memory-map a plain run file.
    pub mmap: bool,
}

impl Default for TrecOptions {
    fn default() -> Self {
        TrecOptions {
            measures: Vec::new(),
            per_query: false,
            complete: false,
            no_summary: false,
            max_docs: None,
            level: 1,
            version: TrecVersion::V10,
            threads: EvalOptions::default().threads,
            mmap: false,
        }
    }
}

/// A trec_eval failure and trec_eval's exit code for it: 1 for a bad measure, 4 for a repeated
/// lemma ("Can't calculate measure"), 7 when no goal has both predictions and judgments, 2
/// otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrecError {
    /// The exit code trec_eval would give.
    pub code: u8,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for TrecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TrecError {}

impl From<lemma_ingest::InputError> for TrecError {
    fn from(e: lemma_ingest::InputError) -> Self {
        TrecError {
            code: 2,
            message: e.to_string(),
        }
    }
}

impl From<EvalError> for TrecError {
    fn from(e: EvalError) -> Self {
        let code = match &e {
            EvalError::Input(ie) if ie.kind == lemma_ingest::ErrorKind::Duplicate => 4,
            _ => 2,
        };
        TrecError {
            code,
            message: e.to_string(),
        }
    }
}

/// What trec_eval prints for `qrels` and `run` under `o`, byte for byte, and the evaluation
/// behind it. The run is streamed; goals that are not contiguous make it regroup in memory
/// (trec_eval accepts any order).
pub fn run(
    qrels: &std::path::Path,
    run: &std::path::Path,
    o: &TrecOptions,
) -> Result<(String, Evaluation), TrecError> {
    use lemma_ingest::{ActualSets, ErrorKind};
    let tm = resolve(&o.measures).map_err(|e| TrecError {
        code: e.code as u8,
        message: e.message,
    })?;
    let v10 = o.version == TrecVersion::V10;
    let opts = EvalOptions {
        measures: tm.iter().filter_map(|m| m.measure).collect(),
        relevance_level: o.level,
        interpolation: if v10 {
            Interpolation::Trec10
        } else {
            Interpolation::Trec9
        },
        ranking: crate::RankingOptions {
            order: Some(OrderMode::Score),
            ties: TieMode::Trec,
            duplicates: DuplicateMode::Error,
            depth: o.max_docs,
        },
        missing: if o.complete {
            MissingMode::Zero
        } else {
            MissingMode::Skip
        },
        zero_rel: ZeroRelMode::Evaluate,
        regroup: run == std::path::Path::new("-"),
        f32_scores: !v10,
        threads: o.threads.max(1),
        ..EvalOptions::default()
    };
    if qrels == std::path::Path::new("-") && run == std::path::Path::new("-") {
        return Err(TrecError {
            code: 2,
            message: "only one of QRELS and RUN can be - (stdin)".into(),
        });
    }
    let actual = ActualSets::read_path(qrels)?;
    // Stream, and regroup in memory only if a goal reappears.
    let evaluator = Evaluator::builder().options(opts).build(actual);
    match evaluate_run(&evaluator, &tm, run, o, v10) {
        Err(EvalOrTrec::Eval(EvalError::Input(e)))
            if e.kind == ErrorKind::GoalNotContiguous && !evaluator.options().regroup =>
        {
            tracing::info!("goals are not contiguous: regrouping the run in memory");
            let mut opts = evaluator.options().clone();
            opts.regroup = true;
            let evaluator = Evaluator::builder()
                .options(opts)
                .build(evaluator.into_actual());
            Ok(evaluate_run(&evaluator, &tm, run, o, v10)?)
        }
        r => Ok(r?),
    }
}

/// An evaluation error (which may call for a regroup) or trec_eval's own.
enum EvalOrTrec {
    Eval(EvalError),
    Trec(TrecError),
}

impl From<EvalOrTrec> for TrecError {
    fn from(e: EvalOrTrec) -> Self {
        match e {
            EvalOrTrec::Eval(e) => e.into(),
            EvalOrTrec::Trec(e) => e,
        }
    }
}

fn evaluate_run(
    evaluator: &Evaluator,
    tm: &[TrecMeasure],
    run: &std::path::Path,
    o: &TrecOptions,
    v10: bool,
) -> Result<(String, Evaluation), EvalOrTrec> {
    let mut rows: Vec<GoalRow> = Vec::new();
    let input =
        lemma_ingest::open_with(run, o.mmap).map_err(|e| EvalOrTrec::Eval(EvalError::Input(e)))?;
    let sink: &mut dyn Sink = if o.per_query {
        &mut rows
    } else {
        &mut SummaryOnly
    };
    let done = evaluator
        .evaluate(Predictions::Text(input), sink)
        .map_err(EvalOrTrec::Eval)?;
    let num_rel = evaluator.actual().positive_rows;
    finish(tm, rows, done, num_rel, evaluator.plan().measures(), o, v10).map_err(EvalOrTrec::Trec)
}

/// The per-goal lines (goals in byte order, measures in trec_eval's table order) and the summary.
fn finish(
    tm: &[TrecMeasure],
    mut rows: Vec<GoalRow>,
    done: Evaluation,
    positive_rows: u64,
    plan_measures: &[Measure],
    o: &TrecOptions,
    v10: bool,
) -> Result<(String, Evaluation), TrecError> {
    if done.summary.counts().evaluated == 0 {
        return Err(TrecError {
            code: 7,
            message: "no goals with both predictions and relevance judgments".into(),
        });
    }
    let mut text = String::new();
    if o.per_query {
        rows.sort_by(|x, y| x.goal.cmp(&y.goal));
        for row in &rows {
            if row.empty && !v10 {
                continue;
            }
            let goal = String::from_utf8_lossy(&row.goal);
            for m in tm.iter().filter(|m| m.per_goal) {
                let measure = m.measure.expect("per-goal measures are computed");
                let i = plan_measures
                    .iter()
                    .position(|x| *x == measure)
                    .expect("in plan");
                line(&mut text, m, &goal, row.values[i].unwrap_or(0.0));
            }
        }
    }
    if !o.no_summary {
        let runid = String::from_utf8_lossy(&done.report.runid).into_owned();
        let num_rel = o.complete.then_some(positive_rows);
        summary_block(&mut text, tm, &done.summary, &runid, num_rel);
    }
    Ok((text, done))
}
