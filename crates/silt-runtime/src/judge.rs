//! A loaded judge plugin: compiled once, instantiated fresh per call, or
//! kept warm for `limits.reuse_calls` calls when it loads something costly
//! (a model) on its first call.

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;
use wasmtime::{Engine, Store};

use super::capability::judge_calls::{BoundJudge, Pending};
use super::failure::PluginFailure;
use super::grants::Grants;
use super::sandbox::Sandbox;
use super::state::PluginState;
use crate::bindings::embedding_judge::exports::silt::embed::embed::Embedding;
use crate::bindings::embedding_judge::{Embedder, EmbedderPre};
use crate::bindings::judge::{JudgePlugin, JudgePluginPre};
use crate::bindings::ledger_engine::silt::judge::relations as engine_relations;
use crate::bindings::relate_judge_v0_1::exports::silt::judge::relate as positional;
use crate::bindings::relate_judge_v0_1::{RelateJudge, RelateJudgePre};
use crate::bindings::relations_by_index_judge::exports::silt::judge::relations_by_index as by_index;
use crate::bindings::relations_by_index_judge::{RelationsByIndexJudge, RelationsByIndexJudgePre};
use crate::bindings::relations_judge::exports::silt::judge::relations as named;
use crate::bindings::relations_judge::{RelationsJudge, RelationsJudgePre};
use crate::bindings::types::{Distribution, Item, JudgeError, JudgeInfo, Question, Response};
use silt_plugins::manifest::Manifest;

/// One call on a warm instance's export `$field` (taken out of the
/// instance for the call, put back with it), under the plugin's limits; the
/// instance goes back to the pool only if the call did not trap or time out.
/// Returns from the enclosing function.
macro_rules! warm_call {
    ($self:ident, $field:ident, |$handle:ident, $store:ident| $call:expr) => {{
        let mut warm = $self
            .acquire()
            .await
            .map_err(|f| JudgeError::Unavailable(f.to_string()))?;
        let Some($handle) = warm.$field.take() else {
            return Err(JudgeError::Internal(format!(
                "judge '{}' lost its {} export",
                $self.manifest.plugin.name,
                stringify!($field)
            )));
        };
        let outcome = {
            let $store = &mut warm.store;
            tokio::time::timeout($self.sandbox().wall(), $call).await
        };
        let finished = $self.sandbox().finish(&warm.store, outcome);
        if finished.is_ok() {
            warm.$field = Some($handle);
            $self.release(warm);
        }
        return $self.judged(finished);
    }};
}

/// One call on a fresh instance of `$pre` in a fresh store, under the
/// plugin's limits.
macro_rules! fresh_call {
    ($self:ident, $pre:expr, |$plugin:ident, $store:ident| $call:expr) => {{
        let sandbox = $self.sandbox();
        let mut store = sandbox
            .store()
            .map_err(|f| JudgeError::Unavailable(f.to_string()))?;
        let outcome = tokio::time::timeout(sandbox.wall(), async {
            let $plugin = $pre.instantiate_async(&mut store).await?;
            let $store = &mut store;
            $call.await
        })
        .await;
        $self.judged(sandbox.finish(&store, outcome))
    }};
}

/// A judge ready to answer.
pub struct LoadedJudge {
    /// Its manifest, as loaded.
    pub manifest: Arc<Manifest>,
    /// What it said about itself when it loaded: a name, a finite cost,
    /// batches of at least one.
    pub info: JudgeInfo,
    /// See [`BoundJudge::build`].
    pub build: String,
    grants: Grants,
    engine: Engine,
    pre: JudgePluginPre<PluginState>,
    /// How the judge relates lessons, if it does.
    relate_pre: RelatePre,
    /// Set when the component also exports `silt:embed/embed`.
    embed_pre: Option<EmbedderPre<PluginState>>,
    /// Idle warm instances (judges with `reuse_calls` > 1).
    warm: Mutex<Vec<Warm>>,
}

