//! Shards of one predictions file (`Job` of a `PredictedInput::Shard`) know which they are: a complete
//! set merges, in any order, into the whole file's evaluation (and its encoding); a set with
//! shards missing, given twice or cut into another `N` is refused by `Partial::merge_all` naming
//! the parts, unless partial merges are allowed; crafted shard records do not decode.

use lemma_eval::{
    Evaluation, Evaluator, GoalRow, Job, LackingShards, MissingMode, Partial, PredictedInput,
    Predictions, PredictionsFile, SummaryOnly,
};
use lemma_tools::gen::{generate_trec, GenSpec};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

const MEASURES: [&str; 5] = ["AP", "P@5", "RR", "nDCG", "Depth(recall=1.0)"];

/// A generated workload in `dir`: (qrels, run), the run well over 128 KiB.
fn generated(dir: &Path) -> (PathBuf, PathBuf) {
    let spec = GenSpec {
        goals: 300,
        universe: 5_000,
        depth: 60,
        tie_share: 0.2,
        graded: true,
        empty_share: 0.1,
        seed: 9,
        ..GenSpec::default()
    };
    let (mut q, mut r) = (Vec::new(), Vec::new());
    generate_trec(&spec, &mut q, &mut r).unwrap();
    let (qp, rp) = (dir.join("gen.qrels"), dir.join("gen.run"));
    std::fs::write(&qp, q).unwrap();
    std::fs::write(&rp, r).unwrap();
    (qp, rp)
}

fn evaluator(qrels: &Path, missing: MissingMode) -> Evaluator {
    Evaluator::builder()
        .measure_names(MEASURES)
        .unwrap()
        .missing(missing)
        .build_from_path(qrels)
        .unwrap()
}

/// The summary as text: every aggregate's bits and the goal counts.
fn key(s: &lemma_accum::Summary) -> String {
    format!("{:?} {:?}", s.aggregates(), s.counts())
}

/// Shard `i` of `n` (1-based) of `run`, and the goals it ranked.
fn shard(ev: &Evaluator, run: &Path, i: u64, n: u64) -> (Partial, HashSet<String>) {
    let mut rows: Vec<GoalRow> = Vec::new();
    let predicted = PredictedInput::Shard {
        path: run.to_path_buf(),
        index: i,
        count: n,
    };
    let done = Job::on(ev, predicted).run(&mut rows, None).unwrap();
    let p = done.partial.expect("a shard's summary travels");
    let goals = (rows.into_iter())
        .filter(|r| !r.empty)
        .map(|r| String::from_utf8(r.goal).unwrap())
        .collect();
    // Through its encoding, as it travels.
    (Partial::decode(&p.encode()).unwrap(), goals)
}

/// The evaluation of `predictions` by `ev`, and its summary that travels.
fn mergeable(ev: &Evaluator, predictions: Predictions) -> (Evaluation, Partial) {
    let done = (Job::on(ev, predictions).mergeable(true))
        .run(&mut SummaryOnly, None)
        .unwrap();
    (done.evaluation, done.partial.expect("asked for"))
}

fn named(parts: &[(&str, &Partial)]) -> Vec<(String, Partial)> {
    (parts.iter())
        .map(|(n, p)| (n.to_string(), (*p).clone()))
        .collect()
}

