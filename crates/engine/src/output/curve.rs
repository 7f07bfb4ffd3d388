//! Output of `lemma-eval curve`: each run's curve as TSV (a row per point, a `run` column first
//! when there are several runs) or as one JSON object; the pooled curve streamed a row per
//! distinct score ([`PooledWriter`]).

use super::{push_f64, push_u64};
use crate::curve::{CurveKind, Curves, RunPoints};
use crate::pooled::PooledView;
use crate::EvalError;
use std::fmt::Write as _;
use std::io::{self, Write};

/// Output formats of `curve`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CurveFormat {
    /// A row per point, tab-separated, a header first.
    Tsv,
    /// One JSON object.
    Json,
}

impl crate::Choice for CurveFormat {
    const OPTION: &'static str = "format";
    const VALUES: &'static [(&'static str, &'static str, Self)] = &[
        (
            "tsv",
            "a header line, then one point per line, tab-separated, full precision",
            CurveFormat::Tsv,
        ),
        ("json", "one JSON object", CurveFormat::Json),
    ];
}

/// Writes `curves` in `format`: TSV (`recall precision` per level, or `rank recall precision
/// interpolated_precision` per rank of a goal's curve; `NA` for a level no goal reaches) or a
/// JSON object (`{"curve": "macro"|"goal", "levels"|"goal", "runs": [...]}`, `null` for `NA`).
pub fn write_curves(out: &mut dyn Write, curves: &Curves, format: CurveFormat) -> io::Result<()> {
    match format {
        CurveFormat::Tsv => out.write_all(curves_tsv(curves).as_bytes()),
        CurveFormat::Json => writeln!(out, "{}", curves_json(curves)),
    }
}

fn curves_tsv(curves: &Curves) -> String {
    let several = curves.runs.len() > 1;
    let num = |v: Option<f64>| v.map_or_else(|| "NA".to_string(), |v| format!("{v}"));
    let mut text = String::new();
    let header = match curves.kind {
        CurveKind::Macro { .. } => "recall\tprecision",
        CurveKind::Goal { .. } => "rank\trecall\tprecision\tinterpolated_precision",
    };
    let _ = writeln!(text, "{}{header}", if several { "run\t" } else { "" });
    for run in &curves.runs {
        let col = match several {
            true => format!("{}\t", run.name),
            false => String::new(),
        };
        match &run.points {
            RunPoints::Macro { points, .. } => {
                for q in points {
                    let _ = writeln!(text, "{col}{}\t{}", q.recall, num(q.precision));
                }
            }
            RunPoints::Goal(points) => {
                for q in points {
                    let _ = writeln!(
                        text,
                        "{col}{}\t{}\t{}\t{}",
                        q.rank, q.recall, q.precision, q.interpolated
                    );
                }
            }
        }
    }
    text
}

fn curves_json(curves: &Curves) -> serde_json::Value {
    use serde_json::json;
    let num = |v: Option<f64>| v.map_or(serde_json::Value::Null, |v| json!(v));
    let runs: Vec<serde_json::Value> = (curves.runs.iter())
        .map(|run| match &run.points {
            RunPoints::Macro { evaluated, points } => json!({
                "run": run.name,
                "goals_evaluated": evaluated,
                "points": points.iter().map(|q| json!({
                    "recall": q.recall, "precision": num(q.precision)
                })).collect::<Vec<_>>(),
            }),
            RunPoints::Goal(points) => json!({
                "run": run.name,
                "points": points.iter().map(|q| json!({
                    "rank": q.rank, "recall": q.recall, "precision": q.precision,
                    "interpolated_precision": q.interpolated,
                })).collect::<Vec<_>>(),
            }),
        })
        .collect();
    let mut doc = match &curves.kind {
        CurveKind::Macro { levels } => json!({ "curve": "macro", "levels": levels }),
        CurveKind::Goal { goal } => json!({ "curve": "goal", "goal": goal }),
    };
    doc["runs"] = serde_json::Value::Array(runs);
    doc
}

/// Writes pooled curves (`curve --pooled`) as they are read: in TSV a `# items=.. relevant=..
/// average_precision=..` line per run and a row per distinct score (`threshold tp fp precision
/// recall f1`); in JSON one object, `{"curve": "pooled", "bins": K|null, "runs": [{...,
/// "points": [...]}]}`. A curve may have millions of rows: they are formatted into a buffer and
/// written 64 KiB at a time.
pub struct PooledWriter<'w> {
    out: &'w mut dyn Write,
    json: bool,
    several: bool,
    runs: usize,
}

