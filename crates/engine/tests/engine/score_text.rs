//! Scores compared as text (same-shape decimals, no parsing) rank exactly as parsed scores do.
//!
//! A random run is evaluated twice: with its scores as written (fixed-format decimals, negative
//! ones, shapes that change mid-goal, equal values written differently, ties, lines out of order,
//! repeated lemmas), and with every score rewritten in exponent form (`1.5e0`), which is never
//! compared as text. Every per-goal value and the summary must be equal.

use crate::common;
use lemma_accum::Measure;

use common::text_eval;
use lemma_eval::{EvalOptions, GoalRow};
use lemma_ingest::ActualSets;
use proptest::prelude::*;
use std::fmt::Write as _;
use std::path::Path;

const MEASURES: &[&str] = &[
    "AP", "AP@5", "P@1", "P@5", "R@10", "Rprec", "RR", "nDCG", "nDCG@5", "Bpref", "NumRet",
];

fn eval(actual: &ActualSets, run: &Path, threads: usize) -> (Vec<GoalRow>, String) {
    let mut o = EvalOptions::default();
    o.measures = Measure::parse_all(MEASURES.iter().copied()).unwrap();
    o.threads = threads;
    text_eval(actual, run, &o)
}

/// One ranked line: lemma index, the score's value in steps, how it is written.
type Line = (u8, i32, u8);

/// The score text of `steps` (a multiple of 1/1000) in style `style`: several fixed formats, signs
/// and paddings, so that shapes repeat (the text path) and change (the parsing path).
fn text(steps: i32, style: u8) -> String {
    let v = steps as f64 / 1000.0;
    match style % 6 {
        0 => format!("{v:.3}"),
        1 => format!("{v:.4}"),
        2 => format!("{v:09.3}"),
        3 => format!("{:.1}", v * 1000.0),
        4 => format!("{v}"),
        _ => format!("{:.3}", v - 5000.0),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn text_compared_scores_rank_as_parsed_scores(
        goals in prop::collection::vec(
            (
                prop::collection::vec((0u8..12, -3000i32..3000, 0u8..8), 1..60),
                prop::collection::vec((0u8..12, 0i32..3), 0..10),
                0u8..3,
                0u8..6,
                any::<bool>(),
            ),
            1..5,
        ),
        threads in 1usize..3,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let (mut qrels, mut as_text, mut as_exp) = (String::new(), String::new(), String::new());
        for (g, (lines, judged, order, main_style, positive)) in goals.iter().enumerate() {
            let judged: std::collections::BTreeMap<u8, i32> = judged.iter().copied().collect();
            for (l, grade) in &judged {
                writeln!(qrels, "g{g} 0 L{l} {grade}").unwrap();
            }
            if judged.is_empty() {
                writeln!(qrels, "g{g} 0 none 1").unwrap();
            }
            let mut lines: Vec<Line> = lines.clone();
            if *positive {
                // All scores positive: no negative tie or sign change sends the goal to a full
                // sort, so a text comparison that is wrong shows.
                for l in lines.iter_mut() {
                    l.1 += 4000;
                }
            }
            // In score order (the streaming path; steps snapped to make ties), in reverse order
            // (every line out of order), or shuffled.
            if *order < 2 {
                for l in lines.iter_mut() {
                    l.1 -= l.1 % 500;
                }
                lines.sort_by_key(|l| std::cmp::Reverse(l.1));
                if *order == 1 {
                    lines.reverse();
                }
            }
            // Within a goal one style dominates: a line's style 0..6 means the goal's, 6 and 7 the
            // goal's or the next (a shape change).
            for (rank, &(l, steps, style)) in lines.iter().enumerate() {
                let style = if style < 6 { *main_style } else { style - 6 + main_style };
                let t = text(steps, style);
                let v: f64 = t.parse().unwrap();
                writeln!(as_text, "g{g} Q0 L{l} {rank} {t} run").unwrap();
                writeln!(as_exp, "g{g} Q0 L{l} {rank} {v:e} run").unwrap();
            }
        }
        let q = dir.path().join("q");
        std::fs::write(&q, &qrels).unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, &as_text).unwrap();
        std::fs::write(&b, &as_exp).unwrap();
        let actual = ActualSets::read_path(&q).unwrap();
        let text_rows = eval(&actual, &a, threads);
        let exp_rows = eval(&actual, &b, threads);
        prop_assert_eq!(text_rows, exp_rows);
    }
}
