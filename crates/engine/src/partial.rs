//! Summaries that travel: a [`Partial`] is what one shard of an evaluation saw (a process, a
//! machine, a session), encoded in a few kilobytes, merged exactly with the other shards', and
//! finished into the summary one evaluation over all the shards' predictions would have given.
//!
//! The goals no shard predicted are the subtle part: each is evaluated (as empty, or skipped, per
//! `--missing`) once, after the merge, never once per shard. A shard cannot know which goals the
//! others predicted, and the merge has no actual sets to evaluate them with, so a partial carries:
//!
//! * `predicted`: the summary of the goals this shard predicted (and of the goals it skipped);
//! * `seen`: which goals of the actual sets it predicted (a roaring bitmap of goal numbers, each
//!   goal's rank by name, so that the order of the actual sets' file does not matter: a few
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
//! that says what differs. A shard of a predictions file (a [`crate::Job`] of a shard) also
//! records which shard it is (`I/N`) of which file (a [`PredictionsFile`]: its length and a hash of
//! its first and last 64 KiB): merged partials hold the union of their shards, a complete set
//! counts as a whole file, and [`Partial::merge_all`] (`lemma-eval merge`, Python's
//! `lemma_eval.merge`) refuses a set with shards missing, given twice or cut into another `N`,
//! naming the summaries. The encoding is docs/FORMAT.md's "Summary files".

use crate::options::{DuplicateMode, EvalOptions, MissingMode, OrderMode, TieMode, ZeroRelMode};
use crate::outcome::{empty_goal, EmptyGoal, EvalError};
use crate::Evaluator;
use lemma_accum::{
    ExactSum, GoalAccumulator, GoalCounts, Interpolation, Measure, MergeError, Summary,
    SummaryState,
};
use lemma_ingest::ActualSets;
use roaring::RoaringBitmap;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The first eight bytes of a summary file.
pub const MAGIC: &[u8; 8] = b"LEMSUMRY";
/// The encoding's version. A reader also reads version 3 (the same without the premise
/// protocol's part of the plan: not recorded, it merges with summaries of evaluations without a
/// corpus and is written back as version 4 saying so) and version 2 (goals seen
/// numbered in the actual sets' file order, a fingerprint that depends on that order): version 2
/// summaries merge with each other only. It refuses others (version 1, which did not record
/// shards, with a message saying so).
pub const VERSION: u32 = 4;
/// Version 3: no premise protocol in the plan.
const VERSION_NO_PREMISES: u32 = 3;
/// The version before: goals in file order.
const VERSION_FILE_ORDER: u32 = 2;

/// Everything that changes a number, as a partial records it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PlanKey {
    pub(crate) measures: Vec<Measure>,
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
    /// The premise protocol.
    premises: PremiseKey,
}

/// The premise protocol as a plan records it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum PremiseKey {
    /// Not recorded: a summary file of version 3 or a values file of version 1, written before
    /// files recorded it. Merges with [`PremiseKey::NoCorpus`] (as those files did), not with a
    /// corpus.
    NotRecorded,
    /// Evaluated without a corpus.
    NoCorpus,
    /// With a corpus: whether rankings were masked, and the fingerprint of the corpus and the
    /// goals' places ([`crate::Premises::fingerprint`]).
    Corpus { masked: bool, fingerprint: u64 },
}

impl PremiseKey {
    /// Of two plans that merge, what the merge records: not recorded if either is.
    fn merged(self, other: PremiseKey) -> PremiseKey {
        match (self, other) {
            (PremiseKey::NotRecorded, _) | (_, PremiseKey::NotRecorded) => PremiseKey::NotRecorded,
            _ => self,
        }
    }
}

