//! The walk: the per-goal state of the measures that read the judged items one by one, each at
//! its rank (trec_eval's `binG`, `G`, `ndcg_rel`, `Rndcg`, `infAP`, `Rprec_mult`, `unj`, `rbp`,
//! `rbp_resid`).
//!
//! The accumulator hands the walk every judged item with its rank, in rank order; the ranks in
//! between are the items the actual set does not mention. For a given order that is the ranking
//! itself. Under [`Ties::Group`](crate::Ties::Group) the walk reads each tie group in one fixed
//! order, whatever the order the items came in (docs/METRICS.md §2): ascending grade, the items
//! without a judgment first, so the group's relevant items come last.
//!
//! A walk keeps only what its plan asks for ([`WalkNeed`]): counts, running sums, and per goal the
//! positive grades of the ideal ranking (O(judged) to set up, like the ideal DCG) when a gain
//! measure is asked for. Each item costs O(1) plus the cutoffs it passes; the gain measures also
//! walk the ideal ranking once; `rbp` and `rbp_resid` multiply once per rank until `p^rank`
//! leaves the doubles (about 7,000 ranks for `p = 0.9`).

use crate::lists::Gains;

/// What one measure needs the walk to keep.
#[derive(Copy, Clone, Debug, PartialEq)]
pub(crate) enum WalkNeed {
    /// `binG`'s sum over relevant items of `1 / log2(2 + non-relevant above)`.
    BinG,
    /// `infAP`'s sum.
    InfAp,
    /// The gains against the ideal ranking (`G`, `ndcg_rel`).
    Gain,
    /// The DCG at each gain-level boundary of the ideal ranking (`Rndcg`).
    GainLevels,
    /// `s(c)` at `c = (long)(x·R + 0.9)` (`Rprec_mult`).
    RMult(f64),
    /// The judged items (grade `>= 0`) among the first `k` (`unj`).
    Judged(u32),
    /// The rank-biased sums for persistence `p` (`rbp`, `rbp_resid`).
    Rbp(f64),
    /// The judgments of the first `len` items (`relstring`).
    Prefix(u32),
    /// The DCG and the ideal DCG under custom gains (trec_eval's `ndcg.1=3,2=9`, `dcg`,
    /// `ideal_dcg`).
    Gains(Gains),
}

/// One custom gain table's sums for a goal, as trec_eval's `ndcg` forms them.
#[derive(Clone, Debug, Default)]
pub(crate) struct GainState {
    /// `(grade, gain, judged items of the grade)`, in trec_eval's order (see [`gain_table`]).
    table: Vec<(i64, f64, u64)>,
    /// The DCG so far: `gain / log2(rank + 1)` over the items whose gain is not 0.
    dcg: f64,
    /// The ideal DCG.
    ideal: f64,
}

impl GainState {
    /// The DCG of the items walked.
    pub fn dcg(&self) -> f64 {
        self.dcg
    }

    /// The ideal DCG.
    pub fn ideal(&self) -> f64 {
        self.ideal
    }

    fn gain(&self, grade: i64) -> f64 {
        self.table
            .iter()
            .find(|e| e.0 == grade)
            .map_or(0.0, |e| e.1)
    }
}

/// trec_eval's gain table for one goal: the pairs given (in their order), then every grade from
/// 0 to the largest judged that no pair names, gaining its grade; each with the number of judged
/// items of its grade (a grade named twice counts its items at its first pair); sorted by gain
/// as trec_eval's `qsort` sorts them (glibc's merge sort, with a comparison that truncates the
/// difference of two gains to an integer, so gains less than 1 apart compare equal).
fn gain_table(pairs: &[(i64, f64)], counts: &[u64]) -> Vec<(i64, f64, u64)> {
    let mut t: Vec<(i64, f64, u64)> = pairs.iter().map(|&(g, x)| (g, x, 0)).collect();
    for (grade, &n) in counts.iter().enumerate() {
        let grade = grade as i64;
        match t.iter_mut().find(|e| e.0 == grade) {
            Some(e) => e.2 = n,
            None => t.push((grade, grade as f64, n)),
        }
    }
    merge_sort(&mut t);
    t
}

