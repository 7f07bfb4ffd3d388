//! trec_eval's own arithmetic for its summary lines (METRICS.md §8).
//!
//! trec_eval adds each goal's value, a double, to a running double sum, goals in its order (their
//! ids compared as strings, byte by byte), then divides by the number of goals; `gm_map` adds
//! `ln(max(AP, 1e-5))` the same way and prints `exp(sum / n)`. Floating-point addition rounds at
//! every step, so that sum can differ in its last bits from the exact mean that [`Summary`]
//! computes, and a mean sitting on a printed digit's boundary (…5 at the fifth decimal) prints
//! differently: four goals whose `P_200` are 1/200, 1/200, 4/200, 1/200 have the exact mean
//! 0.00875 (`0.0088` printed) and trec_eval's running sum 0.0087499… (`0.0087`).
//!
//! [`TrecSum`] keeps each evaluated goal's values (8 bytes per goal and measure, plus the goal's
//! name) and adds them in trec_eval's order at the end; goals that arrive in that order already
//! are not sorted again. `eval` keeps the exact, order-independent [`Summary`]: its sums merge
//! across shards and machines, which a running double sum cannot.
//!
//! [`Summary`]: crate::Summary

use crate::measure::{Aggregation, Measure};
use crate::summary::GM_AP_FLOOR;

/// Which trec_eval's rule for goals of the qrels with no predictions under `-c`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TrecRules {
    /// trec_eval 9.0.8: such goals are not added; `gm_map` adds `(n - evaluated) · ln(1e-5)` to
    /// the sum once, after the goals.
    V9,
    /// trec_eval 10.0: such goals are evaluated as empty rankings and added in their place.
    V10,
}

/// Evaluated goals' values, summed at the end as trec_eval sums them. See the module
/// documentation.
#[derive(Clone, Debug)]
pub struct TrecSum {
    measures: Vec<Measure>,
    /// The goals' names, one after another.
    names: Vec<u8>,
    /// Per goal: where its name ends in `names`, and whether it had no predictions.
    goals: Vec<(usize, bool)>,
    /// Per goal, its values parallel to `measures` (0 for a value not defined).
    values: Vec<f64>,
    /// Whether the goals came in trec_eval's order so far.
    in_order: bool,
}

impl TrecSum {
    /// An empty sum of goals' values for `measures` (a plan's measures, in its order).
    pub fn new(measures: &[Measure]) -> TrecSum {
        TrecSum {
            measures: measures.to_vec(),
            names: Vec::new(),
            goals: Vec::new(),
            values: Vec::new(),
            in_order: true,
        }
    }

    /// Adds evaluated goal `goal`: its `values` parallel to the measures (`None`, a value not
    /// defined, adds 0 as trec_eval does); `empty` when it had no predictions.
    pub fn push(&mut self, goal: &[u8], values: &[Option<f64>], empty: bool) {
        assert_eq!(values.len(), self.measures.len(), "one value per measure");
        if self.in_order && !self.goals.is_empty() && self.name(self.goals.len() - 1) >= goal {
            self.in_order = false;
        }
        self.names.extend_from_slice(goal);
        self.goals.push((self.names.len(), empty));
        self.values.extend(values.iter().map(|v| v.unwrap_or(0.0)));
    }

    /// Goal `k`'s name.
    fn name(&self, k: usize) -> &[u8] {
        let start = if k == 0 { 0 } else { self.goals[k - 1].0 };
        &self.names[start..self.goals[k].0]
    }

    /// The number of goals added.
    pub fn len(&self) -> usize {
        self.goals.len()
    }

    /// Whether no goal was added.
    pub fn is_empty(&self) -> bool {
        self.goals.is_empty()
    }

    /// The bytes the goals take: 8 per goal and measure, the names, and 24 per goal (16 kept,
    /// 8 more while they are sorted).
    pub fn bytes(&self) -> usize {
        self.names.len() + self.goals.len() * 24 + self.values.len() * 8
    }

    /// The bytes held: 8 per goal and measure, the names, 16 per goal.
    pub fn heap_bytes(&self) -> usize {
        self.names.capacity() + self.goals.capacity() * 16 + self.values.capacity() * 8
    }

