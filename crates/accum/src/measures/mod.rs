//! The measures, one unit each (after trec_eval's `m_*.c` files).
//!
//! Every kind of [`Measure`] is declared once, by a type implementing [`Def`] in the file of its
//! family (`precision.rs` for `P@k`, `set.rs` for `SetP`, `SetR` and `SetF`, ...), with its
//! definition as the file's documentation and its hand-computed tests beside it. A declaration
//! gives:
//!
//! * its native syntax and a one-line description ([`Def::SYNTAX`], the `-m` help), the native
//!   names it claims ([`Def::parse`]) and how it prints ([`Def::fmt`]);
//! * its trec_eval names ([`Def::TREC`]): the table entry (name, place in trec_eval's output order,
//!   parameter syntax, default cutoffs) and which of its measures each name covers;
//! * how it aggregates over goals ([`Def::AGGREGATION`]) and whether it has a per-goal value
//!   ([`Def::PER_GOAL`]);
//! * what the accumulator must record for it ([`Def::needs`]: a cutoff, a recall level, a score
//!   threshold, the ideal DCG, the universe) and how its value is finished from the accumulator's
//!   state ([`Def::value`], reading a [`GoalView`]).
//!
//! The [`registry!`] below lists every kind once, with the `Measure` variant it is; from that list
//! it generates the `Measure` enum and every match over it (exhaustive, no `_` arm), so a kind
//! missing anything is a compile error. Everything else (the native parser, the trec_eval parser
//! and table, `Display`, `trec_name`, the help text, the plan's cutoffs and levels, aggregation)
//! is derived from the declarations.
//!
//! The per-item hot path ([`crate::GoalAccumulator::push`]) does not go through this module: the
//! accumulator keeps one fused running state for every measure, and a declaration only says which
//! of its records (cutoff slots, level slots, thresholds) it reads when the goal finishes.

use crate::goal::GoalView;
use crate::lists::{Gains, Levels};
use crate::measure::{Aggregation, ApNorm, Level, NativeName, Origin, RecallNorm};
use crate::plan::LevelRule;
use crate::trec::{TrecArg, TrecEntry};
pub(crate) use crate::walk::WalkNeed;
pub use relstring::{chunks as relstring_chunks, text as relstring_text};
use std::fmt;

mod ap;
mod auc;
mod bin_g;
mod bpref;
mod counts;
mod dcg;
mod depth;
mod f;
mod g;
mod gain_dcg;
mod gm_bpref;
mod gmap;
mod infap;
mod iprec;
mod judged;
mod leak;
mod ndcg;
mod ndcg_rel;
mod origin;
mod precision;
mod rbp;
mod recall;
mod relstring;
mod rndcg;
mod rprec;
mod rprec_mult;
mod rr;
mod set;
mod set_map;
mod set_relative_p;
mod success;
mod unj;
mod utility;
mod yaap;

