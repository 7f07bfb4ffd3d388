//! `eval --summary-out` and `merge`: shards of the fixtures merged print what one `eval` prints,
//! byte for byte; mismatched plans, shared goals and damaged files are errors naming the files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_lemma-eval");

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(p)
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("binary runs")
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn fails(args: &[&str]) -> String {
    let o = run(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}");
    assert!(o.stdout.is_empty());
    String::from_utf8(o.stderr).unwrap()
}

/// Splits a run into `n` files, goal `i` (in file order) into file `i mod n`, leaving out goal
/// `skip` (a qrels goal in no shard).
fn split(run: &Path, dir: &Path, n: usize, skip: usize) -> Vec<String> {
    let text = std::fs::read_to_string(run).unwrap();
    let mut out = vec![String::new(); n];
    let (mut last, mut i) = (String::new(), 0usize);
    for line in text.lines() {
        let g = line.split_whitespace().next().unwrap_or("").to_string();
        if g != last {
            i += 1;
            last = g;
        }
        if i != skip {
            out[i % n] += &format!("{line}\n");
        }
    }
    out.into_iter()
        .enumerate()
        .map(|(k, t)| {
            let p = dir.join(format!("run{k}"));
            std::fs::write(&p, t).unwrap();
            p.to_string_lossy().into_owned()
        })
        .collect()
}

/// A generated workload in `dir` (graded, ties, goals without actual sets): (qrels, run).
fn generated(dir: &Path) -> (PathBuf, PathBuf) {
    let (q, r) = (dir.join("gen.qrels"), dir.join("gen.run"));
    ok(&[
        "gen",
        "--goals",
        "60",
        "--depth",
        "30",
        "--universe",
        "400",
        "--graded",
        "--ties",
        "0.3",
        "--empty-share",
        "0.1",
        "--seed",
        "5",
        "--qrels",
        q.to_str().unwrap(),
        "--run",
        r.to_str().unwrap(),
    ]);
    (q, r)
}

#[test]
fn merged_shards_print_what_one_eval_prints() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    let (gq, gr) = generated(dir.path());
    let cases = [
        // m2 is in no shard.
        (
            fixture("missing/qrels.txt"),
            fixture("missing/run.txt"),
            2,
            0,
        ),
        (gq, gr, 7, 2),
    ];
    for (qrels, run, n, skip) in cases {
        let q = qrels.to_str().unwrap();
        let fixture_dir = q.to_string();
        let runs = split(&run, dir.path(), n, skip);
        // The shards' lines together: what one eval reads.
        let all: String = runs
            .iter()
            .map(|r| std::fs::read_to_string(r).unwrap())
            .collect();
        let all_run = d("all");
        std::fs::write(&all_run, all).unwrap();
        let base = [
            "-m",
            "AP",
            "-m",
            "P@2",
            "-m",
            "RR",
            "-m",
            "nDCG",
            "-m",
            "Depth(recall=1.0)",
            "-m",
            "NumRel",
            "-m",
            "GM_AP",
        ];
        // Without and with --threshold (its pooled: lines printed by merge too).
        for threshold in [&[][..], &["--threshold", "999.95"][..]] {
            let ms: Vec<&str> = base.iter().chain(threshold).copied().collect();
            let mut sums = Vec::new();
            for (k, r) in runs.iter().enumerate() {
                let s = d(&format!("{k}.sum"));
                let mut args = vec!["eval", q, r, "--quiet", "--summary-out", &s];
                args.extend(&ms);
                // The usual output is still printed.
                assert!(ok(&args).starts_with("measure"));
                sums.push(s);
            }
            for format in ["tsv", "table", "json", "trec"] {
                let mut one = vec!["eval", q, &all_run, "--quiet", "--format", format];
                one.extend(&ms);
                let mut merge = vec!["merge", "--quiet", "--format", format];
                merge.extend(sums.iter().map(|s| s.as_str()));
                let want = ok(&one);
                assert_eq!(
                    want.contains("pooled:SetP(threshold=999.95)"),
                    !threshold.is_empty() && format != "trec",
                    "{fixture_dir} {format}: {want}"
                );
                assert_eq!(ok(&merge), want, "{fixture_dir} {format}");
            }
        }
    }
}

