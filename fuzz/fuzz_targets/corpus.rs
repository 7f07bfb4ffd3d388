//! LeanDojo corpora and goal places: any bytes, read as `corpus.jsonl` (plain, gzip, zstd) or as
//! a binary corpus (known by its first bytes), give a corpus or a clear error, never a panic. A
//! corpus that reads holds together: every file and premise is found by its name, a file's last
//! end is its premises' greatest, no file imports itself, the premise index finds every premise
//! with its file and end, and its binary form reads back as the same corpus. The bytes after the
//! first NUL are a goals file (`{"goal_id", "file_path", "theorem_pos"}` records), read and placed
//! in the corpus.
#![no_main]
use lemma_ingest::{Corpus, Found, GoalPlaces, PremiseIndex};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (corpus_bytes, goals) = match data.iter().position(|&b| b == 0) {
        Some(at) if !data.starts_with(b"LECORPUS") => (&data[..at], Some(&data[at + 1..])),
        _ => (data, None),
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corpus.jsonl");
    std::fs::write(&path, corpus_bytes).unwrap();
    let Ok(c) = Corpus::read(&path) else {
        return;
    };
    let index = PremiseIndex::new(&c);
    for f in 0..c.files() as u32 {
        assert_eq!(c.file_id(c.file_path(f)), Some(f));
        let r = c.file_premises(f);
        let greatest = (r.start..r.end).map(|p| c.premise_end(p)).max();
        assert_eq!(c.last_end(f), greatest);
        assert!(!c.imports(f, f), "a file imports itself");
    }
    for p in 0..c.premises() as u32 {
        let name = c.premise_name(p);
        assert_eq!(c.premise_id(name), Some(p));
        let found = Found {
            id: p,
            file: c.premise_file(p),
            end: c.premise_end(p),
        };
        assert_eq!(index.find(&c, c.premise_hash(name), name), Some(found));
        assert!(c.file_premises(found.file).contains(&p));
    }
    let bin = dir.path().join("corpus.lec");
    c.write_binary_file(&bin).expect("a corpus that reads is written");
    let again = Corpus::read(&bin).expect("its binary form reads");
    assert_eq!(again.fingerprint(), c.fingerprint());
    assert_eq!((again.files(), again.premises()), (c.files(), c.premises()));
    for p in 0..c.premises() as u32 {
        assert_eq!(again.premise_name(p), c.premise_name(p));
        assert_eq!(again.premise_end(p), c.premise_end(p));
        assert_eq!(again.premise_file(p), c.premise_file(p));
    }
    let files = c.files().min(64) as u32;
    for f in 0..files {
        for g in 0..files {
            assert_eq!(again.imports(f, g), c.imports(f, g));
        }
    }
    if let Some(goals) = goals {
        let gp = dir.path().join("goals.jsonl");
        std::fs::write(&gp, goals).unwrap();
        let mut places = GoalPlaces::new();
        if places.read_unresolved(&gp).is_ok() {
            places.resolve(&c);
            let _ = places.fingerprint(&c);
        }
    }
});
