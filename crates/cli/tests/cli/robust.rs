//! Absurd numbers and crafted inputs: refused with a clear message and exit 2, never a panic, an
//! abort or a wrong number.

use std::path::Path;
use std::process::Command;

use crate::common;
use common::{fails, fixture, ok, run, BIN};

#[test]
fn absurd_thread_counts_are_refused_by_every_command() {
    let (q, r) = (fixture("seed/qrels.txt"), fixture("seed/run.txt"));
    let (q, r) = (q.to_str().unwrap(), r.to_str().unwrap());
    let commands: [&[&str]; 6] = [
        &["eval", q, r],
        &["curve", q, r],
        &["curve", q, r, "--pooled"],
        &["report", q, r, "-o", "/dev/null"],
        &["trec_eval", q, r],
        &["read-rate", r],
    ];
    for cmd in commands {
        for n in [
            "0",
            "-1",
            "1025",
            "20000",
            "100000",
            "4294967296",
            "1e3",
            "many",
        ] {
            let flag = format!("--threads={n}");
            let mut args = cmd.to_vec();
            args.push(&flag);
            let err = fails(&args);
            assert!(
                err.contains("expected 1 to 1024 worker threads")
                    || err.contains("expected a number of worker threads, 1 to 1024"),
                "{args:?}: {err}"
            );
            assert!(!err.contains("panicked"), "{args:?}: {err}");
        }
        // The bounds themselves are taken.
        for n in ["1", "1024"] {
            let mut args = cmd.to_vec();
            args.extend(["--threads", n]);
            ok(&args);
        }
    }
}

#[test]
fn auc_in_a_universe_near_2_to_the_64_is_about_1() {
    // The seed (x a y b c z, actual {a, b, c}): 5 of the 3·(U - 3) pairs out of order, so AUC is
    // 1 - 5/(3(U - 3)), 1 in f64. s·(U - R) overflowed u64: 0 or 0.333 were printed.
    let (q, r) = (fixture("seed/qrels.txt"), fixture("seed/run.txt"));
    let (q, r) = (q.to_str().unwrap(), r.to_str().unwrap());
    for u in [
        "6148914691236517210",
        "18446744073709551615",
        "9223372036854775808",
    ] {
        let out = ok(&[
            "eval",
            q,
            r,
            "-m",
            "AUC",
            "--universe",
            u,
            "--format",
            "tsv",
            "--quiet",
        ]);
        assert_eq!(out, "all\tAUC\t1\n", "--universe {u}");
    }
    // A small universe, by hand: U = 10, 7 non-relevant; a beats 6, b and c 5 each: 16/21.
    let out = ok(&[
        "eval",
        q,
        r,
        "-m",
        "AUC",
        "--universe",
        "10",
        "--format",
        "tsv",
        "--quiet",
    ]);
    assert_eq!(out, format!("all\tAUC\t{}\n", 16.0 / 21.0));
}

#[test]
fn a_universe_smaller_than_what_it_must_hold_is_refused() {
    let (q, r) = (fixture("seed/qrels.txt"), fixture("seed/run.txt"));
    let (q, r) = (q.to_str().unwrap(), r.to_str().unwrap());
    let err = fails(&["eval", q, r, "-m", "AUC", "--universe", "0"]);
    assert!(err.contains("--universe"), "{err}");
    // The seed's actual sets judge 3 distinct lemmas: a universe of 2 cannot hold them, with
    // or without AUC. Held whole, the actual sets are counted before anything is read; read
    // along the run (sorted qrels), the goal that does not fit is.
    for extra in [
        &["-m", "AUC"][..],
        &["-m", "AP"],
        &["-m", "AP", "--hold-actual"],
    ] {
        let mut args = vec!["eval", q, r, "--universe", "2"];
        args.extend(extra);
        let err = fails(&args);
        assert!(
            err.contains("--universe 2 is smaller than the 3 distinct lemmas of the actual sets")
                || err.contains("universe size 2 is smaller than the 6 lemmas ranked or judged"),
            "{args:?}: {err}"
        );
    }
    let err = fails(&["eval", q, r, "--universe", "2", "--hold-actual"]);
    assert!(
        err.contains("--universe 2 is smaller than the 3 distinct lemmas of the actual sets"),
        "{err}"
    );
    // The ranking holds 6 lemmas: a universe of 5 holds the judged ones but not what is ranked.
    let err = fails(&["eval", q, r, "-m", "AUC", "--universe", "5"]);
    assert!(
        err.contains("universe size 5 is smaller than the 6 lemmas"),
        "{err}"
    );
    // A store knows its universe: another one given is refused, its own taken.
    let dir = tempfile::tempdir().unwrap();
    let (sq, ss) = (dir.path().join("q"), dir.path().join("s"));
    let (sq, ss) = (sq.to_str().unwrap(), ss.to_str().unwrap());
    ok(&[
        "gen",
        "--goals",
        "4",
        "--universe",
        "30",
        "--depth",
        "5",
        "--format",
        "store",
        "--qrels",
        sq,
        "--run",
        ss,
    ]);
    let err = fails(&["eval", sq, ss, "-m", "AUC", "--universe", "31"]);
    assert!(err.contains("holds a universe of 30 lemmas"), "{err}");
    assert_eq!(
        ok(&[
            "eval",
            sq,
            ss,
            "-m",
            "AUC",
            "--universe",
            "30",
            "--format",
            "tsv",
            "--quiet"
        ]),
        ok(&["eval", sq, ss, "-m", "AUC", "--format", "tsv", "--quiet"])
    );
}

