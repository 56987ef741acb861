//! Hostile judge: answers with probabilities that sum to 2.

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

use hostile_bindings::{Guest, Item, JudgeError, JudgeInfo, Question, Response};

struct Hostile;

impl Guest for Hostile {
    fn info() -> JudgeInfo {
        hostile_bindings::info("bad-probs")
    }

    fn ask(question: Question, items: Vec<Item>) -> Result<Response, JudgeError> {
        let _ = question;
        let answers = items
            .iter()
            .map(|_| {
                hostile_bindings::Answer::Distribution(hostile_bindings::Distribution {
                    probabilities: vec![1.0, 1.0],
                    pick: None,
                })
            })
            .collect();
        Ok(Response {
            answers,
            usage: hostile_bindings::Usage {
                units: 1,
                input_tokens: 0,
                output_tokens: 0,
                cost_usd: 0.0,
            },
        })
    }
}

hostile_bindings::export_judge!(Hostile with_types_in hostile_bindings);
