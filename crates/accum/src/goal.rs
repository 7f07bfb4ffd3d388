//! The per-goal accumulator: items in, measures out, the ranking never kept.
//!
//! State is a handful of counters (`n`, `s`, the running AP sum, DCG, the first relevant rank, the
//! judged non-relevant count for Bpref) plus one record per cutoff slot and one per recall level.
//! An unjudged item costs `n += 1`. A judged item is an *event*: it records the cutoffs the ranking
//! passed since the previous event, then updates the running sums. Cutoffs after the last event are
//! recorded once, at [`GoalAccumulator::finish`]. So a goal costs O(n) trivial steps plus
//! O(judged · levels + cutoffs) real work, and O(cutoffs + levels) memory whatever `n` is.

use crate::measure::{Measure, Origin};
use crate::plan::{LevelRule, Plan, Slot, Ties};
use crate::walk::Walk;
use std::sync::Arc;

/// What the caller knows of one ranked item: its relevance grade if the item is judged.
///
/// `Label::UNJUDGED` is an item absent from the actual set (non-relevant, not judged). A judged item
/// is relevant when its grade is at least the plan's relevance level; any grade `> 0` is an nDCG
/// gain; a judged item with `0 <= grade < level` is a judged non-relevant for Bpref; a negative
/// grade (trec_eval's "in the pool but unjudged") is non-relevant and not counted by Bpref.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Label(i32);

impl Label {
    /// An item the actual set does not mention.
    pub const UNJUDGED: Label = Label(i32::MIN);

    /// A judged item with `grade` (`i32::MIN` is reserved and clamps to `i32::MIN + 1`).
    #[inline]
    pub const fn judged(grade: i32) -> Label {
        if grade == i32::MIN {
            Label(i32::MIN + 1)
        } else {
            Label(grade)
        }
    }

    /// The grade, if judged.
    #[inline]
    pub const fn grade(self) -> Option<i32> {
        if self.0 == i32::MIN {
            None
        } else {
            Some(self.0)
        }
    }
}

/// The actual set of one goal, as the accumulator needs it.
#[derive(Copy, Clone, Debug)]
pub struct Truth<'a> {
    judged: Judged<'a>,
    /// Size of the universe, when known (full-library rankings): enables `AUC`.
    pub universe: Option<u64>,
    /// The relevant lemmas (at the plan's relevance level) of each origin, in [`Origin::index`]
    /// order, when the caller knows them (premise selection: `R(origin=...)@k`).
    pub origins: [u64; 2],
}

#[derive(Copy, Clone, Debug)]
enum Judged<'a> {
    /// `relevant` items of grade 1, `nonrelevant` of grade 0.
    Binary { relevant: u64, nonrelevant: u64 },
    /// Every judged grade of the goal, sorted descending.
    Graded(&'a [i32]),
}

impl<'a> Truth<'a> {
    /// `relevant` lemmas of grade 1 and `judged_nonrelevant` of grade 0 (Bpref's denominator).
    pub fn binary(relevant: u64, judged_nonrelevant: u64) -> Truth<'static> {
        Truth {
            judged: Judged::Binary {
                relevant,
                nonrelevant: judged_nonrelevant,
            },
            universe: None,
            origins: [0; 2],
        }
    }

    /// Every judged grade of the goal (relevant or not), **sorted in descending order**. Returns
    /// `None` if the slice is not sorted that way.
    pub fn graded(grades_desc: &'a [i32]) -> Option<Truth<'a>> {
        if grades_desc.windows(2).any(|w| w[0] < w[1]) {
            return None;
        }
        Some(Truth {
            judged: Judged::Graded(grades_desc),
            universe: None,
            origins: [0; 2],
        })
    }

    /// The same truth with a known universe size.
    pub fn with_universe(mut self, universe: u64) -> Self {
        self.universe = Some(universe);
        self
    }

    /// The same truth with `in_file` relevant lemmas (at the plan's relevance level) defined in
    /// the goal's own file and `imported` in others (`R(origin=...)@k`'s denominators). Relevant
    /// lemmas of neither origin (premises the corpus does not define) are in neither count.
    pub fn with_origins(mut self, in_file: u64, imported: u64) -> Self {
        self.origins = [in_file, imported];
        self
    }

    /// Every judged grade, in descending order.
    pub(crate) fn grades_desc(&self) -> GradesDesc<'a> {
        match self.judged {
            Judged::Binary {
                relevant,
                nonrelevant,
            } => GradesDesc {
                ones: relevant,
                zeros: nonrelevant,
                rest: [].iter(),
            },
            Judged::Graded(g) => GradesDesc {
                ones: 0,
                zeros: 0,
                rest: g.iter(),
            },
        }
    }

    /// `(R, judged non-relevant)` at relevance level `level`.
    pub fn counts(&self, level: i32) -> (u64, u64) {
        match self.judged {
            Judged::Binary {
                relevant,
                nonrelevant,
            } => {
                if level <= 0 {
                    (relevant + nonrelevant, 0)
                } else if level == 1 {
                    (relevant, nonrelevant)
                } else {
                    (0, relevant + nonrelevant)
                }
            }
            Judged::Graded(g) => {
                // Sorted descending: relevant first, then judged non-relevant (0 <= grade < level);
                // negative grades are "judged unjudged" (trec_eval's -2) and count as neither.
                let r = g.partition_point(|&x| x >= level) as u64;
                let judged = g.partition_point(|&x| x >= 0.min(level)) as u64;
                (r, judged - r)
            }
        }
    }
}