impl PlanKey {
    pub(crate) fn of(opts: &EvalOptions, universe: Option<u64>) -> PlanKey {
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
            premises: match &opts.premises {
                None => PremiseKey::NoCorpus,
                Some(p) => PremiseKey::Corpus {
                    masked: p.masks(),
                    fingerprint: p.fingerprint(),
                },
            },
        }
    }

    /// What differs from `other`, one `name: ours vs theirs` per field.
    pub(crate) fn differences(&self, other: &PlanKey) -> Vec<String> {
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
        use PremiseKey::{Corpus, NoCorpus, NotRecorded};
        let corpus = |p: PremiseKey| match p {
            NotRecorded => "not recorded (a file written before summary files recorded it: \
                            evaluate it again)"
                .to_string(),
            NoCorpus => "none".to_string(),
            Corpus { .. } => "given".to_string(),
        };
        match (self.premises, other.premises) {
            (NotRecorded, NoCorpus | NotRecorded) | (NoCorpus, NotRecorded) => {}
            (a, b) => cmp("corpus", corpus(a), corpus(b)),
        }
        if let (
            Corpus {
                masked: ma,
                fingerprint: fa,
            },
            Corpus {
                masked: mb,
                fingerprint: fb,
            },
        ) = (self.premises, other.premises)
        {
            let mask = |m: bool| if m { "accessible" } else { "none" }.to_string();
            cmp("mask", mask(ma), mask(mb));
            if fa != fb {
                d.push(format!(
                    "corpus or goal places: another library or other places (fingerprints \
                     {fa:016x} vs {fb:016x})"
                ));
            }
        }
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

use lemma_ingest::fingerprint::{fmix as avalanche, mix};

impl ActualKey {
    /// The goals, each with its judged lemmas' names and grades, in any order: two sets that
    /// differ in a goal, a lemma or a grade differ here (but for a 2^-64 chance); the same
    /// judgments in another order of goals or lines do not (the sum of a hash per goal, each the
    /// goal's name hash and judged count mixed with the sum of a hash per judged lemma).
    fn of(actual: &ActualSets) -> ActualKey {
        let mut sum = 0u64;
        for (gid, truth) in actual.truths().enumerate() {
            let mut h = mix(0x6c65_6d6d_6165_7661, actual.goals.hash_of(gid as u32));
            h = mix(h, truth.len() as u64);
            let mut judged = 0u64;
            for (id, grade) in truth.entries() {
                let j = mix(
                    mix(0x6a75_6467_6564, actual.lemmas.hash_of(id)),
                    grade as u64,
                );
                judged = judged.wrapping_add(avalanche(j));
            }
            sum = sum.wrapping_add(avalanche(mix(h, judged)));
        }
        ActualKey {
            goals: actual.goals.len() as u64,
            rows: actual.rows,
            fingerprint: avalanche(mix(sum, actual.goals.len() as u64)),
        }
    }
}

/// Each goal's rank among the goals of `actual` in byte order of their names: goal numbers
/// that do not depend on the order of the actual sets' file.
fn name_ranks(actual: &ActualSets) -> Vec<u32> {
    let n = actual.goals.len() as u32;
    let mut by_name: Vec<u32> = (0..n).collect();
    by_name.sort_unstable_by(|&a, &b| actual.goals.name(a).cmp(actual.goals.name(b)));
    let mut rank = vec![0u32; n as usize];
    for (r, &g) in by_name.iter().enumerate() {
        rank[g as usize] = r as u32;
    }
    rank
}

/// A predictions file as its shards know it: what every shard of one file computes alike, on any
/// machine and under any path (its length, and a hash of its length and its first and last 64 KiB),
/// and its name for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PredictionsFile {
    /// The file's name (the last component of its path), to name it in messages; two files are
    /// told apart by their length and fingerprint only.
    pub name: String,
    /// Its length in bytes.
    pub bytes: u64,
    /// A hash of its length, its first 64 KiB and its last 64 KiB (each byte once: the whole
    /// file when it is at most 128 KiB): docs/FORMAT.md, "Summary files".
    pub fingerprint: u64,
}

impl PredictionsFile {
    /// How much of each end of the file the fingerprint reads.
    pub const EDGE: u64 = 64 << 10;

    /// Reads the length and both ends of the file at `path`.
    pub fn of(path: &Path) -> std::io::Result<PredictionsFile> {
        let mut f = std::fs::File::open(path)?;
        let bytes = f.metadata()?.len();
        let head = bytes.min(Self::EDGE);
        let tail = bytes.saturating_sub(Self::EDGE).max(head);
        let mut buf = vec![0u8; Self::EDGE as usize];
        let mut h = mix(0x7072_6564_6963_7473, bytes);
        f.read_exact(&mut buf[..head as usize])?;
        h = mix_bytes(h, &buf[..head as usize]);
        f.seek(SeekFrom::Start(tail))?;
        f.read_exact(&mut buf[..(bytes - tail) as usize])?;
        h = mix_bytes(h, &buf[..(bytes - tail) as usize]);
        // A final avalanche (murmur3's): files that differ in their last bytes get fingerprints
        // that differ throughout, not in a few digits.
        for (shift, k) in [(33, 0xff51_afd7_ed55_8ccd_u64), (33, 0xc4ce_b9fe_1a85_ec53)] {
            h = (h ^ (h >> shift)).wrapping_mul(k);
        }
        h ^= h >> 33;
        let name = path
            .file_name()
            .map_or_else(|| path.to_string_lossy(), |n| n.to_string_lossy())
            .into_owned();
        Ok(PredictionsFile {
            name,
            bytes,
            fingerprint: h,
        })
    }

    /// What tells two files apart.
    fn key(&self) -> (u64, u64) {
        (self.bytes, self.fingerprint)
    }
}

impl fmt::Display for PredictionsFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} bytes, fingerprint {:016x})",
            self.name, self.bytes, self.fingerprint
        )
    }
}

/// `b` mixed into `h`, eight bytes (little-endian, the last word zero-padded) at a time.
fn mix_bytes(mut h: u64, b: &[u8]) -> u64 {
    for w in b.chunks(8) {
        let mut x = [0u8; 8];
        x[..w.len()].copy_from_slice(w);
        h = mix(h, u64::from_le_bytes(x));
    }
    h
}

/// Shards `first..=last` (1-based), in ascending order, separated by gaps.
type Ranges = Vec<(u64, u64)>;

/// Which shards of one predictions file, cut into `count`, a partial holds: never all of them
/// (a complete set is a whole file, recorded as no shards).
#[derive(Clone, Debug, PartialEq)]
struct ShardSet {
    file: PredictionsFile,
    count: u64,
    held: Ranges,
}

/// `3`, `3-8`, joined by `sep`.
fn ranges_text(r: &[(u64, u64)], sep: &str) -> String {
    r.iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(sep)
}

/// How many shards `r` holds.
fn ranges_len(r: &[(u64, u64)]) -> u64 {
    r.iter()
        .fold(0u64, |n, &(a, b)| n.saturating_add(b - a).saturating_add(1))
}

