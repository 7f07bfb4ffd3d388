//! Full-library paths: a binary store of full rankings and a dense f32 matrix (20 goals x 200,000
//! lemmas each, generated into a temporary directory), evaluated with 1 and 2 threads. Throughput
//! is in bytes of rankings / scores. The large-scale figures (2,000 goals, against the machine's
//! read rate) come from `scripts/bench-full`. Run: `cargo bench -p lemma-benches --bench full`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lemma_accum::Measure;
use lemma_eval::full::{evaluate_full, Source};
use lemma_eval::EvalOptions;
use lemma_eval::SummaryOnly;
use lemma_ingest::{ActualSets, Matrix, Names, Store};
use lemma_tools::gen::{generate_npy, generate_store, GenSpec};

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let spec = GenSpec {
        goals: 20,
        universe: 200_000,
        depth: 200_000,
        ..GenSpec::default()
    };
    let (store_path, sq) = (dir.path().join("s.store"), dir.path().join("s.qrels"));
    generate_store(
        &spec,
        &store_path,
        &mut std::fs::File::create(&sq).unwrap(),
        false,
    )
    .unwrap()
    .commit()
    .unwrap();
    let (npy, dq, gn, ln) = (
        dir.path().join("m.npy"),
        dir.path().join("m.qrels"),
        dir.path().join("g"),
        dir.path().join("l"),
    );
    generate_npy(
        &spec,
        &mut std::io::BufWriter::new(std::fs::File::create(&npy).unwrap()),
        &mut std::fs::File::create(&gn).unwrap(),
        &mut std::io::BufWriter::new(std::fs::File::create(&ln).unwrap()),
        &mut std::fs::File::create(&dq).unwrap(),
    )
    .unwrap();
    let store = Store::open(&store_path).unwrap();
    let store_actual = ActualSets::read_path(&sq).unwrap();
    let matrix = Matrix::open(&npy).unwrap();
    let dense_actual = ActualSets::read_path(&dq).unwrap();
    let (goals, lemmas) = (Names::read(&gn).unwrap(), Names::read(&ln).unwrap());
    let measures =
        Measure::parse_all(["AP", "P@10", "R@100", "nDCG@10", "AUC", "Depth(recall=1.0)"]).unwrap();
    let mut g = c.benchmark_group("full_library_20x200k");
    g.sample_size(20);
    for threads in [1, 2] {
        let mut opts = EvalOptions::default();
        opts.measures = measures.clone();
        opts.threads = threads;
        g.throughput(Throughput::Bytes(store.block_bytes()));
        g.bench_function(format!("store_{threads}_threads"), |b| {
            b.iter(|| {
                evaluate_full(
                    &store_actual,
                    &Source::Store(&store),
                    &opts,
                    &mut SummaryOnly,
                )
                .unwrap()
                .0
            })
        });
        g.throughput(Throughput::Bytes(matrix.data_bytes()));
        let source = Source::Dense {
            matrix: &matrix,
            goals: &goals,
            lemmas: &lemmas,
        };
        g.bench_function(format!("dense_{threads}_threads"), |b| {
            b.iter(|| {
                evaluate_full(&dense_actual, &source, &opts, &mut SummaryOnly)
                    .unwrap()
                    .0
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
