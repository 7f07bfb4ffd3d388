//! Byte-level field splitting and number parsing for whitespace-separated lines.

/// ASCII whitespace as C's `isspace` sees it (space, tab, CR, VT, FF); newlines never reach here.
#[inline(always)]
pub fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

/// Whether `b` ends a field: whitespace or the newline.
#[inline(always)]
pub fn is_delim(b: u8) -> bool {
    is_space(b) || b == b'\n'
}

/// The first index at or after `i` holding a delimiter (or `data.len()`). Scans eight bytes at a
/// time: every delimiter is below 0x21, so a word with no byte below 0x21 is skipped whole (the
/// classic "has a byte less than n" bit trick; only its lowest flagged byte is exact, which is the
/// one used).
#[inline(always)]
pub fn next_delim(data: &[u8], mut i: usize) -> usize {
    while i + 8 <= data.len() {
        let w = u64::from_le_bytes(data[i..i + 8].try_into().expect("8 bytes"));
        let m = below_0x21(w);
        if m == 0 {
            i += 8;
            continue;
        }
        let j = i + (m.trailing_zeros() / 8) as usize;
        if is_delim(data[j]) {
            return j;
        }
        i = j + 1; // a control byte that is not whitespace: part of the field
    }
    while i < data.len() && !is_delim(data[i]) {
        i += 1;
    }
    i
}

/// Whether `name` holds a delimiter (whitespace or a newline). A name of up to 32 bytes is read
/// as up to four overlapping words, each tested for a byte below 0x21 with no branch (every
/// delimiter is one); only a name with such a byte is looked at byte by byte.
#[inline(always)]
pub fn holds_delim(name: &[u8]) -> bool {
    let w8 = |i: usize| u64::from_le_bytes(name[i..i + 8].try_into().expect("8 bytes"));
    let n = name.len();
    let maybe = match n {
        0..=7 => true,
        8..=16 => below_0x21(w8(0)) | below_0x21(w8(n - 8)) != 0,
        17..=32 => {
            below_0x21(w8(0)) | below_0x21(w8(8)) | below_0x21(w8(n - 16)) | below_0x21(w8(n - 8))
                != 0
        }
        _ => true,
    };
    maybe && name.iter().any(|&b| is_delim(b))
}

/// The bytes of `w` below 0x21 (every delimiter is one), flagged by their high bit: the classic
/// "has a byte less than n" trick. Nonzero exactly when some byte is; only the lowest flagged
/// byte is sure to be one (a borrow can flag the byte above it).
#[inline(always)]
fn below_0x21(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    w.wrapping_sub(ONES * 0x21) & !w & (ONES * 0x80)
}

/// Whether `line` begins with the field `field` (its bytes, then whitespace): the test that a
/// line repeats the goal of the line before, without splitting it.
#[inline(always)]
pub fn starts_with_field(line: &[u8], field: &[u8]) -> bool {
    line.len() > field.len()
        && same_bytes(&line[..field.len()], field)
        && is_space(line[field.len()])
}

/// Splits the line that starts at `start` in `data` (it ends at the next `\n` or at the end of
/// `data`) into at most `N` whitespace-separated fields. Returns the number of fields found
/// (`N + 1` meaning "more than N") and the index of the line's end (its `\n`, or `data.len()`).
/// One pass, no allocation.
#[inline]
pub fn split_line<'a, const N: usize>(
    data: &'a [u8],
    start: usize,
    out: &mut [&'a [u8]; N],
) -> (usize, usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(r) = simd::split_unaligned(data, start, out) {
        return r;
    }
    split_line_scalar(data, start, out)
}

/// [`split_line`], and whether the line is valid UTF-8 (checked only when it has a non-ASCII byte:
/// ASCII lines cost nothing more). A multi-byte character never contains `\n`, so checking line by
/// line is the same as checking the whole input.
#[inline(always)]
pub fn split_line_checked<'a, const N: usize>(
    data: &'a [u8],
    start: usize,
    out: &mut [&'a [u8]; N],
) -> ((usize, usize), Result<(), usize>) {
    #[cfg(target_arch = "x86_64")]
    if let Some(r) = simd::split_unaligned(data, start, out) {
        return (r, Ok(()));
    }
    split_checked_scalar(data, start, out)
}

