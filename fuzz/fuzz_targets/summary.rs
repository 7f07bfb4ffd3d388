//! The summary format (`--summary-out`, `merge`): any bytes decode or are refused with a message;
//! a summary that decodes encodes back to a summary equal to it (a version 3 one to version 4:
//! the same but for the version number read).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = lemma_eval::Partial::decode(data) {
        let bytes = p.encode();
        let again = lemma_eval::Partial::decode(&bytes).expect("its own encoding decodes");
        assert_eq!(again.encode(), bytes);
        if data[8] != 3 {
            assert_eq!(again, p);
        }
    }
});
