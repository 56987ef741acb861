//! The local language-model judge as a component: `silt_llm::LlmJudge` on
//! the GGUF model in the folder the host granted (read-only, mounted
//! under `/models/`), with no network.
//!
//! The model loads on the first call and stays for the life of the
//! instance; the host keeps this judge's instances warm (its manifest sets
//! `reuse_calls`), so later calls pay neither the load nor for question
//! heads already run.

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

wit_bindgen::generate!({
    path: "../../wit/judge",
    world: "silt:judge/lesson-judge-plugin",
    with: { "silt:judge/types@0.1.2": silt_guest::types },
});

use std::cell::RefCell;
use std::path::PathBuf;

use exports::silt::judge::judge::Guest;
use exports::silt::judge::relations::{Guest as RelationsGuest, LessonPair, Relation};
use exports::silt::judge::relations_by_index::{self as by_index, Guest as ByIndexGuest};
use silt_core::closed::Debias;
use silt_core::ledger::relate::{Lesson, pairs_by_index};
use silt_core::types::{Judge, JudgeError as CoreError};
use silt_guest::types::{Item, JudgeError, JudgeInfo, Question, Response};
use silt_llm::{LlmJudge, find_gguf};

thread_local! {
    static LOADED: RefCell<Option<LlmJudge>> = const { RefCell::new(None) };
}

/// The granted folder holding a GGUF model: the first preopen with one.
fn model_file() -> Result<PathBuf, CoreError> {
    let granted: Vec<String> = wasi::filesystem::preopens::get_directories()
        .into_iter()
        .map(|(_, path)| path)
        .collect();
    if granted.is_empty() {
        return Err(CoreError::Unavailable(
            "the llm judge was granted no model folder; install one with `silt models install \
             smollm2`"
                .into(),
        ));
    }
    let mut last = None;
    for dir in &granted {
        match find_gguf(std::path::Path::new(dir)) {
            Ok(path) => return Ok(path),
            Err(e) => last = Some(e),
        }
    }
    Err(last.expect("one folder at least"))
}

/// The label corrections: `SILT_LLM_DEBIAS` (none, prior, rotate, both).
fn debias() -> Result<Debias, CoreError> {
    match std::env::var("SILT_LLM_DEBIAS") {
        Ok(v) if !v.trim().is_empty() => v
            .parse()
            .map_err(|e: String| CoreError::InvalidQuestion(format!("SILT_LLM_DEBIAS: {e}"))),
        _ => Ok(Debias::default()),
    }
}

/// Runs `f` on the loaded judge, loading it first if needed.
fn with_judge<T>(f: impl FnOnce(&mut LlmJudge) -> Result<T, CoreError>) -> Result<T, CoreError> {
    silt_guest::warm::with_loaded(
        &LOADED,
        || {
            let mut judge = LlmJudge::load(&model_file()?, debias()?)?;
            // off only to measure what sharing saves (`silt-bench llm`)
            judge.runner.share = std::env::var("SILT_LLM_SHARE_HEADS").as_deref() != Ok("0");
            Ok(judge)
        },
        f,
    )
}

struct Llm;

impl Guest for Llm {
    fn info() -> JudgeInfo {
        with_judge(|j| Ok(j.info()))
            .unwrap_or_else(|_| silt_guest::warm::unloaded("llm", 16))
            .into()
    }

    fn ask(question: Question, items: Vec<Item>) -> Result<Response, JudgeError> {
        let items: Vec<silt_core::types::Item> = items.into_iter().map(Into::into).collect();
        with_judge(|j| j.ask(&question.into(), &items))
            .map(Into::into)
            .map_err(Into::into)
    }
}

impl RelationsGuest for Llm {
    fn relate(pairs: Vec<LessonPair>) -> Result<Vec<Relation>, JudgeError> {
        let pairs: Vec<(Lesson<'_>, Lesson<'_>)> = pairs
            .iter()
            .map(|p| {
                (
                    Lesson {
                        when: &p.a.when,
                        prefer: &p.a.prefer,
                    },
                    Lesson {
                        when: &p.b.when,
                        prefer: &p.b.prefer,
                    },
                )
            })
            .collect();
        Ok(with_judge(|j| j.relate(&pairs))?
            .into_iter()
            .map(|[merge, contradict, sibling, distinct]| Relation {
                merge,
                contradict,
                sibling,
                distinct,
            })
            .collect())
    }
}

impl ByIndexGuest for Llm {
    fn relate(
        lessons: Vec<by_index::Lesson>,
        pairs: Vec<(u32, u32)>,
    ) -> Result<Vec<by_index::Relation>, JudgeError> {
        let pairs = pairs_by_index(&lessons, &pairs, |l| Lesson {
            when: &l.when,
            prefer: &l.prefer,
        })
        .map_err(JudgeError::InvalidQuestion)?;
        Ok(with_judge(|j| j.relate(&pairs))?
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

export!(Llm);
