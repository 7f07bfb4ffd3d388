//! `lemma-eval gen --corpus`: a synthetic library shaped like LeanDojo's, for tests and
//! benchmarks up to Mathlib's size.
//!
//! - **corpus** (`corpus.jsonl`): `files` files `Mathlib/Part{i}/File{j}.lean`, each importing a
//!   few earlier files (mostly recent ones, some far back: a DAG whose transitive closures cover
//!   much of what came before, as Mathlib's do), each defining its share of `premises` premises one
//!   after another (`start` and `end` positions, short `code`, `kind`), plus a few entries of the
//!   kinds ReProver skips (a null name, a `user__.n` name, empty code, a mutual block);
//! - **actual sets** (JSONL): `goals` tactic states of theorems (several states a theorem), each
//!   with `file_path`, `theorem`, `theorem_pos` and the premises its proof used: drawn from the
//!   premises accessible at the theorem (earlier in its file, or imported), a share
//!   `inaccessible_gold` of goals also naming one inaccessible premise;
//! - **predictions**: a TREC run `depth` deep per goal, ranking every premise of the library
//!   regardless of access (a retriever that ignores imports): relevant premises near the top, a
//!   share of the rest inaccessible; or a dense `.npy` score matrix `[goals, premises]` with the
//!   corpus's premise order as its columns.
//!
//! Deterministic: the same spec gives the same bytes (splitmix64, [`crate::gen::Rng`]).

use crate::gen::Rng;
use std::io::{self, Write};

/// What to generate.
#[derive(Clone, Debug)]
pub struct CorpusSpec {
    /// Source files.
    pub files: u64,
    /// Premises in all (at least one a file).
    pub premises: u64,
    /// Mean number of files a file imports directly.
    pub imports_mean: f64,
    /// Tactic states (goals).
    pub goals: u64,
    /// Mean tactic states a theorem.
    pub states_mean: f64,
    /// Premises ranked per goal (TREC run).
    pub depth: u64,
    /// Mean premises a state uses.
    pub relevant_mean: f64,
    /// Share of goals whose used premises include one that is not accessible.
    pub inaccessible_gold: f64,
    /// Seed.
    pub seed: u64,
}

impl Default for CorpusSpec {
    fn default() -> Self {
        CorpusSpec {
            files: 200,
            premises: 10_000,
            imports_mean: 4.0,
            goals: 1000,
            states_mean: 4.0,
            depth: 100,
            relevant_mean: 3.0,
            inaccessible_gold: 0.0,
            seed: 1,
        }
    }
}

/// The generated library, in memory.
pub struct Library {
    /// Per file: its path and the files it imports.
    pub files: Vec<(String, Vec<u32>)>,
    /// Per file: its premises (names), in order.
    pub file_premises: Vec<std::ops::Range<u64>>,
    /// Per premise: its file, start line and end line (columns: 1 and 10).
    pub premises: Vec<(u32, u32, u32)>,
    /// Per file: the files it imports transitively (sorted).
    pub closure: Vec<Vec<u32>>,
}

/// Premise `i`'s name.
pub fn premise_name(i: u64) -> String {
    const NS: [&str; 6] = [
        "Finset",
        "Nat",
        "Real",
        "Polynomial",
        "Set",
        "MeasureTheory",
    ];
    const STEM: [&str; 6] = [
        "sum_le",
        "mul_comm",
        "card_pos",
        "eval_add",
        "subset_iff",
        "le_of",
    ];
    format!(
        "{}.{}_{i}",
        NS[(i % 6) as usize],
        STEM[((i / 6) % 6) as usize]
    )
}

