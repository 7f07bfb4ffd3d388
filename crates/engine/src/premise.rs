//! Premise selection's protocol (docs/METRICS.md §9): which premises a goal may use, given a
//! LeanDojo corpus and each goal's place (its file and theorem position).
//!
//! - [`Premises`]: the corpus, the goals' places (from the actual sets' JSONL records and a
//!   `--goals` file) and the options (`--mask`, `--strict`, `--strict-gold`), loaded once and
//!   shared by every worker through [`EvalOptions::premises`](crate::EvalOptions).
//! - `GoalMask`: one worker's view of the current goal, asked by the ranking builder of each
//!   item in rank order before the depth cut (`Ranked::admit`, `ranking.rs`): one hashed
//!   lookup of the premise's name in the corpus (the item's hash is the corpus's) and one bit test
//!   of its file in the goal's file's imports (or one position compare in the same file). Under
//!   `--mask accessible` an inaccessible premise leaves the ranking there, so ranks count
//!   accessible premises only; for `Leak@k` and `LeakRank` the accumulator is told of the
//!   unmasked ranking (ordered, cut at `--depth`, repeats removed) as long as a value can change.
//! - [`PremiseReport`]: what was masked and what did not fit (premises the corpus does not define,
//!   goals whose file it does not list, relevant premises not accessible), with the first of each
//!   named: the summary's warnings.
//!
//! TREC runs and JSONL predictions (every text path: held, joined, regrouped), binary stores and
//! `.npy` matrices (ids against the corpus once, a bitset of accessible ids per place:
//! `premise/columns.rs`) are masked, and so are lemma names pushed to a [`Session`](crate::Session)
//! (the text path's `GoalMask`, a goal's errors named by the goal) and score rows pushed (a
//! matrix's path, the columns matched once per list of names); pushed ids are not yet, and are
//! refused with the corpus.

pub(crate) mod columns;

use crate::options::Choice;
use crate::ranking::{dedup_table, Item};
use crate::seen::SeenSet;
use lemma_accum::{GoalAccumulator, Origin, Plan};
use lemma_ingest::{
    show, Corpus, ErrorKind, GoalPlace, GoalPlaces, InputError, Place, Pos, PremiseIndex,
};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Which premises stay in a goal's ranking (`--mask`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum MaskMode {
    /// Every premise predicted.
    #[default]
    None,
    /// Only the premises accessible at the goal's theorem: ranks count them alone.
    Accessible,
}

impl Choice for MaskMode {
    const OPTION: &'static str = "mask";
    const VALUES: &'static [(&'static str, &'static str, Self)] = &[
        ("none", "every predicted premise is ranked", MaskMode::None),
        (
            "accessible",
            "premises not accessible at the goal's theorem are removed before ranks are given \
             (needs --corpus)",
            MaskMode::Accessible,
        ),
    ];
}

/// Where the corpus and the goals' places come from, and what to do with them.
#[derive(Clone, Debug, Default)]
pub struct PremiseOptions {
    /// LeanDojo's `corpus.jsonl` (plain, gzip or zstd).
    pub corpus: PathBuf,
    /// `--mask`.
    pub mask: MaskMode,
    /// `--goals FILE`: records `{"goal_id", "file_path", "theorem_pos", ...}` that add to and
    /// override what the actual sets' records give.
    pub goals: Option<PathBuf>,
    /// `--strict`: a goal whose file the corpus does not list, or a predicted premise it does not
    /// define, is an error (else counted and named in the warnings).
    pub strict: bool,
    /// `--strict-gold`: a relevant premise not accessible at its goal is an error (else counted
    /// and named in the warnings).
    pub strict_gold: bool,
}

/// The corpus, the goals' places and the options, loaded once ([`Premises::load`]).
#[derive(Debug)]
pub struct Premises {
    corpus: Corpus,
    places: GoalPlaces,
    mask: bool,
    strict: bool,
    strict_gold: bool,
    /// Per file: where its last premise ends ([`Corpus::last_end`]).
    last_ends: Vec<Option<Pos>>,
    /// The premises by name for rankings of names, built by the first ([`Premises::index`]).
    index: OnceLock<PremiseIndex>,
    /// [`Premises::fingerprint`], computed by the first to ask.
    fingerprint: OnceLock<u64>,
}

