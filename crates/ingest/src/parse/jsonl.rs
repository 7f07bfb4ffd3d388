//! A scanner for JSONL prediction records (and actual-set records, `scan_actual`) of the common
//! shape, beside serde_json: a prediction record is one object
//! with the keys `goal_id` (a string), `retrieved_premises` or `ranked` (an array of names:
//! strings, or objects with the key `full_name`, a string) and `scores` (an array of numbers,
//! as many as the names), each at most once, in any order, strings without escapes or spaces;
//! any other key (of the record or of a premise object) has its value skipped, as serde skips
//! it. It
//! reads a record into buffers reused from record to record: where each name is in the line
//! ([`Span`]), and the scores when asked for (otherwise each is checked: JSON's grammar, finite as
//! an f64; and counted). Nothing is allocated once the buffers have grown to a record's size.
//!
//! Anything else (a backslash or control character anywhere in the line, a space inside a key or
//! a name, `null` for a field it reads, a number outside JSON's grammar or f64's range, a
//! missing field, a field twice, both lists, a count of scores that differs, a skipped value
//! nested more than 16 deep) makes it give up,
//! and the caller parses the line with serde_json: the scanner never decides an error, so a bad
//! record gets serde's message, and a record it accepts is one serde reads to the same values
//! (property-tested in `run.rs`, and for actual sets in `truth.rs`). A name with a space is one the record's checks refuse; leaving
//! it to serde lets them word the error.

/// Where a string is in its record's line: bytes `start .. start + len`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    /// Where it starts.
    pub start: u32,
    /// Its length in bytes.
    pub len: u32,
}

impl Span {
    /// The string in `line` (the line it was read from).
    #[inline(always)]
    pub fn of<'l>(&self, line: &'l str) -> &'l str {
        &line[self.start as usize..self.start as usize + self.len as usize]
    }
}

/// A record of the common shape, as [`scan_prediction`] (or `scan_actual`) reads it: its goal
/// and names as places in the line, and a prediction's scores when asked for. Reused from record
/// to record.
#[derive(Clone, Debug, Default)]
pub struct RecordSpans {
    /// The goal id.
    pub goal: Span,
    /// The lemma names, in file order.
    pub names: Vec<Span>,
    /// The scores, parallel to `names`, when the record has them and they were asked for (else
    /// empty).
    pub scores: Vec<f64>,
    /// Whether the record has `scores`.
    pub scored: bool,
    /// The line's bytes as bitmaps (reused).
    marks: Marks,
}

/// A line's bytes as bitmaps, byte `i` at bit `i % 64` of word `i / 64`: where a string ends or
/// holds a space (a quote or a space), and the ASCII digits. Made 16 bytes at a time by vector
/// compares (SSE2, in every x86-64), so that the scanner finds a string's end, and a run of
/// digits's, by a bit search rather than a byte at a time.
#[derive(Clone, Debug, Default)]
struct Marks {
    stop: Vec<u64>,
    digit: Vec<u64>,
}

/// Sixteen bytes' marks: (quote or space, digit, control byte or backslash), one bit a byte.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn mark16(c: &[u8; 16]) -> (u64, u64, u64) {
    use std::arch::x86_64::*;
    // SAFETY: the load reads the 16 bytes of `c`; SSE2 is in x86-64's baseline, so every
    // intrinsic here is available.
    unsafe {
        let splat = |b: u8| _mm_set1_epi8(b as i8);
        let v = _mm_loadu_si128(c.as_ptr().cast());
        let stop = _mm_or_si128(
            _mm_cmpeq_epi8(v, splat(b'"')),
            _mm_cmpeq_epi8(v, splat(b' ')),
        );
        // Unsigned compares by the minimum: `v < 0x20` is `min(v, 0x1f) == v`; a digit is a
        // byte whose distance above `0` (wrapping) is at most 9.
        let control = _mm_cmpeq_epi8(_mm_min_epu8(v, splat(0x1f)), v);
        let bad = _mm_or_si128(control, _mm_cmpeq_epi8(v, splat(b'\\')));
        let d = _mm_sub_epi8(v, splat(b'0'));
        let digit = _mm_cmpeq_epi8(_mm_min_epu8(d, splat(9)), d);
        let bits = |m| u64::from(_mm_movemask_epi8(m) as u16);
        (bits(stop), bits(digit), bits(bad))
    }
}

/// [`mark16`] a byte at a time (targets without SSE2; with it, the tests' reference).
#[cfg_attr(
    all(target_arch = "x86_64", target_feature = "sse2", not(test)),
    allow(dead_code)
)]
#[inline(always)]
fn mark16_bytes(c: &[u8; 16]) -> (u64, u64, u64) {
    let (mut stop, mut digit, mut bad) = (0, 0, 0);
    for (k, &b) in c.iter().enumerate() {
        stop |= u64::from(b == b'"' || b == b' ') << k;
        digit |= u64::from(b.is_ascii_digit()) << k;
        bad |= u64::from(b < 0x20 || b == b'\\') << k;
    }
    (stop, digit, bad)
}

