//! `--ties group` (METRICS.md §2, "Ties"): a slow reference written straight from the definition,
//! unit tests of the reference on goals small enough to work by hand, and property tests that
//! compare the streamed accumulator (`Config { ties: Ties::Group, .. }`, `push_scored`) with it.
//!
//! The definition, for a tie group at ranks `a+1 ..= a+g` holding `h` relevant items:
//!
//! * threshold measures (`AP`, `AP@k`, `Depth`, `P(recall=r)`, `IPrec`, `AP11`) look at group
//!   ends: every relevant item of a group is credited `p(a+g)`; a cutoff inside a group counts the
//!   fraction `(k - a) / g` of the group's AP term;
//! * count measures at a cutoff (`P@k`, `R@k`, `Rprec`, `Success@k`, `F`, `E`, `nDCG`, `RR`) are the
//!   expected value over every ordering of every group. The reference computes this literally: it
//!   lists every ordering, evaluates the trec-order definition on each, and averages (`F` and `E`
//!   from the expected count, not the expected `F`);
//! * `Bpref` counts a tied judged non-relevant item as half an item above; `AUC` counts a tied
//!   (relevant, non-relevant) pair as 1/2;
//! * `NumRet`, `NumRel`, `NumRelRet`, `SetP`, `SetR`, `SetF` do not depend on order;
//! * the measures that read the ranking item by item (trec_eval's `binG`, `G`, `ndcg_rel`,
//!   `Rndcg`, `infAP`, `Rprec_mult`, `unj`, `rbp`, `rbp_resid`) read each group in ascending grade,
//!   its unjudged items first (its relevant items last); `Yaap` is AP's sum as above, `DCG` the
//!   expected DCG.
//!
//! The property tests are one per measure family, so that each can be un-ignored when tie groups
//! land for it. A family marked `#[ignore]` failed against the accumulator when this file was
//! written; run `cargo test -p lemma-accum --release --test ties_reference -- --ignored` to see
//! which still do.

#![allow(clippy::needless_range_loop)] // the reference indexes ranks on purpose: it mirrors the definitions

use lemma_accum::*;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use crate::trec_reference;

/// The grade of an item the actual set does not mention.
const UNJUDGED: i32 = i32::MIN;

/// Enumerating more orderings than this is a bug of the generator, not a slow test.
const MAX_ORDERINGS: usize = 720 * 720;

/// What the reference knows of a goal besides its ranking.
#[derive(Clone, Debug)]
struct RefTruth {
    /// Every judged grade of the goal, ranked or not (any order).
    grades: Vec<i32>,
    /// `--relevance-level`.
    level: i32,
    /// The need rule of `IPrec` and `AP11`.
    interpolation: Interpolation,
}

impl RefTruth {
    fn new(grades: &[i32], level: i32) -> RefTruth {
        RefTruth {
            grades: grades.to_vec(),
            level,
            interpolation: Interpolation::Textbook,
        }
    }
    fn is_rel(&self, g: i32) -> bool {
        g != UNJUDGED && g >= self.level
    }
    /// Judged non-relevant (Bpref's `N`): `0 <= grade < level`.
    fn is_judged_nonrel(&self, g: i32) -> bool {
        g != UNJUDGED && g >= 0 && g < self.level
    }
    /// `R`.
    fn r(&self) -> usize {
        self.grades.iter().filter(|&&g| self.is_rel(g)).count()
    }
    /// Bpref's `N`.
    fn n_judged_nonrel(&self) -> usize {
        self.grades
            .iter()
            .filter(|&&g| self.is_judged_nonrel(g))
            .count()
    }
    /// The goal's positive grades, descending: the ideal ranking of nDCG.
    fn ideal(&self) -> Vec<f64> {
        let mut g: Vec<i32> = self.grades.iter().copied().filter(|&g| g > 0).collect();
        g.sort_unstable_by(|a, b| b.cmp(a));
        g.into_iter().map(f64::from).collect()
    }
}

/// nDCG's gain of a grade: positive grades only, whatever the level.
fn gain(g: i32) -> i32 {
    if g != UNJUDGED && g > 0 {
        g
    } else {
        0
    }
}

fn discount(rank: usize) -> f64 {
    1.0 / ((rank + 1) as f64).log2()
}

fn div(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        0.0
    } else {
        a / b
    }
}

/// The tie groups: maximal runs of equal scores (items must come in non-increasing score order).
fn groups(items: &[(f64, i32)]) -> Vec<Range<usize>> {
    assert!(
        items.windows(2).all(|w| w[0].0 >= w[1].0),
        "items must be in non-increasing score order"
    );
    let mut out = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let mut j = i + 1;
        while j < items.len() && items[j].0 == items[i].0 {
            j += 1;
        }
        out.push(i..j);
        i = j;
    }
    out
}