/// Builds the library of `spec`.
pub fn library(spec: &CorpusSpec) -> Library {
    let mut rng = Rng::new(spec.seed ^ 0x00c0_4b05);
    let n = spec.files.max(1);
    let per = (spec.premises.max(n) / n).max(1);
    let mut files = Vec::with_capacity(n as usize);
    let mut closure: Vec<Vec<u32>> = Vec::with_capacity(n as usize);
    let mut file_premises = Vec::with_capacity(n as usize);
    let mut premises = Vec::new();
    for f in 0..n {
        let path = format!("Mathlib/Part{}/File{f}.lean", f / 100);
        let mut imports: Vec<u32> = Vec::new();
        if f > 0 {
            let p = 1.0 / (1.0 + spec.imports_mean);
            let mut k = 1;
            while rng.unit() >= p && k < 16 {
                k += 1;
            }
            for _ in 0..k {
                // Mostly a recent file, sometimes any earlier one.
                let back = if rng.unit() < 0.7 {
                    1 + rng.below(8.min(f))
                } else {
                    1 + rng.below(f)
                };
                let to = (f - back) as u32;
                if !imports.contains(&to) {
                    imports.push(to);
                }
            }
        }
        let mut all: Vec<u32> = Vec::new();
        for &i in &imports {
            all.push(i);
            all.extend_from_slice(&closure[i as usize]);
        }
        all.sort_unstable();
        all.dedup();
        closure.push(all);
        let count = if f == n - 1 {
            spec.premises.max(n) - per * (n - 1)
        } else {
            per
        };
        let start = premises.len() as u64;
        let mut line = 10u32;
        for _ in 0..count {
            let len = 1 + rng.below(6) as u32;
            premises.push((f as u32, line, line + len));
            line += len + 2;
        }
        file_premises.push(start..premises.len() as u64);
        files.push((path, imports));
    }
    Library {
        files,
        file_premises,
        premises,
        closure,
    }
}

impl Library {
    /// Whether premise `p` is accessible from a theorem starting at line `line` of file `f`.
    pub fn accessible(&self, f: u32, line: u32, p: u64) -> bool {
        let (pf, _, end) = self.premises[p as usize];
        if pf == f {
            (end, 10) <= (line, 1)
        } else {
            self.closure[f as usize].binary_search(&pf).is_ok()
        }
    }

    /// Writes `corpus.jsonl`.
    pub fn write_corpus(&self, out: &mut dyn Write) -> io::Result<()> {
        for (f, (path, imports)) in self.files.iter().enumerate() {
            let imports: Vec<String> = imports
                .iter()
                .map(|&i| format!("\"{}\"", self.files[i as usize].0))
                .collect();
            write!(
                out,
                "{{\"path\": \"{path}\", \"imports\": [{}], \"premises\": [",
                imports.join(", ")
            )?;
            for (k, p) in self.file_premises[f].clone().enumerate() {
                let (_, start, end) = self.premises[p as usize];
                let name = premise_name(p);
                write!(
                    out,
                    "{}{{\"full_name\": \"{name}\", \"code\": \"theorem {name} : ∀ n, n ≤ n := \
                     by\\n  simp\", \"start\": [{start}, 1], \"end\": [{end}, 10], \"kind\": \
                     \"commanddeclaration\"}}",
                    if k > 0 { ", " } else { "" }
                )?;
            }
            // The kinds of entries ReProver skips, in every tenth file.
            if f % 10 == 0 {
                write!(
                    out,
                    ", {{\"full_name\": null, \"code\": \"x\", \"start\": [1, 1], \"end\": [1, 2]}}, \
                     {{\"full_name\": \"_private.user__.n.{f}\", \"code\": \"x\", \"start\": [1, 1], \"end\": [1, 2]}}, \
                     {{\"full_name\": \"empty_{f}\", \"code\": \"\", \"start\": [1, 1], \"end\": [1, 2]}}, \
                     {{\"full_name\": \"[even_{f}, odd_{f}]\", \"code\": \"mutual\", \"start\": [1, 1], \"end\": [1, 2]}}"
                )?;
            }
            writeln!(out, "]}}")?;
        }
        Ok(())
    }
}

/// One generated goal: its theorem's file and premise (whose start is the theorem's position),
/// its used premises, and a ranking of premise ids with scores.
pub struct CorpusGoal {
    /// The goal id.
    pub id: String,
    /// The theorem's file.
    pub file: u32,
    /// The theorem (a premise id of its file).
    pub theorem: u64,
    /// Used premises.
    pub used: Vec<u64>,
    /// Ranked premise ids, best first.
    pub ranking: Vec<u64>,
    /// Scores, non-increasing.
    pub scores: Vec<f32>,
}

