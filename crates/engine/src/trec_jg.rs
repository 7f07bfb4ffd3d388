//! trec_eval's judgment groups (`-R qrels_jg`, METRICS.md §8): the run is evaluated against each
//! group's judgments as against ordinary qrels, and each goal's values are averaged over the
//! groups it has (`map_avgjg` is the mean over them of `AP`), added in byte order of the
//! groups' names and divided by their number when it is above 1, as trec_eval adds them. The
//! summary is then trec_eval's, over the goals.

use crate::trec::{
    evaluate_run, push_line, summary_lines, TrecError, TrecMeasure, TrecOptions, TrecVersion,
};
use crate::{EvalError, Evaluation, Evaluator};
use lemma_accum::{TrecAdder, TrecRules};
use lemma_ingest::{ErrorKind, JudgmentGroups};
use std::collections::BTreeMap;

/// One goal's values summed over its judgment groups.
struct Goal {
    sums: Vec<f64>,
    groups: u32,
    /// Absent from the run (evaluated as an empty ranking in every group, under `-c`).
    empty: bool,
}

/// [`crate::trec::run_to`] under `-R qrels_jg`, for the resolved measures `tm`.
pub(crate) fn run_to(
    qrels: &std::path::Path,
    run: &std::path::Path,
    o: &TrecOptions,
    tm: &[TrecMeasure],
    builder: crate::EvaluatorBuilder,
    out: &mut dyn std::io::Write,
) -> Result<Evaluation, TrecError> {
    let fail = |code: u8, message: String| TrecError { code, message };
    if let Some(m) =
        (tm.iter()).find(|m| m.measure.is_some() && m.name != "num_q" && !m.judgment_groups())
    {
        // trec_eval: "Can't calculate measure", exit 4, nothing printed.
        return Err(fail(
            4,
            format!(
                "measure `{}` reads -R qrels: with -R qrels_jg only map_avgjg, P_avgjg and \
                 Rprec_mult_avgjg are computed (and runid, num_q)",
                m.name
            ),
        ));
    }
    if o.zscores.is_some() {
        return Err(fail(2, "-Z is not supported with -R qrels_jg".into()));
    }
    if lemma_ingest::read_once(run) {
        return Err(fail(
            2,
            format!(
                "-R qrels_jg reads RUN once per judgment group: {} must be a file, not - or a pipe",
                run.display()
            ),
        ));
    }
    let v10 = o.version == TrecVersion::V10;
    let groups = JudgmentGroups::read(qrels, v10)?;
    let opts = builder.settings().clone();
    // Every goal's values are needed, whatever -q and -n say.
    let mut each = o.clone();
    each.no_summary = false;
    let mut goals: BTreeMap<Vec<u8>, Goal> = BTreeMap::new();
    let mut first: Option<(Evaluation, Vec<lemma_accum::Measure>)> = None;
    for name in groups.names() {
        let actual = groups.actual_sets(name, opts.threads, &opts.spill)?;
        let mut evaluator = Evaluator::builder().options(opts.clone()).build(actual);
        let (values, done) = match evaluate_run(&evaluator, run, &each) {
            Err(EvalError::Input(e))
                if e.kind == ErrorKind::GoalNotContiguous && !evaluator.options().regroup =>
            {
                let mut regrouped = evaluator.options().clone();
                regrouped.regroup = true;
                evaluator = Evaluator::builder()
                    .options(regrouped)
                    .build(evaluator.into_actual());
                evaluate_run(&evaluator, run, &each)?
            }
            r => r?,
        };
        let n = evaluator.plan().measures().len();
        values
            .visit_sorted(|goal, empty, v| {
                let g = goals.entry(goal.to_vec()).or_insert_with(|| Goal {
                    sums: vec![0.0; n],
                    groups: 0,
                    empty: true,
                });
                for (s, x) in g.sums.iter_mut().zip(v) {
                    *s += x;
                }
                g.groups += 1;
                g.empty &= empty;
                Ok(())
            })
            .map_err(|e| fail(2, e.to_string()))?;
        if first.is_none() {
            first = Some((done, evaluator.plan().measures().to_vec()));
        }
    }
    let (done, plan) = first.expect("a judgment group at least");
    let in_both = goals.values().filter(|g| !g.empty).count();
    if goals.is_empty() || (!v10 && in_both == 0) {
        return Err(fail(
            7,
            "no goals with both predictions and relevance judgments".into(),
        ));
    }
    let index = |m: &TrecMeasure| {
        let measure = m.measure.expect("per-goal measures are computed");
        plan.iter().position(|x| *x == measure).expect("in plan")
    };
    let per_goal: Vec<(&TrecMeasure, usize)> = match o.per_query {
        true => (tm.iter().filter(|m| m.per_goal))
            .map(|m| (m, index(m)))
            .collect(),
        false => Vec::new(),
    };
    let rules = if v10 { TrecRules::V10 } else { TrecRules::V9 };
    let mut adder = TrecAdder::new(&plan, rules);
    let io = |e: std::io::Error| fail(2, e.to_string());
    let mut lines = Vec::new();
    for (goal, g) in &mut goals {
        if g.groups > 1 {
            g.sums.iter_mut().for_each(|s| *s /= g.groups as f64);
        }
        adder.add(&g.sums, g.empty);
        // 9.0.8 never evaluates a goal without predictions.
        if per_goal.is_empty() || (g.empty && !v10) {
            continue;
        }
        lines.clear();
        for &(m, i) in &per_goal {
            push_line(&mut lines, m, goal, g.sums[i]);
        }
        out.write_all(&lines).map_err(io)?;
    }
    if !o.no_summary {
        let runid = String::from_utf8_lossy(&done.report.runid).into_owned();
        let values = adder.finish(goals.len() as u64);
        let mut text = String::new();
        summary_lines(
            &mut text,
            tm,
            &done.summary,
            Some(&values),
            &runid,
            None,
            false,
        );
        out.write_all(text.as_bytes()).map_err(io)?;
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use crate::trec::{run, RelFormat, TrecOptions};

    #[test]
    fn the_library_door_averages_over_groups() {
        let dir = tempfile::tempdir().unwrap();
        let (q, r) = (dir.path().join("jg"), dir.path().join("run"));
        // Group a: d1 relevant (AP 1 at rank 1); group b: d2 relevant (AP 1/2 at rank 2).
        std::fs::write(&q, "g1 a d1 1\ng1 b d2 1\n").unwrap();
        std::fs::write(&r, "g1 Q0 d1 1 0.9 t\ng1 Q0 d2 2 0.8 t\n").unwrap();
        let mut o = TrecOptions {
            measures: vec!["map_avgjg".into(), "P_avgjg.1".into()],
            rel_format: RelFormat::QrelsJg,
            ..TrecOptions::default()
        };
        let (text, _) = run(&q, &r, &o).unwrap();
        // map_avgjg (1 + 1/2) / 2; P_avgjg_1 (1 + 0) / 2.
        assert_eq!(
            text,
            "map_avgjg             \tall\t0.7500\nP_avgjg_1             \tall\t0.5000\n"
        );
        // Without -R qrels_jg, trec_eval's exit 4.
        o.rel_format = RelFormat::Qrels;
        assert_eq!(run(&q, &r, &o).unwrap_err().code, 4);
    }
}
