//! `--by gold-size|novelty|ATTR` (repeatable): besides the overall summary, one summary per
//! stratum of goals, labelled `KEY=VALUE` (docs/METRICS.md §9). The summaries of the plan keep
//! them ([`lemma_accum::Stratifier`]); this module says which strata a goal is in.
//!
//! - `gold-size`: the goal's `R` in buckets `1`, `2-3`, `4-7`, `8-15`, `16+` (`0` for a goal of
//!   no relevant lemma, evaluated under `--keep-zero-relevant`).
//! - `novelty`: `novel` when one of the goal's relevant lemmas is not in the training premises
//!   (`--train-premises FILE`, names one per line), else `seen`. The actual sets are read again
//!   for it (a file, not a stream).
//! - any other key (`theorem`, `file`, or a record key): the goal's attribute in the actual sets'
//!   JSONL records and `--goals FILE`, as `--group-by` reads it. A goal without one is in no
//!   stratum of that key: counted, and named in a warning (an error under `--strict`).
//! - `origin` splits recall rather than goals (a goal's relevant premises lie in its own file
//!   and in others at once): each `R@k` asked for is followed by `R(origin=in-file)@k` and
//!   `R(origin=imported)@k`, measures of the summary and of every stratum
//!   ([`EvaluatorBuilder`](crate::EvaluatorBuilder) adds them). It needs the corpus and an
//!   `R@k`.

use lemma_accum::{Placed, Stratifier, Summary};
use lemma_ingest::{show, ErrorKind, GoalGroups, InputError, Interner};
use std::path::{Path, PathBuf};

/// The buckets of `gold-size`: the least `R` of each, and its label.
const GOLD_SIZES: [(u64, &str); 6] = [
    (0, "0"),
    (1, "1"),
    (2, "2-3"),
    (4, "4-7"),
    (8, "8-15"),
    (16, "16+"),
];

/// One `--by` key.
#[derive(Debug)]
enum Key {
    GoldSize,
    /// Goal ids (of the actual sets), and whether each is novel.
    Novelty {
        goals: Interner,
        novel: Vec<bool>,
    },
    Attr(GoalGroups),
}

/// One key, named.
#[derive(Debug)]
struct ByKey {
    name: String,
    key: Key,
}

/// The strata of `--by`: see the [module documentation](self).
#[derive(Debug)]
pub struct Strata {
    keys: Vec<ByKey>,
    /// `origin` was given: recall is split by origin (no strata of goals).
    origin: bool,
    strict: bool,
    /// The files the attributes were read from, for messages.
    sources: Vec<String>,
}

/// Where `--by` reads what it needs.
#[derive(Clone, Debug, Default)]
pub struct StrataSources {
    /// The actual sets (their JSONL records give attributes; `novelty` reads their judgments).
    pub actual: Option<PathBuf>,
    /// `--goals FILE`: goal records adding to and overriding the actual sets' attributes.
    pub goals: Option<PathBuf>,
    /// `--train-premises FILE`: the premise names used in training, one per line.
    pub train_premises: Option<PathBuf>,
    /// The relevance level (`novelty` reads the goals' relevant lemmas).
    pub relevance_level: i32,
    /// Goals in no stratum of a key are an error.
    pub strict: bool,
}

/// A goal that no record gave a key's attribute, for the report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StrataReport {
    /// Per key: `(key, goals evaluated in none of its strata, the first of them by name)`.
    pub missing: Vec<(String, u64, Option<String>)>,
}

