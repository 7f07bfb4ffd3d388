//! `gen` (generated workloads and libraries), and the hidden `read-corpus` and `read-rate`.

use crate::out::{
    commit_all, distinct, is_dash, one_stdout, which_failed, write_fail, Fail, WriteErrors,
};
use crate::{GenArgs, GenFormat};
use lemma_outfile::Output;
use std::path::Path;

pub(crate) fn run_gen(a: GenArgs) -> Result<(), Fail> {
    let outputs = [
        Some(a.qrels.as_path()),
        Some(a.run.as_path()),
        a.goal_names.as_deref(),
        a.lemma_names.as_deref(),
    ];
    distinct(&outputs, &[])?;
    let dash = |p: Option<&Path>| p.is_some_and(is_dash);
    one_stdout(&[
        ("--qrels -", dash(Some(&a.qrels))),
        ("--run -", dash(Some(&a.run))),
        ("--goal-names -", dash(a.goal_names.as_deref())),
        ("--lemma-names -", dash(a.lemma_names.as_deref())),
    ])?;
    if a.format == GenFormat::Store && is_dash(&a.run) {
        return Err(Fail(
            2,
            "--run -: a store cannot go to stdout: its header is written last, at its start \
             (give --run FILE)"
                .into(),
        ));
    }
    if let Some(corpus) = &a.corpus {
        return gen_corpus(&a, corpus);
    }
    let spec = lemma_tools::gen::GenSpec {
        goals: a.goals,
        universe: a.universe.max(1),
        depth: if a.full { a.universe } else { a.depth },
        empty_share: a.empty_share,
        relevant_mean: a.relevant_mean,
        relevant_max: a.relevant_max.max(1),
        tie_share: a.ties,
        unretrieved_share: a.unretrieved_share,
        graded: a.graded,
        seed: a.seed,
    };
    let mut q = Output::create(Some(&a.qrels))?;
    // A write error names the output whose writer failed; the store's own, both files.
    fn tag(o: &mut Output) -> WriteErrors<'_> {
        WriteErrors {
            inner: o.writer(),
            error: None,
        }
    }
    // The files are committed together, the qrels last.
    let outs = match a.format {
        GenFormat::Trec | GenFormat::Jsonl => {
            let mut r = Output::create(Some(&a.run))?;
            let names = [r.name(), q.name()];
            let mut w = [tag(&mut r), tag(&mut q)];
            let [rw, qw] = &mut w;
            let made = match a.format {
                GenFormat::Trec => lemma_tools::gen::generate_trec(&spec, qw, rw),
                _ => lemma_tools::gen::generate_jsonl(&spec, qw, rw),
            };
            made.map_err(|e| which_failed(&mut w, &names, e))?;
            vec![r, q]
        }
        GenFormat::Store => {
            let names = [q.name(), a.run.display().to_string()];
            let mut w = [tag(&mut q)];
            let [qw] = &mut w;
            let store = lemma_tools::gen::generate_store(&spec, &a.run, qw, a.scores)
                .map_err(|e| which_failed(&mut w, &names, e))?;
            vec![Output::File(std::io::BufWriter::new(store)), q]
        }
        GenFormat::Npy => {
            let (Some(gn), Some(ln)) = (&a.goal_names, &a.lemma_names) else {
                return Err(Fail(
                    2,
                    "--format npy needs --goal-names FILE and --lemma-names FILE".into(),
                ));
            };
            let (mut r, mut g, mut l) = (
                Output::create(Some(&a.run))?,
                Output::create(Some(gn))?,
                Output::create(Some(ln))?,
            );
            let names = [r.name(), g.name(), l.name(), q.name()];
            let mut w = [tag(&mut r), tag(&mut g), tag(&mut l), tag(&mut q)];
            let [rw, gw, lw, qw] = &mut w;
            lemma_tools::gen::generate_npy(&spec, rw, gw, lw, qw)
                .map_err(|e| which_failed(&mut w, &names, e))?;
            vec![r, g, l, q]
        }
    };
    commit_all(outs)
}

