//! Shards of one plain file: byte ranges cut at goal boundaries, so that N processes (a Slurm
//! array, `xargs -P`, Ray tasks) each read about 1/N of the file and every goal lies in exactly one
//! shard.
//!
//! Boundary `k` of `n` is the first goal boundary at or after byte `k * size / n`: the start of the
//! first line there whose goal differs from the goal of the line before it (TREC; blank and comment
//! lines go with the goal before them), or the first line start there (JSONL: one goal a line).
//! Shard `i` is `[boundary(i), boundary(i + 1))`. Finding a boundary reads from its offset to the
//! end of the goal found there, nothing before it.

use crate::error::{ErrorKind, InputError};
use crate::fields::first_field;
use crate::input::{next_goal, open_with, Compression, Format, GoalKey, Input, Source};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::Path;

/// Block read at a time while looking for a boundary.
const PROBE: usize = 64 << 10;

/// The byte range of shard `index` (0-based) of `count` in a file of `size` bytes.
pub fn shard_range(
    file: &File,
    size: u64,
    key: GoalKey,
    index: u64,
    count: u64,
) -> std::io::Result<Range<u64>> {
    let at = |k: u64| -> u64 { (size as u128 * k as u128 / count.max(1) as u128) as u64 };
    let start = boundary(file, size, key, at(index))?;
    let end = if index + 1 >= count {
        size
    } else {
        boundary(file, size, key, at(index + 1))?
    };
    Ok(start..end.max(start))
}

/// The first goal boundary at or after `offset`: the first line start there whose line has a goal
/// other than the last goal before it.
fn boundary(file: &File, size: u64, key: GoalKey, offset: u64) -> std::io::Result<u64> {
    if offset == 0 || offset >= size {
        return Ok(offset.min(size));
    }
    let mut buf = vec![0u8; PROBE];
    // The first line start at or after `offset`: after the first newline from `offset - 1` on.
    let mut pos = offset - 1;
    let start = loop {
        let n = read_at(file, &mut buf, pos, size)?;
        if n == 0 {
            return Ok(size);
        }
        if let Some(nl) = memchr::memchr(b'\n', &buf[..n]) {
            break pos + nl as u64 + 1;
        }
        pos += n as u64;
    };
    if key == GoalKey::Line || start >= size {
        return Ok(start.min(size));
    }
    let Some(prev) = last_goal_before(file, start)? else {
        return Ok(start);
    };
    // The lines from `start` on, a window at a time (doubled while one goal fills it).
    let mut window = PROBE;
    loop {
        let mut buf = vec![0u8; window];
        let n = read_at(file, &mut buf, start, size)?;
        buf.truncate(n);
        let at_end = start + n as u64 >= size;
        if at_end && buf.last() != Some(&b'\n') {
            buf.push(b'\n'); // the last line may lack its newline
        }
        if let Some(p) = next_goal(Some(&prev), &buf, 0) {
            return Ok(start + p as u64);
        }
        if at_end {
            return Ok(size);
        }
        window = window.saturating_mul(2);
    }
}

/// The goal of the last line with one before byte `end` (a line start), read backwards.
fn last_goal_before(file: &File, end: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut window = 4096u64;
    loop {
        let from = end.saturating_sub(window);
        let mut buf = vec![0u8; (end - from) as usize];
        let n = read_at(file, &mut buf, from, end)?;
        buf.truncate(n);
        // Whole lines only: from the window's first line start (or the file's start).
        let first = if from == 0 {
            0
        } else {
            match memchr::memchr(b'\n', &buf) {
                Some(p) => p + 1,
                None => buf.len(),
            }
        };
        let lines = &buf[first..];
        let body = lines.strip_suffix(b"\n").unwrap_or(lines);
        if let Some(k) = body.rsplit(|&b| b == b'\n').find_map(first_field) {
            return Ok(Some(k.to_vec()));
        }
        if from == 0 {
            return Ok(None);
        }
        window = window.saturating_mul(2);
    }
}

