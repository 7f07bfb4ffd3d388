//! Actual sets, TREC qrels or JSONL (LeanDojo shapes among the seeds): any bytes read without a
//! panic; sets that read hold sorted, distinct judged ids whose grades are found again.
#![no_main]
use lemma_ingest::{ActualSets, Compression, Format, Input, Source};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&first, text)) = data.split_first() else {
        return;
    };
    let format = if first & 1 == 0 {
        Format::Trec
    } else {
        Format::Jsonl
    };
    let input = Input {
        path: "actual".into(),
        reader: Source::stream(std::io::Cursor::new(text.to_vec())),
        size_on_disk: None,
        compression: Compression::None,
        format,
        map: None,
        file: None,
    };
    let Ok(sets) = ActualSets::read(input) else {
        return;
    };
    let mut judgments = 0;
    for truth in sets.truths() {
        let ids = truth.judged();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        for (id, grade) in truth.entries() {
            assert_eq!(truth.grade(id), Some(grade));
            assert!((id as usize) < sets.lemmas.len());
        }
        assert!(truth.grades_desc().windows(2).all(|w| w[0] >= w[1]));
        judgments += ids.len();
    }
    assert_eq!(judgments, sets.judgments());
    assert_eq!(sets.rows as usize, judgments);
});
