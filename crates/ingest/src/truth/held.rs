//! The fast path of [`ActualSets::parse`] for TREC qrels whose goals come grouped (each goal's
//! lines together, the usual shape): the text is cut at goal boundaries into one part per
//! thread, each part read on its own thread into a part-local lemma interner, then the parts are
//! joined.
//!
//! ```text
//!  text ─cut at goal ends─▶ part 0 │ part 1 │ …   (one thread each: split lines, intern lemmas)
//!                              │
//!        ┌─────────────────────┴─────────────────────┐
//!   goal interner (in order, exactly reserved)   lemma ids mapped to the first part's
//!   on this thread                               interner, each goal sorted (a thread a part)
//! ```
//!
//! The result is exactly what the general path builds: lemma ids in order of first appearance
//! in the file (the first part's interner is kept; a later part's new names are interned after
//! it, in that part's order, which is the file's), goal ids likewise, each goal's judgments
//! sorted by lemma id. Anything the general path would treat otherwise gives `None` and the
//! caller reads the text again by the general path, which words every error: a line that is not
//! `goal iter lemma grade` with an integer grade, invalid UTF-8, a goal that comes back after
//! other goals, a lemma judged twice for a goal.

use super::{name_hash, table_size, ActualSets, Interner, Slot, EMPTY};
use crate::fields::prefetch;
use crate::fields::{is_space, next_delim, parse_grade, same_bytes, split_line_checked};
use crate::names::Names;
use memmap2::Mmap;

/// Below this many bytes the text is read as one part (threads cost more than they save).
const PART_MIN: usize = 4 << 20;
/// Lemma names interned together (their table slots and names fetched ahead).
const PENDING: usize = 1024;

/// One part of the text read: its goals in order, their judgments as part-local lemma ids.
#[derive(Default)]
struct Part {
    lemmas: Interner,
    /// The goals' names, in order of their lines: copied, so that the join reads no page of a
    /// mapped text again (pages read are let go).
    goals: Names,
    /// Their hashes ([`name_hash`]).
    goal_hashes: Vec<u64>,
    /// Where each goal's judgments start in `ids`.
    starts: Vec<usize>,
    /// Where each goal's first line starts in the text, when asked for ([`parse_one`]).
    first_lines: Vec<usize>,
    /// Judged lemmas (part-local ids), each goal's in line order.
    ids: Vec<u32>,
    /// Grades beside `ids` once some grade is not 1 (empty while every grade is 1).
    grades: Vec<i32>,
    positive_rows: u64,
}

impl Part {
    /// Whether some grade is not 1.
    fn graded(&self) -> bool {
        !self.grades.is_empty()
    }

    /// The judgments of goal `i` of the part: `ids` range.
    fn range(&self, i: usize) -> std::ops::Range<usize> {
        self.starts[i]..self.starts.get(i + 1).copied().unwrap_or(self.ids.len())
    }
}

/// The actual sets of `all` (qrels), or `None` when the general path must read them (see the
/// [module documentation](self)). `map`: `all` is this mapping, whose pages are let go behind
/// the reading. `threads`: how many parts at most.
pub(super) fn parse(all: &[u8], map: Option<&Mmap>, threads: usize) -> Option<ActualSets> {
    parse_in(all, map, threads, PART_MIN)
}

/// [`parse`] on this thread, with where each goal's first line begins in `all` (goal `g`'s at
/// `[g]`): what a caller that cuts a text into goals' lines would otherwise find by reading the
/// lines again.
///
/// The lemmas are *listed*, not interned ([`Interner::push_listed`]): each judgment its own id,
/// in line order, so each goal's ids ascend and lie together. A batch's sets are read by id alone
/// (one goal after another), so the table lookup a judgment costs is spared; a lemma judged twice
/// for a goal is found by comparing the goal's names (`None`, as for any other refusal).
pub(super) fn parse_one(all: &[u8]) -> Option<(ActualSets, Vec<usize>)> {
    let mut part = read_part(all, 0, all.len(), None, true)?;
    let first_lines = std::mem::take(&mut part.first_lines);
    Some((join(vec![part], 1)?, first_lines))
}

