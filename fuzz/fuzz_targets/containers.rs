//! gzip and zstd containers: any bytes, read as a compressed run and as compressed qrels (the
//! container sniffed from the magic bytes, as for a file), end in a result or an error, never a
//! panic; the seeds are the fixtures compressed, so that mutations land inside real streams
//! (cut short, corrupted mid-way, concatenated members).
#![no_main]
use lemma_eval::{Evaluator, Predictions};
use lemma_ingest::{from_reader, ActualSets};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let open = || from_reader("c".as_ref(), Box::new(std::io::Cursor::new(data.to_vec())));
    if let Ok(input) = open() {
        let _ = ActualSets::read(input);
    }
    let qrels = "g1 0 a 1\ng2 0 b 1\n";
    let actual = ActualSets::read(
        from_reader(
            "q".as_ref(),
            Box::new(std::io::Cursor::new(qrels.as_bytes().to_vec())),
        )
        .unwrap(),
    )
    .unwrap();
    let ev = Evaluator::builder()
        .measure_names(["AP", "P@1"])
        .unwrap()
        .threads(2)
        .batch_bytes(64)
        .build(actual);
    if let Ok(input) = open() {
        let _ = ev.evaluate(Predictions::Text(input), &mut Vec::new());
    }
});
