//! Name lists: the goal (row) and lemma (column) names of a dense matrix, one buffer and offsets.

use crate::error::InputError;
use std::path::Path;

/// A list of names, by position (a matrix's rows or columns). One contiguous buffer and an end
/// offset per name: a 200,000-name list costs two allocations, not 200,000.
#[derive(Clone, Debug, Default)]
pub struct Names {
    text: Vec<u8>,
    ends: Vec<usize>,
}

impl Names {
    /// The names of a text file, one per line (`\n` or `\r\n`), with no byte order mark; blank
    /// lines at the end are ignored. A blank line before the last name is an error naming it: a
    /// name is known by its line (a matrix's row or column), so a line left out would shift every
    /// name after it.
    pub fn read(path: &Path) -> Result<Names, InputError> {
        let text = std::fs::read(path).map_err(|e| InputError::read(path, e))?;
        crate::input::refuse_bom(path, &text)?;
        let mut names = Names {
            text: Vec::with_capacity(text.len()),
            ends: Vec::new(),
        };
        // The first blank line (its number and byte), an error once a name follows it.
        let (mut at, mut blank) = (0usize, None);
        for (i, line) in text.split(|&b| b == b'\n').enumerate() {
            let name = line.strip_suffix(b"\r").unwrap_or(line);
            if name.is_empty() {
                blank = blank.or(Some((i as u64 + 1, at as u64)));
            } else if let Some((line, byte)) = blank {
                return Err(InputError::at(
                    crate::error::ErrorKind::Syntax,
                    path,
                    line,
                    byte,
                    "empty line, expected a name (one per line; a matrix's names are known by \
                     their line)",
                ));
            } else {
                names.push(name);
            }
            at += line.len() + 1;
        }
        Ok(names)
    }

    /// The names of `text`, one per line (`\n` or `\r\n`); blank lines are ignored.
    pub fn from_lines(text: &[u8]) -> Names {
        let mut names = Names {
            text: Vec::with_capacity(text.len()),
            ends: Vec::new(),
        };
        for line in text.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if !line.is_empty() {
                names.push(line);
            }
        }
        names
    }

    /// Appends a name; returns where its bytes start in the buffer (see [`Names::bytes`]).
    pub fn push(&mut self, name: &[u8]) -> usize {
        let start = self.text.len();
        self.text.extend_from_slice(name);
        self.ends.push(self.text.len());
        start
    }

    /// Makes room for `names` more names of `bytes` bytes in all.
    pub fn reserve(&mut self, names: usize, bytes: usize) {
        self.ends.reserve(names);
        self.text.reserve(bytes);
    }

    /// The `len` bytes at `start` of the buffer (a name whose start [`Names::push`] returned).
    #[inline]
    pub fn bytes(&self, start: usize, len: usize) -> &[u8] {
        &self.text[start..start + len]
    }

    /// The number of names.
    #[inline]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there is no name.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Makes room for exactly `names` more names of `bytes` bytes in all.
    pub fn reserve_exact(&mut self, names: usize, bytes: usize) {
        self.ends.reserve_exact(names);
        self.text.reserve_exact(bytes);
    }

    /// The bytes held (allocated capacity).
    pub fn heap_bytes(&self) -> usize {
        self.text.capacity() + self.ends.capacity() * std::mem::size_of::<usize>()
    }

    /// Where name `i`'s end offset lies (for a prefetch; `i` below [`Names::len`]).
    #[inline(always)]
    pub(crate) fn offset_at(&self, i: usize) -> *const usize {
        &self.ends[i]
    }

    /// Where name `i`'s bytes begin (for a prefetch: reads its offsets).
    #[inline(always)]
    pub(crate) fn text_at(&self, i: usize) -> *const u8 {
        self.text[self.start(i)..].as_ptr()
    }

    /// Where name `i` starts in the buffer.
    #[inline(always)]
    pub(crate) fn start(&self, i: usize) -> usize {
        if i == 0 {
            0
        } else {
            self.ends[i - 1]
        }
    }

    /// Name `i`. Panics when `i >= len()`.
    #[inline]
    pub fn get(&self, i: usize) -> &[u8] {
        &self.text[self.start(i)..self.ends[i]]
    }

    /// The names in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

impl<'a> FromIterator<&'a [u8]> for Names {
    fn from_iter<I: IntoIterator<Item = &'a [u8]>>(iter: I) -> Names {
        let mut names = Names::default();
        for name in iter {
            names.push(name);
        }
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_blank_lines_and_crlf() {
        let n = Names::from_lines(b"alpha\r\nbeta\n\ngamma");
        assert_eq!(n.len(), 3);
        assert_eq!(n.get(0), b"alpha");
        assert_eq!(n.get(1), b"beta");
        assert_eq!(n.get(2), b"gamma");
        assert_eq!(
            n.iter().collect::<Vec<_>>(),
            [&b"alpha"[..], b"beta", b"gamma"]
        );
        assert!(Names::from_lines(b"\n\n").is_empty());
    }

    /// A file of names: blank lines at its end are ignored; one before a name is an error naming
    /// its line and byte (the names after it would each name the next row or column).
    #[test]
    fn a_blank_line_between_names_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("names.txt");
        std::fs::write(&p, b"a\r\nb\nc\n\n\r\n").unwrap();
        let n = Names::read(&p).unwrap();
        assert_eq!(n.iter().collect::<Vec<_>>(), [&b"a"[..], b"b", b"c"]);
        for (text, line, byte) in [
            (&b"a\nb\n\nc\n"[..], 3, 4),
            (b"\na\n", 1, 0),
            (b"a\r\n\r\nb", 2, 3),
        ] {
            std::fs::write(&p, text).unwrap();
            let e = Names::read(&p).unwrap_err();
            assert_eq!((e.line, e.byte), (Some(line), Some(byte)), "{e}");
            assert_eq!(e.kind, crate::error::ErrorKind::Syntax);
            assert!(e.to_string().contains("empty line, expected a name"), "{e}");
        }
        std::fs::write(&p, b"\xEF\xBB\xBFa\nb\n").unwrap();
        let e = Names::read(&p).unwrap_err();
        assert!(e.to_string().contains("byte order mark"), "{e}");
    }
}
