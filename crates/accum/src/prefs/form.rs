//! A goal's judgments formed into groups and counted (trec_eval's `form_prefs_counts`): the
//! counts every preference measure reads. See the module documentation of [`crate::prefs`].

use super::{rnonrel, Pref, PrefsMeasure};
use std::ops::Range;

/// One group's counts. The possible counts include the fulfilled ones.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupCounts {
    /// Preferences `a > b` with both ranked and `a` above `b`.
    pub fulfilled_ret: u64,
    /// Preferences with both lemmas ranked.
    pub possible_ret: u64,
    /// Preferences with only `a` ranked.
    pub fulfilled_imp: u64,
    /// Preferences with exactly one lemma ranked.
    pub possible_imp: u64,
    /// Preferences with neither lemma ranked.
    pub possible_neither: u64,
    /// Relevant lemmas (level above 0).
    pub rel: u64,
    /// Relevant lemmas ranked.
    pub rel_ret: u64,
    /// Non-relevant lemmas.
    pub nonrel: u64,
    /// Non-relevant lemmas ranked.
    pub nonrel_ret: u64,
    /// `prefs_avgjg_Rnonrel`'s (fulfilled, possible) recounted with `rel` non-relevant lemmas,
    /// when `nonrel > rel` and that measure is asked for.
    pub(crate) recount: Option<(u64, u64)>,
    /// `prefs_avgjg_Rnonrel_ret`'s, when `nonrel_ret > rel_ret` and it is asked for.
    pub(crate) recount_ret: Option<(u64, u64)>,
}

/// A goal's judgments, counted ([`PrefsCounter::count`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GoalPrefs {
    judged: u32,
    retrieved: u32,
    groups: Vec<GroupCounts>,
    /// `c(a, b)` at `a · J + b` (trec_eval's 16-bit counts, wrapping as they do), when a measure
    /// reads them; else empty.
    pairs: Vec<u16>,
}

impl GoalPrefs {
    /// The judged lemmas, `J`.
    pub fn judged(&self) -> u32 {
        self.judged
    }

    /// The judged lemmas ranked, `r`.
    pub fn retrieved(&self) -> u32 {
        self.retrieved
    }

    /// The groups' counts, groups in byte order of their names.
    pub fn groups(&self) -> &[GroupCounts] {
        &self.groups
    }

    /// `c(a, b)`: the preferences `a > b` over all groups (places as in [`Pref::doc`]).
    pub(crate) fn pair(&self, a: u32, b: u32) -> u16 {
        assert!(!self.pairs.is_empty(), "pair counts not kept");
        self.pairs[a as usize * self.judged as usize + b as usize]
    }
}

/// A goal's judgments that no measure can count (trec_eval stops: "Can't calculate measure").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrefsError {
    /// In a group of one subgroup, lemma `doc` at two different levels.
    TwoLevels {
        /// The group.
        group: Vec<u8>,
        /// The lemma's place.
        doc: u32,
    },
    /// In a group of several subgroups, lemma `doc` at level 0 and at a level above 0.
    ZeroAndPositive {
        /// The group.
        group: Vec<u8>,
        /// The lemma's place.
        doc: u32,
    },
    /// In a group of several subgroups, `a` preferred to `b` and `b` to `a` (transitively).
    Conflict {
        /// The group.
        group: Vec<u8>,
        /// One lemma's place.
        a: u32,
        /// The other's.
        b: u32,
    },
}

/// One group as formed, for the measures that count it again (`rnonrel.rs`).
pub(crate) enum GroupForm<'a> {
    /// One subgroup: the classes (level, range of `docs`), highest level first; each class's
    /// places ascending, repeats kept.
    Classes {
        classes: &'a [(f64, Range<usize>)],
        docs: &'a [u32],
    },
    /// Several subgroups: the group's lemmas' places (ascending, once each), each lemma's level
    /// (the last given it; never -1 here), and the relation (`prefers(i, j)` over indexes into
    /// `docs`), closed and without its diagonal.
    Relation {
        docs: &'a [u32],
        levels: &'a [f64],
        bits: &'a Bits,
    },
}

