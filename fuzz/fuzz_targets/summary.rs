//! The summary format (`--summary-out`, `merge`): any bytes decode or are refused with a message;
//! a summary that decodes encodes back to a summary equal to it.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = lemma_eval::Partial::decode(data) {
        let again = lemma_eval::Partial::decode(&p.encode()).expect("its own encoding decodes");
        assert_eq!(again, p);
    }
});
