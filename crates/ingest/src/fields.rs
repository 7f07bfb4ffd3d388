//! Byte-level field splitting and number parsing for whitespace-separated lines.

/// ASCII whitespace as C's `isspace` sees it (space, tab, CR, VT, FF); newlines never reach here.
#[inline(always)]
pub fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

/// Splits `line` into at most `N` whitespace-separated fields; returns how many were found
/// (`N + 1` means "more than N"). No allocation.
#[inline]
pub fn split_fields<'a, const N: usize>(line: &'a [u8], out: &mut [&'a [u8]; N]) -> usize {
    let mut i = 0;
    let len = line.len();
    let mut count = 0;
    loop {
        while i < len && is_space(line[i]) {
            i += 1;
        }
        if i == len {
            return count;
        }
        let start = i;
        while i < len && !is_space(line[i]) {
            i += 1;
        }
        if count == N {
            return N + 1;
        }
        out[count] = &line[start..i];
        count += 1;
    }
}

/// Parses a finite f64 (decimal or scientific). `None` for anything else, NaN and infinities
/// included.
#[inline]
pub fn parse_score(field: &[u8]) -> Option<f64> {
    // Fields are ASCII-checked by the caller's UTF-8 validation; parse as str.
    let s = std::str::from_utf8(field).ok()?;
    let v: f64 = s.parse().ok()?;
    if v.is_finite() {
        // -0.0 and 0.0 are the same score.
        Some(v + 0.0)
    } else {
        None
    }
}

/// Parses an integer grade (optionally signed). trec_eval reads grades with `atol`, which also
/// takes `1.5` as 1; lemma-eval refuses what is not a whole number rather than guess.
#[inline]
pub fn parse_grade(field: &[u8]) -> Option<i32> {
    let s = std::str::from_utf8(field).ok()?;
    s.parse::<i32>().ok().filter(|&g| g != i32::MIN)
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

#[cfg(test)]
mod tests {
    use super::*;

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