/// [`parse`] with parts of at least `part_min` bytes.
fn parse_in(all: &[u8], map: Option<&Mmap>, threads: usize, part_min: usize) -> Option<ActualSets> {
    let cuts = cuts(all, threads.clamp(1, 64), part_min);
    let parts = on_threads(cuts.windows(2).collect(), |w| {
        read_part(all, w[0], w[1], map, false)
    });
    let parts = parts.into_iter().collect::<Option<Vec<Part>>>()?;
    // A small text (one part) is joined on this thread alone.
    let threads = if parts.len() == 1 { 1 } else { threads };
    join(parts, threads.clamp(1, 64))
}

/// `f` of every item, each on a thread of its own (on this thread when there is one), in order.
fn on_threads<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    lemma_par::Ordered::new(items.len()).map(items, f)
}

/// One of two tasks done side by side: `S` the sorting's, `G` the goal table's.
enum Either<S, G> {
    Sort(S),
    Goals(G),
}

/// Where the parts begin, and the text's end: line starts near equal shares of `all`, each moved
/// on to where a goal's lines begin (a goal is never split between two parts).
fn cuts(all: &[u8], threads: usize, part_min: usize) -> Vec<usize> {
    let parts = threads.min(all.len() / part_min.max(1)).max(1);
    let mut cuts = vec![0];
    for k in 1..parts {
        let want = (all.len() / parts * k).max(*cuts.last().expect("one cut"));
        let Some(at) = next_goal(all, want) else {
            break;
        };
        if at > *cuts.last().expect("one cut") && at < all.len() {
            cuts.push(at);
        }
    }
    cuts.push(all.len());
    cuts
}

/// The first line start at or after `from` (a line start itself, or after the next newline)
/// where a goal's lines begin: a line with a goal (not blank, not a comment) whose goal differs
/// from the one of the last such line before it. `None` at the text's end.
fn next_goal(all: &[u8], from: usize) -> Option<usize> {
    let next_line = |at: usize| memchr::memchr(b'\n', &all[at..]).map(|e| at + e + 1);
    // The goal of the line at `at`, or `None` for a blank or comment line.
    let goal = |at: usize| {
        let start = (at..all.len())
            .find(|&i| !is_space(all[i]))
            .unwrap_or(all.len());
        let field = &all[start..next_delim(all, start)];
        (!field.is_empty() && field[0] != b'#').then_some(field)
    };
    let mut at = if from == 0 || all[from - 1] == b'\n' {
        from
    } else {
        next_line(from)?
    };
    // The last goal before `at`: lines walked back over blank and comment lines.
    let mut prev = None;
    let mut back = at;
    while back > 0 && prev.is_none() {
        back = memchr::memrchr(b'\n', &all[..back - 1]).map_or(0, |p| p + 1);
        prev = goal(back);
    }
    while at < all.len() {
        if let Some(g) = goal(at) {
            if prev.is_some_and(|p| p != g) || prev.is_none() {
                return Some(at);
            }
            prev = Some(g);
        }
        at = next_line(at)?;
    }
    None
}

/// Reads the lines of `all[start..end]` into a part; `None`: a line the general path must read.
/// `batch`: note where each goal's first line begins, and list the lemmas rather than intern
/// them ([`parse_one`]).
fn read_part(
    all: &[u8],
    start: usize,
    end: usize,
    map: Option<&Mmap>,
    batch: bool,
) -> Option<Part> {
    let text = &all[..end];
    let mut p = Part::default();
    if batch {
        // A name a judgment: room for about one a 24 bytes, and for their bytes (at most the
        // text's), so that the lists never move while they grow.
        p.lemmas.reserve_listed((end - start) / 24, end - start);
    } else {
        p.lemmas.reserve(((end - start) / 32).min(1 << 17));
    }
    p.ids.reserve((end - start) / 24);
    let mut pending: Vec<&[u8]> = Vec::with_capacity(PENDING);
    let mut judgments = 0usize;
    let mut pos = start;
    // The mapped pages read are let go behind (a part's own range).
    let mut behind = crate::input::PagesBehind::new(map, start);
    while pos < end {
        behind.at(pos);
        let mut f = [&b""[..]; 4];
        let line_start = pos;
        let ((count, line_end), utf8) = split_line_checked(text, pos, &mut f);
        pos = line_end + 1;
        if utf8.is_err() {
            return None;
        }
        if count == 0 || f[0].first() == Some(&b'#') {
            continue;
        }
        if count != 4 {
            return None;
        }
        let grade = parse_grade(f[3])?;
        let n = p.goals.len();
        if n == 0 || !same_bytes(p.goals.get(n - 1), f[0]) {
            p.goals.push(f[0]);
            p.goal_hashes.push(name_hash(f[0]));
            p.starts.push(judgments);
            if batch {
                p.first_lines.push(line_start);
            }
        }
        if grade != 1 || p.graded() {
            // From the first grade other than 1 on; the lines before it had 1.
            p.grades.resize(judgments, 1);
            p.grades.push(grade);
        }
        p.positive_rows += u64::from(grade > 0);
        judgments += 1;
        if batch {
            p.ids.push(p.lemmas.push_listed(name_hash(f[2]), f[2]));
            continue;
        }
        pending.push(f[2]);
        if pending.len() == PENDING {
            p.lemmas.intern_many(&pending, &mut p.ids);
            pending.clear();
        }
    }
    p.lemmas.intern_many(&pending, &mut p.ids);
    Some(p)
}

