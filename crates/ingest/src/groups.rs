//! Which group each goal belongs to (`--group-by theorem|file|ATTR`): an attribute of the goal
//! read from JSONL records `{"goal_id": ..., ATTR: ..., ...}`, the actual sets' own records or a
//! `--goals FILE` of them (a later record overrides an earlier one's value).
//!
//! `theorem` reads the key `theorem` (or `full_name`), `file` reads `file_path` (or `path`); any
//! other name reads the key of that name. A string value is the group's name; a number, a
//! boolean, an array or an object its JSON text; `null` or no key leaves the goal without a group.
//!
//! Held: the goals' names and the groups' names (each once, in [`Interner`]s) and 4 bytes a goal.

use crate::error::InputError;
use crate::truth::Interner;
use std::io::BufRead;
use std::path::Path;

/// No group.
const NONE: u32 = u32::MAX;

/// Each goal's group (`--group-by`), by goal id: an attribute read from the actual sets' JSONL
/// records and a `--goals` file (`theorem` reads `theorem` or `full_name`, `file` reads
/// `file_path` or `path`, any other name its own key).
#[derive(Debug, Default)]
pub struct GoalGroups {
    /// The attribute grouped by, as given (`theorem`, `file`, or a key).
    by: String,
    goals: Interner,
    group: Vec<u32>,
    names: Interner,
}

impl GoalGroups {
    /// No goal yet, grouped by `by`.
    pub fn new(by: &str) -> GoalGroups {
        GoalGroups {
            by: by.to_string(),
            ..GoalGroups::default()
        }
    }

    /// The attribute grouped by.
    pub fn by(&self) -> &str {
        &self.by
    }

    /// The keys a record may give the attribute under, first preferred.
    pub fn keys(&self) -> Vec<&str> {
        match self.by.as_str() {
            "theorem" => vec!["theorem", "full_name"],
            "file" => vec!["file_path", "path"],
            other => vec![other],
        }
    }

    /// Distinct groups named.
    pub fn group_count(&self) -> usize {
        self.names.len()
    }

    /// Reads the records of `path` (plain, gzip or zstd; JSONL). Blank lines and lines starting
    /// with `#` are skipped; a line that is not a JSON object with a string `goal_id` is an
    /// error naming the file, the line and what was expected.
    pub fn read(&mut self, path: &Path) -> Result<(), InputError> {
        let input = crate::input::open_with(path, false)?;
        self.read_from(path, input.reader)
    }

    /// [`GoalGroups::read`] from `reader`, named `path` in errors.
    pub fn read_from(&mut self, path: &Path, reader: impl BufRead) -> Result<(), InputError> {
        let keys: Vec<String> = self.keys().iter().map(|k| k.to_string()).collect();
        crate::goals::each_record_line(path, reader, |t, err| {
            let expected = || {
                format!(
                    "expected a goal record {{\"goal_id\": \"...\", \"{}\": ...}}",
                    keys[0]
                )
            };
            let r: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(t).map_err(|e| err(format!("{}: {e}", expected())))?;
            let Some(serde_json::Value::String(goal)) = r.get("goal_id") else {
                return Err(err(format!("{}: no string `goal_id`", expected())));
            };
            let value = keys.iter().find_map(|k| r.get(k).filter(|v| !v.is_null()));
            if let Some(v) = value {
                let name = match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                self.set(goal.as_bytes(), name.as_bytes());
            }
            Ok(())
        })
    }

    /// The name of group `group` (a number [`GoalGroups::get`] gave).
    pub fn group_name(&self, group: u32) -> &[u8] {
        self.names.name(group)
    }

    /// Puts goal `goal` in group `group`.
    pub fn set(&mut self, goal: &[u8], group: &[u8]) {
        let g = self.goals.intern(goal) as usize;
        if g == self.group.len() {
            self.group.push(NONE);
        }
        self.group[g] = self.names.intern(group);
    }

    /// The group of `goal` (its number, from 0 in order of first mention), if a record gave one.
    pub fn get(&self, goal: &[u8]) -> Option<u32> {
        let g = self.goals.get(goal)?;
        Some(self.group[g as usize]).filter(|&i| i != NONE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_give_groups_under_their_keys() {
        let text = "{\"goal_id\": \"g1\", \"theorem\": \"A.foo\"}\n\
                    # a comment\n\
                    {\"goal_id\": \"g2\", \"full_name\": \"A.bar\", \"file_path\": \"A.lean\"}\n\
                    {\"goal_id\": \"g3\", \"theorem\": \"A.foo\", \"split\": 3}\n\
                    {\"goal_id\": \"g4\", \"theorem\": null}\n";
        let mut t = GoalGroups::new("theorem");
        t.read_from(Path::new("x.jsonl"), text.as_bytes()).unwrap();
        assert_eq!(
            (t.get(b"g1"), t.get(b"g2"), t.get(b"g3")),
            (Some(0), Some(1), Some(0))
        );
        assert_eq!((t.get(b"g4"), t.get(b"g5")), (None, None));
        assert_eq!(t.group_count(), 2);
        assert_eq!(
            (t.group_name(0), t.group_name(1)),
            (&b"A.foo"[..], &b"A.bar"[..])
        );
        let mut s = GoalGroups::new("split");
        s.read_from(Path::new("x.jsonl"), text.as_bytes()).unwrap();
        assert_eq!((s.get(b"g1"), s.get(b"g3")), (None, Some(0)));
        let mut f = GoalGroups::new("file");
        f.read_from(Path::new("x.jsonl"), text.as_bytes()).unwrap();
        assert_eq!((f.get(b"g1"), f.get(b"g2")), (None, Some(0)));
    }

    #[test]
    fn bad_records_name_file_and_line() {
        let mut t = GoalGroups::new("theorem");
        let e = t
            .read_from(Path::new("goals.jsonl"), "\n{\"goal_id\": 3}\n".as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("goals.jsonl") && e.contains('2'), "{e}");
        assert!(e.contains("goal_id"), "{e}");
    }
}
