//! `eval --summary-out` and `merge`: shards of the fixtures merged print what one `eval` prints,
//! byte for byte; mismatched plans, shared goals and damaged files are errors naming the files.

use std::path::{Path, PathBuf};

use crate::common;
use common::{downgraded, fails, fixture, ok, run};

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

/// `eval --shard I/N --summary-out` of the generated run for each `(I, N)`: the files' paths.
fn shard_sums(q: &str, r: &str, dir: &Path, tag: &str, shards: &[(u64, u64)]) -> Vec<String> {
    (shards.iter())
        .map(|&(i, n)| {
            let s = dir.join(format!("{tag}.{i}of{n}.sum"));
            let s = s.to_str().unwrap().to_string();
            let shard = format!("{i}/{n}");
            ok(&[
                "eval",
                q,
                r,
                "--shard",
                &shard,
                "--quiet",
                "--summary-out",
                &s,
                "-o",
                "/dev/null",
                "-m",
                "AP",
                "-m",
                "P@5",
                "-m",
                "Depth(recall=1.0)",
            ]);
            s
        })
        .collect()
}

/// `run` as `eval` and the errors name it: `gen.run (B bytes, fingerprint F)`.
fn predictions(run: &Path) -> lemma_eval::PredictionsFile {
    lemma_eval::PredictionsFile::of(run).unwrap()
}

#[test]
fn incomplete_repeated_and_mismatched_shard_sets_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (qrels, run) = generated(dir.path());
    let (q, r) = (qrels.to_str().unwrap(), run.to_str().unwrap());
    let file = predictions(&run);
    let s = shard_sums(
        q,
        r,
        dir.path(),
        "p",
        &[(1, 4), (2, 4), (3, 4), (4, 4), (2, 3)],
    );
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    // Two of four: the number of all goals, most of them without predictions, before.
    assert_eq!(
        fails(&["merge", &s[0], &s[1], "-o", o]),
        format!(
            "lemma-eval: error: shards 3-4 of 4 of {file} are missing (given: {}, {}); \
             --partial merges the shards given\n",
            s[0], s[1]
        )
    );
    assert!(!out.exists());
    assert_eq!(
        fails(&["merge", &s[3], &s[0], &s[2]]),
        format!(
            "lemma-eval: error: shard 2 of 4 of {file} is missing (given: {}, {}, {}); \
             --partial merges the shards given\n",
            s[0], s[2], s[3]
        )
    );
    // A shard twice (a copy of its file): named by both files, before the goals they share.
    let copy = dir.path().join("copy.sum");
    std::fs::copy(&s[1], &copy).unwrap();
    let c = copy.to_str().unwrap();
    assert_eq!(
        fails(&["merge", &s[0], &s[1], &s[2], &s[3], c, "--partial"]),
        format!(
            "lemma-eval: error: shard 2/4 of {file} is given twice: {} and {c}\n",
            s[1]
        )
    );
    // Shards of one file cut into another N.
    assert_eq!(
        fails(&["merge", &s[0], &s[4], "--partial"]),
        format!(
            "lemma-eval: error: {} is shard 1/4 of {file}, {} is shard 2/3 of it: shards of one \
             file merge only with shards cut into as many\n",
            s[0], s[4]
        )
    );
    // Another file of the same name (its last bytes changed): both sets lack a shard.
    let mut changed = std::fs::read(&run).unwrap();
    let at = changed.len() - 2;
    changed[at] = if changed[at] == b'x' { b'y' } else { b'x' };
    std::fs::create_dir(dir.path().join("b")).unwrap();
    let run2 = dir.path().join("b/gen.run");
    std::fs::write(&run2, changed).unwrap();
    let file2 = predictions(&run2);
    let t = shard_sums(q, run2.to_str().unwrap(), dir.path(), "t", &[(2, 2)]);
    let u = shard_sums(q, r, dir.path(), "u", &[(1, 2)]);
    let e = fails(&["merge", &u[0], &t[0]]);
    assert!(
        e.ends_with(&format!(
            "; the shards given are of 2 different predictions files (a file that changed \
             between its shards' evaluations is another file): {} is shard 1/2 of {file}, {} is \
             shard 2/2 of {file2}; --partial merges the shards given\n",
            u[0], t[0]
        )),
        "{e}"
    );
    assert!(
        e.contains(&format!(
            "shard 2 of 2 of {file} is missing (given: {})",
            u[0]
        )) && e.contains(&format!(
            "shard 1 of 2 of {file2} is missing (given: {})",
            t[0]
        )),
        "{e}"
    );
}

