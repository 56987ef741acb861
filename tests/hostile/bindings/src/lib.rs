//! Judge-plugin bindings for the hostile test components. Each hostile
//! component is a judge that misbehaves in one way; silt must contain it.
//! They are built against `silt:judge@0.1.0` as released
//! (`wit/compat/judge-0.1.0`), so they also show such judges still load.

wit_bindgen::generate!({
    path: "../../../wit/compat/judge-0.1.0",
    world: "silt:judge/judge-plugin",
    pub_export_macro: true,
    export_macro_name: "export_judge",
    default_bindings_module: "hostile_bindings",
});

pub use exports::silt::judge::judge::Guest;
pub use silt::judge::types::*;

/// The info every hostile judge reports.
pub fn info(name: &str) -> JudgeInfo {
    JudgeInfo {
        name: name.into(),
        version: "0.0.0".into(),
        deterministic: true,
        cost_per_million_input_tokens: 0.0,
        preferred_batch_size: 40,
    }
}

/// A plausible answer per item, for hostiles that get past their attack.
pub fn plausible(question: &Question, items: &[Item]) -> Response {
    let answer = match &question.space {
        AnswerSpace::Judge(_) => Answer::YesProbability(0.5),
        AnswerSpace::Choose(o) => uniform(o.len()),
        AnswerSpace::Score(l) => uniform(l.len()),
    };
    Response {
        answers: items.iter().map(|_| answer.clone()).collect(),
        usage: Usage {
            units: items.len() as u32,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: 0.0,
        },
    }
}

fn uniform(n: usize) -> Answer {
    Answer::Distribution(Distribution {
        probabilities: vec![1.0 / n as f64; n],
        pick: None,
    })
}
