//! `eval --group-by`: its argument, and the groups it reads.

use lemma_eval::{EvaluatorBuilder, GroupBy};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How goals are grouped for the summary.
#[derive(clap::Args, Clone, Debug, Default)]
pub(crate) struct GroupArgs {
    /// The summary is the mean over groups of each group's mean (per-goal rows unchanged):
    /// `theorem` (records' `theorem` or `full_name`), `file` (`file_path` or `path`), or any key
    /// of the records (the actual sets' JSONL records, then --goals FILE). A goal no record
    /// places in a group is a group of its own (--strict: an error).
    #[arg(long = "group-by", value_name = "theorem|file|ATTR")]
    pub(crate) group_by: Option<String>,
}

/// `builder` grouping goals as `g` says, the groups read from `actual` and `goals`; an error
/// for --goals or --strict given with neither --corpus nor --group-by.
pub(crate) fn apply(
    builder: EvaluatorBuilder,
    g: &GroupArgs,
    corpus: Option<&PathBuf>,
    actual: &Path,
    goals: Option<&Path>,
    strict: bool,
) -> Result<EvaluatorBuilder, crate::out::Fail> {
    let Some(by) = &g.group_by else {
        if corpus.is_none() && (goals.is_some() || strict) {
            let flag = if goals.is_some() {
                "--goals"
            } else {
                "--strict"
            };
            return Err(crate::out::Fail(
                2,
                format!("{flag} needs --corpus FILE or --group-by"),
            ));
        }
        return Ok(builder);
    };
    if by.is_empty() {
        return Err(crate::out::Fail(
            2,
            "--group-by: expected theorem, file or a record key".into(),
        ));
    }
    let groups = GroupBy::load(by, Some(actual), goals, strict)?;
    Ok(builder.group_by(Arc::new(groups)))
}