#[test]
fn complete_sets_merge_in_any_order_and_incomplete_ones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = generated(dir.path());
    let ev = evaluator(&q, MissingMode::Zero);
    let pred = || Predictions::open(&r, None, false).unwrap();
    let (whole, whole_partial) = mergeable(&ev, pred());
    let file = PredictionsFile::of(&r).unwrap();
    assert_eq!(file.bytes, std::fs::metadata(&r).unwrap().len());
    assert!(file.bytes > 2 * PredictionsFile::EDGE, "{}", file.bytes);
    let parts: Vec<(Partial, HashSet<String>)> = (1..=5).map(|i| shard(&ev, &r, i, 5)).collect();
    let p = |i: usize| &parts[i - 1].0;
    // Each shard alone lacks the other four.
    assert_eq!(
        p(2).lacking_shards(),
        [LackingShards {
            file: file.clone(),
            count: 5,
            missing: vec![(1, 1), (3, 5)],
        }]
    );
    for order in [[1, 2, 3, 4, 5], [5, 4, 3, 2, 1], [3, 1, 5, 2, 4]] {
        let list: Vec<(String, Partial)> = (order.iter())
            .map(|&i| (format!("s{i}"), p(i).clone()))
            .collect();
        let (m, lacking) = Partial::merge_all(&list, false).unwrap();
        assert!(lacking.is_empty());
        assert_eq!(key(&m.summary().unwrap()), key(&whole.summary), "{order:?}");
        // A complete set is a whole file: the same encoding as the whole file's evaluation.
        assert_eq!(m.encode(), whole_partial.encode(), "{order:?}");
    }
    // Two of five.
    let e = Partial::merge_all(&named(&[("s1", p(1)), ("s2", p(2))]), false).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("shards 3-5 of 5 of {file} are missing (given: s1, s2)")
    );
    assert_eq!(
        file.to_string(),
        format!(
            "gen.run ({} bytes, fingerprint {:016x})",
            file.bytes, file.fingerprint
        )
    );
    let e =
        Partial::merge_all(&named(&[("s1", p(1)), ("s2", p(2)), ("s4", p(4))]), false).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("shards 3, 5 of 5 of {file} are missing (given: s1, s2, s4)")
    );
    // Given twice, even when the set is complete without it.
    let mut all: Vec<(String, Partial)> =
        (1..=5).map(|i| (format!("s{i}"), p(i).clone())).collect();
    all.push(("again".into(), p(2).clone()));
    let e = Partial::merge_all(&all, true).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("shard 2/5 of {file} is given twice: s2 and again")
    );
    // Cut into another N.
    let (other, _) = shard(&ev, &r, 2, 3);
    let e = Partial::merge_all(&named(&[("s1", p(1)), ("t2", &other)]), true).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "s1 is shard 1/5 of {file}, t2 is shard 2/3 of it: shards of one file merge only \
             with shards cut into as many"
        )
    );
    // Allowed: the summary is of the goals shards 1 and 3 ranked, as an evaluation of their
    // lines alone that skips the goals without predictions gives it; the merge merges later
    // with the shards it lacks into the whole.
    let (m, lacking) = Partial::merge_all(&named(&[("s3", p(3)), ("s1", p(1))]), true).unwrap();
    assert_eq!(
        lacking,
        [LackingShards {
            file: file.clone(),
            count: 5,
            missing: vec![(2, 2), (4, 5)],
        }]
    );
    assert_eq!(lacking[0].missing_count(), 3);
    assert_eq!(lacking[0].missing_text(), "2,4-5");
    assert_eq!(
        lacking[0].to_string(),
        format!("shards 2, 4-5 of 5 of {file}")
    );
    let goals: HashSet<&String> = parts[0].1.iter().chain(&parts[2].1).collect();
    assert!(goals.len() > 80, "{}", goals.len());
    let text = std::fs::read_to_string(&r).unwrap();
    let given: String = (text.lines())
        .filter(|l| goals.contains(&l.split_whitespace().next().unwrap().to_string()))
        .map(|l| format!("{l}\n"))
        .collect();
    let given_run = dir.path().join("given.run");
    std::fs::write(&given_run, given).unwrap();
    let skip = evaluator(&q, MissingMode::Skip)
        .evaluate(
            Predictions::open(&given_run, None, false).unwrap(),
            &mut SummaryOnly,
        )
        .unwrap();
    let s = m.summary().unwrap();
    assert_eq!(
        format!("{:?}", s.aggregates()),
        format!("{:?}", skip.summary.aggregates())
    );
    assert_eq!(s.counts().evaluated, skip.summary.counts().evaluated);
    assert_ne!(key(&s), key(&whole.summary));
    let back = Partial::decode(&m.encode()).unwrap();
    assert_eq!(back, m);
    let rest = named(&[("m", &back), ("s2", p(2)), ("s5", p(5)), ("s4", p(4))]);
    let (m, lacking) = Partial::merge_all(&rest, false).unwrap();
    assert!(lacking.is_empty());
    assert_eq!(key(&m.summary().unwrap()), key(&whole.summary));
    // Shard 1 of 1 is the whole file.
    let (one, _) = shard(&ev, &r, 1, 1);
    assert!(one.lacking_shards().is_empty());
    assert_eq!(one.encode(), whole_partial.encode());
}

