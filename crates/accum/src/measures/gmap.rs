//! # `GM_AP`: geometric mean of AP
//!
//! `GM_AP = exp(mean over goals of ln(max(AP, 1e-5)))` ([`crate::GM_AP_FLOOR`], trec_eval's
//! `MIN_GEO_MEAN`): a summary figure that rewards improving poor goals. The per-goal value it
//! aggregates is `AP` (`/R`, whole ranking, the given order even under `--ties group`), which is
//! not printed per goal.
//!
//! A goal with `AP = 0` (`R = 0`, empty ranking, nothing relevant retrieved) enters at the floor.
//!
//! trec_eval: `gm_map` (official; summary only).

use super::{div, Alias, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::{Aggregation, NativeName};
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `GM_AP`.
pub(crate) struct GmAp;

impl Def for GmAp {
    type Fields = ();
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "GM_AP",
        about: "geometric mean of AP over goals, AP floored at 1e-5 (summary only)",
    }];
    const EXAMPLES: &'static [&'static str] = &["GM_AP"];
    const TREC: &'static [Alias<()>] = &[Alias {
        entry: TrecEntry {
            name: "gm_map",
            order: 6,
            official: true,
            params: TrecParams::Fixed {
                measure: Measure::GMAP,
                refused: None,
            },
        },
        of: |()| Some(TrecArg::None),
    }];
    const AGGREGATION: Aggregation = Aggregation::GeoMean;
    const PER_GOAL: bool = false;

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["GM_AP", "GMAP"])
            .then(|| n.no_cutoff().map(|()| Measure::GMAP))
    }

    fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GM_AP")
    }

    fn needs((): ()) -> Needs {
        Needs::NOTHING
    }

    fn value((): (), g: &GoalView<'_>) -> Option<f64> {
        Some(div(g.ap_sum(), g.r() as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, seed, SEED};
    use crate::{Config, GoalAccumulator, Label, Measure, Plan, Summary, Truth};
    use std::sync::Arc;

    #[test]
    fn per_goal_value_is_ap() {
        assert!(close(seed("GM_AP"), (0.5 + 0.5 + 0.6) / 3.0));
    }

    #[test]
    fn geometric_mean_with_the_floor() {
        // The seed (AP = 1.6/3) and a goal with nothing relevant retrieved (AP = 0 -> 1e-5).
        let ms = Measure::parse_all(["GM_AP"]).unwrap();
        let plan = Arc::new(Plan::new(&ms, Config::default()));
        let mut acc = GoalAccumulator::new(plan.clone());
        let mut sum = Summary::new(&plan);
        for ranking in [&SEED[..], &[false, false][..]] {
            acc.begin(&Truth::binary(3, 0));
            for &rel in ranking {
                acc.push(if rel {
                    Label::judged(1)
                } else {
                    Label::UNJUDGED
                });
            }
            sum.add(b"g", &acc.finish().unwrap());
        }
        let want = (((1.6f64 / 3.0).ln() + 1e-5f64.ln()) / 2.0).exp();
        assert!(close(sum.aggregate(0).headline().unwrap(), want));
    }
}
