//! METRICS.md §7: every worked example, held exactly (to 1e-12 or bit-for-bit where the value is a
//! short binary fraction).

use lemma_accum::*;
use std::sync::Arc;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

/// Streams a binary ranking given as relevance flags; returns (measure, value) pairs.
fn eval(names: &[&str], r: u64, ranking: &[bool], config: Config) -> Vec<(Measure, Option<f64>)> {
    let ms = Measure::parse_all(names.iter().copied()).unwrap();
    let plan = Arc::new(Plan::new(&ms, config));
    let mut acc = GoalAccumulator::new(plan);
    acc.begin(&Truth::binary(r, 0));
    for &rel in ranking {
        acc.push(if rel {
            Label::judged(1)
        } else {
            Label::UNJUDGED
        });
    }
    acc.finish().unwrap().iter().map(|(m, v)| (*m, v)).collect()
}

fn value(names: &[&str], r: u64, ranking: &[bool]) -> Vec<f64> {
    eval(names, r, ranking, Config::default())
        .into_iter()
        .map(|(_, v)| v.unwrap())
        .collect()
}

/// `x a y b c z` with actual {a, b, c}.
const SEED: [bool; 6] = [false, true, false, true, true, false];

#[test]
fn seed_precision_and_recall_at_every_rank() {
    let p = value(&["P@1", "P@2", "P@3", "P@4", "P@5", "P@6"], 3, &SEED);
    let want = [0.0, 1.0 / 2.0, 1.0 / 3.0, 1.0 / 2.0, 3.0 / 5.0, 1.0 / 2.0];
    for (got, want) in p.iter().zip(want) {
        assert!(close(*got, want), "{got} != {want}");
    }
    let r = value(&["R@1", "R@2", "R@3", "R@4", "R@5", "R@6"], 3, &SEED);
    let want = [0.0, 1.0 / 3.0, 1.0 / 3.0, 2.0 / 3.0, 1.0, 1.0];
    for (got, want) in r.iter().zip(want) {
        assert!(close(*got, want), "{got} != {want}");
    }
}

#[test]
fn seed_average_precision_and_its_cutoff_variants() {
    let v = value(
        &[
            "AP",
            "AP@2",
            "AP(norm=min)@2",
            "AP(norm=hits)@2",
            "AP@4",
            "AP(norm=min)@4",
            "AP(norm=hits)@4",
        ],
        3,
        &SEED,
    );
    assert!(close(v[0], (0.5 + 0.5 + 0.6) / 3.0));
    assert!(close(v[0], 0.533_333_333_333_333_3));
    assert!(close(v[1], 1.0 / 6.0));
    assert_eq!(v[2], 0.25);
    assert_eq!(v[3], 0.5);
    assert!(close(v[4], 1.0 / 3.0));
    assert!(close(v[5], 1.0 / 3.0));
    assert_eq!(v[6], 0.5);
}

#[test]
fn seed_rprec_depth_recall_rr_interpolation() {
    let names = [
        "Rprec",
        "Depth(recall=1/3)",
        "Depth(recall=2/3)",
        "Depth(recall=1.0)",
        "P(recall=1.0)",
        "RR",
        "AP11",
    ];
    let v = value(&names, 3, &SEED);
    assert!(close(v[0], 1.0 / 3.0));
    assert_eq!(&v[1..4], &[2.0, 4.0, 5.0]);
    assert_eq!(v[4], 0.6);
    assert_eq!(v[5], 0.5);
    assert!(close(v[6], 0.6));
    for interp in [
        Interpolation::Textbook,
        Interpolation::Trec10,
        Interpolation::Trec9,
    ] {
        let names: Vec<String> = (0..=10)
            .map(|i| format!("IPrec@{}", i as f64 / 10.0))
            .collect();
        let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
        let cfg = Config {
            interpolation: interp,
            ..Config::default()
        };
        for (m, v) in eval(&refs, 3, &SEED, cfg) {
            assert_eq!(v, Some(0.6), "{m} under {interp:?}");
        }
    }
}

