//! Prediction lines: TREC run lines and JSONL prediction records.

use crate::fields::{parse_score, show, split_line_checked};
use crate::jsonl::{scan_prediction, RecordSpans};
use serde::Deserialize;
use std::borrow::Cow;

/// One TREC run line `goal Q0 lemma rank score tag` (the rank is ignored, as trec_eval ignores it).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct RunLine<'a> {
    /// Goal id.
    pub goal: &'a [u8],
    /// Lemma name.
    pub lemma: &'a [u8],
    /// Score (finite; -0.0 normalised to 0.0).
    pub score: f64,
    /// Run tag.
    pub tag: &'a [u8],
}

/// A run line's fields before its score is parsed: the score is still text, which the caller
/// parses ([`parse_score`], with [`score_error`] as the message) or compares as text
/// ([`crate::ScoreText`]).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct RunFields<'a> {
    /// Goal id.
    pub goal: &'a [u8],
    /// Lemma name.
    pub lemma: &'a [u8],
    /// The score field (not yet checked).
    pub score: &'a [u8],
    /// Run tag.
    pub tag: &'a [u8],
}

/// Parses a run line. `Ok(None)` for blank and `#` comment lines. The error says what was expected.
#[inline]
pub fn parse_run_line(line: &[u8]) -> Result<Option<RunLine<'_>>, String> {
    parse_run_at(line, 0).0
}

/// Parses the run line that starts at `start` in `data`; also returns where the line ends (its
/// `\n`, or `data.len()`), so a caller walks a buffer with one scan per line.
#[inline(always)]
pub fn parse_run_at(data: &[u8], start: usize) -> (Result<Option<RunLine<'_>>, String>, usize) {
    let (fields, end) = split_run_at(data, start);
    let line = match fields {
        Ok(Some(f)) => match parse_score(f.score) {
            Some(score) => Ok(Some(RunLine {
                goal: f.goal,
                lemma: f.lemma,
                score,
                tag: f.tag,
            })),
            None => Err(score_error(f.score)),
        },
        Ok(None) => Ok(None),
        Err(e) => Err(e),
    };
    (line, end)
}

/// The error for a score field that is not a finite number.
#[cold]
pub fn score_error(field: &[u8]) -> String {
    format!(
        "expected a finite number as the score (field 5), found `{}`",
        show(field)
    )
}

/// Splits the run line that starts at `start` in `data` into its fields and checks all but the
/// score; also returns where the line ends. `Ok(None)` for blank and `#` comment lines. Chooses
/// the SIMD width per call; a loop over many lines chooses once ([`visit_run_lines`]).
#[inline(always)]
pub fn split_run_at(data: &[u8], start: usize) -> (Result<Option<RunFields<'_>>, String>, usize) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { split_run_with::<true>(data, start) };
    }
    // SAFETY: no AVX2 asked for.
    unsafe { split_run_with::<false>(data, start) }
}

/// [`split_run_at`] with the SIMD width chosen by the caller, once (for example a line loop
/// compiled for AVX2): `AVX2`, two 32-byte compares per mask, else SSE2 (x86_64) or the general
/// splitter alone (other targets).
///
/// # Safety
/// With `AVX2`, the CPU must have AVX2.
#[inline(always)]
pub(crate) unsafe fn split_run_with<const AVX2: bool>(
    data: &[u8],
    start: usize,
) -> (Result<Option<RunFields<'_>>, String>, usize) {
    // SAFETY: the caller's contract.
    #[cfg(target_arch = "x86_64")]
    if let Some(r) = unsafe { simple_run_line::<AVX2>(data, start) } {
        return r;
    }
    split_run_general(data, start)
}

/// [`split_run_at`] for any line shape: the general splitter, then the field checks.
#[inline(always)]
fn split_run_general(data: &[u8], start: usize) -> (Result<Option<RunFields<'_>>, String>, usize) {
    let mut f = [&b""[..]; 6];
    let split = split_line_checked(data, start, &mut f);
    run_fields(split, f)
}

