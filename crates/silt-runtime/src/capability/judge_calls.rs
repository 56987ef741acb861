//! The judge an engine imports (`silt:judge/judge`, `silt:judge/relations`,
//! `silt:embed/embed`), forwarded to the judge plugin bound to the call:
//! answers found in the answer cache are not asked again, vectors the
//! ledger kept are not embedded again, and the calls actually made are
//! counted for the result's usage.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use wasmtime::component::{HasSelf, Linker, Resource};

use super::progress::Progress;
use crate::answer_cache::{AnswerCache, core_answer, core_question};
use crate::bindings::ask_engine::silt::judge::judge as judge_import;
use crate::bindings::embedding_judge::exports::silt::embed::embed::Embedding as JudgeEmbedding;
use crate::bindings::ledger_engine::silt::embed::embed as embed_import;
use crate::bindings::ledger_engine::silt::judge::relations as relations_import;
use crate::bindings::ledger_engine::silt::ledger::relating_ahead as ahead_import;
use crate::bindings::relations_by_index_judge::exports::silt::judge::relations_by_index as by_index;
use crate::bindings::types::{Answer, Item, JudgeError, JudgeInfo, Question, Response, Usage};

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
    /// Relations for one batch of pairs, each two indices into `lessons`
    /// (checked by the caller). A judge that takes lessons once
    /// (`silt:judge/relations-by-index`) is sent them so; by default each
    /// pair goes whole through [`BoundJudge::relate`].
    fn relate_by_index<'a>(
        &'a self,
        lessons: &'a [by_index::Lesson],
        pairs: &'a [(u32, u32)],
    ) -> Pending<'a, Result<Vec<relations_import::Relation>, JudgeError>> {
        let lesson = |i: u32| {
            let l = &lessons[i as usize];
            relations_import::Lesson {
                when: l.when.clone(),
                prefer: l.prefer.clone(),
            }
        };
        let pairs = pairs
            .iter()
            .map(|&(a, b)| relations_import::LessonPair {
                a: lesson(a),
                b: lesson(b),
            })
            .collect();
        self.relate(pairs)
    }
    /// Vectors for texts; `unsupported` when the judge has none.
    fn embed(&self, texts: Vec<String>) -> Pending<'_, Result<JudgeEmbedding, JudgeError>>;
}

/// Gives the judge that embeds for a ledger, loaded when first asked: a
/// ledger operation that needs no vectors (stats, a capture) does not pay
/// for loading an embedding model (a cold compile of potion's judge took
/// 3.5 s, and the first call of a busy server timed out on it).
pub trait EmbedderSource: Send + Sync {
    /// The embedder; None when it cannot be loaded (words only).
    fn get(&self) -> Pending<'_, Option<Arc<dyn BoundJudge>>>;
}

/// An embedder there is nothing to load for.
pub struct Ready(pub Arc<dyn BoundJudge>);

impl EmbedderSource for Ready {
    fn get(&self) -> Pending<'_, Option<Arc<dyn BoundJudge>>> {
        Box::pin(async { Some(self.0.clone()) })
    }
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
    /// Who answers `silt:embed/embed`: the judge itself when it has
    /// vectors, else an embedding model the ledger is given, so that
    /// lessons pair (and recall) by meaning whatever judge relates them.
    /// None: the engine reads words only.
    pub embedder: Option<Arc<dyn EmbedderSource>>,
    /// Where questions look for earlier answers.
    pub answers: Option<Arc<AnswerCache>>,
    /// Where the ledger engine's vectors are kept between processes.
    pub vectors: Option<Arc<dyn VectorKeeper>>,
    /// Lesson pairs related so far, when someone watches a sleep pass.
    pub related_pairs: Option<Arc<AtomicU64>>,
    /// Where judged items are counted as steps.
    pub progress: Progress,
    /// Calls actually made to the judge, and items the cache answered.
    pub calls: u32,
    /// Items the answer cache answered, so the judge was not asked them.
    pub cache_hits: u32,
    /// The `relating-ahead` calls this store's engine started, by the
    /// handle's number, and the next number.
    ahead: std::collections::HashMap<u32, PendingRelations>,
    next_ahead: u32,
    /// Signalled when the last call started finishes: the next waits for
    /// it, so calls run one after another on one warm judge (several at
    /// once would each start a judge of their own, with cold caches).
    last_ahead: Option<tokio::sync::oneshot::Receiver<()>>,
}