/// CRC-32 (IEEE), as a summary's header holds it.
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

/// Where a summary file's numbers are (docs/FORMAT.md, "Summary files"): for each of its three
/// summaries, the offset of its five goal counts and, per measure, of its `reached` count and
/// of its histogram's pairs.
struct Layout {
    counts: [usize; 3],
    /// (summary, measure) -> offset of `reached`, and the offsets of its (depth, goals) pairs.
    measures: Vec<(usize, usize, usize, Vec<usize>)>,
}

fn layout(b: &[u8]) -> Layout {
    let u32_at = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize;
    let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize;
    let mut at = 24;
    let m = u32_at(at);
    at += 4;
    for _ in 0..m {
        at += 8 + u64_at(at);
    }
    // Relevance level, four codes, depth, three codes, universe, the premise protocol (no
    // corpus: its code alone), the actual sets' three.
    assert_eq!(b[at + 4 + 4 + 8 + 3 + 8], 0, "evaluated without a corpus");
    at += 4 + 4 + 8 + 3 + 8 + 1 + 24;
    let k = u32_at(at);
    at += 4;
    for _ in 0..k {
        at += 8 + u64_at(at);
        at += 24;
        at += 8 + 16 * u64_at(at);
    }
    at += 8 + u64_at(at); // the goals seen
    let mut counts = [0; 3];
    let mut measures = Vec::new();
    for (s, c) in counts.iter_mut().enumerate() {
        *c = at;
        at += 40;
        for i in 0..m {
            let n = u32_at(at + 4);
            at += 8 + 8 * n;
            let reached = at;
            let pairs = u64_at(at + 8);
            at += 16;
            measures.push((s, i, reached, (0..pairs).map(|p| at + 16 * p).collect()));
            at += 16 * pairs;
        }
    }
    // The premise counts: none without a corpus.
    assert_eq!(b[at], 0);
    at += 1;
    assert_eq!(at, b.len(), "the layout reads the whole file");
    Layout { counts, measures }
}