/// A square matrix of bits, a row of 64-bit words per index.
#[derive(Clone, Debug, Default)]
pub(crate) struct Bits {
    n: usize,
    words: usize,
    data: Vec<u64>,
}

impl Bits {
    fn reset(&mut self, n: usize) {
        self.n = n;
        self.words = n.div_ceil(64);
        self.data.clear();
        self.data.resize(n * self.words, 0);
    }

    fn set(&mut self, i: usize, j: usize) {
        self.data[i * self.words + j / 64] |= 1 << (j % 64);
    }

    fn clear(&mut self, i: usize, j: usize) {
        self.data[i * self.words + j / 64] &= !(1 << (j % 64));
    }

    pub(crate) fn get(&self, i: usize, j: usize) -> bool {
        self.data[i * self.words + j / 64] >> (j % 64) & 1 == 1
    }

    /// The indexes `j` of row `i`'s bits, ascending.
    pub(crate) fn row(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let row = &self.data[i * self.words..(i + 1) * self.words];
        row.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    w * 64 + b
                })
            })
        })
    }

    /// Closes the relation under transitivity (Warshall's algorithm, a row at a time), then
    /// clears the diagonal.
    fn close(&mut self, scratch: &mut Vec<u64>) {
        let (n, w) = (self.n, self.words);
        for k in 0..n {
            scratch.clear();
            scratch.extend_from_slice(&self.data[k * w..(k + 1) * w]);
            for i in 0..n {
                if self.get(i, k) {
                    for (x, y) in self.data[i * w..(i + 1) * w].iter_mut().zip(&*scratch) {
                        *x |= y;
                    }
                }
            }
        }
        for i in 0..n {
            self.clear(i, i);
        }
    }
}

/// Counts goals' judgments, keeping its buffers from goal to goal. Memory: the pair counts
/// (`2 · J²` bytes, only when a `prefs_pair*` measure is asked for), and for the group being
/// counted its lines' places, and for a group of several subgroups a relation of `n²` bits over
/// its `n` lemmas.
#[derive(Clone, Debug, Default)]
pub struct PrefsCounter {
    pairs: bool,
    recount: bool,
    recount_ret: bool,
    goal: GoalPrefs,
    classes: Vec<(f64, Range<usize>)>,
    docs: Vec<u32>,
    levels: Vec<f64>,
    local: Vec<u32>,
    bits: Bits,
    scratch: Vec<u64>,
}

impl PrefsCounter {
    /// A counter for `measures`: it keeps what they read.
    pub fn new(measures: &[PrefsMeasure]) -> PrefsCounter {
        PrefsCounter {
            pairs: measures.iter().any(|m| m.reads_pairs()),
            recount: measures.contains(&PrefsMeasure::AvgjgRnonrel),
            recount_ret: measures.contains(&PrefsMeasure::AvgjgRnonrelRet),
            ..PrefsCounter::default()
        }
    }

