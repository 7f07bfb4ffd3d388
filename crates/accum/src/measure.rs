//! Measure names: the grammar of METRICS.md §3 (`Name[(param=value,...)][@cutoff]`) and the
//! trec_eval aliases (`P.5,10`, `map_cut_10`, `set_F.0.5`, `iprec_at_recall`, ...).
//!
//! A [`Measure`] is one number per goal (or one summary figure). Its [`Display`](std::fmt::Display)
//! is the canonical METRICS.md name; [`Measure::trec_name`] is the name trec_eval prints.

use std::fmt;

/// trec_eval's default cutoffs for `P`, `recall`, `map_cut`, `ndcg_cut`, `relative_P`.
pub const TREC_CUTOFFS: [u32; 9] = [5, 10, 15, 20, 30, 100, 200, 500, 1000];
/// trec_eval's default cutoffs for `success`.
pub const TREC_SUCCESS_CUTOFFS: [u32; 3] = [1, 5, 10];

/// How a recall measure at cutoff `k` is normalised.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum RecallNorm {
    /// `s(k) / R` (`R@k`, trec_eval `recall_k`).
    Rel,
    /// `s(k) / min(k, R)` (`R(norm=min)@k`, "capped recall"; trec_eval `relative_P_k`).
    Min,
}

/// How AP (at a cutoff) is normalised.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ApNorm {
    /// `/ R`: trec_eval's `map` and `map_cut_k`, ranx.
    Rel,
    /// `/ min(k, R)`: Kaggle's `apk` (seed 003).
    Min,
    /// `/ s(k)`: seed 000's "hack"; 0 when nothing relevant was retrieved.
    Hits,
}

/// A recall level `r` in `[0, 1]`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Level(pub f64);

/// One measure of METRICS.md §3. Cutoffs are `>= 1`; `None` means "the whole ranking".
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Measure {
    /// `P@k = s(k)/k`.
    P { k: u32 },
    /// `R@k = s(k)/R`, or `s(k)/min(k,R)` with [`RecallNorm::Min`].
    R { k: u32, norm: RecallNorm },
    /// `AP` / `AP@k`: sum of `p(k')` over relevant ranks `k' <= k`, normalised per [`ApNorm`].
    AP { cutoff: Option<u32>, norm: ApNorm },
    /// `Rprec = s(R)/R`.
    Rprec,
    /// `Depth(recall=r)`: smallest `k` with `s(k) >= c(r)`; undefined when not reached.
    Depth { recall: Level },
    /// `P(recall=r) = p(Depth(recall=r))`; 0 when not reached.
    PAtRecall { recall: Level },
    /// `IPrec@r = max_{k: s(k) >= need(r)} p(k)`; 0 when no such k.
    IPrec { recall: Level },
    /// `AP11`: mean of `IPrec@r` at r = 0.0, 0.1, ..., 1.0.
    AP11,
    /// `RR` / `RR@k`: `1/k1` with `k1` the first relevant rank (within k); 0 if none.
    RR { cutoff: Option<u32> },
    /// `Success@k`: 1 if `s(k) >= 1`.
    Success { k: u32 },
    /// `F(beta=b)@k`; `beta2` is `b^2`. Without a cutoff, `k = n`.
    F { beta2: f64, cutoff: Option<u32> },
    /// `E(beta=b)@k = 1 - F(beta=b)@k`.
    E { beta2: f64, cutoff: Option<u32> },
    /// `SetP`: precision of the retrieved set, or of the items with score `>= threshold`.
    SetP { threshold: Option<f64> },
    /// `SetR`: recall of the retrieved set, or of the items with score `>= threshold`.
    SetR { threshold: Option<f64> },
    /// `SetF(beta=b)`: F of the retrieved set (or of the items with score `>= threshold`).
    SetF { beta2: f64, threshold: Option<f64> },
    /// `nDCG` / `nDCG@k`: trec_eval's `ndcg` / `ndcg_cut_k`.
    NDCG { cutoff: Option<u32> },
    /// `Bpref`: trec_eval's `bpref`.
    Bpref,
    /// `AUC`: fraction of (relevant, non-relevant) pairs of the universe in the right order.
    AUC,
    /// `NumRet = n`.
    NumRet,
    /// `NumRel = R`.
    NumRel,
    /// `NumRelRet = s(n)`.
    NumRelRet,
    /// `NumQ`: goals evaluated (1 per goal; summed).
    NumQ,
    /// `GM_AP = exp(mean(ln(max(AP, 1e-5))))`; summary only.
    GMAP,
}