/// The judged grades of a [`Truth`], descending.
#[derive(Clone, Debug)]
pub(crate) struct GradesDesc<'a> {
    ones: u64,
    zeros: u64,
    rest: std::slice::Iter<'a, i32>,
}

impl Iterator for GradesDesc<'_> {
    type Item = i32;

    fn next(&mut self) -> Option<i32> {
        if self.ones > 0 {
            self.ones -= 1;
            Some(1)
        } else if self.zeros > 0 {
            self.zeros -= 1;
            Some(0)
        } else {
            self.rest.next().copied()
        }
    }
}

/// Per-cutoff record: the state when the ranking passed the cutoff. Under tie groups, the
/// expected state over the orderings of the group the cutoff falls in (so `s` may be fractional).
#[derive(Copy, Clone, Debug, Default)]
struct CutRec {
    /// `s(k)`.
    s: f64,
    /// The AP sum up to `k`.
    ap: f64,
    /// DCG up to `k`.
    dcg: f64,
    /// The probability of a relevant item among the first `k` (0 or 1 for a given order).
    hit: f64,
    /// The reciprocal rank of the first relevant item within `k` (0 if none).
    rr: f64,
    /// `s(k)` of each origin ([`Origin::index`]; `R(origin=...)@k`).
    origin: [f64; 2],
}

/// Streams one goal at a time. Reuse one accumulator for many goals: [`begin`](Self::begin) resets
/// it without allocating.
#[derive(Clone, Debug)]
pub struct GoalAccumulator {
    plan: Arc<Plan>,
    level: i32,
    // The goal's truth.
    num_rel: u64,
    num_nonrel: u64,
    universe: Option<u64>,
    ideal_at_cut: Vec<f64>,
    ideal_full: f64,
    // Running state.
    n: u64,
    s: u64,
    ap: f64,
    dcg: f64,
    /// The reciprocal rank of the first relevant item (0 before one): `1/k1` for a given order,
    /// its expected value under tie groups.
    rr: f64,
    nonrel_seen: u64,
    bpref: f64,
    above_sum: u64,
    /// Under tie groups: (relevant, non-relevant) pairs inside groups, each counted 1/2 by AUC.
    tied_pairs: u64,
    rprec_s: Option<f64>,
    next_cut: usize,
    cut_rec: Vec<CutRec>,
    need: Vec<u64>,
    depth: Vec<u64>,
    /// The precision at `depth` (`need / depth` for a given order; at the group's end for ties).
    depth_p: Vec<f64>,
    imax: Vec<f64>,
    thr_n: Vec<u64>,
    thr_s: Vec<u64>,
    // The current tie group (Ties::Group): its score, size, relevant and judged non-relevant
    // items, and the sum of its positive grades (DCG gains).
    group_score: f64,
    group_n: u64,
    group_rel: u64,
    group_nonrel: u64,
    group_gain: f64,
    values: Vec<Option<f64>>,
    started: bool,
    /// The goal's ranked items as `(score key, relevant)`, when the plan keeps a pooled curve.
    pooled: Vec<(u64, bool)>,
    /// The unmasked ranking (`Leak@k`, `LeakRank`): its items so far, the inaccessible ones among
    /// them, the rank of the first (0 before one), the next leak cutoff to record and the counts
    /// recorded at each.
    leak_n: u64,
    leak_bad: u64,
    leak_first: u64,
    leak_next: usize,
    leak_at: Vec<u64>,
    /// `R(origin=...)@k`: the goal's relevant items of each origin, those ranked so far, those
    /// of the current tie group, and the origin of the next judged item
    /// ([`GoalAccumulator::set_origin`]).
    origin_r: [u64; 2],
    origin_s: [u64; 2],
    group_origin: [u64; 2],
    next_origin: Option<Origin>,
    /// The walk over the judged items, when a measure reads it (crate::walk).
    walk: Option<Box<Walk>>,
    /// Under tie groups with a walk: the current group's judged grades.
    group_grades: Vec<i32>,
    /// The plan's `Config::judged_only`, at hand in `push`.
    judged_only: bool,
}

/// Why a goal could not be accumulated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GoalError {
    /// Ranks must be strictly increasing and within `1..=n`.
    BadRank {
        /// The rank given.
        rank: u64,
        /// The ranking's length.
        n: u64,
        /// The rank before it.
        previous: u64,
    },
    /// The plan needs scores (thresholds or tie groups), which a ranks-only goal lacks.
    NeedsScores,
    /// Scores must be finite.
    NonFiniteScore,
    /// A universe, when given, holds at least the ranking and the actual set's relevant
    /// lemmas (`AUC` reads it).
    UniverseTooSmall {
        /// The universe's size.
        universe: u64,
        /// At least this many lemmas are needed.
        needed: u64,
    },
}

impl std::fmt::Display for GoalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GoalError::BadRank { rank, n, previous } => write!(
                f,
                "relevant rank {rank} is not in 1..={n} or not after the previous rank {previous}"
            ),
            GoalError::NeedsScores => write!(
                f,
                "the measure set needs scores (a score threshold or --ties group)"
            ),
            GoalError::NonFiniteScore => write!(f, "a score is NaN or infinite"),
            GoalError::UniverseTooSmall { universe, needed } => {
                write!(
                    f,
                    "universe size {universe} is smaller than the {needed} lemmas ranked or judged"
                )
            }
        }
    }
}

impl std::error::Error for GoalError {}

