//! trec_eval's z-score file (`-Z`): any bytes read without a panic; a file that reads, written
//! back one line per entry, reads as the same entries (means and spreads bit for bit).
#![no_main]
use lemma_ingest::ZScores;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(z) = ZScores::parse(Path::new("z"), data) else {
        return;
    };
    let mut text = Vec::new();
    for (goal, entries) in z.goals() {
        for (measure, (mean, stddev)) in entries {
            text.extend_from_slice(goal);
            text.extend_from_slice(format!(" {measure} {mean:?} {stddev:?}\n").as_bytes());
        }
    }
    let again = ZScores::parse(Path::new("z"), &text).expect("written back, it reads");
    assert_eq!(again.len(), z.len());
    for ((g1, e1), (g2, e2)) in z.goals().zip(again.goals()) {
        assert_eq!(g1, g2);
        assert_eq!(e1.len(), e2.len());
        for ((m1, v1), (m2, v2)) in e1.iter().zip(e2) {
            assert_eq!(m1, m2);
            assert_eq!(v1.0.to_bits(), v2.0.to_bits());
            assert_eq!(v1.1.to_bits(), v2.1.to_bits());
        }
    }
});
