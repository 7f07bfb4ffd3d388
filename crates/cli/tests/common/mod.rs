//! What the command-line tests share: the binary under test, the fixtures, and running it.
// Each test file compiles this module on its own and uses a part of it.
#![allow(dead_code)]

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
