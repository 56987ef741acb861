//! The lexical judge's rules exported through `silt:judge@0.1.0` as
//! released (`wit/compat/judge-0.1.0`): `relate` returns each pair's
//! relations as a positional list. silt must read it as the named
//! `relations` of 0.1.1, so a sleep pass with this judge ends where the
//! lexical judge's does.

#![cfg(target_arch = "wasm32")]

wit_bindgen::generate!({
    path: "../../../wit/compat/judge-0.1.0",
    world: "silt:judge/lesson-judge-plugin",
    // the types interface did not change in 0.1.1
    with: { "silt:judge/types@0.1.0": silt_guest::types },
});

use exports::silt::judge::judge::Guest;
use exports::silt::judge::relate::{Guest as RelateGuest, LessonPair};
use silt_core::ledger::relate::{Lesson, lexical_relation};
use silt_guest::types::{Distribution, Item, JudgeError, JudgeInfo, Question, Response};

struct OldLexical;

impl Guest for OldLexical {
    fn info() -> JudgeInfo {
        let mut info: JudgeInfo = silt_core::lexical::info().into();
        info.name = "old-lexical".into();
        info
    }

    fn ask(question: Question, items: Vec<Item>) -> Result<Response, JudgeError> {
        let items: Vec<silt_core::types::Item> = items.into_iter().map(Into::into).collect();
        silt_core::lexical::answer(&question.into(), &items)
            .map(Into::into)
            .map_err(Into::into)
    }
}

impl RelateGuest for OldLexical {
    fn relate(pairs: Vec<LessonPair>) -> Result<Vec<Distribution>, JudgeError> {
        let params = silt_core::ledger::Params::default();
        Ok(pairs
            .iter()
            .map(|p| {
                let a = Lesson {
                    when: &p.a.when,
                    prefer: &p.a.prefer,
                };
                let b = Lesson {
                    when: &p.b.when,
                    prefer: &p.b.prefer,
                };
                Distribution {
                    probabilities: lexical_relation(&a, &b, &params).to_vec(),
                    pick: None,
                }
            })
            .collect())
    }
}

export!(OldLexical);
