//! trec_eval compatibility: its output format and its command (METRICS.md §8). The `-m` rules
//! (trec_eval's table order, the first `-m` that gives a measure parameters wins, cutoff lists
//! sorted and never repeated) are the accumulator's one trec_eval parser,
//! [`lemma_accum::trec::resolve`], derived from the measures' declarations. Lines are
//! `format!("{:<22}\t{}\t{:.4}", name, goal, value)`, integers for the `num_*` counts.

use crate::trec_goals::GoalValues;
use crate::{
    DuplicateMode, EvalError, EvalOptions, GoalRow, MissingMode, OrderMode, TieMode, ZeroRelMode,
};
use crate::{Evaluation, Evaluator, Predictions, Sink, SummaryOnly};
use lemma_accum::{Aggregate, Measure, Summary};
use lemma_accum::{Interpolation, TrecAdder, TrecRules};
use std::fmt::Write as _;

pub use crate::trec_prefs::{evaluate_prefs, GoalVisit, PrefsOutcome};
pub use lemma_accum::trec::{
    pytrec_name, pytrec_nickname, resolve, resolve_for, resolve_pytrec, table, TrecMeasure,
    TrecMeasureError, PYTREC_NICKNAMES,
};

/// Appends one trec_eval line.
pub fn line(out: &mut String, m: &TrecMeasure, goal: &str, value: f64) {
    let mut b = Vec::new();
    push_line(&mut b, m, goal.as_bytes(), value);
    out.push_str(std::str::from_utf8(&b).expect("the name, the goal and ASCII"));
}

/// A text measure's line (`relstring`): trec_eval's `%-22s\t%s\t'%s'`.
fn push_text_line(out: &mut Vec<u8>, m: &TrecMeasure, goal: &[u8], text: &str) {
    let name = &m.name;
    let pad = 22usize.saturating_sub(name.chars().count());
    out.extend_from_slice(name.as_bytes());
    out.extend(std::iter::repeat_n(b' ', pad));
    out.push(b'\t');
    out.extend_from_slice(goal);
    out.extend_from_slice(b"\t'");
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(b"'\n");
}

/// [`line`] onto bytes (`trec_eval -q` writes one per goal and measure, on one thread).
pub(crate) fn push_line(out: &mut Vec<u8>, m: &TrecMeasure, goal: &[u8], value: f64) {
    crate::output::push_trec_line(out, &m.name, goal, value, m.integer);
}

/// The summary block (`all`): each value from `trec_values` (trec_eval's arithmetic, in the
/// order of `summary`'s measures; see [`TrecAdder`]) when given, else from `summary`'s exact
/// sums.
pub fn summary_block(
    out: &mut String,
    measures: &[TrecMeasure],
    summary: &Summary,
    trec_values: Option<&[f64]>,
    runid: &str,
    num_rel_override: Option<u64>,
) {
    summary_lines(
        out,
        measures,
        summary,
        trec_values,
        runid,
        num_rel_override,
        false,
    );
}

/// [`summary_block`]; under `-Z` (`z`) each number's line is trec_eval's z-score line
/// ([`z_line`]).
pub(crate) fn summary_lines(
    out: &mut String,
    measures: &[TrecMeasure],
    summary: &Summary,
    trec_values: Option<&[f64]>,
    runid: &str,
    num_rel_override: Option<u64>,
    z: bool,
) {
    for m in measures.iter().filter(|m| !m.text) {
        let Some(measure) = m.measure else {
            let _ = writeln!(out, "{:<22}\tall\t{}", m.name, runid);
            continue;
        };
        let i = summary
            .measures()
            .iter()
            .position(|x| *x == measure)
            .expect("measure in plan");
        let v = match (summary.aggregate(i), &trec_values) {
            (Aggregate::Depth { .. } | Aggregate::Covered { .. }, _) => {
                unreachable!("no Depth or origin measure in trec_eval")
            }
            (_, Some(values)) => values[i],
            (Aggregate::Mean(v) | Aggregate::Sum(v) | Aggregate::GeoMean(v), None) => v,
        };
        let v = match (measure, num_rel_override) {
            (Measure::NumRel, Some(n)) => n as f64,
            _ => v,
        };
        if z {
            let mut b = Vec::new();
            z_line(&mut b, m, b"all", v);
            out.push_str(std::str::from_utf8(&b).expect("the name, the goal and ASCII"));
        } else {
            line(out, m, "all", v);
        }
    }
}

