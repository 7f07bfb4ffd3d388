//! # `F(beta=b)@k` and `E(beta=b)@k`: the F-measure and van Rijsbergen's E
//!
//! Over the first `k` items (`k = n` without a cutoff), with precision `P = s(k)/k` and recall
//! `Rc = s(k)/R`:
//!
//! `F(beta=b)@k = (1 + b²)·P·Rc / (b²·P + Rc)`, computed as the equal count form
//! `(1 + b²)·s(k) / (b²·R + k)`, which rounds once less (`F1@5` of the worked example is exactly
//! 0.75). `b = 1` (`F1`) weighs precision and recall equally; `b > 1` favours recall.
//!
//! `E(beta=b)@k = 1 - F(beta=b)@k`; `E(beta=1)` is the symmetric difference
//! `|A Δ P| / (|A| + |P|)` of the actual set `A` and the predicted set `P`.
//!
//! `s(k) = 0` or `R = 0` gives `F = 0` (`E = 1`); so does an empty ranking. Fewer than `k` items:
//! the divisor keeps `k`.
//!
//! No trec_eval equivalent with a cutoff (trec_eval's `set_F` is `SetF`, set.rs).

use super::{Def, Needs, Syntax};
use crate::goal::GoalView;
use crate::measure::{fmt_at, fmt_beta, take_beta2, NativeName};
use crate::Measure;
use std::fmt;

/// `F(beta=b)[@k]`, `F1[@k]`.
pub(crate) struct F;

/// `E(beta=b)[@k]`, `E1[@k]`.
pub(crate) struct E;

/// `F` from counts: `s` relevant among `k` items, `r` relevant in all; 0 when `s` or `r` is 0.
pub(super) fn f_beta(beta2: f64, s: f64, k: u64, r: u64) -> f64 {
    if s == 0.0 || r == 0 {
        return 0.0;
    }
    (1.0 + beta2) * s / (beta2 * r as f64 + k as f64)
}

/// `F...` or `E...` (the base says which): `(beta2, cutoff)`.
fn parse(n: &mut NativeName<'_>) -> Result<(f64, Option<u32>), String> {
    let cutoff = n.cutoff()?;
    let fixed = n.base.ends_with('1') && (n.has("beta") || n.has("beta2"));
    if fixed {
        return Err(format!("`{}` fixes beta = 1; use `F(beta=...)`", n.base));
    }
    let beta2 = take_beta2(n)?.unwrap_or(1.0);
    Ok((beta2, cutoff))
}

impl Def for F {
    type Fields = (f64, Option<u32>);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "F(beta=b)@k, F1@k",
        about: "F-measure of the first k (all without @k): (1+b²)·s(k)/(b²·R + k)",
    }];
    const EXAMPLES: &'static [&'static str] = &["F(beta=1)@5", "F(beta=2)@10", "F(beta=0.5)"];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["F", "F1"])
            .then(|| parse(n).map(|(beta2, cutoff)| Measure::F { beta2, cutoff }))
    }

    fn fmt((beta2, cutoff): (f64, Option<u32>), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "F({}){}", fmt_beta(beta2), fmt_at(cutoff))
    }

    fn needs((_, cutoff): (f64, Option<u32>)) -> Needs {
        Needs::cutoff(cutoff)
    }

    fn value((beta2, _): (f64, Option<u32>), g: &GoalView<'_>) -> Option<f64> {
        Some(f_beta(beta2, g.s_k(), g.k(), g.r()))
    }
}

impl Def for E {
    type Fields = (f64, Option<u32>);
    const SYNTAX: &'static [Syntax] = &[Syntax {
        syntax: "E(beta=b)@k, E1@k",
        about: "van Rijsbergen's E = 1 - F(beta=b)@k",
    }];
    const EXAMPLES: &'static [&'static str] = &["E(beta=1)@5", "E(beta=2)"];

    fn parse(n: &mut NativeName<'_>) -> Option<Result<Measure, String>> {
        n.is(&["E", "E1"])
            .then(|| parse(n).map(|(beta2, cutoff)| Measure::E { beta2, cutoff }))
    }

    fn fmt((beta2, cutoff): (f64, Option<u32>), f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "E({}){}", fmt_beta(beta2), fmt_at(cutoff))
    }

    fn needs((_, cutoff): (f64, Option<u32>)) -> Needs {
        Needs::cutoff(cutoff)
    }

    fn value((beta2, _): (f64, Option<u32>), g: &GoalView<'_>) -> Option<f64> {
        Some(1.0 - f_beta(beta2, g.s_k(), g.k(), g.r()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, empty, eval, seed};

    #[test]
    fn seed_f_and_e() {
        // k = 5: s = 3, R = 3: F1 = 2·3 / (3 + 5) = 3/4.
        assert_eq!(seed("F1@5"), 0.75);
        assert_eq!(seed("E(beta=1)@5"), 0.25);
        // Whole ranking, k = n = 6: 2·3 / (3 + 6) = 2/3.
        assert!(close(seed("F(beta=1)"), 2.0 / 3.0));
        // beta = 2 at k = 4: s = 2: 5·2 / (4·3 + 4) = 10/16.
        assert_eq!(seed("F(beta=2)@4"), 0.625);
        // beta = 0.5 at k = 2: s = 1: 1.25·1 / (0.25·3 + 2) = 1.25 / 2.75 = 5/11.
        assert!(close(seed("F(beta=0.5)@2"), 5.0 / 11.0));
        assert_eq!(seed("F1@1"), 0.0);
        assert_eq!(seed("E1@1"), 1.0);
    }

    #[test]
    fn count_form_equals_the_harmonic_mean() {
        // P@4 = 1/2, R@4 = 2/3: 2·P·R / (P + R) = (2/3) / (7/6) = 4/7 = 2·2 / (3 + 4).
        let (p, r) = (0.5, 2.0 / 3.0);
        assert!(close(seed("F1@4"), 2.0 * p * r / (p + r)));
        assert!(close(seed("F1@4"), 4.0 / 7.0));
    }

    #[test]
    fn empty_ranking_and_no_relevant() {
        assert_eq!(empty("F(beta=1)@5", 3), Some(0.0));
        assert_eq!(empty("E(beta=1)", 3), Some(1.0));
        assert_eq!(eval(&["F(beta=1)@2"], 0, &[false; 2]), [Some(0.0)]);
    }

    #[test]
    fn f1_fixes_beta() {
        use crate::Measure;
        assert!(Measure::parse("F1(beta=2)@5")
            .unwrap_err()
            .reason
            .contains("fixes beta"));
        assert_eq!(
            Measure::parse("E1@5").unwrap()[0].to_string(),
            "E(beta=1)@5"
        );
    }
}
