//! `trec_eval -R prefs` and `-R qrels_prefs`: every preference measure worked by hand on small
//! files written here (METRICS.md §8.5 has the definitions), and the errors.
//!
//! The preference file (`-R prefs`, lines `goal group subgroup lemma level`):
//!
//! ```text
//! g1 u s a 2    g1 u s b 1    g1 u s d 1    g1 u s c 0    g1 u s e 0
//! g1 v s1 f 1   g1 v s1 a 0   g1 v s2 c 2   g1 v s2 f 1
//! g2 u s p 1    g2 u s q 0
//! g3 u s a 1    g3 u s b 0
//! ```
//!
//! The run ranks `x a c b y f` for g1 (x, y unjudged) and `q p` for g2, tied at 1.0; g3 has no
//! ranking.
//!
//! **g1.** Places: the ranked judged lemmas in rank order, a 0, c 1, b 2, f 3 (r = 4), then the
//! unranked ones by name, d 4, e 5 (J = 6).
//!
//! Group u (one subgroup): classes {a} (2) > {b, d} (1) > {c, e} (0), 8 preferences:
//! a>b (0 before 2: fulfilled, ranked), a>c (0, 1: fulfilled, ranked), b>c (2 after 1: ranked, not
//! fulfilled), a>d, a>e, b>e (only the first ranked: fulfilled, implied), d>c (only c ranked:
//! implied, not fulfilled), d>e (neither ranked). fulfilled ranked 2 of 3, implied 3 of 4,
//! neither 1: 5 of 8. Relevant a, b, d (2 ranked), non-relevant c, e (1 ranked).
//!
//! Group v (subgroups s1: f > a; s2: c > f; and so c > a): f>a (3 after 0: not fulfilled),
//! c>f (1 before 3: fulfilled), c>a (1 after 0: not fulfilled): 1 of 3, all ranked. Relevant
//! f, c (both ranked), non-relevant a (ranked).
//!
//! * `prefs_num_prefs_poss` 8 + 3 = 11, `prefs_num_prefs_ful` 5 + 1 = 6, `_ful_ret` 2 + 1 = 3.
//! * `prefs_simp` 6/11; `_ret` (2 + 1)/(3 + 3) = 1/2; `_imp` (5 + 1)/(7 + 3) = 6/10.
//! * `prefs_avgjg` (5/8 + 1/3)/2; `_ret` (2/3 + 1/3)/2; `_imp` (5/7 + 1/3)/2.
//! * `prefs_avgjg_Rnonrel`: u has R = 3 >= N = 2: (5 + 2·1)/(8 + 3·1) = 7/11; v has R = 2 >= N
//!   = 1: (1 + 2·1)/(3 + 2·1) = 3/5; (7/11 + 3/5)/2. `_ret`: u R = 2 ranked relevant >= N = 1:
//!   (2 + 2·1)/(3 + 3·1) = 4/6; v: (1 + 2·1)/(3 + 2·1) = 3/5; (4/6 + 3/5)/2.
//! * `prefs_pair`: pairs of places with a preference, `c(i, j)/(c(i, j) + c(j, i))` for `i`
//!   before `j`. Both ranked: (0,1) a,c: 1 (u) against 1 (v): 1/2; (0,2) a,b: 1; (0,3) a,f: 0;
//!   (1,2) c,b: 0; (1,3) c,f: 1; 5 pairs, 2.5. One ranked: (0,4) a,d: 1; (0,5) a,e: 1; (1,4)
//!   c,d: 0; (2,5) b,e: 1; 4 pairs, 3. Neither: (4,5) d,e: 1 pair, 0. `_ret` 2.5/5, `_imp`
//!   5.5/9, `prefs_pair` 5.5/10.
//!
//! **g2.** q and p tie at 1.0: for preference files trec_eval breaks ties by name *ascending*
//! (p before q: its qrels order would put q first), so p>q is fulfilled and ranked: every ratio
//! is 1 and each count 1.
//!
//! **g3** has no ranking: skipped, or under `-c` evaluated as empty: a>b with neither ranked,
//! possible 1, everything else 0.

