//! A worker: one batch of whole goals at a time, line by line (TREC) or record by record (JSONL),
//! through the order check, the depth cut, duplicate removal and the accumulator.

use super::{BatchResult, GoalRef};
use crate::feed::{relevant_names, AccFeed, Judged};
use crate::options::{EvalOptions, OrderMode};
use crate::outcome::{record_goal, truth_of, EvalError};
use crate::premise::GoalMask;
use crate::ranking::{line_at, Dup, Item, RankStats, RankingBuilder};
use crate::seen::SeenSet;
use lemma_accum::{GoalAccumulator, GoalFate, Label, Plan, Summary, Truth};
use lemma_ingest::{
    bytes::same_bytes, parse_prediction_general, parse_score, scan_prediction, score_error, show,
    split_run_at, ActualSets, Batch, ErrorKind, Format, GoalTruth, InputError, Prediction,
    RecordSpans, RunLineVisitor, ScoreText, Span, Step, VisitedLine,
};
use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The goal whose lines a TREC batch is reading.
struct OpenGoal<'a> {
    /// Where the goal id is in the batch.
    name: (usize, usize),
    /// Its first line (batch-local) and that line's offset, to re-read it if it is out of order.
    first_line: u64,
    first_pos: usize,
    state: GoalState<'a>,
    /// Being re-read to be sorted whole.
    reread: bool,
}

/// Per-goal state while its lines stream by.
enum GoalState<'a> {
    /// Evaluated: truth known.
    Eval { truth: GoalTruth<'a> },
    /// Lines validated but not evaluated.
    Skip,
}

pub(crate) struct Worker<'a> {
    actual: &'a ActualSets,
    opts: &'a EvalOptions,
    /// Order, depth, duplicates; the accumulator at the end.
    ranking: RankingBuilder<AccFeed>,
    summary: Summary,
    want_rows: bool,
    /// The current goal's judged lemmas.
    judged: Judged,
    /// A JSONL record's lemma names, each followed by a newline: the bytes its items point into
    /// (reused).
    names: Vec<u8>,
    /// A JSONL record's places (reused).
    spans: RecordSpans,
    /// Ranking counts when the current goal began (restored if the goal is re-read).
    goal_stats: RankStats,
    /// The current goal's previous score.
    last_score: LastScore,
    /// The last goal found in the actual sets (the next is looked for after it first).
    last_goal: Option<u32>,
}

/// The previous score of the goal being read, to order the next one against: as text while the
/// scores keep one shape ([`ScoreText`]: no parsing), else as a parsed value.
struct LastScore {
    /// The goal's previous score.
    last: Last,
    /// Round parsed scores to f32 (trec_eval 9.0.8).
    f32_scores: bool,
    /// Whether scores may be compared as text: not when they are rounded to f32 first (the text
    /// order is the f64 order), nor when a measure needs their values.
    text_allowed: bool,
}

/// A goal's previous score: none yet, its text (a comparable shape, which also gives its value),
/// or its parsed value.
enum Last {
    None,
    Text(ScoreText),
    Value(f64),
}

impl LastScore {
    fn new(opts: &EvalOptions, plan: &Plan) -> Self {
        LastScore {
            last: Last::None,
            f32_scores: opts.f32_scores,
            text_allowed: !opts.f32_scores && !plan.needs_scores(),
        }
    }

    /// A parsed score as the options round it.
    #[inline(always)]
    fn round(&self, v: f64) -> f64 {
        if self.f32_scores {
            v as f32 as f64
        } else {
            v
        }
    }

    /// Forgets the previous score (a new goal).
    fn clear(&mut self) {
        self.last = Last::None;
    }

