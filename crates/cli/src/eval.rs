//! `eval`, `merge`, `trec_eval` and `convert`: the library called, its outputs committed.

use crate::out::{
    commit_all, distinct, eval_fail, is_dash, one_stdout, progress_bar, table_label, write_fail,
    Fail, WriteErrors,
};
use crate::{ConvertArgs, EvalArgs, MergeArgs, TrecArgs};
use lemma_eval::output::{counts_text, report_text, write_merged, Writer};
use lemma_eval::trec::{self, TrecOptions};
use lemma_eval::{
    Evaluator, Job, PredictedInput, RankingOptions, RowFn, Sink, SummaryOnly, ZeroRelMode,
};
use lemma_ingest::ActualSets;
use lemma_outfile::Output;
use std::io::IsTerminal;
use std::path::Path;

pub(crate) fn run_eval(a: EvalArgs) -> Result<(), Fail> {
    let mut inputs = vec![a.actual.as_path(), a.predicted.as_path()];
    inputs.extend(
        a.matrix
            .inputs()
            .chain(a.premise.inputs())
            .chain(a.grouping.inputs()),
    );
    distinct(
        &[
            a.common.output.as_deref(),
            a.summary_out.as_deref(),
            a.values_out.as_deref(),
        ],
        &inputs,
    )?;
    if a.values_out.as_deref().is_some_and(is_dash) {
        return Err(Fail(
            2,
            "--values-out -: the values file is binary: give --values-out FILE".into(),
        ));
    }
    let summary_to_stdout = a.summary_out.as_deref().is_some_and(is_dash);
    one_stdout(&[
        (
            table_label(a.common.output.as_deref()),
            a.common.output.as_deref().is_none_or(is_dash),
        ),
        ("--summary-out -", summary_to_stdout),
    ])?;
    if summary_to_stdout && std::io::stdout().is_terminal() {
        return Err(Fail(
            2,
            "--summary-out -: the summary is binary and stdout is a terminal: redirect stdout, \
             or give --summary-out FILE"
                .into(),
        ));
    }
    if a.actual == Path::new("-") && a.predicted == Path::new("-") {
        return Err(Fail(
            2,
            "only one of ACTUAL and PREDICTED can be - (stdin)".into(),
        ));
    }
    let mut builder = (a.rules.apply(Evaluator::builder()))
        .missing(a.missing)
        .zero_relevant(if a.keep_zero_relevant {
            ZeroRelMode::Evaluate
        } else {
            ZeroRelMode::Skip
        })
        .regroup(a.regroup)
        .spill(a.memory.spill())
        .universe(a.universe);
    if let Some(t) = a.common.threads {
        builder = builder.threads(t);
    }
    builder = crate::groups::apply_groups(
        builder,
        &a.premise,
        &a.grouping,
        &a.actual,
        a.rules.relevance_level,
    )?;
    let mut measures = a.measures.clone();
    if let Some(t) = a.threshold {
        if measures.is_empty() {
            measures.extend(lemma_eval::DEFAULT_MEASURES.iter().map(|m| m.to_string()));
        }
        // Names already given are evaluated once (the measures are deduplicated).
        measures.extend(lemma_eval::curve::threshold_measures(t));
    }
    if !measures.is_empty() {
        builder = builder
            .measure_names(&measures)
            .map_err(|e| Fail(2, e.to_string()))?;
    }
    let names = a.matrix.names(a.premise.corpus.is_some())?;
    let predicted = match a.shard {
        Some((index, count)) => PredictedInput::Shard {
            path: a.predicted.clone(),
            index,
            count,
        },
        None => PredictedInput::Path(a.predicted.clone()),
    };
    let job = Job::new(builder, a.actual.as_path(), predicted)
        .premises(a.premise.options())
        .names(names)
        .mmap(a.common.mmap)
        .hold_actual(a.hold_actual)
        .mergeable(a.summary_out.is_some())
        .open()?;
    // Created first: a summary path that cannot be written fails before the evaluation.
    let summary_out = match &a.summary_out {
        Some(p) => Some(Output::create(Some(p))?),
        None => None,
    };
    let values_out = match &a.values_out {
        Some(p) => Some(Output::create(Some(p))?),
        None => None,
    };
    let mut out = Output::create(a.common.output.as_deref())?;
    let out_name = out.name();
    let plan = job.plan().clone();
    let mut recorder = (a.values_out.is_some())
        .then(|| lemma_eval::values::ValuesRecorder::new(job.options(), plan.measures()));
    let done = {
        let mut w = Writer::new(out.writer(), a.format, plan.measures());
        w.begin(a.per_goal).map_err(|e| write_fail(&out_name, e))?;
        let pb = progress_bar(a.common.quiet, job.size_on_disk());
        let progress = pb.as_ref().map(|pb| move |b: u64| pb.set_position(b));
        let progress = progress.as_ref().map(|p| p as &(dyn Fn(u64) + Sync));
        let per_goal = a.per_goal;
        let mut rows = RowFn(|row| {
            if let Some(r) = recorder.as_mut() {
                r.add(&row);
            }
            if per_goal {
                w.row(&row)?;
            }
            Ok(())
        });
        let sink: &mut dyn Sink = if a.per_goal || a.values_out.is_some() {
            &mut rows
        } else {
            &mut SummaryOnly
        };
        let done = job.evaluate(sink, progress);
        if let Some(pb) = pb {
            pb.finish_and_clear();
        }
        let done = done.map_err(|e| eval_fail(&out_name, e))?;
        let summary = &done.evaluation.summary;
        if let Some(t) = a.threshold {
            w.set_extra(lemma_eval::curve::pooled_at_threshold(t, summary));
        }
        if a.premise.corpus.is_some() {
            w.set_premises(&done.evaluation.report.premises);
        }
        w.finish(summary, a.per_goal)
            .map_err(|e| write_fail(&out_name, e))?;
        done
    };
    // The table before the summary: a summary replaced means its table was (lemma_outfile's
    // crate documentation says what a kill between the two renames leaves).
    let mut outs = vec![out];
    if let (Some(mut so), Some(partial)) = (summary_out, &done.partial) {
        let name = so.name();
        so.writer()
            .write_all(&partial.encode())
            .map_err(|e| write_fail(&name, e))?;
        outs.push(so);
    }
    if let (Some(mut vo), Some(r)) = (values_out, &recorder) {
        let name = vo.name();
        let ev = &done.evaluation;
        let counts = ev.summary.counts();
        let warnings = lemma_eval::output::warnings(&ev.report, &counts);
        vo.writer()
            .write_all(&r.encode(&counts, &warnings))
            .map_err(|e| write_fail(&name, e))?;
        outs.push(vo);
    }
    commit_all(outs)?;
    if !a.common.quiet {
        let done_eval = &done.evaluation;
        eprint!(
            "lemma-eval: {}\n{}",
            done.actual_read,
            report_text(&done_eval.report, &done_eval.summary.counts())
        );
    }
    // The process ends here: freeing the sets would only delay it.
    std::mem::forget(done.held);
    Ok(())
}

