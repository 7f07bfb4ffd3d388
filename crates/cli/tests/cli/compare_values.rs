//! `eval --values-out` and `compare` on values files: the layout docs/FORMAT.md describes, read
//! back by hand; the same output, byte for byte, as from the runs themselves; values files of
//! other options or measures, and damaged ones, refused naming the file.

use std::path::{Path, PathBuf};

use crate::common;
use common::{fails, ok_err as ok};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Four goals, one relevant lemma each; run A ranks it at 2, 1, 3, 1 (RR 1/2, 1, 1/3, 1); run C
/// has no predictions for g4.
fn small(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let p = |n: &str| dir.join(n);
    std::fs::write(p("qrels"), "g1 0 a 1\ng2 0 b 1\ng3 0 c 1\ng4 0 d 1\n").unwrap();
    std::fs::write(
        p("a"),
        "g1 Q0 x 1 9 A\ng1 Q0 a 2 8 A\ng2 Q0 b 1 9 A\n\
         g3 Q0 x 1 9 A\ng3 Q0 y 2 8 A\ng3 Q0 c 3 7 A\ng4 Q0 d 1 9 A\n",
    )
    .unwrap();
    std::fs::write(p("c"), "g2 Q0 b 1 9 C\ng1 Q0 a 1 9 C\ng3 Q0 c 2 9 C\n").unwrap();
    (p("qrels"), p("a"), p("c"))
}

/// A little-endian reader of the documented layout.
struct Le<'a>(&'a [u8]);

impl Le<'_> {
    fn take(&mut self, n: usize) -> &[u8] {
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
    fn u8(&mut self) -> u8 {
        self.take(1)[0]
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().unwrap())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().unwrap())
    }
    fn bytes(&mut self) -> Vec<u8> {
        let n = self.u64() as usize;
        self.take(n).to_vec()
    }
}

#[test]
fn the_file_holds_what_the_format_says() {
    let dir = tempfile::tempdir().unwrap();
    let (qrels, a, _) = small(dir.path());
    let v = dir.path().join("a.values");
    ok(&[
        "eval",
        s(&qrels),
        s(&a),
        "-m",
        "RR",
        "-m",
        "P@1",
        "--relevance-level",
        "1",
        "--values-out",
        s(&v),
        "-o",
        s(&dir.path().join("table")),
        "--quiet",
    ]);
    let bytes = std::fs::read(&v).unwrap();
    let mut r = Le(&bytes);
    assert_eq!(r.take(8), b"LEMVALUE");
    assert_eq!(r.u32(), 2);
    assert_eq!(r.u64() as usize, bytes.len() - 24);
    let _crc = r.u32();
    assert_eq!(r.u32(), 2);
    assert_eq!(r.bytes(), b"RR");
    assert_eq!(r.bytes(), b"P@1");
    assert_eq!(r.u32(), 1, "relevance level");
    let codes: Vec<u8> = (0..4).map(|_| r.u8()).collect();
    assert_eq!(
        codes,
        [0, 0, 0, 0],
        "interpolation, order, ties, duplicates"
    );
    assert_eq!(r.u64(), u64::MAX, "no depth");
    let codes: Vec<u8> = (0..3).map(|_| r.u8()).collect();
    assert_eq!(codes, [0, 0, 0], "missing, zero-relevant, f32");
    assert_eq!(r.u64(), u64::MAX, "no universe");
    assert_eq!(r.u8(), 0, "no corpus");
    let counts: Vec<u64> = (0..5).map(|_| r.u64()).collect();
    assert_eq!(counts, [4, 0, 0, 0, 0]);
    assert_eq!(r.u32(), 0, "no warnings");
    assert_eq!(r.u64(), 4);
    let goals: Vec<Vec<u8>> = (0..4).map(|_| r.bytes()).collect();
    assert_eq!(goals, [b"g1", b"g2", b"g3", b"g4"]);
    let col = |r: &mut Le| -> Vec<f64> { (0..4).map(|_| f64::from_bits(r.u64())).collect() };
    assert_eq!(col(&mut r), [0.5, 1.0, 1.0 / 3.0, 1.0], "RR");
    assert_eq!(col(&mut r), [0.0, 1.0, 0.0, 1.0], "P@1");
    assert!(r.0.is_empty());
}

#[test]
fn values_files_give_the_runs_output_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let q = p("qrels.txt");
    let mut runs = Vec::new();
    for (name, share) in [("base", "0.1"), ("mid", "0.15"), ("worse", "0.3")] {
        let run = p(&format!("{name}.txt"));
        ok(&[
            "gen",
            "--goals",
            "200",
            "--universe",
            "3000",
            "--seed",
            "4",
            "--unretrieved-share",
            share,
            "--qrels",
            s(&q),
            "--run",
            s(&run),
        ]);
        runs.push(run);
    }
    // Written on one thread and on three: the goals' order is the evaluation's either way.
    let mut values = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let v = p(&format!("{i}.values"));
        let threads = if i == 1 { "1" } else { "3" };
        ok(&[
            "eval",
            s(&q),
            s(run),
            "--values-out",
            s(&v),
            "-o",
            s(&p("table")),
            "--threads",
            threads,
            "--quiet",
        ]);
        values.push(v);
    }
    for format in ["table", "tsv", "json", "markdown"] {
        let go = |inputs: [&Path; 3]| {
            let mut args = vec!["compare", s(&q)];
            args.extend(inputs.iter().map(|p| s(p)));
            args.extend([
                "--all-pairs",
                "--seed",
                "7",
                "--permutations",
                "2000",
                "--labels",
                "A,B,C",
                "--format",
                format,
            ]);
            ok(&args)
        };
        let want = go([&runs[0], &runs[1], &runs[2]]);
        assert!(want.0.len() > 200, "{}", want.0);
        assert_eq!(go([&values[0], &values[1], &values[2]]), want, "{format}");
        assert_eq!(go([&runs[0], &values[1], &runs[2]]), want, "{format}");
    }
}