/// What went wrong parsing a measure name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeasureError {
    /// The name as given.
    pub name: String,
    /// What was expected.
    pub reason: String,
}

impl fmt::Display for MeasureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "measure `{}`: {}", self.name, self.reason)
    }
}

impl std::error::Error for MeasureError {}

/// How an aggregate over goals is formed (METRICS.md §4).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Aggregation {
    /// Arithmetic mean over evaluated goals.
    Mean,
    /// Sum over goals (counts).
    Sum,
    /// Mean and median over goals that reach the level, and the fraction that do.
    Depth,
    /// Geometric mean of AP with a 1e-5 floor.
    GeoMean,
}

impl Measure {
    /// Parses one name in either grammar. trec_eval names with parameter lists expand to several
    /// measures (`P.5,10` is `P@5` and `P@10`; bare `P` is trec_eval's nine default cutoffs).
    pub fn parse(name: &str) -> Result<Vec<Measure>, MeasureError> {
        let err = |reason: String| MeasureError {
            name: name.to_string(),
            reason,
        };
        let name_trim = name.trim();
        if name_trim.is_empty() {
            return Err(err("empty measure name".into()));
        }
        if let Some(ms) = parse_trec(name_trim).map_err(err)? {
            return Ok(ms);
        }
        parse_native(name_trim).map(|m| vec![m]).map_err(err)
    }

    /// Parses a list such as `"AP,P@10,RR"` (comma-separated only where a comma cannot belong to
    /// a parameter list; prefer repeating `-m`).
    pub fn parse_all<'a>(
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<Vec<Measure>, MeasureError> {
        let mut out = Vec::new();
        for n in names {
            for m in Measure::parse(n)? {
                if !out.contains(&m) {
                    out.push(m);
                }
            }
        }
        Ok(out)
    }

    /// How the measure aggregates over goals.
    pub fn aggregation(&self) -> Aggregation {
        match self {
            Measure::NumRet | Measure::NumRel | Measure::NumRelRet | Measure::NumQ => {
                Aggregation::Sum
            }
            Measure::Depth { .. } => Aggregation::Depth,
            Measure::GMAP => Aggregation::GeoMean,
            _ => Aggregation::Mean,
        }
    }

    /// Whether the measure has a per-goal value (`NumQ` and `GM_AP` are summary-only).
    pub fn per_goal(&self) -> bool {
        !matches!(self, Measure::NumQ | Measure::GMAP)
    }

    /// Whether the measure needs item scores (score thresholds).
    pub fn needs_scores(&self) -> bool {
        matches!(
            self,
            Measure::SetP { threshold: Some(_) }
                | Measure::SetR { threshold: Some(_) }
                | Measure::SetF {
                    threshold: Some(_),
                    ..
                }
        )
    }

    /// The name trec_eval prints for this measure, when trec_eval has it.
    pub fn trec_name(&self) -> Option<String> {
        Some(match *self {
            Measure::P { k } => format!("P_{k}"),
            Measure::R {
                k,
                norm: RecallNorm::Rel,
            } => format!("recall_{k}"),
            Measure::R {
                k,
                norm: RecallNorm::Min,
            } => format!("relative_P_{k}"),
            Measure::AP {
                cutoff: None,
                norm: ApNorm::Rel,
            } => "map".into(),
            Measure::AP {
                cutoff: Some(k),
                norm: ApNorm::Rel,
            } => format!("map_cut_{k}"),
            Measure::Rprec => "Rprec".into(),
            Measure::IPrec { recall } => format!("iprec_at_recall_{:.2}", recall.0),
            Measure::AP11 => "11pt_avg".into(),
            Measure::RR { cutoff: None } => "recip_rank".into(),
            Measure::Success { k } => format!("success_{k}"),
            Measure::SetP { threshold: None } => "set_P".into(),
            Measure::SetR { threshold: None } => "set_recall".into(),
            Measure::SetF {
                threshold: None, ..
            } => "set_F".into(),
            Measure::NDCG { cutoff: None } => "ndcg".into(),
            Measure::NDCG { cutoff: Some(k) } => format!("ndcg_cut_{k}"),
            Measure::Bpref => "bpref".into(),
            Measure::NumRet => "num_ret".into(),
            Measure::NumRel => "num_rel".into(),
            Measure::NumRelRet => "num_rel_ret".into(),
            Measure::NumQ => "num_q".into(),
            Measure::GMAP => "gm_map".into(),
            _ => return None,
        })
    }
}

