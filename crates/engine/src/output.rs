//! Output of `lemma-eval eval` and `merge`: `table` for people, `tsv` and `json` for programs,
//! `trec` for trec_eval-shaped lines. Per-goal rows are written as they arrive (file order); the
//! summary last. Output of `curve` ([`write_curves`], [`PooledWriter`]) and of `compare`
//! ([`write_comparison`]).

mod compare;
mod curve;

pub use compare::{write_comparison, CompareFormat, COMPARE_FIELDS};
pub use curve::{write_curves, CurveFormat, PooledWriter};

use crate::{GoalRow, LackingShards, Report};
use lemma_accum::{Aggregate, Aggregation, GoalCounts, Measure, Summary};
use std::io::{self, Write};

/// Output formats of `eval`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OutFormat {
    /// Aligned columns for people.
    Table,
    /// `goal<TAB>measure<TAB>value`, full precision, goal `all` for the aggregate.
    Tsv,
    /// One JSON object.
    Json,
    /// trec_eval's line format (`name<TAB>goal<TAB>value` with 4 decimals).
    Trec,
}

impl crate::Choice for OutFormat {
    const OPTION: &'static str = "format";
    const VALUES: &'static [(&'static str, &'static str, Self)] = &[
        ("table", "aligned columns for people", OutFormat::Table),
        (
            "tsv",
            "goal<TAB>measure<TAB>value, full precision, goal `all` for the aggregate",
            OutFormat::Tsv,
        ),
        ("json", "one JSON object", OutFormat::Json),
        ("trec", "trec_eval's line format", OutFormat::Trec),
    ];
}

/// One line in trec_eval's format, as `{name:<22}\t{goal}\t{v:.4}` writes it (`{}` of `v as
/// i64` for an `integer` measure: the counts), without fmt's machinery: `eval --format trec` and
/// `trec_eval -q` write one per goal and measure, on one thread.
pub(crate) fn push_trec_line(out: &mut Vec<u8>, name: &str, goal: &[u8], v: f64, integer: bool) {
    const SPACES: &[u8; 22] = b"                      ";
    out.extend_from_slice(name.as_bytes());
    // `{:<22}` pads by characters.
    out.extend_from_slice(&SPACES[name.chars().count().min(22)..]);
    out.push(b'\t');
    out.extend_from_slice(goal);
    out.push(b'\t');
    if integer {
        push_int(out, v as i64);
    } else {
        push_fixed4(out, v);
    }
    out.push(b'\n');
}

