//! `-m` under `-R prefs` and `-R qrels_prefs`: which preference measures, and whether `runid`,
//! `num_q` or a measure that reads qrels is asked for.

use super::PrefsMeasure;
use crate::trec::{nickname, resolve_for, TrecMeasureError};
use crate::TrecRules;

/// What `-m` asks of a preference file, in trec_eval's table order (`runid`, `num_q`, then the
/// preference measures).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PrefsSelection {
    /// `runid`: the run's name, in the summary.
    pub runid: bool,
    /// `num_q`: the goals evaluated, in the summary.
    pub num_q: bool,
    /// The preference measures, in table order, once each.
    pub measures: Vec<PrefsMeasure>,
    /// The first measure asked for (in table order) that reads qrels, which a preference file
    /// cannot give: trec_eval stops at the first goal it evaluates ("Can't calculate measure",
    /// exit 4). Its name as trec_eval prints it.
    pub reads_qrels: Option<String>,
}

/// Resolves `-m` arguments (none: `official`) as trec_eval does under `-R prefs` or
/// `-R qrels_prefs`: nicknames expanded (`all_prefs`, `prefs`, `official`, ...), the preference
/// measures and `runid`, `num_q` taken, every other measure checked as [`resolve_for`] checks it
/// (exit 1 for an unknown name, 2 for a bad parameter) and the first named in `reads_qrels`. A
/// preference measure takes no parameters (exit 2).
pub fn resolve_prefs<S: AsRef<str>>(
    args: &[S],
    rules: TrecRules,
) -> Result<PrefsSelection, TrecMeasureError> {
    let args: Vec<&str> = match args.is_empty() {
        true => vec!["official"],
        false => args.iter().map(|a| a.as_ref()).collect(),
    };
    let mut marked = [false; PrefsMeasure::ALL.len()];
    let mut others: Vec<String> = Vec::new();
    for arg in args {
        let (base, params) = match arg.split_once('.') {
            Some((b, p)) => (b, Some(p)),
            None => (arg, None),
        };
        if let Some(m) = PrefsMeasure::from_name(base) {
            if let Some(p) = params {
                return Err(TrecMeasureError {
                    code: 2,
                    message: format!("measure `{base}` takes no parameters, found `{p}`"),
                });
            }
            marked[m as usize] = true;
            continue;
        }
        let Some(members) = nickname(base, rules) else {
            others.push(arg.to_string());
            continue;
        };
        // A nickname's parameters are ignored, as trec_eval ignores them.
        for name in members {
            match PrefsMeasure::from_name(name) {
                Some(m) => marked[m as usize] = true,
                None => others.push(name.to_string()),
            }
        }
    }
    let mut sel = PrefsSelection::default();
    if !others.is_empty() {
        for m in resolve_for(&others, rules)? {
            match m.name.as_str() {
                "runid" => sel.runid = true,
                "num_q" => sel.num_q = true,
                _ => {
                    sel.reads_qrels.get_or_insert(m.name);
                }
            }
        }
    }
    sel.measures = (PrefsMeasure::ALL.into_iter())
        .filter(|m| marked[*m as usize])
        .collect();
    Ok(sel)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(args: &[&str]) -> PrefsSelection {
        resolve_prefs(args, TrecRules::V10).unwrap()
    }

    #[test]
    fn nicknames_and_names() {
        let all = sel(&["all_prefs"]);
        assert!(all.runid && all.num_q && all.reads_qrels.is_none());
        assert_eq!(all.measures, PrefsMeasure::ALL);
        let p = sel(&["prefs"]);
        assert_eq!(p.measures, PrefsMeasure::ALL[..6]);
        let one = sel(&["prefs_pair_imp", "prefs_simp"]);
        assert!(!one.runid && !one.num_q);
        assert_eq!(one.measures, [PrefsMeasure::Simp, PrefsMeasure::PairImp]);
        let q = sel(&["num_q", "prefs_simp", "prefs_simp"]);
        assert!(q.num_q && !q.runid);
        assert_eq!(q.measures, [PrefsMeasure::Simp]);
    }

    #[test]
    fn measures_that_read_qrels() {
        // The default, official: runid and num_q, then num_ret, the first that reads qrels.
        let o = sel(&[]);
        assert!(o.runid && o.num_q && o.measures.is_empty());
        assert_eq!(o.reads_qrels.as_deref(), Some("num_ret"));
        // Table order, not -m order.
        let m = sel(&["map", "P.5", "prefs_simp"]);
        assert_eq!(m.reads_qrels.as_deref(), Some("map"));
        assert_eq!(sel(&["runid"]).reads_qrels, None);
    }

    #[test]
    fn errors() {
        let e = |a: &[&str]| resolve_prefs(a, TrecRules::V10).unwrap_err().code;
        assert_eq!(e(&["prefs_simp.5"]), 2);
        assert_eq!(e(&["nope"]), 1);
        assert_eq!(e(&["P.5,5"]), 2);
        assert_eq!(resolve_prefs(&["unj"], TrecRules::V9).unwrap_err().code, 1);
    }
}
