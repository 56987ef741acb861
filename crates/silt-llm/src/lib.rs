//! A local language model for silt's closed questions.
//!
//! One crate for both sides of the sandbox: the wasm judge (`judges/llm`)
//! runs it on the one model folder it is granted, and native tests and
//! benchmarks run the same code. A GGUF file carries everything: the
//! quantized weights ([`model`]), the vocabulary ([`tokenizer`]) and the
//! chat template ([`template`]); [`runner`] shares the work of prompts
//! that begin alike, and [`judge`] asks silt's prompts and reads the
//! answers.

#![deny(missing_docs)]

pub mod gguf;
pub mod judge;
pub mod model;
pub mod runner;
pub mod template;
pub mod tokenizer;

pub use judge::LlmJudge;
pub use model::{Model, find_gguf};
