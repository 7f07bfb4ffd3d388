//! `compare`: small runs whose values are checked by hand (means, differences, the t-test's
//! p-value from Student's t's closed form on 3 degrees of freedom, the exact randomization
//! p-value, Holm's adjustment), a run against itself, seeds, outputs, bad inputs.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use common::{fails, ok_err as ok, run, BIN};

/// Four goals, one relevant lemma each; run A ranks it at 2, 1, 3, 1 and run B at 1, 1, 1, 2.
/// RR: A (1/2, 1, 1/3, 1), B (1, 1, 1, 1/2): differences (1/2, 0, 2/3, -1/2).
/// P@1: A (0, 1, 0, 1), B (1, 1, 1, 0): differences (1, 0, 1, -1).
struct Files {
    _dir: tempfile::TempDir,
    qrels: PathBuf,
    a: PathBuf,
    b: PathBuf,
}

fn files() -> Files {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    std::fs::write(p("qrels"), "g1 0 a 1\ng2 0 b 1\ng3 0 c 1\ng4 0 d 1\n").unwrap();
    std::fs::write(
        p("a"),
        "g1 Q0 x 1 9 A\ng1 Q0 a 2 8 A\ng2 Q0 b 1 9 A\n\
         g3 Q0 x 1 9 A\ng3 Q0 y 2 8 A\ng3 Q0 c 3 7 A\ng4 Q0 d 1 9 A\n",
    )
    .unwrap();
    std::fs::write(
        p("b"),
        "g1 Q0 a 1 9 B\ng2 Q0 b 1 9 B\ng3 Q0 c 1 9 B\ng4 Q0 x 1 9 B\ng4 Q0 d 2 8 B\n",
    )
    .unwrap();
    Files {
        qrels: p("qrels"),
        a: p("a"),
        b: p("b"),
        _dir: dir,
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Student's t on 3 degrees of freedom: `P(|T| >= t) = 1 - (2/pi) (atan(u) + u / (1 + u²))`,
/// `u = t / sqrt(3)`.
fn t3_two_sided(t: f64) -> f64 {
    let u = t / 3f64.sqrt();
    1.0 - 2.0 / std::f64::consts::PI * (u.atan() + u / (1.0 + u * u))
}

/// A paired t statistic by hand: mean / (sd / sqrt(n)).
fn t_of(d: &[f64]) -> f64 {
    let n = d.len() as f64;
    let m = d.iter().sum::<f64>() / n;
    let var = d.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    m / (var.sqrt() / n.sqrt())
}

fn rows(tsv: &str) -> Vec<Vec<String>> {
    tsv.lines()
        .skip(1)
        .map(|l| l.split('\t').map(String::from).collect())
        .collect()
}

fn f(x: &str) -> f64 {
    x.parse().unwrap_or_else(|_| panic!("a number: {x}"))
}

fn close(got: f64, want: f64, rel: f64) {
    assert!(
        (got - want).abs() <= rel * want.abs(),
        "{got} vs {want} (relative {rel})"
    );
}

#[test]
fn hand_checked_tsv() {
    let fx = files();
    let (out, _) = ok(&[
        "compare",
        s(&fx.qrels),
        s(&fx.a),
        s(&fx.b),
        "-m",
        "RR",
        "-m",
        "P@1",
        "--format",
        "tsv",
        "--labels",
        "A,B",
        "--seed",
        "3",
    ]);
    assert_eq!(
        out.lines().next().unwrap(),
        "measure\trun_a\trun_b\tmean_a\tmean_b\tdiff\tp_t\tp_randomization\tp_adjusted\tci_low\t\
         ci_high\teffect\twins\tties\tlosses"
    );
    let r = rows(&out);
    assert_eq!(r.len(), 2);
    let (rr, p1) = (&r[0], &r[1]);
    assert_eq!(&rr[..3], ["RR", "A", "B"]);
    assert_eq!(&p1[..3], ["P@1", "A", "B"]);
    close(f(&rr[3]), (0.5 + 1.0 + 1.0 / 3.0 + 1.0) / 4.0, 1e-15);
    close(f(&rr[4]), 3.5 / 4.0, 1e-15);
    close(f(&rr[5]), 1.0 / 6.0, 1e-15);
    // RR: t = (1/6) / (sqrt(5/18) / 2); P@1: t = 0.25 / (sqrt(11/12) / 2).
    let t_rr = (1.0 / 6.0) / ((5.0f64 / 18.0).sqrt() / 2.0);
    let t_p1 = 0.25 / ((11.0f64 / 12.0).sqrt() / 2.0);
    close(t_of(&[0.5, 0.0, 2.0 / 3.0, -0.5]), t_rr, 1e-14);
    let (p_rr, p_p1) = (t3_two_sided(t_rr), t3_two_sided(t_p1));
    close(f(&rr[6]), p_rr, 1e-12);
    close(f(&p1[6]), p_p1, 1e-12);
    // Exact randomization over the 16 sign patterns of RR's differences: 12 reach |2/3|
    // (6 of the 8 patterns of the non-zero ones, times 2 for the zero); 10,000 draws: within
    // 0.02 (4.6 standard errors).
    assert!((f(&rr[7]) - 0.75).abs() < 0.02, "{}", rr[7]);
    // P@1's differences (1, 0, 1, -1): every pattern's |sum| (1 or 3) reaches 1: p = 1.
    assert_eq!(f(&p1[7]), 1.0);
    // Holm over the two t-test p-values: the smaller times 2, the larger at least that.
    let (lo, hi) = (p_rr.min(p_p1), p_rr.max(p_p1));
    let (adj_lo, adj_hi) = ((2.0 * lo).min(1.0), hi.max((2.0 * lo).min(1.0)));
    let adj = |p: f64| if p == lo { adj_lo } else { adj_hi };
    close(f(&rr[8]), adj(p_rr), 1e-12);
    close(f(&p1[8]), adj(p_p1), 1e-12);
    // The interval holds the difference; it is within the differences' range.
    let (lo, hi) = (f(&rr[9]), f(&rr[10]));
    assert!((-0.5..=1.0 / 6.0).contains(&lo), "{lo}");
    assert!((1.0 / 6.0..=2.0 / 3.0).contains(&hi), "{hi}");
    // Effect: mean / sd.
    close(f(&rr[11]), (1.0 / 6.0) / (5.0f64 / 18.0).sqrt(), 1e-14);
    assert_eq!(&rr[12..], ["2", "1", "1"]);
    assert_eq!(&p1[12..], ["2", "1", "1"]);
}

#[test]
fn a_run_against_itself() {
    let fx = files();
    let (out, _) = ok(&[
        "compare",
        s(&fx.qrels),
        s(&fx.a),
        s(&fx.a),
        "-m",
        "RR",
        "-m",
        "AP",
        "--format",
        "tsv",
    ]);
    for r in rows(&out) {
        assert_eq!(r[3], r[4]);
        assert_eq!(&r[5..9], ["0", "1", "1", "1"], "{r:?}");
        assert_eq!(&r[9..], ["0", "0", "0", "0", "4", "0"], "{r:?}");
    }
}

#[test]
fn seeded_output_repeats() {
    let fx = files();
    let args = |seed: &'static str| {
        vec![
            "compare".to_string(),
            s(&fx.qrels).into(),
            s(&fx.a).into(),
            s(&fx.b).into(),
            s(&fx.a).into(),
            "--all-pairs".into(),
            "--format".into(),
            "json".into(),
            "--seed".into(),
            seed.into(),
        ]
    };
    let go = |seed| {
        let a = args(seed);
        ok(&a.iter().map(|x| x.as_str()).collect::<Vec<_>>()).0
    };
    assert_eq!(go("11"), go("11"));
    let v: serde_json::Value = serde_json::from_str(&go("11")).unwrap();
    // 3 runs, every pair, eval's 5 default measures.
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3 * v["measures"].as_array().unwrap().len());
    assert_eq!(v["goals"], 4);
    assert_eq!(v["correction"], "holm");
}

