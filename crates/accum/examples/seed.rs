//! Evaluates METRICS.md §7's seed ranking `x a y b c z` against {a, b, c} through the library API
//! and prints every measure: `cargo run -p lemma-accum --example seed`.

use lemma_accum::{Config, GoalAccumulator, Label, Measure, Plan, Truth};
use std::sync::Arc;

fn main() {
    let names = [
        "P@2",
        "R@4",
        "AP",
        "AP@2",
        "AP(norm=min)@2",
        "AP(norm=hits)@2",
        "Rprec",
        "Depth(recall=1.0)",
        "P(recall=1.0)",
        "RR",
        "AP11",
        "F1@5",
        "E(beta=1)@5",
        "nDCG",
        "Bpref",
        "SetF(beta=1)",
    ];
    let measures = Measure::parse_all(names).expect("valid names");
    let plan = Arc::new(Plan::new(&measures, Config::default()));
    let mut acc = GoalAccumulator::new(plan);
    acc.begin(&Truth::binary(3, 0));
    for lemma in ["x", "a", "y", "b", "c", "z"] {
        let relevant = matches!(lemma, "a" | "b" | "c");
        acc.push(if relevant {
            Label::judged(1)
        } else {
            Label::UNJUDGED
        });
    }
    for (m, v) in acc.finish().expect("no universe needed").iter() {
        match v {
            Some(v) => println!("{:<20}\t{:.6}", m.to_string(), v),
            None => println!("{:<20}\tnot reached", m.to_string()),
        }
    }
}
