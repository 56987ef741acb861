//! The judge an engine imports (`silt:judge/judge`, `silt:judge/relations`,
//! `silt:embed/embed`), forwarded to the judge plugin bound to the call:
//! answers found in the answer cache are not asked again, vectors the
//! ledger kept are not embedded again, and the calls actually made are
//! counted for the result's usage.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use wasmtime::component::{HasSelf, Linker};

use super::progress::Progress;
use crate::bindings::ask_engine::silt::judge::judge as judge_import;
use crate::bindings::embedding_judge::exports::silt::embed::embed::Embedding as JudgeEmbedding;
use crate::bindings::ledger_engine::silt::embed::embed as embed_import;
use crate::bindings::ledger_engine::silt::judge::relations as relations_import;
use crate::bindings::types::{Answer, Item, JudgeError, JudgeInfo, Question, Response, Usage};
use crate::runtime::answer_cache::{AnswerCache, core_answer, core_question};

/// A boxed future, as a judge behind a trait object returns.
pub type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A judge plugin as an engine's calls reach it (the runtime's loaded
/// judge; a trait so this capability does not depend on how judges load).
pub trait BoundJudge: Send + Sync {
    /// What the judge said about itself when it loaded.
    fn info(&self) -> &JudgeInfo;
    /// What its component is: the digest of a plugin from a folder, empty
    /// for a built-in (see `AnswerCache::key`).
    fn build(&self) -> &str {
        ""
    }
    /// One batch of items under one question.
    fn ask<'a>(
        &'a self,
        question: &'a Question,
        items: &'a [Item],
    ) -> Pending<'a, Result<Response, JudgeError>>;
    /// Relations for lesson pairs.
    fn relate(
        &self,
        pairs: Vec<relations_import::LessonPair>,
    ) -> Pending<'_, Result<Vec<relations_import::Relation>, JudgeError>>;
    /// Vectors for texts; `unsupported` when the judge has none.
    fn embed(&self, texts: Vec<String>) -> Pending<'_, Result<JudgeEmbedding, JudgeError>>;
}

/// Keeps a judge's vectors for texts between calls and processes (the
/// ledger file), so an unchanged text is embedded once.
pub trait VectorKeeper: Send + Sync {
    /// The kept vector of each text under `model`, and the model's
    /// calibrated cosines (same, related, unrelated) when known.
    fn lookup(&self, model: &str, texts: &[String]) -> (Vec<Option<Vec<f32>>>, Option<[f64; 3]>);
    /// Keeps vectors the judge just gave.
    fn remember(&self, model: &str, texts: &[String], vectors: &[Vec<f32>], calibration: [f64; 3]);
}

/// One store's judge capability.
#[derive(Default)]
pub struct JudgeCalls {
    plugin: String,
    judge: Option<Arc<dyn BoundJudge>>,
    /// Where questions look for earlier answers.
    pub answers: Option<Arc<AnswerCache>>,
    /// Where the ledger engine's vectors are kept between processes.
    pub vectors: Option<Arc<dyn VectorKeeper>>,
    /// Lesson pairs related so far, when someone watches a sleep pass.
    pub related_pairs: Option<Arc<AtomicU64>>,
    pub progress: Progress,
    /// Calls actually made to the judge, and items the cache answered.
    pub calls: u32,
    pub cache_hits: u32,
}

impl JudgeCalls {
    /// Calls from engine `plugin` to `judge`.
    pub fn new(plugin: &str, judge: Option<Arc<dyn BoundJudge>>) -> Self {
        JudgeCalls {
            plugin: plugin.to_string(),
            judge,
            ..Default::default()
        }
    }

    fn bound(&self, wanted: &str) -> wasmtime::Result<Arc<dyn BoundJudge>> {
        match &self.judge {
            Some(j) => Ok(j.clone()),
            None => wasmtime::bail!(
                "engine '{}' asked for {wanted} but no judge was bound",
                self.plugin
            ),
        }
    }
}

impl judge_import::Host for JudgeCalls {
    async fn info(&mut self) -> wasmtime::Result<JudgeInfo> {
        Ok(self.bound("a judge")?.info().clone())
    }

