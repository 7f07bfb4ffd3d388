//! Absurd numbers and crafted inputs: refused with a clear message and exit 2, never a panic, an
//! abort or a wrong number.

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

/// Exit 2, nothing on stdout: the message on stderr.
fn fails(args: &[&str]) -> String {
    let o = run(args);
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(o.stdout.is_empty(), "{args:?}");
    err
}

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