impl Premises {
    /// Reads `opts.corpus`, then the places the actual sets' records give (`actual`, when it is a
    /// JSONL file that can be read twice: not stdin or a pipe), then `opts.goals`.
    pub fn load(opts: &PremiseOptions, actual: Option<&Path>) -> Result<Premises, InputError> {
        // The corpus on a thread of its own while the places are read (by path, resolved after).
        let (corpus, places) = std::thread::scope(|s| {
            let corpus = s.spawn(|| Corpus::read(&opts.corpus));
            let places = Self::read_places(opts, actual);
            let corpus = corpus
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            (corpus, places)
        });
        let corpus = corpus?;
        let mut places = places?;
        places.resolve(&corpus);
        Ok(Premises::new(corpus, places, opts))
    }

    /// The goals' places from the actual sets' JSONL records, then the `--goals` file; files by
    /// path.
    fn read_places(opts: &PremiseOptions, actual: Option<&Path>) -> Result<GoalPlaces, InputError> {
        let mut places = GoalPlaces::new();
        if let Some(a) = actual.filter(|a| !lemma_ingest::read_once(a)) {
            if crate::InputKind::of(a)? == crate::InputKind::Text
                && lemma_ingest::open_with(a, false)?.format == lemma_ingest::Format::Jsonl
            {
                places.read_unresolved(a)?;
            }
        }
        if let Some(g) = &opts.goals {
            places.read_unresolved(g)?;
        }
        Ok(places)
    }

    /// A corpus and places already read, under `opts`'s mask and strictness.
    pub fn new(corpus: Corpus, places: GoalPlaces, opts: &PremiseOptions) -> Premises {
        let last_ends = (0..corpus.files() as u32)
            .map(|f| corpus.last_end(f))
            .collect();
        Premises {
            last_ends,
            corpus,
            places,
            mask: opts.mask == MaskMode::Accessible,
            strict: opts.strict,
            strict_gold: opts.strict_gold,
            index: OnceLock::new(),
            fingerprint: OnceLock::new(),
        }
    }

    /// The corpus's premises by name, one cache line each ([`PremiseIndex`]), for rankings of
    /// names: built once, by the first caller (stores and matrices, matched by id, never build
    /// it).
    pub fn index(&self) -> &PremiseIndex {
        self.index.get_or_init(|| PremiseIndex::new(&self.corpus))
    }

    /// The corpus.
    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }

    /// The goals' places.
    pub fn places(&self) -> &GoalPlaces {
        &self.places
    }

    /// Whether inaccessible premises are removed from rankings.
    pub fn masks(&self) -> bool {
        self.mask
    }

    /// A fingerprint of the corpus and the goals' places ([`Corpus::fingerprint`],
    /// [`GoalPlaces::fingerprint`]): what summary and values files record, so that shards
    /// evaluated against another library or other places do not merge.
    pub fn fingerprint(&self) -> u64 {
        *self.fingerprint.get_or_init(|| {
            let c = self.corpus.fingerprint();
            let p = self.places.fingerprint(&self.corpus);
            lemma_ingest::fingerprint::fmix(lemma_ingest::fingerprint::mix(c, p))
        })
    }

    /// Where premise `id` is defined, seen from a goal in file `file` (`None`: a file the corpus
    /// does not list): its own file or another (`R(origin=...)@k`).
    fn origin_at(&self, file: Option<u32>, id: u32) -> Origin {
        origin_in(file, self.corpus.premise_file(id))
    }

    /// The relevant premises of goal `goal` (`relevant`: names with their hashes) counted by
    /// origin, `[in-file, imported]` (a premise the corpus does not define is in neither), for a
    /// goal evaluated without predictions; an error message when the goal's place is not known.
    pub(crate) fn origin_counts<'n>(
        &self,
        goal: &[u8],
        relevant: impl Iterator<Item = (u64, &'n [u8])>,
    ) -> Result<[u64; 2], String> {
        let file = self.goal_file(goal)?;
        let mut counts = [0; 2];
        for (hash, name) in relevant {
            if let Some(id) = self.corpus.premise_id_hashed(hash, name) {
                counts[self.origin_at(file, id).index()] += 1;
            }
        }
        Ok(counts)
    }
}

