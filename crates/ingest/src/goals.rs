//! Where goals stand in a library: each goal's file and theorem position, read from JSONL records
//! of the shape `{"goal_id": ..., "file_path": ..., "theorem_pos": [line, col], ...}` (LeanDojo's
//! names; `path` and `start` are accepted for `file_path` and `theorem_pos`, `full_name` for
//! `theorem`), resolved against a [`Corpus`].
//!
//! Two sources give them: the actual sets' own JSONL records (whatever else they hold), and a
//! `--goals FILE` of such records, which adds goals and overrides the attributes it gives (a
//! record with only `theorem_pos` keeps the file the actual sets gave). Any other key is ignored.
//!
//! Held per goal: its name (in an [`Interner`]) and 12 bytes: the corpus's id of its file (or the
//! index of a path the corpus does not list, or none) and the theorem's position.

use crate::corpus::{Corpus, Place, Pos};
use crate::error::{ErrorKind, InputError};
use crate::parse::jsonl::{scan_place, RecordSpans};
use crate::truth::Interner;
use serde::Deserialize;
use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;

/// A goal's file, as [`GoalPlaces`] holds it.
const NO_FILE: u32 = u32::MAX;
/// Files the corpus does not list are numbered from here: `UNLISTED + i`.
const UNLISTED: u32 = 1 << 31;

/// Where one goal stands, as far as the records said.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GoalPlace<'p> {
    /// Its file is in the corpus, and its position is known.
    Known(Place),
    /// Its file is not in the corpus (the path as given).
    UnlistedFile(&'p [u8]),
    /// The records gave no file, or no position (which one is missing: `"file_path"` or
    /// `"theorem_pos"`).
    Incomplete(&'static str),
}

/// Each goal's place, by goal id: a file of the corpus and a position in it, read from the
/// actual sets' JSONL records and a `--goals` file.
#[derive(Debug, Default)]
pub struct GoalPlaces {
    goals: Interner,
    /// Per goal: its file (a corpus id, `UNLISTED + i`, or [`NO_FILE`]) and position (`None`
    /// packed as `line = u32::MAX`).
    files: Vec<u32>,
    pos: Vec<Pos>,
    unlisted: Interner,
}

/// One record's context; other keys are skipped.
#[derive(Deserialize)]
struct Record<'a> {
    #[serde(borrow)]
    goal_id: Cow<'a, str>,
    #[serde(default, borrow)]
    file_path: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    path: Option<Cow<'a, str>>,
    #[serde(default)]
    theorem_pos: Option<(u32, u32)>,
    #[serde(default)]
    start: Option<(u32, u32)>,
}

const NO_POS: Pos = Pos {
    line: u32::MAX,
    col: u32::MAX,
};

impl GoalPlaces {
    /// No goal yet.
    pub fn new() -> GoalPlaces {
        GoalPlaces::default()
    }

    /// Goals with a record.
    pub fn len(&self) -> usize {
        self.goals.len()
    }

    /// Whether no goal has a record.
    pub fn is_empty(&self) -> bool {
        self.goals.is_empty()
    }

    /// Reads the records of `path` (plain, gzip or zstd; JSONL), resolving files against
    /// `corpus`; a goal read before gets the attributes this file gives. Blank lines and lines
    /// starting with `#` are skipped; a line that is not such a record is an error naming the
    /// file, the line and what was expected.
    pub fn read(&mut self, path: &Path, corpus: &Corpus) -> Result<(), InputError> {
        let input = crate::input::open_with(path, false)?;
        self.read_from(path, input.reader, corpus)
    }

    /// [`GoalPlaces::read`] before the corpus is read (the two can then be read at once): files
    /// are kept by path until [`GoalPlaces::resolve`], and a goal read before gets the attributes
    /// this file gives, as with [`GoalPlaces::read`].
    pub fn read_unresolved(&mut self, path: &Path) -> Result<(), InputError> {
        let input = crate::input::open_with(path, false)?;
        self.read_records(path, input.reader, None)
    }