/// The measures of one goal, in the plan's order. `None` marks an undefined value
/// (`Depth(recall=r)` not reached; summary-only measures).
#[derive(Copy, Clone, Debug)]
pub struct GoalValues<'a> {
    measures: &'a [Measure],
    values: &'a [Option<f64>],
    pooled: &'a [(u64, bool)],
    relevant: u64,
}

impl<'a> GoalValues<'a> {
    /// The measures.
    pub fn measures(&self) -> &'a [Measure] {
        self.measures
    }
    /// The values, parallel to [`measures`](Self::measures).
    pub fn values(&self) -> &'a [Option<f64>] {
        self.values
    }
    /// The value of `m`, if the plan has it and it is defined.
    pub fn get(&self, m: &Measure) -> Option<f64> {
        self.measures
            .iter()
            .position(|x| x == m)
            .and_then(|i| self.values[i])
    }
    /// The goal's ranked items as `(score key, relevant)` when the plan keeps a pooled curve
    /// (else none), and its relevant count `R`.
    pub fn pooled(&self) -> (&'a [(u64, bool)], u64) {
        (self.pooled, self.relevant)
    }
    /// `(measure, value)` pairs.
    pub fn iter(&self) -> impl Iterator<Item = (&'a Measure, Option<f64>)> + 'a {
        self.measures.iter().zip(self.values.iter().copied())
    }
}

impl GoalAccumulator {
    /// An accumulator for `plan`.
    pub fn new(plan: Arc<Plan>) -> Self {
        let nc = plan.cutoffs.len();
        let nl = plan.levels.len();
        let nt = plan.thresholds.len();
        let nm = plan.measures.len();
        let plan_leaks = plan.leak_cutoffs.len();
        let judged_only = plan.config.judged_only;
        let walk = (!plan.walk.is_empty())
            .then(|| Box::new(Walk::new(&plan.walk, plan.config.relevance_level)));
        GoalAccumulator {
            level: plan.config.relevance_level,
            plan,
            num_rel: 0,
            num_nonrel: 0,
            universe: None,
            ideal_at_cut: vec![0.0; nc],
            ideal_full: 0.0,
            n: 0,
            s: 0,
            ap: 0.0,
            dcg: 0.0,
            rr: 0.0,
            nonrel_seen: 0,
            bpref: 0.0,
            above_sum: 0,
            tied_pairs: 0,
            rprec_s: None,
            next_cut: 0,
            cut_rec: vec![CutRec::default(); nc],
            need: vec![0; nl],
            depth: vec![0; nl],
            depth_p: vec![0.0; nl],
            imax: vec![0.0; nl],
            thr_n: vec![0; nt],
            thr_s: vec![0; nt],
            group_score: f64::NAN,
            group_n: 0,
            group_rel: 0,
            group_nonrel: 0,
            group_gain: 0.0,
            values: vec![None; nm],
            started: false,
            pooled: Vec::new(),
            leak_n: 0,
            leak_bad: 0,
            leak_first: 0,
            leak_next: 0,
            leak_at: vec![0; plan_leaks],
            origin_r: [0; 2],
            origin_s: [0; 2],
            group_origin: [0; 2],
            next_origin: None,
            walk,
            group_grades: Vec::new(),
            judged_only,
        }
    }

    /// The plan.
    pub fn plan(&self) -> &Arc<Plan> {
        &self.plan
    }

    /// Starts a goal with actual set `truth`. Cost: O(cutoffs + levels + positive grades).
    pub fn begin(&mut self, truth: &Truth<'_>) {
        let (r, nonrel) = truth.counts(self.level);
        self.num_rel = r;
        self.num_nonrel = nonrel;
        self.universe = truth.universe;
        self.n = 0;
        self.s = 0;
        self.ap = 0.0;
        self.dcg = 0.0;
        self.rr = 0.0;
        self.nonrel_seen = 0;
        self.bpref = 0.0;
        self.above_sum = 0;
        self.tied_pairs = 0;
        self.rprec_s = None;
        self.next_cut = 0;
        let interp = self.plan.config.interpolation;
        for (i, &(lv, rule)) in self.plan.levels.iter().enumerate() {
            self.need[i] = match rule {
                LevelRule::Textbook => crate::plan::Interpolation::Textbook.need(lv, r),
                LevelRule::Interpolated => interp.need(lv, r),
            };
            self.depth[i] = 0;
            self.depth_p[i] = 0.0;
            self.imax[i] = 0.0;
        }
        self.thr_n.iter_mut().for_each(|x| *x = 0);
        self.thr_s.iter_mut().for_each(|x| *x = 0);
        self.group_score = f64::NAN;
        self.group_n = 0;
        self.group_rel = 0;
        self.group_nonrel = 0;
        self.group_gain = 0.0;
        self.pooled.clear();
        self.leak_n = 0;
        self.leak_bad = 0;
        self.leak_first = 0;
        self.leak_next = 0;
        self.origin_r = truth.origins;
        self.origin_s = [0; 2];
        self.group_origin = [0; 2];
        self.next_origin = None;
        if self.plan.needs_ndcg {
            self.compute_ideal(truth);
        }
        self.group_grades.clear();
        if let Some(w) = &mut self.walk {
            w.begin(r, truth.grades_desc());
        }
        self.started = true;
    }

