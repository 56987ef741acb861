//! The lexical judge: relevance of each item to each criterion from shared
//! vocabulary, mapped to probabilities by a fitted softmax.
//!
//! For a question with criteria c_1..c_K, criterion j is read as the
//! question text plus c_j, reduced to a set of stemmed terms T_j. A term's
//! weight says how well it tells the criteria apart:
//!
//! ```text
//! w(t) = ln(1 + (K - df(t) + 0.5) / (df(t) + 0.5))     df(t) = #{j : t in T_j}
//! ```
//!
//! so the question's own words, shared by every criterion, weigh little. An
//! item covers criterion j by the weighted share of T_j it contains:
//!
//! ```text
//! coverage_j = sum(w(t) for t in T_j if t in item) / sum(w(t) for t in T_j)
//! ```
//!
//! and the answer is `softmax(BETA * coverage)` over the criteria (for a
//! yes/no question, p(yes) is the yes component). An item that shares no
//! vocabulary with any criterion gets the uniform answer: the judge says
//! "no evidence" rather than inventing a preference.

use std::collections::{HashMap, HashSet};

use crate::text::terms;
use crate::types::{Answer, Item, Judge, JudgeError, JudgeInfo, Question, Response, Usage};
use crate::validate::validate_question;

/// The softmax sharpness, fitted by maximum likelihood on two-option
/// paraphrase choices built from STS Benchmark (the permissive subset of
/// the official files, oborchers/Fast_Sentence_Embeddings @ ae95f34c):
/// fitted on sts-train.csv (1550 choices: nll 0.304, accuracy 0.880, mean
/// confidence 0.876), reported on sts-test.csv (498 choices: nll 0.449,
/// accuracy 0.829, mean confidence 0.870). Reproduce with
/// `examples/fit_lexical.rs`; docs/JUDGES.md has the details.
pub const BETA: f64 = 4.48;

/// The judge's self-description.
pub fn info() -> JudgeInfo {
    JudgeInfo {
        name: "lexical".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        deterministic: true,
        cost_per_million_input_tokens: 0.0,
        // questions go 40 items at a time whatever a judge prefers
        // (`ask::MAX_BATCH`), so this sizes the ledger's relation calls:
        // at 40 pairs a call, a sleep over 100k `agents` lessons spent
        // 58 s in 42k calls, most of it crossing into the sandbox
        preferred_batch_size: 4096,
    }
}

/// A question's criteria reduced to weighted term sets, computed once per
/// question and reused for every item.
#[derive(Debug, Clone)]
pub struct Criteria {
    /// Per criterion: (term, weight) pairs and their total weight.
    sets: Vec<(Vec<(String, f64)>, f64)>,
}

impl Criteria {
    /// Reads each criterion as `question` plus the criterion text.
    pub fn new(question: &str, criteria: &[&str]) -> Self {
        let sets: Vec<HashSet<String>> = criteria
            .iter()
            .map(|c| terms(&format!("{question} {c}")).into_iter().collect())
            .collect();
        let mut df: HashMap<&str, usize> = HashMap::new();
        for set in &sets {
            for t in set {
                *df.entry(t.as_str()).or_default() += 1;
            }
        }
        let k = sets.len() as f64;
        let weighted = sets
            .iter()
            .map(|set| {
                let mut terms: Vec<(String, f64)> = set
                    .iter()
                    .map(|t| {
                        let n = df[t.as_str()] as f64;
                        (t.clone(), (1.0 + (k - n + 0.5) / (n + 0.5)).ln())
                    })
                    .collect();
                terms.sort_by(|a, b| a.0.cmp(&b.0));
                let total = terms.iter().map(|t| t.1).sum();
                (terms, total)
            })
            .collect();
        Criteria { sets: weighted }
    }

    /// How much of each criterion `item` covers, in [0, 1].
    pub fn coverage(&self, item: &str) -> Vec<f64> {
        let item_terms: HashSet<String> = terms(item).into_iter().collect();
        self.sets
            .iter()
            .map(|(set, total)| {
                if *total <= 0.0 {
                    return 0.0;
                }
                let hit: f64 = set
                    .iter()
                    .filter(|(t, _)| item_terms.contains(t))
                    .map(|(_, w)| w)
                    .sum();
                hit / total
            })
            .collect()
    }
}

/// How much of each criterion `item` covers, in [0, 1], one value per
/// criterion text.
pub fn coverage(question: &str, criteria: &[&str], item: &str) -> Vec<f64> {
    Criteria::new(question, criteria).coverage(item)
}

/// `softmax(beta * x)`, computed stably.
pub fn softmax(x: &[f64], beta: f64) -> Vec<f64> {
    let max = x.iter().copied().fold(f64::MIN, f64::max);
    let exps: Vec<f64> = x.iter().map(|v| ((v - max) * beta).exp()).collect();
    let sum: f64 = exps.iter().sum();
    exps.into_iter().map(|e| e / sum).collect()
}

