//! TREC run lines: the vector line splitter over any bytes never panics, its lines tile the
//! input, and where it and the one-line parser both find fields, they find the same ones.
#![no_main]
use lemma_ingest::{parse_run_line, visit_run_lines, RunFields, RunLineVisitor, Step, VisitedLine};
use libfuzzer_sys::fuzz_target;

type Seen<'a> = (usize, usize, Result<Option<RunFields<'a>>, String>);

struct Lines<'a>(Vec<Seen<'a>>);

impl<'a> RunLineVisitor<'a> for Lines<'a> {
    fn line(&mut self, l: VisitedLine<'a>) -> Step {
        self.0.push((l.start, l.end, l.fields));
        Step::Next
    }
}

fuzz_target!(|data: &[u8]| {
    let mut lines = Lines(Vec::new());
    let last = visit_run_lines(data, &mut lines);
    assert_eq!(last as usize, lines.0.len());
    let mut at = 0;
    for (start, end, fields) in &lines.0 {
        assert_eq!(*start, at, "lines tile the input");
        assert!(end >= start && *end <= data.len());
        at = end + 1;
        if let (Ok(Some(f)), Ok(Some(l))) = (fields, parse_run_line(&data[*start..*end])) {
            assert_eq!((f.goal, f.lemma, f.tag), (l.goal, l.lemma, l.tag));
        }
    }
});