/// Formats a recall level or threshold: always with a decimal point (`1.0`, `0.5`, `0.25`).
fn fmt_level(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.1}")
    } else {
        format!("{x}")
    }
}

/// Formats beta from beta^2 (`1`, `0.5`, `2`).
fn fmt_beta(beta2: f64) -> String {
    format!("{}", beta2.sqrt())
}

impl fmt::Display for Measure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |k: Option<u32>| k.map(|k| format!("@{k}")).unwrap_or_default();
        match *self {
            Measure::P { k } => write!(f, "P@{k}"),
            Measure::R {
                k,
                norm: RecallNorm::Rel,
            } => write!(f, "R@{k}"),
            Measure::R {
                k,
                norm: RecallNorm::Min,
            } => write!(f, "R(norm=min)@{k}"),
            Measure::AP { cutoff, norm } => {
                let n = match norm {
                    ApNorm::Rel => "",
                    ApNorm::Min => "(norm=min)",
                    ApNorm::Hits => "(norm=hits)",
                };
                write!(f, "AP{n}{}", at(cutoff))
            }
            Measure::Rprec => write!(f, "Rprec"),
            Measure::Depth { recall } => write!(f, "Depth(recall={})", fmt_level(recall.0)),
            Measure::PAtRecall { recall } => write!(f, "P(recall={})", fmt_level(recall.0)),
            Measure::IPrec { recall } => write!(f, "IPrec@{}", fmt_level(recall.0)),
            Measure::AP11 => write!(f, "AP11"),
            Measure::RR { cutoff } => write!(f, "RR{}", at(cutoff)),
            Measure::Success { k } => write!(f, "Success@{k}"),
            Measure::F { beta2, cutoff } => write!(f, "F(beta={}){}", fmt_beta(beta2), at(cutoff)),
            Measure::E { beta2, cutoff } => write!(f, "E(beta={}){}", fmt_beta(beta2), at(cutoff)),
            Measure::SetP { threshold: None } => write!(f, "SetP"),
            Measure::SetP { threshold: Some(t) } => write!(f, "SetP(threshold={})", fmt_level(t)),
            Measure::SetR { threshold: None } => write!(f, "SetR"),
            Measure::SetR { threshold: Some(t) } => write!(f, "SetR(threshold={})", fmt_level(t)),
            Measure::SetF {
                beta2,
                threshold: None,
            } => write!(f, "SetF(beta={})", fmt_beta(beta2)),
            Measure::SetF {
                beta2,
                threshold: Some(t),
            } => {
                write!(
                    f,
                    "SetF(beta={},threshold={})",
                    fmt_beta(beta2),
                    fmt_level(t)
                )
            }
            Measure::NDCG { cutoff } => write!(f, "nDCG{}", at(cutoff)),
            Measure::Bpref => write!(f, "Bpref"),
            Measure::AUC => write!(f, "AUC"),
            Measure::NumRet => write!(f, "NumRet"),
            Measure::NumRel => write!(f, "NumRel"),
            Measure::NumRelRet => write!(f, "NumRelRet"),
            Measure::NumQ => write!(f, "NumQ"),
            Measure::GMAP => write!(f, "GM_AP"),
        }
    }
}

fn parse_u32_cutoff(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err("a cutoff must be at least 1".into()),
        Ok(k) => Ok(k),
        Err(_) => Err(format!("expected a whole-number cutoff, found `{s}`")),
    }
}

/// A number, or a fraction `a/b` (so `Depth(recall=1/3)` reads as in METRICS.md §7).
fn parse_number(s: &str) -> Result<f64, String> {
    let s = s.trim();
    let v = if let Some((a, b)) = s.split_once('/') {
        let a: f64 = a
            .trim()
            .parse()
            .map_err(|_| format!("expected a number, found `{s}`"))?;
        let b: f64 = b
            .trim()
            .parse()
            .map_err(|_| format!("expected a number, found `{s}`"))?;
        if b == 0.0 {
            return Err(format!("division by zero in `{s}`"));
        }
        a / b
    } else {
        s.parse::<f64>()
            .map_err(|_| format!("expected a number, found `{s}`"))?
    };
    if !v.is_finite() {
        return Err(format!("expected a finite number, found `{s}`"));
    }
    Ok(v)
}

