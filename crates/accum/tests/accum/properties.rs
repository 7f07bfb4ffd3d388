//! Property tests: the streaming accumulator against a slow reference that materialises the
//! ranking and computes every measure straight from its METRICS.md definition; the ranks-only path
//! against the streamed path; sharded, shuffled summaries against the one-pass summary.

#![allow(clippy::needless_range_loop)] // the reference indexes ranks on purpose: it mirrors the definitions

use lemma_accum::*;
use proptest::prelude::*;
use std::sync::Arc;

use crate::trec_reference;

/// One generated goal: a universe of lemma ids, graded judgments, a ranking with scores.
#[derive(Clone, Debug)]
struct Case {
    universe: u64,
    /// Grade of each judged lemma (lemma id -> grade), grades in -1..=3.
    judged: Vec<(u64, i32)>,
    /// The ranking: lemma ids (distinct), with scores in non-increasing order.
    ranking: Vec<(u64, f64)>,
    level: i32,
    interpolation: Interpolation,
}

impl Case {
    fn grade_of(&self, lemma: u64) -> Option<i32> {
        self.judged
            .iter()
            .find(|(l, _)| *l == lemma)
            .map(|(_, g)| *g)
    }
    fn labels(&self) -> Vec<Label> {
        self.ranking
            .iter()
            .map(|(l, _)| self.grade_of(*l).map_or(Label::UNJUDGED, Label::judged))
            .collect()
    }
    fn grades_desc(&self) -> Vec<i32> {
        let mut g: Vec<i32> = self.judged.iter().map(|(_, g)| *g).collect();
        g.sort_unstable_by(|a, b| b.cmp(a));
        g
    }
}

fn case_strategy() -> impl Strategy<Value = Case> {
    (
        0usize..=2000,
        0usize..=60,
        0u64..=400,
        1i32..=2,
        0u8..3,
        1u32..=6,
    )
        .prop_flat_map(|(n, nj, extra, level, interp, score_levels)| {
            let universe = n as u64 + nj as u64 + extra + 1;
            (
                Just(universe),
                // Ranking: a random sample of distinct ids (the whole universe may be ranked).
                proptest::sample::subsequence(
                    (0..universe).collect::<Vec<_>>(),
                    n.min(universe as usize),
                )
                .prop_shuffle(),
                // Judged lemmas: ids from the universe with grades in -1..=3 (often retrieved).
                proptest::collection::vec((0..universe, -1i32..=3), nj),
                // Scores: few distinct values give ties.
                proptest::collection::vec(0..score_levels * 3, n),
                Just(level),
                Just(interp),
            )
        })
        .prop_map(
            |(universe, ranked, judged_raw, mut scores, level, interp)| {
                // Bias judgments toward retrieved lemmas so relevant items are ranked; dedup ids.
                let mut judged: Vec<(u64, i32)> = Vec::new();
                for (i, (id, g)) in judged_raw.into_iter().enumerate() {
                    let id = if i % 2 == 0 && !ranked.is_empty() {
                        ranked[(id as usize) % ranked.len()]
                    } else {
                        id
                    };
                    if !judged.iter().any(|(l, _)| *l == id) {
                        judged.push((id, g));
                    }
                }
                scores.sort_unstable_by(|a, b| b.cmp(a));
                let ranking = ranked
                    .into_iter()
                    .zip(scores.into_iter().map(|s| s as f64 / 4.0))
                    .collect();
                Case {
                    universe,
                    judged,
                    ranking,
                    level,
                    interpolation: [
                        Interpolation::Textbook,
                        Interpolation::Trec10,
                        Interpolation::Trec9,
                    ][interp as usize],
                }
            },
        )
}

