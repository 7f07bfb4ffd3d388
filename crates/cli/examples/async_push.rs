//! A producer pushes PREDICTED's goals one by one into the async API's `Pool` while another task
//! reads the per-goal rows; the summary is printed as `lemma-eval eval ACTUAL PREDICTED --format
//! tsv` prints it, byte for byte, and the count of rows read goes to stderr.
//!
//! ```text
//! cargo run --release --example async_push -- ACTUAL PREDICTED [--in-flight N]
//! ```
//!
//! ACTUAL is a qrels file, PREDICTED a TREC run whose goals' lines are contiguous (each goal is
//! pushed once, when its lines are read); N is the pool's `in_flight` (default 64).

use futures::StreamExt;
use lemma_eval::aio::{PoolOptions, RankedGoal};
use lemma_eval::output::{OutFormat, Writer};
use lemma_eval::{Evaluator, GoalRow};
use std::error::Error;
use std::io::Write;
use std::path::{Path, PathBuf};
use tokio::io::AsyncBufReadExt;

/// Rows the reading task received.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct RowsRead {
    /// Rows of goals pushed.
    pub pushed: u64,
    /// Rows of the actual sets' goals never pushed (evaluated as empty rankings).
    pub unpushed: u64,
}

/// A goal id or lemma name as the push API takes it.
fn text(field: &[u8], what: &str) -> Result<String, String> {
    String::from_utf8(field.to_vec()).map_err(|_| format!("{what} is not UTF-8"))
}

/// Evaluates PREDICTED (the command's defaults), its goals pushed into a pool of `in_flight`
/// goals while a task of its own reads the rows; writes the summary to `out` as `eval --format
/// tsv` does and returns what the reading task counted.
pub async fn run(
    actual: &Path,
    predicted: &Path,
    in_flight: usize,
    out: &mut dyn Write,
) -> Result<RowsRead, Box<dyn Error>> {
    let evaluator = Evaluator::builder().build_from_path(actual)?;
    let mut pool = evaluator.pool(PoolOptions {
        in_flight,
        rows: true,
        ..PoolOptions::default()
    })?;
    let rows = pool.rows().expect("made with rows");
    let reader = tokio::spawn(
        rows.fold(RowsRead::default(), |mut n, row: GoalRow| async move {
            match row.empty {
                true => n.unpushed += 1,
                false => n.pushed += 1,
            }
            n
        }),
    );
    let at = |n: u64, e: String| format!("{}:{n}: {e}", predicted.display());
    let file = tokio::fs::File::open(predicted)
        .await
        .map_err(|e| format!("{}: {e}", predicted.display()))?;
    let mut lines = tokio::io::BufReader::with_capacity(1 << 20, file);
    let (mut line, mut number) = (Vec::new(), 0u64);
    // The goal being read: its id and (lemma, score) pairs.
    let mut goal: Option<(String, Vec<(String, f64)>)> = None;
    loop {
        line.clear();
        if lines.read_until(b'\n', &mut line).await? == 0 {
            break;
        }
        number += 1;
        let Some(l) = lemma_ingest::parse_run_line(&line).map_err(|e| at(number, e))? else {
            continue; // a blank or comment line
        };
        let lemma = text(l.lemma, "the lemma").map_err(|e| at(number, e))?;
        match &mut goal {
            Some((g, items)) if g.as_bytes() == l.goal => items.push((lemma, l.score)),
            _ => {
                let next = (
                    text(l.goal, "the goal").map_err(|e| at(number, e))?,
                    Vec::new(),
                );
                if let Some((g, items)) = goal.replace(next) {
                    pool.push(RankedGoal::scored(g, items)).await?;
                }
                goal.as_mut().expect("just set").1.push((lemma, l.score));
            }
        }
    }
    if let Some((g, items)) = goal {
        pool.push(RankedGoal::scored(g, items)).await?;
    }
    let done = pool.finish().await?;
    let read = reader.await?;
    let mut w = Writer::new(&mut *out, OutFormat::Tsv, evaluator.plan().measures());
    w.begin(false)?;
    w.finish(&done.summary, false)?;
    out.flush()?;
    Ok(read)
}

fn usage() -> ! {
    eprintln!("usage: async_push ACTUAL PREDICTED [--in-flight N]");
    std::process::exit(2);
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let (mut paths, mut in_flight) = (Vec::new(), PoolOptions::default().in_flight);
    let mut args = std::env::args_os().skip(1);
    while let Some(a) = args.next() {
        if a == "--in-flight" {
            let n = args.next().and_then(|n| n.to_str()?.parse().ok());
            in_flight = n.filter(|&n| n > 0).unwrap_or_else(|| usage());
        } else {
            paths.push(PathBuf::from(a));
        }
    }
    let [actual, predicted] = &paths[..] else {
        usage()
    };
    let read = run(actual, predicted, in_flight, &mut std::io::stdout().lock()).await?;
    eprintln!(
        "async_push: {} rows read ({} of goals pushed, {} of goals never pushed)",
        read.pushed + read.unpushed,
        read.pushed,
        read.unpushed
    );
    Ok(())
}
