//! trec_eval's preference files (`-R prefs`, `-R qrels_prefs`; METRICS.md §8.5): the judgments
//! read by [`lemma_ingest::parse_prefs_line`], the run's goals ranked, each judged lemma given its
//! place, and the measures of [`lemma_accum::prefs`] computed goal by goal.
//!
//! Both files are read whole and grouped by goal in byte order ([`GoalLines`]: in memory within
//! half of `--memory`, else in unnamed temporary files) and every line checked before any goal is
//! evaluated; then the goals are taken in order, one at a time: a goal's judgment lines and
//! ranked lemmas, its lemmas' places, and the counts of [`PrefsCounter`] (the pair counts, `2 · J²`
//! bytes for `J` judged lemmas, only when a `prefs_pair*` measure is asked for) are all that is
//! held of it. A goal's ranking is trec_eval's for preference files: score descending, ties by
//! name *ascending* (its qrels' order breaks them descending), cut at `-M`; a lemma twice in the
//! cut ranking is an error (exit 4). The `-q` lines are kept (in memory within half of
//! `--memory`, then in an unnamed temporary file) until every goal is evaluated, so that an error
//! leaves the output untouched.

use crate::trec::{RelFormat, TrecError, TrecOptions, TrecVersion};
use crate::{Evaluation, Report};
use lemma_accum::prefs::{GoalPrefs, Pref, PrefsCounter, PrefsError, PrefsMeasure, PrefsSelection};
use lemma_accum::{GoalCounts, Summary, SummaryState, TrecRules};
use lemma_ingest::{
    parse_prefs_line, parse_run_line, ErrorKind, Format, GoalLines, InputError, PrefsFormat,
};
use std::io::{self, Read, Seek, Write};
use std::path::Path;

/// What hears each evaluated goal of [`evaluate_prefs`]: its name, whether it had no ranking
/// (`-c`), its values.
pub type GoalVisit<'a> = dyn FnMut(&[u8], bool, &[f64]) -> io::Result<()> + 'a;

/// What an evaluation of a preference file gives besides each goal's values
/// ([`evaluate_prefs`]).
#[derive(Debug)]
#[non_exhaustive]
pub struct PrefsOutcome {
    /// What `-m` asked for: `runid`, `num_q`, and the measures the values are of, in order.
    pub selection: PrefsSelection,
    /// The summary value of each measure (trec_eval's arithmetic: the goals' values added in
    /// byte order of the goals, counts summed, the others divided by [`PrefsOutcome::num_q`]);
    /// z-scores under `-Z`.
    pub summary: Vec<f64>,
    /// `num_q`: the goals evaluated, or under `-c` every goal of the preference file.
    pub num_q: u64,
    /// `runid`: the tag of the run's last line.
    pub runid: String,
    /// The goal counts and what reading the run did.
    pub evaluation: Evaluation,
}

/// Evaluates `run` against the preference file `qrels` under `o` (`o.rel_format` `prefs` or
/// `qrels_prefs`), as trec_eval 10.0 (or 9.0.8) does: `visit` hears each evaluated goal, in byte
/// order of the goals, with whether it had no predictions (`-c`) and its values in the order of
/// the selection's measures (z-scores under `-Z`). Exit codes as trec_eval's: 1 and 2 for `-m`,
/// 2 for the inputs, 4 for judgments or a ranking that cannot be counted, or a measure that reads
/// qrels, 7 when no goal has both judgments and a ranking.
pub fn evaluate_prefs(
    qrels: &Path,
    run: &Path,
    o: &TrecOptions,
    visit: &mut GoalVisit<'_>,
) -> Result<PrefsOutcome, TrecError> {
    evaluate_with(select(o)?, qrels, run, o, visit)
}

/// What `o.measures` asks of a preference file.
fn select(o: &TrecOptions) -> Result<PrefsSelection, TrecError> {
    let rules = match o.version {
        TrecVersion::V10 => TrecRules::V10,
        TrecVersion::V9 => TrecRules::V9,
    };
    lemma_accum::prefs::resolve_prefs(&o.measures, rules).map_err(|e| TrecError {
        code: e.code as u8,
        message: e.message,
    })
}