/// A line of trec_eval under `-Z`: `Z`, then the name padded to 22 characters, the goal and the
/// value to four decimals, counts included (`Z%-22s\t%s\t%6.4f`).
fn z_line(out: &mut Vec<u8>, m: &TrecMeasure, goal: &[u8], value: f64) {
    out.push(b'Z');
    crate::output::push_trec_line(out, &m.name, goal, value, false);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first line whose first non-blank byte is `#`, whatever the chunks the bytes come
    /// in: `#` inside a field, or after a field split across chunks, does not count.
    #[test]
    fn hash_lines_across_chunks() {
        let text = b"g1 Q0 a#1 1 0.5 x\ng2 Q0 b 1 0.5 #x\n\n \t#c\ng3 #\n";
        for size in 1..text.len() {
            let mut seen = HashLines {
                count_lines: true,
                ..HashLines::default()
            };
            for chunk in text.chunks(size) {
                seen.scan(chunk);
            }
            // Line 4, starting at byte 36 (after lines of 18, 17 and 1 bytes).
            assert_eq!(seen.found, Some((4, 36)), "chunks of {size}");
        }
        let mut none = HashLines::default();
        none.scan(b"g1 Q0 a#1 1 0.5 x\nx #\n");
        assert_eq!(none.found, None);
    }

    #[test]
    fn line_format() {
        let mut s = String::new();
        let m = TrecMeasure {
            name: "map".into(),
            measure: None,
            integer: false,
            per_goal: true,
            text: false,
            parts: Vec::new(),
        };
        line(&mut s, &m, "q1", 0.533_333);
        let n = TrecMeasure {
            name: "num_ret".into(),
            measure: None,
            integer: true,
            per_goal: true,
            text: false,
            parts: Vec::new(),
        };
        line(&mut s, &n, "all", 1000.0);
        assert_eq!(
            s,
            "map                   \tq1\t0.5333\nnum_ret               \tall\t1000\n"
        );
        // As fmt writes it: a name of 22 characters or more is not padded, 0.03125 (exactly
        // halfway) rounds to even.
        for (name, v) in [
            ("a_name_of_22_chars_xyz", 0.03125),
            ("a_longer_name_of_23_chr", 0.09375),
        ] {
            let mut s = String::new();
            let m = TrecMeasure {
                name: name.into(),
                ..m.clone()
            };
            line(&mut s, &m, "g", v);
            assert_eq!(s, format!("{name:<22}\tg\t{v:.4}\n"));
        }
        assert_eq!(format!("{:.4}", 0.03125), "0.0312");
    }
}

/// Which trec_eval to reproduce.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum TrecVersion {
    /// trec_eval 9.0.8 (pytrec_eval's): scores rounded to f32, 9.0.8's interpolation, goals
    /// without predictions not printed under `-q`.
    V9,
    /// trec_eval 10.0.
    #[default]
    V10,
}

impl crate::Choice for TrecVersion {
    const OPTION: &'static str = "trec-version";
    const VALUES: &'static [(&'static str, &'static str, Self)] = &[
        ("9", "trec_eval 9.0.8 (pytrec_eval's)", TrecVersion::V9),
        ("10", "trec_eval 10.0", TrecVersion::V10),
    ];
}

impl crate::EvaluatorBuilder {
    /// trec_eval's rules, as `version` has them: ranked by score (trec_eval's tie rule), a lemma
    /// twice in a goal an error, goals with nothing relevant evaluated, goals without predictions
    /// evaluated as empty only under `-c` (`complete`); 9.0.8 rounds scores to f32 and has its
    /// own interpolation. The `trec_eval` subcommand and the Python package's
    /// `RelevanceEvaluator` (pytrec_eval's, 9.0.8) both take them from here.
    pub fn trec_eval(self, version: TrecVersion, complete: bool) -> Self {
        let v10 = version == TrecVersion::V10;
        self.order(OrderMode::Score)
            .ties(TieMode::Trec)
            .duplicates(DuplicateMode::Error)
            .missing(if complete {
                MissingMode::Zero
            } else {
                MissingMode::Skip
            })
            .zero_relevant(ZeroRelMode::Evaluate)
            .interpolation(if v10 {
                Interpolation::Trec10
            } else {
                Interpolation::Trec9
            })
            .f32_scores(!v10)
    }
}