/// Idle warm instances kept per judge; busier moments create more, which
/// are dropped after their call.
const MAX_IDLE: usize = 2;

/// An instance kept between calls, with the store it lives in.
struct Warm {
    store: Store<PluginState>,
    judge: Option<JudgePlugin>,
    relations_by_index: Option<RelationsByIndexJudge>,
    relations: Option<RelationsJudge>,
    relate_v0_1: Option<RelateJudge>,
    embed: Option<Embedder>,
    calls: u32,
}

/// Which relation export a judge has, found when it loads.
pub enum RelatePre {
    /// `silt:judge/relations-by-index` (silt:judge 0.1.2 and later).
    ByIndex(RelationsByIndexJudgePre<PluginState>),
    /// `silt:judge/relations` (silt:judge 0.1.1).
    Named(RelationsJudgePre<PluginState>),
    /// The deprecated positional `relate` of a judge built against 0.1.0.
    Positional(RelateJudgePre<PluginState>),
    /// Neither: the judge serves everything but the sleep pass.
    None,
}

impl RelatePre {
    /// The newest relation export `pre`'s component has.
    pub fn find(pre: &wasmtime::component::InstancePre<PluginState>) -> Self {
        if let Ok(by_index) = RelationsByIndexJudgePre::new(pre.clone()) {
            RelatePre::ByIndex(by_index)
        } else if let Ok(named) = RelationsJudgePre::new(pre.clone()) {
            RelatePre::Named(named)
        } else if let Ok(positional) = RelateJudgePre::new(pre.clone()) {
            RelatePre::Positional(positional)
        } else {
            RelatePre::None
        }
    }
}

impl LoadedJudge {
    /// Wraps a pre-instantiated judge, asking it for its info once.
    pub async fn load(
        engine: Engine,
        build: String,
        manifest: Arc<Manifest>,
        grants: Grants,
        pre: JudgePluginPre<PluginState>,
        relate_pre: RelatePre,
        embed_pre: Option<EmbedderPre<PluginState>>,
    ) -> Result<Self, PluginFailure> {
        let mut loaded = LoadedJudge {
            build,
            manifest,
            info: JudgeInfo {
                name: String::new(),
                version: String::new(),
                deterministic: false,
                cost_per_million_input_tokens: 0.0,
                preferred_batch_size: 1,
            },
            grants,
            engine,
            pre,
            relate_pre,
            embed_pre,
            warm: Mutex::new(Vec::new()),
        };
        let info = if loaded.is_warm() {
            let mut warm = loaded.acquire().await?;
            let outcome = tokio::time::timeout(
                loaded.sandbox().wall(),
                warm.judge
                    .as_ref()
                    .expect("a new instance has its judge")
                    .silt_judge_judge()
                    .call_info(&mut warm.store),
            )
            .await;
            let info = loaded.sandbox().finish(&warm.store, outcome)?;
            loaded.release(warm);
            info
        } else {
            let sandbox = loaded.sandbox();
            let mut store = sandbox.store()?;
            let outcome = tokio::time::timeout(sandbox.wall(), async {
                let judge = loaded.pre.instantiate_async(&mut store).await?;
                judge.silt_judge_judge().call_info(&mut store).await
            })
            .await;
            sandbox.finish(&store, outcome)?
        };
        check_info(&loaded.manifest.plugin.name, &info)?;
        loaded.info = info;
        Ok(loaded)
    }

