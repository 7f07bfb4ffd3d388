//! `lemma-eval gen`: deterministic premise-selection-like workloads.
//!
//! A universe of lemma names shaped like Mathlib's (`Finset.sum_comm_12345`); per goal an actual set
//! (a share of goals use none; the rest 1 + a geometric count with a tail, capped); a ranking of a
//! given depth where relevant lemmas sit at random ranks (some beyond the depth) among random other
//! lemmas, scores non-increasing with a share of ties. The random generator is splitmix64, written
//! here so that the same seed gives the same bytes on every platform and every version.

use std::io::{self, Write};

/// splitmix64: small, fast, and fixed forever (unlike a library's default generator).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5851_f42d_4c95_7f2d)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Shuffles `items` (Fisher–Yates) with the generator of `seed`: the same order everywhere.
pub fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut rng = Rng::new(seed);
    for i in (1..items.len()).rev() {
        items.swap(i, rng.below(i as u64 + 1) as usize);
    }
}

/// The blocks of `text`'s consecutive lines with the same goal (first field), each line ending
/// in a newline: goals to shuffle whole.
pub fn goal_blocks(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut last = None;
    for line in text.lines() {
        let g = line.split_whitespace().next();
        if out.is_empty() || g != last {
            out.push(String::new());
            last = g;
        }
        let b = out.last_mut().expect("a block");
        b.push_str(line);
        b.push('\n');
    }
    out
}

/// What to generate.
#[derive(Clone, Debug)]
pub struct GenSpec {
    /// Goals.
    pub goals: u64,
    /// Lemmas in the universe.
    pub universe: u64,
    /// Lemmas ranked per goal (`universe` for full rankings).
    pub depth: u64,
    /// Share of goals with no actual premise at all (they are left out of the actual sets).
    pub empty_share: f64,
    /// Mean of the geometric part of the relevant count (relevant = 1 + geometric).
    pub relevant_mean: f64,
    /// Largest relevant count.
    pub relevant_max: u64,
    /// Share of ranked items whose score equals the previous item's.
    pub tie_share: f64,
    /// Share of relevant lemmas placed beyond the ranking depth (never retrieved).
    pub unretrieved_share: f64,
    /// Grades 1..=3 for relevant lemmas and some judged non-relevant (grade 0) lemmas.
    pub graded: bool,
    /// Seed.
    pub seed: u64,
}

impl Default for GenSpec {
    fn default() -> Self {
        GenSpec {
            goals: 1000,
            universe: 200_000,
            depth: 100,
            empty_share: 0.0,
            relevant_mean: 7.0,
            relevant_max: 40,
            tie_share: 0.03,
            unretrieved_share: 0.1,
            graded: false,
            seed: 1,
        }
    }
}

const NAMESPACES: [&str; 8] = [
    "Finset",
    "Nat",
    "Int",
    "List",
    "Real",
    "Set",
    "Polynomial",
    "MeasureTheory",
];
const STEMS: [&str; 8] = [
    "sum_comm",
    "add_assoc",
    "mul_le_mul",
    "card_le",
    "map_id",
    "ext_iff",
    "lt_of_le",
    "norm_sub",
];

/// The name of lemma `i`.
pub fn lemma_name(i: u64, out: &mut Vec<u8>) {
    out.clear();
    let _ = write!(
        out,
        "{}.{}_{}",
        NAMESPACES[(i % 8) as usize],
        STEMS[((i / 8) % 8) as usize],
        i
    );
}

/// One generated goal: judged lemmas with grades, the ranking (lemma ids) and its scores.
pub struct GenGoal {
    /// (lemma id, grade); grade 0 marks a judged non-relevant lemma.
    pub judged: Vec<(u64, i32)>,
    /// Lemma ids in rank order.
    pub ranking: Vec<u64>,
    /// Scores, non-increasing, parallel to `ranking`.
    pub scores: Vec<f64>,
}