#[test]
fn seed_f_e_ndcg_bpref_setf() {
    let v = value(
        &[
            "F1@5",
            "E(beta=1)@5",
            "nDCG",
            "Bpref",
            "SetF(beta=1)",
            "SetP",
            "SetR",
        ],
        3,
        &SEED,
    );
    assert_eq!(v[0], 0.75);
    assert_eq!(v[1], 0.25);
    let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2() + 1.0 / 6f64.log2();
    let idcg = 1.0 + 1.0 / 3f64.log2() + 0.5;
    assert!(close(v[2], dcg / idcg));
    assert_eq!(format!("{:.6}", v[2]), "0.679731");
    assert_eq!(format!("{:.4}", v[2]), "0.6797"); // what trec_eval prints
    assert_eq!(v[3], 1.0);
    assert!(close(v[4], 2.0 / 3.0));
    assert_eq!(v[5], 0.5);
    assert_eq!(v[6], 1.0);
    // E(beta=1)@5 is the symmetric difference |A Δ P| / (|A| + |P|): A = {a,b,c}, P = {x,a,y,b,c}.
    assert!(close(v[1], 2.0 / 8.0));
}

#[test]
fn seed_ranks_only_path_agrees() {
    let ms = Measure::parse_all(["AP", "P@2", "Rprec", "Depth(recall=1.0)", "nDCG", "RR"]).unwrap();
    let plan = Arc::new(Plan::new(&ms, Config::default()));
    let mut acc = GoalAccumulator::new(plan);
    let got: Vec<Option<f64>> = acc
        .evaluate_ranks(&Truth::binary(3, 0), 6, [(2, 1), (4, 1), (5, 1)])
        .unwrap()
        .values()
        .to_vec();
    let streamed: Vec<Option<f64>> = eval(
        &["AP", "P@2", "Rprec", "Depth(recall=1.0)", "nDCG", "RR"],
        3,
        &SEED,
        Config::default(),
    )
    .into_iter()
    .map(|(_, v)| v)
    .collect();
    assert_eq!(got, streamed);
    assert!(matches!(
        acc.evaluate_ranks(&Truth::binary(3, 0), 6, [(4, 1), (2, 1)]),
        Err(GoalError::BadRank { rank: 2, .. })
    ));
    assert!(matches!(
        acc.evaluate_ranks(&Truth::binary(3, 0), 6, [(7, 1)]),
        Err(GoalError::BadRank { rank: 7, .. })
    ));
}

/// Seed 003: scores_A and scores_B with their truths.
const SCORES_A: [(f64, bool); 8] = [
    (0.95, true),
    (0.85, true),
    (0.73, false),
    (0.62, false),
    (0.48, true),
    (0.39, true),
    (0.12, false),
    (0.04, false),
];
const SCORES_B: [(f64, bool); 8] = [
    (0.55, true),
    (0.59, true),
    (0.88, false),
    (0.97, false),
    (0.20, true),
    (0.09, true),
    (0.43, false),
    (0.32, false),
];

/// Orders items by trec's rule (the repairer reports B as out of order; sort it whole), then streams.
fn scored(items: &[(f64, bool)], names: &[&str]) -> Vec<f64> {
    let ms = Measure::parse_all(names.iter().copied()).unwrap();
    let plan = Arc::new(Plan::new(&ms, Config::default()));
    let mut acc = GoalAccumulator::new(plan);
    let r = items.iter().filter(|x| x.1).count() as u64;
    acc.begin(&Truth::binary(r, 0));
    let mut sorted: Vec<(f64, String, bool)> = items
        .iter()
        .enumerate()
        .map(|(i, &(s, t))| (s, format!("l{i}"), t))
        .collect();
    sorted.sort_by(|a, b| trec_cmp(a.0, a.1.as_bytes(), b.0, b.1.as_bytes()));
    for (s, _, t) in sorted {
        acc.push_scored(if t { Label::judged(1) } else { Label::UNJUDGED }, s)
            .unwrap();
    }
    acc.finish()
        .unwrap()
        .values()
        .iter()
        .map(|v| v.unwrap())
        .collect()
}