impl Marks {
    /// Marks `b`; `false` when it holds a control byte or a backslash.
    fn make(&mut self, b: &[u8]) -> bool {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        let mark = mark16;
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        let mark = mark16_bytes;
        let words = b.len().div_ceil(64);
        self.stop.clear();
        self.stop.resize(words, 0);
        self.digit.clear();
        self.digit.resize(words, 0);
        let word = |c: &[u8; 64]| {
            let (mut stop, mut digit, mut bad) = (0, 0, 0);
            for (k, c) in c.chunks_exact(16).enumerate() {
                let (s, d, x) = mark(c.try_into().expect("16 bytes"));
                stop |= s << (16 * k);
                digit |= d << (16 * k);
                bad |= x;
            }
            (stop, digit, bad)
        };
        let mut bad = 0;
        let mut whole = b.chunks_exact(64);
        let marks = self.stop.iter_mut().zip(self.digit.iter_mut());
        for (c, (stop, digit)) in (&mut whole).zip(marks) {
            let x;
            (*stop, *digit, x) = word(c.try_into().expect("64 bytes"));
            bad |= x;
        }
        if !whole.remainder().is_empty() {
            // The tail, padded with a byte that is no mark.
            let mut c = [b'a'; 64];
            c[..whole.remainder().len()].copy_from_slice(whole.remainder());
            let x;
            (self.stop[words - 1], self.digit[words - 1], x) = word(&c);
            bad |= x;
        }
        bad == 0
    }

    /// The first quote or space at or after `i`.
    #[inline(always)]
    fn next_stop(&self, i: usize) -> Option<usize> {
        let mut w = i / 64;
        let mut bits = self.stop.get(w)? & (!0 << (i % 64));
        while bits == 0 {
            w += 1;
            bits = *self.stop.get(w)?;
        }
        Some(w * 64 + bits.trailing_zeros() as usize)
    }

    /// How many digits start at `i`.
    #[inline(always)]
    fn digit_run(&self, i: usize) -> usize {
        let (mut w, shift) = (i / 64, i % 64);
        let Some(&d) = self.digit.get(w) else {
            return 0;
        };
        let mut n = (!(d >> shift)).trailing_zeros() as usize;
        if n < 64 - shift {
            return n;
        }
        while let Some(&d) = self.digit.get(w + 1) {
            w += 1;
            n += (!d).trailing_zeros() as usize;
            if d != !0 {
                break;
            }
        }
        n
    }
}

/// Reads a JSONL prediction record of the common shape (see the module documentation) into
/// `out`: `true` when it is one, valid (a goal, one list, as many scores as names, no whitespace
/// in a name), with its fields in `out`; `false` when it is not, and the caller reads the line
/// with [`crate::parse_prediction_general`] (serde alone), which also words any error (what `out` holds then is
/// unspecified). `read_scores`: convert the scores (else they are checked and counted, and
/// `out.scores` is left empty).
pub fn scan_prediction(line: &str, read_scores: bool, out: &mut RecordSpans) -> bool {
    scan(line, Kind::Prediction { read_scores }, out).is_some()
}

/// Reads a JSONL actual-set record of the common shape into `out` (its goal and names; no
/// scores): one object with the keys `goal_id` (a string) and `premises` or `all_pos_premises`
/// (an array of names: strings, or objects with the key `full_name`), each once, strings
/// without escapes or spaces, other keys skipped. `false` for any other line (a graded
/// `premises` map, both lists, ...), which the caller reads with serde_json, as it words every
/// error.
pub(crate) fn scan_actual(line: &str, out: &mut RecordSpans) -> bool {
    scan(line, Kind::Actual, out).is_some()
}

/// A goal record's place, as [`scan_place`] reads it: where its strings are in the line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PlaceSpans {
    pub(crate) goal: Span,
    pub(crate) file_path: Option<Span>,
    pub(crate) path: Option<Span>,
    pub(crate) theorem_pos: Option<(u32, u32)>,
    pub(crate) start: Option<(u32, u32)>,
}