impl Premises {
    /// The file of goal `goal`'s place, for the origin measures (`None`: a file the corpus does
    /// not list); an error message when its place is not known.
    pub(crate) fn goal_file(&self, goal: &[u8]) -> Result<Option<u32>, String> {
        match self.places.get(goal) {
            Some(GoalPlace::Known(place)) => Ok(Some(place.file)),
            Some(GoalPlace::UnlistedFile(_)) => Ok(None),
            _ => Err(origin_place_error(goal)),
        }
    }

    /// Goal `goal`'s place for its ranking, counted in `report` (a goal ranked under the
    /// corpus when its place is known or its file unlisted; a file the corpus does not list);
    /// `needed`: the mask or a measure reads it. Every ranked goal's, whatever its input
    /// (names through [`GoalMask`], ids and scores through the columns' access). An error
    /// message naming the goal when its place is needed and not known, or under `--strict`.
    pub(crate) fn goal_at(
        &self,
        goal: &[u8],
        needed: bool,
        report: &mut PremiseReport,
    ) -> Result<GoalAt, String> {
        match self.places.get(goal) {
            Some(GoalPlace::Known(place)) => {
                if let Some(last) = self.last_ends[place.file as usize].filter(|&l| place.pos > l) {
                    let file = self.corpus.file_path(place.file);
                    if self.strict {
                        return Err(format!(
                            "goal `{}` stands at {}:{} in `{}`, past the end of the file's last \
                             premise in the corpus {} ({}:{}): not a theorem of that file \
                             (--strict)",
                            show(goal),
                            place.pos.line,
                            place.pos.col,
                            show(file),
                            self.corpus.path().display(),
                            last.line,
                            last.col
                        ));
                    }
                    report.late_places += 1;
                    keep_least(&mut report.first_late_place, goal, file);
                }
                report.goals += 1;
                Ok(GoalAt::Known(place))
            }
            Some(GoalPlace::UnlistedFile(f)) => {
                if self.strict {
                    return Err(format!(
                        "goal `{}` stands in `{}`, which the corpus {} does not list (--strict)",
                        show(goal),
                        show(f),
                        self.corpus.path().display()
                    ));
                }
                report.goals += 1;
                report.unlisted_files += 1;
                keep_least(&mut report.first_unlisted_file, goal, f);
                Ok(GoalAt::Unlisted)
            }
            missing if needed => {
                let what = match missing {
                    Some(GoalPlace::Incomplete(what)) => format!("has no `{what}`"),
                    _ => "has no record giving its place".to_string(),
                };
                Err(format!(
                    "goal `{}` {what}: --mask accessible, the Leak and R(origin=...) measures \
                     need each ranked goal's `file_path` and `theorem_pos` (in its actual-set \
                     record, or in --goals FILE)",
                    show(goal)
                ))
            }
            _ => Ok(GoalAt::Unneeded),
        }
    }

    /// Relevant premise `name` of goal `goal` (`defined` by the corpus, `accessible` at the
    /// goal): one not accessible is counted in `report`, or an error message under
    /// `--strict-gold`.
    pub(crate) fn relevant_premise(
        &self,
        goal: &[u8],
        name: &[u8],
        defined: bool,
        accessible: bool,
        report: &mut PremiseReport,
    ) -> Result<(), String> {
        if accessible {
            return Ok(());
        }
        if self.strict_gold {
            let why = if defined {
                "it is not accessible at the goal's theorem"
            } else {
                "the corpus does not define it"
            };
            return Err(format!(
                "goal `{}`: relevant premise `{}`: {why} (--strict-gold)",
                show(goal),
                show(name)
            ));
        }
        report.gold_inaccessible += 1;
        keep_least(&mut report.first_gold_inaccessible, goal, name);
        Ok(())
    }

