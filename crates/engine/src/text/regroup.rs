//! `--regroup`: the whole predictions file in memory, its lines grouped by goal.

use hashbrown::HashMap;
use lemma_ingest::{parse_run_line, GoalKey, Input, InputError};

/// A predictions file with its lines grouped by goal.
pub(super) struct Regrouped {
    /// The lines, grouped.
    pub(super) bytes: Vec<u8>,
    /// The original line number of each line of `bytes`.
    pub(super) line_map: Vec<u64>,
    /// The tag of the file's last run line.
    pub(super) last_tag: Option<Vec<u8>>,
}

/// Reads all of `input` and groups its lines by goal (first appearance order), keeping each goal's
/// lines in file order.
pub(super) fn regroup(input: Input, key: GoalKey) -> Result<Regrouped, InputError> {
    let path = input.path.clone();
    let mut reader = input.reader;
    let mut all = Vec::new();
    std::io::Read::read_to_end(&mut reader, &mut all).map_err(|e| InputError::read(&path, e))?;
    if all.last().is_some_and(|&b| b != b'\n') {
        all.push(b'\n');
    }
    // (goal index, line start, line end, line number) for every line with a goal.
    let mut goal_ids: HashMap<&[u8], u32> = HashMap::new();
    let mut lines: Vec<(u32, usize, usize, u64)> = Vec::new();
    let (mut pos, mut no) = (0usize, 0u64);
    while pos < all.len() {
        let end = memchr::memchr(b'\n', &all[pos..]).map_or(all.len(), |e| pos + e);
        no += 1;
        let g = match key {
            GoalKey::FirstField => lemma_ingest::bytes::first_field(&all[pos..end]),
            GoalKey::Line => Some(&all[pos..end]),
        };
        if let Some(g) = g {
            let n = goal_ids.len() as u32;
            let id = *goal_ids.entry(g).or_insert(n);
            lines.push((id, pos, end, no));
        }
        pos = end + 1;
    }
    let last_tag = lines.last().and_then(|&(_, s, e, _)| {
        parse_run_line(&all[s..e])
            .ok()
            .flatten()
            .map(|l| l.tag.to_vec())
    });
    lines.sort_by_key(|&(g, _, _, n)| (g, n));
    let mut out = Vec::with_capacity(all.len());
    let mut map = Vec::with_capacity(lines.len());
    for &(_, s, e, n) in &lines {
        out.extend_from_slice(&all[s..e]);
        out.push(b'\n');
        map.push(n);
    }
    Ok(Regrouped {
        bytes: out,
        line_map: map,
        last_tag,
    })
}
