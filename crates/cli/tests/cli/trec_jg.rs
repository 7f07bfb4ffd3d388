//! `trec_eval -R qrels_jg` (judgment groups) and trec_eval's parameter forms of `ndcg`, `dcg`,
//! `ideal_dcg` (custom gains) and `11pt_avg` (custom levels), on small data worked by hand.

use crate::common;
use common::{fails, ok, run};

/// Writes `files` (name, text) into a new directory; returns it and the paths.
fn files(files: &[(&str, &str)]) -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let paths = files
        .iter()
        .map(|(name, text)| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p.to_string_lossy().into_owned()
        })
        .collect();
    (dir, paths)
}

/// g1 has groups `a` (d1, d3 relevant, d5 not; R = 2) and `b` (d2, d6 relevant, d4 not; R = 2);
/// g2 has group `a` alone (d1). The run ranks d1 .. d5 for g1, d1 d9 for g2.
const JG: &str = "g1 a d1 1\ng1 a d3 1\n# a comment\ng1 a d5 0\ng1 b d2 1\ng1 b d4 0\n\
                  g1 b d6 1\ng2 a d1 1\n";
const RUN: &str = "g1 Q0 d1 1 0.9 r\ng1 Q0 d2 2 0.8 r\ng1 Q0 d3 3 0.7 r\ng1 Q0 d4 4 0.6 r\n\
                   g1 Q0 d5 5 0.5 r\ng2 Q0 d1 1 0.9 r\ng2 Q0 d9 2 0.8 r\n";

#[test]
fn judgment_groups_by_hand() {
    let (_d, p) = files(&[("jg", JG), ("run", RUN)]);
    let m = [
        "-m",
        "map_avgjg",
        "-m",
        "P_avgjg.2,5",
        "-m",
        "Rprec_mult_avgjg.2.0",
        "-m",
        "num_q",
    ];
    let mut args = vec!["trec_eval", "-q", "-R", "qrels_jg"];
    args.extend(m);
    args.extend([p[0].as_str(), p[1].as_str()]);
    // g1: AP a = (1/1 + 2/3) / 2 = 5/6, AP b = (1/2) / 2 = 1/4: map_avgjg (5/6 + 1/4) / 2 =
    // 13/24. P@2: 1/2 in both; P@5: 2/5 and 1/5, mean 3/10. Rprec_mult 2.0: c = (long)(2·2 +
    // 0.9) = 4: s(4)/4 = 2/4 and 1/4, mean 3/8.
    // g2 (group a alone): AP 1, P@2 1/2, P@5 1/5; c = (long)(2·1 + 0.9) = 2: s(2)/2 = 1/2.
    // Means over the two goals: map (13/24 + 1) / 2 = 37/48 = 0.7708; P_5 (3/10 + 1/5) / 2;
    // Rprec_mult (3/8 + 1/2) / 2 = 0.4375.
    assert_eq!(
        ok(&args),
        "map_avgjg             \tg1\t0.5417\n\
         P_avgjg_2             \tg1\t0.5000\n\
         P_avgjg_5             \tg1\t0.3000\n\
         Rprec_mult_avgjg_2.00 \tg1\t0.3750\n\
         map_avgjg             \tg2\t1.0000\n\
         P_avgjg_2             \tg2\t0.5000\n\
         P_avgjg_5             \tg2\t0.2000\n\
         Rprec_mult_avgjg_2.00 \tg2\t0.5000\n\
         num_q                 \tall\t2\n\
         map_avgjg             \tall\t0.7708\n\
         P_avgjg_2             \tall\t0.5000\n\
         P_avgjg_5             \tall\t0.2500\n\
         Rprec_mult_avgjg_2.00 \tall\t0.4375\n"
    );
    // The nickname: runid, num_q and the three measures at their default parameters.
    let o = ok(&[
        "trec_eval",
        "-R",
        "qrels_jg",
        "-m",
        "qrels_jg",
        &p[0],
        &p[1],
    ]);
    assert!(o.starts_with("runid                 \tall\tr\nnum_q                 \tall\t2\n"));
    assert!(o.contains("P_avgjg_1000          \tall\t"), "{o}");
    assert!(o.contains("Rprec_mult_avgjg_0.20 \tall\t"), "{o}");
    assert_eq!(o.lines().count(), 2 + 1 + 9 + 10);
}

#[test]
fn judgment_groups_refuse_what_trec_eval_cannot_compute() {
    let (_d, p) = files(&[("jg", JG), ("run", RUN), ("qrels", "g1 0 d1 1\n")]);
    // trec_eval's "Can't calculate measure" (exit 4): map reads ordinary qrels, map_avgjg
    // judgment groups; the default measures are map's kind.
    for (args, what) in [
        (vec!["-R", "qrels_jg", "-m", "map", &p[0]], "`map`"),
        (vec!["-R", "qrels_jg", &p[0]], "`num_ret`"),
        (vec!["-m", "map_avgjg", &p[2]], "`map_avgjg`"),
    ] {
        let mut a = vec!["trec_eval"];
        a.extend(args);
        a.push(&p[1]);
        let o = run(&a);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(4), "{a:?}: {e}");
        assert!(e.contains(what) && o.stdout.is_empty(), "{a:?}: {e}");
    }
    // Only trec_eval's subcommand averages over judgment groups.
    let o = run(&["eval", "-m", "map_avgjg", &p[2], &p[1]]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("-R qrels_jg"));
}