/// Reads a goal record of the common shape for its place ([`crate::GoalPlaces`]): one object with
/// a string `goal_id`, and maybe `file_path` and `path` (strings) and `theorem_pos` and `start`
/// (`[line, column]`, two integers of at most 32 bits), each key once, strings without escapes or
/// spaces, other keys skipped (their values checked as serde checks what it ignores). `None` for
/// any other line (a `null`, a key twice, an escape, `1.0` as a line, ...), which the caller
/// reads with serde_json, as it words every error. The actual sets' records are read so a second
/// time for their places, their premise lists skipped by a bit search.
pub(crate) fn scan_place(line: &str, out: &mut RecordSpans) -> Option<PlaceSpans> {
    let mut p = Scan::over(line, &mut out.marks)?;
    fn once<T>(slot: &mut Option<T>, v: T) -> Option<()> {
        slot.is_none().then(|| *slot = Some(v))
    }
    let mut r = PlaceSpans::default();
    let mut goal = None;
    p.members(|p, key| match key {
        b"goal_id" => once(&mut goal, p.string()?),
        b"file_path" => once(&mut r.file_path, p.string()?),
        b"path" => once(&mut r.path, p.string()?),
        b"theorem_pos" => once(&mut r.theorem_pos, p.position()?),
        b"start" => once(&mut r.start, p.position()?),
        _ => p.value(MAX_DEPTH, false),
    })?;
    p.ws();
    r.goal = goal?;
    (p.i == p.b.len()).then_some(r)
}

impl Scan<'_> {
    /// `[line, column]`: two integers of at most 32 bits (no sign, point or exponent).
    fn position(&mut self) -> Option<(u32, u32)> {
        self.eat(b'[')?;
        let line = self.small_u32()?;
        self.eat(b',')?;
        let col = self.small_u32()?;
        self.eat(b']')?;
        Some((line, col))
    }

    /// An integer of at most 32 bits written plainly.
    fn small_u32(&mut self) -> Option<u32> {
        let n = self.number_text()?;
        if n.neg || n.frac > 0 || n.exp || n.int > 10 {
            return None;
        }
        u32::try_from(n.m).ok()
    }
}

/// Which records [`scan`] reads.
#[derive(Clone, Copy)]
enum Kind {
    /// Predictions (`retrieved_premises` or `ranked`, `scores`); `read_scores`: convert the
    /// scores (else they are checked and counted).
    Prediction { read_scores: bool },
    /// Actual sets (`premises` or `all_pos_premises`).
    Actual,
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
    b: &'a [u8],
    marks: &'a Marks,
    i: usize,
}