#[test]
fn missing_goals_and_warnings_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (qrels, a, c) = small(dir.path());
    for missing in ["zero", "skip"] {
        let v = dir.path().join(format!("c.{missing}"));
        ok(&[
            "eval",
            s(&qrels),
            s(&c),
            "--missing",
            missing,
            "--values-out",
            s(&v),
            "-o",
            s(&dir.path().join("table")),
            "--quiet",
        ]);
        let args = |c: &Path| {
            let c = s(c).to_string();
            let q = s(&qrels).to_string();
            let a = s(&a).to_string();
            let v = [&q, &a, &c, "--missing", missing, "--format", "tsv"];
            let mut args = vec!["compare".to_string()];
            args.extend(v.iter().map(|x| x.to_string()));
            args.extend(["--labels".to_string(), "A,C".to_string()]);
            args
        };
        let go = |c: &Path| {
            let a = args(c);
            ok(&a.iter().map(|x| x.as_str()).collect::<Vec<_>>())
        };
        let (want, want_err) = go(&c);
        // Both runs' warnings: C lacks g4 (evaluated as empty, or left out).
        assert!(want_err.contains("C: "), "{want_err}");
        assert_eq!(go(&v), (want, want_err), "--missing {missing}");
    }
}

#[test]
fn other_options_measures_and_damage_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (qrels, a, c) = small(dir.path());
    let p = |n: &str| dir.path().join(n);
    let va = p("a.values");
    ok(&[
        "eval",
        s(&qrels),
        s(&a),
        "-m",
        "RR",
        "-m",
        "AP",
        "--values-out",
        s(&va),
        "-o",
        s(&p("table")),
        "--quiet",
    ]);
    let out = p("out");
    let compare = |extra: &[&str], first: &Path| {
        let mut args = vec!["compare", s(&qrels), s(first), s(&c), "-o", s(&out)];
        args.extend(extra);
        let err = fails(&args);
        assert!(!out.exists(), "nothing left behind");
        err
    };
    let err = compare(&["-m", "RR", "--relevance-level", "2"], &va);
    assert!(
        err.contains("a.values: evaluated with other options"),
        "{err}"
    );
    assert!(err.contains("relevance level: 1 vs 2"), "{err}");
    let err = compare(&["-m", "RR", "--ties", "group"], &va);
    assert!(err.contains("ties: trec vs group"), "{err}");
    let err = compare(&["-m", "RR", "-m", "P@5"], &va);
    assert!(err.contains("a.values: holds no values of P@5"), "{err}");
    assert!(err.contains("its measures: RR AP"), "{err}");
    // A measure it holds, another option: fine.
    ok(&["compare", s(&qrels), s(&va), s(&c), "-m", "AP"]);

    let bytes = std::fs::read(&va).unwrap();
    let damaged = p("damaged.values");
    let mut flipped = bytes.clone();
    let at = bytes.len() - 3;
    flipped[at] ^= 0x40;
    std::fs::write(&damaged, &flipped).unwrap();
    let err = compare(&["-m", "RR"], &damaged);
    assert!(
        err.contains("damaged.values: corrupt: the checksum does not match"),
        "{err}"
    );
    std::fs::write(&damaged, &bytes[..bytes.len() - 8]).unwrap();
    let err = compare(&["-m", "RR"], &damaged);
    assert!(err.contains("damaged.values: truncated"), "{err}");
    let mut other = bytes.clone();
    other[8] = 9;
    std::fs::write(&damaged, &other).unwrap();
    let err = compare(&["-m", "RR"], &damaged);
    assert!(
        err.contains("damaged.values: values format version 9, expected 2"),
        "{err}"
    );

    let err = fails(&["eval", s(&qrels), s(&a), "--values-out", "-"]);
    assert!(err.contains("--values-out -"), "{err}");
    // An evaluation that fails writes neither output.
    let bad = p("bad");
    std::fs::write(&bad, "g1 Q0 a 1 9 A\ng2 Q0 b 1\n").unwrap();
    let (vo, to) = (p("bad.values"), p("bad.table"));
    let err = fails(&[
        "eval",
        s(&qrels),
        s(&bad),
        "--values-out",
        s(&vo),
        "-o",
        s(&to),
    ]);
    assert!(err.contains("bad:2"), "{err}");
    assert!(!vo.exists() && !to.exists());
}

#[test]
fn per_goal_output_is_unchanged_by_values_out() {
    let dir = tempfile::tempdir().unwrap();
    let (qrels, a, _) = small(dir.path());
    let v = dir.path().join("v");
    let plain = ok(&["eval", s(&qrels), s(&a), "--per-goal", "--quiet"]);
    let with = ok(&[
        "eval",
        s(&qrels),
        s(&a),
        "--per-goal",
        "--quiet",
        "--values-out",
        s(&v),
    ]);
    assert_eq!(plain, with);
    assert!(v.exists());
}
