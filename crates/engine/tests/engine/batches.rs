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

/// Bytes of `data` as a reader that fails after `fail_at` of them (a disk or a network that
/// breaks mid-file); past the end, the end.
struct FailAfter {
    data: Vec<u8>,
    at: usize,
    fail_at: usize,
}

impl std::io::Read for FailAfter {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.data.len() {
            return Ok(0);
        }
        if self.at >= self.fail_at {
            return Err(std::io::Error::other("injected failure"));
        }
        let n = (buf.len())
            .min(self.data.len() - self.at)
            .min(self.fail_at - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// A reader that fails after N bytes, plain or inside a gzip stream, as predictions (1 and 2
/// threads, small batches) or as actual sets: an I/O error naming the input and the reason,
/// never numbers from the part read; past the end, the same numbers as the whole text.
#[test]
fn a_reader_that_fails_after_n_bytes_is_an_error() {
    use lemma_ingest::from_reader;
    let (text, _) = run_with_bad_line(0);
    let qrels = "g0 0 l1 1\ng39 0 l2 1\n";
    let gz = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), Default::default());
        e.write_all(text.as_bytes()).unwrap();
        e.finish().unwrap()
    };
    let reader = |data: &[u8], fail_at: usize| -> Box<dyn std::io::Read + Send> {
        Box::new(FailAfter {
            data: data.to_vec(),
            at: 0,
            fail_at,
        })
    };
    let actual =
        ActualSets::read(from_reader("q".as_ref(), reader(qrels.as_bytes(), 99)).unwrap()).unwrap();
    // The goal counts of a reader read to its end.
    let counts = |r: Box<dyn std::io::Read + Send>| {
        let input = from_reader("r".as_ref(), r).unwrap();
        let o = EvalOptions::default();
        evaluate(&actual, input, &o, &mut SummaryOnly, None)
            .unwrap()
            .0
            .counts()
    };
    let whole = counts(reader(text.as_bytes(), usize::MAX));
    assert_eq!(whole.evaluated, 2);
    for (data, name) in [(text.as_bytes(), "plain"), (&gz[..], "gzip")] {
        for fail_at in [1, 20, 150, data.len() / 2, data.len() - 1] {
            for threads in [1, 2] {
                let mut o = EvalOptions::default();
                o.batch_bytes = 100;
                o.threads = threads;
                // The first bytes are read when the input is opened (to sniff its format).
                let res: Result<(), _> = from_reader("r".as_ref(), reader(data, fail_at)).and_then(
                    |input| match evaluate(&actual, input, &o, &mut SummaryOnly, None) {
                        Err(EvalError::Input(e)) => Err(e),
                        Err(e) => panic!("{name} {fail_at}: {e}"),
                        Ok(_) => panic!("{name}: a failure at byte {fail_at} went unnoticed"),
                    },
                );
                let e = res.unwrap_err();
                assert_eq!(e.kind, ErrorKind::Io, "{name} {fail_at}: {e}");
                assert!(
                    e.to_string().starts_with("r: cannot read: ")
                        && e.to_string().contains("injected failure"),
                    "{name} {fail_at}: {e}"
                );
            }
        }
        // A reader whose failure would come past the end never fails.
        assert_eq!(counts(reader(data, data.len())), whole, "{name}");
    }
    // Actual sets.
    for fail_at in [1, 5, qrels.len() - 1] {
        let e = from_reader("q".as_ref(), reader(qrels.as_bytes(), fail_at))
            .and_then(ActualSets::read)
            .err()
            .unwrap_or_else(|| panic!("qrels failing at {fail_at} were read"));
        assert_eq!(e.kind, ErrorKind::Io, "{e}");
        assert!(e.to_string().contains("q: cannot read: "), "{e}");
    }
}
