//! # `nDCG(gains=...)`, `DCG(gains=...)`, `IDCG(gains=...)`: DCG under custom gains
//!
//! trec_eval's `ndcg`, `dcg` and `ideal_dcg` with gains given (`-m ndcg.1=3,2=9,4=4.5`): grade
//! `g` gains the number given for it, and a grade from 0 to the goal's largest judged grade that
//! is not given gains itself (grade 0: 0). Grades not judged (not in the qrels, or graded
//! negative) gain 0.
//!
//! * `DCG = sum over ranks i of gain(i) / log2(i + 1)` over the whole ranking.
//! * `IDCG`: the grades are sorted by gain (ascending; as trec_eval sorts them, gains less than
//!   1 apart compare equal and keep their order: the pairs in the order given, then the other
//!   grades ascending); the ideal ranking takes the judged items of the last grade, then of the
//!   one before, and so on, and stops at the first grade whose gain is not positive.
//!   `IDCG = sum over its ranks i of gain / log2(i + 1)`.
//! * `nDCG = DCG / IDCG`, 0 when `IDCG = 0`.
//!
//! Without pairs this is the `nDCG` of `ndcg.rs`; `1=1,2=3` is exponential gain `2^g - 1` for
//! grades up to 2. A pair whose name is not a whole number is ignored, as trec_eval ignores it;
//! a negative grade is refused.
//!
//! Example (hand-computed in the tests): grades `a:1, b:2, c:0, d:3` judged, ranking
//! `b x a c`, gains `1=3, 2=9`: the table is `0:0, 1:3, 3:3, 2:9` (3 and 3 keep their order:
//! the given pair first), `DCG = 9/log2(2) + 3/log2(4) = 10.5`; the ideal ranking takes the
//! grades in the table's order from the end, 2 (gain 9), 3 (3), 1 (3): `b, d, a`,
//! `IDCG = 9 + 3/log2(3) + 3/log2(4)`.

use super::{Def, Needs, Syntax, WalkNeed};
use crate::goal::GoalView;
use crate::lists::Gains;
use crate::measure::NativeName;
use crate::Measure;
use std::fmt;

/// `nDCG(gains=...)`.
pub(crate) struct NdcgGains;

/// `DCG(gains=...)`.
pub(crate) struct DcgGains;

/// `IDCG(gains=...)`.
pub(crate) struct IdcgGains;

/// The gains of trec_eval's `name=value` pairs: pairs whose name is not a whole number are
/// ignored (as trec_eval ignores them), a negative grade is refused.
pub(crate) fn trec_gains(pairs: &[(&str, f64)]) -> Result<Gains, String> {
    let mut v = Vec::new();
    for &(k, x) in pairs {
        if !crate::trec::is_level_name(k) {
            continue;
        }
        let g: i64 = k
            .parse()
            .map_err(|_| format!("custom gain of grade `{k}`: the grade is out of range"))?;
        if g < 0 {
            return Err(format!(
                "custom gain of grade `{k}`: negative grades are not supported"
            ));
        }
        v.push((g, x));
    }
    Ok(Gains::new(&v))
}

/// Parses `gains=g1:x1/g2:x2/...` of a native name.
fn parse_gains(n: &mut NativeName<'_>) -> Result<Gains, String> {
    n.no_cutoff()?;
    let text = n.take("gains").unwrap_or_default();
    let mut v = Vec::new();
    for part in text.split('/').filter(|p| !p.is_empty()) {
        let parsed = part.split_once(':').and_then(|(g, x)| {
            let g = g.trim().parse::<i64>().ok().filter(|g| *g >= 0)?;
            let x = x.trim().parse::<f64>().ok().filter(|x| x.is_finite())?;
            Some((g, x))
        });
        v.push(parsed.ok_or_else(|| {
            format!("expected gains `grade:gain/...` (grades >= 0), found `{part}`")
        })?);
    }
    Ok(Gains::new(&v))
}

fn claims(n: &NativeName<'_>, names: &[&str]) -> bool {
    n.is(names) && n.has("gains")
}

fn needs(gains: Gains) -> Needs {
    Needs::walk(WalkNeed::Gains(gains))
}

impl Def for NdcgGains {
    type Fields = (Gains,);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "nDCG(gains=g1:x1/g2:x2/...)",
        about:
            "nDCG where grade g gains x (trec_eval's ndcg.1=3,2=9); other grades gain themselves",
    }];
    const EXAMPLES: &'static [&'static str] = &["nDCG(gains=1:3/2:9/4:4.5)"];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        claims(n, &["nDCG", "NDCG"])
            .then(|| parse_gains(n).map(|gains| Measure::NDCGGains { gains }))
    }

    fn fmt((gains,): (Gains,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "nDCG(gains={gains})")
    }

    fn needs((gains,): (Gains,)) -> Needs {
        needs(gains)
    }

    fn value(_: (Gains,), g: &GoalView<'_>) -> Option<f64> {
        let (w, i) = g.walk();
        let st = w.gains(i);
        Some(if st.ideal() > 0.0 {
            st.dcg() / st.ideal()
        } else {
            0.0
        })
    }
}

