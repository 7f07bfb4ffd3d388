//! Summaries that travel: a [`Partial`] is what one shard of an evaluation saw (a process, a
//! machine, a session), encoded in a few kilobytes, merged exactly with the other shards', and
//! finished into the summary one evaluation over all the shards' predictions would have given.
//!
//! The goals no shard predicted are the subtle part: each is evaluated (as empty, or skipped, per
//! `--missing`) once, after the merge, never once per shard. A shard cannot know which goals the
//! others predicted, and the merge has no actual sets to evaluate them with, so a partial carries:
//!
//! * `predicted`: the summary of the goals this shard predicted (and of the goals it skipped);
//! * `seen`: which goals of the actual sets it predicted (a roaring bitmap of goal ids: a few
//!   bytes for a contiguous range of goals, at most one bit a goal);
//! * `empty_all`: the summary of *every* goal of the actual sets evaluated as a goal without
//!   predictions (the same in every shard of one evaluation);
//! * `empty_seen`: the same for the goals in `seen` only.
//!
//! Merging adds `predicted` and `empty_seen`, unites `seen` (a goal in two shards is an error) and
//! checks `empty_all`; the summary is then `predicted + empty_all − empty_seen`: the goals no
//! shard saw, each counted once. Every sum is exact ([`lemma_accum::ExactSum`]), so the result
//! equals one pass to the last bit, whatever the number and order of shards.
//!
//! A partial also carries the plan (measures and every option that changes a number) and a
//! fingerprint of the actual sets: merging partials of different plans or actual sets is an error
//! that says what differs. The encoding is docs/FORMAT.md's "Summary files".

use crate::options::{DuplicateMode, EvalOptions, MissingMode, OrderMode, TieMode, ZeroRelMode};
use crate::outcome::{empty_goal, EmptyGoal, EvalError};
use crate::Evaluator;
use lemma_accum::{
    ExactSum, GoalAccumulator, GoalCounts, Interpolation, Measure, Summary, SummaryState,
};
use lemma_ingest::ActualSets;
use roaring::RoaringBitmap;
use std::fmt;

/// The first eight bytes of a summary file.
pub const MAGIC: &[u8; 8] = b"LEMSUMRY";
/// The encoding's version: a reader refuses others.
pub const VERSION: u32 = 1;

/// Everything that changes a number, as a partial records it.
#[derive(Clone, Debug, PartialEq)]
struct PlanKey {
    measures: Vec<Measure>,
    relevance_level: i32,
    interpolation: Interpolation,
    order: Option<OrderMode>,
    ties: TieMode,
    duplicates: DuplicateMode,
    depth: Option<u64>,
    missing: MissingMode,
    zero_rel: ZeroRelMode,
    f32_scores: bool,
    universe: Option<u64>,
}

impl PlanKey {
    fn of(opts: &EvalOptions, universe: Option<u64>) -> PlanKey {
        PlanKey {
            measures: opts.measures.clone(),
            relevance_level: opts.relevance_level,
            interpolation: opts.interpolation,
            order: opts.ranking.order,
            ties: opts.ranking.ties,
            duplicates: opts.ranking.duplicates,
            depth: opts.ranking.depth,
            missing: opts.missing,
            zero_rel: opts.zero_rel,
            f32_scores: opts.f32_scores,
            universe,
        }
    }

