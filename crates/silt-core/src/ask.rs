//! The ask pipeline behind `sieve_ask`: cut, batch, budget, ask, validate,
//! shape.

use serde::Serialize;

use crate::budget::Budget;
use crate::text::{cut_chars, estimate_tokens};
use crate::types::{Answer, AnswerSpace, Item, Judge, Question, Response};
use crate::validate::{validate_question, validate_response};

/// The most items sent to a judge in one call.
pub const MAX_BATCH: usize = 40;
/// The smallest per-item character limit a caller may set.
pub const MIN_MAX_CHARS: u32 = 100;
/// The per-item character limit when the caller sets none.
pub const DEFAULT_MAX_CHARS: u32 = 4000;
/// The budget when the caller sets none, in US dollars.
pub const DEFAULT_BUDGET_USD: f64 = 0.50;

/// One ask call.
#[derive(Debug, Clone)]
pub struct AskRequest {
    /// The question and its closed answer space.
    pub question: Question,
    /// The items, each with an id; must not be empty.
    pub items: Vec<Item>,
    /// Each item's text is cut to this many characters (at least
    /// [`MIN_MAX_CHARS`]).
    pub max_chars: u32,
    /// The most the call may spend, in US dollars.
    pub budget_usd: f64,
    /// For `judge` questions: keep at most this many rows (None: all).
    pub top_k: Option<u32>,
    /// For `judge` questions: drop rows below this probability, in [0, 1].
    pub threshold: f64,
}

/// A `judge` row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judged {
    /// The item's id.
    pub id: String,
    /// p(yes), validated and rounded to 4 places.
    pub probability: f64,
}

/// A `choose` row; probabilities are (label, p) in offered order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chosen {
    /// The item's id.
    pub id: String,
    /// The picked label: the judge's pick, else the first most probable.
    pub choice: String,
    /// The full distribution, rounded to 4 places.
    pub probabilities: Vec<(String, f64)>,
}

/// A `score` row; probabilities are (level, p), lowest level first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scored {
    /// The item's id.
    pub id: String,
    /// The picked level's index (0 = lowest).
    pub level: u32,
    /// The picked level's text.
    pub label: String,
    /// The expected level index under the distribution.
    pub expected: f64,
    /// The full distribution, rounded to 4 places.
    pub probabilities: Vec<(String, f64)>,
}

/// Rows of the kind asked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum AskRows {
    /// Highest probability first, cut by top-k and threshold.
    Judge(Vec<Judged>),
    /// One row per answered item, in input order.
    Choose(Vec<Chosen>),
    /// One row per answered item, in input order.
    Score(Vec<Scored>),
}

/// What a call cost, in the seed's usage fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct AskUsage {
    /// Input plus output tokens.
    pub tokens: u64,
    /// Input tokens, as the judge reported them.
    pub input_tokens: u64,
    /// Output tokens, as the judge reported them.
    pub output_tokens: u64,
    /// Judge calls made.
    pub requests: u32,
    /// Items answered from a cache instead of the judge.
    pub cache_hits: u32,
    /// Money spent, in US dollars.
    pub cost_usd: f64,
    /// True when the budget stopped the call before every item was answered.
    pub budget_exhausted: bool,
}

impl AskUsage {
    /// Adds another call's usage to this one (pipelines that ask several times).
    pub fn add(&mut self, u: &AskUsage) {
        self.tokens += u.tokens;
        self.input_tokens += u.input_tokens;
        self.output_tokens += u.output_tokens;
        self.requests += u.requests;
        self.cache_hits += u.cache_hits;
        self.cost_usd += u.cost_usd;
        self.budget_exhausted |= u.budget_exhausted;
    }
}

/// The result of an ask call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AskOutcome {
    /// The rows, of the kind asked.
    pub rows: AskRows,
    /// Items the judge answered (before top-k and threshold).
    pub items_scored: u32,
    /// What the call cost.
    pub usage: AskUsage,
}

/// Why an ask call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AskError {
    /// The request itself is wrong; the message says what to change.
    #[error("{0}")]
    InvalidRequest(String),
    /// The judge failed, or its answer failed validation and was refused.
    #[error("{0}")]
    JudgeFailed(String),
}

