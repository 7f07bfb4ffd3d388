//! # `Unj@k`: unjudged items in the first k
//!
//! `Unj@k = u(k) / k`, `u(k)` being the items among the first `k` that the qrels do not mention
//! or grade negative. Past the ranking the ranks count as judged: a ranking of 15 items with 4
//! unjudged has `Unj@20 = 4/20`. A warning sign more than a measure: high values at small `k`
//! say the run retrieved much that the judgments never saw.
//!
//! trec_eval 10.0: `unj` (not official; 9.0.8 does not have it), `-m unj.k1,k2,...`, default
//! cutoffs 5, 10, 20, printed `unj_k`.

use super::{Alias, Def, Needs, Syntax, WalkNeed};
use crate::goal::GoalView;
use crate::measure::{fmt_at, NativeName};
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `Unj@k`.
pub(crate) struct Unj;

impl Def for Unj {
    type Fields = (u32,);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "Unj@k",
        about: "items unjudged (not in the qrels, or graded negative) among the first k, over k",
    }];
    const EXAMPLES: &'static [&'static str] = &["Unj@5", "Unj@20"];
    const TREC: &'static [Alias<(u32,)>] = &[Alias {
        entry: TrecEntry {
            name: "unj",
            order: 56,
            official: false,
            params: TrecParams::Cutoffs {
                default: &[5, 10, 20],
                make: |k| Measure::Unj { k },
            },
        },
        of: |(k,)| Some(TrecArg::Cutoff(k)),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["Unj"])
            .then(|| n.need_cutoff().map(|k| Measure::Unj { k }))
    }

    fn fmt((k,): (u32,), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Unj{}", fmt_at(Some(k)))
    }

    fn needs((k,): (u32,)) -> Needs {
        Needs::walk(WalkNeed::Judged(k))
    }

    fn value((k,): (u32,), g: &GoalView<'_>) -> Option<f64> {
        let (w, i) = g.walk();
        let (_, judged) = w.cut(i);
        let seen = w.n().min(k as u64);
        Some((seen - judged) as f64 / k as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{empty, eval_labels, seed};
    use crate::{Label, Truth};

    #[test]
    fn seed_unj() {
        // x a y b c z: x, y and z unjudged.
        assert_eq!(seed("Unj@1"), 1.0);
        assert_eq!(seed("Unj@5"), 0.4);
        assert_eq!(seed("unj_10"), 0.3);
        assert_eq!(empty("Unj@5", 3), Some(0.0));
    }

    #[test]
    fn negative_grades_are_unjudged() {
        let labels = [Label::judged(-1), Label::judged(0), Label::UNJUDGED];
        let v = eval_labels(
            &["Unj@2", "Unj@3"],
            &Truth::graded(&[0, -1]).unwrap(),
            &labels,
        );
        assert_eq!(v, [Some(0.5), Some(2.0 / 3.0)]);
    }
}