/// One measure kind (one `Measure` variant): everything the crate knows about it.
///
/// `Fields` is the variant's fields as a tuple, in declaration order: `(u32,)` for `P { k }`,
/// `(Option<u32>, ApNorm)` for `AP { cutoff, norm }`, `()` for `Rprec`. Every function receives
/// them by value, so no declaration ever matches on `Measure`.
pub(crate) trait Def {
    /// The variant's fields, as a tuple.
    type Fields: Copy + 'static;
    /// Native syntaxes with one-line descriptions (the `-m` help).
    const SYNTAX: &'static [Syntax];
    /// Native names of this kind, each printed back unchanged by `Display` (tests iterate them).
    const EXAMPLES: &'static [&'static str];
    /// trec_eval's names for (some of) the kind's measures.
    const TREC: &'static [Alias<Self::Fields>] = &[];
    /// How per-goal values aggregate over goals.
    const AGGREGATION: Aggregation = Aggregation::Mean;
    /// Whether the measure has a per-goal value (`NumQ` and `GM_AP` are summary-only).
    const PER_GOAL: bool = true;

    /// Parses a native name (`Name(params)@cutoff`, already split) if it is this kind's, else
    /// `None`. Parameters it does not [`take`](NativeName::take) are reported as unknown.
    fn parse(name: &mut NativeName<'_>) -> Option<Result<Measure, String>>;
    /// The canonical native name (`Display`).
    fn fmt(fields: Self::Fields, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    /// What the accumulator must record for this measure (required, so that a cutoff measure
    /// cannot forget its cutoff: without one, [`GoalView::k`] is `n`).
    fn needs(fields: Self::Fields) -> Needs;
    /// The per-goal value from the goal's final state; `None` when undefined.
    fn value(fields: Self::Fields, goal: &GoalView<'_>) -> Option<f64>;
}

/// One native syntax and what it means, for `-m` help.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Syntax {
    /// The syntax, with placeholders: `P@k`, `AP(norm=min)@k`.
    pub syntax: &'static str,
    /// One line: the definition in METRICS.md's notation.
    pub about: &'static str,
}

/// A trec_eval name of a kind: its table entry, and which of the kind's measures it covers.
pub(crate) struct Alias<F: 'static> {
    /// The entry of trec_eval's table.
    pub entry: TrecEntry,
    /// The parameter under which this entry names the measure with `fields` (`None` if it does
    /// not): the inverse of the entry's constructor, giving [`Measure::trec_name`].
    pub of: fn(F) -> Option<TrecArg>,
}

/// Which recall-level record a measure reads.
#[derive(Copy, Clone, Debug, PartialEq)]
pub(crate) enum LevelNeed {
    None,
    /// One level `r` under a rule (shared with other measures that need the same).
    One(f64, LevelRule),
    /// The eleven interpolated levels 0.0, 0.1, ..., 1.0, as consecutive records (AP11).
    Eleven,
    /// Interpolated levels in the order given, then 0.0, as consecutive records (AP11 with
    /// custom levels).
    Run(&'static [f64]),
}

/// What the accumulator must record for one measure. The plan merges the needs of all measures:
/// equal cutoffs share a slot, so `P@10`, `R@10` and `AP@10` cost one record.
#[derive(Copy, Clone, Debug, PartialEq)]
pub(crate) struct Needs {
    /// The state `(s, AP sum, DCG)` when the ranking passes rank `k`.
    pub cutoff: Option<u32>,
    /// The first rank reaching a recall level, and the best precision from there on.
    pub level: LevelNeed,
    /// Counts of the items scored at or above a threshold (makes the plan need scores).
    pub threshold: Option<f64>,
    /// The DCG and the ideal DCG (at the cutoff, or of the whole ranking): without a measure
    /// that needs them, the DCG read is 0.
    pub ideal_dcg: bool,
    /// The universe size (and its check against the ranking).
    pub universe: bool,
    /// The inaccessible premises among the first `k` of the unmasked ranking (`Leak@k`).
    pub leak: Option<u32>,
    /// The rank of the first inaccessible premise of the unmasked ranking (`LeakRank`).
    pub leak_rank: bool,
    /// The relevant premises' origins, counted per goal and at the cutoff (`R(origin=...)@k`).
    pub origin: bool,
    /// A record of the walk over the judged items (crate::walk): `binG`, `G`, `infAP`, ...
    pub walk: Option<WalkNeed>,
}

impl Needs {
    /// Only the running totals (n, s, AP sum, ...), which are always kept.
    pub const NOTHING: Needs = Needs {
        cutoff: None,
        level: LevelNeed::None,
        threshold: None,
        ideal_dcg: false,
        universe: false,
        leak: None,
        leak_rank: false,
        origin: false,
        walk: None,
    };

    /// The record at cutoff `k`, when there is one.
    pub const fn cutoff(k: Option<u32>) -> Needs {
        Needs {
            cutoff: k,
            ..Needs::NOTHING
        }
    }

