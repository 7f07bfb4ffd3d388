//! Values files (`eval --values-out`): every goal's value of every measure, kept so that a later
//! [`compare`](crate::compare) needs the values, not the predictions (docs/FORMAT.md, "Values
//! files").
//!
//! A [`ValuesRecorder`] takes an evaluation's rows as they come and encodes them with the
//! evaluation's plan (measures and every option that changes a value) and goal counts;
//! [`Values::read`] reads a file back, checked (magic, version, length, checksum, every count).
//! The goals are kept in the order the evaluation gave them: a comparison from the file draws
//! the same random numbers for the same goals as one from the predictions.

use crate::partial::{put_bytes, put_plan, put_u32, put_u64, PlanKey, Reader};
use crate::{EvalOptions, GoalRow};
use lemma_accum::{GoalCounts, Measure};
use lemma_ingest::Names;
use std::path::Path;

/// The first eight bytes of a values file.
pub const MAGIC: &[u8; 8] = b"LEMVALUE";
/// The encoding's version. A reader also reads version 1 (the same without the premise
/// protocol's part of the plan: read as evaluated without a corpus) and refuses others.
pub const VERSION: u32 = 2;

/// One evaluation's values, read from a values file.
#[derive(Clone, Debug)]
pub struct Values {
    plan: PlanKey,
    /// Its goal counts, as `eval` reports them.
    pub counts: GoalCounts,
    /// The warnings its evaluation gave.
    pub warnings: Vec<String>,
    /// The goals' names, in the order evaluated ([`Values::goal`]).
    names: Names,
    /// `values[measure][goal]`, NaN where the goal has no value.
    pub values: Vec<Vec<f64>>,
}

/// Collects an evaluation's rows, then encodes them as a values file.
pub struct ValuesRecorder {
    plan: PlanKey,
    goals: Names,
    values: Vec<Vec<f64>>,
}

/// The plan key of an evaluation with `options` whose rows carry `measures`' values.
pub(crate) fn plan_key(options: &EvalOptions, measures: &[Measure]) -> PlanKey {
    let mut key = PlanKey::of(options, options.universe);
    key.measures = measures.to_vec();
    key
}

impl ValuesRecorder {
    /// A recorder for an evaluation with `options` whose rows carry the values of `measures`
    /// (its plan's, in order).
    pub fn new(options: &EvalOptions, measures: &[Measure]) -> ValuesRecorder {
        ValuesRecorder {
            plan: plan_key(options, measures),
            goals: Names::default(),
            values: vec![Vec::new(); measures.len()],
        }
    }

    /// One goal's row.
    pub fn add(&mut self, row: &GoalRow) {
        self.add_values(&row.goal, row.values.iter().copied());
    }

    /// One goal's values, in the recorder's measures' order (a row of a wider plan, picked).
    pub fn add_values(&mut self, goal: &[u8], values: impl Iterator<Item = Option<f64>>) {
        self.goals.push(goal);
        for (col, v) in self.values.iter_mut().zip(values) {
            col.push(v.unwrap_or(f64::NAN));
        }
    }

    /// The values recorded, with the evaluation's goal counts and warnings: what a values file
    /// of them reads back as, without the file.
    pub fn finish(self, counts: GoalCounts, warnings: Vec<String>) -> Values {
        Values {
            plan: self.plan,
            counts,
            warnings,
            names: self.goals,
            values: self.values,
        }
    }

    /// The file's bytes, with the evaluation's goal counts and warnings.
    pub fn encode(&self, counts: &GoalCounts, warnings: &[String]) -> Vec<u8> {
        let mut b = Vec::new();
        put_plan(&mut b, &self.plan, true);
        for x in counts.to_array() {
            put_u64(&mut b, x);
        }
        put_u32(&mut b, warnings.len() as u32);
        for w in warnings {
            put_bytes(&mut b, w.as_bytes());
        }
        put_u64(&mut b, self.goals.len() as u64);
        for g in self.goals.iter() {
            put_bytes(&mut b, g);
        }
        for col in &self.values {
            for v in col {
                b.extend_from_slice(&v.to_bits().to_le_bytes());
            }
        }
        let mut out = Vec::with_capacity(b.len() + 24);
        out.extend_from_slice(MAGIC);
        put_u32(&mut out, VERSION);
        put_u64(&mut out, b.len() as u64);
        put_u32(&mut out, crc32fast::hash(&b));
        out.extend_from_slice(&b);
        out
    }
}