/// The first shard in both `a` and `b`.
fn first_common(a: &[(u64, u64)], b: &[(u64, u64)]) -> Option<u64> {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        if lo <= a[i].1.min(b[j].1) {
            return Some(lo);
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    None
}

/// The shards in `a` or `b` (disjoint), adjacent ranges joined: one pass over both.
fn union(a: &[(u64, u64)], b: &[(u64, u64)]) -> Ranges {
    let mut out: Ranges = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let (x, y) = if j == b.len() || (i < a.len() && a[i] < b[j]) {
            i += 1;
            a[i - 1]
        } else {
            j += 1;
            b[j - 1]
        };
        match out.last_mut() {
            Some(last) if x <= last.1.saturating_add(1) => last.1 = last.1.max(y),
            _ => out.push((x, y)),
        }
    }
    out
}

/// The shards of `1..=count` not in `held`.
fn complement(held: &[(u64, u64)], count: u64) -> Ranges {
    let mut out = Vec::new();
    let mut next = 1u64;
    for &(a, b) in held {
        if a > next {
            out.push((next, a - 1));
        }
        next = b.saturating_add(1);
    }
    if held.last().is_none_or(|&(_, b)| b < count) {
        out.push((next, count));
    }
    out
}

/// `is shard 3/8` or `holds shards 3-5, 7 of 8`.
fn holds_text(held: &[(u64, u64)], count: u64) -> String {
    match held {
        [(a, b)] if a == b => format!("is shard {a}/{count}"),
        _ => format!("holds shards {} of {count}", ranges_text(held, ", ")),
    }
}

/// The shards of one predictions file a merge lacks (with `--partial`, `partial=True`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LackingShards {
    /// The predictions file.
    pub file: PredictionsFile,
    /// How many shards it was cut into (`N`).
    pub count: u64,
    /// The shards missing, `(first, last)` 1-based inclusive, ascending, separated by gaps.
    pub missing: Vec<(u64, u64)>,
}

impl LackingShards {
    /// How many shards are missing.
    pub fn missing_count(&self) -> u64 {
        ranges_len(&self.missing)
    }

    /// The missing shards as `3-8` or `2,5-7` (no spaces: one field of the tsv and trec
    /// formats).
    pub fn missing_text(&self) -> String {
        ranges_text(&self.missing, ",")
    }
}

impl fmt::Display for LackingShards {
    /// `shards 3-8 of 8 of run.txt (1549819 bytes, fingerprint 0123456789abcdef)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = if self.missing_count() == 1 { "" } else { "s" };
        write!(
            f,
            "shard{s} {} of {} of {}",
            ranges_text(&self.missing, ", "),
            self.count,
            self.file
        )
    }
}

/// A summary that travels: what one shard of an evaluation saw (a process, a machine, a session),
/// encoded in a few kilobytes, merged exactly with the other shards', and finished into the
/// summary one evaluation over all the shards' predictions would have given. The goals no shard
/// predicted are evaluated once, after the merge, never once per shard.
#[derive(Clone, Debug, PartialEq)]
pub struct Partial {
    /// The encoding's version it was read from ([`VERSION`] when made here): goals seen are
    /// numbered in byte order of their names, or (version 2) in the actual sets' file order.
    version: u32,
    plan: PlanKey,
    actual: ActualKey,
    predicted: Summary,
    seen: RoaringBitmap,
    empty_all: Summary,
    empty_seen: Summary,
    /// The shards of predictions files it holds, by file (ascending by length and fingerprint):
    /// empty for a whole file, a session, or a complete set of shards.
    shards: Vec<ShardSet>,
    /// With a corpus: what the premise protocol counted in the goals predicted (its counts; the
    /// first cases, named in warnings, do not travel). `None` without, or read from a version
    /// before 4.
    premises: Option<crate::PremiseReport>,
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

/// An error when the options ask for what a summary file does not hold: means over groups
/// (`--group-by`) or strata (`--by`). Checked wherever a partial is made (a shard, `--summary-out`,
/// a session's summary), so no door writes one that merges into other numbers.
pub(crate) fn refuse_unheld(opts: &EvalOptions) -> Result<(), EvalError> {
    if let Some(g) = &opts.group_by {
        return Err(EvalError::Options(format!(
            "--group-by {}: a summary that travels (--shard, --summary-out, a session's summary \
             bytes) does not hold groups yet; take the whole evaluation's summary",
            g.by()
        )));
    }
    if let Some(s) = opts.strata.as_ref().filter(|s| s.stratifies()) {
        return Err(EvalError::Options(format!(
            "--by {}: a summary that travels (--shard, --summary-out, a session's summary \
             bytes) does not hold strata yet; take the whole evaluation's summary",
            s.keys().collect::<Vec<_>>().join(" --by ")
        )));
    }
    Ok(())
}

impl Partial {
    /// The partial of a shard whose predicted goals gave `predicted`, `seen[g]` telling whether
    /// goal `g` of the actual sets was among them; the goals without predictions are evaluated
    /// within `universe`.
    /// `premises`: what the premise protocol counted in the goals predicted.
    pub(crate) fn new(
        ev: &Evaluator,
        predicted: Summary,
        seen: &[bool],
        universe: Option<u64>,
        premises: &crate::PremiseReport,
    ) -> Result<Partial, EvalError> {
        let actual = ev.actual();
        let plan = ev.plan();
        let opts = ev.options();
        refuse_unheld(opts)?;
        if plan.pooled().is_some() {
            return Err(EvalError::Options(
                "a summary file does not hold the pooled curve: evaluate without it".into(),
            ));
        }
        let (mut empty_all, mut empty_seen) = (Summary::new(plan), Summary::new(plan));
        let mut acc = GoalAccumulator::new(plan.clone());
        let mut seen_ids = RoaringBitmap::new();
        let rank = name_ranks(actual);
        for (gid, truth) in actual.truths().enumerate() {
            let goal = actual.goals.name(gid as u32);
            let e = empty_goal(&mut acc, goal, truth, &actual.lemmas, opts, universe)?;
            let add = |s: &mut Summary| match &e {
                EmptyGoal::Skipped(fate) => s.skip(*fate),
                EmptyGoal::Evaluated(v) => s.add_empty(goal, v),
            };
            add(&mut empty_all);
            if seen[gid] {
                add(&mut empty_seen);
                seen_ids.insert(rank[gid]);
            }
        }
        if opts.judged_only || opts.collection_size != 0 {
            return Err(EvalError::Options(
                "a summary does not record -J (judged only) or -N (collection size)".into(),
            ));
        }
        Ok(Partial {
            version: VERSION,
            plan: PlanKey::of(opts, universe),
            actual: ActualKey::of(actual),
            predicted,
            seen: seen_ids,
            empty_all,
            empty_seen,
            shards: Vec::new(),
            premises: opts.premises.as_ref().map(|_| premises.counts_only()),
        })
    }