#[test]
fn malformed_judgment_groups_name_the_file_and_line() {
    for (text, line, what) in [
        (
            "g1 a d1 1\ng1 a d2\n",
            2,
            "expected 4 fields (goal group lemma grade), found 3",
        ),
        ("g1 a d1 1\ng1 a d2 x\n", 2, "not a whole number: `x`"),
        ("g1 a d1 1\ng1 b d1 0\ng1 a d1 0\n", 3, "judged twice"),
    ] {
        let (_d, p) = files(&[("bad-jg", text), ("run", RUN)]);
        let e = fails(&[
            "trec_eval",
            "-R",
            "qrels_jg",
            "-m",
            "map_avgjg",
            &p[0],
            &p[1],
        ]);
        assert!(
            e.contains("bad-jg") && e.contains(&format!(":{line}")) && e.contains(what),
            "{e}"
        );
    }
    // 9.0.8 has no comments: a `#` line is refused, naming it.
    let (_d, p) = files(&[("jg", JG), ("run", RUN)]);
    let e = fails(&[
        "trec_eval",
        "--trec-version",
        "9",
        "-R",
        "qrels_jg",
        "-m",
        "map_avgjg",
        &p[0],
        &p[1],
    ]);
    assert!(e.contains(":3") && e.contains("`#`"), "{e}");
    // The run is read once per group: not from stdin.
    let e = fails(&["trec_eval", "-R", "qrels_jg", "-m", "map_avgjg", &p[0], "-"]);
    assert!(e.contains("once per judgment group"), "{e}");
    // Judgment groups read as preferences: a line has four fields, not five.
    let e = fails(&["trec_eval", "-R", "prefs", &p[0], &p[1]]);
    assert!(
        e.contains(":1: expected 5 fields (goal group subgroup lemma level), found 4"),
        "{e}"
    );
}

/// One goal: a 2, b 0, c 1, d 3 judged (R = 3); the run ranks b a x c (x not judged).
const Q: &str = "g1 0 a 2\ng1 0 b 0\ng1 0 c 1\ng1 0 d 3\n";
const R: &str = "g1 Q0 b 1 0.9 r\ng1 Q0 a 2 0.8 r\ng1 Q0 x 3 0.7 r\ng1 Q0 c 4 0.6 r\n";

fn trec(args: &[&str]) -> String {
    let (_d, p) = files(&[("q", Q), ("r", R)]);
    let mut a = vec!["trec_eval"];
    a.extend_from_slice(args);
    a.extend([p[0].as_str(), p[1].as_str()]);
    ok(&a)
}

#[test]
fn custom_gains_by_hand() {
    // Gains: 1 -> 3, 2 -> 9, the others their grade (0 -> 0, 3 -> 3). DCG: a (9) at rank 2,
    // c (3) at rank 4: 9/log2(3) + 3/log2(5) = 6.9704. The ideal ranking: a (9), then d and c
    // (3 each): 9 + 3/log2(3) + 3/log2(4) = 12.3928; nDCG 6.9704 / 12.3928 = 0.5625.
    assert_eq!(
        trec(&["-m", "ndcg.1=3,2=9"]),
        "ndcg_1=3,2=9          \tall\t0.5625\n"
    );
    assert_eq!(
        trec(&["-m", "dcg.1=3,2=9"]),
        "dcg_1=3,2=9           \tall\t6.9704\n"
    );
    assert_eq!(
        trec(&["-m", "ideal_dcg.1=3,2=9"]),
        "ideal_dcg_1=3,2=9     \tall\t12.3928\n"
    );
    // Without gains, each grade gains itself: DCG 2/log2(3) + 1/log2(5), ideal 3 + 2/log2(3) +
    // 1/2.
    assert_eq!(
        trec(&["-m", "ndcg"]),
        trec(&["-m", "ndcg.1=1,2=2"]).replace("ndcg_1=1,2=2", "ndcg        ")
    );
    // A malformed pair list is named (exit 2).
    let (_d, p) = files(&[("q", Q), ("r", R)]);
    let e = fails(&["trec_eval", "-m", "ndcg.1=3,2", &p[0], &p[1]]);
    assert!(e.contains("malformed pair parameters in `1=3,2`"), "{e}");
    let e = fails(&["trec_eval", "-m", "G.1=3", &p[0], &p[1]]);
    assert!(
        e.contains("G with custom gains (`1=3`) is not supported"),
        "{e}"
    );
}

#[test]
fn custom_levels_by_hand() {
    // s(n) = 2 of R = 3, relevant at ranks 2 and 4: p = 1/2 and 2/4. Level 0.5 needs
    // lround(1.5) = 2 (IPrec 1/2), level 1.0 needs 3 (never reached): (1/2 + 0) / 2.
    assert_eq!(
        trec(&["-m", "11pt_avg.0.5,1.0"]),
        "11pt_avg_0.5,1.0      \tall\t0.2500\n"
    );
    // trec_eval reads the levels from the last: 0.5 is taken when 2 are found, and 1.0, left
    // behind, is given the best precision (1/2): (1/2 + 1/2) / 2.
    assert_eq!(
        trec(&["-m", "11pt_avg.1.0,0.5"]),
        "11pt_avg_1.0,0.5      \tall\t0.5000\n"
    );
    // `..25` is trec_eval's `.` and the list `.25`.
    assert_eq!(
        trec(&["-m", "11pt_avg..25"]),
        "11pt_avg_.25          \tall\t0.5000\n"
    );
}