    /// The score in `field` (at `at` in `data`) and its order against the previous one (`Equal`
    /// for a goal's first). The value is NaN when the score was only compared as text. `None`:
    /// not a finite number.
    #[inline(always)]
    fn next(&mut self, data: &[u8], at: usize, field: &[u8]) -> Option<(f64, Ordering)> {
        if let Last::Text(t) = &mut self.last {
            if let Some(order) = t.advance(data, at, field.len()) {
                return Some((f64::NAN, order));
            }
        }
        let v = self.round(parse_score(field)?);
        let last = match &self.last {
            Last::None => None,
            Last::Text(t) => Some(t.value()),
            Last::Value(l) => Some(*l),
        };
        let order = last.map_or(Ordering::Equal, |l| {
            v.partial_cmp(&l).unwrap_or(Ordering::Equal)
        });
        self.last = match self.text_allowed.then(|| ScoreText::new(field)).flatten() {
            Some(t) => Last::Text(t),
            None => Last::Value(v),
        };
        Some((v, order))
    }
}

impl<'a> Worker<'a> {
    pub(crate) fn new(
        actual: &'a ActualSets,
        opts: &'a EvalOptions,
        plan: &Arc<Plan>,
        order: OrderMode,
        want_rows: bool,
    ) -> Self {
        Worker {
            actual,
            opts,
            ranking: RankingBuilder::new(
                &opts.ranking,
                order,
                AccFeed {
                    acc: GoalAccumulator::new(plan.clone()),
                    scored: plan.needs_scores(),
                    mask: opts
                        .premises
                        .as_ref()
                        .map(|p| Box::new(GoalMask::new(p.clone(), plan, opts.ranking.depth))),
                },
            ),
            summary: Summary::new(plan),
            want_rows,
            judged: Judged::default(),
            names: Vec::new(),
            spans: RecordSpans::default(),
            goal_stats: RankStats::default(),
            last_score: LastScore::new(opts, plan),
            last_goal: None,
        }
    }