/// The parts as one set of actual sets; `None`: a goal in two places, or a lemma judged twice.
fn join(mut parts: Vec<Part>, threads: usize) -> Option<ActualSets> {
    // The lemmas: the first part's interner, the later parts' names interned after it in order.
    let mut lemmas = std::mem::take(&mut parts[0].lemmas);
    let mut remaps: Vec<Vec<u32>> = vec![Vec::new()];
    for p in &parts[1..] {
        let names: Vec<&[u8]> = (0..p.lemmas.len() as u32)
            .map(|i| p.lemmas.name(i))
            .collect();
        let mut remap = Vec::with_capacity(names.len());
        // In chunks: the table grows for what is new, not for every name of the part.
        for chunk in names.chunks(PENDING) {
            lemmas.intern_many(chunk, &mut remap);
        }
        remaps.push(remap);
    }
    let goal_count: usize = parts.iter().map(|p| p.starts.len()).sum();
    // The goals' names and hashes, moved out for the goal table while the parts are sorted.
    let goal_lists: Vec<(Names, Vec<u64>)> = (parts.iter_mut())
        .map(|p| {
            (
                std::mem::take(&mut p.goals),
                std::mem::take(&mut p.goal_hashes),
            )
        })
        .collect();
    let judgments: usize = parts.iter().map(|p| p.ids.len()).sum();
    let graded = parts.iter().any(Part::graded);
    let mut ids = vec![0u32; judgments];
    let (mut grades, mut grades_desc) = if graded {
        (vec![1i32; judgments], vec![1i32; judgments])
    } else {
        (Vec::new(), Vec::new())
    };
    // Each part's judgments mapped and sorted into its own share of the arrays (a thread a
    // part), while this thread fills the goal table.
    let mut jobs = Vec::with_capacity(parts.len());
    let (mut ids_rest, mut grades_rest, mut desc_rest) =
        (&mut ids[..], &mut grades[..], &mut grades_desc[..]);
    for (p, remap) in parts.iter().zip(&remaps) {
        let n = p.ids.len();
        let (i, r) = std::mem::take(&mut ids_rest).split_at_mut(n);
        ids_rest = r;
        let (g, d) = if graded {
            let (g, gr) = std::mem::take(&mut grades_rest).split_at_mut(n);
            grades_rest = gr;
            let (d, dr) = std::mem::take(&mut desc_rest).split_at_mut(n);
            desc_rest = dr;
            (Some(g), Some(d))
        } else {
            (None, None)
        };
        jobs.push((p, &remap[..], i, g, d));
    }
    // A listed interner (a batch's, one part) holds a goal's repeated lemma under two ids.
    let listed = lemmas.is_listed().then_some(&lemmas);
    let sort = |(p, remap, i, g, d)| sort_part(p, remap, listed, i, g, d);
    let (goals, sorted) = if jobs.len() == 1 {
        // One part (a small text): no thread.
        let sorted = jobs.into_iter().all(sort);
        (intern_goals(goal_lists, threads), sorted)
    } else {
        // The sorting (a thread a part) beside the goal table (`threads` threads of its own).
        let both = on_threads(
            vec![Either::Sort(jobs), Either::Goals(goal_lists)],
            |task| match task {
                Either::Sort(jobs) => Either::Sort(on_threads(jobs, sort).into_iter().all(|ok| ok)),
                Either::Goals(lists) => Either::Goals(intern_goals(lists, threads)),
            },
        );
        let (mut goals, mut sorted) = (None, false);
        for done in both {
            match done {
                Either::Sort(ok) => sorted = ok,
                Either::Goals(g) => goals = g,
            }
        }
        (goals, sorted)
    };
    if !sorted {
        return None;
    }
    let goals = goals?;
    let mut starts = Vec::with_capacity(goal_count + 1);
    let mut at = 0u64;
    let mut longest = 0;
    for p in &parts {
        for i in 0..p.starts.len() {
            starts.push(at);
            let n = p.range(i).len();
            longest = longest.max(n);
            at += n as u64;
        }
    }
    starts.push(at);
    Some(ActualSets {
        lemmas,
        goals,
        starts,
        ids,
        graded,
        grades,
        grades_desc,
        ones: vec![1; longest],
        positive_rows: parts.iter().map(|p| p.positive_rows).sum(),
        rows: judgments as u64,
    })
}

