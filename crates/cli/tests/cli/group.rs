//! `eval --group-by`: the summary is the mean over groups of each group's mean, against sums
//! done by hand; per-goal rows unchanged; every goal its own group is the ungrouped summary.

use std::path::Path;

use crate::common;
use common::{fails, ok, run};

/// Seven goals, each with one relevant premise `rel` ranked at `k` (AP = 1/k): theorems T1
/// {g1}, T2 {g2, g3}, T3 {g4, g5, g6} (groups of 1, 2 and 3 goals) and g7 with no theorem; files
/// A {g1, g2, g3, g4}, B {g5, g6, g7}.
const GOALS: [(&str, usize, Option<&str>, &str); 7] = [
    ("g1", 1, Some("T1"), "A"),
    ("g2", 2, Some("T2"), "A"),
    ("g3", 4, Some("T2"), "A"),
    ("g4", 1, Some("T3"), "A"),
    ("g5", 2, Some("T3"), "B"),
    ("g6", 3, Some("T3"), "B"),
    ("g7", 2, None, "B"),
];

/// Writes actual.jsonl (with `theorem`), qrels.txt, goals.jsonl (`file_path`, `split`) and
/// run.txt; their paths.
fn files(dir: &Path) -> [String; 4] {
    let p = |n: &str| dir.join(n).to_string_lossy().into_owned();
    let (mut actual, mut qrels, mut goals, mut run) =
        (String::new(), String::new(), String::new(), String::new());
    for (i, (g, k, t, f)) in GOALS.iter().enumerate() {
        let theorem = t.map_or(String::new(), |t| format!(", \"theorem\": \"{t}\""));
        actual += &format!("{{\"goal_id\": \"{g}\"{theorem}, \"premises\": [\"rel\"]}}\n");
        qrels += &format!("{g} 0 rel 1\n");
        goals += &format!(
            "{{\"goal_id\": \"{g}\", \"file_path\": \"{f}.lean\", \"split\": {}}}\n",
            i % 2
        );
        for r in 1..=*k {
            let name = if r == *k {
                "rel".to_string()
            } else {
                format!("x{r}")
            };
            run += &format!("{g} Q0 {name} {r} {} run\n", 10 - r);
        }
    }
    for (n, text) in [
        ("actual.jsonl", &actual),
        ("qrels.txt", &qrels),
        ("goals.jsonl", &goals),
        ("run.txt", &run),
    ] {
        std::fs::write(dir.join(n), text).unwrap();
    }
    [
        p("actual.jsonl"),
        p("qrels.txt"),
        p("goals.jsonl"),
        p("run.txt"),
    ]
}

/// `--format json`'s summary AP and goal counts.
fn json(args: &[&str]) -> (f64, serde_json::Value) {
    let mut a = args.to_vec();
    a.extend_from_slice(&["-m", "AP", "-m", "NumRel", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&ok(&a)).unwrap();
    assert_eq!(
        v["summary"]["NumRel"].as_f64(),
        Some(7.0),
        "a sum stays the sum over goals"
    );
    (v["summary"]["AP"].as_f64().unwrap(), v["goals"].clone())
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-15, "{a} != {b}");
}