    /// Where the premise named `name` is defined, seen from a goal in file `file`
    /// ([`Premises::goal_file`]): `None` when the corpus does not define it.
    pub(crate) fn origin_of_name(&self, file: Option<u32>, name: &[u8]) -> Option<Origin> {
        (self.corpus.premise_id(name)).map(|id| self.origin_at(file, id))
    }
}

/// A goal's place for its ranking ([`Premises::goal_at`]).
pub(crate) enum GoalAt {
    /// Known: its file is in the corpus.
    Known(Place),
    /// In a file the corpus does not list: nothing is accessible.
    Unlisted,
    /// Not known, and neither the mask nor a measure reads it.
    Unneeded,
}

/// Where a premise of file `premise_file` is defined, seen from a goal in file `goal_file`
/// (`None`: a file the corpus does not list): its own file, or another.
#[inline]
fn origin_in(goal_file: Option<u32>, premise_file: u32) -> Origin {
    match goal_file {
        Some(f) if f == premise_file => Origin::InFile,
        _ => Origin::Imported,
    }
}

/// The error for a goal evaluated without predictions whose place is not known, under the
/// origin measures.
fn origin_place_error(goal: &[u8]) -> String {
    format!(
        "goal `{}` has no record giving its `file_path`: the R(origin=...) measures need each \
         evaluated goal's place (in its actual-set record, or in --goals FILE)",
        show(goal)
    )
}

/// What the premise protocol did and met (docs/METRICS.md §9): counts, and the first case of
/// each problem by name (goal, then the premise or file), whatever the order goals were met in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PremiseReport {
    /// Goals ranked under the corpus.
    pub goals: u64,
    /// Predicted premises removed by `--mask accessible`.
    pub masked: u64,
    /// Predicted premises (occurrences, in evaluated goals) the corpus does not define: never
    /// accessible.
    pub unknown_premises: u64,
    /// The first by name: (goal, premise), as bytes.
    pub first_unknown_premise: Option<(Vec<u8>, Vec<u8>)>,
    /// Evaluated goals whose file the corpus does not list: nothing is accessible there.
    pub unlisted_files: u64,
    /// The first by name: (goal, file), as bytes.
    pub first_unlisted_file: Option<(Vec<u8>, Vec<u8>)>,
    /// Ranked goals whose position lies past the end of their file's last premise (a theorem
    /// of the file is one of its premises: the position is not one of the file's, a wrong
    /// `theorem_pos` or `file_path`); ranked as given, every premise of the file accessible.
    pub late_places: u64,
    /// The first by name: (goal, file), as bytes.
    pub first_late_place: Option<(Vec<u8>, Vec<u8>)>,
    /// Relevant premises not accessible at their goal (the corpus does not define them, or they
    /// come later or from a file not imported): they stay in `R`, and no masked ranking finds
    /// them.
    pub gold_inaccessible: u64,
    /// The first by name: (goal, premise), as bytes.
    pub first_gold_inaccessible: Option<(Vec<u8>, Vec<u8>)>,
}