/// The smallest preferred batch of a judge that relates ahead: one that
/// takes hundreds of pairs a call is cheap per pair. Relating ahead also
/// relates the pairs a sleep round would have skipped (8–20% more on the
/// generated 100k ledgers), which costs a model judge (a transformer, a
/// local language model: 16–32 pairs a call) or a paid server more than
/// the overlap saves.
const AHEAD_FROM_BATCH: u32 = 256;

/// One `relating-ahead` call: the thread relating its pairs, and the flag
/// that stops it between batches when the engine drops the call.
pub struct PendingRelations {
    task: Option<tokio::task::JoinHandle<Result<Vec<ahead_import::Relation>, String>>>,
    stop: Arc<AtomicBool>,
}

impl Drop for PendingRelations {
    /// A call dropped before `finish` took its task is stopped.
    fn drop(&mut self) {
        if self.task.is_some() {
            self.stop.store(true, Ordering::Relaxed);
        }
    }
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

impl ahead_import::Host for JudgeCalls {
    /// Relates on a thread of the blocking pool, driving the judge's async
    /// calls there: a task spawned on the runtime would wait in the
    /// spawning worker's slot (not stolen by the idle one) for as long as
    /// the engine computes without yielding, which is the whole point.
    /// Nothing is started where there is no core to spare, nor for a judge
    /// that is not cheap per pair ([`AHEAD_FROM_BATCH`], or one that
    /// costs money).
    async fn start(
        &mut self,
        lessons: Vec<ahead_import::Lesson>,
        pairs: Vec<(u32, u32)>,
    ) -> wasmtime::Result<Option<Resource<ahead_import::Pending>>> {
        let judge = self.bound("a judge")?;
        let info = judge.info();
        if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2
            || info.preferred_batch_size < AHEAD_FROM_BATCH
            || info.cost_per_million_input_tokens > 0.0
        {
            return Ok(None);
        }
        tracing::debug!(engine = %self.plugin, "relating {} pairs of {} lessons ahead", pairs.len(), lessons.len());
        let stop = Arc::new(AtomicBool::new(false));
        let (done, finished) = tokio::sync::oneshot::channel::<()>();
        let previous = self.last_ahead.replace(finished);
        let counter = self.related_pairs.clone();
        let runtime = tokio::runtime::Handle::current();
        let stopped = stop.clone();
        let task = tokio::task::spawn_blocking(move || {
            runtime.block_on(async move {
                if let Some(previous) = previous {
                    // a call that failed or was stopped sends nothing: its
                    // sender goes when its thread ends, which ends the wait
                    let _ = previous.await;
                }
                let related =
                    relate_ahead(judge.as_ref(), &lessons, &pairs, &stopped, counter).await;
                let _ = done.send(());
                related
            })
        });
        let pending = PendingRelations {
            task: Some(task),
            stop,
        };
        self.next_ahead += 1;
        self.ahead.insert(self.next_ahead, pending);
        Ok(Some(Resource::new_own(self.next_ahead)))
    }
}

impl ahead_import::HostPending for JudgeCalls {
    async fn finish(
        &mut self,
        call: Resource<ahead_import::Pending>,
    ) -> wasmtime::Result<Result<Vec<ahead_import::Relation>, String>> {
        let Some(mut pending) = self.ahead.remove(&call.rep()) else {
            wasmtime::bail!("relating-ahead call {} is not pending", call.rep());
        };
        // held while waiting: if this wait is dropped (the engine call's
        // time limit, a cancelled request), so is the call, which stops it
        let task = pending.task.as_mut().expect("a pending call has its task");
        let related = task.await;
        pending.task = None;
        Ok(match related {
            Ok(related) => related,
            Err(e) => Err(format!("relating ahead stopped: {e}")),
        })
    }

