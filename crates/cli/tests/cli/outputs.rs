//! Where the command's output goes: `-o` onto every kind of path (new, regular, symbolic link,
//! device, FIFO, `/dev/stdout`, `-`), file modes under a umask of 022, errors that leave nothing
//! behind, a full disk, and a closed pipe alone or beside other outputs. Devices are made with
//! mknod in a temporary directory, so the tests run as root (and are skipped, saying so,
//! otherwise).

use std::ffi::CString;
use std::io::{BufRead, BufReader, Read};
use std::os::fd::FromRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_lemma-eval");

fn fixture(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(p)
        .to_string_lossy()
        .into_owned()
}

/// `lemma-eval ARGS`, run under a umask of 022.
fn umask_cmd(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args);
    // SAFETY: umask is async-signal-safe and touches no memory of the parent.
    unsafe {
        c.pre_exec(|| {
            libc::umask(0o022);
            Ok(())
        })
    };
    c
}

fn run_umask(args: &[&str]) -> Output {
    umask_cmd(args).output().expect("binary runs")
}

/// `lemma-eval eval` of the seed example, per-goal tsv, then `extra`.
fn seed_eval(extra: &[&str]) -> Command {
    let (q, r) = (fixture("seed/qrels.txt"), fixture("seed/run.txt"));
    let mut args = vec!["eval", &q, &r, "--format", "tsv", "--per-goal", "--quiet"];
    args.extend_from_slice(extra);
    umask_cmd(&args)
}

fn eval_to(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["-o", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    seed_eval(&args).output().unwrap()
}

fn expected_tsv() -> Vec<u8> {
    let o = seed_eval(&[]).output().unwrap();
    assert!(o.status.success());
    assert!(o.stdout.len() > 100);
    o.stdout
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}; stderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn new_and_existing_files_get_a_shells_modes() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new.tsv");
    ok(&eval_to(&new, &[]));
    assert_eq!(std::fs::read(&new).unwrap(), expected_tsv());
    assert_eq!(mode(&new), 0o644, "0666 less the umask 022");

    let kept = dir.path().join("kept.tsv");
    std::fs::write(&kept, "old\n").unwrap();
    std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o664)).unwrap();
    ok(&eval_to(&kept, &[]));
    assert_eq!(std::fs::read(&kept).unwrap(), expected_tsv());
    assert_eq!(mode(&kept), 0o664, "an existing file keeps its mode");

    // gen and convert write through the same path.
    let (q, r, s) = (
        dir.path().join("g.qrels"),
        dir.path().join("g.run"),
        dir.path().join("g.store"),
    );
    let gen = run_umask(&[
        "gen",
        "--goals",
        "20",
        "--universe",
        "100",
        "--depth",
        "10",
        "--qrels",
        q.to_str().unwrap(),
        "--run",
        r.to_str().unwrap(),
    ]);
    ok(&gen);
    let convert = run_umask(&[
        "convert",
        q.to_str().unwrap(),
        r.to_str().unwrap(),
        "-o",
        s.to_str().unwrap(),
    ]);
    ok(&convert);
    for p in [&q, &r, &s] {
        assert_eq!(mode(p), 0o644, "{}", p.display());
    }
    assert_eq!(
        names_in(dir.path()),
        ["g.qrels", "g.run", "g.store", "kept.tsv", "new.tsv"]
    );
}

#[test]
fn a_symbolic_link_is_followed_and_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("runs")).unwrap();
    std::fs::write(d.join("runs/today.tsv"), "old\n").unwrap();
    std::os::unix::fs::symlink("runs/today.tsv", d.join("latest.tsv")).unwrap();
    ok(&eval_to(&d.join("latest.tsv"), &[]));
    let link = std::fs::symlink_metadata(d.join("latest.tsv")).unwrap();
    assert!(link.file_type().is_symlink(), "the link was replaced");
    assert_eq!(
        std::fs::read(d.join("runs/today.tsv")).unwrap(),
        expected_tsv()
    );
    assert_eq!(names_in(d), ["latest.tsv", "runs"]);
    assert_eq!(names_in(&d.join("runs")), ["today.tsv"]);
}

#[test]
fn a_fifo_is_written_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("results");
    let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string; mkfifo reads nothing else.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut v = Vec::new();
            std::fs::File::open(fifo)
                .unwrap()
                .read_to_end(&mut v)
                .unwrap();
            v
        })
    };
    ok(&eval_to(&fifo, &[]));
    assert_eq!(reader.join().unwrap(), expected_tsv());
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert_eq!(names_in(dir.path()), ["results"]);
}