    /// What differs from `other`, one `name: ours vs theirs` per field.
    fn differences(&self, other: &PlanKey) -> Vec<String> {
        let mut d = Vec::new();
        let mut cmp = |name: &str, a: String, b: String| {
            if a != b {
                d.push(format!("{name}: {a} vs {b}"));
            }
        };
        let list = |m: &[Measure]| {
            m.iter()
                .map(|m| m.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        cmp("measures", list(&self.measures), list(&other.measures));
        cmp(
            "relevance level",
            self.relevance_level.to_string(),
            other.relevance_level.to_string(),
        );
        let dbg = |x: &dyn fmt::Debug| format!("{x:?}").to_lowercase();
        cmp(
            "interpolation",
            dbg(&self.interpolation),
            dbg(&other.interpolation),
        );
        cmp("order", dbg(&self.order), dbg(&other.order));
        cmp("ties", dbg(&self.ties), dbg(&other.ties));
        cmp("duplicates", dbg(&self.duplicates), dbg(&other.duplicates));
        // An option's value as the command line gives it, `none` when not given.
        let opt = |x: &Option<u64>| x.map_or("none".to_string(), |v| v.to_string());
        cmp("depth", opt(&self.depth), opt(&other.depth));
        cmp("missing", dbg(&self.missing), dbg(&other.missing));
        cmp(
            "zero-relevant goals",
            dbg(&self.zero_rel),
            dbg(&other.zero_rel),
        );
        cmp("f32 scores", dbg(&self.f32_scores), dbg(&other.f32_scores));
        cmp("universe", opt(&self.universe), opt(&other.universe));
        d
    }
}

/// Which actual sets a partial was evaluated against.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct ActualKey {
    goals: u64,
    rows: u64,
    fingerprint: u64,
}

/// Mixes `x` into `h` (a multiply-rotate step: order matters).
#[inline]
fn mix(h: u64, x: u64) -> u64 {
    (h ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29)
}

impl ActualKey {
    /// The goals in id order, each with its judged lemmas' names and grades: two sets that
    /// differ in a goal, a lemma, a grade or the goals' order differ here (but for a 2^-64
    /// chance).
    fn of(actual: &ActualSets) -> ActualKey {
        let mut h = 0x6c65_6d6d_6165_7661u64;
        for (gid, truth) in actual.truths().enumerate() {
            h = mix(h, actual.goals.hash_of(gid as u32));
            h = mix(h, truth.len() as u64);
            for (id, grade) in truth.entries() {
                h = mix(h, actual.lemmas.hash_of(id));
                h = mix(h, grade as u64);
            }
        }
        ActualKey {
            goals: actual.goals.len() as u64,
            rows: actual.rows,
            fingerprint: h,
        }
    }
}

/// A summary that travels: what one shard of an evaluation saw (a process, a machine, a session),
/// encoded in a few kilobytes, merged exactly with the other shards', and finished into the
/// summary one evaluation over all the shards' predictions would have given. The goals no shard
/// predicted are evaluated once, after the merge, never once per shard.
#[derive(Clone, Debug, PartialEq)]
pub struct Partial {
    plan: PlanKey,
    actual: ActualKey,
    predicted: Summary,
    seen: RoaringBitmap,
    empty_all: Summary,
    empty_seen: Summary,
}

/// Two partials that cannot merge, a file that is not a partial: what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialError(pub String);

impl fmt::Display for PartialError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PartialError {}

impl Partial {
    /// The partial of a shard whose predicted goals gave `predicted`, `seen[g]` telling whether
    /// goal `g` of the actual sets was among them; the goals without predictions are evaluated
    /// within `universe`.
    pub(crate) fn new(
        ev: &Evaluator,
        predicted: Summary,
        seen: &[bool],
        universe: Option<u64>,
    ) -> Result<Partial, EvalError> {
        let actual = ev.actual();
        let plan = ev.plan();
        let opts = ev.options();
        if plan.pooled().is_some() {
            return Err(EvalError::Options(
                "a summary file does not hold the pooled curve: evaluate without it".into(),
            ));
        }
        let (mut empty_all, mut empty_seen) = (Summary::new(plan), Summary::new(plan));
        let mut acc = GoalAccumulator::new(plan.clone());
        let mut seen_ids = RoaringBitmap::new();
        for (gid, truth) in actual.truths().enumerate() {
            let goal = actual.goals.name(gid as u32);
            let e = empty_goal(&mut acc, goal, truth, opts, universe)?;
            let add = |s: &mut Summary| match &e {
                EmptyGoal::Skipped(fate) => s.skip(*fate),
                EmptyGoal::Evaluated(v) => s.add_empty(v),
            };
            add(&mut empty_all);
            if seen[gid] {
                add(&mut empty_seen);
                seen_ids.insert(gid as u32);
            }
        }
        Ok(Partial {
            plan: PlanKey::of(opts, universe),
            actual: ActualKey::of(actual),
            predicted,
            seen: seen_ids,
            empty_all,
            empty_seen,
        })
    }

    /// The measures, in output order.
    pub fn measures(&self) -> &[Measure] {
        &self.plan.measures
    }

