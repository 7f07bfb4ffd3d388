//! # lemma-report: one evaluation as one HTML page
//!
//! [`evaluate_run`] reads one run in one pass: the default measures of `lemma-eval eval`
//! (`DEFAULT_MEASURES`), the macro-averaged interpolated curve at 11 recall levels, the exact
//! pooled curve (spilled past the memory budget, [`lemma_eval::pooled`]) and the distributions of
//! per-goal AP and `Depth(recall=1.0)`, counted as the goals stream by (memory does not grow with
//! the goals). [`html`] lays any number of runs out as one self-contained page: inline CSS and
//! inline SVG (drawn by `lemma-plot`), nothing fetched from anywhere.
//!
//! The page holds: the command line and the input files with their sizes; the summary table of
//! every run (the best value of each measure in bold: the highest, the lowest for `Depth`); the
//! goal counts (evaluated, evaluated with no predictions, skipped and why); the macro and pooled
//! precision-recall curves of every run overlaid; the histograms of per-goal AP and of
//! `Depth(recall=1.0)`; with two runs or more, each run's difference from the first
//! ([`compare_runs`]: `lemma-eval compare`'s tests with its defaults), its 95% interval and
//! whether it is significant.
//!
//! With the premise protocol (a corpus in the builder: docs/METRICS.md §9), a section of the
//! leak rate and recall by origin (`Leak@1`, `Leak@10`, `LeakRank`, `R(origin=in-file)@10`,
//! `R(origin=imported)@10`) and of the premise counts (masked, not in the corpus, relevant
//! inaccessible, ...). With strata (`--by`), a section per stratum: the summary of its goals
//! alone. Under `--group-by` the measures with no mean over groups (`Depth`, `LeakRank`, the
//! origin measures) are left out, and so is the `Depth` histogram.

use lemma_accum::{Aggregate, Aggregation, GoalCounts, Measure};
use lemma_eval::compare::{Compare, CompareOptions, Comparison, Run, RunSource};
use lemma_eval::curve::{macro_measures, recall_levels};
use lemma_eval::pooled::PooledSetup;
use lemma_eval::values::{Values, ValuesRecorder};
use lemma_eval::{
    EvalError, EvaluatorBuilder, GoalRow, Job, PredictedInput, RowFn, DEFAULT_MEASURES,
};
use lemma_ingest::ActualSets;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bins of the per-goal AP histogram: `[0, 0.1)`, ..., `[0.9, 1]`.
pub const AP_BINS: usize = 10;

/// The premise protocol's measures on the page, with a corpus.
pub const PREMISE_MEASURES: [&str; 5] = [
    "Leak@1",
    "Leak@10",
    "LeakRank",
    "R(origin=in-file)@10",
    "R(origin=imported)@10",
];

/// What the premise protocol gave a run (with a corpus).
#[derive(Clone, Debug)]
pub struct PremiseFigures {
    /// Whether inaccessible premises were removed before ranks were given (`--mask
    /// accessible`).
    pub masked: bool,
    /// [`PREMISE_MEASURES`] (those with a mean over groups, under `--group-by`) and their
    /// aggregates.
    pub table: Vec<(Measure, Aggregate)>,
    /// The counts by name ([`lemma_eval::PremiseReport::counts`]).
    pub counts: Vec<(&'static str, u64)>,
}

/// One stratum's figures (`--by`): the summary of its goals alone.
#[derive(Clone, Debug)]
pub struct StratumReport {
    /// `KEY=VALUE`.
    pub label: String,
    /// The table's measures, then the premise measures (with a corpus), and their aggregates.
    pub table: Vec<(Measure, Aggregate)>,
    /// Goal counts by fate.
    pub counts: GoalCounts,
}

/// One run's figures for the page.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// The run's name (its file).
    pub name: String,
    /// The table's measures and their aggregates, in `DEFAULT_MEASURES`' order.
    pub table: Vec<(Measure, Aggregate)>,
    /// Goal counts by fate.
    pub counts: GoalCounts,
    /// The macro-averaged interpolated curve: (recall level, mean precision).
    pub macro_curve: Vec<(f64, f64)>,
    /// The pooled curve's points, thinned for drawing ([`lemma_plot::Thin`]).
    pub pooled_curve: Vec<(f64, f64)>,
    /// Pooled AP.
    pub pooled_ap: f64,
    /// Best pooled F1 and its threshold.
    pub best_f1: Option<(f64, f64)>,
    /// Distinct scores (rows of the exact pooled curve).
    pub distinct_scores: u64,
    /// Goals per AP bin ([`AP_BINS`]).
    pub ap_hist: [u64; AP_BINS],
    /// Goals per `Depth(recall=1.0)` bin: `[1, 2)`, `[2, 4)`, `[4, 8)`, ...
    pub depth_hist: Vec<u64>,
    /// Goals that never find all their relevant lemmas.
    pub depth_never: u64,
    /// With a corpus: the leak rate, recall by origin and the premise counts.
    pub premises: Option<PremiseFigures>,
    /// With strata (`--by`): each stratum's summary, in the summary's order.
    pub strata: Vec<StratumReport>,
    /// Wall time of the pass.
    pub elapsed: Duration,
}