/// `bytes` with the u64 at `at` replaced and the checksum made right again.
fn craft(bytes: &[u8], edits: &[(usize, u64)]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    for &(at, v) in edits {
        b[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
    let crc = crc32(&b[24..]);
    b[20..24].copy_from_slice(&crc.to_le_bytes());
    b
}

/// A generated workload in `dir`, split into two runs of disjoint goals: (qrels, run, halves).
fn two_shards(dir: &Path) -> (String, String, [String; 2]) {
    let (q, r) = (dir.join("q"), dir.join("r"));
    let (q, r) = (q.to_str().unwrap(), r.to_str().unwrap());
    ok(&[
        "gen",
        "--goals",
        "40",
        "--universe",
        "300",
        "--depth",
        "20",
        "--seed",
        "4",
        "--qrels",
        q,
        "--run",
        r,
    ]);
    let text = std::fs::read_to_string(r).unwrap();
    let mut halves = [String::new(), String::new()];
    for line in text.lines() {
        let g: u32 = line.split_whitespace().next().unwrap()[1..]
            .parse()
            .unwrap_or(0);
        halves[(g % 2) as usize] += &format!("{line}\n");
    }
    let names = [0, 1].map(|i| {
        let p = dir.join(format!("half{i}"));
        std::fs::write(&p, &halves[i]).unwrap();
        p.to_str().unwrap().to_string()
    });
    (q.to_string(), r.to_string(), names)
}

#[test]
fn crafted_summary_counts_are_refused_when_read() {
    let dir = tempfile::tempdir().unwrap();
    let (q, _, halves) = two_shards(dir.path());
    let sum = dir.path().join("a.sum");
    let s = sum.to_str().unwrap();
    ok(&[
        "eval",
        &q,
        &halves[0],
        "-m",
        "AP",
        "-m",
        "Depth(recall=1.0)",
        "--quiet",
        "-o",
        "/dev/null",
        "--summary-out",
        s,
    ]);
    let bytes = std::fs::read(s).unwrap();
    let l = layout(&bytes);
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    let crafted = dir.path().join("crafted.sum");
    let c = crafted.to_str().unwrap();
    let depth = l.measures.iter().find(|m| m.0 == 0 && m.1 == 1).unwrap();
    let evaluated = u64_at(l.counts[0]);
    assert!(evaluated > 0 && !depth.3.is_empty());
    for (edits, what) in [
        // 2^63 more goals evaluated than the summary's goals seen.
        (
            vec![(l.counts[0], evaluated + (1 << 63))],
            format!(
                "the summary of the predictions counts {} goals evaluated",
                evaluated + (1 << 63)
            ),
        ),
        // Every goal of the actual sets evaluated as empty, once more.
        (
            vec![
                (l.counts[1], u64_at(l.counts[1]) + 1),
                (l.counts[1] + 32, u64_at(l.counts[1] + 32) + 1),
            ],
            "the summary of every goal of the actual sets without predictions counts".to_string(),
        ),
        // A depth of 2^64 - 1, its goals counted as the sum does not.
        (
            vec![(*depth.3.last().unwrap(), u64::MAX)],
            "a summary's contents are inconsistent".to_string(),
        ),
        // A depth the sum does not hold (one more than the deepest).
        (
            vec![(
                *depth.3.last().unwrap(),
                u64_at(*depth.3.last().unwrap()) + 1,
            )],
            "a summary's contents are inconsistent".to_string(),
        ),
    ] {
        std::fs::write(&crafted, craft(&bytes, &edits)).unwrap();
        let err = fails(&["merge", c]);
        assert!(
            err.starts_with(&format!("lemma-eval: error: {c}: corrupt: ")),
            "{err}"
        );
        assert!(err.contains(&what), "{what}: {err}");
    }
    // Untouched, it merges.
    std::fs::write(&crafted, craft(&bytes, &[])).unwrap();
    ok(&["merge", c, "--quiet"]);
}

#[test]
fn merged_counts_past_2_to_the_64_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r, halves) = two_shards(dir.path());
    let sums = [0, 1].map(|i| {
        let p = dir.path().join(format!("{i}.sum"));
        ok(&[
            "eval",
            &q,
            &halves[i],
            "--quiet",
            "-o",
            "/dev/null",
            "--summary-out",
            p.to_str().unwrap(),
        ]);
        p.to_str().unwrap().to_string()
    });
    // Unharmed, the halves merge into the whole.
    assert_eq!(
        ok(&["merge", &sums[0], &sums[1], "--format", "tsv", "--quiet"]),
        ok(&["eval", &q, &r, "--format", "tsv", "--quiet"])
    );
    // Each half claims 2^64 - 2 goals without actual sets: their sum wraps around.
    for s in &sums {
        let bytes = std::fs::read(s).unwrap();
        let l = layout(&bytes);
        std::fs::write(s, craft(&bytes, &[(l.counts[0] + 8, u64::MAX - 1)])).unwrap();
    }
    let err = fails(&["merge", &sums[0], &sums[1]]);
    assert_eq!(
        err,
        format!(
            "lemma-eval: error: cannot merge {} with {}: corrupt: the merged goal counts would \
             pass 2^64 - 1: the summaries' counts cannot be right\n",
            sums[0], sums[1]
        )
    );
}