use std::process::{Command, Output};

const PREFS: &str = "g1 u s a 2\ng1 u s b 1\ng1 u s d 1\ng1 u s c 0\ng1 u s e 0\n\
                     g1 v s1 f 1\ng1 v s1 a 0\ng1 v s2 c 2\ng1 v s2 f 1\n\
                     g2 u s p 1\ng2 u s q 0\ng3 u s a 1\ng3 u s b 0\n";

const RUN: &str = "g1 Q0 x 1 9 hand\ng1 Q0 a 2 8 hand\ng1 Q0 c 3 7 hand\ng1 Q0 b 4 6 hand\n\
                   g1 Q0 y 5 5 hand\ng1 Q0 f 6 4 hand\ng2 Q0 q 1 1.0 hand\ng2 Q0 p 2 1.0 hand\n";

/// The measures of `all_prefs` in trec_eval's order.
const NAMES: [&str; 14] = [
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
];

/// g1's values (module documentation), in [`NAMES`]' order.
const G1: [f64; 14] = [
    11.0,
    6.0,
    3.0,
    6.0 / 11.0,
    5.5 / 10.0,
    (5.0 / 8.0 + 1.0 / 3.0) / 2.0,
    (7.0 / 11.0 + 3.0 / 5.0) / 2.0,
    3.0 / 6.0,
    2.5 / 5.0,
    (2.0 / 3.0 + 1.0 / 3.0) / 2.0,
    (4.0 / 6.0 + 3.0 / 5.0) / 2.0,
    6.0 / 10.0,
    5.5 / 9.0,
    (5.0 / 7.0 + 1.0 / 3.0) / 2.0,
];

/// g2's: one preference, fulfilled and ranked.
const G2: [f64; 14] = [1.0; 14];

/// g3's, without a ranking: one preference possible.
const G3: [f64; 14] = [
    1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
];

fn lemma_eval(args: &[&str], files: &[(&str, &str)]) -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_lemma-eval"))
        .current_dir(dir.path())
        .args(args)
        .output()
        .unwrap();
    (out, dir)
}

