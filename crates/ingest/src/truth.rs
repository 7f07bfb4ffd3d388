//! Actual sets in memory: interned lemma ids in roaring bitmaps, grades where they are not binary.
//!
//! Only lemmas named by some actual set are interned; a predicted lemma the interner has never seen
//! is unjudged (non-relevant) for every goal and is never stored. Lookups hash a name once
//! ([`Interner::hash`]) so that the caller can reuse the hash (for duplicate detection, say).

use crate::error::{ErrorKind, InputError};
use crate::fields::{parse_grade, same_bytes, show, split_line_checked};
use crate::input::{Format, Input};
use crate::names::Names;
use crate::run::PremiseRef;
use hashbrown::HashTable;
use roaring::RoaringBitmap;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

/// The hash of a lemma or goal name, computed once per ranked line.
///
/// Folded multiplies (the 128-bit product's halves XORed, as foldhash and wyhash do) over 8-byte
/// words: a name of up to 16 bytes is two overlapping words and two multiplies; one of 17 to 32
/// bytes (most lemma names) its first and last 16 bytes in two independent multiplies; a longer
/// one one multiply per 16 bytes plus the last 16. Called directly on the bytes, it skips the
/// `Hasher` trait's length prefix and buffering, about a third of the instructions for a 20-byte
/// name.
/// Every bit of the result depends on every input byte (hash tables use the low bits for buckets
/// and the high bits for tags). Not keyed: inputs are the user's own files, not an adversary's.
#[inline(always)]
pub fn name_hash(name: &[u8]) -> u64 {
    const K: [u64; 4] = [
        0x243f_6a88_85a3_08d3,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
        0x082e_fa98_ec4e_6c89,
    ];
    #[inline(always)]
    fn fold(a: u64, b: u64) -> u64 {
        let p = (a as u128).wrapping_mul(b as u128);
        (p as u64) ^ ((p >> 64) as u64)
    }
    #[inline(always)]
    fn w64(s: &[u8], i: usize) -> u64 {
        u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"))
    }
    #[inline(always)]
    fn w32(s: &[u8], i: usize) -> u64 {
        u32::from_le_bytes(s[i..i + 4].try_into().expect("4 bytes")) as u64
    }
    let n = name.len();
    if n > 16 && n <= 32 {
        // Most lemma names: the first and the last 16 bytes (overlapping below 32), each folded
        // with its own constants, in two independent multiplies; the length in the second word.
        return fold(w64(name, 0) ^ K[0], w64(name, 8) ^ K[1] ^ (n as u64) << 56)
            ^ fold(w64(name, n - 16) ^ K[2], w64(name, n - 8) ^ K[3]);
    }
    let (a, b) = if n > 16 {
        let mut h = K[0] ^ n as u64;
        let mut i = 0;
        while i + 16 < n {
            h = fold(w64(name, i) ^ h, w64(name, i + 8) ^ K[1]);
            i += 16;
        }
        (w64(name, n - 16) ^ h, w64(name, n - 8) ^ K[2])
    } else if n >= 8 {
        (w64(name, 0), w64(name, n - 8))
    } else if n >= 4 {
        (w32(name, 0), w32(name, n - 4))
    } else if n > 0 {
        let bytes = name[0] as u64 | (name[n / 2] as u64) << 8 | (name[n - 1] as u64) << 16;
        (bytes, 0)
    } else {
        (0, 0)
    };
    // Length in the second operand: prefixes and overlapping reads of different lengths differ.
    fold(
        fold(a ^ K[3], b ^ K[1] ^ (n as u64) << 56) ^ K[2],
        K[0] ^ n as u64,
    )
}

/// Names to dense `u32` ids. Names live in one buffer ([`Names`]); each table bucket holds the id
/// and where the name lies, so a lookup touches the control bytes, one bucket and the name (no side
/// arrays).
#[derive(Clone, Debug, Default)]
pub struct Interner {
    table: HashTable<Slot>,
    names: Names,
    hashes: Vec<u64>,
}

#[derive(Copy, Clone, Debug)]
struct Slot {
    start: usize,
    len: u32,
    id: u32,
}

impl Interner {
    /// An empty interner.
    pub fn new() -> Self {
        Self::default()
    }

