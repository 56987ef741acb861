//! The sampling judge: closed questions answered by the model of the MCP
//! client whose tool call this is, through `silt:host/sampling` (MCP's
//! `sampling/createMessage`). No log-probabilities come back from a
//! client, so the model states them: one prompt carries a batch of
//! numbered items under the lettered options every silt model judge
//! shows, and the reply is read as JSON by `silt_core::closed::stated`.
//! The component has no network or files and reads only its two price
//! settings; all it can reach is that one client, and only while the call
//! lasts.

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

mod batches;

wit_bindgen::generate!({
    path: ["../../wit/judge", "../../wit/host"],
    inline: "package silt:sampling-judge;
        world plugin {
            import silt:host/sampling@0.2.1;
            include silt:judge/lesson-judge-plugin@0.1.2;
        }",
    world: "silt:sampling-judge/plugin",
    with: { "silt:judge/types@0.1.2": silt_guest::types },
    generate_all,
});

use exports::silt::judge::judge::Guest;
use silt_core::closed::prompt::MAX_OPTIONS;
use silt_core::closed::stated;
use silt_core::ledger::relate::{Lesson, RELATIONS};
use silt_core::types::Answer;
use silt_guest::types::{Item, JudgeError, JudgeInfo, Question, Response};

struct Sampling;

impl Guest for Sampling {
    fn info() -> JudgeInfo {
        JudgeInfo {
            name: "sampling".into(),
            // which model answers is the client's choice, made per
            // request: the answers are never cached (not deterministic)
            version: format!("{}+client-model", env!("CARGO_PKG_VERSION")),
            deterministic: false,
            // the client pays, at a price silt knows only if the user
            // says it (SILT_SAMPLING_PRICE_IN): then budgets bind
            cost_per_million_input_tokens: batches::Prices::from_env().input,
            preferred_batch_size: stated::BATCH_ITEMS as u32,
        }
    }

    fn ask(question: Question, items: Vec<Item>) -> Result<Response, JudgeError> {
        let question: silt_core::types::Question = question.into();
        silt_core::validate::validate_question(&question).map_err(JudgeError::InvalidQuestion)?;
        let n = question.space.criteria().len();
        if n > MAX_OPTIONS {
            return Err(JudgeError::Unsupported(format!(
                "{n} options; this judge labels at most {MAX_OPTIONS}"
            )));
        }
        let texts: Vec<&str> = items.iter().map(|i| i.text.as_str()).collect();
        let (read, mut usage) = batches::answer(texts.len(), n, |places| {
            let batch: Vec<&str> = places.iter().map(|&i| texts[i]).collect();
            stated::ask(&question, &batch)
        })?;
        usage.units = items.len() as u32;
        let answers = read
            .into_iter()
            .map(|p| Answer::from_probabilities(&question.space, p))
            .collect();
        Ok(silt_core::types::Response { answers, usage }.into())
    }
}

silt_guest::lesson_relations!(Sampling, relate_lessons);

/// The model's relation for each pair, in silt_core's relation order
/// (the order `stated::relate` offers them in).
fn relate_lessons(pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Result<Vec<[f64; 4]>, JudgeError> {
    let (read, _) = batches::answer(pairs.len(), RELATIONS.len(), |places| {
        let batch: Vec<(Lesson<'_>, Lesson<'_>)> =
            places.iter().map(|&i| pairs[i].clone()).collect();
        stated::relate(&batch)
    })?;
    Ok(read.into_iter().map(|p| [p[0], p[1], p[2], p[3]]).collect())
}

export!(Sampling);
