//! Output of `lemma-eval eval`: `table` for people, `tsv` and `json` for programs, `trec` for
//! trec_eval-shaped lines. Per-goal rows are written as they arrive (file order); the summary last.

use crate::{GoalRow, Report};
use lemma_accum::{Aggregate, Aggregation, GoalCounts, Measure, Summary};
use std::io::{self, Write};

/// Output formats of `eval`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OutFormat {
    /// Aligned columns for people.
    Table,
    /// `goal<TAB>measure<TAB>value`, full precision, goal `all` for the aggregate.
    Tsv,
    /// One JSON object.
    Json,
    /// trec_eval's line format (`name<TAB>goal<TAB>value` with 4 decimals).
    Trec,
}

/// One line in trec_eval's format: counts (summed measures) as integers, the rest with 4
/// decimals.
fn trec_line(out: &mut dyn Write, m: &Measure, goal: &str, v: f64) -> io::Result<()> {
    if m.aggregation() == Aggregation::Sum {
        writeln!(out, "{:<22}\t{goal}\t{}", trec_or_canonical(m), v as i64)
    } else {
        writeln!(out, "{:<22}\t{goal}\t{v:.4}", trec_or_canonical(m))
    }
}

/// Writes per-goal rows and the summary in one format.
pub struct Writer<'w> {
    out: &'w mut dyn Write,
    format: OutFormat,
    measures: Vec<Measure>,
    rows_written: u64,
    /// Values derived from the summary, printed after it (`eval --threshold`'s pooled view).
    extra: Vec<(String, Option<f64>)>,
}

/// Full precision, shortest round-trip form; `NA` when undefined.
fn full(v: Option<f64>) -> String {
    match v {
        Some(v) => format!("{v}"),
        None => "NA".into(),
    }
}

fn json_num(v: Option<f64>) -> serde_json::Value {
    match v {
        Some(v) => serde_json::Number::from_f64(v)
            .map_or(serde_json::Value::Null, serde_json::Value::Number),
        None => serde_json::Value::Null,
    }
}

fn trec_or_canonical(m: &Measure) -> String {
    m.trec_name().unwrap_or_else(|| m.to_string())
}

impl<'w> Writer<'w> {
    /// A writer for `measures` (the plan's order).
    pub fn new(out: &'w mut dyn Write, format: OutFormat, measures: &[Measure]) -> Self {
        Writer {
            out,
            format,
            measures: measures.to_vec(),
            rows_written: 0,
            extra: Vec::new(),
        }
    }

    /// Values derived from the summary, named, to print after its aggregates (not in the trec
    /// format, which has no name for them).
    pub fn set_extra(&mut self, extra: Vec<(String, Option<f64>)>) {
        self.extra = extra;
    }

    /// Writes whatever precedes the rows.
    pub fn begin(&mut self, per_goal: bool) -> io::Result<()> {
        match self.format {
            OutFormat::Json if per_goal => write!(self.out, "{{\"per_goal\":["),
            OutFormat::Json => write!(self.out, "{{"),
            OutFormat::Table if per_goal => {
                write!(self.out, "{:<24}", "goal")?;
                for m in self.measures.iter().filter(|m| m.per_goal()) {
                    write!(self.out, " {:>12}", m.to_string())?;
                }
                writeln!(self.out)
            }
            _ => Ok(()),
        }
    }

    /// Writes one goal's row.
    pub fn row(&mut self, row: &GoalRow) -> io::Result<()> {
        let goal = String::from_utf8_lossy(&row.goal);
        let pairs = self
            .measures
            .iter()
            .zip(&row.values)
            .filter(|(m, _)| m.per_goal());
        match self.format {
            OutFormat::Tsv => {
                for (m, v) in pairs {
                    writeln!(self.out, "{goal}\t{m}\t{}", full(*v))?;
                }
            }
            OutFormat::Trec => {
                for (m, v) in pairs {
                    if let Some(v) = v {
                        trec_line(self.out, m, &goal, *v)?;
                    }
                }
            }
            OutFormat::Table => {
                write!(self.out, "{goal:<24}")?;
                for (_, v) in pairs {
                    match v {
                        Some(v) => write!(self.out, " {v:>12.4}")?,
                        None => write!(self.out, " {:>12}", "-")?,
                    }
                }
                writeln!(self.out)?;
            }
            OutFormat::Json => {
                let values: serde_json::Map<String, serde_json::Value> =
                    pairs.map(|(m, v)| (m.to_string(), json_num(*v))).collect();
                let obj = serde_json::json!({ "goal": goal, "empty": row.empty, "values": values });
                if self.rows_written > 0 {
                    write!(self.out, ",")?;
                }
                write!(self.out, "{obj}")?;
            }
        }
        self.rows_written += 1;
        Ok(())
    }