/// Calls `f` for every goal of `spec` over `lib`, deterministically.
pub fn for_each_corpus_goal(
    spec: &CorpusSpec,
    lib: &Library,
    mut f: impl FnMut(&CorpusGoal) -> io::Result<()>,
) -> io::Result<()> {
    let mut rng = Rng::new(spec.seed ^ 0x0006_0a15);
    let total = lib.premises.len() as u64;
    let depth = spec.depth.min(total);
    let mut g = 0u64;
    // States already written per theorem: a theorem drawn again continues its numbering, so
    // that goal ids (`file:theorem#state`) stay distinct.
    let mut written: hashbrown::HashMap<u64, u32> = hashbrown::HashMap::new();
    while g < spec.goals {
        // A theorem: a premise of a file that imports something (or anything, in a tiny library).
        let theorem = rng.below(total);
        let (file, line, _) = lib.premises[theorem as usize];
        let p = 1.0 / spec.states_mean.max(1.0);
        let mut states = 1u32;
        while rng.unit() >= p && states < 30 {
            states += 1;
        }
        let accessible: Vec<u64> = lib.closure[file as usize]
            .iter()
            .flat_map(|&i| lib.file_premises[i as usize].clone())
            .chain(
                lib.file_premises[file as usize]
                    .clone()
                    .filter(|&q| lib.accessible(file, line, q)),
            )
            .collect();
        let first = *written.get(&theorem).unwrap_or(&0);
        for s in first..first + states {
            if g == spec.goals {
                break;
            }
            written.insert(theorem, s + 1);
            let mut used = Vec::new();
            if !accessible.is_empty() {
                let pr = 1.0 / (1.0 + spec.relevant_mean);
                let mut k = 1;
                while rng.unit() >= pr && k < 20 {
                    k += 1;
                }
                for _ in 0..k {
                    let q = accessible[rng.below(accessible.len() as u64) as usize];
                    if !used.contains(&q) {
                        used.push(q);
                    }
                }
            }
            if used.is_empty() || rng.unit() < spec.inaccessible_gold {
                // One premise the theorem cannot use.
                for _ in 0..16 {
                    let q = rng.below(total);
                    if !lib.accessible(file, line, q) && !used.contains(&q) {
                        used.push(q);
                        break;
                    }
                }
            }
            // The ranking: distinct premises of the whole library, the used ones placed near the
            // top (some beyond the depth).
            let mut ranking: Vec<u64> = Vec::with_capacity(depth as usize);
            let mut seen: hashbrown::HashSet<u64> = used.iter().copied().collect();
            while (ranking.len() as u64) < depth.saturating_sub(used.len() as u64) {
                let q = rng.below(total);
                if seen.insert(q) {
                    ranking.push(q);
                }
            }
            for &q in &used {
                if rng.unit() < 0.85 {
                    let u = rng.unit();
                    let at = ((u * u) * ranking.len() as f64) as usize;
                    ranking.insert(at.min(ranking.len()), q);
                }
            }
            ranking.truncate(depth as usize);
            let mut score = 100.0f32;
            let scores = ranking
                .iter()
                .map(|_| {
                    score -= 0.01 + rng.unit() as f32 * 0.05;
                    (score * 1e3).round() / 1e3
                })
                .collect();
            let id = format!(
                "{}:{}#{s}",
                lib.files[file as usize].0,
                premise_name(theorem)
            );
            f(&CorpusGoal {
                id,
                file,
                theorem,
                used,
                ranking,
                scores,
            })?;
            g += 1;
        }
    }
    Ok(())
}

/// Writes the corpus, JSONL actual sets with each goal's context, and a TREC run.
pub fn generate_corpus(
    spec: &CorpusSpec,
    corpus: &mut dyn Write,
    actual: &mut dyn Write,
    run: &mut dyn Write,
) -> io::Result<()> {
    let lib = library(spec);
    lib.write_corpus(corpus)?;
    for_each_corpus_goal(spec, &lib, |g| {
        write_actual(actual, &lib, g)?;
        for (rank, (&p, &s)) in g.ranking.iter().zip(&g.scores).enumerate() {
            writeln!(
                run,
                "{} Q0 {} {} {s:.3} gen-corpus",
                g.id,
                premise_name(p),
                rank + 1
            )?;
        }
        Ok(())
    })?;
    corpus.flush()?;
    actual.flush()?;
    run.flush()
}