#[test]
fn table_and_markdown_mark_the_best() {
    let fx = files();
    let base = [
        "compare",
        s(&fx.qrels),
        s(&fx.a),
        s(&fx.b),
        "-m",
        "RR",
        "--labels",
        "base,new",
        "--correction",
        "none",
    ];
    let mut table_args = base.to_vec();
    table_args.extend(["--alpha", "0.5"]);
    let (table, _) = ok(&table_args);
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].contains("run") && lines[0].contains("RR"),
        "{table}"
    );
    // new: mean 0.875, the best; p_t of RR is about 0.57, above 0.5: no letter.
    assert!(lines[1].starts_with("a  base  0.7083"), "{table}");
    assert!(lines[2].starts_with("b  new   0.8750*"), "{table}");
    let mut md_args = base.to_vec();
    md_args.extend(["--format", "markdown", "--alpha", "0.6"]);
    let (md, _) = ok(&md_args);
    assert!(md.starts_with("| | run | RR |\n|---|---|---:|\n"), "{md}");
    assert!(md.contains("| a | base | 0.7083 |"), "{md}");
    // At alpha 0.6, new beats base.
    assert!(md.contains("| b | new | **0.8750**<sup>a</sup> |"), "{md}");
    // LaTeX (booktabs): the same marks, special characters escaped.
    let mut tex_args = base.to_vec();
    tex_args.extend(["--format", "latex", "--alpha", "0.6"]);
    tex_args[7] = "base_1,new&2";
    let (tex, _) = ok(&tex_args);
    assert_eq!(
        tex.lines().take(7).collect::<Vec<_>>(),
        [
            "\\begin{tabular}{llr}",
            "\\toprule",
            " & run & RR \\\\",
            "\\midrule",
            "a & base\\_1 & 0.7083 \\\\",
            "b & new\\&2 & \\textbf{0.8750}$^{\\mathrm{a}}$ \\\\",
            "\\bottomrule",
        ],
        "{tex}"
    );
    assert!(
        tex.contains("\\end{tabular}\n% Bold: the best mean"),
        "{tex}"
    );
}