impl<'a> Scan<'a> {
    /// A scanner at the start of `line`, its marks made in `marks`; `None` for a line that is
    /// serde's to read whatever it holds: a control character (whitespace between tokens, or an
    /// error inside a string), a backslash (an escape, or an error), or 4 GiB and more (spans
    /// are 32-bit).
    #[inline(always)]
    fn over(line: &'a str, marks: &'a mut Marks) -> Option<Scan<'a>> {
        if u32::try_from(line.len()).is_err() || !marks.make(line.as_bytes()) {
            return None;
        }
        Some(Scan {
            b: line.as_bytes(),
            marks,
            i: 0,
        })
    }

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

    /// A string's place (control characters and backslashes were ruled out for the whole line by
    /// [`scan`]: it ends at the next quote). `None` for a string holding a space.
    #[inline(always)]
    fn string(&mut self) -> Option<Span> {
        self.ws();
        self.string_here()
    }

    /// [`Self::string`] with no whitespace before it.
    #[inline(always)]
    fn string_here(&mut self) -> Option<Span> {
        if self.b.get(self.i) != Some(&b'"') {
            return None;
        }
        let start = self.i + 1;
        let end = self.marks.next_stop(start)?;
        if self.b[end] != b'"' {
            return None;
        }
        self.i = end + 1;
        // The line is shorter than 4 GiB ([`scan`]).
        Some(Span {
            start: start as u32,
            len: (end - start) as u32,
        })
    }

    /// A premise's name: a string, or an object with the key `full_name` (LeanDojo's premises),
    /// its string; the object's other keys (`code`, `path`, ...) are skipped, as serde skips
    /// them. `full_name` twice or missing is serde's to word.
    #[inline(always)]
    fn name(&mut self) -> Option<Span> {
        self.ws();
        if self.b.get(self.i) != Some(&b'{') {
            return self.string_here();
        }
        // The common object, `{"full_name": ...}` alone, read straight through.
        let start = self.i;
        self.i += 1;
        if let Some(key) = self.string() {
            if self.key(key) == b"full_name" && self.eat(b':').is_some() {
                let name = self.string()?;
                if self.eat(b'}').is_some() {
                    return Some(name);
                }
            }
        }
        self.i = start;
        self.premise_object()
    }

    /// A premise object of any keys: its `full_name`.
    #[inline(never)]
    fn premise_object(&mut self) -> Option<Span> {
        let mut name = None;
        self.members(|p, key| match key {
            b"full_name" if name.is_none() => p.string().map(|n| name = Some(n)),
            b"full_name" => None,
            // serde reads a premise object's other values as numbers it converts: each finite.
            _ => p.value(MAX_DEPTH, true),
        })?;
        name
    }

    /// `{ "key": value, ... }`, each member's value read by `member` given its key (keys with
    /// spaces are serde's).
    fn members(&mut self, mut member: impl FnMut(&mut Self, &'a [u8]) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            let key = self.string()?;
            self.eat(b':')?;
            member(self, self.key(key))?;
            self.ws();
            match self.b.get(self.i)? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A key's bytes.
    #[inline(always)]
    fn key(&self, key: Span) -> &'a [u8] {
        &self.b[key.start as usize..key.start as usize + key.len as usize]
    }

    /// Skips a JSON value of a key the record does not read, checked as serde_json checks the
    /// values it ignores (their grammar; with `finite`, as inside a premise object, which serde
    /// buffers, each number finite as an f64, else its range is not looked at): a string (any
    /// bytes to the next quote: [`scan`] ruled out escapes and control characters), a number,
    /// `true`, `false`, `null`, or an array or object of such values nested at most `depth` deep
    /// (any deeper is serde's to read).
    #[inline(never)]
    fn value(&mut self, depth: u32, finite: bool) -> Option<()> {
        self.ws();
        match *self.b.get(self.i)? {
            b'"' => {
                let end = memchr::memchr(b'"', &self.b[self.i + 1..])?;
                self.i += end + 2;
                Some(())
            }
            b'[' if depth > 0 => self.count(|p| p.value(depth - 1, finite)).map(drop),
            b'{' if depth > 0 => self.members(|p, _| p.value(depth - 1, finite)),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' if finite => self.plain_or_checked(),
            b'-' | b'0'..=b'9' => self.number_text().map(drop),
            _ => None,
        }
    }

    /// `word` at the cursor.
    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let here = self.b.get(self.i..self.i + word.len())?;
        (here == word).then(|| self.i += word.len())
    }

    /// Skips the digits at `i`, adding them to `m` (wrapping past 19 digits); how many.
    #[inline(always)]
    fn digits(&self, i: &mut usize, m: &mut u64) -> usize {
        let s = *i;
        *i += self.marks.digit_run(s);
        for &c in &self.b[s..*i] {
            *m = m.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
        }
        *i - s
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
        let int = self.digits(&mut i, &mut m);
        if int == 0 || (int > 1 && b[i - int] == b'0') {
            return None; // no digit, or a leading zero
        }
        let mut frac = 0;
        if b.get(i) == Some(&b'.') {
            i += 1;
            frac = self.digits(&mut i, &mut m);
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
            if self.digits(&mut i, &mut 0) == 0 {
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

    /// `[ number, ... ]`, each checked as [`Self::number_checked`] checks it; how many.
    fn numbers_checked(&mut self) -> Option<usize> {
        self.ws();
        if self.b.get(self.i) == Some(&b'[') {
            if let Some((n, end)) = plain_numbers(self.b, self.i + 1, self.marks) {
                self.i = end + 1;
                return Some(n);
            }
        }
        self.count(Scan::plain_or_checked)
    }

    /// A number checked as [`Self::number_checked`] checks it: a plain one (`-?int(.frac)?`, at
    /// most 308 digits before the point) by two digit runs, any other by the general check.
    #[inline(always)]
    fn plain_or_checked(&mut self) -> Option<()> {
        self.ws();
        let (b, start) = (self.b, self.i);
        let mut i = start + usize::from(b.get(start) == Some(&b'-'));
        let int = self.marks.digit_run(i);
        // Some digits, no leading zero (a lone 0 is one).
        if int > 0 && int <= 308 && (int == 1 || b[i] != b'0') {
            i += int;
            if b.get(i) != Some(&b'.') {
                if !matches!(b.get(i), Some(b'e' | b'E')) {
                    self.i = i;
                    return Some(());
                }
            } else {
                let frac = self.marks.digit_run(i + 1);
                if frac > 0 && !matches!(b.get(i + 1 + frac), Some(b'e' | b'E')) {
                    self.i = i + 1 + frac;
                    return Some(());
                }
            }
        }
        self.i = start;
        self.number_checked()
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
            // Most items are followed at once by a comma.
            if self.b.get(self.i) == Some(&b',') {
                self.i += 1;
                continue;
            }
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

    /// `[ item, ... ]`, the items pushed onto `out` (cleared first).
    fn array<T>(
        &mut self,
        out: &mut Vec<T>,
        mut item: impl FnMut(&mut Self) -> Option<T>,
    ) -> Option<()> {
        out.clear();
        self.count(|p| item(p).map(|x| out.push(x))).map(drop)
    }
}

/// Sixteen bytes' number marks: (comma, point, minus, closing bracket, `0`, space), one bit a
/// byte.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn number_marks16(c: &[u8; 16]) -> [u64; 6] {
    use std::arch::x86_64::*;
    // SAFETY: the load reads the 16 bytes of `c`; SSE2 is in x86-64's baseline.
    unsafe {
        let v = _mm_loadu_si128(c.as_ptr().cast());
        let bits = |b: u8| {
            let eq = _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8));
            u64::from(_mm_movemask_epi8(eq) as u16)
        };
        [
            bits(b','),
            bits(b'.'),
            bits(b'-'),
            bits(b']'),
            bits(b'0'),
            bits(b' '),
        ]
    }
}

