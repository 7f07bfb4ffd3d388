//! A scanner for the JSONL prediction records of the common shape, beside serde_json: one object
//! with the keys `goal_id` (a string), `retrieved_premises` or `ranked` (an array of strings) and
//! `scores` (an array of numbers), each at most once, in any order, strings without escapes.
//! Names are borrowed from the line; nothing is allocated but the two vectors. The scores are
//! converted to f64 only when the caller reads them; otherwise each is checked (JSON's grammar,
//! finite as an f64) and counted.
//!
//! Anything else (a backslash anywhere in the line, a premise object, another key, `null`, a
//! number outside JSON's grammar or f64's range) gives `None`, and the caller parses the line with
//! serde_json: the scanner never decides an error, so a bad record gets serde's message, and a
//! record it accepts is one serde reads to the same values (property-tested in `run.rs`).

use std::borrow::Cow;

/// What the scanner read: the record's fields, as serde would give them.
pub(crate) struct Fields<'a> {
    pub goal_id: Option<&'a str>,
    pub retrieved_premises: Option<Vec<Cow<'a, str>>>,
    pub ranked: Option<Vec<Cow<'a, str>>>,
    pub scores: Option<Scores>,
}

/// A record's `scores`: their values, or (not asked for) how many there are.
#[derive(Debug, PartialEq)]
pub(crate) enum Scores {
    Values(Vec<f64>),
    Count(usize),
}

impl Scores {
    pub(crate) fn len(&self) -> usize {
        match self {
            Scores::Values(v) => v.len(),
            Scores::Count(n) => *n,
        }
    }
}

/// A number's text, checked against JSON's grammar.
struct Number {
    start: usize,
    end: usize,
    neg: bool,
    /// Its digits as an integer (wrapping past 19 digits).
    m: u64,
    int: usize,
    frac: usize,
    exp: bool,
}

struct Scan<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    #[inline(always)]
    fn ws(&mut self) {
        while let Some(&c) = self.b.get(self.i) {
            if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                break;
            }
            self.i += 1;
        }
    }

    #[inline(always)]
    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.b.get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    /// A string (control characters and backslashes were ruled out for the whole line by
    /// [`scan`]: it ends at the next quote).
    #[inline(always)]
    fn string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.i;
        let end = start + memchr::memchr(b'"', &self.b[start..])?;
        self.i = end + 1;
        // On char boundaries: `"` is ASCII.
        Some(&self.s[start..end])
    }

    /// A number's text in JSON's grammar (not yet known to be finite).
    #[inline(always)]
    fn number_text(&mut self) -> Option<Number> {
        self.ws();
        let b = self.b;
        let start = self.i;
        let mut i = start;
        let neg = b.get(i) == Some(&b'-');
        i += usize::from(neg);
        // Digits, accumulated as they are checked (exact up to 19 digits; used up to 15).
        let mut m = 0u64;
        let int = digits(b, &mut i, &mut m);
        if int == 0 || (int > 1 && b[i - int] == b'0') {
            return None; // no digit, or a leading zero
        }
        let mut frac = 0;
        if b.get(i) == Some(&b'.') {
            i += 1;
            frac = digits(b, &mut i, &mut m);
            if frac == 0 {
                return None;
            }
        }
        let exp = matches!(b.get(i), Some(b'e' | b'E'));
        if exp {
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if digits(b, &mut i, &mut 0) == 0 {
                return None;
            }
        }
        self.i = i;
        Some(Number {
            start,
            end: i,
            neg,
            m,
            int,
            frac,
            exp,
        })
    }

    /// A number in JSON's grammar, finite as an f64.
    #[inline(always)]
    fn number(&mut self) -> Option<f64> {
        let n = self.number_text()?;
        if !n.exp && n.int + n.frac <= 15 {
            // Clinger's fast path: at most 15 digits are an exact integer, a power of ten up to
            // 1e15 is exact, and one division of exact operands is correctly rounded.
            let v = n.m as f64 / POW10[n.frac];
            // As the serde path normalises: -0 is 0.
            return Some(if n.neg { -v } else { v } + 0.0);
        }
        let v: f64 = fast_float2::parse(&self.b[n.start..n.end]).ok()?;
        v.is_finite().then_some(v + 0.0)
    }

    /// A number in JSON's grammar, finite as an f64, checked but not converted: without an
    /// exponent and with at most 308 digits before the point it is below 1e308 (f64's largest
    /// is 1.79e308); any other is converted to be sure.
    #[inline(always)]
    fn number_checked(&mut self) -> Option<()> {
        let n = self.number_text()?;
        if !n.exp && n.int <= 308 {
            return Some(());
        }
        let v: f64 = fast_float2::parse(&self.b[n.start..n.end]).ok()?;
        v.is_finite().then_some(())
    }

    /// `[ item, ... ]`, each item read by `item`; how many.
    fn count(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<usize> {
        self.eat(b'[')?;
        if self.eat(b']').is_some() {
            return Some(0);
        }
        let mut n = 0;
        loop {
            item(self)?;
            n += 1;
            self.ws();
            match self.b.get(self.i)? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Some(n);
                }
                _ => return None,
            }
        }
    }

    /// `[ item, ... ]`, the items collected.
    fn array<T>(&mut self, mut item: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        // Rankings run to hundreds of names: fewer regrowths.
        let mut out = Vec::with_capacity(64);
        self.count(|p| item(p).map(|x| out.push(x)))?;
        Some(out)
    }
}

