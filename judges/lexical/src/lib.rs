//! The lexical judge as a component: a thin export of
//! `silt_core::lexical`, which documents the scoring.

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

wit_bindgen::generate!({
    path: "../../wit/judge",
    world: "silt:judge/lesson-judge-plugin",
    with: { "silt:judge/types@0.1.1": silt_guest::types },
});

use exports::silt::judge::judge::Guest;
use exports::silt::judge::relations::{Guest as RelationsGuest, LessonPair, Relation};
use std::cell::RefCell;

use silt_core::ledger::relate::{KeptReadings, Lesson};
use silt_guest::types::{Item, JudgeError, JudgeInfo, Question, Response};

struct Lexical;

/// Texts whose readings the judge keeps between calls (its manifest keeps
/// an instance warm for many): a sleep sends each lesson in a dozen pairs
/// or more, over many calls, and a 100k-lesson ledger has ~49k distinct
/// triggers. A few hundred bytes a text, inside the judge's 64 MiB.
const READINGS_KEPT: usize = 1 << 16;

thread_local! {
    static READINGS: RefCell<KeptReadings> = RefCell::default();
}

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

impl RelationsGuest for Lexical {
    /// The word-overlap relation (`lexical_relation`): sure only where
    /// words can tell, spread where they cannot.
    fn relate(pairs: Vec<LessonPair>) -> Result<Vec<Relation>, JudgeError> {
        let params = silt_core::ledger::Params::default();
        Ok(READINGS.with_borrow_mut(|readings| {
            readings.make_room(READINGS_KEPT);
            pairs
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
                    let [merge, contradict, sibling, distinct] = readings.relation(&a, &b, &params);
                    Relation {
                        merge,
                        contradict,
                        sibling,
                        distinct,
                    }
                })
                .collect()
        }))
    }
}

export!(Lexical);
