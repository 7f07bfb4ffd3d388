//! Measure names: the grammar of METRICS.md §3 (`Name[(param=value,...)][@cutoff]`) and the
//! trec_eval aliases (`P.5,10`, `map_cut_10`, `set_F.0.5`, `iprec_at_recall`, ...).
//!
//! A [`Measure`] is one number per goal (or one summary figure). Its [`Display`](std::fmt::Display)
//! is the canonical METRICS.md name; [`Measure::trec_name`] is the name trec_eval prints. The
//! measures themselves are declared in `measures/` (one file per family); this module holds the
//! grammar they share and the entry points, which only dispatch to the declarations.

use crate::measures::KINDS;
pub use crate::measures::{Measure, MeasureKind, Syntax};
use std::fmt;

/// trec_eval's default cutoffs for `P`, `recall`, `map_cut`, `ndcg_cut`, `relative_P`.
pub const TREC_CUTOFFS: [u32; 9] = [5, 10, 15, 20, 30, 100, 200, 500, 1000];
/// trec_eval's default cutoffs for `success`.
pub const TREC_SUCCESS_CUTOFFS: [u32; 3] = [1, 5, 10];

/// How a recall measure at cutoff `k` is normalised.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum RecallNorm {
    /// `s(k) / R` (`R@k`, trec_eval `recall_k`).
    Rel,
    /// `s(k) / min(k, R)` (`R(norm=min)@k`, "capped recall"; trec_eval `relative_P_k`).
    Min,
}

/// Where a goal's relevant premise is defined, against the goal's own file (premise selection:
/// `R(origin=in-file)@k`, `R(origin=imported)@k`). The engine tells it from the corpus.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Defined in the goal's own file.
    InFile,
    /// Defined in another file.
    Imported,
}

impl Origin {
    /// Both origins, in index order ([`Origin::index`]).
    pub const ALL: [Origin; 2] = [Origin::InFile, Origin::Imported];

    /// The name in a measure's parameter: `in-file`, `imported`.
    pub fn name(self) -> &'static str {
        match self {
            Origin::InFile => "in-file",
            Origin::Imported => "imported",
        }
    }

    /// 0 for [`Origin::InFile`], 1 for [`Origin::Imported`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// How AP (at a cutoff) is normalised.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ApNorm {
    /// `/ R`: trec_eval's `map` and `map_cut_k`, ranx.
    Rel,
    /// `/ min(k, R)`: Kaggle's `apk`.
    Min,
    /// `/ s(k)`: the mean precision at the relevant items retrieved; 0 when none was.
    Hits,
}

/// A recall level `r` in `[0, 1]`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Level(pub f64);

/// What went wrong parsing a measure name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeasureError {
    /// The name as given.
    pub name: String,
    /// What was expected.
    pub reason: String,
}

impl fmt::Display for MeasureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "measure `{}`: {}", self.name, self.reason)
    }
}

impl std::error::Error for MeasureError {}

/// How an aggregate over goals is formed (METRICS.md §4).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Aggregation {
    /// Arithmetic mean over evaluated goals.
    Mean,
    /// Sum over goals (counts).
    Sum,
    /// Mean and median over goals that reach the level, and the fraction that do.
    Depth,
    /// Geometric mean of AP with a 1e-5 floor.
    GeoMean,
    /// Mean over the goals where the value is defined, and the fraction of evaluated goals
    /// where it is (`R(origin=in-file)@k`: goals with a relevant premise of that origin).
    Covered,
}

impl Measure {
    /// Whether the smaller value is the better one: `Leak@k` (a share of inaccessible premises)
    /// and `Depth(recall=r)` (a rank). Every other measure is better larger (`LeakRank` too: the
    /// first inaccessible premise ranked later).
    pub fn lower_is_better(&self) -> bool {
        matches!(self, Measure::Leak { .. } | Measure::Depth { .. })
    }

    /// Whether the measure reads the unmasked ranking premise by premise (`Leak@k`, `LeakRank`).
    pub fn reads_leaks(&self) -> bool {
        matches!(self, Measure::Leak { .. } | Measure::LeakRank)
    }

    /// Whether the measure needs a corpus: the leak measures and recall by origin
    /// (`R(origin=o)@k`).
    pub fn needs_corpus(&self) -> bool {
        self.reads_leaks() || matches!(self, Measure::ROrigin { .. })
    }