/// Calls `f(goal index, goal)` for every goal of `spec`, deterministically.
pub fn for_each_goal(
    spec: &GenSpec,
    mut f: impl FnMut(u64, &GenGoal) -> io::Result<()>,
) -> io::Result<()> {
    let depth = spec.depth.min(spec.universe);
    let full = depth == spec.universe;
    let mut seen = hashbrown::HashSet::new();
    let mut perm: Vec<u64> = if full {
        (0..spec.universe).collect()
    } else {
        Vec::new()
    };
    let mut inverse: Vec<usize> = Vec::new();
    let mut goal = GenGoal {
        judged: Vec::new(),
        ranking: Vec::with_capacity(depth as usize),
        scores: Vec::new(),
    };
    for g in 0..spec.goals {
        // Two streams per goal: the actual set does not depend on the ranking's depth, so the same
        // seed gives the same qrels with a deeper run.
        let mut rng = Rng::new(spec.seed ^ g.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut rank_rng = Rng::new(!spec.seed ^ g.wrapping_mul(0xc2b2_ae3d_27d4_eb4f));
        let empty = rng.unit() < spec.empty_share;
        let mut relevant: Vec<u64> = Vec::new();
        if !empty {
            let p = 1.0 / (1.0 + spec.relevant_mean);
            let mut count = 1u64;
            while count < spec.relevant_max && rng.unit() >= p {
                count += 1;
            }
            seen.clear();
            while (relevant.len() as u64) < count.min(spec.universe) {
                let l = rng.below(spec.universe);
                if seen.insert(l) {
                    relevant.push(l);
                }
            }
        }
        goal.judged.clear();
        for &l in &relevant {
            let grade = if spec.graded {
                1 + rng.below(3) as i32
            } else {
                1
            };
            goal.judged.push((l, grade));
        }
        goal.ranking.clear();
        if full {
            for i in (1..perm.len()).rev() {
                let j = rank_rng.below(i as u64 + 1) as usize;
                perm.swap(i, j);
            }
            goal.ranking.extend_from_slice(&perm);
            // Relevant lemmas drift toward the top: swap each with a position drawn near the top
            // (the inverse permutation finds a lemma's position in O(1)).
            inverse.resize(perm.len(), 0);
            for (i, &l) in goal.ranking.iter().enumerate() {
                inverse[l as usize] = i;
            }
            for &l in &relevant {
                if rank_rng.unit() >= spec.unretrieved_share {
                    let u = rank_rng.unit();
                    let to = (((u * u * u) * depth as f64) as usize).min(depth as usize - 1);
                    let from = inverse[l as usize];
                    let other = goal.ranking[to];
                    goal.ranking.swap(from, to);
                    inverse[l as usize] = to;
                    inverse[other as usize] = from;
                }
            }
        } else {
            seen.clear();
            for &l in &relevant {
                seen.insert(l);
            }
            // Lemmas other than the relevant ones, as many as there are (a tiny universe).
            let others = depth.min(spec.universe - seen.len() as u64);
            while (goal.ranking.len() as u64) < others {
                let l = rank_rng.below(spec.universe);
                if seen.insert(l) {
                    goal.ranking.push(l);
                }
            }
            let ranked = goal.ranking.len();
            for &l in &relevant {
                if rank_rng.unit() >= spec.unretrieved_share && ranked > 0 {
                    let u = rank_rng.unit();
                    let pos = ((u * u) * ranked as f64) as usize;
                    goal.ranking[pos.min(ranked - 1)] = l;
                }
            }
        }
        if spec.graded && !relevant.is_empty() && !goal.ranking.is_empty() {
            // A few judged non-relevant lemmas, drawn from the ranking (as pooling would).
            for _ in 0..1 + rank_rng.below(3) {
                let l = goal.ranking[rank_rng.below(goal.ranking.len() as u64) as usize];
                if !goal.judged.iter().any(|e| e.0 == l) {
                    goal.judged.push((l, 0));
                }
            }
        }
        goal.scores.clear();
        let mut score = 1000.0f64;
        for rank in 0..goal.ranking.len() {
            if rank > 0 && rank_rng.unit() >= spec.tie_share {
                score -= 0.001 + rank_rng.unit() * 0.01;
            }
            goal.scores.push((score * 1e4).round() / 1e4);
        }
        f(g, &goal)?;
    }
    Ok(())
}

fn write_qrels(
    qrels: &mut dyn Write,
    g: u64,
    goal: &GenGoal,
    name: &mut Vec<u8>,
) -> io::Result<()> {
    for &(l, grade) in &goal.judged {
        lemma_name(l, name);
        write!(qrels, "g{g} 0 ")?;
        qrels.write_all(name)?;
        writeln!(qrels, " {grade}")?;
    }
    Ok(())
}

/// Writes TREC qrels and a TREC run for `spec`.
pub fn generate_trec(spec: &GenSpec, qrels: &mut dyn Write, run: &mut dyn Write) -> io::Result<()> {
    let mut name = Vec::with_capacity(48);
    for_each_goal(spec, |g, goal| {
        write_qrels(qrels, g, goal, &mut name)?;
        for (rank, (&l, &score)) in goal.ranking.iter().zip(&goal.scores).enumerate() {
            lemma_name(l, &mut name);
            write!(run, "g{g} Q0 ")?;
            run.write_all(&name)?;
            writeln!(run, " {} {score:.4} lemma-gen", rank + 1)?;
        }
        Ok(())
    })?;
    qrels.flush()?;
    run.flush()
}

/// Writes JSONL actual sets (`{"goal_id", "premises"}`, graded as name → grade when `spec.graded`)
/// and JSONL predictions (`{"goal_id", "retrieved_premises", "scores"}`, lemmas in trec order).
pub fn generate_jsonl(
    spec: &GenSpec,
    actual: &mut dyn Write,
    predictions: &mut dyn Write,
) -> io::Result<()> {
    let mut name = Vec::with_capacity(48);
    let names = |ids: &mut dyn Iterator<Item = u64>, name: &mut Vec<u8>| -> Vec<String> {
        ids.map(|l| {
            lemma_name(l, name);
            String::from_utf8(name.clone()).expect("ASCII names")
        })
        .collect()
    };
    for_each_goal(spec, |g, goal| {
        let goal_id = format!("g{g}");
        if !goal.judged.is_empty() {
            let premises = if spec.graded {
                let mut m = serde_json::Map::new();
                for &(l, grade) in &goal.judged {
                    lemma_name(l, &mut name);
                    m.insert(
                        String::from_utf8(name.clone()).expect("ASCII"),
                        grade.into(),
                    );
                }
                serde_json::Value::Object(m)
            } else {
                names(&mut goal.judged.iter().map(|e| e.0), &mut name).into()
            };
            writeln!(
                actual,
                "{}",
                serde_json::json!({ "goal_id": goal_id, "premises": premises })
            )?;
        }
        // Trec order: score descending, ties by name descending (each name made once).
        let lemmas: Vec<Vec<u8>> = goal
            .ranking
            .iter()
            .map(|&l| {
                let mut n = Vec::new();
                lemma_name(l, &mut n);
                n
            })
            .collect();
        let mut order: Vec<usize> = (0..goal.ranking.len()).collect();
        order.sort_by(|&a, &b| {
            lemma_accum::trec_cmp(goal.scores[a], &lemmas[a], goal.scores[b], &lemmas[b])
        });
        let premises = names(&mut order.iter().map(|&i| goal.ranking[i]), &mut name);
        let scores: Vec<f64> = order.iter().map(|&i| goal.scores[i]).collect();
        writeln!(
            predictions,
            "{}",
            serde_json::json!({ "goal_id": goal_id, "retrieved_premises": premises, "scores": scores })
        )
    })?;
    actual.flush()?;
    predictions.flush()
}

/// Writes a binary store plus its TREC qrels. Stores hold final rankings: the generated order
/// with each run of tied scores put in trec order (name descending), exactly as `convert` would
/// order the same goal read from the TREC run. The store is returned written but not committed,
/// for the caller to commit with the qrels ([`lemma_outfile::commit_all`]).
pub fn generate_store(
    spec: &GenSpec,
    store: &std::path::Path,
    qrels: &mut dyn Write,
    with_scores: bool,
) -> io::Result<lemma_outfile::OutFile> {
    let mut lemmas = lemma_ingest::Interner::new();
    let mut name = Vec::with_capacity(48);
    for i in 0..spec.universe {
        lemma_name(i, &mut name);
        lemmas.intern(&name);
    }
    let mut w = lemma_ingest::StoreWriter::create(store, with_scores)?;
    let mut ids: Vec<u32> = Vec::new();
    let mut scores: Vec<f32> = Vec::new();
    for_each_goal(spec, |g, goal| {
        write_qrels(qrels, g, goal, &mut name)?;
        ids.clear();
        ids.extend(goal.ranking.iter().map(|&l| l as u32));
        scores.clear();
        scores.extend(goal.scores.iter().map(|&s| s as f32));
        let mut i = 0;
        while i < ids.len() {
            let mut j = i + 1;
            while j < ids.len() && goal.scores[j] == goal.scores[i] {
                j += 1;
            }
            if j - i > 1 {
                ids[i..j].sort_by(|a, b| lemmas.name(*b).cmp(lemmas.name(*a)));
            }
            i = j;
        }
        let judged: Vec<(u32, i32)> = goal.judged.iter().map(|&(l, gr)| (l as u32, gr)).collect();
        let truth = (!judged.is_empty()).then_some(&judged[..]);
        w.add_goal(
            format!("g{g}").as_bytes(),
            Some((&ids, with_scores.then_some(&scores[..]))),
            truth,
        )
    })?;
    qrels.flush()?;
    w.finish_uncommitted(&lemmas)
}

/// Writes a dense f32 score matrix `[goals, universe]` (`.npy`): relevant lemmas score higher on
/// average; a share of scores is rounded coarsely so that ties occur. Also the goal and lemma name
/// lists (one per line) and the TREC qrels.
pub fn generate_npy(
    spec: &GenSpec,
    npy: &mut dyn Write,
    goal_names: &mut dyn Write,
    lemma_names: &mut dyn Write,
    qrels: &mut dyn Write,
) -> io::Result<()> {
    let mut name = Vec::with_capacity(48);
    for i in 0..spec.universe {
        lemma_name(i, &mut name);
        lemma_names.write_all(&name)?;
        lemma_names.write_all(b"\n")?;
    }
    lemma_ingest::write_f32_header(npy, spec.goals as usize, spec.universe as usize)?;
    let mut row = vec![0f32; spec.universe as usize];
    let mut bytes = Vec::with_capacity(row.len() * 4);
    // Only the actual sets matter here: depth 0 skips generating rankings.
    let truth_spec = GenSpec {
        depth: 0,
        ..spec.clone()
    };
    for_each_goal(&truth_spec, |g, goal| {
        writeln!(goal_names, "g{g}")?;
        write_qrels(qrels, g, goal, &mut name)?;
        let mut rng =
            Rng::new(spec.seed.wrapping_add(0x1234_5678) ^ g.wrapping_mul(0x2545_f491_4f6c_dd1d));
        for s in row.iter_mut() {
            let x = rng.unit() as f32;
            *s = if rng.unit() < spec.tie_share {
                (x * 64.0).round() / 64.0
            } else {
                x
            };
        }
        for &(l, grade) in &goal.judged {
            if grade > 0 && rng.unit() >= spec.unretrieved_share {
                row[l as usize] += 0.5 + 0.5 * rng.unit() as f32;
            }
        }
        bytes.clear();
        for s in &row {
            bytes.extend_from_slice(&s.to_le_bytes());
        }
        npy.write_all(&bytes)
    })?;
    npy.flush()?;
    goal_names.flush()?;
    lemma_names.flush()?;
    qrels.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A universe smaller than a goal's relevant lemmas plus the depth: the generator ends (it
    /// once drew forever), ranking the lemmas there are, none twice in a goal.
    #[test]
    fn goal_blocks_and_shuffle() {
        let blocks = goal_blocks("a 1\na 2\nb 1\na 3\n");
        assert_eq!(blocks, ["a 1\na 2\n", "b 1\n", "a 3\n"]);
        let mut v: Vec<u32> = (0..50).collect();
        shuffle(&mut v, 7);
        let mut w: Vec<u32> = (0..50).collect();
        shuffle(&mut w, 7);
        assert_eq!(v, w, "the same seed, the same order");
        assert_ne!(v, (0..50).collect::<Vec<_>>());
        v.sort();
        assert_eq!(v, (0..50).collect::<Vec<_>>(), "a permutation");
    }

    #[test]
    fn a_tiny_universe_ends() {
        let spec = GenSpec {
            goals: 30,
            universe: 20,
            depth: 4,
            relevant_mean: 15.0,
            ..GenSpec::default()
        };
        let (mut q, mut r) = (Vec::new(), Vec::new());
        generate_trec(&spec, &mut q, &mut r).unwrap();
        let run = String::from_utf8(r).unwrap();
        let mut per_goal: std::collections::HashMap<&str, Vec<&str>> = Default::default();
        for l in run.lines() {
            let f: Vec<&str> = l.split(' ').collect();
            per_goal.entry(f[0]).or_default().push(f[2]);
        }
        assert!(!per_goal.is_empty());
        for (g, lemmas) in per_goal {
            assert!(lemmas.len() <= 4, "{g}");
            let distinct: std::collections::HashSet<_> = lemmas.iter().collect();
            assert_eq!(distinct.len(), lemmas.len(), "{g}: {lemmas:?}");
        }
    }

    #[test]
    fn deterministic_and_shaped() {
        let spec = GenSpec {
            goals: 20,
            universe: 500,
            depth: 50,
            graded: true,
            ..GenSpec::default()
        };
        let (mut q1, mut r1, mut q2, mut r2) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        generate_trec(&spec, &mut q1, &mut r1).unwrap();
        generate_trec(&spec, &mut q2, &mut r2).unwrap();
        assert_eq!((&q1, &r1), (&q2, &r2));
        let run = String::from_utf8(r1).unwrap();
        assert_eq!(run.lines().count(), 20 * 50);
        // Scores never increase within a goal; some tie.
        let mut ties = 0;
        for w in run.lines().collect::<Vec<_>>().windows(2) {
            let (a, b): (Vec<&str>, Vec<&str>) =
                (w[0].split(' ').collect(), w[1].split(' ').collect());
            if a[0] == b[0] {
                let (sa, sb): (f64, f64) = (a[4].parse().unwrap(), b[4].parse().unwrap());
                assert!(sb <= sa);
                ties += (sa == sb) as u32;
            }
        }
        assert!(ties > 0);
        let mut r = Rng::new(7);
        assert!((0..1000).all(|_| r.below(10) < 10));
        // A deeper ranking keeps the same actual sets (without judged non-relevant draws).
        let shallow = GenSpec {
            goals: 30,
            universe: 5000,
            depth: 10,
            ..GenSpec::default()
        };
        let deep = GenSpec {
            depth: 100,
            ..shallow.clone()
        };
        let (mut qa, mut ra, mut qb, mut rb) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        generate_trec(&shallow, &mut qa, &mut ra).unwrap();
        generate_trec(&deep, &mut qb, &mut rb).unwrap();
        assert_eq!(qa, qb);
        assert_eq!(rb.iter().filter(|&&c| c == b'\n').count(), 3000);
    }
}