impl PremiseReport {
    /// The counts by name, as `eval --format json`'s `premises` object and Python's
    /// `Result.premises` give them: goals ranked under the corpus, predicted premises masked,
    /// predicted premises the corpus does not define, goals in files it does not list, relevant
    /// premises not accessible, goals placed past their file's last premise.
    pub fn counts(&self) -> [(&'static str, u64); 6] {
        [
            ("goals", self.goals),
            ("masked", self.masked),
            ("not_in_corpus", self.unknown_premises),
            ("goals_in_unlisted_files", self.unlisted_files),
            ("relevant_inaccessible", self.gold_inaccessible),
            ("goals_past_last_premise", self.late_places),
        ]
    }

    /// A report of these counts, in [`PremiseReport::counts`]' order, and no first cases.
    pub(crate) fn from_counts(n: [u64; 6]) -> PremiseReport {
        let [goals, masked, unknown_premises, unlisted_files, gold_inaccessible, late_places] = n;
        PremiseReport {
            goals,
            masked,
            unknown_premises,
            unlisted_files,
            gold_inaccessible,
            late_places,
            ..PremiseReport::default()
        }
    }

    /// The counts alone, without the first cases.
    pub(crate) fn counts_only(&self) -> PremiseReport {
        PremiseReport::from_counts(self.counts().map(|(_, n)| n))
    }

    /// The counts of both, added; `None` past 2^64 - 1.
    pub(crate) fn checked_sum(&self, other: &PremiseReport) -> Option<PremiseReport> {
        let (a, b) = (self.counts(), other.counts());
        let mut n = [0u64; 6];
        for (i, x) in n.iter_mut().enumerate() {
            *x = a[i].1.checked_add(b[i].1)?;
        }
        Some(PremiseReport::from_counts(n))
    }

    /// Adds `other`'s counts; of the first cases, the least by name is kept (the same whatever
    /// the order parts of the input are added in: threads, a pool's workers, merged sessions).
    pub fn add(&mut self, other: &PremiseReport) {
        self.goals += other.goals;
        self.masked += other.masked;
        self.unknown_premises += other.unknown_premises;
        self.unlisted_files += other.unlisted_files;
        self.gold_inaccessible += other.gold_inaccessible;
        self.late_places += other.late_places;
        for (mine, theirs) in [
            (
                &mut self.first_unknown_premise,
                &other.first_unknown_premise,
            ),
            (&mut self.first_unlisted_file, &other.first_unlisted_file),
            (&mut self.first_late_place, &other.first_late_place),
            (
                &mut self.first_gold_inaccessible,
                &other.first_gold_inaccessible,
            ),
        ] {
            if let Some(t) = theirs {
                if mine.as_ref().is_none_or(|m| t < m) {
                    *mine = Some(t.clone());
                }
            }
        }
    }

    /// The warnings: a sentence for each kind of problem met, each naming its first case by name
    /// (goal, then premise or file).
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if let Some((g, f)) = &self.first_unlisted_file {
            let (g, f) = (show(g), show(f));
            w.push(format!(
                "{} goals stand in files the corpus does not list (the first by name: goal `{g}` in \
                 `{f}`): nothing is accessible there (--strict makes this an error)",
                self.unlisted_files
            ));
        }
        if let Some((g, f)) = &self.first_late_place {
            let (g, f) = (show(g), show(f));
            w.push(format!(
                "{} goals stand past the end of their file's last premise (the first by name: goal \
                 `{g}` in `{f}`): a theorem of the file is one of its premises, so the position \
                 is not one of the file's (unless ReProver's rules skipped the file's last \
                 theorem); ranked as given, every premise of the file accessible (--strict makes \
                 this an error)",
                self.late_places
            ));
        }
        if let Some((g, p)) = &self.first_unknown_premise {
            let (g, p) = (show(g), show(p));
            w.push(format!(
                "{} predicted premises are not defined by the corpus (the first by name: `{p}` for goal \
                 `{g}`): counted as inaccessible (--strict makes this an error)",
                self.unknown_premises
            ));
        }
        if let Some((g, p)) = &self.first_gold_inaccessible {
            let (g, p) = (show(g), show(p));
            w.push(format!(
                "{} relevant premises are not accessible at their goal (the first by name: `{p}` of \
                 goal `{g}`): they stay relevant and no masked ranking can find them \
                 (--strict-gold makes this an error)",
                self.gold_inaccessible
            ));
        }
        w
    }
}

/// A goal-level error of the premise protocol, at batch-local line `line`.
fn goal_error(line: u64, message: String) -> crate::EvalError {
    crate::EvalError::Input(InputError {
        kind: ErrorKind::Syntax,
        path: PathBuf::new(),
        line: Some(line),
        byte: None,
        first_line: None,
        message,
    })
}