fn parse_level(s: &str) -> Result<Level, String> {
    let v = parse_number(s)?;
    if !(0.0..=1.0).contains(&v) {
        return Err(format!("a recall level must be in [0, 1], found `{s}`"));
    }
    Ok(Level(v))
}

fn parse_beta(s: &str) -> Result<f64, String> {
    let b = parse_number(s)?;
    if b <= 0.0 {
        return Err(format!("beta must be positive, found `{s}`"));
    }
    Ok(b * b)
}

/// trec_eval names: `name`, `name_K` (one cutoff), `name.K1,K2` (a list). Returns `Ok(None)` when
/// the name is not a trec_eval name.
fn parse_trec(name: &str) -> Result<Option<Vec<Measure>>, String> {
    // Split `base.params` (the dot introduces the parameter list) or `base_K`.
    let (base, params): (&str, Option<&str>) = match name.split_once('.') {
        Some((b, p)) if TREC_BASES.contains(&b) => (b, Some(p)),
        _ => (name, None),
    };
    let cut_list = |params: Option<&str>, default: &[u32]| -> Result<Vec<u32>, String> {
        match params {
            None => Ok(default.to_vec()),
            Some(p) => p.split(',').map(parse_u32_cutoff).collect(),
        }
    };
    let with_cuts =
        |default: &[u32], f: &dyn Fn(u32) -> Measure| -> Result<Option<Vec<Measure>>, String> {
            Ok(Some(
                cut_list(params, default)?.into_iter().map(f).collect(),
            ))
        };
    let single = |m: Measure| -> Result<Option<Vec<Measure>>, String> {
        match params {
            None => Ok(Some(vec![m])),
            Some(p) => Err(format!("`{base}` takes no parameter, found `.{p}`")),
        }
    };
    // `name_K` forms for cutoff measures.
    for (prefix, kind) in [
        ("P_", 0),
        ("recall_", 1),
        ("map_cut_", 2),
        ("ndcg_cut_", 3),
        ("success_", 4),
        ("relative_P_", 5),
    ] {
        if params.is_none() {
            if let Some(k) = name.strip_prefix(prefix) {
                if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) {
                    let k = parse_u32_cutoff(k)?;
                    return Ok(Some(vec![trec_cut(kind, k)]));
                }
            }
        }
    }
    if params.is_none() {
        if let Some(r) = name.strip_prefix("iprec_at_recall_") {
            return Ok(Some(vec![Measure::IPrec {
                recall: parse_level(r)?,
            }]));
        }
    }
    match base {
        "P" => with_cuts(&TREC_CUTOFFS, &|k| trec_cut(0, k)),
        "recall" => with_cuts(&TREC_CUTOFFS, &|k| trec_cut(1, k)),
        "map_cut" => with_cuts(&TREC_CUTOFFS, &|k| trec_cut(2, k)),
        "ndcg_cut" => with_cuts(&TREC_CUTOFFS, &|k| trec_cut(3, k)),
        "success" => with_cuts(&TREC_SUCCESS_CUTOFFS, &|k| trec_cut(4, k)),
        "relative_P" => with_cuts(&TREC_CUTOFFS, &|k| trec_cut(5, k)),
        "iprec_at_recall" => match params {
            None => Ok(Some(
                (0..=10)
                    .map(|i| Measure::IPrec {
                        recall: Level(i as f64 / 10.0),
                    })
                    .collect(),
            )),
            Some(p) => Ok(Some(
                p.split(',')
                    .map(|r| parse_level(r).map(|recall| Measure::IPrec { recall }))
                    .collect::<Result<_, _>>()?,
            )),
        },
        "set_F" => match params {
            None => Ok(Some(vec![Measure::SetF {
                beta2: 1.0,
                threshold: None,
            }])),
            Some(p) => {
                let x = parse_number(p)?;
                if x <= 0.0 {
                    return Err(format!(
                        "set_F's parameter (beta squared) must be positive, found `{p}`"
                    ));
                }
                Ok(Some(vec![Measure::SetF {
                    beta2: x,
                    threshold: None,
                }]))
            }
        },
        "map" => single(Measure::AP {
            cutoff: None,
            norm: ApNorm::Rel,
        }),
        "Rprec" => single(Measure::Rprec),
        "recip_rank" => single(Measure::RR { cutoff: None }),
        "11pt_avg" => single(Measure::AP11),
        "ndcg" => single(Measure::NDCG { cutoff: None }),
        "bpref" => single(Measure::Bpref),
        "set_P" => single(Measure::SetP { threshold: None }),
        "set_recall" => single(Measure::SetR { threshold: None }),
        "num_q" => single(Measure::NumQ),
        "num_ret" => single(Measure::NumRet),
        "num_rel" => single(Measure::NumRel),
        "num_rel_ret" => single(Measure::NumRelRet),
        "gm_map" => single(Measure::GMAP),
        _ => Ok(None),
    }
}

