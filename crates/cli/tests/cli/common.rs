//! What the command-line tests share: the binary under test, the fixtures, and running it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `lemma-eval` binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_lemma-eval");

/// A file of the repository's `fixtures/`.
pub fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(p)
}

/// A file of the repository's `fixtures/`, as a command-line argument.
pub fn fixture_arg(p: &str) -> String {
    fixture(p).to_string_lossy().into_owned()
}

/// The binary run with `args`, its output collected.
pub fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("binary runs")
}

/// Standard output of a run that must succeed.
pub fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// Standard output and standard error of a run that must succeed.
pub fn ok_err(args: &[&str]) -> (String, String) {
    let o = run(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}

/// Standard error of a run that must fail with exit 2 and print nothing on standard output.
pub fn fails(args: &[&str]) -> String {
    let o = run(args);
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(o.stdout.is_empty(), "{args:?}");
    err
}

/// A summary file (version 4) or a values file (version 2) of an evaluation without a corpus
/// written as version `v` (summaries: 2 or 3; values: 1): the same body without the premise
/// protocol's byte at the end of the plan, nor a summary's premise counts' byte at its end
/// (docs/FORMAT.md).
pub fn downgraded(bytes: &[u8], v: u8) -> Vec<u8> {
    let magic = &bytes[..8];
    assert!(magic == b"LEMSUMRY" && bytes[8] == 4 || magic == b"LEMVALUE" && bytes[8] == 2);
    let body = &bytes[24..];
    let word = |at: usize| u64::from_le_bytes(body[at..at + 8].try_into().unwrap()) as usize;
    let mut at = 4;
    for _ in 0..u32::from_le_bytes(body[..4].try_into().unwrap()) {
        at += 8 + word(at);
    }
    // Relevance level; interpolation, order, ties, duplicates; depth; missing, zero-relevant
    // goals, f32 scores; universe.
    at += 4 + 4 + 8 + 3 + 8;
    assert_eq!(body[at], 0, "evaluated without a corpus");
    let mut new_body = body[..at].to_vec();
    new_body.extend_from_slice(&body[at + 1..]);
    if magic == b"LEMSUMRY" {
        // And the premise counts' byte at the end (none without a corpus).
        assert_eq!(new_body.pop(), Some(0), "evaluated without a corpus");
    }
    let mut out = magic.to_vec();
    out.extend_from_slice(&u32::from(v).to_le_bytes());
    out.extend_from_slice(&(new_body.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&new_body).to_le_bytes());
    out.extend_from_slice(&new_body);
    out
}