    /// Writes the summary and closes the document.
    pub fn finish(&mut self, summary: &Summary, per_goal: bool) -> io::Result<()> {
        let aggs = summary.aggregates();
        match self.format {
            OutFormat::Tsv => {
                for (m, a) in &aggs {
                    match *a {
                        Aggregate::Depth {
                            mean,
                            median,
                            coverage,
                            ..
                        } => {
                            writeln!(self.out, "all\t{m}\t{}", full(mean))?;
                            writeln!(self.out, "all\t{m}:median\t{}", full(median))?;
                            writeln!(self.out, "all\t{m}:coverage\t{}", full(Some(coverage)))?;
                        }
                        _ => writeln!(self.out, "all\t{m}\t{}", full(a.headline()))?,
                    }
                }
                for (m, v) in &self.extra {
                    writeln!(self.out, "all\t{m}\t{}", full(*v))?;
                }
            }
            OutFormat::Trec => {
                for (m, a) in &aggs {
                    if let Some(v) = a.headline() {
                        trec_line(self.out, m, "all", v)?;
                    }
                }
            }
            OutFormat::Table => {
                if per_goal {
                    writeln!(self.out)?;
                }
                let c = summary.counts();
                // The names' column: 24 wide, or as wide as the longest name.
                let names: Vec<String> = aggs.iter().map(|(m, _)| m.to_string()).collect();
                let w = (names.iter().chain(self.extra.iter().map(|(m, _)| m)))
                    .map(|m| m.chars().count())
                    .fold(24, usize::max);
                writeln!(
                    self.out,
                    "{:<w$} {:>12}",
                    "measure",
                    format!("mean of {}", c.evaluated)
                )?;
                for ((_, a), m) in aggs.iter().zip(&names) {
                    match *a {
                        Aggregate::Depth {
                            mean,
                            median,
                            coverage,
                            reached,
                        } => writeln!(
                            self.out,
                            "{m:<w$} {:>12}  median {}, reached by {reached} of {} goals ({:.1}%)",
                            mean.map_or("-".into(), |v| format!("{v:.2}")),
                            median.map_or("-".into(), |v| format!("{v}")),
                            c.evaluated,
                            coverage * 100.0
                        )?,
                        Aggregate::Sum(v) => writeln!(self.out, "{m:<w$} {:>12}", v as i64)?,
                        _ => writeln!(self.out, "{m:<w$} {:>12.4}", a.headline().unwrap_or(0.0))?,
                    }
                }
                for (m, v) in &self.extra {
                    writeln!(self.out, "{m:<w$} {:>12.4}", v.unwrap_or(0.0))?;
                }
            }
            OutFormat::Json => {
                let mut s = serde_json::Map::new();
                for (m, a) in &aggs {
                    let v = match *a {
                        Aggregate::Depth {
                            mean,
                            median,
                            coverage,
                            reached,
                        } => serde_json::json!({
                            "mean": json_num(mean), "median": json_num(median),
                            "coverage": json_num(Some(coverage)), "reached": reached
                        }),
                        _ => json_num(a.headline()),
                    };
                    s.insert(m.to_string(), v);
                }
                for (m, v) in &self.extra {
                    s.insert(m.clone(), json_num(*v));
                }
                let c = summary.counts();
                let goals = counts_json(&c);
                if per_goal {
                    write!(self.out, "],")?;
                }
                writeln!(
                    self.out,
                    "\"summary\":{},\"goals\":{}}}",
                    serde_json::Value::Object(s),
                    goals
                )?;
            }
        }
        self.out.flush()
    }
}

fn counts_json(c: &GoalCounts) -> serde_json::Value {
    serde_json::json!({
        "evaluated": c.evaluated,
        "evaluated_empty": c.evaluated_empty,
        "skipped_no_actual_set": c.skipped_no_actual,
        "skipped_no_relevant": c.skipped_no_relevant,
        "skipped_no_predictions": c.skipped_no_predictions,
    })
}

/// What became of the goals, in words (the report's first line, and `merge`'s).
pub fn counts_text(counts: &GoalCounts) -> String {
    format!(
        "{} goals evaluated ({} with no predictions, evaluated as empty); skipped: {} with no actual set, \
         {} with no relevant lemma (R = 0), {} with no predictions",
        counts.evaluated,
        counts.evaluated_empty,
        counts.skipped_no_actual,
        counts.skipped_no_relevant,
        counts.skipped_no_predictions,
    )
}

/// The short report for stderr.
pub fn report_text(report: &Report, counts: &GoalCounts) -> String {
    let secs = report.elapsed.as_secs_f64().max(1e-9);
    // Text inputs count lines; stores and matrices (no lines) count ranked entries.
    let (count, unit) = if report.lines == 0 && report.items > 0 {
        (report.items, "ranked entries")
    } else {
        (report.lines, "lines")
    };
    let mut s = format!("lemma-eval: {}\n", counts_text(counts));
    if counts.skipped_no_actual > 0 && counts.skipped_no_actual == report.goals_in_predictions {
        s += &format!(
            "lemma-eval: warning: no goal of the predictions has an actual set (none of their {} \
             goals is in the actual sets): are these the right files?\n",
            counts.skipped_no_actual
        );
    }
    s += &format!(
        "lemma-eval: {} {unit}, {:.1} MB of {} in {:.3} s ({:.2} M {unit}/s, {:.0} MB/s, {} threads); {} duplicates \
         dropped, {} lemmas beyond --depth, {} goals re-sorted{}\n",
        count,
        report.bytes as f64 / 1e6,
        report.path.display(),
        secs,
        count as f64 / secs / 1e6,
        report.bytes as f64 / secs / 1e6,
        report.threads,
        report.duplicates_dropped,
        report.beyond_depth,
        report.goals_reordered,
        match &report.spill {
            Some(r) => format!("; grouped by goal (--regroup): {r}"),
            None => String::new(),
        },
    );
    s
}
