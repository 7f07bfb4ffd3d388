//! `--group-by theorem|file|ATTR`: the summary's means over groups of goals (each group's mean,
//! then the mean of those), the goals' groups read from JSONL records (the actual sets' own,
//! then a `--goals FILE`) by [`lemma_ingest::GoalGroups`]; the summaries of the plan fold the
//! groups in ([`lemma_accum::Grouping`]). A goal no record places in a group is a group of its
//! own (counted, and named in a warning), or an error under `--strict`.

use lemma_accum::{Grouping, Summary};
use lemma_ingest::{show, GoalGroups, InputError};
use std::path::Path;
use std::sync::Mutex;

/// The goals' groups, read once for every evaluation: see the [module documentation](self).
#[derive(Debug)]
pub struct GroupBy {
    groups: GoalGroups,
    strict: bool,
    /// The files the groups were read from, for messages.
    sources: Mutex<Vec<String>>,
}

/// What `--group-by` did, for the report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupReport {
    /// The attribute grouped by.
    pub by: String,
    /// Groups in the summary (a goal of no group counted as one).
    pub groups: u64,
    /// Goals evaluated.
    pub goals: u64,
    /// Goals evaluated that no record placed in a group.
    pub ungrouped: u64,
    /// The first of them by name.
    pub first_ungrouped: Option<String>,
}

impl GroupBy {
    /// The groups by `by` (`theorem`, `file` or a record key) read from the actual sets' records
    /// (`actual`, when it is a JSONL file that can be read twice: not stdin or a pipe) and then
    /// from `goals`; `strict`: a goal evaluated without a group is an error.
    pub fn load(
        by: &str,
        actual: Option<&Path>,
        goals: Option<&Path>,
        strict: bool,
    ) -> Result<GroupBy, InputError> {
        let mut groups = GoalGroups::new(by);
        let mut sources = Vec::new();
        if let Some(a) = actual.filter(|a| !lemma_ingest::read_once(a)) {
            if crate::InputKind::of(a)? == crate::InputKind::Text
                && lemma_ingest::open_with(a, false)?.format == lemma_ingest::Format::Jsonl
            {
                groups.read(a)?;
                sources.push(a.display().to_string());
            }
        }
        if let Some(g) = goals {
            groups.read(g)?;
            sources.push(g.display().to_string());
        }
        Ok(GroupBy::new(groups, strict, sources))
    }

    /// Groups already read (`sources`: where from, for messages).
    pub fn new(groups: GoalGroups, strict: bool, sources: Vec<String>) -> GroupBy {
        GroupBy {
            groups,
            strict,
            sources: Mutex::new(sources),
        }
    }

    /// The attribute grouped by.
    pub fn by(&self) -> &str {
        self.groups.by()
    }

    /// The group of `goal`, if a record placed it in one.
    pub fn get(&self, goal: &[u8]) -> Option<u32> {
        self.groups.get(goal)
    }

    /// After an evaluation: what grouping did (from `summary`, the evaluation's: each
    /// evaluation counts its own goals), or under `--strict` an error naming the first goal
    /// without a group by name.
    pub(crate) fn finish(&self, summary: &Summary) -> Result<GroupReport, crate::EvalError> {
        let (ungrouped, first) = summary.ungrouped().unwrap_or_default();
        let first = first.map(show);
        if let (true, Some(g)) = (self.strict, &first) {
            let keys = self.groups.keys().join("` or `");
            let sources = self
                .sources
                .lock()
                .map(|s| s.join(", "))
                .unwrap_or_default();
            return Err(crate::EvalError::Options(format!(
                "--group-by {}: goal `{g}` has no `{keys}` in the records read ({}) (--strict)",
                self.by(),
                if sources.is_empty() {
                    "none: give --goals FILE"
                } else {
                    &sources
                }
            )));
        }
        let (groups, goals) = summary.group_counts().unwrap_or_default();
        Ok(GroupReport {
            by: self.by().to_string(),
            groups,
            goals,
            ungrouped,
            first_ungrouped: first,
        })
    }
}

impl Grouping for GroupBy {
    fn group_of(&self, goal: &[u8]) -> Option<u32> {
        self.groups.get(goal)
    }
}

impl GroupReport {
    /// The warning for goals without a group, if there were any.
    pub fn warning(&self) -> Option<String> {
        let g = self.first_ungrouped.as_ref()?;
        Some(format!(
            "{} goals have no `{}` in the records read (the first by name: `{g}`): each is a group of \
             its own (--strict makes this an error)",
            self.ungrouped, self.by
        ))
    }
}
