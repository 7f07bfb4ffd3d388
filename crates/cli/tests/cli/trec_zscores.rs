//! `trec_eval -Z FILE`: each goal's values as z-scores against a reference file, worked by hand.
//!
//! Qrels: g1 has a, c relevant and b not (R = 2); g2 has d (R = 1); g3 has e, and is in no run.
//! The run ranks a, b, c for g1 (AP = (1/1 + 2/3) / 2 = 5/6, P_5 = 2/5, 3 retrieved, 2 relevant)
//! and x (unjudged), d for g2 (AP = 1/2, P_5 = 1/5, 2 retrieved, 1 relevant).
//!
//! The z-score file gives, for g1: map (0.5, 0.25) -> (5/6 - 0.5) / 0.25 = 4/3; num_ret (2, 0.5)
//! -> 2; P_5 (0.4, 0) -> 0 (the value is the mean); gm_map (-0.5, 1) -> ln(5/6) + 0.5;
//! num_rel (2, 1) -> 0; num_rel_ret (1, 1) -> 1. For g2: map (0.5, 0.5) -> 0; P_5 (0.3, 0) ->
//! -1000000 (not the mean, no spread); num_ret none -> -1000000; num_rel (0, 1) -> 1;
//! num_rel_ret (1, 2) -> 0; gm_map (0, 1) -> ln(1/2). g3 has no line: all its values -1000000.

use std::process::{Command, Output};

const MEASURES: &[&str] = &[
    "-m",
    "map",
    "-m",
    "P.5",
    "-m",
    "num_ret",
    "-m",
    "num_rel",
    "-m",
    "num_rel_ret",
    "-m",
    "gm_map",
    "-m",
    "num_q",
    "-m",
    "runid",
    "-m",
    "relstring",
];

const ZSCORES: &str = "g1 map 0.5 0.25\ng1 num_ret 2 0.5\ng1 P_5 0.4 0\ng1 gm_map -0.5 1\n\
                       g1 num_rel 2 1\ng1 num_rel_ret 1 1\ng2 map 0.5 0.5\ng2 P_5 0.3 0\n\
                       g2\tnum_rel 0 1\n  g2 num_rel_ret   1 2\ng2 gm_map 0 1\nzz map 0 1\n";

fn run(args: &[&str], zscores: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let path = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let (q, r, z) = (path("qrels"), path("run"), path("z.txt"));
    std::fs::write(&q, "g1 0 a 1\ng1 0 b 0\ng1 0 c 1\ng2 0 d 1\ng3 0 e 1\n").unwrap();
    std::fs::write(
        &r,
        "g1 Q0 a 1 0.9 run\ng1 Q0 b 2 0.8 run\ng1 Q0 c 3 0.7 run\n\
         g2 Q0 x 1 0.9 run\ng2 Q0 d 2 0.8 run\n",
    )
    .unwrap();
    std::fs::write(&z, zscores).unwrap();
    let mut all = vec!["trec_eval"];
    all.extend_from_slice(args);
    all.extend_from_slice(MEASURES);
    all.extend_from_slice(&["-Z", &z, &q, &r]);
    Command::new(env!("CARGO_BIN_EXE_lemma-eval"))
        .args(&all)
        .output()
        .unwrap()
}