/// One worker's premise state for the goal being ranked: see the [module documentation](self).
pub(crate) struct GoalMask {
    premises: Arc<Premises>,
    /// Whether unmasked items are told to the accumulator (`Leak@k`, `LeakRank`).
    leaks: bool,
    /// Whether the relevant premises' origins are told to the accumulator (`R(origin=...)@k`),
    /// and this goal's: its file (`None`: one the corpus does not list) and its relevant
    /// premises by origin.
    origins: bool,
    file: Option<u32>,
    origin_counts: [u64; 2],
    depth: u64,
    /// The goal's place; `None`: its file is not in the corpus (nothing is accessible).
    place: Option<Place>,
    /// Whether this goal's items are looked up (every goal's, with a corpus).
    active: bool,
    /// Items of the unmasked ranking so far, counted as the depth cut counts (repeats too), and
    /// its repeats.
    emitted: u64,
    seen: SeenSet,
    /// Premises of this goal the corpus does not define, where the first one's name lies (the
    /// error under `--strict`) and where the least one's does (the warnings' case).
    unknown: u64,
    first_unknown: Option<(usize, usize)>,
    least_unknown: Option<(usize, usize)>,
}

impl GoalMask {
    pub(crate) fn new(premises: Arc<Premises>, plan: &Plan, depth: Option<u64>) -> GoalMask {
        premises.index();
        GoalMask {
            premises,
            leaks: plan.needs_leaks(),
            origins: plan.needs_origins(),
            file: None,
            origin_counts: [0; 2],
            depth: depth.unwrap_or(u64::MAX),
            place: None,
            active: false,
            emitted: 0,
            seen: dedup_table(),
            unknown: 0,
            first_unknown: None,
            least_unknown: None,
        }
    }

    /// Starts the goal named `goal` (first line `line`, batch-local), of relevant premises
    /// `relevant` (names with their hashes): finds its place, checks its relevant premises, and
    /// counts what it meets in `report`. An error for a goal without a place when one is needed,
    /// and under `--strict` / `--strict-gold`.
    pub(crate) fn begin<'n>(
        &mut self,
        goal: &[u8],
        line: u64,
        relevant: impl Iterator<Item = (u64, &'n [u8])>,
        report: &mut PremiseReport,
    ) -> Result<(), crate::EvalError> {
        self.restart();
        let p = &*self.premises;
        let needed = p.mask || self.leaks || self.origins;
        let place = match p.goal_at(goal, needed, report) {
            Ok(GoalAt::Known(place)) => Some(place),
            Ok(GoalAt::Unlisted) => None,
            Ok(GoalAt::Unneeded) => {
                // Neither masked nor leaks asked for: only the premises the corpus does not
                // define are looked for.
                self.place = None;
                self.active = true;
                return Ok(());
            }
            Err(m) => return Err(goal_error(line, m)),
        };
        self.file = place.map(|at| at.file);
        self.origin_counts = [0; 2];
        let index = p.index();
        for (hash, name) in relevant {
            let found = index.find(&p.corpus, hash, name);
            if let (true, Some(f)) = (self.origins, found) {
                self.origin_counts[origin_in(self.file, f.file).index()] += 1;
            }
            let accessible =
                found.is_some_and(|f| place.is_some_and(|at| p.corpus.accessible_found(at, f)));
            p.relevant_premise(goal, name, found.is_some(), accessible, report)
                .map_err(|m| goal_error(line, m))?;
        }
        self.place = place;
        self.active = true;
        Ok(())
    }

