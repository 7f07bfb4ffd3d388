//! # Preference measures: trec_eval's `prefs_*` (`-R prefs`, `-R qrels_prefs`)
//!
//! A goal's judgments here are *preferences*: lines `goal group subgroup lemma level`. Within one
//! **subgroup** every lemma is preferred to every lemma of a lower level (levels only order the
//! lemmas; a level of 0 also means "non-relevant", above 0 "relevant"). A **group** is one user's
//! judgments at one time: its subgroups together, closed under transitivity (`a > b` in one
//! subgroup and `b > c` in another give `a > c`), and required to be consistent. Different groups
//! may disagree. `-R qrels_prefs` reads ordinary qrels `goal iter lemma grade` as preferences: the
//! `iter` field is the group and every line is in one subgroup.
//!
//! ## Ranks and counts ([`PrefsCounter`])
//!
//! Each judged lemma of the goal (a lemma named in some line) gets a place `d`: the ranked judged
//! lemmas first, `0 .. r` in rank order (`r`: the judged lemmas ranked), then the unranked ones,
//! `r .. J` in byte order of their names (`J`: the judged lemmas). A preference `a > b` is:
//!
//! * *fulfilled, ranked* when both are ranked and `d(a) < d(b)`; *possible, ranked* when both are
//!   ranked (fulfilled or not);
//! * *fulfilled, implied* when only `a` is ranked; *possible, implied* when exactly one is;
//! * *possible, neither* when neither is ranked (never fulfilled).
//!
//! A group of **one subgroup** is a list of classes, one per level (highest first); every lemma of
//! a class is preferred to every lemma of each lower class, a lemma listed twice counting twice;
//! a lemma at two levels is an error. A group of **several subgroups** is a relation: the
//! subgroups' preferences, each pair once, closed under transitivity; a lemma at level 0 and at a
//! positive level is an error, and so are two lemmas each preferred to the other. A group also
//! counts its relevant lemmas (`rel`: level above 0; `rel_ret` of them ranked) and non-relevant
//! ones (`nonrel`: level 0, or in a list of classes any level up to 0; `nonrel_ret`), with
//! repeats in a list of classes, once each in a relation (by the level the lemma was given last).
//! Over all groups, `c(a, b)` counts the preferences `a > b`.
//!
//! ## Measures (one per unit; [`PrefsMeasure`])
//!
//! * `prefs_num_prefs_poss`, `prefs_num_prefs_ful`, `prefs_num_prefs_ful_ret` (`counts.rs`): the
//!   possible, the fulfilled, the fulfilled ranked preferences; summed over goals.
//! * `prefs_simp`, `prefs_simp_ret`, `prefs_simp_imp` (`simp.rs`): fulfilled over possible, each
//!   preference counted once (all, ranked only, ranked or implied).
//! * `prefs_pair`, `prefs_pair_ret`, `prefs_pair_imp` (`pair.rs`): each pair of lemmas with a
//!   preference scores the share of its preferences it fulfils, averaged over the pairs.
//! * `prefs_avgjg`, `prefs_avgjg_ret`, `prefs_avgjg_imp` (`avgjg.rs`): fulfilled over possible
//!   in each group, averaged over the groups.
//! * `prefs_avgjg_Rnonrel`, `prefs_avgjg_Rnonrel_ret` (`rnonrel.rs`): the same with the
//!   non-relevant lemmas of each group brought to as many as the relevant ones.
//!
//! Every per-goal value is a double; the counts print as integers and sum over goals, the others
//! average (trec_eval's running sum, goals in byte order). This module reads no file: the engine
//! gives it each goal's judgments with their places ([`Pref`]).

mod avgjg;
mod counts;
mod form;
mod pair;
mod rnonrel;
mod select;
mod simp;

pub use form::{GoalPrefs, GroupCounts, PrefsCounter, PrefsError};
pub use select::{resolve_prefs, PrefsSelection};

/// One judgment line of a goal, as the measures read it.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Pref<'a> {
    /// The judgment group (a user's information need at one time).
    pub group: &'a [u8],
    /// The subgroup within the group.
    pub subgroup: &'a [u8],
    /// The level: higher is preferred; 0 is non-relevant. Finite.
    pub level: f64,
    /// The lemma's place: `0 .. r` the ranked judged lemmas in rank order, then `r .. J` the
    /// unranked ones in byte order of their names (see the module documentation).
    pub doc: u32,
}

/// One of trec_eval's preference measures, in trec_eval's table order ([`PrefsMeasure::ALL`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PrefsMeasure {
    /// `prefs_num_prefs_poss`.
    NumPrefsPoss,
    /// `prefs_num_prefs_ful`.
    NumPrefsFul,
    /// `prefs_num_prefs_ful_ret`.
    NumPrefsFulRet,
    /// `prefs_simp`.
    Simp,
    /// `prefs_pair`.
    Pair,
    /// `prefs_avgjg`.
    Avgjg,
    /// `prefs_avgjg_Rnonrel`.
    AvgjgRnonrel,
    /// `prefs_simp_ret`.
    SimpRet,
    /// `prefs_pair_ret`.
    PairRet,
    /// `prefs_avgjg_ret`.
    AvgjgRet,
    /// `prefs_avgjg_Rnonrel_ret`.
    AvgjgRnonrelRet,
    /// `prefs_simp_imp`.
    SimpImp,
    /// `prefs_pair_imp`.
    PairImp,
    /// `prefs_avgjg_imp`.
    AvgjgImp,
}