/// The next arrangement in lexicographic order (C++'s `std::next_permutation`); false after the
/// last one.
fn next_permutation(v: &mut [i32]) -> bool {
    if v.len() < 2 {
        return false;
    }
    let mut i = v.len() - 1;
    while i > 0 && v[i - 1] >= v[i] {
        i -= 1;
    }
    if i == 0 {
        return false;
    }
    let mut j = v.len() - 1;
    while v[j] <= v[i - 1] {
        j -= 1;
    }
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

/// Every distinct arrangement of the multiset `v`.
///
/// Each of the `g!` orderings of a group's items gives one of these label sequences, and each
/// sequence comes from the same number of orderings (the product of the multiplicities'
/// factorials). So the plain mean over distinct arrangements *is* the mean over all `g!`
/// orderings; `arrangements_average_like_all_permutations` checks this against a literal `g!`
/// enumeration.
fn arrangements(mut v: Vec<i32>) -> Vec<Vec<i32>> {
    v.sort_unstable();
    let mut out = vec![v.clone()];
    while next_permutation(&mut v) {
        out.push(v.clone());
    }
    out
}

/// The expected value of `f` over every ordering of every tie group (all orderings equally likely,
/// groups independent). `see` maps a grade to what the measure can see of it (relevance, or gain):
/// items it cannot tell apart need not be permuted among themselves.
fn expectation(items: &[(f64, i32)], see: impl Fn(i32) -> i32, f: impl Fn(&[i32]) -> f64) -> f64 {
    let per_group: Vec<Vec<Vec<i32>>> = groups(items)
        .into_iter()
        .map(|g| arrangements(items[g].iter().map(|&(_, grade)| see(grade)).collect()))
        .collect();
    let total: usize = per_group.iter().map(Vec::len).product();
    assert!(total <= MAX_ORDERINGS, "{total} orderings: goal too large");
    // An odometer over the product of the groups' arrangements.
    let mut idx = vec![0usize; per_group.len()];
    let mut ranking = Vec::with_capacity(items.len());
    let (mut sum, mut count) = (0.0, 0usize);
    loop {
        ranking.clear();
        for (group, &j) in per_group.iter().zip(&idx) {
            ranking.extend_from_slice(&group[j]);
        }
        sum += f(&ranking);
        count += 1;
        let mut d = per_group.len();
        loop {
            if d == 0 {
                assert_eq!(count, total);
                return sum / count as f64;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < per_group[d].len() {
                break;
            }
            idx[d] = 0;
        }
    }
}

// Trec-order definitions on one ordering, over what `see` left of each item: 1/0 relevance, or
// the gain.

/// `s(k)` of one ordering of 1/0 relevance flags (`k` may exceed `n`).
fn s_at(rel: &[i32], k: usize) -> f64 {
    rel[..k.min(rel.len())].iter().filter(|&&x| x == 1).count() as f64
}

/// `DCG@k` of one ordering of gains.
fn dcg_at(gains: &[i32], k: usize) -> f64 {
    (1..=k.min(gains.len()))
        .map(|i| f64::from(gains[i - 1]) * discount(i))
        .sum()
}

/// `1/k1` for the first relevant rank `k1 <= k`; 0 if none.
fn rr_at(rel: &[i32], k: usize) -> f64 {
    match rel.iter().position(|&x| x == 1) {
        Some(i) if i < k => 1.0 / (i + 1) as f64,
        _ => 0.0,
    }
}

/// `F` from a (possibly expected) count `s` at `k`: `(1 + b²) s / (b² R + k)`; 0 when `s = 0` or
/// `R = 0`.
fn f_beta(beta2: f64, s: f64, k: usize, r: usize) -> f64 {
    if s == 0.0 || r == 0 {
        0.0
    } else {
        (1.0 + beta2) * s / (beta2 * r as f64 + k as f64)
    }
}

/// The slow reference: the value of `measure` for the goal whose ranking is `items` (score, grade or
/// [`UNJUDGED`], in non-increasing score order), under `--ties group`. `universe` is needed by
/// `AUC` only.
fn reference(
    measure: &Measure,
    items: &[(f64, i32)],
    truth: &RefTruth,
    universe: Option<u64>,
) -> Option<f64> {
    let n = items.len();
    let r = truth.r();
    let rf = r as f64;
    let rel_of = |g: i32| truth.is_rel(g) as i32;
    let rel: Vec<bool> = items.iter().map(|&(_, g)| truth.is_rel(g)).collect();

    // Count measures: expectations over every ordering of every group.
    let expect_s = |k: usize| expectation(items, rel_of, |o| s_at(o, k));
    let expect_rr = |k: usize| expectation(items, rel_of, |o| rr_at(o, k));
    let expect_success =
        |k: usize| expectation(items, rel_of, |o| (s_at(o, k) >= 1.0) as u8 as f64);
    let expect_dcg = |k: usize| expectation(items, gain, |o| dcg_at(o, k));
    let idcg = |k: usize| {
        let ideal = truth.ideal();
        (1..=k.min(ideal.len()))
            .map(|i| ideal[i - 1] * discount(i))
            .sum::<f64>()
    };

    // Threshold measures: group ends `e = a + g` with `s(e)`, and the group's `h`.
    struct End {
        a: usize,
        g: usize,
        h: usize,
        s: usize,
    }
    let mut ends: Vec<End> = Vec::new();
    let mut s_run = 0;
    for grp in groups(items) {
        let h = rel[grp.clone()].iter().filter(|&&x| x).count();
        s_run += h;
        ends.push(End {
            a: grp.start,
            g: grp.len(),
            h,
            s: s_run,
        });
    }
    let p_end = |e: &End| e.s as f64 / (e.a + e.g) as f64;
    // The AP sum up to `k`: whole groups ending at or before `k`, the fraction (k - a)/g of the
    // group straddling `k`.
    let ap_sum = |k: usize| {
        ends.iter()
            .map(|e| {
                let term = e.h as f64 * p_end(e);
                if e.a + e.g <= k {
                    term
                } else if e.a < k {
                    (k - e.a) as f64 / e.g as f64 * term
                } else {
                    0.0
                }
            })
            .sum::<f64>()
    };
    let need_textbook = |x: f64| Interpolation::Textbook.need(x, r as u64) as usize;
    // Depth(recall=x): the end of the group in which c(x) is first reached. c(0) = 0 keeps the
    // code's definition (depth.rs): 1 when n >= 1 and R >= 1.
    let depth = |x: f64| -> Option<&End> {
        if r == 0 || n == 0 {
            return None;
        }
        let need = need_textbook(x);
        ends.iter().find(|e| e.s >= need)
    };
    let iprec = |x: f64| -> f64 {
        if r == 0 {
            return 0.0;
        }
        let need = truth.interpolation.need(x, r as u64) as usize;
        ends.iter()
            .filter(|e| e.s >= need)
            .map(p_end)
            .fold(0.0, f64::max)
    };
    let ap = div(ap_sum(n), rf);
    let s_n = rel.iter().filter(|&&x| x).count();

    // The walk's measures read each group in ascending grade, the unjudged items first.
    let mut walked: Vec<(f64, i32)> = Vec::with_capacity(n);
    for grp in groups(items) {
        let mut g: Vec<(f64, i32)> = items[grp].to_vec();
        g.sort_by_key(|&(_, grade)| grade);
        walked.extend(g);
    }
    let walked: Vec<Option<i32>> = walked
        .iter()
        .map(|&(_, g)| (g != UNJUDGED).then_some(g))
        .collect();
    if let Some(v) = trec_reference::walk_measure(measure, &walked, &truth.grades, truth.level) {
        return Some(v);
    }

    Some(match *measure {
        Measure::P { k } => expect_s(k as usize) / k as f64,
        Measure::R {
            k,
            norm: RecallNorm::Rel,
        } => div(expect_s(k as usize), rf),
        Measure::R {
            k,
            norm: RecallNorm::Min,
        } => div(expect_s(k as usize), (k as usize).min(r) as f64),
        Measure::Rprec => div(expect_s(r), rf),
        Measure::Success { k } => expect_success(k as usize),
        Measure::F { beta2, cutoff } => {
            let k = cutoff.map_or(n, |k| k as usize);
            f_beta(beta2, expect_s(k), k, r)
        }
        Measure::E { beta2, cutoff } => {
            let k = cutoff.map_or(n, |k| k as usize);
            1.0 - f_beta(beta2, expect_s(k), k, r)
        }
        Measure::NDCG { cutoff } => {
            let k = cutoff.map_or(usize::MAX, |k| k as usize);
            div(expect_dcg(k), idcg(k))
        }
        Measure::RR { cutoff } => expect_rr(cutoff.map_or(usize::MAX, |k| k as usize)),
        Measure::AP { cutoff: None, .. } | Measure::GMAP => ap,
        Measure::AP {
            cutoff: Some(k),
            norm,
        } => {
            let k = k as usize;
            match norm {
                ApNorm::Rel => div(ap_sum(k), rf),
                ApNorm::Min => div(ap_sum(k), k.min(r) as f64),
                ApNorm::Hits => div(ap_sum(k), expect_s(k)),
            }
        }
        Measure::Depth { recall } => {
            if r > 0 && n > 0 && need_textbook(recall.0) == 0 {
                return Some(1.0);
            }
            return depth(recall.0).map(|e| (e.a + e.g) as f64);
        }
        Measure::PAtRecall { recall } => match depth(recall.0) {
            None => 0.0,
            // The code's P(recall=0) = p(1) = s(1), here the expected s(1) (which is also the
            // precision at the first group's end, h/g).
            Some(_) if need_textbook(recall.0) == 0 => expect_s(1),
            Some(e) => p_end(e),
        },
        Measure::IPrec { recall } => iprec(recall.0),
        Measure::AP11 => (0..=10).map(|i| iprec(i as f64 / 10.0)).sum::<f64>() / 11.0,
        Measure::AP11Levels { levels } => {
            // trec_eval's order: levels from the last down, each taken when the relevant count
            // (walked down from s(n)) equals its need; the others add the best precision.
            let lv = levels.get();
            let need = |x: f64| truth.interpolation.need(x, r as u64) as usize;
            let mut at = lv.len();
            while at > 0 && need(lv[at - 1]) > s_n {
                at -= 1;
            }
            let mut sum = 0.0;
            for v in (1..=s_n).rev() {
                while at > 0 && need(lv[at - 1]) == v {
                    sum += iprec(lv[at - 1]);
                    at -= 1;
                }
            }
            for _ in 0..at {
                sum += iprec(0.0);
            }
            sum / lv.len() as f64
        }
        Measure::Bpref | Measure::GMBpref => {
            let big_n = truth.n_judged_nonrel();
            let mut sum = 0.0;
            for grp in groups(items) {
                let above = items[..grp.start]
                    .iter()
                    .filter(|&&(_, g)| truth.is_judged_nonrel(g))
                    .count() as f64;
                let tied = items[grp.clone()]
                    .iter()
                    .filter(|&&(_, g)| truth.is_judged_nonrel(g))
                    .count() as f64;
                for i in grp {
                    if rel[i] {
                        let n_above = above + 0.5 * tied;
                        sum += if n_above == 0.0 || big_n == 0 {
                            1.0
                        } else {
                            1.0 - n_above.min(rf) / big_n.min(r) as f64
                        };
                    }
                }
            }
            div(sum, rf)
        }
        Measure::AUC => {
            let u = universe? as usize;
            let nonrel_total = u - r;
            if r == 0 || nonrel_total == 0 {
                0.0
            } else {
                // Position of every lemma of the universe: its group's index, or one past the
                // last group for the unretrieved (they all tie at the bottom).
                let gs = groups(items);
                let mut rel_pos = Vec::new();
                let mut non_pos = Vec::new();
                for (gi, grp) in gs.iter().enumerate() {
                    for i in grp.clone() {
                        if rel[i] {
                            rel_pos.push(gi)
                        } else {
                            non_pos.push(gi)
                        }
                    }
                }
                let bottom = gs.len();
                rel_pos.extend(std::iter::repeat_n(bottom, r - s_n));
                non_pos.extend(std::iter::repeat_n(bottom, u - n - (r - s_n)));
                assert_eq!(non_pos.len(), nonrel_total);
                let mut num = 0.0;
                for &a in &rel_pos {
                    for &b in &non_pos {
                        num += if a < b {
                            1.0
                        } else if a == b {
                            0.5
                        } else {
                            0.0
                        };
                    }
                }
                num / (r * nonrel_total) as f64
            }
        }
        Measure::NumRet => n as f64,
        Measure::NumRel => rf,
        Measure::NumRelRet => s_n as f64,
        Measure::NumNonRelJudgedRet => items
            .iter()
            .filter(|&&(_, g)| truth.is_judged_nonrel(g))
            .count() as f64,
        Measure::NumQ => 1.0,
        Measure::Yaap => ((1.0 + ap_sum(n)) / (1.0 + rf - ap_sum(n))).ln(),
        Measure::DCG => expect_dcg(usize::MAX),
        Measure::IDCG => idcg(usize::MAX),
        Measure::RprecMult { .. }
        | Measure::NDCGGains { .. }
        | Measure::DCGGains { .. }
        | Measure::IDCGGains { .. }
        | Measure::BinG
        | Measure::G
        | Measure::NDCGRel
        | Measure::RNDCG
        | Measure::InfAP
        | Measure::RBP { .. }
        | Measure::RBPResid { .. }
        | Measure::RelString { .. }
        | Measure::Unj { .. } => unreachable!("trec_reference"),
        // No unmasked ranking is told of here (nothing is inaccessible): the leak measures
        // depend on accessibility alone, never on ties.
        Measure::Leak { .. } => 0.0,
        Measure::LeakRank => return None,
        // No origins are told here either: no relevant lemma has one, so no value.
        Measure::ROrigin { .. } => return None,
        Measure::SetP { threshold: None } => div(s_n as f64, n as f64),
        Measure::SetAP => div((s_n * s_n) as f64, (n * r) as f64),
        Measure::SetRelP => div(s_n as f64, n.min(r) as f64),
        Measure::Utility { coefficients: c } => {
            let (sn, nf) = (s_n as f64, n as f64);
            c[0] * sn + c[1] * (nf - sn) + c[2] * (rf - sn) + c[3] * (sn - nf - rf)
        }
        Measure::SetR { threshold: None } => div(s_n as f64, rf),
        Measure::SetF {
            beta2,
            threshold: None,
        } => {
            if s_n == 0 || r == 0 {
                0.0
            } else {
                // trec_eval's set_F.
                let (p, rc) = (s_n as f64 / n as f64, s_n as f64 / rf);
                (beta2 + 1.0) * p * rc / (beta2 * p + rc)
            }
        }
        Measure::SetP { threshold: Some(t) }
        | Measure::SetR { threshold: Some(t) }
        | Measure::SetF {
            threshold: Some(t), ..
        }
        | Measure::NumRetAbove { threshold: t }
        | Measure::NumRelRetAbove { threshold: t } => {
            let above: Vec<usize> = (0..n).filter(|&i| items[i].0 >= t).collect();
            let (nt, st) = (above.len(), above.iter().filter(|&&i| rel[i]).count());
            match *measure {
                Measure::SetP { .. } => div(st as f64, nt as f64),
                Measure::SetR { .. } => div(st as f64, rf),
                Measure::SetF { beta2, .. } => f_beta(beta2, st as f64, nt, r),
                Measure::NumRetAbove { .. } => nt as f64,
                Measure::NumRelRetAbove { .. } => st as f64,
                _ => unreachable!(),
            }
        }
    })
}

// ------------------------------------------------------------------------------------------------
// The accumulator side.

fn label(g: i32) -> Label {
    if g == UNJUDGED {
        Label::UNJUDGED
    } else {
        Label::judged(g)
    }
}

/// The streamed accumulator under `Ties::Group`, measure by measure.
fn streamed(
    measures: &[Measure],
    items: &[(f64, i32)],
    truth: &RefTruth,
    universe: Option<u64>,
) -> Vec<(Measure, Option<f64>)> {
    let plan = Arc::new(Plan::new(
        measures,
        Config {
            relevance_level: truth.level,
            interpolation: truth.interpolation,
            ties: Ties::Group,
            ..Config::default()
        },
    ));
    let mut grades = truth.grades.clone();
    grades.sort_unstable_by(|a, b| b.cmp(a));
    let mut t = Truth::graded(&grades).expect("sorted");
    if let Some(u) = universe {
        t = t.with_universe(u);
    }
    let mut acc = GoalAccumulator::new(plan.clone());
    acc.begin(&t);
    for &(score, g) in items {
        acc.push_scored(label(g), score).expect("finite score");
    }
    let values = acc.finish().expect("universe large enough");
    values.iter().map(|(m, v)| (*m, v)).collect()
}

fn agree(got: Option<f64>, want: Option<f64>) -> bool {
    match (got, want) {
        (None, None) => true,
        (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * b.abs().max(1.0),
        _ => false,
    }
}

// ------------------------------------------------------------------------------------------------
// Unit tests of the reference itself, worked by hand.

fn m(name: &str) -> Measure {
    let ms = Measure::parse(name).unwrap();
    assert_eq!(ms.len(), 1, "{name}");
    ms[0]
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

/// Checks each `(measure, hand value)` against the reference.
fn check_by_hand(
    items: &[(f64, i32)],
    truth: &RefTruth,
    universe: Option<u64>,
    cases: &[(&str, Option<f64>)],
) {
    for &(name, want) in cases {
        let got = reference(&m(name), items, truth, universe);
        let ok = match (got, want) {
            (Some(a), Some(b)) => close(a, b),
            (a, b) => a == b,
        };
        assert!(ok, "{name}: reference {got:?}, by hand {want:?}");
    }
}

#[test]
fn smallest_example_by_hand() {
    // Truths [1, 0, 0], scores [.9, .9, .1], every item judged: R = 1, N = 2. Groups {1, 0} at
    // ranks 1-2 (a = 0, g = 2, h = 1) and {0} at rank 3. The two orderings of the first group are
    // `1 0 0` and `0 1 0`, each with probability 1/2.
    let items = [(0.9, 1), (0.9, 0), (0.1, 0)];
    let truth = RefTruth::new(&[1, 0, 0], 1);
    let l3 = 1.0 / 3f64.log2();
    check_by_hand(
        &items,
        &truth,
        Some(3),
        &[
            // Threshold measures: the relevant item is credited p(2) = 1/2.
            ("AP", Some(0.5)),              // 1 * (1/2) / R
            ("AP@1", Some(0.25)),           // the group straddles 1: (1 - 0)/2 * 1 * (1/2), / R
            ("AP(norm=min)@1", Some(0.25)), // same sum / min(1, 1)
            ("AP(norm=hits)@1", Some(0.5)), // 0.25 / E[s(1)] = 0.25 / 0.5
            ("AP@2", Some(0.5)),            // whole group
            ("AP@5", Some(0.5)),
            ("Depth(recall=1.0)", Some(2.0)), // c = 1 is reached in the group ending at 2
            ("Depth(recall=0.5)", Some(2.0)), // c = ceil(0.5) = 1
            ("Depth(recall=0.0)", Some(1.0)), // kept from depth.rs: 1 when n, R >= 1
            ("P(recall=1.0)", Some(0.5)),     // s(2)/2
            ("P(recall=0.0)", Some(0.5)),     // p(1) = E[s(1)] = 1/2 (= h/g of the first group)
            ("IPrec@0.0", Some(0.5)),         // max(s(2)/2, s(3)/3) = max(1/2, 1/3)
            ("IPrec@1.0", Some(0.5)),
            ("AP11", Some(0.5)),
            // Count measures: expected values over the two orderings.
            ("P@1", Some(0.5)), // s(1) = 1 or 0
            ("P@2", Some(0.5)), // s(2) = 1 either way
            ("P@5", Some(0.2)), // 1/5
            ("R@1", Some(0.5)), // E[s(1)] / R
            ("R(norm=min)@1", Some(0.5)),
            ("Rprec", Some(0.5)), // E[s(R)] / R = E[s(1)]
            ("Success@1", Some(0.5)),
            ("Success@2", Some(1.0)),
            ("F(beta=1)@1", Some(0.5)), // 2 * 0.5 / (1 * 1 + 1)
            ("E(beta=1)@1", Some(0.5)),
            ("F(beta=1)", Some(0.5)), // k = n = 3, s = 1: 2 / (1 + 3)
            ("RR", Some(0.75)),       // 1/2 * 1 + 1/2 * 1/2
            ("RR@1", Some(0.5)),      // 1/2 * 1 + 1/2 * 0
            ("nDCG@1", Some(0.5)),    // E[DCG@1] = 1/2 * 1, IDCG@1 = 1
            ("nDCG", Some((1.0 + l3) / 2.0)), // E[DCG] = (1 + 1/log2 3)/2, IDCG = 1
            // The relevant item has half of its tied judged non-relevant item above it:
            // 1 - min(0.5, R) / min(R, N) = 1 - 0.5/1.
            ("Bpref", Some(0.5)),
            // U = 3, R = 1: against the tied 0 1/2, against the 0 below 1: 1.5 / (1 * 2).
            ("AUC", Some(0.75)),
            ("NumRet", Some(3.0)),
            ("NumRel", Some(1.0)),
            ("NumRelRet", Some(1.0)),
            ("SetP", Some(1.0 / 3.0)),
            ("SetR", Some(1.0)),
            ("SetF(beta=1)", Some(0.5)), // 2 * (1/3) * 1 / (1/3 + 1)
            ("SetP(threshold=0.5)", Some(0.5)), // the first group only: 1 of 2
        ],
    );
}

#[test]
fn metrics_md_ties_fixture_by_hand() {
    // METRICS.md §7, fixture `ties`: `a` 0.7 alone, then {b, 9, 10} at 0.5 with b and 10 relevant
    // (a = 1, g = 3, h = 2), R = 2, nothing judged non-relevant.
    let items = [(0.7, UNJUDGED), (0.5, 1), (0.5, UNJUDGED), (0.5, 1)];
    let truth = RefTruth::new(&[1, 1], 1);
    let (l3, l4, l5) = (1.0 / 3f64.log2(), 0.5, 1.0 / 5f64.log2());
    check_by_hand(
        &items,
        &truth,
        Some(4),
        &[
            ("AP", Some(0.5)),          // (2/2) * p(4) = 2/4
            ("AP@3", Some(1.0 / 3.0)),  // (3 - 1)/3 * 2 * (2/4), / 2
            ("AP@1", Some(0.0)),        // the first group holds nothing relevant
            ("P@2", Some(1.0 / 3.0)),   // (0 + 1 * 2/3) / 2
            ("P@3", Some(4.0 / 9.0)),   // (2 * 2/3) / 3
            ("Rprec", Some(1.0 / 3.0)), // P@2
            ("RR", Some(4.0 / 9.0)),    // 2/3 * 1/2 + 1/3 * 1/3
            // 1 - C(g-h, k-a)/C(g, k-a) at k = 2: 1 - C(1, 1)/C(3, 1) = 2/3.
            ("Success@2", Some(2.0 / 3.0)),
            ("Success@1", Some(0.0)),
            // Each relevant lemma gets the mean discount of ranks 2-4.
            ("nDCG", Some(2.0 * (l3 + l4 + l5) / 3.0 / (1.0 + l3))),
            ("Depth(recall=0.5)", Some(4.0)), // c = 1: reached in the group that ends at 4
            ("Depth(recall=1.0)", Some(4.0)),
            // The precision at that group end, s(4)/4, not c(r)/depth = 1/4.
            ("P(recall=0.5)", Some(0.5)),
            ("P(recall=0.0)", Some(0.0)), // p(1): `a` is not relevant
            ("IPrec@0.0", Some(0.5)),     // max(0/1, 2/4)
            ("Bpref", Some(1.0)),         // N = 0: each relevant item scores 1
            // U = 4: each relevant item loses to `a` and ties with the unjudged 9: 2 * 1/2 / 4.
            ("AUC", Some(0.25)),
        ],
    );
    // METRICS.md prints nDCG as 0.638330.
    let ndcg = reference(&m("nDCG"), &items, &truth, None).unwrap();
    assert_eq!(format!("{ndcg:.6}"), "0.638330");
}

#[test]
fn one_group_of_four_by_hand() {
    // One relevant item among four tied: it is at each rank with probability 1/4. R = 1.
    let items = [(1.0, UNJUDGED), (1.0, 1), (1.0, UNJUDGED), (1.0, UNJUDGED)];
    let truth = RefTruth::new(&[1], 1);
    let l3 = 1.0 / 3f64.log2();
    check_by_hand(
        &items,
        &truth,
        Some(6),
        &[
            ("Success@2", Some(0.5)), // 1 - C(3, 2)/C(4, 2)
            ("RR", Some((1.0 + 1.0 / 2.0 + 1.0 / 3.0 + 1.0 / 4.0) / 4.0)), // 25/48
            ("RR@2", Some((1.0 + 1.0 / 2.0) / 4.0)),
            ("nDCG@2", Some((1.0 + l3) / 4.0)), // IDCG@2 = 1 (R = 1)
            ("P@3", Some(0.25)),                // E[s(3)] = 3/4, / 3
            ("AP", Some(0.25)),                 // p(4) = 1/4
            ("AP@2", Some(0.125)),              // 2/4 of 1/4
            ("AP(norm=hits)@2", Some(0.25)),    // 1/8 over E[s(2)] = 1/2
            ("Depth(recall=1.0)", Some(4.0)),
            ("P(recall=0.0)", Some(0.25)), // E[s(1)] = 1/4 = h/g
            // U = 6: 3 tied non-relevant (1/2 each) and 2 unretrieved below (1 each): 3.5/5.
            ("AUC", Some(0.7)),
        ],
    );
}

#[test]
fn graded_gains_by_hand() {
    // Grades 2 and 1 tied, then a judged 0: nDCG averages the two orders of the gains.
    let items = [(0.5, 2), (0.5, 1), (0.25, 0)];
    let truth = RefTruth::new(&[2, 1, 0], 1);
    let l3 = 1.0 / 3f64.log2();
    check_by_hand(
        &items,
        &truth,
        None,
        &[
            ("nDCG@1", Some(0.75)), // E[DCG@1] = (2 + 1)/2 over IDCG@1 = 2
            ("nDCG", Some(3.0 * (1.0 + l3) / 2.0 / (2.0 + l3))), // both gains share ranks 1-2
            ("AUC", None),          // no universe
        ],
    );
    // At level 2 only the 2 is relevant (R = 1) and the 1 is judged non-relevant (N = 2):
    // Bpref = 1 - min(0.5, 1)/min(1, 2) = 0.5; nDCG does not change.
    let truth2 = RefTruth::new(&[2, 1, 0], 2);
    check_by_hand(
        &items,
        &truth2,
        None,
        &[
            ("Bpref", Some(0.5)),
            ("nDCG@1", Some(0.75)),
            ("AP", Some(0.5)), // 1 * p(2) / 1
            ("P@1", Some(0.5)),
        ],
    );
}

#[test]
fn bpref_with_judged_nonrelevant_above_and_tied() {
    // A judged 0 alone at the top, then {1, 0, 1} tied: R = 2, N = 2. Each relevant item has
    // 1 + 1/2 judged non-relevant above: 1 - min(1.5, 2)/min(2, 2) = 1/4. Bpref = (1/4 + 1/4)/2.
    let items = [(1.0, 0), (0.5, 1), (0.5, 0), (0.5, 1)];
    let truth = RefTruth::new(&[1, 1, 0, 0], 1);
    check_by_hand(&items, &truth, None, &[("Bpref", Some(0.25))]);
    // Negative grades are neither relevant nor judged non-relevant.
    let items = [(0.5, 1), (0.5, -1)];
    let truth = RefTruth::new(&[1, -1], 1);
    check_by_hand(&items, &truth, None, &[("Bpref", Some(1.0))]);
}

#[test]
fn empty_ranking() {
    let truth = RefTruth::new(&[1, 0], 1);
    check_by_hand(
        &[],
        &truth,
        Some(5),
        &[
            ("AP", Some(0.0)),
            ("P@1", Some(0.0)),
            ("RR", Some(0.0)),
            ("E(beta=1)", Some(1.0)),
            ("Depth(recall=0.0)", None),
            ("P(recall=0.0)", Some(0.0)),
            ("IPrec@0.0", Some(0.0)),
            ("AUC", Some(0.5)), // every pair ties
            ("NumRel", Some(1.0)),
            ("SetP", Some(0.0)),
        ],
    );
}

/// `g!` orderings of the items, literally (Heap's algorithm), for checking [`expectation`].
fn all_permutations(v: &[i32]) -> Vec<Vec<i32>> {
    fn heap(k: usize, a: &mut Vec<i32>, out: &mut Vec<Vec<i32>>) {
        if k <= 1 {
            out.push(a.clone());
            return;
        }
        for i in 0..k {
            heap(k - 1, a, out);
            if k % 2 == 0 {
                a.swap(i, k - 1);
            } else {
                a.swap(0, k - 1);
            }
        }
    }
    let mut a = v.to_vec();
    let mut out = Vec::new();
    heap(a.len(), &mut a, &mut out);
    out
}

#[test]
fn arrangements_average_like_all_permutations() {
    // Distinct arrangements: 4!/2! = 12 for [1, 1, 0, UNJUDGED].
    assert_eq!(arrangements(vec![1, 1, 0, UNJUDGED]).len(), 12);
    assert_eq!(all_permutations(&[1, 2, 3, 4, 5]).len(), 120);
    // Mean over all g! orderings (two groups, product of 5! and 3!) equals the mean over
    // distinct arrangements, for a few nonlinear functions of the ranking.
    let items = [
        (0.9, 1),
        (0.9, UNJUDGED),
        (0.9, 2),
        (0.9, 1),
        (0.9, 0),
        (0.3, 1),
        (0.3, UNJUDGED),
        (0.3, 3),
    ];
    let fs: [fn(&[i32]) -> f64; 3] = [
        |o| rr_at(o, 3),
        |o| dcg_at(o, 6),
        |o| (s_at(o, 2) >= 1.0) as u8 as f64 * s_at(o, 7).sqrt(),
    ];
    for f in fs {
        let fast = expectation(&items, |g| g, f);
        let (g1, g2): (Vec<i32>, Vec<i32>) = (
            items[..5].iter().map(|x| x.1).collect(),
            items[5..].iter().map(|x| x.1).collect(),
        );
        let (p1, p2) = (all_permutations(&g1), all_permutations(&g2));
        let mut sum = 0.0;
        for a in &p1 {
            for b in &p2 {
                let o: Vec<i32> = a.iter().chain(b).copied().collect();
                sum += f(&o);
            }
        }
        let slow = sum / (p1.len() * p2.len()) as f64;
        assert!(close(fast, slow), "{fast} vs {slow}");
    }
}

// ------------------------------------------------------------------------------------------------
// Property tests.

/// A generated goal: a ranking with long tie runs, the truth, a universe.
#[derive(Clone)]
struct Goal {
    items: Vec<(f64, i32)>,
    truth: RefTruth,
    universe: u64,
}

impl fmt::Debug for Goal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let grade = |g: i32| {
            if g == UNJUDGED {
                "-".to_string()
            } else {
                g.to_string()
            }
        };
        let items: Vec<String> = self
            .items
            .iter()
            .map(|&(s, g)| format!("{s}:{}", grade(g)))
            .collect();
        let mut grades = self.truth.grades.clone();
        grades.sort_unstable_by(|a, b| b.cmp(a));
        write!(
            f,
            "items (score:grade, - unjudged) [{}], truth grades {:?}, level {}, {:?}, universe {}",
            items.join(" "),
            grades,
            self.truth.level,
            self.truth.interpolation,
            self.universe
        )
    }
}

fn goal_strategy() -> impl Strategy<Value = Goal> {
    (
        any::<bool>(),                                // graded labels?
        0i32..=2,                                     // level (graded only)
        proptest::collection::vec(0usize..=6, 1..=4), // group sizes: 1-4 distinct scores
        0u8..3,                                       // interpolation
    )
        .prop_flat_map(|(graded, level, sizes, interp)| {
            // At most 12 items, at most 6 per group.
            let mut total = 0;
            let sizes: Vec<usize> = sizes
                .into_iter()
                .map(|s| {
                    let s = s.min(12 - total);
                    total += s;
                    s
                })
                .filter(|&s| s > 0)
                .collect();
            let (label, judged, level) = if graded {
                (
                    prop_oneof![Just(UNJUDGED), -1i32..=3].boxed(),
                    (-1i32..=3).boxed(),
                    level,
                )
            } else {
                (
                    prop_oneof![Just(UNJUDGED), 0i32..=1].boxed(),
                    (0i32..=1).boxed(),
                    1,
                )
            };
            (
                Just(sizes),
                proptest::collection::vec(label, total),
                // Judged lemmas never ranked (relevant or not): R >= relevant ranked.
                proptest::collection::vec(judged, 0..=4),
                Just(level),
                Just(interp),
                0u64..=4, // spare lemmas of the universe
            )
        })
        .prop_map(|(sizes, labels, unranked, level, interp, spare)| {
            let mut items = Vec::with_capacity(labels.len());
            let mut next = labels.into_iter();
            for (gi, &size) in sizes.iter().enumerate() {
                // Distinct scores, descending: 1.0, 0.75, 0.5, 0.25.
                let score = (sizes.len() - gi) as f64 / 4.0;
                items.extend(next.by_ref().take(size).map(|g| (score, g)));
            }
            let mut grades: Vec<i32> = items
                .iter()
                .map(|&(_, g)| g)
                .filter(|&g| g != UNJUDGED)
                .collect();
            grades.extend(&unranked);
            let universe = (items.len() + unranked.len()) as u64 + spare;
            Goal {
                items,
                truth: RefTruth {
                    grades,
                    level,
                    interpolation: [
                        Interpolation::Textbook,
                        Interpolation::Trec10,
                        Interpolation::Trec9,
                    ][interp as usize],
                },
                universe,
            }
        })
}

const CUTOFFS: [u32; 4] = [1, 2, 3, 5];
const LEVELS: [&str; 4] = ["0.0", "0.3", "0.5", "1.0"];

fn at_cutoffs(templates: &[&str]) -> Vec<String> {
    templates
        .iter()
        .flat_map(|t| CUTOFFS.iter().map(move |k| format!("{t}@{k}")))
        .collect()
}

fn at_levels(templates: &[&str]) -> Vec<String> {
    templates
        .iter()
        .flat_map(|t| LEVELS.iter().map(move |r| t.replace("{r}", r)))
        .collect()
}

/// The measure families, one property test each.
fn family(name: &str) -> Vec<String> {
    let fixed = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    match name {
        "precision_recall" => at_cutoffs(&["P", "R", "R(norm=min)"]),
        "rprec" => fixed(&["Rprec"]),
        "success" => at_cutoffs(&["Success"]),
        "f_e" => {
            let mut v = at_cutoffs(&["F(beta=1)", "F(beta=2)", "F(beta=0.5)", "E(beta=1)"]);
            v.extend(fixed(&["F(beta=1)", "E(beta=2)"]));
            v
        }
        "ap_cutoff" => at_cutoffs(&["AP", "AP(norm=min)", "AP(norm=hits)"]),
        "ap" => fixed(&["AP"]),
        "gm_ap" => fixed(&["GM_AP"]),
        "ndcg" => {
            let mut v = at_cutoffs(&["nDCG"]);
            v.push("nDCG".into());
            v
        }
        "rr" => {
            let mut v = at_cutoffs(&["RR"]);
            v.push("RR".into());
            v
        }
        "depth_iprec" => {
            // `{r}` in the templates is replaced by each level.
            let mut v = at_levels(&["Depth(recall={r})", "P(recall={r})", "IPrec@{r}"]);
            v.push("AP11".into());
            v.push("AP11(levels=0.25/0.5/0.75)".into());
            v.push("AP11(levels=0.75/0.25/0/1)".into());
            v
        }
        "bpref" => fixed(&["Bpref", "GM_Bpref"]),
        "auc" => fixed(&["AUC"]),
        "counts_and_sets" => fixed(&[
            "Leak@3",
            "LeakRank",
            "R(origin=in-file)@3",
            "NumRet",
            "NumRel",
            "NumRelRet",
            "NumNonRelJudgedRet",
            "NumQ",
            "SetAP",
            "SetRelP",
            "Utility(a=2.0,b=-0.5,c=-1.0,d=0.25)",
            "SetP",
            "SetR",
            "SetF(beta=1)",
            "SetF(beta=0.3)",
            "SetP(threshold=0.5)",
            "SetR(threshold=0.6)",
            "SetF(beta=2,threshold=0.75)",
            "SetF(beta=1,threshold=1.25)",
            "NumRet(threshold=0.5)",
            "NumRelRet(threshold=0.6)",
        ]),
        "walk" => {
            let mut v = fixed(trec_reference::WALK_MEASURES);
            v.extend(fixed(&["Yaap", "DCG", "IDCG"]));
            v
        }
        "all" => FAMILIES.iter().flat_map(|f| family(f)).collect(),
        _ => panic!("no family {name}"),
    }
}

const FAMILIES: &[&str] = &[
    "precision_recall",
    "rprec",
    "success",
    "f_e",
    "ap_cutoff",
    "ap",
    "gm_ap",
    "ndcg",
    "rr",
    "depth_iprec",
    "bpref",
    "auc",
    "counts_and_sets",
    "walk",
];

fn measures_of(name: &str) -> Vec<Measure> {
    let names = family(name);
    Measure::parse_all(names.iter().map(String::as_str)).unwrap()
}

#[test]
fn every_kind_is_in_a_family() {
    let all: Vec<Measure> = FAMILIES.iter().flat_map(|f| measures_of(f)).collect();
    for kind in Measure::kinds() {
        assert!(
            all.iter().any(|m| m.kind().variant == kind.variant),
            "{} is in no family",
            kind.variant
        );
    }
}

/// The accumulator against the reference on one goal, for one family: every disagreement listed.
fn check_family(goal: &Goal, name: &str) -> Result<(), TestCaseError> {
    let measures = measures_of(name);
    let got = streamed(&measures, &goal.items, &goal.truth, Some(goal.universe));
    let mut bad = Vec::new();
    for (m, v) in got {
        let want = reference(&m, &goal.items, &goal.truth, Some(goal.universe));
        if !agree(v, want) {
            bad.push(format!("{m}: reference {want:?}, accumulator {v:?}"));
        }
    }
    prop_assert!(bad.is_empty(), "{goal:?}\n  {}", bad.join("\n  "));
    Ok(())
}

fn config() -> ProptestConfig {
    ProptestConfig {
        // PROPTEST_CASES=100000 for a longer hunt.
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(2048),
        // Never write a regressions file next to this one: print the counterexample instead.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn precision_recall(g in goal_strategy()) { check_family(&g, "precision_recall")?; }

    #[test]
    fn rprec(g in goal_strategy()) { check_family(&g, "rprec")?; }

    #[test]
    fn success(g in goal_strategy()) { check_family(&g, "success")?; }

    #[test]
    fn f_e(g in goal_strategy()) { check_family(&g, "f_e")?; }

    #[test]
    fn ap_cutoff(g in goal_strategy()) { check_family(&g, "ap_cutoff")?; }

    #[test]
    fn ap(g in goal_strategy()) { check_family(&g, "ap")?; }

    #[test]
    fn gm_ap(g in goal_strategy()) { check_family(&g, "gm_ap")?; }

    #[test]
    fn ndcg(g in goal_strategy()) { check_family(&g, "ndcg")?; }

    #[test]
    fn rr(g in goal_strategy()) { check_family(&g, "rr")?; }

    #[test]
    fn depth_iprec(g in goal_strategy()) { check_family(&g, "depth_iprec")?; }

    #[test]
    fn bpref(g in goal_strategy()) { check_family(&g, "bpref")?; }

    #[test]
    fn auc(g in goal_strategy()) { check_family(&g, "auc")?; }

    #[test]
    fn counts_and_sets(g in goal_strategy()) { check_family(&g, "counts_and_sets")?; }

    #[test]
    fn walk(g in goal_strategy()) { check_family(&g, "walk")?; }

    /// Every family in one plan, so that measures share cutoff and level slots; passes only once
    /// every family does.
    #[test]
    fn all_families_in_one_plan(g in goal_strategy()) { check_family(&g, "all")?; }

    /// Without ties the reference is the trec-order definition: it must agree with the accumulator
    /// under `Ties::Given` for every family. This checks the reference's machinery against the
    /// code that the other property tests (properties.rs) already hold to the definitions.
    #[test]
    fn reference_without_ties_is_the_given_order(g in goal_strategy()) {
        let mut g = g;
        let n = g.items.len();
        for (i, item) in g.items.iter_mut().enumerate() {
            item.0 = (n - i) as f64; // distinct scores: every group a singleton
        }
        for name in FAMILIES {
            let measures = measures_of(name);
            let plan = Arc::new(Plan::new(&measures, Config {
                relevance_level: g.truth.level,
                interpolation: g.truth.interpolation,
                ties: Ties::Given,
                ..Config::default()
            }));
            let mut grades = g.truth.grades.clone();
            grades.sort_unstable_by(|a, b| b.cmp(a));
            let mut acc = GoalAccumulator::new(plan.clone());
            acc.begin(&Truth::graded(&grades).unwrap().with_universe(g.universe));
            for &(score, grade) in &g.items {
                acc.push_scored(label(grade), score).unwrap();
            }
            let values = acc.finish().unwrap();
            for (m, v) in values.iter() {
                let want = reference(m, &g.items, &g.truth, Some(g.universe));
                prop_assert!(agree(v, want), "{m}: reference {want:?}, given order {v:?}\n{g:?}");
            }
        }
    }
}
