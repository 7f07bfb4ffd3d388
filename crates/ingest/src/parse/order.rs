//! Orders of goal names: bytes (`LC_ALL=C sort`) and natural (numbered goals without padding).
//! Pure: no I/O.

use std::cmp::Ordering;

/// An order of goal names.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GoalOrder {
    /// Byte by byte (`LC_ALL=C sort`).
    Bytes,
    /// Runs of ASCII digits compared as numbers (`g9` < `g10`; `g010` < `g10`, equal in value, by
    /// bytes), the rest byte by byte: the order of numbered goals written without padding.
    Natural,
}

impl GoalOrder {
    /// `a` against `b`; `Equal` only for equal names.
    #[inline]
    pub fn cmp(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            GoalOrder::Bytes => a.cmp(b),
            GoalOrder::Natural => natural_cmp(a, b),
        }
    }
}

/// Natural order: digit runs by value (fewer significant digits first, then digit by digit),
/// other bytes by value; names equal so far (`7` and `07`) by bytes.
pub(crate) fn natural_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
            let run = |s: &[u8], k: usize| {
                let end = s[k..]
                    .iter()
                    .position(|c| !c.is_ascii_digit())
                    .map_or(s.len(), |e| k + e);
                let first = s[k..end]
                    .iter()
                    .position(|&c| c != b'0')
                    .map_or(end, |e| k + e);
                (first, end)
            };
            let ((sa, ea), (sb, eb)) = (run(a, i), run(b, j));
            let by_value = (ea - sa).cmp(&(eb - sb)).then(a[sa..ea].cmp(&b[sb..eb]));
            if by_value != Ordering::Equal {
                return by_value;
            }
            (i, j) = (ea, eb);
        } else {
            match a[i].cmp(&b[j]) {
                Ordering::Equal => (i, j) = (i + 1, j + 1),
                o => return o,
            }
        }
    }
    ((a.len() - i).cmp(&(b.len() - j))).then(a.cmp(b))
}
