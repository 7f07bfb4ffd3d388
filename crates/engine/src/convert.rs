//! `lemma-eval convert`: TREC or JSONL predictions (and their actual sets) into a binary store.
//!
//! Each goal is ordered once, here, by the same rules `eval` applies (METRICS.md §2: score
//! descending, ties by name descending; or file order), cut by `--depth` and stripped of repeated
//! lemmas; the store then holds the final ranking as lemma ids, so evaluating it needs no parsing,
//! no sorting and no hashing. Lemma ids: the actual sets' lemmas first (in their order), then every
//! other predicted lemma as it first appears.

use crate::ranking::{line_at, Item, Ranked, RankingBuilder};
use crate::{EvalError, OrderMode, RankingOptions};
use lemma_accum::Label;
use lemma_ingest::{
    parse_prediction_line, parse_run_at, show, ActualSets, BatchReader, ErrorKind, Format, GoalKey,
    Input, InputError, Interner, StoreWriter,
};
use std::path::Path;

/// What was converted.
#[derive(Clone, Debug, Default)]
pub struct ConvertReport {
    /// Goals with predictions.
    pub goals: u64,
    /// Lemmas stored.
    pub entries: u64,
    /// Repeated lemmas dropped.
    pub duplicates_dropped: u64,
    /// Distinct lemmas.
    pub lemmas: u64,
}

/// The store's side of a ranking: lemma ids (interned as they are first ranked) and scores.
struct StoreFeed {
    lemmas: Interner,
    ids: Vec<u32>,
    scores: Vec<f32>,
}

impl Ranked for StoreFeed {
    fn ranked(&mut self, data: &[u8], it: &Item) {
        self.ids.push(self.lemmas.intern(it.name(data)));
        self.scores.push(it.score as f32);
    }
}

/// The goal being read: its name and first line (file-wide).
struct Open {
    name: Vec<u8>,
    line: u64,
}