impl Strata {
    /// The strata of `keys` (each `gold-size`, `novelty`, or an attribute), read from `from`.
    /// Errors: a key given twice or empty, `novelty` without `train_premises` (or with actual
    /// sets read from a stream), `train_premises` without `novelty`, and unreadable files.
    pub fn load(keys: &[String], from: &StrataSources) -> Result<Strata, crate::EvalError> {
        let opt = |m: String| crate::EvalError::Options(m);
        if from.train_premises.is_some() && !keys.iter().any(|k| k == "novelty") {
            return Err(opt("--train-premises is read by --by novelty only".into()));
        }
        let mut sources = Vec::new();
        let mut out: Vec<ByKey> = Vec::new();
        let mut origin = false;
        for (i, name) in keys.iter().enumerate() {
            if name.is_empty() {
                return Err(opt(
                    "--by: expected gold-size, novelty, origin or a record key".into(),
                ));
            }
            if keys[..i].contains(name) {
                return Err(opt(format!("--by {name} is given twice")));
            }
            let key = match name.as_str() {
                "gold-size" => Key::GoldSize,
                "novelty" => novelty(from)?,
                "origin" => {
                    origin = true;
                    continue;
                }
                attr => {
                    let mut groups = GoalGroups::new(attr);
                    if let Some(a) = jsonl_actual(from.actual.as_deref())? {
                        groups.read(a)?;
                        sources.push(a.display().to_string());
                    }
                    if let Some(g) = &from.goals {
                        groups.read(g)?;
                        sources.push(g.display().to_string());
                    }
                    Key::Attr(groups)
                }
            };
            out.push(ByKey {
                name: name.clone(),
                key,
            });
        }
        if out.len() > u32::MAX as usize {
            return Err(opt("--by: too many keys".into()));
        }
        sources.dedup();
        Ok(Strata {
            keys: out,
            origin,
            strict: from.strict,
            sources,
        })
    }

    /// The keys that make strata of goals, as given (`origin` is not one: see
    /// [`Strata::splits_origin`]).
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().map(|k| k.name.as_str())
    }

    /// Whether there are strata of goals (a key besides `origin`).
    pub fn stratifies(&self) -> bool {
        !self.keys.is_empty()
    }

    /// Whether `origin` was given: each `R@k` is split by origin.
    pub fn splits_origin(&self) -> bool {
        self.origin
    }

    /// `measures` with `R(origin=in-file)@k` and `R(origin=imported)@k` after each `R@k` (those
    /// not there already) when `origin` was given.
    pub(crate) fn split_measures(&self, measures: &mut Vec<lemma_accum::Measure>) {
        use lemma_accum::{Measure, Origin, RecallNorm};
        if !self.origin {
            return;
        }
        let mut out = Vec::with_capacity(measures.len() * 3);
        for &m in measures.iter() {
            out.push(m);
            if let Measure::R {
                k,
                norm: RecallNorm::Rel,
            } = m
            {
                for origin in Origin::ALL {
                    let split = Measure::ROrigin { k, origin };
                    if !measures.contains(&split) && !out.contains(&split) {
                        out.push(split);
                    }
                }
            }
        }
        *measures = out;
    }

    /// After an evaluation: the goals in no stratum of a key (from `summary`, the
    /// evaluation's: each evaluation counts its own goals), or under `--strict` an error naming
    /// the first by name.
    pub(crate) fn finish(&self, summary: &Summary) -> Result<StrataReport, crate::EvalError> {
        let mut report = StrataReport::default();
        for (key, n, first) in summary.unplaced() {
            let Some(k) = self.keys.get(key as usize) else {
                continue; // Not one of these strata's keys: not this plan's summary.
            };
            let g = show(first);
            if self.strict {
                return Err(crate::EvalError::Options(format!(
                    "--by {}: goal `{g}` has no `{}` in the records read ({}) (--strict)",
                    k.name,
                    attr_keys(&k.key).join("` or `"),
                    if self.sources.is_empty() {
                        "none: give --goals FILE".to_string()
                    } else {
                        self.sources.join(", ")
                    }
                )));
            }
            report.missing.push((k.name.clone(), n, Some(g)));
        }
        Ok(report)
    }
}

/// The record keys an attribute key reads (none for the others).
fn attr_keys(k: &Key) -> Vec<&str> {
    match k {
        Key::Attr(g) => g.keys(),
        _ => Vec::new(),
    }
}

/// `actual` when it is a JSONL text file that can be read again (not a stream).
fn jsonl_actual(actual: Option<&Path>) -> Result<Option<&Path>, InputError> {
    let Some(a) = actual.filter(|a| !lemma_ingest::read_once(a)) else {
        return Ok(None);
    };
    let jsonl = crate::InputKind::of(a)? == crate::InputKind::Text
        && lemma_ingest::open_with(a, false)?.format == lemma_ingest::Format::Jsonl;
    Ok(jsonl.then_some(a))
}