    /// How many goals of the actual sets the shards predicted.
    pub fn goals_seen(&self) -> u64 {
        self.seen.len()
    }

    /// Adds `other`, a shard of the same evaluation (same plan, same actual sets, other goals).
    /// On error `self` is unchanged.
    pub fn merge(&mut self, other: &Partial) -> Result<(), PartialError> {
        let d = self.plan.differences(&other.plan);
        if !d.is_empty() {
            return Err(PartialError(format!("different options: {}", d.join("; "))));
        }
        if self.actual != other.actual || self.empty_all != other.empty_all {
            return Err(PartialError(format!(
                "different actual sets ({} goals and {} judgments vs {} and {}{})",
                self.actual.goals,
                self.actual.rows,
                other.actual.goals,
                other.actual.rows,
                if self.actual.goals == other.actual.goals && self.actual.rows == other.actual.rows
                {
                    ", with other goals, lemmas or grades"
                } else {
                    ""
                }
            )));
        }
        let both = &self.seen & &other.seen;
        if let Some(g) = both.min() {
            return Err(PartialError(format!(
                "both hold predictions for {} goals (the first is goal number {} of the actual \
                 sets): shards must hold disjoint goals",
                both.len(),
                g + 1
            )));
        }
        self.predicted.merge(&other.predicted).expect("same plan");
        self.empty_seen.merge(&other.empty_seen).expect("same plan");
        self.seen |= &other.seen;
        Ok(())
    }

    /// The summary of every goal: what the shards predicted, and the goals none of them did.
    pub fn summary(&self) -> Result<Summary, PartialError> {
        let mut s = self.predicted.clone();
        s.merge(&self.empty_all).expect("same plan");
        s.retract(&self.empty_seen)
            .map_err(|_| PartialError("inconsistent summary: its parts do not add up".into()))?;
        Ok(s)
    }

    /// The encoding (docs/FORMAT.md, "Summary files").
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        let p = &self.plan;
        put_u32(&mut b, p.measures.len() as u32);
        for m in &p.measures {
            put_bytes(&mut b, m.to_string().as_bytes());
        }
        put_u32(&mut b, p.relevance_level as u32);
        put_code(&mut b, &INTERPOLATION, &p.interpolation);
        put_code(&mut b, &ORDER, &p.order);
        put_code(&mut b, &TIES, &p.ties);
        put_code(&mut b, &DUPLICATES, &p.duplicates);
        put_opt(&mut b, p.depth);
        put_code(&mut b, &MISSING, &p.missing);
        put_code(&mut b, &ZERO_REL, &p.zero_rel);
        put_code(&mut b, &BOOL, &p.f32_scores);
        put_opt(&mut b, p.universe);
        put_u64(&mut b, self.actual.goals);
        put_u64(&mut b, self.actual.rows);
        put_u64(&mut b, self.actual.fingerprint);
        let mut seen = Vec::with_capacity(self.seen.serialized_size());
        self.seen.serialize_into(&mut seen).expect("to memory");
        put_bytes(&mut b, &seen);
        for s in [&self.predicted, &self.empty_all, &self.empty_seen] {
            put_summary(&mut b, s);
        }
        let mut out = Vec::with_capacity(b.len() + 24);
        out.extend_from_slice(MAGIC);
        put_u32(&mut out, VERSION);
        put_u64(&mut out, b.len() as u64);
        put_u32(&mut out, crc32fast::hash(&b));
        out.extend_from_slice(&b);
        out
    }