#[test]
fn whole_files_merge_with_complete_sets_of_shards() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = generated(dir.path());
    let ev = evaluator(&q, MissingMode::Zero);
    let whole = ev
        .evaluate(
            Predictions::open(&r, None, false).unwrap(),
            &mut SummaryOnly,
        )
        .unwrap();
    // The run's first 100 goals in one file, evaluated whole; the rest in another, in shards.
    let text = std::fs::read_to_string(&r).unwrap();
    let (mut head, mut tail, mut goals, mut last) = (String::new(), String::new(), 0, "");
    for line in text.lines() {
        let g = line.split_whitespace().next().unwrap();
        if g != last {
            goals += 1;
            last = g;
        }
        let to = if goals <= 100 { &mut head } else { &mut tail };
        to.push_str(line);
        to.push('\n');
    }
    let (hp, tp) = (dir.path().join("head.run"), dir.path().join("tail.run"));
    std::fs::write(&hp, head).unwrap();
    std::fs::write(&tp, tail).unwrap();
    let (_, head_part) = mergeable(&ev, Predictions::open(&hp, None, false).unwrap());
    assert!(head_part.lacking_shards().is_empty());
    let mut list = vec![("head.sum".to_string(), head_part)];
    for i in 1..=3 {
        list.push((format!("tail.{i}.sum"), shard(&ev, &tp, i, 3).0));
    }
    let (m, _) = Partial::merge_all(&list, false).unwrap();
    assert_eq!(key(&m.summary().unwrap()), key(&whole.summary));
    list.remove(2);
    let e = Partial::merge_all(&list, false).unwrap_err().to_string();
    let tail_file = PredictionsFile::of(&tp).unwrap();
    assert_eq!(
        e,
        format!("shard 2 of 3 of {tail_file} is missing (given: tail.1.sum, tail.3.sum)")
    );
    // Shards of the same name but other contents (a file changed between shards): two files,
    // each lacking shards.
    let mut changed = std::fs::read(&tp).unwrap();
    let at = changed.len() - 2;
    changed[at] = if changed[at] == b'x' { b'y' } else { b'x' };
    let cp = dir.path().join("changed");
    std::fs::create_dir(&cp).unwrap();
    let cp = cp.join("tail.run");
    std::fs::write(&cp, changed).unwrap();
    let changed_file = PredictionsFile::of(&cp).unwrap();
    assert_eq!(changed_file.bytes, tail_file.bytes);
    assert_ne!(changed_file.fingerprint, tail_file.fingerprint);
    list.insert(2, ("changed.2.sum".into(), shard(&ev, &cp, 2, 3).0));
    let e = Partial::merge_all(&list, false).unwrap_err().to_string();
    let tail_lacks =
        format!("shard 2 of 3 of {tail_file} is missing (given: tail.1.sum, tail.3.sum)");
    let changed_lacks =
        format!("shards 1, 3 of 3 of {changed_file} are missing (given: changed.2.sum)");
    // In the order of the files' fingerprints.
    let (first, second) = if tail_file.fingerprint < changed_file.fingerprint {
        (tail_lacks, changed_lacks)
    } else {
        (changed_lacks, tail_lacks)
    };
    assert_eq!(
        e,
        format!(
            "{first}; {second}; the shards given are of 2 different predictions files (a file \
             that changed between its shards' evaluations is another file): tail.1.sum is \
             shard 1/3 of {tail_file}, changed.2.sum is shard 2/3 of {changed_file}"
        )
    );
}

/// `bytes` with its checksum made right again.
fn resealed(mut bytes: Vec<u8>) -> Vec<u8> {
    let crc = crc32fast::hash(&bytes[24..]);
    bytes[20..24].copy_from_slice(&crc.to_le_bytes());
    bytes
}

