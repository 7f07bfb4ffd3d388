//! Reading JSONL prediction records of the common shape (LeanDojo's: `goal_id`, 1,000
//! `retrieved_premises`, 1,000 `scores`), the first 100 records of workload M as JSONL
//! (`lemma-eval gen --format jsonl --seed 1`), with their scores converted
//! (`parse_prediction_line`) and checked only (`parse_prediction_unscored`); and read as `eval`
//! reads them, as places in the line in reused buffers (`scan_prediction`, scores converted or,
//! when no measure needs them, checked). Throughput in bytes. Run:
//! `cargo bench -p lemma-benches --bench jsonl`.
//!
//! The group `jsonl_parsers` sets the hand-written scanner (`parse_prediction_line`) against
//! general JSON parsers from the crate registry reading the same record into the same values:
//! the goal and the names borrowed from the line, the scores as `f64`. simd-json parses in place,
//! so each record is first copied into a reused buffer (as a reader of borrowed batches would
//! have to); sonic-rs and serde_json read the line as it is.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lemma_ingest::{
    parse_prediction_line, parse_prediction_unscored, scan_prediction, RecordSpans,
};
use lemma_tools::gen::{generate_jsonl, GenSpec};
use serde::Deserialize;

/// A record as the registry parsers read it: names borrowed (the records have no escapes).
#[derive(Deserialize)]
struct Record<'a> {
    #[serde(borrow)]
    goal_id: &'a str,
    #[serde(borrow)]
    retrieved_premises: Vec<&'a str>,
    scores: Vec<f64>,
}

impl Record<'_> {
    fn weight(&self) -> usize {
        weight(self.goal_id, &self.retrieved_premises, &self.scores)
    }
}

/// What every contender returns: enough of the values read that none can be skipped.
fn weight<S: AsRef<str>>(goal: &str, names: &[S], scores: &[f64]) -> usize {
    let names: usize = names.iter().map(|n| n.as_ref().len()).sum();
    goal.len() + names + scores.iter().filter(|s| **s > 999.0).count()
}

fn records() -> String {
    let spec = GenSpec {
        goals: 100,
        depth: 1000,
        seed: 1,
        ..GenSpec::default()
    };
    let (mut qrels, mut run) = (Vec::new(), Vec::new());
    generate_jsonl(&spec, &mut qrels, &mut run).expect("generated");
    String::from_utf8(run).expect("UTF-8")
}

fn bench(c: &mut Criterion) {
    let text = records();
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
    // What `eval` reads: places in the line, into buffers reused from record to record.
    let mut spans = RecordSpans::default();
    for (name, scored) in [
        ("scan_prediction", true),
        ("scan_prediction_unscored", false),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                (lines.iter())
                    .map(|l| {
                        assert!(scan_prediction(l, scored, &mut spans), "record");
                        spans.names.len()
                    })
                    .sum::<usize>()
            })
        });
    }
    g.finish();
}

fn parsers(c: &mut Criterion) {
    let text = records();
    let lines: Vec<&str> = text.lines().collect();
    // Every contender reads the same values: checked once here, outside the clock.
    let want: usize = (lines.iter())
        .map(|l| serde_json::from_str::<Record>(l).expect("record").weight())
        .sum();
    let scanner = |l: &str| {
        let p = parse_prediction_line(l).expect("record");
        weight(&p.goal, &p.lemmas, &p.scores.expect("scores"))
    };
    assert_eq!(lines.iter().map(|l| scanner(l)).sum::<usize>(), want);
    let mut buf: Vec<u8> = Vec::new();
    let mut simd = |l: &str| {
        buf.clear();
        buf.extend_from_slice(l.as_bytes());
        simd_json::serde::from_slice::<Record>(&mut buf)
            .expect("record")
            .weight()
    };
    assert_eq!(lines.iter().map(|l| simd(l)).sum::<usize>(), want);
    let sonic = |l: &str| sonic_rs::from_str::<Record>(l).expect("record").weight();
    assert_eq!(lines.iter().map(|l| sonic(l)).sum::<usize>(), want);

    let mut g = c.benchmark_group("jsonl_parsers");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.sample_size(20);
    g.bench_function("lemma_ingest_scanner", |b| {
        b.iter(|| lines.iter().map(|l| scanner(l)).sum::<usize>())
    });
    g.bench_function("sonic_rs", |b| {
        b.iter(|| lines.iter().map(|l| sonic(l)).sum::<usize>())
    });
    g.bench_function("simd_json", |b| {
        b.iter(|| lines.iter().map(|l| simd(l)).sum::<usize>())
    });
    g.bench_function("serde_json", |b| {
        b.iter(|| {
            (lines.iter())
                .map(|l| serde_json::from_str::<Record>(l).expect("record").weight())
                .sum::<usize>()
        })
    });
    g.finish();
}

criterion_group!(benches, bench, parsers);
criterion_main!(benches);