/// A run line of the common shape (see [`crate::fields::simd::simple_line`]) with at least six
/// fields: its fields are between consecutive spaces, found by bit arithmetic on the space mask.
/// `None`: any other line (a comment, fewer fields, another shape), for the general path.
///
/// # Safety
/// With `AVX2`, the CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn simple_run_line<const AVX2: bool>(
    data: &[u8],
    start: usize,
) -> Option<(Result<Option<RunFields<'_>>, String>, usize)> {
    // SAFETY: the caller's contract.
    let (mut spaces, e) = unsafe { crate::fields::simd::simple_line::<AVX2>(data, start) }?;
    if spaces.count_ones() < 5 || data[start] == b'#' {
        return None;
    }
    let mut next = || {
        let p = spaces.trailing_zeros() as usize;
        spaces &= spaces.wrapping_sub(1);
        p
    };
    let (p0, p1, p2, p3, p4) = (next(), next(), next(), next(), next());
    // With no sixth space `next` gives 64: the tag ends at the newline.
    let p5 = next().min(e as usize);
    // SAFETY: p0 < p1 < ... < p5 <= e and `start + e < data.len()` (the newline is in the
    // window that `simple_line` read from `data`).
    let field = |a: usize, b: usize| unsafe { data.get_unchecked(start + a..start + b) };
    Some((
        Ok(Some(RunFields {
            goal: field(0, p0),
            lemma: field(p1 + 1, p2),
            score: field(p3 + 1, p4),
            tag: field(p4 + 1, p5),
        })),
        start + e as usize,
    ))
}

/// A run line's fields from the splitter's output.
#[inline(always)]
fn run_fields<'a>(
    ((count, end), utf8): ((usize, usize), Result<(), usize>),
    f: [&'a [u8]; 6],
) -> (Result<Option<RunFields<'a>>, String>, usize) {
    if let Err(col) = utf8 {
        return (
            Err(format!(
                "invalid UTF-8 at column {}, expected UTF-8 text",
                col + 1
            )),
            end,
        );
    }
    if count == 0 || f[0].first() == Some(&b'#') {
        return (Ok(None), end);
    }
    if count < 6 {
        return (
            Err(format!(
                "expected 6 fields (goal Q0 lemma rank score tag), found {count}"
            )),
            end,
        );
    }
    (
        Ok(Some(RunFields {
            goal: f[0],
            lemma: f[2],
            score: f[4],
            tag: f[5],
        })),
        end,
    )
}

/// A goal's predictions from one JSONL record.
#[derive(Clone, Debug, PartialEq)]
pub struct Prediction<'a> {
    /// Goal id.
    pub goal: Cow<'a, str>,
    /// Lemmas, in file order.
    pub lemmas: Vec<Cow<'a, str>>,
    /// Scores, parallel to `lemmas`, when given.
    pub scores: Option<Vec<f64>>,
}

#[derive(Deserialize)]
struct PredictionRecord<'a> {
    #[serde(borrow)]
    goal_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    retrieved_premises: Option<Vec<PremiseRef<'a>>>,
    #[serde(borrow)]
    ranked: Option<Vec<PremiseRef<'a>>>,
    scores: Option<Vec<f64>>,
}

/// A premise in JSON: a plain name, or an object with `full_name` (LeanDojo). Shared by the actual
/// sets and the predictions.
#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum PremiseRef<'a> {
    #[serde(borrow)]
    Name(Cow<'a, str>),
    Object {
        #[serde(borrow)]
        full_name: Cow<'a, str>,
    },
}

impl<'a> PremiseRef<'a> {
    pub(crate) fn into_name(self) -> Cow<'a, str> {
        match self {
            PremiseRef::Name(n) => n,
            PremiseRef::Object { full_name } => full_name,
        }
    }
}