/// The scalar path of [`split_line_checked`]: split, then check UTF-8 if the line is not ASCII.
#[inline]
fn split_checked_scalar<'a, const N: usize>(
    data: &'a [u8],
    start: usize,
    out: &mut [&'a [u8]; N],
) -> ((usize, usize), Result<(), usize>) {
    let r = split_line_scalar(data, start, out);
    let line = &data[start..r.1];
    let ok = if line.is_ascii() {
        Ok(())
    } else {
        std::str::from_utf8(line)
            .map(|_| ())
            .map_err(|e| e.valid_up_to())
    };
    (r, ok)
}

/// The portable path of [`split_line`] (also taken near the end of a buffer, for lines of 64
/// bytes or more that do not fit the masked window, and for lines with tabs, control bytes or
/// non-ASCII bytes).
#[inline]
fn split_line_scalar<'a, const N: usize>(
    data: &'a [u8],
    start: usize,
    out: &mut [&'a [u8]; N],
) -> (usize, usize) {
    let len = data.len();
    let mut i = start;
    let mut count = 0;
    loop {
        while i < len && is_space(data[i]) {
            i += 1;
        }
        if i >= len || data[i] == b'\n' {
            return (count, i);
        }
        let field_start = i;
        i = next_delim(data, i + 1);
        if count == N {
            let end = memchr::memchr(b'\n', &data[i..]).map_or(len, |e| i + e);
            return (N + 1, end);
        }
        out[count] = &data[field_start..i];
        count += 1;
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod simd {
    //! SSE2 (part of every x86_64 CPU): delimiter bitmasks for 64-byte blocks, then every field
    //! boundary of a line by bit arithmetic, without a branch per field.
    use core::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };

    /// Bit `k` of each mask is about byte `data[at + k]`, for 64 bytes: (a space or a newline,
    /// a newline, a byte the scalar path must judge: below 0x21 but neither space nor newline —
    /// tab, CR, control — or 0x80 and above, non-ASCII).
    #[inline(always)]
    pub fn masks(data: &[u8], at: usize) -> (u64, u64, u64) {
        let window = &data[at..at + 64];
        let (mut delim, mut newline, mut bad) = (0u64, 0u64, 0u64);
        // SAFETY: four unaligned 16-byte loads inside `window` (64 bytes, bounds-checked above);
        // SSE2 is part of x86_64.
        unsafe {
            let (lim, sp, nl) = (
                _mm_set1_epi8(0x21),
                _mm_set1_epi8(b' ' as i8),
                _mm_set1_epi8(b'\n' as i8),
            );
            for k in 0..4 {
                let v = _mm_loadu_si128(window.as_ptr().add(16 * k) as *const __m128i);
                // Signed compare: bytes 0x80..=0xff are negative, so "< 0x21" also flags them.
                let special = _mm_movemask_epi8(_mm_cmplt_epi8(v, lim)) as u16 as u64;
                let n = _mm_cmpeq_epi8(v, nl);
                let d = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, sp), n)) as u16 as u64;
                delim |= d << (16 * k);
                newline |= (_mm_movemask_epi8(n) as u16 as u64) << (16 * k);
                bad |= (special & !d) << (16 * k);
            }
        }
        (delim, newline, bad)
    }

    /// [`masks`] with two 32-byte compares instead of four 16-byte ones, for CPUs with AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn masks_avx2(data: &[u8], at: usize) -> (u64, u64, u64) {
        use core::arch::x86_64::{
            __m256i, _mm256_cmpeq_epi8, _mm256_cmpgt_epi8, _mm256_loadu_si256,
            _mm256_movemask_epi8, _mm256_set1_epi8,
        };
        let window = &data[at..at + 64];
        let (mut delim, mut newline, mut bad) = (0u64, 0u64, 0u64);
        for k in 0..2 {
            // SAFETY: two unaligned 32-byte loads inside `window` (64 bytes, bounds-checked).
            let v = unsafe { _mm256_loadu_si256(window.as_ptr().add(32 * k) as *const __m256i) };
            // Signed: bytes 0x80..=0xff are negative, so "0x21 > byte" also flags them.
            let special =
                _mm256_movemask_epi8(_mm256_cmpgt_epi8(_mm256_set1_epi8(0x21), v)) as u32 as u64;
            let n = _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\n' as i8))) as u32
                as u64;
            let sp = _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b' ' as i8))) as u32
                as u64;
            delim |= (sp | n) << (32 * k);
            newline |= n << (32 * k);
            bad |= (special & !(sp | n)) << (32 * k);
        }
        (delim, newline, bad)
    }

    /// Bit masks over 16 bytes: where `a` and `b` are equal, where `a` holds an ASCII digit, and
    /// where `a`'s byte is greater than `b`'s (as signed bytes: right for ASCII).
    #[inline(always)]
    pub fn compare16(a: &[u8; 16], b: &[u8; 16]) -> (u32, u32, u32) {
        use core::arch::x86_64::{_mm_cmpgt_epi8, _mm_min_epu8, _mm_sub_epi8};
        // SAFETY: unaligned 16-byte loads of two 16-byte arrays; SSE2 is part of x86_64.
        unsafe {
            let va = _mm_loadu_si128(a.as_ptr() as *const __m128i);
            let vb = _mm_loadu_si128(b.as_ptr() as *const __m128i);
            let eq = _mm_movemask_epi8(_mm_cmpeq_epi8(va, vb)) as u32;
            // A digit: `a - '0'` is at most 9 as an unsigned byte.
            let d = _mm_sub_epi8(va, _mm_set1_epi8(b'0' as i8));
            let digit = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d));
            let greater = _mm_movemask_epi8(_mm_cmpgt_epi8(va, vb)) as u32;
            (eq, digit as u32, greater)
        }
    }

    /// The common shape of a line, recognised from one 64-byte window at `start`: it ends within
    /// the window, its fields are separated by single spaces (no leading, trailing or repeated
    /// whitespace) and it has no tab, control or non-ASCII byte. Returns the bitmask of its spaces
    /// (bit `k` for `data[start + k]`) and its length (the newline's offset). `None`: any other
    /// line, for the general splitter.
    ///
    /// # Safety
    /// With `AVX2`, the CPU must have AVX2 (the choice is the caller's, made once, not per line).
    #[inline(always)]
    pub unsafe fn simple_line<const AVX2: bool>(data: &[u8], start: usize) -> Option<(u64, u32)> {
        if start + 64 > data.len() {
            return None;
        }
        let (d, n, b) = if AVX2 {
            // SAFETY: the caller's contract.
            unsafe { masks_avx2(data, start) }
        } else {
            masks(data, start)
        };
        if n == 0 {
            return None;
        }
        // The newline's bit (the line's first), the bytes before it, the spaces among them.
        let newline = n & n.wrapping_neg();
        let before = newline - 1;
        let spaces = d & before;
        // In one test: no bad byte, and no space that follows a space, starts the line (bit 0) or
        // ends it (just before the newline); nor an empty line (the newline at bit 0).
        let wrong = b & before | spaces & (spaces << 1 | 1 | newline >> 1) | newline & 1;
        if wrong != 0 {
            return None;
        }
        Some((spaces, n.trailing_zeros()))
    }

    /// [`super::split_line`] with masks computed for this line alone (a 64-byte window at
    /// `start`, and the next 64 bytes if the line is longer). `None`: the scalar path decides.
    #[inline(always)]
    pub fn split_unaligned<'a, const N: usize>(
        data: &'a [u8],
        start: usize,
        out: &mut [&'a [u8]; N],
    ) -> Option<(usize, usize)> {
        if start + 128 > data.len() {
            return None;
        }
        let (d, n, b) = masks(data, start);
        if n != 0 {
            return split64(data, start, d, n, b, out);
        }
        let (d2, n2, b2) = masks(data, start + 64);
        let join = |lo: u64, hi: u64| lo as u128 | (hi as u128) << 64;
        split128(data, start, join(d, d2), join(n, n2), join(b, b2), out)
    }

    /// Every field boundary of a line that ends inside the masks, by bit arithmetic. `None`: no
    /// newline in the masks, or a byte that the scalar path must judge.
    macro_rules! split_masked {
        ($name:ident, $int:ty) => {
            #[inline(always)]
            pub fn $name<'a, const N: usize>(
                data: &'a [u8],
                start: usize,
                delim: $int,
                newline: $int,
                bad: $int,
                out: &mut [&'a [u8]; N],
            ) -> Option<(usize, usize)> {
                if newline == 0 {
                    return None;
                }
                let e = newline.trailing_zeros();
                assert!(start + (e as usize) < data.len());
                let before: $int = (1 << e) - 1;
                if bad & before != 0 {
                    return None;
                }
                let delim = (delim & before) | (1 << e);
                let field = !delim & before;
                let mut starts = field & !(field << 1);
                let mut ends = delim & (field << 1);
                let count = starts.count_ones() as usize;
                for slot in out.iter_mut().take(count.min(N)) {
                    let (s, t) = (
                        starts.trailing_zeros() as usize,
                        ends.trailing_zeros() as usize,
                    );
                    // SAFETY: s < t <= e (the newline's bit), and the caller's masks cover
                    // bytes that exist: `start + e < data.len()`, checked once below the loop's
                    // entry by the assertion on `e`.
                    *slot = unsafe { data.get_unchecked(start + s..start + t) };
                    starts &= starts - 1;
                    ends &= ends - 1;
                }
                Some((if count > N { N + 1 } else { count }, start + e as usize))
            }
        };
    }

    split_masked!(split64, u64);
    split_masked!(split128, u128);
}