    /// With a corpus: what the premise protocol counted in the goals predicted, summed over
    /// the merged parts (the counts of [`crate::PremiseReport`]; the first cases are not kept).
    pub fn premises(&self) -> Option<&crate::PremiseReport> {
        self.premises.as_ref()
    }

    /// Records that this partial is shard `i` (1-based) of `n` of `file`, in place of any shards
    /// it recorded; shard 1 of 1 is the whole file, recorded as no shards.
    pub(crate) fn set_shard(&mut self, file: PredictionsFile, i: u64, n: u64) {
        debug_assert!(1 <= i && i <= n);
        self.shards.clear();
        if n > 1 {
            self.shards.push(ShardSet {
                file,
                count: n,
                held: vec![(i, i)],
            });
        }
    }

    /// The shards missing from each predictions file this partial holds shards of (empty when it
    /// holds whole files or complete sets of shards only).
    pub fn lacking_shards(&self) -> Vec<LackingShards> {
        (self.shards.iter())
            .map(|s| LackingShards {
                file: s.file.clone(),
                count: s.count,
                missing: complement(&s.held, s.count),
            })
            .collect()
    }

    /// The measures, in output order.
    pub fn measures(&self) -> &[Measure] {
        &self.plan.measures
    }

    /// How many goals of the actual sets the shards predicted.
    pub fn goals_seen(&self) -> u64 {
        self.seen.len()
    }

    /// Adds `other`, a shard of the same evaluation (same plan, same actual sets, other goals,
    /// other shards of a predictions file cut into the same `N`). On error `self` is unchanged.
    /// Shards missing are not an error here: see [`Partial::merge_all`].
    pub fn merge(&mut self, other: &Partial) -> Result<(), PartialError> {
        self.check_same_evaluation(other)?;
        for s in &other.shards {
            let Some(ours) = self.shards.iter().find(|o| o.file.key() == s.file.key()) else {
                continue;
            };
            if ours.count != s.count {
                return Err(PartialError(format!(
                    "one {} of {}, the other {}: shards of one file merge only with shards cut \
                     into as many",
                    holds_text(&ours.held, ours.count),
                    ours.file,
                    holds_text(&s.held, s.count)
                )));
            }
            if let Some(k) = first_common(&ours.held, &s.held) {
                return Err(PartialError(format!(
                    "shard {k}/{} of {} is in both",
                    s.count, s.file
                )));
            }
        }
        self.check_disjoint_goals(other)?;
        let premises = match (&self.premises, &other.premises) {
            (Some(a), Some(b)) => Some(
                a.checked_sum(b)
                    .ok_or_else(|| merge_error(MergeError::Overflow))?,
            ),
            (None, None) => None,
            // Equal plans with a corpus both carry counts (checked as they are read).
            _ => {
                return Err(PartialError(
                    "corrupt: premise counts in one part only".into(),
                ))
            }
        };
        // Merged apart, then kept: on an error (counts past 2^64 - 1, which only a damaged or
        // crafted file can claim) `self` is unchanged.
        let (mut predicted, mut empty_seen) = (self.predicted.clone(), self.empty_seen.clone());
        predicted.merge(&other.predicted).map_err(merge_error)?;
        empty_seen.merge(&other.empty_seen).map_err(merge_error)?;
        self.predicted = predicted;
        self.empty_seen = empty_seen;
        self.seen |= &other.seen;
        for s in &other.shards {
            match self
                .shards
                .iter_mut()
                .find(|o| o.file.key() == s.file.key())
            {
                Some(ours) => ours.held = union(&ours.held, &s.held),
                None => self.shards.push(s.clone()),
            }
        }
        // A complete set is a whole file.
        self.shards.retain(|s| s.held != [(1, s.count)]);
        self.shards.sort_by_key(|s| s.file.key());
        self.premises = premises;
        self.plan.premises = self.plan.premises.merged(other.plan.premises);
        Ok(())
    }

    /// Merges `parts`, each named (a file's path, `parts[3]`), in order: [`PartialMerger`]'s
    /// checks and errors. With `allow_partial`, shards missing are no error: the lacking shards
    /// are returned with the merge, whose [`Partial::summary`] is then of the goals the parts
    /// ranked.
    pub fn merge_all<S: AsRef<str>>(
        parts: &[(S, Partial)],
        allow_partial: bool,
    ) -> Result<(Partial, Vec<LackingShards>), PartialError> {
        let mut m = PartialMerger::new();
        for (name, p) in parts {
            m.add(name.as_ref(), p.clone())?;
        }
        m.finish(allow_partial)
    }

