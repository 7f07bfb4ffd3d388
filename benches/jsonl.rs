//! Reading JSONL prediction records of the common shape (LeanDojo's: `goal_id`, 1,000
//! `retrieved_premises`, 1,000 `scores`), the first 100 records of workload M as JSONL
//! (`lemma-eval gen --format jsonl --seed 1`), with their scores converted
//! (`parse_prediction_line`) and checked only (`parse_prediction_unscored`, what `eval` reads
//! when no measure needs scores). Throughput in bytes. Run:
//! `cargo bench -p lemma-benches --bench jsonl`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lemma_ingest::{parse_prediction_line, parse_prediction_unscored};
use lemma_tools::gen::{generate_jsonl, GenSpec};

fn bench(c: &mut Criterion) {
    let spec = GenSpec {
        goals: 100,
        depth: 1000,
        seed: 1,
        ..GenSpec::default()
    };
    let (mut qrels, mut run) = (Vec::new(), Vec::new());
    generate_jsonl(&spec, &mut qrels, &mut run).expect("generated");
    let text = String::from_utf8(run).expect("UTF-8");
    let lines: Vec<&str> = text.lines().collect();
    let mut g = c.benchmark_group("jsonl_100_records_of_1000");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.sample_size(20);
    g.bench_function("parse_prediction_line", |b| {
        b.iter(|| {
            (lines.iter())
                .map(|l| parse_prediction_line(l).expect("record").lemmas.len())
                .sum::<usize>()
        })
    });
    g.bench_function("parse_prediction_unscored", |b| {
        b.iter(|| {
            (lines.iter())
                .map(|l| parse_prediction_unscored(l).expect("record").lemmas.len())
                .sum::<usize>()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
