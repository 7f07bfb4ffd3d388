//! trec_eval's measure table and `-m` parser (METRICS.md §8), derived from the measure
//! declarations.
//!
//! Each measure kind declares its trec_eval names (a [`TrecEntry`]: name, place in trec_eval's
//! output order, parameter syntax and defaults); [`table`] collects them in trec_eval's order.
//! [`resolve`] applies trec_eval's rules to a list of `-m` arguments: measures print in table
//! order, not `-m` order; the first `-m` that gives a measure parameters wins; cutoff lists are
//! sorted ascending and must not repeat; errors carry trec_eval's exit codes (1 for an illegal
//! measure, 2 for parameters that cannot initialise). [`crate::Measure::parse`] uses the same
//! parser for one argument, so `eval -m P.5,5` fails as `trec_eval -m P.5,5` does.

use crate::measure::{parse_u32_cutoff, Aggregation, Measure};
use crate::measures::KINDS;
use crate::trec_sum::TrecRules;
use std::fmt;
use std::sync::OnceLock;

/// One entry of trec_eval's measure table.
#[derive(Copy, Clone, Debug)]
pub struct TrecEntry {
    /// The name `-m` takes (`P`, `map_cut`, `set_F`).
    pub name: &'static str,
    /// Index in trec_eval's measure table (`te_trec_measures[]` of trec_eval 10.0's `measures.c`:
    /// `runid` 0, `P` 11, `set_F` 34), which is the order trec_eval prints measures in. 9.0.8's
    /// table is 10.0's without `dcg` (21), `ideal_dcg` (22), `rbp` (54), `rbp_resid` (55) and
    /// `unj` (56), in the same order. Measures lemma-eval lacks leave gaps, so a new entry takes
    /// its trec_eval index unchanged.
    pub order: u8,
    /// Part of trec_eval's `official` set (its default).
    pub official: bool,
    /// What the parameters after `name.` are, and which measures the entry gives.
    pub params: TrecParams,
}

/// The parameters of a [`TrecEntry`] and the measures it expands to.
#[derive(Copy, Clone, Debug)]
pub enum TrecParams {
    /// `runid`: no measure; the summary prints the run's name.
    RunId,
    /// One measure, no parameters. `refused` names what trec_eval's parameters would be
    /// (`custom gains` for `ndcg`) when lemma-eval does not support them.
    Fixed {
        /// The measure.
        measure: Measure,
        /// What trec_eval's parameters would be, when refused.
        refused: Option<&'static str>,
    },
    /// One measure per cutoff (`P.5,10` gives `P_5`, `P_10`); `default` without parameters.
    Cutoffs {
        /// The cutoffs without parameters.
        default: &'static [u32],
        /// The measure at one cutoff.
        make: fn(u32) -> Measure,
    },
    /// One measure per recall level (`iprec_at_recall.0.1,0.5`), printed with two decimals.
    Levels {
        /// The levels without parameters.
        default: &'static [f64],
        /// The measure at one level.
        make: fn(f64) -> Measure,
    },
    /// One measure of a list of numbers read as trec_eval reads them (C's `atof`: `utility.2,-1,0,0`),
    /// printed `name_params` as given; `default` without parameters.
    Numbers {
        /// The measure without parameters.
        default: Measure,
        /// The measure of the numbers (an error for a list it cannot take).
        make: fn(&[f64]) -> Result<Measure, String>,
    },
    /// One measure per number of a list, each read as C's `atof` reads it (`Rprec_mult.0.2,1.5`),
    /// sorted ascending, no two equal, each printed `name_%3.2f` (trec_eval's `double` cutoffs);
    /// `default` without parameters.
    Doubles {
        /// The numbers without parameters.
        default: &'static [f64],
        /// The measure of one number.
        make: fn(f64) -> Measure,
    },
    /// One measure of `key=value` pairs (`rbp.p=0.8`), each value read as C's `atof` reads it,
    /// printed `name_params` as given; `default` without parameters.
    Pairs {
        /// The measure without parameters.
        default: Measure,
        /// The measure of the pairs (an error for pairs it cannot take).
        make: PairsFn,
    },
    /// A text per goal (`relstring.20`: the judgments of the first 20 items), its length read as
    /// C's `atof` reads the first number and truncated; printed `name_params` as given, per goal
    /// only. Its measures are [`crate::relstring_chunks`] of the length.
    Text {
        /// The length without parameters.
        default: u32,
    },
    /// One measure with a number parameter (`set_F.0.5`), printed `name_param` as given.
    Float {
        /// The measure without parameters.
        default: Measure,
        /// The measure with one.
        make: fn(f64) -> Measure,
    },
}

/// The measure of `name=value` pairs, or why there is none.
pub type PairsFn = fn(&[(&str, f64)]) -> Result<Measure, String>;

/// The parameter under which an entry names one measure (see [`TrecEntry::printed_name`]).
#[derive(Copy, Clone, Debug, PartialEq)]
pub(crate) enum TrecArg {
    /// The bare name (`map`, or `set_F` with its default parameter).
    None,
    Cutoff(u32),
    Level(f64),
    Float(f64),
    /// A number of a [`TrecParams::Doubles`] list.
    Double(f64),
    /// The pair `p=x` of a [`TrecParams::Pairs`] entry.
    P(f64),
}

/// One measure as trec_eval prints it.
#[derive(Clone, Debug, PartialEq)]
pub struct TrecMeasure {
    /// The printed name (`P_5`, `set_F_0.5`).
    pub name: String,
    /// What lemma-eval computes for it (`None` for `runid`).
    pub measure: Option<Measure>,
    /// Printed as an integer (the `num_*` counts).
    pub integer: bool,
    /// Printed per goal with `-q` (`runid`, `num_q` and `gm_map` only in the summary).
    pub per_goal: bool,
    /// A text, not a number (`relstring`): printed per goal only, quoted, from the values of
    /// `measure` and `parts` ([`crate::relstring_text`]).
    pub text: bool,
    /// The further measures a text's value continues in (empty for a number).
    pub parts: Vec<Measure>,
}