#[test]
fn partial_merges_name_the_lacking_shards_and_complete_ones_print_one_eval() {
    let dir = tempfile::tempdir().unwrap();
    let (qrels, runf) = generated(dir.path());
    let (q, r) = (qrels.to_str().unwrap(), runf.to_str().unwrap());
    let file = predictions(&runf);
    let shards: Vec<(u64, u64)> = (1..=4).map(|i| (i, 4)).collect();
    let s = shard_sums(q, r, dir.path(), "p", &shards);
    let ms = ["-m", "AP", "-m", "P@5", "-m", "Depth(recall=1.0)"];
    // Complete, in any order, with or without --partial: what one eval prints.
    for format in ["table", "tsv", "json", "trec"] {
        let mut one = vec!["eval", q, r, "--quiet", "--format", format];
        one.extend(ms);
        let want = ok(&one);
        for order in [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1]] {
            let mut args = vec!["merge", "--quiet", "--partial", "--format", format];
            args.extend(order.iter().map(|&k| s[k].as_str()));
            assert_eq!(ok(&args), want, "{format} {order:?}");
            args.remove(2);
            assert_eq!(ok(&args), want, "{format} {order:?}");
        }
    }
    // Shards 1 and 3 of 4: the summary is of the goals they ranked, as `eval --missing skip`
    // of their lines alone gives it, and the output names shards 2 and 4.
    let goals = |i: usize| -> Vec<String> {
        let shard = format!("{}/4", i);
        let mut args = vec![
            "eval",
            q,
            r,
            "--shard",
            &shard,
            "--quiet",
            "--per-goal",
            "--format",
            "json",
        ];
        args.extend(ms);
        let v: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
        // The goals the shard ranked, not those of the actual sets evaluated as empty.
        (v["per_goal"].as_array().unwrap().iter())
            .filter(|row| row["empty"] == false)
            .map(|row| row["goal"].as_str().unwrap().to_string())
            .collect()
    };
    let mut given: Vec<String> = goals(1);
    given.extend(goals(3));
    let text = std::fs::read_to_string(&runf).unwrap();
    let lines: String = (text.lines())
        .filter(|l| given.iter().any(|g| l.split_whitespace().next() == Some(g)))
        .map(|l| format!("{l}\n"))
        .collect();
    let given_run = dir.path().join("given.run");
    std::fs::write(&given_run, lines).unwrap();
    let g = given_run.to_str().unwrap();
    let merge = |format: &str| {
        ok(&[
            "merge",
            &s[2],
            &s[0],
            "--partial",
            "--quiet",
            "--format",
            format,
        ])
    };
    let skip = |format: &str| {
        let mut args = vec![
            "eval",
            q,
            g,
            "--quiet",
            "--missing",
            "skip",
            "--format",
            format,
        ];
        args.extend(ms);
        ok(&args)
    };
    let fp = format!("{:016x}", file.fingerprint);
    let name = format!("lacking_shards(predictions={fp},of=4,shards=2,4)");
    assert_eq!(merge("tsv"), skip("tsv") + &format!("all\t{name}\t2\n"));
    assert_eq!(merge("trec"), skip("trec") + &format!("{name}\tall\t2\n"));
    assert_eq!(
        merge("table"),
        skip("table") + &format!("lacking shards 2, 4 of 4 of {file}\n")
    );
    let got: serde_json::Value = serde_json::from_str(&merge("json")).unwrap();
    let want: serde_json::Value = serde_json::from_str(&skip("json")).unwrap();
    assert_eq!(got["summary"], want["summary"]);
    assert_eq!(got["goals"]["evaluated"], want["goals"]["evaluated"]);
    assert_eq!(
        got["lacking_shards"],
        serde_json::json!([{
            "predictions": "gen.run",
            "bytes": file.bytes,
            "fingerprint": fp,
            "of": 4,
            "shards": [[2, 2], [4, 4]],
            "missing": 2,
        }])
    );
    // And on stderr.
    let o = run(&["merge", &s[0], &s[2], "--partial"]);
    assert!(o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).ends_with(&format!(
            "lemma-eval: lacking shards 2, 4 of 4 of {file}: the summary is of the goals the \
             shards given ranked\n"
        )),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// CRC-32 (IEEE), as the summary's header holds it.
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