/// trec_eval's flags.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TrecOptions {
    /// `-m` arguments, as given (`P.5,10`, `official`, ...).
    pub measures: Vec<String>,
    /// `-q`: per-goal lines too.
    pub per_query: bool,
    /// `-c`: average over every qrels goal (missing ones count 0).
    pub complete: bool,
    /// `-n`: no summary.
    pub no_summary: bool,
    /// `-M`: evaluate only the first N lemmas of each goal.
    pub max_docs: Option<u64>,
    /// `-l`: relevance level.
    pub level: i32,
    /// The version reproduced.
    pub version: TrecVersion,
    /// `-J`: only judged lemmas (grade `>= 0`) are ranked.
    pub judged_only: bool,
    /// `-N`: the collection's size (`utility` reads it).
    pub collection_size: u64,
    /// Worker threads.
    pub threads: usize,
    /// Memory-map a plain run file.
    pub mmap: bool,
    /// The memory budget of a run whose goals are not contiguous (sorted by goal, in memory or
    /// on disk).
    pub spill: lemma_ingest::SpillOptions,
    /// `-Z`: a z-score file (`goal measure mean stddev` lines); each goal's values become
    /// z-scores against it before they are printed and averaged (METRICS.md §8).
    pub zscores: Option<std::path::PathBuf>,
    /// `-R`: the judgments file's format (METRICS.md §8.5 for the preference formats).
    pub rel_format: RelFormat,
}

/// trec_eval's `-R`: the format of the judgments file.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum RelFormat {
    /// `qrels` (the default): lines `goal iter lemma grade`.
    #[default]
    Qrels,
    /// `qrels_jg`: judgment groups, lines `goal group lemma grade`, which the measures
    /// `map_avgjg`, `P_avgjg` and `Rprec_mult_avgjg` average over.
    QrelsJg,
    /// `prefs`: preference judgments, lines `goal group subgroup lemma level`.
    Prefs,
    /// `qrels_prefs`: qrels read as preference judgments (the `iter` field the group).
    QrelsPrefs,
}

impl RelFormat {
    /// trec_eval's name.
    pub fn name(self) -> &'static str {
        match self {
            RelFormat::Qrels => "qrels",
            RelFormat::QrelsJg => "qrels_jg",
            RelFormat::Prefs => "prefs",
            RelFormat::QrelsPrefs => "qrels_prefs",
        }
    }

    /// The format trec_eval names `name`.
    pub fn from_name(name: &str) -> Option<RelFormat> {
        [
            RelFormat::Qrels,
            RelFormat::QrelsJg,
            RelFormat::Prefs,
            RelFormat::QrelsPrefs,
        ]
        .into_iter()
        .find(|f| f.name() == name)
    }
}

impl Default for TrecOptions {
    fn default() -> Self {
        TrecOptions {
            measures: Vec::new(),
            per_query: false,
            complete: false,
            no_summary: false,
            max_docs: None,
            level: 1,
            version: TrecVersion::V10,
            judged_only: false,
            collection_size: 0,
            threads: EvalOptions::default().threads,
            mmap: false,
            spill: lemma_ingest::SpillOptions::default(),
            zscores: None,
            rel_format: RelFormat::Qrels,
        }
    }
}

/// A trec_eval failure and trec_eval's exit code for it: 1 for a bad measure, 4 for a repeated
/// lemma ("Can't calculate measure"), 7 when no goal has both predictions and judgments, 2
/// otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrecError {
    /// The exit code trec_eval would give.
    pub code: u8,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for TrecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TrecError {}

impl From<lemma_ingest::InputError> for TrecError {
    fn from(e: lemma_ingest::InputError) -> Self {
        TrecError {
            code: 2,
            message: e.to_string(),
        }
    }
}