#[test]
fn seed_003_pooled_examples() {
    let names = [
        "SetP(threshold=0.5)",
        "SetR(threshold=0.5)",
        "SetF(beta=1,threshold=0.5)",
        "AP",
    ];
    let a = scored(&SCORES_A, &names);
    assert_eq!(&a[..3], &[0.5, 0.5, 0.5]);
    assert_eq!(format!("{:.6}", a[3]), "0.816667");
    assert!(close(a[3], (1.0 + 1.0 + 3.0 / 5.0 + 4.0 / 6.0) / 4.0));
    let b = scored(&SCORES_B, &names);
    assert_eq!(&b[..3], &[0.5, 0.5, 0.5]);
    assert_eq!(format!("{:.6}", b[3]), "0.440476");
    assert!(close(
        b[3],
        (1.0 / 3.0 + 2.0 / 4.0 + 3.0 / 7.0 + 4.0 / 8.0) / 4.0
    ));

    // The binned pooled curve gives the same AP when scores fall in distinct bins.
    for (items, want) in [(&SCORES_A, a[3]), (&SCORES_B, b[3])] {
        let mut curve = PooledCurve::new(20);
        for &(s, t) in items.iter() {
            curve.add(s, t);
        }
        assert!(close(curve.average_precision(), want));
        let pts = curve.points();
        assert_eq!(pts.len(), 8);
        assert_eq!(pts.last().unwrap().tp, 4);
        assert_eq!(pts.last().unwrap().recall, 1.0);
        // Each bin's edge is at or below the scores it holds.
        assert!(pts.iter().all(|p| p.score_edge <= 0.97));
    }
    // Merging the two halves of A's curve gives A's curve.
    let (mut c1, mut c2) = (PooledCurve::new(20), PooledCurve::new(20));
    for (i, &(s, t)) in SCORES_A.iter().enumerate() {
        if i % 2 == 0 {
            c1.add(s, t)
        } else {
            c2.add(s, t)
        }
    }
    c1.merge(&c2);
    assert!(close(c1.average_precision(), a[3]));
}

#[test]
fn seed_003_ap_at_3_normalisations() {
    let v = value(&["AP(norm=min)@3", "AP@3"], 4, &[true, true, false]);
    assert!(close(v[0], 2.0 / 3.0));
    assert_eq!(format!("{:.6}", v[0]), "0.666667");
    assert_eq!(v[1], 0.5);
}

#[test]
fn tie_groups_credit_the_group_end() {
    // truths [1,0,0], scores [.9,.9,.1]: AP 0.5 whatever the order of the tied pair under groups;
    // under the given (trec) order it is 1.0 or 0.5 depending on which of the pair comes first.
    for first_relevant in [true, false] {
        let ms = Measure::parse_all(["AP"]).unwrap();
        let order = if first_relevant {
            [true, false, false]
        } else {
            [false, true, false]
        };
        for (ties, want) in [
            (Ties::Group, 0.5),
            (Ties::Given, if first_relevant { 1.0 } else { 0.5 }),
        ] {
            let plan = Arc::new(Plan::new(
                &ms,
                Config {
                    ties,
                    ..Config::default()
                },
            ));
            let mut acc = GoalAccumulator::new(plan);
            acc.begin(&Truth::binary(1, 0));
            for (rel, s) in order.iter().zip([0.9, 0.9, 0.1]) {
                acc.push_scored(
                    if *rel {
                        Label::judged(1)
                    } else {
                        Label::UNJUDGED
                    },
                    s,
                )
                .unwrap();
            }
            assert_eq!(
                acc.finish().unwrap().values()[0],
                Some(want),
                "{ties:?} first_relevant={first_relevant}"
            );
        }
    }
}

#[test]
fn trec_order_of_seed_names() {
    // Equal scores: "z" > "y" > "x" in bytes, so trec order puts z first.
    let mut o = TrecOrder::new();
    let mut got = Vec::new();
    let desc = |a: &&[u8], b: &&[u8]| b.cmp(a);
    let mut last = None;
    for (s, n) in [(1.0f64, "x"), (1.0, "z"), (1.0, "y"), (0.5, "a")] {
        let vs_last = last.map_or(std::cmp::Ordering::Equal, |l: f64| s.total_cmp(&l));
        last = Some(s);
        let back = o
            .push(vs_last, n.as_bytes(), desc, |n: &[u8]| got.push(n.to_vec()))
            .unwrap();
        got.extend(back.map(<[u8]>::to_vec));
    }
    o.finish(desc, |n: &[u8]| got.push(n.to_vec()));
    assert_eq!(
        got,
        vec![b"z".to_vec(), b"y".to_vec(), b"x".to_vec(), b"a".to_vec()]
    );
}