/// Evaluates one run for the page: `builder` carries the ranking options (its measures are
/// replaced), `pooled` keeps the pooled curve (a setup per run).
pub fn evaluate_run(
    name: &str,
    builder: EvaluatorBuilder,
    actual: Arc<ActualSets>,
    predicted: impl Into<PredictedInput>,
    pooled: &PooledSetup,
) -> Result<RunReport, EvalError> {
    let (run, _) = evaluate_recorded(name, builder, actual, predicted.into(), pooled, None)?;
    Ok(run)
}

/// [`evaluate_run`], also recording each goal's values of `record` (the comparison's
/// measures) when given, in the same pass: 8 bytes × goals × measures held.
fn evaluate_recorded(
    name: &str,
    builder: EvaluatorBuilder,
    actual: Arc<ActualSets>,
    predicted: PredictedInput,
    pooled: &PooledSetup,
    record: Option<&[Measure]>,
) -> Result<(RunReport, Option<Values>), EvalError> {
    let started = Instant::now();
    let levels = recall_levels(11);
    let settings = builder.settings();
    let masked = settings.premises.as_ref().map(|p| p.masks());
    // Under --group-by, only the measures with a mean over groups; under --ties group, no leak
    // measure (they read the unmasked ranking premise by premise).
    let grouped = settings.group_by.is_some();
    let tie_groups = settings.ranking.ties == lemma_eval::TieMode::Group;
    let parse = |names: &[&str]| -> Result<Vec<Measure>, EvalError> {
        let ms = Measure::parse_all(names.iter().copied())
            .map_err(|e| EvalError::Options(e.to_string()))?;
        Ok((ms.into_iter())
            .filter(|m| {
                !grouped || !matches!(m.aggregation(), Aggregation::Depth | Aggregation::Covered)
            })
            .filter(|m| !tie_groups || !m.reads_leaks())
            .collect())
    };
    let mut measures = parse(&DEFAULT_MEASURES)?;
    let table_len = measures.len();
    if masked.is_some() {
        measures.extend(parse(&PREMISE_MEASURES)?);
    }
    let premise_len = measures.len() - table_len;
    let curve_names: Vec<String> = macro_measures(&levels);
    let curve_names: Vec<&str> = curve_names.iter().map(String::as_str).collect();
    measures.extend(parse(&curve_names)?);
    let at = |n: &str| {
        let m = Measure::parse_all([n]).expect("a default measure")[0];
        measures.iter().position(|x| *x == m)
    };
    let ap_at = at("AP").expect("AP is a default measure");
    let depth_at = at("Depth(recall=1.0)");
    // The comparison's measures, where the rows carry them (appended when the page's lack one).
    let mut picks = Vec::new();
    for m in record.unwrap_or(&[]) {
        picks.push(match measures.iter().position(|x| x == m) {
            Some(i) => i,
            None => {
                measures.push(*m);
                measures.len() - 1
            }
        });
    }
    // The page's measures as laid out here: `--by origin` adds none (recall by origin at 10 is
    // among them with a corpus).
    let builder = (builder.measures(measures.clone()))
        .pooled(pooled.spec())
        .as_named();
    let mut recorder = record.map(|r| ValuesRecorder::new(builder.settings(), r));
    let mut ap_hist = [0u64; AP_BINS];
    let mut depth_hist: Vec<u64> = Vec::new();
    let mut depth_never = 0u64;
    let mut rows = RowFn(|row: GoalRow| {
        if let Some(r) = &mut recorder {
            r.add_values(&row.goal, picks.iter().map(|&i| row.values[i]));
        }
        if let Some(ap) = row.values[ap_at] {
            ap_hist[((ap * AP_BINS as f64) as usize).min(AP_BINS - 1)] += 1;
        }
        let Some(depth_at) = depth_at else {
            return Ok(());
        };
        match row.values[depth_at] {
            Some(d) if d >= 1.0 => {
                let bin = (d as u64).ilog2() as usize;
                if depth_hist.len() <= bin {
                    depth_hist.resize(bin + 1, 0);
                }
                depth_hist[bin] += 1;
            }
            _ => depth_never += 1,
        }
        Ok(())
    });
    let done = Job::new(builder, actual, predicted)
        .run(&mut rows, None)?
        .evaluation;
    let summary = &done.summary;
    let recorded = recorder.map(|r| {
        let counts = summary.counts();
        r.finish(counts, lemma_eval::output::warnings(&done.report, &counts))
    });
    let aggregates = summary.aggregates();
    let with_premises = table_len + premise_len;
    let premises = masked.map(|masked| PremiseFigures {
        masked,
        table: aggregates[table_len..with_premises].to_vec(),
        counts: done.report.premises.counts().to_vec(),
    });
    let strata = (summary.strata().into_iter())
        .map(|(label, s)| StratumReport {
            label,
            table: s.aggregates()[..with_premises].to_vec(),
            counts: s.counts(),
        })
        .collect();
    // The curve's measures follow the table's and the premise measures.
    let macro_curve = (levels.iter().zip(&aggregates[with_premises..]))
        .filter_map(|(&r, (_, a))| Some((r, a.headline()?)))
        .collect();
    let curve = summary.pooled().expect("the plan keeps the pooled curve");
    let view = pooled.view(curve)?;
    let mut thin = lemma_plot::Thin::default();
    view.rows(|r| thin.push((r.recall, r.precision)))?;
    let st = view.stats();
    let run = RunReport {
        name: name.to_string(),
        table: aggregates[..table_len].to_vec(),
        counts: summary.counts(),
        macro_curve,
        pooled_curve: thin.finish(),
        pooled_ap: st.average_precision,
        best_f1: st.best_f1,
        distinct_scores: st.rows,
        ap_hist,
        depth_hist,
        depth_never,
        premises,
        strata,
        elapsed: started.elapsed(),
    };
    Ok((run, recorded))
}

