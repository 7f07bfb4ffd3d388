//! # `RelString(len=k,chunk=c)`: the judgments of the first items, as text
//!
//! trec_eval's `relstring` prints, per goal, one character per item of the first `k`
//! (`min(k, n)`): the grade when it is 0 to 9, `>` above 9, `-` for an item the qrels do not
//! mention, `.` for a negative grade (in the pool, unjudged): `'0000011000'`. It prints no
//! summary line.
//!
//! lemma-eval's values are numbers, so the text travels as numbers: 13 characters per value
//! (`chunk` c holds characters `13c .. 13c + 13`), each a digit of base 15 (0: past the text; 1
//! to 10: `0` to `9`; 11: `>`; 12: `-`; 13: `.`), least significant first: an integer below
//! `15^13 < 2^53`, exact in a double. [`text`] turns a goal's chunks back into the text. The
//! summary of these numbers means nothing; `eval` prints them as they are.
//!
//! trec_eval: `relstring` (not official; per goal only), `-m relstring.k`: `k` read as C's `atof`
//! reads it and truncated (default 10; below 0, 0), printed `relstring_` and the parameters as
//! given. pytrec_eval reports `relstring` as 0 for every goal.

use super::{Alias, Def, Needs, Syntax, WalkNeed};
use crate::goal::GoalView;
use crate::measure::NativeName;
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::walk::NOT_IN_QRELS;
use crate::Measure;
use std::fmt;

/// `RelString(len=k,chunk=c)`.
pub(crate) struct RelString;

/// Characters per value.
pub const CHUNK: u32 = 13;

/// trec_eval's length without parameters.
pub(crate) const DEFAULT_LEN: u32 = 10;

/// The measures of a text of `len` characters: one per chunk (at least one).
pub fn chunks(len: u32) -> impl Iterator<Item = Measure> {
    (0..len.div_ceil(CHUNK).max(1)).map(move |chunk| Measure::RelString { len, chunk })
}

/// trec_eval's character for a grade (`NOT_IN_QRELS` for an item the qrels do not mention).
fn char_of(grade: i32) -> u8 {
    match grade {
        NOT_IN_QRELS => b'-',
        g if g > 9 => b'>',
        g if g >= 0 => b'0' + g as u8,
        _ => b'.',
    }
}

const CODES: &[u8; 14] = b" 0123456789>-.";

/// The text of a goal's chunk values, in chunk order.
pub fn text(values: impl IntoIterator<Item = f64>) -> String {
    let mut s = String::new();
    for v in values {
        let mut x = v as u64;
        for _ in 0..CHUNK {
            let d = (x % 15) as usize;
            x /= 15;
            if d == 0 {
                return s;
            }
            s.push(CODES.get(d).copied().unwrap_or(b'<') as char);
        }
    }
    s
}

impl Def for RelString {
    type Fields = (u32, u32);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "RelString(len=k,chunk=c)",
        about: "trec_eval's relstring: the judgments of the first k items, as coded numbers",
    }];
    const EXAMPLES: &'static [&'static str] =
        &["RelString(len=10,chunk=0)", "RelString(len=20,chunk=1)"];
    const TREC: &'static [Alias<(u32, u32)>] = &[Alias {
        entry: TrecEntry {
            name: "relstring",
            order: 12,
            official: false,
            params: TrecParams::Text {
                default: DEFAULT_LEN,
            },
        },
        of: |(len, chunk)| {
            (chunk == 0).then_some(if len == DEFAULT_LEN {
                TrecArg::None
            } else {
                TrecArg::Cutoff(len)
            })
        },
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["RelString"]).then(|| {
            n.no_cutoff()?;
            let num = |v: Option<&str>, what: &str| -> Result<u32, String> {
                v.ok_or_else(|| format!("`RelString` needs `{what}=`"))?
                    .trim()
                    .parse::<u32>()
                    .map_err(|_| format!("expected a whole number for `{what}`"))
            };
            let len = num(n.take("len"), "len")?;
            let chunk = num(n.take("chunk"), "chunk")?;
            if chunk >= len.div_ceil(CHUNK).max(1) {
                return Err(format!(
                    "`chunk` must be below {}",
                    len.div_ceil(CHUNK).max(1)
                ));
            }
            Ok(Measure::RelString { len, chunk })
        })
    }

    fn fmt((len, chunk): (u32, u32), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RelString(len={len},chunk={chunk})")
    }

    fn needs((len, _): (u32, u32)) -> Needs {
        Needs::walk(WalkNeed::Prefix(len))
    }

    fn value((len, chunk): (u32, u32), g: &GoalView<'_>) -> Option<f64> {
        let prefix = g.walk().0.prefix();
        let end = (len as usize).min(prefix.len());
        let from = ((chunk * CHUNK) as usize).min(end);
        let to = (from + CHUNK as usize).min(end);
        let mut x = 0u64;
        for &grade in prefix[from..to].iter().rev() {
            let c = char_of(grade);
            let d = CODES
                .iter()
                .position(|&x| x == c)
                .expect("a coded character") as u64;
            x = x * 15 + d;
        }
        Some(x as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{eval, eval_labels};
    use super::text;
    use crate::{Label, Measure, Truth};

    #[test]
    fn characters() {
        let labels = [
            Label::judged(0),
            Label::UNJUDGED,
            Label::judged(3),
            Label::judged(-1),
            Label::judged(12),
            Label::judged(1),
        ];
        let truth = Truth::graded(&[12, 3, 1, 0, -1]).unwrap();
        let v = eval_labels(&["RelString(len=10,chunk=0)"], &truth, &labels);
        assert_eq!(text(v.into_iter().flatten()), "0-3.>1");
        let v = eval_labels(&["RelString(len=4,chunk=0)"], &truth, &labels);
        assert_eq!(text(v.into_iter().flatten()), "0-3.");
    }

    #[test]
    fn long_texts_take_several_values() {
        // 20 items, relevant every third: 20 characters in two values.
        let ranking: Vec<bool> = (0..30).map(|i| i % 3 == 0).collect();
        let ms: Vec<String> = super::chunks(20).map(|m| m.to_string()).collect();
        assert_eq!(
            ms,
            ["RelString(len=20,chunk=0)", "RelString(len=20,chunk=1)"]
        );
        let names: Vec<&str> = ms.iter().map(String::as_str).collect();
        let v = eval(&names, 10, &ranking);
        assert_eq!(text(v.into_iter().flatten()), "1--1--1--1--1--1--1-");
        assert_eq!(text(eval(&["relstring"], 3, &[])[0]), "");
    }

    #[test]
    fn trec_eval_names() {
        let v = crate::trec::resolve(&["relstring.20"]).unwrap();
        assert_eq!(v[0].name, "relstring_20");
        assert_eq!(v[0].measure, Some(Measure::RelString { len: 20, chunk: 0 }));
        assert_eq!(v[0].parts, [Measure::RelString { len: 20, chunk: 1 }]);
        assert!(v[0].text && v[0].per_goal);
        let v = crate::trec::resolve(&["relstring"]).unwrap();
        assert_eq!((v[0].name.as_str(), v[0].parts.len()), ("relstring", 0));
        let v = crate::trec::resolve(&["relstring.-3"]).unwrap();
        assert_eq!(v[0].measure, Some(Measure::RelString { len: 0, chunk: 0 }));
    }
}
