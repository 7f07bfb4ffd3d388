//! The pooled curve against a slow reference that sorts every (score, relevant) pair: the exact
//! curve held, spilled in runs and merged, or split and merged in any order; the sketch's rows
//! are rows of the exact curve and its counts do not depend on the split; the binned groups'
//! pooled AP lies within `ap_error_bound` of the exact AP; the pooled curve a plan keeps is the
//! curve of its goals' ranked items.

use lemma_accum::*;
use proptest::prelude::*;
use std::sync::{Arc, Mutex};

/// The reference: every distinct score, highest first, with the running (tp, fp); AP as the
/// sum over distinct scores of (relevant at the score / R) * precision there.
fn reference(items: &[(f64, bool)], total_relevant: u64) -> (Vec<(f64, u64, u64)>, f64) {
    let mut v = items.to_vec();
    v.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
    let (mut rows, mut ap) = (Vec::new(), 0.0);
    let (mut tp, mut fp) = (0u64, 0u64);
    let mut i = 0;
    while i < v.len() {
        let s = v[i].0;
        let mut rel = 0;
        while i < v.len() && v[i].0 == s {
            if v[i].1 {
                rel += 1;
            } else {
                fp += 1;
            }
            i += 1;
        }
        tp += rel;
        if total_relevant > 0 {
            ap += rel as f64 / total_relevant as f64 * (tp as f64 / (tp + fp) as f64);
        }
        rows.push((s, tp, fp));
    }
    (rows, ap)
}

fn rows_of(groups: impl IntoIterator<Item = (u64, u64, u64)>, r: u64) -> (Vec<CurveRow>, f64) {
    let mut rows = CurveRows::new(r);
    let out = groups
        .into_iter()
        .map(|(k, n, rel)| rows.next(k, n, rel))
        .collect();
    (out, rows.stats().average_precision)
}

#[derive(Debug, Default)]
struct Runs(Mutex<Vec<Vec<(u64, u64, u64)>>>);

impl SpillRuns for Runs {
    fn spill(&self, run: &Run) {
        assert!(run.windows(2).all(|w| w[0].0 > w[1].0), "a run descends");
        self.0.lock().unwrap().push(run.to_vec());
    }
}