    /// The same plan and the same actual sets as `other`.
    fn check_same_evaluation(&self, other: &Partial) -> Result<(), PartialError> {
        let file_order = |p: &Partial| p.version == VERSION_FILE_ORDER;
        if file_order(self) != file_order(other) {
            return Err(PartialError(format!(
                "summary format versions {} and {}: a version {VERSION_FILE_ORDER} summary \
                 numbers goals in its actual sets' file order and merges only with version \
                 {VERSION_FILE_ORDER} summaries; write it again with `eval --summary-out`",
                self.version, other.version
            )));
        }
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
        Ok(())
    }

    /// No goal predicted by both.
    fn check_disjoint_goals(&self, other: &Partial) -> Result<(), PartialError> {
        let both = &self.seen & &other.seen;
        if let Some(g) = both.min() {
            return Err(PartialError(format!(
                "both hold predictions for {} goals (the first is goal number {} of the actual \
                 sets {}): shards must hold disjoint goals",
                both.len(),
                g + 1,
                if self.version == VERSION_FILE_ORDER {
                    "in file order"
                } else {
                    "in byte order of goal names"
                }
            )));
        }
        Ok(())
    }

    /// The summary of every goal: what the shards predicted, and the goals none of them did.
    /// When shards are missing ([`Partial::lacking_shards`]), the goals of the missing shards
    /// cannot be told from goals without predictions: the summary is then of the goals the
    /// shards given predicted (and skipped) only.
    pub fn summary(&self) -> Result<Summary, PartialError> {
        if !self.shards.is_empty() {
            return Ok(self.predicted.clone());
        }
        self.whole_summary()
    }

    /// What the shards predicted, and every goal none of them did.
    fn whole_summary(&self) -> Result<Summary, PartialError> {
        let mut s = self.predicted.clone();
        s.merge(&self.empty_all).map_err(merge_error)?;
        s.retract(&self.empty_seen)
            .map_err(|_| PartialError("inconsistent summary: its parts do not add up".into()))?;
        Ok(s)
    }

    /// The encoding (docs/FORMAT.md, "Summary files").
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        put_plan(&mut b, &self.plan, self.version != VERSION_FILE_ORDER);
        put_u64(&mut b, self.actual.goals);
        put_u64(&mut b, self.actual.rows);
        put_u64(&mut b, self.actual.fingerprint);
        put_u32(&mut b, self.shards.len() as u32);
        for s in &self.shards {
            put_bytes(&mut b, s.file.name.as_bytes());
            put_u64(&mut b, s.file.bytes);
            put_u64(&mut b, s.file.fingerprint);
            put_u64(&mut b, s.count);
            put_u64(&mut b, s.held.len() as u64);
            for &(first, last) in &s.held {
                put_u64(&mut b, first);
                put_u64(&mut b, last);
            }
        }
        let mut seen = Vec::with_capacity(self.seen.serialized_size());
        self.seen.serialize_into(&mut seen).expect("to memory");
        put_bytes(&mut b, &seen);
        for s in [&self.predicted, &self.empty_all, &self.empty_seen] {
            put_summary(&mut b, s);
        }
        if self.version != VERSION_FILE_ORDER {
            match &self.premises {
                None => b.push(0),
                Some(p) => {
                    // Code 1: the first five counts (the sixth 0: what readers of five read).
                    let counts = p.counts();
                    let n = if p.late_places == 0 { 5 } else { 6 };
                    b.push(n as u8 - 4);
                    for (_, c) in &counts[..n] {
                        put_u64(&mut b, *c);
                    }
                }
            }
        }
        let mut out = Vec::with_capacity(b.len() + 24);
        out.extend_from_slice(MAGIC);
        // Version 3 is written as version 4 (its plan's premise protocol not recorded).
        put_u32(
            &mut out,
            match self.version {
                VERSION_FILE_ORDER => VERSION_FILE_ORDER,
                _ => VERSION,
            },
        );
        put_u64(&mut out, b.len() as u64);
        put_u32(&mut out, crc32fast::hash(&b));
        out.extend_from_slice(&b);
        out
    }