/// [`evaluate_prefs`] of the measures `sel`.
fn evaluate_with(
    sel: PrefsSelection,
    qrels: &Path,
    run: &Path,
    o: &TrecOptions,
    visit: &mut GoalVisit<'_>,
) -> Result<PrefsOutcome, TrecError> {
    let started = std::time::Instant::now();
    let format = match o.rel_format {
        RelFormat::Prefs => PrefsFormat::Prefs,
        RelFormat::QrelsPrefs => PrefsFormat::QrelsPrefs,
        f => {
            return Err(TrecError {
                code: 2,
                message: format!("-R {}: not a preference format", f.name()),
            })
        }
    };
    let v10 = o.version == TrecVersion::V10;
    if qrels == Path::new("-") && run == Path::new("-") {
        return Err(TrecError {
            code: 2,
            message: "only one of QRELS and RUN can be - (stdin)".into(),
        });
    }
    let zscores = match &o.zscores {
        Some(path) => Some(lemma_ingest::ZScores::read(path)?),
        None => None,
    };
    let what = format!("-R {} judgments", format.name());
    let mut prefs = grouped(qrels, o, &what)?;
    prefs.check(|l| parse_prefs_line(l, format).map(|_| ()))?;
    if prefs.goals() == 0 {
        return Err(InputError::file(
            ErrorKind::Empty,
            qrels,
            "has no judgments, expected at least one line",
        )
        .into());
    }
    let mut runs = grouped(
        run,
        o,
        "a run under -R prefs or -R qrels_prefs (TREC lines)",
    )?;
    runs.check(|l| parse_run_line(l).map(|_| ()))?;
    let runid = match parse_run_line(runs.last_line()) {
        Ok(Some(l)) => String::from_utf8_lossy(l.tag).into_owned(),
        _ => String::new(),
    };

    let names: Vec<&str> = sel.measures.iter().map(|m| m.name()).collect();
    let mut goal = GoalState::new(&sel.measures);
    let mut sums = vec![0.0; sel.measures.len()];
    let mut values = Vec::with_capacity(sel.measures.len());
    let mut counts = GoalCounts::default();
    let mut ranking = RunGoal::default();
    let mut have_run = next_run_goal(&mut runs, &mut ranking);
    while let Some(block) = prefs.next_goal() {
        while have_run && ranking.goal.as_slice() < block.goal {
            counts.skipped_no_actual += 1;
            have_run = next_run_goal(&mut runs, &mut ranking);
        }
        let ranked = have_run && ranking.goal.as_slice() == block.goal;
        // 9.0.8 evaluates no goal without a ranking, even under -c.
        if !(ranked || o.complete && v10) {
            counts.skipped_no_predictions += 1;
            continue;
        }
        if let Some(m) = &sel.reads_qrels {
            return Err(TrecError {
                code: 4,
                message: format!(
                    "trec_eval measure `{m}` reads qrels, not -R {} judgments (trec_eval: \
                     \"Can't calculate measure\")",
                    format.name()
                ),
            });
        }
        let empty: &[RunEntry] = &[];
        let entries = if ranked { &ranking.entries[..] } else { empty };
        values.clear();
        if !sel.measures.is_empty() {
            let g = goal.count(
                block.goal,
                block.lines(),
                format,
                entries,
                &ranking.text,
                o,
                (qrels, run),
            )?;
            values.extend(sel.measures.iter().map(|m| m.value(g)));
        }
        if let Some(z) = &zscores {
            let reference = z.goal(block.goal);
            for (v, name) in values.iter_mut().zip(&names) {
                let r = reference.and_then(|r| r.get(*name)).copied();
                *v = lemma_accum::zscore(*v, r);
            }
        }
        for (s, v) in sums.iter_mut().zip(&values) {
            *s += v;
        }
        counts.evaluated += 1;
        counts.evaluated_empty += u64::from(!ranked);
        visit(block.goal, !ranked, &values).map_err(|e| TrecError {
            code: 2,
            message: e.to_string(),
        })?;
        if ranked {
            have_run = next_run_goal(&mut runs, &mut ranking);
        }
    }
    while have_run {
        counts.skipped_no_actual += 1;
        have_run = next_run_goal(&mut runs, &mut ranking);
    }
    let in_both = counts.evaluated - counts.evaluated_empty;
    if in_both == 0 && (counts.evaluated == 0 || !v10) {
        return Err(TrecError {
            code: 7,
            message: "no goals with both predictions and relevance judgments".into(),
        });
    }
    let num_q = if o.complete {
        prefs.goals()
    } else {
        counts.evaluated
    };
    let summary = (sums.iter().zip(&sel.measures))
        .map(|(&s, m)| if m.is_count() { s } else { s / num_q as f64 })
        .collect();
    let report = Report {
        path: run.to_path_buf(),
        lines: runs.report().lines,
        bytes: runs.report().bytes,
        goals_in_predictions: runs.goals(),
        spill: None,
        runid: runid.clone().into_bytes(),
        elapsed: started.elapsed(),
        threads: 1,
        ..Report::default()
    };
    let summary_state = Summary::from_state(SummaryState {
        measures: Vec::new(),
        sums: Vec::new(),
        reached: Vec::new(),
        depths: Vec::new(),
        counts,
    })
    .expect("consistent counts");
    Ok(PrefsOutcome {
        selection: sel,
        summary,
        num_q,
        runid,
        evaluation: Evaluation {
            summary: summary_state,
            report,
        },
    })
}

