//! Errors in later batches name the file's own line and byte, whichever way the file is read.

use lemma_eval::text::evaluate;
use lemma_eval::SummaryOnly;
use lemma_eval::{EvalError, EvalOptions};
use lemma_ingest::{ActualSets, ErrorKind};
use std::io::Write;

/// A run of 40 goals of 5 lines, with line `bad` (1-based) replaced by a line of 4 fields; the
/// byte offset of that line.
fn run_with_bad_line(bad: usize) -> (String, u64) {
    let mut text = String::new();
    let mut offset = 0;
    let mut n = 0;
    for g in 0..40 {
        for l in 0..5 {
            n += 1;
            if n == bad {
                offset = text.len() as u64;
                text += &format!("g{g} Q0 l{l} {l}\n");
            } else {
                text += &format!("g{g} Q0 l{l} {l} {}.5 run\n", 9 - l);
            }
        }
    }
    (text, offset)
}

#[test]
fn an_error_in_a_later_batch_names_the_files_line_and_byte() {
    let dir = tempfile::tempdir().unwrap();
    let qrels = dir.path().join("qrels");
    std::fs::write(&qrels, "g0 0 l1 1\ng39 0 l2 1\n").unwrap();
    let actual = ActualSets::read_path(&qrels).unwrap();
    for bad in [3, 88, 171, 200] {
        let (text, offset) = run_with_bad_line(bad);
        let plain = dir.path().join("run");
        std::fs::write(&plain, &text).unwrap();
        let gz = dir.path().join("run.gz");
        let mut e =
            flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), Default::default());
        e.write_all(text.as_bytes()).unwrap();
        e.finish().unwrap();
        // The plain file is read positionally, the gzip one streamed; batches of about 100 bytes.
        for (path, threads) in [(&plain, 1), (&plain, 2), (&gz, 2)] {
            let mut o = EvalOptions::default();
            o.batch_bytes = 100;
            o.threads = threads;
            let input = lemma_ingest::open(path).unwrap();
            assert_eq!(input.file.is_some(), path == &plain);
            let Err(EvalError::Input(e)) = evaluate(&actual, input, &o, &mut SummaryOnly, None)
            else {
                panic!("line {bad} is bad");
            };
            assert_eq!(e.kind, ErrorKind::Syntax);
            assert_eq!(
                (e.line, e.byte),
                (Some(bad as u64), Some(offset)),
                "{path:?}, {threads} threads: {e}"
            );
            assert!(e.message.contains("expected 6 fields"), "{e}");
        }
    }
}
