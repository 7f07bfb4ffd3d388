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

/// Writes TREC qrels and a TREC run for `spec`.
pub fn generate_trec(spec: &GenSpec, qrels: &mut dyn Write, run: &mut dyn Write) -> io::Result<()> {
    let depth = spec.depth.min(spec.universe);
    let mut name = Vec::with_capacity(48);
    let mut seen = hashbrown::HashSet::new();
    let mut ranking: Vec<u64> = Vec::with_capacity(depth as usize);
    let full = depth == spec.universe;
    let mut perm: Vec<u64> = if full {
        (0..spec.universe).collect()
    } else {
        Vec::new()
    };
    for g in 0..spec.goals {
        // Two streams per goal: the actual set does not depend on the ranking's depth, so the same
        // seed gives the same qrels with a deeper run.
        let mut rng = Rng::new(spec.seed ^ g.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut rank_rng = Rng::new(!spec.seed ^ g.wrapping_mul(0xc2b2_ae3d_27d4_eb4f));
        // The actual set.
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
        for &l in &relevant {
            lemma_name(l, &mut name);
            let grade = if spec.graded { 1 + rng.below(3) } else { 1 };
            write!(qrels, "g{g} 0 ")?;
            qrels.write_all(&name)?;
            writeln!(qrels, " {grade}")?;
        }
        // The ranking: random distinct lemmas, with relevant ones at random ranks.
        ranking.clear();
        if full {
            // A shuffled permutation of the universe.
            for i in (1..perm.len()).rev() {
                let j = rank_rng.below(i as u64 + 1) as usize;
                perm.swap(i, j);
            }
            ranking.extend_from_slice(&perm);
        } else {
            seen.clear();
            for &l in &relevant {
                seen.insert(l);
            }
            while (ranking.len() as u64) < depth {
                let l = rank_rng.below(spec.universe);
                if seen.insert(l) {
                    ranking.push(l);
                }
            }
            for &l in &relevant {
                if rank_rng.unit() >= spec.unretrieved_share && depth > 0 {
                    // Relevant lemmas cluster near the top: rank = depth * u^2.
                    let u = rank_rng.unit();
                    let pos = ((u * u) * depth as f64) as usize;
                    ranking[pos.min(depth as usize - 1)] = l;
                }
            }
        }
        if spec.graded && !relevant.is_empty() {
            // A few judged non-relevant lemmas, drawn from the ranking (as pooling would).
            let judged = 1 + rng.below(3);
            for _ in 0..judged {
                let l = ranking[rng.below(ranking.len().max(1) as u64) as usize];
                if !relevant.contains(&l) {
                    lemma_name(l, &mut name);
                    write!(qrels, "g{g} 0 ")?;
                    qrels.write_all(&name)?;
                    writeln!(qrels, " 0")?;
                    relevant.push(l);
                }
            }
        }
        let mut score = 1000.0f64;
        for (rank, &l) in ranking.iter().enumerate() {
            if rank > 0 && rank_rng.unit() >= spec.tie_share {
                score -= 0.001 + rank_rng.unit() * 0.01;
            }
            lemma_name(l, &mut name);
            write!(run, "g{g} Q0 ")?;
            run.write_all(&name)?;
            writeln!(run, " {} {score:.4} lemma-gen", rank + 1)?;
        }
    }
    qrels.flush()?;
    run.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

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