    /// Gives the files [`GoalPlaces::read_unresolved`] kept by path their corpus ids (a path the
    /// corpus does not list stays unlisted). Reading unresolved then resolving gives what
    /// [`GoalPlaces::read`] gives.
    pub fn resolve(&mut self, corpus: &Corpus) {
        let kept = std::mem::take(&mut self.unlisted);
        let ids: Vec<u32> = (0..kept.len() as u32)
            .map(|i| {
                let path = kept.name(i);
                corpus
                    .file_id(path)
                    .unwrap_or_else(|| UNLISTED + self.unlisted.intern(path))
            })
            .collect();
        for f in &mut self.files {
            if *f != NO_FILE && *f >= UNLISTED {
                *f = ids[(*f - UNLISTED) as usize];
            }
        }
    }

    /// [`GoalPlaces::read`] from `reader`, named `path` in errors.
    pub fn read_from(
        &mut self,
        path: &Path,
        reader: impl BufRead,
        corpus: &Corpus,
    ) -> Result<(), InputError> {
        self.read_records(path, reader, Some(corpus))
    }

    /// The records of `reader`, files resolved against `corpus` or (`None`) kept by path.
    fn read_records(
        &mut self,
        path: &Path,
        reader: impl BufRead,
        corpus: Option<&Corpus>,
    ) -> Result<(), InputError> {
        let mut spans = RecordSpans::default();
        each_record_line(path, reader, |t, err| {
            if let Some(r) = scan_place(t, &mut spans) {
                let file = r.file_path.or(r.path).map(|s| s.of(t).as_bytes());
                let pos = r.theorem_pos.or(r.start).map(|(l, c)| Pos::new(l, c));
                self.set_in(r.goal.of(t).as_bytes(), file, pos, corpus);
                return Ok(());
            }
            let r: Record<'_> = serde_json::from_str(t).map_err(|e| {
                err(format!(
                    "expected a goal record {{\"goal_id\": \"...\", \"file_path\": \"...\", \
                     \"theorem_pos\": [line, col]}}: {e}"
                ))
            })?;
            let file = r.file_path.as_deref().or(r.path.as_deref());
            let pos = r.theorem_pos.or(r.start).map(|(l, c)| Pos::new(l, c));
            self.set_in(r.goal_id.as_bytes(), file.map(str::as_bytes), pos, corpus);
            Ok(())
        })
    }

    /// Gives goal `goal` the attributes given (`None`: keeps what it had).
    pub fn set(&mut self, goal: &[u8], file: Option<&[u8]>, pos: Option<Pos>, corpus: &Corpus) {
        self.set_in(goal, file, pos, Some(corpus));
    }

    /// [`GoalPlaces::set`], the file kept by path without a corpus.
    fn set_in(
        &mut self,
        goal: &[u8],
        file: Option<&[u8]>,
        pos: Option<Pos>,
        corpus: Option<&Corpus>,
    ) {
        let g = self.goals.intern(goal) as usize;
        if g == self.files.len() {
            self.files.push(NO_FILE);
            self.pos.push(NO_POS);
        }
        if let Some(f) = file {
            self.files[g] = match corpus.and_then(|c| c.file_id(f)) {
                Some(id) => id,
                None => UNLISTED + self.unlisted.intern(f),
            };
        }
        if let Some(p) = pos {
            self.pos[g] = p;
        }
    }

    /// Where goal `goal` stands; `None` when no record names it.
    pub fn get(&self, goal: &[u8]) -> Option<GoalPlace<'_>> {
        let g = self.goals.get(goal)? as usize;
        let (file, pos) = (self.files[g], self.pos[g]);
        Some(if file == NO_FILE {
            GoalPlace::Incomplete("file_path")
        } else if file >= UNLISTED {
            GoalPlace::UnlistedFile(self.unlisted.name(file - UNLISTED))
        } else if pos == NO_POS {
            GoalPlace::Incomplete("theorem_pos")
        } else {
            GoalPlace::Known(Place { file, pos })
        })
    }

    /// A fingerprint of the places (docs/FORMAT.md, "Summary files"): of each goal given a file
    /// or a position, its name, its file's path and its position, in any order (a wrapping sum
    /// of a term per goal): the same places read from other files, in another order or on
    /// another machine give the same; goals without either add nothing.
    pub fn fingerprint(&self, corpus: &Corpus) -> u64 {
        use crate::fingerprint::{fmix, mix};
        let (mut sum, mut placed) = (0u64, 0u64);
        for g in 0..self.files.len() {
            let (file, pos) = (self.files[g], self.pos[g]);
            if file == NO_FILE && pos == NO_POS {
                continue;
            }
            let path = match file {
                NO_FILE => u64::MAX,
                f if f >= UNLISTED => self.unlisted.hash_of(f - UNLISTED),
                f => corpus.file_hash(f),
            };
            let term = mix(0x706c_6163_6573_0001, self.goals.hash_of(g as u32));
            let term = mix(mix(term, path), (pos.line as u64) << 32 | pos.col as u64);
            sum = sum.wrapping_add(fmix(term));
            placed += 1;
        }
        fmix(mix(sum, placed))
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.goals.heap_bytes()
            + self.unlisted.heap_bytes()
            + self.files.capacity() * 4
            + self.pos.capacity() * std::mem::size_of::<Pos>()
    }
}

