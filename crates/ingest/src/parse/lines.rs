//! Lines of TREC-shaped text (qrels, runs) found in a buffer: each line in order, the first real
//! line (one with a goal) from a place, where each goal's lines begin. Pure: no I/O.

use crate::fields::{first_field, starts_with_field};
use std::ops::Range;

/// Where each goal's lines begin in `bytes` (grouped qrels): the starts of the lines with a goal
/// that differs from the last goal before them.
pub(crate) fn goal_starts(bytes: &[u8]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut last: Option<&[u8]> = None;
    each_line(bytes, 0..bytes.len(), |at, nl| {
        let line = &bytes[at..nl];
        // Most lines repeat the goal before: one comparison of its bytes.
        if last.is_some_and(|l| starts_with_field(line, l)) {
            return true;
        }
        if let Some(g) = first_field(line) {
            if last != Some(g) {
                starts.push(at);
                last = Some(g);
            }
        }
        true
    });
    starts
}

/// The lines of `bytes` split at each `\n`, with each one's 1-based number and the byte it starts
/// at: how the small files read whole (judgment groups, z-scores) are walked.
pub(crate) fn numbered_lines(bytes: &[u8]) -> impl Iterator<Item = (u64, u64, &[u8])> {
    let lines = bytes.split(|&b| b == b'\n').enumerate();
    lines.scan(0u64, |byte, (k, line)| {
        let at = *byte;
        *byte += line.len() as u64 + 1;
        Some((k as u64 + 1, at, line))
    })
}

/// Calls `f(start, end)` for each line of `buf[range]` in order (`range` begins where a line
/// does; `end` is the line's newline or `range.end`) while `f` returns `true`; `false` if it
/// stopped. The newlines are found 64 bytes at a time as a bitmap (SSE2), not by a search per
/// line: qrels lines are short.
#[inline(always)]
pub(crate) fn each_line(
    buf: &[u8],
    range: Range<usize>,
    mut f: impl FnMut(usize, usize) -> bool,
) -> bool {
    let mut start = range.start;
    // Where the bitmaps end: every newline before it has been given to `f`.
    #[allow(unused_mut)]
    let mut block = range.start;
    #[cfg(target_arch = "x86_64")]
    while block + 64 <= range.end {
        let (_, mut newlines, _) = crate::fields::simd::masks(buf, block);
        while newlines != 0 {
            let end = block + newlines.trailing_zeros() as usize;
            if !f(start, end) {
                return false;
            }
            start = end + 1;
            newlines &= newlines - 1;
        }
        block += 64;
    }
    while start < range.end {
        let from = block.max(start);
        let end = memchr::memchr(b'\n', &buf[from..range.end]).map_or(range.end, |p| from + p);
        if !f(start, end) {
            return false;
        }
        start = end + 1;
    }
    true
}

/// The first real line (one with a goal) starting in `[at, end)`, `at` a line start: (start,
/// newline or end of buffer, goal).
pub(crate) fn real_line(buf: &[u8], at: usize, end: usize) -> Option<(usize, usize, &[u8])> {
    let mut start = at;
    while start < end {
        let nl = memchr::memchr(b'\n', &buf[start..]).map_or(buf.len(), |p| start + p);
        if let Some(g) = first_field(&buf[start..nl]) {
            return Some((start, nl, g));
        }
        start = nl + 1;
    }
    None
}
