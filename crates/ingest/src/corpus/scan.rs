//! A corpus line read without serde: the common case made fast, serde kept for the rest.
//!
//! [`file_line`] reads a line of `corpus.jsonl` that is a JSON object with a string `path`, maybe
//! `imports` (an array of strings) and `premises` (an array of objects, each with maybe
//! `full_name` (a string or `null`) and `code` (a string or `null`), and `end`, two integers of at
//! most 32 bits), each of these keys once; any other key's value is skipped, checked as JSON. It
//! gives what serde gives for such a line ([`FileLine`]), and `None` for any other line (a key
//! twice, a value of another type, a lone surrogate, nesting deeper than 64, a line that is not
//! JSON), which the caller then reads with serde_json: what serde refuses is refused with serde's
//! words, and what it reads it reads alike (a property test holds the two to it).
//!
//! The cost is in the `code` strings (most of a corpus's bytes): each is passed over once, sixteen
//! bytes at a time, for its quote, a backslash or a control byte, never copied or decoded; a name
//! with an escape is decoded as serde decodes it.

use super::{EmptyCode, FileLine, PremiseLine};
use std::borrow::Cow;

/// How deep skipped values may nest before serde is left to read the line.
const MAX_DEPTH: u32 = 64;

/// A cursor over a line (valid UTF-8: the caller's `&str`).
struct Cur<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
}

/// A string's content: where it lies, and whether it holds an escape.
struct Str {
    start: usize,
    end: usize,
    escaped: bool,
}

/// Where the first byte from `from` on that ends a string's plain run lies: a quote, a backslash
/// or a control byte (below 0x20). Sixteen bytes at a time by vector compares (SSE2, in every
/// x86-64), a byte at a time elsewhere and for the last few.
#[inline(always)]
fn special(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86-64; every load reads 16 bytes inside `b`.
        unsafe {
            let (quote, slash, low) = (
                _mm_set1_epi8(b'"' as i8),
                _mm_set1_epi8(b'\\' as i8),
                _mm_set1_epi8(0x1f),
            );
            while i + 16 <= b.len() {
                let x = _mm_loadu_si128(b.as_ptr().add(i).cast());
                // x <= 0x1f unsigned: max(x, 0x1f) == 0x1f.
                let hit = _mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, slash)),
                    _mm_cmpeq_epi8(_mm_max_epu8(x, low), low),
                );
                let m = _mm_movemask_epi8(hit) as u32;
                if m != 0 {
                    return Some(i + m.trailing_zeros() as usize);
                }
                i += 16;
            }
        }
    }
    (i..b.len()).find(|&k| matches!(b[k], b'"' | b'\\' | 0..=0x1f))
}

/// The value of four hex digits.
fn hex4(b: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(b.get(..4)?).ok()?;
    if !s.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(s, 16).ok()
}

/// The character a `\u` escape at `b` (the four digits, and a second escape for a surrogate
/// pair) stands for, as serde decodes it into a string (a lone surrogate refused), and the
/// bytes it takes.
fn unicode_escape(b: &[u8]) -> Option<(char, usize)> {
    let n = hex4(b)?;
    match n {
        0xDC00..=0xDFFF => None,
        0xD800..=0xDBFF => {
            if b.get(4..6)? != b"\\u" {
                return None;
            }
            let n2 = hex4(&b[6..])?;
            if !(0xDC00..=0xDFFF).contains(&n2) {
                return None;
            }
            let c = char::from_u32(((n - 0xD800) << 10 | (n2 - 0xDC00)) + 0x1_0000)?;
            Some((c, 10))
        }
        _ => Some((char::from_u32(n)?, 4)),
    }
}

impl<'a> Cur<'a> {
    #[inline(always)]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    #[inline(always)]
    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.b.get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    /// The byte after whitespace, not taken.
    #[inline(always)]
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    /// A string: no control byte in it, each escape one serde decodes into a string.
    #[inline]
    fn string(&mut self) -> Option<Str> {
        self.eat(b'"')?;
        let (b, start) = (self.b, self.i);
        let mut j = start;
        let mut escaped = false;
        loop {
            let k = special(b, j)?;
            match b[k] {
                b'"' => {
                    self.i = k + 1;
                    return Some(Str {
                        start,
                        end: k,
                        escaped,
                    });
                }
                b'\\' => {}
                _ => return None, // a control byte
            }
            escaped = true;
            j = k + 2;
            match *b.get(k + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                b'u' => j += unicode_escape(&b[k + 2..])?.1,
                _ => return None,
            }
        }
    }