/// The `novelty` key: the actual sets read again, each goal novel when a relevant lemma is not
/// in the training premises.
fn novelty(from: &StrataSources) -> Result<Key, crate::EvalError> {
    let opt = |m: &str| crate::EvalError::Options(m.into());
    let Some(train) = &from.train_premises else {
        return Err(opt(
            "--by novelty needs --train-premises FILE (the premises used in training, one name \
             a line)",
        ));
    };
    let Some(actual) = from
        .actual
        .as_deref()
        .filter(|a| !lemma_ingest::read_once(a))
    else {
        return Err(opt(
            "--by novelty reads the actual sets a second time: give their path (a file, not a stream)",
        ));
    };
    let mut sets = crate::read_actual(actual)?;
    let mut trained = vec![false; sets.lemmas.len()];
    // An empty file trains on nothing: every goal with a relevant lemma is novel.
    let mut reader: Box<dyn std::io::BufRead> = match lemma_ingest::open_with(train, false) {
        Ok(input) => Box::new(input.reader),
        Err(e) if e.kind == ErrorKind::Empty => Box::new(std::io::empty()),
        Err(e) => return Err(e.into()),
    };
    let mut buf = Vec::new();
    let mut line = 0u64;
    loop {
        buf.clear();
        let n = std::io::BufRead::read_until(&mut reader, b'\n', &mut buf)
            .map_err(|e| InputError::read(train, e))?;
        if n == 0 {
            break;
        }
        line += 1;
        let name = buf.trim_ascii();
        if name.contains(&0) {
            return Err(InputError::at(
                ErrorKind::Syntax,
                train,
                line,
                0,
                "expected a premise name (a line of text without NUL bytes)".to_string(),
            )
            .into());
        }
        if let Some(id) = sets.lemmas.get(name) {
            trained[id as usize] = true;
        }
    }
    let level = from.relevance_level;
    let novel = (sets.truths())
        .map(|t| {
            t.entries()
                .any(|(id, g)| g >= level && !trained[id as usize])
        })
        .collect();
    Ok(Key::Novelty {
        goals: std::mem::take(&mut sets.goals),
        novel,
    })
}

impl Stratifier for Strata {
    fn strata_of(&self, goal: &[u8], relevant: u64, out: &mut Vec<Placed>) {
        for (i, k) in self.keys.iter().enumerate() {
            let value = match &k.key {
                Key::GoldSize => Some(GOLD_SIZES.iter().rposition(|&(least, _)| relevant >= least)),
                Key::Novelty { goals, novel } => goals
                    .get(goal)
                    .map(|g| Some(if novel[g as usize] { 0 } else { 1 })),
                Key::Attr(groups) => groups.get(goal).map(|g| Some(g as usize)),
            }
            .flatten();
            out.push(match value {
                Some(v) => Placed::In((i as u64) << 32 | v as u64),
                None => Placed::Nowhere(i as u32),
            });
        }
    }

    fn label(&self, stratum: u64) -> String {
        let k = &self.keys[(stratum >> 32) as usize];
        let v = (stratum & 0xffff_ffff) as usize;
        let value = match &k.key {
            Key::GoldSize => GOLD_SIZES[v].1.to_string(),
            Key::Novelty { .. } => ["novel", "seen"][v].to_string(),
            Key::Attr(groups) => show(groups.group_name(v as u32)),
        };
        format!("{}={value}", k.name)
    }
}

impl StrataReport {
    /// The warnings for goals in no stratum of a key.
    pub fn warnings(&self) -> Vec<String> {
        (self.missing.iter())
            .map(|(key, n, first)| {
                format!(
                    "--by {key}: {n} goals have no `{key}` in the records read (the first by name: `{}`): \
                     they are in no {key} stratum (--strict makes this an error)",
                    first.as_deref().unwrap_or("?")
                )
            })
            .collect()
    }
}
