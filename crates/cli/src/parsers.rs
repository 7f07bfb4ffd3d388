//! The parsers of the command's values that clap does not have: finite numbers, thread counts,
//! sizes, shards, and the word options the library declares ([`lemma_eval::Choice`]).

use lemma_eval::Choice;

/// A finite number (`1e400` overflows to infinity, and no score is infinite).
pub(crate) fn parse_finite(s: &str) -> Result<f64, String> {
    (s.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("expected a finite number, found `{s}`"))
}

/// A number of worker threads, 1 to [`lemma_eval::MAX_THREADS`] ([`lemma_eval::check_threads`]):
/// every command's `--threads`.
pub(crate) fn parse_threads(s: &str) -> Result<usize, String> {
    match s.trim().parse::<i128>() {
        Ok(n) => lemma_eval::check_threads(n),
        Err(_) => Err(format!(
            "`{s}`: expected a number of worker threads, 1 to {}",
            lemma_eval::MAX_THREADS
        )),
    }
}

/// `512M`, `2G`, `1.5G`, `64K` (binary units) or a number of bytes ([`lemma_eval::parse_size`]).
pub(crate) fn parse_size(s: &str) -> Result<usize, String> {
    lemma_eval::parse_size(s)
}

/// `I/N` with 1 <= I <= N.
pub(crate) fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("`{s}`: expected I/N with 1 <= I <= N, like 3/8");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u64, u64) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if i == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

/// The parser of a word option (`--ties group`): the engine's words for it ([`Choice`]), each
/// with its help, and the value it names. The Python package parses through the same list.
pub(crate) fn choice<T: Choice + Clone + Send + Sync>(
) -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::TypedValueParser;
    let values = T::VALUES
        .iter()
        .map(|&(word, help, _)| clap::builder::PossibleValue::new(word).help(help));
    clap::builder::PossibleValuesParser::new(values)
        .map(|word: String| T::parse(&word).expect("clap takes only the listed words"))
}