impl From<EvalError> for TrecError {
    fn from(e: EvalError) -> Self {
        let code = match &e {
            EvalError::Input(ie) if ie.kind == lemma_ingest::ErrorKind::Duplicate => 4,
            _ => 2,
        };
        TrecError {
            code,
            message: e.to_string(),
        }
    }
}

/// What trec_eval prints for `qrels` and `run` under `o`, byte for byte, and the evaluation
/// behind it. See [`run_to`].
pub fn run(
    qrels: &std::path::Path,
    run: &std::path::Path,
    o: &TrecOptions,
) -> Result<(String, Evaluation), TrecError> {
    let mut out = Vec::new();
    let done = run_to(qrels, run, o, &mut out)?;
    let text = String::from_utf8(out).map_err(|e| TrecError {
        code: 2,
        message: format!("output is not UTF-8: {e}"),
    })?;
    Ok((text, done))
}

/// Writes what trec_eval prints for `qrels` and `run` under `o` to `out`, byte for byte, and
/// returns the evaluation behind it. The run is streamed; goals that are not contiguous make it
/// sorted by goal within `o.spill`'s budget (trec_eval accepts any order). The evaluated goals'
/// values, which the summary (trec_eval's running sum in goal-id order) and `-q` (lines in that
/// order) need, are held within half that budget and go to sorted temporary files past it.
/// Nothing is written before the run has been read whole: an error in the inputs leaves `out`
/// untouched.
pub fn run_to(
    qrels: &std::path::Path,
    run: &std::path::Path,
    o: &TrecOptions,
    out: &mut dyn std::io::Write,
) -> Result<Evaluation, TrecError> {
    use lemma_ingest::{ActualSets, ErrorKind};
    if matches!(o.rel_format, RelFormat::Prefs | RelFormat::QrelsPrefs) {
        return crate::trec_prefs::run_to(qrels, run, o, out);
    }
    let v10 = o.version == TrecVersion::V10;
    let rules = if v10 { TrecRules::V10 } else { TrecRules::V9 };
    let tm = resolve_for(&o.measures, rules).map_err(|e| TrecError {
        code: e.code as u8,
        message: e.message,
    })?;
    let builder = Evaluator::builder()
        .measures(tm.iter().flat_map(|m| m.measures()))
        .relevance_level(o.level)
        .depth(o.max_docs)
        .trec_eval(o.version, o.complete)
        .judged_only(o.judged_only)
        .collection_size(o.collection_size)
        // A run read once (stdin, a pipe, a FIFO) is regrouped from the start: it could not be
        // read again when its goals turn out not to be contiguous.
        .regroup(lemma_ingest::read_once(run))
        .threads(o.threads.max(1))
        .spill(o.spill.clone());
    if qrels == std::path::Path::new("-") && run == std::path::Path::new("-") {
        return Err(TrecError {
            code: 2,
            message: "only one of QRELS and RUN can be - (stdin)".into(),
        });
    }
    if o.rel_format == RelFormat::QrelsJg {
        return crate::trec_jg::run_to(qrels, run, o, &tm, builder, out);
    }
    if let Some(m) = tm.iter().find(|m| m.judgment_groups()) {
        // trec_eval: "Can't calculate measure", exit 4, nothing printed.
        return Err(TrecError {
            code: 4,
            message: format!("measure `{}` needs judgment groups: -R qrels_jg", m.name),
        });
    }
    let opts = builder.settings().clone();
    let zscores = match &o.zscores {
        Some(path) => Some(lemma_ingest::ZScores::read(path)?),
        None => None,
    };
    let actual = if v10 {
        ActualSets::read_path_within(qrels, opts.threads, &opts.spill)?
    } else {
        let mut input = lemma_ingest::open_with(qrels, true)?;
        let check = watch_hash_lines(&mut input)?;
        let actual = ActualSets::read_within(input, opts.threads, &opts.spill)?;
        check()?;
        actual
    };
    // Stream, and regroup in memory only if a goal reappears.
    let mut evaluator = Evaluator::builder().options(opts).build(actual);
    let (goals, done) = match evaluate_run(&evaluator, run, o) {
        Err(EvalError::Input(e))
            if e.kind == ErrorKind::GoalNotContiguous && !evaluator.options().regroup =>
        {
            tracing::info!("goals are not contiguous: sorting the run by goal");
            let mut opts = evaluator.options().clone();
            opts.regroup = true;
            evaluator = Evaluator::builder()
                .options(opts)
                .build(evaluator.into_actual());
            evaluate_run(&evaluator, run, o)?
        }
        r => r?,
    };
    finish(&tm, goals, done, &evaluator, zscores.as_ref(), o, out)
}