/// Rounds a reported probability to 4 places.
pub fn round4(p: f64) -> f64 {
    (p * 10_000.0).round() / 10_000.0
}

/// Checks the request before any judge is called.
pub fn validate_request(req: &AskRequest) -> Result<(), AskError> {
    validate_question(&req.question).map_err(AskError::InvalidRequest)?;
    if req.items.is_empty() {
        return Err(AskError::InvalidRequest(
            "items is empty: pass at least one item".into(),
        ));
    }
    if req.max_chars < MIN_MAX_CHARS {
        return Err(AskError::InvalidRequest(format!(
            "max_chars is {}, it must be at least {MIN_MAX_CHARS}",
            req.max_chars
        )));
    }
    if !req.budget_usd.is_finite() || req.budget_usd < 0.0 {
        return Err(AskError::InvalidRequest(format!(
            "budget_usd is {}, it must be a number >= 0",
            req.budget_usd
        )));
    }
    if !req.threshold.is_finite() || !(0.0..=1.0).contains(&req.threshold) {
        return Err(AskError::InvalidRequest(format!(
            "threshold is {}, it must be in [0, 1]",
            req.threshold
        )));
    }
    if req.top_k == Some(0) {
        return Err(AskError::InvalidRequest(
            "top_k must be at least 1 (or omitted)".into(),
        ));
    }
    Ok(())
}

/// Runs an ask call against `judge`.
pub fn run(judge: &mut dyn Judge, req: &AskRequest) -> Result<AskOutcome, AskError> {
    run_batched(judge, req, MAX_BATCH)
}

/// [`run`] with at most `max_batch` items per judge call (grep's function
/// units go 8 at a time).
pub fn run_batched(
    judge: &mut dyn Judge,
    req: &AskRequest,
    max_batch: usize,
) -> Result<AskOutcome, AskError> {
    let cost = judge.info().cost_per_million_input_tokens;
    run_budgeted(
        judge,
        req,
        max_batch,
        &mut Budget::new(req.budget_usd, cost),
    )
}

/// [`run_batched`] drawing on a budget shared with other calls of the same
/// pipeline, so the projection learns from every call made so far
/// (`req.budget_usd` is not read; the budget's own limit holds).
pub fn run_budgeted(
    judge: &mut dyn Judge,
    req: &AskRequest,
    max_batch: usize,
    budget: &mut Budget,
) -> Result<AskOutcome, AskError> {
    validate_request(req)?;
    let info = judge.info();
    let batch_size = (info.preferred_batch_size as usize).clamp(1, max_batch.clamp(1, MAX_BATCH));
    let items: Vec<Item> = req
        .items
        .iter()
        .map(|i| Item {
            id: i.id.clone(),
            text: cut_chars(&i.text, req.max_chars as usize).to_string(),
        })
        .collect();
    let shared_chars = req.question.text.chars().count()
        + req
            .question
            .space
            .criteria()
            .iter()
            .map(|c| c.chars().count())
            .sum::<usize>();

    let spent_before = budget.spent_usd();
    let mut usage = AskUsage::default();
    let mut answered: Vec<(&Item, Answer)> = Vec::with_capacity(items.len());
    for batch in items.chunks(batch_size) {
        let chars = shared_chars + batch.iter().map(|i| i.text.chars().count()).sum::<usize>();
        let estimate = estimate_tokens(chars);
        if !budget.allows(estimate, 0.0) {
            usage.budget_exhausted = true;
            break;
        }
        let response: Response = judge
            .ask(&req.question, batch)
            .map_err(|e| AskError::JudgeFailed(format!("judge '{}' failed: {e}", info.name)))?;
        validate_response(&req.question, batch.len(), &response).map_err(|e| {
            AskError::JudgeFailed(format!(
                "judge '{}' gave an invalid answer ({e}); it was refused",
                info.name
            ))
        })?;
        budget.record(estimate, &response.usage);
        usage.requests += 1;
        usage.input_tokens += response.usage.input_tokens;
        usage.output_tokens += response.usage.output_tokens;
        answered.extend(batch.iter().zip(response.answers));
    }
    usage.tokens = usage.input_tokens + usage.output_tokens;
    usage.cost_usd = budget.spent_usd() - spent_before;
    let items_scored = answered.len() as u32;
    Ok(AskOutcome {
        rows: shape(req, answered),
        items_scored,
        usage,
    })
}

