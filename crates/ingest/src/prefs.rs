//! trec_eval's preference files: `-R prefs` lines `goal group subgroup lemma level`, and
//! `-R qrels_prefs`, qrels `goal iter lemma grade` read as preferences (the `iter` field the
//! group, every line in subgroup `0`). Fields are separated by blanks; a level is a finite number
//! (trec_eval's `atof` would read `2x` as 2 and `x` as 0: lemma-eval refuses both). The measures
//! of such files are `lemma_accum::prefs`'; this module only reads lines.

use crate::fields::{parse_score, show, split_line_checked};

/// Which preference format.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PrefsFormat {
    /// `-R prefs`: `goal group subgroup lemma level`.
    Prefs,
    /// `-R qrels_prefs`: `goal group lemma level` (qrels), subgroup `0`.
    QrelsPrefs,
}

impl PrefsFormat {
    /// trec_eval's name (`-R`).
    pub fn name(self) -> &'static str {
        match self {
            PrefsFormat::Prefs => "prefs",
            PrefsFormat::QrelsPrefs => "qrels_prefs",
        }
    }
}

/// One judgment line of a preference file.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct PrefLine<'a> {
    /// The goal.
    pub goal: &'a [u8],
    /// The judgment group.
    pub group: &'a [u8],
    /// The subgroup (`0` under `-R qrels_prefs`).
    pub subgroup: &'a [u8],
    /// The lemma.
    pub lemma: &'a [u8],
    /// The level (finite; -0 read as 0).
    pub level: f64,
}

/// Parses one line of a preference file; `Ok(None)` for blank and `#` comment lines. The error
/// says what was expected.
pub fn parse_prefs_line(line: &[u8], format: PrefsFormat) -> Result<Option<PrefLine<'_>>, String> {
    let mut f = [&b""[..]; 5];
    let ((count, _), utf8) = split_line_checked(line, 0, &mut f);
    if let Err(col) = utf8 {
        return Err(format!("invalid UTF-8 at column {}", col + 1));
    }
    if count == 0 || f[0].first() == Some(&b'#') {
        return Ok(None);
    }
    let (want, fields) = match format {
        PrefsFormat::Prefs => (5, "goal group subgroup lemma level"),
        PrefsFormat::QrelsPrefs => (4, "goal iter lemma level"),
    };
    if count != want {
        let found = match count > want {
            true => "more".to_string(),
            false => count.to_string(),
        };
        return Err(format!("expected {want} fields ({fields}), found {found}"));
    }
    let level = f[want - 1];
    let level = parse_score(level).ok_or_else(|| {
        format!(
            "expected a finite number as the level (field {want}), found `{}`",
            show(level)
        )
    })?;
    Ok(Some(match format {
        PrefsFormat::Prefs => PrefLine {
            goal: f[0],
            group: f[1],
            subgroup: f[2],
            lemma: f[3],
            level,
        },
        PrefsFormat::QrelsPrefs => PrefLine {
            goal: f[0],
            group: f[1],
            subgroup: b"0",
            lemma: f[2],
            level,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats() {
        let p = parse_prefs_line(b" q1\tu  s1 doc-7 2.5 ", PrefsFormat::Prefs)
            .unwrap()
            .unwrap();
        assert_eq!(
            (p.goal, p.group, p.subgroup, p.lemma, p.level),
            (&b"q1"[..], &b"u"[..], &b"s1"[..], &b"doc-7"[..], 2.5)
        );
        let q = parse_prefs_line(b"q1 0 doc 1", PrefsFormat::QrelsPrefs)
            .unwrap()
            .unwrap();
        assert_eq!(
            (q.group, q.subgroup, q.lemma, q.level),
            (&b"0"[..], &b"0"[..], &b"doc"[..], 1.0)
        );
        assert_eq!(parse_prefs_line(b"  ", PrefsFormat::Prefs), Ok(None));
        assert_eq!(
            parse_prefs_line(b"# a b c d e", PrefsFormat::Prefs),
            Ok(None)
        );
        assert_eq!(
            parse_prefs_line(b"q 0 0 d -0", PrefsFormat::Prefs)
                .unwrap()
                .unwrap()
                .level
                .to_bits(),
            0
        );
    }

    #[test]
    fn errors_say_what_was_expected() {
        let e = |l: &[u8], f| parse_prefs_line(l, f).unwrap_err();
        assert_eq!(
            e(b"q1 u doc 1", PrefsFormat::Prefs),
            "expected 5 fields (goal group subgroup lemma level), found 4"
        );
        assert_eq!(
            e(b"q1 u s doc 1 x", PrefsFormat::Prefs),
            "expected 5 fields (goal group subgroup lemma level), found more"
        );
        assert_eq!(
            e(b"q1 u s doc 1", PrefsFormat::QrelsPrefs),
            "expected 4 fields (goal iter lemma level), found more"
        );
        assert_eq!(
            e(b"q1 u s doc high", PrefsFormat::Prefs),
            "expected a finite number as the level (field 5), found `high`"
        );
        assert!(e(b"q1 u s doc nan", PrefsFormat::Prefs).contains("finite number"));
        assert!(e(b"q1 u s d\xff 1", PrefsFormat::Prefs).contains("UTF-8"));
    }
}
