//! Inputs named by a path that is not a regular file: a named pipe (FIFO), `/dev/stdin` on a pipe
//! (what a shell's process substitution `<(...)` gives is the same kind of file). Such an input
//! can be read once only, so nothing may read it to recognise it and then open it again: every
//! command prints exactly what it prints for the same bytes in a regular file.

use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_lemma-eval");
/// The status given to a command that did not end in time (exit code 124, as `timeout` gives).
const TIMED_OUT: i32 = 124 << 8;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// A FIFO at `path`.
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// `lemma-eval ARGS` with `stdin` (if any) on a pipe, each `(fifo, bytes)` written into its FIFO
/// by a thread of its own; stdout, stderr and status. A FIFO the command never opens is opened
/// here afterwards (without blocking), so that its writer ends.
fn run(args: &[&str], stdin: Option<Vec<u8>>, fifos: Vec<(PathBuf, Vec<u8>)>) -> Output {
    let writers: Vec<_> = (fifos.iter().cloned())
        .map(|(p, bytes)| {
            std::thread::spawn(move || {
                // A write error is the command's stopping early: its output says so.
                if let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&p) {
                    let _ = f.write_all(&bytes);
                }
            })
        })
        .collect();
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let feeder = child.stdin.take().map(|mut s| {
        let bytes = stdin.unwrap();
        std::thread::spawn(move || {
            let _ = s.write_all(&bytes);
        })
    });
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            r.read_to_end(&mut v).unwrap();
            v
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    // A command waiting for bytes already taken from a pipe would wait for ever: a minute is
    // far more than any of these inputs needs.
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            child.wait().unwrap();
            break ExitStatusExt::from_raw(TIMED_OUT);
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let out = Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    };
    for (p, _) in &fifos {
        use std::os::unix::fs::OpenOptionsExt;
        let _ = (std::fs::OpenOptions::new().read(true))
            .custom_flags(libc::O_NONBLOCK)
            .open(p);
    }
    for w in writers {
        w.join().unwrap();
    }
    if let Some(f) = feeder {
        f.join().unwrap();
    }
    out
}

/// The command's stdout, asserting success.
fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `lemma-eval gen ARGS` into `dir/NAME.qrels` and `dir/NAME.run`: their paths.
fn gen(dir: &Path, name: &str, args: &[&str]) -> (PathBuf, PathBuf) {
    let (q, r) = (
        dir.join(format!("{name}.qrels")),
        dir.join(format!("{name}.run")),
    );
    let made = Command::new(BIN)
        .arg("gen")
        .args(args)
        .arg("--qrels")
        .arg(&q)
        .arg("--run")
        .arg(&r)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    (q, r)
}

/// A generated workload larger than any read buffer's first fill (about 600 KB of run), and the
/// graded fixture: (qrels, run).
fn workloads(dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let (q, r) = gen(
        dir,
        "gen",
        &["--goals", "300", "--depth", "40", "--graded", "--seed", "3"],
    );
    assert!(std::fs::metadata(&r).unwrap().len() > 300_000);
    let g = fixtures().join("graded");
    vec![(g.join("qrels.txt"), g.join("run.txt")), (q, r)]
}

