//! Sorting on disk within `--memory`: qrels not in order and runs whose goals are not contiguous
//! give the output of the held, in-memory pipeline, whatever the budget; temporary files are gone
//! after success, after an error, after Ctrl-C; a disk that fills up is a clear error.

use lemma_tools::gen::{goal_blocks, shuffle};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_lemma-eval");

/// `lemma-eval ARGS` with TMPDIR set to `tmp`.
fn cmd(tmp: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args).env("TMPDIR", tmp);
    c
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn entries(dir: &Path) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

/// A generated workload (2,000 goals × 20): the qrels and run as `gen` writes them, the qrels with
/// their goals shuffled, and the run with each goal's lines cut in two and the halves shuffled.
struct Work {
    _dir: tempfile::TempDir,
    qrels: PathBuf,
    run: PathBuf,
    qrels_shuffled: PathBuf,
    run_split: PathBuf,
    tmp: PathBuf,
}

fn work(goals: u64) -> Work {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (qrels, run) = (d.join("qrels"), d.join("run"));
    let g = goals.to_string();
    ok(&Command::new(BIN)
        .args([
            "gen",
            "--goals",
            &g,
            "--depth",
            "20",
            "--empty-share",
            "0.2",
            "--graded",
        ])
        .args([
            "--qrels",
            qrels.to_str().unwrap(),
            "--run",
            run.to_str().unwrap(),
        ])
        .output()
        .unwrap());
    let mut qb = goal_blocks(&std::fs::read_to_string(&qrels).unwrap());
    shuffle(&mut qb, 1);
    let qrels_shuffled = d.join("qrels-shuffled");
    std::fs::write(&qrels_shuffled, qb.concat()).unwrap();
    let mut halves = Vec::new();
    for b in goal_blocks(&std::fs::read_to_string(&run).unwrap()) {
        let lines: Vec<&str> = b.lines().collect();
        let mid = lines.len() / 2;
        halves.push(
            lines[..mid]
                .iter()
                .map(|l| format!("{l}\n"))
                .collect::<String>(),
        );
        halves.push(
            lines[mid..]
                .iter()
                .map(|l| format!("{l}\n"))
                .collect::<String>(),
        );
    }
    shuffle(&mut halves, 2);
    let run_split = d.join("run-split");
    std::fs::write(&run_split, halves.concat()).unwrap();
    let tmp = d.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    Work {
        _dir: dir,
        qrels,
        run,
        qrels_shuffled,
        run_split,
        tmp,
    }
}

fn eval(w: &Work, qrels: &Path, run: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "eval",
        qrels.to_str().unwrap(),
        run.to_str().unwrap(),
        "--per-goal",
        "--format",
        "tsv",
        "-m",
        "AP",
        "-m",
        "nDCG@10",
        "-m",
        "R@10",
    ];
    args.extend_from_slice(extra);
    cmd(&w.tmp, &args).output().unwrap()
}

#[test]
fn qrels_not_in_order_sorted_on_disk_give_the_held_output() {
    let w = work(2000);
    let held = ok(&eval(&w, &w.qrels_shuffled, &w.run, &["--hold-actual"]));
    assert!(held.lines().count() > 1000);
    // Within 64 KiB: sorted on disk, then joined.
    let o = eval(&w, &w.qrels_shuffled, &w.run, &["--memory", "64K"]);
    assert_eq!(ok(&o), held);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("sorted by goal on disk within --memory 64 KiB")
            && err.contains("sorted runs merged"),
        "{err}"
    );
    assert_eq!(entries(&w.tmp), 0);
    // The default budget holds them.
    let o = eval(&w, &w.qrels_shuffled, &w.run, &[]);
    assert_eq!(ok(&o), held);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("on disk"));
    // Sorted qrels, the run's goals in the same order: the same rows as for the sorted qrels.
    let sorted = ok(&eval(&w, &w.qrels, &w.run, &["--hold-actual"]));
    assert_eq!(ok(&eval(&w, &w.qrels, &w.run, &[])), sorted);
}

