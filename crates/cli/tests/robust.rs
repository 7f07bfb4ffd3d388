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