pub(crate) fn run_merge(a: MergeArgs) -> Result<(), Fail> {
    let inputs: Vec<&Path> = a.summaries.iter().map(|p| p.as_path()).collect();
    distinct(&[a.output.as_deref()], &inputs)?;
    // One file at a time: of the earlier ones only their names, goals and shards are kept.
    let mut merger = lemma_eval::PartialMerger::new();
    for p in &a.summaries {
        merger.add_file(p).map_err(|e| Fail(2, e.0))?;
    }
    let (merged, lacking) = merger
        .finish(a.partial)
        .map_err(|e| Fail(2, format!("{e}; --partial merges the shards given")))?;
    let first = &a.summaries[0];
    let summary = merged
        .summary()
        .map_err(|e| Fail(2, format!("{}: {e}", first.display())))?;
    let mut out = Output::create(a.output.as_deref())?;
    let written = write_merged(
        out.writer(),
        a.format,
        merged.measures(),
        &summary,
        lacking.clone(),
        merged.premises(),
    );
    written.map_err(|e| out.write_error(e))?;
    commit_all([out])?;
    if !a.quiet {
        let counts = counts_text(&summary.counts());
        eprintln!(
            "lemma-eval: {} summaries merged: {counts}",
            a.summaries.len()
        );
        if let Some(p) = merged
            .premises()
            .and_then(lemma_eval::output::premises_text)
        {
            eprintln!("lemma-eval: {p}");
        }
        for l in &lacking {
            eprintln!(
                "lemma-eval: lacking {l}: the summary is of the goals the shards given ranked"
            );
        }
    }
    Ok(())
}