fn out(args: &[&str]) -> String {
    let o = run(args, ZSCORES);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// `Z`, the name padded to 22, the goal, the value to four decimals (counts too).
fn z(name: &str, goal: &str, v: f64) -> String {
    format!("Z{name:<22}\t{goal}\t{v:.4}\n")
}

fn per_goal(g3: bool) -> String {
    let m = -1_000_000.0;
    let mut s = [
        z("num_ret", "g1", 2.0),
        z("num_rel", "g1", 0.0),
        z("num_rel_ret", "g1", 1.0),
        z("map", "g1", 4.0 / 3.0),
        z("P_5", "g1", 0.0),
        "relstring             \tg1\t'101'\n".to_string(),
        z("num_ret", "g2", m),
        z("num_rel", "g2", 1.0),
        z("num_rel_ret", "g2", 0.0),
        z("map", "g2", 0.0),
        z("P_5", "g2", m),
        "relstring             \tg2\t'-1'\n".to_string(),
    ]
    .concat();
    if g3 {
        for n in ["num_ret", "num_rel", "num_rel_ret", "map", "P_5"] {
            s += &z(n, "g3", m);
        }
        s += "relstring             \tg3\t''\n";
    }
    s
}

#[test]
fn per_goal_and_summary_by_hand() {
    let gm = (((5.0f64 / 6.0).ln() + 0.5 + 0.5f64.ln()) / 2.0).exp();
    let summary = [
        "runid                 \tall\trun\n".to_string(),
        z("num_q", "all", 2.0),
        z("num_ret", "all", 2.0 - 1e6),
        z("num_rel", "all", 1.0),
        z("num_rel_ret", "all", 1.0),
        z("map", "all", 2.0 / 3.0),
        z("gm_map", "all", gm),
        z("P_5", "all", -500_000.0),
    ]
    .concat();
    assert_eq!(format!("{gm:.4}"), "0.8288");
    for v in ["9", "10"] {
        assert_eq!(
            out(&["--trec-version", v, "-q"]),
            per_goal(false) + &summary,
            "{v}"
        );
        assert_eq!(out(&["--trec-version", v]), summary, "{v}");
    }
}

/// `-c`: 10.0 evaluates g3 as an empty ranking and converts it (all -1000000: no line for it);
/// 9.0.8 never evaluates it, so it adds nothing, and divides by 3. num_rel under `-c` is the
/// qrels' count (4), num_q the qrels' goals (3), in both.
#[test]
fn complete_under_both_versions() {
    let m = -1e6;
    let ten = [
        "runid                 \tall\trun\n".to_string(),
        z("num_q", "all", 3.0),
        z("num_ret", "all", 2.0 + 2.0 * m),
        z("num_rel", "all", 4.0),
        z("num_rel_ret", "all", 1.0 + m),
        z("map", "all", (4.0 / 3.0 + m) / 3.0),
        z("gm_map", "all", 0.0),
        z("P_5", "all", 2.0 * m / 3.0),
    ]
    .concat();
    assert_eq!(
        out(&["--trec-version", "10", "-q", "-c"]),
        per_goal(true) + &ten
    );
    // 9.0.8: gm_map adds ln(1e-5) for g3, unconverted.
    let gm = (((5.0f64 / 6.0).ln() + 0.5 + 0.5f64.ln() + 1e-5f64.ln()) / 3.0).exp();
    let nine = [
        "runid                 \tall\trun\n".to_string(),
        z("num_q", "all", 3.0),
        z("num_ret", "all", 2.0 + m),
        z("num_rel", "all", 4.0),
        z("num_rel_ret", "all", 1.0),
        z("map", "all", 4.0 / 9.0),
        z("gm_map", "all", gm),
        z("P_5", "all", m / 3.0),
    ]
    .concat();
    assert_eq!(format!("{gm:.4}"), "0.0190");
    assert_eq!(
        out(&["--trec-version", "9", "-q", "-c"]),
        per_goal(false) + &nine
    );
}

#[test]
fn bad_zscore_files_name_the_file_and_line() {
    for (text, what) in [
        ("g1 map 0.5 0.25\ng1 map 0.5\n", "z.txt:2"),
        ("g1 map 0.5 0.25\ng1 map nope 1\n", "not a number: `nope`"),
        ("g1 map 0.5 0.25\ng1 map 0.1 1\n", "given twice"),
        ("", "empty z-score file"),
    ] {
        let o = run(&[], text);
        assert_eq!(o.status.code(), Some(2), "{text:?}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(what) && e.contains("z.txt"), "{text:?}: {e}");
        assert!(o.stdout.is_empty());
    }
}