impl<'w> PooledWriter<'w> {
    /// Writes the header (TSV) or the object's start (JSON) for `runs` runs, `bins` as
    /// `curve --pooled --bins K` gives it.
    pub fn new(
        out: &'w mut dyn Write,
        format: CurveFormat,
        runs: usize,
        bins: Option<u64>,
    ) -> io::Result<PooledWriter<'w>> {
        let json = format == CurveFormat::Json;
        let several = runs > 1;
        if json {
            let bins = bins.map_or("null".to_string(), |k| k.to_string());
            write!(out, "{{\"curve\":\"pooled\",\"bins\":{bins},\"runs\":[")?;
        } else {
            let run = if several { "run\t" } else { "" };
            writeln!(out, "{run}threshold\ttp\tfp\tprecision\trecall\tf1")?;
        }
        Ok(PooledWriter {
            out,
            json,
            several,
            runs: 0,
        })
    }

    /// Writes one run's curve, calling `point(recall, precision)` for each row (to draw it). A
    /// write error is [`EvalError::Sink`]; rows read before an error reading a spilled run are
    /// written.
    pub fn run(
        &mut self,
        name: &str,
        view: &PooledView<'_>,
        mut point: impl FnMut(f64, f64),
    ) -> Result<(), EvalError> {
        let st = view.stats();
        let best = st.best_f1;
        let json = self.json;
        let fnum = |v: Option<f64>| v.map_or("null".to_string(), |v| format!("{v}"));
        if json {
            write!(
                self.out,
                "{}{{\"run\":{},\"items\":{},\"relevant\":{},\"average_precision\":{},\
                 \"ap_error_bound\":{},\"best_f1\":{},\"best_f1_threshold\":{},\"points\":[",
                if self.runs > 0 { "," } else { "" },
                serde_json::Value::from(name),
                st.items,
                st.total_relevant,
                st.average_precision,
                fnum(view.ap_bound()),
                fnum(best.map(|b| b.0)),
                fnum(best.map(|b| b.1)),
            )
            .map_err(EvalError::Sink)?;
        } else {
            let mut line = String::from("# ");
            if self.several {
                line += &format!("run={name}\t");
            }
            line += &format!(
                "items={}\trelevant={}\taverage_precision={}",
                st.items, st.total_relevant, st.average_precision
            );
            if let Some(b) = view.ap_bound() {
                line += &format!("\tap_error_bound={b}");
            }
            if let Some((f, t)) = best {
                line += &format!("\tbest_f1={f}\tbest_f1_threshold={t}");
            }
            writeln!(self.out, "{line}").map_err(EvalError::Sink)?;
        }
        self.runs += 1;
        let prefix = if self.several {
            format!("{name}\t")
        } else {
            String::new()
        };
        let mut first = true;
        let mut failed = None;
        let writer = &mut *self.out;
        let mut buf: Vec<u8> = Vec::with_capacity(80 << 10);
        let read = view.rows(|r| {
            if failed.is_some() {
                return;
            }
            if json {
                buf.extend_from_slice(if first { b"{" } else { b",{" });
                first = false;
                buf.extend_from_slice(b"\"threshold\":");
                push_f64(&mut buf, r.threshold);
                buf.extend_from_slice(b",\"tp\":");
                push_u64(&mut buf, r.tp);
                buf.extend_from_slice(b",\"fp\":");
                push_u64(&mut buf, r.fp);
                buf.extend_from_slice(b",\"precision\":");
                push_f64(&mut buf, r.precision);
                buf.extend_from_slice(b",\"recall\":");
                push_f64(&mut buf, r.recall);
                buf.extend_from_slice(b",\"f1\":");
                push_f64(&mut buf, r.f1);
                buf.push(b'}');
            } else {
                buf.extend_from_slice(prefix.as_bytes());
                push_f64(&mut buf, r.threshold);
                buf.push(b'\t');
                push_u64(&mut buf, r.tp);
                buf.push(b'\t');
                push_u64(&mut buf, r.fp);
                for v in [r.precision, r.recall, r.f1] {
                    buf.push(b'\t');
                    push_f64(&mut buf, v);
                }
                buf.push(b'\n');
            }
            if buf.len() >= 64 << 10 {
                if let Err(e) = writer.write_all(&buf) {
                    failed = Some(e);
                }
                buf.clear();
            }
            point(r.recall, r.precision);
        });
        // The rows before a failure to read them (a spilled run) are written.
        if failed.is_none() {
            if let Err(e) = writer.write_all(&buf) {
                failed = Some(e);
            }
        }
        read?;
        if let Some(e) = failed {
            return Err(EvalError::Sink(e));
        }
        if json {
            write!(self.out, "]}}").map_err(EvalError::Sink)?;
        }
        Ok(())
    }

    /// Ends the JSON object (nothing for TSV).
    pub fn finish(self) -> io::Result<()> {
        if self.json {
            writeln!(self.out, "]}}")?;
        }
        Ok(())
    }
}