#[test]
fn mismatches_and_damaged_files_are_errors_naming_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    let (qrels, run) = generated(dir.path());
    let q = qrels.to_str().unwrap();
    let runs = split(&run, dir.path(), 2, 0);
    let summary = |run: &str, name: &str, extra: &[&str]| {
        let mut args = vec!["eval", q, run, "--quiet", "--summary-out", name, "-m", "AP"];
        args.extend(extra);
        ok(&args);
    };
    summary(&runs[0], &d("a.sum"), &[]);
    summary(&runs[1], &d("b.sum"), &["--relevance-level", "2"]);
    summary(&runs[1], &d("c.sum"), &[]);
    summary(&runs[1], &d("d.sum"), &["--depth", "5"]);
    // Each value beside its file: the earlier file first.
    let e = fails(&["merge", &d("a.sum"), &d("b.sum")]);
    assert_eq!(
        e,
        format!(
            "lemma-eval: error: cannot merge {} with {}: different options: relevance level: 1 vs 2\n",
            d("a.sum"),
            d("b.sum")
        )
    );
    let e = fails(&["merge", &d("a.sum"), &d("d.sum")]);
    assert_eq!(
        e,
        format!(
            "lemma-eval: error: cannot merge {} with {}: different options: depth: none vs 5\n",
            d("a.sum"),
            d("d.sum")
        )
    );
    // The same shard twice: its goals are in both.
    let e = fails(&["merge", &d("a.sum"), &d("c.sum"), &d("a.sum")]);
    assert!(
        e.starts_with(&format!(
            "lemma-eval: error: cannot merge {} with {}: both hold predictions for ",
            d("a.sum"),
            d("a.sum")
        )),
        "{e}"
    );
    // Damaged and foreign files.
    let bytes = std::fs::read(d("a.sum")).unwrap();
    std::fs::write(d("cut.sum"), &bytes[..bytes.len() - 3]).unwrap();
    let e = fails(&["merge", &d("cut.sum")]);
    assert!(
        e.starts_with(&format!("lemma-eval: error: {}: truncated: ", d("cut.sum"))),
        "{e}"
    );
    let mut flipped = bytes.clone();
    flipped[40] ^= 1;
    std::fs::write(d("flip.sum"), flipped).unwrap();
    assert_eq!(
        fails(&["merge", &d("c.sum"), &d("flip.sum")]),
        format!(
            "lemma-eval: error: {}: corrupt: the checksum does not match the contents\n",
            d("flip.sum")
        )
    );
    assert_eq!(
        fails(&["merge", q]),
        format!(
            "lemma-eval: error: {q}: not a lemma-eval summary file (expected it to begin with LEMSUMRY)\n"
        )
    );
    assert!(fails(&["merge", &d("nothing.sum")]).contains("cannot read"));
    // A merge that fails writes nothing to -o.
    let e = fails(&["merge", &d("a.sum"), &d("b.sum"), "-o", &d("out")]);
    assert!(e.contains("different options"));
    assert!(!dir.path().join("out").exists());
}

#[test]
fn byte_range_shards_merge_and_name_the_whole_files_lines() {
    let dir = tempfile::tempdir().unwrap();
    let (qrels, runf) = (fixture("ties/qrels.txt"), fixture("ties/run.txt"));
    let (q, r) = (qrels.to_str().unwrap(), runf.to_str().unwrap());
    let one = ok(&["eval", q, r, "--format", "tsv", "--quiet"]);
    for n in 1..=6u32 {
        let mut sums = Vec::new();
        for i in 1..=n {
            let s = dir.path().join(format!("{n}.{i}.sum"));
            let shard = format!("{i}/{n}");
            ok(&[
                "eval",
                q,
                r,
                "--shard",
                &shard,
                "--quiet",
                "--summary-out",
                s.to_str().unwrap(),
                "-o",
                "/dev/null",
            ]);
            sums.push(s.to_str().unwrap().to_string());
        }
        let mut args = vec!["merge", "--format", "tsv", "--quiet"];
        args.extend(sums.iter().map(String::as_str));
        assert_eq!(ok(&args), one, "{n} shards");
    }
    // A bad line in the second shard is named by its line in the whole file.
    let bad = dir.path().join("bad.run");
    let mut text = String::new();
    for g in 0..20 {
        text += &format!("g{g} Q0 a 1 1.0 t\ng{g} Q0 b 2 0.5 t\n");
    }
    text += "g20 Q0 a 1 high t\n";
    std::fs::write(&bad, &text).unwrap();
    let e = fails(&[
        "eval",
        q,
        bad.to_str().unwrap(),
        "--shard",
        "2/2",
        "--quiet",
    ]);
    assert!(e.contains("bad.run:41:"), "{e}");
    // Compressed files and bad shard numbers are refused.
    let gz = dir.path().join("run.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, text.as_bytes()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let e = fails(&["eval", q, gz.to_str().unwrap(), "--shard", "1/2", "--quiet"]);
    assert!(e.contains("cannot be sharded"), "{e}");
    for s in ["0/2", "3/2", "x", "1/0"] {
        let o = run(&["eval", q, r, "--shard", s]);
        assert_eq!(o.status.code(), Some(2), "{s}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("expected I/N"),
            "{s}"
        );
    }
}