/// Under which tie rules a store converted under `made` (cut by a depth or not) can be
/// evaluated, by the rule a reader can check: the same rule; tie groups and file order both
/// keep the file's order of equal scores; tie groups read only scores, from a store in trec
/// order when nothing cut a group.
fn store_fits(made: &str, eval: &str, cut: bool) -> bool {
    made == eval
        || (made != "trec" && eval != "trec")
        || (made == "trec" && eval == "group" && !cut)
}

#[test]
fn a_converted_store_evaluates_as_its_text_under_every_tie_rule() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let (q, r, s) = (p("q"), p("r"), p("s"));
    // The report's example: a and b tie; trec ranks b first (AP 1/2), file order a (AP 1), tie
    // groups give the mean over both orders (AP 1/2 at the group's end).
    std::fs::write(&q, "g1 0 a 1\n").unwrap();
    std::fs::write(&r, "g1 Q0 a 1 0.5 t\ng1 Q0 b 2 0.5 t\n").unwrap();
    let ap = |args: &[&str]| {
        let mut a = vec!["eval", &q];
        a.extend(args);
        a.extend(["-m", "AP", "--format", "tsv", "--quiet"]);
        ok(&a)
    };
    for (rule, want) in [("trec", "0.5"), ("group", "0.5"), ("file", "1")] {
        assert_eq!(ap(&[&r, "--ties", rule]), format!("all\tAP\t{want}\n"));
        ok(&["convert", &q, &r, "-o", &s, "--ties", rule]);
        assert_eq!(
            ap(&[&s, "--ties", rule]),
            format!("all\tAP\t{want}\n"),
            "{rule}"
        );
    }
    // Converted under group, the store holds the file's order: under trec (the default) it
    // would give AP 1 where the text gives 1/2. Refused, naming both rules.
    ok(&["convert", &q, &r, "-o", &s, "--ties", "group"]);
    let err = fails(&["eval", &q, &s, "-m", "AP"]);
    assert!(
        err.contains("its rankings were ordered under --ties group when it was converted")
            && err.contains(
                "evaluate it with --ties group, or convert the predictions again with --ties trec"
            ),
        "{err}"
    );

    // Generated runs with many ties, 9 pairs of rules, with and without depths.
    ok(&[
        "gen",
        "--goals",
        "60",
        "--universe",
        "400",
        "--depth",
        "20",
        "--ties",
        "0.4",
        "--graded",
        "--unretrieved-share",
        "0.2",
        "--seed",
        "7",
        "--qrels",
        &q,
        "--run",
        &r,
    ]);
    let rows = |input: &str, rule: &str, depth: Option<&str>| -> Result<String, String> {
        let mut a = vec![
            "eval",
            &q,
            input,
            "--ties",
            rule,
            "--per-goal",
            "--format",
            "tsv",
        ];
        a.extend([
            "--quiet", "-m", "AP", "-m", "P@5", "-m", "RR", "-m", "nDCG@10",
        ]);
        a.extend(["-m", "Depth(recall=1.0)", "-m", "Bpref"]);
        if let Some(d) = depth {
            a.extend(["--depth", d]);
        }
        let o = run(&a);
        match o.status.code() {
            Some(0) => Ok(String::from_utf8(o.stdout).unwrap()),
            Some(2) => Err(String::from_utf8(o.stderr).unwrap()),
            c => panic!("{a:?}: exit {c:?}"),
        }
    };
    let mut compared = 0;
    for made in ["trec", "group", "file"] {
        for cut in [None, Some("5")] {
            let mut a = vec!["convert", &q, &r, "-o", &s, "--ties", made];
            a.extend(cut.iter().flat_map(|d| ["--depth", d]));
            run(&a);
            for eval in ["trec", "group", "file"] {
                for depth in [None, Some("5"), Some("3")] {
                    // A store cut at 5 holds the text's first 5: its ranking as --depth 5 makes.
                    let text_depth = match (cut, depth) {
                        (Some(c), None) => Some(c),
                        _ => depth,
                    };
                    let what =
                        format!("convert --ties {made} {cut:?}, eval --ties {eval} {depth:?}");
                    let got = rows(&s, eval, depth);
                    if !store_fits(made, eval, cut.is_some() || depth.is_some()) {
                        let err = got.expect_err(&what);
                        assert!(
                            err.contains(&format!(
                                "ordered under --ties {made} when it was converted"
                            )),
                            "{what}: {err}"
                        );
                        continue;
                    }
                    match (got, rows(&r, eval, text_depth)) {
                        (Ok(got), Ok(want)) => {
                            assert_eq!(got, want, "{what}");
                            compared += 1;
                        }
                        // Tie groups cut by a depth: a store refuses a cut through a group that
                        // holds a judged lemma (which lemmas count would depend on their order).
                        (Err(e), Ok(_)) if eval == "group" && e.contains("cuts the tie group") => {}
                        (got, want) => panic!("{what}: {got:?} vs {want:?}"),
                    }
                }
            }
        }
    }
    assert!(compared >= 20, "{compared}");
}