/// glibc's `msort` of the gain table under trec_eval's `comp_rel_gain`: `(int)(a - b)`.
fn merge_sort(v: &mut [(i64, f64, u64)]) {
    let n = v.len();
    if n <= 1 {
        return;
    }
    let (n1, _) = (n / 2, n - n / 2);
    merge_sort(&mut v[..n1]);
    merge_sort(&mut v[n1..]);
    let (left, right) = (v[..n1].to_vec(), v[n1..].to_vec());
    let (mut i, mut j, mut k) = (0, 0, 0);
    while i < left.len() && j < right.len() {
        // (int)(a - b) <= 0: a is taken first.
        if ((left[i].1 - right[j].1) as i32) <= 0 {
            v[k] = left[i];
            i += 1;
        } else {
            v[k] = right[j];
            j += 1;
        }
        k += 1;
    }
    for &e in left[i..].iter().chain(&right[j..]) {
        v[k] = e;
        k += 1;
    }
}

/// trec_eval's ideal DCG of a sorted gain table: the grades from the last entry down, each
/// repeated as many times as it has judged items, until an entry whose gain is not positive.
fn ideal_dcg(table: &[(i64, f64, u64)]) -> f64 {
    let mut ideal = 0.0;
    let mut rank = 0u64;
    for &(_, gain, n) in table.iter().rev() {
        if n == 0 {
            continue;
        }
        if gain <= 0.0 {
            break;
        }
        for _ in 0..n {
            rank += 1;
            ideal += gain / ((rank + 1) as f64).log2();
        }
    }
    ideal
}

/// What [`Walk::prefix`] holds for an item the qrels do not mention (trec_eval's `-`).
pub(crate) const NOT_IN_QRELS: i32 = i32::MIN;

/// One record of a [`WalkNeed::RMult`] or [`WalkNeed::Judged`] cutoff.
#[derive(Copy, Clone, Debug, Default)]
struct Cut {
    /// The rank (0: none, the value is 0).
    rank: u64,
    /// The count when the ranking passed the rank.
    count: u64,
}

/// One persistence's rank-biased sums.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct RbpState {
    p: f64,
    /// `p^pos`, by repeated multiplication as trec_eval forms it.
    cur: f64,
    /// Ranks walked.
    pos: u64,
    /// Sum of `gain · p^(rank - 1)` over items with a non-zero gain.
    gain_sum: f64,
    /// Sum of `p^(rank - 1)` over unjudged items (not in the qrels, or graded negative).
    unjudged_sum: f64,
    /// Whether some item was unjudged.
    unjudged: bool,
}

impl RbpState {
    /// Walks `count` unjudged ranks.
    fn skip(&mut self, count: u64) {
        if count == 0 {
            return;
        }
        self.unjudged = true;
        for _ in 0..count {
            if self.cur == 0.0 {
                break;
            }
            self.unjudged_sum += self.cur;
            self.cur *= self.p;
        }
        self.pos += count;
    }

    /// `sum of gain · p^(rank - 1)` (trec_eval's `rbp` is `(1 - p)` times it).
    pub fn gain_sum(&self) -> f64 {
        self.gain_sum
    }

    /// trec_eval's `rbp_resid`: `p^n + (1 - p) · sum of p^(rank - 1)` over unjudged items; 0
    /// when none is.
    pub fn residual(&self) -> f64 {
        if self.unjudged {
            self.cur + (1.0 - self.p) * self.unjudged_sum
        } else {
            0.0
        }
    }
}