/// Splits `line` (no newline inside) into at most `N` whitespace-separated fields; returns how many
/// were found (`N + 1` means "more than N"). No allocation.
#[inline]
pub fn split_fields<'a, const N: usize>(line: &'a [u8], out: &mut [&'a [u8]; N]) -> usize {
    split_line(line, 0, out).0
}

/// How many fields a line of few fields may hold and still be counted in an error
/// ([`shown_count`]).
pub const FIELDS: usize = 16;

/// A count of fields from [`split_fields`] into `FIELDS` slots, as an error shows it.
pub fn shown_count(found: usize) -> String {
    if found > FIELDS {
        format!("more than {FIELDS}")
    } else {
        found.to_string()
    }
}

/// Parses a finite f64 (decimal or scientific). `None` for anything else, NaN and infinities
/// included.
#[inline(always)]
pub fn parse_score(field: &[u8]) -> Option<f64> {
    if let Some(v) = plain_decimal(field) {
        return Some(v);
    }
    // Eisel-Lemire on the bytes (correctly rounded, like strtod); no UTF-8 step.
    let v: f64 = fast_float2::parse(field).ok()?;
    if v.is_finite() {
        // -0.0 and 0.0 are the same score.
        Some(v + 0.0)
    } else {
        None
    }
}

/// The common score shape, `[-]digits[.digits]` with at most 19 digits whose value as an integer
/// `m` is below 2^53 and at most 22 of them after the point: `m / 10^k` in one IEEE division,
/// which is correctly rounded because both operands are exact (Clinger's fast path), so it equals
/// what strtod and fast-float return. `None`: any other shape, for the general parser.
#[inline(always)]
fn plain_decimal(field: &[u8]) -> Option<f64> {
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    let (negative, s) = match field.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, field),
    };
    let mut m = 0u64;
    let mut i = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        m = m.wrapping_mul(10).wrapping_add((s[i] - b'0') as u64);
        i += 1;
    }
    let whole = i;
    let mut frac = 0;
    if i < s.len() && s[i] == b'.' {
        i += 1;
        while i < s.len() && s[i].is_ascii_digit() {
            m = m.wrapping_mul(10).wrapping_add((s[i] - b'0') as u64);
            i += 1;
            frac += 1;
        }
    }
    // Whole field consumed, some digit, no overflow (19 digits fit a u64), exact operands.
    if i != s.len() || whole + frac == 0 || whole + frac > 19 || m > 1 << 53 || frac > 22 {
        return None;
    }
    let v = m as f64 / POW10[frac];
    // -0.0 and 0.0 are the same score.
    Some(if negative { -v } else { v } + 0.0)
}