    /// Reads an encoding back; the error says what is wrong (not a summary file, another
    /// version, truncated, corrupt).
    pub fn decode(bytes: &[u8]) -> Result<Partial, PartialError> {
        let err = |m: &str| PartialError(m.to_string());
        if bytes.len() < 8 || &bytes[..8] != MAGIC {
            return Err(err(
                "not a lemma-eval summary file (expected it to begin with LEMSUMRY)",
            ));
        }
        if bytes.len() < 24 {
            return Err(err("truncated: the header is cut short"));
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4"));
        if version != VERSION {
            return Err(PartialError(format!(
                "summary format version {version}, expected {VERSION}"
            )));
        }
        let len = u64::from_le_bytes(bytes[12..20].try_into().expect("8"));
        let crc = u32::from_le_bytes(bytes[20..24].try_into().expect("4"));
        let body = &bytes[24..];
        if (body.len() as u64) < len {
            return Err(PartialError(format!(
                "truncated: {} of {len} bytes after the header",
                body.len()
            )));
        }
        if body.len() as u64 > len {
            return Err(PartialError(format!(
                "{} bytes after the end of the summary",
                body.len() as u64 - len
            )));
        }
        if crc32fast::hash(body) != crc {
            return Err(err("corrupt: the checksum does not match the contents"));
        }
        let mut r = Reader { b: body, at: 0 };
        let corrupt = |what: &str| PartialError(format!("corrupt: {what}"));
        let n = r.u32()? as usize;
        let mut measures = Vec::with_capacity(n.min(1 << 12));
        for _ in 0..n {
            let name = r.bytes()?;
            let name = std::str::from_utf8(name).map_err(|_| corrupt("a measure name"))?;
            let m =
                Measure::parse(name).map_err(|e| PartialError(format!("measure `{name}`: {e}")))?;
            let [m] = m[..] else {
                return Err(corrupt("a measure name"));
            };
            measures.push(m);
        }
        let relevance_level = r.u32()? as i32;
        let interpolation = r.code(&INTERPOLATION, "interpolation")?;
        let order = r.code(&ORDER, "order")?;
        let ties = r.code(&TIES, "ties")?;
        let duplicates = r.code(&DUPLICATES, "duplicates")?;
        let depth = r.opt()?;
        let missing = r.code(&MISSING, "missing")?;
        let zero_rel = r.code(&ZERO_REL, "zero-relevant goals")?;
        let f32_scores = r.code(&BOOL, "f32 scores")?;
        let universe = r.opt()?;
        let actual = ActualKey {
            goals: r.u64()?,
            rows: r.u64()?,
            fingerprint: r.u64()?,
        };
        let seen = RoaringBitmap::deserialize_from(r.bytes()?)
            .map_err(|e| PartialError(format!("corrupt: the goals seen: {e}")))?;
        if seen.max().is_some_and(|g| g as u64 >= actual.goals) {
            return Err(corrupt("a goal seen beyond the actual sets"));
        }
        let mut summaries = Vec::with_capacity(3);
        for _ in 0..3 {
            summaries.push(r.summary(&measures)?);
        }
        if r.at != r.b.len() {
            return Err(corrupt("bytes after the last summary"));
        }
        let empty_seen = summaries.pop().expect("3");
        let empty_all = summaries.pop().expect("3");
        let predicted = summaries.pop().expect("3");
        let p = Partial {
            plan: PlanKey {
                measures,
                relevance_level,
                interpolation,
                order,
                ties,
                duplicates,
                depth,
                missing,
                zero_rel,
                f32_scores,
                universe,
            },
            actual,
            predicted,
            seen,
            empty_all,
            empty_seen,
        };
        // The parts must add up.
        p.summary()?;
        Ok(p)
    }
}

/// Each option's values in code order: a value's code is its index (docs/FORMAT.md).
const INTERPOLATION: [Interpolation; 3] = [
    Interpolation::Textbook,
    Interpolation::Trec10,
    Interpolation::Trec9,
];
const ORDER: [Option<OrderMode>; 3] = [None, Some(OrderMode::Score), Some(OrderMode::File)];
const TIES: [TieMode; 3] = [TieMode::Trec, TieMode::Group, TieMode::File];
const DUPLICATES: [DuplicateMode; 2] = [DuplicateMode::First, DuplicateMode::Error];
const MISSING: [MissingMode; 2] = [MissingMode::Zero, MissingMode::Skip];
const ZERO_REL: [ZeroRelMode; 2] = [ZeroRelMode::Skip, ZeroRelMode::Evaluate];
const BOOL: [bool; 2] = [false, true];

/// `x`'s code: its index in `table`, which lists every value.
fn put_code<T: PartialEq>(b: &mut Vec<u8>, table: &[T], x: &T) {
    b.push(
        table
            .iter()
            .position(|t| t == x)
            .expect("every value is listed") as u8,
    );
}

fn put_u32(b: &mut Vec<u8>, x: u32) {
    b.extend_from_slice(&x.to_le_bytes());
}

fn put_u64(b: &mut Vec<u8>, x: u64) {
    b.extend_from_slice(&x.to_le_bytes());
}

fn put_bytes(b: &mut Vec<u8>, x: &[u8]) {
    put_u64(b, x.len() as u64);
    b.extend_from_slice(x);
}

/// `None` as `u64::MAX` (no depth or universe is that large).
fn put_opt(b: &mut Vec<u8>, x: Option<u64>) {
    put_u64(b, x.unwrap_or(u64::MAX));
}

fn put_summary(b: &mut Vec<u8>, s: &Summary) {
    let st = s.state();
    for x in st.counts.to_array() {
        put_u64(b, x);
    }
    for i in 0..st.measures.len() {
        // The exact sum's digits from the lowest non-zero one to the highest.
        let d = st.sums[i].digits();
        let lo = d.iter().position(|&x| x != 0).unwrap_or(0);
        let hi = d.iter().rposition(|&x| x != 0).map_or(0, |h| h + 1);
        put_u32(b, lo as u32);
        put_u32(b, hi.saturating_sub(lo) as u32);
        for &x in &d[lo..hi.max(lo)] {
            put_u64(b, x as u64);
        }
        put_u64(b, st.reached[i]);
        put_u64(b, st.depths[i].len() as u64);
        for &(depth, goals) in &st.depths[i] {
            put_u64(b, depth);
            put_u64(b, goals);
        }
    }
}

/// Reads the body, every read checked against its end.
struct Reader<'b> {
    b: &'b [u8],
    at: usize,
}