#[test]
fn crafted_shard_numbers_are_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (qrels, run) = generated(dir.path());
    let (q, r) = (qrels.to_str().unwrap(), run.to_str().unwrap());
    let s = shard_sums(q, r, dir.path(), "p", &[(2, 4)]);
    let bytes = std::fs::read(&s[0]).unwrap();
    assert_eq!(crc32(&bytes[24..]).to_le_bytes(), bytes[20..24]);
    // After the name: file length, fingerprint, N, range count, first, last.
    let mut needle = 7u64.to_le_bytes().to_vec();
    needle.extend_from_slice(b"gen.run");
    let at = (bytes.windows(needle.len()))
        .position(|w| w == needle)
        .expect("the shard record")
        + needle.len();
    let crafted = dir.path().join("crafted.sum");
    let c = crafted.to_str().unwrap();
    for (n, first, last, what) in [
        (4, 0, 0, "shard 0 of 4"),
        (4, 5, 5, "shard 5 of 4"),
        (0, 2, 2, "shard 2 of 0"),
        (4, 3, 1, "shards 3-1 of 4"),
    ] {
        let mut b = bytes.clone();
        for (k, v) in [(2, n), (4, first), (5, last)] {
            b[at + 8 * k..at + 8 * k + 8].copy_from_slice(&(v as u64).to_le_bytes());
        }
        let crc = crc32(&b[24..]);
        b[20..24].copy_from_slice(&crc.to_le_bytes());
        std::fs::write(&crafted, &b).unwrap();
        assert_eq!(
            fails(&["merge", c]),
            format!("lemma-eval: error: {c}: corrupt: {what} of gen.run: expected 1 <= I <= N\n")
        );
    }
    // A summary of format version 1 (which holds no shard numbers).
    let mut v1 = bytes.clone();
    v1[8] = 1;
    std::fs::write(&crafted, &v1).unwrap();
    assert_eq!(
        fails(&["merge", &s[0], c]),
        format!(
            "lemma-eval: error: {c}: summary format version 1, expected 4: a version 1 summary \
             does not record which shards of which predictions file it holds; write it again \
             with `eval --summary-out`\n"
        )
    );
}