/// A character device `1:minor` made with mknod in `dir` (3: null, 7: full), if allowed here.
fn device(dir: &Path, name: &str, minor: u32) -> Option<PathBuf> {
    // SAFETY: geteuid reads nothing.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: mknod needs root");
        return None;
    }
    let p = dir.join(name);
    let c = CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string.
    if unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, minor)) } != 0 {
        eprintln!(
            "skipped: mknod refused: {}",
            std::io::Error::last_os_error()
        );
        return None;
    }
    Some(p)
}

#[test]
fn a_device_is_never_replaced_and_a_full_one_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (Some(null), Some(full)) = (device(dir.path(), "null", 3), device(dir.path(), "full", 7))
    else {
        return;
    };
    ok(&eval_to(&null, &[]));
    let m = std::fs::symlink_metadata(&null).unwrap();
    assert!(m.file_type().is_char_device());
    assert_eq!(m.rdev(), libc::makedev(1, 3));

    // The report written "to /dev/full" is not lost without a word.
    let o = eval_to(&full, &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "{}: cannot write: No space left on device",
            full.display()
        )),
        "{err}"
    );
    let m = std::fs::symlink_metadata(&full).unwrap();
    assert!(m.file_type().is_char_device());
    assert_eq!(m.rdev(), libc::makedev(1, 7));
    // trec_eval mode and convert too.
    let (q, r) = (fixture("seed/qrels.txt"), fixture("seed/run.txt"));
    let o = run_umask(&["trec_eval", &q, &r, "-o", full.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(std::fs::symlink_metadata(&full)
        .unwrap()
        .file_type()
        .is_char_device());
    assert_eq!(names_in(dir.path()), ["full", "null"]);
}

#[test]
fn a_full_disk_on_stdout_is_an_error() {
    let (q, r) = (fixture("seed/qrels.txt"), fixture("seed/run.txt"));
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full exists on Linux");
    let o = Command::new(BIN)
        .args(["eval", &q, &r, "--quiet"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("stdout: cannot write: No space left on device"));
}

#[test]
fn dev_stdout_is_the_processs_stdout() {
    // `-o /dev/stdout` with stdout appending to a file: appended, the file not replaced.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    std::fs::write(&log, "before\n").unwrap();
    let inode = std::fs::metadata(&log).unwrap().ino();
    let f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let o = seed_eval(&["-o", "/dev/stdout"])
        .stdout(f)
        .output()
        .unwrap();
    ok(&o);
    let mut want = b"before\n".to_vec();
    want.extend(expected_tsv());
    assert_eq!(std::fs::read(&log).unwrap(), want);
    assert_eq!(std::fs::metadata(&log).unwrap().ino(), inode);
}

#[test]
fn a_failed_run_leaves_the_old_file_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res.tsv");
    std::fs::write(&out, "old\n").unwrap();
    let bad = dir.path().join("bad.run");
    // The first goal's lines are fine (rows are written), the third line is not.
    std::fs::write(
        &bad,
        "g1 Q0 a 1 0.9 t\ng1 Q0 b 2 0.8 t\ng2 Q0 a 1 not-a-score t\n",
    )
    .unwrap();
    let q = fixture("seed/qrels.txt");
    let o = run_umask(&[
        "eval",
        &q,
        bad.to_str().unwrap(),
        "--per-goal",
        "--format",
        "tsv",
        "--quiet",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.run:3"));
    assert_eq!(std::fs::read(&out).unwrap(), b"old\n");
    assert_eq!(names_in(dir.path()), ["bad.run", "res.tsv"]);
}

#[test]
fn a_closed_pipe_ends_quietly() {
    // Enough goals that the rows overflow the pipe's buffer after the reader has gone.
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = (dir.path().join("q"), dir.path().join("r"));
    let gen = Command::new(BIN)
        .args([
            "gen",
            "--goals",
            "20000",
            "--universe",
            "1000",
            "--depth",
            "5",
            "--qrels",
            q.to_str().unwrap(),
            "--run",
            r.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    ok(&gen);
    for args in [
        &["eval", "--per-goal", "--format", "tsv"][..],
        &["trec_eval", "-q"][..],
    ] {
        let mut child = Command::new(BIN)
            .args(args)
            .args([&q, &r])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        // The reader is dropped here, as `head -1` exits.
        assert!(!first.is_empty());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        // Nothing on stderr: no error, and no report of a run cut short.
        assert_eq!(String::from_utf8_lossy(&o.stderr), "", "{args:?}");
    }
}

#[test]
fn a_failed_convert_names_both_lines_and_leaves_no_store() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r, s) = (
        dir.path().join("q"),
        dir.path().join("r"),
        dir.path().join("s.store"),
    );
    std::fs::write(&q, "g1 0 a 1\ng1 0 b 1\n").unwrap();
    // Ranked by score: x (0.9), a (0.5), b (0.5), a (0.4): the repeat is the file's line 3.
    std::fs::write(
        &r,
        "g1 Q0 a 1 0.5 t\ng1 Q0 b 2 0.5 t\ng1 Q0 a 3 0.4 t\ng1 Q0 x 4 0.9 t\n",
    )
    .unwrap();
    let o = run_umask(&[
        "convert",
        q.to_str().unwrap(),
        r.to_str().unwrap(),
        "--duplicates",
        "error",
        "-o",
        s.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(":3: lemma `a` appears twice in goal `g1` (first at line 1)"),
        "{err}"
    );
    assert_eq!(names_in(dir.path()), ["q", "r"]);
    // Without --duplicates error the repeat is dropped: x, a, b.
    let o = run_umask(&[
        "convert",
        q.to_str().unwrap(),
        r.to_str().unwrap(),
        "-o",
        s.to_str().unwrap(),
    ]);
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("3 ranked lemmas, 3 distinct lemmas, 1 duplicates dropped"));
}

/// An output that names an input's file (directly, through a symbolic link, or as `--plot`), or
/// two outputs that name one file, are refused before anything is read or written: exit 2, both
/// paths named, every file as it was. Outputs written in place (`/dev/null` twice) are not.
#[test]
fn an_output_that_would_replace_an_input_or_another_output_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    let (q, r) = (d("qrels.txt"), d("run.txt"));
    std::fs::copy(fixture("seed/qrels.txt"), &q).unwrap();
    std::fs::copy(fixture("seed/run.txt"), &r).unwrap();
    let link = d("link.txt");
    std::os::unix::fs::symlink(&r, &link).unwrap();
    // A file read by an option: a corpus, training premises.
    let extra = d("extra.txt");
    std::fs::copy(fixture("seed/qrels.txt"), &extra).unwrap();
    let before = (std::fs::read(&q).unwrap(), std::fs::read(&r).unwrap());
    let sum = d("s.sum");
    let mut cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["eval", &q, &r, "-o", &r], "is also an input"),
        (vec!["eval", &q, &link, "-o", &r], "is also an input"),
        (vec!["eval", &q, &r, "-o", &link], "is also an input"),
        (
            vec!["eval", &q, &r, "--summary-out", &q],
            "is also an input",
        ),
        (
            vec!["eval", &q, &r, "-o", &sum, "--summary-out", &sum],
            "are the same file",
        ),
        (vec!["trec_eval", &q, &r, "-o", &q], "is also an input"),
        (vec!["curve", &q, &r, "--plot", &r], "is also an input"),
        (
            vec!["curve", &q, &r, "--pooled", "-o", &q],
            "is also an input",
        ),
        (vec!["report", &q, &r, "-o", &r], "is also an input"),
        (
            vec!["report", &q, &r, "--corpus", &extra, "-o", &extra],
            "is also an input",
        ),
        (vec!["convert", &q, &r, "-o", &q], "is also an input"),
        (
            vec!["gen", "--goals", "3", "--qrels", &sum, "--run", &sum],
            "are the same file",
        ),
    ];
    // --train-premises is an input of every command that takes it.
    let trained = ["--by", "novelty", "--train-premises", &extra, "-o", &extra];
    for runs in [
        &["report", &q, &r][..],
        &["eval", &q, &r],
        &["compare", &q, &r, &r],
    ] {
        cases.push(([runs, &trained[..]].concat(), "is also an input"));
    }
    for (args, why) in &cases {
        let o = run_umask(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
        assert_eq!(
            (std::fs::read(&q).unwrap(), std::fs::read(&r).unwrap()),
            before
        );
        assert!(!Path::new(&sum).exists(), "{args:?}");
        assert_eq!(std::fs::read(&extra).unwrap(), before.0, "{args:?}");
    }
    // A summary written, then merged into a file of its own name: refused too.
    ok(&run_umask(&[
        "eval",
        &q,
        &r,
        "--quiet",
        "-o",
        "/dev/null",
        "--summary-out",
        &sum,
    ]));
    let o = run_umask(&["merge", &sum, "-o", &sum]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is also an input"));
    // The run given as `-`, stdin redirected from the file that `-o` names: refused too.
    let o = umask_cmd(&["eval", &q, "-", "-o", &r])
        .stdin(std::fs::File::open(&r).unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is also an input (-)"));
    assert_eq!(std::fs::read(&r).unwrap(), before.1);
    // Devices are written in place: the same one twice is fine.
    ok(&run_umask(&[
        "eval",
        &q,
        &r,
        "--quiet",
        "-o",
        "/dev/null",
        "--summary-out",
        "/dev/null",
    ]));
    assert_eq!(
        names_in(dir.path()),
        ["extra.txt", "link.txt", "qrels.txt", "run.txt", "s.sum"]
    );
}

/// A pipe's writing end whose reader is already gone (`... | true`): every write to it fails with
/// EPIPE (the command ignores SIGPIPE, as Rust programs do).
fn closed_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills `fds` with two new descriptors.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: the reading end is closed once; the writing end is owned by the Stdio.
    unsafe {
        libc::close(fds[0]);
        Stdio::from(std::os::fd::OwnedFd::from_raw_fd(fds[1]))
    }
}

/// `lemma-eval ARGS` in `dir`, its stdout a closed pipe.
fn run_closed(dir: &Path, args: &[&str]) -> Output {
    umask_cmd(args)
        .current_dir(dir)
        .stdout(closed_pipe())
        .output()
        .unwrap()
}

/// A closed stdout, when the command has another output (`--summary-out`, `--plot`, `gen`'s
/// files), is an error naming stdout (exit 2) and none of the other outputs is written: an
/// existing file keeps its content, a new path is not created, no temporary file is left, and
/// no file named `-` appears.
#[test]
fn a_closed_stdout_with_other_outputs_fails_and_writes_none_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (q, r) = (fixture("seed/qrels.txt"), fixture("seed/run.txt"));
    let old = ["s.sum", "t.tsv", "p.svg", "g.qrels", "g.run"];
    let gen = |extra: &[&'static str]| {
        let mut v = vec!["gen", "--goals", "50", "--universe", "500", "--depth", "20"];
        v.extend_from_slice(extra);
        v
    };
    let cases: Vec<Vec<&str>> = vec![
        vec!["eval", &q, &r, "--quiet", "--summary-out", "s.sum"],
        vec!["eval", &q, &r, "--quiet", "--summary-out", "new.sum"],
        vec![
            "eval",
            &q,
            &r,
            "--quiet",
            "-o",
            "-",
            "--summary-out",
            "s.sum",
        ],
        vec![
            "eval",
            &q,
            &r,
            "--quiet",
            "-o",
            "t.tsv",
            "--summary-out",
            "-",
        ],
        vec!["curve", &q, &r, "--plot", "p.svg"],
        vec!["curve", &q, &r, "--plot", "new.svg"],
        vec!["curve", &q, &r, "--pooled", "--plot", "p.svg"],
        vec!["curve", &q, &r, "-o", "t.tsv", "--plot", "-"],
        gen(&["--qrels", "-", "--run", "g.run"]),
        gen(&["--qrels", "g.qrels", "--run", "-"]),
        gen(&["--qrels", "new.qrels", "--run", "-", "--format", "jsonl"]),
        gen(&["--qrels", "-", "--run", "new.store", "--format", "store"]),
        gen(&["--format", "npy", "--qrels", "g.qrels", "--run", "g.run"])
            .into_iter()
            .chain(["--goal-names", "-", "--lemma-names", "new.names"])
            .collect(),
    ];
    for args in &cases {
        for n in old {
            std::fs::write(d.join(n), "old\n").unwrap();
        }
        let o = run_closed(d, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("lemma-eval: error: stdout: cannot write: Broken pipe"),
            "{args:?}: {err}"
        );
        for n in old {
            assert_eq!(
                std::fs::read_to_string(d.join(n)).unwrap(),
                "old\n",
                "{args:?}: {n}"
            );
        }
        assert_eq!(
            names_in(d),
            ["g.qrels", "g.run", "p.svg", "s.sum", "t.tsv"],
            "{args:?}"
        );
    }
}

/// A closed stdout that is the command's only output ends it quietly, exit 0, as `head -1`
/// expects; `-o -` is that stdout, not a file named `-`.
#[test]
fn a_closed_stdout_alone_ends_quietly_and_dash_is_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (q, r) = (fixture("seed/qrels.txt"), fixture("seed/run.txt"));
    let sum = d.join("s.sum").to_string_lossy().into_owned();
    ok(&run_umask(&[
        "eval",
        &q,
        &r,
        "--quiet",
        "-o",
        "/dev/null",
        "--summary-out",
        &sum,
    ]));
    let cases: Vec<Vec<&str>> = vec![
        vec!["eval", &q, &r, "--quiet"],
        vec!["eval", &q, &r, "--quiet", "-o", "-"],
        vec!["trec_eval", &q, &r, "-o", "-"],
        vec!["curve", &q, &r, "-o", "-"],
        vec!["curve", &q, &r, "--pooled"],
        vec!["report", &q, &r, "-o", "-"],
        vec!["merge", &sum, "--quiet", "-o", "-"],
    ];
    for args in &cases {
        let o = run_closed(d, args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&o.stderr), "", "{args:?}");
        assert_eq!(names_in(d), ["s.sum"], "{args:?}");
    }
}

