//! The lexical judge as a component: a thin export of
//! `silt_core::lexical`, which documents the scoring.

wit_bindgen::generate!({
    path: "../../wit/judge",
    world: "silt:judge/judge-plugin",
    with: { "silt:judge/types@0.1.0": silt_guest::types },
});

use exports::silt::judge::judge::Guest;
use silt_guest::types::{Item, JudgeError, JudgeInfo, Question, Response};

struct Lexical;

impl Guest for Lexical {
    fn info() -> JudgeInfo {
        silt_core::lexical::info().into()
    }

    fn ask(question: Question, items: Vec<Item>) -> Result<Response, JudgeError> {
        let items: Vec<silt_core::types::Item> = items.into_iter().map(Into::into).collect();
        silt_core::lexical::answer(&question.into(), &items)
            .map(Into::into)
            .map_err(Into::into)
    }
}

export!(Lexical);
