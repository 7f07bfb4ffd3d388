//! Lines grouped by goal, handed out one goal at a time.
//!
//! [`GoalLines`] reads a whole TREC-shaped input (a run, a preference file) and sorts its lines by
//! goal in byte order within a memory budget ([`group_by_goal`]: in memory, or in unnamed
//! temporary files, mapped), each goal's lines in their input order, blank and comment lines
//! dropped. A reader then takes the goals in order, one at a time, each line with its number in
//! the input. Memory: the sorted lines when they fit in half the budget (else mapped pages), and
//! 8 bytes a line for the numbers (or mapped too).

use crate::error::{ErrorKind, InputError};
use crate::fields::first_field;
use crate::parse::order::GoalOrder;
use crate::spill::{group_by_goal, Grouped, LineMap, SpillOptions, SpillReport};
use memmap2::Mmap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// The sorted text.
enum Text {
    Held(Vec<u8>),
    Mapped(Mmap),
}

impl std::ops::Deref for Text {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Text::Held(v) => v,
            Text::Mapped(m) => m,
        }
    }
}

/// An input's lines grouped by goal in byte order (see the module documentation).
pub struct GoalLines {
    path: PathBuf,
    text: Text,
    numbers: LineMap,
    /// The next goal's first byte and line index.
    pos: usize,
    index: usize,
    last_line: Vec<u8>,
    report: SpillReport,
}

/// One goal's lines ([`GoalLines::next_goal`]).
pub struct GoalBlock<'a> {
    /// The goal.
    pub goal: &'a [u8],
    /// Its lines, each ending in `\n`.
    text: &'a [u8],
    /// The index of its first line among the sorted lines.
    first: usize,
    numbers: &'a LineMap,
}

impl<'a> GoalBlock<'a> {
    /// The goal's lines (without their newline), each with its number (1-based) in the input, in
    /// input order.
    pub fn lines(&self) -> impl Iterator<Item = (&'a [u8], u64)> + 'a {
        let (text, first, numbers) = (self.text, self.first, self.numbers);
        let body = text.strip_suffix(b"\n").unwrap_or(text);
        body.split(|&b| b == b'\n')
            .enumerate()
            .map(move |(k, line)| (line, numbers.get(first + k).unwrap_or(0)))
    }
}

impl GoalLines {
    /// Reads all of `reader` (`path` names it in errors) and groups its lines by goal in byte
    /// order within `spill`'s budget.
    pub fn read(
        path: &Path,
        reader: &mut dyn BufRead,
        spill: &SpillOptions,
    ) -> Result<GoalLines, InputError> {
        let g = group_by_goal(path, reader, GoalOrder::Bytes, spill)?;
        let text = match g.lines {
            Grouped::Memory(v) => Text::Held(v),
            // SAFETY: an unnamed temporary file of this process, never written again.
            Grouped::Spilled(f) => {
                Text::Mapped(unsafe { Mmap::map(&f) }.map_err(|e| InputError::read(path, e))?)
            }
        };
        Ok(GoalLines {
            path: path.to_path_buf(),
            text,
            numbers: g.line_map,
            pos: 0,
            index: 0,
            last_line: g.last_line,
            report: g.report,
        })
    }

    /// The input's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The number of goals.
    pub fn goals(&self) -> u64 {
        self.report.goals
    }

    /// The input's last line with a goal, as it was (a run's last tag is trec_eval's `runid`).
    pub fn last_line(&self) -> &[u8] {
        &self.last_line
    }

    /// What the grouping did.
    pub fn report(&self) -> &SpillReport {
        &self.report
    }

    /// The next goal's lines; `None` after the last goal.
    pub fn next_goal(&mut self) -> Option<GoalBlock<'_>> {
        let text = &self.text[..];
        if self.pos >= text.len() {
            return None;
        }
        let start = self.pos;
        let line_end =
            |at: usize| memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |e| at + e);
        let first_end = line_end(start);
        let goal = first_field(&text[start..first_end]).unwrap_or(&[]);
        let (mut end, mut lines) = (first_end, 1);
        while end + 1 < text.len() {
            let next_end = line_end(end + 1);
            if first_field(&text[end + 1..next_end]).unwrap_or(&[]) != goal {
                break;
            }
            (end, lines) = (next_end, lines + 1);
        }
        let stop = (end + 1).min(text.len());
        let block = GoalBlock {
            goal,
            text: &text[start..stop],
            first: self.index,
            numbers: &self.numbers,
        };
        self.pos = stop;
        self.index += lines;
        Some(block)
    }

    /// Back to the first goal.
    pub fn rewind(&mut self) {
        self.pos = 0;
        self.index = 0;
    }

    /// Checks every line with `check`; the error of the first line (in input order) it refuses,
    /// naming that line.
    pub fn check(
        &self,
        mut check: impl FnMut(&[u8]) -> Result<(), String>,
    ) -> Result<(), InputError> {
        let text = &self.text[..];
        let body = text.strip_suffix(b"\n").unwrap_or(text);
        let mut first: Option<(u64, String)> = None;
        if body.is_empty() {
            return Ok(());
        }
        for (k, line) in body.split(|&b| b == b'\n').enumerate() {
            if let Err(message) = check(line) {
                let no = self.numbers.get(k).unwrap_or(0);
                if first.as_ref().is_none_or(|(f, _)| no < *f) {
                    first = Some((no, message));
                }
            }
        }
        match first {
            None => Ok(()),
            Some((no, message)) => Err(InputError {
                kind: ErrorKind::Syntax,
                path: self.path.clone(),
                line: Some(no),
                byte: None,
                first_line: None,
                message,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goals_in_byte_order_lines_in_input_order() {
        let text = b"g2 x 1\n\ng10 y 2\n# c\ng2 z 3\ng1 w 4\ng10 v 5";
        let spill = SpillOptions::default();
        let mut g = GoalLines::read(Path::new("t"), &mut &text[..], &spill).unwrap();
        assert_eq!(g.goals(), 3);
        assert_eq!(g.last_line(), b"g10 v 5");
        let mut seen = Vec::new();
        while let Some(b) = g.next_goal() {
            let lines: Vec<(String, u64)> = b
                .lines()
                .map(|(l, n)| (String::from_utf8(l.to_vec()).unwrap(), n))
                .collect();
            seen.push((String::from_utf8(b.goal.to_vec()).unwrap(), lines));
        }
        let want = |g: &str, ls: &[(&str, u64)]| {
            (
                g.to_string(),
                ls.iter()
                    .map(|(l, n)| (l.to_string(), *n))
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(
            seen,
            [
                want("g1", &[("g1 w 4", 6)]),
                want("g10", &[("g10 y 2", 3), ("g10 v 5", 7)]),
                want("g2", &[("g2 x 1", 1), ("g2 z 3", 5)]),
            ]
        );
        g.rewind();
        assert_eq!(g.next_goal().unwrap().goal, b"g1");
        // The first refused line in input order, whatever the goal order.
        let e = g.check(|l| match l.ends_with(b"5") || l.ends_with(b"3") {
            true => Err("no".into()),
            false => Ok(()),
        });
        assert_eq!(e.unwrap_err().line, Some(5));
    }
}
