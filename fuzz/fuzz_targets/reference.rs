//! The whole pipeline against a slow, obviously correct reference: small qrels and a run built
//! from the bytes (4 goals, 10 lemmas, scores from 5 values so that ties are common, grades 0 to
//! 2, lemmas repeated within a goal), evaluated as text with 1 thread and 2 (batches of 1 to 256
//! bytes) under the first byte's options (score or file order, trec, file or group ties,
//! first-kept or fatal duplicates, a depth or none), each goal's AP, P@2, R@3, RR, R-precision and
//! number ranked compared with the definitions computed here directly: rank by score (ties by
//! name, descending bytes, or in file order) or file order, cut at the depth, drop a lemma's later
//! places, then count (under tie groups, by the groups' expected counts: [`group_values`]).
#![no_main]
use lemma_eval::{DuplicateMode, Evaluator, OrderMode, Predictions, TieMode};
use lemma_ingest::{from_reader, ActualSets};
use libfuzzer_sys::fuzz_target;
use std::collections::{BTreeMap, HashSet};

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let (opts, body) = (data[0], &data[2..]);
    let score_order = opts & 1 == 0;
    let fatal_dups = opts & 2 != 0;
    let depth = match (opts >> 2) % 8 {
        0 | 7 => None,
        d => Some(d as usize),
    };
    // Equal scores: by name, descending bytes (trec), in file order, or one tie group.
    let ties = match (opts >> 5) & 3 {
        1 => TieMode::File,
        2 => TieMode::Group,
        _ => TieMode::Trec,
    };
    // Judgments (first per goal and lemma) and run lines (goal, lemma, score), file order.
    let mut judged: BTreeMap<(u8, u8), u8> = BTreeMap::new();
    let mut lines: Vec<(u8, u8, u8)> = Vec::new();
    for t in body.chunks_exact(3) {
        let (goal, lemma) = (t[0] & 3, t[1] % 10);
        if t[0] & 0x80 != 0 {
            judged.entry((goal, lemma)).or_insert(t[2] % 3);
        } else {
            lines.push((goal, lemma, t[2] % 5));
        }
    }
    // Goals contiguous in the run (a stable sort keeps each goal's file order).
    lines.sort_by_key(|l| l.0);
    let qrels: String = (judged.iter())
        .map(|((g, l), grade)| format!("g{g} 0 L{l} {grade}\n"))
        .collect();
    let run: String = (lines.iter())
        .enumerate()
        .map(|(i, (g, l, s))| format!("g{g} Q0 L{l} {} 0.{s} tag\n", i + 1))
        .collect();

    // The reference.
    let measures = ["AP", "P@2", "R@3", "RR", "Rprec", "NumRet"];
    let mut want: BTreeMap<String, Option<Vec<f64>>> = BTreeMap::new();
    for g in 0..4u8 {
        let relevant: HashSet<u8> = (judged.iter())
            .filter(|((goal, _), grade)| *goal == g && **grade >= 1)
            .map(|((_, l), _)| *l)
            .collect();
        let r = relevant.len();
        if r == 0 {
            continue; // no actual set, or R = 0: skipped
        }
        let mut ranked: Vec<(u8, u8)> = (lines.iter())
            .filter(|l| l.0 == g)
            .map(|l| (l.1, l.2))
            .collect();
        if score_order && ties != TieMode::Trec {
            // Score descending; a stable sort keeps equal scores in file order (a tie group's
            // first lines are the ones a depth cut keeps).
            ranked.sort_by(|a, b| b.1.cmp(&a.1));
        } else if score_order {
            // Score descending, then name descending (names are `L0`..`L9`: one digit).
            ranked.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
        }
        // The depth cuts first (a repeat takes a place), then repeats go, the first in rank
        // order kept.
        if let Some(d) = depth {
            ranked.truncate(d);
        }
        let mut seen = HashSet::new();
        let before = ranked.len();
        ranked.retain(|(l, _)| seen.insert(*l));
        if ranked.len() < before && fatal_dups {
            want.insert(format!("g{g}"), None);
            continue;
        }
        let rel: Vec<bool> = ranked.iter().map(|(l, _)| relevant.contains(l)).collect();
        let hits = |k: usize| rel.iter().take(k).filter(|&&x| x).count() as f64;
        let mut ap = 0.0;
        let mut found = 0.0;
        for (i, &x) in rel.iter().enumerate() {
            if x {
                found += 1.0;
                ap += found / (i + 1) as f64;
            }
        }
        let rr = rel
            .iter()
            .position(|&x| x)
            .map_or(0.0, |i| 1.0 / (i + 1) as f64);
        let rf = r as f64;
        let mut values = vec![
            ap / rf,
            hits(2) / 2.0,
            hits(3) / rf,
            rr,
            hits(r) / rf,
            ranked.len() as f64,
        ];
        if ties == TieMode::Group {
            values = group_values(&ranked, &rel, r);
        }
        want.insert(format!("g{g}"), Some(values));
    }

    if judged.is_empty() {
        return; // empty qrels are refused as such
    }
    let qrels_input = from_reader(
        "q".as_ref(),
        Box::new(std::io::Cursor::new(qrels.clone().into_bytes())),
    );
    let actual = ActualSets::read(qrels_input.unwrap()).expect("valid qrels are read");
    let actual = std::sync::Arc::new(actual);
    let any_fatal = want.values().any(|v| v.is_none());
    for (threads, batch) in [(1, 1 << 20), (2, 1 + data[1] as usize)] {
        let ev = Evaluator::builder()
            .measure_names(measures)
            .unwrap()
            .order(if score_order {
                OrderMode::Score
            } else {
                OrderMode::File
            })
            .ties(ties)
            .duplicates(if fatal_dups {
                DuplicateMode::Error
            } else {
                DuplicateMode::First
            })
            .depth(depth.map(|d| d as u64))
            .threads(threads)
            .batch_bytes(batch)
            .build(actual.clone());
        let input = from_reader("r".as_ref(), Box::new(std::io::Cursor::new(run.clone())));
        let mut rows = Vec::new();
        let done = input.map_err(|e| e.to_string()).and_then(|p| {
            ev.evaluate(Predictions::Text(p), &mut rows)
                .map_err(|e| e.to_string())
        });
        if any_fatal {
            assert!(
                done.is_err(),
                "a repeated lemma must be fatal ({threads} threads)"
            );
            continue;
        }
        if lines.is_empty() && done.is_err() {
            continue; // an empty run is refused as such
        }
        done.unwrap_or_else(|e| panic!("{threads} threads: {e}\nqrels:\n{qrels}\nrun:\n{run}"));
        let got: BTreeMap<String, Vec<f64>> = (rows.into_iter())
            .map(|row| {
                let v = row.values.iter().map(|v| v.unwrap_or(f64::NAN)).collect();
                (String::from_utf8(row.goal).unwrap(), v)
            })
            .collect();
        let want: BTreeMap<String, Vec<f64>> = want
            .iter()
            .map(|(g, v)| (g.clone(), v.clone().unwrap()))
            .collect();
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "goals evaluated, {threads} threads"
        );
        for (g, w) in &want {
            for (i, (a, b)) in got[g].iter().zip(w).enumerate() {
                assert!(
                    (a - b).abs() < 1e-12,
                    "goal {g}, {}: got {a}, want {b} ({threads} threads)\nrun:\n{run}",
                    measures[i]
                );
            }
        }
    }
});