    async fn ask(
        &mut self,
        question: Question,
        items: Vec<Item>,
    ) -> wasmtime::Result<Result<Response, JudgeError>> {
        let judge = self.bound("a judge")?;
        // tests wait on this line to know a call has reached its judge
        tracing::debug!(engine = %self.plugin, "asking judge '{}' ({} items)", judge.info().name, items.len());
        self.progress.step(items.len() as u64);
        let Some(cache) = self.answers.clone() else {
            self.calls += 1;
            return Ok(judge.ask(&question, &items).await);
        };
        let keys: Vec<String> = items
            .iter()
            .map(|i| AnswerCache::key(judge.info(), judge.build(), &question, &i.text))
            .collect();
        let cached = cache.get(&keys);
        let misses: Vec<usize> = (0..items.len()).filter(|&i| cached[i].is_none()).collect();
        self.cache_hits += (items.len() - misses.len()) as u32;
        let mut usage = Usage {
            units: 0,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: 0.0,
        };
        let mut fresh = Vec::new();
        if !misses.is_empty() {
            let asked: Vec<Item> = misses.iter().map(|&i| items[i].clone()).collect();
            self.calls += 1;
            let response = match judge.ask(&question, &asked).await {
                Ok(r) => r,
                Err(e) => return Ok(Err(e)),
            };
            if response.answers.len() != asked.len() {
                // the engine refuses this with the judge's name attached
                return Ok(Ok(response));
            }
            // only answers that pass validation are remembered
            let valid = silt_core::validate::validate_response(
                &core_question(&question),
                asked.len(),
                &silt_core::types::Response {
                    answers: response.answers.iter().map(core_answer).collect(),
                    usage: Default::default(),
                },
            )
            .is_ok();
            if valid {
                let entries: Vec<(String, Answer)> = misses
                    .iter()
                    .map(|&i| keys[i].clone())
                    .zip(response.answers.iter().cloned())
                    .collect();
                cache.put(&entries);
            }
            usage = response.usage;
            fresh = response.answers;
        }
        let mut fresh = fresh.into_iter();
        let answers = cached
            .into_iter()
            .map(|c| c.or_else(|| fresh.next()))
            .collect::<Option<Vec<Answer>>>()
            .unwrap_or_default();
        Ok(Ok(Response { answers, usage }))
    }
}

impl relations_import::Host for JudgeCalls {
    async fn relate(
        &mut self,
        pairs: Vec<relations_import::LessonPair>,
    ) -> wasmtime::Result<Result<Vec<relations_import::Relation>, JudgeError>> {
        let judge = self.bound("a judge")?;
        let n = pairs.len() as u64;
        let out = judge.relate(pairs).await;
        if let Some(counter) = &self.related_pairs {
            counter.fetch_add(n, Ordering::Relaxed);
        }
        Ok(out)
    }
}

impl embed_import::Host for JudgeCalls {
    async fn embed(
        &mut self,
        texts: Vec<String>,
    ) -> wasmtime::Result<Result<embed_import::Embedding, JudgeError>> {
        let judge = self.bound("vectors")?;
        let answer = |vectors, c: [f64; 3]| embed_import::Embedding {
            vectors,
            same_above: c[0],
            related_above: c[1],
            unrelated_below: c[2],
        };
        let Some(keeper) = self.vectors.clone() else {
            return Ok(judge.embed(texts).await.map(|e| {
                answer(
                    e.vectors,
                    [e.same_above, e.related_above, e.unrelated_below],
                )
            }));
        };
        // the judge embeds only what the ledger has not kept
        let info = judge.info();
        let model = format!("{}\u{0}{}", info.name, info.version);
        let (mut found, calibration) = keeper.lookup(&model, &texts);
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| found[i].is_none()).collect();
        if let Some(c) = calibration
            && missing.is_empty()
        {
            return Ok(Ok(answer(found.into_iter().flatten().collect(), c)));
        }
        let asked: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
        let e = match judge.embed(asked.clone()).await {
            Ok(e) => e,
            Err(err) => return Ok(Err(err)),
        };
        let c = [e.same_above, e.related_above, e.unrelated_below];
        if e.vectors.len() != asked.len() {
            // the engine reports the mismatch
            return Ok(Ok(answer(e.vectors, c)));
        }
        keeper.remember(&model, &asked, &e.vectors, c);
        for (&i, v) in missing.iter().zip(e.vectors) {
            found[i] = Some(v);
        }
        Ok(Ok(answer(found.into_iter().flatten().collect(), c)))
    }
}

