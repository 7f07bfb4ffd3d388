//! Kills at random moments: `eval -o A --summary-out B` and `curve -o A --plot B` over a
//! generated run of 20,000 goals (about 0.2 s a run), A and B existing beforehand with known
//! content, are sent SIGTERM, SIGINT or SIGKILL at seeded random moments, half of them over the
//! whole run and half near its end, where the outputs are committed (then a few more, early or
//! late, if the machine's load moved every moment to one side of the commit). Afterwards A and B are each
//! old or new whole, never B new with A old (A is renamed first); with SIGTERM and SIGINT they are
//! both old or both new and nothing else is in their directory. SIGKILL cannot be caught: between
//! the two renames it leaves A new with B old and B's hidden temporary (`.B.XXXXXX`), which the
//! suite counts and prints. `LEMMA_KILL_SEED` changes the seed.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_lemma-eval");

/// splitmix64: the suite's moments, from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut x = self.0;
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^ (x >> 31)
    }

    /// Uniform in `[lo, hi)`.
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// How the kills of one signal ended.
#[derive(Default, Debug)]
struct Tally {
    /// Ended by the signal with both outputs old: killed before the commit.
    before: u32,
    /// Ended by the signal with both outputs new: during or after the renames.
    after: u32,
    /// Exited 0 before the signal came.
    finished: u32,
    /// SIGKILL between the renames: A new, B old.
    split: u32,
    /// SIGKILL with a hidden temporary left.
    left: u32,
}

/// Runs `args` (outputs `A` and `B` in `out`) `runs` times for each signal, killing it at a
/// random moment: never a mixed set, never a leftover temporary, as the module says.
fn kill_suite(what: &str, args: &[String], out: &Path, signals: &[(libc::c_int, u32)]) {
    let (a, b) = (out.join("A"), out.join("B"));
    let (old_a, old_b) = (b"old A\n".to_vec(), b"old B\n".to_vec());
    let run = || {
        Command::new(BIN)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // The new outputs, and how long a whole run takes here: the median of the last 9 runs that
    // finished (the machine's load changes it), from 5 at first.
    let mut took = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let o = run().wait_with_output().unwrap();
        took.push(t.elapsed().as_secs_f64());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let whole = |took: &[f64]| {
        let mut last = took[took.len().saturating_sub(9)..].to_vec();
        last.sort_by(f64::total_cmp);
        last[last.len() / 2]
    };
    let (new_a, new_b) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert!(new_a.len() > 100 && new_b.len() > 1000, "{what}");
    let seed: u64 = std::env::var("LEMMA_KILL_SEED").map_or(7, |s| s.parse().unwrap());
    let mut rng = Rng(seed ^ what.len() as u64);
    for &(sig, runs) in signals {
        let mut tally = Tally::default();
        // After the seeded kills, up to 20 more at a moment sure to be early (a tenth of a run)
        // or late (two runs) while one end of the run was never reached: a machine whose load
        // changed under the suite moves every seeded moment to one side.
        for i in 0..runs + 20 {
            let late = tally.after + tally.finished + tally.split;
            if i >= runs && tally.before > 0 && late > 0 {
                break;
            }
            std::fs::write(&a, &old_a).unwrap();
            std::fs::write(&b, &old_b).unwrap();
            let whole = whole(&took);
            let at = match (i >= runs, i % 2) {
                (true, _) if tally.before == 0 => 0.1 * whole,
                (true, _) => 2.0 * whole,
                (false, 0) => rng.uniform(0.0, 1.05 * whole),
                (false, _) => rng.uniform(0.8 * whole, 1.15 * whole),
            };
            let start = Instant::now();
            let mut child = run();
            let wait = Duration::from_secs_f64(at).saturating_sub(start.elapsed());
            std::thread::sleep(wait);
            // SAFETY: signalling a child of this process, not yet reaped.
            unsafe { libc::kill(child.id() as libc::pid_t, sig) };
            let status = child.wait().unwrap();
            let ran = start.elapsed().as_secs_f64();
            let case = format!("{what}, signal {sig}, run {i} (seed {seed}), at {at:.3} s");
            let got_a = std::fs::read(&a).unwrap();
            let got_b = std::fs::read(&b).unwrap();
            let is_new = |got: &[u8], old: &[u8], new: &[u8], name: &str| match got {
                g if g == new => true,
                g if g == old => false,
                g => panic!("{case}: {name} is neither old nor new: {} bytes", g.len()),
            };
            let a_new = is_new(&got_a, &old_a, &new_a, "A");
            let b_new = is_new(&got_b, &old_b, &new_b, "B");
            assert!(a_new || !b_new, "{case}: a new B with the old A");
            let mut names = names_in(out);
            names.retain(|n| n != "A" && n != "B");
            if status.success() {
                assert!(a_new && b_new, "{case}: exit 0 with an old output");
                assert!(names.is_empty(), "{case}: left {names:?}");
                took.push(ran);
                tally.finished += 1;
                continue;
            }
            assert_eq!(status.signal(), Some(sig), "{case}: {status:?}");
            if sig == libc::SIGKILL {
                for n in &names {
                    assert!(n.starts_with(".A.") || n.starts_with(".B."), "{case}: {n}");
                    std::fs::remove_file(out.join(n)).unwrap();
                }
                tally.left += u32::from(!names.is_empty());
                if a_new && !b_new {
                    tally.split += 1;
                    continue;
                }
            } else {
                assert!(names.is_empty(), "{case}: left {names:?}");
                assert_eq!(a_new, b_new, "{case}: a new A with the old B");
            }
            match a_new {
                true => tally.after += 1,
                false => tally.before += 1,
            }
        }
        let whole = whole(&took);
        eprintln!("{what}: a run {whole:.3} s; signal {sig}: {tally:?}");
        // Both ends of the run were reached.
        let late = tally.after + tally.finished + tally.split;
        assert!(tally.before > 0 && late > 0, "{what}: {tally:?}");
    }
}

/// A generated workload (20,000 goals, 100 ranked lemmas each: a 105 MB run) in `dir`.
fn workload(dir: &Path) -> (String, String) {
    let (q, r) = (dir.join("q"), dir.join("r"));
    let (q, r) = (q.to_str().unwrap(), r.to_str().unwrap());
    let o = Command::new(BIN)
        .args([
            "gen",
            "--goals",
            "20000",
            "--universe",
            "50000",
            "--depth",
            "100",
        ])
        .args(["--qrels", q, "--run", r])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (q.to_string(), r.to_string())
}

#[test]
fn killed_runs_never_leave_a_mixed_set_or_a_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = workload(dir.path());
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let o = |n: &str| out.join(n).to_string_lossy().into_owned();
    let eval: Vec<String> = ["eval", &q, &r, "--per-goal", "--format", "tsv", "--quiet"]
        .into_iter()
        .map(String::from)
        .chain(["-o".into(), o("A"), "--summary-out".into(), o("B")])
        .collect();
    let signals = [(libc::SIGTERM, 80), (libc::SIGINT, 40), (libc::SIGKILL, 80)];
    kill_suite("eval -o A --summary-out B", &eval, &out, &signals);
    let curve: Vec<String> = ["curve", &q, &r]
        .into_iter()
        .map(String::from)
        .chain(["-o".into(), o("A"), "--plot".into(), o("B")])
        .collect();
    let signals = [(libc::SIGTERM, 40), (libc::SIGKILL, 20)];
    kill_suite("curve -o A --plot B", &curve, &out, &signals);
}
