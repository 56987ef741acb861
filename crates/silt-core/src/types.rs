//! Plain-Rust mirrors of the `silt:judge` WIT types.
//!
//! Components and the host each get their own generated WIT types; these are
//! the common currency the shared logic is written against.

use serde::{Deserialize, Serialize};

/// One thing to be judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub id: String,
    pub text: String,
}

/// One labelled answer of a `choose` question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChoiceOption {
    pub label: String,
    pub criterion: String,
}

/// The closed answer space of a question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum AnswerSpace {
    Judge { yes: String, no: String },
    Choose(Vec<ChoiceOption>),
    Score(Vec<String>),
}

impl AnswerSpace {
    /// The question kind as the tools name it.
    pub fn kind(&self) -> &'static str {
        match self {
            AnswerSpace::Judge { .. } => "judge",
            AnswerSpace::Choose(_) => "choose",
            AnswerSpace::Score(_) => "score",
        }
    }

    /// The criterion texts in the order answers refer to them
    /// (yes then no for `judge`).
    pub fn criteria(&self) -> Vec<&str> {
        match self {
            AnswerSpace::Judge { yes, no } => vec![yes.as_str(), no.as_str()],
            AnswerSpace::Choose(options) => options.iter().map(|o| o.criterion.as_str()).collect(),
            AnswerSpace::Score(levels) => levels.iter().map(String::as_str).collect(),
        }
    }

    /// The labels answers are reported under.
    pub fn labels(&self) -> Vec<&str> {
        match self {
            AnswerSpace::Judge { .. } => vec!["yes", "no"],
            AnswerSpace::Choose(options) => options.iter().map(|o| o.label.as_str()).collect(),
            AnswerSpace::Score(levels) => levels.iter().map(String::as_str).collect(),
        }
    }
}

/// A whole question: shared context plus its answer space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    pub text: String,
    pub space: AnswerSpace,
}

/// One item's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Answer {
    YesProbability(f64),
    Distribution {
        probabilities: Vec<f64>,
        pick: Option<u32>,
    },
}

impl Answer {
    /// A distribution over `space`'s criteria as the answer its kind takes:
    /// p(yes) (the first criterion) for a yes/no question, else the
    /// distribution itself, leaving the pick to the most probable.
    pub fn from_probabilities(space: &AnswerSpace, p: Vec<f64>) -> Answer {
        match space {
            AnswerSpace::Judge { .. } => Answer::YesProbability(p[0]),
            _ => Answer::Distribution {
                probabilities: p,
                pick: None,
            },
        }
    }
}

/// What answering one batch cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub units: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
}

impl Usage {
    /// A local judge's cost: `units` items, the tokens of `input_chars`
    /// read, nothing written, nothing paid.
    pub fn local(units: usize, input_chars: usize) -> Usage {
        Usage {
            units: units as u32,
            input_tokens: crate::text::estimate_tokens(input_chars),
            output_tokens: 0,
            cost_usd: 0.0,
        }
    }
}

/// A judge's reply to one batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub answers: Vec<Answer>,
    pub usage: Usage,
}

/// Facts about a judge that callers plan around.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeInfo {
    pub name: String,
    pub version: String,
    pub deterministic: bool,
    pub cost_per_million_input_tokens: f64,
    pub preferred_batch_size: u32,
}

/// Why a judge could not answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
pub enum JudgeError {
    #[error("invalid question: {0}")]
    InvalidQuestion(String),
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("unavailable: {0}")]
    Unavailable(String),
    #[error("limit exceeded: {0}")]
    LimitExceeded(String),
    #[error("internal error: {0}")]
    Internal(String),
}

/// Anything that answers closed questions: the WIT import inside a
/// component, a fake in tests.
pub trait Judge {
    fn info(&mut self) -> JudgeInfo;
    fn ask(&mut self, question: &Question, items: &[Item]) -> Result<Response, JudgeError>;
}