    /// A string's text, its escapes decoded.
    fn text(&self, s: &Str) -> Cow<'a, str> {
        let raw = &self.s[s.start..s.end];
        if !s.escaped {
            return Cow::Borrowed(raw);
        }
        let b = raw.as_bytes();
        let mut out = String::with_capacity(raw.len());
        let mut i = 0;
        while i < b.len() {
            let Some(k) = memchr::memchr(b'\\', &b[i..]) else {
                out.push_str(&raw[i..]);
                break;
            };
            out.push_str(&raw[i..i + k]);
            i += k + 2;
            match b[i - 1] {
                b'b' => out.push('\x08'),
                b'f' => out.push('\x0c'),
                b'n' => out.push('\n'),
                b'r' => out.push('\r'),
                b't' => out.push('\t'),
                b'u' => {
                    // Checked by `string`.
                    let (c, n) = unicode_escape(&b[i..]).expect("a checked escape");
                    out.push(c);
                    i += n;
                }
                c => out.push(c as char), // `"`, `\` or `/`
            }
        }
        Cow::Owned(out)
    }

    /// A number in JSON's grammar (its text).
    fn number(&mut self) -> Option<&'a str> {
        self.ws();
        let (b, start) = (self.b, self.i);
        let mut i = start + usize::from(b.get(start) == Some(&b'-'));
        let digits = |i: &mut usize| {
            let s = *i;
            while b.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            *i - s
        };
        let int = digits(&mut i);
        if int == 0 || (int > 1 && b[i - int] == b'0') {
            return None;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            if digits(&mut i) == 0 {
                return None;
            }
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if digits(&mut i) == 0 {
                return None;
            }
        }
        self.i = i;
        Some(&self.s[start..i])
    }

    /// An integer of at most 32 bits, written plainly.
    fn u32(&mut self) -> Option<u32> {
        let t = self.number()?;
        if !t.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    }

    /// `[a, b]`, two such integers.
    fn pair(&mut self) -> Option<(u32, u32)> {
        self.eat(b'[')?;
        let a = self.u32()?;
        self.eat(b',')?;
        let b = self.u32()?;
        self.eat(b']')?;
        Some((a, b))
    }

    /// `[ item, ... ]`.
    fn array(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        if self.eat(b']').is_some() {
            return Some(());
        }
        loop {
            item(self)?;
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// `{ "key": value, ... }`, each value read by `member` given the key's raw text (a key
    /// with an escape is serde's to read).
    fn object(&mut self, mut member: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            let k = self.string()?;
            if k.escaped {
                return None;
            }
            self.eat(b':')?;
            member(self, &self.s[k.start..k.end])?;
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Any JSON value, skipped.
    fn skip(&mut self, depth: u32) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'[' if depth > 0 => self.array(|c| c.skip(depth - 1)),
            b'{' if depth > 0 => self.object(|c, _| c.skip(depth - 1)),
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'n' => self.literal("null"),
            b'-' | b'0'..=b'9' => self.number().map(drop),
            _ => None,
        }
    }

    fn literal(&mut self, word: &str) -> Option<()> {
        self.ws();
        let here = self.b.get(self.i..self.i + word.len())?;
        (here == word.as_bytes()).then(|| self.i += word.len())
    }

    /// `null` (taken), or not.
    fn null(&mut self) -> bool {
        self.peek() == Some(b'n') && self.literal("null").is_some()
    }

    /// A premise object.
    fn premise(&mut self) -> Option<PremiseLine<'a>> {
        let (mut name, mut code, mut end) = (None, None, None);
        self.object(|c, key| match key {
            "full_name" if name.is_none() => {
                name = Some(if c.null() {
                    None
                } else {
                    let s = c.string()?;
                    Some(c.text(&s))
                });
                Some(())
            }
            "code" if code.is_none() => {
                code = Some(EmptyCode(
                    c.null() || {
                        let s = c.string()?;
                        s.start == s.end
                    },
                ));
                Some(())
            }
            "end" if end.is_none() => {
                end = Some(c.pair()?);
                Some(())
            }
            "full_name" | "code" | "end" => None,
            _ => c.skip(MAX_DEPTH),
        })?;
        Some(PremiseLine {
            full_name: name.flatten(),
            code: code.unwrap_or_default(),
            end: end?,
        })
    }
}