#[test]
fn missing_goals_follow_missing() {
    let fx = files();
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c");
    // g4 left out.
    std::fs::write(&c, "g1 Q0 a 1 9 C\ng2 Q0 b 1 9 C\ng3 Q0 c 1 9 C\n").unwrap();
    let (out, err) = ok(&[
        "compare",
        s(&fx.qrels),
        s(&fx.a),
        s(&c),
        "-m",
        "RR",
        "--format",
        "tsv",
    ]);
    // --missing zero: g4 evaluated as empty (RR 0) in C: 4 goals, C mean 3/4.
    assert!(err.contains("1 goals have no predictions"), "{err}");
    assert_eq!(f(&rows(&out)[0][4]), 0.75);
    let (out, err) = ok(&[
        "compare",
        s(&fx.qrels),
        s(&fx.a),
        s(&c),
        "-m",
        "RR",
        "--format",
        "json",
        "--missing",
        "skip",
    ]);
    assert!(err.contains("left out of every comparison"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["goals"], 3);
    // A over g1..g3: (1/2 + 1 + 1/3) / 3.
    let mean_a = v["rows"][0]["mean_a"].as_f64().unwrap();
    close(mean_a, (0.5 + 1.0 + 1.0 / 3.0) / 3.0, 1e-15);
}

#[test]
fn fewer_than_two_goals_warn_and_give_nan() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    std::fs::write(p("q"), "g1 0 a 1\n").unwrap();
    std::fs::write(p("a"), "g1 Q0 a 1 9 A\n").unwrap();
    std::fs::write(p("b"), "g1 Q0 x 1 9 B\ng1 Q0 a 2 8 B\n").unwrap();
    let (out, err) = ok(&[
        "compare",
        s(&p("q")),
        s(&p("a")),
        s(&p("b")),
        "-m",
        "RR",
        "--format",
        "tsv",
    ]);
    assert!(
        err.contains("1 goal in common: no test can be made"),
        "{err}"
    );
    let r = &rows(&out)[0];
    assert_eq!(&r[3..6], ["1", "0.5", "-0.5"]);
    assert_eq!(&r[6..12], ["NaN"; 6]);
    assert_eq!(&r[12..], ["0", "0", "1"]);
}

#[test]
fn bad_inputs_are_named() {
    let fx = files();
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad");
    std::fs::write(&bad, "g1 Q0 a 1 9 A\ng2 Q0 b 1\n").unwrap();
    let err = fails(&["compare", s(&fx.qrels), s(&fx.a), s(&bad)]);
    assert!(err.contains("bad:2: expected 6 fields"), "{err}");
    let err = fails(&["compare", s(&fx.qrels), s(&fx.a), s(&fx.b), "--labels", "x"]);
    assert!(err.contains("--labels gives 1 names for 2 runs"), "{err}");
    let err = fails(&["compare", s(&fx.qrels), s(&fx.a), s(&fx.b), "-m", "NumRel"]);
    assert!(err.contains("`NumRel` is a sum over goals"), "{err}");
    let err = fails(&[
        "compare",
        s(&fx.qrels),
        s(&fx.a),
        s(&fx.b),
        "--alpha",
        "1.5",
    ]);
    assert!(err.contains("between 0 and 1"), "{err}");
    // One run is not a comparison.
    let o = run(&["compare", s(&fx.qrels), s(&fx.a)]);
    assert_eq!(o.status.code(), Some(2));
}