    /// Reads a summary file (`eval --summary-out`): errors name the file.
    pub fn read(path: &Path) -> Result<Partial, PartialError> {
        let bytes = std::fs::read(path)
            .map_err(|e| PartialError(format!("{}: cannot read: {e}", path.display())))?;
        Partial::decode(&bytes).map_err(|e| PartialError(format!("{}: {e}", path.display())))
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
        if version == 1 {
            return Err(PartialError(format!(
                "summary format version 1, expected {VERSION}: a version 1 summary does not record \
                 which shards of which predictions file it holds; write it again with \
                 `eval --summary-out`"
            )));
        }
        if ![VERSION, VERSION_NO_PREMISES, VERSION_FILE_ORDER].contains(&version) {
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
        // Version 2 also lacks it: it is not read as anything else.
        let plan = r.plan(version >= VERSION)?;
        let actual = ActualKey {
            goals: r.u64()?,
            rows: r.u64()?,
            fingerprint: r.u64()?,
        };
        let shards = r.shards()?;
        let seen = RoaringBitmap::deserialize_from(r.bytes()?)
            .map_err(|e| PartialError(format!("corrupt: the goals seen: {e}")))?;
        if seen.max().is_some_and(|g| g as u64 >= actual.goals) {
            return Err(corrupt("a goal seen beyond the actual sets"));
        }
        let mut summaries = Vec::with_capacity(3);
        for _ in 0..3 {
            summaries.push(r.summary(&plan.measures)?);
        }
        let premises = match version >= VERSION {
            false => None,
            true => match r.u8()? {
                0 => None,
                code @ (1 | 2) => {
                    let mut n = [0u64; 6];
                    for x in &mut n[..4 + code as usize] {
                        *x = r.u64()?;
                    }
                    Some(crate::PremiseReport::from_counts(n))
                }
                c => return Err(corrupt(&format!("premise counts code {c}"))),
            },
        };
        if premises.is_some() != matches!(plan.premises, PremiseKey::Corpus { .. }) {
            return Err(corrupt(
                "premise counts without a corpus, or a corpus without them",
            ));
        }
        if r.at != r.b.len() {
            return Err(corrupt("bytes after the last summary"));
        }
        let empty_seen = summaries.pop().expect("3");
        let empty_all = summaries.pop().expect("3");
        let predicted = summaries.pop().expect("3");
        check_counts(&actual, &seen, [&predicted, &empty_all, &empty_seen])?;
        let p = Partial {
            version,
            plan,
            actual,
            predicted,
            seen,
            empty_all,
            empty_seen,
            shards,
            premises,
        };
        // The parts must add up.
        p.whole_summary()?;
        Ok(p)
    }
}

/// A merge of two summaries that cannot be (their measures were checked equal before).
fn merge_error(e: lemma_accum::MergeError) -> PartialError {
    PartialError(format!("corrupt: {e}"))
}

/// The goal counts a partial's summaries must hold: the actual sets' goals (ids are 32-bit),
/// each counted once in the summary of every goal evaluated as empty (`empty_all`) and each
/// seen one once in `empty_seen`; of the goals seen, at most all evaluated or skipped as
/// predicted, none evaluated as empty there. A file that claims more (2^63 goals, which would
/// wrap around when merged) is refused here, naming the count.
fn check_counts(
    actual: &ActualKey,
    seen: &RoaringBitmap,
    [predicted, empty_all, empty_seen]: [&Summary; 3],
) -> Result<(), PartialError> {
    if actual.goals > 1 << 32 {
        return Err(PartialError(format!(
            "corrupt: {} goals in the actual sets (goal ids are 32-bit: at most 2^32)",
            actual.goals
        )));
    }
    let counted = |c: GoalCounts| {
        (c.evaluated as u128) + (c.skipped_no_relevant as u128) + (c.skipped_no_predictions as u128)
    };
    for (s, what, goals) in [
        (empty_all, "every goal of the actual sets", actual.goals),
        (empty_seen, "the goals seen", seen.len()),
    ] {
        let c = s.counts();
        if counted(c) != goals as u128
            || c.skipped_no_actual != 0
            || c.evaluated_empty != c.evaluated
        {
            return Err(PartialError(format!(
                "corrupt: the summary of {what} without predictions counts {} goals evaluated \
                 and {} skipped, {} without actual sets; expected {goals} goals, each evaluated \
                 as empty or skipped",
                c.evaluated,
                c.skipped_no_relevant as u128 + c.skipped_no_predictions as u128,
                c.skipped_no_actual
            )));
        }
    }
    let c = predicted.counts();
    if counted(c) > seen.len() as u128 || c.evaluated_empty != 0 || c.skipped_no_predictions != 0 {
        return Err(PartialError(format!(
            "corrupt: the summary of the predictions counts {} goals evaluated ({} of them as \
             empty) and {} skipped, of {} goals of the actual sets they ranked",
            c.evaluated,
            c.evaluated_empty,
            c.skipped_no_relevant as u128 + c.skipped_no_predictions as u128,
            seen.len()
        )));
    }
    Ok(())
}

/// Merges partials one at a time, each named (a file's path, `parts[3]`), keeping of each only
/// its name, its goals and its shards: errors name the parts. [`Partial::merge_all`] is this over
/// a list; `lemma-eval merge` reads and adds one file at a time.
///
/// Refused: other options or actual sets (`cannot merge a.sum with b.sum: different options:
/// ...`), shared goals (`cannot merge a.sum with c.sum: both hold predictions for ...`), a shard
/// given twice (`shard 2/8 of run.txt (...) is given twice: a.sum and b.sum`), shards of one file
/// cut into different `N`s (`a.sum is shard 1/8 of run.txt (...), b.sum is shard 1/4 of it`),
/// and, at [`PartialMerger::finish`] unless partial merges are allowed, missing shards (`shards
/// 3-8 of 8 of run.txt (...) are missing (given: a.sum, b.sum)`).
#[derive(Default)]
pub struct PartialMerger {
    merged: Option<Partial>,
    /// Each part's name and goals, in order: the earlier part a goal is in.
    parts: Vec<(String, RoaringBitmap)>,
    /// The shards given of each predictions file, in order of their first appearance.
    given: Vec<Given>,
}

/// The shards given of one predictions file.
struct Given {
    file: PredictionsFile,
    count: u64,
    /// The first part that held shards of it, and which.
    first: (String, Ranges),
    /// Each range of shards given: its first shard -> (its last, the part's name).
    held: BTreeMap<u64, (u64, String)>,
}

impl PartialMerger {
    /// A merger of no parts yet.
    pub fn new() -> PartialMerger {
        PartialMerger::default()
    }