/// The walk's state for one goal. See the module documentation.
#[derive(Clone, Debug)]
pub(crate) struct Walk {
    needs: Vec<WalkNeed>,
    level: i32,
    gain: bool,
    levels: bool,
    // The goal.
    r: u64,
    /// Positive grades of the actual set, descending (the ideal ranking's gains).
    ideal: Vec<f64>,
    /// Sum of the ideal gains.
    ideal_total: f64,
    /// The largest grade `>= 0` judged (rbp's gains are grade / max when max > 1).
    max_grade: i32,
    // The items so far.
    s: u64,
    nonrel: u64,
    pool_unjudged: u64,
    judged: u64,
    bing: f64,
    infap: f64,
    // Gains: the ideal ranking walked to `ideal_at`, its cost (sum of max(gain, 1)) and DCG.
    ideal_at: usize,
    ideal_cost: f64,
    ideal_dcg: f64,
    gain_sum: f64,
    dcg: f64,
    g: f64,
    rel_sum: f64,
    rel_ret: u64,
    // Rndcg: (rank, ideal DCG there) of each boundary, the DCG recorded at those passed.
    bounds: Vec<(u64, f64)>,
    bound_dcg: Vec<f64>,
    // Cutoffs, per need (unused for others), and the needs' indices in ascending rank.
    cuts: Vec<Cut>,
    cut_order: Vec<usize>,
    cut_next: usize,
    /// The `Rbp` needs' sums, each with its need's index (only those: every judged item steps
    /// each of them).
    rbp: Vec<(usize, RbpState)>,
    /// The grades of the first `prefix_len` items ([`NOT_IN_QRELS`] for those not judged).
    prefix_len: usize,
    prefix: Vec<i32>,
    /// The `Gains` needs' sums, each with its need's index.
    gains: Vec<(usize, Gains, GainState)>,
    n: u64,
}

impl Walk {
    /// A walk for `needs` (distinct) at relevance level `level`.
    pub fn new(needs: &[WalkNeed], level: i32) -> Walk {
        Walk {
            needs: needs.to_vec(),
            level,
            gain: needs.contains(&WalkNeed::Gain),
            levels: needs.contains(&WalkNeed::GainLevels),
            r: 0,
            ideal: Vec::new(),
            ideal_total: 0.0,
            max_grade: 0,
            s: 0,
            nonrel: 0,
            pool_unjudged: 0,
            judged: 0,
            bing: 0.0,
            infap: 0.0,
            ideal_at: 0,
            ideal_cost: 0.0,
            ideal_dcg: 0.0,
            gain_sum: 0.0,
            dcg: 0.0,
            g: 0.0,
            rel_sum: 0.0,
            rel_ret: 0,
            bounds: Vec::new(),
            bound_dcg: Vec::new(),
            cuts: vec![Cut::default(); needs.len()],
            cut_order: Vec::new(),
            cut_next: 0,
            rbp: (needs.iter().enumerate())
                .filter_map(|(i, n)| match *n {
                    WalkNeed::Rbp(p) => Some((
                        i,
                        RbpState {
                            p,
                            ..RbpState::default()
                        },
                    )),
                    _ => None,
                })
                .collect(),
            prefix_len: needs
                .iter()
                .map(|n| match *n {
                    WalkNeed::Prefix(len) => len as usize,
                    _ => 0,
                })
                .max()
                .unwrap_or(0),
            prefix: Vec::new(),
            gains: (needs.iter().enumerate())
                .filter_map(|(i, n)| match *n {
                    WalkNeed::Gains(g) => Some((i, g, GainState::default())),
                    _ => None,
                })
                .collect(),
            n: 0,
        }
    }