impl TrecMeasure {
    /// Every measure behind the printed name: `measure`, then `parts`.
    pub fn measures(&self) -> impl Iterator<Item = Measure> + '_ {
        self.measure.into_iter().chain(self.parts.iter().copied())
    }
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

impl fmt::Display for TrecMeasureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TrecMeasureError {}

fn err(code: i32, message: String) -> TrecMeasureError {
    TrecMeasureError { code, message }
}

/// The measures of judgment groups (`-R qrels_jg`): each the measure of its entry (`map_avgjg`
/// is `AP`) computed against each judgment group of a goal, then averaged over the goal's
/// groups (by the engine); trec_eval computes them only under `-R qrels_jg`.
pub const JUDGMENT_GROUP_MEASURES: &[&str] = &["map_avgjg", "P_avgjg", "Rprec_mult_avgjg"];

impl TrecMeasure {
    /// Whether the printed name is one of [`JUDGMENT_GROUP_MEASURES`]' (`P_avgjg_10`).
    pub fn judgment_groups(&self) -> bool {
        JUDGMENT_GROUP_MEASURES.iter().any(|base| {
            self.name
                .strip_prefix(base)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('_'))
        })
    }
}

/// trec_eval's `official` nickname (its default).
const OFFICIAL: &[&str] = &[
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
];

/// trec_eval's `set` nickname (the measures of the retrieved set as a whole).
const SET: &[&str] = &[
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "utility",
    "set_P",
    "set_recall",
    "set_relative_P",
    "set_map",
    "set_F",
];

/// trec_eval 10.0's `all_trec` nickname.
const ALL_TREC_10: &[&str] = &[
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
    "relstring",
    "recall",
    "unj",
    "rbp",
    "rbp_resid",
    "infAP",
    "gm_bpref",
    "utility",
    "11pt_avg",
    "ndcg",
    "relative_P",
    "Rprec_mult",
    "success",
    "map_cut",
    "ndcg_cut",
    "ndcg_rel",
    "Rndcg",
    "binG",
    "G",
    "set_P",
    "set_recall",
    "set_relative_P",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
];

/// trec_eval 9.0.8's `all_trec` nickname (pytrec_eval's).
const ALL_TREC_9: &[&str] = &[
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
    "relstring",
    "recall",
    "infAP",
    "gm_bpref",
    "utility",
    "11pt_avg",
    "ndcg",
    "relative_P",
    "Rprec_mult",
    "success",
    "map_cut",
    "ndcg_cut",
    "ndcg_rel",
    "Rndcg",
    "binG",
    "G",
    "set_P",
    "set_recall",
    "set_relative_P",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
];

/// trec_eval's `all_prefs` nickname.
const ALL_PREFS: &[&str] = &[
    "runid",
    "num_q",
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
];

/// trec_eval's `prefs` nickname.
const PREFS: &[&str] = &[
    "runid",
    "num_q",
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
];

/// trec_eval's `qrels_jg` nickname.
const QRELS_JG: &[&str] = &["runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"];

/// The members of trec_eval's nickname `name` (`official`, `set`, `all_trec`, `all_prefs`,
/// `prefs`, `qrels_jg`) as `version` lists them, lemma-eval's or not; `None` for another name.
pub fn nickname(name: &str, version: TrecRules) -> Option<&'static [&'static str]> {
    Some(match name {
        "official" => OFFICIAL,
        "set" => SET,
        "all_trec" if version == TrecRules::V9 => ALL_TREC_9,
        "all_trec" => ALL_TREC_10,
        "all_prefs" => ALL_PREFS,
        "prefs" => PREFS,
        "qrels_jg" => QRELS_JG,
        _ => return None,
    })
}

/// `runid`, the one entry that is not a measure.
const RUNID: TrecEntry = TrecEntry {
    name: "runid",
    order: 0,
    official: true,
    params: TrecParams::RunId,
};

/// trec_eval's measure table, restricted to what lemma-eval computes, in trec_eval's order.
pub fn table() -> &'static [TrecEntry] {
    static TABLE: OnceLock<Vec<TrecEntry>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = vec![RUNID];
        for kind in KINDS {
            (kind.trec)(&mut t);
        }
        t.sort_by_key(|e| e.order);
        t
    })
}

/// The entry named `name`.
pub fn entry(name: &str) -> Option<&'static TrecEntry> {
    table().iter().find(|e| e.name == name)
}

/// The `official` set (trec_eval's default), in table order.
pub fn official() -> impl Iterator<Item = &'static TrecEntry> {
    table().iter().filter(|e| e.official)
}