/// `-` names stdout wherever an output is given: `-o -` prints what no `-o` prints,
/// `--summary-out -` the bytes `--summary-out FILE` writes, `--plot -` the picture, `gen`'s
/// `-` the file it would write; no file named `-` is made.
#[test]
fn dash_writes_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (q, r) = (fixture("seed/qrels.txt"), fixture("seed/run.txt"));
    let stdout_of = |args: &[&str]| {
        let o = umask_cmd(args).current_dir(d).output().unwrap();
        ok(&o);
        o.stdout
    };
    let read = |n: &str| std::fs::read(d.join(n)).unwrap();
    for args in [
        vec!["eval", &q, &r, "--quiet", "--format", "tsv", "--per-goal"],
        vec!["trec_eval", "-q", &q, &r],
        vec!["curve", &q, &r, "--pooled"],
    ] {
        let plain = stdout_of(&args);
        assert!(plain.len() > 100, "{args:?}");
        let mut dash = args.clone();
        dash.extend(["-o", "-"]);
        assert_eq!(stdout_of(&dash), plain, "{args:?}");
    }
    let summary = stdout_of(&[
        "eval",
        &q,
        &r,
        "--quiet",
        "-o",
        "t.tsv",
        "--summary-out",
        "-",
    ]);
    stdout_of(&[
        "eval",
        &q,
        &r,
        "--quiet",
        "-o",
        "u.tsv",
        "--summary-out",
        "s.sum",
    ]);
    assert!(summary.starts_with(b"LEMSUMRY"));
    assert_eq!(summary, read("s.sum"));
    assert_eq!(read("t.tsv"), read("u.tsv"));
    let merged = stdout_of(&["merge", "s.sum", "--quiet", "-o", "-"]);
    assert_eq!(merged, read("t.tsv"));

    let svg = stdout_of(&["curve", &q, &r, "-o", "c.tsv", "--plot", "-"]);
    stdout_of(&["curve", &q, &r, "-o", "c2.tsv", "--plot", "p.svg"]);
    assert!(
        svg.starts_with(b"<svg"),
        "{}",
        String::from_utf8_lossy(&svg)
    );
    assert_eq!(svg, read("p.svg"));
    assert_eq!(read("c.tsv"), read("c2.tsv"));

    let gen = ["gen", "--goals", "30", "--universe", "300", "--depth", "10"];
    let qrels = stdout_of(&[&gen[..], &["--qrels", "-", "--run", "g.run"]].concat());
    let run = stdout_of(&[&gen[..], &["--qrels", "g.qrels", "--run", "-"]].concat());
    stdout_of(&[&gen[..], &["--qrels", "h.qrels", "--run", "h.run"]].concat());
    assert!(
        qrels.starts_with(b"g0 0 "),
        "{}",
        String::from_utf8_lossy(&qrels)
    );
    assert_eq!(qrels, read("h.qrels"));
    assert_eq!(run, read("h.run"));
    assert_eq!(read("g.run"), read("h.run"));
    assert_eq!(read("g.qrels"), read("h.qrels"));
    let report = stdout_of(&["report", &q, &r, "-o", "-"]);
    assert!(String::from_utf8_lossy(&report).contains("</html>"));
    assert_eq!(
        names_in(d),
        [
            "c.tsv", "c2.tsv", "g.qrels", "g.run", "h.qrels", "h.run", "p.svg", "s.sum", "t.tsv",
            "u.tsv"
        ]
    );
}