/// Whether the file at `path` begins with a values file's magic (a path that cannot be read, or
/// `-`, is not one).
pub fn is_values_file(path: &Path) -> bool {
    use std::io::Read;
    if path == Path::new("-") {
        return false;
    }
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|_| &head == MAGIC)
}

impl Values {
    /// Reads a values file: errors name the file and say what was expected.
    pub fn read(path: &Path) -> Result<Values, String> {
        let bytes =
            std::fs::read(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        Values::decode(&bytes).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Reads an encoding back; the error says what is wrong.
    pub fn decode(bytes: &[u8]) -> Result<Values, String> {
        if bytes.len() < 8 || &bytes[..8] != MAGIC {
            return Err("not a lemma-eval values file (expected it to begin with LEMVALUE)".into());
        }
        if bytes.len() < 24 {
            return Err("truncated: the header is cut short".into());
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4"));
        if version != VERSION && version != 1 {
            return Err(format!(
                "values format version {version}, expected {VERSION}"
            ));
        }
        let len = u64::from_le_bytes(bytes[12..20].try_into().expect("8"));
        let crc = u32::from_le_bytes(bytes[20..24].try_into().expect("4"));
        let body = &bytes[24..];
        if (body.len() as u64) < len {
            return Err(format!(
                "truncated: {} of {len} bytes after the header",
                body.len()
            ));
        }
        if body.len() as u64 > len {
            return Err(format!(
                "{} bytes after the end of the values",
                body.len() as u64 - len
            ));
        }
        if crc32fast::hash(body) != crc {
            return Err("corrupt: the checksum does not match the contents".into());
        }
        let mut r = Reader { b: body, at: 0 };
        let e = |e: crate::PartialError| e.0;
        let plan = r.plan(version >= 2).map_err(e)?;
        let mut counts = [0u64; 5];
        for c in &mut counts {
            *c = r.u64().map_err(e)?;
        }
        let nw = r.u32().map_err(e)?;
        let mut warnings = Vec::new();
        for _ in 0..nw {
            let w = std::str::from_utf8(r.bytes().map_err(e)?)
                .map_err(|_| "corrupt: a warning is not UTF-8".to_string())?;
            warnings.push(w.to_string());
        }
        let n = r.u64().map_err(e)?;
        // Each goal takes at least its 8-byte length: a count beyond the bytes left is corrupt.
        if n > (body.len() - r.at) as u64 / 8 {
            return Err(format!("corrupt: {n} goals in {} bytes", body.len() - r.at));
        }
        // One buffer for every name (not one allocation a goal: 2 M goals read in a moment).
        let mut names = Names::default();
        for _ in 0..n {
            names.push(r.bytes().map_err(e)?);
        }
        let nm = plan.measures.len();
        let need = (n as u128) * (nm as u128) * 8;
        if need != (body.len() - r.at) as u128 {
            return Err(format!(
                "corrupt: {n} goals × {nm} measures need {need} bytes of values, {} left",
                body.len() - r.at
            ));
        }
        let values = (0..nm)
            .map(|_| {
                (0..n)
                    .map(|_| f64::from_bits(r.u64().expect("length checked")))
                    .collect()
            })
            .collect();
        let counts = GoalCounts::from_array(counts);
        Ok(Values {
            plan,
            counts,
            warnings,
            names,
            values,
        })
    }

    /// How many goals it holds values of.
    pub fn goal_count(&self) -> usize {
        self.names.len()
    }

    /// The name of goal `i` (in the order evaluated).
    pub fn goal(&self, i: usize) -> &[u8] {
        self.names.get(i)
    }

    /// The measures it holds values of.
    pub fn measures(&self) -> &[Measure] {
        &self.plan.measures
    }

    /// The column of each of `measures` in [`Values::values`], when the evaluation recorded
    /// was one with `options`; otherwise what differs (each `name: this file vs wanted`).
    pub fn columns(
        &self,
        options: &EvalOptions,
        measures: &[Measure],
    ) -> Result<Vec<usize>, String> {
        let mut want = plan_key(options, measures);
        want.measures = self.plan.measures.clone();
        let d = self.plan.differences(&want);
        if !d.is_empty() {
            return Err(format!(
                "evaluated with other options than this comparison's ({})",
                d.join(", ")
            ));
        }
        (measures.iter())
            .map(|m| {
                (self.plan.measures.iter().position(|x| x == m)).ok_or_else(|| {
                    format!(
                        "holds no values of {m} (its measures: {}); evaluate with -m {m}",
                        (self.plan.measures.iter())
                            .map(|m| m.to_string())
                            .collect::<Vec<_>>()
                            .join(" ")
                    )
                })
            })
            .collect()
    }
}