fn names() -> String {
    table()
        .iter()
        .map(|e| e.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl TrecEntry {
    /// The `-m` syntax, for help: `map`, `P.k1,k2,...`, `set_F.x`.
    pub fn syntax(&self) -> String {
        match self.params {
            TrecParams::RunId | TrecParams::Fixed { .. } => self.name.to_string(),
            TrecParams::Cutoffs { .. } => format!("{}.k1,k2,...", self.name),
            TrecParams::Levels { .. } => format!("{}.r1,r2,...", self.name),
            TrecParams::Float { .. } => format!("{}.x", self.name),
            TrecParams::Numbers { .. } | TrecParams::Doubles { .. } => {
                format!("{}.x1,x2,...", self.name)
            }
            TrecParams::Pairs { .. } => format!("{}.p=x", self.name),
            TrecParams::Text { .. } => format!("{}.k", self.name),
        }
    }

    /// The name trec_eval prints for the entry's measure under `arg`.
    pub(crate) fn printed_name(&self, arg: TrecArg) -> String {
        match arg {
            TrecArg::None => self.name.to_string(),
            TrecArg::Cutoff(k) => format!("{}_{k}", self.name),
            TrecArg::Level(x) => format!("{}_{x:.2}", self.name),
            TrecArg::Float(x) => format!("{}_{x}", self.name),
            TrecArg::Double(x) => {
                // `%3.2f` into a buffer of the name's length + 10 bytes (the NUL included).
                let mut s = format!("{}_{x:.2}", self.name);
                s.truncate(self.name.len() + 9);
                s
            }
            TrecArg::P(x) => format!("{}_p={x}", self.name),
        }
    }

    /// Whether trec_eval 9.0.8 has the entry (10.0 added `dcg`, `ideal_dcg`, `rbp`,
    /// `rbp_resid` and `unj`).
    pub fn in_v9(&self) -> bool {
        !matches!(self.order, 21 | 22 | 54..=56)
    }

    /// Whether pytrec_eval-terrier takes the entry (`pytrec_eval.supported_measures`: 9.0.8's
    /// table up to `num_nonrel_judged_ret`).
    pub fn in_pytrec(&self) -> bool {
        self.in_v9() && self.order <= 35
    }

    /// The measures of this entry given `-m name.params` (or `-m name`), as trec_eval prints them.
    pub fn expand(&self, params: Option<&str>) -> Result<Vec<TrecMeasure>, TrecMeasureError> {
        let name = self.name;
        Ok(match self.params {
            TrecParams::RunId => vec![TrecMeasure {
                name: name.into(),
                measure: None,
                integer: false,
                per_goal: false,
                text: false,
                parts: Vec::new(),
            }],
            TrecParams::Text { default } => {
                let len = match params {
                    None => default,
                    Some(p) => {
                        atof(p.split(',').next().unwrap_or(p)).clamp(0.0, u32::MAX as f64) as u32
                    }
                };
                let mut ms = crate::relstring_chunks(len);
                let first = ms.next().expect("one chunk at least");
                vec![TrecMeasure {
                    name: params.map_or_else(|| name.into(), |p| format!("{name}_{p}")),
                    measure: Some(first),
                    integer: false,
                    per_goal: true,
                    text: true,
                    parts: ms.collect(),
                }]
            }
            TrecParams::Fixed { measure, refused } => {
                match (params, refused) {
                    (Some(p), Some(what)) => {
                        return Err(err(
                            2,
                            format!("{name} with {what} (`{p}`) is not supported"),
                        ))
                    }
                    (Some(p), None) => {
                        return Err(err(
                            2,
                            format!("measure `{name}` takes no parameters, found `{p}`"),
                        ))
                    }
                    (None, _) => {}
                }
                vec![printed(name.into(), measure)]
            }
            TrecParams::Cutoffs { default, make } => {
                let ks = match params {
                    Some(p) => parse_cutoffs(name, p)?,
                    None => default.to_vec(),
                };
                ks.into_iter()
                    .map(|k| printed(self.printed_name(TrecArg::Cutoff(k)), make(k)))
                    .collect()
            }
            TrecParams::Levels { default, make } => {
                let xs = match params {
                    Some(p) => parse_levels(name, p)?,
                    None => default.to_vec(),
                };
                xs.into_iter()
                    .map(|x| printed(self.printed_name(TrecArg::Level(x)), make(x)))
                    .collect()
            }
            TrecParams::Numbers { default, make } => vec![match params {
                None => printed(name.into(), default),
                Some(p) => {
                    let xs: Vec<f64> = p.split(',').map(atof).collect();
                    printed(format!("{name}_{p}"), make(&xs).map_err(|e| err(2, e))?)
                }
            }],
            TrecParams::Doubles { default, make } => {
                let xs = match params {
                    Some(p) => parse_doubles(name, p)?,
                    None => default.to_vec(),
                };
                xs.into_iter()
                    .map(|x| printed(self.printed_name(TrecArg::Double(x)), make(x)))
                    .collect()
            }
            TrecParams::Pairs { default, make } => vec![match params {
                None => printed(name.into(), default),
                Some(p) => {
                    let pairs = parse_pairs(p).map_err(|e| err(2, e))?;
                    printed(format!("{name}_{p}"), make(&pairs).map_err(|e| err(2, e))?)
                }
            }],
            TrecParams::Float { default, make } => vec![match params {
                None => printed(name.into(), default),
                Some(p) => {
                    // trec_eval reads the first number of the list; the name keeps the text.
                    let first = p.split(',').next().unwrap_or(p);
                    let x = parse_positive(first).ok_or_else(|| {
                        err(
                            2,
                            format!("measure `{name}`: expected a positive number, found `{p}`"),
                        )
                    })?;
                    printed(format!("{name}_{p}"), make(x))
                }
            }],
        })
    }
}

fn printed(name: String, measure: Measure) -> TrecMeasure {
    TrecMeasure {
        name,
        measure: Some(measure),
        integer: measure.aggregation() == Aggregation::Sum,
        per_goal: measure.per_goal(),
        text: false,
        parts: Vec::new(),
    }
}

/// A number as C's `atof` reads it, as trec_eval reads a measure's number parameters: leading
/// white space skipped, then the longest prefix of the form `[+-]digits[.digits][e[+-]digits]`
/// (at least one digit); 0 when there is none.
pub(crate) fn atof(s: &str) -> f64 {
    let b = s.trim_start().as_bytes();
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let int_end = digits(i);
    let mut end = int_end;
    let mut any = int_end > i;
    i = int_end;
    if i < b.len() && b[i] == b'.' {
        let frac_end = digits(i + 1);
        any |= frac_end > i + 1;
        if any {
            end = frac_end;
        }
    }
    if !any {
        return 0.0;
    }
    if end < b.len() && matches!(b[end], b'e' | b'E') {
        let mut j = end + 1;
        if j < b.len() && matches!(b[j], b'+' | b'-') {
            j += 1;
        }
        let exp_end = digits(j);
        if exp_end > j {
            end = exp_end;
        }
    }
    let text = std::str::from_utf8(&b[..end]).expect("ASCII prefix");
    text.parse().unwrap_or(0.0)
}

/// trec_eval's `double` cutoffs: numbers read with `atof`, sorted, no two equal.
fn parse_doubles(base: &str, params: &str) -> Result<Vec<f64>, TrecMeasureError> {
    let mut v: Vec<f64> = params.split(',').map(atof).collect();
    v.sort_by(|a, b| a.partial_cmp(b).expect("atof reads finite numbers"));
    if v.windows(2).any(|w| w[0] == w[1]) {
        return Err(err(
            2,
            format!("measure `{base}`: duplicate cutoffs in `{params}`"),
        ));
    }
    Ok(v)
}

/// trec_eval's `name=value` pairs (`p=0.8`, `1=3,2=9`): every comma-separated part one name, one
/// `=` and a value read with `atof`.
pub(crate) fn parse_pairs(params: &str) -> Result<Vec<(&str, f64)>, String> {
    params
        .split(',')
        .map(|part| {
            let mut it = part.split('=');
            match (it.next(), it.next(), it.next()) {
                (Some(k), Some(v), None) => Ok((k, atof(v))),
                _ => Err(format!("malformed pair parameters in `{params}`")),
            }
        })
        .collect()
}

/// Whether a pair's name is a whole number (trec_eval's gain of a relevance level: `1=3`).
pub(crate) fn is_level_name(name: &str) -> bool {
    let digits = name.strip_prefix(['-', '+']).unwrap_or(name);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

fn parse_positive(s: &str) -> Option<f64> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| *x > 0.0 && x.is_finite())
}

fn parse_level(s: &str) -> Option<f64> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| (0.0..=1.0).contains(x))
}