#[test]
fn regroup_sorts_in_memory_and_on_disk_alike() {
    let w = work(2000);
    // The run as gen writes it is sorted by goal in natural order: regrouping the split run
    // gives its output.
    let want = ok(&eval(&w, &w.qrels, &w.run, &["--hold-actual"]));
    let o = eval(&w, &w.qrels, &w.run_split, &["--regroup"]);
    assert_eq!(ok(&o), want);
    assert!(String::from_utf8_lossy(&o.stderr).contains("sorted by goal in memory"));
    let o = eval(
        &w,
        &w.qrels,
        &w.run_split,
        &["--regroup", "--memory", "64K"],
    );
    assert_eq!(ok(&o), want);
    assert!(String::from_utf8_lossy(&o.stderr).contains("sorted by goal on disk"));
    assert_eq!(entries(&w.tmp), 0);
    // trec_eval mode on the split run, sorted on disk: as on the run in order.
    let trec = |run: &Path, memory: &str| {
        ok(&cmd(
            &w.tmp,
            &[
                "trec_eval",
                "-q",
                "-m",
                "map",
                "-m",
                "ndcg_cut.10",
                "--memory",
                memory,
                w.qrels.to_str().unwrap(),
                run.to_str().unwrap(),
            ],
        )
        .output()
        .unwrap())
    };
    let want = trec(&w.run, "1G");
    assert!(want.contains("map"));
    assert_eq!(trec(&w.run_split, "64K"), want);
    assert_eq!(trec(&w.run_split, "1G"), want);
    assert_eq!(entries(&w.tmp), 0);
}

#[test]
fn an_error_while_sorted_on_disk_names_the_original_line_and_leaves_nothing() {
    let w = work(500);
    // A bad score in the middle of the split run.
    let text = std::fs::read_to_string(&w.run_split).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let n = lines.len() / 2;
    let fields: Vec<&str> = lines[n].split(' ').collect();
    lines[n] = format!("{} Q0 {} {} notanumber t", fields[0], fields[2], fields[3]);
    let bad = w.tmp.parent().unwrap().join("bad");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    for memory in ["64K", "1G"] {
        let o = eval(&w, &w.qrels, &bad, &["--regroup", "--memory", memory]);
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("bad:{}:", n + 1)) && err.contains("notanumber"),
            "{memory}: {err}"
        );
        assert_eq!(entries(&w.tmp), 0);
    }
    // A bad grade in the shuffled qrels, sorted on disk: its own line.
    let text = std::fs::read_to_string(&w.qrels_shuffled).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let n = lines.len() / 3;
    lines[n] = format!("{} 0 x notagrade", lines[n].split(' ').next().unwrap());
    let badq = w.tmp.parent().unwrap().join("badq");
    std::fs::write(&badq, lines.join("\n") + "\n").unwrap();
    let o = eval(&w, &badq, &w.run, &["--memory", "64K"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("badq:{}:", n + 1)), "{err}");
    assert_eq!(entries(&w.tmp), 0);
}

/// `eval` of the split run, regrouped on disk within 64 KiB.
fn split_on_disk(w: &Work) -> Command {
    let (q, r) = (w.qrels.to_str().unwrap(), w.run_split.to_str().unwrap());
    cmd(&w.tmp, &["eval", q, r, "--regroup", "--memory", "64K"])
}

#[test]
fn a_full_disk_while_sorting_is_an_error_with_nothing_left() {
    let w = work(2000);
    // Files of this process may not grow past 256 KiB (writes fail with EFBIG, as on a full
    // disk; SIGXFSZ ignored so that the write reports it).
    let mut c = split_on_disk(&w);
    // SAFETY: setrlimit and signal are async-signal-safe and touch no memory of the parent.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 256 << 10,
                rlim_max: 256 << 10,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &lim);
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        })
    };
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot sort by goal on disk: temporary file in")
            && err.contains("set TMPDIR to a directory with room, or raise --memory"),
        "{err}"
    );
    assert!(o.stdout.is_empty() || !String::from_utf8_lossy(&o.stdout).contains("all"));
    assert_eq!(entries(&w.tmp), 0);
}

#[test]
fn ctrl_c_while_sorting_leaves_no_temporary_file() {
    let w = work(40_000);
    let mut child = split_on_disk(&w)
        .arg("--quiet")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until it has temporary files open in TMPDIR (unnamed: seen only as its open files).
    let fds = PathBuf::from(format!("/proc/{}/fd", child.id()));
    let tmp = std::fs::canonicalize(&w.tmp).unwrap();
    let mut seen = false;
    for _ in 0..2000 {
        if let Ok(rd) = std::fs::read_dir(&fds) {
            seen = rd
                .flatten()
                .any(|e| std::fs::read_link(e.path()).is_ok_and(|t| t.starts_with(&tmp)));
        }
        if seen || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(seen, "no temporary file seen while it ran");
    assert_eq!(entries(&w.tmp), 0, "unnamed: never in the directory");
    // SAFETY: signalling a child of this process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert_eq!(entries(&w.tmp), 0);
}