/// Each command over regular files, then with the qrels, the run, both, and a gzipped run in
/// FIFOs, and with the run on `/dev/stdin`: the same output.
#[test]
fn inputs_in_pipes_read_as_in_files() {
    let dir = tempfile::tempdir().unwrap();
    let commands: &[&[&str]] = &[
        &[
            "eval",
            "--per-goal",
            "--format",
            "tsv",
            "-m",
            "AP",
            "-m",
            "P@5",
            "-m",
            "NumRet",
        ],
        &["eval", "--regroup", "--format", "tsv"],
        &["eval", "--hold-actual", "--format", "json"],
        &["curve", "--pooled"],
        &["curve", "--pooled", "--bins", "7", "--format", "json"],
        &["curve"],
        &["trec_eval", "-q", "-m", "map", "-m", "ndcg_cut.10"],
    ];
    let mut compared = 0;
    for (n, (q, r)) in workloads(dir.path()).into_iter().enumerate() {
        let (qb, rb) = (std::fs::read(&q).unwrap(), std::fs::read(&r).unwrap());
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&rb).unwrap();
        let rgz = gz.finish().unwrap();
        for (c, args) in commands.iter().enumerate() {
            let with = |qp: &str, rp: &str| -> Vec<String> {
                let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
                v.insert(1, qp.into());
                v.insert(2, rp.into());
                v
            };
            // The output, the run's path in it (a curve's json names its run) made `RUN`.
            let output = |qp: &Path, rp: &Path, stdin: Option<Vec<u8>>, fifos, what: &str| {
                let got = run(
                    &as_refs(&with(qp.to_str().unwrap(), rp.to_str().unwrap())),
                    stdin,
                    fifos,
                );
                ok(got, what).replace(rp.to_str().unwrap(), "RUN")
            };
            let want = output(&q, &r, None, vec![], "files");
            assert!(!want.is_empty());
            let fifo = |name: &str| {
                let p = dir.path().join(format!("{n}-{c}-{name}"));
                mkfifo(&p);
                p
            };
            // The qrels in a FIFO.
            let fq = fifo("q");
            let got = output(&fq, &r, None, vec![(fq.clone(), qb.clone())], "qrels");
            assert_eq!(got, want, "{args:?} qrels in a FIFO");
            // The run in a FIFO, plain and gzipped.
            for (tag, bytes) in [("r", &rb), ("rgz", &rgz)] {
                let fr = fifo(tag);
                let got = output(&q, &fr, None, vec![(fr.clone(), bytes.clone())], tag);
                assert_eq!(got, want, "{args:?} run ({tag}) in a FIFO");
            }
            // Both in FIFOs.
            let (fq, fr) = (fifo("q2"), fifo("r2"));
            let fifos = vec![(fq.clone(), qb.clone()), (fr.clone(), rb.clone())];
            let got = output(&fq, &fr, None, fifos, "both");
            assert_eq!(got, want, "{args:?} both in FIFOs");
            // The run on /dev/stdin, a pipe.
            let got = output(
                &q,
                Path::new("/dev/stdin"),
                Some(rb.clone()),
                vec![],
                "stdin",
            );
            assert_eq!(got, want, "{args:?} run on /dev/stdin");
            compared += 1;
        }
    }
    assert_eq!(compared, 2 * commands.len());
}

/// The report names its inputs and their sizes (a FIFO's is unknown: `stream`), so its numbers
/// are compared: every table cell that is a number.
#[test]
fn a_report_of_qrels_in_a_pipe_holds_the_same_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let g = fixtures().join("graded");
    let (q, r) = (g.join("qrels.txt"), g.join("run.txt"));
    // Every cell that is a number (the inputs' sizes, "54 B", are not).
    let numbers = |html: &str| -> Vec<String> {
        (html.split("<td>").skip(1))
            .map(|c| c.split('<').next().unwrap().to_string())
            .filter(|c| c.parse::<f64>().is_ok())
            .collect()
    };
    // The page of a report of qrels `qp` (fed through `fifos`) and the fixture's run.
    let report = |qp: &Path, name: &str, fifos| {
        let out = dir.path().join(name);
        let args = ["report", qp.to_str().unwrap(), r.to_str().unwrap(), "-o"];
        let mut args: Vec<String> = args.map(String::from).to_vec();
        args.push(out.to_str().unwrap().into());
        ok(run(&as_refs(&args), None, fifos), name);
        std::fs::read_to_string(&out).unwrap()
    };
    let want = numbers(&report(&q, "files.html", vec![]));
    assert!(
        want.len() > 10 && want.iter().any(|c| c.starts_with("0.")),
        "{want:?}"
    );
    let fq = dir.path().join("q");
    mkfifo(&fq);
    let page = report(
        &fq,
        "fifo.html",
        vec![(fq.clone(), std::fs::read(&q).unwrap())],
    );
    assert_eq!(numbers(&page), want);
    assert!(page.contains("<td>stream</td>"), "the FIFO's size");
}