const MEASURES: &[&str] = &[
    "P@1",
    "P@5",
    "P@10",
    "P@3000",
    "R@10",
    "R@3000",
    "R(norm=min)@10",
    "AP",
    "AP@5",
    "AP@10",
    "AP(norm=min)@10",
    "AP(norm=hits)@10",
    "AP(norm=min)@3",
    "AP(norm=hits)@2500",
    "Rprec",
    "Depth(recall=0.0)",
    "Depth(recall=0.5)",
    "Depth(recall=0.7)",
    "Depth(recall=1.0)",
    "P(recall=0.0)",
    "P(recall=0.3)",
    "P(recall=1.0)",
    "IPrec@0.0",
    "IPrec@0.25",
    "IPrec@1.0",
    "AP11",
    "AP11(levels=0.25/0.5/0.75)",
    "AP11(levels=0.75/0.25/0/1)",
    "RR",
    "RR@3",
    "Success@1",
    "Success@10",
    "F(beta=1)@5",
    "F(beta=2)@10",
    "F(beta=0.5)",
    "E(beta=1)@5",
    "SetP",
    "SetR",
    "SetF(beta=1)",
    "SetF(beta=0.3)",
    "nDCG",
    "nDCG@10",
    "nDCG@3",
    "Bpref",
    "AUC",
    "NumRet",
    "NumRel",
    "NumRelRet",
    "NumNonRelJudgedRet",
    "NumQ",
    "GM_AP",
    "GM_Bpref",
    "SetAP",
    "SetRelP",
    "Utility",
    "Utility(a=2.0,b=-0.5,c=-1.0,d=0.25)",
    "Leak@1",
    "Leak@10",
    "LeakRank",
    "R(origin=in-file)@5",
    "R(origin=imported)@10",
    "Yaap",
    "DCG",
    "IDCG",
];

/// Which lemmas the streamed goals call inaccessible (`Leak@k`, `LeakRank`).
fn inaccessible(lemma: u64) -> bool {
    lemma % 7 == 3
}

/// Where the streamed goals' lemmas are defined (`R(origin=...)@k`): every third lemma of
/// neither origin (a premise the corpus does not define).
fn origin_of(lemma: u64) -> Option<Origin> {
    match lemma % 3 {
        0 => Some(Origin::InFile),
        1 => Some(Origin::Imported),
        _ => None,
    }
}
const SCORED: &[&str] = &[
    "SetP(threshold=0.5)",
    "SetR(threshold=1.25)",
    "SetF(beta=2,threshold=0.75)",
    "NumRet(threshold=0.5)",
    "NumRelRet(threshold=0.25)",
];