/// The same judgments in another order of goals (and of lines within a goal): shards evaluated
/// against either merge, and print what one `eval` prints; a goal in shards of both orders is
/// found shared; another grade is still other actual sets.
#[test]
fn shards_judged_by_the_same_qrels_in_another_goal_order_merge() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    let (qrels, run) = generated(dir.path());
    let q = qrels.to_str().unwrap();
    // The goals' blocks in reverse order, each block's lines reversed too.
    let text = std::fs::read_to_string(&qrels).unwrap();
    let mut blocks: Vec<Vec<&str>> = Vec::new();
    for line in text.lines() {
        let g = line.split_whitespace().next().unwrap();
        match blocks.last_mut() {
            Some(b) if b[0].split_whitespace().next() == Some(g) => b.push(line),
            _ => blocks.push(vec![line]),
        }
    }
    assert!(blocks.len() > 40, "{} goals", blocks.len());
    let reversed: String = (blocks.iter().rev())
        .flat_map(|b| b.iter().rev().map(|l| format!("{l}\n")))
        .collect();
    assert_ne!(reversed, text);
    let rq = d("reversed.qrels");
    std::fs::write(&rq, &reversed).unwrap();
    let ms = [
        "-m",
        "AP",
        "-m",
        "P@5",
        "-m",
        "nDCG",
        "-m",
        "Depth(recall=1.0)",
    ];
    let runs = split(&run, dir.path(), 3, 2);
    let all: String = runs
        .iter()
        .map(|r| std::fs::read_to_string(r).unwrap())
        .collect();
    let all_run = d("all");
    std::fs::write(&all_run, all).unwrap();
    let sum = |qrels: &str, run: &str, name: &str| {
        let s = d(name);
        let mut args = vec![
            "eval",
            qrels,
            run,
            "--quiet",
            "--summary-out",
            &s,
            "-o",
            "/dev/null",
        ];
        args.extend(ms);
        ok(&args);
        s
    };
    let sums = [
        sum(q, &runs[0], "0.sum"),
        sum(&rq, &runs[1], "1.sum"),
        sum(q, &runs[2], "2.sum"),
    ];
    let mut one = vec!["eval", q, &all_run, "--quiet", "--format", "tsv"];
    one.extend(ms);
    let want = ok(&one);
    assert!(want.starts_with("all\tAP\t"), "{want}");
    let mut one_reversed = vec!["eval", &rq, &all_run, "--quiet", "--format", "tsv"];
    one_reversed.extend(ms);
    assert_eq!(ok(&one_reversed), want);
    let merged = ok(&[
        "merge", "--quiet", "--format", "tsv", &sums[0], &sums[1], &sums[2],
    ]);
    assert_eq!(merged, want);
    // Shard 0 judged by both orders: its goals are found in both.
    let again = sum(&rq, &runs[0], "0r.sum");
    let e = fails(&["merge", &sums[0], &sums[1], &again]);
    assert!(
        e.starts_with(&format!(
            "lemma-eval: error: cannot merge {} with {again}: both hold predictions for ",
            sums[0]
        )) && e.contains("in byte order of goal names"),
        "{e}"
    );
    // One grade changed: other actual sets.
    let (first, rest) = reversed.split_once('\n').unwrap();
    let mut f: Vec<&str> = first.split_whitespace().collect();
    let grade = if f[3] == "0" { "3" } else { "0" };
    f[3] = grade;
    let oq = d("other.qrels");
    std::fs::write(&oq, format!("{}\n{rest}\n", f.join(" "))).unwrap();
    let other = sum(&oq, &runs[1], "1o.sum");
    let e = fails(&["merge", &sums[0], &other]);
    assert!(
        e.contains("different actual sets") && e.contains("with other goals, lemmas or grades"),
        "{e}"
    );
    // Versions 2 and 3 (the plan without the premise protocol's byte): read; version 3 merges
    // with version 4 (read as evaluated without a corpus), version 2 with version 2 alone.
    let older = |v: u8| -> Vec<String> {
        (sums.iter().enumerate())
            .map(|(k, s)| {
                let b = downgraded(&std::fs::read(s).unwrap(), v);
                let p = d(&format!("{k}.v{v}.sum"));
                std::fs::write(&p, b).unwrap();
                p
            })
            .collect()
    };
    let (v2, v3) = (older(2), older(3));
    let merged_v2 = ok(&[
        "merge", "--quiet", "--format", "tsv", &v2[0], &v2[1], &v2[2],
    ]);
    assert_eq!(merged_v2, want);
    let merged_v3 = ok(&[
        "merge", "--quiet", "--format", "tsv", &v3[0], &sums[1], &v3[2],
    ]);
    assert_eq!(merged_v3, want);
    assert_eq!(
        fails(&["merge", &v2[0], &sums[1]]),
        format!(
            "lemma-eval: error: cannot merge {} with {}: summary format versions 2 and 4: a \
             version 2 summary numbers goals in its actual sets' file order and merges only with \
             version 2 summaries; write it again with `eval --summary-out`\n",
            v2[0], sums[1]
        )
    );
}
