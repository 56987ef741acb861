//! Hostile judge: never returns.

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

use hostile_bindings::{Guest, Item, JudgeError, JudgeInfo, Question, Response};

struct Hostile;

impl Guest for Hostile {
    fn info() -> JudgeInfo {
        hostile_bindings::info("spin")
    }

    fn ask(question: Question, items: Vec<Item>) -> Result<Response, JudgeError> {
        let _ = (&question, &items);
        let mut n: u64 = 0;
        loop {
            n = std::hint::black_box(n.wrapping_add(1));
        }
    }
}

hostile_bindings::export_judge!(Hostile with_types_in hostile_bindings);
