//! Plain-Rust mirrors of the `silt:judge` WIT types.
//!
//! Components and the host each get their own generated WIT types; these are
//! the common currency the shared logic is written against.

use serde::{Deserialize, Serialize};

/// One thing to be judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// The caller's identifier; answers match items by position, not by id.
    pub id: String,
    /// What the judge reads (already cut to the caller's limit).
    pub text: String,
}

/// One labelled answer of a `choose` question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChoiceOption {
    /// A short label, unique within the question.
    pub label: String,
    /// When this label applies, in plain words.
    pub criterion: String,
}

/// The closed answer space of a question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum AnswerSpace {
    /// A yes/no question: the judge returns p(yes) per item.
    Judge {
        /// What makes the answer yes.
        yes: String,
        /// What makes the answer no.
        no: String,
    },
    /// Pick one of several labelled options: a distribution per item.
    Choose(Vec<ChoiceOption>),
    /// An ordered scale, lowest level first: a distribution over the levels per item.
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
    /// The question, with any context shared by all items.
    pub text: String,
    /// What the answer may be.
    pub space: AnswerSpace,
}

/// One item's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Answer {
    /// For a `judge` question: p(yes), finite in [0, 1].
    YesProbability(f64),
    /// For `choose` and `score` questions.
    Distribution {
        /// One probability per option or level, in the order offered,
        /// summing to 1 (within 0.02).
        probabilities: Vec<f64>,
        /// The index the judge picked; None means the most probable.
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
    /// Items (or other units) the judge actually evaluated.
    pub units: u32,
    /// Input tokens the judge counted or estimated.
    pub input_tokens: u64,
    /// Output tokens the judge counted or estimated.
    pub output_tokens: u64,
    /// Money spent, in US dollars (0 for a local judge).
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
    /// One answer per item, in the order the items were given.
    pub answers: Vec<Answer>,
    /// What this batch cost.
    pub usage: Usage,
}

/// Facts about a judge that callers plan around.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeInfo {
    /// A short name, such as "lexical".
    pub name: String,
    /// The judge's own version string.
    pub version: String,
    /// True when the same question and items always give the same answers.
    pub deterministic: bool,
    /// Price per million input tokens, in US dollars (0 when free).
    pub cost_per_million_input_tokens: f64,
    /// How many items the judge prefers per call (callers may send fewer).
    pub preferred_batch_size: u32,
}

/// Why a judge could not answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
pub enum JudgeError {
    /// The question or items are malformed; the message says what to fix.
    #[error("invalid question: {0}")]
    InvalidQuestion(String),
    /// This judge does not answer this kind of question.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The model or service behind the judge is unavailable; a retry or
    /// another judge may help.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The judge's own limits (size, rate, budget) were exceeded.
    #[error("limit exceeded: {0}")]
    LimitExceeded(String),
    /// Anything else that went wrong inside the judge.
    #[error("internal error: {0}")]
    Internal(String),
}

/// Anything that answers closed questions: the WIT import inside a
/// component, a fake in tests.
pub trait Judge {
    /// Describes this judge.
    fn info(&mut self) -> JudgeInfo;
    /// Answers `question` for every item of the batch, in order.
    fn ask(&mut self, question: &Question, items: &[Item]) -> Result<Response, JudgeError>;
}