const TREC_BASES: [&str; 23] = [
    "P",
    "recall",
    "map_cut",
    "ndcg_cut",
    "success",
    "relative_P",
    "iprec_at_recall",
    "set_F",
    "map",
    "Rprec",
    "recip_rank",
    "11pt_avg",
    "ndcg",
    "bpref",
    "set_P",
    "set_recall",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "gm_map",
    "runid",
    "official",
];

fn trec_cut(kind: u8, k: u32) -> Measure {
    match kind {
        0 => Measure::P { k },
        1 => Measure::R {
            k,
            norm: RecallNorm::Rel,
        },
        2 => Measure::AP {
            cutoff: Some(k),
            norm: ApNorm::Rel,
        },
        3 => Measure::NDCG { cutoff: Some(k) },
        4 => Measure::Success { k },
        _ => Measure::R {
            k,
            norm: RecallNorm::Min,
        },
    }
}

/// The METRICS.md §3 grammar: `Name[(param=value,...)][@cutoff]`.
fn parse_native(name: &str) -> Result<Measure, String> {
    // Split off `@cutoff` (after any parenthesised parameters).
    let close = name.rfind(')');
    let at = name.rfind('@').filter(|&i| close.is_none_or(|c| i > c));
    let (head, cutoff_str) = match at {
        Some(i) => (&name[..i], Some(&name[i + 1..])),
        None => (name, None),
    };
    let (base, params) = match head.find('(') {
        Some(i) => {
            if !head.ends_with(')') {
                return Err("expected `)` closing the parameter list".into());
            }
            (&head[..i], Some(&head[i + 1..head.len() - 1]))
        }
        None => (head, None),
    };
    let mut kv: Vec<(&str, &str)> = Vec::new();
    if let Some(p) = params {
        for part in p.split(',') {
            let Some((k, v)) = part.split_once('=') else {
                return Err(format!(
                    "expected `param=value` in the parameter list, found `{part}`"
                ));
            };
            kv.push((k.trim(), v.trim()));
        }
    }
    let take = |kv: &mut Vec<(&str, &str)>, key: &str| -> Option<String> {
        kv.iter()
            .position(|(k, _)| *k == key)
            .map(|i| kv.remove(i).1.to_string())
    };
    let mut kv_mut = kv;
    let cutoff = if base == "IPrec" {
        None
    } else {
        cutoff_str.map(parse_u32_cutoff).transpose()?
    };
    // `IPrec@r` takes a recall level where others take a cutoff.
    let need_cut = |c: Option<u32>| c.ok_or_else(|| format!("`{base}` needs a cutoff: `{base}@k`"));
    let no_cut = |c: Option<u32>| match c {
        None => Ok(()),
        Some(_) => Err(format!("`{base}` takes no cutoff")),
    };
    let m = match base {
        "P" => {
            if let Some(r) = take(&mut kv_mut, "recall") {
                no_cut(cutoff)?;
                Measure::PAtRecall { recall: parse_level(&r)? }
            } else {
                Measure::P { k: need_cut(cutoff)? }
            }
        }
        "R" | "Recall" => {
            let norm = match take(&mut kv_mut, "norm").as_deref() {
                None | Some("rel") | Some("R") => RecallNorm::Rel,
                Some("min") => RecallNorm::Min,
                Some(o) => return Err(format!("`norm` for R@k is `min` (or absent), found `{o}`")),
            };
            Measure::R { k: need_cut(cutoff)?, norm }
        }
        "AP" | "MAP" => {
            let norm = match take(&mut kv_mut, "norm").as_deref() {
                None | Some("rel") | Some("R") => ApNorm::Rel,
                Some("min") => ApNorm::Min,
                Some("hits") => ApNorm::Hits,
                Some(o) => return Err(format!("`norm` for AP is `min` or `hits` (or absent), found `{o}`")),
            };
            if norm != ApNorm::Rel && cutoff.is_none() {
                return Err("AP(norm=...) needs a cutoff: `AP(norm=min)@k`".into());
            }
            Measure::AP { cutoff, norm }
        }
        "Rprec" | "RPrec" => {
            no_cut(cutoff)?;
            Measure::Rprec
        }
        "Depth" => {
            no_cut(cutoff)?;
            let r = take(&mut kv_mut, "recall").ok_or("`Depth` needs `(recall=r)`")?;
            Measure::Depth { recall: parse_level(&r)? }
        }
        "IPrec" => {
            let r = cutoff_str.ok_or("`IPrec` needs a recall level: `IPrec@0.5`")?;
            return finish(kv_mut, Measure::IPrec { recall: parse_level(r)? });
        }
        "AP11" => {
            no_cut(cutoff)?;
            Measure::AP11
        }
        "RR" | "MRR" => Measure::RR { cutoff },
        "Success" => Measure::Success { k: need_cut(cutoff)? },
        "F" | "E" | "F1" | "E1" => {
            let beta2 = match take(&mut kv_mut, "beta") {
                Some(b) if base.ends_with('1') => return Err(format!("`{base}` fixes beta = 1; use `F(beta={b})`")),
                Some(b) => parse_beta(&b)?,
                None => 1.0,
            };
            if base.starts_with('F') {
                Measure::F { beta2, cutoff }
            } else {
                Measure::E { beta2, cutoff }
            }
        }
        "SetP" | "SetR" | "SetF" => {
            no_cut(cutoff)?;
            let threshold = take(&mut kv_mut, "threshold").map(|t| parse_number(&t)).transpose()?;
            match base {
                "SetP" => Measure::SetP { threshold },
                "SetR" => Measure::SetR { threshold },
                _ => {
                    let beta2 = take(&mut kv_mut, "beta").map(|b| parse_beta(&b)).transpose()?.unwrap_or(1.0);
                    Measure::SetF { beta2, threshold }
                }
            }
        }
        "nDCG" | "NDCG" => Measure::NDCG { cutoff },
        "Bpref" => {
            no_cut(cutoff)?;
            Measure::Bpref
        }
        "AUC" => {
            no_cut(cutoff)?;
            Measure::AUC
        }
        "NumRet" | "NumRel" | "NumRelRet" | "NumQ" | "GM_AP" | "GMAP" => {
            no_cut(cutoff)?;
            match base {
                "NumRet" => Measure::NumRet,
                "NumRel" => Measure::NumRel,
                "NumRelRet" => Measure::NumRelRet,
                "NumQ" => Measure::NumQ,
                _ => Measure::GMAP,
            }
        }
        _ => {
            return Err(
                "unknown measure; expected a METRICS.md §3 name (P@k, R@k, AP, AP@k, Rprec, Depth(recall=r), \
                 P(recall=r), IPrec@r, AP11, RR, Success@k, F(beta=b)@k, E(beta=b)@k, SetP, SetR, SetF, nDCG, \
                 Bpref, AUC, NumRet, NumRel, NumRelRet, NumQ, GM_AP) or a trec_eval name (P.5,10, map, map_cut.10, ...)"
                    .into(),
            )
        }
    };
    finish(kv_mut, m)
}

