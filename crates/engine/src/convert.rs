//! `lemma-eval convert`: TREC or JSONL predictions (and their actual sets) into a binary store.
//!
//! Each goal is ordered once, here, by the same rules `eval` applies (METRICS.md §2: score
//! descending, ties by name descending; or file order), cut by `--depth` and stripped of repeated
//! lemmas; the store then holds the final ranking as lemma ids, so evaluating it needs no parsing,
//! no sorting and no hashing. Lemma ids: the actual sets' lemmas first (in their order), then every
//! other predicted lemma as it first appears.

use crate::ranking::{join_names, line_at, Item, Ranked, RankingBuilder};
use crate::{EvalError, OrderMode, RankingOptions, TieMode};
use lemma_accum::Label;
use lemma_ingest::{
    parse_prediction_line, parse_run_at, show, ActualSets, BatchReader, ErrorKind, Format, GoalKey,
    Input, InputError, Interner, StoreRanking, StoreTies, StoreWriter,
};
use std::path::{Path, PathBuf};

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
    /// The goal's last score ranked, as read (`f64`).
    last: Option<f64>,
    /// Two scores ranked one after the other differ as read but not as stored (`f32`): tie
    /// groups read from the store would join them.
    f32_ties: bool,
}

impl Ranked for StoreFeed {
    fn ranked(&mut self, data: &[u8], it: &Item) {
        self.ids.push(self.lemmas.intern(it.name(data)));
        self.scores.push(it.score as f32);
        if let Some(last) = self.last {
            if last != it.score && last as f32 == it.score as f32 {
                self.f32_ties = true;
            }
        }
        self.last = Some(it.score);
    }
}

/// The goal being read: its name and first line (file-wide).
struct Open {
    name: Vec<u8>,
    line: u64,
}

/// A conversion under way: the ranking builder feeding the store, and what was seen.
struct Converter<'a> {
    actual: &'a ActualSets,
    path: PathBuf,
    out: &'a Path,
    order: OrderMode,
    ties: TieMode,
    ranking: RankingBuilder<StoreFeed>,
    writer: StoreWriter,
    /// Each goal converted, and its first line: a goal that comes back is an error.
    seen_goals: hashbrown::HashMap<Vec<u8>, u64>,
    /// Which goals of the actual sets had predictions.
    has_truth: Vec<bool>,
    report: ConvertReport,
    /// A JSONL record's names, one a line (reused).
    names: Vec<u8>,
}

/// Converts `input` (with `actual`) into a store at `out`.
pub fn convert(
    actual: &ActualSets,
    input: Input,
    opts: &RankingOptions,
    out: &Path,
) -> Result<ConvertReport, EvalError> {
    let format = input.format;
    let order = opts.order_for(format);
    let feed = StoreFeed {
        lemmas: actual.lemmas.clone(),
        ids: Vec::new(),
        scores: Vec::new(),
        last: None,
        f32_ties: false,
    };
    let mut c = Converter {
        actual,
        path: input.path.clone(),
        out,
        order,
        ties: opts.ties,
        ranking: RankingBuilder::new(opts, order, feed),
        writer: StoreWriter::create(out, true).map_err(|e| write_error(out, e))?,
        seen_goals: hashbrown::HashMap::new(),
        has_truth: vec![false; actual.goals.len()],
        report: ConvertReport::default(),
        names: Vec::new(),
    };
    let key = if format == Format::Trec {
        GoalKey::FirstField
    } else {
        GoalKey::Line
    };
    let mut reader = BatchReader::new(input, key, 4 << 20);
    let mut line_base = 0u64;
    while let Some(batch) = reader.next_batch(Vec::new())? {
        line_base = match format {
            Format::Trec => c.trec_batch(&batch.data, line_base)?,
            Format::Jsonl => c.jsonl_batch(&batch.data, line_base)?,
        };
    }
    c.finish()
}

/// A store that cannot be written.
fn write_error(out: &Path, e: std::io::Error) -> EvalError {
    EvalError::Input(InputError::file(
        ErrorKind::Io,
        out,
        format!("cannot write: {e}"),
    ))
}