/// Skips the digits at `i`, adding them to `m` (wrapping past 19 digits); how many.
#[inline(always)]
fn digits(b: &[u8], i: &mut usize, m: &mut u64) -> usize {
    let s = *i;
    while let Some(&c) = b.get(*i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        *m = m.wrapping_mul(10).wrapping_add(u64::from(d));
        *i += 1;
    }
    *i - s
}

/// Exact powers of ten.
const POW10: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// The record's fields, or `None` when the line is not of the common shape. `read_scores`:
/// convert the scores (else they are checked and counted).
pub(crate) fn scan(line: &str, read_scores: bool) -> Option<Fields<'_>> {
    // A control character is whitespace between tokens or an error inside a string, a backslash
    // an escape or an error: either way serde's to read.
    if (line.bytes()).fold(false, |any, c| any | (c < 0x20) | (c == b'\\')) {
        return None;
    }
    let mut p = Scan {
        s: line,
        b: line.as_bytes(),
        i: 0,
    };
    let mut f = Fields {
        goal_id: None,
        retrieved_premises: None,
        ranked: None,
        scores: None,
    };
    p.eat(b'{')?;
    if p.eat(b'}').is_some() {
        return end(p, f);
    }
    loop {
        let key = p.string()?;
        p.eat(b':')?;
        match key {
            "goal_id" if f.goal_id.is_none() => f.goal_id = Some(p.string()?),
            "retrieved_premises" if f.retrieved_premises.is_none() => {
                f.retrieved_premises = Some(p.array(|p| p.string().map(Cow::Borrowed))?)
            }
            "ranked" if f.ranked.is_none() => {
                f.ranked = Some(p.array(|p| p.string().map(Cow::Borrowed))?)
            }
            "scores" if f.scores.is_none() => {
                f.scores = Some(if read_scores {
                    Scores::Values(p.array(Scan::number)?)
                } else {
                    Scores::Count(p.count(Scan::number_checked)?)
                })
            }
            _ => return None,
        }
        p.ws();
        match p.b.get(p.i)? {
            b',' => p.i += 1,
            b'}' => {
                p.i += 1;
                return end(p, f);
            }
            _ => return None,
        }
    }
}

/// Only whitespace may follow the object.
fn end<'a>(mut p: Scan<'a>, f: Fields<'a>) -> Option<Fields<'a>> {
    p.ws();
    (p.i == p.b.len()).then_some(f)
}