    /// A record of the walk.
    pub const fn walk(w: WalkNeed) -> Needs {
        Needs {
            walk: Some(w),
            ..Needs::NOTHING
        }
    }
}

/// One kind of measure, as listed by [`Measure::kinds`]: its `Measure` variant, native syntax and
/// examples. Property tests iterate the kinds to make sure each one is checked.
#[derive(Copy, Clone, Debug)]
pub struct MeasureKind {
    /// The `Measure` variant (`"P"`, `"SetF"`).
    pub variant: &'static str,
    /// Native syntaxes, with one-line descriptions.
    pub syntax: &'static [Syntax],
    /// Native names of this kind; each parses to one measure and prints back unchanged.
    pub examples: &'static [&'static str],
    pub(crate) parse: fn(&mut NativeName<'_>) -> Option<Result<Measure, String>>,
    pub(crate) trec: fn(&mut Vec<TrecEntry>),
}

impl MeasureKind {
    const fn of<D: Def>(variant: &'static str) -> MeasureKind {
        MeasureKind {
            variant,
            syntax: D::SYNTAX,
            examples: D::EXAMPLES,
            parse: D::parse,
            trec: push_trec::<D>,
        }
    }

    /// The trec_eval table entries of this kind.
    pub fn trec_entries(&self) -> Vec<TrecEntry> {
        let mut v = Vec::new();
        (self.trec)(&mut v);
        v
    }
}

fn push_trec<D: Def>(out: &mut Vec<TrecEntry>) {
    out.extend(D::TREC.iter().map(|a| a.entry));
}

fn trec_name_of<D: Def>(fields: D::Fields) -> Option<String> {
    D::TREC
        .iter()
        .find_map(|a| (a.of)(fields).map(|arg| a.entry.printed_name(arg)))
}

/// Declares every kind: `Variant { fields } => DefType`, with the variant's documentation. Generates
/// the `Measure` enum, [`KINDS`], and the exhaustive dispatch of every per-measure question to the
/// kind's [`Def`].
macro_rules! registry {
    ($(
        $(#[$doc:meta])*
        $variant:ident $({ $($(#[$fdoc:meta])* $field:ident: $ty:ty),+ $(,)? })? => $def:ty,
    )+) => {
        /// One measure of METRICS.md §3. Cutoffs are `>= 1`; `None` means "the whole ranking".
        ///
        /// Each variant is declared, defined and tested in its family's file under
        /// `crates/accum/src/measures/`.
        #[derive(Copy, Clone, Debug, PartialEq)]
        pub enum Measure {
            $( $(#[$doc])* $variant $({ $($(#[$fdoc])* $field: $ty),+ })?, )+
        }

        /// Positions in [`KINDS`], one per variant.
        #[allow(clippy::upper_case_acronyms)]
        #[derive(Copy, Clone)]
        enum Index {
            $( $variant, )+
        }

        /// Every kind, in declaration order.
        pub(crate) static KINDS: &[MeasureKind] = &[
            $( MeasureKind::of::<$def>(stringify!($variant)), )+
        ];

        impl Measure {
            /// The measure's kind.
            pub fn kind(&self) -> &'static MeasureKind {
                let i = match self {
                    $( Measure::$variant { .. } => Index::$variant, )+
                };
                &KINDS[i as usize]
            }

            pub(crate) fn fmt_native(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match *self {
                    $( Measure::$variant $({ $($field),+ })? =>
                        <$def as Def>::fmt(($($($field,)+)?), f), )+
                }
            }

            /// How the measure aggregates over goals.
            pub fn aggregation(&self) -> Aggregation {
                match self {
                    $( Measure::$variant { .. } => <$def as Def>::AGGREGATION, )+
                }
            }

            /// Whether the measure has a per-goal value (`NumQ` and `GM_AP` are summary-only).
            pub fn per_goal(&self) -> bool {
                match self {
                    $( Measure::$variant { .. } => <$def as Def>::PER_GOAL, )+
                }
            }

            pub(crate) fn needs(&self) -> Needs {
                match *self {
                    $( Measure::$variant $({ $($field),+ })? =>
                        <$def as Def>::needs(($($($field,)+)?)), )+
                }
            }

            #[inline]
            pub(crate) fn value(&self, goal: &GoalView<'_>) -> Option<f64> {
                match *self {
                    $( Measure::$variant $({ $($field),+ })? =>
                        <$def as Def>::value(($($($field,)+)?), goal), )+
                }
            }

            /// The name trec_eval prints for this measure, when trec_eval has it.
            pub fn trec_name(&self) -> Option<String> {
                match *self {
                    $( Measure::$variant $({ $($field),+ })? =>
                        trec_name_of::<$def>(($($($field,)+)?)), )+
                }
            }
        }
    };
}

registry! {
    /// `P@k = s(k)/k`.
    P {
        /// The cutoff.
        k: u32,
    } => precision::Precision,
    /// `R@k = s(k)/R`, or `s(k)/min(k,R)` with [`RecallNorm::Min`].
    R {
        /// The cutoff.
        k: u32,
        /// The denominator.
        norm: RecallNorm,
    } => recall::Recall,
    /// `AP` / `AP@k`: sum of `p(k')` over relevant ranks `k' <= k`, normalised per [`ApNorm`].
    AP {
        /// The cutoff; `None`: the whole ranking.
        cutoff: Option<u32>,
        /// The normalisation.
        norm: ApNorm,
    } => ap::Ap,
    /// `Rprec = s(R)/R`.
    Rprec => rprec::Rprec,
    /// `Depth(recall=r)`: smallest `k` with `s(k) >= c(r)`; undefined when not reached.
    Depth {
        /// The recall level.
        recall: Level,
    } => depth::Depth,
    /// `P(recall=r) = p(Depth(recall=r))`; 0 when not reached.
    PAtRecall {
        /// The recall level.
        recall: Level,
    } => depth::PAtRecall,
    /// `IPrec@r = max_{k: s(k) >= need(r)} p(k)`; 0 when no such k.
    IPrec {
        /// The recall level.
        recall: Level,
    } => iprec::IPrec,
    /// `AP11`: mean of `IPrec@r` at r = 0.0, 0.1, ..., 1.0.
    AP11 => iprec::Ap11,
    /// `AP11(levels=...)`: trec_eval's `11pt_avg` at the recall levels given.
    AP11Levels {
        /// The levels, in the order given.
        levels: Levels,
    } => iprec::Ap11Levels,
    /// `RR` / `RR@k`: `1/k1` with `k1` the first relevant rank (within k); 0 if none.
    RR {
        /// The cutoff; `None`: the whole ranking.
        cutoff: Option<u32>,
    } => rr::Rr,
    /// `Success@k`: 1 if `s(k) >= 1`.
    Success {
        /// The cutoff.
        k: u32,
    } => success::Success,
    /// `F(beta=b)@k`; `beta2` is `b^2`. Without a cutoff, `k = n`.
    F {
        /// `beta` squared.
        beta2: f64,
        /// The cutoff; `None`: the whole ranking.
        cutoff: Option<u32>,
    } => f::F,
    /// `E(beta=b)@k = 1 - F(beta=b)@k`.
    E {
        /// `beta` squared.
        beta2: f64,
        /// The cutoff; `None`: the whole ranking.
        cutoff: Option<u32>,
    } => f::E,
    /// `SetP`: precision of the retrieved set, or of the items with score `>= threshold`.
    SetP {
        /// The score threshold; `None`: the whole retrieved set.
        threshold: Option<f64>,
    } => set::SetP,
    /// `SetR`: recall of the retrieved set, or of the items with score `>= threshold`.
    SetR {
        /// The score threshold; `None`: the whole retrieved set.
        threshold: Option<f64>,
    } => set::SetR,
    /// `SetF(beta=b)`: F of the retrieved set (or of the items with score `>= threshold`).
    SetF {
        /// `beta` squared.
        beta2: f64,
        /// The score threshold; `None`: the whole retrieved set.
        threshold: Option<f64>,
    } => set::SetF,
    /// `nDCG` / `nDCG@k`: trec_eval's `ndcg` / `ndcg_cut_k`.
    NDCG {
        /// The cutoff; `None`: the whole ranking.
        cutoff: Option<u32>,
    } => ndcg::Ndcg,
    /// `Bpref`: trec_eval's `bpref`.
    Bpref => bpref::Bpref,
    /// `AUC`: fraction of (relevant, non-relevant) pairs of the universe in the right order.
    AUC => auc::Auc,
    /// `NumRet = n`.
    NumRet => counts::NumRet,
    /// `NumRel = R`.
    NumRel => counts::NumRel,
    /// `NumRelRet = s(n)`.
    NumRelRet => counts::NumRelRet,
    /// `NumQ`: goals evaluated (1 per goal; summed).
    NumQ => counts::NumQ,
    /// `NumRet(threshold=t) = n_t`: items scored `>= t` (summed).
    NumRetAbove {
        /// The score threshold.
        threshold: f64,
    } => counts::NumRetAbove,
    /// `NumRelRet(threshold=t) = s_t`: relevant items scored `>= t` (summed).
    NumRelRetAbove {
        /// The score threshold.
        threshold: f64,
    } => counts::NumRelRetAbove,
    /// `SetAP = s(n)² / (n·R)`: average precision of the retrieved set, order ignored.
    SetAP => set_map::SetAp,
    /// `SetRelP = s(n) / min(n, R)`: relative precision of the retrieved set.
    SetRelP => set_relative_p::SetRelP,
    /// `GM_Bpref = exp(mean(ln(max(Bpref, 1e-5))))`; summary only.
    GMBpref => gm_bpref::GmBpref,
    /// `Utility = a·s(n) + b·(n - s(n)) + c·(R - s(n)) + d·(s(n) - n - R)`.
    Utility {
        /// The worths `[a, b, c, d]` of the contingency table's cells.
        coefficients: [f64; 4],
    } => utility::Utility,
    /// `NumNonRelJudgedRet`: judged non-relevant items ranked (summed).
    NumNonRelJudgedRet => judged::NumNonRelJudgedRet,
    /// `Rprec(mult=x) = s(c)/c`, `c = floor(x·R + 0.9)`.
    RprecMult {
        /// The multiple of `R`.
        mult: f64,
    } => rprec_mult::RprecMult,
    /// `binG`: sum of `1/log2(2 + non-relevant above)` over retrieved relevant items, over `R`.
    BinG => bin_g::BinG,
    /// `G`: normalised gain.
    G => g::G,
    /// `nDCG_rel`: nDCG averaged over the positive grades.
    NDCGRel => ndcg_rel::NdcgRel,
    /// `RnDCG`: nDCG averaged over the ideal ranking's R-levels.
    RNDCG => rndcg::Rndcg,
    /// `infAP`: inferred AP.
    InfAP => infap::InfAp,
    /// `Yaap = ln((1 + A)/(1 + R - A))`.
    Yaap => yaap::Yaap,
    /// `DCG` of the whole ranking.
    DCG => dcg::Dcg,
    /// `IDCG`: DCG of the ideal ranking.
    IDCG => dcg::Idcg,
    /// `nDCG(gains=...)`: trec_eval's `ndcg` with custom gains.
    NDCGGains {
        /// The gains given.
        gains: Gains,
    } => gain_dcg::NdcgGains,
    /// `DCG(gains=...)`: trec_eval's `dcg` with custom gains.
    DCGGains {
        /// The gains given.
        gains: Gains,
    } => gain_dcg::DcgGains,
    /// `IDCG(gains=...)`: trec_eval's `ideal_dcg` with custom gains.
    IDCGGains {
        /// The gains given.
        gains: Gains,
    } => gain_dcg::IdcgGains,
    /// `RBP(p=x)`: rank-biased precision.
    RBP {
        /// The persistence.
        p: f64,
    } => rbp::Rbp,
    /// `RBPResid(p=x)`: what the unjudged items could add to `RBP(p=x)`.
    RBPResid {
        /// The persistence.
        p: f64,
    } => rbp::RbpResid,
    /// `RelString(len=k,chunk=c)`: trec_eval's `relstring`, 13 characters a value.
    RelString {
        /// The characters (items) of the text.
        len: u32,
        /// Which 13 of them this value codes.
        chunk: u32,
    } => relstring::RelString,
    /// `Unj@k`: unjudged items among the first `k`, over `k`.
    Unj {
        /// The cutoff.
        k: u32,
    } => unj::Unj,
    /// `GM_AP = exp(mean(ln(max(AP, 1e-5))))`; summary only.
    GMAP => gmap::GmAp,
    /// `Leak@k`: inaccessible premises among the first `k` of the unmasked ranking, over `k`.
    Leak {
        /// The cutoff.
        k: u32,
    } => leak::Leak,
    /// `LeakRank`: the rank of the first inaccessible premise of the unmasked ranking; undefined
    /// when none is.
    LeakRank => leak::LeakRank,
    /// `R(origin=o)@k`: the relevant premises of origin `o` found in the first `k`, over the
    /// relevant premises of that origin; undefined when the goal has none.
    ROrigin {
        /// The cutoff.
        k: u32,
        /// Where the premises counted are defined.
        origin: Origin,
    } => origin::RecallOrigin,
}

/// `a / b`, or 0 when `b` is 0 (every ratio of METRICS.md with an empty denominator).
#[inline]
pub(crate) fn div(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        0.0
    } else {
        a / b
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Helpers for the per-family tests: the worked example of METRICS.md §7 and small rankings.

    use crate::{Config, GoalAccumulator, Label, Measure, Plan, Truth};
    use std::sync::Arc;

    /// `x a y b c z` with actual set {a, b, c}: `true` marks a relevant item.
    pub const SEED: [bool; 6] = [false, true, false, true, true, false];

    /// `|a - b| < 1e-12`.
    pub fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// Evaluates `names` on a ranking of judged labels (or unjudged), actual set `truth`.
    pub fn eval_labels(names: &[&str], truth: &Truth<'_>, labels: &[Label]) -> Vec<Option<f64>> {
        let ms = Measure::parse_all(names.iter().copied()).unwrap();
        assert_eq!(ms.len(), names.len(), "distinct names");
        let plan = Arc::new(Plan::new(&ms, Config::default()));
        let mut acc = GoalAccumulator::new(plan);
        acc.begin(truth);
        for &l in labels {
            acc.push(l);
        }
        acc.finish().unwrap().values().to_vec()
    }

    /// Evaluates `names` on a binary ranking (`true`: relevant, else unjudged) with `r` relevant.
    pub fn eval(names: &[&str], r: u64, ranking: &[bool]) -> Vec<Option<f64>> {
        let labels: Vec<Label> = ranking
            .iter()
            .map(|&rel| {
                if rel {
                    Label::judged(1)
                } else {
                    Label::UNJUDGED
                }
            })
            .collect();
        eval_labels(names, &Truth::binary(r, 0), &labels)
    }

    /// One measure on the worked example.
    pub fn seed(name: &str) -> f64 {
        eval(&[name], 3, &SEED)[0].unwrap_or_else(|| panic!("{name} undefined on the seed"))
    }

    /// One measure on an empty ranking with `r` relevant.
    pub fn empty(name: &str, r: u64) -> Option<f64> {
        eval(&[name], r, &[])[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::NativeName;

    #[test]
    fn every_example_is_claimed_by_its_kind_alone_and_prints_back() {
        for kind in KINDS {
            assert!(!kind.examples.is_empty(), "{} has no example", kind.variant);
            assert!(!kind.syntax.is_empty(), "{} has no syntax", kind.variant);
            for &ex in kind.examples {
                let claims: Vec<&str> = KINDS
                    .iter()
                    .filter(|k| (k.parse)(&mut NativeName::split(ex).unwrap()).is_some())
                    .map(|k| k.variant)
                    .collect();
                assert_eq!(claims, [kind.variant], "{ex}");
                let m = Measure::parse(ex).unwrap();
                assert_eq!(m.len(), 1, "{ex}");
                assert_eq!(m[0].to_string(), ex);
                assert_eq!(m[0].kind().variant, kind.variant);
            }
        }
    }

    #[test]
    fn summary_only_measures_are_those_of_metrics_md() {
        let summary_only: Vec<&str> = KINDS
            .iter()
            .filter(|k| !Measure::parse(k.examples[0]).unwrap()[0].per_goal())
            .map(|k| k.variant)
            .collect();
        assert_eq!(summary_only, ["NumQ", "GMBpref", "GMAP"]);
    }
}
