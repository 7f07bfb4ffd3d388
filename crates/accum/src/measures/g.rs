//! # `G`: normalised gain
//!
//! A gain measure between `AP` and `nDCG`. With `gain(i)` the grade of the item at rank `i` when
//! positive (else 0), `gain(<=i)` the gains of the first `i` items summed, and `cost(i)` the sum
//! over the first `i` ranks of the ideal ranking of `max(ideal gain, 1)` (the ideal ranking: every
//! positive grade judged, descending; a rank past it costs 1), an item is worth
//!
//! `gain(i) / log2(2 + cost(i) - gain(<=i))`,
//!
//! so an item whose predecessors gained nearly what the ideal ranking gains is worth nearly its
//! gain. `G` is the sum over ranked items of positive gain, over the ideal ranking's total gain;
//! 0 when nothing positive is judged. With binary grades `G` equals `binG`.
//!
//! trec_eval: `G` (not official; an experimental measure of 2008). trec_eval's custom gains
//! (`G.1=3,2=9`) are not supported.

use super::{Alias, Def, Needs, Syntax, WalkNeed};
use crate::goal::GoalView;
use crate::measure::NativeName;
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `G`.
pub(crate) struct G;

impl Def for G {
    type Fields = ();
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "G",
        about: "sum of gain(i)/log2(2 + ideal cost(i) - gain(<=i)), over the ideal gain",
    }];
    const EXAMPLES: &'static [&'static str] = &["G"];
    const TREC: &'static [Alias<()>] = &[Alias {
        entry: TrecEntry {
            name: "G",
            order: 20,
            official: false,
            params: TrecParams::Fixed {
                measure: Measure::G,
                refused: Some("custom gains"),
            },
        },
        of: |()| Some(TrecArg::None),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["G"]).then(|| n.no_cutoff().map(|()| Measure::G))
    }

    fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("G")
    }

    fn needs((): ()) -> Needs {
        Needs::walk(WalkNeed::Gain)
    }

    fn value((): (), g: &GoalView<'_>) -> Option<f64> {
        let (sum, ideal) = g.walk().0.g_sum();
        Some(if ideal > 0.0 { sum / ideal } else { 0.0 })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, empty, eval_labels, seed};
    use crate::{Label, Truth};

    #[test]
    fn binary_g_is_bing() {
        // x a y b c z: costs 2, 4, 5 and gains so far 1, 2, 3 at ranks 2, 4, 5.
        let want = (1.0 / 3f64.log2() + 0.5 + 0.5) / 3.0;
        assert!(close(seed("G"), want));
        assert_eq!(seed("G"), seed("BinG"));
    }

    #[test]
    fn graded() {
        // Grades {3, 1}; ranking 1, unjudged, 3. Rank 1: cost 3, gain so far 1: 1/log2(4).
        // Rank 3: cost 3 + 1 + 1 (past the ideal ranking) = 5, gain so far 4: 3/log2(3).
        let truth = [3, 1];
        let labels = [Label::judged(1), Label::UNJUDGED, Label::judged(3)];
        let v = eval_labels(&["G"], &Truth::graded(&truth).unwrap(), &labels);
        assert!(close(v[0].unwrap(), (0.5 + 3.0 / 3f64.log2()) / 4.0));
    }

    #[test]
    fn no_positive_grade() {
        assert_eq!(empty("G", 3), Some(0.0));
        let v = eval_labels(
            &["G"],
            &Truth::graded(&[0, 0]).unwrap(),
            &[Label::judged(0)],
        );
        assert_eq!(v, [Some(0.0)]);
    }
}