/// An input file of the page: its role, its name, its size in bytes (`None`: a stream).
#[derive(Clone, Debug)]
pub struct InputFile {
    /// "actual sets", "corpus" or "predictions".
    pub role: String,
    /// The path as given.
    pub path: String,
    /// Its size.
    pub bytes: Option<u64>,
}

impl InputFile {
    /// The file at `path` in role `role`, its size read when it is a regular file (not `-`, a
    /// pipe or a stream).
    pub fn of(role: &str, path: &std::path::Path) -> InputFile {
        let bytes = (path != std::path::Path::new("-"))
            .then(|| std::fs::metadata(path).ok().filter(|m| m.is_file()))
            .flatten()
            .map(|m| m.len());
        InputFile {
            role: role.into(),
            path: path.display().to_string(),
            bytes,
        }
    }
}

/// The page of runs `predicted` (files, named by their paths), evaluated against `actual`
/// with `builder`'s options (the premise protocol, groups and strata included; its measures
/// are replaced): [`evaluate_run`] for each, a pooled curve each within the builder's memory
/// budget (spilled to its directory), then [`compare_runs`] on the per-goal values each run's
/// pass recorded (with two runs or more: each run is read once). `inputs`: the page's inputs
/// before the corpus (the builder's, listed here) and the predictions: the actual sets when
/// they are a file; `command`: what made the page. Every
/// door's report (`lemma-eval report`, Python's `lemma_eval.report`) is made here.
pub fn page(
    builder: EvaluatorBuilder,
    actual: Arc<ActualSets>,
    mut inputs: Vec<InputFile>,
    predicted: &[std::path::PathBuf],
    command: String,
) -> Result<Page, EvalError> {
    let settings = builder.settings();
    let (memory, threads, dir) = (
        settings.spill.memory,
        settings.threads,
        settings.spill.directory(),
    );
    if let Some(p) = &settings.premises {
        inputs.push(InputFile::of("corpus", p.corpus().path()));
    }
    // With two runs or more, each run's values of the comparison's measures are recorded as it
    // is evaluated: every run is read once (a pipe can be one).
    let compared = match predicted.len() {
        0 | 1 => None,
        _ => Some(Compare::new(builder.clone(), actual.clone(), Vec::new()).measures()?),
    };
    let mut runs = Vec::new();
    let mut labelled = Vec::new();
    for p in predicted {
        inputs.push(InputFile::of("predictions", p));
        let setup = PooledSetup::exact(memory, threads, dir.clone());
        let name = p.display().to_string();
        let (run, recorded) = evaluate_recorded(
            &name,
            builder.clone(),
            actual.clone(),
            p.as_path().into(),
            &setup,
            compared.as_deref(),
        )?;
        runs.push(run);
        if let Some(v) = recorded {
            labelled.push((name, RunSource::Recorded(Arc::new(v))));
        }
    }
    let comparison = compare_runs(builder, actual, labelled)?;
    Ok(Page {
        command,
        inputs,
        runs,
        comparison,
    })
}