/// The README's compare example: the commands it shows print the table and the markdown it
/// shows.
#[test]
fn readme_example_is_what_the_command_prints() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let section = &readme[readme.find("## Comparing runs").expect("the section")..];
    let dir = tempfile::tempdir().unwrap();
    let in_dir = |args: &[&str]| {
        let o = Command::new(BIN)
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    };
    // The shell block's commands, run as written.
    let sh = &section[section.find("```sh\n").unwrap() + 6..];
    let sh = &sh[..sh.find("```").unwrap()];
    let mut compare = Vec::new();
    for line in sh.lines() {
        let args: Vec<&str> = line.split_whitespace().skip(1).collect();
        assert_eq!(line.split_whitespace().next(), Some("lemma-eval"), "{line}");
        if args[0] == "compare" {
            compare = args.clone();
        } else {
            in_dir(&args);
        }
    }
    assert!(!compare.is_empty(), "the block runs compare");
    let text = &section[section.find("```text\n").unwrap() + 8..];
    let text = &text[..text.find("```").unwrap()];
    assert_eq!(in_dir(&compare), text);
    let md_at = section.find("| | run |").unwrap();
    let md = &section[md_at..];
    let md = &md[..md.find("comparisons, adjusted").unwrap()];
    let mut md_args = compare.clone();
    md_args.extend(["--format", "markdown"]);
    let printed = in_dir(&md_args);
    assert!(
        printed.starts_with(md),
        "README:\n{md}\nprinted:\n{printed}"
    );
}

/// Student's t on 6 degrees of freedom: `P(|T| >= t) = 1 - x (1 + (1 - x²) / 2 + 3 (1 - x²)² /
/// 8)`, `x = t / sqrt(t² + 6)`.
fn t6_two_sided(t: f64) -> f64 {
    let x = t / (t * t + 6.0).sqrt();
    let y = 1.0 - x * x;
    1.0 - x * (1.0 + y / 2.0 + 3.0 * y * y / 8.0)
}

#[test]
fn tukey_of_two_runs_is_the_pooled_t_test() {
    // Two runs: Tukey's HSD is the two-sample t-test with the variance pooled, on 2·4 - 2 = 6
    // degrees of freedom. RR: A (1/2, 1, 1/3, 1), B (1, 1, 1, 1/2).
    let fx = files();
    let (out, _) = ok(&[
        "compare",
        s(&fx.qrels),
        s(&fx.a),
        s(&fx.b),
        "-m",
        "RR",
        "--all-pairs",
        "--test",
        "tukey",
        "--format",
        "json",
    ]);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ss = |v: &[f64]| {
        let m = v.iter().sum::<f64>() / v.len() as f64;
        v.iter().map(|x| (x - m) * (x - m)).sum::<f64>()
    };
    let mse = (ss(&[0.5, 1.0, 1.0 / 3.0, 1.0]) + ss(&[1.0, 1.0, 1.0, 0.5])) / 6.0;
    let t = (1.0 / 6.0) / (mse * 2.0 / 4.0).sqrt();
    let row = &j["rows"][0];
    close(row["p_tukey"].as_f64().unwrap(), t6_two_sided(t), 1e-9);
    // Not corrected further.
    assert_eq!(row["p_adjusted"], row["p_tukey"]);
    assert_eq!(j["correction"], "none");
    assert_eq!(j["test"], "tukey");
    // Three runs, the third a copy of A: A against it, p = 1.
    let (out, _) = ok(&[
        "compare",
        s(&fx.qrels),
        s(&fx.a),
        s(&fx.b),
        s(&fx.a),
        "-m",
        "RR",
        "--all-pairs",
        "--test",
        "tukey",
        "--format",
        "tsv",
        "--labels",
        "A,B,A2",
    ]);
    let r = rows(&out);
    assert_eq!(r.len(), 3);
    assert_eq!(&r[1][..3], ["RR", "A", "A2"]);
    assert_eq!(f(&r[1][8]), 1.0);
    // Without every pair, or with a correction, refused.
    let e = fails(&[
        "compare",
        s(&fx.qrels),
        s(&fx.a),
        s(&fx.b),
        "--test",
        "tukey",
    ]);
    assert!(e.contains("add --all-pairs"), "{e}");
    let e = fails(&[
        "compare",
        s(&fx.qrels),
        s(&fx.a),
        s(&fx.b),
        "--all-pairs",
        "--test",
        "tukey",
        "--correction",
        "holm",
    ]);
    assert!(e.contains("--correction does not apply"), "{e}");
}