/// Calls `record(text, err)` for each line of `reader` (named `path` in errors) that is not blank
/// and does not start with `#`, its text trimmed; `err` makes an error naming the file, the line
/// and its first byte. A line that is not UTF-8 is such an error. The goal-record files
/// (`--goals`, the actual sets' JSONL records read for places and groups) are read by it.
pub(crate) fn each_record_line(
    path: &Path,
    mut reader: impl BufRead,
    mut record: impl FnMut(&str, &dyn Fn(String) -> InputError) -> Result<(), InputError>,
) -> Result<(), InputError> {
    let mut buf = Vec::new();
    let (mut line, mut byte) = (0u64, 0u64);
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| InputError::read(path, e))?;
        if n == 0 {
            return Ok(());
        }
        line += 1;
        let err = |m: String| InputError::at(ErrorKind::Syntax, path, line, byte, m);
        let text = std::str::from_utf8(&buf)
            .map_err(|e| err(format!("invalid UTF-8 at column {}", e.valid_up_to() + 1)))?;
        let t = text.trim();
        if !t.is_empty() && !t.starts_with('#') {
            record(t, &err)?;
        }
        byte += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> Corpus {
        let text = r#"{"path": "A.lean", "imports": [], "premises": []}"#;
        Corpus::from_reader(Path::new("corpus.jsonl"), text.as_bytes()).unwrap()
    }

    #[test]
    fn records_give_places_and_later_files_override_attributes() {
        let c = corpus();
        let mut p = GoalPlaces::new();
        let actual = concat!(
            r#"{"goal_id": "g1", "file_path": "A.lean", "theorem_pos": [3, 4], "premises": ["x"]}"#,
            "\n",
            r#"{"goal_id": "g2", "path": "Z.lean", "start": [1, 1]}"#,
            "\n\n",
            r#"{"goal_id": "g3", "file_path": "A.lean"}"#,
            "\n"
        );
        p.read_from(Path::new("actual.jsonl"), actual.as_bytes(), &c)
            .unwrap();
        let a = c.file_id(b"A.lean").unwrap();
        let at = |line, col| {
            GoalPlace::Known(Place {
                file: a,
                pos: Pos::new(line, col),
            })
        };
        assert_eq!(p.get(b"g1"), Some(at(3, 4)));
        assert_eq!(p.get(b"g2"), Some(GoalPlace::UnlistedFile(b"Z.lean")));
        assert_eq!(p.get(b"g3"), Some(GoalPlace::Incomplete("theorem_pos")));
        assert_eq!(p.get(b"g4"), None);
        // A goals file: g3 gets its position, g1 a new one, g4 a record without a file.
        let goals = "{\"goal_id\": \"g3\", \"theorem_pos\": [7, 0]}\n\
                     {\"goal_id\": \"g1\", \"theorem_pos\": [9, 9], \"theorem\": \"t\"}\n\
                     {\"goal_id\": \"g4\", \"theorem_pos\": [1, 0]}\n";
        p.read_from(Path::new("goals.jsonl"), goals.as_bytes(), &c)
            .unwrap();
        assert_eq!(p.get(b"g3"), Some(at(7, 0)));
        assert_eq!(p.get(b"g1"), Some(at(9, 9)));
        assert_eq!(p.get(b"g4"), Some(GoalPlace::Incomplete("file_path")));
    }

    #[test]
    fn places_read_before_the_corpus_resolve_to_what_reading_after_gives() {
        let text = concat!(
            r#"{"path": "A.lean", "imports": [], "premises": []}"#,
            "\n",
            r#"{"path": "B.lean", "imports": ["A.lean"], "premises": []}"#,
            "\n"
        );
        let c = Corpus::from_reader(Path::new("corpus.jsonl"), text.as_bytes()).unwrap();
        let actual = concat!(
            r#"{"goal_id": "g1", "file_path": "B.lean", "theorem_pos": [3, 4]}"#,
            "\n",
            r#"{"goal_id": "g2", "path": "Z.lean", "start": [1, 1]}"#,
            "\n",
            r#"{"goal_id": "g3", "file_path": "Y.lean", "theorem_pos": [2, 2]}"#,
            "\n",
            r#"{"goal_id": "g4", "file_path": "A.lean"}"#,
            "\n",
            // A later record moves g2 into a listed file, g3 keeps its unlisted one.
            r#"{"goal_id": "g2", "file_path": "A.lean"}"#,
            "\n"
        );
        let mut after = GoalPlaces::new();
        after
            .read_from(Path::new("actual.jsonl"), actual.as_bytes(), &c)
            .unwrap();
        let mut before = GoalPlaces::new();
        before
            .read_records(Path::new("actual.jsonl"), actual.as_bytes(), None)
            .unwrap();
        before.resolve(&c);
        let (a, b) = (c.file_id(b"A.lean").unwrap(), c.file_id(b"B.lean").unwrap());
        let at = |file, line, col| {
            Some(GoalPlace::Known(Place {
                file,
                pos: Pos::new(line, col),
            }))
        };
        for p in [&after, &before] {
            assert_eq!(p.get(b"g1"), at(b, 3, 4));
            assert_eq!(p.get(b"g2"), at(a, 1, 1));
            assert_eq!(p.get(b"g3"), Some(GoalPlace::UnlistedFile(b"Y.lean")));
            assert_eq!(p.get(b"g4"), Some(GoalPlace::Incomplete("theorem_pos")));
        }
        // Resolving again changes nothing.
        before.resolve(&c);
        assert_eq!(before.get(b"g3"), Some(GoalPlace::UnlistedFile(b"Y.lean")));
        assert_eq!(before.get(b"g1"), at(b, 3, 4));
    }

    #[test]
    fn bad_records_name_file_and_line() {
        let c = corpus();
        let mut p = GoalPlaces::new();
        let e = p
            .read_from(
                Path::new("goals.jsonl"),
                "{\"goal_id\": \"g1\"}\n{\"goal_id\": \"g2\", \"theorem_pos\": \"here\"}\n"
                    .as_bytes(),
                &c,
            )
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("goals.jsonl:2: expected a goal record"),
            "{e}"
        );
        let e = p
            .read_from(Path::new("goals.jsonl"), "[1, 2]\n".as_bytes(), &c)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("goals.jsonl:1: expected a goal record"),
            "{e}"
        );
    }
}