/// What the page shows.
#[derive(Clone, Debug)]
pub struct Page {
    /// The command line that made it.
    pub command: String,
    /// The inputs.
    pub inputs: Vec<InputFile>,
    /// The runs, in the command's order.
    pub runs: Vec<RunReport>,
    /// With two runs or more: each run against the first ([`compare_runs`]).
    pub comparison: Option<Comparison>,
}

/// Each run against the first, as `lemma-eval compare ACTUAL RUN...` compares them with its
/// defaults: the default measures that are means of per-goal values, the paired t-test deciding,
/// Holm's correction over every comparison, alpha 0.05, a 95% bootstrap interval of each
/// difference (10,000 draws, seed 0). Runs given as paths are evaluated again for it (their
/// per-goal values are what the tests need; [`page`] hands it the values each run's pass
/// recorded instead): 8 bytes × goals × runs × measures held. `None` below two runs.
pub fn compare_runs(
    builder: EvaluatorBuilder,
    actual: Arc<ActualSets>,
    runs: Vec<(String, RunSource)>,
) -> Result<Option<Comparison>, EvalError> {
    if runs.len() < 2 {
        return Ok(None);
    }
    let runs = (runs.into_iter())
        .map(|(label, predicted)| Run { label, predicted })
        .collect();
    // The comparison is of all the goals; the strata are the page's sections.
    Compare::new(builder.unstratified(), actual, runs)
        .run(&CompareOptions::default())
        .map(Some)
}