#[test]
fn graded_truth_ndcg_and_relevance_level() {
    // Ranking: grades [2, unjudged, 0, 3]; truth grades {3, 2, 1, 0}. Level 2: R = 2 (grades 3, 2).
    let truth = [3, 2, 1, 0];
    let ms = Measure::parse_all(["nDCG", "nDCG@2", "AP", "NumRel", "Bpref"]).unwrap();
    let plan = Arc::new(Plan::new(
        &ms,
        Config {
            relevance_level: 2,
            ..Config::default()
        },
    ));
    let mut acc = GoalAccumulator::new(plan);
    acc.begin(&Truth::graded(&truth).unwrap());
    for l in [
        Label::judged(2),
        Label::UNJUDGED,
        Label::judged(0),
        Label::judged(3),
    ] {
        acc.push(l);
    }
    let v: Vec<f64> = acc
        .finish()
        .unwrap()
        .values()
        .iter()
        .map(|x| x.unwrap())
        .collect();
    let dcg = 2.0 / 2f64.log2() + 3.0 / 5f64.log2();
    let idcg = 3.0 + 2.0 / 3f64.log2() + 1.0 / 4f64.log2();
    assert!(close(v[0], dcg / idcg));
    assert!(close(v[1], 2.0 / (3.0 + 2.0 / 3f64.log2())));
    assert!(close(v[2], (1.0 + 2.0 / 4.0) / 2.0));
    assert_eq!(v[3], 2.0);
    // Judged non-relevant at level 2: grades 1 and 0 (N = 2). One (grade 0) ranks above the grade-3
    // item: 1 - min(1, 2)/min(2, 2) = 0.5; the first relevant has none above: 1. Bpref = 1.5 / 2.
    assert_eq!(v[4], 0.75);
    assert!(
        Truth::graded(&[0, 1]).is_none(),
        "unsorted grades are refused"
    );
}

#[test]
fn auc_with_a_known_universe() {
    // Universe of 6, actual {a, b}; ranking [a, x, b] (3 retrieved), 3 lemmas unretrieved.
    // Pairs (rel, nonrel) = 2 * 4 = 8. a beats all 4; b beats the 3 unretrieved non-relevant but
    // not x: 3. AUC = 7/8.
    let ms = Measure::parse_all(["AUC"]).unwrap();
    let plan = Arc::new(Plan::new(&ms, Config::default()));
    let mut acc = GoalAccumulator::new(plan);
    acc.begin(&Truth::binary(2, 0).with_universe(6));
    acc.push_labels(&[Label::judged(1), Label::UNJUDGED, Label::judged(1)]);
    assert_eq!(acc.finish().unwrap().values()[0], Some(7.0 / 8.0));
    // Unretrieved relevant lemmas tie with unretrieved non-relevant ones: [x], actual {a}, U = 3:
    // a ties with y (1/2) and loses to x (0): 0.5 / 2.
    acc.begin(&Truth::binary(1, 0).with_universe(3));
    acc.push(Label::UNJUDGED);
    assert_eq!(acc.finish().unwrap().values()[0], Some(0.25));
    // A universe smaller than what was ranked is an error.
    acc.begin(&Truth::binary(1, 0).with_universe(1));
    acc.push_labels(&[Label::UNJUDGED; 3]);
    assert!(matches!(
        acc.finish(),
        Err(GoalError::UniverseTooSmall { .. })
    ));
}

#[test]
fn empty_and_zero_relevant_goals_give_zeros() {
    let names = [
        "P@5",
        "AP",
        "RR",
        "nDCG",
        "Rprec",
        "Depth(recall=1.0)",
        "P(recall=0.5)",
        "SetP",
        "AP11",
    ];
    let v = eval(&names, 3, &[], Config::default());
    for (m, x) in &v {
        if matches!(m, Measure::Depth { .. }) {
            assert_eq!(*x, None, "{m}");
        } else {
            assert_eq!(*x, Some(0.0), "{m}");
        }
    }
    let v = eval(&names, 0, &[false, false], Config::default());
    for (m, x) in &v {
        assert!(x.is_none_or(|x| x == 0.0), "{m}: {x:?}");
    }
}

#[test]
fn summary_means_sums_depth_and_gm_ap() {
    let ms = Measure::parse_all(["AP", "NumRet", "Depth(recall=1.0)", "GM_AP", "NumQ"]).unwrap();
    let plan = Arc::new(Plan::new(&ms, Config::default()));
    let mut acc = GoalAccumulator::new(plan.clone());
    let mut sum = Summary::new(&plan);
    for ranking in [&SEED[..], &[true, false][..], &[false, false][..]] {
        let r = if ranking.len() == 6 { 3 } else { 1 };
        acc.begin(&Truth::binary(r, 0));
        for &rel in ranking {
            acc.push(if rel {
                Label::judged(1)
            } else {
                Label::UNJUDGED
            });
        }
        sum.add(b"g", &acc.finish().unwrap());
    }
    sum.skip(GoalFate::SkippedNoRelevant);
    let agg = sum.aggregates();
    let ap = [1.6 / 3.0, 1.0, 0.0];
    assert!(close(
        agg[0].1.headline().unwrap(),
        ap.iter().sum::<f64>() / 3.0
    ));
    assert_eq!(agg[1].1, Aggregate::Sum(10.0));
    assert_eq!(
        agg[2].1,
        Aggregate::Depth {
            mean: Some(3.0),
            median: Some(3.0),
            coverage: 2.0 / 3.0,
            reached: 2
        }
    );
    let gm = (ap[0].ln() + 1f64.ln() + 1e-5f64.ln()) / 3.0;
    assert!(close(agg[3].1.headline().unwrap(), gm.exp()));
    assert_eq!(agg[4].1, Aggregate::Sum(3.0));
    assert_eq!(sum.counts().evaluated, 3);
    assert_eq!(sum.counts().skipped_no_relevant, 1);
}