fn stdout(args: &[&str], files: &[(&str, &str)]) -> String {
    let (o, _dir) = lemma_eval(args, files);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// A failure: its exit code and message.
fn failure(args: &[&str], files: &[(&str, &str)]) -> (i32, String) {
    let (o, _dir) = lemma_eval(args, files);
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    (
        o.status.code().unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}

/// trec_eval's lines of one goal (or `all`): counts as integers, the others to four decimals.
fn lines(goal: &str, values: &[f64]) -> String {
    (NAMES.iter().zip(values))
        .map(|(n, v)| match n.starts_with("prefs_num") {
            true => format!("{n:<22}\t{goal}\t{}\n", *v as i64),
            false => format!("{n:<22}\t{goal}\t{v:.4}\n"),
        })
        .collect()
}

/// trec_eval's summary: counts summed, the others the running sum over `n` goals.
fn summary(goals: &[&[f64; 14]], n: usize) -> String {
    let mut s = format!("runid                 \tall\thand\nnum_q                 \tall\t{n}\n");
    let values: Vec<f64> = (0..14)
        .map(|i| {
            let sum = goals.iter().fold(0.0, |s, g| s + g[i]);
            if i < 3 {
                sum
            } else {
                sum / n as f64
            }
        })
        .collect();
    s += &lines("all", &values);
    s
}

#[test]
fn every_measure_by_hand() {
    let files = [("prefs", PREFS), ("run", RUN)];
    let args = [
        "trec_eval",
        "-q",
        "-m",
        "all_prefs",
        "-R",
        "prefs",
        "prefs",
        "run",
    ];
    // g3 has no ranking: skipped (trec_eval 10.0 stops instead; 9.0.8 skips it too).
    let want = lines("g1", &G1) + &lines("g2", &G2) + &summary(&[&G1, &G2], 2);
    assert_eq!(stdout(&args, &files), want);
    // Spot checks of the arithmetic against the printed digits.
    assert!(want.contains("prefs_avgjg           \tg1\t0.4792\n"));
    assert!(want.contains("prefs_pair_imp        \tg1\t0.6111\n"));
    assert!(want.contains("prefs_avgjg_Rnonrel_ret\tall\t0.8167\n"));
}

#[test]
fn complete_evaluates_goals_without_a_ranking() {
    let files = [("prefs", PREFS), ("run", RUN)];
    let args = [
        "trec_eval",
        "-q",
        "-c",
        "-m",
        "all_prefs",
        "-R",
        "prefs",
        "prefs",
        "run",
    ];
    let want =
        lines("g1", &G1) + &lines("g2", &G2) + &lines("g3", &G3) + &summary(&[&G1, &G2, &G3], 3);
    assert_eq!(stdout(&args, &files), want);
    // 9.0.8 never evaluates g3, but still averages over the three goals of the file.
    let v9 = ["--trec-version", "9"];
    let out = stdout(&[&args[..], &v9].concat(), &files);
    assert_eq!(
        out,
        lines("g1", &G1) + &lines("g2", &G2) + &summary(&[&G1, &G2], 3)
    );
}

#[test]
fn the_prefs_nickname_and_single_measures() {
    let files = [("prefs", PREFS), ("run", RUN)];
    let out = stdout(
        &["trec_eval", "-m", "prefs", "-R", "prefs", "prefs", "run"],
        &files,
    );
    let names: Vec<&str> = out
        .lines()
        .map(|l| l.split('\t').next().unwrap().trim())
        .collect();
    assert_eq!(names, [&["runid", "num_q"][..], &NAMES[..6]].concat());
    // Printed in table order whatever the -m order; no runid or num_q unless asked for.
    let out = stdout(
        &[
            "trec_eval",
            "-q",
            "-m",
            "prefs_pair_imp",
            "-m",
            "prefs_simp",
            "-R",
            "prefs",
            "prefs",
            "run",
        ],
        &files,
    );
    assert_eq!(
        out,
        format!(
            "prefs_simp            \tg1\t{:.4}\nprefs_pair_imp        \tg1\t{:.4}\n\
             prefs_simp            \tg2\t1.0000\nprefs_pair_imp        \tg2\t1.0000\n\
             prefs_simp            \tall\t{:.4}\nprefs_pair_imp        \tall\t{:.4}\n",
            G1[3],
            G1[12],
            (G1[3] + 1.0) / 2.0,
            (G1[12] + 1.0) / 2.0
        )
    );
}

/// `-R qrels_prefs` reads qrels as preferences: the `iter` field is the group.
///
/// Qrels: `g1 0 a 2`, `g1 0 b 1`, `g1 0 c 0` (group 0), `g1 1 d 1`, `g1 1 a 0` (group 1). The run
/// ranks b a d x: places b 0, a 1, d 2 (r = 3), c 3.
///
/// Group 0: a>b (1 after 0: ranked, not fulfilled), a>c, b>c (c unranked: implied, fulfilled):
/// ranked 0 of 1, implied 2 of 2; relevant a, b (ranked), non-relevant c (not ranked).
/// Group 1: d>a (2 after 1: not fulfilled): ranked 0 of 1; relevant d, non-relevant a (ranked).
///
/// poss 3 + 1 = 4, ful 2, ful_ret 0; simp 2/4, simp_ret 0/2, simp_imp 2/4; avgjg (2/3 + 0)/2,
/// avgjg_ret 0, avgjg_imp (2/3 + 0)/2. Rnonrel: group 0 R = 2 >= N = 1: (2 + 2·1)/(3 + 2·1) =
/// 4/5, group 1 R = N = 1: 0/1; 2/5. Rnonrel_ret: group 0 R = 2 ranked >= N = 0: (0 + 2·2)/(1 +
/// 2·2) = 4/5; group 1: 0/1; 2/5. Pairs both ranked: (0,1) b,a: 0/1, (1,2) a,d: 0/1; one ranked:
/// (0,3) b,c: 1, (1,3) a,c: 1. pair_ret 0/2, pair_imp 2/4, pair 2/4.
#[test]
fn qrels_prefs_by_hand() {
    let qrels = "g1 0 a 2\ng1 0 b 1\ng1 0 c 0\ng1 1 d 1\ng1 1 a 0\n";
    let run = "g1 Q0 b 1 3 hand\ng1 Q0 a 2 2 hand\ng1 Q0 d 3 1 hand\ng1 Q0 x 4 0.5 hand\n";
    let g1 = [
        4.0,
        2.0,
        0.0,
        2.0 / 4.0,
        2.0 / 4.0,
        (2.0 / 3.0) / 2.0,
        (4.0 / 5.0) / 2.0,
        0.0,
        0.0,
        0.0,
        (4.0 / 5.0) / 2.0,
        2.0 / 4.0,
        2.0 / 4.0,
        (2.0 / 3.0) / 2.0,
    ];
    let out = stdout(
        &[
            "trec_eval",
            "-q",
            "-m",
            "all_prefs",
            "-R",
            "qrels_prefs",
            "qrels",
            "run",
        ],
        &[("qrels", qrels), ("run", run)],
    );
    assert_eq!(out, lines("g1", &g1) + &summary(&[&g1], 1));
}

#[test]
fn z_scores_and_cut() {
    let files = [
        ("prefs", PREFS),
        ("run", RUN),
        ("z", "g1 prefs_simp 0.5 0.25\ng2 prefs_simp 1 0\n"),
    ];
    // g1: (6/11 - 0.5) / 0.25; g2: 0 (the mean, no spread).
    let out = stdout(
        &[
            "trec_eval",
            "-q",
            "-Z",
            "z",
            "-m",
            "prefs_simp",
            "-R",
            "prefs",
            "prefs",
            "run",
        ],
        &files,
    );
    let g1 = (6.0 / 11.0 - 0.5) / 0.25;
    assert_eq!(
        out,
        format!(
            "Zprefs_simp            \tg1\t{g1:.4}\nZprefs_simp            \tg2\t0.0000\n\
             Zprefs_simp            \tall\t{:.4}\n",
            g1 / 2.0
        )
    );
    // -M 2: g1 ranks x a only: places a 0 (r = 1), then b 1, c 2, d 3, e 4, f 5. Group u: a>b,
    // a>c, a>d, a>e fulfilled (implied); b>c, b>e, d>c, d>e neither: 4 of 8. Group v: f>a and
    // c>a implied, not fulfilled; c>f neither: 0 of 3. prefs_simp 4/11.
    let out = stdout(
        &[
            "trec_eval",
            "-q",
            "-M",
            "2",
            "-m",
            "prefs_simp",
            "-R",
            "prefs",
            "prefs",
            "run",
        ],
        &files,
    );
    assert!(
        out.starts_with(&format!("prefs_simp            \tg1\t{:.4}\n", 4.0 / 11.0)),
        "{out}"
    );
}

#[test]
fn malformed_lines_name_the_file_and_the_first_line() {
    // Lines 3 (goal z) and 5 (goal a) are malformed: the first in the file is named, whatever the
    // goals' order.
    let prefs = "a u s x 1\na u s y 0\nz u s x\na u s w 2\na u s v high\n";
    let (code, err) = failure(
        &[
            "trec_eval",
            "-m",
            "all_prefs",
            "-R",
            "prefs",
            "prefs",
            "run",
        ],
        &[("prefs", prefs), ("run", RUN)],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("prefs:3: expected 5 fields (goal group subgroup lemma level), found 4"),
        "{err}"
    );
    let (code, err) = failure(
        &[
            "trec_eval",
            "-m",
            "all_prefs",
            "-R",
            "prefs",
            "prefs",
            "run",
        ],
        &[("prefs", "a u s x 1\na u s v high\n"), ("run", RUN)],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("prefs:2: expected a finite number as the level (field 5), found `high`"),
        "{err}"
    );
    // qrels_prefs reads four fields.
    let (code, err) = failure(
        &[
            "trec_eval",
            "-m",
            "all_prefs",
            "-R",
            "qrels_prefs",
            "prefs",
            "run",
        ],
        &[("prefs", PREFS), ("run", RUN)],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("prefs:1: expected 4 fields (goal iter lemma level), found more"),
        "{err}"
    );
    // A malformed run line too.
    let (code, err) = failure(
        &[
            "trec_eval",
            "-m",
            "all_prefs",
            "-R",
            "prefs",
            "prefs",
            "run",
        ],
        &[("prefs", PREFS), ("run", "g1 Q0 a 1 x t\n")],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("run:1: expected a finite number as the score"),
        "{err}"
    );
    // Empty, or only comments.
    let (code, err) = failure(
        &[
            "trec_eval",
            "-m",
            "all_prefs",
            "-R",
            "prefs",
            "prefs",
            "run",
        ],
        &[("prefs", "# nothing\n"), ("run", RUN)],
    );
    assert_eq!(code, 2);
    assert!(err.contains("prefs: has no judgments"), "{err}");
}

#[test]
fn judgments_that_cannot_be_counted_stop_with_4() {
    let run = "g1 Q0 a 1 3 t\ng1 Q0 b 2 2 t\ng1 Q0 c 3 1 t\n";
    let cases = [
        // One subgroup, a at two levels.
        (
            "g1 u s a 2\ng1 u s a 1\ng1 u s b 0\n",
            "lemma `a` has two different levels",
        ),
        // Several subgroups, a at 0 and at 1.
        (
            "g1 u s a 0\ng1 u s b 1\ng1 u t a 1\ng1 u t c 0\n",
            "lemma `a` has level 0 in one subgroup and a level above 0 in another",
        ),
        // a > b in one subgroup, b > a in another (trec_eval aborts).
        (
            "g1 u s a 2\ng1 u s b 1\ng1 u t b 2\ng1 u t a 1\n",
            "lemmas `a` and `b` are each preferred to the other",
        ),
    ];
    for (prefs, message) in cases {
        let (code, err) = failure(
            &[
                "trec_eval",
                "-m",
                "all_prefs",
                "-R",
                "prefs",
                "prefs",
                "run",
            ],
            &[("prefs", prefs), ("run", run)],
        );
        assert_eq!(code, 4, "{err}");
        assert!(
            err.contains(message) && err.contains("goal `g1`, group `u`"),
            "{err}"
        );
    }
    // A lemma twice in the ranking (within -M).
    let twice = "g1 Q0 a 1 3 t\ng1 Q0 b 2 2 t\ng1 Q0 a 3 1 t\n";
    let files = [("prefs", "g1 u s a 1\ng1 u s b 0\n"), ("run", twice)];
    let (code, err) = failure(
        &[
            "trec_eval",
            "-m",
            "prefs_simp",
            "-R",
            "prefs",
            "prefs",
            "run",
        ],
        &files,
    );
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains("run:3: lemma `a` appears twice in goal `g1` (first at line 1)"),
        "{err}"
    );
    // Past -M the second a is not ranked; runid and num_q read no ranking.
    for args in [&["-M", "2", "-m", "prefs_simp"][..], &["-m", "num_q"]] {
        let all = [&["trec_eval"][..], args, &["-R", "prefs", "prefs", "run"]].concat();
        stdout(&all, &files);
    }
}

#[test]
fn measures_of_the_other_kind_of_file() {
    let files = [("prefs", PREFS), ("run", RUN), ("qrels", "g1 0 a 1\n")];
    // trec_eval's default (official) reads qrels: "Can't calculate measure", exit 4.
    let (code, err) = failure(&["trec_eval", "-R", "prefs", "prefs", "run"], &files);
    assert_eq!(code, 4);
    assert!(err.contains("`num_ret` reads qrels"), "{err}");
    // runid and num_q read neither.
    let out = stdout(
        &[
            "trec_eval",
            "-m",
            "runid",
            "-m",
            "num_q",
            "-R",
            "prefs",
            "prefs",
            "run",
        ],
        &files,
    );
    assert_eq!(
        out,
        "runid                 \tall\thand\nnum_q                 \tall\t2\n"
    );
    // A preference measure under -R qrels.
    let (code, err) = failure(&["trec_eval", "-m", "prefs_simp", "qrels", "run"], &files);
    assert_eq!(code, 4);
    assert!(
        err.contains("`prefs_simp` reads preference judgments"),
        "{err}"
    );
    // Judgment groups give only their own measures: the default ones stop the command.
    let (code, err) = failure(&["trec_eval", "-R", "qrels_jg", "qrels", "run"], &files);
    assert_eq!(code, 4);
    assert!(
        err.contains("with -R qrels_jg only map_avgjg, P_avgjg and Rprec_mult_avgjg"),
        "{err}"
    );
    // No goal in both files.
    let (code, _) = failure(
        &[
            "trec_eval",
            "-m",
            "all_prefs",
            "-R",
            "prefs",
            "prefs",
            "run",
        ],
        &[("prefs", "h1 u s a 1\n"), ("run", RUN)],
    );
    assert_eq!(code, 7);
}

#[test]
fn version_9_rounds_scores_and_levels_to_f32() {
    let v9 = ["--trec-version", "9"];
    // Levels 1.00000001 and 1 differ as doubles (a > b), tie as floats (no preference).
    let files = [
        ("prefs", "g1 u s a 1.00000001\ng1 u s b 1\n"),
        ("run", "g1 Q0 a 1 1 t\n"),
    ];
    let args = [
        "trec_eval",
        "-m",
        "prefs_num_prefs_poss",
        "-R",
        "prefs",
        "prefs",
        "run",
    ];
    assert_eq!(stdout(&args, &files), "prefs_num_prefs_poss  \tall\t1\n");
    let out = stdout(&[&args[..], &v9].concat(), &files);
    assert_eq!(out, "prefs_num_prefs_poss  \tall\t0\n");
    // Scores 0.5 and 0.5000000001: b above a as doubles (a > b not fulfilled); tied as floats,
    // a first by name (fulfilled).
    let files = [
        ("prefs", "g1 u s a 1\ng1 u s b 0\n"),
        ("run", "g1 Q0 a 1 0.5 t\ng1 Q0 b 2 0.5000000001 t\n"),
    ];
    let args = [
        "trec_eval",
        "-m",
        "prefs_num_prefs_ful",
        "-R",
        "prefs",
        "prefs",
        "run",
    ];
    assert_eq!(stdout(&args, &files), "prefs_num_prefs_ful   \tall\t0\n");
    let out = stdout(&[&args[..], &v9].concat(), &files);
    assert_eq!(out, "prefs_num_prefs_ful   \tall\t1\n");
    // 9.0.8 has no comment lines: refused, as for qrels.
    let (code, err) = failure(
        &[&args[..], &v9].concat(),
        &[("prefs", "# c\ng1 u s a 1\n"), ("run", "g1 Q0 a 1 1 t\n")],
    );
    assert_eq!(code, 2);
    assert!(err.contains("prefs:1: a line starting with `#`"), "{err}");
}
