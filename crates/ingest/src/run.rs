//! Prediction lines: TREC run lines and JSONL prediction records.

use crate::fields::{parse_score, show, split_line_checked};
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

/// Parses a run line. `Ok(None)` for blank and `#` comment lines. The error says what was expected.
#[inline]
pub fn parse_run_line(line: &[u8]) -> Result<Option<RunLine<'_>>, String> {
    parse_run_at(line, 0).0
}

/// Parses the run line that starts at `start` in `data`; also returns where the line ends (its
/// `\n`, or `data.len()`), so a caller walks a buffer with one scan per line.
#[inline(always)]
pub fn parse_run_at(data: &[u8], start: usize) -> (Result<Option<RunLine<'_>>, String>, usize) {
    let mut f = [&b""[..]; 6];
    let split = split_line_checked(data, start, &mut f);
    run_line(split, f)
}

/// A run line from its split fields.
#[inline(always)]
fn run_line<'a>(
    ((count, end), utf8): ((usize, usize), Result<(), usize>),
    f: [&'a [u8]; 6],
) -> (Result<Option<RunLine<'a>>, String>, usize) {
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
    let Some(score) = parse_score(f[4]) else {
        return (
            Err(format!(
                "expected a finite number as the score (field 5), found `{}`",
                show(f[4])
            )),
            end,
        );
    };
    (
        Ok(Some(RunLine {
            goal: f[0],
            lemma: f[2],
            score,
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
pub fn parse_prediction_line(line: &str) -> Result<Prediction<'_>, String> {
    let rec: PredictionRecord = serde_json::from_str(line)
        .map_err(|e| format!("expected a JSON object with goal_id and retrieved_premises: {e}"))?;
    let goal = rec.goal_id.ok_or("expected a `goal_id` field")?;
    let list = match (rec.retrieved_premises, rec.ranked) {
        (Some(l), None) | (None, Some(l)) => l,
        (Some(_), Some(_)) => {
            return Err("expected one of `retrieved_premises` and `ranked`, found both".into())
        }
        (None, None) => return Err("expected a `retrieved_premises` (or `ranked`) list".into()),
    };
    let lemmas: Vec<Cow<str>> = list.into_iter().map(PremiseRef::into_name).collect();
    if let Some(s) = &rec.scores {
        if s.len() != lemmas.len() {
            return Err(format!(
                "expected as many scores as premises, found {} scores for {} premises",
                s.len(),
                lemmas.len()
            ));
        }
    }
    let scores = rec.scores.map(|v| v.into_iter().map(|x| x + 0.0).collect());
    Ok(Prediction {
        goal,
        lemmas,
        scores,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