    /// The hash this interner uses for `name` (reusable with [`Interner::get_hashed`]):
    /// [`name_hash`].
    #[inline(always)]
    pub fn hash(&self, name: &[u8]) -> u64 {
        name_hash(name)
    }

    /// The id of `name`, if interned.
    #[inline]
    pub fn get(&self, name: &[u8]) -> Option<u32> {
        self.get_hashed(self.hash(name), name)
    }

    /// The id of `name` whose hash is `hash`.
    #[inline]
    pub fn get_hashed(&self, hash: u64, name: &[u8]) -> Option<u32> {
        self.table
            .find(hash, |s| {
                s.len as usize == name.len()
                    && same_bytes(self.names.bytes(s.start, name.len()), name)
            })
            .map(|s| s.id)
    }

    /// Interns `name`, returning its id (existing or new).
    pub fn intern(&mut self, name: &[u8]) -> u32 {
        let hash = self.hash(name);
        if let Some(id) = self.get_hashed(hash, name) {
            return id;
        }
        let id = self.names.len() as u32;
        let start = self.names.push(name);
        self.hashes.push(hash);
        let hashes = &self.hashes;
        let slot = Slot {
            start,
            len: name.len() as u32,
            id,
        };
        self.table
            .insert_unique(hash, slot, |s| hashes[s.id as usize]);
        id
    }

    /// The hash of name `id` (as [`Interner::hash`] computes it).
    #[inline]
    pub fn hash_of(&self, id: u32) -> u64 {
        self.hashes[id as usize]
    }

    /// The name of `id`.
    #[inline]
    pub fn name(&self, id: u32) -> &[u8] {
        self.names.get(id as usize)
    }

    /// Makes room for `additional` more names.
    pub fn reserve(&mut self, additional: usize) {
        let hashes = &self.hashes;
        self.table.reserve(additional, |s| hashes[s.id as usize]);
        self.hashes.reserve(additional);
        self.names.reserve(additional, additional * 24);
    }