    /// The summary values of every measure, in the measures' order, as trec_eval computes
    /// them over `n` goals (the divisor: the goals evaluated, or every goal of the qrels under
    /// `-c`), under `rules`: one pass over the goals in trec_eval's order. Counts
    /// ([`Aggregation::Sum`]) are their sum; a `Depth` measure, which trec_eval does not have,
    /// its mean.
    pub fn values(&self, n: u64, rules: TrecRules) -> Vec<f64> {
        let m = self.measures.len();
        let mut adder = TrecAdder::new(&self.measures, rules);
        for k in self.order() {
            adder.add(&self.values[k * m..(k + 1) * m], self.goals[k].1);
        }
        adder.finish(n)
    }

    /// Visits every goal (its name, whether it had no predictions, its values in the measures'
    /// order) in trec_eval's order, then forgets them all, keeping the measures: how a caller
    /// that keeps the goals elsewhere (sorted runs on disk) takes them out in order.
    pub fn drain_sorted<E>(
        &mut self,
        mut visit: impl FnMut(&[u8], bool, &[f64]) -> Result<(), E>,
    ) -> Result<(), E> {
        let m = self.measures.len();
        for k in self.order() {
            visit(
                self.name(k),
                self.goals[k].1,
                &self.values[k * m..(k + 1) * m],
            )?;
        }
        self.names.clear();
        self.goals.clear();
        self.values.clear();
        self.in_order = true;
        Ok(())
    }

    /// The goals' indexes in trec_eval's order (their names' bytes).
    fn order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.goals.len()).collect();
        if !self.in_order {
            order.sort_unstable_by(|&a, &b| self.name(a).cmp(self.name(b)));
        }
        order
    }
}

/// The value trec_eval keeps for a goal's `measure` whose value is `value`: `ln(max(value,
/// 1e-5))` for the geometric means (`gm_map`, `gm_bpref`), `value` for the others.
pub fn trec_stored(measure: Measure, value: f64) -> f64 {
    match measure.aggregation() {
        Aggregation::GeoMean => value.max(GM_AP_FLOOR).ln(),
        _ => value,
    }
}

/// What trec_eval's `-Z` puts in place of a value it has no reference for: -1,000,000.
pub const MISSING_ZSCORE: f64 = -1_000_000.0;

/// trec_eval's z-score (`-Z`) of a goal's stored value ([`trec_stored`]) against the reference
/// `(mean, stddev)`: `(value - mean) / stddev`; with a zero stddev, 0 if the value is the mean;
/// [`MISSING_ZSCORE`] without a reference or when the value differs from a mean of zero spread.
pub fn zscore(value: f64, reference: Option<(f64, f64)>) -> f64 {
    match reference {
        Some((mean, stddev)) if stddev != 0.0 => (value - mean) / stddev,
        Some((mean, _)) if value == mean => 0.0,
        _ => MISSING_ZSCORE,
    }
}

/// trec_eval's running sums: goals' values added one at a time, in the order given (trec_eval's
/// order is the caller's to keep), then divided. What [`TrecSum::values`] does over the goals it
/// holds; with goals that arrive in trec_eval's order it needs nothing per goal.
#[derive(Clone, Debug)]
pub struct TrecAdder {
    measures: Vec<Measure>,
    geo: Vec<bool>,
    rules: TrecRules,
    sums: Vec<f64>,
    /// Goals added to the `gm_map` sums.
    added: u64,
}

impl TrecAdder {
    /// Zero sums for `measures` under `rules`.
    pub fn new(measures: &[Measure], rules: TrecRules) -> TrecAdder {
        TrecAdder {
            measures: measures.to_vec(),
            geo: (measures.iter())
                .map(|x| x.aggregation() == Aggregation::GeoMean)
                .collect(),
            rules,
            sums: vec![0.0; measures.len()],
            added: 0,
        }
    }

    /// Adds one goal's values (parallel to the measures; `empty` when it had no predictions).
    pub fn add(&mut self, values: &[f64], empty: bool) {
        self.add_as(values, empty, false);
    }

    /// [`TrecAdder::add`] of values in the form trec_eval keeps them per goal, which
    /// [`trec_stored`] gives (the geometric means' logs), perhaps changed since (`-Z`'s
    /// z-scores): added as they are.
    pub fn add_stored(&mut self, values: &[f64], empty: bool) {
        self.add_as(values, empty, true);
    }

