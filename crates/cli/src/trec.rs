//! trec_eval compatibility: `-m` parsing with trec_eval's rules and its output format
//! (METRICS.md §8).
//!
//! trec_eval prints measures in its own table order, not in `-m` order; the first `-m` that gives a
//! measure parameters wins; cutoff lists are sorted ascending and must not repeat. Lines are
//! `format!("{:<22}\t{}\t{:.4}", name, goal, value)`, integers for the `num_*` counts.

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