/// A report of two runs compares them: each run is read once (its per-goal values for the
/// comparison recorded in the same pass), so runs in pipes give the page of the files, the
/// differences from the first run included. (Reading each run a second time for the comparison,
/// a FIFO's second read was empty: `is empty, expected at least one line`.)
#[test]
fn a_report_of_runs_in_pipes_compares_them() {
    let dir = tempfile::tempdir().unwrap();
    let q = fixtures().join("graded").join("qrels.txt");
    let (r1, r2) = (
        fixtures().join("graded").join("run.txt"),
        fixtures().join("seed").join("run.txt"),
    );
    let numbers = |html: &str| -> Vec<String> {
        (html.split("<td>").skip(1))
            .map(|c| c.split('<').next().unwrap().to_string())
            .filter(|c| c.parse::<f64>().is_ok())
            .collect()
    };
    let report = |a: &Path, b: &Path, name: &str, fifos| {
        let out = dir.path().join(name);
        let args = [
            "report",
            q.to_str().unwrap(),
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ];
        ok(run(&args, None, fifos), name);
        std::fs::read_to_string(&out).unwrap()
    };
    let files = report(&r1, &r2, "files.html", vec![]);
    assert!(files.contains("<h2>Differences from "), "two runs compared");
    let want = numbers(&files);
    let (f1, f2) = (dir.path().join("r1"), dir.path().join("r2"));
    mkfifo(&f1);
    mkfifo(&f2);
    let fifos = vec![
        (f1.clone(), std::fs::read(&r1).unwrap()),
        (f2.clone(), std::fs::read(&r2).unwrap()),
    ];
    let page = report(&f1, &f2, "fifos.html", fifos);
    assert_eq!(numbers(&page), want);
    assert!(page.contains("<h2>Differences from "), "{page}");
}

/// `trec_eval` takes a run's goals in any order, sorting them when they are not contiguous: a run
/// in a pipe is sorted from the start (it cannot be read again), and gives what the file gives.
#[test]
fn trec_eval_sorts_a_piped_run_whose_goals_come_back() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = gen(
        dir.path(),
        "g",
        &["--goals", "400", "--depth", "30", "--seed", "5"],
    );
    // Every other line moved to the end: each goal's lines come in two places.
    let text = std::fs::read_to_string(&r).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut split: String = lines.iter().step_by(2).map(|l| format!("{l}\n")).collect();
    split.extend(lines.iter().skip(1).step_by(2).map(|l| format!("{l}\n")));
    std::fs::write(&r, &split).unwrap();
    let args = |run: &str| -> Vec<String> {
        [
            "trec_eval",
            "-q",
            "-m",
            "map",
            "-m",
            "num_ret",
            q.to_str().unwrap(),
            run,
        ]
        .map(String::from)
        .to_vec()
    };
    let want = ok(
        run(&as_refs(&args(r.to_str().unwrap())), None, vec![]),
        "file",
    );
    assert!(
        want.contains(&format!("num_ret               \tall\t{}", lines.len())),
        "{want}"
    );
    let f = dir.path().join("fifo");
    mkfifo(&f);
    let got = run(
        &as_refs(&args(f.to_str().unwrap())),
        None,
        vec![(f.clone(), split.clone().into_bytes())],
    );
    assert_eq!(ok(got, "FIFO"), want);
    let got = run(
        &as_refs(&args("/dev/stdin")),
        Some(split.into_bytes()),
        vec![],
    );
    assert_eq!(ok(got, "/dev/stdin"), want);
}

fn as_refs(v: &[String]) -> Vec<&str> {
    v.iter().map(|s| s.as_str()).collect()
}