    fn sandbox(&self) -> Sandbox<'_> {
        Sandbox {
            engine: &self.engine,
            manifest: &self.manifest,
            grants: &self.grants,
        }
    }

    /// Whether this judge's instances outlive a call.
    fn is_warm(&self) -> bool {
        self.manifest.limits.reuse_calls > 1
    }

    /// An idle warm instance, or a new one; its limits reset for one call.
    async fn acquire(&self) -> Result<Warm, PluginFailure> {
        let idle = self.warm.lock().expect("warm pool lock").pop();
        let mut warm = match idle {
            Some(w) => w,
            None => {
                let sandbox = self.sandbox();
                let mut store = sandbox.store()?;
                let outcome = tokio::time::timeout(sandbox.wall(), async {
                    let instance = self
                        .pre
                        .instance_pre()
                        .instantiate_async(&mut store)
                        .await?;
                    let judge = JudgePlugin::new(&mut store, &instance)?;
                    let relations_by_index = match self.relate_pre {
                        RelatePre::ByIndex(_) => {
                            RelationsByIndexJudge::new(&mut store, &instance).ok()
                        }
                        _ => None,
                    };
                    let relations = match self.relate_pre {
                        RelatePre::Named(_) => RelationsJudge::new(&mut store, &instance).ok(),
                        _ => None,
                    };
                    let relate_v0_1 = match self.relate_pre {
                        RelatePre::Positional(_) => RelateJudge::new(&mut store, &instance).ok(),
                        _ => None,
                    };
                    let embed = self
                        .embed_pre
                        .as_ref()
                        .and_then(|_| Embedder::new(&mut store, &instance).ok());
                    Ok((judge, relations_by_index, relations, relate_v0_1, embed))
                })
                .await;
                let (judge, relations_by_index, relations, relate_v0_1, embed) =
                    sandbox.finish(&store, outcome)?;
                Warm {
                    store,
                    judge: Some(judge),
                    relations_by_index,
                    relations,
                    relate_v0_1,
                    embed,
                    calls: 0,
                }
            }
        };
        // each call gets the whole CPU budget again
        Sandbox::refresh(&mut warm.store);
        Ok(warm)
    }

    /// The largest linear memory an idle warm instance has grown to.
    pub fn peak_memory(&self) -> usize {
        let pool = self.warm.lock().expect("warm pool lock");
        pool.iter()
            .map(|w| w.store.data().memory.peak)
            .max()
            .unwrap_or(0)
    }

    /// Puts back an instance whose call succeeded, unless it has served
    /// its calls or enough are idle already.
    fn release(&self, mut warm: Warm) {
        warm.calls += 1;
        let mut pool = self.warm.lock().expect("warm pool lock");
        if warm.calls < self.manifest.limits.reuse_calls && pool.len() < MAX_IDLE {
            pool.push(warm);
        }
    }

    /// Asks one batch, with the plugin's limits. A contained failure comes
    /// back as a judge error, so the engine that asked can report it.
    pub async fn ask(&self, question: &Question, items: &[Item]) -> Result<Response, JudgeError> {
        if self.is_warm() {
            warm_call!(self, judge, |judge, store| judge
                .silt_judge_judge()
                .call_ask(store, question, items));
        }
        fresh_call!(self, self.pre, |judge, store| judge
            .silt_judge_judge()
            .call_ask(store, question, items))
    }
}

impl LoadedJudge {
    /// Whether this judge can relate lessons (the ledger's sleep pass).
    pub fn can_relate(&self) -> bool {
        !matches!(self.relate_pre, RelatePre::None)
    }

    /// Whether the judge exports `silt:embed/embed`.
    pub fn has_vectors(&self) -> bool {
        self.embed_pre.is_some()
    }

    /// Vectors for `texts`, when the judge exports `silt:embed/embed`;
    /// `unsupported` otherwise (the caller falls back to its own scoring).
    pub async fn embed(&self, texts: Vec<String>) -> Result<Embedding, JudgeError> {
        if self.embed_pre.is_none() {
            return Err(JudgeError::Unsupported(format!(
                "judge '{}' has no vectors (it does not export silt:embed/embed)",
                self.manifest.plugin.name
            )));
        }
        if self.is_warm() {
            warm_call!(self, embed, |embed, store| embed
                .silt_embed_embed()
                .call_embed(store, &texts));
        }
        let pre = self.embed_pre.as_ref().expect("checked above");
        fresh_call!(self, pre, |judge, store| judge
            .silt_embed_embed()
            .call_embed(store, &texts))
    }