/// `gen --corpus`: a library, its goals' actual sets and a run or matrix, committed together.
pub(crate) fn gen_corpus(a: &GenArgs, corpus: &Path) -> Result<(), Fail> {
    distinct(&[Some(corpus)], &[a.qrels.as_path(), a.run.as_path()])?;
    let files = a.files.unwrap_or(a.universe / 50).max(1);
    if files > lemma_ingest::MAX_CORPUS_FILES as u64 {
        return Err(Fail(
            2,
            format!(
                "gen --corpus: {files} files (--files, or --universe / 50): a corpus may list at \
                 most {} files",
                lemma_ingest::MAX_CORPUS_FILES
            ),
        ));
    }
    let spec = lemma_tools::gen_corpus::CorpusSpec {
        files,
        premises: a.universe.max(1),
        goals: a.goals,
        depth: a.depth,
        relevant_mean: a.relevant_mean.min(20.0),
        inaccessible_gold: a.inaccessible_gold,
        seed: a.seed,
        ..lemma_tools::gen_corpus::CorpusSpec::default()
    };
    let (mut c, mut q, mut r) = (
        Output::create(Some(corpus))?,
        Output::create(Some(&a.qrels))?,
        Output::create(Some(&a.run))?,
    );
    let names = format!("{}, {}, {}", c.name(), q.name(), r.name());
    let io = |e: std::io::Error| write_fail(&names, e);
    let outs = match a.format {
        GenFormat::Trec => {
            lemma_tools::gen_corpus::generate_corpus(&spec, c.writer(), q.writer(), r.writer())
                .map_err(io)?;
            vec![r, c, q]
        }
        GenFormat::Npy => {
            let (Some(gn), Some(ln)) = (&a.goal_names, &a.lemma_names) else {
                return Err(Fail(
                    2,
                    "--corpus with --format npy needs --goal-names FILE and --lemma-names FILE"
                        .into(),
                ));
            };
            let (mut g, mut l) = (Output::create(Some(gn))?, Output::create(Some(ln))?);
            lemma_tools::gen_corpus::generate_corpus_npy(
                &spec,
                c.writer(),
                q.writer(),
                r.writer(),
                g.writer(),
                l.writer(),
            )
            .map_err(io)?;
            vec![r, g, l, c, q]
        }
        _ => {
            return Err(Fail(
                2,
                "--corpus writes a TREC run (--format trec) or a score matrix (--format npy)"
                    .into(),
            ))
        }
    };
    commit_all(outs)
}

/// What a corpus holds, and the time to read it.
pub(crate) fn read_corpus(path: &Path) -> Result<(), Fail> {
    let started = std::time::Instant::now();
    let c = lemma_ingest::Corpus::read(path)?;
    let s = c.skipped();
    println!(
        "{}: {} files, {} premises ({} skipped: {} without a name, {} user__.n, {} with empty \
         code, {} mutual) in {:.3} s; {:.1} MB held",
        path.display(),
        c.files(),
        c.premises(),
        s.total(),
        s.no_name,
        s.user_n,
        s.empty_code,
        s.mutual,
        started.elapsed().as_secs_f64(),
        c.heap_bytes() as f64 / 1e6
    );
    Ok(())
}

/// The machine's read rate for `file` ([`lemma_tools::read_rate`]).
pub(crate) fn read_rate(file: &Path, threads: usize) -> Result<(), Fail> {
    let (bytes, secs, total) = lemma_tools::read_rate(file, threads)
        .map_err(|e| Fail(2, format!("{}: {e}", file.display())))?;
    println!(
        "{bytes} bytes in {secs:.4} s: {:.2} GB/s ({threads} threads; sum {total})",
        bytes as f64 / secs / 1e9
    );
    Ok(())
}