/// Converts `input` (with `actual`) into a store at `out`.
pub fn convert(
    actual: &ActualSets,
    input: Input,
    opts: &RankingOptions,
    out: &Path,
) -> Result<ConvertReport, EvalError> {
    let path = input.path.clone();
    let format = input.format;
    let order = opts.order_for(format);
    let io = |e: std::io::Error| {
        EvalError::Input(InputError::file(
            ErrorKind::Io,
            out,
            format!("cannot write: {e}"),
        ))
    };
    let mut writer = StoreWriter::create(out, true).map_err(io)?;
    let feed = StoreFeed {
        lemmas: actual.lemmas.clone(),
        ids: Vec::new(),
        scores: Vec::new(),
    };
    let mut ranking = RankingBuilder::new(opts, order, feed);
    let mut seen_goals: hashbrown::HashMap<Vec<u8>, u64> = hashbrown::HashMap::new();
    let mut has_truth = vec![false; actual.goals.len()];
    let mut report = ConvertReport::default();
    // Ends a goal whose items are collected in `ranking` (names in `data`); `line_of` turns a
    // repeated lemma's name position into its line.
    let mut finish_goal = |goal: Open,
                           data: &[u8],
                           line_of: &dyn Fn(usize) -> u64,
                           ranking: &mut RankingBuilder<StoreFeed>,
                           writer: &mut StoreWriter|
     -> Result<(), EvalError> {
        if let Some(&first) = seen_goals.get(&goal.name) {
            return Err(EvalError::Input(InputError {
                kind: ErrorKind::GoalNotContiguous,
                path: path.clone(),
                line: Some(goal.line),
                byte: None,
                first_line: None,
                message: format!(
                    "goal `{}` appears again; its lines began at line {first}. convert needs each goal's lines together",
                    show(&goal.name)
                ),
            }));
        }
        seen_goals.insert(goal.name.clone(), goal.line);
        if let Err(d) = ranking.finish(data) {
            return Err(EvalError::Input(InputError {
                kind: ErrorKind::Duplicate,
                path: path.clone(),
                line: Some(line_of(d.second)),
                byte: None,
                first_line: Some(line_of(d.first)).filter(|&l| l != line_of(d.second)),
                message: format!(
                    "lemma `{}` appears twice in goal `{}`",
                    show(&data[d.second..d.end]),
                    show(&goal.name)
                ),
            }));
        }
        let truth = actual.goal(&goal.name).map(|(gid, t)| {
            has_truth[gid as usize] = true;
            t.judged
                .iter()
                .map(|id| (id, t.grade(id).expect("judged")))
                .collect::<Vec<_>>()
        });
        let feed = ranking.consumer();
        writer
            .add_goal(
                &goal.name,
                Some((&feed.ids, Some(&feed.scores))),
                truth.as_deref(),
            )
            .map_err(io)?;
        report.goals += 1;
        report.entries += feed.ids.len() as u64;
        feed.ids.clear();
        feed.scores.clear();
        ranking.reset();
        Ok(())
    };
    let item = |data: &[u8], name: &[u8], score: f64, line: u64, at: usize| {
        let start = name.as_ptr() as usize - data.as_ptr() as usize;
        let len = u32::try_from(name.len()).map_err(|_| {
            InputError::at(
                ErrorKind::Syntax,
                &path,
                line,
                at as u64,
                "expected a lemma name shorter than 4 GiB",
            )
        })?;
        Ok::<_, InputError>(Item {
            score,
            hash: lemma_ingest::bytes::name_hash(name),
            start,
            len,
            label: Label::UNJUDGED,
        })
    };
    let key = if format == Format::Trec {
        GoalKey::FirstField
    } else {
        GoalKey::Line
    };
    let mut reader = BatchReader::new(input, key, 4 << 20);
    let mut line_base = 0u64;
    let mut names: Vec<u8> = Vec::new();
    while let Some(batch) = reader.next_batch(Vec::new())? {
        let data = &batch.data[..];
        let (mut pos, mut line) = (0usize, line_base);
        // Batches hold whole goals: a TREC goal opens and closes within one.
        let mut cur: Option<Open> = None;
        let base = line_base;
        let batch_line = |at: usize| base + line_at(data, at);
        while pos < data.len() {
            line += 1;
            let here = pos;
            match format {
                Format::Trec => {
                    let (parsed, end) = parse_run_at(data, pos);
                    pos = end + 1;
                    let rl = parsed.map_err(|m| {
                        InputError::at(ErrorKind::Syntax, &path, line, here as u64, m)
                    })?;
                    let Some(rl) = rl else { continue };
                    if cur.as_ref().is_none_or(|c| c.name != rl.goal) {
                        if let Some(g) = cur.take() {
                            finish_goal(g, data, &batch_line, &mut ranking, &mut writer)?;
                        }
                        cur = Some(Open {
                            name: rl.goal.to_vec(),
                            line,
                        });
                    }
                    ranking.collect(item(data, rl.lemma, rl.score, line, here)?);
                }
                Format::Jsonl => {
                    let end = memchr::memchr(b'\n', &data[pos..]).map_or(data.len(), |e| pos + e);
                    pos = end + 1;
                    let text = std::str::from_utf8(&data[here..end])
                        .map_err(|_| {
                            InputError::at(
                                ErrorKind::Syntax,
                                &path,
                                line,
                                here as u64,
                                "invalid UTF-8",
                            )
                        })?
                        .trim();
                    if text.is_empty() || text.starts_with('#') {
                        continue;
                    }
                    let p = parse_prediction_line(text).map_err(|m| {
                        InputError::at(ErrorKind::Syntax, &path, line, here as u64, m)
                    })?;
                    if order == OrderMode::Score && p.scores.is_none() {
                        return Err(InputError::at(
                            ErrorKind::Syntax,
                            &path,
                            line,
                            here as u64,
                            "--order score needs `scores`",
                        )
                        .into());
                    }
                    // The record's names, one a line: the bytes the items point into.
                    names.clear();
                    let mut spans = Vec::with_capacity(p.lemmas.len());
                    for n in &p.lemmas {
                        let start = names.len();
                        names.extend_from_slice(n.as_bytes());
                        names.push(b'\n');
                        spans.push((start, n.len()));
                    }
                    for (i, &(start, len)) in spans.iter().enumerate() {
                        let score = p.scores.as_ref().map_or(0.0, |s| s[i]);
                        let name = &names[start..start + len];
                        ranking.collect(item(&names, name, score, line, here)?);
                    }
                    let goal = Open {
                        name: p.goal.as_bytes().to_vec(),
                        line,
                    };
                    finish_goal(goal, &names, &|_| line, &mut ranking, &mut writer)?;
                }
            }
        }
        if let Some(g) = cur.take() {
            finish_goal(g, data, &batch_line, &mut ranking, &mut writer)?;
        }
        line_base = line;
    }
    report.duplicates_dropped = ranking.stats().duplicates_dropped;
    let lemmas = std::mem::replace(&mut ranking.consumer().lemmas, Interner::new());
    // Goals with an actual set and no predictions.
    for (gid, &done) in has_truth.iter().enumerate() {
        if !done {
            let t = &actual.truths[gid];
            let judged: Vec<(u32, i32)> = t
                .judged
                .iter()
                .map(|id| (id, t.grade(id).expect("judged")))
                .collect();
            writer
                .add_goal(actual.goals.name(gid as u32), None, Some(&judged))
                .map_err(io)?;
        }
    }
    report.lemmas = lemmas.len() as u64;
    writer.finish(&lemmas).map_err(io)?;
    Ok(report)
}
