//! `--by` strata through the front door (`Job`) against a slow reference: each stratum's summary
//! is the summary of an evaluation of only its goals (their actual sets written alone), to the
//! last bit, with strata found from the definitions (R's bucket, a relevant premise outside the
//! training premises, a record's attribute); actual sets held or read along the run.

use lemma_eval::{Evaluator, Job, Strata, StrataSources};
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

const MEASURES: [&str; 5] = ["AP", "P@3", "NumRel", "Depth(recall=1.0)", "nDCG@5"];
const POOL: usize = 24;

#[derive(Clone, Debug)]
struct Goal {
    relevant: BTreeSet<usize>,
    /// Predicted premises in rank order.
    ranking: Vec<usize>,
    split: Option<u8>,
}

fn goals_strategy() -> impl Strategy<Value = (Vec<Goal>, BTreeSet<usize>)> {
    let goal = (
        proptest::collection::btree_set(0..POOL, 1..18),
        Just((0..POOL).collect::<Vec<_>>()).prop_shuffle(),
        0..POOL,
        proptest::option::of(0u8..3),
    )
        .prop_map(|(relevant, mut ranking, n, split)| {
            ranking.truncate(n);
            Goal {
                relevant,
                ranking,
                split,
            }
        });
    (
        proptest::collection::vec(goal, 1..20),
        proptest::collection::btree_set(0..POOL, 0..POOL),
    )
}

/// The actual sets of the goals `keep` picks, as JSONL records; the goal ids are `g<i>`.
fn actual_text(goals: &[Goal], keep: impl Fn(usize) -> bool) -> String {
    let mut s = String::new();
    for (i, g) in goals.iter().enumerate().filter(|&(i, _)| keep(i)) {
        let names: Vec<String> = g.relevant.iter().map(|p| format!("\"p{p}\"")).collect();
        let split = g
            .split
            .map_or(String::new(), |v| format!(", \"split\": \"s{v}\""));
        s += &format!(
            "{{\"goal_id\": \"g{i}\"{split}, \"premises\": [{}]}}\n",
            names.join(", ")
        );
    }
    s
}

fn bucket(r: usize) -> &'static str {
    match r {
        0 => "0",
        1 => "1",
        2 | 3 => "2-3",
        4..=7 => "4-7",
        8..=15 => "8-15",
        _ => "16+",
    }
}

/// The reference strata in output order: `(label, the goals in it)`.
fn reference(goals: &[Goal], train: &BTreeSet<usize>) -> Vec<(String, Vec<usize>)> {
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    let add = |label: String, i: usize, out: &mut Vec<(String, Vec<usize>)>| match out
        .iter_mut()
        .find(|(l, _)| *l == label)
    {
        Some((_, v)) => v.push(i),
        None => out.push((label, vec![i])),
    };
    let mut gold = Vec::new();
    for b in ["1", "2-3", "4-7", "8-15", "16+"] {
        for (i, g) in goals.iter().enumerate() {
            if bucket(g.relevant.len()) == b {
                add(format!("gold-size={b}"), i, &mut gold);
            }
        }
    }
    out.extend(gold);
    for novel in [true, false] {
        for (i, g) in goals.iter().enumerate() {
            if g.relevant.iter().any(|p| !train.contains(p)) == novel {
                let v = if novel { "novel" } else { "seen" };
                add(format!("novelty={v}"), i, &mut out);
            }
        }
    }
    // Splits in order of first mention.
    for (i, g) in goals.iter().enumerate() {
        if let Some(v) = g.split {
            add(format!("split=s{v}"), i, &mut out);
        }
    }
    out
}

fn builder() -> lemma_eval::EvaluatorBuilder {
    Evaluator::builder()
        .measure_names(MEASURES)
        .unwrap()
        .threads(2)
}

fn run(dir: &Path, actual: &str, strata: Option<Arc<Strata>>, hold: bool) -> lemma_eval::Outcome {
    let mut b = builder();
    if let Some(s) = strata {
        b = b.strata(s);
    }
    let mut rows: Vec<lemma_eval::GoalRow> = Vec::new();
    Job::new(b, dir.join(actual).as_path(), dir.join("run.txt").as_path())
        .hold_actual(hold)
        .run(&mut rows, None)
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn each_stratum_is_the_evaluation_of_its_goals(
        (goals, train) in goals_strategy(),
        hold in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("actual.jsonl"), actual_text(&goals, |_| true)).unwrap();
        // A goal of no actual set, so that the run is never empty.
        let mut run_text = String::from("zz Q0 p0 1 1 run\n");
        for (i, g) in goals.iter().enumerate() {
            for (r, p) in g.ranking.iter().enumerate() {
                run_text += &format!("g{i} Q0 p{p} {} {} run\n", r + 1, 100 - r);
            }
        }
        std::fs::write(d.join("run.txt"), run_text).unwrap();
        let names: String = train.iter().map(|p| format!("p{p}\n")).collect();
        std::fs::write(d.join("train.txt"), names).unwrap();
        let from = StrataSources {
            actual: Some(d.join("actual.jsonl")),
            train_premises: Some(d.join("train.txt")),
            relevance_level: 1,
            ..StrataSources::default()
        };
        let keys = ["gold-size", "novelty", "split"].map(String::from);
        let strata = Arc::new(Strata::load(&keys, &from).unwrap());
        let done = run(d, "actual.jsonl", Some(strata.clone()), hold);
        // Each evaluation with the same strata counts its own goals without a stratum.
        let again = run(d, "actual.jsonl", Some(strata), hold);
        prop_assert_eq!(&again.evaluation.report.strata, &done.evaluation.report.strata);
        let got = done.evaluation.summary.strata();
        let want = reference(&goals, &train);
        let labels: Vec<&str> = got.iter().map(|(l, _)| l.as_str()).collect();
        let want_labels: Vec<&str> = want.iter().map(|(l, _)| l.as_str()).collect();
        prop_assert_eq!(labels, want_labels);
        let missing = goals.iter().filter(|g| g.split.is_none()).count() as u64;
        let report = done.evaluation.report.strata.unwrap();
        prop_assert_eq!(
            report.missing.iter().map(|m| (m.0.as_str(), m.1)).collect::<Vec<_>>(),
            if missing > 0 { vec![("split", missing)] } else { vec![] }
        );
        for ((label, sub), (_, members)) in got.iter().zip(&want) {
            let name = format!("only_{}.jsonl", label.replace('=', "_"));
            std::fs::write(d.join(&name), actual_text(&goals, |i| members.contains(&i))).unwrap();
            let alone = run(d, &name, None, hold).evaluation.summary;
            // The goals left out are skipped there (no actual set); a stratum counts only its
            // evaluated goals.
            let (a, b) = (sub.counts(), alone.counts());
            prop_assert_eq!((a.evaluated, a.evaluated_empty), (b.evaluated, b.evaluated_empty));
            prop_assert_eq!(a.evaluated, members.len() as u64);
            prop_assert_eq!(sub.aggregates(), alone.aggregates(), "{}", label);
        }
    }
}