impl Converter<'_> {
    /// A batch of TREC lines (whole goals) whose first line follows `line_base`; returns the
    /// batch's last line number.
    fn trec_batch(&mut self, data: &[u8], line_base: u64) -> Result<u64, EvalError> {
        let (mut pos, mut line) = (0usize, line_base);
        let mut cur: Option<Open> = None;
        let line_of = |at: usize| line_base + line_at(data, at);
        while pos < data.len() {
            line += 1;
            let here = pos;
            let (parsed, end) = parse_run_at(data, pos);
            pos = end + 1;
            let rl = parsed.map_err(|m| self.syntax(line, here, m))?;
            let Some(rl) = rl else { continue };
            if cur.as_ref().is_none_or(|c| c.name != rl.goal) {
                if let Some(g) = cur.take() {
                    self.finish_goal(g, data, &line_of)?;
                }
                cur = Some(Open {
                    name: rl.goal.to_vec(),
                    line,
                });
            }
            let start = rl.lemma.as_ptr() as usize - data.as_ptr() as usize;
            let it = self.item(start, rl.lemma, rl.score, line, here)?;
            self.ranking.collect(it);
        }
        // Batches hold whole goals: a goal opens and closes within one.
        if let Some(g) = cur.take() {
            self.finish_goal(g, data, &line_of)?;
        }
        Ok(line)
    }

    /// A batch of JSONL records (a goal each); returns the batch's last line number.
    fn jsonl_batch(&mut self, data: &[u8], line_base: u64) -> Result<u64, EvalError> {
        let (mut pos, mut line) = (0usize, line_base);
        while pos < data.len() {
            line += 1;
            let here = pos;
            let end = memchr::memchr(b'\n', &data[pos..]).map_or(data.len(), |e| pos + e);
            pos = end + 1;
            let text = std::str::from_utf8(&data[here..end])
                .map_err(|_| self.syntax(line, here, "invalid UTF-8".into()))?
                .trim();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            let p = parse_prediction_line(text).map_err(|m| self.syntax(line, here, m))?;
            if self.order == OrderMode::Score && p.scores.is_none() {
                return Err(self.syntax(line, here, "--order score needs `scores`".into()));
            }
            // The record's names, one a line: the bytes the items point into.
            let mut names = std::mem::take(&mut self.names);
            for (i, (start, name)) in join_names(&mut names, &p.lemmas).enumerate() {
                let score = p.scores.as_ref().map_or(0.0, |s| s[i]);
                let it = self.item(start, name, score, line, here)?;
                self.ranking.collect(it);
            }
            let goal = Open {
                name: p.goal.as_bytes().to_vec(),
                line,
            };
            let done = self.finish_goal(goal, &names, &|_| line);
            self.names = names;
            done?;
        }
        Ok(line)
    }

    fn syntax(&self, line: u64, at: usize, message: String) -> EvalError {
        InputError::at(ErrorKind::Syntax, &self.path, line, at as u64, message).into()
    }

    /// The item of a lemma `name` that starts at `start` in the bytes it is ranked from.
    fn item(
        &self,
        start: usize,
        name: &[u8],
        score: f64,
        line: u64,
        at: usize,
    ) -> Result<Item, EvalError> {
        let len = u32::try_from(name.len()).map_err(|_| {
            self.syntax(line, at, "expected a lemma name shorter than 4 GiB".into())
        })?;
        Ok(Item {
            score,
            hash: lemma_ingest::bytes::name_hash(name),
            start,
            len,
            label: Label::UNJUDGED,
        })
    }

    /// Ends a goal whose items are collected (names in `data`): ranks it and stores it.
    /// `line_of` turns a repeated lemma's position into its line.
    fn finish_goal(
        &mut self,
        goal: Open,
        data: &[u8],
        line_of: &dyn Fn(usize) -> u64,
    ) -> Result<(), EvalError> {
        if let Some(&first) = self.seen_goals.get(&goal.name) {
            return Err(EvalError::Input(InputError {
                kind: ErrorKind::GoalNotContiguous,
                path: self.path.clone(),
                line: Some(goal.line),
                byte: None,
                first_line: None,
                message: format!(
                    "goal `{}` appears again; its lines began at line {first}. convert needs each \
                     goal's lines together",
                    show(&goal.name)
                ),
            }));
        }
        self.seen_goals.insert(goal.name.clone(), goal.line);
        if let Err(d) = self.ranking.finish(data) {
            let (first, second) = (line_of(d.first), line_of(d.second));
            return Err(EvalError::Input(InputError {
                kind: ErrorKind::Duplicate,
                path: self.path.clone(),
                line: Some(second),
                byte: None,
                first_line: Some(first).filter(|&l| l != second),
                message: format!(
                    "lemma `{}` appears twice in goal `{}`",
                    show(&data[d.second..d.end]),
                    show(&goal.name)
                ),
            }));
        }
        let truth = self.actual.goal(&goal.name).map(|(gid, t)| {
            self.has_truth[gid as usize] = true;
            t.entries().collect::<Vec<_>>()
        });
        let feed = self.ranking.consumer();
        self.writer
            .add_goal(
                &goal.name,
                Some((&feed.ids, Some(&feed.scores))),
                truth.as_deref(),
            )
            .map_err(|e| write_error(self.out, e))?;
        self.report.goals += 1;
        self.report.entries += feed.ids.len() as u64;
        feed.ids.clear();
        feed.scores.clear();
        feed.last = None;
        self.ranking.reset();
        Ok(())
    }

    /// Adds the goals with an actual set and no predictions, and writes the tables.
    fn finish(mut self) -> Result<ConvertReport, EvalError> {
        self.report.duplicates_dropped = self.ranking.stats().duplicates_dropped;
        // What an evaluation of the store under other options must know (docs/FORMAT.md).
        let made = StoreRanking {
            ties: match self.ties {
                TieMode::Trec => StoreTies::Trec,
                TieMode::Group => StoreTies::Group,
                TieMode::File => StoreTies::File,
            },
            file_order: self.order == OrderMode::File,
            depth_cut: self.ranking.stats().beyond_depth > 0,
            f32_ties: self.ranking.consumer().f32_ties,
        };
        self.writer.set_ranking(made);
        let lemmas = std::mem::replace(&mut self.ranking.consumer().lemmas, Interner::new());
        let out = self.out;
        for (gid, &done) in self.has_truth.iter().enumerate() {
            if !done {
                let t = self.actual.truth(gid as u32);
                self.writer
                    .add_goal(
                        self.actual.goals.name(gid as u32),
                        None,
                        Some(&t.entries().collect::<Vec<_>>()),
                    )
                    .map_err(|e| write_error(out, e))?;
            }
        }
        self.report.lemmas = lemmas.len() as u64;
        self.writer
            .finish(&lemmas)
            .map_err(|e| write_error(out, e))?;
        Ok(self.report)
    }
}
