//! `sieve_rank`: candidates the caller holds, judged for relevance to one
//! question with criteria already written; an ask underneath.

use crate::ask::{self, AskError, AskOutcome, AskRequest, AskRows, DEFAULT_BUDGET_USD};
use crate::types::{AnswerSpace, Item, Judge, Question};

/// Each candidate is cut to this many characters.
pub const RANK_MAX_CHARS: u32 = 2000;

/// The question asked of each candidate; the caller's question goes into
/// the yes criterion, so a judge that weighs what tells the criteria apart
/// (the lexical judge does) weighs the caller's words.
pub const QUESTION: &str = "Is this candidate relevant to the question in the first criterion?";
/// What makes a candidate relevant, before the caller's question.
pub const RELEVANT: &str = "It answers this question, or it is what the question looks for:";
/// What makes it not.
pub const NOT_RELEVANT: &str =
    "It is unrelated to that question, or only shares a few of its words.";

/// One rank call.
#[derive(Debug, Clone)]
pub struct RankRequest {
    /// What the candidates are ranked against; must not be blank.
    pub question: String,
    /// The candidates, each cut to [`RANK_MAX_CHARS`]; must not be empty.
    pub candidates: Vec<Item>,
    /// Keep at most this many results (None: all; Some(0) is refused).
    pub top_k: Option<u32>,
    /// Drop candidates below this probability, in [0, 1].
    pub threshold: f64,
}

/// Runs a rank call: results sorted by probability, ties by id, then cut
/// by `threshold` and `top_k`.
pub fn run(judge: &mut dyn Judge, req: &RankRequest) -> Result<AskOutcome, AskError> {
    if req.question.trim().is_empty() {
        return Err(AskError::InvalidRequest(
            "question is empty: say what the candidates are ranked against".into(),
        ));
    }
    if req.candidates.is_empty() {
        return Err(AskError::InvalidRequest(
            "candidates is empty: pass at least one {id, text}".into(),
        ));
    }
    if req.top_k == Some(0) {
        return Err(AskError::InvalidRequest(
            "top_k must be at least 1 (or omitted for all)".into(),
        ));
    }
    let mut out = ask::run(
        judge,
        &AskRequest {
            question: Question {
                text: QUESTION.into(),
                space: AnswerSpace::Judge {
                    yes: format!("{RELEVANT} {}", req.question.trim()),
                    no: NOT_RELEVANT.into(),
                },
            },
            items: req.candidates.clone(),
            max_chars: RANK_MAX_CHARS,
            budget_usd: DEFAULT_BUDGET_USD,
            top_k: None,
            threshold: req.threshold,
        },
    )?;
    if let AskRows::Judge(rows) = &mut out.rows {
        rows.sort_by(|a, b| {
            b.probability
                .total_cmp(&a.probability)
                .then_with(|| a.id.cmp(&b.id))
        });
        if let Some(k) = req.top_k {
            rows.truncate(k as usize);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Answer, JudgeError, JudgeInfo, Response, Usage};

    /// Says 0.5 for every candidate whose text has "tie", else 0.9 / 0.1.
    struct Fixed;

    impl Judge for Fixed {
        fn info(&mut self) -> JudgeInfo {
            JudgeInfo {
                name: "fixed".into(),
                version: "0".into(),
                deterministic: true,
                cost_per_million_input_tokens: 0.0,
                preferred_batch_size: 40,
            }
        }

        fn ask(&mut self, q: &Question, items: &[Item]) -> Result<Response, JudgeError> {
            assert!(
                matches!(&q.space, AnswerSpace::Judge { yes, .. } if yes.starts_with(RELEVANT) && yes.ends_with(" q"))
            );
            assert!(items.iter().all(|i| i.text.chars().count() <= 2000));
            Ok(Response {
                answers: items
                    .iter()
                    .map(|i| {
                        Answer::YesProbability(if i.text.contains("tie") {
                            0.5
                        } else if i.text.contains("good") {
                            0.9
                        } else {
                            0.1
                        })
                    })
                    .collect(),
                usage: Usage::default(),
            })
        }
    }

    fn item(id: &str, text: &str) -> Item {
        Item {
            id: id.into(),
            text: text.into(),
        }
    }

    #[test]
    fn ties_are_sorted_by_id_before_the_cut() {
        let req = RankRequest {
            question: "q".into(),
            candidates: vec![
                item("c", "tie"),
                item("b", "tie"),
                item("z", "good"),
                item("a", "tie"),
                item("x", "bad ".repeat(1000).as_str()),
            ],
            top_k: Some(3),
            threshold: 0.2,
        };
        let out = run(&mut Fixed, &req).unwrap();
        let AskRows::Judge(rows) = out.rows else {
            panic!()
        };
        let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["z", "a", "b"]);
        assert_eq!(out.items_scored, 5);
    }

    #[test]
    fn the_lexical_judge_ranks_by_the_callers_words() {
        let req = RankRequest {
            question: "which database supports transactions".into(),
            candidates: vec![
                item("css", "CSS grid lays out web pages"),
                item(
                    "pg",
                    "PostgreSQL is a relational database with transactions",
                ),
                item("redis", "Redis is an in-memory key value cache"),
            ],
            top_k: None,
            threshold: 0.0,
        };
        let out = run(&mut crate::lexical::LexicalJudge, &req).unwrap();
        let AskRows::Judge(rows) = out.rows else {
            panic!()
        };
        assert_eq!(rows[0].id, "pg");
        assert!(rows[0].probability > 0.7, "{rows:?}");
        assert!(rows[1].probability <= 0.5, "{rows:?}");
    }

    #[test]
    fn no_candidates_is_refused() {
        let req = RankRequest {
            question: "q".into(),
            candidates: vec![],
            top_k: None,
            threshold: 0.0,
        };
        assert!(
            matches!(run(&mut Fixed, &req), Err(AskError::InvalidRequest(m)) if m.contains("candidates"))
        );
    }
}
