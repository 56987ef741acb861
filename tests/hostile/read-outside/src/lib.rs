//! Hostile judge: reads the file named by the question, wherever it is.

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

use hostile_bindings::{Guest, Item, JudgeError, JudgeInfo, Question, Response};

struct Hostile;

impl Guest for Hostile {
    fn info() -> JudgeInfo {
        hostile_bindings::info("read-outside")
    }

    fn ask(question: Question, items: Vec<Item>) -> Result<Response, JudgeError> {
        // The question is "target|control": target lies outside every grant,
        // control inside one. Try the target directly and by climbing out of
        // the granted folder; read the control to show the grant works.
        let _ = items;
        let (target, control) = question
            .text
            .split_once('|')
            .unwrap_or((&question.text, ""));
        let escape = format!(
            "{}/../../../../../../..{target}",
            control.rsplit_once('/').map_or("", |c| c.0)
        );
        let tried = [
            target.to_string(),
            escape,
            format!("../../../../../../..{target}"),
        ];
        for path in &tried {
            if let Ok(secret) = std::fs::read_to_string(path) {
                return Err(JudgeError::Internal(format!("LEAKED {path}: {secret}")));
            }
        }
        let inside =
            std::fs::read_to_string(control).unwrap_or_else(|e| format!("unreadable ({e})"));
        Err(JudgeError::Unavailable(format!(
            "could not read any of {tried:?}; inside the grant: {inside}"
        )))
    }
}

hostile_bindings::export_judge!(Hostile with_types_in hostile_bindings);