/// Scores from a few levels (long ties) or many, both signs, both zeros.
fn items() -> impl Strategy<Value = Vec<(f64, bool)>> {
    (1u32..2000).prop_flat_map(|levels| {
        prop::collection::vec(
            (0..levels, any::<bool>(), any::<bool>()).prop_map(move |(l, rel, neg)| {
                let s = l as f64 / levels as f64;
                (if neg { -s } else { s }, rel)
            }),
            0..400,
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_exact_curve_held_spilled_or_split_is_the_sorted_curve(
        items in items(),
        unranked in 0u64..5,
        max_bins in 1usize..40,
        cut in 0usize..400,
    ) {
        let r = items.iter().filter(|x| x.1).count() as u64 + unranked;
        let (want, want_ap) = reference(&items, r);
        let check = |got: &[CurveRow], ap: f64| {
            prop_assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                prop_assert_eq!((g.threshold, g.tp, g.fp), *w);
            }
            prop_assert!((ap - want_ap).abs() < 1e-12);
            Ok(())
        };
        // Held.
        let mut held = PooledCurve::exact();
        for &(s, rel) in &items {
            held.add(s, rel);
        }
        held.add_unretrieved_relevant(unranked);
        prop_assert_eq!(held.total_relevant(), r);
        let (got, ap) = rows_of(held.run(), r);
        check(&got, ap)?;
        prop_assert!((held.average_precision() - want_ap).abs() < 1e-12);
        // Spilled past max_bins, in two parts merged: runs and the held rest merged.
        let runs = Arc::new(Runs::default());
        let cut = cut.min(items.len());
        let mut a = PooledCurve::exact_spilling(max_bins, runs.clone());
        let mut b = PooledCurve::exact_spilling(max_bins, runs.clone());
        for &(s, rel) in &items[..cut] {
            a.add(s, rel);
        }
        for &(s, rel) in &items[cut..] {
            b.add(s, rel);
        }
        b.add_unretrieved_relevant(unranked);
        a.merge(&b);
        prop_assert!(a.len() <= max_bins);
        let spilled = std::mem::take(&mut *runs.0.lock().unwrap());
        let mut parts: Vec<std::vec::IntoIter<(u64, u64, u64)>> =
            spilled.into_iter().map(|v| v.into_iter()).collect();
        parts.push(a.run().into_iter());
        let (got, ap) = rows_of(merge_runs(parts), r);
        check(&got, ap)?;
    }

    #[test]
    fn sketch_rows_are_exact_rows_and_bins_keep_their_bound(
        items in items(),
        max_bins in 2usize..64,
        k in 1u64..30,
        cut in 0usize..400,
    ) {
        let r = items.iter().filter(|x| x.1).count() as u64;
        let (want, want_ap) = reference(&items, r);
        let mut whole = PooledCurve::sketch(max_bins);
        for &(s, rel) in &items {
            whole.add(s, rel);
        }
        prop_assert!(whole.len() <= max_bins);
        // Split at `cut` and merged the other way round: the same resolution and counts.
        let cut = cut.min(items.len());
        let (mut a, mut b) = (PooledCurve::sketch(max_bins), PooledCurve::sketch(max_bins));
        for &(s, rel) in &items[cut..] {
            a.add(s, rel);
        }
        for &(s, rel) in &items[..cut] {
            b.add(s, rel);
        }
        a.merge(&b);
        prop_assert_eq!(&a, &whole);
        // The sketch's bins and the equal-count groups: rows of the exact curve.
        let exact: std::collections::HashMap<u64, (u64, u64)> =
            want.iter().map(|&(s, tp, fp)| ((s + 0.0).to_bits(), (tp, fp))).collect();
        let run = whole.run();
        for groups in [
            run.iter().map(|&(key, n, rel)| Group { key, n, rel, one_score: whole.bits() == 64 }).collect::<Vec<_>>(),
            equal_count(&run, whole.bits() == 64, k),
        ] {
            let (rows, ap) = rows_of(groups.iter().map(|g| (g.key, g.n, g.rel)), r);
            for row in &rows {
                let key = (row.threshold + 0.0).to_bits();
                prop_assert_eq!(exact.get(&key), Some(&(row.tp, row.fp)), "{:?}", row);
            }
            let bound = ap_error_bound(&groups, r);
            prop_assert!((ap - want_ap).abs() <= bound + 1e-12, "{} {} {}", ap, want_ap, bound);
        }
        // At most k groups, each past its share by less than its last bin.
        let groups = equal_count(&run, whole.bits() == 64, k);
        prop_assert!(groups.len() as u64 <= k);
        prop_assert_eq!(groups.iter().map(|g| g.n).sum::<u64>(), items.len() as u64);
    }

    /// Items added a stretch at a time (`add_keys`, stretches of any length) are counted as
    /// when added one at a time: the same bins at the same resolution for a sketch, and for a
    /// spilling curve the same runs spilled at the same moments.
    #[test]
    fn items_added_together_are_counted_as_one_by_one(
        items in items(),
        max_bins in 1usize..40,
        sizes in prop::collection::vec(1usize..60, 1..20),
    ) {
        let keys: Vec<(u64, bool)> = items.iter().map(|&(s, rel)| (score_key(s), rel)).collect();
        let relevant = keys.iter().filter(|k| k.1).count() as u64;
        for kind in 0..3 {
            let (one_runs, many_runs) = (Arc::new(Runs::default()), Arc::new(Runs::default()));
            let make = |runs: &Arc<Runs>| match kind {
                0 => PooledCurve::exact(),
                1 => PooledCurve::exact_spilling(max_bins, runs.clone()),
                _ => PooledCurve::sketch(max_bins.max(2)),
            };
            let (mut one, mut many) = (make(&one_runs), make(&many_runs));
            for &(k, rel) in &keys {
                one.add_key(k, rel);
            }
            let (mut at, mut found) = (0, 0);
            for &n in sizes.iter().cycle() {
                if at == keys.len() {
                    break;
                }
                let n = n.min(keys.len() - at);
                found += many.add_keys(&keys[at..at + n]);
                at += n;
            }
            prop_assert_eq!(found, relevant);
            prop_assert_eq!(many.total_relevant(), relevant);
            prop_assert_eq!(
                (many.bits(), many.len(), many.spilled()),
                (one.bits(), one.len(), one.spilled())
            );
            prop_assert_eq!(many.run(), one.run());
            prop_assert_eq!(&*many_runs.0.lock().unwrap(), &*one_runs.0.lock().unwrap());
        }
    }

    /// An empty curve merged with another (as an evaluation's summary takes its first worker's)
    /// is the curve its own kind would have counted from the other's items: the same table for
    /// an exact curve, coarsened to fit a sketch of fewer bins, spilled by a spilling one; and
    /// the result goes on counting and merging as if it had counted them itself.
    #[test]
    fn an_empty_curve_merged_with_another_counts_as_its_kind(
        items in items(),
        max_bins in 2usize..64,
        cut in 0usize..400,
    ) {
        let r = items.iter().filter(|x| x.1).count() as u64;
        let cut = cut.min(items.len());
        let (first, rest) = items.split_at(cut);
        let mut other = PooledCurve::exact();
        for &(s, rel) in first {
            other.add(s, rel);
        }
        other.add_unretrieved_relevant(3);
        // Exact: the same bins, then the rest counted on top.
        let mut e = PooledCurve::exact();
        e.merge(&other);
        prop_assert_eq!(&e, &other);
        for &(s, rel) in rest {
            e.add(s, rel);
        }
        let mut whole = PooledCurve::exact();
        for &(s, rel) in &items {
            whole.add(s, rel);
        }
        whole.add_unretrieved_relevant(3);
        prop_assert_eq!(&e, &whole);
        // A sketch of fewer bins: the resolution and counts of one fed the same items.
        let mut sk = PooledCurve::sketch(max_bins);
        sk.merge(&other);
        for &(s, rel) in rest {
            sk.add(s, rel);
        }
        let mut direct = PooledCurve::sketch(max_bins);
        for &(s, rel) in &items {
            direct.add(s, rel);
        }
        direct.add_unretrieved_relevant(3);
        prop_assert_eq!(&sk, &direct);
        // Spilling: at most max_bins held, and the runs and the rest give the exact rows.
        let runs = Arc::new(Runs::default());
        let mut sp = PooledCurve::exact_spilling(max_bins, runs.clone());
        sp.merge(&other);
        for &(s, rel) in rest {
            sp.add(s, rel);
        }
        prop_assert!(sp.len() <= max_bins);
        prop_assert_eq!(sp.spilled(), !runs.0.lock().unwrap().is_empty());
        let spilled = std::mem::take(&mut *runs.0.lock().unwrap());
        let mut parts: Vec<std::vec::IntoIter<(u64, u64, u64)>> =
            spilled.into_iter().map(|v| v.into_iter()).collect();
        parts.push(sp.run().into_iter());
        let (got, ap) = rows_of(merge_runs(parts), r + 3);
        let (want, want_ap) = rows_of(whole.run(), r + 3);
        prop_assert_eq!(&got, &want);
        prop_assert!((ap - want_ap).abs() < 1e-12);
        // A coarse curve (a sketch's fewer bits) merged into an empty exact one: the same bins.
        let mut coarse = PooledCurve::sketch(max_bins);
        for &(s, rel) in first {
            coarse.add(s, rel);
        }
        let mut e = PooledCurve::exact();
        e.merge(&coarse);
        prop_assert_eq!(&e, &coarse);
        // An empty curve that already counted relevant items never ranked keeps them.
        let mut e = PooledCurve::exact();
        e.add_unretrieved_relevant(2);
        e.merge(&other);
        let mut want = other.clone();
        want.add_unretrieved_relevant(2);
        prop_assert_eq!(&e, &want);
        // A spilling curve with no bins held because it has just spilled, then merged with
        // `other`: its runs and held bins still give the exact rows of everything.
        let runs = Arc::new(Runs::default());
        let mut sp = PooledCurve::exact_spilling(max_bins, runs.clone());
        let mut counted = Vec::new();
        for &(s, rel) in rest {
            sp.add(s, rel);
            counted.push((s, rel));
            if sp.spilled() && sp.is_empty() {
                break;
            }
        }
        sp.merge(&other);
        prop_assert!(sp.len() <= max_bins);
        counted.extend_from_slice(first);
        let r2 = counted.iter().filter(|x| x.1).count() as u64 + 3;
        let spilled = std::mem::take(&mut *runs.0.lock().unwrap());
        let mut parts: Vec<std::vec::IntoIter<(u64, u64, u64)>> =
            spilled.into_iter().map(|v| v.into_iter()).collect();
        parts.push(sp.run().into_iter());
        prop_assert_eq!(sp.total_relevant(), r2);
        let (got, _) = rows_of(merge_runs(parts), r2);
        let (want, _) = reference(&counted, r2);
        let got: Vec<(f64, u64, u64)> = got.iter().map(|x| (x.threshold, x.tp, x.fp)).collect();
        prop_assert_eq!(got, want);
    }
}

/// A plan that keeps the pooled curve: its summary's curve is that of every ranked item of the
/// goals evaluated, with the relevant lemmas never ranked in R; summaries merge.
#[test]
fn a_plan_keeps_the_pooled_curve_of_its_goals() {
    let measures = Measure::parse_all(["AP"]).unwrap();
    let plan = Arc::new(
        Plan::new(&measures, Config::default()).with_pooled(PooledSpec::Exact {
            max_bins: usize::MAX,
            spill: None,
        }),
    );
    assert!(plan.needs_scores());
    let mut acc = GoalAccumulator::new(plan.clone());
    let (mut s1, mut s2) = (Summary::new(&plan), Summary::new(&plan));
    // Goal 1: R = 3; ranked 0.9 R, 0.5 N, 0.5 R. Goal 2: R = 1; ranked 0.7 N.
    acc.begin(&Truth::binary(3, 0));
    for (s, rel) in [(0.9, true), (0.5, false), (0.5, true)] {
        let label = if rel {
            Label::judged(1)
        } else {
            Label::UNJUDGED
        };
        acc.push_scored(label, s).unwrap();
    }
    s1.add(b"g", &acc.finish().unwrap());
    acc.begin(&Truth::binary(1, 0));
    acc.push_scored(Label::UNJUDGED, 0.7).unwrap();
    s2.add(b"g", &acc.finish().unwrap());
    s1.merge(&s2).unwrap();
    let curve = s1.pooled().unwrap();
    assert_eq!(curve.total_relevant(), 4);
    let (rows, ap) = rows_of(curve.run(), 4);
    let got: Vec<(f64, u64, u64)> = rows.iter().map(|r| (r.threshold, r.tp, r.fp)).collect();
    assert_eq!(got, [(0.9, 1, 0), (0.7, 1, 1), (0.5, 2, 2)]);
    // 1/4 * 1 + 1/4 * 2/4.
    assert_eq!(ap, 0.25 + 0.125);
    // A plan without it keeps none.
    let plain = Plan::new(&measures, Config::default());
    assert!(Summary::new(&plain).pooled().is_none());
}
