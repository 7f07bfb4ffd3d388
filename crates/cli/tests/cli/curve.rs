//! `lemma-eval curve`: the macro-averaged interpolated curve and one goal's exact curve, on the
//! fixtures, with every value worked by hand (docs/METRICS.md §5 and §7); tie groups; several
//! runs; JSON; errors; the `--plot` picture as XML holding the curve's points.

use std::process::Command;

use crate::common;
use common::{fixture_arg as fixture, ok, run};

/// Rows of numbers (after the header), each field parsed; the `run` column, if any, kept apart.
fn table(text: &str, with_run: bool) -> Vec<(String, Vec<f64>)> {
    let mut lines = text.lines();
    lines.next().expect("a header");
    lines
        .map(|l| {
            let mut f = l.split('\t');
            let run = if with_run {
                f.next().unwrap().to_string()
            } else {
                String::new()
            };
            (run, f.map(|x| x.parse().unwrap()).collect())
        })
        .collect()
}

fn close(got: &[f64], want: &[f64]) -> bool {
    got.len() == want.len() && got.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12)
}

/// The seed example (x a y b c z against {a, b, c}): relevant lemmas at ranks 2, 4 and 5, with
/// precisions 1/2, 2/4, 3/5; the interpolated precision is 3/5 everywhere (p(5) is the best at
/// any recall), so the macro curve over its one goal is 0.6 at every level.
#[test]
fn the_seed_examples_curves() {
    let (q, r) = (fixture("seed/qrels.txt"), fixture("seed/run.txt"));
    let out = ok(&["curve", &q, &r, "--goal", "g1"]);
    assert!(
        out.starts_with("rank\trecall\tprecision\tinterpolated_precision\n"),
        "{out}"
    );
    let rows = table(&out, false);
    let want = [
        [2.0, 1.0 / 3.0, 0.5, 0.6],
        [4.0, 2.0 / 3.0, 0.5, 0.6],
        [5.0, 1.0, 0.6, 0.6],
    ];
    assert_eq!(rows.len(), 3);
    for (got, want) in rows.iter().zip(want) {
        assert!(close(&got.1, &want), "{got:?} against {want:?}");
    }
    let out = ok(&["curve", &q, &r]);
    assert!(
        out.starts_with("recall\tprecision\n0\t0.6\n0.1\t0.6\n"),
        "{out}"
    );
    let rows = table(&out, false);
    assert_eq!(rows.len(), 11);
    for (i, (_, v)) in rows.iter().enumerate() {
        assert!(close(v, &[i as f64 / 10.0, 0.6]), "{v:?}");
    }
}