/// A score's text, kept so that the next score of the same shape is ordered against it without
/// parsing either: the common case of a run whose scores are printed with a fixed format.
///
/// Two plain decimals `[-]digits[.digits]` of the same shape (same length, the sign and the point
/// at the same places) compare as their bytes do (reversed when negative). With at most 15 digits,
/// distinct decimals parse to distinct doubles in the same order (every decimal of 15 significant
/// digits survives the round trip through a double), and equal text is an equal double: so the
/// byte order is exactly the order, ties included, of the parsed scores. A score of any other
/// shape, exponent or length is parsed as usual.
#[derive(Clone, Copy, Debug)]
pub struct ScoreText {
    /// The text, in its first `len` bytes.
    bytes: [u8; 16],
    len: u32,
    /// Bit `k`: byte `k` is the sign or the point.
    other: u32,
    /// Bit `k`: byte `k` is a digit (every byte below `len` that is not in `other`).
    digits: u32,
    /// Bits `0..len`.
    in_len: u32,
    negative: bool,
}

impl ScoreText {
    /// `field` as a comparable text: a plain decimal `[-]digits[.digits]` (or `[-].digits`, or
    /// `digits.`) of at most 16 bytes and 15 digits. `None` for anything else.
    pub fn new(field: &[u8]) -> Option<ScoreText> {
        let len = field.len();
        if len == 0 || len > 16 {
            return None;
        }
        let (mut other, mut points, mut digits) = (0u32, 0, 0);
        for (i, &b) in field.iter().enumerate() {
            match b {
                b'0'..=b'9' => digits += 1,
                b'.' => {
                    points += 1;
                    other |= 1 << i;
                }
                b'-' if i == 0 => other |= 1,
                _ => return None,
            }
        }
        if digits == 0 || digits > 15 || points > 1 {
            return None;
        }
        let mut bytes = [0u8; 16];
        bytes[..len].copy_from_slice(field);
        let in_len = (1u32 << len) - 1;
        Some(ScoreText {
            bytes,
            len: len as u32,
            other,
            digits: in_len & !other,
            in_len,
            negative: field[0] == b'-',
        })
    }