/// A file read whole and grouped by goal; under 9.0.8's rules a `#` line is refused, as for
/// qrels. `what` says what the file should hold when it is JSON.
fn grouped(path: &Path, o: &TrecOptions, what: &str) -> Result<GoalLines, TrecError> {
    let mut input = lemma_ingest::open_with(path, false)?;
    if input.format == Format::Jsonl {
        return Err(InputError::file(
            ErrorKind::Syntax,
            path,
            format!("is JSON lines, expected {what}"),
        )
        .into());
    }
    let check = match o.version {
        TrecVersion::V9 => crate::trec::watch_hash_lines(&mut input)?,
        TrecVersion::V10 => Box::new(|| Ok(())),
    };
    let lines = GoalLines::read(path, &mut input.reader, &o.spill)?;
    check()?;
    Ok(lines)
}

/// One ranked lemma of the run: its name (a range of the goal's text), score and line.
#[derive(Clone, Debug)]
struct RunEntry {
    name: std::ops::Range<usize>,
    score: f64,
    line: u64,
}

/// One goal of the run, copied out of the grouped lines.
#[derive(Default)]
struct RunGoal {
    goal: Vec<u8>,
    text: Vec<u8>,
    entries: Vec<RunEntry>,
}

/// Reads the run's next goal into `into`; false after the last.
fn next_run_goal(runs: &mut GoalLines, into: &mut RunGoal) -> bool {
    let Some(block) = runs.next_goal() else {
        return false;
    };
    into.goal.clear();
    into.goal.extend_from_slice(block.goal);
    into.text.clear();
    into.entries.clear();
    for (line, no) in block.lines() {
        // Every line was checked ([`GoalLines::check`]).
        if let Ok(Some(l)) = parse_run_line(line) {
            let start = into.text.len();
            into.text.extend_from_slice(l.lemma);
            into.entries.push(RunEntry {
                name: start..into.text.len(),
                score: l.score,
                line: no,
            });
        }
    }
    true
}

/// What is kept from goal to goal: the counter and its buffers.
struct GoalState {
    counter: PrefsCounter,
    pairs: bool,
    order: Vec<usize>,
    names: Vec<(Vec<u8>, u32)>,
}

impl GoalState {
    fn new(measures: &[PrefsMeasure]) -> GoalState {
        GoalState {
            counter: PrefsCounter::new(measures),
            pairs: measures.iter().any(|m| m.reads_pairs()),
            order: Vec::new(),
            names: Vec::new(),
        }
    }