/// The sink of trec_eval mode: every evaluated goal's values, for the summary in trec_eval's
/// arithmetic and the `-q` lines.
struct TrecRows(GoalValues);

impl Sink for TrecRows {
    fn row(&mut self, row: GoalRow) -> std::io::Result<()> {
        self.0.push(&row.goal, &row.values, row.empty)
    }
}

/// One evaluation of the run: every evaluated goal's values (with `-n` and no `-q`, none), and
/// the evaluation.
pub(crate) fn evaluate_run(
    evaluator: &Evaluator,
    run: &std::path::Path,
    o: &TrecOptions,
) -> Result<(GoalValues, Evaluation), EvalError> {
    let goals = GoalValues::new(evaluator.plan().measures(), &o.spill);
    // 9.0.8's lines: scanned for `#`.
    let v9 = o.version == TrecVersion::V9;
    let mut input = lemma_ingest::open_with(run, o.mmap)?;
    let check = match v9 {
        true => watch_hash_lines(&mut input)?,
        false => Box::new(|| Ok(())),
    };
    if o.no_summary && !o.per_query {
        let done = evaluator.evaluate(Predictions::Text(input), &mut SummaryOnly)?;
        check()?;
        return Ok((goals, done));
    }
    let mut sink = TrecRows(goals);
    let done = evaluator.evaluate(Predictions::Text(input), &mut sink)?;
    check()?;
    Ok((sink.0, done))
}