/// Writes the corpus, the actual sets, and a dense score matrix `[goals, premises]` (f32, the
/// corpus's premises as columns in order) with its goal and lemma name lists.
pub fn generate_corpus_npy(
    spec: &CorpusSpec,
    corpus: &mut dyn Write,
    actual: &mut dyn Write,
    matrix: &mut dyn Write,
    goal_names: &mut dyn Write,
    lemma_names: &mut dyn Write,
) -> io::Result<()> {
    let lib = library(spec);
    lib.write_corpus(corpus)?;
    let total = lib.premises.len();
    for p in 0..total as u64 {
        writeln!(lemma_names, "{}", premise_name(p))?;
    }
    lemma_ingest::write_f32_header(matrix, spec.goals as usize, total)?;
    let mut row = vec![0f32; total];
    let mut rng = Rng::new(spec.seed ^ 0x0005_c0e5);
    for_each_corpus_goal(spec, &lib, |g| {
        write_actual(actual, &lib, g)?;
        writeln!(goal_names, "{}", g.id)?;
        for x in row.iter_mut() {
            *x = (rng.below(1 << 20) as f32) / (1 << 20) as f32;
        }
        for (&p, &s) in g.ranking.iter().zip(&g.scores) {
            row[p as usize] = 1.0 + s;
        }
        let bytes: Vec<u8> = row.iter().flat_map(|x| x.to_le_bytes()).collect();
        matrix.write_all(&bytes)
    })?;
    corpus.flush()?;
    actual.flush()?;
    matrix.flush()?;
    goal_names.flush()?;
    lemma_names.flush()
}

fn write_actual(actual: &mut dyn Write, lib: &Library, g: &CorpusGoal) -> io::Result<()> {
    let (_, line, _) = lib.premises[g.theorem as usize];
    let used: Vec<String> = g
        .used
        .iter()
        .map(|&p| format!("\"{}\"", premise_name(p)))
        .collect();
    writeln!(
        actual,
        "{{\"goal_id\": \"{}\", \"file_path\": \"{}\", \"theorem\": \"{}\", \"theorem_pos\": [{line}, 1], \"premises\": [{}]}}",
        g.id,
        lib.files[g.file as usize].0,
        premise_name(g.theorem),
        used.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goal_ids_are_distinct() {
        // Seed 3 with 20,000 goals drew many theorems twice (614 repeated ids before states
        // were numbered per theorem).
        let spec = CorpusSpec {
            goals: 20_000,
            seed: 3,
            ..CorpusSpec::default()
        };
        let lib = library(&spec);
        let mut ids = hashbrown::HashSet::new();
        let mut count = 0u64;
        let mut repeated_theorem = false;
        let mut theorems = hashbrown::HashSet::new();
        let mut last = None;
        for_each_corpus_goal(&spec, &lib, |g| {
            assert!(ids.insert(g.id.clone()), "goal id {} repeats", g.id);
            if last != Some(g.theorem) && !theorems.insert(g.theorem) {
                repeated_theorem = true;
            }
            last = Some(g.theorem);
            count += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(count, 20_000);
        // The case the numbering exists for did occur.
        assert!(repeated_theorem);
    }

    #[test]
    fn a_theorem_drawn_again_continues_its_states() {
        let spec = CorpusSpec {
            files: 2,
            premises: 4,
            goals: 200,
            seed: 3,
            ..CorpusSpec::default()
        };
        let lib = library(&spec);
        let mut per: hashbrown::HashMap<u64, Vec<String>> = hashbrown::HashMap::new();
        for_each_corpus_goal(&spec, &lib, |g| {
            per.entry(g.theorem).or_default().push(g.id.clone());
            Ok(())
        })
        .unwrap();
        // Four premises, 200 goals: every theorem drawn many times, its states numbered
        // #0, #1, ... in the order written.
        for (t, ids) in &per {
            let prefix = format!(
                "{}:{}#",
                lib.files[lib.premises[*t as usize].0 as usize].0,
                premise_name(*t)
            );
            for (i, id) in ids.iter().enumerate() {
                assert_eq!(id, &format!("{prefix}{i}"));
            }
        }
    }
}