/// The page's section of differences from the first run: a row per measure, a column per other
/// run; each cell the difference with its interval, its adjusted p-value, and in bold (with `*`)
/// when significant.
fn differences(h: &mut String, c: &Comparison) {
    let first = c.runs.first().map_or("", |r| r.label.as_str());
    let _ = write!(
        h,
        "<h2>Differences from {}</h2>\n<table>\n<thead><tr><th>measure</th>",
        escape(first)
    );
    for r in c.runs.iter().skip(1) {
        let _ = write!(h, "<th>{} − {}</th>", escape(&r.label), escape(first));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for (m, measure) in c.measures.iter().enumerate() {
        let _ = write!(h, "<tr><td>{}</td>", escape(&measure.to_string()));
        for row in c.rows.iter().filter(|r| r.measure == m && r.a == 0) {
            let _ = write!(
                h,
                "<td{}>{:+.4} [{:+.4}, {:+.4}] {}{}</td>",
                if row.significant {
                    " class=\"best\""
                } else {
                    ""
                },
                row.diff,
                row.ci_low,
                row.ci_high,
                p_text(row.p_adjusted),
                if row.significant { " *" } else { "" },
            );
        }
        h.push_str("</tr>\n");
    }
    let _ = write!(
        h,
        "</tbody>\n</table>\n<p class=\"note\">Each cell: the mean over the {} goals that every run \
         has a value for of the paired differences (this run's value less the first's), its 95% \
         bootstrap interval ({} draws, seed {}), and the paired t-test's p-value adjusted by \
         Holm's method over every comparison of the table. In bold, with *: significant at {} \
         (<code>lemma-eval compare</code> prints the same comparisons).</p>\n",
        c.goals, c.options.permutations, c.options.seed, c.options.alpha
    );
}

/// A p-value as the page prints it: `p = ` four decimals, or `p < 0.0001`.
fn p_text(p: f64) -> String {
    if p.is_nan() {
        "p –".into()
    } else if p < 1e-4 {
        "p < 0.0001".into()
    } else {
        format!("p = {p:.4}")
    }
}

/// `s` with `&`, `<`, `>` and `"` escaped for HTML text and attributes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// Whether `m` is a `Depth(recall=r)`: a mean rank over the goals that reach the level, printed
/// to one decimal and not compared between runs (each covers its own goals).
fn is_depth(m: &Measure) -> bool {
    matches!(m, Measure::Depth { .. })
}

/// A table cell's number: 4 decimals, `Depth` (mean ranks) 1.
fn cell(m: &Measure, v: Option<f64>) -> String {
    match v {
        None => "–".into(),
        Some(v) if is_depth(m) => format!("{v:.1}"),
        Some(v) => format!("{v:.4}"),
    }
}

/// Bytes in decimal units, as `ls -h --si` would say.
fn size(b: Option<u64>) -> String {
    match b {
        None => "stream".into(),
        Some(b) if b < 1000 => format!("{b} B"),
        Some(b) => {
            let units = ["kB", "MB", "GB", "TB"];
            let mut v = b as f64 / 1000.0;
            let mut u = 0;
            while v >= 1000.0 && u < units.len() - 1 {
                v /= 1000.0;
                u += 1;
            }
            format!("{v:.1} {} ({b} bytes)", units[u])
        }
    }
}

/// An SVG document as an element of the page (no XML namespace URL: HTML needs none).
fn inline_svg(svg: &str) -> String {
    svg.replace(" xmlns=\"http://www.w3.org/2000/svg\"", "")
}

const STYLE: &str = "
body { font-family: sans-serif; margin: 2em auto; max-width: 1320px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
code { background: #f4f4f4; padding: 0.15em 0.35em; border-radius: 3px; word-break: break-all; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { padding: 0.25em 0.8em; border-bottom: 1px solid #e4e4e4; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead th { border-bottom: 2px solid #999; }
td.best { font-weight: bold; }
.note { color: #666; font-size: 0.9em; }
.plots { display: flex; flex-wrap: wrap; gap: 1em; }
.plots svg { border: 1px solid #eee; }
.swatch { display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.4em; }
";

/// The page: one self-contained HTML document.
pub fn html(page: &Page) -> Result<String, String> {
    let mut h = String::new();
    let runs = &page.runs;
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>lemma-eval report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>lemma-eval report</h1>\n<p><code>{}</code></p>\n",
        escape(&page.command)
    );
    // Inputs.
    h.push_str("<h2>Inputs</h2>\n<table>\n<thead><tr><th>file</th><th>role</th><th>size</th></tr></thead>\n<tbody>\n");
    for f in &page.inputs {
        let _ = writeln!(
            h,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            escape(&f.path),
            escape(&f.role),
            size(f.bytes)
        );
    }
    h.push_str("</tbody>\n</table>\n");
    // Summary.
    let header = |h: &mut String, first: &str| {
        let _ = write!(h, "<table>\n<thead><tr><th>{first}</th>");
        for (i, r) in runs.iter().enumerate() {
            let (cr, cg, cb) = lemma_plot::colour(i);
            let _ = write!(
                h,
                "<th><span class=\"swatch\" style=\"background:#{cr:02x}{cg:02x}{cb:02x}\"></span>{}</th>",
                escape(&r.name)
            );
        }
        h.push_str("</tr></thead>\n<tbody>\n");
    };
    h.push_str("<h2>Summary</h2>\n");
    header(&mut h, "measure");
    let rows = runs.first().map_or(0, |r| r.table.len());
    // `higher`: whether a larger value is better; `None`: values not to be compared.
    let row =
        |h: &mut String, name: &str, values: Vec<(String, Option<f64>)>, higher: Option<bool>| {
            let comparable = higher.is_some();
            let higher = higher.unwrap_or(true);
            let best = values
                .iter()
                .filter_map(|v| v.1)
                .fold(None, |b: Option<f64>, v| match b {
                    Some(b) if (higher && b >= v) || (!higher && b <= v) => Some(b),
                    _ => Some(v),
                });
            let _ = write!(h, "<tr><td>{}</td>", escape(name));
            for (text, v) in values {
                let bold = comparable && runs.len() > 1 && v.is_some() && v == best;
                let _ = write!(
                    h,
                    "<td{}>{}</td>",
                    if bold { " class=\"best\"" } else { "" },
                    escape(&text)
                );
            }
            h.push_str("</tr>\n");
        };
    for i in 0..rows {
        let m = runs[0].table[i].0;
        // Every cell as printed: the best is the best printed value.
        let values = (runs.iter())
            .map(|r| {
                let text = cell(&m, r.table[i].1.headline());
                let v = text.parse::<f64>().ok();
                (text, v)
            })
            .collect();
        // Depth means cover each run's own goals (those reaching the level): not compared.
        let higher = (!is_depth(&m)).then_some(true);
        row(&mut h, &m.to_string(), values, higher);
    }
    let pooled_ap = (runs.iter())
        .map(|r| {
            let t = format!("{:.4}", r.pooled_ap);
            (t.clone(), t.parse().ok())
        })
        .collect();
    row(&mut h, "pooled AP", pooled_ap, Some(true));
    let f1 = (runs.iter())
        .map(|r| match r.best_f1 {
            Some((f, t)) => {
                let v = format!("{f:.4}");
                (format!("{v} (score ≥ {t})"), v.parse().ok())
            }
            None => ("–".into(), None),
        })
        .collect();
    row(&mut h, "pooled best F1", f1, Some(true));
    let depth = (runs.first()).is_some_and(|r| r.table.iter().any(|(m, _)| is_depth(m)));
    let _ = write!(
        h,
        "</tbody>\n</table>\n<p class=\"note\">Means over the evaluated goals{}. In bold: the \
         best run.</p>\n",
        if depth {
            "; Depth(recall=1.0) is the mean rank at which a goal has found all its relevant \
             lemmas, over the goals that do; each run's mean covers its own goals, so it is not \
             compared"
        } else {
            " (under --group-by, the mean over groups of each group's mean)"
        }
    );
    if let Some(c) = &page.comparison {
        differences(&mut h, c);
    }
    premise_section(&mut h, runs, &header);
    // Goals.
    h.push_str("<h2>Goals</h2>\n");
    header(&mut h, "goals");
    let fates: [(&str, Count); 6] = [
        ("evaluated", |r| r.counts.evaluated),
        ("of which without predictions (evaluated as empty)", |r| {
            r.counts.evaluated_empty
        }),
        ("skipped: no actual set", |r| r.counts.skipped_no_actual),
        ("skipped: no relevant lemma (R = 0)", |r| {
            r.counts.skipped_no_relevant
        }),
        ("skipped: no predictions", |r| {
            r.counts.skipped_no_predictions
        }),
        ("reached recall 1 (found every relevant lemma)", |r| {
            r.depth_hist.iter().sum()
        }),
    ];
    // Under --group-by no Depth is evaluated: no count of goals reaching recall 1, no histogram.
    let has_depth = runs
        .iter()
        .any(|r| !r.depth_hist.is_empty() || r.depth_never > 0);
    for (name, f) in fates {
        if name.starts_with("reached") && !has_depth {
            continue;
        }
        let _ = write!(h, "<tr><td>{name}</td>");
        for r in runs {
            let _ = write!(h, "<td>{}</td>", f(r));
        }
        h.push_str("</tr>\n");
    }
    let _ = write!(h, "<tr><td>distinct scores (pooled curve rows)</td>");
    for r in runs {
        let _ = write!(h, "<td>{}</td>", r.distinct_scores);
    }
    h.push_str("</tr>\n</tbody>\n</table>\n");
    strata_sections(&mut h, runs, &header);
    // Curves.
    let names: Vec<&str> = runs.iter().map(|r| r.name.as_str()).collect();
    let series = |pick: fn(&RunReport) -> &[(f64, f64)]| -> Vec<lemma_plot::Series<'_>> {
        (names.iter().zip(runs))
            .map(|(n, r)| lemma_plot::Series {
                name: n,
                points: pick(r),
            })
            .collect()
    };
    let macro_svg = lemma_plot::pr_curves_svg(
        "interpolated precision, mean over goals",
        &series(|r| &r.macro_curve),
        lemma_plot::SIZE,
    )?;
    let pooled_svg = lemma_plot::pr_curves_svg(
        "pooled: every ranked lemma of every goal",
        &series(|r| &r.pooled_curve),
        lemma_plot::SIZE,
    )?;
    let _ = write!(
        h,
        "<h2>Precision-recall curves</h2>\n<div class=\"plots\">\n{}\n{}\n</div>\n",
        inline_svg(&macro_svg),
        inline_svg(&pooled_svg)
    );
    // Distributions.
    let ap_labels: Vec<String> = (0..AP_BINS)
        .map(|i| format!("{:.1}", i as f64 / AP_BINS as f64))
        .collect();
    let ap_bars: Vec<lemma_plot::Bars<'_>> = (names.iter().zip(runs))
        .map(|(n, r)| lemma_plot::Bars {
            name: n,
            counts: &r.ap_hist,
        })
        .collect();
    let ap_svg = lemma_plot::histograms_svg(
        "AP per goal",
        "AP (bins of 0.1, from their lower edge)",
        &ap_labels,
        &ap_bars,
        lemma_plot::SIZE,
    )?;
    let depth_bins = runs.iter().map(|r| r.depth_hist.len()).max().unwrap_or(0);
    let mut depth_labels: Vec<String> = (0..depth_bins).map(|i| short(1u64 << i)).collect();
    depth_labels.push("never".into());
    let depth_counts: Vec<Vec<u64>> = runs
        .iter()
        .map(|r| {
            let mut c = r.depth_hist.clone();
            c.resize(depth_bins, 0);
            c.push(r.depth_never);
            c
        })
        .collect();
    let depth_bars: Vec<lemma_plot::Bars<'_>> = (names.iter().zip(&depth_counts))
        .map(|(n, c)| lemma_plot::Bars { name: n, counts: c })
        .collect();
    let depth_svg = lemma_plot::histograms_svg(
        "rank where a goal has all its relevant lemmas",
        "Depth(recall=1.0) (bins from 1, 2, 4, 8, ...)",
        &depth_labels,
        &depth_bars,
        lemma_plot::SIZE,
    )?;
    let depth_svg = match has_depth {
        true => inline_svg(&depth_svg),
        false => String::new(),
    };
    let _ = write!(
        h,
        "<h2>Per-goal distributions</h2>\n<div class=\"plots\">\n{}\n{}\n</div>\n",
        inline_svg(&ap_svg),
        depth_svg
    );
    h.push_str("</body>\n</html>\n");
    Ok(h)
}

/// A goal count of a run.
type Count = fn(&RunReport) -> u64;

/// A run's `(measure, aggregate)` list of a table, if it has one.
type TablePick<'a> = dyn Fn(&RunReport) -> Option<&[(Measure, Aggregate)]> + 'a;

/// A table's header: its first column's title, then a column per run.
type Header<'a> = dyn Fn(&mut String, &str) + 'a;

/// An aggregate as a cell: its headline ([`cell`]), and for a measure defined on some goals
/// only (`LeakRank`, the origin measures) how many goals it is over.
fn aggregate_cell(m: &Measure, a: &Aggregate) -> String {
    match *a {
        Aggregate::Depth { reached: 0, .. } | Aggregate::Covered { reached: 0, .. } => "–".into(),
        Aggregate::Depth { reached, .. } | Aggregate::Covered { reached, .. } => format!(
            "{} (over {reached} goal{})",
            cell(m, a.headline()),
            if reached == 1 { "" } else { "s" }
        ),
        _ => cell(m, a.headline()),
    }
}

/// Rows of measures, a cell per run: `table` picks a run's `(measure, aggregate)` list (`None`:
/// the run has none, every cell `–`).
fn measure_rows(h: &mut String, runs: &[RunReport], table: &TablePick<'_>) {
    let Some(first) = runs.iter().find_map(table) else {
        return;
    };
    for (i, (m, _)) in first.iter().enumerate() {
        let _ = write!(h, "<tr><td>{}</td>", escape(&m.to_string()));
        for r in runs {
            let text = table(r)
                .and_then(|t| t.get(i))
                .map_or("–".into(), |(m, a)| aggregate_cell(m, a));
            let _ = write!(h, "<td>{}</td>", escape(&text));
        }
        h.push_str("</tr>\n");
    }
}

/// The premise protocol's section (with a corpus): the leak rate and recall by origin, and the
/// counts of what the protocol met.
fn premise_section(h: &mut String, runs: &[RunReport], header: &Header<'_>) {
    let Some(first) = runs.iter().find_map(|r| r.premises.as_ref()) else {
        return;
    };
    h.push_str("<h2>Premise selection</h2>\n");
    header(h, "measure");
    measure_rows(h, runs, &|r| r.premises.as_ref().map(|p| &p.table[..]));
    let names = [
        ("goals", "goals ranked under the corpus"),
        ("masked", "predicted premises masked (inaccessible)"),
        ("not_in_corpus", "predicted premises not in the corpus"),
        (
            "goals_in_unlisted_files",
            "goals in files the corpus does not list",
        ),
        ("relevant_inaccessible", "relevant premises not accessible"),
        (
            "goals_past_last_premise",
            "goals past their file's last premise",
        ),
    ];
    for (key, name) in names {
        let _ = write!(h, "<tr><td>{name}</td>");
        for r in runs {
            let n = (r.premises.as_ref())
                .and_then(|p| p.counts.iter().find(|(k, _)| *k == key))
                .map_or("–".into(), |(_, n)| n.to_string());
            let _ = write!(h, "<td>{n}</td>");
        }
        h.push_str("</tr>\n");
    }
    // A note for each kind of measure the table holds (under --group-by and --ties group, some
    // are left out).
    let has = |f: fn(&Measure) -> bool| first.table.iter().any(|(m, _)| f(m));
    let mut note = String::from(if first.masked {
        "Ranks count accessible premises only (<code>--mask accessible</code>)."
    } else {
        "Rankings are not masked."
    });
    if has(|m| matches!(m, Measure::Leak { .. })) {
        note.push_str(
            " Leak@k: the share of the first k premises of the unmasked ranking that are not \
             accessible at the goal's theorem (over k).",
        );
    }
    if has(|m| matches!(m, Measure::LeakRank)) {
        note.push_str(" LeakRank: the rank of the first, over the goals that have one.");
    }
    if has(|m| matches!(m, Measure::ROrigin { .. })) {
        note.push_str(
            " R(origin=in-file)@10 and R(origin=imported)@10: recall at 10 of the relevant \
             premises defined in the goal's own file, or in another, over the goals that have \
             some (docs/METRICS.md §9).",
        );
    }
    let _ = write!(h, "</tbody>\n</table>\n<p class=\"note\">{note}</p>\n");
}

/// A section per stratum (`--by`): the summary of its goals alone, in the summary's order.
fn strata_sections(h: &mut String, runs: &[RunReport], header: &Header<'_>) {
    let Some(first) = runs.first() else {
        return;
    };
    for s in &first.strata {
        let _ = writeln!(h, "<h2>Stratum <code>{}</code></h2>", escape(&s.label));
        header(h, "measure");
        // A run's stratum of that label (one whose goals it skipped may lack it).
        fn stratum<'r>(r: &'r RunReport, label: &str) -> Option<&'r StratumReport> {
            r.strata.iter().find(|x| x.label == label)
        }
        let _ = write!(h, "<tr><td>goals evaluated</td>");
        for r in runs {
            let n = stratum(r, &s.label).map_or("–".into(), |x| x.counts.evaluated.to_string());
            let _ = write!(h, "<td>{n}</td>");
        }
        h.push_str("</tr>\n");
        measure_rows(h, runs, &|r| stratum(r, &s.label).map(|x| &x.table[..]));
        h.push_str("</tbody>\n</table>\n");
    }
}

/// `n` in few characters: 512, 4k, 64k, 1M.
fn short(n: u64) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{}M", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{}k", n >> 10),
        n => n.to_string(),
    }
}

/// A command line as a shell would take it back: each word as it is when it holds only
/// `[A-Za-z0-9-_./=:,@+%]`, else in single quotes (a quote inside as `'\''`). The page shows
/// the command that made it.
///
/// ```
/// let words = ["lemma-eval", "report", "q.txt", "my run.txt", "it's"].map(std::ffi::OsString::from);
/// assert_eq!(lemma_report::command_line(words), "lemma-eval report q.txt 'my run.txt' 'it'\\''s'");
/// ```
pub fn command_line(words: impl IntoIterator<Item = std::ffi::OsString>) -> String {
    (words.into_iter())
        .map(|w| w.to_string_lossy().into_owned())
        .map(|w| {
            let plain = !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,@+%".contains(&b));
            if plain {
                w
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_sizes_read_well() {
        assert_eq!(escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
        assert_eq!(size(Some(999)), "999 B");
        assert_eq!(size(Some(1_500_000)), "1.5 MB (1500000 bytes)");
        assert_eq!(size(None), "stream");
        assert_eq!(
            [
                short(1),
                short(512),
                short(1024),
                short(65536),
                short(1 << 21)
            ],
            ["1", "512", "1k", "64k", "2M"]
        );
    }
}