#[test]
fn means_over_groups_against_hand_sums() {
    let dir = tempfile::tempdir().unwrap();
    let [actual, qrels, goals, run] = files(dir.path());
    // Ungrouped: (1 + 1/2 + 1/4 + 1 + 1/2 + 1/3 + 1/2) / 7 = 49/84.
    let (ap, counts) = json(&["eval", &actual, &run]);
    close(ap, 49.0 / 84.0);
    assert_eq!(counts.get("groups"), None);
    // By theorem: T1 1; T2 (1/2 + 1/4)/2 = 3/8; T3 (1 + 1/2 + 1/3)/3 = 11/18; g7 alone 1/2:
    // (1 + 3/8 + 11/18 + 1/2) / 4 = 179/288.
    let (ap, counts) = json(&["eval", &actual, &run, "--group-by", "theorem"]);
    close(ap, 179.0 / 288.0);
    assert_eq!(
        (counts["groups"].clone(), counts["evaluated"].clone()),
        (4.into(), 7.into())
    );
    // By file, from --goals with TREC qrels: A (1 + 1/2 + 1/4 + 1)/4 = 11/16, B (1/2 + 1/3 +
    // 1/2)/3 = 4/9: (11/16 + 4/9) / 2 = 163/288.
    let (ap, counts) = json(&[
        "eval",
        &qrels,
        &run,
        "--goals",
        &goals,
        "--group-by",
        "file",
    ]);
    close(ap, 163.0 / 288.0);
    assert_eq!(counts["groups"], 2);
    // By any key of --goals: split 0 {g1, g3, g5, g7} (1 + 1/4 + 1/2 + 1/2)/4 = 9/16, split 1
    // {g2, g4, g6} (1/2 + 1 + 1/3)/3 = 11/18: (9/16 + 11/18) / 2 = 169/288.
    let (ap, _) = json(&[
        "eval",
        &actual,
        &run,
        "--goals",
        &goals,
        "--group-by",
        "split",
    ]);
    close(ap, 169.0 / 288.0);
    // The table says what the mean is over; the report counts groups and goals, and warns of
    // the goal without a theorem.
    let o = run_text(&["eval", &actual, &run, "-m", "AP", "--group-by", "theorem"]);
    assert!(o.0.contains("mean of 4 groups"), "{}", o.0);
    assert!(
        o.1.contains("the summary is the mean over 4 groups (by theorem) of their goals' means, over 7 goals"),
        "{}",
        o.1
    );
    assert!(
        o.1.contains("1 goals have no `theorem` in the records read (the first by name: `g7`)"),
        "{}",
        o.1
    );
    // Per-goal rows are unchanged.
    let rows = |extra: &[&str]| {
        let mut a = vec![
            "eval",
            &actual,
            &run,
            "-m",
            "AP",
            "--per-goal",
            "--format",
            "tsv",
        ];
        a.extend_from_slice(extra);
        ok(&a)
            .lines()
            .filter(|l| l.starts_with('g'))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // The default measures, grouped, are those with a mean over groups.
    let o = run_text(&["eval", &actual, &run, "--group-by", "theorem"]);
    assert!(
        o.0.contains("mean of 4 groups") && !o.0.contains("Depth"),
        "{}",
        o.0
    );
    let grouped = rows(&["--group-by", "theorem"]);
    assert_eq!(grouped.len(), 7);
    assert_eq!(grouped, rows(&[]));
}

fn run_text(args: &[&str]) -> (String, String) {
    let o = run(args);
    assert!(o.status.success());
    (
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn every_goal_its_own_group_is_the_ungrouped_summary() {
    let dir = tempfile::tempdir().unwrap();
    let [actual, _, _, run] = files(dir.path());
    let m = [
        "-m", "AP", "-m", "P@2", "-m", "RR", "-m", "NumRet", "-m", "GM_AP",
    ];
    for format in ["tsv", "json"] {
        let mut a = vec!["eval", &actual, &run, "--format", format];
        a.extend_from_slice(&m);
        let flat = ok(&a);
        // goal_id is a key of every record: each goal a group of its own.
        a.extend_from_slice(&["--group-by", "goal_id"]);
        let own = ok(&a);
        if format == "tsv" {
            assert_eq!(own, flat);
        } else {
            assert_eq!(own.replace(",\"groups\":7", ""), flat);
        }
    }
}

#[test]
fn what_grouping_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let [actual, qrels, _, run] = files(dir.path());
    let e = fails(&[
        "eval",
        &actual,
        &run,
        "-m",
        "AP",
        "--group-by",
        "theorem",
        "--strict",
    ]);
    assert!(
        e.contains(
            "--group-by theorem: goal `g7` has no `theorem` or `full_name` in the records read"
        ),
        "{e}"
    );
    assert!(e.contains("actual.jsonl"), "{e}");
    let e = fails(&[
        "eval",
        &qrels,
        &run,
        "-m",
        "AP",
        "--group-by",
        "theorem",
        "--strict",
    ]);
    assert!(
        e.contains("in the records read (none: give --goals FILE)"),
        "{e}"
    );
    let e = fails(&[
        "eval",
        &actual,
        &run,
        "-m",
        "Depth(recall=1.0)",
        "--group-by",
        "theorem",
    ]);
    assert!(
        e.contains("Depth(recall=1.0) has no mean over groups"),
        "{e}"
    );
    let out = dir.path().join("s.sum").to_string_lossy().into_owned();
    let e = fails(&[
        "eval",
        &actual,
        &run,
        "-m",
        "AP",
        "--group-by",
        "theorem",
        "--summary-out",
        &out,
    ]);
    assert!(e.contains("does not hold groups"), "{e}");
    let e = fails(&["eval", &actual, &run, "--goals", &actual]);
    assert!(
        e.contains("--goals needs --corpus FILE, --group-by or --by"),
        "{e}"
    );
    // A bad record names the file and the line.
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"goal_id\": \"g1\"}\n[1]\n").unwrap();
    let b = bad.to_string_lossy().into_owned();
    let e = fails(&[
        "eval",
        &actual,
        &run,
        "-m",
        "AP",
        "--goals",
        &b,
        "--group-by",
        "file",
    ]);
    assert!(
        e.contains("bad.jsonl:2") && e.contains("expected a goal record"),
        "{e}"
    );
}

/// A push `Session` of an evaluator grouped by theorem gives the command's means over groups
/// (by hand: 179/288), and refuses a summary file of them (it would merge into per-goal means).
#[test]
fn a_session_means_over_groups_and_keeps_no_summary_file() {
    let dir = tempfile::tempdir().unwrap();
    let [actual, _, _, _] = files(dir.path());
    let groups =
        lemma_eval::GroupBy::load("theorem", Some(Path::new(&actual)), None, false).unwrap();
    let ev = lemma_eval::Evaluator::builder()
        .measure_names(["AP"])
        .unwrap()
        .group_by(std::sync::Arc::new(groups))
        .build_from_path(Path::new(&actual))
        .unwrap();
    let mut s = ev.session().unwrap();
    for (g, k, _, _) in GOALS {
        let ranking: Vec<String> = (1..=k)
            .map(|r| {
                if r == k {
                    "rel".into()
                } else {
                    format!("x{r}")
                }
            })
            .collect();
        s.push_ranked(g, &ranking).unwrap();
    }
    let e = s.partial().unwrap_err().to_string();
    assert!(
        e.contains("--group-by theorem: a summary that travels"),
        "{e}"
    );
    assert!(e.contains("does not hold groups"), "{e}");
    let done = s.finish(&mut lemma_eval::SummaryOnly).unwrap();
    // The report says what grouping met, as the command's does: g7 has no theorem.
    let g = done.report.groups.as_ref().unwrap();
    assert_eq!((g.groups, g.goals, g.ungrouped), (4, 7, 1));
    assert_eq!(g.first_ungrouped.as_deref(), Some("g7"));
    match done.summary.aggregate(0) {
        lemma_accum::Aggregate::Mean(ap) => close(ap, 179.0 / 288.0),
        other => panic!("{other:?}"),
    }
    // Each evaluation of one evaluator counts its own goals: the same goals again meet the
    // same one goal without a group (not two).
    let mut s = ev.session().unwrap();
    for (g, k, _, _) in GOALS {
        let ranking: Vec<String> = (1..=k).map(|r| format!("x{r}")).collect();
        s.push_ranked(g, &ranking).unwrap();
    }
    let again = s.finish(&mut lemma_eval::SummaryOnly).unwrap();
    let g = again.report.groups.as_ref().unwrap();
    assert_eq!((g.groups, g.goals, g.ungrouped), (4, 7, 1));
    assert_eq!(g.first_ungrouped.as_deref(), Some("g7"));
}