/// A plan that needs scores (a threshold, tie groups) evaluates an empty ranking from ranks alone
/// (a goal without predictions: every measure 0), and refuses a non-empty one.
#[test]
fn empty_rankings_need_no_scores() {
    for (names, config) in [
        (&["SetP(threshold=0.5)", "AP"][..], Config::default()),
        (
            &["AP", "P@1"][..],
            Config {
                ties: Ties::Group,
                ..Config::default()
            },
        ),
    ] {
        let ms = Measure::parse_all(names.iter().copied()).unwrap();
        let plan = Arc::new(Plan::new(&ms, config));
        let mut acc = GoalAccumulator::new(plan);
        let truth = Truth::binary(2, 0);
        let v = acc.evaluate_ranks(&truth, 0, []).unwrap();
        assert!(v.values().iter().all(|x| *x == Some(0.0)), "{names:?}");
        assert_eq!(
            acc.evaluate_ranks(&truth, 3, [(1, 1)]).map(|_| ()),
            Err(GoalError::NeedsScores)
        );
    }
}

/// `push_group` (a whole tie group at once, stretches without judged items merged) equals pushing
/// the same items one by one with their scores.
#[test]
fn push_group_equals_pushing_the_items() {
    let names = [
        "AP",
        "AP@3",
        "P@2",
        "R@4",
        "Rprec",
        "RR",
        "RR@2",
        "Success@1",
        "nDCG",
        "nDCG@3",
        "Depth(recall=1.0)",
        "P(recall=0.5)",
        "IPrec@0.5",
        "Bpref",
        "AUC",
        "F(beta=1)@3",
    ];
    let ms = Measure::parse_all(names).unwrap();
    let config = Config {
        ties: Ties::Group,
        ..Config::default()
    };
    let plan = Arc::new(Plan::new(&ms, config));
    // Scores 0.9 (x, a), 0.8 (y, z), 0.7 (b, w, c), 0.1 (v); a, b, c relevant, w judged 0.
    let items: [(Label, f64); 8] = [
        (Label::UNJUDGED, 0.9),
        (Label::judged(1), 0.9),
        (Label::UNJUDGED, 0.8),
        (Label::UNJUDGED, 0.8),
        (Label::judged(1), 0.7),
        (Label::judged(0), 0.7),
        (Label::judged(1), 0.7),
        (Label::UNJUDGED, 0.1),
    ];
    let grades = [1, 1, 1, 0];
    let truth = Truth::graded(&grades).unwrap().with_universe(20);
    let mut acc = GoalAccumulator::new(plan.clone());
    acc.begin(&truth);
    for (l, s) in items {
        acc.push_scored(l, s).unwrap();
    }
    let one_by_one = acc.finish().unwrap().values().to_vec();
    acc.begin(&truth);
    acc.push_group(2, &[1]).unwrap();
    acc.push_group(2, &[]).unwrap();
    acc.push_group(3, &[1, 0, 1]).unwrap();
    acc.push_group(1, &[]).unwrap();
    let grouped = acc.finish().unwrap().values().to_vec();
    assert_eq!(grouped, one_by_one);
    // By hand: AP = (1 * p(2) + 2 * p(7)) / 3 = (1/2 + 2 * 3/7) / 3; RR = E[1/rank] = (1 + 1/2) / 2.
    assert!(close(one_by_one[0].unwrap(), (0.5 + 2.0 * 3.0 / 7.0) / 3.0));
    assert!(close(one_by_one[5].unwrap(), 0.75));
    // A plan without tie groups refuses groups.
    let given = Arc::new(Plan::new(&ms, Config::default()));
    let mut acc = GoalAccumulator::new(given);
    acc.begin(&truth);
    assert!(acc.push_group(2, &[1]).is_err());
}
