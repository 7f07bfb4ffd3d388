//! The join, differential: small qrels and a TREC run written to files, evaluated by the held
//! pipeline (the qrels read whole first) and joined (sorted qrels read along the run; qrels out
//! of order sorted first, in memory or on disk), under options chosen by the first bytes (1 or 2
//! threads, tiny batches, a memory budget small enough that goals out of order are looked up or
//! the qrels spilled). Whenever the qrels read whole, both give the same summary (every aggregate
//! to the bit) and rows, or the same error (kind, line and message); when they do not, the join
//! fails too.
#![no_main]
use lemma_eval::{EvalError, Evaluator, Job, Predictions};
use lemma_ingest::{ActualSets, SortedQrels, SpillOptions};
use libfuzzer_sys::fuzz_target;

const MEASURES: [&str; 8] = ["AP", "P@2", "R@3", "NDCG", "RR", "Bpref", "NumRel", "AUC"];

fn error_key(e: EvalError) -> String {
    match e {
        EvalError::Input(ie) => format!("{:?} line {:?}: {}", ie.kind, ie.line, ie.message),
        e => e.to_string(),
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let (opts, rest) = data.split_at(3);
    let cut = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let (qrels, run) = (&rest[..cut], rest.get(cut + 1..).unwrap_or(&[]));
    let dir = tempfile::tempdir().unwrap();
    let (qp, rp) = (dir.path().join("q"), dir.path().join("r"));
    std::fs::write(&qp, qrels).unwrap();
    std::fs::write(&rp, run).unwrap();
    let threads = 1 + opts[0] as usize % 2;
    let batch = [1, 64, 256, 4096][(opts[0] as usize / 2) % 4] + opts[2] as usize;
    let memory = [16 << 10, 1 << 30][(opts[1] % 2) as usize];
    let builder = || {
        Evaluator::builder()
            .measure_names(MEASURES)
            .unwrap()
            .threads(threads)
            .batch_bytes(batch)
    };
    let key = |s: &lemma_accum::Summary| format!("{:?} {:?}", s.aggregates(), s.counts());

    let held = ActualSets::read_path(&qp).map(|actual| {
        let ev = builder().build(actual);
        let mut rows = Vec::new();
        let done = Predictions::open(&rp, None, false)
            .map_err(|e| e.to_string())
            .and_then(|p| ev.evaluate(p, &mut rows).map_err(error_key));
        done.map(|d| (key(&d.summary), rows))
    });

    let spill = SpillOptions {
        memory,
        dir: Some(dir.path().join("spill")),
    };
    std::fs::create_dir(dir.path().join("spill")).unwrap();
    let sorted = match SortedQrels::open(&qp) {
        Ok(Some(q)) => Ok(Some(q)),
        Ok(None) => SortedQrels::sort(&qp, &spill).map(|s| s.map(|(q, _)| q)),
        Err(e) => Err(e),
    };
    let joined = sorted.map(|q| {
        q.map(|q| {
            let builder = builder().spill(spill.clone());
            let mut rows = Vec::new();
            let done = lemma_ingest::open(&rp)
                .map_err(|e| e.to_string())
                .and_then(|p| {
                    (Job::along(builder, q, Predictions::Text(p)).run(&mut rows, None))
                        .map_err(error_key)
                });
            done.map(|d| (key(&d.evaluation.summary), rows))
        })
    });
    // Nothing left behind in the spill directory, whatever the outcome.
    assert_eq!(
        std::fs::read_dir(dir.path().join("spill")).unwrap().count(),
        0
    );

    match (held, joined) {
        // Qrels that read whole: the join reads them (or finds them not TREC, which it leaves to
        // the held pipeline) and gives the same outcome.
        (Ok(h), Ok(Some(j))) => assert_eq!(h, j),
        (Ok(_), Ok(None)) => {}
        (Ok(h), Err(e)) => panic!("held read, join failed: {e}\nheld: {h:?}"),
        // Qrels that do not read whole: no joined outcome may succeed.
        (Err(_), Ok(Some(Ok(j)))) => panic!("held qrels failed, join succeeded: {j:?}"),
        (Err(_), _) => {}
    }
});
