//! The lexical judge as a component: a thin export of
//! `silt_core::lexical`, which documents the scoring.

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

wit_bindgen::generate!({
    path: "../../wit/judge",
    world: "silt:judge/lesson-judge-plugin",
    with: { "silt:judge/types@0.1.2": silt_guest::types },
});

use exports::silt::judge::judge::Guest;
use exports::silt::judge::relations::{Guest as RelationsGuest, LessonPair, Relation};
use exports::silt::judge::relations_by_index::{self as by_index, Guest as ByIndexGuest};
use std::cell::RefCell;

use silt_core::ledger::relate::{KeptReadings, Lesson, places};
use silt_guest::types::{Item, JudgeError, JudgeInfo, Question, Response};

struct Lexical;

/// Bytes of readings the judge keeps (its manifest keeps an instance warm
/// for many calls): a sleep sends each lesson in a dozen pairs or more,
/// over many calls. The ~49k distinct triggers of a 100k `agents` ledger
/// take about 20 MiB; past the budget it starts afresh, checked before
/// each pair, so that a call of 4,096 pairs of long lessons cannot take
/// the judge past its 64 MiB.
const READINGS_BYTES: usize = 24 << 20;

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
            pairs
                .iter()
                .map(|p| {
                    // a pair's two readings are compared at once: room is
                    // made between pairs only
                    readings.make_room(READINGS_BYTES);
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

impl ByIndexGuest for Lexical {
    /// The same relations, each lesson read once per call.
    fn relate(
        lessons: Vec<by_index::Lesson>,
        pairs: Vec<(u32, u32)>,
    ) -> Result<Vec<by_index::Relation>, JudgeError> {
        let at = places(lessons.len(), &pairs).map_err(JudgeError::InvalidQuestion)?;
        let lessons: Vec<Lesson<'_>> = lessons
            .iter()
            .map(|l| Lesson {
                when: &l.when,
                prefer: &l.prefer,
            })
            .collect();
        let params = silt_core::ledger::Params::default();
        let relations = READINGS.with_borrow_mut(|readings| {
            // the call's readings are compared with one another: room is
            // made before it only (its lessons add at most a few MiB)
            readings.make_room(READINGS_BYTES);
            readings.relations_by_index(&lessons, &at, &params)
        });
        Ok(relations
            .into_iter()
            .map(
                |[merge, contradict, sibling, distinct]| by_index::Relation {
                    merge,
                    contradict,
                    sibling,
                    distinct,
                },
            )
            .collect())
    }
}

export!(Lexical);