    /// Starts a goal: decides whether it is evaluated, and records it for the collector. An
    /// error from the premise protocol (a goal without a place, `--strict`, `--strict-gold`).
    fn begin_goal(
        &mut self,
        goal: &[u8],
        line: u64,
        res: &mut BatchResult,
    ) -> Result<GoalState<'a>, EvalError> {
        self.reset_goal();
        self.goal_stats = *self.ranking.stats();
        Ok(match self.actual.goal_after(self.last_goal, goal) {
            None => {
                res.goals.push((GoalRef::Unknown(goal.to_vec()), line));
                self.summary.skip(GoalFate::SkippedNoActual);
                GoalState::Skip
            }
            Some((gid, truth)) => {
                self.last_goal = Some(gid);
                self.actual.prefetch_after(gid);
                res.goals.push((GoalRef::Known(gid), line));
                let t = self.truth(truth);
                if self.opts.skips_no_relevant(&t) {
                    self.summary.skip(GoalFate::SkippedNoRelevant);
                    return Ok(GoalState::Skip);
                }
                self.judged.set(truth, &self.actual.lemmas);
                let relevant =
                    relevant_names(truth, &self.actual.lemmas, self.opts.relevance_level);
                (self.ranking.consumer()).begin_goal(
                    goal,
                    line,
                    relevant,
                    t,
                    &mut res.stats.premises,
                )?;
                GoalState::Eval { truth }
            }
        })
    }

    /// Ends the premise mask's goal (`data`: the bytes its names lie in).
    fn end_mask(
        &mut self,
        goal: &[u8],
        data: &[u8],
        line: impl Fn(usize) -> u64,
        res: &mut BatchResult,
    ) -> Result<(), EvalError> {
        match &mut self.ranking.consumer().mask {
            Some(mask) => mask.end(goal, data, line, &mut res.stats.premises),
            None => Ok(()),
        }
    }

    /// Empties the per-goal state: a new goal, or a goal read again from its first line.
    fn reset_goal(&mut self) {
        self.ranking.reset();
        self.last_score.clear();
    }

    fn truth<'t>(&self, truth: GoalTruth<'t>) -> Truth<'t> {
        truth_of(truth, self.opts.universe)
    }

    /// The label of a lemma of the current goal.
    #[inline]
    fn label(&self, hash: u64, name: &[u8]) -> Label {
        self.judged.label(hash, name)
    }

    /// Ends a goal: flushes ordering, finishes the accumulator, adds to the summary.
    fn end_goal(
        &mut self,
        goal: &[u8],
        data: &[u8],
        res: &mut BatchResult,
    ) -> Result<(), EvalError> {
        self.ranking
            .finish(data)
            .map_err(|d| dup_error(goal, data, &d))?;
        self.end_mask(goal, data, |at| line_at(data, at), res)?;
        self.record(goal, res)
    }

    /// Finishes the accumulator's goal: its values go to the summary, and to a row when asked.
    fn record(&mut self, goal: &[u8], res: &mut BatchResult) -> Result<(), EvalError> {
        let rows = self.want_rows.then_some(&mut res.rows);
        record_goal(
            &mut self.summary,
            rows,
            goal,
            self.ranking.consumer().acc.finish(),
        )
    }

    /// Ends the goal a TREC batch was reading, if it was being evaluated.
    fn close(
        &mut self,
        goal: Option<OpenGoal<'a>>,
        data: &[u8],
        res: &mut BatchResult,
    ) -> Result<(), EvalError> {
        match goal {
            Some(OpenGoal {
                name: (s, e),
                state: GoalState::Eval { .. },
                ..
            }) => self.end_goal(&data[s..e], data, res),
            _ => Ok(()),
        }
    }

    /// Evaluates one batch; its counts (and an error, which stops the goal's evaluation) go to
    /// `res`.
    pub(crate) fn batch(&mut self, format: Format, batch: &Batch, res: &mut BatchResult) {
        let r = match format {
            Format::Trec => self.trec_batch(batch, res),
            Format::Jsonl => self.jsonl_batch(batch, res),
        };
        if let Err(e) = r {
            res.error = Some(e);
        }
        let stats = self.ranking.stats();
        res.stats.items += std::mem::take(&mut stats.items);
        res.stats.duplicates_dropped += std::mem::take(&mut stats.duplicates_dropped);
        res.stats.beyond_depth += std::mem::take(&mut stats.beyond_depth);
        res.stats.premises.masked += std::mem::take(&mut stats.masked);
    }

    /// The summary of every goal this worker evaluated.
    pub(crate) fn into_summary(self) -> Summary {
        self.summary
    }

    /// Exchanges the duplicate table with `other` ([`RankingBuilder::swap_dedup`]).
    pub(crate) fn swap_dedup(&mut self, other: &mut SeenSet) {
        self.ranking.swap_dedup(other);
    }

    /// Evaluates one batch of TREC run lines: parse, group by goal, order, evaluate.
    fn trec_batch(&mut self, batch: &Batch, res: &mut BatchResult) -> Result<(), EvalError> {
        let data = &batch.data[..];
        if data.len() >= SeenSet::MAX_DATA {
            // A batch holds whole goals: this is one goal's lines.
            let msg = "expected a goal's lines to take less than 1 TiB".to_string();
            return Err(InputError::at(ErrorKind::Syntax, Path::new(""), 1, 0, msg).into());
        }
        // UTF-8 is checked line by line by the parser (free for ASCII lines).
        let mut lines = TrecLines {
            w: self,
            data,
            res,
            cur: None,
            last_line: None,
            error: None,
        };
        let line_no = lemma_ingest::visit_run_lines(data, &mut lines);
        let TrecLines {
            cur,
            last_line,
            error,
            ..
        } = lines;
        if let Some(e) = error {
            return Err(e);
        }
        self.close(cur, data, res)?;
        res.lines = line_no;
        res.last_tag = last_line
            .and_then(|at| split_run_at(data, at).0.ok().flatten())
            .map(|rl| rl.tag.to_vec());
        Ok(())
    }

    /// Evaluates one batch of JSONL prediction records (one goal a line).
    fn jsonl_batch(&mut self, batch: &Batch, res: &mut BatchResult) -> Result<(), EvalError> {
        let data = &batch.data[..];
        let path = Path::new("");
        let (mut pos, mut line_no) = (0usize, 0u64);
        // Lines found by memchr's vector search (records are long).
        let ends = memchr::memchr_iter(b'\n', data)
            .map(|e| e + 1)
            .chain((data.last() != Some(&b'\n') && !data.is_empty()).then_some(data.len()));
        let mut from = 0;
        // Scores are read only where something reads them: the order, a threshold, tie groups,
        // the pooled curve (the plan says so for the last three).
        let order = self.opts.ranking.order_for(Format::Jsonl);
        let read_scores =
            order != OrderMode::File || self.ranking.consumer().acc.plan().needs_scores();
        for end in ends {
            // Each line checked as UTF-8 just before it is read, while its bytes are in cache (a
            // `\n` is never inside a character, so the lines of valid text are valid text).
            let here = pos;
            line_no += 1;
            let line = check_utf8(&data[from..end], line_no, here)?;
            from = end;
            pos += line.len();
            let l = line.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let err = |m: String| {
                EvalError::Input(InputError::at(
                    ErrorKind::Syntax,
                    path,
                    line_no,
                    here as u64,
                    m,
                ))
            };
            // The record's names in `self.names`, each followed by a newline: the bytes its items
            // point into (the duplicate table finds a name's end at the delimiter after it). The
            // scanner gives their places in the line; serde (any other record) the names
            // unescaped.
            let mut spans = std::mem::take(&mut self.spans);
            let mut names = std::mem::take(&mut self.names);
            names.clear();
            let parsed;
            let scanned = scan_prediction(l, read_scores, &mut spans);
            let goal = if scanned {
                spans.goal.of(l).as_bytes()
            } else {
                parsed = parse_prediction_general(l, read_scores).map_err(err)?;
                spans_of(&parsed, &mut names, &mut spans).map_err(err)?;
                parsed.goal.as_bytes()
            };
            let state = self.begin_goal(goal, line_no, res).map_err(|e| {
                // The goal's line, with its byte.
                match e {
                    EvalError::Input(mut ie) => {
                        ie.byte = Some(here as u64);
                        EvalError::Input(ie)
                    }
                    e => e,
                }
            })?;
            let GoalState::Eval { .. } = state else {
                self.spans = spans;
                self.names = names;
                continue;
            };
            // Where the names' bytes start in the line (0: serde's names, already one a line):
            // the line's bytes from the first name to the last one's closing quote are copied
            // whole, and each name's closing quote made a newline.
            let names_from = match (scanned, spans.names.first(), spans.names.last()) {
                (true, Some(first), Some(last)) => {
                    let (from, to) = (first.start as usize, (last.start + last.len) as usize);
                    names.extend_from_slice(&l.as_bytes()[from..=to]);
                    for s in &spans.names {
                        names[(s.start + s.len) as usize - from] = b'\n';
                    }
                    from
                }
                _ => 0,
            };
            let base = &names[..];
            let scored = read_scores && spans.scored;
            if !scored && self.ranking.consumer().acc.plan().pooled().is_some() {
                return Err(err(
                    "the pooled curve needs `scores` in every prediction record".into(),
                ));
            }
            if order == OrderMode::Score && !scored {
                return Err(err(
                    "ranking by score (--order score; the trec_eval subcommand) needs `scores` \
                     in every prediction record"
                        .into(),
                ));
            }
            // In file order each item is ranked as it is read; else the record is sorted whole
            // at its end.
            let mut streamed = Ok(true);
            for (i, s) in spans.names.iter().enumerate() {
                let start = s.start as usize - names_from;
                let name = &base[start..start + s.len as usize];
                let hash = self.actual.lemmas.hash(name);
                let score = if scored { spans.scores[i] } else { 0.0 };
                let it = Item {
                    score: self.last_score.round(score),
                    hash,
                    start,
                    len: s.len,
                    label: self.label(hash, name),
                };
                if order == OrderMode::File {
                    streamed = self.ranking.push(base, Ordering::Equal, it);
                    if streamed.is_err() {
                        break;
                    }
                } else {
                    self.ranking.collect(it);
                }
            }
            let ranked = streamed.and_then(|_| self.ranking.finish(base));
            if let Err(d) = ranked {
                return Err(EvalError::Input(InputError {
                    kind: ErrorKind::Duplicate,
                    path: PathBuf::new(),
                    line: Some(line_no),
                    byte: Some(here as u64),
                    first_line: None,
                    message: format!(
                        "lemma `{}` appears twice in goal `{}`",
                        show(&base[d.second..d.end]),
                        show(goal)
                    ),
                }));
            }
            self.end_mask(goal, base, |_| line_no, res)?;
            self.record(goal, res)?;
            self.spans = spans;
            self.names = names;
        }
        res.lines = line_no;
        Ok(())
    }
}

