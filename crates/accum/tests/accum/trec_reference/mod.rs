//! The slow reference of the measures that read the ranking item by item (trec_eval's `binG`,
//! `G`, `ndcg_rel`, `Rndcg`, `infAP`, `Rprec_mult`, `unj`, `rbp`, `rbp_resid`), written from
//! trec_eval's definitions over a materialised ranking: shared by the property tests (the given
//! order) and the tie-group reference (each group read in ascending grade).

#![allow(dead_code, clippy::needless_range_loop)]

use lemma_accum::Measure;

/// The value of `m` for the ranking `grades` (each item's grade, `None` when the qrels do not
/// mention it), every judged grade of the goal `judged`, relevance level `level`; `None` when
/// `m` is not one of these measures.
pub fn walk_measure(
    m: &Measure,
    grades: &[Option<i32>],
    judged: &[i32],
    level: i32,
) -> Option<f64> {
    let n = grades.len();
    let rel: Vec<bool> = grades
        .iter()
        .map(|g| g.is_some_and(|g| g >= level))
        .collect();
    let r = judged.iter().filter(|&&g| g >= level).count();
    let rf = r as f64;
    let s = |k: usize| rel[..k.min(n)].iter().filter(|&&x| x).count();
    let gain = |i: usize| grades[i].filter(|&g| g > 0).map_or(0.0, f64::from);
    let mut ideal: Vec<f64> = judged
        .iter()
        .filter(|&&g| g > 0)
        .map(|&g| g as f64)
        .collect();
    ideal.sort_by(|a, b| b.partial_cmp(a).unwrap());
    let p_count = ideal.len();
    // DCG of the first k items; the ideal ranking's DCG at k.
    let dcg = |k: usize| {
        (0..k.min(n))
            .map(|i| gain(i) / ((i + 2) as f64).log2())
            .sum::<f64>()
    };
    let idcg = |k: usize| {
        (0..k.min(p_count))
            .map(|i| ideal[i] / ((i + 2) as f64).log2())
            .sum::<f64>()
    };
    let unjudged = |i: usize| grades[i].is_none_or(|g| g < 0);
    // Custom gains: the gain of each grade, the ideal ranking every judged gain above 0,
    // descending.
    let custom = |gains: &lemma_accum::Gains| {
        let of = |g: i32| -> f64 {
            let named = gains.get().iter().find(|(k, _)| *k == g as i64);
            named.map_or(g as f64, |&(_, x)| x)
        };
        let dcg: f64 = (0..n)
            .map(|i| grades[i].filter(|&g| g >= 0).map_or(0.0, of) / ((i + 2) as f64).log2())
            .sum();
        let mut ideal: Vec<f64> = judged
            .iter()
            .filter(|&&g| g >= 0)
            .map(|&g| of(g))
            .filter(|&x| x > 0.0)
            .collect();
        ideal.sort_by(|a, b| b.partial_cmp(a).unwrap());
        let idcg: f64 = (0..ideal.len())
            .map(|i| ideal[i] / ((i + 2) as f64).log2())
            .sum();
        (dcg, idcg)
    };
    Some(match *m {
        Measure::NDCGGains { gains } => {
            let (d, i) = custom(&gains);
            if i > 0.0 {
                d / i
            } else {
                0.0
            }
        }
        Measure::DCGGains { gains } => custom(&gains).0,
        Measure::IDCGGains { gains } => custom(&gains).1,
        Measure::RprecMult { mult } => {
            let c = (mult * rf + 0.9) as i64;
            if c < 1 {
                0.0
            } else {
                s(c as usize) as f64 / c as f64
            }
        }
        Measure::BinG => {
            let mut sum = 0.0;
            for i in 0..n {
                if rel[i] {
                    let nonrel_above = i + 1 - s(i + 1);
                    sum += 1.0 / ((2 + nonrel_above) as f64).log2();
                }
            }
            if s(n) == 0 {
                0.0
            } else {
                sum / rf
            }
        }
        Measure::G => {
            let total: f64 = ideal.iter().sum();
            let cost = |k: usize| {
                (0..k)
                    .map(|j| ideal.get(j).copied().unwrap_or(0.0).max(1.0))
                    .sum::<f64>()
            };
            let mut sum = 0.0;
            for i in 0..n {
                if gain(i) != 0.0 {
                    let so_far: f64 = (0..=i).map(gain).sum();
                    sum += gain(i) / (2.0 + cost(i + 1) - so_far).log2();
                }
            }
            if total > 0.0 {
                sum / total
            } else {
                0.0
            }
        }
        Measure::NDCGRel => {
            let (mut sum, mut found) = (0.0, 0);
            for i in 0..n {
                if gain(i) > 0.0 {
                    sum += dcg(i + 1) / idcg(i + 1);
                    found += 1;
                }
            }
            sum += (p_count - found) as f64 * dcg(n) / idcg(p_count);
            if sum > 0.0 {
                sum / p_count as f64
            } else {
                0.0
            }
        }
        Measure::RNDCG => {
            if r == 0 {
                return Some(0.0);
            }
            let mut at: Vec<usize> = (1..=p_count)
                .filter(|&c| c == p_count || ideal[c] != ideal[c - 1])
                .collect();
            let mut vals: Vec<f64> = at.iter().map(|&c| dcg(c) / idcg(c)).collect();
            if n > p_count + 1 && p_count > 0 {
                at.push(n);
                vals.push(dcg(n) / idcg(p_count));
            }
            if vals.is_empty() {
                0.0
            } else {
                vals.iter().sum::<f64>() / vals.len() as f64
            }
        }
        Measure::InfAP => {
            let eps = 0.00001;
            let mut sum = 0.0;
            for i in 0..n {
                if !rel[i] {
                    continue;
                }
                if i == 0 {
                    sum += 1.0;
                    continue;
                }
                let above = &grades[..i];
                let rel_above = above
                    .iter()
                    .filter(|g| g.is_some_and(|g| g >= level))
                    .count();
                let non = above
                    .iter()
                    .filter(|g| g.is_some_and(|g| (0..level).contains(&g)))
                    .count();
                let pool = above.iter().filter(|g| g.is_some()).count();
                let fi = i as f64;
                sum += 1.0 / (fi + 1.0)
                    + (fi / (fi + 1.0))
                        * (pool as f64 / fi)
                        * ((rel_above as f64 + eps) / ((rel_above + non) as f64 + 2.0 * eps));
            }
            if r == 0 {
                sum
            } else {
                sum / rf
            }
        }
        Measure::RBP { p } => {
            let max = judged
                .iter()
                .copied()
                .filter(|&g| g >= 0)
                .max()
                .unwrap_or(0);
            let sum: f64 = (0..n)
                .map(|i| {
                    let g = if max > 1 {
                        gain(i) / max as f64
                    } else {
                        gain(i)
                    };
                    g * p.powi(i as i32)
                })
                .sum();
            (1.0 - p) * sum
        }
        Measure::RBPResid { p } => {
            if !(0..n).any(unjudged) {
                0.0
            } else {
                let sum: f64 = (0..n)
                    .filter(|&i| unjudged(i))
                    .map(|i| p.powi(i as i32))
                    .sum();
                p.powi(n as i32) + (1.0 - p) * sum
            }
        }
        Measure::RelString { len, chunk } => {
            // trec_eval's characters, 13 to a value in base 15, least significant first.
            let text: Vec<u8> = grades[..n.min(len as usize)]
                .iter()
                .map(|g| match *g {
                    None => b'-',
                    Some(g) if g > 9 => b'>',
                    Some(g) if g >= 0 => b'0' + g as u8,
                    Some(_) => b'.',
                })
                .collect();
            let digits = b" 0123456789>-.";
            let part = text.iter().skip(13 * chunk as usize).take(13);
            let mut x = 0.0;
            for (i, c) in part.enumerate() {
                let d = digits.iter().position(|x| x == c).unwrap();
                x += d as f64 * 15f64.powi(i as i32);
            }
            assert_eq!(
                lemma_accum::relstring_text([x]).as_bytes(),
                &text
                    .iter()
                    .skip(13 * chunk as usize)
                    .take(13)
                    .copied()
                    .collect::<Vec<u8>>()[..]
            );
            x
        }
        Measure::Unj { k } => {
            (0..n.min(k as usize)).filter(|&i| unjudged(i)).count() as f64 / k as f64
        }
        _ => return None,
    })
}

/// The measures [`walk_measure`] computes, by name.
pub const WALK_MEASURES: &[&str] = &[
    "Rprec(mult=0.2)",
    "Rprec(mult=1.0)",
    "Rprec(mult=1.4)",
    "Rprec(mult=2.5)",
    "BinG",
    "G",
    "nDCG_rel",
    "RnDCG",
    "infAP",
    "RBP(p=0.9)",
    "RBP(p=0.5)",
    "RBPResid(p=0.9)",
    "RBPResid(p=0.99)",
    "RelString(len=10,chunk=0)",
    "RelString(len=20,chunk=1)",
    "Unj@1",
    "Unj@5",
    "Unj@20",
    "nDCG(gains=1:3/2:9/3:1)",
    "DCG(gains=2:0/3:5)",
    "IDCG(gains=1:4.5)",
];