impl PrefsMeasure {
    /// Every preference measure, in trec_eval's table order (its indexes 36 to 49).
    pub const ALL: [PrefsMeasure; 14] = [
        PrefsMeasure::NumPrefsPoss,
        PrefsMeasure::NumPrefsFul,
        PrefsMeasure::NumPrefsFulRet,
        PrefsMeasure::Simp,
        PrefsMeasure::Pair,
        PrefsMeasure::Avgjg,
        PrefsMeasure::AvgjgRnonrel,
        PrefsMeasure::SimpRet,
        PrefsMeasure::PairRet,
        PrefsMeasure::AvgjgRet,
        PrefsMeasure::AvgjgRnonrelRet,
        PrefsMeasure::SimpImp,
        PrefsMeasure::PairImp,
        PrefsMeasure::AvgjgImp,
    ];

    /// trec_eval's name.
    pub fn name(self) -> &'static str {
        match self {
            PrefsMeasure::NumPrefsPoss => "prefs_num_prefs_poss",
            PrefsMeasure::NumPrefsFul => "prefs_num_prefs_ful",
            PrefsMeasure::NumPrefsFulRet => "prefs_num_prefs_ful_ret",
            PrefsMeasure::Simp => "prefs_simp",
            PrefsMeasure::Pair => "prefs_pair",
            PrefsMeasure::Avgjg => "prefs_avgjg",
            PrefsMeasure::AvgjgRnonrel => "prefs_avgjg_Rnonrel",
            PrefsMeasure::SimpRet => "prefs_simp_ret",
            PrefsMeasure::PairRet => "prefs_pair_ret",
            PrefsMeasure::AvgjgRet => "prefs_avgjg_ret",
            PrefsMeasure::AvgjgRnonrelRet => "prefs_avgjg_Rnonrel_ret",
            PrefsMeasure::SimpImp => "prefs_simp_imp",
            PrefsMeasure::PairImp => "prefs_pair_imp",
            PrefsMeasure::AvgjgImp => "prefs_avgjg_imp",
        }
    }

    /// The measure trec_eval names `name`.
    pub fn from_name(name: &str) -> Option<PrefsMeasure> {
        PrefsMeasure::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Whether the measure is a count: summed over goals rather than averaged, printed as an
    /// integer.
    pub fn is_count(self) -> bool {
        matches!(
            self,
            PrefsMeasure::NumPrefsPoss | PrefsMeasure::NumPrefsFul | PrefsMeasure::NumPrefsFulRet
        )
    }

    /// Whether the measure reads the counts `c(a, b)` of every pair of lemmas (`J²` of them).
    pub fn reads_pairs(self) -> bool {
        matches!(
            self,
            PrefsMeasure::Pair | PrefsMeasure::PairRet | PrefsMeasure::PairImp
        )
    }

    /// The goal's value.
    pub fn value(self, g: &GoalPrefs) -> f64 {
        match self {
            PrefsMeasure::NumPrefsPoss => counts::num_prefs_poss(g),
            PrefsMeasure::NumPrefsFul => counts::num_prefs_ful(g),
            PrefsMeasure::NumPrefsFulRet => counts::num_prefs_ful_ret(g),
            PrefsMeasure::Simp => simp::simp(g),
            PrefsMeasure::Pair => pair::pair(g),
            PrefsMeasure::Avgjg => avgjg::avgjg(g),
            PrefsMeasure::AvgjgRnonrel => rnonrel::avgjg_rnonrel(g),
            PrefsMeasure::SimpRet => simp::simp_ret(g),
            PrefsMeasure::PairRet => pair::pair_ret(g),
            PrefsMeasure::AvgjgRet => avgjg::avgjg_ret(g),
            PrefsMeasure::AvgjgRnonrelRet => rnonrel::avgjg_rnonrel_ret(g),
            PrefsMeasure::SimpImp => simp::simp_imp(g),
            PrefsMeasure::PairImp => pair::pair_imp(g),
            PrefsMeasure::AvgjgImp => avgjg::avgjg_imp(g),
        }
    }
}

impl std::fmt::Display for PrefsMeasure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `a / b` as trec_eval divides two counts (`b > 0` checked by the caller where it checks).
fn ratio(a: u64, b: u64) -> f64 {
    a as f64 / b as f64
}

#[cfg(test)]
pub(crate) mod testing {
    //! A goal's judgments written as lines, counted.

    use super::{GoalPrefs, Pref, PrefsCounter, PrefsMeasure};

    /// The judgments `(group, subgroup, lemma place, level)`, counted for every measure with `r`
    /// of the `j` judged lemmas ranked.
    pub fn count(lines: &[(&str, &str, u32, f64)], j: u32, r: u32) -> GoalPrefs {
        let mut prefs: Vec<Pref<'_>> = lines
            .iter()
            .map(|&(g, s, doc, level)| Pref {
                group: g.as_bytes(),
                subgroup: s.as_bytes(),
                level,
                doc,
            })
            .collect();
        let mut c = PrefsCounter::new(&PrefsMeasure::ALL);
        c.count(&mut prefs, j, r).unwrap().clone()
    }

    /// `|a - b| < 1e-12`.
    pub fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_in_table_order() {
        for m in PrefsMeasure::ALL {
            assert_eq!(PrefsMeasure::from_name(m.name()), Some(m));
        }
        let mut sorted = PrefsMeasure::ALL;
        sorted.sort();
        assert_eq!(sorted, PrefsMeasure::ALL);
        assert_eq!(PrefsMeasure::from_name("prefs"), None);
        let counts: Vec<_> = PrefsMeasure::ALL.iter().filter(|m| m.is_count()).collect();
        assert_eq!(counts.len(), 3);
    }
}
