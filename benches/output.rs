//! Writing a pooled curve's numbers: 100,000 rows of precision, recall and F1 (cumulative
//! ratios, as `curve --pooled` prints them) and a threshold of four decimals, through
//! `lemma_eval::output::push_f64` against `write!(.., "{}")` into the same buffer, the output
//! checked equal before the clock. Run: `cargo bench -p lemma-benches --bench output`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lemma_eval::output::push_f64;
use std::hint::black_box;
use std::io::Write;

fn bench(c: &mut Criterion) {
    // Rows of a curve over 1,000,000 items, 20,000 relevant: every 50th item relevant.
    let (total, rel) = (1_000_000u64, 20_000u64);
    let values: Vec<f64> = (1..=100_000u64)
        .flat_map(|i| {
            let pp = i * 10;
            let tp = pp / 50 + i % 3;
            let (p, r) = (tp as f64 / pp as f64, tp as f64 / rel as f64);
            [p, r, 2.0 * p * r / (p + r), (total - pp) as f64 / 1e4]
        })
        .collect();
    let with_fmt = |out: &mut Vec<u8>| {
        for v in &values {
            write!(out, "{v}\t").unwrap();
        }
    };
    let with_push = |out: &mut Vec<u8>| {
        for &v in &values {
            push_f64(out, v);
            out.push(b'\t');
        }
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    with_fmt(&mut a);
    with_push(&mut b);
    assert_eq!(a, b, "push_f64 writes what Display writes");
    let mut g = c.benchmark_group("write_400k_floats");
    g.throughput(Throughput::Elements(values.len() as u64));
    g.bench_function("display", |bn| {
        let mut out = Vec::with_capacity(a.len());
        bn.iter(|| {
            out.clear();
            with_fmt(&mut out);
            black_box(out.len())
        })
    });
    g.bench_function("push_f64", |bn| {
        let mut out = Vec::with_capacity(a.len());
        bn.iter(|| {
            out.clear();
            with_push(&mut out);
            black_box(out.len())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
