//! Errors that say which file, which line and what was expected.

use std::fmt;
use std::path::{Path, PathBuf};

/// What kind of input error (decides the exit code of the command line).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file could not be opened or read.
    Io,
    /// A line does not have the expected shape.
    Syntax,
    /// A lemma repeats within a goal's ranking (`--duplicates error`, trec_eval mode).
    Duplicate,
    /// A goal's lines are not contiguous (`eval` without `--regroup`).
    GoalNotContiguous,
    /// The input is empty.
    Empty,
}

/// An input error: file, line (1-based, physical), byte offset of the line, and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// What kind.
    pub kind: ErrorKind,
    /// The file (`-` for stdin).
    pub path: PathBuf,
    /// 1-based line number, when the error is about a line.
    pub line: Option<u64>,
    /// Byte offset of the start of that line in the (decompressed) input.
    pub byte: Option<u64>,
    /// An earlier line the error is about too (a repeated lemma's first occurrence); printed as
    /// "(first at line N)". A field, not text, so that whoever renumbers lines renumbers it.
    pub first_line: Option<u64>,
    /// What was wrong and what was expected.
    pub message: String,
}

impl InputError {
    /// An error about a whole file.
    pub fn file(kind: ErrorKind, path: &Path, message: impl Into<String>) -> Self {
        InputError {
            kind,
            path: path.to_path_buf(),
            line: None,
            byte: None,
            first_line: None,
            message: message.into(),
        }
    }

    /// A file that cannot be read (`cannot read: ` and the system's reason).
    pub fn read(path: &Path, e: std::io::Error) -> Self {
        Self::file(ErrorKind::Io, path, format!("cannot read: {e}"))
    }

    /// An error about one line.
    pub fn at(
        kind: ErrorKind,
        path: &Path,
        line: u64,
        byte: u64,
        message: impl Into<String>,
    ) -> Self {
        InputError {
            kind,
            path: path.to_path_buf(),
            line: Some(line),
            byte: Some(byte),
            first_line: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // An error of no file (a goal's, found after every file was read) is its message alone.
        if !self.path.as_os_str().is_empty() || self.line.is_some() {
            write!(f, "{}", self.path.display())?;
            if let Some(l) = self.line {
                write!(f, ":{l}")?;
            }
            f.write_str(": ")?;
        }
        f.write_str(&self.message)?;
        if let Some(l) = self.first_line {
            write!(f, " (first at line {l})")?;
        }
        if let Some(b) = self.byte {
            write!(f, " (byte {b})")?;
        }
        Ok(())
    }
}

impl std::error::Error for InputError {}