    /// Number of names.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// The actual set of one goal.
#[derive(Clone, Debug, Default)]
pub struct GoalTruth {
    /// Every judged lemma of the goal (any grade).
    pub judged: RoaringBitmap,
    /// `(lemma id, grade)` sorted by id, present only when some grade is not 1.
    pub grades: Option<Box<[(u32, i32)]>>,
    /// Every judged grade, sorted descending (what the accumulator's `Truth::graded` takes).
    pub grades_desc: Box<[i32]>,
}

impl GoalTruth {
    /// The grade of lemma `id` in this goal, if judged.
    #[inline]
    pub fn grade(&self, id: u32) -> Option<i32> {
        if !self.judged.contains(id) {
            return None;
        }
        match &self.grades {
            None => Some(1),
            Some(g) => g
                .binary_search_by_key(&id, |&(l, _)| l)
                .ok()
                .map(|i| g[i].1),
        }
    }
}

/// All actual sets: the lemma interner, the goal interner and one [`GoalTruth`] per goal.
#[derive(Clone, Debug, Default)]
pub struct ActualSets {
    /// Lemma names of all actual sets.
    pub lemmas: Interner,
    /// Goal ids.
    pub goals: Interner,
    /// Per goal id.
    pub truths: Vec<GoalTruth>,
    /// Judgment rows with grade > 0 (trec_eval's `-c` summary `num_rel`).
    pub positive_rows: u64,
    /// Judgment rows read.
    pub rows: u64,
}

#[derive(Deserialize)]
struct ActualLine<'a> {
    #[serde(borrow)]
    goal_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    premises: Option<PremiseSet<'a>>,
    #[serde(borrow)]
    all_pos_premises: Option<Vec<PremiseRef<'a>>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum PremiseSet<'a> {
    #[serde(borrow)]
    List(Vec<PremiseRef<'a>>),
    #[serde(borrow)]
    Graded(HashMap<Cow<'a, str>, i64>),
}

/// One judgment row until the sets are finalised: goal id, lemma id, grade (12 bytes: qrels of
/// millions of rows are held whole; the lines of a repeated judgment are found again in the text).
type Row = (u32, u32, i32);

/// Records one judgment; `goal_id` when the caller already knows the goal's id.
fn add_judgment(
    sets: &mut ActualSets,
    rows: &mut Vec<Row>,
    goal_id: Option<u32>,
    goal: &[u8],
    lemma: &[u8],
    grade: i32,
) -> u32 {
    let g = goal_id.unwrap_or_else(|| sets.goals.intern(goal));
    let l = sets.lemmas.intern(lemma);
    rows.push((g, l, grade));
    sets.rows += 1;
    sets.positive_rows += (grade > 0) as u64;
    g
}

/// The lines (1-based) of the first two qrels rows that judge `lemma` for `goal`: the error path
/// of a repeated judgment reads the text again rather than keep a line number per row.
fn judgment_lines(all: &[u8], goal: &[u8], lemma: &[u8]) -> Option<(u64, u64)> {
    let mut lines = all
        .split(|&b| b == b'\n')
        .enumerate()
        .filter_map(|(i, line)| {
            let mut f = [&b""[..]; 4];
            let judges =
                crate::fields::split_fields(line, &mut f) == 4 && f[0] == goal && f[2] == lemma;
            judges.then_some(i as u64 + 1)
        });
    // Both rows were read from lines of this shape, so both are found; were they not, the error
    // would still name the lemma and goal, without lines.
    Some((lines.next()?, lines.next()?))
}

impl ActualSets {
    /// Reads qrels (`goal iter lemma grade`, exactly 4 fields) or JSONL actual sets, by format.
    /// A lemma judged twice for one goal is an error naming both lines.
    pub fn read(input: Input) -> Result<ActualSets, InputError> {
        let path = input.path.clone();
        let format = input.format;
        // Actual sets are held in memory anyway: read the file whole (or use its mapping).
        let owned;
        let all: &[u8] = match &input.map {
            Some(m) => m,
            None => {
                let mut v = Vec::new();
                let mut reader = input.reader;
                std::io::Read::read_to_end(&mut reader, &mut v)
                    .map_err(|e| InputError::read(&path, e))?;
                owned = v;
                &owned
            }
        };
        let mut sets = ActualSets::default();
        // Room for the lemmas of about one judgment per 32 bytes (capped): no table regrowth on
        // qrels of typical size, little memory on small ones.
        sets.lemmas.reserve((all.len() / 32).min(1 << 17));
        // Every judgment in file order; grouped by goal at the end (qrels usually come grouped:
        // one flat vector, no per-goal allocation while reading).
        let mut rows: Vec<Row> = Vec::with_capacity(all.len() / 32);
        // JSONL: each goal's line (its judgments all come from it).
        let mut goal_lines: Vec<u64> = Vec::new();
        let mut last_goal: Option<(&[u8], u32)> = None;
        let (mut line_no, mut pos) = (0u64, 0usize);
        while pos < all.len() {
            line_no += 1;
            let here = pos;
            let err = |m: String| InputError::at(ErrorKind::Syntax, &path, line_no, here as u64, m);
            let mut f = [&b""[..]; 4];
            let ((count, end), utf8) = split_line_checked(all, pos, &mut f);
            pos = end + 1;
            if let Err(col) = utf8 {
                return Err(err(format!("invalid UTF-8 at column {}", col + 1)));
            }
            if count == 0 || f[0].first() == Some(&b'#') {
                continue;
            }
            match format {
                Format::Trec => {
                    if count != 4 {
                        let found = if count > 4 {
                            "more".to_string()
                        } else {
                            count.to_string()
                        };
                        return Err(err(format!(
                            "expected 4 fields (goal iter lemma grade), found {found}"
                        )));
                    }
                    let grade = parse_grade(f[3]).ok_or_else(|| {
                        err(format!("expected an integer grade, found `{}`", show(f[3])))
                    })?;
                    let cached = match last_goal {
                        Some((name, id)) if same_bytes(name, f[0]) => Some(id),
                        _ => None,
                    };
                    let g = add_judgment(&mut sets, &mut rows, cached, f[0], f[2], grade);
                    last_goal = Some((f[0], g));
                }
                Format::Jsonl => {
                    let text = std::str::from_utf8(&all[here..end])
                        .expect("checked")
                        .trim();
                    let rec: ActualLine = serde_json::from_str(text).map_err(|e| {
                        err(format!(
                            "expected a JSON object with goal_id and premises (a list of names, or name → grade) \
                             or all_pos_premises: {e}"
                        ))
                    })?;
                    let goal = rec
                        .goal_id
                        .ok_or_else(|| err("expected a `goal_id` field".into()))?;
                    let known = sets.goals.len();
                    let g = sets.goals.intern(goal.as_bytes());
                    if (g as usize) < known {
                        return Err(err(format!(
                            "goal `{goal}` has a second line of actual premises"
                        )));
                    }
                    goal_lines.push(line_no);
                    last_goal = None;
                    let mut add = |name: &str, grade: i32| {
                        add_judgment(
                            &mut sets,
                            &mut rows,
                            Some(g),
                            goal.as_bytes(),
                            name.as_bytes(),
                            grade,
                        );
                    };
                    let mut any = false;
                    match rec.premises {
                        Some(PremiseSet::List(v)) => {
                            any = true;
                            v.into_iter().for_each(|p| add(&p.into_name(), 1));
                        }
                        Some(PremiseSet::Graded(m)) => {
                            any = true;
                            // Sorted: lemma ids are given in the same order on every run.
                            let mut v: Vec<_> = m.into_iter().collect();
                            v.sort();
                            for (name, grade) in v {
                                let grade = i32::try_from(grade)
                                    .ok()
                                    .filter(|&g| g != i32::MIN)
                                    .ok_or_else(|| {
                                        err(format!("grade {grade} of `{name}` is out of range"))
                                    })?;
                                add(&name, grade);
                            }
                        }
                        None => {}
                    }
                    if let Some(v) = rec.all_pos_premises {
                        any = true;
                        v.into_iter().for_each(|p| add(&p.into_name(), 1));
                    }
                    if !any {
                        return Err(err("expected `premises` or `all_pos_premises`".into()));
                    }
                }
            }
        }
        if sets.goals.is_empty() {
            return Err(InputError::file(
                ErrorKind::Empty,
                &path,
                "has no judgments, expected at least one line",
            ));
        }
        // Group by goal; grouped qrels need no sort. Unstable: each goal's rows are sorted by
        // lemma below, and a repeated judgment's lines are found again in the text.
        if rows.windows(2).any(|w| w[1].0 < w[0].0) {
            rows.sort_unstable_by_key(|r| r.0);
        }
        sets.truths.reserve(sets.goals.len());
        let mut rest = &mut rows[..];
        for g in 0..sets.goals.len() as u32 {
            // This goal's rows (none for a JSONL goal with an empty list).
            let n = rest.iter().take_while(|r| r.0 == g).count();
            let (entries, tail) = std::mem::take(&mut rest).split_at_mut(n);
            rest = tail;
            entries.sort_unstable_by_key(|&(_, l, _)| l);
            if let Some(w) = entries.windows(2).find(|w| w[0].1 == w[1].1) {
                let (goal, lemma) = (sets.goals.name(w[0].0), sets.lemmas.name(w[0].1));
                let lines = match format {
                    Format::Trec => judgment_lines(all, goal, lemma),
                    Format::Jsonl => Some((goal_lines[g as usize], goal_lines[g as usize])),
                };
                return Err(InputError {
                    kind: ErrorKind::Duplicate,
                    path: path.clone(),
                    line: lines.map(|l| l.1),
                    byte: None,
                    first_line: lines.map(|l| l.0),
                    message: format!(
                        "lemma `{}` is judged twice for goal `{}`",
                        show(lemma),
                        show(goal)
                    ),
                });
            }
            let judged = RoaringBitmap::from_sorted_iter(entries.iter().map(|e| e.1))
                .expect("sorted, distinct");
            let binary = entries.iter().all(|e| e.2 == 1);
            let mut grades_desc: Box<[i32]> = entries.iter().map(|e| e.2).collect();
            grades_desc.sort_unstable_by(|a, b| b.cmp(a));
            sets.truths.push(GoalTruth {
                judged,
                grades: (!binary).then(|| entries.iter().map(|e| (e.1, e.2)).collect()),
                grades_desc,
            });
        }
        Ok(sets)
    }

    /// Reads actual sets from a file (`-` for stdin).
    pub fn read_path(path: &Path) -> Result<ActualSets, InputError> {
        // Mapped when it is a plain file: held whole anyway, no copy.
        Self::read(crate::input::open_with(path, true)?)
    }

    /// The truth of goal `name`, with its id.
    #[inline]
    pub fn goal(&self, name: &[u8]) -> Option<(u32, &GoalTruth)> {
        self.goals.get(name).map(|g| (g, &self.truths[g as usize]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_hash_spreads_names_of_every_length() {
        // Equal bytes, equal hashes; prefixes and lengths matter.
        assert_eq!(
            name_hash(b"Nat.add_comm"),
            name_hash(&b"xNat.add_comm"[1..])
        );
        assert_ne!(name_hash(b"a"), name_hash(b"a\0"));
        assert_ne!(name_hash(b""), name_hash(b"\0"));
        // 200,000 distinct names of 1 to 40 bytes: no full collision, and the low bits (buckets),
        // the top six bits (the judged-lemma filter) and bits 40..46 spread evenly.
        let mut seen = std::collections::HashSet::new();
        let (mut low, mut top, mut tag) = ([0u32; 64], [0u32; 64], [0u32; 64]);
        for i in 0..200_000u32 {
            let name = match i % 6 {
                0 => format!("{i}"),
                1 => format!("Mathlib.Algebra.Group.Basic.lemma_{i}"),
                2 => format!("L{i}"),
                // 15 to 20 bytes: on both sides of the 17-32-byte case.
                3 => format!("Nat.add_assoc_{i}"),
                // 17 to 32 bytes, each length in turn: the whole 17-32-byte case.
                4 => {
                    let mut n = format!("{i}.");
                    while n.len() < 17 + (i as usize / 6) % 16 {
                        n.push('x');
                    }
                    n
                }
                _ => format!("{:x}.{i}", i.wrapping_mul(2_654_435_761)),
            };
            let h = name_hash(name.as_bytes());
            assert!(seen.insert(h), "collision at {name}");
            low[(h & 63) as usize] += 1;
            top[(h >> 58) as usize] += 1;
            // Bits 40..46: part of the duplicate table's tag.
            tag[(h >> 40 & 63) as usize] += 1;
        }
        let expected = 200_000 / 64;
        for c in low.iter().chain(&top).chain(&tag) {
            assert!(
                (*c as i64 - expected as i64).abs() < expected as i64 / 10,
                "{c} vs {expected}"
            );
        }
    }

    fn read(text: &str, format: Format) -> Result<ActualSets, InputError> {
        ActualSets::read(Input {
            path: "actual".into(),
            reader: crate::input::Source::stream(std::io::Cursor::new(text.as_bytes().to_vec())),
            size_on_disk: None,
            compression: crate::input::Compression::None,
            format,
            map: None,
            file: None,
        })
    }

    #[test]
    fn qrels_with_grades() {
        let s = read(
            "g1 0 a 1\ng1 0 b 0\n# comment\ng2 0 a 2\ng2 0 c 1\n\n",
            Format::Trec,
        )
        .unwrap();
        assert_eq!(s.goals.len(), 2);
        assert_eq!(s.lemmas.len(), 3);
        let (_, g1) = s.goal(b"g1").unwrap();
        let a = s.lemmas.get(b"a").unwrap();
        let b = s.lemmas.get(b"b").unwrap();
        let c = s.lemmas.get(b"c").unwrap();
        assert_eq!(
            (g1.grade(a), g1.grade(b), g1.grade(c)),
            (Some(1), Some(0), None)
        );
        assert_eq!(&*g1.grades_desc, &[1, 0]);
        let (_, g2) = s.goal(b"g2").unwrap();
        assert_eq!((g2.grade(a), g2.grade(c)), (Some(2), Some(1)));
        assert_eq!(s.positive_rows, 3);
        assert!(s.goal(b"g3").is_none());
    }

    #[test]
    fn jsonl_shapes() {
        let text = r#"{"goal_id": "g1", "premises": ["A", "B"]}
{"goal_id": "g2", "premises": {"A": 2, "C": 0}}
{"goal_id": "g3", "all_pos_premises": ["A", {"full_name": "D", "code": "x"}], "other": 1}
"#;
        let s = read(text, Format::Jsonl).unwrap();
        let id = |n: &str| s.lemmas.get(n.as_bytes()).unwrap();
        let (_, g1) = s.goal(b"g1").unwrap();
        assert_eq!((g1.grade(id("A")), g1.grade(id("B"))), (Some(1), Some(1)));
        assert!(g1.grades.is_none());
        let (_, g2) = s.goal(b"g2").unwrap();
        assert_eq!((g2.grade(id("A")), g2.grade(id("C"))), (Some(2), Some(0)));
        let (_, g3) = s.goal(b"g3").unwrap();
        assert_eq!((g3.grade(id("A")), g3.grade(id("D"))), (Some(1), Some(1)));
    }

    #[test]
    fn goals_with_empty_sets_and_ungrouped_qrels_keep_their_own_truths() {
        // A goal with an empty list has a truth of its own (R = 0); the goals after it keep theirs.
        let text = r#"{"goal_id": "g1", "premises": ["A"]}
{"goal_id": "g0", "premises": []}
{"goal_id": "g2", "premises": ["B", "A"]}
"#;
        let s = read(text, Format::Jsonl).unwrap();
        let id = |n: &str| s.lemmas.get(n.as_bytes()).unwrap();
        assert_eq!(s.truths.len(), 3);
        assert_eq!(s.goal(b"g0").unwrap().1.judged.len(), 0);
        let (_, g2) = s.goal(b"g2").unwrap();
        assert_eq!((g2.grade(id("A")), g2.grade(id("B"))), (Some(1), Some(1)));
        assert_eq!(s.goal(b"g1").unwrap().1.judged.len(), 1);
        // Qrels whose goals interleave: each goal gets its own rows, grades and all.
        let s = read("g 0 a 1\nh 0 b 2\ng 0 c 0\nh 0 a 1\n", Format::Trec).unwrap();
        let id = |n: &str| s.lemmas.get(n.as_bytes()).unwrap();
        let (_, g) = s.goal(b"g").unwrap();
        let (_, h) = s.goal(b"h").unwrap();
        assert_eq!(
            (g.grade(id("a")), g.grade(id("c")), g.grade(id("b"))),
            (Some(1), Some(0), None)
        );
        assert_eq!(
            (h.grade(id("a")), h.grade(id("b")), h.grade(id("c"))),
            (Some(1), Some(2), None)
        );
        assert_eq!(
            (&*g.grades_desc, &*h.grades_desc),
            (&[1, 0][..], &[2, 1][..])
        );
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = read("g 0 a 1\ng 0 b\n", Format::Trec).unwrap_err();
        assert_eq!(
            e.to_string(),
            "actual:2: expected 4 fields (goal iter lemma grade), found 3 (byte 8)"
        );
        let e = read("g 0 a x\n", Format::Trec).unwrap_err();
        assert!(
            e.to_string()
                .contains("expected an integer grade, found `x`"),
            "{e}"
        );
        let e = read("g 0 a 1\nh 0 a 1\ng 0 a 0\n", Format::Trec).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Duplicate);
        assert_eq!(e.line, Some(3));
        assert!(e.to_string().contains("(first at line 1)"), "{e}");
        assert_eq!(e.first_line, Some(1));
        let e = read("{\"goal_id\": \"g\"}\n", Format::Jsonl).unwrap_err();
        assert!(e.to_string().contains("expected `premises`"), "{e}");
        let e = read("{\"goal_id\": \"g\", \"premises\": [1]}\n", Format::Jsonl).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("actual:1: expected a JSON object"),
            "{e}"
        );
        let e = read("g 0 a 1\ng 0 \u{0}\u{fffd} 1\n", Format::Trec).unwrap();
        assert_eq!(e.rows, 2);
        let e = ActualSets::read(Input {
            path: "actual".into(),
            reader: crate::input::Source::stream(std::io::Cursor::new(b"g 0 \xff 1\n".to_vec())),
            size_on_disk: None,
            compression: crate::input::Compression::None,
            format: Format::Trec,
            map: None,
            file: None,
        })
        .unwrap_err();
        assert!(e.to_string().contains("invalid UTF-8"), "{e}");
    }
}