    /// Ideal DCG at each cutoff and for the whole list: positive grades in descending order,
    /// discounted by `log2(rank + 1)`, summed in rank order (trec_eval's `ndcg`).
    fn compute_ideal(&mut self, truth: &Truth<'_>) {
        let cutoffs = &self.plan.cutoffs;
        let mut c = 0;
        let mut idcg = 0.0;
        let record = |rank: u64, idcg: f64, c: &mut usize, at: &mut [f64]| {
            while *c < cutoffs.len() && cutoffs[*c] < rank {
                at[*c] = idcg;
                *c += 1;
            }
        };
        let mut rank = 0u64;
        match truth.judged {
            Judged::Binary { relevant, .. } => {
                for _ in 0..relevant {
                    rank += 1;
                    record(rank, idcg, &mut c, &mut self.ideal_at_cut);
                    idcg += 1.0 / ((rank + 1) as f64).log2();
                }
            }
            Judged::Graded(g) => {
                for &grade in g.iter().take_while(|&&x| x > 0) {
                    rank += 1;
                    record(rank, idcg, &mut c, &mut self.ideal_at_cut);
                    idcg += grade as f64 / ((rank + 1) as f64).log2();
                }
            }
        }
        for slot in &mut self.ideal_at_cut[c..] {
            *slot = idcg;
        }
        self.ideal_full = idcg;
    }

    /// Tells of the next item of the goal's *unmasked* ranking (the ranking before inaccessible
    /// premises are taken out: [`Plan::needs_leaks`]): whether it is inaccessible. Called in
    /// rank order, beside (not instead of) pushing the items that stay in the ranking.
    #[inline]
    pub fn push_unmasked(&mut self, inaccessible: bool) {
        self.leak_n += 1;
        if inaccessible {
            self.leak_bad += 1;
            if self.leak_first == 0 {
                self.leak_first = self.leak_n;
            }
        }
        let cuts = &self.plan.leak_cutoffs;
        while self.leak_next < cuts.len() && cuts[self.leak_next] == self.leak_n {
            self.leak_at[self.leak_next] = self.leak_bad;
            self.leak_next += 1;
        }
    }

    /// Tells at once, after [`GoalAccumulator::begin`], what `Leak@k` and `LeakRank` read of the
    /// goal's *unmasked* ranking (cut at the depth), for callers that know it without walking it:
    /// `head`, whether each of its first items is inaccessible, in rank order, at least its first
    /// `min(`[`Plan::max_leak_cutoff`]`, length)` items; `first`, the rank of its first
    /// inaccessible premise, if any (read when `head` holds none).
    pub fn set_unmasked(&mut self, head: &[bool], first: Option<u64>) {
        if !self.plan.needs_leaks {
            return;
        }
        for &bad in head {
            self.push_unmasked(bad);
        }
        if self.leak_first == 0 {
            self.leak_first = first.unwrap_or(0);
        }
    }

    /// Whether another item of the unmasked ranking can change a value: a leak cutoff not yet
    /// passed, or no inaccessible premise met yet while `LeakRank` is asked for.
    #[inline]
    pub fn wants_unmasked(&self) -> bool {
        self.plan.needs_leaks
            && (self.leak_next < self.plan.leak_cutoffs.len()
                || (self.plan.needs_leak_rank && self.leak_first == 0))
    }

    /// Says where the next judged item pushed is defined (premise selection, when the plan
    /// [needs origins](Plan::needs_origins)): `None` for neither origin. Read, and forgotten, by
    /// the next judged item; call it before each one ([`push`](Self::push),
    /// [`push_scored`](Self::push_scored)). The items of [`push_labels`](Self::push_labels),
    /// [`push_group`](Self::push_group) and [`evaluate_ranks`](Self::evaluate_ranks) are of no
    /// origin.
    #[inline]
    pub fn set_origin(&mut self, origin: Option<Origin>) {
        self.next_origin = origin;
    }

    /// Pushes the next item of the ranking.
    #[inline(always)]
    pub fn push(&mut self, label: Label) {
        debug_assert!(self.started, "push before begin");
        if self.judged_only && label.grade().is_none_or(|g| g < 0) {
            return;
        }
        self.n += 1;
        if let Some(g) = label.grade() {
            self.event(self.n, g);
        }
    }

    /// Pushes `count` unjudged items (the common case of a full-library ranking). O(1).
    #[inline]
    pub fn push_unjudged(&mut self, count: u64) {
        if !self.judged_only {
            self.n += count;
        }
    }

    /// Pushes a run of items. Unjudged stretches are skipped without per-item work.
    pub fn push_labels(&mut self, labels: &[Label]) {
        if self.judged_only {
            for &l in labels {
                self.push(l);
            }
            return;
        }
        let mut rest = labels;
        loop {
            // Find the next judged item; the unjudged prefix only advances n.
            match rest.iter().position(|l| *l != Label::UNJUDGED) {
                Some(i) => {
                    self.n += i as u64 + 1;
                    let g = rest[i].0;
                    self.event(self.n, g);
                    rest = &rest[i + 1..];
                }
                None => {
                    self.n += rest.len() as u64;
                    return;
                }
            }
        }
    }

    /// Pushes the next item with its score: needed for score thresholds and tie groups. Items must
    /// arrive in non-increasing score order for tie groups; thresholds accept any order.
    pub fn push_scored(&mut self, label: Label, score: f64) -> Result<(), GoalError> {
        if !score.is_finite() {
            return Err(GoalError::NonFiniteScore);
        }
        if self.judged_only && label.grade().is_none_or(|g| g < 0) {
            return Ok(());
        }
        let relevant = label.grade().is_some_and(|g| g >= self.level);
        if self.plan.pooled.is_some() {
            self.pooled.push((crate::score_key(score), relevant));
        }
        for (i, &t) in self.plan.thresholds.iter().enumerate() {
            if score >= t {
                self.thr_n[i] += 1;
                self.thr_s[i] += relevant as u64;
            }
        }
        if self.plan.config.ties == Ties::Group {
            // The item joins its tie group; the group is evaluated whole when it closes.
            if score != self.group_score {
                self.close_group();
                self.group_score = score;
            }
            self.n += 1;
            self.group_n += 1;
            if let Some(g) = label.grade() {
                self.group_judged(g);
            }
        } else {
            self.push(label);
        }
        Ok(())
    }