/// Writes per-goal rows and the summary in one format.
pub struct Writer<'w> {
    out: &'w mut dyn Write,
    format: OutFormat,
    measures: Vec<Measure>,
    rows_written: u64,
    /// Values derived from the summary, printed after it (`eval --threshold`'s pooled view).
    extra: Vec<(String, Option<f64>)>,
    /// The shards a partial merge lacks (`merge --partial`), said after the summary.
    lacking: Vec<LackingShards>,
    /// What the premise protocol counted, for json ([`Writer::set_premises`]).
    premises: Option<[(&'static str, u64); 6]>,
    /// The per-goal measures, their names as each format writes them (made once: a run of
    /// millions of goals writes tens of millions of rows, on one thread).
    columns: Vec<Column>,
    /// The json format's `values` keys in the order its object writes them (sorted, as
    /// serde_json's map sorts them): the column and `"name":`.
    json_keys: Vec<(usize, Vec<u8>)>,
    /// A row's text, reused.
    buf: Vec<u8>,
    /// What precedes the rows, readied by [`Writer::begin`], not yet written.
    head: Vec<u8>,
}

/// A per-goal measure: its index among the plan's measures and what precedes its value.
struct Column {
    index: usize,
    /// `\t<name>\t` (after the goal, tsv).
    tsv: Vec<u8>,
    /// Its trec name.
    trec: String,
    /// A summed measure (trec writes it as an integer).
    sum: bool,
}

/// Full precision, shortest round-trip form; `NA` when undefined.
fn full(v: Option<f64>) -> String {
    match v {
        Some(v) => format!("{v}"),
        None => "NA".into(),
    }
}

/// Appends `v` as `format!("{v}")` writes it: the shortest digits that read back as `v`, laid
/// out without an exponent (`0.0000001`, `1000`, `-0`; `NaN`, `inf`, `-inf`). About twice as
/// fast as `Display` (`cargo bench -p lemma-benches --bench output`): the digits come from
/// `zmij` (Schubfach), whose own layout (`1e-7`, `1000.0`) is then rewritten. For outputs of
/// many numbers (a pooled curve's rows).
pub fn push_f64(out: &mut Vec<u8>, v: f64) {
    if !v.is_finite() {
        out.extend_from_slice(format!("{v}").as_bytes());
        return;
    }
    let mut buf = zmij::Buffer::new();
    let text = buf.format_finite(v).as_bytes();
    // Most numbers come as `int.frac` with no exponent, which `Display` writes alike but for a
    // `.0` (zmij writes no other trailing zero; one would take the general path). Unless `v` lies
    // halfway: it is then `n * 10^q`, `n` the digits followed by a 5 and `q` the place of that 5
    // (`-(frac.len() + 1)`; `t - 1` for a `.0` form `int = i * 10^t`), which equals `|v| = m *
    // 2^e` (`m` odd) only if `e == q`; those go to the general path, which checks exactly.
    if v != 0.0 && !text.contains(&b'e') {
        if let Some(dot) = text.iter().position(|&c| c == b'.') {
            let (int, frac) = (&text[..dot], &text[dot + 1..]);
            let whole = frac == b"0";
            let trailing_zero = !whole && frac.last() == Some(&b'0');
            let q = if whole {
                int.iter().rev().take_while(|&&c| c == b'0').count() as i64 - 1
            } else {
                -(frac.len() as i64) - 1
            };
            if odd_binary(v).1 != q && !trailing_zero {
                out.extend_from_slice(if whole { int } else { text });
                return;
            }
        }
    }
    let (negative, text) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let (mantissa, exp) = match memchr::memchr(b'e', text) {
        Some(e) => (&text[..e], parse_exponent(&text[e + 1..])),
        None => (text, 0),
    };
    // The significant digits and where the decimal point falls among them.
    let mut digits = [0u8; 24];
    let (mut len, mut point) = (0usize, None);
    for &c in mantissa {
        if c == b'.' {
            point = Some(len);
        } else {
            digits[len] = c;
            len += 1;
        }
    }
    let mut point = point.unwrap_or(len) as i64 + exp;
    let lead = digits[..len].iter().take_while(|&&c| c == b'0').count();
    point -= lead as i64;
    digits.copy_within(lead..len, 0);
    len -= lead;
    while len > 0 && digits[len - 1] == b'0' {
        len -= 1;
    }
    if len > 0 && halfway_above(v, &digits[..len], point) {
        // `v` lies exactly halfway between these digits and the next ones up: `Display` takes
        // the larger in magnitude, `zmij` the even one.
        let mut i = len;
        loop {
            if i == 0 {
                digits[0] = b'1';
                len = 1;
                point += 1;
                break;
            }
            i -= 1;
            if digits[i] == b'9' {
                digits[i] = b'0';
            } else {
                digits[i] += 1;
                break;
            }
        }
        while len > 0 && digits[len - 1] == b'0' {
            len -= 1;
        }
    }
    let digits = &digits[..len];
    if negative {
        out.push(b'-');
    }
    if digits.is_empty() {
        out.push(b'0');
    } else if point <= 0 {
        out.extend_from_slice(b"0.");
        out.resize(out.len() + (-point) as usize, b'0');
        out.extend_from_slice(digits);
    } else if point as usize >= digits.len() {
        out.extend_from_slice(digits);
        out.resize(out.len() + point as usize - digits.len(), b'0');
    } else {
        let (int, frac) = digits.split_at(point as usize);
        out.extend_from_slice(int);
        out.push(b'.');
        out.extend_from_slice(frac);
    }
}

/// Whether `|v|` is exactly `0.digits5 * 10^point`: halfway between `0.digits * 10^point` and
/// the next number of as many digits. Writing that decimal as `n * 10^q` (`n` odd: it ends in
/// 5) and `|v|` as `m * 2^e` (`m` odd), the two are equal when `e == q` and `n * 5^q == m`
/// (`q >= 0`) or `n == m * 5^-q` (`q < 0`).
fn halfway_above(v: f64, digits: &[u8], point: i64) -> bool {
    let (m, e) = odd_binary(v);
    let q = point - digits.len() as i64 - 1;
    if e != q || q.unsigned_abs() > 27 {
        return false;
    }
    let n = digits
        .iter()
        .fold(0u128, |n, &c| n * 10 + u128::from(c - b'0'))
        * 10
        + 5;
    let p = 5u128.pow(q.unsigned_abs() as u32);
    if q >= 0 {
        n.checked_mul(p) == Some(m)
    } else {
        m.checked_mul(p) == Some(n)
    }
}

/// `|v| = m * 2^e` with `m` odd (`v` finite and not zero).
fn odd_binary(v: f64) -> (u128, i64) {
    let bits = v.to_bits() & !(1 << 63);
    let (frac, biased) = (bits & ((1 << 52) - 1), (bits >> 52) as i64);
    let (m, e) = if biased == 0 {
        (frac, -1074)
    } else {
        (frac | 1 << 52, biased - 1075)
    };
    let tz = m.trailing_zeros();
    (u128::from(m >> tz), e + i64::from(tz))
}

/// The exponent after `e` in `zmij`'s output: an optional sign, then decimal digits.
fn parse_exponent(t: &[u8]) -> i64 {
    let (sign, t) = match t.split_first() {
        Some((b'-', rest)) => (-1, rest),
        Some((b'+', rest)) => (1, rest),
        _ => (1, t),
    };
    sign * t.iter().fold(0i64, |e, &c| e * 10 + i64::from(c - b'0'))
}

/// Appends `v` with four decimals, as `format!("{v:.4}")` (and C's `%.4f`) writes it: the exact
/// value rounded half to even. For `|v| < 2^60`, `round(|v| * 10^4)` in integers (`|v| = m *
/// 2^e`, `m * 10^4 < 2^67`); larger values (never a measure's) through `format!`.
pub fn push_fixed4(out: &mut Vec<u8>, v: f64) {
    let Some((negative, q)) = fixed4(v) else {
        out.extend_from_slice(format!("{v:.4}").as_bytes());
        return;
    };
    if negative {
        out.push(b'-');
    }
    // Divided in 64 bits whenever it fits (|v| below 1.8e15): u128 division is a library call.
    let f = match u64::try_from(q) {
        Ok(q) => {
            push_int(out, q / 10_000);
            q % 10_000
        }
        Err(_) => {
            push_int(out, q / 10_000);
            (q % 10_000) as u64
        }
    };
    out.extend_from_slice(&decimals4(f as u16));
}

/// `|v|` in ten-thousandths, rounded half to even, and its sign; `None` (NaN, infinities,
/// `|v| >= 2^60`) for `format!`.
#[inline]
fn fixed4(v: f64) -> Option<(bool, u128)> {
    let bits = v.to_bits();
    let (frac, biased) = (bits & ((1 << 52) - 1), ((bits >> 52) & 0x7ff) as i64);
    let (m, e) = if biased == 0 {
        (frac, -1074)
    } else {
        (frac | 1 << 52, biased - 1075)
    };
    if biased == 0x7ff || e > 7 {
        return None;
    }
    let n = u128::from(m) * 10_000;
    let q = if e >= 0 {
        n << e
    } else if e <= -100 {
        0 // below 2^-47: 0.0000
    } else {
        let s = (-e) as u32;
        let (q, rem, half) = (n >> s, n & ((1 << s) - 1), 1u128 << (s - 1));
        q + u128::from(rem > half || (rem == half && q & 1 == 1))
    };
    Some((bits >> 63 == 1, q))
}

/// `.dddd`: `f` (below 10,000) in four digits.
#[inline]
fn decimals4(f: u16) -> [u8; 5] {
    [
        b'.',
        b'0' + (f / 1000) as u8,
        b'0' + (f / 100 % 10) as u8,
        b'0' + (f / 10 % 10) as u8,
        b'0' + (f % 10) as u8,
    ]
}

/// Appends `v` in decimal, as `format!("{v}")` writes it.
pub fn push_u64(out: &mut Vec<u8>, v: u64) {
    push_int(out, v);
}

/// Appends an integer in decimal (itoa).
fn push_int(out: &mut Vec<u8>, v: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

fn json_num(v: Option<f64>) -> serde_json::Value {
    match v {
        Some(v) => serde_json::Number::from_f64(v)
            .map_or(serde_json::Value::Null, serde_json::Value::Number),
        None => serde_json::Value::Null,
    }
}

fn trec_or_canonical(m: &Measure) -> String {
    m.trec_name().unwrap_or_else(|| m.to_string())
}

impl<'w> Writer<'w> {
    /// A writer for `measures` (the plan's order).
    pub fn new(out: &'w mut dyn Write, format: OutFormat, measures: &[Measure]) -> Self {
        let columns: Vec<Column> = (measures.iter().enumerate())
            .filter(|(_, m)| m.per_goal())
            .map(|(index, m)| Column {
                index,
                tsv: format!("\t{m}\t").into_bytes(),
                trec: trec_or_canonical(m),
                sum: m.aggregation() == Aggregation::Sum,
            })
            .collect();
        // A name met twice keeps its last column, as a map's insert does.
        let keys: std::collections::BTreeMap<String, usize> = (columns.iter())
            .map(|c| (measures[c.index].to_string(), c.index))
            .collect();
        let json_keys = (keys.into_iter())
            .map(|(name, index)| {
                let mut key = serde_json::to_vec(&name).expect("a string serializes");
                key.push(b':');
                (index, key)
            })
            .collect();
        Writer {
            out,
            format,
            measures: measures.to_vec(),
            rows_written: 0,
            extra: Vec::new(),
            lacking: Vec::new(),
            premises: None,
            columns,
            json_keys,
            buf: Vec::new(),
            head: Vec::new(),
        }
    }

    /// Values derived from the summary, named, to print after its aggregates (not in the trec
    /// format, which has no name for them).
    pub fn set_extra(&mut self, extra: Vec<(String, Option<f64>)>) {
        self.extra = extra;
    }

    /// The shards a partial merge lacks, one line (or json field) each after the summary: in
    /// the table `lacking shards 3-8 of 8 of run.txt (...)`; in tsv and trec a row named
    /// `lacking_shards(predictions=<fingerprint>,of=<N>,shards=<list>)` whose value is how many
    /// lack; in json the array `lacking_shards` (docs/FORMAT.md).
    pub fn set_lacking(&mut self, lacking: Vec<LackingShards>) {
        self.lacking = lacking;
    }

    /// What the premise protocol counted (with a corpus), as the json object `premises` after
    /// the goal counts ([`crate::PremiseReport::counts`]); the other formats leave it to the
    /// report on stderr.
    pub fn set_premises(&mut self, premises: &crate::PremiseReport) {
        self.premises = Some(premises.counts());
    }

    /// Readies whatever precedes the rows: written with the first row or the summary, so that an
    /// error before either (on the input's first line) leaves no partial document behind.
    pub fn begin(&mut self, per_goal: bool) -> io::Result<()> {
        let head = &mut self.head;
        head.clear();
        match self.format {
            OutFormat::Json if per_goal => write!(head, "{{\"per_goal\":["),
            OutFormat::Json => write!(head, "{{"),
            OutFormat::Table if per_goal => {
                write!(head, "{:<24}", "goal")?;
                for m in self.measures.iter().filter(|m| m.per_goal()) {
                    write!(head, " {:>12}", m.to_string())?;
                }
                writeln!(head)
            }
            _ => Ok(()),
        }
    }

    /// Writes what [`Writer::begin`] readied, once.
    fn write_head(&mut self) -> io::Result<()> {
        if !self.head.is_empty() {
            let head = std::mem::take(&mut self.head);
            self.out.write_all(&head)?;
        }
        Ok(())
    }

    /// Writes one goal's row.
    pub fn row(&mut self, row: &GoalRow) -> io::Result<()> {
        self.write_head()?;
        let goal = String::from_utf8_lossy(&row.goal);
        let buf = &mut self.buf;
        buf.clear();
        // The formats for programs are assembled in `buf` (what `fmt` would write, without its
        // machinery: it was most of a million-goal run's time on the thread that writes rows).
        let values = (self.columns.iter()).filter_map(|c| Some((c, *row.values.get(c.index)?)));
        match self.format {
            OutFormat::Tsv => {
                for (c, v) in values {
                    buf.extend_from_slice(goal.as_bytes());
                    buf.extend_from_slice(&c.tsv);
                    match v {
                        Some(v) => push_f64(buf, v),
                        None => buf.extend_from_slice(b"NA"),
                    }
                    buf.push(b'\n');
                }
                self.out.write_all(buf)?;
            }
            OutFormat::Trec => {
                for (c, v) in values {
                    if let Some(v) = v {
                        push_trec_line(buf, &c.trec, goal.as_bytes(), v, c.sum);
                    }
                }
                self.out.write_all(buf)?;
            }
            OutFormat::Table => {
                write!(self.out, "{goal:<24}")?;
                for (_, v) in values {
                    match v {
                        Some(v) => write!(self.out, " {v:>12.4}")?,
                        None => write!(self.out, " {:>12}", "-")?,
                    }
                }
                writeln!(self.out)?;
            }
            OutFormat::Json => {
                // `{"empty":..,"goal":..,"values":{..}}`: serde_json's object, keys sorted.
                if self.rows_written > 0 {
                    buf.push(b',');
                }
                buf.extend_from_slice(if row.empty {
                    b"{\"empty\":true,\"goal\":"
                } else {
                    b"{\"empty\":false,\"goal\":"
                });
                serde_json::to_writer(&mut *buf, &*goal)?;
                buf.extend_from_slice(b",\"values\":{");
                let mut first = true;
                for (index, key) in &self.json_keys {
                    // A row shorter than the measures has no key for the missing ones.
                    let Some(v) = row.values.get(*index) else {
                        continue;
                    };
                    if !first {
                        buf.push(b',');
                    }
                    first = false;
                    buf.extend_from_slice(key);
                    serde_json::to_writer(&mut *buf, &json_num(*v))?;
                }
                buf.extend_from_slice(b"}}");
                self.out.write_all(buf)?;
            }
        }
        self.rows_written += 1;
        Ok(())
    }

    /// Writes the summary and closes the document: the whole, then each stratum's (`--by`).
    pub fn finish(&mut self, summary: &Summary, per_goal: bool) -> io::Result<()> {
        let strata = summary.strata();
        self.write_head()?;
        match self.format {
            OutFormat::Tsv => {
                tsv_summary(self.out, "all", summary)?;
                for (m, v) in &self.extra {
                    writeln!(self.out, "all\t{m}\t{}", full(*v))?;
                }
                for l in &self.lacking {
                    writeln!(self.out, "all\t{}\t{}", lacking_name(l), l.missing_count())?;
                }
                for (label, sub) in &strata {
                    tsv_summary(self.out, &escape_field(label), sub)?;
                }
            }
            OutFormat::Trec => {
                let mut lines = Vec::new();
                trec_summary(&mut lines, "all", summary);
                for l in &self.lacking {
                    let name = lacking_name(l);
                    let pad = 22usize.saturating_sub(name.chars().count());
                    let n = l.missing_count();
                    lines.extend_from_slice(format!("{name}{:pad$}\tall\t{n}\n", "").as_bytes());
                }
                for (label, sub) in &strata {
                    trec_summary(&mut lines, &escape_field(label), sub);
                }
                self.out.write_all(&lines)?;
            }
            OutFormat::Table => {
                if per_goal {
                    writeln!(self.out)?;
                }
                table_summary(self.out, "measure", summary, &self.extra)?;
                for l in &self.lacking {
                    writeln!(self.out, "lacking {l}")?;
                }
                for (label, sub) in &strata {
                    writeln!(self.out)?;
                    table_summary(self.out, label, sub, &[])?;
                }
            }
            OutFormat::Json => {
                let (mut s, goals) = json_summary(summary);
                for (m, v) in &self.extra {
                    s.insert(m.clone(), json_num(*v));
                }
                if per_goal {
                    write!(self.out, "],")?;
                }
                write!(
                    self.out,
                    "\"summary\":{},\"goals\":{}",
                    serde_json::Value::Object(s),
                    goals
                )?;
                if !self.lacking.is_empty() {
                    let l: Vec<_> = self.lacking.iter().map(lacking_json).collect();
                    write!(
                        self.out,
                        ",\"lacking_shards\":{}",
                        serde_json::Value::Array(l)
                    )?;
                }
                if let Some(p) = &self.premises {
                    let m: serde_json::Map<String, serde_json::Value> =
                        p.iter().map(|&(k, v)| (k.to_string(), v.into())).collect();
                    write!(self.out, ",\"premises\":{}", serde_json::Value::Object(m))?;
                }
                if summary.is_stratified() {
                    let l: Vec<_> = (strata.iter())
                        .map(|(label, sub)| {
                            let (s, goals) = json_summary(sub);
                            serde_json::json!({"stratum": label, "summary": s, "goals": goals})
                        })
                        .collect();
                    write!(self.out, ",\"strata\":{}", serde_json::Value::Array(l))?;
                }
                writeln!(self.out, "}}")?;
            }
        }
        self.out.flush()
    }
}

/// A summary's tsv lines, `goal` in the goal column.
fn tsv_summary(out: &mut dyn Write, goal: &str, summary: &Summary) -> io::Result<()> {
    let evaluated = summary.counts().evaluated;
    let fraction = |coverage: f64| (evaluated > 0).then_some(coverage);
    for (m, a) in &summary.aggregates() {
        match *a {
            Aggregate::Depth {
                mean,
                median,
                coverage,
                ..
            } => {
                writeln!(out, "{goal}\t{m}\t{}", full(mean))?;
                writeln!(out, "{goal}\t{m}:median\t{}", full(median))?;
                writeln!(out, "{goal}\t{m}:coverage\t{}", full(fraction(coverage)))?;
            }
            Aggregate::Covered { mean, coverage, .. } => {
                writeln!(out, "{goal}\t{m}\t{}", full(mean))?;
                writeln!(out, "{goal}\t{m}:coverage\t{}", full(fraction(coverage)))?;
            }
            _ => writeln!(out, "{goal}\t{m}\t{}", full(a.headline_over(evaluated)))?,
        }
    }
    Ok(())
}

/// A stratum's label as one field of a tab-separated line: its backslashes, tabs, newlines and
/// carriage returns written `\\`, `\t`, `\n` and `\r` (a record attribute may hold any of them).
fn escape_field(label: &str) -> std::borrow::Cow<'_, str> {
    if !label.contains(['\\', '\t', '\n', '\r']) {
        return label.into();
    }
    let mut out = String::with_capacity(label.len() + 4);
    for c in label.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.into()
}

/// A summary's trec lines, `goal` in the goal column.
fn trec_summary(lines: &mut Vec<u8>, goal: &str, summary: &Summary) {
    let evaluated = summary.counts().evaluated;
    for (m, a) in &summary.aggregates() {
        if let Some(v) = a.headline_over(evaluated) {
            let sum = m.aggregation() == Aggregation::Sum;
            push_trec_line(lines, &trec_or_canonical(m), goal.as_bytes(), v, sum);
        }
    }
}

/// A summary's table section under the heading `title`, with `extra` values after it.
fn table_summary(
    out: &mut dyn Write,
    title: &str,
    summary: &Summary,
    extra: &[(String, Option<f64>)],
) -> io::Result<()> {
    let aggs = summary.aggregates();
    let c = summary.counts();
    let fraction = |coverage: f64| (c.evaluated > 0).then_some(coverage);
    // The names' column: 24 wide, or as wide as the longest name (or the title).
    let names: Vec<String> = aggs.iter().map(|(m, _)| m.to_string()).collect();
    let w = (names.iter().chain(extra.iter().map(|(m, _)| m)))
        .map(|m| m.chars().count())
        .chain([title.chars().count()])
        .fold(24, usize::max);
    writeln!(
        out,
        "{title:<w$} {:>12}",
        match summary.group_counts() {
            Some((groups, _)) => format!("mean of {groups} groups"),
            None => format!("mean of {}", c.evaluated),
        }
    )?;
    for ((_, a), m) in aggs.iter().zip(&names) {
        match *a {
            Aggregate::Depth {
                mean,
                median,
                coverage,
                reached,
            } => writeln!(
                out,
                "{m:<w$} {:>12}  median {}, reached by {reached} of {} goals ({})",
                mean.map_or("-".into(), |v| format!("{v:.2}")),
                median.map_or("-".into(), |v| format!("{v}")),
                c.evaluated,
                fraction(coverage).map_or("-".into(), |c| format!("{:.1}%", c * 100.0))
            )?,
            Aggregate::Covered {
                mean,
                coverage,
                reached,
            } => writeln!(
                out,
                "{m:<w$} {:>12}  over {reached} of {} goals ({})",
                mean.map_or("-".into(), |v| format!("{v:.4}")),
                c.evaluated,
                fraction(coverage).map_or("-".into(), |c| format!("{:.1}%", c * 100.0))
            )?,
            Aggregate::Sum(v) => writeln!(out, "{m:<w$} {:>12}", v as i64)?,
            _ => match a.headline_over(c.evaluated) {
                Some(v) => writeln!(out, "{m:<w$} {v:>12.4}")?,
                None => writeln!(out, "{m:<w$} {:>12}", "-")?,
            },
        }
    }
    for (m, v) in extra {
        writeln!(out, "{m:<w$} {:>12.4}", v.unwrap_or(0.0))?;
    }
    Ok(())
}

/// A summary's json: its measures' object and its goal counts (with `groups` when grouped).
fn json_summary(
    summary: &Summary,
) -> (
    serde_json::Map<String, serde_json::Value>,
    serde_json::Value,
) {
    let evaluated = summary.counts().evaluated;
    let fraction = |coverage: f64| (evaluated > 0).then_some(coverage);
    let mut s = serde_json::Map::new();
    for (m, a) in &summary.aggregates() {
        let v = match *a {
            Aggregate::Depth {
                mean,
                median,
                coverage,
                reached,
            } => serde_json::json!({
                "mean": json_num(mean), "median": json_num(median),
                "coverage": json_num(fraction(coverage)), "reached": reached
            }),
            Aggregate::Covered {
                mean,
                coverage,
                reached,
            } => serde_json::json!({
                "mean": json_num(mean), "coverage": json_num(fraction(coverage)),
                "reached": reached
            }),
            _ => json_num(a.headline_over(evaluated)),
        };
        s.insert(m.to_string(), v);
    }
    let mut goals = counts_json(&summary.counts());
    if let (Some((groups, _)), Some(map)) = (summary.group_counts(), goals.as_object_mut()) {
        map.insert("groups".into(), serde_json::json!(groups));
    }
    (s, goals)
}

/// What the premise protocol counted, as `eval` reports it on stderr (after `lemma-eval: `);
/// `None` when no goal was ranked under the corpus.
pub fn premises_text(p: &crate::PremiseReport) -> Option<String> {
    (p.goals > 0).then(|| {
        format!(
            "premises: {} goals ranked under the corpus, {} predicted premises masked \
         (inaccessible), {} not in the corpus, {} goals in files it does not list, {} relevant \
         premises not accessible{}",
            p.goals,
            p.masked,
            p.unknown_premises,
            p.unlisted_files,
            p.gold_inaccessible,
            match p.late_places {
                0 => String::new(),
                n => format!(", {n} goals past their file's last premise"),
            }
        )
    })
}

/// Writes a merged summary (`lemma-eval merge`) in `format`, as `eval` writes its summary: the
/// pooled lines of `eval --threshold T` when the summaries hold them, the shards a partial
/// merge lacks, and with a corpus what the premise protocol counted (json's `premises` object).
pub fn write_merged(
    out: &mut dyn Write,
    format: OutFormat,
    measures: &[Measure],
    summary: &Summary,
    lacking: Vec<LackingShards>,
    premises: Option<&crate::PremiseReport>,
) -> io::Result<()> {
    let mut w = Writer::new(out, format, measures);
    if let Some(p) = premises {
        w.set_premises(p);
    }
    let pooled: Vec<_> = (crate::curve::pooled_thresholds(summary).into_iter())
        .flat_map(|t| crate::curve::pooled_at_threshold(t, summary))
        .collect();
    w.set_extra(pooled);
    w.set_lacking(lacking);
    w.begin(false)?;
    w.finish(summary, false)
}

/// `lacking_shards(predictions=<fingerprint>,of=<N>,shards=<list>)`: a name of the tsv and trec
/// formats (no whitespace).
fn lacking_name(l: &LackingShards) -> String {
    format!(
        "lacking_shards(predictions={:016x},of={},shards={})",
        l.file.fingerprint,
        l.count,
        l.missing_text()
    )
}

fn lacking_json(l: &LackingShards) -> serde_json::Value {
    serde_json::json!({
        "predictions": l.file.name,
        "bytes": l.file.bytes,
        "fingerprint": format!("{:016x}", l.file.fingerprint),
        "of": l.count,
        "shards": l.missing.iter().map(|&(a, b)| [a, b]).collect::<Vec<_>>(),
        "missing": l.missing_count(),
    })
}

fn counts_json(c: &GoalCounts) -> serde_json::Value {
    let map = named_counts(c)
        .into_iter()
        .map(|(k, v)| (k.to_string(), serde_json::json!(v)));
    serde_json::Value::Object(map.collect())
}

/// The goal counts by name: `--format json`'s `goals` object and the Python package's
/// `Result.counts` name them so.
pub fn named_counts(c: &GoalCounts) -> [(&'static str, u64); 5] {
    [
        ("evaluated", c.evaluated),
        ("evaluated_empty", c.evaluated_empty),
        ("skipped_no_actual_set", c.skipped_no_actual),
        ("skipped_no_relevant", c.skipped_no_relevant),
        ("skipped_no_predictions", c.skipped_no_predictions),
    ]
}

/// What an evaluation warns of, a sentence each: the command prints them on stderr
/// (`lemma-eval: warning: ...`), the Python package raises them with `warnings.warn`.
///
/// - no goal of the predictions has an actual set (the wrong files, or goal names that differ);
/// - some goals of the predictions have no actual set (skipped, and not in any mean);
/// - with a corpus: goals in files it does not list, predicted premises it does not define,
///   relevant premises not accessible at their goal ([`crate::PremiseReport::warnings`]).
pub fn warnings(report: &Report, counts: &GoalCounts) -> Vec<String> {
    let mut w = Vec::new();
    let skipped = counts.skipped_no_actual;
    if skipped > 0 && skipped == report.goals_in_predictions {
        w.push(format!(
            "no goal of the predictions has an actual set (none of their {skipped} goals is in \
             the actual sets): are these the right files?"
        ));
    } else if skipped > 0 {
        w.push(format!(
            "{skipped} of the predictions' {} goals have no actual set: skipped, in no mean",
            report.goals_in_predictions
        ));
    }
    w.extend(report.premises.warnings());
    w.extend(report.groups.as_ref().and_then(crate::GroupReport::warning));
    w.extend(report.strata.iter().flat_map(crate::StrataReport::warnings));
    w
}

/// What became of the goals, in words (the report's first line, and `merge`'s).
pub fn counts_text(counts: &GoalCounts) -> String {
    format!(
        "{} goals evaluated ({} with no predictions, evaluated as empty); skipped: {} with no actual set, \
         {} with no relevant lemma (R = 0), {} with no predictions",
        counts.evaluated,
        counts.evaluated_empty,
        counts.skipped_no_actual,
        counts.skipped_no_relevant,
        counts.skipped_no_predictions,
    )
}

/// The short report for stderr.
pub fn report_text(report: &Report, counts: &GoalCounts) -> String {
    let secs = report.elapsed.as_secs_f64().max(1e-9);
    // Text inputs count lines; stores and matrices (no lines) count ranked entries.
    let (count, unit) = if report.lines == 0 && report.items > 0 {
        (report.items, "ranked entries")
    } else {
        (report.lines, "lines")
    };
    let mut s = format!("lemma-eval: {}\n", counts_text(counts));
    for w in warnings(report, counts) {
        s += &format!("lemma-eval: warning: {w}\n");
    }
    if let Some(g) = &report.groups {
        s += &format!(
            "lemma-eval: groups: the summary is the mean over {} groups (by {}) of their goals' \
             means, over {} goals\n",
            g.groups, g.by, g.goals
        );
    }
    if let Some(p) = premises_text(&report.premises) {
        s += &format!("lemma-eval: {p}\n");
    }
    s += &format!(
        "lemma-eval: {} {unit}, {:.1} MB of {} in {:.3} s ({:.2} M {unit}/s, {:.0} MB/s, {} threads); {} duplicates \
         dropped, {} lemmas beyond --depth, {} goals re-sorted{}\n",
        count,
        report.bytes as f64 / 1e6,
        report.path.display(),
        secs,
        count as f64 / secs / 1e6,
        report.bytes as f64 / secs / 1e6,
        report.threads,
        report.duplicates_dropped,
        report.beyond_depth,
        report.goals_reordered,
        match &report.spill {
            Some(r) => format!("; grouped by goal (--regroup): {r}"),
            None => String::new(),
        },
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn shown(v: f64) -> String {
        let mut out = Vec::new();
        push_f64(&mut out, v);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn floats_are_written_as_display_writes_them() {
        for v in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            1000.0,
            999.9969,
            0.1,
            1e-7,
            1.5e-5,
            1e15,
            1e16,
            1e21,
            1.2345678901234568e20,
            5e-324,
            -5e-324,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            f64::EPSILON,
            0.018_614_130_434_782_61,
            1.0 / 3.0,
            // 270289049155884.125, halfway between two candidates of 17 digits: `Display` rounds up
            // (...884.13).
            -2_162_312_393_247_073.0 / 8.0,
            2_162_312_393_247_073.0 / 8.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            assert_eq!(shown(v), format!("{v}"), "{v:e}");
        }
        // Every power of ten, three times it and the next float up, where the layout changes.
        for e in -325..=309 {
            let p = format!("1e{e}").parse::<f64>().unwrap();
            for v in [p, p * 3.0, -p, f64::from_bits(p.to_bits().wrapping_add(1))] {
                assert_eq!(shown(v), format!("{v}"), "{v:e}");
            }
        }
        let mut out = b"x".to_vec();
        push_u64(&mut out, u64::MAX);
        push_f64(&mut out, 2.5);
        push_u64(&mut out, 0);
        assert_eq!(out, format!("x{}2.50", u64::MAX).as_bytes());
    }

    #[test]
    fn four_decimals_as_fmt_writes_them() {
        for v in [
            0.0,
            -0.0,
            -1e-300,
            0.5,
            1.0 / 3.0,
            0.03125,  // 312.5 ten-thousandths, exactly: to even, 0.0312
            0.09375,  // 937.5: 0.0938
            -0.03125, // -0.0312
            0.99995,
            123456.78905,
            2f64.powi(59) * 1.5,
            2f64.powi(61),
            1e300,
            5e-324,
            f64::MAX,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let mut out = Vec::new();
            push_fixed4(&mut out, v);
            assert_eq!(String::from_utf8(out).unwrap(), format!("{v:.4}"), "{v:e}");
        }
    }

    /// A trec line as `fmt` writes it (the reference).
    fn trec_line(out: &mut dyn Write, m: &Measure, goal: &str, v: f64) -> io::Result<()> {
        if m.aggregation() == Aggregation::Sum {
            writeln!(out, "{:<22}\t{goal}\t{}", trec_or_canonical(m), v as i64)
        } else {
            writeln!(out, "{:<22}\t{goal}\t{v:.4}", trec_or_canonical(m))
        }
    }

    /// The rows as `Writer::row` wrote them with `fmt` and serde_json's `json!` (the reference).
    fn reference_row(
        format: OutFormat,
        measures: &[Measure],
        row: &GoalRow,
        first: bool,
    ) -> String {
        let goal = String::from_utf8_lossy(&row.goal);
        let pairs = measures
            .iter()
            .zip(&row.values)
            .filter(|(m, _)| m.per_goal());
        let mut out = Vec::new();
        match format {
            OutFormat::Tsv => {
                for (m, v) in pairs {
                    writeln!(out, "{goal}\t{m}\t{}", full(*v)).unwrap();
                }
            }
            OutFormat::Trec => {
                for (m, v) in pairs {
                    if let Some(v) = v {
                        trec_line(&mut out, m, &goal, *v).unwrap();
                    }
                }
            }
            OutFormat::Json => {
                let values: serde_json::Map<String, serde_json::Value> =
                    pairs.map(|(m, v)| (m.to_string(), json_num(*v))).collect();
                let obj = serde_json::json!({ "goal": goal, "empty": row.empty, "values": values });
                if !first {
                    write!(out, ",").unwrap();
                }
                write!(out, "{obj}").unwrap();
            }
            OutFormat::Table => unreachable!(),
        }
        String::from_utf8(out).unwrap()
    }

    fn value() -> impl Strategy<Value = Option<f64>> {
        prop_oneof![
            Just(None),
            (0u32..=64, 1u32..=64).prop_map(|(a, b)| Some(f64::from(a.min(b)) / f64::from(b))),
            (0u32..100_000).prop_map(|n| Some(f64::from(n))),
            any::<u64>().prop_map(|b| Some(f64::from_bits(b)).filter(|v| v.is_finite())),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        /// Any bit pattern, values halfway between two results (`k / 32`, `k / 2^20`) and
        /// ratios of small integers (a measure's values).
        #[test]
        fn any_value_has_four_decimals_as_fmt_writes_them(bits in any::<u64>(), k in any::<i32>(), a in 0u32..10_000, b in 1u32..10_000) {
            for v in [f64::from_bits(bits), f64::from(k) / 32.0, f64::from(k) / 1_048_576.0, f64::from(a) / f64::from(b)] {
                let mut out = Vec::new();
                push_fixed4(&mut out, v);
                prop_assert_eq!(String::from_utf8(out).unwrap(), format!("{v:.4}"));
                let mut text = b"x".to_vec();
                push_fixed4(&mut text, v);
                prop_assert_eq!(String::from_utf8(text).unwrap(), format!("x{v:.4}"));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        /// Rows of any values (undefined ones too) for measures that are summed, averaged and
        /// not per goal, rows shorter than the measures too, under goal names that need escaping
        /// or are not UTF-8: the tsv, trec and json rows are what `fmt` and serde_json wrote.
        #[test]
        fn rows_are_written_as_fmt_and_serde_write_them(
            rows in prop::collection::vec(
                (prop::sample::select(vec![&b"g1"[..], b"\"x\\y", b"\xff\xfeg", "é".as_bytes(), b""]),
                 prop::collection::vec(value(), 0..=7), any::<bool>()),
                1..6),
        ) {
            let measures = Measure::parse_all(["AP", "NumRel", "P@10", "GM_AP", "nDCG@10", "R@1", "NumRet"]).unwrap();
            prop_assert_eq!(measures.len(), 7);
            for format in [OutFormat::Tsv, OutFormat::Trec, OutFormat::Json] {
                let (mut got, mut want) = (Vec::new(), String::new());
                let mut w = Writer::new(&mut got, format, &measures);
                for (i, (goal, values, empty)) in rows.iter().enumerate() {
                    let row = GoalRow { goal: goal.to_vec(), values: values.clone(), empty: *empty };
                    w.row(&row).unwrap();
                    want += &reference_row(format, &measures, &row, i == 0);
                }
                prop_assert_eq!(String::from_utf8_lossy(&got), want, "{:?}", format);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        /// Any bit pattern (every exponent, subnormals, NaNs) and scores of a few decimals.
        #[test]
        fn any_float_is_written_as_display_writes_it(
            bits in any::<u64>(),
            int in 0u64..1_000_000_000,
            places in 0i32..12,
            m in 0u64..1 << 53,
            e in -80i32..80,
        ) {
            let v = f64::from_bits(bits);
            prop_assert_eq!(shown(v), format!("{v}"));
            let d = int as f64 / 10f64.powi(places);
            prop_assert_eq!(shown(d), format!("{d}"));
            // Integers times small powers of two: exact decimals of 17 to 20 digits, among them
            // values halfway between two shortest candidates.
            let h = m as f64 * 2f64.powi(e);
            prop_assert_eq!(shown(h), format!("{h}"));
            prop_assert_eq!(shown(-h), format!("{}", -h));
        }
    }
}