/// Answers `question` for every item.
pub fn answer(question: &Question, items: &[Item]) -> Result<Response, JudgeError> {
    validate_question(question).map_err(JudgeError::InvalidQuestion)?;
    let criteria = question.space.criteria();
    let scorer = Criteria::new(&question.text, &criteria);
    let shared_chars =
        question.text.chars().count() + criteria.iter().map(|c| c.chars().count()).sum::<usize>();
    let mut input_chars = 0;
    let answers = items
        .iter()
        .map(|item| {
            input_chars += shared_chars + item.text.chars().count();
            Answer::from_probabilities(&question.space, softmax(&scorer.coverage(&item.text), BETA))
        })
        .collect();
    Ok(Response {
        answers,
        usage: Usage::local(items.len(), input_chars),
    })
}

/// The lexical judge called natively (its component exports the same two
/// functions): for examples and tests.
pub struct LexicalJudge;

impl Judge for LexicalJudge {
    fn info(&mut self) -> JudgeInfo {
        info()
    }

    fn ask(&mut self, question: &Question, items: &[Item]) -> Result<Response, JudgeError> {
        answer(question, items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{AnswerSpace, ChoiceOption};
    use crate::validate::validate_response;

    fn item(id: &str, text: &str) -> Item {
        Item {
            id: id.into(),
            text: text.into(),
        }
    }

    fn yes_probabilities(q: &Question, items: &[Item]) -> Vec<f64> {
        let r = answer(q, items).unwrap();
        validate_response(q, items.len(), &r).unwrap();
        r.answers
            .iter()
            .map(|a| match a {
                Answer::YesProbability(p) => *p,
                _ => panic!("not a judge answer"),
            })
            .collect()
    }

    #[test]
    fn judge_separates_items_by_shared_vocabulary() {
        let q = Question {
            text: "Does the ticket concern the database?".into(),
            space: AnswerSpace::Judge {
                yes: "It is about database queries, tables, migrations or indexes.".into(),
                no: "It is about the user interface, styling or layout.".into(),
            },
        };
        let p = yes_probabilities(
            &q,
            &[
                item("db", "slow queries after the last migration added an index"),
                item(
                    "ui",
                    "button styling is broken in the layout of the settings page",
                ),
                item("neither", "quarterly revenue report"),
            ],
        );
        assert!(p[0] > 0.8, "database item: {p:?}");
        assert!(p[1] < 0.2, "ui item: {p:?}");
        assert!(
            (p[2] - 0.5).abs() < 1e-9,
            "no evidence must stay uniform: {p:?}"
        );
    }

    #[test]
    fn choose_and_score_give_distributions_that_validate() {
        let opt = |l: &str, c: &str| ChoiceOption {
            label: l.into(),
            criterion: c.into(),
        };
        let q = Question {
            text: "Which team owns this ticket?".into(),
            space: AnswerSpace::Choose(vec![
                opt("web", "browser UI, CSS, React components"),
                opt("api", "HTTP endpoints, authentication, database"),
                opt("none", "no listed team fits"),
            ]),
        };
        let items = [
            item("1", "CSS of the React login form overflows"),
            item("2", "the HTTP endpoint rejects valid authentication tokens"),
        ];
        let r = answer(&q, &items).unwrap();
        validate_response(&q, 2, &r).unwrap();
        let argmax = |a: &Answer| match a {
            Answer::Distribution { probabilities, .. } => {
                probabilities
                    .iter()
                    .enumerate()
                    .max_by(|a, b| a.1.total_cmp(b.1))
                    .unwrap()
                    .0
            }
            _ => panic!(),
        };
        assert_eq!(argmax(&r.answers[0]), 0);
        assert_eq!(argmax(&r.answers[1]), 1);

        let q = Question {
            text: "How severe is this?".into(),
            space: AnswerSpace::Score(vec![
                "cosmetic blemish".into(),
                "annoyance with a workaround".into(),
                "data loss or crash".into(),
            ]),
        };
        let r = answer(&q, &[item("x", "the app crashes and we lose data")]).unwrap();
        validate_response(&q, 1, &r).unwrap();
        assert_eq!(argmax(&r.answers[0]), 2);
    }

    #[test]
    fn deterministic() {
        let q = Question {
            text: "q".into(),
            space: AnswerSpace::Judge {
                yes: "alpha beta".into(),
                no: "gamma delta".into(),
            },
        };
        let items = [item("a", "alpha gamma beta")];
        assert_eq!(answer(&q, &items).unwrap(), answer(&q, &items).unwrap());
    }

    #[test]
    fn refuses_malformed_questions() {
        let q = Question {
            text: "q".into(),
            space: AnswerSpace::Score(vec!["only".into()]),
        };
        assert!(matches!(
            answer(&q, &[]),
            Err(JudgeError::InvalidQuestion(_))
        ));
    }
}