/// What cannot go to stdout is refused before anything is written: two outputs there, a binary
/// store (its header is written last, at its start), exit 2 and a message saying so.
#[test]
fn outputs_that_cannot_share_or_take_stdout_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (q, r) = (fixture("seed/qrels.txt"), fixture("seed/run.txt"));
    let gen = |extra: &[&'static str]| {
        let mut v = vec!["gen", "--goals", "5"];
        v.extend_from_slice(extra);
        v
    };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["eval", &q, &r, "--summary-out", "-"],
            "the output (no -o) and --summary-out - would both write to stdout",
        ),
        (
            vec!["eval", &q, &r, "-o", "-", "--summary-out", "-"],
            "-o - and --summary-out - would both write to stdout",
        ),
        (
            vec!["curve", &q, &r, "--plot", "-"],
            "the output (no -o) and --plot - would both write to stdout",
        ),
        (
            gen(&["--qrels", "-", "--run", "-"]),
            "--qrels - and --run - would both write to stdout",
        ),
        (
            gen(&["--qrels", "q", "--run", "-", "--format", "store"]),
            "--run -: a store cannot go to stdout",
        ),
        (
            vec!["convert", &q, &r, "-o", "-"],
            "-o -: a store cannot go to stdout",
        ),
    ];
    for (args, why) in &cases {
        let o = umask_cmd(args).current_dir(d).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
        assert!(names_in(d).is_empty(), "{args:?}: {:?}", names_in(d));
    }
    // The binary summary onto a terminal (a pseudo-terminal's other side).
    // SAFETY: posix_openpt, grantpt, unlockpt and ptsname_r are given valid pointers; the
    // descriptor is owned by `master` from here on.
    let (master, tty) = unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(fd >= 0);
        assert_eq!(libc::grantpt(fd), 0);
        assert_eq!(libc::unlockpt(fd), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(fd, name.as_mut_ptr(), name.len()), 0);
        let name = std::ffi::CStr::from_ptr(name.as_ptr()).to_str().unwrap();
        (std::fs::File::from_raw_fd(fd), PathBuf::from(name))
    };
    let tty = std::fs::OpenOptions::new().write(true).open(tty).unwrap();
    let o = umask_cmd(&["eval", &q, &r, "-o", "t.tsv", "--summary-out", "-"])
        .current_dir(d)
        .stdout(tty)
        .output()
        .unwrap();
    drop(master);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--summary-out -: the summary is binary and stdout is a terminal"),
        "{err}"
    );
    assert!(names_in(d).is_empty(), "{:?}", names_in(d));
}