impl<'b> Reader<'b> {
    fn take(&mut self, n: usize) -> Result<&'b [u8], PartialError> {
        if self.b.len() - self.at < n {
            return Err(PartialError(format!(
                "corrupt: {n} bytes expected at byte {} of the body, {} left",
                self.at,
                self.b.len() - self.at
            )));
        }
        self.at += n;
        Ok(&self.b[self.at - n..self.at])
    }

    fn u8(&mut self) -> Result<u8, PartialError> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, PartialError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }

    fn u64(&mut self) -> Result<u64, PartialError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }

    fn bytes(&mut self) -> Result<&'b [u8], PartialError> {
        let n = self.u64()?;
        self.take(usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// The value whose code ([`put_code`]) is next; `what` names it when the code is unknown.
    fn code<T: Copy>(&mut self, table: &[T], what: &str) -> Result<T, PartialError> {
        let c = self.u8()? as usize;
        table
            .get(c)
            .copied()
            .ok_or_else(|| PartialError(format!("corrupt: {what}")))
    }

    fn opt(&mut self) -> Result<Option<u64>, PartialError> {
        let x = self.u64()?;
        Ok((x != u64::MAX).then_some(x))
    }

    fn summary(&mut self, measures: &[Measure]) -> Result<Summary, PartialError> {
        let corrupt = || PartialError("corrupt: a summary's contents are inconsistent".into());
        let mut counts = [0u64; 5];
        for c in &mut counts {
            *c = self.u64()?;
        }
        let counts = GoalCounts::from_array(counts);
        let (mut sums, mut reached, mut depths) = (Vec::new(), Vec::new(), Vec::new());
        for _ in measures {
            let lo = self.u32()? as usize;
            let n = self.u32()? as usize;
            if lo.checked_add(n).is_none_or(|end| end > ExactSum::DIGITS) {
                return Err(corrupt());
            }
            let mut d = [0i64; ExactSum::DIGITS];
            for x in &mut d[lo..lo + n] {
                *x = self.u64()? as i64;
            }
            sums.push(ExactSum::from_digits(d).ok_or_else(corrupt)?);
            reached.push(self.u64()?);
            let k = self.u64()?;
            // Each pair takes 16 bytes: more than are left is corrupt (and no huge allocation).
            if k > ((self.b.len() - self.at) / 16) as u64 {
                return Err(corrupt());
            }
            let mut h = Vec::with_capacity(k as usize);
            for _ in 0..k {
                h.push((self.u64()?, self.u64()?));
            }
            depths.push(h);
        }
        Summary::from_state(SummaryState {
            measures: measures.to_vec(),
            sums,
            reached,
            depths,
            counts,
        })
        .ok_or_else(corrupt)
    }
}
