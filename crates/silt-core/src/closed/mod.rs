//! The closed-question protocol for language-model judges.
//!
//! A model never writes an answer here: every question becomes a prompt
//! whose options carry one single-token label each (A, B, C, ...), the
//! model is asked for one token, and the answer is the probability the
//! model gave each label in the top log-probabilities of that token,
//! renormalised over the labels ([`read`]). The same prompts and the same
//! reading serve a model behind an OpenAI-compatible server ([`openai`])
//! and one run in the sandbox.
//!
//! Small models lean on one label whatever the content (SmolLM2-135M
//! answered "A" to 80 of 80 lesson pairs), so two corrections are offered
//! ([`debias`]): averaging over label orders (each option is shown under
//! every letter once) and dividing out the model's prior for each label
//! (contextual calibration: its answer to a content-free item).
//!
//! A model that gives no log-probabilities (an agent CLI, a client's model
//! through MCP sampling) states them instead, a batch of numbered items to
//! a prompt, as JSON ([`stated`]); [`agent`] asks an agent CLI so.

pub mod agent;
pub mod debias;
pub mod openai;
pub mod plan;
pub mod prompt;
pub mod read;
pub mod stated;

pub use debias::Debias;
pub use plan::{Outcome, Plan};
pub use prompt::Prompt;
pub use read::{LabelFloor, ReadError, TopToken, label_probabilities};