/// Parses `{"goal_id": "...", "retrieved_premises": [...], "scores": [...]}` (`ranked` is accepted
/// for the list; names may be objects with `full_name`; scores are optional).
///
/// Records of the common shape (string names without escapes, numbers, the known keys) are read
/// by a scanner that borrows the names (the crate's `jsonl` module); every other line by
/// serde_json, which also words every error.
pub fn parse_prediction_line(line: &str) -> Result<Prediction<'_>, String> {
    parse_prediction_with(line, true)
}

/// [`parse_prediction_line`] for a caller that does not read the scores: the same record and the
/// same errors (the scores are checked: numbers, finite, as many as the names), but `scores` is
/// `None` and they are not converted, which saves a fifth of a common record's reading.
pub fn parse_prediction_unscored(line: &str) -> Result<Prediction<'_>, String> {
    parse_prediction_with(line, false)
}

fn parse_prediction_with(line: &str, read_scores: bool) -> Result<Prediction<'_>, String> {
    thread_local! {
        /// The scanner's buffers, reused from call to call.
        static SPANS: std::cell::RefCell<RecordSpans> = std::cell::RefCell::default();
    }
    let scanned = SPANS.with_borrow_mut(|r| {
        scan_prediction(line, read_scores, r).then(|| Prediction {
            goal: Cow::Borrowed(r.goal.of(line)),
            lemmas: r.names.iter().map(|n| Cow::Borrowed(n.of(line))).collect(),
            scores: (read_scores && r.scored).then(|| r.scores.clone()),
        })
    });
    if let Some(p) = scanned {
        return Ok(p);
    }
    parse_prediction_general(line, read_scores)
}

/// [`parse_prediction_line`] (or, `read_scores` false, [`parse_prediction_unscored`]) by
/// serde_json alone: for a caller whose own [`crate::scan_prediction`] gave up on the line, so
/// that it is not scanned a second time. The same record and the same errors.
pub fn parse_prediction_general(line: &str, read_scores: bool) -> Result<Prediction<'_>, String> {
    let mut p = parse_prediction_serde(line)?;
    if !read_scores {
        p.scores = None;
    }
    Ok(p)
}

/// [`parse_prediction_line`] by serde_json alone.
fn parse_prediction_serde(line: &str) -> Result<Prediction<'_>, String> {
    let rec: PredictionRecord = serde_json::from_str(line)
        .map_err(|e| format!("expected a JSON object with goal_id and retrieved_premises: {e}"))?;
    fn names(l: Vec<PremiseRef<'_>>) -> Vec<Cow<'_, str>> {
        l.into_iter().map(PremiseRef::into_name).collect()
    }
    let scores = (rec.scores).map(|v| v.into_iter().map(|x| x + 0.0).collect());
    prediction(
        rec.goal_id,
        rec.retrieved_premises.map(names),
        rec.ranked.map(names),
        scores,
    )
}