/// [`number_marks16`] a byte at a time (targets without SSE2; with it, the tests' reference).
#[cfg_attr(
    all(target_arch = "x86_64", target_feature = "sse2", not(test)),
    allow(dead_code)
)]
#[inline(always)]
fn number_marks16_bytes(c: &[u8; 16]) -> [u64; 6] {
    let mut m = [0u64; 6];
    for (k, &b) in c.iter().enumerate() {
        for (bits, want) in m.iter_mut().zip([b',', b'.', b'-', b']', b'0', b' ']) {
            *bits |= u64::from(b == want) << k;
        }
    }
    m
}

/// The items of a JSON array of plain numbers (`-?(0|[1-9][0-9]*)(.[0-9]+)?`, commas between,
/// each comma followed by at most one space, as Python's `json.dumps` writes them, and the first
/// number too) whose first byte (after its `[`) is `b[start]`, checked 64 bytes at a time by bit
/// arithmetic on the line's digit marks and the bytes' comma, point, minus, bracket, zero and
/// space marks rather than a number at a time: how many, and where its `]` is. `None`: an empty
/// array, or anything else (other whitespace, exponents, an invalid number), for the
/// number-at-a-time reader, which also words errors. Every number taken is one
/// [`Scan::plain_or_checked`] takes: no run of digits here fills a 64-byte word, so none has more
/// than 308 digits. Its words are marked as [`Marks::make`] marks the line's, apart: there the
/// control bytes are only ORed, not placed, which a shared helper would cost (4 instructions a
/// name more, counted by `scripts/bench-instructions`).
fn plain_numbers(b: &[u8], start: usize, marks: &Marks) -> Option<(usize, usize)> {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    let mark = number_marks16;
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    let mark = number_marks16_bytes;
    let mut w = start / 64;
    // The array's bytes of the first word, and where its first number starts (as after a comma).
    let mut from = !0u64 << (start % 64);
    let mut first = 1u64 << (start % 64);
    // The previous word's last byte: a comma, digit, minus, point, an integer's leading zero, a
    // space.
    let mut last = [false; 6];
    // The carry out of the addition that finds where each fraction's digits end.
    let mut carry = false;
    let mut commas = 0usize;
    loop {
        let at = w * 64;
        // The word's bytes; past the line's end, a byte that is no mark.
        let mut tail = [b'x'; 64];
        let c = match b.get(at..at + 64) {
            Some(c) => c,
            None => {
                let n = b.len().checked_sub(at)?;
                tail[..n].copy_from_slice(&b[at..]);
                &tail[..]
            }
        };
        let mut m = [0u64; 6];
        for (k, c) in c.chunks_exact(16).enumerate() {
            for (word, part) in m.iter_mut().zip(mark(c.try_into().expect("16 bytes"))) {
                *word |= part << (16 * k);
            }
        }
        let [comma, point, minus, close, zero, space] = m;
        // The array's bytes in this word: from its start up to its first `]`.
        let end = close & from & (close & from).wrapping_neg();
        let inside = if end == 0 { from } else { from & (end - 1) };
        let d = *marks.digit.get(w)? & inside;
        let (cm, pt, mn, sp) = (
            comma & inside,
            point & inside,
            minus & inside,
            space & inside,
        );
        // Bit k: byte k - 1 is one (bit 0: the previous word's last byte).
        let prev = |x: u64, carried: bool| x << 1 | u64::from(carried);
        let p_comma = prev(cm, last[0]) | first;
        let p_digit = prev(d, last[1]);
        let p_minus = prev(mn, last[2]);
        let p_point = prev(pt, last[3]);
        // Where a number starts: after a comma (or the start), or after the one space there.
        let starts = (p_comma & !sp) | prev(sp, last[5]);
        // An integer part's first digit: where a number starts, or after a minus.
        let int_zero = (starts | p_minus) & d & zero;
        let ok = d | cm | pt | mn | sp == inside
            // A space only after a comma; then a number: a minus only there, a digit after it.
            && sp & !p_comma == 0
            && starts & inside & !(d | mn) == 0
            && mn & !starts == 0
            && p_minus & inside & !d == 0
            // A point between digits, no digit after a leading zero. (A comma follows a digit:
            // nothing else may come before one.)
            && pt & !p_digit == 0
            && p_point & inside & !d == 0
            && prev(int_zero, last[4]) & d == 0
            // No run of digits fills the word.
            && d != !0;
        if !ok {
            return None;
        }
        // Each fraction's first digit added to the digits carries through its run to the byte
        // after it, which must not be another point.
        let (sum, c1) = d.overflowing_add(p_point & d);
        let (sum, c2) = sum.overflowing_add(u64::from(carry));
        if sum & !d & pt != 0 {
            return None;
        }
        carry = c1 || c2;
        commas += cm.count_ones() as usize;
        if end != 0 {
            let e = at + end.trailing_zeros() as usize;
            // Not empty, and the last number ends with a digit.
            let digit_before = p_digit & end != 0;
            return (e > start && digit_before).then_some((commas + 1, e));
        }
        last = [cm, d, mn, pt, int_zero, sp].map(|x| x >> 63 == 1);
        (from, first) = (!0, 0);
        w += 1;
    }
}