    /// Parses one name in either grammar. trec_eval names with parameter lists expand to several
    /// measures (`P.5,10` is `P@5` and `P@10`; bare `P` is trec_eval's nine default cutoffs), under
    /// trec_eval's rules ([`crate::trec`]: cutoffs sorted, duplicates refused). The names
    /// trec_eval prints (`P_10`, `map_cut_100`, `iprec_at_recall_0.10`) are accepted too.
    pub fn parse(name: &str) -> Result<Vec<Measure>, MeasureError> {
        let err = |reason: String| MeasureError {
            name: name.to_string(),
            reason,
        };
        let name_trim = name.trim();
        if name_trim.is_empty() {
            return Err(err("empty measure name".into()));
        }
        if let Some(m) = crate::trec::parse_printed(name_trim) {
            return m.map(|m| vec![m]).map_err(err);
        }
        if let Some(ms) = crate::trec::parse_arg(name_trim) {
            return ms.map_err(err);
        }
        parse_native(name_trim).map(|m| vec![m]).map_err(err)
    }

    /// Parses a list such as `"AP,P@10,RR"` (comma-separated only where a comma cannot belong to
    /// a parameter list; prefer repeating `-m`).
    pub fn parse_all<'a>(
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<Vec<Measure>, MeasureError> {
        let mut out = Vec::new();
        for n in names {
            for m in Measure::parse(n)? {
                if !out.contains(&m) {
                    out.push(m);
                }
            }
        }
        Ok(out)
    }

    /// Whether the measure needs item scores (score thresholds).
    pub fn needs_scores(&self) -> bool {
        self.needs().threshold.is_some()
    }

    /// Every kind of measure, in declaration order.
    pub fn kinds() -> &'static [MeasureKind] {
        KINDS
    }

    /// Every native syntax with its one-line description, in declaration order.
    pub fn syntaxes() -> impl Iterator<Item = &'static Syntax> {
        KINDS.iter().flat_map(|k| k.syntax)
    }

    /// The `-m` help: one line per native syntax with its description, and the trec_eval names
    /// of each kind (on the kind's line, or on a line of their own after a kind of several
    /// syntaxes).
    pub fn help_text() -> String {
        let mut s = String::new();
        for kind in KINDS {
            // The judgment-group measures are trec_eval's subcommand's alone.
            let trec: Vec<String> = (kind.trec_entries().iter())
                .filter(|e| !crate::trec::JUDGMENT_GROUP_MEASURES.contains(&e.name))
                .map(|e| e.syntax())
                .collect();
            let trec = (!trec.is_empty()).then(|| format!("[trec_eval: {}]", trec.join(", ")));
            for syn in kind.syntax {
                s += &format!("  {:<28} {}", syn.syntax, syn.about);
                if let (Some(t), 1) = (&trec, kind.syntax.len()) {
                    s += &format!("  {t}");
                }
                s += "\n";
            }
            if let (Some(t), 2..) = (&trec, kind.syntax.len()) {
                s += &format!("  {:<28} {t}\n", "");
            }
        }
        s
    }
}

impl fmt::Display for Measure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_native(f)
    }
}

/// A name of the METRICS.md §3 grammar, split: `base(key=value,...)@at`. Each kind's
/// [`parse`](crate::measures) claims the bases it knows and takes the parameters it accepts.
#[derive(Clone, Debug)]
pub(crate) struct NativeName<'a> {
    /// The name before any `(` or `@`.
    pub base: &'a str,
    params: Vec<(&'a str, &'a str)>,
    at: Option<&'a str>,
}

impl<'a> NativeName<'a> {
    /// Splits `name` (after any parenthesised parameters, the last `@` introduces the cutoff).
    pub fn split(name: &'a str) -> Result<NativeName<'a>, String> {
        let close = name.rfind(')');
        let at = name.rfind('@').filter(|&i| close.is_none_or(|c| i > c));
        let (head, at) = match at {
            Some(i) => (&name[..i], Some(&name[i + 1..])),
            None => (name, None),
        };
        let (base, params) = match head.find('(') {
            Some(i) => {
                if !head.ends_with(')') {
                    return Err("expected `)` closing the parameter list".into());
                }
                (&head[..i], Some(&head[i + 1..head.len() - 1]))
            }
            None => (head, None),
        };
        let mut kv = Vec::new();
        if let Some(p) = params {
            for part in p.split(',') {
                let Some((k, v)) = part.split_once('=') else {
                    return Err(format!(
                        "expected `param=value` in the parameter list, found `{part}`"
                    ));
                };
                kv.push((k.trim(), v.trim()));
            }
        }
        Ok(NativeName {
            base,
            params: kv,
            at,
        })
    }

    /// Whether the base is one of `names`.
    pub fn is(&self, names: &[&str]) -> bool {
        names.contains(&self.base)
    }

    /// Whether parameter `key` is given.
    pub fn has(&self, key: &str) -> bool {
        self.params.iter().any(|(k, _)| *k == key)
    }

    /// Takes parameter `key` (its first occurrence; a repeated key stays, and is then unknown).
    pub fn take(&mut self, key: &str) -> Option<&'a str> {
        let i = self.params.iter().position(|(k, _)| *k == key)?;
        Some(self.params.remove(i).1)
    }