fn finish(rest: Vec<(&str, &str)>, m: Measure) -> Result<Measure, String> {
    match rest.first() {
        None => Ok(m),
        Some((k, _)) => Err(format!("unknown parameter `{k}` for `{m}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: &str) -> Measure {
        let v = Measure::parse(s).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(v.len(), 1, "{s}");
        v[0]
    }

    #[test]
    fn native_names_round_trip() {
        for s in [
            "P@10",
            "R@100",
            "R(norm=min)@5",
            "AP",
            "AP@100",
            "AP(norm=min)@3",
            "AP(norm=hits)@2",
            "Rprec",
            "Depth(recall=1.0)",
            "Depth(recall=0.5)",
            "P(recall=1.0)",
            "IPrec@0.3",
            "AP11",
            "RR",
            "RR@10",
            "Success@1",
            "F(beta=1)@5",
            "F(beta=2)@5",
            "E(beta=1)@5",
            "SetP",
            "SetR",
            "SetF(beta=1)",
            "SetP(threshold=0.5)",
            "SetF(beta=0.5,threshold=0.5)",
            "nDCG",
            "nDCG@10",
            "Bpref",
            "AUC",
            "NumRet",
            "NumRel",
            "NumRelRet",
            "NumQ",
            "GM_AP",
        ] {
            assert_eq!(one(s).to_string(), s);
        }
        assert_eq!(
            one("F1@5"),
            Measure::F {
                beta2: 1.0,
                cutoff: Some(5)
            }
        );
        assert_eq!(
            one("Depth(recall=1/3)"),
            Measure::Depth {
                recall: Level(1.0 / 3.0)
            }
        );
    }

    #[test]
    fn trec_aliases() {
        assert_eq!(
            Measure::parse("P.5,10").unwrap(),
            vec![Measure::P { k: 5 }, Measure::P { k: 10 }]
        );
        assert_eq!(Measure::parse("P").unwrap().len(), 9);
        assert_eq!(one("P_20"), Measure::P { k: 20 });
        assert_eq!(
            Measure::parse("map_cut.10,20").unwrap(),
            vec![
                Measure::AP {
                    cutoff: Some(10),
                    norm: ApNorm::Rel
                },
                Measure::AP {
                    cutoff: Some(20),
                    norm: ApNorm::Rel
                }
            ]
        );
        assert_eq!(
            one("set_F.0.5"),
            Measure::SetF {
                beta2: 0.5,
                threshold: None
            }
        );
        assert_eq!(
            one("set_F"),
            Measure::SetF {
                beta2: 1.0,
                threshold: None
            }
        );
        assert_eq!(Measure::parse("iprec_at_recall").unwrap().len(), 11);
        assert_eq!(
            one("iprec_at_recall_0.10").trec_name().unwrap(),
            "iprec_at_recall_0.10"
        );
        assert_eq!(one("ndcg_cut.10"), Measure::NDCG { cutoff: Some(10) });
        assert_eq!(
            one("relative_P.5"),
            Measure::R {
                k: 5,
                norm: RecallNorm::Min
            }
        );
        assert_eq!(Measure::parse("success").unwrap().len(), 3);
        assert_eq!(one("map").trec_name().unwrap(), "map");
        assert_eq!(one("AP@100").trec_name().unwrap(), "map_cut_100");
    }

    #[test]
    fn errors_name_the_problem() {
        let e = Measure::parse("Foo@3").unwrap_err();
        assert_eq!(e.name, "Foo@3");
        assert!(e.reason.starts_with("unknown measure"), "{}", e.reason);
        assert!(Measure::parse("P@0")
            .unwrap_err()
            .reason
            .contains("at least 1"));
        assert!(Measure::parse("P@x")
            .unwrap_err()
            .reason
            .contains("whole-number"));
        assert!(Measure::parse("P").is_ok());
        assert!(Measure::parse("Depth(recall=1.5)")
            .unwrap_err()
            .reason
            .contains("[0, 1]"));
        assert!(Measure::parse("AP(norm=max)@3")
            .unwrap_err()
            .reason
            .contains("norm"));
        assert!(Measure::parse("AP(foo=1)")
            .unwrap_err()
            .reason
            .contains("unknown parameter `foo`"));
        assert!(Measure::parse("F(beta=-1)@3")
            .unwrap_err()
            .reason
            .contains("positive"));
        assert!(Measure::parse("map.5")
            .unwrap_err()
            .reason
            .contains("takes no parameter"));
        assert!(Measure::parse("P.5,x")
            .unwrap_err()
            .reason
            .contains("whole-number"));
        assert!(Measure::parse("Bpref@5")
            .unwrap_err()
            .reason
            .contains("no cutoff"));
        assert!(Measure::parse("").is_err());
    }
}