    /// Counts one goal: its judgment lines (each with its line number), its ranked entries
    /// (names in `text`).
    #[allow(clippy::too_many_arguments)]
    fn count<'l>(
        &mut self,
        goal: &[u8],
        lines: impl Iterator<Item = (&'l [u8], u64)>,
        format: PrefsFormat,
        entries: &[RunEntry],
        text: &[u8],
        o: &TrecOptions,
        (qrels, run): (&Path, &Path),
    ) -> Result<&GoalPrefs, TrecError> {
        let v9 = o.version == TrecVersion::V9;
        let round = |x: f64| if v9 { x as f32 as f64 } else { x };
        let name = |e: &RunEntry| &text[e.name.clone()];
        // The ranking: score descending, ties by name ascending; cut at -M.
        self.order.clear();
        self.order.extend(0..entries.len());
        self.order.sort_by(|&a, &b| {
            let (x, y) = (&entries[a], &entries[b]);
            (round(y.score)
                .partial_cmp(&round(x.score))
                .expect("finite scores"))
            .then_with(|| name(x).cmp(name(y)))
        });
        let cut = o
            .max_docs
            .map_or(self.order.len(), |m| self.order.len().min(m as usize));
        self.order.truncate(cut);
        // A lemma twice in the cut ranking: trec_eval's "duplicate docs".
        let mut by_name: Vec<(usize, usize)> = self.order.iter().copied().enumerate().collect();
        by_name.sort_by(|a, b| {
            name(&entries[a.1])
                .cmp(name(&entries[b.1]))
                .then(a.0.cmp(&b.0))
        });
        if let Some(w) = by_name
            .windows(2)
            .find(|w| name(&entries[w[0].1]) == name(&entries[w[1].1]))
        {
            let (first, second) = (&entries[w[0].1], &entries[w[1].1]);
            let e = InputError {
                kind: ErrorKind::Duplicate,
                path: run.to_path_buf(),
                line: Some(second.line),
                byte: None,
                first_line: Some(first.line),
                message: format!(
                    "lemma `{}` appears twice in goal `{}`",
                    String::from_utf8_lossy(name(second)),
                    String::from_utf8_lossy(goal)
                ),
            };
            return Err(TrecError {
                code: 4,
                message: e.to_string(),
            });
        }
        // The judgment lines; the judged lemmas by name, each with its place.
        let lines: Vec<(lemma_ingest::PrefLine<'l>, u64)> = lines
            .filter_map(|(l, no)| parse_prefs_line(l, format).ok().flatten().map(|p| (p, no)))
            .collect();
        self.names.clear();
        self.names
            .extend(lines.iter().map(|(p, _)| (p.lemma.to_vec(), u32::MAX)));
        self.names.sort_unstable();
        self.names.dedup();
        let judged = u32::try_from(self.names.len()).expect("fewer than 2^32 judged lemmas");
        let mut retrieved = 0u32;
        for &i in &self.order {
            let n = name(&entries[i]);
            if let Ok(k) = self.names.binary_search_by(|(x, _)| x.as_slice().cmp(n)) {
                self.names[k].1 = retrieved;
                retrieved += 1;
            }
        }
        let mut next = retrieved;
        for (_, place) in &mut self.names {
            if *place == u32::MAX {
                *place = next;
                next += 1;
            }
        }
        if self.pairs {
            let need = 2 * (judged as u128) * (judged as u128);
            if need > o.spill.memory as u128 {
                return Err(TrecError {
                    code: 2,
                    message: format!(
                        "goal `{}` has {judged} judged lemmas: the prefs_pair measures count \
                         every pair of them, {} bytes, more than --memory ({}); raise --memory",
                        String::from_utf8_lossy(goal),
                        need,
                        o.spill.memory
                    ),
                });
            }
        }
        let place = |lemma: &[u8]| {
            let k = (self
                .names
                .binary_search_by(|(x, _)| x.as_slice().cmp(lemma)))
            .expect("a judged lemma");
            self.names[k].1
        };
        let mut prefs: Vec<Pref<'_>> = (lines.iter())
            .map(|(p, _)| Pref {
                group: p.group,
                subgroup: p.subgroup,
                level: round(p.level),
                doc: place(p.lemma),
            })
            .collect();
        let names = &self.names;
        let lemma_at = |doc: u32| {
            let n = names
                .iter()
                .find(|(_, p)| *p == doc)
                .map_or(&[][..], |(n, _)| n);
            String::from_utf8_lossy(n).into_owned()
        };
        let at = |g: &[u8]| {
            format!(
                "{}: goal `{}`, group `{}`",
                qrels.display(),
                String::from_utf8_lossy(goal),
                String::from_utf8_lossy(g)
            )
        };
        self.counter
            .count(&mut prefs, judged, retrieved)
            .map_err(|e| {
                let message = match e {
                    PrefsError::TwoLevels { group, doc } => format!(
                        "{}: lemma `{}` has two different levels in the group's one subgroup",
                        at(&group),
                        lemma_at(doc)
                    ),
                    PrefsError::ZeroAndPositive { group, doc } => format!(
                        "{}: lemma `{}` has level 0 in one subgroup and a level above 0 in \
                         another",
                        at(&group),
                        lemma_at(doc)
                    ),
                    PrefsError::Conflict { group, a, b } => format!(
                        "{}: lemmas `{}` and `{}` are each preferred to the other (through the \
                         group's subgroups)",
                        at(&group),
                        lemma_at(a),
                        lemma_at(b)
                    ),
                };
                TrecError {
                    code: 4,
                    message: format!("{message} (trec_eval: \"Can't calculate measure\")"),
                }
            })
    }
}

/// `trec_eval -R prefs|qrels_prefs`: writes what trec_eval prints to `out`.
pub(crate) fn run_to(
    qrels: &Path,
    run: &Path,
    o: &TrecOptions,
    out: &mut dyn Write,
) -> Result<Evaluation, TrecError> {
    let z = o.zscores.is_some();
    let mut spool = Spool::new(o);
    let mut line = Vec::new();
    let sel = select(o)?;
    let measures = sel.measures.clone();
    let done = evaluate_with(sel, qrels, run, o, &mut |goal, _empty, values| {
        if !o.per_query {
            return Ok(());
        }
        line.clear();
        for (m, &v) in measures.iter().zip(values) {
            push_line(&mut line, m.name(), goal, v, m.is_count(), z);
        }
        spool.write(&line)
    })?;
    let io = |e: io::Error| TrecError {
        code: 2,
        message: e.to_string(),
    };
    spool.copy_to(out).map_err(io)?;
    if !o.no_summary {
        line.clear();
        let sel = &done.selection;
        if sel.runid {
            line.extend_from_slice(format!("{:<22}\tall\t{}\n", "runid", done.runid).as_bytes());
        }
        if sel.num_q {
            push_line(&mut line, "num_q", b"all", done.num_q as f64, true, z);
        }
        for (m, &v) in sel.measures.iter().zip(&done.summary) {
            push_line(&mut line, m.name(), b"all", v, m.is_count(), z);
        }
        out.write_all(&line).map_err(io)?;
    }
    Ok(done.evaluation)
}

/// One line: trec_eval's `%-22s\t%s\t%ld` for a count, `%6.4f` otherwise; under `-Z` `Z` first
/// and four decimals for all.
fn push_line(out: &mut Vec<u8>, name: &str, goal: &[u8], v: f64, count: bool, z: bool) {
    if z {
        out.push(b'Z');
    }
    crate::output::push_trec_line(out, name, goal, v, count && !z);
}

/// Bytes kept until they can be written: in memory up to half of `--memory`, then in an unnamed
/// temporary file.
struct Spool {
    held: Vec<u8>,
    file: Option<std::fs::File>,
    limit: usize,
    dir: std::path::PathBuf,
}

impl Spool {
    fn new(o: &TrecOptions) -> Spool {
        Spool {
            held: Vec::new(),
            file: None,
            limit: (o.spill.memory / 2).max(64 << 10),
            dir: o.spill.directory(),
        }
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.held.extend_from_slice(bytes);
        if self.held.len() > self.limit {
            let named = |e: io::Error| {
                io::Error::new(
                    e.kind(),
                    format!("temporary file in {} (-q lines): {e}", self.dir.display()),
                )
            };
            if self.file.is_none() {
                self.file = Some(tempfile::tempfile_in(&self.dir).map_err(named)?);
            }
            let f = self.file.as_mut().expect("created");
            f.write_all(&self.held).map_err(named)?;
            self.held.clear();
        }
        Ok(())
    }

    fn copy_to(mut self, out: &mut dyn Write) -> io::Result<()> {
        if let Some(mut f) = self.file.take() {
            f.rewind()?;
            let mut buf = vec![0u8; 1 << 16];
            loop {
                let n = f.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                out.write_all(&buf[..n])?;
            }
        }
        out.write_all(&self.held)
    }
}