/// The goals of every part, as an interner whose ids follow the parts' order; `None` if a goal
/// comes twice (`lists`: each part's goal names and hashes, in order). The table is filled by `threads`
/// threads at once, each taking the goals whose probe starts in its share of the slots (one read
/// of the hashes in order, its own share's slots fetched ahead: a table of millions of goals is
/// far larger than the caches). A probe that would leave its share is finished on this thread at
/// the end, as a lookup would continue it (linear probing past the share's end, wrapping).
fn intern_goals(lists: Vec<(Names, Vec<u64>)>, threads: usize) -> Option<Interner> {
    let mut lists = lists.into_iter();
    // The first part's names and hashes, the others' appended.
    let (mut names, mut hashes) = lists.next().unwrap_or_default();
    let rest: Vec<_> = lists.collect();
    let more = rest.iter().map(|l| l.1.len()).sum();
    let bytes = rest.iter().flat_map(|l| l.0.iter()).map(|g| g.len()).sum();
    names.reserve_exact(more, bytes);
    hashes.reserve_exact(more);
    for (n, h) in &rest {
        n.iter().for_each(|g| {
            names.push(g);
        });
        hashes.extend_from_slice(h);
    }
    let count = hashes.len();
    assert!(count < u32::MAX as usize, "more than 2^32 - 1 goals");
    let size = table_size(count);
    let mask = size - 1;
    let share = size.div_ceil(threads);
    let mut slots = vec![EMPTY; size];
    let shares: Vec<_> = slots.chunks_mut(share).enumerate().collect();
    let (n, h) = (&names, &hashes);
    let overflow = on_threads(shares, |(t, own)| fill_share(n, h, own, t * share, mask));
    let overflow = overflow.into_iter().collect::<Option<Vec<Vec<u32>>>>()?;
    let mut goals = Interner {
        slots,
        names,
        hashes,
        listed: false,
    };
    for id in overflow.into_iter().flatten() {
        let (h, name) = (goals.hashes[id as usize], goals.names.get(id as usize));
        match goals.find(h, name) {
            Ok(_) => return None,
            Err(i) => goals.slots[i] = Slot::new(h, id, goals.names.start(id as usize), name.len()),
        }
    }
    Some(goals)
}

/// Fills `own`, the table's slots from `lo` on, with the goals whose probe starts there (hashes
/// `hashes`, names `names`, ids in order); the ids of those whose probe would leave it, or
/// `None` if a goal comes twice.
fn fill_share(
    names: &Names,
    hashes: &[u64],
    own: &mut [Slot],
    lo: usize,
    mask: usize,
) -> Option<Vec<u32>> {
    let hi = lo + own.len();
    let mut over = Vec::new();
    for (id, &h) in hashes.iter().enumerate() {
        if let Some(&ahead) = hashes.get(id + 32) {
            let home = ahead as usize & mask;
            if (lo..hi).contains(&home) {
                prefetch(&own[home - lo]);
            }
        }
        let home = h as usize & mask;
        if !(lo..hi).contains(&home) {
            continue;
        }
        let mut i = home;
        loop {
            if i == hi {
                over.push(id as u32);
                break;
            }
            let slot = &own[i - lo];
            if slot.is_empty() {
                let name = names.get(id);
                own[i - lo] = Slot::new(h, id as u32, names.start(id), name.len());
                break;
            }
            if slot.tag_matches(h) && same_bytes(names.get(slot.id() as usize), names.get(id)) {
                return None;
            }
            i += 1;
        }
    }
    Some(over)
}

