//! # `GM_Bpref`: geometric mean of Bpref
//!
//! `GM_Bpref = exp(mean over goals of ln(max(Bpref, 1e-5)))`, with the floor of `GM_AP`
//! ([`crate::GM_AP_FLOOR`]): the goals' `Bpref` (see bpref.rs) combined by a geometric mean, which
//! rewards consistency across goals. A summary figure; its per-goal value, `Bpref`, is not
//! printed per goal.
//!
//! trec_eval: `gm_bpref` (summary only; not official).

use super::{div, Alias, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::{Aggregation, NativeName};
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `GM_Bpref`.
pub(crate) struct GmBpref;

impl Def for GmBpref {
    type Fields = ();
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "GM_Bpref",
        about: "geometric mean of Bpref over goals, Bpref floored at 1e-5 (summary only)",
    }];
    const EXAMPLES: &'static [&'static str] = &["GM_Bpref"];
    const TREC: &'static [Alias<()>] = &[Alias {
        entry: TrecEntry {
            name: "gm_bpref",
            order: 15,
            official: false,
            params: TrecParams::Fixed {
                measure: Measure::GMBpref,
                refused: None,
            },
        },
        of: |()| Some(TrecArg::None),
    }];
    const AGGREGATION: Aggregation = Aggregation::GeoMean;
    const PER_GOAL: bool = false;

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["GM_Bpref"])
            .then(|| n.no_cutoff().map(|()| Measure::GMBpref))
    }

    fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GM_Bpref")
    }

    fn needs((): ()) -> Needs {
        Needs::NOTHING
    }

    fn value((): (), g: &GoalView<'_>) -> Option<f64> {
        Some(div(g.bpref_sum(), g.r() as f64))
    }
}

#[cfg(test)]
mod tests {
    use crate::{Config, GoalAccumulator, Label, Measure, Plan, Summary, Truth};
    use std::sync::Arc;

    #[test]
    fn geometric_mean_of_bpref_with_the_floor() {
        // Goal 1: R = 2, N = 2; ranking n a n b: a has 1 non-relevant above (1 - 1/2), b has 2
        // (1 - 2/2): Bpref = 0.25. Goal 2: nothing relevant retrieved: Bpref 0 -> 1e-5.
        let ms = Measure::parse_all(["GM_Bpref", "Bpref"]).unwrap();
        let plan = Arc::new(Plan::new(&ms, Config::default()));
        let mut acc = GoalAccumulator::new(plan.clone());
        let mut sum = Summary::new(&plan);
        let (n, r) = (Label::judged(0), Label::judged(1));
        for ranking in [&[n, r, n, r][..], &[n][..]] {
            acc.begin(&Truth::binary(2, 2));
            for &l in ranking {
                acc.push(l);
            }
            sum.add(b"g", &acc.finish().unwrap());
        }
        let want = ((0.25f64.ln() + 1e-5f64.ln()) / 2.0).exp();
        let got = sum.aggregate(0).headline().unwrap();
        assert!((got - want).abs() < 1e-15, "{got} {want}");
        assert_eq!(sum.aggregate(1).headline(), Some(0.125));
    }
}