/// The same measures under `--ties group` (docs/METRICS.md §2), from the ranked items' scores
/// and relevance: the items sharing a score, consecutive in the ranking, form a group at ranks
/// `a+1 ..= a+g` holding `h` relevant items, `s(a)` relevant above it. AP credits each relevant
/// item of a group with the precision at the group's end; P@k, R@k and R-precision take the
/// expected number of relevant items in the top k over the group's orderings; RR is the expected
/// reciprocal rank of the first relevant item.
fn group_values(ranked: &[(u8, u8)], rel: &[bool], r: usize) -> Vec<f64> {
    // (a, g, h) per group.
    let mut groups: Vec<(usize, usize, usize)> = Vec::new();
    for (i, (&(_, score), &x)) in ranked.iter().zip(rel).enumerate() {
        match groups.last_mut() {
            Some((a, g, h)) if ranked[*a].1 == score => {
                *g += 1;
                *h += x as usize;
            }
            _ => groups.push((i, 1, x as usize)),
        }
    }
    let rf = r as f64;
    let (mut ap, mut above) = (0.0, 0usize);
    for &(a, g, h) in &groups {
        above += h;
        ap += h as f64 / rf * (above as f64 / (a + g) as f64);
    }
    let expected_hits = |k: usize| -> f64 {
        let mut hits = 0.0;
        for &(a, g, h) in &groups {
            if a + g <= k {
                hits += h as f64;
            } else if a < k {
                hits += (k - a) as f64 * h as f64 / g as f64;
            }
        }
        hits
    };
    // The first group with a relevant item: its first relevant item at position j of the group
    // with probability C(g - j, h - 1) / C(g, h).
    let choose = |n: usize, k: usize| -> f64 {
        if k > n {
            return 0.0;
        }
        (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64)
    };
    let rr = groups
        .iter()
        .find(|&&(_, _, h)| h > 0)
        .map_or(0.0, |&(a, g, h)| {
            (1..=g - h + 1)
                .map(|j| choose(g - j, h - 1) / choose(g, h) / (a + j) as f64)
                .sum()
        });
    vec![
        ap,
        expected_hits(2) / 2.0,
        expected_hits(3) / rf,
        rr,
        expected_hits(r) / rf,
        ranked.len() as f64,
    ]
}