    /// Starts a goal: `r` relevant, every judged grade in descending order.
    pub fn begin(&mut self, r: u64, grades_desc: impl Iterator<Item = i32> + Clone) {
        self.r = r;
        self.s = 0;
        self.nonrel = 0;
        self.pool_unjudged = 0;
        self.judged = 0;
        self.bing = 0.0;
        self.infap = 0.0;
        self.ideal_at = 0;
        self.ideal_cost = 0.0;
        self.ideal_dcg = 0.0;
        self.gain_sum = 0.0;
        self.dcg = 0.0;
        self.g = 0.0;
        self.rel_sum = 0.0;
        self.rel_ret = 0;
        self.n = 0;
        self.prefix.clear();
        self.max_grade = grades_desc.clone().find(|&g| g >= 0).unwrap_or(0).max(0);
        if !self.gains.is_empty() {
            let mut counts = vec![0u64; self.max_grade as usize + 1];
            for g in grades_desc.clone().filter(|&g| g >= 0) {
                counts[g as usize] += 1;
            }
            for (_, pairs, st) in &mut self.gains {
                st.table = gain_table(pairs.get(), &counts);
                st.dcg = 0.0;
                st.ideal = ideal_dcg(&st.table);
            }
        }
        self.ideal.clear();
        self.ideal_total = 0.0;
        if self.gain || self.levels {
            for g in grades_desc.take_while(|&g| g > 0) {
                self.ideal.push(g as f64);
                self.ideal_total += g as f64;
            }
        }
        self.bounds.clear();
        self.bound_dcg.clear();
        if self.levels {
            // A boundary after each run of one gain: the ideal DCG there, summed in rank order.
            let mut idcg = 0.0;
            for (i, &g) in self.ideal.iter().enumerate() {
                idcg += g / ((i + 2) as f64).log2();
                if self.ideal.get(i + 1) != Some(&g) {
                    self.bounds.push((i as u64 + 1, idcg));
                }
            }
        }
        self.cut_order.clear();
        for (i, need) in self.needs.iter().enumerate() {
            let rank = match *need {
                // trec_eval's (long) truncates toward zero; a rank below 1 is never reached.
                WalkNeed::RMult(x) => (x * r as f64 + 0.9).max(0.0) as u64,
                WalkNeed::Judged(k) => k as u64,
                _ => continue,
            };
            self.cuts[i] = Cut { rank, count: 0 };
            if rank > 0 {
                self.cut_order.push(i);
            }
        }
        let cuts = &self.cuts;
        self.cut_order.sort_by_key(|&i| cuts[i].rank);
        self.cut_next = 0;
        for (_, st) in &mut self.rbp {
            st.cur = 1.0;
            st.pos = 0;
            st.gain_sum = 0.0;
            st.unjudged_sum = 0.0;
            st.unjudged = false;
        }
    }

    /// Records the cutoffs and boundaries before `rank`.
    #[inline]
    fn pass(&mut self, rank: u64) {
        while let Some(&i) = self.cut_order.get(self.cut_next) {
            if self.cuts[i].rank >= rank {
                break;
            }
            self.cuts[i].count = match self.needs[i] {
                WalkNeed::Judged(_) => self.judged,
                _ => self.s,
            };
            self.cut_next += 1;
        }
        while self.bound_dcg.len() < self.bounds.len() && self.bounds[self.bound_dcg.len()].0 < rank
        {
            self.bound_dcg.push(self.dcg);
        }
    }

    /// Walks the ideal ranking to rank `min(rank, its length)`.
    fn ideal_to(&mut self, rank: u64) {
        let upto = (rank as usize).min(self.ideal.len());
        while self.ideal_at < upto {
            let ig = self.ideal[self.ideal_at];
            self.ideal_at += 1;
            self.ideal_cost += if ig >= 1.0 { ig } else { 1.0 };
            self.ideal_dcg += ig / ((self.ideal_at + 1) as f64).log2();
        }
    }

    /// Fills the prefix with items not in the qrels up to `rank` (excluded).
    fn prefix_to(&mut self, rank: u64) {
        let upto = (rank.saturating_sub(1)).min(self.prefix_len as u64) as usize;
        if self.prefix.len() < upto {
            self.prefix.resize(upto, NOT_IN_QRELS);
        }
    }

    /// A judged item at `rank` (after every item before it), with `grade`.
    pub fn event(&mut self, rank: u64, grade: i32) {
        self.pass(rank);
        if (rank as usize) <= self.prefix_len {
            self.prefix_to(rank);
            self.prefix.push(grade);
        }
        let gain = if grade > 0 { grade as f64 } else { 0.0 };
        let max = self.max_grade;
        for (_, st) in &mut self.rbp {
            st.skip(rank - 1 - st.pos);
            if grade < 0 {
                st.skip(1);
                continue;
            }
            if gain != 0.0 && st.cur != 0.0 {
                // trec_eval scales the gains into [0, 1]: grade / max when max > 1.
                let g = if max > 1 { gain / max as f64 } else { gain };
                st.gain_sum += g * st.cur;
            }
            st.cur *= st.p;
            st.pos += 1;
        }
        if grade >= 0 {
            self.judged += 1;
        }
        for (_, _, st) in &mut self.gains {
            let gain = st.gain(grade as i64);
            if gain != 0.0 {
                st.dcg += gain / ((rank + 1) as f64).log2();
            }
        }
        if gain != 0.0 && (self.gain || self.levels) {
            self.dcg += gain / ((rank + 1) as f64).log2();
        }
        if grade >= self.level {
            self.s += 1;
            self.bing += 1.0 / ((2 + rank - self.s) as f64).log2();
            let j = rank - 1;
            self.infap += if j == 0 {
                1.0
            } else {
                let fj = j as f64;
                let prior = self.s - 1;
                const EPS: f64 = 0.00001;
                1.0 / (fj + 1.0)
                    + (fj / (fj + 1.0))
                        * ((prior + self.nonrel + self.pool_unjudged) as f64 / fj)
                        * ((prior as f64 + EPS) / ((prior + self.nonrel) as f64 + 2.0 * EPS))
            };
        } else if grade >= 0 {
            self.nonrel += 1;
        } else {
            self.pool_unjudged += 1;
        }
        if self.gain && gain != 0.0 {
            self.ideal_to(rank);
            self.gain_sum += gain;
            let cost = self.ideal_cost + (rank - self.ideal_at as u64) as f64;
            self.g += gain / (2.0 + cost - self.gain_sum).log2();
            if gain > 0.0 {
                self.rel_sum += self.dcg / self.ideal_dcg;
                self.rel_ret += 1;
            }
        }
    }