    /// Relates lesson pairs, with the plugin's limits; failures come back
    /// as judge errors for the engine to report. A judge built against
    /// silt:judge 0.1.0 answers through the deprecated positional `relate`,
    /// whose lists are read as the four named relations.
    ///
    /// The pairs go in batches of the judge's preferred size (the ledger
    /// sends up to 4,096): each call is held to the plugin's CPU and time
    /// limits, so a slow judge's limit bounds one batch, not a whole sleep
    /// pass (a local language model relates a pair in seconds).
    pub async fn relate(
        &self,
        pairs: Vec<engine_relations::LessonPair>,
    ) -> Result<Vec<engine_relations::Relation>, JudgeError> {
        let size = (self.info.preferred_batch_size as usize).max(1);
        let mut out = Vec::with_capacity(pairs.len());
        let mut pairs = pairs.into_iter().peekable();
        while pairs.peek().is_some() {
            let batch: Vec<_> = pairs.by_ref().take(size).collect();
            out.extend(self.relate_batch(batch).await?);
        }
        Ok(out)
    }

    async fn relate_batch(
        &self,
        pairs: Vec<engine_relations::LessonPair>,
    ) -> Result<Vec<engine_relations::Relation>, JudgeError> {
        match &self.relate_pre {
            RelatePre::ByIndex(pre) => {
                // lessons said alike (a pair's first lesson is usually the
                // last pair's) are sent once
                let mut place: FxHashMap<(&str, &str), u32> = FxHashMap::default();
                let mut lessons: Vec<by_index::Lesson> = Vec::new();
                let mut indices: Vec<(u32, u32)> = Vec::with_capacity(pairs.len());
                for p in &pairs {
                    let [a, b] = [&p.a, &p.b].map(|l| {
                        *place
                            .entry((l.when.as_str(), l.prefer.as_str()))
                            .or_insert_with(|| {
                                lessons.push(by_index::Lesson {
                                    when: l.when.clone(),
                                    prefer: l.prefer.clone(),
                                });
                                lessons.len() as u32 - 1
                            })
                    });
                    indices.push((a, b));
                }
                let relations = self.relate_by_index_call(pre, &lessons, &indices).await?;
                Ok(relations.into_iter().map(engine_relation).collect())
            }
            RelatePre::Named(pre) => {
                let lesson = |l: engine_relations::Lesson| named::Lesson {
                    when: l.when,
                    prefer: l.prefer,
                };
                let pairs: Vec<named::LessonPair> = pairs
                    .into_iter()
                    .map(|p| named::LessonPair {
                        a: lesson(p.a),
                        b: lesson(p.b),
                    })
                    .collect();
                let relations = self.relate_named(pre, &pairs).await?;
                Ok(relations
                    .into_iter()
                    .map(|r| engine_relations::Relation {
                        merge: r.merge,
                        contradict: r.contradict,
                        sibling: r.sibling,
                        distinct: r.distinct,
                    })
                    .collect())
            }
            RelatePre::Positional(pre) => {
                let lesson = |l: engine_relations::Lesson| positional::Lesson {
                    when: l.when,
                    prefer: l.prefer,
                };
                let pairs: Vec<positional::LessonPair> = pairs
                    .into_iter()
                    .map(|p| positional::LessonPair {
                        a: lesson(p.a),
                        b: lesson(p.b),
                    })
                    .collect();
                let lists = self.relate_positional(pre, &pairs).await?;
                lists
                    .iter()
                    .enumerate()
                    .map(|(i, d)| named_relation(&self.manifest.plugin.name, i, d))
                    .collect()
            }
            RelatePre::None => Err(JudgeError::Unsupported(format!(
                "judge '{}' does not export silt:judge/relations, so it cannot relate lessons; use the lexical judge or review and apply judgments yourself",
                self.manifest.plugin.name
            ))),
        }
    }