    /// `t` told the current goal's relevant premises by origin when the plan reads origins
    /// ([`Truth::with_origins`](lemma_accum::Truth::with_origins)).
    pub(crate) fn with_origins<'t>(&self, t: lemma_accum::Truth<'t>) -> lemma_accum::Truth<'t> {
        match self.origins {
            true => t.with_origins(self.origin_counts[0], self.origin_counts[1]),
            false => t,
        }
    }

    /// Tells the accumulator where the judged item `it` (named in `data`) is defined, before it
    /// is pushed, when the plan reads origins: `None` for a premise the corpus does not define.
    #[inline]
    pub(crate) fn tell_origin(&self, data: &[u8], it: &Item, acc: &mut GoalAccumulator) {
        if self.origins && it.label.grade().is_some() {
            let p = &*self.premises;
            let origin = (p.index().find(&p.corpus, it.hash, it.name(data)))
                .map(|f| origin_in(self.file, f.file));
            acc.set_origin(origin);
        }
    }

    /// Whether this goal's items are looked up in the corpus, and are asked for ahead
    /// ([`Ranked::looks_ahead`](crate::ranking::Ranked::looks_ahead)).
    #[inline(always)]
    pub(crate) fn looks_ahead(&self) -> bool {
        self.active
    }

    /// Asks for the index entry of a premise hashed `hash`, ranked soon.
    #[inline(always)]
    pub(crate) fn prefetch(&self, hash: u64) {
        if self.active {
            self.premises.index().prefetch(hash);
        }
    }

    /// Forgets what the current goal's items did (the goal is read again from its first item).
    pub(crate) fn restart(&mut self) {
        self.emitted = 0;
        self.seen.clear();
        self.unknown = 0;
        self.first_unknown = None;
        self.least_unknown = None;
    }

    /// Whether the item stays in the ranking; tells the accumulator of the unmasked ranking.
    #[inline(always)]
    pub(crate) fn admit(&mut self, data: &[u8], it: &Item, acc: &mut GoalAccumulator) -> bool {
        if !self.active {
            return true;
        }
        let p = &*self.premises;
        let accessible = match p.index().find(&p.corpus, it.hash, it.name(data)) {
            Some(f) => self
                .place
                .is_some_and(|at| p.corpus.accessible_found(at, f)),
            None => {
                self.unknown += 1;
                if self.first_unknown.is_none() {
                    self.first_unknown = Some((it.start, it.end()));
                }
                // The least name (the warnings' case, whatever the ranking's order).
                if (self.least_unknown).is_none_or(|(s, e)| it.name(data) < &data[s..e]) {
                    self.least_unknown = Some((it.start, it.end()));
                }
                false
            }
        };
        if self.leaks && self.emitted < self.depth && acc.wants_unmasked() {
            self.emitted += 1;
            if self
                .seen
                .insert(data, it.hash, it.start, it.end())
                .is_none()
            {
                acc.push_unmasked(!accessible);
            }
        }
        accessible || !self.premises.mask
    }

    /// Ends the goal's items (`data`: the bytes its names lie in; `line` the batch-local line of
    /// a name at `at`): the premises the corpus does not define go to `report`, or are an error
    /// under `--strict`.
    pub(crate) fn end(
        &mut self,
        goal: &[u8],
        data: &[u8],
        line: impl Fn(usize) -> u64,
        report: &mut PremiseReport,
    ) -> Result<(), crate::EvalError> {
        let least = self.least_unknown.take();
        let Some((s, e)) = self.first_unknown.take() else {
            return Ok(());
        };
        if self.premises.strict {
            return Err(goal_error(
                line(s),
                format!(
                    "premise `{}` (goal `{}`) is not defined by the corpus {} (--strict)",
                    show(&data[s..e]),
                    show(goal),
                    self.premises.corpus.path().display()
                ),
            ));
        }
        report.unknown_premises += std::mem::take(&mut self.unknown);
        let (s, e) = least.unwrap_or((s, e));
        keep_least(&mut report.first_unknown_premise, goal, &data[s..e]);
        Ok(())
    }
}

/// Keeps in `slot` the least (goal, name) case, by the names' bytes: the same case whatever
/// order goals are met in.
pub(crate) fn keep_least(slot: &mut Option<(Vec<u8>, Vec<u8>)>, goal: &[u8], name: &[u8]) {
    let less = match slot {
        None => true,
        Some((g, n)) => (goal, name) < (g.as_slice(), n.as_slice()),
    };
    if less {
        *slot = Some((goal.to_vec(), name.to_vec()));
    }
}