    /// Ends the goal: `n` items ranked.
    pub fn finish(&mut self, n: u64) {
        self.pass(u64::MAX);
        self.prefix_to(n.saturating_add(1));
        for (_, st) in &mut self.rbp {
            st.skip(n - st.pos);
        }
        if self.gain {
            self.ideal_to(u64::MAX);
        }
        self.n = n;
    }

    /// Relevant items walked (`s(n)`).
    pub fn s(&self) -> u64 {
        self.s
    }

    /// `binG`'s sum.
    pub fn bing_sum(&self) -> f64 {
        self.bing
    }

    /// `infAP`'s sum.
    pub fn infap_sum(&self) -> f64 {
        self.infap
    }

    /// `G`'s sum and the ideal ranking's total gain.
    pub fn g_sum(&self) -> (f64, f64) {
        (self.g, self.ideal_total)
    }

    /// `ndcg_rel`'s parts: the sum of `DCG(i) / IDCG(i)` over retrieved items `i` of positive
    /// gain, their count, the positive grades judged, the DCG and the ideal DCG.
    pub fn rel_parts(&self) -> (f64, u64, u64, f64, f64) {
        (
            self.rel_sum,
            self.rel_ret,
            self.ideal.len() as u64,
            self.dcg,
            self.ideal_dcg,
        )
    }

    /// `Rndcg`'s parts: `(DCG, ideal DCG)` at each gain-level boundary of the ideal ranking, in
    /// rank order; the number of positive grades judged; `n`; the DCG and the ideal DCG.
    pub fn level_parts(&self) -> (impl Iterator<Item = (f64, f64)> + '_, u64, u64, f64, f64) {
        let total: f64 = self.bounds.last().map_or(0.0, |b| b.1);
        (
            self.bound_dcg
                .iter()
                .zip(&self.bounds)
                .map(|(&d, &(_, i))| (d, i)),
            self.ideal.len() as u64,
            self.n,
            self.dcg,
            total,
        )
    }

    /// The rank of need `i`'s cutoff (0: none) and the count recorded there.
    pub fn cut(&self, i: usize) -> (u64, u64) {
        (self.cuts[i].rank, self.cuts[i].count)
    }

    /// Need `i`'s rank-biased sums.
    pub fn rbp(&self, i: usize) -> &RbpState {
        let found = self.rbp.iter().find(|(need, _)| *need == i);
        &found.expect("an Rbp need").1
    }

    /// Need `i`'s custom-gain sums.
    pub fn gains(&self, i: usize) -> &GainState {
        let found = self.gains.iter().find(|(need, _, _)| *need == i);
        &found.expect("a Gains need").2
    }

    /// The grades of the first items, [`NOT_IN_QRELS`] for those the qrels do not mention (as
    /// many as the longest [`WalkNeed::Prefix`] asks for, fewer when the ranking is shorter).
    pub fn prefix(&self) -> &[i32] {
        &self.prefix
    }

    /// `n`.
    pub fn n(&self) -> u64 {
        self.n
    }
}