    /// The value of the text (as [`parse_score`] gives it).
    pub fn value(&self) -> f64 {
        parse_score(&self.bytes[..self.len as usize]).expect("a plain decimal")
    }

    /// If the score text `data[at..at + len]` has this text's shape, how its value orders against
    /// this one's (`Less`: lower), and it becomes the kept text. `None`: another shape (or fewer
    /// than 16 readable bytes at `at`), nothing changed, the caller parses. About twenty
    /// instructions: two 16-byte loads, four vector compares (equal, digit, greater), bit
    /// arithmetic.
    #[inline(always)]
    pub fn advance(&mut self, data: &[u8], at: usize, len: usize) -> Option<std::cmp::Ordering> {
        #[cfg(target_arch = "x86_64")]
        {
            if len as u32 != self.len || at + 16 > data.len() {
                return None;
            }
            let window: &[u8; 16] = data[at..at + 16].try_into().expect("16 bytes");
            let (eq, digit, greater) = simd::compare16(window, &self.bytes);
            // The sign and point where this text has them, digits everywhere else.
            if eq & self.other != self.other || digit & self.digits != self.digits {
                return None;
            }
            // The first differing byte decides (its bit alone in `first`).
            let differ = !eq & self.in_len;
            let first = differ & differ.wrapping_neg();
            self.bytes = *window;
            Some(if first == 0 {
                std::cmp::Ordering::Equal
            } else if (greater & first != 0) != self.negative {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Less
            })
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (data, at, len);
            None
        }
    }
}

/// Parses an integer grade (optionally signed). trec_eval reads grades with `atol`, which also
/// takes `1.5` as 1; lemma-eval refuses what is not a whole number rather than guess.
#[inline]
pub fn parse_grade(field: &[u8]) -> Option<i32> {
    if let [d @ b'0'..=b'9'] = field {
        // The usual grade: one digit.
        return Some((d - b'0') as i32);
    }
    let s = std::str::from_utf8(field).ok()?;
    s.parse::<i32>().ok().filter(|&g| g != i32::MIN)
}

