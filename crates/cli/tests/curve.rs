//! `lemma-eval curve`: the macro-averaged interpolated curve and one goal's exact curve, on the
//! fixtures, with every value worked by hand (docs/METRICS.md §5 and §7); tie groups; several
//! runs; JSON; errors; the `--plot` picture as XML holding the curve's points.

use std::path::Path;
use std::process::{Command, Output};

fn fixture(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(p)
        .to_string_lossy()
        .into_owned()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lemma-eval"))
        .args(args)
        .output()
        .expect("binary runs")
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

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