    /// Under [`Ties::Group`], pushes a whole tie group at once: `size` items of one score, among
    /// them the judged ones with `grades` (the others unjudged). A stretch of groups that hold no
    /// judged item may come as one call with no grades. For rankings known by their groups rather
    /// than item by item (dense score matrices, stores). Equals pushing the group's items one by
    /// one with [`push_scored`](Self::push_scored) and one score.
    pub fn push_group(&mut self, size: u64, grades: &[i32]) -> Result<(), GoalError> {
        self.push_group_from(size, grades, &[])
    }

    /// [`push_group`](Self::push_group) with where each judged item is defined
    /// (`R(origin=...)@k`): `origins[i]` the origin of the item of `grades[i]` (missing ones:
    /// neither origin).
    pub fn push_group_from(
        &mut self,
        size: u64,
        grades: &[i32],
        origins: &[Option<Origin>],
    ) -> Result<(), GoalError> {
        if self.plan.config.ties != Ties::Group
            || (grades.len() as u64) > size
            || self.plan.pooled.is_some()
        {
            return Err(GoalError::NeedsScores);
        }
        self.close_group();
        let size = match self.judged_only {
            true => grades.iter().filter(|&&g| g >= 0).count() as u64,
            false => size,
        };
        self.n += size;
        self.group_n = size;
        for (i, &g) in grades.iter().enumerate() {
            if g >= 0 || !self.judged_only {
                self.next_origin = origins.get(i).copied().flatten();
                self.group_judged(g);
            }
        }
        self.close_group();
        // The next pushed item starts a group of its own.
        self.group_score = f64::NAN;
        Ok(())
    }

    /// Counts a judged item of the current tie group: its gain, and whether it is relevant or
    /// judged non-relevant.
    fn group_judged(&mut self, grade: i32) {
        if self.walk.is_some() {
            self.group_grades.push(grade);
        }
        if grade > 0 {
            self.group_gain += grade as f64;
        }
        let origin = self.next_origin.take();
        if grade >= self.level {
            self.group_rel += 1;
            if let Some(o) = origin {
                self.group_origin[o.index()] += 1;
            }
        } else if grade >= 0 {
            self.group_nonrel += 1;
        }
    }

    /// Closes the current tie group, ranks `a+1 ..= a+g` with `h` relevant items (docs/METRICS.md
    /// §2): threshold measures see its end (each relevant item is credited `p(a+g)`), counts at a
    /// cutoff inside it take their expected value over the group's orderings, DCG gives each item
    /// the mean discount of the group's ranks, and a non-relevant item of the group counts as half
    /// an item above each relevant one (Bpref, AUC). Cost: O(g) for a group with a relevant item or
    /// a gain, O(cutoffs and levels it closes) otherwise.
    fn close_group(&mut self) {
        let g = self.group_n;
        if g == 0 {
            return;
        }
        let (h, j, gain) = (self.group_rel, self.group_nonrel, self.group_gain);
        let a = self.n - g;
        let s0 = self.s as f64;
        let (hf, gf) = (h as f64, g as f64);
        let end = a + g;
        let p_end = (self.s + h) as f64 / end as f64;
        let disc = |rank: u64| 1.0 / ((rank + 1) as f64).log2();
        let found_before = self.rr > 0.0;
        // One pass over the group's ranks a+1, a+2, ... keeps, for the first m of them: the sum
        // of their discounts; the probability that none is relevant; and, when no relevant item
        // ranks above the group, the expected reciprocal rank of a first relevant item among
        // them (the first relevant item is the group's m-th with probability h/g, then times
        // (g-m-h+1)/(g-m) per step). It goes to the last cutoff inside the group, or to the end
        // when the whole group's DCG or reciprocal rank is needed.
        let cutoffs = &self.plan.cutoffs;
        let whole = gain > 0.0 || (h > 0 && !found_before);
        let (mut dsum, mut miss, mut pfirst, mut rr) = (0.0, 1.0, 0.0, 0.0);
        let mut m = 0u64;
        loop {
            while self.next_cut < cutoffs.len() && cutoffs[self.next_cut] == a + m {
                let frac = m as f64 / gf;
                let origin =
                    |o: usize| self.origin_s[o] as f64 + frac * self.group_origin[o] as f64;
                self.cut_rec[self.next_cut] = CutRec {
                    s: s0 + frac * hf,
                    ap: self.ap + frac * hf * p_end,
                    dcg: self.dcg + gain / gf * dsum,
                    hit: if found_before { 1.0 } else { 1.0 - miss },
                    rr: if found_before { self.rr } else { rr },
                    origin: [origin(0), origin(1)],
                };
                self.next_cut += 1;
            }
            let more_cuts = self.next_cut < cutoffs.len() && cutoffs[self.next_cut] <= end;
            if m == g || !(more_cuts || whole) {
                break;
            }
            // Item m+1 of the group, at rank a+m+1.
            m += 1;
            dsum += disc(a + m);
            if !found_before && h > 0 && m <= g - h + 1 {
                pfirst = if m == 1 {
                    hf / gf
                } else {
                    pfirst * (g - (m - 1) - h + 1) as f64 / (g - (m - 1)) as f64
                };
                rr += pfirst / (a + m) as f64;
            }
            miss = if g - m < h {
                0.0
            } else {
                miss * (g - m + 1 - h) as f64 / (g - m + 1) as f64
            };
        }
        // The whole group (the pass above reached its end where these need it).
        if gain > 0.0 {
            self.dcg += gain / gf * dsum;
        }
        if h > 0 {
            self.ap += hf * p_end;
            if !found_before {
                self.rr = rr;
            }
            let r = self.num_rel;
            if self.rprec_s.is_none() && r > a && r <= end {
                self.rprec_s = Some(s0 + (r - a) as f64 * hf / gf);
            }
            // Bpref: the group's judged non-relevant items count half above each relevant one.
            let above = self.nonrel_seen as f64 + j as f64 / 2.0;
            let term = if above > 0.0 && self.num_nonrel > 0 {
                let denom = r.min(self.num_nonrel) as f64;
                1.0 - above.min(r as f64) / denom
            } else {
                1.0
            };
            self.bpref += hf * term;
            // AUC: non-relevant items above each relevant one; those of the group count half.
            self.above_sum += h * (a - self.s);
            self.tied_pairs += h * (g - h);
            let s_end = self.s + h;
            for i in 0..self.need.len() {
                if s_end >= self.need[i] {
                    if self.depth[i] == 0 {
                        self.depth[i] = end;
                        self.depth_p[i] = p_end;
                    }
                    if p_end > self.imax[i] {
                        self.imax[i] = p_end;
                    }
                }
            }
            self.s = s_end;
        } else if self.rprec_s.is_none() && self.num_rel > a && self.num_rel <= end {
            self.rprec_s = Some(s0);
        }
        self.nonrel_seen += j;
        if let Some(w) = &mut self.walk {
            // The walk reads the group in ascending grade, its unjudged items first.
            self.group_grades.sort_unstable();
            let first = end + 1 - self.group_grades.len() as u64;
            for (i, &grade) in self.group_grades.iter().enumerate() {
                w.event(first + i as u64, grade);
            }
            self.group_grades.clear();
        }
        for (s, g) in self.origin_s.iter_mut().zip(&mut self.group_origin) {
            *s += std::mem::take(g);
        }
        self.group_n = 0;
        self.group_rel = 0;
        self.group_nonrel = 0;
        self.group_gain = 0.0;
    }