    /// Counts one goal: its judgment lines `prefs` (reordered here), `judged` lemmas of which
    /// the first `retrieved` places are ranked. Every place is below `judged`.
    pub fn count(
        &mut self,
        prefs: &mut [Pref<'_>],
        judged: u32,
        retrieved: u32,
    ) -> Result<&GoalPrefs, PrefsError> {
        assert!(retrieved <= judged, "ranked judged lemmas are judged");
        assert!(prefs.iter().all(|p| p.doc < judged), "places below J");
        prefs.sort_by(|a, b| {
            (a.group.cmp(b.group))
                .then(a.subgroup.cmp(b.subgroup))
                .then(b.level.partial_cmp(&a.level).expect("finite levels"))
                .then(a.doc.cmp(&b.doc))
        });
        self.goal.judged = judged;
        self.goal.retrieved = retrieved;
        self.goal.groups.clear();
        self.goal.pairs.clear();
        if self.pairs {
            self.goal.pairs.resize(judged as usize * judged as usize, 0);
        }
        let mut start = 0;
        while start < prefs.len() {
            let group = prefs[start].group;
            let len = prefs[start..]
                .iter()
                .take_while(|p| p.group == group)
                .count();
            let lines = &prefs[start..start + len];
            let several = lines.iter().any(|p| p.subgroup != lines[0].subgroup);
            let counts = match several {
                false => self.classes(lines)?,
                true => self.relation(lines)?,
            };
            self.goal.groups.push(counts);
            start += len;
        }
        Ok(&self.goal)
    }

    /// A group of one subgroup: classes by level.
    fn classes(&mut self, lines: &[Pref<'_>]) -> Result<GroupCounts, PrefsError> {
        let (classes, docs) = (&mut self.classes, &mut self.docs);
        classes.clear();
        docs.clear();
        for p in lines {
            match classes.last_mut() {
                Some((level, range)) if *level == p.level => range.end += 1,
                _ => classes.push((p.level, docs.len()..docs.len() + 1)),
            }
            docs.push(p.doc);
        }
        let r = self.goal.retrieved;
        let j = self.goal.judged as usize;
        let mut c = GroupCounts::default();
        for (a, (level, range)) in classes.iter().enumerate() {
            let da = &docs[range.clone()];
            let ranked = da.iter().take_while(|&&d| d < r).count() as u64;
            if *level > 0.0 {
                c.rel += da.len() as u64;
                c.rel_ret += ranked;
            } else {
                c.nonrel += da.len() as u64;
                c.nonrel_ret += ranked;
            }
            for (_, lower) in &classes[a + 1..] {
                for &d1 in da {
                    for &d2 in &docs[lower.clone()] {
                        if d1 == d2 {
                            return Err(PrefsError::TwoLevels {
                                group: lines[0].group.to_vec(),
                                doc: d1,
                            });
                        }
                        if self.pairs {
                            let cell = &mut self.goal.pairs[d1 as usize * j + d2 as usize];
                            *cell = cell.wrapping_add(1);
                        }
                        tally(&mut c, d1, d2, r);
                    }
                }
            }
        }
        c.possible_ret += c.fulfilled_ret;
        c.possible_imp += c.fulfilled_imp;
        let form = GroupForm::Classes { classes, docs };
        recounts(self.recount, self.recount_ret, r, &mut c, &form);
        Ok(c)
    }

    /// A group of several subgroups: the relation their preferences give.
    fn relation(&mut self, lines: &[Pref<'_>]) -> Result<GroupCounts, PrefsError> {
        let group = || lines[0].group.to_vec();
        let docs = &mut self.docs;
        docs.clear();
        docs.extend(lines.iter().map(|p| p.doc));
        docs.sort_unstable();
        docs.dedup();
        let n = docs.len();
        self.local.clear();
        let at = |d: u32| docs.binary_search(&d).expect("a lemma of the group") as u32;
        self.local.extend(lines.iter().map(|p| at(p.doc)));
        self.levels.clear();
        self.levels.resize(n, -1.0);
        self.bits.reset(n);
        for (k, p) in lines.iter().enumerate() {
            let i = self.local[k] as usize;
            let old = self.levels[i];
            if (old > 0.0 && p.level == 0.0) || (old == 0.0 && p.level > 0.0) {
                return Err(PrefsError::ZeroAndPositive {
                    group: group(),
                    doc: p.doc,
                });
            }
            self.levels[i] = p.level;
            // Every later line of the subgroup at a lower level.
            let same = |q: &Pref<'_>| q.subgroup == p.subgroup;
            let mut m = k + 1;
            while m < lines.len() && same(&lines[m]) && lines[m].level == p.level {
                m += 1;
            }
            while m < lines.len() && same(&lines[m]) {
                self.bits.set(i, self.local[m] as usize);
                m += 1;
            }
        }
        self.bits.close(&mut self.scratch);
        for i in 0..n {
            if let Some(j) = self.bits.row(i).find(|&j| j > i && self.bits.get(j, i)) {
                return Err(PrefsError::Conflict {
                    group: group(),
                    a: docs[i],
                    b: docs[j],
                });
            }
        }
        let r = self.goal.retrieved;
        let jn = self.goal.judged as usize;
        let mut c = GroupCounts::default();
        for (i, &level) in self.levels.iter().enumerate() {
            let ranked = u64::from(docs[i] < r);
            if level > 0.0 {
                c.rel += 1;
                c.rel_ret += ranked;
            } else if level == 0.0 {
                c.nonrel += 1;
                c.nonrel_ret += ranked;
            }
        }
        for i in 0..n {
            for j in self.bits.row(i) {
                let (d1, d2) = (docs[i], docs[j]);
                if self.pairs {
                    let cell = &mut self.goal.pairs[d1 as usize * jn + d2 as usize];
                    *cell = cell.wrapping_add(1);
                }
                tally(&mut c, d1, d2, r);
            }
        }
        c.possible_ret += c.fulfilled_ret;
        c.possible_imp += c.fulfilled_imp;
        let form = GroupForm::Relation {
            docs,
            levels: &self.levels,
            bits: &self.bits,
        };
        let (recount, recount_ret) = (self.recount, self.recount_ret);
        recounts(recount, recount_ret, r, &mut c, &form);
        Ok(c)
    }
}

/// The Rnonrel measures' recounts of group `c` (`r` lemmas ranked), when asked for and needed.
fn recounts(recount: bool, recount_ret: bool, r: u32, c: &mut GroupCounts, form: &GroupForm<'_>) {
    if recount && c.nonrel > c.rel {
        c.recount = Some(rnonrel::recount(form, c, r));
    }
    if recount_ret && c.nonrel_ret > c.rel_ret {
        c.recount_ret = Some(rnonrel::recount_ret(form, c, r));
    }
}

/// Adds the preference `d1 > d2` to `c` (before the possible counts take in the fulfilled).
fn tally(c: &mut GroupCounts, d1: u32, d2: u32, r: u32) {
    if d1 < d2 {
        if d2 < r {
            c.fulfilled_ret += 1;
        } else if d1 < r {
            c.fulfilled_imp += 1;
        } else {
            c.possible_neither += 1;
        }
    } else if d1 < r {
        c.possible_ret += 1;
    } else if d2 < r {
        c.possible_imp += 1;
    } else {
        c.possible_neither += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::count;
    use super::*;

    #[test]
    fn classes_count_every_pair_of_levels() {
        // One subgroup: a (place 0) at 2, b (1) at 1, c (2) and d (3) at 0; places 0, 1 ranked
        // (r = 2, J = 4). Preferences: a>b a>c a>d b>c b>d.
        // a>b: both ranked, 0 < 1: fulfilled ranked. a>c, a>d, b>c, b>d: only the first ranked:
        // fulfilled implied (4).
        let g = count(
            &[
                ("u", "s", 0, 2.0),
                ("u", "s", 1, 1.0),
                ("u", "s", 2, 0.0),
                ("u", "s", 3, 0.0),
            ],
            4,
            2,
        );
        let c = &g.groups()[0];
        assert_eq!((c.fulfilled_ret, c.possible_ret), (1, 1));
        assert_eq!((c.fulfilled_imp, c.possible_imp), (4, 4));
        assert_eq!(c.possible_neither, 0);
        assert_eq!((c.rel, c.rel_ret, c.nonrel, c.nonrel_ret), (2, 2, 2, 0));
        assert_eq!(g.pair(0, 1), 1);
        assert_eq!(g.pair(1, 0), 0);
    }

    #[test]
    fn unfulfilled_and_neither() {
        // b (place 0) ranked above a (1); c (2), d (3) unranked. a at 1, b at 0, c at 1, d at 0.
        // Classes {a, c} > {b, d}: a>b (both ranked, 1 > 0: not fulfilled), a>d (only a: implied
        // fulfilled), c>b (only b: implied, not fulfilled), c>d (neither).
        let g = count(
            &[
                ("u", "s", 1, 1.0),
                ("u", "s", 0, 0.0),
                ("u", "s", 2, 1.0),
                ("u", "s", 3, 0.0),
            ],
            4,
            2,
        );
        let c = &g.groups()[0];
        assert_eq!((c.fulfilled_ret, c.possible_ret), (0, 1));
        assert_eq!((c.fulfilled_imp, c.possible_imp), (1, 2));
        assert_eq!(c.possible_neither, 1);
    }

    #[test]
    fn a_repeated_line_counts_twice_in_classes_once_in_a_relation() {
        let lines = [("u", "s", 0, 1.0), ("u", "s", 0, 1.0), ("u", "s", 1, 0.0)];
        let c = count(&lines, 2, 2).groups()[0].clone();
        assert_eq!((c.possible_ret, c.rel), (2, 2));
        // The same lines and a second subgroup (of one line, c at 0): one relation, each pair
        // once, each lemma once.
        let mut more = lines.to_vec();
        more.push(("u", "t", 2, 0.0));
        let c = count(&more, 3, 2).groups()[0].clone();
        assert_eq!((c.possible_ret, c.rel, c.nonrel), (1, 1, 2));
    }

    #[test]
    fn a_relation_is_closed_under_transitivity() {
        // Subgroup s: a > b; subgroup t: b > c. The group prefers a > b, b > c and a > c.
        let g = count(
            &[
                ("u", "s", 0, 2.0),
                ("u", "s", 1, 1.0),
                ("u", "t", 1, 2.0),
                ("u", "t", 2, 1.0),
            ],
            3,
            3,
        );
        let c = &g.groups()[0];
        assert_eq!((c.fulfilled_ret, c.possible_ret), (3, 3));
        assert_eq!(g.pair(0, 2), 1);
    }

    #[test]
    fn errors() {
        let mut c = PrefsCounter::new(&PrefsMeasure::ALL);
        let p = |s: &'static str, doc, level| Pref {
            group: b"u",
            subgroup: s.as_bytes(),
            level,
            doc,
        };
        // Lemma 0 at two levels of one subgroup.
        let e = c.count(&mut [p("s", 0, 2.0), p("s", 0, 1.0)], 1, 1);
        assert_eq!(
            e.unwrap_err(),
            PrefsError::TwoLevels {
                group: b"u".to_vec(),
                doc: 0
            }
        );
        // Lemma 0 at 0 in one subgroup and 1 in another.
        let e = c.count(&mut [p("s", 0, 0.0), p("s", 1, 2.0), p("t", 0, 1.0)], 2, 2);
        assert!(matches!(e, Err(PrefsError::ZeroAndPositive { doc: 0, .. })));
        // a > b in one subgroup, b > a in another.
        let e = c.count(
            &mut [
                p("s", 0, 2.0),
                p("s", 1, 1.0),
                p("t", 1, 2.0),
                p("t", 0, 1.0),
            ],
            2,
            2,
        );
        assert!(matches!(e, Err(PrefsError::Conflict { a: 0, b: 1, .. })));
        // Groups may disagree.
        let mut two = [
            Pref {
                group: b"v",
                ..p("s", 1, 2.0)
            },
            Pref {
                group: b"v",
                ..p("s", 0, 1.0)
            },
            p("s", 0, 2.0),
            p("s", 1, 1.0),
        ];
        let g = c.count(&mut two, 2, 2).unwrap();
        assert_eq!((g.pair(0, 1), g.pair(1, 0)), (1, 1));
    }
}
