//! `merge` of crafted summaries: any bytes as a summary file (its checksum made right), decoded,
//! then merged with a real shard of the same evaluation (the fixture `pooled`'s goal A, default
//! measures: what scripts/fuzz seeds with, goal B's shard among them), in both orders, with
//! itself, and through `merge_all` with and without `--partial`; every merge that succeeds gives
//! a summary that is printed in every format. Never a panic (overflow checks are on in this
//! crate's builds); what is printed is possible: at most 2^33 goals evaluated (2^32 goals of
//! actual sets, each once as predicted and once as empty), each Depth measure's coverage at most
//! 1, its mean and median there exactly when a goal reached it; a merge succeeds in one order
//! exactly when it does in the other. (At start: the real shard merged with goal B's, encoded
//! and decoded, prints what one evaluation of the whole run prints.)
#![no_main]
use lemma_accum::{Aggregate, Summary};
use lemma_eval::output::{OutFormat, Writer};
use lemma_eval::{Evaluator, Job, Partial, Predictions, SummaryOnly};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const QRELS: &str = include_str!("../../fixtures/pooled/qrels.txt");
const RUN: &str = include_str!("../../fixtures/pooled/run.txt");

/// The real shard (goal A's lines of the run).
fn base() -> &'static Partial {
    static BASE: OnceLock<Partial> = OnceLock::new();
    BASE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let (q, a, whole) = (
            dir.path().join("q"),
            dir.path().join("a"),
            dir.path().join("r"),
        );
        std::fs::write(&q, QRELS).unwrap();
        let b = dir.path().join("b");
        let goal = |g: &str| -> String {
            (RUN.lines())
                .filter(|l| l.starts_with(g))
                .map(|l| format!("{l}\n"))
                .collect()
        };
        std::fs::write(&a, goal("A ")).unwrap();
        std::fs::write(&b, goal("B ")).unwrap();
        std::fs::write(&whole, RUN).unwrap();
        let ev = Evaluator::builder().threads(1).build_from_path(&q).unwrap();
        let open = |p| Predictions::open(p, None, false).unwrap();
        let travelling = |p| -> Partial {
            let job = Job::on(&ev, open(p)).mergeable(true);
            job.run(&mut SummaryOnly, None).unwrap().partial.unwrap()
        };
        let (shard, other) = (travelling(&a), travelling(&b));
        let other = Partial::decode(&other.encode()).unwrap();
        let done = ev.evaluate(open(&whole), &mut SummaryOnly).unwrap();
        let mut merged = shard.clone();
        merged.merge(&other).unwrap();
        assert_eq!(
            print(
                &merged.summary().unwrap(),
                ev.plan().measures(),
                OutFormat::Table
            ),
            print(&done.summary, ev.plan().measures(), OutFormat::Table)
        );
        shard
    })
}

fn print(summary: &Summary, measures: &[lemma_accum::Measure], format: OutFormat) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = Writer::new(&mut out, format, measures);
    w.begin(false).unwrap();
    w.finish(summary, false).unwrap();
    drop(w);
    out
}

/// The merge's summary, checked and printed in every format.
fn check(p: &Partial) {
    let Ok(summary) = p.summary() else {
        return;
    };
    let counts = summary.counts();
    assert!(counts.evaluated <= 1 << 33, "{counts:?}");
    assert!(counts.evaluated_empty <= counts.evaluated, "{counts:?}");
    for (m, a) in summary.aggregates() {
        if let Aggregate::Depth {
            coverage,
            reached,
            median,
            mean,
        } = a
        {
            assert!(coverage <= 1.0 && reached <= counts.evaluated, "{m}: {a:?}");
            assert_eq!(median.is_some(), reached > 0, "{m}: {a:?}");
            assert_eq!(mean.is_some(), reached > 0, "{m}: {a:?}");
        }
    }
    for f in [
        OutFormat::Table,
        OutFormat::Tsv,
        OutFormat::Json,
        OutFormat::Trec,
    ] {
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out, f, p.measures());
        w.set_lacking(p.lacking_shards());
        w.begin(false).unwrap();
        w.finish(&summary, false).unwrap();
    }
}

/// CRC-32 (IEEE), as a summary's header holds it (bytes 20..24, over the bytes after them).
fn crc32(b: &[u8]) -> u32 {
    let mut c = !0u32;
    for &x in b {
        c ^= x as u32;
        for _ in 0..8 {
            c = if c & 1 == 1 {
                (c >> 1) ^ 0xedb8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

fuzz_target!(|data: &[u8]| {
    // The checksum made right again, as a crafted summary's is: mutations reach the merge.
    let mut data = data.to_vec();
    if data.len() >= 24 {
        let crc = crc32(&data[24..]);
        data[20..24].copy_from_slice(&crc.to_le_bytes());
    }
    let Ok(p) = Partial::decode(&data) else {
        return;
    };
    let real = base();
    check(&p);
    let mut twice = p.clone();
    if twice.merge(&p).is_ok() {
        check(&twice);
    }
    let mut a = real.clone();
    let merged = a.merge(&p).is_ok();
    if merged {
        check(&a);
    }
    let mut b = p.clone();
    assert_eq!(b.merge(real).is_ok(), merged, "merge is symmetric");
    if merged {
        check(&b);
    }
    for allow in [false, true] {
        let parts = [("real", real.clone()), ("fuzzed", p.clone())];
        if let Ok((m, _)) = Partial::merge_all(&parts, allow) {
            check(&m);
        }
    }
});