/// The pooled example, two runs: by score (TREC), A is T T F F T T F F and B is F F T T F F T T;
/// the JSONL file keeps the given order, in which B is T T F F T T F F too. IPrec at 0, 0.5, 1:
/// A 1, 1, 4/6; B by score 2/4, 2/4, 4/8. Means: 0.75, 0.75, 7/12 (TREC); 1, 1, 2/3 (JSONL).
#[test]
fn macro_curves_of_two_runs() {
    let q = fixture("pooled/qrels.txt");
    let (trec, jsonl) = (
        fixture("pooled/run.txt"),
        fixture("pooled/predictions.jsonl"),
    );
    let out = ok(&["curve", &q, &trec, &jsonl, "--points", "3"]);
    assert!(out.starts_with("run\trecall\tprecision\n"), "{out}");
    let rows = table(&out, true);
    let want = [
        (&trec, [0.0, 0.75]),
        (&trec, [0.5, 0.75]),
        (&trec, [1.0, 7.0 / 12.0]),
        (&jsonl, [0.0, 1.0]),
        (&jsonl, [0.5, 1.0]),
        (&jsonl, [1.0, 2.0 / 3.0]),
    ];
    assert_eq!(rows.len(), want.len());
    for (got, (run, v)) in rows.iter().zip(want) {
        assert_eq!(&got.0, run);
        assert!(close(&got.1, &v), "{got:?} against {v:?}");
    }
    // The same as JSON.
    let out = ok(&[
        "curve", &q, &trec, &jsonl, "--points", "3", "--format", "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["curve"], "macro");
    assert_eq!(doc["runs"][0]["run"], trec.as_str());
    assert_eq!(doc["runs"][0]["goals_evaluated"], 2);
    assert_eq!(doc["runs"][1]["points"][2]["recall"], 1.0);
    let p = doc["runs"][0]["points"][2]["precision"].as_f64().unwrap();
    assert!((p - 7.0 / 12.0).abs() < 1e-12);
}

/// A tie group at ranks 2 to 4 holds both relevant lemmas: under `--ties group` one row at the
/// group's end (rank 4, recall 1, precision 2/4); under trec's rule (names descending: y b a)
/// the relevant lemmas are at ranks 3 and 4: rows (3, 1/2, 1/3) and (4, 1, 2/4), both
/// interpolated to 1/2.
#[test]
fn a_goals_curve_under_tie_groups() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q");
    let r = dir.path().join("r");
    std::fs::write(&q, "g 0 a 1\ng 0 b 1\ng 0 x 0\n").unwrap();
    std::fs::write(
        &r,
        "g Q0 x 1 0.9 t\ng Q0 a 2 0.5 t\ng Q0 b 3 0.5 t\ng Q0 y 4 0.5 t\ng Q0 z 5 0.1 t\n",
    )
    .unwrap();
    let (q, r) = (q.to_str().unwrap(), r.to_str().unwrap());
    let rows = table(
        &ok(&["curve", q, r, "--goal", "g", "--ties", "group"]),
        false,
    );
    assert_eq!(rows.len(), 1);
    assert!(close(&rows[0].1, &[4.0, 1.0, 0.5, 0.5]), "{rows:?}");
    let rows = table(&ok(&["curve", q, r, "--goal", "g"]), false);
    assert_eq!(rows.len(), 2);
    assert!(close(&rows[0].1, &[3.0, 0.5, 1.0 / 3.0, 0.5]), "{rows:?}");
    assert!(close(&rows[1].1, &[4.0, 1.0, 0.5, 0.5]), "{rows:?}");
    // Cut at depth 3: one relevant lemma found, the curve stops there.
    let rows = table(&ok(&["curve", q, r, "--goal", "g", "--depth", "3"]), false);
    assert_eq!(rows.len(), 1);
    assert!(
        close(&rows[0].1, &[3.0, 0.5, 1.0 / 3.0, 1.0 / 3.0]),
        "{rows:?}"
    );
}

#[test]
fn goals_without_a_curve_are_named() {
    let (q, r) = (fixture("seed/qrels.txt"), fixture("seed/run.txt"));
    let o = run(&["curve", &q, &r, "--goal", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no goal `nope` in the actual sets"), "{err}");
    let o = run(&["curve", &q, &r, "--goal", "g1", "--relevance-level", "2"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("goal `g1` has no relevant lemma (R = 0"),
        "{err}"
    );
    let o = run(&["curve", &q, &r, "--points", "1"]);
    assert_eq!(o.status.code(), Some(2));
}

/// `--plot`: an SVG document (parsed as XML) naming both runs, with one marker per point of the
/// curves printed, and the printed output unchanged by it.
#[test]
fn the_plot_holds_the_printed_points() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("pr.svg");
    let q = fixture("pooled/qrels.txt");
    let (trec, jsonl) = (
        fixture("pooled/run.txt"),
        fixture("pooled/predictions.jsonl"),
    );
    let plain = ok(&["curve", &q, &trec, &jsonl]);
    let out = ok(&["curve", &q, &trec, &jsonl, "--plot", svg.to_str().unwrap()]);
    assert_eq!(out, plain);
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("well-formed SVG");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let texts: Vec<&str> = (doc.descendants())
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    for want in [trec.as_str(), jsonl.as_str(), "recall", "precision"] {
        assert!(texts.contains(&want), "no `{want}` in {texts:?}");
    }
    let markers = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .count();
    assert_eq!(markers, table(&plain, true).len());
    // One goal's curve: the steps of its interpolated precision, two corners per row.
    let out = ok(&[
        "curve",
        &q,
        &trec,
        "--goal",
        "A",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let markers = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .count();
    assert_eq!(markers, 2 * table(&out, false).len());
}

/// The pooled curve of the scores_A / scores_B fixture (goals A and B, 16 lemmas, 8 relevant),
/// by hand. Descending: .97 N, .95 R, .88 N, .85 R, .73 N, .62 N, .59 R, .55 R, .48 R, .43 N,
/// .39 R, .32 N, .20 R, .12 N, .09 R, .04 N: a row per score with the running tp and fp. Pooled
/// AP is the mean precision at the relevant rows: (1/2 + 2/4 + 3/7 + 4/8 + 5/9 + 6/11 + 7/13 +
/// 8/15) / 8; the best F1 is at 0.09 (P = 8/15, R = 1: F1 = 16/23).
#[test]
fn the_pooled_curve_of_scores_a_and_b() {
    let (q, r) = (fixture("pooled/qrels.txt"), fixture("pooled/run.txt"));
    let out = ok(&["curve", &q, &r, "--pooled"]);
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("threshold\ttp\tfp\tprecision\trecall\tf1")
    );
    let ap = (0.5 + 0.5 + 3.0 / 7.0 + 0.5 + 5.0 / 9.0 + 6.0 / 11.0 + 7.0 / 13.0 + 8.0 / 15.0) / 8.0;
    let comment = lines.next().unwrap();
    let fields: Vec<&str> = comment.trim_start_matches("# ").split('\t').collect();
    assert_eq!(&fields[..2], ["items=16", "relevant=8"]);
    let value = |f: &str| f.split_once('=').unwrap().1.parse::<f64>().unwrap();
    assert!((value(fields[2]) - ap).abs() < 1e-15, "{comment}");
    assert!((value(fields[3]) - 16.0 / 23.0).abs() < 1e-15, "{comment}");
    assert_eq!(fields[4], "best_f1_threshold=0.09");
    let want: [(f64, u32, u32); 16] = [
        (0.97, 0, 1),
        (0.95, 1, 1),
        (0.88, 1, 2),
        (0.85, 2, 2),
        (0.73, 2, 3),
        (0.62, 2, 4),
        (0.59, 3, 4),
        (0.55, 4, 4),
        (0.48, 5, 4),
        (0.43, 5, 5),
        (0.39, 6, 5),
        (0.32, 6, 6),
        (0.20, 7, 6),
        (0.12, 7, 7),
        (0.09, 8, 7),
        (0.04, 8, 8),
    ];
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split('\t').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), want.len());
    for (row, &(t, tp, fp)) in rows.iter().zip(&want) {
        let (tp, fp) = (tp as f64, fp as f64);
        let (p, rc) = (tp / (tp + fp), tp / 8.0);
        let f1 = if tp == 0.0 {
            0.0
        } else {
            2.0 * p * rc / (p + rc)
        };
        assert!(close(row, &[t, tp, fp, p, rc, f1]), "{row:?}");
    }
    // Four bins of four lemmas: rows at .85, .55, .32, .04, each of precision 1/2. Pooled AP 1/2;
    // the bound sums, per bin of (tp, pp) before it and (rel, n) in it, rel * (min(1, (tp + rel) /
    // (pp + 1)) - (tp + 1) / (pp + n)): 2(1 - 1/4) + 2(4/5 - 3/8) + 2(6/9 - 5/12) + 2(8/13 - 7/16),
    // over 8; the exact AP lies within it.
    let out = ok(&["curve", &q, &r, "--pooled", "--bins", "4"]);
    let comment = out.lines().nth(1).unwrap();
    let rows: Vec<Vec<f64>> = (out.lines().skip(2))
        .map(|l| l.split('\t').map(|x| x.parse().unwrap()).collect())
        .collect();
    let want = [
        [0.85, 2.0, 2.0],
        [0.55, 4.0, 4.0],
        [0.32, 6.0, 6.0],
        [0.04, 8.0, 8.0],
    ];
    assert_eq!(rows.len(), 4);
    for (row, w) in rows.iter().zip(want) {
        assert!(close(&row[..3], &w) && row[3] == 0.5, "{row:?}");
    }
    let bound = (2.0 * (1.0 - 0.25)
        + 2.0 * (0.8 - 3.0 / 8.0)
        + 2.0 * (6.0 / 9.0 - 5.0 / 12.0)
        + 2.0 * (8.0 / 13.0 - 7.0 / 16.0))
        / 8.0;
    let fields: Vec<&str> = comment.trim_start_matches("# ").split('\t').collect();
    assert_eq!(fields[2], "average_precision=0.5");
    assert!((value(fields[3]) - bound).abs() < 1e-15, "{comment}");
    assert!((ap - 0.5).abs() <= bound);
    // JSON: the same numbers.
    let out = ok(&["curve", &q, &r, "--pooled", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let run = &doc["runs"][0];
    assert_eq!(doc["curve"], "pooled");
    assert_eq!(run["points"].as_array().unwrap().len(), 16);
    assert!((run["average_precision"].as_f64().unwrap() - ap).abs() < 1e-15);
    assert_eq!(run["points"][8]["tp"], 5);
    assert_eq!(run["points"][8]["threshold"], 0.48);
    assert!(run["ap_error_bound"].is_null());
    // The plot: a marker per row, the output unchanged.
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("pooled.svg");
    let plain = ok(&["curve", &q, &r, "--pooled"]);
    let out = ok(&["curve", &q, &r, "--pooled", "--plot", svg.to_str().unwrap()]);
    assert_eq!(out, plain);
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("well-formed SVG");
    let markers = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .count();
    assert_eq!(markers, 16);
}

/// The exact pooled curve spilled to disk in many runs (a tiny --memory) prints the same bytes
/// as the curve held, says so on stderr, and leaves nothing in TMPDIR; a TMPDIR that cannot take
/// the runs is an error that names it, with no -o file left.
#[test]
fn the_pooled_curve_spilled_is_the_curve_held() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = (dir.path().join("q"), dir.path().join("r"));
    let (qs, rs) = (q.to_str().unwrap(), r.to_str().unwrap());
    ok(&[
        "gen", "--goals", "300", "--depth", "50", "--seed", "4", "--qrels", qs, "--run", rs,
    ]);
    let held = run(&["curve", qs, rs, "--pooled"]);
    assert!(held.status.success());
    assert!(
        held.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&held.stderr)
    );
    let rows = String::from_utf8_lossy(&held.stdout).lines().count() - 2;
    assert!(rows > 2_000, "{rows} distinct scores");
    let tmp = tempfile::tempdir().unwrap();
    for threads in ["1", "2"] {
        let spilled = Command::new(common::BIN)
            .args([
                "curve",
                qs,
                rs,
                "--pooled",
                "--memory",
                "64K",
                "--threads",
                threads,
            ])
            .env("TMPDIR", tmp.path())
            .output()
            .unwrap();
        assert!(spilled.status.success());
        assert_eq!(spilled.stdout, held.stdout, "--threads {threads}");
        let err = String::from_utf8_lossy(&spilled.stderr);
        assert!(
            err.contains("sorted runs") && err.contains("64 KiB"),
            "{err}"
        );
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }
    let out = dir.path().join("out.tsv");
    let o = Command::new(common::BIN)
        .args(["curve", qs, rs, "--pooled", "--memory", "64K", "-o"])
        .arg(&out)
        .env("TMPDIR", dir.path().join("nowhere"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot keep the pooled curve's counts on disk") && err.contains("nowhere"),
        "{err}"
    );
    assert!(!out.exists());
}

/// `--bins` needs `--pooled`; `--pooled` has no `--goal`.
#[test]
fn pooled_options_that_do_not_go_together() {
    let (q, r) = (fixture("pooled/qrels.txt"), fixture("pooled/run.txt"));
    for args in [
        &["curve", &q, &r, "--bins", "4"][..],
        &["curve", &q, &r, "--pooled", "--goal", "A"][..],
        &["curve", &q, &r, "--pooled", "--bins", "0"][..],
    ] {
        assert_eq!(run(args).status.code(), Some(2), "{args:?}");
    }
}

/// `report`: one HTML page, nothing fetched from the network, its pictures well-formed SVG, the
/// summary's values as `eval` prints them with the best of each measure in bold, the goal counts,
/// the command line and the inputs with their sizes.
#[test]
fn the_report_is_one_self_contained_page() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let q = fixture("pooled/qrels.txt");
    let (trec, jsonl) = (
        fixture("pooled/run.txt"),
        fixture("pooled/predictions.jsonl"),
    );
    let out = ok(&["report", &q, &trec, &jsonl, "-o", page.to_str().unwrap()]);
    assert!(out.is_empty());
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
    for banned in [
        "http:", "https:", "src=", "href=", "url(", "@import", "<link", "<script",
    ] {
        assert!(!html.contains(banned), "`{banned}` in the page");
    }
    // Four pictures, each an SVG document.
    let svgs: Vec<&str> = html
        .match_indices("<svg")
        .map(|(i, _)| &html[i..i + html[i..].find("</svg>").unwrap() + 6])
        .collect();
    assert_eq!(svgs.len(), 4);
    for svg in &svgs {
        roxmltree::Document::parse(svg).expect("well-formed SVG");
    }
    // The summary: `eval`'s means to 4 decimals. By score (TREC) against file order (JSONL):
    // R@1 1/8 against 2/8, AP 0.6286 against 0.8167, Depth(recall=1.0) 7 against 6; Rprec, R@10,
    // R@100, P@10 and the pooled figures equal (both bold).
    let row = |name: &str| {
        let at = html.find(&format!("<tr><td>{name}</td>")).unwrap();
        let end = at + html[at..].find("</tr>").unwrap();
        html[at..end].to_string()
    };
    assert_eq!(
        row("R@1"),
        "<tr><td>R@1</td><td>0.1250</td><td class=\"best\">0.2500</td>"
    );
    assert_eq!(
        row("AP"),
        "<tr><td>AP</td><td>0.6286</td><td class=\"best\">0.8167</td>"
    );
    // Depth means cover each run's own goals: never compared.
    assert_eq!(
        row("Depth(recall=1.0)"),
        "<tr><td>Depth(recall=1.0)</td><td>7.0</td><td>6.0</td>"
    );
    assert_eq!(
        row("Rprec"),
        "<tr><td>Rprec</td><td class=\"best\">0.5000</td><td class=\"best\">0.5000</td>"
    );
    assert_eq!(
        row("pooled AP"),
        "<tr><td>pooled AP</td><td class=\"best\">0.5127</td><td class=\"best\">0.5127</td>"
    );
    assert_eq!(html.matches("class=\"best\"").count(), 18);
    assert!(html.contains("<tr><td>evaluated</td><td>2</td><td>2</td></tr>"));
    // The command line and the inputs, with their sizes.
    assert!(html.contains(&format!("report {q} {trec} {jsonl} -o ")));
    for f in [&q, &trec, &jsonl] {
        let bytes = std::fs::metadata(f).unwrap().len();
        assert!(html.contains(&format!("<code>{f}</code>")), "{f}");
        assert!(html.contains(&format!("{bytes} B</td>")), "{f}: {bytes} B");
    }
}

/// The pooled curve's row at the lowest score `>= t` is `eval --threshold t`'s pooled view,
/// number for number, for every threshold between and beyond the scores (whole numbers too: 1
/// is above every score, where the view is all zeros).
#[test]
fn the_pooled_curve_agrees_with_eval_threshold() {
    let (q, r) = (fixture("pooled/qrels.txt"), fixture("pooled/run.txt"));
    let out = ok(&["curve", &q, &r, "--pooled"]);
    let rows: Vec<Vec<f64>> = (out.lines().skip(2))
        .map(|l| l.split('\t').map(|x| x.parse().unwrap()).collect())
        .collect();
    for t in ["0", "0.04", "0.1", "0.5", "0.6", "0.9", "0.97", "1", "2e0"] {
        let eval = ok(&[
            "eval",
            &q,
            &r,
            "--threshold",
            t,
            "--format",
            "tsv",
            "--quiet",
        ]);
        let pooled: Vec<f64> = (eval.lines())
            .filter(|l| l.contains("\tpooled:"))
            .map(|l| l.rsplit('\t').next().unwrap().parse().unwrap())
            .collect();
        let t: f64 = t.parse().unwrap();
        let row = rows.iter().rfind(|r| r[0] >= t);
        let want = row.map_or(vec![0.0; 3], |r| r[3..6].to_vec());
        assert_eq!(pooled, want, "threshold {t}");
    }
}
