//! trec_eval's z-score file (`-Z FILE`): per goal and measure name, the mean and standard
//! deviation of a reference set of runs. One line each, `goal measure mean stddev`, fields
//! separated by blanks; the names are opaque here (the engine matches them with trec_eval's
//! printed names).

use crate::fields::{shown_count, split_fields, FIELDS};
use crate::{ErrorKind, InputError};
use std::collections::BTreeMap;
use std::path::Path;

/// One goal's entries: measure name to `(mean, stddev)`.
pub type GoalZScores = BTreeMap<String, (f64, f64)>;

/// A z-score file, read whole (as trec_eval reads it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ZScores {
    goals: BTreeMap<Vec<u8>, GoalZScores>,
}

impl ZScores {
    /// Reads `path`. Every line has four fields, the last two numbers; a goal and measure given
    /// twice, a blank line or an empty file is an error naming the file and line.
    pub fn read(path: &Path) -> Result<ZScores, InputError> {
        let bytes = std::fs::read(path).map_err(|e| InputError::read(path, e))?;
        ZScores::parse(path, &bytes)
    }

    /// [`ZScores::read`] of bytes already read (`path` names them in errors).
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<ZScores, InputError> {
        if bytes.is_empty() {
            return Err(InputError::file(
                ErrorKind::Empty,
                path,
                "empty z-score file: expected lines `goal measure mean stddev`",
            ));
        }
        let mut goals: BTreeMap<Vec<u8>, GoalZScores> = BTreeMap::new();
        let mut lines_of: BTreeMap<(Vec<u8>, String), u64> = BTreeMap::new();
        let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        for (n, at, line) in crate::parse::lines::numbered_lines(body) {
            let bad = |what: String| InputError::at(ErrorKind::Syntax, path, n, at, what);
            let mut buf = [&line[..0]; FIELDS];
            let found = split_fields(line, &mut buf);
            let fields = &buf[..found.min(FIELDS)];
            if found != 4 {
                return Err(bad(format!(
                    "expected 4 fields `goal measure mean stddev`, found {}",
                    shown_count(found)
                )));
            }
            let number = |f: &[u8], what: &str| {
                std::str::from_utf8(f)
                    .ok()
                    .and_then(|s| s.parse::<f64>().ok())
                    .ok_or_else(|| {
                        bad(format!(
                            "the {what} (field {}) is not a number: `{}`",
                            if what == "mean" { 3 } else { 4 },
                            String::from_utf8_lossy(f)
                        ))
                    })
            };
            let mean = number(fields[2], "mean")?;
            let stddev = number(fields[3], "stddev")?;
            let measure = String::from_utf8_lossy(fields[1]).into_owned();
            let goal = fields[0].to_vec();
            if let Some(first) = lines_of.insert((goal.clone(), measure.clone()), n) {
                let mut e = bad(format!(
                    "goal `{}` and measure `{measure}` given twice",
                    String::from_utf8_lossy(&goal)
                ));
                e.first_line = Some(first);
                return Err(e);
            }
            goals
                .entry(goal)
                .or_default()
                .insert(measure, (mean, stddev));
        }
        Ok(ZScores { goals })
    }

    /// The entries of `goal`, if the file has any.
    pub fn goal(&self, goal: &[u8]) -> Option<&GoalZScores> {
        self.goals.get(goal)
    }

    /// Every goal's entries, goals in byte order.
    pub fn goals(&self) -> impl Iterator<Item = (&[u8], &GoalZScores)> {
        self.goals.iter().map(|(g, z)| (g.as_slice(), z))
    }

    /// How many goals the file has entries for.
    pub fn len(&self) -> usize {
        self.goals.len()
    }

    /// Whether the file has no entry (never, once read).
    pub fn is_empty(&self) -> bool {
        self.goals.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_blanks_and_numbers() {
        let z = ZScores::parse(
            Path::new("z"),
            b"q1 map 0.25 0.5\n  q1\tP_5  1e-1 0\r\nq2 num_ret 967.0000 169.1719",
        )
        .unwrap();
        assert_eq!(z.len(), 2);
        assert_eq!(z.goal(b"q1").unwrap()["map"], (0.25, 0.5));
        assert_eq!(z.goal(b"q1").unwrap()["P_5"], (0.1, 0.0));
        assert_eq!(z.goal(b"q2").unwrap()["num_ret"], (967.0, 169.1719));
        assert!(z.goal(b"q3").is_none());
    }

    #[test]
    fn bad_lines_name_the_line() {
        let cases: [(&[u8], u64, &str); 5] = [
            (b"q1 map 0.1 0.2\nq1 map 0.1\n", 2, "expected 4 fields"),
            (b"q1 map 0.1 0.2\n\nq2 map 0 1\n", 2, "found 0"),
            (
                b"q1 map x 0.2\n",
                1,
                "the mean (field 3) is not a number: `x`",
            ),
            (b"q1 map 0.1 0.2 9\n", 1, "found 5"),
            (b"q1 map 0.1 0.2\nq1 map 0 1\n", 2, "given twice"),
        ];
        for (text, line, want) in cases {
            let e = ZScores::parse(Path::new("z.txt"), text).unwrap_err();
            assert_eq!(e.line, Some(line), "{}", e.message);
            assert!(e.message.contains(want), "{}", e.message);
        }
        let e = ZScores::parse(Path::new("z.txt"), b"").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Empty);
    }
}