#[test]
fn a_system_of_runs_is_their_mean_per_goal() {
    // System S = {A, B}: RR per goal (3/4, 1, 2/3, 3/4), mean 19/24; against A the differences
    // are half of B's against A: the same t, the same p-value; the spread of its runs' means
    // (17/24, 7/8) is (1/6) / sqrt(2).
    let fx = files();
    let sys = format!("S={},{}", s(&fx.a), s(&fx.b));
    let args = [
        "compare",
        s(&fx.qrels),
        s(&fx.a),
        "--system",
        &sys,
        "-m",
        "RR",
        "--labels",
        "A",
    ];
    let mut tsv = args.to_vec();
    tsv.extend(["--format", "tsv"]);
    let (out, _) = ok(&tsv);
    let r = rows(&out);
    assert_eq!(&r[0][..3], ["RR", "A", "S"]);
    close(f(&r[0][4]), 19.0 / 24.0, 1e-15);
    close(f(&r[0][5]), 1.0 / 12.0, 1e-15);
    let t_rr = (1.0 / 6.0) / ((5.0f64 / 18.0).sqrt() / 2.0);
    close(f(&r[0][6]), t3_two_sided(t_rr), 1e-12);
    let mut json = args.to_vec();
    json.extend(["--format", "json"]);
    let (out, _) = ok(&json);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["runs"][1]["members"], 2);
    close(
        j["runs"][1]["spread"]["RR"].as_f64().unwrap(),
        (1.0 / 6.0) / 2f64.sqrt(),
        1e-14,
    );
    assert_eq!(j["runs"][0]["spread"], serde_json::json!({}));
    let (table, _) = ok(&args);
    assert!(table.contains("S    0.7917±0.1179*"), "{table}");
    assert!(table.contains("±: the standard deviation of a system's runs' means (S of 2 runs)"));
    // A system alone is not a comparison; a malformed one is named.
    let e = fails(&["compare", s(&fx.qrels), "--system", &sys]);
    assert!(e.contains("at least two runs or systems"), "{e}");
    let e = fails(&["compare", s(&fx.qrels), s(&fx.a), "--system", "S"]);
    assert!(e.contains("expected NAME=RUN1,RUN2,..."), "{e}");
}

/// `report` with two runs shows each measure's difference from the first run as `compare` finds
/// it with its defaults (the same evaluation, tests and seed): RR's difference by hand is
/// (1/2 + 0 + 2/3 - 1/2) / 4 = 1/6 and P@1's (1 + 0 + 1 - 1) / 4 = 1/4; the interval and the
/// adjusted p-value are compare's, printed to four places; a significant cell is in bold.
#[test]
fn report_shows_each_difference_as_compare_finds_it() {
    let fs = files();
    let page = fs._dir.path().join("page.html");
    ok(&["report", s(&fs.qrels), s(&fs.a), s(&fs.b), "-o", s(&page)]);
    let html = std::fs::read_to_string(&page).unwrap();
    let (tsv, _) = ok(&[
        "compare",
        s(&fs.qrels),
        s(&fs.a),
        s(&fs.b),
        "--format",
        "tsv",
    ]);
    let section = html
        .split("<h2>Differences from ")
        .nth(1)
        .expect("a section of differences")
        .split("</table>")
        .next()
        .unwrap();
    let table = rows(&tsv);
    assert!(table.len() >= 2, "{tsv}");
    for r in &table {
        let (diff, p, low, high) = (f(&r[5]), f(&r[8]), f(&r[9]), f(&r[10]));
        let p_text = if p < 1e-4 {
            "p < 0.0001".to_string()
        } else {
            format!("p = {p:.4}")
        };
        let cell = format!("{diff:+.4} [{low:+.4}, {high:+.4}] {p_text}");
        let row = format!("<tr><td>{}</td><td", r[0]);
        let at = section
            .find(&row)
            .unwrap_or_else(|| panic!("{row} in {section}"));
        let line = section[at..].lines().next().unwrap();
        assert!(line.contains(&cell), "{cell} in {line}");
        assert_eq!(line.contains("class=\"best\""), p < 0.05, "{line}");
    }
    let diff_of = |m: &str| f(&table.iter().find(|r| r[0] == m).expect(m)[5]);
    close(diff_of("RR"), 1.0 / 6.0, 1e-12);
    close(diff_of("P@1"), 0.25, 1e-12);
    // One run: no section.
    ok(&["report", s(&fs.qrels), s(&fs.a), "-o", s(&page)]);
    let one = std::fs::read_to_string(&page).unwrap();
    assert!(!one.contains("Differences from"));
}
