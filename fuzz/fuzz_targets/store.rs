//! The binary store: any file opens or is refused (a clear error, never a panic); one that opens
//! is verified, its actual sets read and its rankings evaluated.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.store");
    std::fs::write(&path, data).unwrap();
    let Ok(store) = lemma_ingest::Store::open(&path) else {
        return;
    };
    let _ = store.verify();
    for g in 0..store.goals().min(1000) {
        let _ = store.ranking(g);
        let _ = store.truth(g);
    }
    let Ok(actual) = store.actual_sets() else {
        return;
    };
    let Ok(ev) = lemma_eval::Evaluator::builder()
        .measure_names(["AP", "P@10", "NDCG"])
        .map(|b| b.build(actual))
    else {
        return;
    };
    if let Ok(p) = lemma_eval::Predictions::open(&path, None, false) {
        let _ = ev.evaluate(p, &mut lemma_eval::SummaryOnly);
    }
});