    /// Relates one batch of pairs, each two indices into `lessons`, with
    /// the plugin's limits (the caller keeps a batch to the judge's
    /// preferred size). A judge without `relations-by-index` is sent each
    /// pair whole.
    pub async fn relate_by_index(
        &self,
        lessons: &[by_index::Lesson],
        pairs: &[(u32, u32)],
    ) -> Result<Vec<engine_relations::Relation>, JudgeError> {
        let RelatePre::ByIndex(pre) = &self.relate_pre else {
            let lesson = |i: u32| {
                let l = &lessons[i as usize];
                engine_relations::Lesson {
                    when: l.when.clone(),
                    prefer: l.prefer.clone(),
                }
            };
            let pairs = pairs
                .iter()
                .map(|&(a, b)| engine_relations::LessonPair {
                    a: lesson(a),
                    b: lesson(b),
                })
                .collect();
            return self.relate(pairs).await;
        };
        let relations = self.relate_by_index_call(pre, lessons, pairs).await?;
        Ok(relations.into_iter().map(engine_relation).collect())
    }

    async fn relate_by_index_call(
        &self,
        pre: &RelationsByIndexJudgePre<PluginState>,
        lessons: &[by_index::Lesson],
        pairs: &[(u32, u32)],
    ) -> Result<Vec<by_index::Relation>, JudgeError> {
        if self.is_warm() {
            warm_call!(self, relations_by_index, |relations, store| relations
                .silt_judge_relations_by_index()
                .call_relate(store, lessons, pairs));
        }
        fresh_call!(self, pre, |judge, store| judge
            .silt_judge_relations_by_index()
            .call_relate(store, lessons, pairs))
    }

    async fn relate_named(
        &self,
        pre: &RelationsJudgePre<PluginState>,
        pairs: &[named::LessonPair],
    ) -> Result<Vec<named::Relation>, JudgeError> {
        if self.is_warm() {
            warm_call!(self, relations, |relations, store| relations
                .silt_judge_relations()
                .call_relate(store, pairs));
        }
        fresh_call!(self, pre, |judge, store| judge
            .silt_judge_relations()
            .call_relate(store, pairs))
    }

    async fn relate_positional(
        &self,
        pre: &RelateJudgePre<PluginState>,
        pairs: &[positional::LessonPair],
    ) -> Result<Vec<Distribution>, JudgeError> {
        if self.is_warm() {
            warm_call!(self, relate_v0_1, |relate, store| relate
                .silt_judge_relate()
                .call_relate(store, pairs));
        }
        fresh_call!(self, pre, |judge, store| judge
            .silt_judge_relate()
            .call_relate(store, pairs))
    }

    /// A finished call as the engine that asked sees it: the judge's own
    /// answer or error, the output cap applied, and a contained failure
    /// (trap, limit) turned into a judge error.
    fn judged<T: serde::Serialize>(
        &self,
        finished: Result<Result<T, JudgeError>, PluginFailure>,
    ) -> Result<T, JudgeError> {
        match finished {
            Ok(Ok(value)) => {
                PluginFailure::check_output(
                    &self.manifest.plugin.name,
                    &value,
                    &self.manifest.limits,
                )
                .map_err(|f| JudgeError::LimitExceeded(f.to_string()))?;
                Ok(value)
            }
            Ok(Err(e)) => Err(e),
            Err(f @ (PluginFailure::Trapped { .. } | PluginFailure::Start { .. })) => {
                Err(JudgeError::Internal(f.to_string()))
            }
            Err(f) => Err(JudgeError::LimitExceeded(f.to_string())),
        }
    }

    /// Creates a store and an instance, and drops them.
    pub async fn instantiate_only(&self) -> Result<(), PluginFailure> {
        let sandbox = self.sandbox();
        let mut store = sandbox.store()?;
        let outcome = tokio::time::timeout(sandbox.wall(), async {
            self.pre.instantiate_async(&mut store).await.map(drop)
        })
        .await;
        sandbox.finish(&store, outcome)
    }
}

