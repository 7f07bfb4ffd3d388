//! # `DCG`, `IDCG`: discounted cumulative gain, and the ideal's
//!
//! `DCG = sum over ranks i of gain(i) / log2(i + 1)` over the whole ranking, `gain(i)` the grade
//! when positive (else 0); `IDCG` the same of the ideal ranking (every positive grade judged,
//! descending). `nDCG = DCG / IDCG` (nDCG.rs). Unnormalised, so only means over goals of like
//! grades compare.
//!
//! trec_eval 10.0: `dcg` and `ideal_dcg` (not official; not in `all_trec`; 9.0.8 has neither).
//! With custom gains (`dcg.1=3,2=9`): gain_dcg.rs.

use super::{Alias, Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::NativeName;
use crate::trec::{TrecArg, TrecEntry, TrecParams};
use crate::Measure;
use std::fmt;

/// `DCG`.
pub(crate) struct Dcg;

/// `IDCG`.
pub(crate) struct Idcg;

const GAINS: Needs = Needs {
    ideal_dcg: true,
    ..Needs::NOTHING
};

impl Def for Dcg {
    type Fields = ();
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "DCG",
        about: "sum of gain(i)/log2(i+1) over the ranking (gain = grade when positive)",
    }];
    const EXAMPLES: &'static [&'static str] = &["DCG"];
    const TREC: &'static [Alias<()>] = &[Alias {
        entry: TrecEntry {
            name: "dcg",
            order: 21,
            official: false,
            params: TrecParams::Pairs {
                default: Measure::DCG,
                make: |pairs| {
                    super::gain_dcg::trec_gains(pairs).map(|gains| Measure::DCGGains { gains })
                },
            },
        },
        of: |()| Some(TrecArg::None),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        (n.is(&["DCG"]) && !n.has("gains")).then(|| n.no_cutoff().map(|()| Measure::DCG))
    }

    fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DCG")
    }

    fn needs((): ()) -> Needs {
        GAINS
    }

    fn value((): (), g: &GoalView<'_>) -> Option<f64> {
        Some(g.dcg_k())
    }
}

impl Def for Idcg {
    type Fields = ();
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "IDCG",
        about: "DCG of the ideal ranking (every positive grade, descending)",
    }];
    const EXAMPLES: &'static [&'static str] = &["IDCG"];
    const TREC: &'static [Alias<()>] = &[Alias {
        entry: TrecEntry {
            name: "ideal_dcg",
            order: 22,
            official: false,
            params: TrecParams::Pairs {
                default: Measure::IDCG,
                make: |pairs| {
                    super::gain_dcg::trec_gains(pairs).map(|gains| Measure::IDCGGains { gains })
                },
            },
        },
        of: |()| Some(TrecArg::None),
    }];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        (n.is(&["IDCG"]) && !n.has("gains")).then(|| n.no_cutoff().map(|()| Measure::IDCG))
    }

    fn fmt((): (), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("IDCG")
    }

    fn needs((): ()) -> Needs {
        GAINS
    }

    fn value((): (), g: &GoalView<'_>) -> Option<f64> {
        Some(g.ideal_dcg_k())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, empty, seed};

    #[test]
    fn seed_dcg() {
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2() + 1.0 / 6f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2() + 0.5;
        assert!(close(seed("DCG"), dcg));
        assert!(close(seed("ideal_dcg"), idcg));
        assert!(close(seed("DCG") / seed("IDCG"), seed("nDCG")));
        assert_eq!(empty("DCG", 2), Some(0.0));
        assert!(close(empty("IDCG", 2).unwrap(), 1.0 + 1.0 / 3f64.log2()));
    }
}