/// Which of the judge interfaces a world imports.
#[derive(Debug, Clone, Copy)]
pub enum Imports {
    /// The sieve engines: `silt:judge/judge`.
    Judge,
    /// The ledger engine: `silt:judge/relations` and `silt:embed/embed`.
    RelationsAndEmbed,
}

/// Links the judge interfaces `imports` names to the [`JudgeCalls`] `get`
/// finds.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    imports: Imports,
    get: fn(&mut T) -> &mut JudgeCalls,
) -> wasmtime::Result<()> {
    match imports {
        Imports::Judge => judge_import::add_to_linker::<T, HasSelf<JudgeCalls>>(linker, get),
        Imports::RelationsAndEmbed => {
            relations_import::add_to_linker::<T, HasSelf<JudgeCalls>>(linker, get)?;
            embed_import::add_to_linker::<T, HasSelf<JudgeCalls>>(linker, get)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A judge that says yes with 0.9 to every item and records the
    /// batches it was asked.
    struct Recording {
        info: JudgeInfo,
        asked: Mutex<Vec<usize>>,
    }

    impl BoundJudge for Recording {
        fn info(&self) -> &JudgeInfo {
            &self.info
        }
        fn ask<'a>(
            &'a self,
            _question: &'a Question,
            items: &'a [Item],
        ) -> Pending<'a, Result<Response, JudgeError>> {
            self.asked.lock().unwrap().push(items.len());
            let answers = items.iter().map(|_| Answer::YesProbability(0.9)).collect();
            Box::pin(async move {
                Ok(Response {
                    answers,
                    usage: Usage {
                        units: 1,
                        input_tokens: 0,
                        output_tokens: 0,
                        cost_usd: 0.0,
                    },
                })
            })
        }
        fn relate(
            &self,
            _pairs: Vec<relations_import::LessonPair>,
        ) -> Pending<'_, Result<Vec<relations_import::Relation>, JudgeError>> {
            Box::pin(async { Err(JudgeError::Unsupported("no relate".into())) })
        }
        fn embed(&self, _texts: Vec<String>) -> Pending<'_, Result<JudgeEmbedding, JudgeError>> {
            Box::pin(async { Err(JudgeError::Unsupported("no vectors".into())) })
        }
    }

    fn question() -> Question {
        Question {
            text: "Is it about tests?".into(),
            space: crate::bindings::types::AnswerSpace::Judge(crate::bindings::types::YesNo {
                yes: "it is".into(),
                no: "it is not".into(),
            }),
        }
    }

    fn items(texts: &[&str]) -> Vec<Item> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| Item {
                id: i.to_string(),
                text: t.to_string(),
            })
            .collect()
    }

    #[tokio::test]
    async fn cached_answers_are_not_asked_again_and_are_counted() {
        use judge_import::Host;
        let dir = tempfile::tempdir().unwrap();
        let judge = Arc::new(Recording {
            info: JudgeInfo {
                name: "recording".into(),
                version: "1".into(),
                deterministic: true,
                cost_per_million_input_tokens: 0.0,
                preferred_batch_size: 8,
            },
            asked: Mutex::new(vec![]),
        });
        let mut calls = JudgeCalls::new("ask", Some(judge.clone()));
        calls.answers = Some(Arc::new(
            AnswerCache::open(&dir.path().join("answers.sqlite")).unwrap(),
        ));
        let first = calls.ask(question(), items(&["a", "b"])).await.unwrap();
        assert_eq!(first.unwrap().answers.len(), 2);
        let second = calls
            .ask(question(), items(&["a", "b", "c"]))
            .await
            .unwrap();
        assert_eq!(second.unwrap().answers.len(), 3);
        // only "c" went to the judge the second time
        assert_eq!(*judge.asked.lock().unwrap(), [2, 1]);
        assert_eq!((calls.calls, calls.cache_hits), (2, 2));
    }

    #[tokio::test]
    async fn an_engine_without_a_bound_judge_traps() {
        use judge_import::Host;
        let mut calls = JudgeCalls::new("ask", None);
        let err = calls.info().await.unwrap_err();
        assert!(err.to_string().contains("no judge was bound"), "{err}");
    }
}