/// One yes/no `question` asked of every text in `texts` under a budget
/// shared with the pipeline's other calls: each text's p(yes), by
/// position (None where the budget ran out first).
pub fn yes_probabilities(
    judge: &mut dyn Judge,
    question: Question,
    texts: Vec<String>,
    max_chars: u32,
    max_batch: usize,
    budget: &mut Budget,
    usage: &mut AskUsage,
) -> Result<Vec<Option<f64>>, AskError> {
    let n = texts.len();
    if n == 0 {
        return Ok(Vec::new());
    }
    let out = run_budgeted(
        judge,
        &AskRequest {
            question,
            items: texts
                .into_iter()
                .enumerate()
                .map(|(i, text)| Item {
                    id: i.to_string(),
                    text,
                })
                .collect(),
            max_chars,
            budget_usd: budget.limit_usd(),
            top_k: None,
            threshold: 0.0,
        },
        max_batch,
        budget,
    )?;
    usage.add(&out.usage);
    let mut p = vec![None; n];
    if let AskRows::Judge(rows) = out.rows {
        for r in rows {
            if let Ok(i) = r.id.parse::<usize>() {
                p[i] = Some(r.probability);
            }
        }
    }
    Ok(p)
}

/// A distribution that says nothing: every option equally likely, what a
/// judge returns when it found nothing to go on (the lexical judge when no
/// word is shared). Reported as "no evidence", never as a choice.
pub fn is_uninformative(probabilities: &[f64]) -> bool {
    probabilities.len() > 1
        && probabilities
            .iter()
            .all(|p| (p - probabilities[0]).abs() < 1e-4)
}

/// A yes-probability of one half: as uninformative as a coin.
pub fn is_uninformative_yes(p: f64) -> bool {
    (p - 0.5).abs() < 1e-4
}

