//! The embedding judge as a component: `silt_embed::EmbeddingJudge` on the
//! model folder the host granted (read-only, mounted under `/models/`).
//!
//! The model loads on the first call and stays for the life of the
//! instance; the host keeps this judge's instances warm (its manifest sets
//! `reuse_calls`), so later calls pay neither the load nor for texts
//! already embedded.

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

wit_bindgen::generate!({
    path: ["../../wit/judge", "../../wit/embed"],
    world: "silt:embed/embedding-judge-plugin",
    with: { "silt:judge/types@0.1.2": silt_guest::types },
});

use std::cell::RefCell;

use exports::silt::judge::judge::Guest;
use exports::silt::judge::relations::{Guest as RelationsGuest, LessonPair, Relation};
use exports::silt::judge::relations_by_index::{self as by_index, Guest as ByIndexGuest};
use silt_core::types::{Judge, JudgeError as CoreError};
use silt_embed::EmbeddingJudge;
use silt_embed::judge::LessonText;
use silt_guest::types::{Item, JudgeError, JudgeInfo, Question, Response};

thread_local! {
    static LOADED: RefCell<Option<EmbeddingJudge>> = const { RefCell::new(None) };
}

/// The granted folder holding a model: the first preopen with weights.
fn model_dir() -> Result<std::path::PathBuf, CoreError> {
    let granted: Vec<String> = wasi::filesystem::preopens::get_directories()
        .into_iter()
        .map(|(_, path)| path)
        .collect();
    granted
        .iter()
        .map(std::path::PathBuf::from)
        .find(|p| p.join("model.safetensors").is_file())
        .ok_or_else(|| {
            CoreError::Unavailable(if granted.is_empty() {
                "the embedding judge was granted no model folder; install one with `silt models install minilm`".into()
            } else {
                format!(
                    "none of the folders granted to the embedding judge ({}) holds model.safetensors",
                    granted.join(", ")
                )
            })
        })
}

/// Runs `f` on the loaded judge, loading it first if needed.
fn with_judge<T>(
    f: impl FnOnce(&mut EmbeddingJudge) -> Result<T, CoreError>,
) -> Result<T, CoreError> {
    silt_guest::warm::with_loaded(&LOADED, || EmbeddingJudge::load(&model_dir()?), f)
}

struct Embedding;

impl Guest for Embedding {
    fn info() -> JudgeInfo {
        with_judge(|j| Ok(j.info()))
            .unwrap_or_else(|_| silt_guest::warm::unloaded("embedding", 32))
            .into()
    }

    fn ask(question: Question, items: Vec<Item>) -> Result<Response, JudgeError> {
        let items: Vec<silt_core::types::Item> = items.into_iter().map(Into::into).collect();
        with_judge(|j| j.ask(&question.into(), &items))
            .map(Into::into)
            .map_err(Into::into)
    }
}

impl RelationsGuest for Embedding {
    fn relate(pairs: Vec<LessonPair>) -> Result<Vec<Relation>, JudgeError> {
        let pairs: Vec<(LessonText<'_>, LessonText<'_>)> = pairs
            .iter()
            .map(|p| {
                (
                    (p.a.when.as_str(), p.a.prefer.as_str()),
                    (p.b.when.as_str(), p.b.prefer.as_str()),
                )
            })
            .collect();
        with_judge(|j| j.relate(&pairs))
            .map(|rows| {
                rows.into_iter()
                    .map(|[merge, contradict, sibling, distinct]| Relation {
                        merge,
                        contradict,
                        sibling,
                        distinct,
                    })
                    .collect()
            })
            .map_err(Into::into)
    }
}

impl ByIndexGuest for Embedding {
    fn relate(
        lessons: Vec<by_index::Lesson>,
        pairs: Vec<(u32, u32)>,
    ) -> Result<Vec<by_index::Relation>, JudgeError> {
        let at = silt_core::ledger::relate::places(lessons.len(), &pairs)
            .map_err(JudgeError::InvalidQuestion)?;
        let lessons: Vec<LessonText<'_>> = lessons
            .iter()
            .map(|l| (l.when.as_str(), l.prefer.as_str()))
            .collect();
        with_judge(|j| j.relate_by_index(&lessons, &at))
            .map(|rows| {
                rows.into_iter()
                    .map(
                        |[merge, contradict, sibling, distinct]| by_index::Relation {
                            merge,
                            contradict,
                            sibling,
                            distinct,
                        },
                    )
                    .collect()
            })
            .map_err(Into::into)
    }
}

impl exports::silt::embed::embed::Guest for Embedding {
    fn embed(texts: Vec<String>) -> Result<exports::silt::embed::embed::Embedding, JudgeError> {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        with_judge(|j| {
            let vectors = j.cache.vectors(&j.encoder, &refs)?;
            let c = j.calibration;
            Ok(exports::silt::embed::embed::Embedding {
                vectors: vectors.iter().map(|v| v.to_vec()).collect(),
                same_above: c.same.midpoint(),
                related_above: c.related_above(),
                unrelated_below: c.unrelated_below(),
            })
        })
        .map_err(Into::into)
    }
}

export!(Embedding);
