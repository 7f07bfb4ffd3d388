//! Output of `lemma-eval compare`: `table` for the terminal, `markdown` and `latex` (booktabs)
//! for a report, `tsv` and `json` for programs, from a [`Comparison`].
//!
//! `table`, `markdown` and `latex` lay out runs × measures: each run's mean (4 decimals), the
//! best mean of each measure marked (`*` in the table, bold in markdown and LaTeX), and after it
//! the letters of the runs it beats significantly (superscript in markdown and LaTeX) (its mean higher, the adjusted p-value below alpha; ranx's
//! style); the table then lists every comparison. `tsv` has one row per comparison, the header
//! `measure run_a run_b mean_a mean_b diff p_t p_randomization p_adjusted ci_low ci_high effect
//! wins ties losses`, numbers at full precision (`NaN` where undefined, `inf` for an infinite
//! effect); `json` one object whose `rows` carry the same fields (`null` where undefined) and
//! `p_bootstrap`, `p_tukey` (`null` unless the test is Tukey's) and `significant`, with the
//! runs, the goals compared and the options.

use super::push_f64;
use crate::compare::{CompareRow, Comparison, Test};
use crate::Choice;
use std::fmt::Write as _;
use std::io::{self, Write};

/// Output formats of `compare`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CompareFormat {
    /// Runs × measures for the terminal, then every comparison.
    Table,
    /// Runs × measures as a Markdown table.
    Markdown,
    /// Runs × measures as a LaTeX table (booktabs).
    Latex,
    /// A row per comparison, tab-separated, a header first.
    Tsv,
    /// One JSON object.
    Json,
}

impl Choice for CompareFormat {
    const OPTION: &'static str = "format";
    const VALUES: &'static [(&'static str, &'static str, Self)] = &[
        (
            "table",
            "runs × measures (best marked, letters for the runs each beats), then every comparison",
            CompareFormat::Table,
        ),
        (
            "markdown",
            "runs × measures as a Markdown table",
            CompareFormat::Markdown,
        ),
        (
            "latex",
            "runs × measures as a LaTeX tabular (booktabs: \\toprule, \\midrule, \\bottomrule)",
            CompareFormat::Latex,
        ),
        (
            "tsv",
            "a header line, then a row per comparison, tab-separated, full precision",
            CompareFormat::Tsv,
        ),
        ("json", "one JSON object", CompareFormat::Json),
    ];
}

/// The tsv header (and the json rows' fields, in order).
pub const COMPARE_FIELDS: [&str; 15] = [
    "measure",
    "run_a",
    "run_b",
    "mean_a",
    "mean_b",
    "diff",
    "p_t",
    "p_randomization",
    "p_adjusted",
    "ci_low",
    "ci_high",
    "effect",
    "wins",
    "ties",
    "losses",
];

/// Writes `c` in `format`.
pub fn write_comparison(
    out: &mut dyn Write,
    c: &Comparison,
    format: CompareFormat,
) -> io::Result<()> {
    let text = match format {
        CompareFormat::Table => table(c),
        CompareFormat::Markdown => markdown(c),
        CompareFormat::Latex => latex(c),
        CompareFormat::Tsv => tsv(c),
        CompareFormat::Json => format!("{}\n", json(c)),
    };
    out.write_all(text.as_bytes())
}

/// A row's numbers in [`COMPARE_FIELDS`]' order, from `mean_a` to `effect`.
fn numbers(r: &CompareRow) -> [f64; 9] {
    [
        r.mean_a,
        r.mean_b,
        r.diff,
        r.p_t,
        r.p_randomization,
        r.p_adjusted,
        r.ci_low,
        r.ci_high,
        r.effect,
    ]
}

fn tsv(c: &Comparison) -> String {
    let mut out = Vec::new();
    out.extend_from_slice(COMPARE_FIELDS.join("\t").as_bytes());
    out.push(b'\n');
    for r in &c.rows {
        out.extend_from_slice(c.measures[r.measure].to_string().as_bytes());
        for s in [&c.runs[r.a].label, &c.runs[r.b].label] {
            out.push(b'\t');
            out.extend_from_slice(s.as_bytes());
        }
        for v in numbers(r) {
            out.push(b'\t');
            push_f64(&mut out, v);
        }
        for v in [r.wins, r.ties, r.losses] {
            out.push(b'\t');
            super::push_u64(&mut out, v);
        }
        out.push(b'\n');
    }
    String::from_utf8(out).expect("labels and measure names are UTF-8")
}

