//! trec_eval's judgment-group qrels (`-R qrels_jg`): lines `goal group lemma grade`, the
//! judgments of one goal split into groups (one per judge, say). Each group is the qrels of its
//! lines alone; lemma-eval evaluates a run against each and averages per goal.

use crate::fields::{shown_count, split_fields, FIELDS};
use crate::input::{from_reader, open_with};
use crate::{ActualSets, ErrorKind, InputError, SpillOptions};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};

/// A judgment-group qrels file, read whole (as trec_eval reads it): per group, the ordinary qrels
/// of its lines.
#[derive(Clone, Debug)]
pub struct JudgmentGroups {
    path: PathBuf,
    /// Group name to its lines as ordinary qrels (`goal 0 lemma grade`), groups in byte order.
    groups: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl JudgmentGroups {
    /// Reads `path` (plain, gzip or zstd; `-` for stdin). Lines have four fields separated by
    /// blanks, the grade a whole number; a blank line is skipped, and so is a line whose first
    /// byte is `#` when `comments` (trec_eval 10.0's comments; without, a line whose first
    /// non-blank byte is `#` is an error, as trec_eval 9.0.8 has no comments and reads it as a
    /// line of goal `#…`, which lemma-eval does not reproduce). A malformed line, a lemma judged
    /// twice in one goal's group (both lines named) and a file without judgments are errors
    /// naming the file and the line.
    pub fn read(path: &Path, comments: bool) -> Result<JudgmentGroups, InputError> {
        let mut input = open_with(path, false)?;
        let mut bytes = Vec::new();
        input
            .reader
            .read_to_end(&mut bytes)
            .map_err(|e| InputError::read(path, e))?;
        JudgmentGroups::parse(path, &bytes, comments)
    }

    /// [`JudgmentGroups::read`] of bytes already read (`path` names them in errors).
    pub fn parse(path: &Path, bytes: &[u8], comments: bool) -> Result<JudgmentGroups, InputError> {
        let mut groups: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        // (goal, group, lemma) to the line that judged it.
        let mut seen: HashMap<[&[u8]; 3], u64> = HashMap::new();
        for (n, at, line) in crate::parse::lines::numbered_lines(bytes) {
            let bad = |what: String| InputError::at(ErrorKind::Syntax, path, n, at, what);
            let mut buf = [&line[..0]; FIELDS];
            let found = split_fields(line, &mut buf);
            let fields = &buf[..found.min(FIELDS)];
            if fields.is_empty() || (comments && line.first() == Some(&b'#')) {
                continue;
            }
            if !comments && fields[0].first() == Some(&b'#') {
                return Err(bad(
                    "a line starting with `#`: trec_eval 9.0.8 has no comment lines, which \
                     lemma-eval does not reproduce; remove the line, or use --trec-version 10, \
                     which skips it"
                        .into(),
                ));
            }
            if found != 4 {
                return Err(bad(format!(
                    "expected 4 fields (goal group lemma grade), found {}",
                    shown_count(found)
                )));
            }
            let grade = std::str::from_utf8(fields[3])
                .ok()
                .and_then(|s| s.parse::<i32>().ok())
                .ok_or_else(|| {
                    bad(format!(
                        "the grade (field 4) is not a whole number: `{}`",
                        String::from_utf8_lossy(fields[3])
                    ))
                })?;
            if let Some(first) = seen.insert([fields[0], fields[1], fields[2]], n) {
                let mut e = InputError::at(
                    ErrorKind::Duplicate,
                    path,
                    n,
                    at,
                    format!(
                        "lemma `{}` judged twice for goal `{}` in judgment group `{}`",
                        String::from_utf8_lossy(fields[2]),
                        String::from_utf8_lossy(fields[0]),
                        String::from_utf8_lossy(fields[1]),
                    ),
                );
                e.first_line = Some(first);
                return Err(e);
            }
            let text = groups.entry(fields[1].to_vec()).or_default();
            text.extend_from_slice(fields[0]);
            text.extend_from_slice(b" 0 ");
            text.extend_from_slice(fields[2]);
            text.extend_from_slice(format!(" {grade}\n").as_bytes());
        }
        if groups.is_empty() {
            return Err(InputError::file(
                ErrorKind::Empty,
                path,
                "no judgments: expected lines `goal group lemma grade`",
            ));
        }
        Ok(JudgmentGroups {
            path: path.to_path_buf(),
            groups,
        })
    }

    /// The groups' names, in byte order.
    pub fn names(&self) -> impl Iterator<Item = &[u8]> {
        self.groups.keys().map(|k| k.as_slice())
    }

    /// The number of groups.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// Whether there is no group (never, once read).
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Group `name`'s judgments as actual sets (a goal without judgments in the group is not in
    /// them).
    pub fn actual_sets(
        &self,
        name: &[u8],
        threads: usize,
        spill: &SpillOptions,
    ) -> Result<ActualSets, InputError> {
        let text = self.groups.get(name).cloned().unwrap_or_default();
        let label = PathBuf::from(format!(
            "{} (judgment group {})",
            self.path.display(),
            String::from_utf8_lossy(name)
        ));
        let input = from_reader(&label, Box::new(std::io::Cursor::new(text)))?;
        ActualSets::read_within(input, threads, spill)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_in_byte_order_and_comments_skipped() {
        let text = b"q1 b x 1\n# a comment\nq1 a x 0\n\nq2 a y 2\n";
        let jg = JudgmentGroups::parse(Path::new("jg"), text, true).unwrap();
        let names: Vec<&[u8]> = jg.names().collect();
        assert_eq!(names, [b"a".as_slice(), b"b"]);
        let a = jg.actual_sets(b"a", 1, &SpillOptions::default()).unwrap();
        assert_eq!(a.goal_count(), 2);
        let b = jg.actual_sets(b"b", 1, &SpillOptions::default()).unwrap();
        assert_eq!(b.goal_count(), 1);
    }

    #[test]
    fn bad_lines_name_the_file_and_line() {
        for (text, line, what) in [
            (&b"q1 a x 1\nq1 a y\n"[..], 2, "expected 4 fields"),
            (b"q1 a x 1\nq1 a y 1 z\n", 2, "expected 4 fields"),
            (b"q1 a x one\n", 1, "not a whole number"),
            (b"q1 a x 1\nq1 b x 1\nq1 a x 0\n", 3, "judged twice"),
        ] {
            let e = JudgmentGroups::parse(Path::new("jg.txt"), text, true).unwrap_err();
            assert_eq!(e.line, Some(line), "{e}");
            let msg = e.to_string();
            assert!(msg.contains("jg.txt") && msg.contains(what), "{msg}");
        }
        let e = JudgmentGroups::parse(Path::new("jg.txt"), b"# only\n", true).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Empty);
        let e = JudgmentGroups::parse(Path::new("jg.txt"), b"q a x 1\n #c\n", false).unwrap_err();
        assert_eq!(e.line, Some(2));
    }
}