    /// The text after `@`, raw (`IPrec@r` reads a recall level there).
    pub fn at(&self) -> Option<&'a str> {
        self.at
    }

    /// The cutoff after `@`, if any.
    pub fn cutoff(&self) -> Result<Option<u32>, String> {
        self.at.map(parse_u32_cutoff).transpose()
    }

    /// The cutoff after `@`, required.
    pub fn need_cutoff(&self) -> Result<u32, String> {
        self.cutoff()?
            .ok_or_else(|| format!("`{0}` needs a cutoff: `{0}@k`", self.base))
    }

    /// No cutoff allowed.
    pub fn no_cutoff(&self) -> Result<(), String> {
        match self.at {
            None => Ok(()),
            Some(_) => Err(format!("`{}` takes no cutoff", self.base)),
        }
    }

    /// `m`, if every parameter was taken.
    fn finish(self, m: Measure) -> Result<Measure, String> {
        match self.params.first() {
            None => Ok(m),
            Some((k, _)) => Err(format!("unknown parameter `{k}` for `{m}`")),
        }
    }
}

/// The METRICS.md §3 grammar: the first kind claiming the name parses it.
fn parse_native(name: &str) -> Result<Measure, String> {
    let mut n = NativeName::split(name)?;
    for kind in KINDS {
        if let Some(m) = (kind.parse)(&mut n) {
            return n.finish(m?);
        }
    }
    let syntaxes: Vec<&str> = Measure::syntaxes().map(|s| s.syntax).collect();
    Err(format!(
        "unknown measure; expected a METRICS.md §3 name ({}) or a trec_eval name (P.5,10, map, \
         map_cut.10, ...)",
        syntaxes.join(", ")
    ))
}

/// Formats a recall level or threshold: always with a decimal point (`1.0`, `0.5`, `0.25`).
pub(crate) fn fmt_level(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.1}")
    } else {
        format!("{x}")
    }
}

/// The beta parameter of a name, from beta² as it is kept: `beta=b` when `b²` is beta² exactly
/// (`1`, `0.5`, `2`), else `beta2=` beta² itself (trec_eval's `set_F.0.5` is beta² = 0.5, and no
/// double squares to 0.5), so that every name parses back to the same measure.
pub(crate) fn fmt_beta(beta2: f64) -> String {
    let b = beta2.sqrt();
    if b * b == beta2 {
        format!("beta={b}")
    } else {
        format!("beta2={beta2}")
    }
}

/// beta² from a name's `beta=b` (squared) or `beta2=` (as it is); `None` when neither is given.
pub(crate) fn take_beta2(n: &mut NativeName<'_>) -> Result<Option<f64>, String> {
    match (n.take("beta"), n.take("beta2")) {
        (Some(_), Some(_)) => Err("give beta or beta2 (its square), not both".into()),
        (Some(b), None) => parse_beta(b).map(Some),
        (None, Some(b2)) => {
            let v = parse_number(b2)?;
            if !(1e-200..=1e200).contains(&v) {
                return Err(format!(
                    "beta2 must be between 1e-200 and 1e200, found `{b2}`"
                ));
            }
            Ok(Some(v))
        }
        (None, None) => Ok(None),
    }
}

/// `@k` or nothing.
pub(crate) fn fmt_at(k: Option<u32>) -> String {
    k.map(|k| format!("@{k}")).unwrap_or_default()
}

/// A cutoff: a whole number `>= 1`.
pub(crate) fn parse_u32_cutoff(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err("a cutoff must be at least 1".into()),
        Ok(k) => Ok(k),
        Err(_) => Err(format!("expected a whole-number cutoff, found `{s}`")),
    }
}