    async fn drop(&mut self, call: Resource<ahead_import::Pending>) -> wasmtime::Result<()> {
        // dropping it stops the thread at its next batch
        self.ahead.remove(&call.rep());
        Ok(())
    }
}

/// Relates `pairs` (indices into `lessons`) a batch of the judge's size
/// at a time, counting them as the engine's own calls are counted, until
/// done or `stop` (read between batches); a failure is said as the engine
/// says the judge's.
///
/// Each batch sends the lessons its pairs name once (a lesson of a large
/// ledger is in a dozen pairs or more), never the whole start's: a
/// batch is what the judge's call limits bound.
async fn relate_ahead(
    judge: &dyn BoundJudge,
    lessons: &[ahead_import::Lesson],
    pairs: &[(u32, u32)],
    stop: &AtomicBool,
    counter: Option<Arc<AtomicU64>>,
) -> Result<Vec<ahead_import::Relation>, String> {
    let mut out = Vec::with_capacity(pairs.len());
    let size = (judge.info().preferred_batch_size as usize).max(1);
    // each started lesson's place in the batch being sent, if it is in it
    let mut place = vec![u32::MAX; lessons.len()];
    for batch in pairs.chunks(size) {
        if stop.load(Ordering::Relaxed) {
            return Err("the engine dropped the call".into());
        }
        let mut sent: Vec<by_index::Lesson> = Vec::new();
        let mut sent_from: Vec<usize> = Vec::new();
        let mut indices = Vec::with_capacity(batch.len());
        for &(a, b) in batch {
            let mut at = |i: u32| {
                let l = lessons.get(i as usize).ok_or_else(|| {
                    format!("a pair names lesson {i} of the {} started", lessons.len())
                })?;
                let slot = &mut place[i as usize];
                if *slot == u32::MAX {
                    *slot = sent.len() as u32;
                    sent_from.push(i as usize);
                    sent.push(by_index::Lesson {
                        when: l.when.clone(),
                        prefer: l.prefer.clone(),
                    });
                }
                Ok::<_, String>(*slot)
            };
            indices.push((at(a)?, at(b)?));
        }
        for i in sent_from {
            place[i] = u32::MAX;
        }
        let related = judge
            .relate_by_index(&sent, &indices)
            .await
            .map_err(|e| format!("{e:?}"))?;
        if related.len() != batch.len() {
            return Err(format!(
                "the judge gave {} relations for {} pairs",
                related.len(),
                batch.len()
            ));
        }
        out.extend(related.into_iter().map(|r| ahead_import::Relation {
            merge: r.merge,
            contradict: r.contradict,
            sibling: r.sibling,
            distinct: r.distinct,
        }));
        if let Some(counter) = &counter {
            counter.fetch_add(batch.len() as u64, Ordering::Relaxed);
        }
    }
    Ok(out)
}

impl embed_import::Host for JudgeCalls {
    async fn embed(
        &mut self,
        texts: Vec<String>,
    ) -> wasmtime::Result<Result<embed_import::Embedding, JudgeError>> {
        let judge = match &self.embedder {
            Some(source) => source.get().await,
            None => None,
        };
        let Some(judge) = judge else {
            return Ok(Err(JudgeError::Unsupported(
                "no embedding model gives this ledger vectors".into(),
            )));
        };
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
        // '@', not NUL: PostgreSQL's TEXT refuses a NUL byte, so a team's
        // ledger could keep no vectors (ledgers keyed the old way embed
        // their texts once more)
        let model = format!("{}@{}", info.name, info.version);
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
            ahead_import::add_to_linker::<T, HasSelf<JudgeCalls>>(linker, get)?;
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

    /// Relates a pair by its lessons' triggers ("w3" and "w1": merge 0.31,
    /// the rest distinct), taking a while a call, and records how many of
    /// its calls ran at once.
    struct Relating {
        info: JudgeInfo,
        calls: std::sync::atomic::AtomicUsize,
        running: std::sync::atomic::AtomicUsize,
        most_at_once: std::sync::atomic::AtomicUsize,
    }

    impl Relating {
        /// A judge taking `batch` pairs a call, free unless `cost` says.
        fn new(batch: u32, cost: f64) -> Arc<Relating> {
            Arc::new(Relating {
                info: JudgeInfo {
                    name: "relating".into(),
                    version: "1".into(),
                    deterministic: true,
                    cost_per_million_input_tokens: cost,
                    preferred_batch_size: batch,
                },
                calls: Default::default(),
                running: Default::default(),
                most_at_once: Default::default(),
            })
        }
    }

    impl BoundJudge for Relating {
        fn info(&self) -> &JudgeInfo {
            &self.info
        }
        fn ask<'a>(
            &'a self,
            _question: &'a Question,
            _items: &'a [Item],
        ) -> Pending<'a, Result<Response, JudgeError>> {
            Box::pin(async { Err(JudgeError::Unsupported("no ask".into())) })
        }
        fn relate(
            &self,
            pairs: Vec<relations_import::LessonPair>,
        ) -> Pending<'_, Result<Vec<relations_import::Relation>, JudgeError>> {
            Box::pin(async move {
                self.calls.fetch_add(1, Ordering::SeqCst);
                let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
                self.most_at_once.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(std::time::Duration::from_millis(30)).await;
                self.running.fetch_sub(1, Ordering::SeqCst);
                let digit = |l: &relations_import::Lesson| f64::from(l.when.as_bytes()[1] - b'0');
                Ok(pairs
                    .iter()
                    .map(|p| {
                        let merge = (10.0 * digit(&p.a) + digit(&p.b)) / 100.0;
                        relations_import::Relation {
                            merge,
                            contradict: 0.0,
                            sibling: 0.0,
                            distinct: 1.0 - merge,
                        }
                    })
                    .collect())
            })
        }
        fn embed(&self, _texts: Vec<String>) -> Pending<'_, Result<JudgeEmbedding, JudgeError>> {
            Box::pin(async { Err(JudgeError::Unsupported("no vectors".into())) })
        }
    }

    /// Pairs related ahead come back in the order started, each call's
    /// own, counted as related; calls run one after another on the judge
    /// whatever order they are finished in; a pair naming a lesson that
    /// was not sent is the engine's error to read. A machine without a
    /// second core relates nothing ahead.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn pairs_related_ahead_come_back_in_order_one_call_at_a_time() {
        use ahead_import::{Host, HostPending};
        let judge = Relating::new(256, 0.0);
        let mut calls = JudgeCalls::new("ledger", Some(judge.clone()));
        let related = Arc::new(AtomicU64::new(0));
        calls.related_pairs = Some(related.clone());
        let lessons: Vec<ahead_import::Lesson> = (0..5)
            .map(|i| ahead_import::Lesson {
                when: format!("w{i}"),
                prefer: "p".into(),
            })
            .collect();
        let first = calls
            .start(lessons.clone(), vec![(3, 1), (1, 2), (4, 0)])
            .await
            .unwrap();
        if std::thread::available_parallelism().unwrap().get() < 2 {
            assert!(first.is_none());
            return;
        }
        let second = calls.start(lessons.clone(), vec![(2, 2)]).await.unwrap();
        let bad = calls.start(lessons, vec![(0, 5)]).await.unwrap();
        let merges =
            |r: Vec<ahead_import::Relation>| -> Vec<f64> { r.iter().map(|r| r.merge).collect() };
        let second = calls.finish(second.unwrap()).await.unwrap().unwrap();
        assert_eq!(merges(second), [0.22]);
        let first = calls.finish(first.unwrap()).await.unwrap().unwrap();
        assert_eq!(merges(first), [0.31, 0.12, 0.40]);
        let bad = calls.finish(bad.unwrap()).await.unwrap().unwrap_err();
        assert!(bad.contains("names lesson 5 of the 5 started"), "{bad}");
        assert_eq!(related.load(Ordering::SeqCst), 4);
        assert_eq!(judge.most_at_once.load(Ordering::SeqCst), 1);
    }

    fn lessons(n: usize) -> Vec<ahead_import::Lesson> {
        (0..n)
            .map(|i| ahead_import::Lesson {
                when: format!("w{}", i % 10),
                prefer: "p".into(),
            })
            .collect()
    }

    /// A model judge (a few pairs a call) or one that costs money relates
    /// nothing ahead: the pairs a round would skip cost it more than the
    /// overlap saves.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn judges_dear_per_pair_relate_nothing_ahead() {
        use ahead_import::Host;
        for judge in [Relating::new(32, 0.0), Relating::new(4096, 0.15)] {
            let mut calls = JudgeCalls::new("ledger", Some(judge.clone()));
            let started = calls.start(lessons(2), vec![(0, 1)]).await.unwrap();
            assert!(started.is_none());
            assert_eq!(judge.calls.load(Ordering::SeqCst), 0);
        }
    }

    /// A call the engine drops, or whose wait is dropped (the engine
    /// call's time limit), stops at its next batch instead of relating
    /// the rest for nobody.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_dropped_call_stops_relating() {
        use ahead_import::{Host, HostPending};
        if std::thread::available_parallelism().unwrap().get() < 2 {
            return;
        }
        // ten batches of 256 pairs, 30 ms each when left to run
        let pairs: Vec<(u32, u32)> = (0..2560).map(|i| (i % 10, (i + 1) % 10)).collect();
        for drop_the_wait in [false, true] {
            let judge = Relating::new(256, 0.0);
            let mut calls = JudgeCalls::new("ledger", Some(judge.clone()));
            let call = calls
                .start(lessons(10), pairs.clone())
                .await
                .unwrap()
                .unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(45)).await;
            if drop_the_wait {
                let wait = calls.finish(call);
                let waited = tokio::time::timeout(std::time::Duration::from_millis(10), wait);
                assert!(waited.await.is_err(), "ten batches done in 55 ms");
            } else {
                HostPending::drop(&mut calls, call).await.unwrap();
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            let made = judge.calls.load(Ordering::SeqCst);
            assert!(made <= 4, "{made} batches of 10 related after the drop");
        }
    }

    /// A judge that takes lessons by index, relating as [`Relating`] does
    /// (one relation short a batch when `short`), and records how many
    /// lessons each batch sent.
    struct ByIndex {
        info: JudgeInfo,
        sent: Mutex<Vec<usize>>,
        short: bool,
    }

    impl BoundJudge for ByIndex {
        fn info(&self) -> &JudgeInfo {
            &self.info
        }
        fn ask<'a>(
            &'a self,
            _question: &'a Question,
            _items: &'a [Item],
        ) -> Pending<'a, Result<Response, JudgeError>> {
            Box::pin(async { Err(JudgeError::Unsupported("no ask".into())) })
        }
        fn relate(
            &self,
            _pairs: Vec<relations_import::LessonPair>,
        ) -> Pending<'_, Result<Vec<relations_import::Relation>, JudgeError>> {
            Box::pin(async { Err(JudgeError::Internal("sent pair by pair".into())) })
        }
        fn relate_by_index<'a>(
            &'a self,
            lessons: &'a [by_index::Lesson],
            pairs: &'a [(u32, u32)],
        ) -> Pending<'a, Result<Vec<relations_import::Relation>, JudgeError>> {
            self.sent.lock().unwrap().push(lessons.len());
            let digit = |i: u32| f64::from(lessons[i as usize].when.as_bytes()[1] - b'0');
            let mut out: Vec<_> = pairs
                .iter()
                .map(|&(a, b)| {
                    let merge = (10.0 * digit(a) + digit(b)) / 100.0;
                    relations_import::Relation {
                        merge,
                        contradict: 0.0,
                        sibling: 0.0,
                        distinct: 1.0 - merge,
                    }
                })
                .collect();
            if self.short {
                out.pop();
            }
            Box::pin(async move { Ok(out) })
        }
        fn embed(&self, _texts: Vec<String>) -> Pending<'_, Result<JudgeEmbedding, JudgeError>> {
            Box::pin(async { Err(JudgeError::Unsupported("no vectors".into())) })
        }
    }

    /// Each batch related ahead sends the lessons its pairs name, once
    /// each, and its relations land on the pairs they belong to; a judge
    /// that answers a batch with a relation too few fails the call
    /// instead of shifting the rest onto other pairs.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn each_batch_related_ahead_sends_its_lessons_once() {
        use ahead_import::{Host, HostPending};
        if std::thread::available_parallelism().unwrap().get() < 2 {
            return;
        }
        // lesson i reads "w{i % 10}"; 600 pairs in three batches, each
        // first lesson in two pairs running, of 1,000 lessons started
        let pairs: Vec<(u32, u32)> = (0..600).map(|i| (i / 2, 300 + i)).collect();
        for short in [false, true] {
            let judge = Arc::new(ByIndex {
                info: Relating::new(256, 0.0).info.clone(),
                sent: Mutex::new(Vec::new()),
                short,
            });
            let mut calls = JudgeCalls::new("ledger", Some(judge.clone()));
            let call = calls
                .start(lessons(1000), pairs.clone())
                .await
                .unwrap()
                .unwrap();
            let related = calls.finish(call).await.unwrap();
            if short {
                let e = related.unwrap_err();
                assert!(e.contains("gave 255 relations for 256 pairs"), "{e}");
                continue;
            }
            let merges: Vec<f64> = related.unwrap().iter().map(|r| r.merge).collect();
            let expected: Vec<f64> = pairs
                .iter()
                .map(|&(a, b)| f64::from(10 * (a % 10) + b % 10) / 100.0)
                .collect();
            assert_eq!(merges, expected);
            let distinct = |batch: &[(u32, u32)]| {
                let mut named: Vec<u32> = batch.iter().flat_map(|&(a, b)| [a, b]).collect();
                named.sort_unstable();
                named.dedup();
                named.len()
            };
            let want: Vec<usize> = pairs.chunks(256).map(distinct).collect();
            assert_eq!(want, [384, 384, 132]);
            assert_eq!(*judge.sent.lock().unwrap(), want);
        }
    }

    #[tokio::test]
    async fn an_engine_without_a_bound_judge_traps() {
        use judge_import::Host;
        let mut calls = JudgeCalls::new("ask", None);
        let err = calls.info().await.unwrap_err();
        assert!(err.to_string().contains("no judge was bound"), "{err}");
    }
}