/// The reference: materialise everything, compute from the definitions.
fn reference(c: &Case, m: &Measure) -> Option<f64> {
    let n = c.ranking.len();
    let grades: Vec<Option<i32>> = c.ranking.iter().map(|(l, _)| c.grade_of(*l)).collect();
    let rel: Vec<bool> = grades
        .iter()
        .map(|g| g.is_some_and(|g| g >= c.level))
        .collect();
    let r = c.judged.iter().filter(|(_, g)| *g >= c.level).count();
    let rf = r as f64;
    let s = |k: usize| rel[..k.min(n)].iter().filter(|&&x| x).count();
    let p = |k: usize| s(k) as f64 / k as f64;
    let div = |a: f64, b: f64| if b == 0.0 { 0.0 } else { a / b };
    let apsum = |k: usize| (1..=k.min(n)).filter(|&i| rel[i - 1]).map(p).sum::<f64>();
    let f = |b2: f64, k: usize| {
        let sk = s(k);
        if sk == 0 || r == 0 {
            return 0.0;
        }
        let (pp, rr) = (sk as f64 / k as f64, sk as f64 / rf);
        (1.0 + b2) * pp * rr / (b2 * pp + rr)
    };
    let need_textbook = |x: f64| (x * rf - 1e-9).ceil().max(0.0) as usize;
    let depth = |x: f64| -> Option<usize> {
        if r == 0 {
            return None;
        }
        let need = need_textbook(x);
        (1..=n).find(|&k| s(k) >= need)
    };
    let iprec = |x: f64| -> f64 {
        if r == 0 {
            return 0.0;
        }
        let need = c.interpolation.need(x, r as u64) as usize;
        (1..=n).filter(|&k| s(k) >= need).map(p).fold(0.0, f64::max)
    };
    let gain = |g: Option<i32>| g.filter(|&g| g > 0).map_or(0.0, |g| g as f64);
    let dcg = |k: usize| {
        (1..=k.min(n))
            .map(|i| gain(grades[i - 1]) / ((i + 1) as f64).log2())
            .sum::<f64>()
    };
    let idcg = |k: usize| {
        let g: Vec<i32> = c.grades_desc().into_iter().filter(|&g| g > 0).collect();
        (1..=k.min(g.len()))
            .map(|i| g[i - 1] as f64 / ((i + 1) as f64).log2())
            .sum::<f64>()
    };
    if let Some(v) = trec_reference::walk_measure(m, &grades, &c.grades_desc(), c.level) {
        return Some(v);
    }
    let first_rel = (1..=n).find(|&k| rel[k - 1]);
    let thresh = |t: f64| {
        let idx: Vec<usize> = (0..n).filter(|&i| c.ranking[i].1 >= t).collect();
        (idx.len(), idx.iter().filter(|&&i| rel[i]).count())
    };
    Some(match *m {
        Measure::P { k } => p(k as usize),
        Measure::R {
            k,
            norm: RecallNorm::Rel,
        } => div(s(k as usize) as f64, rf),
        Measure::R {
            k,
            norm: RecallNorm::Min,
        } => div(s(k as usize) as f64, (k as usize).min(r) as f64),
        Measure::AP { cutoff, norm } => {
            let k = cutoff.map_or(n, |k| k as usize);
            match norm {
                ApNorm::Rel => div(apsum(k), rf),
                ApNorm::Min => div(apsum(k), k.min(r) as f64),
                ApNorm::Hits => div(apsum(k), s(k) as f64),
            }
        }
        Measure::Rprec => div(s(r) as f64, rf),
        Measure::Depth { recall } => return depth(recall.0).map(|d| d as f64),
        Measure::PAtRecall { recall } => depth(recall.0).map_or(0.0, p),
        Measure::IPrec { recall } => iprec(recall.0),
        Measure::AP11 => (0..=10).map(|i| iprec(i as f64 / 10.0)).sum::<f64>() / 11.0,
        Measure::AP11Levels { levels } => {
            // trec_eval's loop, from the last rank up, levels taken from the last one down.
            let lv = levels.get();
            let cut: Vec<usize> = (lv.iter())
                .map(|&x| c.interpolation.need(x, r as u64) as usize)
                .collect();
            let mut at = lv.len();
            while at > 0 && cut[at - 1] > s(n) {
                at -= 1;
            }
            let mut best = div(s(n) as f64, n as f64);
            let (mut so_far, mut sum) = (s(n), 0.0);
            for i in (1..=n).rev() {
                if so_far == 0 {
                    break;
                }
                best = best.max(so_far as f64 / i as f64);
                if rel[i - 1] {
                    while at > 0 && so_far == cut[at - 1] {
                        sum += best;
                        at -= 1;
                    }
                    so_far -= 1;
                }
            }
            for _ in 0..at {
                sum += best;
            }
            sum / lv.len() as f64
        }
        Measure::RR { cutoff } => match first_rel {
            Some(k) if cutoff.is_none_or(|c| k <= c as usize) => 1.0 / k as f64,
            _ => 0.0,
        },
        Measure::Success { k } => (s(k as usize) >= 1) as u8 as f64,
        Measure::F { beta2, cutoff } => f(beta2, cutoff.map_or(n, |k| k as usize)),
        Measure::E { beta2, cutoff } => 1.0 - f(beta2, cutoff.map_or(n, |k| k as usize)),
        Measure::SetP { threshold: None } => div(s(n) as f64, n as f64),
        Measure::SetAP => div((s(n) * s(n)) as f64, (n * r) as f64),
        Measure::SetRelP => div(s(n) as f64, n.min(r) as f64),
        Measure::Utility { coefficients: c } => {
            let (sn, nf) = (s(n) as f64, n as f64);
            c[0] * sn + c[1] * (nf - sn) + c[2] * (rf - sn) + c[3] * (sn - nf - rf)
        }
        Measure::SetR { threshold: None } => div(s(n) as f64, rf),
        Measure::SetF {
            beta2,
            threshold: None,
        } => f(beta2, n),
        Measure::SetP { threshold: Some(t) } => {
            let (nt, st) = thresh(t);
            div(st as f64, nt as f64)
        }
        Measure::SetR { threshold: Some(t) } => div(thresh(t).1 as f64, rf),
        Measure::NumRetAbove { threshold: t } => thresh(t).0 as f64,
        Measure::NumRelRetAbove { threshold: t } => thresh(t).1 as f64,
        Measure::SetF {
            beta2,
            threshold: Some(t),
        } => {
            let (nt, st) = thresh(t);
            if st == 0 || r == 0 {
                0.0
            } else {
                let (pp, rr) = (st as f64 / nt as f64, st as f64 / rf);
                (1.0 + beta2) * pp * rr / (beta2 * pp + rr)
            }
        }
        Measure::NDCG { cutoff } => {
            let k = cutoff.map_or(usize::MAX, |k| k as usize);
            div(dcg(k), idcg(k))
        }
        Measure::Bpref | Measure::GMBpref => {
            let big_n = c
                .judged
                .iter()
                .filter(|(_, g)| (0..c.level).contains(g))
                .count();
            let mut sum = 0.0;
            for i in 0..n {
                if rel[i] {
                    let above = (0..i)
                        .filter(|&j| grades[j].is_some_and(|g| (0..c.level).contains(&g)))
                        .count();
                    sum += if above == 0 {
                        1.0
                    } else {
                        1.0 - above.min(r) as f64 / big_n.min(r) as f64
                    };
                }
            }
            div(sum, rf)
        }
        Measure::AUC => {
            // Position of every universe lemma: its rank, or n+1 (all unretrieved tie at the bottom).
            let pos = |l: u64| {
                c.ranking
                    .iter()
                    .position(|(x, _)| *x == l)
                    .map_or(n + 1, |i| i + 1)
            };
            let is_rel = |l: u64| c.grade_of(l).is_some_and(|g| g >= c.level);
            let rel_pos: Vec<usize> = (0..c.universe).filter(|&l| is_rel(l)).map(pos).collect();
            let non_pos: Vec<usize> = (0..c.universe).filter(|&l| !is_rel(l)).map(pos).collect();
            if rel_pos.is_empty() || non_pos.is_empty() {
                0.0
            } else {
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
                num / (rel_pos.len() * non_pos.len()) as f64
            }
        }
        Measure::NumRet => n as f64,
        Measure::NumRel => rf,
        Measure::NumRelRet => s(n) as f64,
        Measure::NumNonRelJudgedRet => grades
            .iter()
            .filter(|g| g.is_some_and(|g| g >= 0 && g < c.level))
            .count() as f64,
        Measure::NumQ => 1.0,
        Measure::GMAP => div(apsum(n), rf),
        Measure::Yaap => ((1.0 + apsum(n)) / (1.0 + rf - apsum(n))).ln(),
        Measure::DCG => dcg(usize::MAX),
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
        // Every item of the ranking is also the unmasked ranking's; `inaccessible` marks some.
        Measure::Leak { k } => {
            let bad = c.ranking[..(k as usize).min(n)]
                .iter()
                .filter(|(l, _)| inaccessible(*l))
                .count();
            bad as f64 / k as f64
        }
        Measure::LeakRank => {
            return (1..=n)
                .find(|&i| inaccessible(c.ranking[i - 1].0))
                .map(|i| i as f64)
        }
        // Recall of the relevant lemmas of one origin; undefined without any.
        Measure::ROrigin { k, origin } => {
            let of = |l: u64| origin_of(l) == Some(origin);
            let total = (c.judged.iter())
                .filter(|&&(l, g)| g >= c.level && of(l))
                .count();
            if total == 0 {
                return None;
            }
            let found = (c.ranking[..(k as usize).min(n)].iter())
                .filter(|(l, _)| c.grade_of(*l).is_some_and(|g| g >= c.level) && of(*l))
                .count();
            found as f64 / total as f64
        }
    })
}