/// A relation by index as the engine's `relations` has it.
fn engine_relation(r: by_index::Relation) -> engine_relations::Relation {
    engine_relations::Relation {
        merge: r.merge,
        contradict: r.contradict,
        sibling: r.sibling,
        distinct: r.distinct,
    }
}

/// Pair `i`'s positional list (merge, contradict, sibling, distinct) as
/// named relations; the engine validates the probabilities.
fn named_relation(
    plugin: &str,
    i: usize,
    d: &Distribution,
) -> Result<engine_relations::Relation, JudgeError> {
    match d.probabilities[..] {
        [merge, contradict, sibling, distinct] => Ok(engine_relations::Relation {
            merge,
            contradict,
            sibling,
            distinct,
        }),
        _ => Err(JudgeError::Internal(format!(
            "judge '{plugin}' gave {} probabilities for pair {i}; silt:judge 0.1.0's relate lists four (merge, contradict, sibling, distinct)",
            d.probabilities.len()
        ))),
    }
}

/// Refuses an info record no caller could plan around.
fn check_info(plugin: &str, info: &JudgeInfo) -> Result<(), PluginFailure> {
    let fault = if info.name.trim().is_empty() {
        Some("its info has an empty name".to_string())
    } else if !info.cost_per_million_input_tokens.is_finite()
        || info.cost_per_million_input_tokens < 0.0
    {
        Some(format!(
            "its info gives a cost of {} per million tokens",
            info.cost_per_million_input_tokens
        ))
    } else if info.preferred_batch_size == 0 {
        Some("its info asks for batches of 0 items".to_string())
    } else {
        None
    };
    match fault {
        Some(reason) => Err(PluginFailure::Start {
            plugin: plugin.into(),
            reason,
        }),
        None => Ok(()),
    }
}

impl BoundJudge for LoadedJudge {
    fn info(&self) -> &JudgeInfo {
        &self.info
    }

    fn build(&self) -> &str {
        &self.build
    }

    fn ask<'a>(
        &'a self,
        question: &'a Question,
        items: &'a [Item],
    ) -> Pending<'a, Result<Response, JudgeError>> {
        Box::pin(LoadedJudge::ask(self, question, items))
    }

    fn relate(
        &self,
        pairs: Vec<engine_relations::LessonPair>,
    ) -> Pending<'_, Result<Vec<engine_relations::Relation>, JudgeError>> {
        Box::pin(LoadedJudge::relate(self, pairs))
    }

    fn relate_by_index<'a>(
        &'a self,
        lessons: &'a [by_index::Lesson],
        pairs: &'a [(u32, u32)],
    ) -> Pending<'a, Result<Vec<engine_relations::Relation>, JudgeError>> {
        Box::pin(LoadedJudge::relate_by_index(self, lessons, pairs))
    }

    fn embed(&self, texts: Vec<String>) -> Pending<'_, Result<Embedding, JudgeError>> {
        Box::pin(LoadedJudge::embed(self, texts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positional(p: &[f64]) -> Distribution {
        Distribution {
            probabilities: p.to_vec(),
            pick: None,
        }
    }

    #[test]
    fn a_positional_relation_is_read_in_the_order_0_1_0_listed() {
        let r = named_relation("old", 0, &positional(&[0.1, 0.2, 0.3, 0.4])).unwrap();
        assert_eq!(
            (r.merge, r.contradict, r.sibling, r.distinct),
            (0.1, 0.2, 0.3, 0.4)
        );
    }

    #[test]
    fn a_positional_relation_of_another_length_is_refused() {
        for p in [&[0.5, 0.5][..], &[0.2; 5][..], &[][..]] {
            let Err(JudgeError::Internal(e)) = named_relation("old", 3, &positional(p)) else {
                panic!("{p:?} was read as a relation")
            };
            assert!(e.contains("judge 'old'") && e.contains("pair 3"), "{e}");
        }
    }
}