fn num(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

fn json(c: &Comparison) -> serde_json::Value {
    use serde_json::{json, Map, Value};
    let rows: Vec<Value> = (c.rows.iter())
        .map(|r| {
            let mut o = Map::new();
            o.insert("measure".into(), json!(c.measures[r.measure].to_string()));
            o.insert("run_a".into(), json!(c.runs[r.a].label));
            o.insert("run_b".into(), json!(c.runs[r.b].label));
            for (k, v) in COMPARE_FIELDS[3..12].iter().zip(numbers(r)) {
                o.insert(k.to_string(), num(v));
            }
            o.insert("wins".into(), json!(r.wins));
            o.insert("ties".into(), json!(r.ties));
            o.insert("losses".into(), json!(r.losses));
            o.insert("p_bootstrap".into(), num(r.p_bootstrap));
            o.insert("p_tukey".into(), num(r.p_tukey));
            o.insert("significant".into(), json!(r.significant));
            Value::Object(o)
        })
        .collect();
    let runs: Vec<Value> = (c.runs.iter().enumerate())
        .map(|(i, r)| {
            json!({
                "label": r.label,
                "means": (c.measures.iter().zip(&c.means[i]))
                    .map(|(m, &v)| (m.to_string(), num(v)))
                    .collect::<Map<String, Value>>(),
                "goals": super::counts_json(&r.counts),
                "lacking": r.lacking,
                "members": r.members,
                "spread": (c.measures.iter().zip(&r.spread))
                    .map(|(m, &v)| (m.to_string(), num(v)))
                    .collect::<Map<String, Value>>(),
            })
        })
        .collect();
    let o = &c.options;
    json!({
        "goals": c.goals,
        "groups": c.groups,
        "measures": c.measures.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
        "runs": runs,
        "test": o.test.word(),
        "correction": o.correction.word(),
        "alpha": o.alpha,
        "permutations": o.permutations,
        "seed": o.seed,
        "level": o.level,
        "rows": rows,
    })
}

/// A mean as the table prints it: 4 decimals, `NaN` where undefined.
fn fixed(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else {
        format!("{v:.4}")
    }
}

/// A p-value: 4 decimals, or 2 significant digits below 0.0001.
fn pvalue(p: f64) -> String {
    if p.is_nan() {
        "NaN".into()
    } else if p != 0.0 && p < 1e-4 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}

/// What the marks mean, in words.
fn legend(c: &Comparison, best: &str, letters: &str) -> String {
    let o = &c.options;
    let lower: Vec<String> = (c.measures.iter())
        .filter(|m| m.lower_is_better())
        .map(|m| m.to_string())
        .collect();
    let lowest = match lower.is_empty() {
        true => String::new(),
        false => format!(" (the lowest for {})", lower.join(", ")),
    };
    let test = match o.test {
        Test::T => "paired t-test",
        Test::Randomization => "randomization test",
        Test::Bootstrap => "bootstrap test",
        Test::Tukey => {
            return format!(
                "{best}: the best mean of the measure{lowest}; {letters}: the runs it beats (Tukey's HSD \
                 over the {} runs, p < {}); {}",
                c.runs.len(),
                o.alpha,
                units(c)
            )
        }
    };
    format!(
        "{best}: the best mean of the measure{lowest}; {letters}: the runs it beats ({test}, {} \
         correction over {} comparisons, adjusted p < {}); {}",
        o.correction.word(),
        c.rows.len(),
        o.alpha,
        units(c)
    )
}

/// For systems of several runs: what the `±` means.
fn systems_note(c: &Comparison) -> String {
    let several: Vec<String> = (c.runs.iter())
        .filter(|r| r.members > 1)
        .map(|r| format!("{} of {} runs", r.label, r.members))
        .collect();
    if several.is_empty() {
        return String::new();
    }
    format!(
        "; ±: the standard deviation of a system's runs' means ({}), each goal's value the mean \
         of its runs'",
        several.join(", ")
    )
}

/// What the tests were over: goals, or groups of them.
fn units(c: &Comparison) -> String {
    match c.groups {
        None => format!("{} goals compared", c.goals),
        Some(g) => format!(
            "{} goals in {g} groups compared (the groups are the tests' units)",
            c.goals
        ),
    }
}

/// Each cell of the runs × measures grid: the mean, whether it is the best, the letters of the
/// runs it beats.
/// (`pm` separates a system's mean from its runs' spread: `±` in the table.)
fn cells(c: &Comparison, pm: &str) -> Vec<Vec<(String, bool, String)>> {
    let beaten: Vec<Vec<Vec<usize>>> = (0..c.measures.len()).map(|m| c.beaten(m)).collect();
    let best: Vec<Option<usize>> = (0..c.measures.len()).map(|m| c.best(m)).collect();
    (0..c.runs.len())
        .map(|r| {
            (0..c.measures.len())
                .map(|m| {
                    let letters: String = beaten[m][r]
                        .iter()
                        .map(|&i| Comparison::letter(i))
                        .collect();
                    let mut v = fixed(c.means[r][m]);
                    if let Some(sd) = c.runs[r].spread.get(m) {
                        let _ = write!(v, "{pm}{}", fixed(*sd));
                    }
                    (v, best[m] == Some(r), letters)
                })
                .collect()
        })
        .collect()
}

fn table(c: &Comparison) -> String {
    let cells = cells(c, "±");
    let mut grid: Vec<Vec<String>> = Vec::new();
    let mut head = vec![String::new(), "run".to_string()];
    head.extend(c.measures.iter().map(|m| m.to_string()));
    grid.push(head);
    for (r, row) in cells.iter().enumerate() {
        let mut line = vec![Comparison::letter(r), c.runs[r].label.clone()];
        line.extend(
            row.iter()
                .map(|(v, best, letters)| format!("{v}{}{letters}", if *best { "*" } else { " " })),
        );
        grid.push(line);
    }
    let mut out = aligned(&grid);
    out.push_str(&legend(c, "*", "letters"));
    out.push_str(&systems_note(c));
    out.push_str("\n\n");
    let mut list = vec![[
        "measure", "a", "b", "diff", "95% CI", "p_t", "p_rand", "p_adj", "effect", "w/t/l",
    ]
    .map(String::from)
    .to_vec()];
    for r in &c.rows {
        let mark = if r.significant { " *" } else { "" };
        list.push(vec![
            c.measures[r.measure].to_string(),
            Comparison::letter(r.a),
            Comparison::letter(r.b),
            if r.diff.is_nan() {
                "NaN".into()
            } else {
                format!("{:+.4}", r.diff)
            },
            format!("[{}, {}]", fixed_signed(r.ci_low), fixed_signed(r.ci_high)),
            pvalue(r.p_t),
            pvalue(r.p_randomization),
            format!("{}{mark}", pvalue(r.p_adjusted)),
            if r.effect.is_nan() {
                "NaN".into()
            } else {
                format!("{:.2}", r.effect)
            },
            format!("{}/{}/{}", r.wins, r.ties, r.losses),
        ]);
    }
    let level = c.options.level * 100.0;
    if level != 95.0 {
        list[0][4] = format!("{level}% CI");
    }
    out.push_str(&aligned(&list));
    out.push_str(
        "diff: mean of b - a; CI: bootstrap percentile interval of diff; p_adj: the deciding \
         p-value adjusted, * below alpha; w/t/l: goals where b is higher, equal, lower\n",
    );
    out
}

fn fixed_signed(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else {
        format!("{v:+.4}")
    }
}

/// Columns padded to their widest cell (in characters), two spaces apart.
fn aligned(grid: &[Vec<String>]) -> String {
    let cols = grid.iter().map(|r| r.len()).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|i| {
            (grid.iter())
                .filter_map(|r| r.get(i))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in grid {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            let _ = write!(line, "{cell:<w$}  ", w = width[i]);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn markdown(c: &Comparison) -> String {
    let cells = cells(c, " ± ");
    let escape = |s: &str| s.replace('|', "\\|");
    let mut out = String::from("| | run |");
    for m in &c.measures {
        let _ = write!(out, " {} |", escape(&m.to_string()));
    }
    out.push_str("\n|---|---|");
    for _ in &c.measures {
        out.push_str("---:|");
    }
    out.push('\n');
    for (r, row) in cells.iter().enumerate() {
        let _ = write!(
            out,
            "| {} | {} |",
            Comparison::letter(r),
            escape(&c.runs[r].label)
        );
        for (v, best, letters) in row {
            let v = if *best { format!("**{v}**") } else { v.clone() };
            let sup = if letters.is_empty() {
                String::new()
            } else {
                format!("<sup>{letters}</sup>")
            };
            let _ = write!(out, " {v}{sup} |");
        }
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&legend(c, "Bold", "superscript letters"));
    out.push_str(&systems_note(c));
    out.push_str(".\n");
    out
}

/// `s` with LaTeX's special characters escaped.
fn tex(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '\\' => out.push_str("\\textbackslash{}"),
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(ch);
            }
            _ => out.push(ch),
        }
    }
    out
}

/// Runs × measures as a booktabs tabular (`\\usepackage{booktabs}`), the legend after it as a
/// LaTeX comment.
fn latex(c: &Comparison) -> String {
    let cells = cells(c, " $\\pm$ ");
    let mut out = format!(
        "\\begin{{tabular}}{{ll{}}}\n\\toprule\n & run",
        "r".repeat(c.measures.len())
    );
    for m in &c.measures {
        let _ = write!(out, " & {}", tex(&m.to_string()));
    }
    out.push_str(" \\\\\n\\midrule\n");
    for (r, row) in cells.iter().enumerate() {
        let _ = write!(out, "{} & {}", Comparison::letter(r), tex(&c.runs[r].label));
        for (v, best, letters) in row {
            let v = if *best {
                format!("\\textbf{{{v}}}")
            } else {
                v.clone()
            };
            let sup = if letters.is_empty() {
                String::new()
            } else {
                format!("$^{{\\mathrm{{{letters}}}}}$")
            };
            let _ = write!(out, " & {v}{sup}");
        }
        out.push_str(" \\\\\n");
    }
    out.push_str("\\bottomrule\n\\end{tabular}\n% ");
    out.push_str(&legend(c, "Bold", "superscript letters"));
    out.push_str(&systems_note(c));
    out.push_str(".\n");
    out
}