    /// A judged item at `rank`.
    #[inline]
    fn event(&mut self, rank: u64, grade: i32) {
        let cutoffs = &self.plan.cutoffs;
        while self.next_cut < cutoffs.len() && cutoffs[self.next_cut] < rank {
            self.cut_rec[self.next_cut] = self.rec_now();
            self.next_cut += 1;
        }
        // DCG only for plans that read it: a logarithm per judged item is a measurable share of
        // a shallow ranking's cost.
        if grade > 0 && self.plan.needs_ndcg {
            self.dcg += grade as f64 / ((rank + 1) as f64).log2();
        }
        let origin = self.next_origin.take();
        if grade >= self.level {
            self.relevant(rank);
            if let Some(o) = origin {
                self.origin_s[o.index()] += 1;
            }
        } else if grade >= 0 {
            self.nonrel_seen += 1;
        }
        if let Some(w) = &mut self.walk {
            w.event(rank, grade);
        }
    }

    /// The state after the last item (a given order).
    #[inline]
    fn rec_now(&self) -> CutRec {
        CutRec {
            s: self.s as f64,
            ap: self.ap,
            dcg: self.dcg,
            hit: if self.s > 0 { 1.0 } else { 0.0 },
            rr: self.rr,
            origin: [self.origin_s[0] as f64, self.origin_s[1] as f64],
        }
    }

    /// A relevant item at `rank`.
    fn relevant(&mut self, rank: u64) {
        let r = self.num_rel;
        if self.rprec_s.is_none() && rank > r {
            self.rprec_s = Some(self.s as f64);
        }
        self.s += 1;
        let s = self.s;
        let p = s as f64 / rank as f64;
        self.ap += p;
        if self.rr == 0.0 {
            self.rr = 1.0 / rank as f64;
        }
        // Bpref (trec_eval): judged non-relevant above, capped at R, over min(R, judged non-rel).
        if self.nonrel_seen > 0 && self.num_nonrel > 0 {
            let denom = r.min(self.num_nonrel) as f64;
            self.bpref += 1.0 - self.nonrel_seen.min(r) as f64 / denom;
        } else {
            self.bpref += 1.0;
        }
        self.above_sum += rank - s;
        for i in 0..self.need.len() {
            if s >= self.need[i] {
                if self.depth[i] == 0 {
                    self.depth[i] = rank;
                    self.depth_p[i] = self.need[i] as f64 / rank as f64;
                }
                if p > self.imax[i] {
                    self.imax[i] = p;
                }
            }
        }
    }