/// A number, or a fraction `a/b` (so `Depth(recall=1/3)` reads as in METRICS.md §7).
pub(crate) fn parse_number(s: &str) -> Result<f64, String> {
    let s = s.trim();
    let v = if let Some((a, b)) = s.split_once('/') {
        let a: f64 = a
            .trim()
            .parse()
            .map_err(|_| format!("expected a number, found `{s}`"))?;
        let b: f64 = b
            .trim()
            .parse()
            .map_err(|_| format!("expected a number, found `{s}`"))?;
        if b == 0.0 {
            return Err(format!("division by zero in `{s}`"));
        }
        a / b
    } else {
        s.parse::<f64>()
            .map_err(|_| format!("expected a number, found `{s}`"))?
    };
    if !v.is_finite() {
        return Err(format!("expected a finite number, found `{s}`"));
    }
    Ok(v)
}

/// A recall level in `[0, 1]` (a fraction allowed).
pub(crate) fn parse_level(s: &str) -> Result<Level, String> {
    let v = parse_number(s)?;
    if !(0.0..=1.0).contains(&v) {
        return Err(format!("a recall level must be in [0, 1], found `{s}`"));
    }
    Ok(Level(v))
}

/// `beta` (positive), returned squared.
pub(crate) fn parse_beta(s: &str) -> Result<f64, String> {
    let b = parse_number(s)?;
    if b <= 0.0 {
        return Err(format!("beta must be positive, found `{s}`"));
    }
    // Past these, b² (kept, as trec_eval's set_F keeps it) or b²·R would leave f64's range: an
    // F of NaN or 0 where the limit is recall or precision.
    if !(1e-100..=1e100).contains(&b) {
        return Err(format!(
            "beta must be between 1e-100 and 1e100, found `{s}`"
        ));
    }
    Ok(b * b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: &str) -> Measure {
        let v = Measure::parse(s).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(v.len(), 1, "{s}");
        v[0]
    }

    #[test]
    fn native_names_round_trip() {
        for s in [
            "P@10",
            "R@100",
            "R(norm=min)@5",
            "AP",
            "AP@100",
            "AP(norm=min)@3",
            "AP(norm=hits)@2",
            "Rprec",
            "Depth(recall=1.0)",
            "Depth(recall=0.5)",
            "P(recall=1.0)",
            "IPrec@0.3",
            "AP11",
            "RR",
            "RR@10",
            "Success@1",
            "F(beta=1)@5",
            "F(beta=2)@5",
            "E(beta=1)@5",
            "SetP",
            "SetR",
            "SetF(beta=1)",
            "SetP(threshold=0.5)",
            "SetF(beta=0.5,threshold=0.5)",
            "nDCG",
            "nDCG@10",
            "Bpref",
            "AUC",
            "NumRet",
            "NumRel",
            "NumRelRet",
            "NumQ",
            "GM_AP",
        ] {
            assert_eq!(one(s).to_string(), s);
        }
        assert_eq!(
            one("F1@5"),
            Measure::F {
                beta2: 1.0,
                cutoff: Some(5)
            }
        );
        assert_eq!(
            one("Depth(recall=1/3)"),
            Measure::Depth {
                recall: Level(1.0 / 3.0)
            }
        );
    }

    #[test]
    fn trec_aliases() {
        assert_eq!(
            Measure::parse("P.5,10").unwrap(),
            vec![Measure::P { k: 5 }, Measure::P { k: 10 }]
        );
        assert_eq!(Measure::parse("P").unwrap().len(), 9);
        assert_eq!(one("P_20"), Measure::P { k: 20 });
        assert_eq!(
            Measure::parse("map_cut.10,20").unwrap(),
            vec![
                Measure::AP {
                    cutoff: Some(10),
                    norm: ApNorm::Rel
                },
                Measure::AP {
                    cutoff: Some(20),
                    norm: ApNorm::Rel
                }
            ]
        );
        assert_eq!(
            one("set_F.0.5"),
            Measure::SetF {
                beta2: 0.5,
                threshold: None
            }
        );
        assert_eq!(
            one("set_F"),
            Measure::SetF {
                beta2: 1.0,
                threshold: None
            }
        );
        assert_eq!(Measure::parse("iprec_at_recall").unwrap().len(), 11);
        assert_eq!(
            one("iprec_at_recall_0.10").trec_name().unwrap(),
            "iprec_at_recall_0.10"
        );
        assert_eq!(one("ndcg_cut.10"), Measure::NDCG { cutoff: Some(10) });
        assert_eq!(
            one("relative_P.5"),
            Measure::R {
                k: 5,
                norm: RecallNorm::Min
            }
        );
        assert_eq!(Measure::parse("success").unwrap().len(), 3);
        assert_eq!(one("map").trec_name().unwrap(), "map");
        assert_eq!(one("AP@100").trec_name().unwrap(), "map_cut_100");
    }

    #[test]
    fn trec_syntax_follows_trec_eval_rules() {
        // The `trec_eval` command's rules: cutoffs sorted, duplicates and fractions refused.
        assert_eq!(
            Measure::parse("P.10,5").unwrap(),
            vec![Measure::P { k: 5 }, Measure::P { k: 10 }]
        );
        assert!(Measure::parse("P.5,5")
            .unwrap_err()
            .reason
            .contains("duplicate cutoffs"));
        assert!(Measure::parse("set_F.1/4")
            .unwrap_err()
            .reason
            .contains("positive number"));
        assert!(Measure::parse("iprec_at_recall.0.5,0.5").is_err());
        // beta whose square leaves f64's range.
        for m in ["F(beta=1e200)@5", "E(beta=1e-300)", "SetF(beta=1e101)"] {
            let e = Measure::parse(m).unwrap_err().reason;
            assert!(e.contains("between 1e-100 and 1e100"), "{m}: {e}");
        }
        assert!(Measure::parse("F(beta=1e100)").is_ok());
        assert!(Measure::parse("P.").is_err());
        assert!(Measure::parse("prefs_simp")
            .unwrap_err()
            .reason
            .contains("reads preference judgments"));
        assert!(Measure::parse("map_avgjg")
            .unwrap_err()
            .reason
            .contains("only `lemma-eval trec_eval -R qrels_jg` computes it"));
        assert!(Measure::parse("runid").is_err());
        // `official` is trec_eval's default set, without `runid`.
        let official = Measure::parse("official").unwrap();
        // num_q, num_ret, num_rel, num_rel_ret; map, gm_map, Rprec, bpref, recip_rank; 11 + 9.
        assert_eq!(official.len(), 4 + 5 + 11 + 9);
        assert_eq!(official[0], Measure::NumQ);
        // Printed names round-trip through `trec_name`.
        for s in [
            "P_5",
            "recall_10",
            "relative_P_5",
            "success_1",
            "set_F_0.5",
            "num_rel_ret",
        ] {
            assert_eq!(one(s).trec_name().unwrap(), s);
        }
    }

    #[test]
    fn errors_name_the_problem() {
        let e = Measure::parse("Foo@3").unwrap_err();
        assert_eq!(e.name, "Foo@3");
        assert!(e.reason.starts_with("unknown measure"), "{}", e.reason);
        assert!(Measure::parse("P@0")
            .unwrap_err()
            .reason
            .contains("at least 1"));
        assert!(Measure::parse("P@x")
            .unwrap_err()
            .reason
            .contains("whole-number"));
        assert!(Measure::parse("P").is_ok());
        assert!(Measure::parse("Depth(recall=1.5)")
            .unwrap_err()
            .reason
            .contains("[0, 1]"));
        assert!(Measure::parse("AP(norm=max)@3")
            .unwrap_err()
            .reason
            .contains("norm"));
        assert!(Measure::parse("AP(foo=1)")
            .unwrap_err()
            .reason
            .contains("unknown parameter `foo`"));
        assert!(Measure::parse("F(beta=-1)@3")
            .unwrap_err()
            .reason
            .contains("positive"));
        assert!(Measure::parse("map.5")
            .unwrap_err()
            .reason
            .contains("takes no parameter"));
        assert!(Measure::parse("P.5,x")
            .unwrap_err()
            .reason
            .contains("whole-number"));
        assert!(Measure::parse("Bpref@5")
            .unwrap_err()
            .reason
            .contains("no cutoff"));
        assert!(Measure::parse("").is_err());
    }

    #[test]
    fn help_lists_every_syntax_with_trec_names() {
        let h = Measure::help_text();
        for s in Measure::syntaxes() {
            assert!(h.contains(s.syntax), "{}", s.syntax);
        }
        assert!(h.contains("[trec_eval: P.k1,k2,...]"), "{h}");
        assert!(h.contains("[trec_eval: map, map_cut.k1,k2,...]"), "{h}");
        assert!(
            h.contains("[trec_eval: recall.k1,k2,..., relative_P.k1,k2,...]"),
            "{h}"
        );
    }
}
