//! `eval --by gold-size|novelty|ATTR`: a summary per stratum after the overall one, each against
//! sums done by hand, in every output format.

use std::path::Path;

use crate::common;
use common::{fails, ok_err as ok};

/// Five goals: `(goal, [(relevant premise, its rank)], theorem)`. AP: g1 1; g2 (1 + 2/3)/2 =
/// 5/6; g3 (1/2 + 2/3 + 3/6)/3 = 5/9; g4 (1 + 1 + 3/4 + 4/8)/4 = 13/16; g5 1/2. Trained on p1,
/// p2, p3: g3 (p4), g4 (p5) and g5 (p6) are novel.
/// A goal: its name, its relevant premises with their ranks, its theorem.
type Goal = (
    &'static str,
    &'static [(&'static str, usize)],
    Option<&'static str>,
);

const GOALS: [Goal; 5] = [
    ("g1", &[("p1", 1)], Some("T1")),
    ("g2", &[("p1", 1), ("p2", 3)], Some("T1")),
    ("g3", &[("p2", 2), ("p3", 3), ("p4", 6)], Some("T2")),
    (
        "g4",
        &[("p1", 1), ("p2", 2), ("p3", 4), ("p5", 8)],
        Some("T2"),
    ),
    ("g5", &[("p6", 2)], None),
];

/// Writes actual.jsonl (with `theorem`), qrels.txt, train.txt and run.txt; their paths.
fn files(dir: &Path) -> [String; 4] {
    let (mut actual, mut qrels, mut run) = (String::new(), String::new(), String::new());
    for (g, rel, t) in GOALS {
        let theorem = t.map_or(String::new(), |t| format!(", \"theorem\": \"{t}\""));
        let names: Vec<String> = rel.iter().map(|(p, _)| format!("\"{p}\"")).collect();
        actual += &format!(
            "{{\"goal_id\": \"{g}\"{theorem}, \"premises\": [{}]}}\n",
            names.join(", ")
        );
        for (p, _) in rel {
            qrels += &format!("{g} 0 {p} 1\n");
        }
        let last = rel.iter().map(|&(_, r)| r).max().unwrap();
        for r in 1..=last {
            let name = rel
                .iter()
                .find(|&&(_, k)| k == r)
                .map_or(format!("x{r}"), |(p, _)| p.to_string());
            run += &format!("{g} Q0 {name} {r} {} run\n", 10 - r);
        }
    }
    let names = ["actual.jsonl", "qrels.txt", "train.txt", "run.txt"];
    for (n, text) in names
        .iter()
        .zip([&actual, &qrels, &"p1\np2\n\np3\n".into(), &run])
    {
        std::fs::write(dir.join(n), text).unwrap();
    }
    names.map(|n| dir.join(n).to_string_lossy().into_owned())
}

fn close(a: &serde_json::Value, b: f64) {
    let a = a.as_f64().unwrap_or_else(|| panic!("{a} is no number"));
    assert!((a - b).abs() < 1e-15, "{a} != {b}");
}

/// `--format json` of `args` with AP and NumRel.
fn json(args: &[&str]) -> serde_json::Value {
    let mut a = args.to_vec();
    a.extend_from_slice(&["-m", "AP", "-m", "NumRel", "--format", "json"]);
    serde_json::from_str(&ok(&a).0).unwrap()
}