/// A record's fields, checked: a goal, one list, as many scores as names.
fn prediction<'a>(
    goal: Option<Cow<'a, str>>,
    retrieved_premises: Option<Vec<Cow<'a, str>>>,
    ranked: Option<Vec<Cow<'a, str>>>,
    scores: Option<Vec<f64>>,
) -> Result<Prediction<'a>, String> {
    let goal = goal.ok_or("expected a `goal_id` field")?;
    let lemmas = match (retrieved_premises, ranked) {
        (Some(l), None) | (None, Some(l)) => l,
        (Some(_), Some(_)) => {
            return Err("expected one of `retrieved_premises` and `ranked`, found both".into())
        }
        (None, None) => return Err("expected a `retrieved_premises` (or `ranked`) list".into()),
    };
    // Names are fields, as in a TREC run: whitespace would end them where the duplicate check
    // and the output read them.
    let spaced = |n: &str| crate::fields::holds_delim(n.as_bytes());
    if spaced(&goal) {
        return Err(format!(
            "expected a `goal_id` without whitespace, found `{}`",
            show(goal.as_bytes())
        ));
    }
    if let Some(n) = lemmas.iter().find(|n| spaced(n)) {
        return Err(format!(
            "expected premise names without whitespace, found `{}`",
            show(n.as_bytes())
        ));
    }
    if let Some(s) = &scores {
        if s.len() != lemmas.len() {
            return Err(format!(
                "expected as many scores as premises, found {} scores for {} premises",
                s.len(),
                lemmas.len()
            ));
        }
    }
    Ok(Prediction {
        goal,
        lemmas,
        scores,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn run_lines() {
        let l = parse_run_line(b"q1 Q0 Nat.add_comm 1 0.75 myrun extra")
            .unwrap()
            .unwrap();
        assert_eq!(
            (l.goal, l.lemma, l.score, l.tag),
            (&b"q1"[..], &b"Nat.add_comm"[..], 0.75, &b"myrun"[..])
        );
        assert_eq!(parse_run_line(b"   ").unwrap(), None);
        assert_eq!(parse_run_line(b"# q Q0 a 1 1 t").unwrap(), None);
        assert_eq!(
            parse_run_line(b"q Q0 a 1").unwrap_err(),
            "expected 6 fields (goal Q0 lemma rank score tag), found 4"
        );
        assert!(parse_run_line(b"q Q0 a 1 NaN t")
            .unwrap_err()
            .contains("finite number"));
        assert!(parse_run_line(b"q Q0 a 1 inf t")
            .unwrap_err()
            .contains("found `inf`"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// The single-space fast path and the general splitter read every line alike: fields,
        /// line end and error, for lines of random fields and separators, at random offsets in
        /// buffers of random length (near the end of a buffer only the general path runs).
        #[test]
        fn fast_and_general_paths_agree(
            fields in proptest::collection::vec(
                proptest::sample::select(vec![
                    "g1", "Q0", "0", "Nat.add_comm", "1", "0.5", "999.9969", "-2", "1e3", "x",
                    "run", "Q0", "g2", "Nat.add_comm", "2", "0.25", "999.9939", "-2.5", "tag",
                    "#", "#c", "NaN", "1.", "é", "abcdefghijklmnopqrstuvwxyz0123456789",
                ]),
                0..9,
            ),
            seps in proptest::collection::vec(
                proptest::sample::select(vec![" "; 30].into_iter().chain(["  ", "\t", " \r"]).collect::<Vec<_>>()), 10),
            lead in proptest::bool::weighted(0.1),
            trail in proptest::bool::weighted(0.1),
            pad in 0usize..80,
            offset in 0usize..70,
        ) {
            let mut line = String::new();
            if lead {
                line.push(' ');
            }
            for (i, f) in fields.iter().enumerate() {
                if i > 0 {
                    line.push_str(seps[i]);
                }
                line.push_str(f);
            }
            if trail {
                line.push(' ');
            }
            let mut data = vec![b'z'; offset];
            data.extend_from_slice(line.as_bytes());
            data.push(b'\n');
            data.extend(std::iter::repeat_n(b'y', pad));
            let fast = split_run_at(&data, offset);
            let general = split_run_general(&data, offset);
            proptest::prop_assert_eq!(fast, general);
        }
    }

    #[test]
    fn jsonl_predictions() {
        let p = parse_prediction_line(
            r#"{"goal_id": "g", "retrieved_premises": ["a", "b"], "scores": [0.5, -0.0]}"#,
        )
        .unwrap();
        assert_eq!(p.goal, "g");
        assert_eq!(p.lemmas, vec!["a", "b"]);
        assert_eq!(p.scores, Some(vec![0.5, 0.0]));
        let p =
            parse_prediction_line(r#"{"goal_id": "g", "ranked": [{"full_name": "x"}]}"#).unwrap();
        assert_eq!((p.lemmas.len(), p.scores), (1, None));
        assert!(
            parse_prediction_line(r#"{"goal_id": "g", "ranked": ["a"], "scores": []}"#)
                .unwrap_err()
                .contains("0 scores for 1 premises")
        );
        assert!(parse_prediction_line(r#"{"goal_id": "g"}"#)
            .unwrap_err()
            .contains("retrieved_premises"));
        assert!(parse_prediction_line("{")
            .unwrap_err()
            .starts_with("expected a JSON object"));
    }

    #[test]
    fn names_with_whitespace_are_refused() {
        for (line, want) in [
            (
                r#"{"goal_id":"g","ranked":["a","n0 z"]}"#,
                "expected premise names without whitespace, found `n0 z`",
            ),
            (
                r#"{"goal_id":"g","ranked":["a\tb"]}"#,
                "expected premise names without whitespace, found `a\tb`",
            ),
            (
                r#"{"goal_id":"g 1","ranked":["a"]}"#,
                "expected a `goal_id` without whitespace, found `g 1`",
            ),
        ] {
            assert_eq!(parse_prediction_line(line).unwrap_err(), want, "{line}");
            assert_eq!(parse_prediction_unscored(line).unwrap_err(), want, "{line}");
        }
    }

    /// Whether the scanner takes `line`.
    fn scans(line: &str, read_scores: bool) -> bool {
        scan_prediction(line, read_scores, &mut RecordSpans::default())
    }

    /// A JSON value of the shapes records hold, and of shapes the scanner leaves to serde.
    fn json_value() -> impl Strategy<Value = String> {
        let name = prop_oneof![
            8 => "[A-Za-z_.][A-Za-z0-9_.']{0,12}",
            1 => "[a\\\\\" \t\u{e9}\u{1F600}]{0,4}",
        ]
        .prop_map(|s| serde_json::to_string(&s).unwrap());
        let number = prop_oneof![
            any::<f64>()
                .prop_filter("finite", |x| x.is_finite())
                .prop_map(|x| x.to_string()),
            (-1000i64..1000).prop_map(|x| x.to_string()),
            "-?(0|[1-9][0-9]{0,20})(\\.[0-9]{1,25})?([eE][+-]?[0-9]{1,3})?",
            Just("1e400".to_string()),
            // Past f64's range without an exponent (309 digits), and just inside it.
            Just("9".repeat(309)),
            Just(format!("1{}", "0".repeat(307))),
            Just(format!("1{}.5", "0".repeat(308))),
            Just("-0".to_string()),
            Just("01".to_string()),
            Just("1.".to_string()),
            Just("NaN".to_string()),
        ];
        let numbers =
            prop::collection::vec(number, 0..5).prop_map(|v| format!("[{}]", v.join(",")));
        // Values of keys the scanner skips: literals, numbers, names, nested arrays and objects
        // (some not JSON: a bare word, a trailing comma, a key that is not a string).
        let other = prop_oneof![
            Just("true".to_string()),
            Just("false".to_string()),
            Just("tru".to_string()),
            Just("{}".to_string()),
            Just("[[],[{}]]".to_string()),
            Just("[1,]".to_string()),
            Just("{1:2}".to_string()),
            name.clone(),
            numbers.clone(),
            (name.clone(), numbers.clone(), name.clone())
                .prop_map(|(k, v, n)| format!("{{{k}: [{v}, {{\"x\": {n}}}], \"n\": null}}")),
        ];
        let names = prop::collection::vec(
            prop_oneof![
                6 => name.clone(),
                1 => name.clone().prop_map(|n| format!("{{\"full_name\": {n}}}")),
                // Premise objects with other keys, before or after full_name, or without it.
                1 => (name.clone(), other.clone(), 0..3u8).prop_map(|(n, v, at)| match at {
                    0 => format!("{{\"path\": {v}, \"full_name\": {n}}}"),
                    1 => format!("{{\"full_name\": {n},\"code\":{v}}}"),
                    _ => format!("{{\"code\": {v}}}"),
                }),
            ],
            0..5,
        )
        .prop_map(|v| format!("[{}]", v.join(", ")));
        prop_oneof![names, numbers, name, other, Just("null".to_string())]
    }

    fn record() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            Just("goal_id"),
            Just("retrieved_premises"),
            Just("ranked"),
            Just("scores"),
            Just("other"),
            Just("premises"),
        ];
        (
            prop::collection::vec((key, json_value()), 0..5),
            "[ \t]{0,2}",
            0..3u8,
        )
            .prop_map(|(fields, ws, damage)| {
                let body: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{ws}\"{k}\"{ws}:{ws}{v}"))
                    .collect();
                let mut line = format!("{{{}{ws}}}", body.join(","));
                match damage {
                    1 => line.push_str(" x"),
                    2 => {
                        line.pop();
                    }
                    _ => {}
                }
                line
            })
    }

    /// A number out of f64's range in a value the scanner skips (a premise object's other key):
    /// serde's error, not a record (a case the property test below once drew).
    #[test]
    fn a_number_out_of_range_in_a_skipped_value_is_serdes_error() {
        let line = r#"{"goal_id":"A","retrieved_premises":[{"path": [1E310], "full_name": "A"}]}"#;
        let want = parse_prediction_serde(line);
        assert!(
            want.as_ref()
                .is_err_and(|e| e.contains("number out of range")),
            "{want:?}"
        );
        assert_eq!(parse_prediction_line(line), want);
        let fine = line.replace("1E310", "1E300");
        assert_eq!(parse_prediction_line(&fine), parse_prediction_serde(&fine));
        assert!(parse_prediction_line(&fine).is_ok());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        /// The scanner and serde_json read every record alike: the same values, or (the scanner
        /// having left the line to serde) the same error.
        #[test]
        fn scanner_reads_records_as_serde_does(line in record()) {
            let got = parse_prediction_line(&line);
            let want = parse_prediction_serde(&line);
            prop_assert_eq!(&got, &want, "{}", line);
            // Unscored: the same record without its scores, or the same error.
            let unscored = want.map(|p| Prediction { scores: None, ..p });
            prop_assert_eq!(parse_prediction_unscored(&line), unscored, "{}", line);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Records of the common shape are the scanner's, with serde's values: names, and
        /// numbers of every JSON form (the last bit of each parsed f64 included).
        #[test]
        fn scanner_takes_common_records_with_serdes_values(
            goal in "[A-Za-z0-9_.]{1,10}",
            items in prop::collection::vec(
                ("[A-Za-z0-9_.']{1,16}", prop_oneof![
                    any::<f64>().prop_filter("finite", |x| x.is_finite()).prop_map(|x| x.to_string()),
                    "-?(0|[1-9][0-9]{0,20})(\\.[0-9]{1,25})?([eE][+-]?[0-9]{1,2})?",
                ]),
                0..20,
            ),
            ranked in any::<bool>(),
            objects in any::<bool>(),
        ) {
            // Plain names, or LeanDojo's premise objects by `full_name`.
            let names: Vec<String> = (items.iter())
                .map(|(n, _)| match objects {
                    false => format!("\"{n}\""),
                    true => format!("{{\"full_name\": \"{n}\"}}"),
                })
                .collect();
            let scores: Vec<&str> = items.iter().map(|(_, s)| s.as_str()).collect();
            let list = if ranked { "ranked" } else { "retrieved_premises" };
            let line = format!(
                "{{\"goal_id\": \"{goal}\", \"{list}\": [{}], \"scores\": [{}]}}",
                names.join(", "),
                scores.join(", ")
            );
            prop_assert!(scans(&line, true), "{}", line);
            let got = parse_prediction_line(&line);
            prop_assert!(got.is_ok());
            prop_assert_eq!(got, parse_prediction_serde(&line), "{}", line);
        }
    }

    /// One set of buffers reads record after record: each record's own names and scores, however
    /// long the one before.
    #[test]
    fn scanner_reuses_its_buffers() {
        let mut r = RecordSpans::default();
        let long = r#"{"goal_id": "g1", "retrieved_premises": ["a", "bc", "d.e"], "scores": [3, 2.5, -1e2]}"#;
        assert!(scan_prediction(long, true, &mut r));
        assert_eq!(r.goal.of(long), "g1");
        let names: Vec<&str> = r.names.iter().map(|n| n.of(long)).collect();
        assert_eq!(names, ["a", "bc", "d.e"]);
        assert_eq!(r.scores, [3.0, 2.5, -100.0]);
        assert!(r.scored);
        let short = r#"{"ranked":["x"],"goal_id":"g2"}"#;
        assert!(scan_prediction(short, true, &mut r));
        assert_eq!(r.goal.of(short), "g2");
        assert_eq!(r.names.len(), 1);
        assert_eq!(r.names[0].of(short), "x");
        assert!(r.scores.is_empty() && !r.scored);
        // Unscored: counted, not kept.
        assert!(scan_prediction(long, false, &mut r));
        assert!(r.scores.is_empty() && r.scored);
        assert_eq!(r.names.len(), 3);
    }

    #[test]
    fn scanner_takes_the_common_shape() {
        for line in [
            r#"{"goal_id":"g0","retrieved_premises":["A.b_1","C.d'"],"scores":[1000.0,999.9958]}"#,
            r#" { "scores" : [ 1 , -2.5e-3 ] , "ranked" : [ "x" , "y" ] , "goal_id" : "g" } "#,
            r#"{"goal_id":"g","ranked":[]}"#,
            // LeanDojo's premise objects, by `full_name` alone, beside plain names.
            r#"{"goal_id":"g","ranked":[{"full_name":"x"}, { "full_name" : "y" } ,"z"]}"#,
            // Other keys skipped, of the record and of premise objects.
            r#"{"goal_id":"g","ranked":[{"full_name":"x","path":"p q"}],"extra":1}"#,
            r#"{"goal_id":"g","ranked":[{"code":{"a":[1,{"b":null}]},"full_name":"x"}],"s":[true,false]}"#,
            r#"{"premises":{"a":1},"goal_id":"g","ranked":["a"],"e":1e999}"#,
        ] {
            assert!(scans(line, true), "{line}");
            assert!(scans(line, false), "{line}");
            assert_eq!(parse_prediction_line(line), parse_prediction_serde(line));
        }
        for line in [
            r#"{"goal_id":"g\u0041","ranked":[]}"#,
            r#"{"goal_id":"g","ranked":[{"path":"p"}]}"#,
            r#"{"goal_id":"g","ranked":[{"full_name":"x","full_name":"y"}]}"#,
            r#"{"goal_id":"g","ranked":[{}]}"#,
            r#"{"goal_id":"g","ranked":[{"full_name":1}]}"#,
            r#"{"goal_id":"g","ranked":[],"extra":[01]}"#,
            r#"{"goal_id":"g","ranked":[],"scores":null}"#,
            r#"{"goal_id":"g","goal_id":"h","ranked":[]}"#,
            r#"{"goal_id":"g","ranked":["a"],"scores":[1e999]}"#,
            // Not valid: serde's to read, and the record's checks to word.
            r#"{"goal_id":"g","ranked":["a b"]}"#,
            r#"{"goal_id":"g 1","ranked":["a"]}"#,
            r#"{"goal_id":"g","ranked":["a"],"retrieved_premises":["b"]}"#,
            r#"{"goal_id":"g","ranked":["a","b"],"scores":[1]}"#,
            r#"{"ranked":["a"]}"#,
            r#"{"goal_id":"g"}"#,
            r#"{}"#,
        ] {
            assert!(!scans(line, true), "{line}");
            assert!(!scans(line, false), "{line}");
        }
    }
}

/// One line of a TREC run as [`visit_run_lines`] hands it to its visitor.
#[derive(Clone, Debug)]
pub struct VisitedLine<'a> {
    /// 1-based line number within the data (restarts count from where they restart).
    pub line: u64,
    /// Byte offset of the line's start in the data.
    pub start: usize,
    /// Byte offset of its end (its `\n`, or the data's length).
    pub end: usize,
    /// Its fields: `Ok(None)` for a blank or `#` comment line; `Err` says what was expected.
    pub fields: Result<Option<RunFields<'a>>, String>,
}

/// What a [`RunLineVisitor`] wants after a line.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// The next line.
    Next,
    /// Go back (or forward) to the line that starts at byte `at`, numbering it `line`.
    Restart {
        /// Where that line starts (a line start given to the visitor earlier).
        at: usize,
        /// Its line number.
        line: u64,
    },
    /// Stop visiting (the visitor keeps whatever made it stop).
    Stop,
}

/// Receives a TREC run's lines from [`visit_run_lines`]. Mark `line` `#[inline(always)]`: it is
/// then compiled into the splitter's SIMD path rather than called per line.
pub trait RunLineVisitor<'a> {
    /// One line; returns what to do next.
    fn line(&mut self, line: VisitedLine<'a>) -> Step;
}

/// Visits `data`'s lines in order as TREC run lines, splitting each into its fields. The
/// splitter's SIMD path (AVX2 masks and BMI1 / POPCNT bit scans where the CPU has them, SSE2
/// otherwise) is chosen once per call, not per line. Returns the number of the last line visited
/// (0 for none).
///
/// ```
/// use lemma_ingest::{visit_run_lines, RunLineVisitor, Step, VisitedLine};
/// struct Lemmas(Vec<String>);
/// impl<'a> RunLineVisitor<'a> for Lemmas {
///     #[inline(always)]
///     fn line(&mut self, l: VisitedLine<'a>) -> Step {
///         match l.fields {
///             Ok(Some(f)) => self.0.push(String::from_utf8_lossy(f.lemma).into_owned()),
///             Ok(None) => {}
///             Err(_) => return Step::Stop,
///         }
///         Step::Next
///     }
/// }
/// let mut v = Lemmas(Vec::new());
/// let last = visit_run_lines(b"g Q0 a 1 0.9 t\n# note\ng Q0 b 2 0.8 t\n", &mut v);
/// assert_eq!((v.0, last), (vec!["a".to_string(), "b".to_string()], 3));
/// ```
pub fn visit_run_lines<'a, V: RunLineVisitor<'a>>(data: &'a [u8], v: &mut V) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("popcnt")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("avx2")
        {
            // SAFETY: the CPU has the features (checked just above).
            return unsafe { visit_x86_v3(data, v) };
        }
    }
    // SAFETY: no AVX2 asked for.
    unsafe { visit_with::<false, V>(data, v) }
}