#[cfg(test)]
mod scan_tests {
    use super::*;
    use proptest::prelude::*;

    /// A record's place as serde reads it (the reference), or `None` when serde refuses it.
    type Read = (String, Option<String>, Option<(u32, u32)>);

    fn by_serde(line: &str) -> Option<Read> {
        let r: Record<'_> = serde_json::from_str(line).ok()?;
        Some((
            r.goal_id.to_string(),
            r.file_path.or(r.path).map(|s| s.to_string()),
            r.theorem_pos.or(r.start),
        ))
    }

    fn by_scan(line: &str) -> Option<Read> {
        let r = scan_place(line, &mut RecordSpans::default())?;
        Some((
            r.goal.of(line).to_string(),
            r.file_path.or(r.path).map(|s| s.of(line).to_string()),
            r.theorem_pos.or(r.start),
        ))
    }

    #[test]
    fn the_scan_reads_the_common_shapes_as_serde_does() {
        let common = [
            r#"{"goal_id": "g1", "file_path": "A/B.lean", "theorem_pos": [12, 4], "premises": ["a", {"full_name": "b", "code": "x y"}]}"#,
            r#"{"premises":[],"goal_id":"g2","path":"C.lean","start":[1,0]}"#,
            r#"{"goal_id": "g3", "theorem_pos": [4294967295, 0]}"#,
            r#"{"goal_id": "g4", "file_path": "F.lean", "path": "G.lean", "start": [2, 2], "theorem_pos": [3, 3]}"#,
            r#"{"goal_id": "g5", "full_name": "Nat.add", "scores": [0.5, -1e3], "ok": true, "n": null}"#,
            "  {\"goal_id\" : \"g6\" ,  \"file_path\":\"H.lean\" , \"theorem_pos\" : [ 7 , 8 ] }  ",
        ];
        for line in common {
            let want = by_serde(line).expect("serde reads it");
            assert_eq!(by_scan(line), Some(want), "{line}");
        }
        // Hand-read: file_path before path, theorem_pos before start.
        assert_eq!(
            by_scan(common[3]),
            Some(("g4".into(), Some("F.lean".into()), Some((3, 3))))
        );
        // Left to serde (which reads or refuses each): escapes, null, a key twice, numbers that
        // are not plain 32-bit integers, spaces in a string, three coordinates, trailing bytes.
        for line in [
            r#"{"goal_id": "g\u0031", "file_path": "A.lean"}"#,
            r#"{"goal_id": "g", "file_path": null}"#,
            r#"{"goal_id": "g", "goal_id": "h"}"#,
            r#"{"goal_id": "g", "theorem_pos": [1.0, 2]}"#,
            r#"{"goal_id": "g", "theorem_pos": [-0, 2]}"#,
            r#"{"goal_id": "g", "theorem_pos": [4294967296, 2]}"#,
            r#"{"goal_id": "g", "theorem_pos": [1, 2, 3]}"#,
            r#"{"goal_id": "a b", "file_path": "A.lean"}"#,
            r#"{"goal_id": "g"} x"#,
            r#"{"file_path": "A.lean"}"#,
            r#"{"goal_id": 7}"#,
        ] {
            assert_eq!(by_scan(line), None, "{line}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Whatever the scan reads, serde reads the same (built from pieces of records, valid
        /// and not).
        #[test]
        fn what_the_scan_reads_serde_reads_alike(
            parts in prop::collection::vec(prop::sample::select(vec![
                r#""goal_id": "g1""#, r#""goal_id": "g 2""#, r#""goal_id": 3"#,
                r#""file_path": "A.lean""#, r#""file_path": null"#, r#""path": "B.lean""#,
                r#""theorem_pos": [1, 2]"#, r#""theorem_pos": [1.5, 2]"#, r#""start": [0, 0]"#,
                r#""start": [99999999999, 1]"#, r#""premises": ["a", {"full_name": "b"}]"#,
                r#""x": {"y": [1, -2e5, true]}"#, r#""x": [1,]"#, r#""z": "\u00e9""#,
            ]), 0..6),
            spaced in any::<bool>(),
        ) {
            let sep = if spaced { " , " } else { "," };
            let line = format!("{{{}}}", parts.join(sep));
            if let Some(got) = by_scan(&line) {
                prop_assert_eq!(Some(got), by_serde(&line), "{}", line);
            }
        }
    }
}