/// The strata of a json output: `(label, AP, NumRel, goals evaluated)`.
fn strata(v: &serde_json::Value) -> Vec<(String, serde_json::Value, f64, u64)> {
    (v["strata"].as_array().unwrap().iter())
        .map(|s| {
            (
                s["stratum"].as_str().unwrap().to_string(),
                s["summary"]["AP"].clone(),
                s["summary"]["NumRel"].as_f64().unwrap(),
                s["goals"]["evaluated"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn strata_against_hand_sums() {
    let dir = tempfile::tempdir().unwrap();
    let [actual, qrels, train, run] = files(dir.path());
    let v = json(&[
        "eval",
        &actual,
        &run,
        "--by",
        "gold-size",
        "--by",
        "novelty",
        "--train-premises",
        &train,
        "--by",
        "theorem",
    ]);
    // Overall: (1 + 5/6 + 5/9 + 13/16 + 1/2) / 5 = 533/720.
    close(&v["summary"]["AP"], 533.0 / 720.0);
    let s = strata(&v);
    let labels: Vec<&str> = s.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(
        labels,
        [
            "gold-size=1",
            "gold-size=2-3",
            "gold-size=4-7",
            "novelty=novel",
            "novelty=seen",
            "theorem=T1",
            "theorem=T2"
        ]
    );
    // R = 1 {g1, g5}: (1 + 1/2)/2; R in 2-3 {g2, g3}: (5/6 + 5/9)/2 = 25/36; 4-7 {g4}: 13/16.
    close(&s[0].1, 0.75);
    close(&s[1].1, 25.0 / 36.0);
    close(&s[2].1, 13.0 / 16.0);
    // Novel {g3, g4, g5}: (5/9 + 13/16 + 1/2)/3 = 269/432; seen {g1, g2}: (1 + 5/6)/2.
    close(&s[3].1, 269.0 / 432.0);
    close(&s[4].1, 11.0 / 12.0);
    // T1 {g1, g2}: 11/12; T2 {g3, g4}: (5/9 + 13/16)/2 = 197/288; g5 has no theorem.
    close(&s[5].1, 11.0 / 12.0);
    close(&s[6].1, 197.0 / 288.0);
    let sums: Vec<f64> = s.iter().map(|x| x.2).collect();
    assert_eq!(sums, [2.0, 5.0, 4.0, 8.0, 3.0, 3.0, 7.0]);
    let goals: Vec<u64> = s.iter().map(|x| x.3).collect();
    assert_eq!(goals, [2, 2, 1, 3, 2, 2, 2]);
    // The same from TREC qrels (novelty reads them again).
    let q = json(&[
        "eval",
        &qrels,
        &run,
        "--by",
        "novelty",
        "--train-premises",
        &train,
    ]);
    let s = strata(&q);
    assert_eq!(
        (s[0].0.as_str(), s[1].0.as_str()),
        ("novelty=novel", "novelty=seen")
    );
    close(&s[0].1, 269.0 / 432.0);
    close(&s[1].1, 11.0 / 12.0);
    // Grouped by theorem: seen {g1, g2} is one group (T1), 11/12; novel {T2: g3, g4; g5 alone}
    // (197/288 + 1/2)/2 = 341/576, two groups.
    let g = json(&[
        "eval",
        &actual,
        &run,
        "--group-by",
        "theorem",
        "--by",
        "novelty",
        "--train-premises",
        &train,
    ]);
    let st = g["strata"].as_array().unwrap();
    close(&st[0]["summary"]["AP"], 341.0 / 576.0);
    assert_eq!(st[0]["goals"]["groups"], 2);
    close(&st[1]["summary"]["AP"], 11.0 / 12.0);
    assert_eq!(st[1]["goals"]["groups"], 1);
    // Without --by: no strata key.
    assert!(json(&["eval", &actual, &run]).get("strata").is_none());
}

#[test]
fn strata_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let [actual, _, _, run] = files(dir.path());
    let args = |format: &str| {
        ok(&[
            "eval",
            &actual,
            &run,
            "-m",
            "AP",
            "-m",
            "NumRel",
            "--by",
            "gold-size",
            "--format",
            format,
        ])
    };
    let (tsv, _) = args("tsv");
    let lines: Vec<&str> = tsv.lines().collect();
    assert_eq!(
        lines,
        [
            "all\tAP\t0.7402777777777778",
            "all\tNumRel\t11",
            "gold-size=1\tAP\t0.75",
            "gold-size=1\tNumRel\t2",
            "gold-size=2-3\tAP\t0.6944444444444444",
            "gold-size=2-3\tNumRel\t5",
            "gold-size=4-7\tAP\t0.8125",
            "gold-size=4-7\tNumRel\t4",
        ]
    );
    let (trec, _) = args("trec");
    assert!(
        trec.contains("map                   \tgold-size=2-3\t0.6944\n"),
        "{trec}"
    );
    assert!(
        trec.contains("num_rel               \tgold-size=4-7\t4\n"),
        "{trec}"
    );
    let (table, _) = args("table");
    let sections: Vec<&str> = table.split("\n\n").collect();
    assert_eq!(sections.len(), 4, "{table}");
    assert!(sections[1].starts_with("gold-size=1"), "{table}");
    assert!(sections[1].contains("mean of 2"), "{table}");
    assert!(
        sections[3].contains("AP                             0.8125"),
        "{table}"
    );
}

#[test]
fn goals_without_the_attribute_and_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let [actual, qrels, train, run] = files(dir.path());
    let (_, err) = ok(&["eval", &actual, &run, "-m", "AP", "--by", "theorem"]);
    assert!(
        err.contains(
            "--by theorem: 1 goals have no `theorem` in the records read (the first by name: `g5`)"
        ),
        "{err}"
    );
    let e = fails(&[
        "eval", &actual, &run, "-m", "AP", "--by", "theorem", "--strict",
    ]);
    assert!(
        e.contains("--by theorem: goal `g5` has no `theorem` or `full_name` in the records read"),
        "{e}"
    );
    let e = fails(&["eval", &actual, &run, "--by", "novelty"]);
    assert!(
        e.contains("--by novelty needs --train-premises FILE"),
        "{e}"
    );
    let e = fails(&["eval", &actual, &run, "--train-premises", &train]);
    assert!(
        e.contains("--train-premises is read by --by novelty only"),
        "{e}"
    );
    let e = fails(&[
        "eval",
        &actual,
        &run,
        "--by",
        "gold-size",
        "--by",
        "gold-size",
    ]);
    assert!(e.contains("--by gold-size is given twice"), "{e}");
    let out = dir.path().join("s.sum").to_string_lossy().into_owned();
    let e = fails(&[
        "eval",
        &actual,
        &run,
        "--by",
        "gold-size",
        "--summary-out",
        &out,
    ]);
    assert!(e.contains("does not hold strata"), "{e}");
    // A train file that cannot be read names itself.
    let missing = dir.path().join("none.txt").to_string_lossy().into_owned();
    let e = fails(&[
        "eval",
        &qrels,
        &run,
        "--by",
        "novelty",
        "--train-premises",
        &missing,
    ]);
    assert!(e.contains("none.txt"), "{e}");
}

/// A stratum's label is one field of tsv and trec, whatever the attribute holds: its tab, newline
/// and backslash written `\t`, `\n` and `\\` (a space stays: the fields are tab-separated).
#[test]
fn labels_stay_one_field() {
    let dir = tempfile::tempdir().unwrap();
    let actual = dir.path().join("actual.jsonl");
    std::fs::write(
        &actual,
        "{\"goal_id\": \"g1\", \"k\": \"a b\", \"premises\": [\"p\"]}\n\
         {\"goal_id\": \"g2\", \"k\": \"x\\ty\", \"premises\": [\"p\"]}\n\
         {\"goal_id\": \"g3\", \"k\": \"line\\nbreak\\\\\", \"premises\": [\"p\"]}\n",
    )
    .unwrap();
    let run = dir.path().join("run.txt");
    std::fs::write(&run, "g1 Q0 p 1 1 r\ng2 Q0 q 1 1 r\ng3 Q0 p 1 1 r\n").unwrap();
    let (a, r) = (actual.to_string_lossy(), run.to_string_lossy());
    let tsv = ok(&["eval", &a, &r, "-m", "P@1", "--by", "k", "--format", "tsv"]).0;
    assert_eq!(
        tsv,
        "all\tP@1\t0.6666666666666666\nk=a b\tP@1\t1\nk=x\\ty\tP@1\t0\n\
         k=line\\nbreak\\\\\tP@1\t1\n"
    );
    let trec = ok(&["eval", &a, &r, "-m", "P@1", "--by", "k", "--format", "trec"]).0;
    assert_eq!(trec.lines().count(), 4, "{trec}");
    assert!(trec.contains("\tk=line\\nbreak\\\\\t1.0000\n"), "{trec}");
    // json keeps the value as it is.
    let json: serde_json::Value = serde_json::from_str(
        &ok(&["eval", &a, &r, "-m", "P@1", "--by", "k", "--format", "json"]).0,
    )
    .unwrap();
    assert_eq!(json["strata"][1]["stratum"], "k=x\ty");
}
