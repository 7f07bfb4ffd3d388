//! `trec_eval`'s flags beyond the common ones: `-J`, `-N`, and the input formats `-R` (`qrels`,
//! and the preference files `prefs` and `qrels_prefs`) and `-T` (trec_eval's default only) and
//! `-Z`, z-scores against a reference file.

use crate::out::Fail;
use lemma_eval::trec::{RelFormat, TrecOptions};

/// trec_eval's `-J`, `-N`, `-R`, `-T`, `-Z`.
#[derive(clap::Args, Clone, Debug, Default)]
pub(crate) struct TrecFlags {
    /// Rank only the judged lemmas (grade >= 0): the others are dropped before ranks are given.
    #[arg(short = 'J')]
    judged_only: bool,
    /// The collection's size, which `utility`'s fourth coefficient reads (default 0).
    #[arg(short = 'N', value_name = "N")]
    collection_size: Option<u64>,
    /// The judgments' format: `qrels` (the default), `qrels_jg` (judgment groups: `goal group
    /// lemma grade`), `prefs` (lines `goal group subgroup lemma level`) or `qrels_prefs` (qrels
    /// read as preferences).
    #[arg(short = 'R', value_name = "FORMAT")]
    rel_format: Option<String>,
    /// The run's format: `trec_results` (the only one).
    #[arg(short = 'T', value_name = "FORMAT")]
    results_format: Option<String>,
    /// Z-scores against FILE (lines `goal measure mean stddev`): each goal's values become
    /// (value - mean) / stddev before they are printed and averaged, names prefixed `Z`.
    #[arg(short = 'Z', value_name = "FILE")]
    zscores: Option<std::path::PathBuf>,
}

impl TrecFlags {
    /// Sets `o` as the flags say; trec_eval's exit code 2 for a format or a file lemma-eval does
    /// not read.
    pub(crate) fn apply(&self, o: &mut TrecOptions) -> Result<(), Fail> {
        match self.rel_format.as_deref() {
            None => {}
            Some(f) => match RelFormat::from_name(f) {
                Some(rel) => o.rel_format = rel,
                None => return Err(Fail(2, format!("illegal rel_format `{f}`"))),
            },
        }
        match self.results_format.as_deref() {
            None | Some("trec_results") => {}
            Some(f) => return Err(Fail(2, format!("illegal retrieval results format `{f}`"))),
        }
        o.zscores = self.zscores.clone();
        o.judged_only = self.judged_only;
        o.collection_size = self.collection_size.unwrap_or(0);
        Ok(())
    }
}