/// Part `p`'s judgments, lemma ids mapped by `remap` (none: the ids are kept), each goal's sorted
/// by lemma id into `ids` (with `grades` beside them, and `desc` each goal's grades sorted
/// descending, when graded); `false` if a goal judges a lemma twice (`listed`: the ids are of
/// this listed interner, where a repeat has an id of its own, so the names are compared).
fn sort_part(
    p: &Part,
    remap: &[u32],
    listed: Option<&Interner>,
    ids: &mut [u32],
    grades: Option<&mut [i32]>,
    desc: Option<&mut [i32]>,
) -> bool {
    let map = |l: u32| {
        if remap.is_empty() {
            l
        } else {
            remap[l as usize]
        }
    };
    // Interned ids are sorted, and a repeat is an id twice; listed ids are already in order
    // (line order), each its own, and a repeat is found by name.
    let repeated = |goal: &[u32]| match listed {
        Some(l) => repeats(l, goal),
        None => goal.windows(2).any(|w| w[0] == w[1]),
    };
    match (grades, desc) {
        (Some(grades), Some(desc)) => {
            let mut pairs: Vec<(u32, i32)> = Vec::new();
            for i in 0..p.starts.len() {
                let r = p.range(i);
                pairs.clear();
                pairs.extend(r.clone().map(|j| {
                    let g = if p.graded() { p.grades[j] } else { 1 };
                    (map(p.ids[j]), g)
                }));
                if listed.is_none() {
                    pairs.sort_unstable_by_key(|&(l, _)| l);
                }
                for (k, &(l, g)) in r.clone().zip(&pairs) {
                    ids[k] = l;
                    grades[k] = g;
                    desc[k] = g;
                }
                if repeated(&ids[r.clone()]) {
                    return false;
                }
                desc[r].sort_unstable_by(|a, b| b.cmp(a));
            }
        }
        _ => {
            for i in 0..p.starts.len() {
                let r = p.range(i);
                let goal = &mut ids[r.clone()];
                for (slot, &l) in goal.iter_mut().zip(&p.ids[r]) {
                    *slot = map(l);
                }
                if listed.is_none() {
                    goal.sort_unstable();
                }
                if repeated(goal) {
                    return false;
                }
            }
        }
    }
    true
}