    fn add_as(&mut self, values: &[f64], empty: bool, stored: bool) {
        assert_eq!(values.len(), self.sums.len(), "one value per measure");
        // 9.0.8 leaves a goal without predictions out of gm_map's sum (patched in `finish`).
        let skip_geo = self.rules == TrecRules::V9 && empty;
        self.added += u64::from(!skip_geo);
        for ((sum, &v), &geo) in self.sums.iter_mut().zip(values).zip(&self.geo) {
            match (geo, skip_geo) {
                (false, _) => *sum += v,
                (true, false) if stored => *sum += v,
                (true, false) => *sum += v.max(GM_AP_FLOOR).ln(),
                (true, true) => {}
            }
        }
    }

    /// The summary values over `n` goals (see [`TrecSum::values`]).
    pub fn finish(&self, n: u64) -> Vec<f64> {
        let divide = |sum: f64| if n == 0 { sum } else { sum / n as f64 };
        (self.measures.iter().zip(&self.sums))
            .map(|(measure, &sum)| match measure.aggregation() {
                Aggregation::Sum => sum,
                Aggregation::Mean | Aggregation::Depth | Aggregation::Covered => divide(sum),
                Aggregation::GeoMean if n == 0 => 0.0,
                // 9.0.8 patches the goals it did not add (a long times a double, then added).
                Aggregation::GeoMean if self.rules == TrecRules::V9 => {
                    let sum = sum + n.saturating_sub(self.added) as f64 * GM_AP_FLOOR.ln();
                    (sum / n as f64).exp()
                }
                Aggregation::GeoMean => (sum / n as f64).exp(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p200() -> Measure {
        Measure::parse("P@200").unwrap()[0]
    }

    /// The example, hand-computed: 1/200, 1/200, 4/200, 1/200 summed left to right is
    /// 0.034999999999999996 (each 1/200 is 0.005000000000000000104…, the partial sums round
    /// down), over 4: 0.008749999999999999, printed 0.0087; the exact mean 0.00875 prints 0.0088.
    #[test]
    fn running_double_sum_in_byte_order() {
        let mut t = TrecSum::new(&[p200()]);
        // Arriving out of order: q2 (4/200) last here, third in byte order.
        for (g, v) in [("q0", 1.0), ("q1", 1.0), ("q3", 1.0), ("q2", 4.0)] {
            t.push(g.as_bytes(), &[Some(v / 200.0)], false);
        }
        let v = t.values(4, TrecRules::V10)[0];
        assert_eq!(v, 0.008749999999999999);
        assert_eq!(format!("{v:.4}"), "0.0087");
        // The same values in the order q2 first: another running sum, another last digit.
        let mut u = TrecSum::new(&[p200()]);
        for (g, v) in [("a", 4.0), ("b", 1.0), ("c", 1.0), ("d", 1.0)] {
            u.push(g.as_bytes(), &[Some(v / 200.0)], false);
        }
        assert_eq!(u.values(4, TrecRules::V10)[0], 0.00875);
        assert_eq!(format!("{:.4}", u.values(4, TrecRules::V10)[0]), "0.0088");
    }

    /// Goal ids compare as bytes: `q10` before `q9`, `Q` before `q`.
    #[test]
    fn byte_order_of_goal_ids() {
        let mut t = TrecSum::new(&[p200()]);
        for g in ["q9", "q10", "Q1"] {
            t.push(g.as_bytes(), &[Some(0.0)], false);
        }
        let names: Vec<&[u8]> = t.order().into_iter().map(|k| t.name(k)).collect();
        assert_eq!(names, [&b"Q1"[..], b"q10", b"q9"]);
    }

    /// gm_map: ln(max(AP, 1e-5)) summed, exp of the mean. Under 9.0.8's rule an empty goal is
    /// not added and is patched in as ln(1e-5) after the others; under 10.0's it is added in
    /// place. Both are exp((ln 0.5 + ln 1e-5) / 2) = sqrt(0.5e-5) up to rounding.
    #[test]
    fn geometric_mean_rules() {
        let gm = Measure::parse("GM_AP").unwrap()[0];
        let mut t = TrecSum::new(&[gm]);
        t.push(b"a", &[Some(0.0)], true);
        t.push(b"b", &[Some(0.5)], false);
        let want = (0.5e-5f64).sqrt();
        for rules in [TrecRules::V9, TrecRules::V10] {
            assert!((t.values(2, rules)[0] - want).abs() < 1e-15, "{rules:?}");
        }
        // 10.0: ln(1e-5) + ln(0.5), in that order; 9.0.8: ln(0.5) + 1 · ln(1e-5).
        let l = |v: f64| v.ln();
        assert_eq!(
            t.values(2, TrecRules::V10)[0],
            ((l(1e-5) + l(0.5)) / 2.0).exp()
        );
        assert_eq!(
            t.values(2, TrecRules::V9)[0],
            ((l(0.5) + l(1e-5)) / 2.0).exp()
        );
    }

    /// z-scores by hand: (0.5 - 0.25) / 0.5 = 0.5; a zero stddev gives 0 at the mean and the
    /// missing value elsewhere; no reference gives the missing value. gm_map's stored value is
    /// ln(max(AP, 1e-5)), and `add_stored` sums it as it is: two goals of z-scores 1 and -3
    /// give exp(-1).
    #[test]
    fn zscores_and_stored_values() {
        assert_eq!(zscore(0.5, Some((0.25, 0.5))), 0.5);
        assert_eq!(zscore(3.0, Some((3.0, 0.0))), 0.0);
        assert_eq!(zscore(3.5, Some((3.0, 0.0))), -1_000_000.0);
        assert_eq!(zscore(3.5, None), MISSING_ZSCORE);
        let gm = Measure::parse("GM_AP").unwrap()[0];
        let p = p200();
        assert_eq!(trec_stored(gm, 0.0), 1e-5f64.ln());
        assert_eq!(trec_stored(gm, 0.5), 0.5f64.ln());
        assert_eq!(trec_stored(p, 0.0), 0.0);
        for rules in [TrecRules::V9, TrecRules::V10] {
            let mut a = TrecAdder::new(&[gm, p], rules);
            a.add_stored(&[1.0, 2.0], false);
            a.add_stored(&[-3.0, -1.0], false);
            assert_eq!(a.finish(2), vec![(-1.0f64).exp(), 0.5]);
        }
    }

    /// Counts are sums; a missing value adds 0; the divisor is the caller's (`-c`).
    #[test]
    fn counts_missing_values_and_divisor() {
        let ms = Measure::parse_all(["NumRet", "P@200"]).unwrap();
        let mut t = TrecSum::new(&ms);
        t.push(b"x", &[Some(3.0), None], false);
        t.push(b"y", &[Some(4.0), Some(0.5)], false);
        assert_eq!(t.values(2, TrecRules::V10)[0], 7.0);
        assert_eq!(t.values(5, TrecRules::V10)[1], 0.1);
        assert_eq!(t.len(), 2);
    }

    /// `drain_sorted` visits the goals in byte order and empties the sum; a `TrecAdder` fed in
    /// that order gives `values`' figures, bit for bit.
    #[test]
    fn drain_sorted_then_adder_is_values() {
        let ms = Measure::parse_all(["P@200", "GM_AP"]).unwrap();
        let mut t = TrecSum::new(&ms);
        for (g, v, e) in [
            ("q3", 0.25, false),
            ("q10", 0.5, true),
            ("q2", 0.125, false),
        ] {
            t.push(g.as_bytes(), &[Some(v), Some(v)], e);
        }
        for rules in [TrecRules::V9, TrecRules::V10] {
            let want = t.values(5, rules);
            let mut u = t.clone();
            let (mut names, mut adder) = (Vec::new(), TrecAdder::new(&ms, rules));
            u.drain_sorted(|name, empty, values| {
                names.push(String::from_utf8(name.to_vec()).unwrap());
                adder.add(values, empty);
                Ok::<(), ()>(())
            })
            .unwrap();
            assert_eq!(names, ["q10", "q2", "q3"]);
            assert_eq!(adder.finish(5), want);
            assert!(u.is_empty() && u.bytes() == 0);
        }
    }
}