/// The per-goal lines (goals in byte order, measures in trec_eval's table order) and the summary,
/// from one pass over the goals in byte order.
fn finish(
    tm: &[TrecMeasure],
    goals: GoalValues,
    done: Evaluation,
    evaluator: &Evaluator,
    zscores: Option<&lemma_ingest::ZScores>,
    o: &TrecOptions,
    out: &mut dyn std::io::Write,
) -> Result<Evaluation, TrecError> {
    let positive_rows = evaluator.actual().positive_rows;
    let plan_measures = evaluator.plan().measures();
    let v10 = o.version == TrecVersion::V10;
    // 10.0 evaluates the goals of the qrels alone under -c (empty rankings); 9.0.8 needs a goal
    // in both files whatever the flags.
    let counts = done.summary.counts();
    let in_both = counts.evaluated - counts.evaluated_empty;
    if counts.evaluated == 0 || (!v10 && in_both == 0) {
        return Err(TrecError {
            code: 7,
            message: "no goals with both predictions and relevance judgments".into(),
        });
    }
    let io = |e: std::io::Error| TrecError {
        code: 2,
        message: e.to_string(),
    };
    let index = |measure: Measure| {
        plan_measures
            .iter()
            .position(|x| *x == measure)
            .expect("in plan")
    };
    // Each per-goal name with the index of its value, and of a text's further values.
    let per_goal: Vec<(&TrecMeasure, usize, Vec<usize>)> = if o.per_query {
        (tm.iter().filter(|m| m.per_goal))
            .map(|m| {
                let measure = m.measure.expect("per-goal measures are computed");
                (
                    m,
                    index(measure),
                    m.parts.iter().map(|&p| index(p)).collect(),
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    let rules = if v10 { TrecRules::V10 } else { TrecRules::V9 };
    let mut adder = TrecAdder::new(plan_measures, rules);
    let mut lines = Vec::new();
    // -Z: each plan measure's trec_eval name, which the z-score file's lines name. num_q's
    // summary is the number of goals whatever its per-goal values, as trec_eval's is.
    let mut z_names: Vec<Option<&str>> = vec![None; plan_measures.len()];
    for m in tm.iter().filter(|m| !m.text && m.name != "num_q") {
        if let Some(measure) = m.measure {
            z_names[index(measure)].get_or_insert(&m.name);
        }
    }
    let mut converted = Vec::with_capacity(plan_measures.len());
    goals
        .visit_sorted(|goal, empty, values| {
            // 9.0.8 never evaluates a goal without predictions (-c): nothing to convert.
            let values = match zscores {
                Some(z) if v10 || !empty => {
                    let reference = z.goal(goal);
                    converted.clear();
                    for ((&v, &measure), name) in values.iter().zip(plan_measures).zip(&z_names) {
                        let stored = lemma_accum::trec_stored(measure, v);
                        converted.push(match name {
                            Some(n) => lemma_accum::zscore(
                                stored,
                                reference.and_then(|r| r.get(*n)).copied(),
                            ),
                            None => stored,
                        });
                    }
                    adder.add_stored(&converted, empty);
                    &converted[..]
                }
                _ => {
                    adder.add(values, empty);
                    values
                }
            };
            if per_goal.is_empty() || (empty && !v10) {
                return Ok(());
            }
            lines.clear();
            let goal = String::from_utf8_lossy(goal);
            for (m, i, parts) in &per_goal {
                if m.text {
                    let chunks = std::iter::once(*i).chain(parts.iter().copied());
                    let text = lemma_accum::relstring_text(chunks.map(|k| values[k]));
                    push_text_line(&mut lines, m, goal.as_bytes(), &text);
                } else if zscores.is_some() {
                    z_line(&mut lines, m, goal.as_bytes(), values[*i]);
                } else {
                    push_line(&mut lines, m, goal.as_bytes(), values[*i]);
                }
            }
            out.write_all(&lines)
        })
        .map_err(io)?;
    let mut text = String::new();
    if !o.no_summary {
        let runid = String::from_utf8_lossy(&done.report.runid).into_owned();
        let num_rel = o.complete.then_some(positive_rows);
        let values = adder.finish(counts.evaluated);
        text.clear();
        summary_lines(
            &mut text,
            tm,
            &done.summary,
            Some(&values),
            &runid,
            num_rel,
            zscores.is_some(),
        );
        out.write_all(text.as_bytes()).map_err(io)?;
    }
    Ok(done)
}

/// trec_eval 9.0.8 has no comment lines: a line whose first non-blank byte is `#` is a qrels or
/// run line like any other there (a judgment or ranked lemma of goal `#…` when it has the
/// right number of fields, "Malformed line" otherwise), where 10.0 and lemma-eval skip it.
/// lemma-eval reproduces neither under `--trec-version 9`: it refuses such a line, naming it.
/// This finds the first one, reading the bytes as they pass (any number of chunks).
#[derive(Clone, Debug, Default)]
struct HashLines {
    /// Whether a byte other than a blank came since the last newline (false at the start).
    mid_line: bool,
    /// Newlines before the current chunk, when counted (a stream's; a file's lines are counted
    /// again once a line is found).
    lines: u64,
    count_lines: bool,
    bytes: u64,
    /// Where the current line began.
    line_start: u64,
    /// The first such line: its number (1-based) and byte offset.
    found: Option<(u64, u64)>,
}

impl HashLines {
    fn blank(b: u8) -> bool {
        matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
    }

    /// Scans the next chunk of the input.
    fn scan(&mut self, chunk: &[u8]) {
        if self.found.is_some() {
            return;
        }
        for p in memchr::memchr_iter(b'#', chunk) {
            let (start, continues) = match memchr::memrchr(b'\n', &chunk[..p]) {
                Some(nl) => (nl + 1, false),
                None => (0, true),
            };
            if chunk[start..p].iter().all(|&b| Self::blank(b)) && !(continues && self.mid_line) {
                let before = memchr::memchr_iter(b'\n', &chunk[..p]).count() as u64;
                let at = match continues {
                    true => self.line_start,
                    false => self.bytes + start as u64,
                };
                self.found = Some((self.lines + before + 1, at));
                return;
            }
        }
        if self.count_lines {
            self.lines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        }
        let tail = match memchr::memrchr(b'\n', chunk) {
            Some(nl) => {
                self.line_start = self.bytes + nl as u64 + 1;
                self.mid_line = false;
                &chunk[nl + 1..]
            }
            None => chunk,
        };
        self.mid_line |= !tail.iter().all(|&b| Self::blank(b));
        self.bytes += chunk.len() as u64;
    }

    /// The error for the line found in `path`.
    fn error(&self, path: &std::path::Path) -> Option<lemma_ingest::InputError> {
        let (line, byte) = self.found?;
        Some(lemma_ingest::InputError::at(
            lemma_ingest::ErrorKind::Syntax,
            path,
            line,
            byte,
            "a line starting with `#`: trec_eval 9.0.8 has no comment lines (it reads this one \
             as a line of goal `#…` if it has the fields of one, as a malformed line \
             otherwise), which lemma-eval does not reproduce; remove the line, or use \
             --trec-version 10, which skips it",
        ))
    }
}

/// A stream whose bytes pass through [`HashLines`] as they are read.
struct Watched {
    inner: lemma_ingest::Source,
    seen: std::sync::Arc<std::sync::Mutex<HashLines>>,
}

impl Watched {
    fn see(&self, bytes: &[u8]) {
        if let Ok(mut s) = self.seen.lock() {
            s.scan(bytes);
        }
    }
}

impl std::io::Read for Watched {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.see(&buf[..n]);
        Ok(n)
    }
}

impl std::io::BufRead for Watched {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        // The buffer is filled already: this reads nothing.
        if let Ok(buf) = self.inner.fill_buf() {
            let (inner, seen) = (&buf[..n.min(buf.len())], &self.seen);
            if let Ok(mut s) = seen.lock() {
                s.scan(inner);
            }
        }
        self.inner.consume(n);
    }
}

/// Under 9.0.8's rules, the first `#` line of `input`, checked by the returned function (call it
/// once the input has been read): a plain file is read once more on a thread of its own, a
/// stream scanned as the evaluation reads it.
#[allow(clippy::type_complexity)]
pub(crate) fn watch_hash_lines(
    input: &mut lemma_ingest::Input,
) -> Result<Box<dyn FnOnce() -> Result<(), lemma_ingest::InputError>>, lemma_ingest::InputError> {
    let path = input.path.clone();
    if input.map.is_some() || input.file.is_some() {
        // A plain file: read through once more in 1 MiB chunks (a mapping scanned whole would
        // keep every page resident), on a thread of its own beside the evaluation.
        let scan = std::thread::spawn(move || scan_file(&path));
        Ok(Box::new(move || match scan.join() {
            Ok(r) => r,
            Err(p) => std::panic::resume_unwind(p),
        }))
    } else {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(HashLines {
            count_lines: true,
            ..HashLines::default()
        }));
        let inner = std::mem::replace(
            &mut input.reader,
            lemma_ingest::Source::stream(std::io::empty()),
        );
        input.reader = lemma_ingest::Source::stream(Watched {
            inner,
            seen: seen.clone(),
        });
        Ok(Box::new(move || match seen.lock() {
            Ok(s) => s.error(&path).map_or(Ok(()), Err),
            Err(_) => Ok(()),
        }))
    }
}

/// [`HashLines`] over the plain file `path`.
fn scan_file(path: &std::path::Path) -> Result<(), lemma_ingest::InputError> {
    use std::io::Read;
    let err = |e| lemma_ingest::InputError::read(path, e);
    let mut seen = HashLines::default();
    let mut file = std::fs::File::open(path).map_err(err)?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(err)?;
        if n == 0 || seen.found.is_some() {
            break;
        }
        seen.scan(&buf[..n]);
    }
    if let Some((_, byte)) = seen.found {
        // Its line number: the newlines before it.
        let mut lines = 1u64;
        let mut file = std::fs::File::open(path).map_err(err)?.take(byte);
        loop {
            let n = file.read(&mut buf).map_err(err)?;
            if n == 0 {
                break;
            }
            lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
        }
        seen.found = Some((lines, byte));
    }
    seen.error(path).map_or(Ok(()), Err)
}