/// Whether two of one goal's judgments `ids` in a listed interner name the same lemma: their
/// hashes compared pairwise in a small goal, sorted with their names in a larger one.
fn repeats(lemmas: &Interner, ids: &[u32]) -> bool {
    const PAIRWISE: usize = 16;
    let same = |a: u32, b: u32| {
        lemmas.hash_of(a) == lemmas.hash_of(b) && same_bytes(lemmas.name(a), lemmas.name(b))
    };
    if ids.len() <= PAIRWISE {
        // The hashes read once (a listed goal's lie together), compared pairwise.
        let mut hashes = [0u64; PAIRWISE];
        for (h, &id) in hashes.iter_mut().zip(ids) {
            *h = lemmas.hash_of(id);
        }
        return (1..ids.len()).any(|i| {
            (0..i).any(|j| {
                hashes[i] == hashes[j] && same_bytes(lemmas.name(ids[i]), lemmas.name(ids[j]))
            })
        });
    }
    let mut by: Vec<(u64, u32)> = ids.iter().map(|&id| (lemmas.hash_of(id), id)).collect();
    // Equal names sort next to each other (equal hashes ordered by their names).
    by.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| lemmas.name(a.1).cmp(lemmas.name(b.1)))
    });
    by.windows(2).any(|w| same(w[0].1, w[1].1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Format;
    use proptest::prelude::*;
    use std::path::Path;

    /// Everything a reader of the sets can see: names by id, each goal's judgments and sorted
    /// grades, the counts.
    type View = (
        Vec<Vec<u8>>,
        Vec<Vec<u8>>,
        Vec<Vec<(u32, i32)>>,
        Vec<Vec<i32>>,
        bool,
        u64,
        u64,
    );

    fn view(s: &ActualSets) -> View {
        let names = |i: &Interner| (0..i.len() as u32).map(|k| i.name(k).to_vec()).collect();
        (
            names(&s.lemmas),
            names(&s.goals),
            s.truths().map(|t| t.entries().collect()).collect(),
            s.truths().map(|t| t.grades_desc().to_vec()).collect(),
            s.graded,
            s.rows,
            s.positive_rows,
        )
    }

    /// [`view`] by name: each goal's judgments as (lemma name, grade), sorted, for sets whose
    /// lemma ids differ (a batch's listed lemmas against the general path's interned ones).
    type NamedView = (
        Vec<Vec<u8>>,
        Vec<Vec<(Vec<u8>, i32)>>,
        Vec<Vec<i32>>,
        bool,
        u64,
        u64,
    );

    fn named_view(s: &ActualSets) -> NamedView {
        let v = view(s);
        let judged = (s.truths())
            .map(|t| {
                let mut j: Vec<_> = (t.entries())
                    .map(|(id, g)| (s.lemmas.name(id).to_vec(), g))
                    .collect();
                j.sort();
                j
            })
            .collect();
        (v.1, judged, v.3, v.4, v.5, v.6)
    }

    /// A qrels text: goals (each a goal name and its judgments), a line each judgment, with
    /// blank and comment lines and a bad line where asked.
    fn text(goals: &[(u8, Vec<(u8, i32)>)], extra: &[(usize, u8)]) -> String {
        let mut lines = Vec::new();
        for (g, judged) in goals {
            for (l, grade) in judged {
                lines.push(format!("g{g} 0 Lemma.l{l} {grade}"));
            }
        }
        for &(at, what) in extra {
            let line = match what {
                0 => String::new(),
                1 => "# a comment".to_string(),
                2 => "  ".to_string(),
                3 => "g1 0 Lemma.l1".to_string(),
                4 => "g1 0 Lemma.l1 x".to_string(),
                _ => "g1\t0\tLemma.l2\t1".to_string(),
            };
            lines.insert(at.min(lines.len()), line);
        }
        lines.join("\n") + "\n"
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// The fast path, cut into parts of every size, reads what the general path reads, or
        /// leaves the text to it: always where the general path finds an error, never where the
        /// goals come grouped and every line is of the usual shape.
        #[test]
        fn parts_read_what_the_general_path_reads(
            goals in proptest::collection::vec(
                (0u8..12, proptest::collection::vec((0u8..10, prop_oneof![4 => Just(1), 1 => -1i32..4]), 0..6)),
                0..10,
            ),
            extra in proptest::collection::vec((0usize..60, 0u8..6), 0..3),
            threads in 1usize..5,
            part_min in 1usize..200,
        ) {
            let t = text(&goals, &extra);
            let general = ActualSets::parse_general(Path::new("q"), Format::Trec, t.as_bytes(), None);
            let fast = parse_in(t.as_bytes(), None, threads, part_min);
            // Read whole on this thread, with where each goal's lines begin: the sets of the
            // general path, and the lines whose first word differs from the last line's before
            // them (blank and comment lines passed over), found by splitting the text anew;
            // `parse::lines::goal_starts`, which serves the general path, finds the same.
            // Its lemmas are listed: a name per judgment, each goal's ids ascending.
            let one = parse_one(t.as_bytes());
            prop_assert_eq!(one.is_some(), fast.is_some());
            if let Some((one, lines)) = one {
                prop_assert_eq!(named_view(general.as_ref().unwrap()), named_view(&one));
                prop_assert_eq!(one.lemmas.len(), one.judgments());
                for t in one.truths() {
                    prop_assert!(t.judged().windows(2).all(|w| w[1] == w[0] + 1));
                }
                let mut want = Vec::new();
                let (mut at, mut last) = (0, None);
                for line in t.split_inclusive('\n') {
                    let first = line.split_whitespace().next().filter(|w| !w.starts_with('#'));
                    if first.is_some() && first != last {
                        want.push(at);
                        last = first;
                    }
                    at += line.len();
                }
                prop_assert_eq!(&lines, &want);
                prop_assert_eq!(crate::parse::lines::goal_starts(t.as_bytes()), want);
            }
            match (&general, &fast) {
                (Ok(g), Some(f)) => prop_assert_eq!(view(g), view(f)),
                (Err(_), Some(_)) => prop_assert!(false, "the fast path read a text with an error"),
                (_, None) => {
                    // Left to the general path: only for a goal back after others, a lemma
                    // judged twice, or a line not of the usual shape.
                    // The goals' runs of lines (entries of one name next to each other merge).
                    let mut runs: Vec<(u8, Vec<u8>)> = Vec::new();
                    for (g, j) in goals.iter().filter(|(_, j)| !j.is_empty()) {
                        match runs.last_mut() {
                            Some((last, l)) if last == g => l.extend(j.iter().map(|x| x.0)),
                            _ => runs.push((*g, j.iter().map(|x| x.0).collect())),
                        }
                    }
                    let mut seen = std::collections::HashSet::new();
                    let grouped = runs.iter().all(|(g, _)| seen.insert(*g));
                    let distinct = runs.iter().all(|(_, l)| {
                        let mut l = l.clone();
                        l.sort_unstable();
                        l.windows(2).all(|w| w[0] != w[1])
                    });
                    let usual = extra.iter().all(|e| e.1 <= 2);
                    prop_assert!(!(grouped && distinct && usual), "left a usual text: {t:?}");
                }
            }
        }
    }

    #[test]
    fn repeats_are_found_by_name_in_goals_of_every_size() {
        for n in [1u32, 2, 15, 16, 17, 40, 300] {
            let names: Vec<String> = (0..n).map(|i| format!("Lemma.l{i}")).collect();
            let mut l = Interner::new();
            for name in &names {
                l.push_listed(name_hash(name.as_bytes()), name.as_bytes());
            }
            assert!(
                !repeats(&l, &(0..n).collect::<Vec<_>>()),
                "{n} distinct names"
            );
            for at in [0, n / 2, n - 1] {
                let mut again = l.clone();
                let name = names[at as usize].as_bytes();
                again.push_listed(name_hash(name), name);
                let all: Vec<u32> = (0..n + 1).collect();
                assert!(repeats(&again, &all), "{n} names, the one at {at} again");
                // Not among the ids asked about: no repeat.
                let but: Vec<u32> = all.iter().copied().filter(|&i| i != at).collect();
                assert!(!repeats(&again, &but));
            }
        }
        // Equal hashes are not equal names (a collision), in small goals and large: only the
        // names decide, however the colliding names are ordered.
        for n in [3u32, 30] {
            let mut l = Interner::new();
            for i in 0..n {
                l.push_listed(7, format!("n{}", (i * 7) % n).as_bytes());
            }
            let all: Vec<u32> = (0..n + 1).collect();
            assert!(!repeats(&l, &all[..n as usize]), "{n} names of one hash");
            l.push_listed(7, b"n1");
            assert!(repeats(&l, &all), "{n} names of one hash, n1 again");
        }
    }

    #[test]
    fn a_listed_interner_finds_names_and_indexes_them_when_interned_into() {
        let mut l = Interner::new();
        for name in ["a", "b", "a", "c"] {
            l.push_listed(name_hash(name.as_bytes()), name.as_bytes());
        }
        assert!(l.is_listed());
        assert_eq!(
            (l.len(), l.name(2), l.hash_of(3)),
            (4, &b"a"[..], name_hash(b"c"))
        );
        assert_eq!(
            (l.get(b"a"), l.get(b"c"), l.get(b"d")),
            (Some(0), Some(3), None)
        );
        // Interning indexes the list: a listed name keeps its first id, a new one comes after.
        assert_eq!((l.intern(b"c"), l.intern(b"a"), l.intern(b"d")), (3, 0, 4));
        assert!(!l.is_listed());
        let mut ids = Vec::new();
        l.intern_many(&[b"b", b"e", b"d"], &mut ids);
        assert_eq!(ids, [1, 5, 4]);
        assert_eq!((l.get(b"b"), l.get(b"e")), (Some(1), Some(5)));
    }

    #[test]
    fn cuts_fall_where_goals_begin() {
        let t = b"a 0 x 1\na 0 y 1\nb 0 x 1\nb 0 z 1\nb 0 w 1\nc 0 x 1\n";
        // Shares of 16 bytes: the first cut moves on from the middle of `a`'s second line to
        // `b`'s first, the second from `b`'s second to `c`'s.
        assert_eq!(cuts(t, 3, 16), vec![0, 16, 40, 48]);
        // One goal throughout: no cut.
        assert_eq!(cuts(b"a 0 x 1\na 0 y 1\na 0 z 1\n", 3, 1), vec![0, 24]);
        assert_eq!(cuts(t, 1, 1), vec![0, 48]);
    }
}
