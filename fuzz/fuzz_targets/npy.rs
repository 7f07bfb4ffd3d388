//! `.npy` matrices: any file opens or is refused (never a panic); one that opens gives rows of
//! its declared width.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.npy");
    std::fs::write(&path, data).unwrap();
    let Ok(m) = lemma_ingest::Matrix::open(&path) else {
        return;
    };
    for g in 0..m.rows().min(100) {
        let n = match m.row(g) {
            lemma_ingest::Row::F32(r) => r.len(),
            lemma_ingest::Row::F64(r) => r.len(),
        };
        assert_eq!(n, m.cols());
    }
});