/// How deep the values of keys the scanner does not read may nest (arrays and objects within
/// one another); deeper ones are serde's to read.
const MAX_DEPTH: u32 = 16;

/// Exact powers of ten.
const POW10: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// Which of a record's keys were read.
#[derive(Default)]
struct Seen {
    goal: bool,
    list: bool,
    scores: bool,
    /// How many scores.
    n_scores: usize,
}

impl Seen {
    /// Marks a key read; `None` if it was already.
    fn first(read: &mut bool) -> Option<()> {
        (!std::mem::replace(read, true)).then_some(())
    }
}

/// Reads the record, of `kind`, into `out`; `None` when the line is not of the common shape or
/// the record is not valid (serde's to read and word).
fn scan(line: &str, kind: Kind, out: &mut RecordSpans) -> Option<()> {
    let (predictions, read_scores) = match kind {
        Kind::Prediction { read_scores } => (true, read_scores),
        Kind::Actual => (false, false),
    };
    let mut p = Scan::over(line, &mut out.marks)?;
    let mut seen = Seen::default();
    out.scores.clear();
    // A key read twice is serde's to word; so are both lists.
    p.members(|p, key| {
        match key {
            b"goal_id" => {
                Seen::first(&mut seen.goal)?;
                out.goal = p.string()?;
            }
            b"retrieved_premises" | b"ranked" if predictions => {
                Seen::first(&mut seen.list)?;
                p.array(&mut out.names, Scan::name)?;
            }
            b"premises" | b"all_pos_premises" if !predictions => {
                Seen::first(&mut seen.list)?;
                p.array(&mut out.names, Scan::name)?;
            }
            b"scores" if predictions => {
                Seen::first(&mut seen.scores)?;
                seen.n_scores = if read_scores {
                    p.array(&mut out.scores, Scan::number)?;
                    out.scores.len()
                } else {
                    p.numbers_checked()?
                };
            }
            // Any other key: its value skipped, as serde skips it.
            _ => p.value(MAX_DEPTH, false)?,
        }
        Some(())
    })?;
    // Only whitespace may follow the object.
    p.ws();
    let valid = seen.goal && seen.list && (!seen.scores || seen.n_scores == out.names.len());
    out.scored = seen.scores;
    (p.i == p.b.len() && valid).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A plain number's text: an optional minus, an integer part (a lone 0 or no leading zero),
    /// an optional fraction.
    fn plain_number() -> impl Strategy<Value = String> {
        (
            any::<bool>(),
            0u64..2_000_000_000,
            proptest::option::of("[0-9]{1,9}"),
        )
            .prop_map(|(minus, int, frac)| {
                let sign = if minus { "-" } else { "" };
                match frac {
                    Some(f) => format!("{sign}{int}.{f}"),
                    None => format!("{sign}{int}"),
                }
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// The bitmap check of a plain number array takes only what the number-at-a-time reader
        /// takes, with the same count and end, wherever the array lies about the 64-byte words;
        /// and it takes every array of plain numbers of less than 64 digits each.
        #[test]
        fn plain_number_arrays_read_as_one_number_at_a_time(
            prefix in 0usize..140,
            numbers in prop::collection::vec(plain_number(), 1..40),
            junk in prop::collection::vec((0usize..40, "[-0-9.,e \t]{0,4}"), 0..3),
            cut in prop::option::of(0usize..400),
            spaced in any::<bool>(),
        ) {
            let clean = numbers.join(if spaced { ", " } else { "," });
            let mut body = clean.clone();
            for (at, j) in &junk {
                let at = (*at * 7).min(body.len());
                body.insert_str(at, j);
            }
            let mut line = format!("{{\"{}\":[{body}]}}", "k".repeat(prefix));
            if let Some(c) = cut {
                line.truncate(c.min(line.len()));
            }
            let b = line.as_bytes();
            let mut marks = Marks::default();
            marks.make(b);
            let open = prefix + 4;
            prop_assume!(b.len() > open && b[open] == b'[');
            let fast = plain_numbers(b, open + 1, &marks);
            let mut p = Scan { b, marks: &marks, i: open };
            let slow = p.count(Scan::plain_or_checked).map(|n| (n, p.i - 1));
            if let Some(f) = fast {
                prop_assert_eq!(Some(f), slow, "{}", line);
            }
            if junk.is_empty() && cut.is_none() {
                prop_assert!(fast.is_some(), "{}", line);
            }
        }
    }

    #[test]
    fn number_marks_by_vector_equal_number_marks_by_byte() {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        let vector = number_marks16;
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        let vector = number_marks16_bytes;
        let alphabet = b",.-]0123456789e [\t\x80\xff";
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            let mut c = [0u8; 16];
            for b in &mut c {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = alphabet[(x % alphabet.len() as u64) as usize];
            }
            assert_eq!(vector(&c), number_marks16_bytes(&c), "{c:?}");
        }
        let marks = number_marks16_bytes(b",.-]0,.-]00000 0");
        assert_eq!(
            marks,
            [
                0b10_0001,
                0b100_0010,
                0b1000_0100,
                0b1_0000_1000,
                0xbe10,
                0x4000
            ]
        );
    }

    #[test]
    fn plain_number_arrays_refuse_what_the_grammar_refuses() {
        let check = |body: &str| {
            let line = format!("[{body}]");
            let mut marks = Marks::default();
            marks.make(line.as_bytes());
            plain_numbers(line.as_bytes(), 1, &marks).map(|r| r.0)
        };
        assert_eq!(check("1,-2.5,0,0.25,-0,10"), Some(6));
        assert_eq!(check(" 1, -2.5, 0,0.25"), Some(4));
        for bad in [
            "", "01", "-01", "1.", ".5", "1..5", "1.5.2", "-", "1,-", "1,,2", ",1", "1,", "--1",
            "1-2", "1e5", "1.-5", "0-1", "1 ,2", "1,  2", "1,\t2", "1 ", "1, ", " ", "1,\n2",
            "1, , 2", "1 2", "- 1", "1. 5", ", 1", "1, 01",
        ] {
            assert_eq!(check(bad), None, "{bad}");
        }
        // A leading zero, a minus, a point and a space at every place about a word's end.
        for k in 1..=62 {
            let first = "7".repeat(k);
            for (bad, good) in [
                (",01", ",0,1"),
                (",-01", ",-0.1"),
                (",-,1", ",-1,1"),
                (",1..5", ",1.5,5"),
                (",  1", ", 1"),
                (", ,1", ", 1,1"),
                (",1.5.5", ",1.5,5"),
            ] {
                assert_eq!(check(&format!("{first}{bad}")), None, "{first}{bad}");
                assert_eq!(
                    check(&format!("{first}{good}")).unwrap(),
                    good.matches(',').count() + 1
                );
            }
        }
        // A run of digits that fills a word goes to the number-at-a-time reader.
        assert_eq!(check(&"7".repeat(63)), Some(1));
        assert_eq!(check(&"7".repeat(200)), None);
    }

    proptest! {
        /// The marks say what a byte-at-a-time look says, wherever the bytes are (any byte
        /// value, lines of every length about a word's): the next stop, the digit runs, whether
        /// a control byte or backslash is there; and the vector marks equal the byte marks.
        #[test]
        fn marks_agree_with_bytes(
            b in prop::collection::vec(prop_oneof![
                4 => b'0'..=b'9',
                1 => Just(b'"'),
                1 => Just(b' '),
                1 => Just(b'\\'),
                1 => b'/'..=b':',
                8 => 0x20u8..0x7f,
                1 => any::<u8>(),
            ], 0..200),
            at in 0usize..200,
        ) {
            let mut m = Marks::default();
            let clean = m.make(&b);
            prop_assert_eq!(clean, !b.iter().any(|&c| c < 0x20 || c == b'\\'));
            for i in [at.min(b.len()), at.min(b.len()).saturating_sub(64)] {
                let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
                prop_assert_eq!(m.digit_run(i), digits);
                let stop = b[i..].iter().position(|&c| c == b'"' || c == b' ').map(|p| i + p);
                prop_assert_eq!(m.next_stop(i), stop);
            }
            for c in b.chunks_exact(16) {
                let c: &[u8; 16] = c.try_into().unwrap();
                #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
                prop_assert_eq!(mark16(c), mark16_bytes(c));
            }
        }
    }

    /// The names and goal an actual-set line's spans point at.
    fn actual(line: &str) -> Option<(&str, Vec<&str>)> {
        let mut out = RecordSpans::default();
        scan_actual(line, &mut out).then(|| {
            let names = out.names.iter().map(|s| s.of(line)).collect();
            (out.goal.of(line), names)
        })
    }

    #[test]
    fn actual_sets_of_the_common_shape_and_nothing_else() {
        // Taken: either list key, either order, names as strings or full_name objects, spaces
        // between tokens, an empty list.
        assert_eq!(
            actual(r#"{"goal_id":"g1","premises":["a.b","c",{"full_name":"d"}]}"#),
            Some(("g1", vec!["a.b", "c", "d"]))
        );
        assert_eq!(
            actual(r#" { "all_pos_premises" : [ "x" , "y" ] , "goal_id" : "g 2" } "#),
            None,
            "a space inside the goal id is serde's"
        );
        assert_eq!(
            actual(r#" { "all_pos_premises" : [ "x" , "y" ] , "goal_id" : "g2" } "#),
            Some(("g2", vec!["x", "y"]))
        );
        assert_eq!(
            actual(r#"{"goal_id":"g3","premises":[]}"#),
            Some(("g3", vec![]))
        );
        // Other keys, of the record or of a premise object, skipped whatever their values
        // (a prediction's keys among them: serde's actual-set record does not read them).
        assert_eq!(
            actual(
                r#"{"url":"u v","goal_id":"g4","n":-1.5e3,"ok":true,"x":null,"premises":[{"path":"p","full_name":"a","start":[1,2],"code":{"k":[{}, [], "}"]}}],"ranked":["z"],"scores":[1e999]}"#
            ),
            Some(("g4", vec!["a"]))
        );
        // Refused, for serde to read or word: both lists, a graded map, null, a key twice, a
        // prediction's list alone, an object name with full_name twice or none, an escape, a
        // bad or too deep skipped value, no list, no goal, a number for a goal, trailing text,
        // a truncated line.
        for line in [
            r#"{"goal_id":"g","premises":["a"],"all_pos_premises":["b"]}"#,
            r#"{"goal_id":"g","premises":{"a":2,"b":1}}"#,
            r#"{"goal_id":"g","premises":null}"#,
            r#"{"goal_id":null,"premises":["a"]}"#,
            r#"{"goal_id":"g","goal_id":"h","premises":["a"]}"#,
            r#"{"goal_id":"g","premises":["a"],"premises":["b"]}"#,
            r#"{"goal_id":"g","ranked":["a"]}"#,
            r#"{"goal_id":"g","retrieved_premises":["a"]}"#,
            r#"{"goal_id":"g","premises":[{"full_name":"a","full_name":"b"}]}"#,
            r#"{"goal_id":"g","premises":[{"path":"p"}]}"#,
            r#"{"goal_id":"g","premises":["a\u0041"]}"#,
            // A skipped value that is not JSON, or nested too deep for the scanner.
            r#"{"goal_id":"g","premises":["a"],"x":tru}"#,
            r#"{"goal_id":"g","premises":["a"],"x":01}"#,
            r#"{"goal_id":"g","premises":["a"],"x":[1,]}"#,
            r#"{"goal_id":"g","premises":["a"],"x":{"k" 1}}"#,
            r#"{"goal_id":"g","premises":["a"],"x":{1:1}}"#,
            r#"{"goal_id":"g","premises":["a"],"x":"open}"#,
            r#"{"goal_id":"g","premises":["a"],"x":[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]}"#,
            r#"{"goal_id":"g"}"#,
            r#"{"premises":["a"]}"#,
            r#"{"goal_id":7,"premises":["a"]}"#,
            r#"{"goal_id":"g","premises":["a"]} x"#,
            r#"{"goal_id":"g","premises":["a"]"#,
            r#"{"goal_id":"g","premises":["a",]}"#,
        ] {
            assert_eq!(actual(line), None, "{line}");
        }
        // And a prediction record's scanner refuses an actual set's list.
        let mut out = RecordSpans::default();
        assert!(!scan_prediction(
            r#"{"goal_id":"g","premises":["a"]}"#,
            false,
            &mut out
        ));
        assert!(scan_prediction(
            r#"{"goal_id":"g","ranked":["a"]}"#,
            false,
            &mut out
        ));
    }

    #[test]
    fn digit_runs_end_at_every_neighbour_of_the_digits() {
        // The bytes either side of '0'..='9', and their high-bit twins; runs across words.
        for stop in [
            b'/',
            b':',
            b'/' | 0x80,
            b'0' | 0x80,
            b'9' | 0x80,
            b':' | 0x80,
            0xff,
        ] {
            for at in [0, 1, 7, 15, 16, 63, 64, 65, 127, 128, 150] {
                let mut b = vec![b'7'; 160];
                b[at] = stop;
                let mut m = Marks::default();
                m.make(&b);
                assert_eq!(m.digit_run(0), at, "{stop:#x} at {at}");
                assert_eq!(m.digit_run(at + 1), 159 - at, "{stop:#x} at {at}");
            }
        }
        let mut m = Marks::default();
        m.make(&[b'5'; 128]);
        assert_eq!(m.digit_run(0), 128);
        assert_eq!(m.digit_run(128), 0);
        assert_eq!(m.next_stop(0), None);
    }
}
