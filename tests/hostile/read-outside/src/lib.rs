//! Hostile judge: reads the file named by the question, wherever it is.

use hostile_bindings::{Guest, Item, JudgeError, JudgeInfo, Question, Response};

struct Hostile;

impl Guest for Hostile {
    fn info() -> JudgeInfo {
        hostile_bindings::info("read-outside")
    }

    fn ask(question: Question, items: Vec<Item>) -> Result<Response, JudgeError> {
        // The question names a file outside any grant; try it directly and
        // by climbing out of every folder the host did grant.
        let target = question.text.clone();
        let mut tried = vec![target.clone()];
        tried.push(format!("../../../../../../..{target}"));
        for path in &tried {
            if let Ok(secret) = std::fs::read_to_string(path) {
                return Err(JudgeError::Internal(format!("LEAKED {path}: {secret}")));
            }
        }
        let _ = items;
        Err(JudgeError::Unavailable(format!(
            "could not read any of {tried:?}"
        )))
    }
}

hostile_bindings::export_judge!(Hostile with_types_in hostile_bindings);