fn read_at(file: &File, buf: &mut [u8], pos: u64, size: u64) -> std::io::Result<usize> {
    let want = buf
        .len()
        .min(usize::try_from(size - pos).unwrap_or(usize::MAX));
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        let mut got = 0;
        while got < want {
            match file.read_at(&mut buf[got..want], pos + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(got)
    }
    #[cfg(not(unix))]
    {
        let _ = (file, buf, pos, want);
        Err(std::io::Error::other(
            "shards need positional reads (a Unix system)",
        ))
    }
}

/// Shard `index` (0-based) of `count` of a plain (uncompressed) text file, as an input of its
/// own, and the byte its range starts at (for [`shift_error`]).
pub fn open_shard(path: &Path, index: u64, count: u64) -> Result<(Input, u64), InputError> {
    if count == 0 || index >= count {
        return Err(InputError::file(
            ErrorKind::Syntax,
            path,
            format!("shard {} of {count}: expected 1 <= I <= N", index + 1),
        ));
    }
    let whole = open_with(path, false)?;
    let (Some(file), Some(size), Compression::None) =
        (whole.file.clone(), whole.size_on_disk, whole.compression)
    else {
        return Err(InputError::file(
            ErrorKind::Io,
            path,
            "cannot be sharded: a shard is a byte range of a plain (uncompressed) regular file; \
             shard compressed inputs by files",
        ));
    };
    let key = match whole.format {
        Format::Trec => GoalKey::FirstField,
        Format::Jsonl => GoalKey::Line,
    };
    let range =
        shard_range(&file, size, key, index, count).map_err(|e| InputError::read(path, e))?;
    let mut f = File::open(path).map_err(|e| InputError::read(path, e))?;
    f.seek(SeekFrom::Start(range.start))
        .map_err(|e| InputError::read(path, e))?;
    let len = range.end - range.start;
    Ok((
        Input {
            path: path.to_path_buf(),
            reader: Source::stream(BufReader::with_capacity(1 << 20, f.take(len))),
            size_on_disk: Some(len),
            compression: Compression::None,
            format: whole.format,
            map: None,
            file: None,
        },
        range.start,
    ))
}

/// An error found in a shard starting at byte `start` of `path`, with the line and byte numbers
/// of the whole file (the newlines before the shard are counted only now, for the error).
pub fn shift_error(mut e: InputError, path: &Path, start: u64) -> InputError {
    if start == 0 || e.path != path {
        return e;
    }
    if e.line.is_some() || e.first_line.is_some() {
        let before = File::open(path).and_then(|f| {
            let mut r = BufReader::with_capacity(1 << 20, f.take(start));
            let mut buf = vec![0u8; 1 << 20];
            let mut lines = 0u64;
            loop {
                let n = r.read(&mut buf)?;
                if n == 0 {
                    return Ok(lines);
                }
                lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
            }
        });
        if let Ok(before) = before {
            e.line = e.line.map(|l| l + before);
            e.first_line = e.first_line.map(|l| l + before);
        }
    }
    e.byte = e.byte.map(|b| b + start);
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The goals of each shard of `text`, with every byte in exactly one shard.
    fn shards(text: &str, count: u64, key: GoalKey) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run");
        std::fs::write(&p, text).unwrap();
        let f = File::open(&p).unwrap();
        let mut out = Vec::new();
        let mut next = 0;
        for i in 0..count {
            let r = shard_range(&f, text.len() as u64, key, i, count).unwrap();
            assert_eq!(r.start, next, "contiguous");
            next = r.end;
            out.push(text[r.start as usize..r.end as usize].to_string());
        }
        assert_eq!(next, text.len() as u64);
        out
    }

    #[test]
    fn shards_cut_at_goal_boundaries() {
        let text = "a Q0 x 1 1 t\na Q0 y 2 0 t\nb Q0 x 1 1 t\n\nb Q0 y 2 0 t\nc Q0 x 1 1 t\n# c\nd Q0 z 1 1 t";
        for count in 1..=12 {
            let s = shards(text, count, GoalKey::FirstField);
            let mut owner = std::collections::HashMap::new();
            for (i, part) in s.iter().enumerate() {
                for g in part.lines().filter_map(|l| first_field(l.as_bytes())) {
                    assert_eq!(*owner.entry(g.to_vec()).or_insert(i), i, "{count}: {s:?}");
                }
            }
            assert_eq!(owner.len(), 4);
        }
        // Two shards of four goals of equal size: the cut is at the middle goal boundary.
        let even = "a 0 x 1\nb 0 x 1\nc 0 x 1\nd 0 x 1\n";
        assert_eq!(
            shards(even, 2, GoalKey::FirstField),
            ["a 0 x 1\nb 0 x 1\n", "c 0 x 1\nd 0 x 1\n"]
        );
        // JSONL: line starts.
        let jsonl = "{\"goal\":\"a\"}\n{\"goal\":\"b\"}\n{\"goal\":\"c\"}";
        let s = shards(jsonl, 3, GoalKey::Line);
        assert_eq!(s.concat(), jsonl);
        assert!(s.iter().all(|p| p.is_empty() || p.starts_with('{')));
    }

    #[test]
    fn errors_carry_the_whole_files_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run");
        std::fs::write(&p, "a 0 x 1\nb 0 x 1\nc 0 x 1\n").unwrap();
        let e = InputError::file(ErrorKind::Syntax, &p, "bad");
        let e = InputError {
            line: Some(1),
            byte: Some(0),
            ..e
        };
        let e = shift_error(e, &p, 16);
        assert_eq!((e.line, e.byte), (Some(3), Some(16)));
        let (input, start) = open_shard(&p, 1, 3).unwrap();
        assert_eq!((start, input.size_on_disk), (8, Some(8)));
        assert!(open_shard(&p, 3, 3).is_err());
    }
}