    /// Reads the summary file at `path` ([`Partial::read`]) and adds it, named by its path.
    pub fn add_file(&mut self, path: &Path) -> Result<(), PartialError> {
        let part = Partial::read(path)?;
        self.add(&path.display().to_string(), part)
    }

    /// Adds `part`, named `name`. On error nothing is added.
    pub fn add(&mut self, name: &str, part: Partial) -> Result<(), PartialError> {
        let Some(merged) = &mut self.merged else {
            self.record(name, &part);
            self.merged = Some(part);
            return Ok(());
        };
        let first = &self.parts[0].0;
        merged
            .check_same_evaluation(&part)
            .map_err(|e| PartialError(format!("cannot merge {first} with {name}: {e}")))?;
        for s in &part.shards {
            let Some(g) = self.given.iter().find(|g| g.file.key() == s.file.key()) else {
                continue;
            };
            if g.count != s.count {
                return Err(PartialError(format!(
                    "{} {} of {}, {name} {} of it: shards of one file merge only with shards \
                     cut into as many",
                    g.first.0,
                    holds_text(&g.first.1, g.count),
                    g.file,
                    holds_text(&s.held, s.count),
                )));
            }
            for &(a, b) in &s.held {
                // The given range starting last at or before `b` is the only one that can
                // overlap `a..=b` (the given ranges are disjoint).
                if let Some((&start, (end, other))) = g.held.range(..=b).next_back() {
                    if *end >= a {
                        return Err(PartialError(format!(
                            "shard {}/{} of {} is given twice: {other} and {name}",
                            start.max(a),
                            s.count,
                            s.file
                        )));
                    }
                }
            }
        }
        if let Err(e) = merged.merge(&part) {
            // Shared goals: name the earlier part they are in.
            let other = (self.parts.iter())
                .find(|(_, seen)| !seen.is_disjoint(&part.seen))
                .map_or(first, |(n, _)| n);
            return Err(PartialError(format!(
                "cannot merge {other} with {name}: {e}"
            )));
        }
        self.record(name, &part);
        Ok(())
    }

    fn record(&mut self, name: &str, part: &Partial) {
        self.parts.push((name.to_string(), part.seen.clone()));
        for s in &part.shards {
            let g = match self
                .given
                .iter_mut()
                .position(|g| g.file.key() == s.file.key())
            {
                Some(i) => &mut self.given[i],
                None => {
                    self.given.push(Given {
                        file: s.file.clone(),
                        count: s.count,
                        first: (name.to_string(), s.held.clone()),
                        held: BTreeMap::new(),
                    });
                    self.given.last_mut().expect("pushed")
                }
            };
            for &(a, b) in &s.held {
                g.held.insert(a, (b, name.to_string()));
            }
        }
    }

    /// The merge and the shards it lacks; without `allow_partial`, lacking shards are an error
    /// naming them (and, when the shards given are of several predictions files, which part
    /// holds shards of which).
    pub fn finish(
        self,
        allow_partial: bool,
    ) -> Result<(Partial, Vec<LackingShards>), PartialError> {
        let merged = self
            .merged
            .ok_or_else(|| PartialError("no summaries to merge".into()))?;
        let lacking = merged.lacking_shards();
        if lacking.is_empty() || allow_partial {
            return Ok((merged, lacking));
        }
        let mut text = Vec::new();
        for l in &lacking {
            let verb = if l.missing_count() == 1 { "is" } else { "are" };
            let mut names: Vec<&str> = Vec::new();
            if let Some(g) = self.given.iter().find(|g| g.file.key() == l.file.key()) {
                for (_, n) in g.held.values() {
                    if !names.contains(&n.as_str()) {
                        names.push(n);
                    }
                }
            }
            let given = match names.len() {
                0 => String::new(),
                k @ 1..=3 => format!(" (given: {})", names[..k].join(", ")),
                k => format!(" (given: {} and {} more)", names[..3].join(", "), k - 3),
            };
            text.push(format!("{l} {verb} missing{given}"));
        }
        let mut msg = text.join("; ");
        if self.given.len() > 1 {
            let each: Vec<String> = (self.given.iter())
                .map(|g| {
                    format!(
                        "{} {} of {}",
                        g.first.0,
                        holds_text(&g.first.1, g.count),
                        g.file
                    )
                })
                .collect();
            msg += &format!(
                "; the shards given are of {} different predictions files (a file that changed \
                 between its shards' evaluations is another file): {}",
                self.given.len(),
                each.join(", ")
            );
        }
        Err(PartialError(msg))
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

/// The plan section (docs/FORMAT.md, "Summary files": 1. Plan), shared by values files;
/// `premises`: with the premise protocol's part (summary files from version 4, values files
/// from version 2).
pub(crate) fn put_plan(b: &mut Vec<u8>, p: &PlanKey, premises: bool) {
    put_u32(b, p.measures.len() as u32);
    for m in &p.measures {
        put_bytes(b, m.to_string().as_bytes());
    }
    put_u32(b, p.relevance_level as u32);
    put_code(b, &INTERPOLATION, &p.interpolation);
    put_code(b, &ORDER, &p.order);
    put_code(b, &TIES, &p.ties);
    put_code(b, &DUPLICATES, &p.duplicates);
    put_opt(b, p.depth);
    put_code(b, &MISSING, &p.missing);
    put_code(b, &ZERO_REL, &p.zero_rel);
    put_code(b, &BOOL, &p.f32_scores);
    put_opt(b, p.universe);
    if premises {
        match p.premises {
            PremiseKey::NoCorpus => b.push(0),
            PremiseKey::Corpus {
                masked,
                fingerprint,
            } => {
                b.push(1 + masked as u8);
                put_u64(b, fingerprint);
            }
            PremiseKey::NotRecorded => b.push(3),
        }
    }
}

pub(crate) fn put_u32(b: &mut Vec<u8>, x: u32) {
    b.extend_from_slice(&x.to_le_bytes());
}

pub(crate) fn put_u64(b: &mut Vec<u8>, x: u64) {
    b.extend_from_slice(&x.to_le_bytes());
}

pub(crate) fn put_bytes(b: &mut Vec<u8>, x: &[u8]) {
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
pub(crate) struct Reader<'b> {
    pub(crate) b: &'b [u8],
    pub(crate) at: usize,
}

impl<'b> Reader<'b> {
    pub(crate) fn take(&mut self, n: usize) -> Result<&'b [u8], PartialError> {
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

    pub(crate) fn u32(&mut self) -> Result<u32, PartialError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }

    pub(crate) fn u64(&mut self) -> Result<u64, PartialError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }

    pub(crate) fn bytes(&mut self) -> Result<&'b [u8], PartialError> {
        let n = self.u64()?;
        self.take(usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// The plan section ([`put_plan`]; `premises`: with the premise protocol's part).
    pub(crate) fn plan(&mut self, premises: bool) -> Result<PlanKey, PartialError> {
        let corrupt = |what: &str| PartialError(format!("corrupt: {what}"));
        let n = self.u32()? as usize;
        let mut measures = Vec::with_capacity(n.min(1 << 12));
        for _ in 0..n {
            let name = self.bytes()?;
            let name = std::str::from_utf8(name).map_err(|_| corrupt("a measure name"))?;
            let m =
                Measure::parse(name).map_err(|e| PartialError(format!("measure `{name}`: {e}")))?;
            let [m] = m[..] else {
                return Err(corrupt("a measure name"));
            };
            measures.push(m);
        }
        let relevance_level = self.u32()? as i32;
        let interpolation = self.code(&INTERPOLATION, "interpolation")?;
        let order = self.code(&ORDER, "order")?;
        let ties = self.code(&TIES, "ties")?;
        let duplicates = self.code(&DUPLICATES, "duplicates")?;
        let depth = self.opt()?;
        let missing = self.code(&MISSING, "missing")?;
        let zero_rel = self.code(&ZERO_REL, "zero-relevant goals")?;
        let f32_scores = self.code(&BOOL, "f32 scores")?;
        let universe = self.opt()?;
        let premises = match premises {
            false => PremiseKey::NotRecorded,
            true => match self.u8()? {
                0 => PremiseKey::NoCorpus,
                c @ (1 | 2) => PremiseKey::Corpus {
                    masked: c == 2,
                    fingerprint: self.u64()?,
                },
                3 => PremiseKey::NotRecorded,
                c => return Err(corrupt(&format!("premise protocol code {c}"))),
            },
        };
        Ok(PlanKey {
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
            premises,
        })
    }

    /// The value whose code ([`put_code`]) is next; `what` names it when the code is unknown.
    fn code<T: Copy>(&mut self, table: &[T], what: &str) -> Result<T, PartialError> {
        let c = self.u8()? as usize;
        table
            .get(c)
            .copied()
            .ok_or_else(|| PartialError(format!("corrupt: {what}")))
    }

    /// The shard sets, every number range-checked: `1 <= first <= last <= N`, ranges ascending
    /// with gaps between them, never every shard, files in ascending order.
    fn shards(&mut self) -> Result<Vec<ShardSet>, PartialError> {
        let corrupt = |what: String| PartialError(format!("corrupt: {what}"));
        let k = self.u32()?;
        let mut sets: Vec<ShardSet> = Vec::new();
        for _ in 0..k {
            let name = std::str::from_utf8(self.bytes()?)
                .map_err(|_| corrupt("a predictions file's name".into()))?
                .to_string();
            let file = PredictionsFile {
                name,
                bytes: self.u64()?,
                fingerprint: self.u64()?,
            };
            let count = self.u64()?;
            let n = self.u64()?;
            // Each range takes 16 bytes: more than are left is corrupt (and no huge allocation).
            if n == 0 || n > ((self.b.len() - self.at) / 16) as u64 {
                return Err(corrupt(format!("the shards held of {}", file.name)));
            }
            let mut held: Ranges = Vec::with_capacity(n as usize);
            for _ in 0..n {
                let (first, last) = (self.u64()?, self.u64()?);
                if first == 0 || first > last || last > count {
                    let s = if first == last {
                        format!("shard {first}")
                    } else {
                        format!("shards {first}-{last}")
                    };
                    return Err(corrupt(format!(
                        "{s} of {count} of {}: expected 1 <= I <= N",
                        file.name
                    )));
                }
                if held
                    .last()
                    .is_some_and(|&(_, prev)| first <= prev.saturating_add(1))
                {
                    return Err(corrupt(format!(
                        "the shards held of {}: out of order",
                        file.name
                    )));
                }
                held.push((first, last));
            }
            if held == [(1, count)] {
                return Err(corrupt(format!(
                    "every shard of {} recorded (a complete set is recorded as none)",
                    file.name
                )));
            }
            if sets.last().is_some_and(|s| s.file.key() >= file.key()) {
                return Err(corrupt("predictions files out of order".into()));
            }
            sets.push(ShardSet { file, count, held });
        }
        Ok(sets)
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