#[test]
fn every_kind_is_checked_against_the_reference() {
    let tested = Measure::parse_all(
        MEASURES
            .iter()
            .chain(SCORED)
            .chain(trec_reference::WALK_MEASURES)
            .copied(),
    )
    .unwrap();
    for kind in Measure::kinds() {
        assert!(
            tested.iter().any(|m| m.kind().variant == kind.variant),
            "{} is not in MEASURES",
            kind.variant
        );
    }
}

fn plan_for(c: &Case, names: &[&str], ties: Ties) -> Arc<Plan> {
    plan_with(c, names, ties, false)
}

fn plan_with(c: &Case, names: &[&str], ties: Ties, judged_only: bool) -> Arc<Plan> {
    let ms = Measure::parse_all(names.iter().copied()).unwrap();
    Arc::new(Plan::new(
        &ms,
        Config {
            relevance_level: c.level,
            interpolation: c.interpolation,
            ties,
            judged_only,
            ..Config::default()
        },
    ))
}

fn stream(c: &Case, plan: &Arc<Plan>, scored: bool) -> Vec<Option<f64>> {
    let mut acc = GoalAccumulator::new(plan.clone());
    let grades = c.grades_desc();
    let mut origins = [0u64; 2];
    for &(l, g) in &c.judged {
        if let Some(o) = origin_of(l).filter(|_| g >= c.level) {
            origins[o.index()] += 1;
        }
    }
    let truth = Truth::graded(&grades).unwrap().with_universe(c.universe);
    acc.begin(&truth.with_origins(origins[0], origins[1]));
    if scored {
        for (label, (l, score)) in c.labels().into_iter().zip(&c.ranking) {
            acc.push_unmasked(inaccessible(*l));
            acc.set_origin(origin_of(*l));
            acc.push_scored(label, *score).unwrap();
        }
    } else {
        // Exercise both item paths: the first half one at a time, the rest as a slice (one at
        // a time when the plan reads origins: a slice tells none).
        let labels = c.labels();
        let half = if plan.needs_origins() {
            labels.len()
        } else {
            labels.len() / 2
        };
        for (l, (lemma, _)) in labels[..half].iter().zip(&c.ranking) {
            acc.push_unmasked(inaccessible(*lemma));
            acc.set_origin(origin_of(*lemma));
            acc.push(*l);
        }
        for (lemma, _) in &c.ranking[half..] {
            acc.push_unmasked(inaccessible(*lemma));
        }
        acc.push_labels(&labels[half..]);
    }
    acc.finish().unwrap().values().to_vec()
}

