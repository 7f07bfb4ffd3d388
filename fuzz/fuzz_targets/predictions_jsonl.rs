//! JSONL prediction records (LeanDojo and ReProver shapes among the seeds): any line parses or
//! is refused with a message, never a panic; a parsed record's scores match its lemmas.
#![no_main]
use lemma_ingest::parse_prediction_line;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for line in text.lines() {
        if let Ok(p) = parse_prediction_line(line) {
            if let Some(s) = &p.scores {
                assert_eq!(s.len(), p.lemmas.len());
            }
        }
    }
});