/// A whole number as C's `atol` reads it: leading white space skipped, then the longest prefix
/// `[+-]digits` (`23.4` is 23); 0 when there is none.
fn atol(s: &str) -> i64 {
    let b = s.trim_start().as_bytes();
    let neg = b.first() == Some(&b'-');
    let start = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let mut v: i64 = 0;
    for &d in b[start..].iter().take_while(|d| d.is_ascii_digit()) {
        v = v.saturating_mul(10).saturating_add(i64::from(d - b'0'));
    }
    if neg {
        -v
    } else {
        v
    }
}

/// trec_eval's whole-number cutoffs: each read as C's `atol` reads it (`23.4` is 23), sorted,
/// positive, no two equal.
fn parse_cutoffs(base: &str, params: &str) -> Result<Vec<u32>, TrecMeasureError> {
    let mut v = Vec::new();
    for p in params.split(',') {
        let k = atol(p);
        if k <= 0 {
            return Err(err(
                2,
                format!("measure `{base}`: expected positive whole-number cutoffs, found `{p}`"),
            ));
        }
        let k = u32::try_from(k)
            .map_err(|_| err(2, format!("measure `{base}`: cutoff `{p}` is too large")))?;
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
        let x = parse_level(p).ok_or_else(|| {
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

/// What one `-m` argument designates.
enum Arg<'a> {
    /// A nickname's members (its parameters, if any, are ignored, as trec_eval does).
    Nickname(&'static str, &'static [&'static str]),
    /// An entry of the table, with the text after its first `.`.
    Entry(&'static TrecEntry, Option<&'a str>),
}

/// The one trec_eval name parser: `Ok(None)` when `arg` is not a trec_eval name at all.
fn classify(arg: &str, version: TrecRules) -> Result<Option<Arg<'_>>, TrecMeasureError> {
    let (base, params) = match arg.split_once('.') {
        Some((b, p)) => (b, Some(p)),
        None => (arg, None),
    };
    let target = if let Some(members) = nickname(base, version) {
        let name = [
            "official",
            "set",
            "all_trec",
            "all_prefs",
            "prefs",
            "qrels_jg",
        ]
        .into_iter()
        .find(|n| *n == base)
        .expect("a nickname");
        Arg::Nickname(name, members)
    } else if let Some(e) = entry(base).filter(|e| version == TrecRules::V10 || e.in_v9()) {
        Arg::Entry(e, params)
    } else if entry(base).is_some() {
        return Err(err(
            1,
            format!("illegal measure `{base}`: trec_eval 9.0.8 does not have it (10.0 does)"),
        ));
    } else if crate::prefs::PrefsMeasure::from_name(base).is_some() {
        return Err(reads_prefs(base));
    } else {
        return Ok(None);
    };
    if params == Some("") {
        return Err(err(
            1,
            format!("illegal measure `{arg}`: empty parameter list"),
        ));
    }
    Ok(Some(target))
}

/// A nickname's member lemma-eval does not compute (none today: every trec_eval 10.0 measure
/// is computed; kept for a table that lags a nickname).
fn unsupported(base: &str) -> TrecMeasureError {
    err(
        1,
        format!(
            "trec_eval measure `{base}` is not supported by lemma-eval; supported: {}",
            names()
        ),
    )
}

/// A preference measure outside `-R prefs` and `-R qrels_prefs`: trec_eval's "Can't calculate
/// measure" (exit 4).
fn reads_prefs(base: &str) -> TrecMeasureError {
    err(
        4,
        format!(
            "trec_eval measure `{base}` reads preference judgments: only `trec_eval -R prefs` and \
             `-R qrels_prefs` compute it"
        ),
    )
}

/// The entries of nickname `nick`'s members, each of the table (an error naming the first that
/// lemma-eval does not compute, or that reads preference judgments).
fn members(nick: &str, names: &[&str]) -> Result<Vec<&'static TrecEntry>, TrecMeasureError> {
    names
        .iter()
        .map(|n| {
            entry(n).ok_or_else(|| {
                let mut e = match crate::prefs::PrefsMeasure::from_name(n) {
                    Some(_) => reads_prefs(n),
                    None => unsupported(n),
                };
                e.message = format!("`{nick}`: {}", e.message);
                e
            })
        })
        .collect()
}

/// Resolves `-m` arguments (none: `official`) to the measures trec_eval 10.0 would print, in its
/// order.
pub fn resolve<S: AsRef<str>>(args: &[S]) -> Result<Vec<TrecMeasure>, TrecMeasureError> {
    resolve_for(args, TrecRules::V10)
}

/// Resolves `-m` arguments (none: `official`) to the measures `version` would print, in its
/// order: 9.0.8 refuses the measures 10.0 added, and has its own `all_trec`.
pub fn resolve_for<S: AsRef<str>>(
    args: &[S],
    version: TrecRules,
) -> Result<Vec<TrecMeasure>, TrecMeasureError> {
    let table = table();
    let mut marked = vec![false; table.len()];
    let mut params: Vec<Option<&str>> = vec![None; table.len()];
    let position = |e: &TrecEntry| {
        table
            .iter()
            .position(|t| std::ptr::eq(t, e))
            .expect("entry of the table")
    };
    let default = [String::from("official")];
    let args: Vec<&str> = match args.is_empty() {
        true => default.iter().map(|s| s.as_str()).collect(),
        false => args.iter().map(|a| a.as_ref()).collect(),
    };
    // A preference measure stops trec_eval only once the files are read (exit 4): any other
    // error of the arguments comes first.
    let mut reads_prefs = None;
    for a in args {
        let Some(arg) = defer(classify(a, version), &mut reads_prefs)? else {
            continue;
        };
        match arg {
            Some(Arg::Nickname(nick, names)) => {
                let entries = defer(members(nick, names), &mut reads_prefs)?;
                for e in entries.unwrap_or_default() {
                    marked[position(e)] = true;
                }
            }
            Some(Arg::Entry(e, p)) => {
                let i = position(e);
                marked[i] = true;
                if params[i].is_none() {
                    params[i] = p;
                }
            }
            None => {
                return Err(err(
                    1,
                    format!("illegal measure `{a}`; supported: official, {}", names()),
                ))
            }
        }
    }
    let mut out = Vec::new();
    for (i, e) in table.iter().enumerate() {
        if marked[i] {
            out.extend(e.expand(params[i])?);
        }
    }
    match reads_prefs {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// `r`'s value, or `None` with its error kept in `deferred` when it is a preference measure's
/// (exit 4), which trec_eval meets only once its files are read.
fn defer<T>(
    r: Result<T, TrecMeasureError>,
    deferred: &mut Option<TrecMeasureError>,
) -> Result<Option<T>, TrecMeasureError> {
    match r {
        Err(e) if e.code == 4 => {
            deferred.get_or_insert(e);
            Ok(None)
        }
        r => r.map(Some),
    }
}

/// One `-m` argument under trec_eval's rules, as measures (`None`: not a trec_eval name). `runid`
/// is refused: it is not a measure.
pub(crate) fn parse_arg(arg: &str) -> Option<Result<Vec<Measure>, String>> {
    let measures = |e: &TrecEntry, p: Option<&str>| -> Result<Vec<Measure>, TrecMeasureError> {
        Ok(e.expand(p)?.into_iter().filter_map(|m| m.measure).collect())
    };
    let r = match classify(arg, TrecRules::V10) {
        Ok(None) => return None,
        Err(e) => Err(e),
        Ok(Some(Arg::Nickname(nick, names)))
            if names.iter().any(|n| JUDGMENT_GROUP_MEASURES.contains(n)) =>
        {
            Err(err(
                1,
                format!(
                    "`{nick}` averages over judgment groups: only `lemma-eval trec_eval -R \
                     qrels_jg` computes it"
                ),
            ))
        }
        Ok(Some(Arg::Nickname(nick, names))) => members(nick, names).and_then(|es| {
            es.into_iter()
                .map(|e| measures(e, None))
                .collect::<Result<Vec<_>, _>>()
                .map(|v| v.concat())
        }),
        Ok(Some(Arg::Entry(e, _))) if matches!(e.params, TrecParams::RunId) => Err(err(
            1,
            "`runid` is the run's name in trec_eval's output, not a measure".into(),
        )),
        Ok(Some(Arg::Entry(e, _))) if JUDGMENT_GROUP_MEASURES.contains(&e.name) => Err(err(
            1,
            format!(
                "`{}` averages over judgment groups: only `lemma-eval trec_eval -R qrels_jg` \
                 computes it",
                e.name
            ),
        )),
        Ok(Some(Arg::Entry(e, p))) => measures(e, p),
    };
    Some(r.map_err(|e| e.message))
}

/// A name as trec_eval prints it (`P_10`, `map_cut_100`, `iprec_at_recall_0.10`, `set_F_0.5`,
/// `map`): the inverse of [`Measure::trec_name`]. `None` when `name` is not one.
pub(crate) fn parse_printed(name: &str) -> Option<Result<Measure, String>> {
    // The judgment-group measures are the trec_eval subcommand's alone (see [`parse_arg`]).
    for e in (table().iter()).filter(|e| !JUDGMENT_GROUP_MEASURES.contains(&e.name)) {
        let suffix = name.strip_prefix(e.name).and_then(|r| r.strip_prefix('_'));
        match e.params {
            TrecParams::RunId => {}
            TrecParams::Fixed { measure, .. } => {
                if name == e.name {
                    return Some(Ok(measure));
                }
            }
            TrecParams::Cutoffs { make, .. } => {
                if let Some(k) =
                    suffix.filter(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
                {
                    return Some(parse_u32_cutoff(k).map(make));
                }
            }
            TrecParams::Levels { make, .. } => {
                if let Some(x) = suffix.filter(|x| !x.is_empty()) {
                    return Some(parse_level(x).map(make).ok_or_else(|| {
                        format!("expected a recall level in [0, 1] after `{}_`", e.name)
                    }));
                }
            }
            TrecParams::Numbers { default, make } => {
                if name == e.name {
                    return Some(Ok(default));
                }
                if let Some(p) = suffix.filter(|p| !p.is_empty()) {
                    let xs: Vec<f64> = p.split(',').map(atof).collect();
                    return Some(make(&xs));
                }
            }
            TrecParams::Text { default } => {
                if name == e.name {
                    return Some(Ok(Measure::RelString {
                        len: default,
                        chunk: 0,
                    }));
                }
                if let Some(k) =
                    suffix.filter(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
                {
                    return Some(
                        k.parse()
                            .map(|len| Measure::RelString { len, chunk: 0 })
                            .map_err(|_| format!("expected a length after `{}_`", e.name)),
                    );
                }
            }
            TrecParams::Doubles { make, .. } => {
                if let Some(x) = suffix.filter(|x| !x.is_empty() && !x.contains(',')) {
                    return Some(
                        x.trim()
                            .parse::<f64>()
                            .ok()
                            .filter(|x| x.is_finite())
                            .map(make)
                            .ok_or_else(|| format!("expected a number after `{}_`", e.name)),
                    );
                }
            }
            TrecParams::Pairs { default, make } => {
                if name == e.name {
                    return Some(Ok(default));
                }
                // `rbp_resid` is no pair list of `rbp`.
                let pairs = |p: &&str| {
                    parse_pairs(p)
                        .is_ok_and(|v| v.iter().all(|(k, _)| *k == "p" || is_level_name(k)))
                };
                if let Some(p) = suffix.filter(pairs) {
                    return Some(parse_pairs(p).and_then(|pairs| make(&pairs)));
                }
            }
            TrecParams::Float { make, .. } => {
                if let Some(x) = suffix.filter(|x| !x.is_empty()) {
                    return Some(
                        parse_positive(x).map(make).ok_or_else(|| {
                            format!("expected a positive number after `{}_`", e.name)
                        }),
                    );
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_of(args: &[&str]) -> Vec<String> {
        resolve(args).unwrap().into_iter().map(|m| m.name).collect()
    }

    #[test]
    fn table_is_trec_evals_order() {
        let names: Vec<&str> = table().iter().map(|e| e.name).collect();
        assert_eq!(
            names,
            [
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
                "relstring",
                "recall",
                "infAP",
                "gm_bpref",
                "Rprec_mult",
                "utility",
                "11pt_avg",
                "binG",
                "G",
                "dcg",
                "ideal_dcg",
                "ndcg",
                "ndcg_rel",
                "Rndcg",
                "ndcg_cut",
                "map_cut",
                "relative_P",
                "success",
                "set_P",
                "set_relative_P",
                "set_recall",
                "set_map",
                "set_F",
                "num_nonrel_judged_ret",
                "map_avgjg",
                "P_avgjg",
                "Rprec_mult_avgjg",
                "yaap",
                "rbp",
                "rbp_resid",
                "unj",
            ]
        );
        let orders: Vec<u8> = table().iter().map(|e| e.order).collect();
        assert!(orders.windows(2).all(|w| w[0] < w[1]), "distinct orders");
        let official: Vec<&str> = official().map(|e| e.name).collect();
        assert_eq!(official, names[..12]);
    }

    #[test]
    fn official_is_thirty_lines_in_table_order() {
        let n = names_of(&[]);
        assert_eq!(n.len(), 30);
        assert_eq!(
            &n[..6],
            &["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map"]
        );
        assert_eq!(n[10], "iprec_at_recall_0.00");
        assert_eq!(n[20], "iprec_at_recall_1.00");
        assert_eq!(n[21], "P_5");
        assert_eq!(n[29], "P_1000");
        assert_eq!(names_of(&["official"]), n);
    }

    #[test]
    fn table_order_first_params_win_sorted_cutoffs() {
        assert_eq!(names_of(&["P.10,5", "map", "P.20"]), ["map", "P_5", "P_10"]);
        assert_eq!(
            names_of(&["set_F.0.5", "ndcg_cut.10"]),
            ["ndcg_cut_10", "set_F_0.5"]
        );
        assert_eq!(
            names_of(&["success"]),
            ["success_1", "success_5", "success_10"]
        );
        assert_eq!(
            names_of(&["iprec_at_recall.0.5,0.1"]),
            ["iprec_at_recall_0.10", "iprec_at_recall_0.50"]
        );
        assert_eq!(names_of(&["map", "map"]), ["map"]);
    }

    #[test]
    fn integer_and_per_goal_follow_the_measures() {
        let all = resolve(&[
            "official",
            "set_F",
            "ndcg_cut.3",
            "num_nonrel_judged_ret",
            "gm_bpref",
            "set_map",
            "set_relative_P",
        ])
        .unwrap();
        for m in &all {
            let integer = [
                "num_q",
                "num_ret",
                "num_rel",
                "num_rel_ret",
                "num_nonrel_judged_ret",
            ]
            .contains(&&*m.name);
            assert_eq!(m.integer, integer, "{}", m.name);
            let summary_only = ["runid", "num_q", "gm_map", "gm_bpref"].contains(&&*m.name);
            assert_eq!(m.per_goal, !summary_only, "{}", m.name);
            if let Some(measure) = m.measure {
                // What trec_eval prints is what `trec_name` gives, for default parameters.
                assert_eq!(measure.trec_name().unwrap(), m.name);
                assert_eq!(Measure::parse(&m.name).unwrap(), [measure]);
            }
        }
    }

    #[test]
    fn errors() {
        // A preference measure: exit 4 (trec_eval's "Can't calculate measure" under -R qrels),
        // after any other error of the arguments.
        let e = resolve(&["prefs_simp"]).unwrap_err();
        assert_eq!(e.code, 4);
        assert!(
            e.message
                .contains("`prefs_simp` reads preference judgments"),
            "{}",
            e.message
        );
        assert_eq!(resolve(&["all_prefs"]).unwrap_err().code, 4);
        assert_eq!(resolve(&["prefs_simp", "foo"]).unwrap_err().code, 1);
        assert_eq!(resolve(&["prefs", "P.5,5"]).unwrap_err().code, 2);
        // Resolved: the engine refuses it without judgment groups (exit 4).
        assert!(resolve(&["map_avgjg"]).is_ok());
        assert_eq!(resolve(&["foo"]).unwrap_err().code, 1);
        assert_eq!(resolve(&["P.5,5"]).unwrap_err().code, 2);
        assert_eq!(resolve(&["P."]).unwrap_err().code, 1);
        assert_eq!(resolve(&["map.3"]).unwrap_err().code, 2);
        assert_eq!(resolve(&["set_F.1/4"]).unwrap_err().code, 2);
        assert_eq!(resolve(&["P_5"]).unwrap_err().code, 1);
        let e = resolve(&["G.1=2"]).unwrap_err();
        assert_eq!(
            (e.code, &*e.message),
            (2, "G with custom gains (`1=2`) is not supported")
        );
        assert_eq!(resolve(&["iprec_at_recall.0.5,0.50"]).unwrap_err().code, 2);
        assert_eq!(resolve(&["P.0"]).unwrap_err().code, 2);
    }

    #[test]
    fn utility_reads_numbers_as_atof_and_keeps_the_text() {
        for (text, want) in [
            ("2", 2.0),
            ("-1", -1.0),
            (" +0.5x", 0.5),
            ("1e2", 100.0),
            ("1e", 1.0),
            (".5", 0.5),
            ("5.", 5.0),
            ("abc", 0.0),
            ("-", 0.0),
            ("", 0.0),
        ] {
            assert_eq!(atof(text), want, "{text:?}");
        }
        let v = resolve(&["utility.2,-1,0,0"]).unwrap();
        assert_eq!(v[0].name, "utility_2,-1,0,0");
        assert_eq!(
            v[0].measure,
            Some(Measure::Utility {
                coefficients: [2.0, -1.0, 0.0, 0.0]
            })
        );
        assert!(!v[0].integer && v[0].per_goal);
        assert_eq!(resolve(&["utility"]).unwrap()[0].name, "utility");
        assert_eq!(resolve(&["utility.1,2,3"]).unwrap_err().code, 2);
        assert_eq!(
            Measure::parse("utility_2,x,0,0").unwrap(),
            [Measure::Utility {
                coefficients: [2.0, 0.0, 0.0, 0.0]
            }]
        );
    }

    #[test]
    fn cutoffs_are_read_as_atol_reads_them() {
        assert_eq!(
            names_of(&["ndcg_cut.10,20,23.4"]),
            ["ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]
        );
        assert_eq!(names_of(&["P. 7,+3"]), ["P_3", "P_7"]);
        assert_eq!(resolve(&["P.5,5.9"]).unwrap_err().code, 2);
        assert_eq!(resolve(&["P.x"]).unwrap_err().code, 2);
        assert_eq!(resolve(&["P.-3"]).unwrap_err().code, 2);
        assert_eq!(atol("23.4"), 23);
        assert_eq!(atol(" -12x"), -12);
        assert_eq!(atol(""), 0);
    }

    #[test]
    fn set_f_keeps_the_parameter_text() {
        let v = resolve(&["set_F.0.50,3"]).unwrap();
        assert_eq!(v[0].name, "set_F_0.50,3");
        assert_eq!(
            v[0].measure,
            Some(Measure::SetF {
                beta2: 0.5,
                threshold: None
            })
        );
    }
}

/// Whether `s` is a parameter list as pytrec_eval spells it after an underscore: numbers (digits,
/// one optional point followed by digits) separated by commas (`5`, `0.10`, `5,10`).
fn is_pytrec_params(s: &str) -> bool {
    !s.is_empty()
        && s.split(',').all(|p| {
            let (int, frac) = p.split_once('.').unwrap_or((p, "0"));
            !int.is_empty()
                && !frac.is_empty()
                && int.bytes().all(|b| b.is_ascii_digit())
                && frac.bytes().all(|b| b.is_ascii_digit())
        })
}

/// A measure as trec_eval takes it, from a name as pytrec_eval also spells it: `base_params` for
/// `base.params` (`P_5`, `ndcg_cut_10`, `iprec_at_recall_0.10`: the first underscore followed by a
/// parameter list only). A name trec_eval takes as it is, or that has no such spelling, is kept.
pub fn pytrec_name(measure: &str) -> String {
    if resolve(&[measure]).is_ok() {
        return measure.to_string();
    }
    for (at, _) in measure.match_indices('_') {
        let (base, params) = (&measure[..at], &measure[at + 1..]);
        if !base.is_empty() && is_pytrec_params(params) {
            let dotted = format!("{base}.{params}");
            if resolve(&[&dotted]).is_ok() {
                return dotted;
            }
            break;
        }
    }
    measure.to_string()
}

/// The nicknames pytrec_eval takes for sets of measures (`official`, `set`, `all_trec`), each
/// as the base names of the entries lemma-eval computes, in table order.
pub const PYTREC_NICKNAMES: [&str; 3] = ["official", "set", "all_trec"];

/// The members of one of [`PYTREC_NICKNAMES`] as pytrec_eval (trec_eval 9.0.8) lists them,
/// restricted to the table's entries, in table order. `None` for another name.
pub fn pytrec_nickname(name: &str) -> Option<Vec<&'static str>> {
    if !PYTREC_NICKNAMES.contains(&name) {
        return None;
    }
    let names = nickname(name, TrecRules::V9).expect("a nickname");
    Some(
        table()
            .iter()
            .filter(|e| names.contains(&e.name))
            .map(|e| e.name)
            .collect(),
    )
}

/// pytrec_eval's reading of a set of measure names (its `RelevanceEvaluator`): nicknames
/// ([`pytrec_nickname`]) expanded, then each as
/// [`pytrec_name`] reads it; the parameters one measure is given in several names are taken
/// together (`{"P.5", "P.10"}` is `P.5,10`, where trec_eval's command line keeps the first `-m`
/// with parameters), in byte order of the names; a bare name stays bare when no name gives it
/// parameters. Then [`resolve`]d.
pub fn resolve_pytrec<S: AsRef<str>>(names: &[S]) -> Result<Vec<TrecMeasure>, TrecMeasureError> {
    // pytrec_eval expands its nicknames first; an empty set asks for no measure at all (where
    // trec_eval's command line without `-m` gives `official`).
    let mut spelled: Vec<String> = Vec::new();
    for n in names {
        match pytrec_nickname(n.as_ref()) {
            Some(members) => spelled.extend(members.into_iter().map(String::from)),
            None => spelled.push(pytrec_name(n.as_ref())),
        }
    }
    if spelled.is_empty() {
        return Ok(Vec::new());
    }
    spelled.sort();
    spelled.dedup();
    let mut merged: Vec<(String, Vec<String>)> = Vec::new();
    for m in &spelled {
        let (base, params) = match m.split_once('.') {
            Some((b, p)) => (b, Some(p)),
            None => (m.as_str(), None),
        };
        let at = match merged.iter().position(|(b, _)| b == base) {
            Some(i) => i,
            None => {
                merged.push((base.to_string(), Vec::new()));
                merged.len() - 1
            }
        };
        for p in params.into_iter().flat_map(|p| p.split(',')) {
            if !merged[at].1.iter().any(|q| q == p) {
                merged[at].1.push(p.to_string());
            }
        }
    }
    // pytrec_eval hands trec_eval 11pt_avg's levels sorted (trec_eval reads them in the order
    // given: `11pt_avg.1.0,0.5` is not `11pt_avg.0.5,1.0` on its command line).
    for (base, params) in &mut merged {
        if base == "11pt_avg" {
            params.sort_by(|a, b| atof(a).total_cmp(&atof(b)));
        }
    }
    let args: Vec<String> = merged
        .into_iter()
        .map(|(b, p)| match p.is_empty() {
            true => b,
            false => format!("{b}.{}", p.join(",")),
        })
        .collect();
    resolve(&args)
}

#[cfg(test)]
mod pytrec_tests {
    use super::*;

    #[test]
    fn pytrec_spellings_read_as_trec_eval_names() {
        assert_eq!(pytrec_name("P_5"), "P.5");
        assert_eq!(pytrec_name("ndcg_cut_10"), "ndcg_cut.10");
        assert_eq!(pytrec_name("iprec_at_recall_0.10"), "iprec_at_recall.0.10");
        assert_eq!(pytrec_name("P.5,10"), "P.5,10");
        assert_eq!(pytrec_name("map"), "map");
        assert_eq!(pytrec_name("set_F"), "set_F");
        assert_eq!(pytrec_name("no_such_5"), "no_such_5");
        assert_eq!(pytrec_name("P_x"), "P_x");
    }

    #[test]
    fn parameters_of_one_measure_are_taken_together() {
        let names = |ms: &[&str]| -> Vec<String> {
            resolve_pytrec(ms)
                .unwrap()
                .into_iter()
                .map(|m| m.name)
                .collect()
        };
        assert_eq!(names(&["P.5", "P_10", "map"]), ["map", "P_5", "P_10"]);
        assert_eq!(names(&["P", "P.5"]), ["P_5"]);
        assert_eq!(
            names(&["ndcg_cut_10", "ndcg_cut.5"]),
            ["ndcg_cut_5", "ndcg_cut_10"]
        );
        assert!(resolve_pytrec(&["nope"]).is_err());
        // 11pt_avg's levels sorted, as pytrec_eval hands them to trec_eval.
        assert_eq!(
            names(&["11pt_avg.1.0,0.5", "11pt_avg.0.25"]),
            ["11pt_avg_0.25,0.5,1.0"]
        );
    }

    #[test]
    fn nicknames_and_the_empty_set() {
        let names = |ms: &[&str]| -> Vec<String> {
            resolve_pytrec(ms)
                .unwrap()
                .into_iter()
                .map(|m| m.name)
                .collect()
        };
        assert!(resolve_pytrec::<&str>(&[]).unwrap().is_empty());
        // official: trec_eval's default, 30 printed names with runid.
        assert_eq!(names(&["official"]), names_of_resolve(&[]));
        assert_eq!(names(&["official"]).len(), 30);
        assert_eq!(
            names(&["set"]),
            [
                "runid",
                "num_q",
                "num_ret",
                "num_rel",
                "num_rel_ret",
                "utility",
                "set_P",
                "set_relative_P",
                "set_recall",
                "set_map",
                "set_F"
            ]
        );
        let all = names(&["all_trec"]);
        for e in table() {
            let listed = all
                .iter()
                .any(|n| *n == e.name || n.starts_with(&format!("{}_", e.name)));
            assert_eq!(listed, ALL_TREC_9.contains(&e.name), "{}", e.name);
        }
        // A nickname beside a parameterised name: the parameters win, as in pytrec_eval.
        let with_p = names(&["official", "P.7"]);
        assert!(with_p.contains(&"P_7".to_string()) && !with_p.contains(&"P_5".to_string()));
        assert_eq!(pytrec_nickname("map"), None);
    }

    fn names_of_resolve(args: &[&str]) -> Vec<String> {
        resolve(args).unwrap().into_iter().map(|m| m.name).collect()
    }
}
