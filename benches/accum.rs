//! Accumulator throughput: items per second over a 1,000,000-item ranking with 20 relevant items,
//! for the default measure set (P@1,10,100, R@1,10,100, AP, AP@100, RR, nDCG@10,
//! Depth(recall=1.0)). Three input paths: one `push` per item, `push_labels` over the slice, and
//! the ranks-only path. Then the pooled curve's counting: 1,000,000 items in goals of 1,000
//! (scores descending within a goal, 60,000 distinct scores in all, as on workload M) added to an
//! exact curve one `add_key` at a time and by `add_keys` per goal (its lookups asked ahead).
//! Run: `cargo bench -p lemma-benches --bench accum`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use lemma_accum::{score_key, Config, GoalAccumulator, Label, Measure, Plan, PooledCurve, Truth};
use std::sync::Arc;

const N: usize = 1_000_000;
const RELEVANT: usize = 20;

fn setup() -> (Arc<Plan>, Vec<Label>) {
    let names = [
        "P@1",
        "P@10",
        "P@100",
        "R@1",
        "R@10",
        "R@100",
        "AP",
        "AP@100",
        "RR",
        "nDCG@10",
        "Depth(recall=1.0)",
    ];
    let ms = Measure::parse_all(names).unwrap();
    let plan = Arc::new(Plan::new(&ms, Config::default()));
    let mut labels = vec![Label::UNJUDGED; N];
    // Deterministic, spread-out relevant ranks (a few near the top, the rest deep).
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut placed = 0;
    for i in [0usize, 3, 9, 40, 150] {
        labels[i] = Label::judged(1);
        placed += 1;
    }
    while placed < RELEVANT {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let i = (x % N as u64) as usize;
        if labels[i] == Label::UNJUDGED {
            labels[i] = Label::judged(1);
            placed += 1;
        }
    }
    (plan, labels)
}

fn bench(c: &mut Criterion) {
    let (plan, labels) = setup();
    let truth = Truth::binary(RELEVANT as u64, 0);
    let ranks: Vec<(u64, i32)> = labels
        .iter()
        .enumerate()
        .filter(|(_, l)| **l != Label::UNJUDGED)
        .map(|(i, _)| (i as u64 + 1, 1))
        .collect();
    let mut acc = GoalAccumulator::new(plan);
    let mut g = c.benchmark_group("accumulate_1M_items_20_relevant");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("push_per_item", |b| {
        b.iter(|| {
            acc.begin(&truth);
            for &l in black_box(&labels[..]) {
                acc.push(l);
            }
            black_box(acc.finish().unwrap().values()[6])
        })
    });
    g.bench_function("push_labels", |b| {
        b.iter(|| {
            acc.begin(&truth);
            acc.push_labels(black_box(&labels[..]));
            black_box(acc.finish().unwrap().values()[6])
        })
    });
    g.bench_function("ranks_only", |b| {
        b.iter(|| {
            let v = acc
                .evaluate_ranks(&truth, N as u64, black_box(ranks.iter().copied()))
                .unwrap();
            black_box(v.values()[6])
        })
    });
    g.finish();

    // Goals of 1,000 items: scores from a shifted grid of 60,000 values, each goal's sorted
    // descending, every 50th item relevant.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut items: Vec<(u64, bool)> = Vec::with_capacity(N);
    for _ in 0..N / 1000 {
        let mut goal: Vec<u64> = (0..1000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % 60_000
            })
            .collect();
        goal.sort_unstable_by(|a, b| b.cmp(a));
        let base = items.len();
        items.extend(
            goal.iter()
                .enumerate()
                .map(|(i, &s)| (score_key(s as f64 * 0.0001), (base + i).is_multiple_of(50))),
        );
    }
    let mut g = c.benchmark_group("pooled_curve_1M_items_60k_scores");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("add_key", |b| {
        b.iter(|| {
            let mut curve = PooledCurve::exact();
            for &(k, r) in black_box(&items[..]) {
                curve.add_key(k, r);
            }
            black_box(curve.len())
        })
    });
    g.bench_function("add_keys_per_goal", |b| {
        b.iter(|| {
            let mut curve = PooledCurve::exact();
            for goal in black_box(&items[..]).chunks(1000) {
                curve.add_keys(goal);
            }
            black_box(curve.len())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