pub(crate) fn run_trec(a: TrecArgs) -> Result<(), Fail> {
    distinct(&[a.common.output.as_deref()], &[&a.qrels, &a.run])?;
    let mut o = TrecOptions::default();
    o.measures = a.measures.clone();
    o.per_query = a.per_query;
    o.complete = a.complete;
    o.no_summary = a.no_summary;
    o.max_docs = a.max_docs;
    o.level = a.level;
    o.version = a.version;
    a.flags.apply(&mut o)?;
    if let Some(t) = a.common.threads {
        o.threads = t.max(1);
    }
    o.mmap = a.common.mmap;
    o.spill = a.memory.spill();
    let mut out = Output::create(a.common.output.as_deref())?;
    let out_name = out.name();
    // A write error is told apart from the evaluation's own (a closed pipe ends quietly).
    let mut w = WriteErrors {
        inner: out.writer(),
        error: None,
    };
    let done = match trec::run_to(&a.qrels, &a.run, &o, &mut w) {
        Ok(done) => done,
        Err(e) => match w.error.take() {
            Some(io) => return Err(write_fail(&out_name, io)),
            None => return Err(Fail(e.code, e.message)),
        },
    };
    commit_all([out])?;
    if !a.common.quiet && a.report {
        eprint!("{}", report_text(&done.report, &done.summary.counts()));
    }
    Ok(())
}

/// `convert --corpus`: a corpus (text or binary) written in binary form, whole or not at all.
fn convert_corpus(corpus: &Path, output: &Path) -> Result<(), Fail> {
    if is_dash(output) {
        return Err(Fail(
            2,
            "-o -: a binary corpus goes to a file (give -o FILE)".into(),
        ));
    }
    let c = lemma_ingest::Corpus::read(corpus)?;
    c.write_binary_file(output)?;
    eprintln!(
        "lemma-eval: {}: {} files, {} premises ({} skipped)",
        output.display(),
        c.files(),
        c.premises(),
        c.skipped().total()
    );
    Ok(())
}

pub(crate) fn run_convert(a: ConvertArgs) -> Result<(), Fail> {
    if let Some(corpus) = &a.corpus {
        return convert_corpus(corpus, &a.output);
    }
    let (Some(actual), Some(predicted)) = (&a.actual, &a.predicted) else {
        return Err(Fail(
            2,
            "convert needs actual sets and predictions, or --corpus".into(),
        ));
    };
    distinct(&[Some(a.output.as_path())], &[actual, predicted])?;
    if is_dash(&a.output) {
        return Err(Fail(
            2,
            "-o -: a store cannot go to stdout: its header is written last, at its start (give \
             -o FILE)"
                .into(),
        ));
    }
    let actual = ActualSets::read_path(actual)?;
    let input = lemma_ingest::open(predicted)?;
    let opts = RankingOptions::from(&a.ranking);
    let r = lemma_eval::convert::convert(&actual, input, &opts, &a.output)?;
    eprintln!(
        "lemma-eval: {}: {} goals, {} ranked lemmas, {} distinct lemmas, {} duplicates dropped",
        a.output.display(),
        r.goals,
        r.entries,
        r.lemmas,
        r.duplicates_dropped
    );
    Ok(())
}