/// Asks for the cache line at `p` ahead of its use (a hint: no effect on results).
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults nor changes memory, whatever the address.
    #[allow(unused_unsafe)]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Byte equality tuned for short ids (goal ids, lemma names): no library call for up to 32 bytes.
#[inline(always)]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let w4 = |s: &[u8], i: usize| u32::from_le_bytes(s[i..i + 4].try_into().expect("4 bytes"));
    let w8 = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"));
    match n {
        0 => true,
        // The first, middle and last byte cover them all.
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        // Two overlapping words.
        4..=7 => w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4),
        8..=16 => w8(a, 0) == w8(b, 0) && w8(a, n - 8) == w8(b, n - 8),
        // Four overlapping words (most lemma names), XORed together: one branch.
        17..=32 => {
            (w8(a, 0) ^ w8(b, 0))
                | (w8(a, 8) ^ w8(b, 8))
                | (w8(a, n - 16) ^ w8(b, n - 16))
                | (w8(a, n - 8) ^ w8(b, n - 8))
                == 0
        }
        _ => a == b,
    }
}

/// Shows a field in an error message (lossy, shortened).
pub fn show(field: &[u8]) -> String {
    let s = String::from_utf8_lossy(field);
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s.into_owned()
    }
}

/// The goal key of a TREC line (its first field), or `None` for blank and comment lines.
#[inline]
pub fn first_field(line: &[u8]) -> Option<&[u8]> {
    let start = line.iter().position(|&b| !is_space(b))?;
    if line[start] == b'#' {
        return None;
    }
    let end = line[start..]
        .iter()
        .position(|&b| is_space(b))
        .map_or(line.len(), |e| start + e);
    Some(&line[start..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// `holds_delim` is "some byte is a delimiter", at every length around its word reads,
        /// with control bytes that are not delimiters (0x01, 0x1f) and bytes just above (0x21).
        #[test]
        fn holds_delim_is_some_byte_a_delimiter(
            name in proptest::collection::vec(
                proptest::prop_oneof![
                    12 => proptest::sample::select(b"aZ09._'!~\x21\x7f\xc3\xa9".to_vec()),
                    1 => proptest::sample::select(b" \t\r\n\x0b\x0c\x01\x1f".to_vec()),
                ],
                0..40,
            )
        ) {
            proptest::prop_assert_eq!(holds_delim(&name), name.iter().any(|&b| is_delim(b)));
        }
    }

    #[test]
    fn plain_decimals_parse_as_the_general_parser_does() {
        // Hand-picked edges: zeros, signs, no digit, long mantissas, 2^53 and beyond, many
        // fraction digits, and shapes left to the general parser.
        for f in [
            "0",
            "-0",
            "-0.0",
            "0.",
            ".5",
            "-.5",
            "1.",
            "998.7654",
            "-3.25",
            "9007199254740992",
            "9007199254740993",
            "0.1",
            "0.30000000000000004",
            "1234567890123456789",
            "12345678901234567890",
            "0.0000000000000000000001",
            "0.00000000000000000000001",
            "1e5",
            "+1.5",
            "1.5e-3",
            "inf",
            "nan",
            "-",
            ".",
            "",
            "1.2.3",
            "1-2",
            "0x10",
        ] {
            let general = fast_float2::parse::<f64, _>(f.as_bytes())
                .ok()
                .filter(|v| v.is_finite())
                .map(|v| v + 0.0);
            assert_eq!(
                parse_score(f.as_bytes()).map(f64::to_bits),
                general.map(f64::to_bits),
                "{f}"
            );
            if let Some(v) = plain_decimal(f.as_bytes()) {
                assert_eq!(Some(v.to_bits()), general.map(f64::to_bits), "{f}");
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn random_decimals_parse_as_std_does(
            neg in proptest::bool::ANY,
            whole in "[0-9]{0,12}",
            frac in proptest::option::of("[0-9]{0,12}"),
        ) {
            let f = format!("{}{whole}{}", if neg { "-" } else { "" }, frac.map_or(String::new(), |d| format!(".{d}")));
            let std = f.parse::<f64>().ok().map(|v| v + 0.0);
            proptest::prop_assert_eq!(parse_score(f.as_bytes()).map(f64::to_bits), std.map(f64::to_bits), "{}", f);
        }

        /// A score compared as text orders exactly as the parsed scores do (ties included), and
        /// every text of the kept one's shape is compared as text (the fast path is not dead).
        /// Pairs share a shape by construction, then one is perturbed: its sign replaced by a
        /// digit, its point moved, a byte dropped, an exponent.
        #[test]
        fn score_text_orders_as_parsed_scores(
            neg in proptest::array::uniform2(proptest::bool::ANY),
            whole in 0usize..10,
            point in proptest::bool::ANY,
            frac in 0usize..10,
            digits in proptest::array::uniform2(proptest::collection::vec(b'0'..=b'9', 20)),
            perturb in 0u8..6,
            offset in 0usize..20,
        ) {
            let text = |k: usize| {
                let mut t = Vec::new();
                if neg[k] {
                    t.push(b'-');
                }
                t.extend_from_slice(&digits[k][..whole]);
                if point {
                    t.push(b'.');
                    t.extend_from_slice(&digits[k][whole..whole + frac]);
                }
                t
            };
            let (a, mut b) = (text(0), text(1));
            match perturb {
                1 if neg[1] => b[0] = b'1',
                2 if point && whole > 0 => {
                    let p = b.iter().position(|&c| c == b'.').unwrap();
                    b.swap(p - 1, p);
                }
                3 if b.len() > 1 => {
                    b.pop();
                }
                4 => b.extend_from_slice(b"e1"),
                _ => {}
            }
            let Some(va) = parse_score(&a) else { return Ok(()) };
            let Some(mut kept) = ScoreText::new(&a) else {
                // Only texts of more than 16 bytes or 15 digits are refused.
                let n = whole + if point { frac } else { 0 };
                proptest::prop_assert!(n > 15 || n == 0 || a.len() > 16);
                return Ok(());
            };
            proptest::prop_assert_eq!(kept.value().to_bits(), va.to_bits());
            let mut data = vec![b'x'; offset];
            data.extend_from_slice(&b);
            data.extend_from_slice(&[b' '; 16]);
            let same_shape = b.len() == a.len()
                && a.iter().zip(&b).all(|(x, y)| x == y || (x.is_ascii_digit() && y.is_ascii_digit()));
            match kept.advance(&data, offset, b.len()) {
                Some(order) => {
                    let vb = parse_score(&b);
                    proptest::prop_assert!(vb.is_some(), "{:?}", String::from_utf8_lossy(&b));
                    proptest::prop_assert_eq!(Some(order), vb.unwrap().partial_cmp(&va));
                    proptest::prop_assert!(same_shape);
                    proptest::prop_assert_eq!(kept.value().to_bits(), vb.unwrap().to_bits());
                }
                None => proptest::prop_assert!(!same_shape),
            }
        }
    }

    #[test]
    fn splits_on_any_run_of_whitespace() {
        let mut f = [&b""[..]; 6];
        assert_eq!(split_fields(b"  q1 Q0\tlemma  3 0.5 tag\r", &mut f), 6);
        assert_eq!(f, [&b"q1"[..], b"Q0", b"lemma", b"3", b"0.5", b"tag"]);
        assert_eq!(split_fields(b"a b c d e f g", &mut f), 7);
        assert_eq!(split_fields(b"a b", &mut f), 2);
        assert_eq!(split_fields(b"   ", &mut f), 0);
    }

    #[test]
    fn split_line_finds_fields_and_the_line_end() {
        let data = b"q1 Q0 a_long_lemma_name_here 1 0.5 tag\n\tq2  Q0 b\x01c 2 0.25 t x y\nlast";
        let mut f = [&b""[..]; 6];
        assert_eq!(split_line(data, 0, &mut f), (6, 38));
        assert_eq!(f[2], b"a_long_lemma_name_here");
        assert_eq!(f[5], b"tag");
        let (n, end) = split_line(data, 39, &mut f);
        assert_eq!((n, &data[end..end + 1]), (7, &b"\n"[..]));
        assert_eq!(f[2], b"b\x01c"); // a control byte is not a separator
        assert_eq!(split_line(data, end + 1, &mut f), (1, data.len()));
        // The SIMD path (lines inside a 128-byte window) and the scalar path agree on every shape.
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            let mut buf = Vec::new();
            for _ in 0..(rng % 4 + 1) {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let len = (rng % 140) as usize;
                for k in 0..len {
                    let r = (rng >> (k % 50)) % 23;
                    buf.push(match r {
                        0..=3 => b' ',
                        4 => b'\t',
                        5 if k % 7 == 0 => b'\r',
                        6 if k % 11 == 0 => 0x01,
                        7 if k % 13 == 0 => 0xc3,
                        _ => b'a' + (r as u8),
                    });
                }
                buf.push(b'\n');
            }
            buf.extend_from_slice(&[b'x'; 130]);
            let mut pos = 0;
            while pos < buf.len() {
                let (mut f1, mut f2) = ([&b""[..]; 6], [&b""[..]; 6]);
                let a = split_line(&buf, pos, &mut f1);
                let b = split_line_scalar(&buf, pos, &mut f2);
                assert_eq!(a, b);
                assert_eq!(&f1[..a.0.min(6)], &f2[..b.0.min(6)]);
                pos = a.1 + 1;
            }
        }
        // Agrees with a plain split on whitespace for many shapes.
        for line in [
            "",
            " ",
            "a",
            "a b",
            "  a\t\tb  c ",
            "aaaaaaaaaaaaaaaaa b",
            "x\ry z\x0bw\x0cv",
        ] {
            let want: Vec<&[u8]> = line
                .as_bytes()
                .split(|b| is_space(*b))
                .filter(|f| !f.is_empty())
                .collect();
            let mut g = [&b""[..]; 8];
            let n = split_fields(line.as_bytes(), &mut g);
            assert_eq!(&g[..n], &want[..], "{line:?}");
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_masks_equal_sse2_masks() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        // Every byte value at every position of the window, and realistic lines.
        let mut data: Vec<u8> = (0..=255u8).cycle().take(64 * 9).collect();
        data.extend_from_slice(
            b"g1 Q0 Nat.add_comm 1 0.5 run\ng1\tQ0 x\r 2 0.25 run \n\xc3\xa9 x\n",
        );
        data.extend_from_slice(&[b' '; 64]);
        for at in 0..data.len() - 64 {
            // SAFETY: AVX2 is present (checked above).
            let avx2 = unsafe { simd::masks_avx2(&data, at) };
            assert_eq!(avx2, simd::masks(&data, at), "at {at}");
        }
    }

    #[test]
    fn same_bytes_agrees_with_eq() {
        let words: Vec<Vec<u8>> = (0..40)
            .map(|n| (0..n).map(|i| b'a' + (i * 7 % 26) as u8).collect())
            .collect();
        for a in &words {
            for b in &words {
                assert_eq!(same_bytes(a, b), a == b);
                // A difference at any one position is seen.
                for i in 0..b.len() {
                    let mut c = b.clone();
                    c[i] ^= 1;
                    assert_eq!(same_bytes(a, &c), *a == c, "{a:?} {c:?}");
                }
            }
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_score(b"0.5"), Some(0.5));
        assert_eq!(parse_score(b"-1e-3"), Some(-0.001));
        assert_eq!(parse_score(b"-0"), Some(0.0));
        assert!(parse_score(b"-0").unwrap().is_sign_positive());
        assert_eq!(parse_score(b"nan"), None);
        assert_eq!(parse_score(b"inf"), None);
        assert_eq!(parse_score(b"1.5x"), None);
        assert_eq!(parse_grade(b"2"), Some(2));
        assert_eq!(parse_grade(b"-1"), Some(-1));
        assert_eq!(parse_grade(b"1.5"), None);
    }
}
