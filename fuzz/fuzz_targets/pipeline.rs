//! The whole text pipeline, differential: small qrels and a run (plain, gzip or zstd, as the
//! bytes say) under options chosen by the first bytes (order, ties, duplicates, depth, 1 or 2
//! threads, tiny batches) evaluate without a panic, and to the same summary and rows with 1
//! thread and 2 and with any batch size.
#![no_main]
use lemma_eval::{DuplicateMode, Evaluator, OrderMode, Predictions, TieMode};
use lemma_ingest::{from_reader, ActualSets, Compression, Format, Input, Source};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let (opts, rest) = data.split_at(3);
    let cut = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let (qrels, run) = (&rest[..cut], rest.get(cut + 1..).unwrap_or(&[]));
    let input = Input {
        path: "q".into(),
        reader: Source::stream(std::io::Cursor::new(qrels.to_vec())),
        size_on_disk: None,
        compression: Compression::None,
        format: Format::Trec,
        map: None,
        file: None,
    };
    let Ok(actual) = ActualSets::read(input) else {
        return;
    };
    let actual = std::sync::Arc::new(actual);
    let order = [None, Some(OrderMode::Score), Some(OrderMode::File)][opts[0] as usize % 3];
    let ties = [TieMode::Trec, TieMode::Group][(opts[0] as usize / 3) % 2];
    let dups = [DuplicateMode::First, DuplicateMode::Error][(opts[0] as usize / 6) % 2];
    let depth = (opts[1] % 4 != 0).then_some(opts[1] as u64 % 7 + 1);
    let measures = ["AP", "P@2", "R@3", "NDCG", "RR", "Rprec", "NumRet", "AUC"];
    let evaluate = |threads: usize, batch: usize| {
        let mut b = Evaluator::builder()
            .measure_names(measures)
            .unwrap()
            .ties(ties)
            .duplicates(dups)
            .depth(depth)
            .threads(threads)
            .batch_bytes(batch);
        if let Some(o) = order {
            b = b.order(o);
        }
        let ev = b.build(actual.clone());
        let p = from_reader("r".as_ref(), Box::new(std::io::Cursor::new(run.to_vec())))
            .map(Predictions::Text);
        let mut rows = Vec::new();
        let done = p
            .map_err(|e| e.to_string())
            .and_then(|p| ev.evaluate(p, &mut rows).map_err(|e| e.to_string()));
        done.map(|d| {
            (
                format!("{:?} {:?}", d.summary.aggregates(), d.summary.counts()),
                rows,
            )
        })
    };
    let one = evaluate(1, 1 << 20);
    let two = evaluate(2, 1 + opts[2] as usize);
    match (&one, &two) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(_), Err(_)) => {}
        _ => panic!(
            "1 thread: {:?}\n2 threads: {:?}",
            one.as_ref().err(),
            two.as_ref().err()
        ),
    }
});
