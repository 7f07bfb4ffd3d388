//! One task reads PREDICTED through tokio's `AsyncRead`; the async API evaluates it; the summary is
//! printed as `lemma-eval eval ACTUAL PREDICTED --format tsv` prints it, byte for byte.
//!
//! ```text
//! cargo run --release --example async_pipeline -- ACTUAL PREDICTED
//! ```

use lemma_eval::aio::evaluate_read;
use lemma_eval::output::{OutFormat, Writer};
use lemma_eval::Evaluator;
use std::io::Write;
use std::path::PathBuf;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [actual, predicted] = &args[..] else {
        eprintln!("usage: async_pipeline ACTUAL PREDICTED");
        std::process::exit(2);
    };
    // The command's defaults: the default measures, every core.
    let evaluator = Evaluator::builder().build_from_path(actual)?;
    let file = tokio::fs::File::open(predicted).await?;
    let done = evaluate_read(&evaluator, predicted, file).await?;
    let mut out = std::io::stdout().lock();
    let mut w = Writer::new(&mut out, OutFormat::Tsv, evaluator.plan().measures());
    w.begin(false)?;
    w.finish(&done.summary, false)?;
    out.flush()?;
    Ok(())
}
