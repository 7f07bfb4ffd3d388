//! Loading actual sets: the interner one name at a time against `Interner::intern_many` (its
//! software pipeline of prefetches), over lemma names drawn from a 200,000-name universe (a table
//! larger than the caches), and `ActualSets::read` of qrels of 200,000 goals generated into a
//! temporary directory. Throughput is in names and in qrels bytes. The 2 M-goal figures come from
//! `scripts/bench-goals`. Run: `cargo bench -p lemma-benches --bench truth`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use lemma_ingest::{ActualSets, Interner};
use lemma_tools::gen::{generate_trec, GenSpec};

fn bench(c: &mut Criterion) {
    // 1.6 M lookups of names of 15 to 25 bytes, in a random order, all present.
    let universe: Vec<String> = (0..200_000u64)
        .map(|i| {
            format!(
                "Mathlib.Lemma.l_{}",
                i.wrapping_mul(2_654_435_761) % 1_000_003
            )
        })
        .collect();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let lookups: Vec<&[u8]> = (0..1_600_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            universe[(x % universe.len() as u64) as usize].as_bytes()
        })
        .collect();
    let mut full = Interner::new();
    for n in &universe {
        full.intern(n.as_bytes());
    }
    let mut g = c.benchmark_group("interner");
    g.throughput(Throughput::Elements(lookups.len() as u64));
    g.sample_size(10);
    g.bench_function("intern one at a time, 200k names", |b| {
        b.iter_batched_ref(
            || full.clone(),
            |i| lookups.iter().map(|n| i.intern(n) as u64).sum::<u64>(),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("intern_many, 200k names", |b| {
        b.iter_batched_ref(
            || (full.clone(), Vec::with_capacity(1024)),
            |(i, ids)| {
                let mut s = 0u64;
                for chunk in lookups.chunks(1024) {
                    ids.clear();
                    i.intern_many(chunk, ids);
                    s += ids.iter().map(|&v| v as u64).sum::<u64>();
                }
                s
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();

    let dir = tempfile::tempdir().unwrap();
    let (q, r) = (dir.path().join("q"), dir.path().join("r"));
    let spec = GenSpec {
        goals: 200_000,
        depth: 1,
        ..GenSpec::default()
    };
    generate_trec(
        &spec,
        &mut std::io::BufWriter::new(std::fs::File::create(&q).unwrap()),
        &mut std::io::BufWriter::new(std::fs::File::create(&r).unwrap()),
    )
    .unwrap();
    let bytes = std::fs::metadata(&q).unwrap().len();
    let mut g = c.benchmark_group("actual sets");
    g.throughput(Throughput::Bytes(bytes));
    g.sample_size(10);
    g.bench_function("read qrels, 200k goals", |b| {
        b.iter(|| ActualSets::read_path(&q).unwrap().judgments())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