#[test]
fn tie_groups_refuse_scores_that_tie_only_as_stored() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let (q, r, s) = (p("q"), p("r"), p("s"));
    // 0.1 and 0.1000000001 differ as read, not as f32: as groups, b and a would tie in the
    // store (AP 1/2) where they do not in the run (AP 1).
    std::fs::write(&q, "g1 0 a 1\n").unwrap();
    std::fs::write(&r, "g1 Q0 a 1 0.1000000001 t\ng1 Q0 b 2 0.1 t\n").unwrap();
    ok(&["convert", &q, &r, "-o", &s, "--ties", "group"]);
    let err = fails(&["eval", &q, &s, "--ties", "group"]);
    assert!(
        err.contains("stored as f32, tie where the scores ranked did not"),
        "{err}"
    );
    let text = ok(&[
        "eval", &q, &r, "--ties", "group", "-m", "AP", "--format", "tsv", "--quiet",
    ]);
    assert_eq!(text, "all\tAP\t1\n");
}

#[test]
fn shards_of_a_regrouped_run_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = (dir.path().join("q"), dir.path().join("r"));
    let (q, r) = (q.to_str().unwrap(), r.to_str().unwrap());
    // g1's lines in two places: each shard of a regrouped run would hold part of g1.
    std::fs::write(q, "g1 0 a 1\ng2 0 b 1\n").unwrap();
    std::fs::write(r, "g1 Q0 x 1 0.9 t\ng2 Q0 b 1 0.9 t\ng1 Q0 a 2 0.8 t\n").unwrap();
    for shard in ["1/2", "2/2"] {
        let err = fails(&["eval", q, r, "--regroup", "--shard", shard]);
        assert!(
            err.contains("cannot be used with")
                && err.contains("'--regroup'")
                && err.contains("'--shard <I/N>'"),
            "{err}"
        );
    }
    // The library refuses it too (what the Python package calls).
    let ev = lemma_eval::Evaluator::builder()
        .regroup(true)
        .build_from_path(Path::new(q))
        .unwrap();
    let shard = lemma_eval::PredictedInput::Shard {
        path: r.into(),
        index: 1,
        count: 2,
    };
    let job = lemma_eval::Job::on(&ev, shard);
    let Err(e) = job.run(&mut lemma_eval::SummaryOnly, None) else {
        panic!("a shard of a regrouped run was evaluated");
    };
    assert!(e.to_string().contains("--shard with --regroup"), "{e}");
}