/// A record serde read (names unescaped): its names one a line in `buf`, their places there in
/// `spans.names`, its scores.
fn spans_of(p: &Prediction<'_>, buf: &mut Vec<u8>, spans: &mut RecordSpans) -> Result<(), String> {
    spans.names.clear();
    for n in &p.lemmas {
        let too_long = |_| "expected a prediction record shorter than 4 GiB";
        let span = Span {
            start: u32::try_from(buf.len()).map_err(too_long)?,
            len: u32::try_from(n.len()).map_err(too_long)?,
        };
        u32::try_from(buf.len() + n.len() + 1).map_err(too_long)?;
        spans.names.push(span);
        buf.extend_from_slice(n.as_bytes());
        buf.push(b'\n');
    }
    spans.scores.clear();
    spans.scores.extend(p.scores.iter().flatten());
    spans.scored = p.scores.is_some();
    Ok(())
}

/// A TREC batch's line loop, as the ingest crate's line visitor: one goal open at a time.
struct TrecLines<'w, 'a, 'd> {
    w: &'w mut Worker<'a>,
    /// The batch's bytes.
    data: &'d [u8],
    res: &'w mut BatchResult,
    /// The goal being read.
    cur: Option<OpenGoal<'a>>,
    /// Where the last run line starts: its tag (the run's name) is read again at the end.
    last_line: Option<usize>,
    /// What stopped the loop.
    error: Option<EvalError>,
}