    /// Accumulates a goal given only the ranks (1-based, strictly increasing) and grades of its
    /// judged items and the ranking length `n`: the dense-matrix path. Equals streaming the
    /// ranking with every other item unjudged. A plan that needs scores (thresholds, tie groups)
    /// can evaluate only an empty ranking this way (`n = 0`: a goal without predictions).
    pub fn evaluate_ranks(
        &mut self,
        truth: &Truth<'_>,
        n: u64,
        judged: impl IntoIterator<Item = (u64, i32)>,
    ) -> Result<GoalValues<'_>, GoalError> {
        self.evaluate_ranks_leaking(truth, n, judged, &[], None)
    }

    /// [`GoalAccumulator::evaluate_ranks`] with what `Leak@k` and `LeakRank` read of the goal's
    /// *unmasked* ranking: `head` and `first` as [`GoalAccumulator::set_unmasked`] takes them.
    pub fn evaluate_ranks_leaking(
        &mut self,
        truth: &Truth<'_>,
        n: u64,
        judged: impl IntoIterator<Item = (u64, i32)>,
        head: &[bool],
        first: Option<u64>,
    ) -> Result<GoalValues<'_>, GoalError> {
        let judged = judged.into_iter().map(|(rank, grade)| (rank, grade, None));
        self.evaluate_ranks_from(truth, n, judged, head, first)
    }

    /// [`GoalAccumulator::evaluate_ranks_leaking`] with where each judged item is defined
    /// (`R(origin=...)@k`; `None`: neither origin).
    pub fn evaluate_ranks_from(
        &mut self,
        truth: &Truth<'_>,
        n: u64,
        judged: impl IntoIterator<Item = (u64, i32, Option<Origin>)>,
        head: &[bool],
        first: Option<u64>,
    ) -> Result<GoalValues<'_>, GoalError> {
        if self.plan.needs_scores && n > 0 {
            return Err(GoalError::NeedsScores);
        }
        self.begin(truth);
        self.set_unmasked(head, first);
        let judged_only = self.judged_only;
        let mut prev = 0u64;
        for (rank, grade, origin) in judged {
            self.next_origin = origin;
            if rank <= prev || rank > n {
                self.started = false;
                return Err(GoalError::BadRank {
                    rank,
                    n,
                    previous: prev,
                });
            }
            prev = rank;
            if judged_only {
                // Only the judged items are ranked: they take ranks 1, 2, ... in order.
                if grade >= 0 {
                    self.n += 1;
                    self.event(self.n, grade);
                }
                continue;
            }
            self.n = rank;
            self.event(rank, grade);
        }
        self.next_origin = None;
        if !judged_only {
            self.n = n;
        }
        self.finish()
    }

    /// The values the last [`finish`](Self::finish) computed, in the plan's order (all `None`
    /// before the first).
    pub fn last_values(&self) -> &[Option<f64>] {
        &self.values
    }

    /// Ends the goal and computes every measure of the plan.
    pub fn finish(&mut self) -> Result<GoalValues<'_>, GoalError> {
        debug_assert!(self.started, "finish before begin");
        self.started = false;
        if self.plan.config.ties == Ties::Group {
            self.close_group();
        }
        if let Some(w) = &mut self.walk {
            w.finish(self.n);
        }
        let fin = self.rec_now();
        for rec in &mut self.cut_rec[self.next_cut..] {
            *rec = fin;
        }
        for at in &mut self.leak_at[self.leak_next..] {
            *at = self.leak_bad;
        }
        // A universe given must hold what is ranked and judged relevant, whether or not a
        // measure reads it.
        if let Some(u) = self.universe {
            let needed = self.n + (self.num_rel - self.s);
            if u < needed {
                return Err(GoalError::UniverseTooSmall {
                    universe: u,
                    needed,
                });
            }
        }
        // Every measure reads its value from the final state through its declaration.
        let mut values = std::mem::take(&mut self.values);
        let plan = &*self.plan;
        for ((m, slot), v) in plan.measures.iter().zip(&plan.slots).zip(&mut values) {
            let (k, at) = match slot.cut {
                Some(c) => (plan.cutoffs[c], self.cut_rec[c]),
                None => (self.n, fin),
            };
            *v = m.value(&GoalView {
                acc: self,
                slot,
                k,
                at,
            });
        }
        self.values = values;
        Ok(GoalValues {
            measures: &self.plan.measures,
            values: &self.values,
            pooled: &self.pooled,
            relevant: self.num_rel,
        })
    }
}

/// What a measure's declaration reads when the goal finishes: the accumulator's final state, and
/// the records (cutoff, level, threshold) the measure's [`Needs`](crate::measures::Needs) asked
/// for. Notation of METRICS.md §1: `n` items ranked, `R` relevant in the actual set, `s(k)` relevant
/// among the first `k`, `p(k) = s(k)/k`.
pub(crate) struct GoalView<'a> {
    acc: &'a GoalAccumulator,
    slot: &'a Slot,
    /// The measure's cutoff, or `n` without one.
    k: u64,
    /// The state at rank `k`.
    at: CutRec,
}

/// A recall level's record: see [`GoalView::level`].
#[derive(Copy, Clone, Debug)]
pub(crate) struct LevelState {
    /// Relevant items the level requires.
    pub need: u64,
    /// The first rank `k` at a relevant item with `s(k) >= need`, if reached (under tie groups,
    /// the end of the group where it is reached).
    pub depth: Option<u64>,
    /// `p(depth)`.
    pub p_at_depth: f64,
    /// The best `p(k)` over relevant ranks `k` with `s(k) >= need` (0 if none).
    pub max_p: f64,
}

