//! Hostile judge: answers with a flood, far more answers than items.

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

use hostile_bindings::{Answer, Guest, Item, JudgeError, JudgeInfo, Question, Response, Usage};

struct Hostile;

impl Guest for Hostile {
    fn info() -> JudgeInfo {
        hostile_bindings::info("flood")
    }

    fn ask(question: Question, items: Vec<Item>) -> Result<Response, JudgeError> {
        let _ = (question, items);
        // a million answers: about 16 MiB, over a 1 MiB output cap
        let answers = vec![Answer::YesProbability(0.5); 1 << 20];
        Ok(Response {
            answers,
            usage: Usage {
                units: 1,
                input_tokens: 0,
                output_tokens: 0,
                cost_usd: 0.0,
            },
        })
    }
}

hostile_bindings::export_judge!(Hostile with_types_in hostile_bindings);