impl TrecLines<'_, '_, '_> {
    #[cold]
    fn stop(&mut self, e: EvalError) -> Step {
        // A deep goal's items held back are on earlier lines: a repeat among them comes first.
        let e = match (&self.cur, self.w.ranking.drain_held(self.data)) {
            (Some(c), Err(d)) => dup_error(&self.data[c.name.0..c.name.1], self.data, &d),
            _ => e,
        };
        self.error = Some(e);
        Step::Stop
    }
}

impl<'d> RunLineVisitor<'d> for TrecLines<'_, '_, 'd> {
    #[inline(always)]
    fn line(&mut self, l: VisitedLine<'d>) -> Step {
        let data = self.data;
        let path = Path::new("");
        let (pos, line_no) = (l.start, l.line);
        let rl = match l.fields {
            Err(msg) => {
                let e = InputError::at(ErrorKind::Syntax, path, line_no, pos as u64, msg);
                return self.stop(e.into());
            }
            Ok(None) => return Step::Next,
            Ok(Some(rl)) => rl,
        };
        self.last_line = Some(pos);
        let same = match &self.cur {
            Some(c) => same_bytes(&data[c.name.0..c.name.1], rl.goal),
            None => false,
        };
        if !same {
            if let Err(e) = self.w.close(self.cur.take(), data, self.res) {
                return self.stop(e);
            }
            let state = match self.w.begin_goal(rl.goal, line_no, self.res) {
                Ok(s) => s,
                Err(e) => return self.stop(e),
            };
            let goal_start = rl.goal.as_ptr() as usize - data.as_ptr() as usize;
            self.cur = Some(OpenGoal {
                name: (goal_start, goal_start + rl.goal.len()),
                first_line: line_no,
                first_pos: pos,
                state,
                reread: false,
            });
        }
        let w = &mut *self.w;
        let c = self.cur.as_mut().expect("a goal is open");
        let syntax = |line_no| {
            let msg = score_error(rl.score);
            EvalError::from(InputError::at(
                ErrorKind::Syntax,
                path,
                line_no,
                pos as u64,
                msg,
            ))
        };
        let GoalState::Eval { truth } = c.state else {
            // Not evaluated, but the line must still be valid.
            if parse_score(rl.score).is_none() {
                let e = syntax(line_no);
                return self.stop(e);
            }
            return Step::Next;
        };
        // The score, and how it orders against the previous line's (re-read goals are sorted
        // whole, with parsed scores).
        let scored = if c.reread {
            parse_score(rl.score).map(|v| (w.last_score.round(v), Ordering::Equal))
        } else {
            let at = rl.score.as_ptr() as usize - data.as_ptr() as usize;
            w.last_score.next(data, at, rl.score)
        };
        let Some((score, vs_last)) = scored else {
            let e = syntax(line_no);
            return self.stop(e);
        };
        let start = rl.lemma.as_ptr() as usize - data.as_ptr() as usize;
        let Ok(len) = u32::try_from(rl.lemma.len()) else {
            let msg = "expected a lemma name shorter than 4 GiB".to_string();
            let e = InputError::at(ErrorKind::Syntax, path, line_no, pos as u64, msg);
            return self.stop(e.into());
        };
        let hash = w.actual.lemmas.hash(rl.lemma);
        w.ranking.prefetch(hash);
        let label = w.label(hash, rl.lemma);
        let it = Item {
            score,
            hash,
            start,
            len,
            label,
        };
        // `Ok(false)`: out of order.
        let fed = if c.reread {
            // Re-reading an out-of-order goal: collect, sort at its end.
            w.ranking.collect(it);
            Ok(true)
        } else {
            w.ranking.push(data, vs_last, it)
        };
        match fed {
            Ok(true) => Step::Next,
            Ok(false) => {
                // Out of order: restart this goal from its first line and sort it whole.
                self.res.stats.goals_reordered += 1;
                *w.ranking.stats() = w.goal_stats;
                w.reset_goal();
                let t = w.truth(truth);
                w.ranking.consumer().restart_goal(t);
                c.reread = true;
                Step::Restart {
                    at: c.first_pos,
                    line: c.first_line,
                }
            }
            Err(d) => {
                // The first repeat (the items still held back come after it).
                self.error = Some(dup_error(&data[c.name.0..c.name.1], data, &d));
                Step::Stop
            }
        }
    }
}

/// The error for a repeated lemma under `--duplicates error`, with both lines (batch-local).
fn dup_error(goal: &[u8], data: &[u8], d: &Dup) -> EvalError {
    EvalError::Input(InputError {
        kind: ErrorKind::Duplicate,
        path: PathBuf::new(),
        line: Some(line_at(data, d.second)),
        byte: None,
        first_line: Some(line_at(data, d.first)),
        message: format!(
            "lemma `{}` appears twice in goal `{}`",
            show(&data[d.second..d.end]),
            show(goal)
        ),
    })
}

/// A JSONL line (number `line_no` of its batch, starting at byte `start`) as text; the error
/// names the line and the column.
fn check_utf8(line: &[u8], line_no: u64, start: usize) -> Result<&str, InputError> {
    std::str::from_utf8(line).map_err(|e| {
        InputError::at(
            ErrorKind::Syntax,
            Path::new(""),
            line_no,
            start as u64,
            format!(
                "invalid UTF-8 at column {}, expected UTF-8 text",
                e.valid_up_to() + 1
            ),
        )
    })
}