/// [`visit_with`] compiled for CPUs with POPCNT, BMI1 and AVX2: the splitter's bit counting and
/// scanning become single instructions, and the visitor's `line` is compiled in.
///
/// # Safety
/// The CPU must have POPCNT, BMI1 and AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,bmi1,avx2")]
unsafe fn visit_x86_v3<'a, V: RunLineVisitor<'a>>(data: &'a [u8], v: &mut V) -> u64 {
    // SAFETY: this function runs only where the CPU has AVX2.
    unsafe { visit_with::<true, V>(data, v) }
}

/// The line loop.
///
/// # Safety
/// With `AVX2`, the CPU must have AVX2.
#[inline(always)]
unsafe fn visit_with<'a, const AVX2: bool, V: RunLineVisitor<'a>>(
    data: &'a [u8],
    v: &mut V,
) -> u64 {
    let (mut pos, mut line) = (0usize, 0u64);
    while pos < data.len() {
        // SAFETY: the caller's contract.
        let (fields, end) = unsafe { split_run_with::<AVX2>(data, pos) };
        line += 1;
        match v.line(VisitedLine {
            line,
            start: pos,
            end,
            fields,
        }) {
            Step::Next => pos = end + 1,
            Step::Restart { at, line: l } => {
                pos = at;
                line = l - 1;
            }
            Step::Stop => return line,
        }
    }
    line
}