#[test]
fn no_goal_evaluated_prints_means_as_missing_and_sums_as_zero() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str, text: &str| {
        let p = dir.path().join(n);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    // g1 judges nothing relevant (R = 0): skipped, so no goal is evaluated.
    let (q, r) = (p("q", "g1 0 a 0\n"), p("r", "g1 Q0 a 1 0.5 t\n"));
    let args = |format: &str| -> Vec<String> {
        let m = ["-m", "AP", "-m", "NumRet", "-m", "Depth(recall=1.0)"];
        let mut a: Vec<String> = ["eval", &q, &r, "--quiet", "--format", format]
            .map(String::from)
            .into();
        a.extend(m.map(String::from));
        a
    };
    let out = |format: &str| ok(&args(format).iter().map(String::as_str).collect::<Vec<_>>());
    let line = |name: &str, value: &str| format!("{name:<24} {value:>12}\n");
    assert_eq!(
        out("table"),
        line("measure", "mean of 0")
            + &line("AP", "-")
            + &line("NumRet", "0")
            + &line("Depth(recall=1.0)", "-")
                .replace('\n', "  median -, reached by 0 of 0 goals (-)\n")
    );
    assert_eq!(
        out("tsv"),
        "all\tAP\tNA\nall\tNumRet\t0\nall\tDepth(recall=1.0)\tNA\n\
         all\tDepth(recall=1.0):median\tNA\nall\tDepth(recall=1.0):coverage\tNA\n"
    );
    assert_eq!(
        out("json"),
        "{\"summary\":{\"AP\":null,\"Depth(recall=1.0)\":{\"coverage\":null,\"mean\":null,\
         \"median\":null,\"reached\":0},\"NumRet\":0.0},\"goals\":{\"evaluated\":0,\
         \"evaluated_empty\":0,\"skipped_no_actual_set\":0,\"skipped_no_predictions\":0,\
         \"skipped_no_relevant\":1}}\n"
    );
    // trec_eval's lines hold numbers only: a missing mean has no line.
    assert_eq!(out("trec"), "num_ret               \tall\t0\n");
    // One goal evaluated, ranking nothing relevant: its AP is 0, a value.
    let q1 = p("q1", "g1 0 b 1\n");
    let one = ok(&["eval", &q1, &r, "--quiet", "--format", "tsv", "-m", "AP"]);
    assert_eq!(one, "all\tAP\t0\n");
    // The trec_eval door as trec_eval: the R = 0 goal is evaluated (num_q 1, map 0), and no goal
    // in both files is an error (exit 7).
    let te = ok(&["trec_eval", "-m", "num_q", "-m", "map", &q, &r]);
    assert_eq!(
        te,
        "num_q                 \tall\t1\nmap                   \tall\t0.0000\n"
    );
    let other = p("other", "g2 0 a 1\n");
    let o = run(&["trec_eval", &other, &r]);
    assert_eq!(o.status.code(), Some(7));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("no goals with both predictions and relevance judgments"),
        "{err}"
    );
}

#[test]
fn an_error_on_the_first_line_leaves_no_partial_document() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = (dir.path().join("q"), dir.path().join("r"));
    std::fs::write(&q, "g1 0 a 1\n").unwrap();
    // Line 1's score is not a number.
    std::fs::write(&r, "g1 Q0 a 1 high t\n").unwrap();
    let (q, r) = (q.to_str().unwrap(), r.to_str().unwrap());
    for format in ["json", "table", "tsv", "trec"] {
        for per_goal in [false, true] {
            let mut args = vec!["eval", q, r, "--quiet", "--format", format];
            if per_goal {
                args.push("--per-goal");
            }
            // `fails`: exit 2 and nothing at all on stdout (json began with `{` before).
            let err = fails(&args);
            assert!(
                err.contains(&format!(
                    "{r}:1: expected a finite number as the score (field 5), found `high`"
                )),
                "{args:?}: {err}"
            );
        }
    }
}

/// `verify` of a store whose first actual set's bitmap is damaged, every checksum recomputed:
/// exit 2, the file, the goal and what is wrong; the store as written passes.
#[test]
fn verify_finds_a_damaged_actual_set_under_recomputed_checksums() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = (fixture("seed/qrels.txt"), fixture("seed/run.txt"));
    let store = dir.path().join("s.store");
    let s = store.to_str().unwrap();
    ok(&["convert", q.to_str().unwrap(), r.to_str().unwrap(), "-o", s]);
    let o = run(&["verify", s]);
    assert!(o.status.success());
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        format!("lemma-eval: {s}: every checksum matches, every invariant holds\n")
    );
    let mut b = std::fs::read(&store).unwrap();
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    // Goal 0's index entry: its actual set's offset in section 6.
    let (index, truths) = (
        u64_at(&b, 64 + 20) as usize,
        u64_at(&b, 64 + 20 * 6) as usize,
    );
    let at = truths + u64_at(&b, index + 16) as usize;
    // The roaring cookie, first of the bitmap after its u32 length.
    b[at + 4] ^= 0xff;
    for i in [1, 6] {
        let h = 64 + 20 * i;
        let (off, len) = (u64_at(&b, h) as usize, u64_at(&b, h + 8) as usize);
        let crc = crc32(&b[off..off + len]);
        b[h + 16..h + 20].copy_from_slice(&crc.to_le_bytes());
    }
    let crc = crc32(&b[..252]);
    b[252..256].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&store, &b).unwrap();
    let err = fails(&["verify", s]);
    assert!(
        err.starts_with(&format!(
            "lemma-eval: error: {s}: corrupt or truncated store: goal 0 (\""
        )) && err.contains("\"): actual set bitmap: "),
        "{err}"
    );
}

