//! The lexical judge's rules exported through `silt:judge@0.1.1` as
//! released (`wit/compat/judge-0.1.1`): named `relations`, no
//! `relations-by-index`. silt must send it each pair whole, so a sleep
//! pass with this judge ends where the lexical judge's does.

#![cfg(target_arch = "wasm32")]

wit_bindgen::generate!({
    path: "../../../wit/compat/judge-0.1.1",
    world: "silt:judge/lesson-judge-plugin",
    // the types interface did not change in 0.1.2
    with: { "silt:judge/types@0.1.1": silt_guest::types },
});

use exports::silt::judge::judge::Guest;
use exports::silt::judge::relations::{Guest as RelationsGuest, LessonPair, Relation};
use silt_core::ledger::relate::{Lesson, lexical_relation};
use silt_guest::types::{Item, JudgeError, JudgeInfo, Question, Response};

struct PairLexical;

impl Guest for PairLexical {
    fn info() -> JudgeInfo {
        let mut info: JudgeInfo = silt_core::lexical::info().into();
        info.name = "pair-lexical".into();
        info
    }

    fn ask(question: Question, items: Vec<Item>) -> Result<Response, JudgeError> {
        let items: Vec<silt_core::types::Item> = items.into_iter().map(Into::into).collect();
        silt_core::lexical::answer(&question.into(), &items)
            .map(Into::into)
            .map_err(Into::into)
    }
}

impl RelationsGuest for PairLexical {
    fn relate(pairs: Vec<LessonPair>) -> Result<Vec<Relation>, JudgeError> {
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
                let [merge, contradict, sibling, distinct] = lexical_relation(&a, &b, &params);
                Relation {
                    merge,
                    contradict,
                    sibling,
                    distinct,
                }
            })
            .collect())
    }
}

export!(PairLexical);