/// One output that cannot be written (the full device) fails the command, exit 2, naming it,
/// and the command's other outputs keep their old content: nothing of the set is written.
#[test]
fn a_failed_output_leaves_the_others_of_its_set_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (q, r) = (fixture("seed/qrels.txt"), fixture("seed/run.txt"));
    let old = ["p.svg", "s.sum", "t.tsv", "g.run"];
    let cases: Vec<Vec<&str>> = vec![
        vec!["curve", &q, &r, "--plot", "p.svg", "-o", "/dev/full"],
        vec![
            "curve",
            &q,
            &r,
            "--pooled",
            "--plot",
            "p.svg",
            "-o",
            "/dev/full",
        ],
        vec!["curve", &q, &r, "--plot", "/dev/full", "-o", "t.tsv"],
        vec![
            "eval",
            &q,
            &r,
            "--quiet",
            "--summary-out",
            "s.sum",
            "-o",
            "/dev/full",
        ],
        vec![
            "eval",
            &q,
            &r,
            "--quiet",
            "--summary-out",
            "/dev/full",
            "-o",
            "t.tsv",
        ],
        vec![
            "gen",
            "--goals",
            "20",
            "--qrels",
            "/dev/full",
            "--run",
            "g.run",
        ],
    ];
    for args in &cases {
        for n in old {
            std::fs::write(d.join(n), "old\n").unwrap();
        }
        let o = umask_cmd(args).current_dir(d).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("/dev/full: cannot write: No space left on device"),
            "{args:?}: {err}"
        );
        for n in old {
            assert_eq!(
                std::fs::read_to_string(d.join(n)).unwrap(),
                "old\n",
                "{args:?}: {n}"
            );
        }
        assert_eq!(
            names_in(d),
            ["g.run", "p.svg", "s.sum", "t.tsv"],
            "{args:?}"
        );
    }
}