#[test]
fn crafted_shard_records_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = generated(dir.path());
    let ev = evaluator(&q, MissingMode::Zero);
    let (p, _) = shard(&ev, &r, 2, 4);
    let bytes = p.encode();
    // The record: name as bytes, file length, fingerprint, N, range count, (first, last).
    let mut needle = 7u64.to_le_bytes().to_vec();
    needle.extend_from_slice(b"gen.run");
    let at = (bytes.windows(needle.len()))
        .position(|w| w == needle)
        .expect("the shard record")
        + needle.len();
    let field = |k: usize| at + 8 * k;
    let u64_at =
        |b: &[u8], k: usize| u64::from_le_bytes(b[field(k)..field(k) + 8].try_into().unwrap());
    assert_eq!(
        (
            u64_at(&bytes, 2),
            u64_at(&bytes, 3),
            u64_at(&bytes, 4),
            u64_at(&bytes, 5)
        ),
        (4, 1, 2, 2)
    );
    let with = |changes: &[(usize, u64)]| {
        let mut b = bytes.clone();
        for &(k, v) in changes {
            b[field(k)..field(k) + 8].copy_from_slice(&v.to_le_bytes());
        }
        Partial::decode(&resealed(b)).unwrap_err().to_string()
    };
    assert_eq!(
        with(&[(4, 0), (5, 0)]),
        "corrupt: shard 0 of 4 of gen.run: expected 1 <= I <= N"
    );
    assert_eq!(
        with(&[(4, 5), (5, 5)]),
        "corrupt: shard 5 of 4 of gen.run: expected 1 <= I <= N"
    );
    assert_eq!(
        with(&[(2, 0)]),
        "corrupt: shard 2 of 0 of gen.run: expected 1 <= I <= N"
    );
    assert_eq!(
        with(&[(4, 3), (5, 2)]),
        "corrupt: shards 3-2 of 4 of gen.run: expected 1 <= I <= N"
    );
    // The largest N, and the last shard of it: no count wraps around.
    let mut b = bytes.clone();
    for (k, v) in [(2, u64::MAX), (4, u64::MAX), (5, u64::MAX)] {
        b[field(k)..field(k) + 8].copy_from_slice(&v.to_le_bytes());
    }
    let last = Partial::decode(&resealed(b)).unwrap();
    let lacking = last.lacking_shards();
    assert_eq!(lacking[0].missing, [(1, u64::MAX - 1)]);
    assert_eq!(lacking[0].missing_count(), u64::MAX - 1);
    assert_eq!(
        with(&[(2, 1), (4, 1), (5, 1)]),
        "corrupt: every shard of gen.run recorded (a complete set is recorded as none)"
    );
    // A range count beyond the bytes left, or none.
    assert_eq!(
        with(&[(3, u64::MAX)]),
        "corrupt: the shards held of gen.run"
    );
    assert_eq!(with(&[(3, 0)]), "corrupt: the shards held of gen.run");
    // Version 1 (no shard records) is refused by name.
    let mut v1 = bytes.clone();
    v1[8] = 1;
    assert_eq!(
        Partial::decode(&v1).unwrap_err().to_string(),
        "summary format version 1, expected 4: a version 1 summary does not record which \
         shards of which predictions file it holds; write it again with `eval --summary-out`"
    );
    // Untouched, it decodes.
    assert_eq!(Partial::decode(&resealed(bytes.clone())).unwrap(), p);
}

#[test]
fn fingerprints_are_of_the_contents_not_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.run");
    let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&a, &data).unwrap();
    let fa = PredictionsFile::of(&a).unwrap();
    std::fs::create_dir(dir.path().join("elsewhere")).unwrap();
    let b = dir.path().join("elsewhere/b.run");
    std::fs::write(&b, &data).unwrap();
    let fb = PredictionsFile::of(&b).unwrap();
    assert_eq!((fa.bytes, fa.fingerprint), (fb.bytes, fb.fingerprint));
    assert_eq!((fa.name.as_str(), fb.name.as_str()), ("a.run", "b.run"));
    let fp = |d: &[u8]| {
        std::fs::write(&b, d).unwrap();
        PredictionsFile::of(&b).unwrap().fingerprint
    };
    // A byte changed in the first or the last 64 KiB, or the length, changes it; a byte in the
    // middle of a file over 128 KiB does not (it is not read).
    for (at, differs) in [
        (0, true),
        (65_535, true),
        (65_536, false),
        (234_463, false),
        (234_464, true),
        (299_999, true),
    ] {
        let mut d = data.clone();
        d[at] ^= 1;
        assert_eq!(fp(&d) != fa.fingerprint, differs, "byte {at}");
    }
    assert_ne!(fp(&data[..299_999]), fa.fingerprint);
    // Small files are read whole, each byte once.
    assert_ne!(fp(b"g Q0 a 1 1 t\n"), fp(b"g Q0 a 1 2 t\n"));
    assert_ne!(fp(b""), fp(b"\0"));
}
