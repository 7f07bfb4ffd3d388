//! JSONL prediction records (LeanDojo and ReProver shapes among the seeds): any line parses or
//! is refused with a message, never a panic; a parsed record's scores match its lemmas; and the
//! scanner (with serde behind it for what it gives up on) reads every line as serde_json alone
//! does: the same record, or the same error.
#![no_main]
use lemma_ingest::{parse_prediction_general, parse_prediction_line, parse_prediction_unscored};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for line in text.lines() {
        let got = parse_prediction_line(line);
        assert_eq!(got, parse_prediction_general(line, true), "{line}");
        assert_eq!(
            parse_prediction_unscored(line),
            parse_prediction_general(line, false),
            "{line}"
        );
        if let Ok(p) = got {
            if let Some(s) = &p.scores {
                assert_eq!(s.len(), p.lemmas.len());
            }
        }
    }
});