/// Reads a corpus line of the common shape (see the [module documentation](self)); `None` for
/// any other, which serde then reads.
pub(super) fn file_line(line: &str) -> Option<FileLine<'_>> {
    let mut c = Cur {
        s: line,
        b: line.as_bytes(),
        i: 0,
    };
    let (mut path, mut imports, mut premises) = (None, None, None);
    c.object(|c, key| match key {
        "path" if path.is_none() => {
            let s = c.string()?;
            path = Some(c.text(&s));
            Some(())
        }
        "imports" if imports.is_none() => {
            let mut v = Vec::new();
            c.array(|c| {
                let s = c.string()?;
                v.push(c.text(&s));
                Some(())
            })?;
            imports = Some(v);
            Some(())
        }
        "premises" if premises.is_none() => {
            let mut v = Vec::new();
            c.array(|c| {
                v.push(c.premise()?);
                Some(())
            })?;
            premises = Some(v);
            Some(())
        }
        "path" | "imports" | "premises" => None,
        _ => c.skip(MAX_DEPTH),
    })?;
    c.ws();
    if c.i != c.b.len() {
        return None;
    }
    Some(FileLine {
        path: path?,
        imports: imports.unwrap_or_default(),
        premises: premises.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What a line gives, comparably: path, imports, and each premise's name, whether its code
    /// is empty, and its end.
    type Read = (String, Vec<String>, Vec<(Option<String>, bool, (u32, u32))>);

    fn read(f: FileLine<'_>) -> Read {
        (
            f.path.to_string(),
            f.imports.iter().map(|s| s.to_string()).collect(),
            (f.premises.iter())
                .map(|p| (p.full_name.as_ref().map(|s| s.to_string()), p.code.0, p.end))
                .collect(),
        )
    }

    fn by_serde(line: &str) -> Option<Read> {
        serde_json::from_str::<FileLine<'_>>(line).ok().map(read)
    }

    fn by_scan(line: &str) -> Option<Read> {
        file_line(line).map(read)
    }

    #[test]
    fn common_lines_read_as_serde_reads_them() {
        let lines = [
            r#"{"path": "A.lean", "imports": [], "premises": []}"#,
            r#"{"path": "B.lean", "imports": ["A.lean", "C.lean"], "premises": [{"full_name": "b1", "code": "theorem b1 : x := by\n  simp [h]\t-- \"q\" \\ \/", "start": [1, 1], "end": [2, 10], "kind": "commanddeclaration"}]}"#,
            r#"{"premises": [{"end": [3, 4], "full_name": null, "code": ""}, {"full_name": "[a, b]", "code": null, "end": [0, 0]}, {"full_name": "c", "end": [4294967295, 1]}], "path": "D.lean"}"#,
            r#"{"path": "E\u00e9.lean", "premises": [{"full_name": "Nat.\u00abterm_\u2223_\u00bb", "code": "\u2200 x, \ud835\udd5c", "end": [1, 2], "extra": {"a": [1, -2.5e-3, true, false, null, {"b": "\u0000"}]}}]}"#,
            "  {\"path\" : \"F.lean\" ,\"imports\" :[ \"A.lean\" ] , \"x\": -0, \"premises\":[ ]}  ",
            r#"{"path": "", "premises": [{"full_name": "user__.n1", "code": "x", "end": [1, 1]}]}"#,
        ];
        for line in lines {
            let want = by_serde(line).unwrap_or_else(|| panic!("serde refuses {line}"));
            assert_eq!(by_scan(line), Some(want), "{line}");
        }
        // Hand-read: escapes decoded in names, code only tested for emptiness.
        let (path, _, premises) = by_scan(lines[3]).unwrap();
        assert_eq!(path, "Eé.lean");
        assert_eq!(premises[0].0.as_deref(), Some("Nat.«term_∣_»"));
        assert!(!premises[0].1);
        let (_, _, p) = by_scan(lines[2]).unwrap();
        assert_eq!(p[0], (None, true, (3, 4)));
        assert_eq!(p[1], (Some("[a, b]".into()), true, (0, 0)));
        assert_eq!(p[2], (Some("c".into()), false, (u32::MAX, 1)));
    }

    #[test]
    fn what_serde_must_word_is_left_to_it() {
        for line in [
            r#"{"imports": []}"#,                                 // no path
            r#"{"path": "A", "path": "B"}"#,                      // a key twice
            r#"{"path": "A", "premises": [{"code": "x"}]}"#,      // no end
            r#"{"path": "A", "premises": [{"end": [1, 2, 3]}]}"#, // three numbers
            r#"{"path": "A", "premises": [{"end": [1.0, 2]}]}"#,  // not an integer
            r#"{"path": "A", "premises": [{"end": [4294967296, 2]}]}"#,
            r#"{"path": "A", "premises": [{"end": [1, 2], "code": 5}]}"#,
            r#"{"path": "A", "premises": [{"end": [1, 2], "full_name": "\udc00"}]}"#,
            r#"{"path": "A", "premises": [{"end": [1, 2], "code": "\ud800x"}]}"#,
            r#"{"path": "A", "kind": "\q"}"#, // a bad escape
            "{\"path\": \"A\tB\"}",           // a control byte
            r#"{"path": "A", "imports": null}"#,
            r#"{"path": "A"} x"#,
            r#"{"path": "A", "x": [1,]}"#,
            r#"{"path": "A", "x": 01}"#,
            r#"["A", [], []]"#,
            r#"{"p\u0061th": "A"}"#, // an escaped key
        ] {
            assert_eq!(by_scan(line), None, "{line}");
        }
    }

    /// Pieces of corpus lines, valid and not, put together at random.
    fn piece() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            r#""path": "A.lean""#,
            r#""path": "B\u00e9\n""#,
            r#""path": null"#,
            r#""imports": ["X", "Y\\"]"#,
            r#""imports": []"#,
            r#""imports": [1]"#,
            r#""premises": [{"full_name": "a", "code": "c\n", "end": [1, 2]}]"#,
            r#""premises": [{"full_name": null, "code": "", "start": [0, 0], "end": [3, 4], "kind": "k"}, {"end": [5, 6]}]"#,
            r#""premises": [{"full_name": "\ud83d\ude00", "code": null, "end": [7, 8]}]"#,
            r#""premises": [{"full_name": "a", "full_name": "b", "end": [1, 2]}]"#,
            r#""premises": [{"full_name": "a", "end": [1, -2]}]"#,
            r#""premises": [{"full_name": "a", "end": [1, 2e0]}]"#,
            r#""premises": [3]"#,
            r#""extra": {"n": [1.5, -0, 1E+9, "s\"", {"d": [[[]]]}]}"#,
            r#""extra": "\u12""#,
            r#""extra": tru"#,
            r#""extra": "\udc00""#,
        ])
        .prop_map(str::to_string)
    }

    proptest! {
        /// The vector search finds what a byte loop finds, wherever it starts and ends.
        #[test]
        fn special_finds_what_a_byte_loop_finds(
            b in prop::collection::vec(
                prop_oneof![Just(b'"'), Just(b'\\'), 0u8..0x20, 0x20u8..=0xff, 0x20u8..0x80], 0..90),
            from in 0usize..90,
        ) {
            let from = from.min(b.len());
            let want = (from..b.len()).find(|&k| b[k] == b'"' || b[k] == b'\\' || b[k] < 0x20);
            prop_assert_eq!(special(&b, from), want);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// Whatever the scan reads, serde reads the same.
        #[test]
        fn what_the_scan_reads_serde_reads_alike(
            parts in prop::collection::vec(piece(), 0..6),
            spaced in any::<bool>(),
        ) {
            let sep = if spaced { " ,\n " } else { "," };
            let line = format!("{{{}}}", parts.join(sep));
            let scanned = by_scan(&line);
            if scanned.is_some() {
                prop_assert_eq!(&scanned, &by_serde(&line), "{}", line);
            }
        }
    }
}
