//! `lemma-eval convert`: TREC or JSONL predictions (and their actual sets) into a binary store.
//!
//! Each goal is ordered once, here, by the same rules `eval` applies (METRICS.md §2: score
//! descending, ties by name descending; or file order), cut by `--depth` and stripped of repeated
//! lemmas; the store then holds the final ranking as lemma ids, so evaluating it needs no parsing,
//! no sorting and no hashing. Lemma ids: the actual sets' lemmas first (in their order), then every
//! other predicted lemma as it first appears.

use crate::{DuplicateMode, EvalError, OrderMode, RankingOptions};
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

struct Goal {
    name: Vec<u8>,
    line: u64,
    /// (score, name)
    items: Vec<(f64, Vec<u8>)>,
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
    let mut lemmas: Interner = actual.lemmas.clone();
    let mut seen_goals: hashbrown::HashMap<Vec<u8>, u64> = hashbrown::HashMap::new();
    let mut has_truth = vec![false; actual.goals.len()];
    let mut report = ConvertReport::default();
    let mut finish_goal = |goal: Goal,
                           writer: &mut StoreWriter,
                           lemmas: &mut Interner|
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
        let mut items = goal.items;
        if order == OrderMode::Score {
            // Stable: what the tie rule leaves equal keeps file order. Already-ordered input is one run.
            items.sort_by(|a, b| opts.ties.cmp(a.0, &a.1, b.0, &b.1));
        }
        if let Some(d) = opts.depth {
            items.truncate(d.min(usize::MAX as u64) as usize);
        }
        let mut seen = hashbrown::HashSet::with_capacity(items.len());
        let mut ids = Vec::with_capacity(items.len());
        let mut scores = Vec::with_capacity(items.len());
        for (score, name) in &items {
            if !seen.insert(name.as_slice()) {
                if opts.duplicates == DuplicateMode::Error {
                    return Err(EvalError::Input(InputError::file(
                        ErrorKind::Duplicate,
                        &path,
                        format!(
                            "lemma `{}` appears twice in goal `{}`",
                            show(name),
                            show(&goal.name)
                        ),
                    )));
                }
                report.duplicates_dropped += 1;
                continue;
            }
            ids.push(lemmas.intern(name));
            scores.push(*score as f32);
        }
        let truth = actual.goal(&goal.name).map(|(gid, t)| {
            has_truth[gid as usize] = true;
            t.judged
                .iter()
                .map(|id| (id, t.grade(id).expect("judged")))
                .collect::<Vec<_>>()
        });
        writer
            .add_goal(&goal.name, Some((&ids, Some(&scores))), truth.as_deref())
            .map_err(io)?;
        report.goals += 1;
        report.entries += ids.len() as u64;
        Ok(())
    };
    let key = if format == Format::Trec {
        GoalKey::FirstField
    } else {
        GoalKey::Line
    };
    let mut reader = BatchReader::new(input, key, 4 << 20);
    let mut line_base = 0u64;
    let mut cur: Option<Goal> = None;
    while let Some(batch) = reader.next_batch(Vec::new())? {
        let data = &batch.data[..];
        let (mut pos, mut line) = (0usize, line_base);
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
                            finish_goal(g, &mut writer, &mut lemmas)?;
                        }
                        cur = Some(Goal {
                            name: rl.goal.to_vec(),
                            line,
                            items: Vec::new(),
                        });
                    }
                    cur.as_mut()
                        .expect("open")
                        .items
                        .push((rl.score, rl.lemma.to_vec()));
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
                    let items = p
                        .lemmas
                        .iter()
                        .enumerate()
                        .map(|(i, n)| {
                            (
                                p.scores.as_ref().map_or(0.0, |s| s[i]),
                                n.as_bytes().to_vec(),
                            )
                        })
                        .collect();
                    finish_goal(
                        Goal {
                            name: p.goal.as_bytes().to_vec(),
                            line,
                            items,
                        },
                        &mut writer,
                        &mut lemmas,
                    )?;
                }
            }
        }
        line_base = line;
    }
    if let Some(g) = cur.take() {
        finish_goal(g, &mut writer, &mut lemmas)?;
    }
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