fn shape(req: &AskRequest, answered: Vec<(&Item, Answer)>) -> AskRows {
    let labels = req.question.space.labels();
    let labelled = |p: &[f64]| -> Vec<(String, f64)> {
        labels
            .iter()
            .zip(p)
            .map(|(l, p)| (l.to_string(), round4(*p)))
            .collect()
    };
    let pick_of = |p: &[f64], pick: Option<u32>| -> usize {
        pick.map(|i| i as usize).unwrap_or_else(|| {
            // first maximum wins, so ties go to the earlier (lower) option
            p.iter()
                .enumerate()
                .fold(0, |best, (i, v)| if *v > p[best] { i } else { best })
        })
    };
    match &req.question.space {
        AnswerSpace::Judge { .. } => {
            let mut rows: Vec<Judged> = answered
                .into_iter()
                .filter_map(|(item, a)| match a {
                    Answer::YesProbability(p) => Some(Judged {
                        id: item.id.clone(),
                        probability: round4(p),
                    }),
                    Answer::Distribution { .. } => None,
                })
                // an item with no evidence (one half) never passes a
                // threshold of one half by a tie
                .filter(|r| {
                    r.probability >= req.threshold
                        && !(is_uninformative_yes(r.probability)
                            && is_uninformative_yes(req.threshold))
                })
                .collect();
            rows.sort_by(|a, b| b.probability.total_cmp(&a.probability));
            if let Some(k) = req.top_k {
                rows.truncate(k as usize);
            }
            AskRows::Judge(rows)
        }
        AnswerSpace::Choose(_) => AskRows::Choose(
            answered
                .into_iter()
                .filter_map(|(item, a)| match a {
                    Answer::Distribution {
                        probabilities: p,
                        pick,
                    } => Some(Chosen {
                        id: item.id.clone(),
                        choice: labels[pick_of(&p, pick)].to_string(),
                        probabilities: labelled(&p),
                    }),
                    Answer::YesProbability(_) => None,
                })
                .collect(),
        ),
        AnswerSpace::Score(_) => AskRows::Score(
            answered
                .into_iter()
                .filter_map(|(item, a)| match a {
                    Answer::Distribution {
                        probabilities: p,
                        pick,
                    } => {
                        let level = pick_of(&p, pick);
                        let expected = p.iter().enumerate().map(|(i, v)| i as f64 * v).sum::<f64>();
                        Some(Scored {
                            id: item.id.clone(),
                            level: level as u32,
                            label: labels[level].to_string(),
                            expected: round4(expected),
                            probabilities: labelled(&p),
                        })
                    }
                    Answer::YesProbability(_) => None,
                })
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ChoiceOption, JudgeError, JudgeInfo, Usage};

    /// A judge that replays fixed answers and records batch sizes.
    struct Scripted {
        cost_per_million: f64,
        batches: Vec<usize>,
        answer: fn(usize) -> Answer,
    }

    impl Scripted {
        fn new(cost_per_million: f64, answer: fn(usize) -> Answer) -> Self {
            Scripted {
                cost_per_million,
                batches: vec![],
                answer,
            }
        }
    }

    impl Judge for Scripted {
        fn info(&mut self) -> JudgeInfo {
            JudgeInfo {
                name: "scripted".into(),
                version: "0".into(),
                deterministic: true,
                cost_per_million_input_tokens: self.cost_per_million,
                preferred_batch_size: 100,
            }
        }
        fn ask(&mut self, _q: &Question, items: &[Item]) -> Result<Response, JudgeError> {
            self.batches.push(items.len());
            let chars: usize = items.iter().map(|i| i.text.len()).sum();
            let tokens = estimate_tokens(chars);
            Ok(Response {
                answers: (0..items.len()).map(self.answer).collect(),
                usage: Usage {
                    units: items.len() as u32,
                    input_tokens: tokens,
                    output_tokens: 1,
                    cost_usd: tokens as f64 * self.cost_per_million / 1e6,
                },
            })
        }
    }

    fn judge_request(n: usize) -> AskRequest {
        AskRequest {
            question: Question {
                text: "bug?".into(),
                space: AnswerSpace::Judge {
                    yes: "broken".into(),
                    no: "feature".into(),
                },
            },
            items: (0..n)
                .map(|i| Item {
                    id: i.to_string(),
                    text: "x".repeat(400),
                })
                .collect(),
            max_chars: 4000,
            budget_usd: 0.5,
            top_k: None,
            threshold: 0.0,
        }
    }

    #[test]
    fn batches_of_forty_and_sorted_rows() {
        let mut j = Scripted::new(0.0, |i| Answer::YesProbability((i % 10) as f64 / 10.0));
        let out = run(&mut j, &judge_request(90)).unwrap();
        assert_eq!(j.batches, [40, 40, 10]);
        assert_eq!(out.items_scored, 90);
        assert_eq!(out.usage.requests, 3);
        let AskRows::Judge(rows) = out.rows else {
            panic!()
        };
        assert!(
            rows.windows(2)
                .all(|w| w[0].probability >= w[1].probability)
        );
    }

    #[test]
    fn no_evidence_is_recognised_and_never_passes_by_a_tie() {
        assert!(is_uninformative(&[0.3333, 0.3333, 0.3333]));
        assert!(is_uninformative(&[0.25; 4]));
        assert!(!is_uninformative(&[0.4, 0.3, 0.3]));
        assert!(!is_uninformative(&[1.0]));
        assert!(is_uninformative_yes(0.5) && !is_uninformative_yes(0.51));
        // item 0 gets a coin toss, the others 0.7
        let mut j = Scripted::new(0.0, |i| {
            Answer::YesProbability(if i == 0 { 0.5 } else { 0.7 })
        });
        let mut req = judge_request(3);
        req.threshold = 0.5;
        let AskRows::Judge(rows) = run(&mut j, &req).unwrap().rows else {
            panic!()
        };
        let ids: Vec<_> = rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["1", "2"], "a coin-toss answer is not a pass");
        // under a lower threshold it is not a tie: listed (and marked by
        // the tool as evidence none)
        req.threshold = 0.2;
        let AskRows::Judge(rows) = run(&mut j, &req).unwrap().rows else {
            panic!()
        };
        assert_eq!(rows.len(), 3);
    }

    #[test]
    fn threshold_and_top_k_cut_judge_rows() {
        let mut j = Scripted::new(0.0, |i| Answer::YesProbability(i as f64 / 10.0));
        let mut req = judge_request(10);
        req.threshold = 0.5;
        req.top_k = Some(3);
        let AskRows::Judge(rows) = run(&mut j, &req).unwrap().rows else {
            panic!()
        };
        let ids: Vec<_> = rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["9", "8", "7"]);
    }

    #[test]
    fn budget_stops_with_partial_results() {
        // 40 items x 100 tokens = 4000 tokens a batch; at $10 per million a
        // batch costs $0.04, so a $0.10 budget allows two of three batches.
        let mut j = Scripted::new(10.0, |_| Answer::YesProbability(0.5));
        let mut req = judge_request(120);
        req.budget_usd = 0.10;
        let out = run(&mut j, &req).unwrap();
        assert_eq!(j.batches, [40, 40]);
        assert_eq!(out.items_scored, 80);
        assert!(out.usage.budget_exhausted);
        assert!(out.usage.cost_usd <= 0.10);
    }

    #[test]
    fn items_are_cut_to_max_chars() {
        let mut j = Scripted::new(0.0, |_| Answer::YesProbability(0.5));
        let mut req = judge_request(1);
        req.items[0].text = "é".repeat(500);
        req.max_chars = 100;
        // the scripted judge reports tokens from byte length: 100 chars of 2 bytes
        assert_eq!(run(&mut j, &req).unwrap().usage.input_tokens, 50);
    }

    #[test]
    fn invalid_answers_abort_the_call() {
        let mut j = Scripted::new(0.0, |_| Answer::YesProbability(2.0));
        let err = run(&mut j, &judge_request(3)).unwrap_err();
        assert!(
            matches!(&err, AskError::JudgeFailed(m) if m.contains("scripted") && m.contains("refused")),
            "{err}"
        );
    }

    #[test]
    fn invalid_requests_are_refused_before_the_judge() {
        let mut j = Scripted::new(0.0, |_| Answer::YesProbability(0.5));
        for mutate in [
            (|r: &mut AskRequest| r.items.clear()) as fn(&mut AskRequest),
            |r| r.max_chars = 99,
            |r| r.threshold = 1.5,
            |r| r.budget_usd = f64::NAN,
            |r| r.top_k = Some(0),
            |r| r.question.text = " ".into(),
        ] {
            let mut req = judge_request(1);
            mutate(&mut req);
            assert!(matches!(
                run(&mut j, &req),
                Err(AskError::InvalidRequest(_))
            ));
        }
        assert!(j.batches.is_empty());
    }

    #[test]
    fn choose_and_score_shape() {
        let mut j = Scripted::new(0.0, |_| Answer::Distribution {
            probabilities: vec![0.2, 0.5, 0.3],
            pick: None,
        });
        let opt = |l: &str| ChoiceOption {
            label: l.into(),
            criterion: l.into(),
        };
        let mut req = judge_request(2);
        req.question.space = AnswerSpace::Choose(vec![opt("a"), opt("b"), opt("c")]);
        let AskRows::Choose(rows) = run(&mut j, &req).unwrap().rows else {
            panic!()
        };
        assert_eq!(rows[0].choice, "b");
        assert_eq!(rows[0].probabilities[2], ("c".to_string(), 0.3));

        req.question.space = AnswerSpace::Score(vec!["low".into(), "mid".into(), "high".into()]);
        let AskRows::Score(rows) = run(&mut j, &req).unwrap().rows else {
            panic!()
        };
        assert_eq!((rows[1].level, rows[1].label.as_str()), (1, "mid"));
        assert!((rows[1].expected - 1.1).abs() < 1e-9);
    }
}
