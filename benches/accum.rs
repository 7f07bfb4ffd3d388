//! Accumulator throughput: items per second over a 1,000,000-item ranking with 20 relevant items,
//! for the default measure set (P@1,10,100, R@1,10,100, AP, AP@100, RR, nDCG@10,
//! Depth(recall=1.0)). Three input paths: one `push` per item, `push_labels` over the slice, and
//! the ranks-only path. Run: `cargo bench -p lemma-benches --bench accum`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use lemma_accum::{Config, GoalAccumulator, Label, Measure, Plan, Truth};
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
}

criterion_group!(benches, bench);
criterion_main!(benches);