impl Def for DcgGains {
    type Fields = (Gains,);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "DCG(gains=g1:x1/g2:x2/...)",
        about: "DCG where grade g gains x (trec_eval's dcg.1=3,2=9)",
    }];
    const EXAMPLES: &'static [&'static str] = &["DCG(gains=1:3/2:9)"];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        claims(n, &["DCG"]).then(|| parse_gains(n).map(|gains| Measure::DCGGains { gains }))
    }

    fn fmt((gains,): (Gains,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DCG(gains={gains})")
    }

    fn needs((gains,): (Gains,)) -> Needs {
        needs(gains)
    }

    fn value(_: (Gains,), g: &GoalView<'_>) -> Option<f64> {
        let (w, i) = g.walk();
        Some(w.gains(i).dcg())
    }
}

impl Def for IdcgGains {
    type Fields = (Gains,);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "IDCG(gains=g1:x1/g2:x2/...)",
        about: "DCG of the ideal ranking where grade g gains x (trec_eval's ideal_dcg.1=3)",
    }];
    const EXAMPLES: &'static [&'static str] = &["IDCG(gains=1:3/2:9)"];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        claims(n, &["IDCG"]).then(|| parse_gains(n).map(|gains| Measure::IDCGGains { gains }))
    }

    fn fmt((gains,): (Gains,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IDCG(gains={gains})")
    }

    fn needs((gains,): (Gains,)) -> Needs {
        needs(gains)
    }

    fn value(_: (Gains,), g: &GoalView<'_>) -> Option<f64> {
        let (w, i) = g.walk();
        Some(w.gains(i).ideal())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, eval_labels};
    use crate::{Label, Truth};

    /// Grades judged `{3, 2, 1, 0}`; the ranking: grade 2, not judged, grade 1, grade 0.
    fn example(names: &[&str]) -> Vec<f64> {
        let truth = [3, 2, 1, 0];
        let labels = [
            Label::judged(2),
            Label::UNJUDGED,
            Label::judged(1),
            Label::judged(0),
        ];
        let v = eval_labels(names, &Truth::graded(&truth).unwrap(), &labels);
        v.into_iter().map(|x| x.unwrap()).collect()
    }

    #[test]
    fn custom_gains_by_hand() {
        // Table 0:0, 1:3, 3:3, 2:9 (3 and 3 compare equal and keep their order).
        // DCG = 9/log2(2) + 3/log2(4) = 10.5.
        // IDCG: grade 2 (9), grade 3 (3), grade 1 (3): 9 + 3/log2(3) + 3/log2(4).
        let idcg = 9.0 + 3.0 / 3f64.log2() + 1.5;
        let v = example(&[
            "DCG(gains=1:3/2:9)",
            "IDCG(gains=1:3/2:9)",
            "nDCG(gains=1:3/2:9)",
        ]);
        assert!(close(v[0], 10.5));
        assert!(close(v[1], idcg));
        assert!(close(v[2], 10.5 / idcg));
    }

    #[test]
    fn no_pairs_is_the_plain_measure_and_order_counts() {
        let v = example(&["nDCG(gains=)", "nDCG", "DCG(gains=)", "DCG"]);
        assert!(close(v[0], v[1]));
        assert!(close(v[2], v[3]));
        // Grade 3 gaining 0: the table 3:0, 0:0, 1:1, 2:2 (the pair first); the ideal ranking
        // is the grade-2 item, then the grade-1 item, and ends at grade 0: 2 + 1/log2(3).
        let v = example(&["IDCG(gains=3:0)"]);
        assert!(close(v[0], 2.0 + 1.0 / 3f64.log2()));
        // Gains less than 1 apart compare equal: 3:0.5, 1:-1, 0:0, 2:2 sort as
        // 1:-1, 3:0.5, 0:0, 2:2 (glibc's merge sort), so grade 0 comes after grade 3 and the
        // ideal ranking ends after the grade-2 item: 2.
        let v = example(&["IDCG(gains=3:0.5/1:-1)"]);
        assert!(close(v[0], 2.0));
    }

    #[test]
    fn trec_eval_names() {
        let v = crate::trec::resolve(&["ndcg.1=3,2=9,4=4.5", "dcg.p=2", "ideal_dcg"]).unwrap();
        let names: Vec<&str> = v.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["dcg_p=2", "ideal_dcg", "ndcg_1=3,2=9,4=4.5"]);
        assert_eq!(
            v[2].measure.unwrap().to_string(),
            "nDCG(gains=1:3/2:9/4:4.5)"
        );
        // `p=2` names no grade: trec_eval ignores it.
        assert_eq!(v[0].measure.unwrap().to_string(), "DCG(gains=)");
        let e = crate::trec::resolve(&["ndcg.-1=2"]).unwrap_err();
        assert_eq!(e.code, 2);
        assert!(e.message.contains("negative grades"), "{}", e.message);
        assert_eq!(crate::trec::resolve(&["ndcg.1=2,3"]).unwrap_err().code, 2);
    }
}
