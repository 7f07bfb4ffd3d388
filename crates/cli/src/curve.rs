//! `curve` (macro, one goal's, pooled) and `report`: the library called, its outputs committed.

use crate::out::{
    commit_all, distinct, eval_fail, is_dash, one_stdout, table_label, write_fail, Fail,
};
use crate::{CurveArgs, ReportArgs};
use lemma_eval::curve::{CurveKind, Curves};
use lemma_eval::output::{write_curves, PooledWriter};
use lemma_eval::pooled::PooledSetup;
use lemma_eval::{Job, SummaryOnly, ZeroRelMode};
use lemma_outfile::Output;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(crate) fn run_curve(a: CurveArgs) -> Result<(), Fail> {
    let mut inputs = vec![a.actual.as_path()];
    inputs.extend(a.predicted.iter().map(|p| p.as_path()));
    distinct(&[a.output.as_deref(), a.plot.as_deref()], &inputs)?;
    one_stdout(&[
        (
            table_label(a.output.as_deref()),
            a.output.as_deref().is_none_or(is_dash),
        ),
        ("--plot -", a.plot.as_deref().is_some_and(is_dash)),
    ])?;
    if a.pooled {
        return run_pooled(a);
    }
    let spill = a.memory.spill();
    let actual = lemma_eval::read_actual_within(&a.actual, a.scoring.threads(), &spill)?;
    let runs = named_runs(&a.predicted);
    let kind = match &a.goal {
        None => CurveKind::Macro { levels: a.points },
        Some(goal) => CurveKind::Goal { goal: goal.clone() },
    };
    let curves = Curves::compute(
        &a.scoring.builder().spill(spill),
        Arc::new(actual),
        &a.actual,
        &runs,
        kind,
    )?;
    let mut out = Output::create(a.output.as_deref())?;
    write_curves(out.writer(), &curves, a.format).map_err(|e| out.write_error(e))?;
    let mut outs = vec![out];
    if let Some(plot) = &a.plot {
        let names: Vec<String> = runs.into_iter().map(|(n, _)| n).collect();
        outs.push(write_plot(plot, &curves.title(), &names, &curves.series())?);
    }
    commit_all(outs)
}

/// Each run's name (its path as given) and path.
fn named_runs(predicted: &[PathBuf]) -> Vec<(String, PathBuf)> {
    (predicted.iter())
        .map(|p| (p.display().to_string(), p.clone()))
        .collect()
}

/// `--plot`: the runs' curves on one chart, written to `plot` as SVG, to be committed with the
/// command's other output.
pub(crate) fn write_plot(
    plot: &Path,
    title: &str,
    run_names: &[String],
    series: &[Vec<(f64, f64)>],
) -> Result<Output, Fail> {
    let named: Vec<lemma_plot::Series<'_>> = (run_names.iter().zip(series))
        .map(|(n, s)| lemma_plot::Series { name: n, points: s })
        .collect();
    let svg = lemma_plot::pr_curves_svg(title, &named, lemma_plot::SIZE).map_err(|e| Fail(2, e))?;
    let mut f = Output::create(Some(plot))?;
    let fname = f.name();
    f.writer()
        .write_all(svg.as_bytes())
        .map_err(|e| write_fail(&fname, e))?;
    Ok(f)
}

/// `curve --pooled [--bins K]`: each run's pooled curve, rows streamed to the output.
pub(crate) fn run_pooled(a: CurveArgs) -> Result<(), Fail> {
    let threads = a.scoring.threads();
    let actual = lemma_eval::read_actual_within(&a.actual, threads, &a.memory.spill())?;
    let actual = Arc::new(actual);
    let mut out = Output::create(a.output.as_deref())?;
    let name = out.name();
    let mut series: Vec<Vec<(f64, f64)>> = Vec::new();
    let runs = named_runs(&a.predicted);
    let mut w = PooledWriter::new(out.writer(), a.format, runs.len(), a.bins)
        .map_err(|e| write_fail(&name, e))?;
    for (run, path) in &runs {
        let setup = match a.bins {
            Some(k) => PooledSetup::binned(k),
            None => {
                let dir = a.memory.spill().directory();
                PooledSetup::exact(a.memory.memory, threads, dir)
            }
        };
        let builder = (a.scoring.builder())
            .spill(a.memory.spill())
            .measure_names(["NumRel"])
            .map_err(|e| Fail(2, e.to_string()))?
            .zero_relevant(if a.keep_zero_relevant {
                ZeroRelMode::Evaluate
            } else {
                ZeroRelMode::Skip
            })
            .pooled(setup.spec());
        let done = Job::new(builder, actual.clone(), path.as_path())
            .run(&mut SummaryOnly, None)?
            .evaluation;
        let curve = done
            .summary
            .pooled()
            .expect("the plan keeps the pooled curve");
        let view = setup.view(curve)?;
        let (spilled, bytes) = view.spilled();
        if spilled > 0 {
            eprintln!(
                "lemma-eval: {run}: the pooled curve's {} distinct scores outgrew --memory {}: \
                 {spilled} sorted runs ({:.1} MB) written to {} and merged",
                view.stats().rows,
                lemma_ingest::binary_size(a.memory.memory),
                bytes as f64 / 1e6,
                a.memory.spill().directory().display()
            );
        }
        let mut points = lemma_plot::Thin::default();
        let drawn = a.plot.is_some();
        w.run(run, &view, |recall, precision| {
            if drawn {
                points.push((recall, precision));
            }
        })
        .map_err(|e| eval_fail(&name, e))?;
        series.push(points.finish());
    }
    w.finish().map_err(|e| write_fail(&name, e))?;
    if let Some(plot) = &a.plot {
        let title = match a.bins {
            Some(k) => format!("pooled precision over all goals ({k} bins of equal count)"),
            None => "pooled precision over all goals, a point per distinct score".to_string(),
        };
        let names: Vec<String> = runs.into_iter().map(|(n, _)| n).collect();
        let plot = write_plot(plot, &title, &names, &series)?;
        return commit_all([out, plot]);
    }
    commit_all([out])
}

/// `report`: one pass per run, then the page.
pub(crate) fn run_report(a: ReportArgs) -> Result<(), Fail> {
    let mut inputs = vec![a.actual.as_path()];
    inputs.extend(a.predicted.iter().map(|p| p.as_path()));
    inputs.extend(a.premise.inputs().chain(a.grouping.inputs()));
    distinct(&[a.output.as_deref()], &inputs)?;
    let threads = a.scoring.threads();
    let actual = lemma_eval::read_actual_within(&a.actual, threads, &a.memory.spill())?;
    let actual = std::sync::Arc::new(actual);
    let inputs = vec![lemma_report::InputFile::of("actual sets", &a.actual)];
    // The premise protocol and the groups and strata, read once for every run.
    let base = crate::groups::apply_all(
        a.scoring.builder().spill(a.memory.spill()),
        &a.premise,
        &a.grouping,
        &a.actual,
        a.scoring.rules.relevance_level,
    )?;
    let command = lemma_report::command_line(std::env::args_os());
    let page = lemma_report::page(base, actual, inputs, &a.predicted, command)?;
    let html = lemma_report::html(&page).map_err(|e| Fail(2, e))?;
    let mut out = Output::create(a.output.as_deref())?;
    let name = out.name();
    out.writer()
        .write_all(html.as_bytes())
        .map_err(|e| write_fail(&name, e))?;
    commit_all([out])
}