impl GoalView<'_> {
    /// `n`: the ranking's length.
    #[inline]
    pub fn n(&self) -> u64 {
        self.acc.n
    }

    /// `R`: relevant items in the actual set.
    #[inline]
    pub fn r(&self) -> u64 {
        self.acc.num_rel
    }

    /// The collection's size, when the plan knows it (trec_eval's `-N`; else 0).
    #[inline]
    pub fn collection_size(&self) -> u64 {
        self.acc.plan.config.collection_size
    }

    /// `s(n)`: relevant items retrieved.
    #[inline]
    pub fn s(&self) -> u64 {
        self.acc.s
    }

    /// `sum of p(i)` over the relevant ranks `i` of the whole ranking.
    #[inline]
    pub fn ap_sum(&self) -> f64 {
        self.acc.ap
    }

    /// The measure's cutoff `k` (which may exceed `n`), or `n` without one.
    #[inline]
    pub fn k(&self) -> u64 {
        self.k
    }

    /// `s(k)` (under tie groups, its expected value over the orderings of the group `k` falls
    /// in).
    #[inline]
    pub fn s_k(&self) -> f64 {
        self.at.s
    }

    /// `R_o`: the goal's relevant items of origin `o` (as the caller counted them).
    #[inline]
    pub fn r_origin(&self, o: Origin) -> u64 {
        self.acc.origin_r[o.index()]
    }

    /// `s_o(k)`: relevant items of origin `o` among the first `k` (under tie groups, its
    /// expected value).
    #[inline]
    pub fn s_origin_k(&self, o: Origin) -> f64 {
        self.at.origin[o.index()]
    }

    /// The probability of a relevant item among the first `k` (0 or 1 for a given order).
    #[inline]
    pub fn hit_k(&self) -> f64 {
        self.at.hit
    }

    /// The reciprocal rank of the first relevant item within `k` (0 if none); under tie groups its
    /// expected value.
    #[inline]
    pub fn rr_k(&self) -> f64 {
        self.at.rr
    }

    /// `sum of p(i)` over the relevant ranks `i <= k`.
    #[inline]
    pub fn ap_sum_k(&self) -> f64 {
        self.at.ap
    }

    /// DCG of the first `k` items (every positive grade a gain, discount `log2(rank + 1)`).
    #[inline]
    pub fn dcg_k(&self) -> f64 {
        self.at.dcg
    }

    /// The ideal DCG at the measure's cutoff, or of the whole ideal ranking without one.
    #[inline]
    pub fn ideal_dcg_k(&self) -> f64 {
        match self.slot.cut {
            Some(c) => self.acc.ideal_at_cut[c],
            None => self.acc.ideal_full,
        }
    }

    /// `s(R)` (under tie groups, expected).
    #[inline]
    pub fn s_at_r(&self) -> f64 {
        self.acc.rprec_s.unwrap_or(self.acc.s as f64)
    }

    /// trec_eval's Bpref sum: over retrieved relevant items, `1 - min(N_above, R) / min(R, N)`
    /// (1 when no judged non-relevant item is above or none is judged).
    #[inline]
    pub fn bpref_sum(&self) -> f64 {
        self.acc.bpref
    }

    /// Judged non-relevant items retrieved: grade `>= 0` and below the relevance level (negative
    /// grades are judged unjudged and count as neither).
    #[inline]
    pub fn nonrelevant_judged(&self) -> u64 {
        self.acc.nonrel_seen
    }

    /// Over retrieved relevant items, the number of non-relevant items ranked above each (those
    /// tied with it excluded: see [`GoalView::tied_pairs`]).
    #[inline]
    pub fn nonrelevant_above_sum(&self) -> u64 {
        self.acc.above_sum
    }

    /// Under tie groups, the (relevant, non-relevant) pairs inside one group; 0 otherwise.
    #[inline]
    pub fn tied_pairs(&self) -> u64 {
        self.acc.tied_pairs
    }

    /// The walk over the judged items (crate::walk), and the measure's index among its needs.
    #[inline]
    pub fn walk(&self) -> (&Walk, usize) {
        let w = self.acc.walk.as_deref().expect("the plan has a walk");
        (w, self.slot.walk.expect("the measure needs the walk"))
    }

    /// The universe size, when the truth gave one.
    #[inline]
    pub fn universe(&self) -> Option<u64> {
        self.acc.universe
    }

    /// The measure's recall-level record.
    #[inline]
    pub fn level(&self) -> LevelState {
        let l = self.slot.level.expect("the measure needs a level");
        LevelState {
            need: self.acc.need[l],
            depth: (self.acc.depth[l] > 0).then_some(self.acc.depth[l]),
            p_at_depth: self.acc.depth_p[l],
            max_p: self.acc.imax[l],
        }
    }

    /// The best precisions of `count` consecutive level records starting at the measure's.
    #[inline]
    pub fn max_p_run(&self, count: usize) -> &[f64] {
        let l = self.slot.level.expect("the measure needs levels");
        &self.acc.imax[l..l + count]
    }

    /// The needs (relevant items required) and best precisions of `count` consecutive level
    /// records starting at the measure's.
    #[inline]
    pub fn level_run(&self, count: usize) -> (&[u64], &[f64]) {
        let l = self.slot.level.expect("the measure needs levels");
        (&self.acc.need[l..l + count], &self.acc.imax[l..l + count])
    }

    /// Inaccessible premises among the first `k` of the unmasked ranking, `k` the measure's leak
    /// cutoff.
    #[inline]
    pub fn leaked_k(&self) -> u64 {
        let l = self.slot.leak.expect("the measure needs a leak cutoff");
        self.acc.leak_at[l]
    }

    /// The rank of the first inaccessible premise of the unmasked ranking, if any.
    #[inline]
    pub fn leak_rank(&self) -> Option<u64> {
        (self.acc.leak_first > 0).then_some(self.acc.leak_first)
    }

    /// `(items, relevant items)` scored at or above the measure's threshold.
    #[inline]
    pub fn threshold(&self) -> (u64, u64) {
        let t = self.slot.threshold.expect("the measure needs a threshold");
        (self.acc.thr_n[t], self.acc.thr_s[t])
    }
}