fn agree(got: Option<f64>, want: Option<f64>) -> bool {
    match (got, want) {
        (None, None) => true,
        (Some(a), Some(b)) => (a - b).abs() <= 1e-12 * b.abs().max(1.0),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn streamed_equals_reference(c in case_strategy()) {
        let mut names = MEASURES.to_vec();
        names.extend_from_slice(SCORED);
        names.extend_from_slice(trec_reference::WALK_MEASURES);
        // Every declared kind's examples too, so a new kind is checked as soon as it exists.
        names.extend(Measure::kinds().iter().flat_map(|k| k.examples.iter().copied()));
        let plan = plan_for(&c, &names, Ties::Given);
        let got = stream(&c, &plan, true);
        for (m, v) in plan.measures().iter().zip(got) {
            let want = reference(&c, m);
            prop_assert!(agree(v, want), "{}: streamed {:?}, reference {:?}", m, v, want);
        }
    }

    #[test]
    fn judged_only_is_the_reference_of_the_judged_ranking(c in case_strategy()) {
        // trec_eval's -J: the ranking of the judged lemmas (grade >= 0) alone, by every path.
        let names: Vec<&str> = MEASURES.iter().chain(trec_reference::WALK_MEASURES).copied()
            .filter(|m| !m.starts_with("Leak") && !m.starts_with("AUC")).collect();
        let plan = plan_with(&c, &names, Ties::Given, true);
        let mut judged = c.clone();
        judged.ranking.retain(|(l, _)| c.grade_of(*l).is_some_and(|g| g >= 0));
        let got = stream(&c, &plan, true);
        for (m, v) in plan.measures().iter().zip(&got) {
            let want = reference(&judged, m);
            prop_assert!(agree(*v, want), "{}: judged only {:?}, reference {:?}", m, v, want);
        }
        prop_assert_eq!(&stream(&c, &plan, false), &got);
    }

    #[test]
    fn ranks_only_equals_streamed(c in case_strategy()) {
        // The ranks-only path has no unmasked ranking: the leak measures are not asked of it.
        let names: Vec<&str> = MEASURES.iter().chain(trec_reference::WALK_MEASURES).copied()
            .filter(|m| !m.starts_with("Leak") && !m.starts_with("R(origin")).collect();
        let plan = plan_for(&c, &names, Ties::Given);
        let streamed = stream(&c, &plan, false);
        let judged: Vec<(u64, i32)> = c.labels().iter().enumerate()
            .filter_map(|(i, l)| l.grade().map(|g| (i as u64 + 1, g))).collect();
        let grades = c.grades_desc();
        let mut acc = GoalAccumulator::new(plan.clone());
        let truth = Truth::graded(&grades).unwrap().with_universe(c.universe);
        let ranks = acc.evaluate_ranks(&truth, c.ranking.len() as u64, judged).unwrap().values().to_vec();
        prop_assert_eq!(ranks, streamed);
    }

    #[test]
    fn tie_group_ap_and_p_equal_reference(c in case_strategy()) {
        let plan = plan_for(&c, &["AP", "P@5"], Ties::Group);
        let got = stream(&c, &plan, true);
        // Reference: group consecutive equal scores; each relevant item gets p at its group's end.
        let rel: Vec<bool> = c.labels().iter().map(|l| l.grade().is_some_and(|g| g >= c.level)).collect();
        let r = c.judged.iter().filter(|(_, g)| *g >= c.level).count();
        // P@5 takes the expected count over each group's orderings: a group at ranks a+1..a+g
        // with h relevant items puts (5 - a) * h / g of them in the top 5 when it holds rank 5.
        let (mut i, mut s, mut ap, mut s5) = (0, 0usize, 0.0, None);
        while i < rel.len() {
            let mut j = i;
            while j < rel.len() && c.ranking[j].1 == c.ranking[i].1 { j += 1; }
            let in_group = rel[i..j].iter().filter(|&&x| x).count();
            if s5.is_none() && j >= 5 {
                s5 = Some(s as f64 + (5 - i) as f64 * in_group as f64 / (j - i) as f64);
            }
            s += in_group;
            ap += in_group as f64 * (s as f64 / j as f64);
            i = j;
        }
        let p5 = s5.unwrap_or(s as f64) / 5.0;
        let want = if r == 0 { 0.0 } else { ap / r as f64 };
        prop_assert!(agree(got[0], Some(want)), "group AP {:?} != {}", got[0], want);
        // A permutation inside tie groups does not change group AP.
        let mut shuffled = c.clone();
        shuffled.ranking.reverse();
        shuffled.ranking.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap());
        let again = stream(&shuffled, &plan, true);
        prop_assert!(agree(again[0], got[0]));
        prop_assert!(agree(got[1], Some(p5)), "group P@5 {:?} != {}", got[1], p5);
        prop_assert!(agree(again[1], got[1]));
    }

    #[test]
    fn sharded_merge_equals_one_pass(cases in proptest::collection::vec(case_strategy(), 1..12),
                                     shard_of in proptest::collection::vec(0usize..4, 12),
                                     order_seed in 0u64..1000) {
        let names = ["AP", "P@10", "Depth(recall=1.0)", "Depth(recall=0.5)", "GM_AP", "NumRet", "nDCG@10", "NumQ", "AP11"];
        let ms = Measure::parse_all(names).unwrap();
        let plan = Arc::new(Plan::new(&ms, Config::default()));
        let mut acc = GoalAccumulator::new(plan.clone());
        let mut one = Summary::new(&plan);
        let mut shards = vec![Summary::new(&plan); 4];
        let mut per_goal = Vec::new();
        for c in &cases {
            let grades = c.grades_desc();
            acc.begin(&Truth::graded(&grades).unwrap());
            acc.push_labels(&c.labels());
            let v = acc.finish().unwrap();
            one.add(b"g", &v);
            per_goal.push(v.values().to_vec());
        }
        // Re-add the same goals to shards in a scrambled order.
        let mut idx: Vec<usize> = (0..cases.len()).collect();
        idx.sort_by_key(|&i| (i as u64 * 7919 + order_seed) % 101);
        for &i in &idx {
            let c = &cases[i];
            let grades = c.grades_desc();
            acc.begin(&Truth::graded(&grades).unwrap());
            acc.push_labels(&c.labels());
            shards[shard_of[i]].add(b"g", &acc.finish().unwrap());
        }
        let mut merged = Summary::new(&plan);
        for k in [2usize, 0, 3, 1].iter().map(|k| (k + order_seed as usize) % 4) {
            merged.merge(&shards[k]).unwrap();
        }
        let (a, b) = (one.aggregates(), merged.aggregates());
        for ((m, x), (_, y)) in a.iter().zip(&b) {
            // Bit-for-bit, not approximately.
            prop_assert_eq!(format!("{:?}", x), format!("{:?}", y), "{}", m);
        }
        prop_assert_eq!(one.counts(), merged.counts());
        // The state rebuilds the same summary; retracting shard 0 from the whole leaves the
        // merge of the other three, bit for bit.
        prop_assert_eq!(&Summary::from_state(merged.state()).unwrap(), &merged);
        let mut rest = Summary::new(&plan);
        for s in &shards[1..] {
            rest.merge(s).unwrap();
        }
        let mut whole = one.clone();
        whole.retract(&shards[0]).unwrap();
        prop_assert_eq!(format!("{:?}", whole.aggregates()), format!("{:?}", rest.aggregates()));
        prop_assert_eq!(whole.counts(), rest.counts());
        // A shard cannot give back what it never held (unless it is empty).
        if shards[0].counts().evaluated > 0 {
            let mut empty = Summary::new(&plan);
            prop_assert!(empty.retract(&shards[0]).is_err());
        }
    }
}