/// `curve --pooled` spilling hundreds of runs under a limit of 64 open files: the runs are
/// merged in levels within the limit, and the curve is the curve held in memory.
#[test]
fn hundreds_of_pooled_runs_merge_within_a_low_open_file_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = (dir.path().join("q"), dir.path().join("r"));
    let (qs, rs) = (q.to_str().unwrap(), r.to_str().unwrap());
    ok(&[
        "gen", "--goals", "4000", "--depth", "50", "--seed", "7", "--qrels", qs, "--run", rs,
    ]);
    let held = ok(&["curve", qs, rs, "--pooled", "--threads", "2"]);
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new("sh")
        .args(["-c", "ulimit -n 64 && exec \"$0\" \"$@\"", BIN])
        .args([
            "curve",
            qs,
            rs,
            "--pooled",
            "--memory",
            "64K",
            "--threads",
            "2",
        ])
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let runs = sorted_runs(&err, "outgrew --memory 64 KiB: ");
    assert!(runs >= 200, "{runs} runs: {err}");
    assert_eq!(String::from_utf8(o.stdout).unwrap(), held);
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

/// Qrels out of order sorted on disk in dozens of runs under a limit of 32 open files: the
/// runs are merged within it (a fan-in of the limit's measure, not the budget's 32), and the
/// evaluation is the one of the qrels in order.
#[test]
fn qrels_sorted_on_disk_merge_within_a_low_open_file_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = (dir.path().join("q"), dir.path().join("r"));
    let (qs, rs) = (q.to_str().unwrap(), r.to_str().unwrap());
    ok(&[
        "gen", "--goals", "60000", "--depth", "2", "--seed", "3", "--qrels", qs, "--run", rs,
    ]);
    let in_order = ok(&["eval", qs, rs, "-m", "AP", "-m", "P@2", "--format", "tsv"]);
    let text = std::fs::read_to_string(&q).unwrap();
    let reversed: String = text.lines().rev().map(|l| format!("{l}\n")).collect();
    let rq = dir.path().join("reversed");
    std::fs::write(&rq, reversed).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new("sh")
        .args(["-c", "ulimit -n 32 && exec \"$0\" \"$@\"", BIN])
        .args(["eval", rq.to_str().unwrap(), rs, "--memory", "1M"])
        .args(["-m", "AP", "-m", "P@2", "--format", "tsv"])
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let runs = sorted_runs(&err, "within --memory 1 MiB: ");
    assert!(runs >= 32, "{runs} runs: {err}");
    assert_eq!(String::from_utf8(o.stdout).unwrap(), in_order);
}

/// A `.npy` matrix's names come as `--names STORE` or as both lists: `eval` and `compare` refuse
/// any other mixture with the same message, before reading anything.
#[test]
fn matrix_names_half_given_are_refused_by_eval_and_compare() {
    let (q, r) = (fixture("seed/qrels.txt"), fixture("seed/run.txt"));
    let (q, r) = (q.to_str().unwrap(), r.to_str().unwrap());
    let want = "a .npy matrix needs its names: --goal-names FILE and --lemma-names FILE, or \
                --names STORE";
    for args in [
        vec!["eval", q, r, "--goal-names", "g"],
        vec!["eval", q, r, "--names", "s", "--lemma-names", "l"],
        vec!["compare", q, r, r, "--lemma-names", "l"],
    ] {
        let err = fails(&args);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// The number of sorted runs a spill wrote, as the command reports it on stderr after `after`
/// ("... N sorted runs ...").
fn sorted_runs(err: &str, after: &str) -> usize {
    err.split_once(after)
        .and_then(|(_, rest)| rest.split_once(" sorted runs"))
        .map(|(n, _)| n.parse().unwrap())
        .unwrap_or_else(|| panic!("no spill to sorted runs reported: {err}"))
}
