//! A warm ledger engine instance: one store kept across calls, because the
//! engine holds the entries the host synced into it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use wasmtime::Store;
use wasmtime::component::ResourceAny;

use super::capability::judge_calls::{
    BoundJudge, EmbedderSource, JudgeCalls, Pending, Ready, VectorKeeper,
};
use super::capability::search_ahead::{PartnerLists, PartnerSearcher, SearchAhead};
use super::sandbox::Sandbox;
use super::state::PluginState;
use super::{CallError, Loaded, Runtime};
use crate::bindings::ledger_engine::exports::silt::ledger::partners;
use crate::bindings::ledger_engine::silt::ledger::searching_ahead;
use crate::bindings::ledger_engine::silt::ledger::types::{
    ApplyReport, Candidate, Change, Entry, Feedback, HomeostasisReport, Judgment, LedgerError,
    Params, Redundancy, SleepReport,
};
use crate::bindings::ledger_engine::{LedgerEngine, LedgerEnginePre};
use silt_plugins::manifest::PluginKind;

silt_core::ledger_params_conversions!(Params);

/// The reference's tunables, as the WIT record.
pub fn default_params() -> Params {
    params_to_wit(&silt_core::ledger::Params::default())
}

/// One ledger engine instance and the ledger resource inside it. After a
/// failed call the instance is discarded: open a new session.
pub struct LedgerSession {
    store: Store<PluginState>,
    bindings: LedgerEngine,
    ledger: ResourceAny,
    engine: Arc<Loaded<LedgerEnginePre<PluginState>>>,
    poisoned: bool,
    /// Where this session's instances' peak memories are kept.
    peaks: Arc<LedgerPeaks>,
    /// Whether the judge's relations read meaning (its manifest's
    /// `[judge] entailment`): review ranks a words-only judge's
    /// suspicions below nearness in meaning.
    reads_meaning: bool,
}

/// The largest linear memories ledger engine instances of a runtime grew
/// to (wasm memory never shrinks: each instance's peak), for benchmarks:
/// the instances that served calls, and the second instances that
/// searched ahead for a sleep pass.
#[derive(Default)]
pub struct LedgerPeaks {
    /// Peak bytes of the instances that served session calls.
    pub engine: AtomicUsize,
    /// Peak bytes of the second instances that searched ahead.
    pub second_instance: AtomicUsize,
}

impl Runtime {
    /// The ledger engine, linked once.
    async fn ledger_engine(&self) -> Result<Arc<Loaded<LedgerEnginePre<PluginState>>>, CallError> {
        self.load("ledger", || async {
            self.prepare(
                "ledger",
                PluginKind::Engine,
                &self.linkers.ledger,
                "silt:ledger/ledger-engine",
                LedgerEnginePre::new,
            )
        })
        .await
    }

    /// `partners.near` of `rows` on a second instance of the ledger
    /// engine, as a sleep pass's `searching-ahead` runs it: for checking
    /// that instance against the engine's code run natively.
    pub async fn near_on_second_instance(
        &self,
        rows: Vec<i8>,
        dim: u32,
        cut: f64,
        per_row: u32,
    ) -> Result<Vec<(u32, u32)>, String> {
        let second = SecondInstance {
            engine: self.ledger_engine().await.map_err(|e| e.to_string())?,
            peaks: self.ledger_peaks.clone(),
        };
        second.near(rows, dim, cut, per_row).await
    }

    /// Starts a ledger engine whose sleep pass asks judge `judge`.
    /// `vectors` keeps the judge's vectors between processes. `embedder`
    /// names the embedding plugin whose vectors pair and recall lessons
    /// when the judge has none of its own.
    pub async fn open_ledger(
        self: &Arc<Self>,
        judge: &str,
        params: &Params,
        vectors: Option<Arc<dyn VectorKeeper>>,
        embedder: Option<&str>,
    ) -> Result<LedgerSession, CallError> {
        // A judge without `relate` still serves everything but the sleep
        // pass (the agent-as-judge path needs no judge at all); a sleep that
        // needs it fails with the judge's "unsupported" error.
        let reads_meaning = self.judge_section(judge)?.entailment;
        let judge = self.judge(judge).await?;
        let embedder: Option<Arc<dyn EmbedderSource>> = if judge.has_vectors() {
            Some(Arc::new(Ready(judge.clone())))
        } else {
            embedder.map(|name| {
                Arc::new(LazyEmbedder {
                    runtime: self.clone(),
                    name: name.to_string(),
                    loaded: tokio::sync::OnceCell::new(),
                }) as Arc<dyn EmbedderSource>
            })
        };
        let engine = self.ledger_engine().await?;
        let sandbox = engine.sandbox();
        let mut store = sandbox.store()?;
        let peaks = self.ledger_peaks.clone();
        {
            let s = store.data_mut();
            s.judge = JudgeCalls::new(
                &s.plugin,
                Some(relations_kept(judge, reads_meaning, &self.answers)),
            );
            s.judge.embedder = embedder;
            s.judge.vectors = vectors;
            let second = SecondInstance {
                engine: engine.clone(),
                peaks: peaks.clone(),
            };
            s.search_ahead = SearchAhead::new(Some(Arc::new(second)));
        }
        let outcome = tokio::time::timeout(sandbox.wall(), async {
            let bindings = engine.pre.instantiate_async(&mut store).await?;
            let ledger = bindings
                .silt_ledger_engine()
                .ledger()
                .call_constructor(&mut store, *params)
                .await?;
            Ok((bindings, ledger))
        })
        .await;
        let (bindings, ledger) = sandbox.finish(&store, outcome)?;
        Ok(LedgerSession {
            store,
            bindings,
            ledger,
            engine,
            poisoned: false,
            peaks,
            reads_meaning,
        })
    }

    /// Where a ledger on `judge` with `embedder` takes its vectors from,
    /// for answers that say how candidate pairs were found: the judge
    /// when it has them, else the plugin `embedder` names, when it loads.
    pub async fn ledger_vectors_from(
        &self,
        judge: &str,
        embedder: Option<&str>,
    ) -> Result<VectorsFrom, CallError> {
        let judge = self.judge(judge).await?;
        if judge.has_vectors() {
            return Ok(VectorsFrom::Judge(judge.info.name.clone()));
        }
        let Some(name) = embedder else {
            return Ok(VectorsFrom::Words(
                "no embedding model is configured ([ledger] embedder)".into(),
            ));
        };
        Ok(match self.judge(name).await {
            Ok(j) if j.has_vectors() => VectorsFrom::Model(name.to_string()),
            Ok(_) => VectorsFrom::Words(format!(
                "[ledger] embedder '{name}' has no vectors (it does not export silt:embed/embed)"
            )),
            Err(e) => VectorsFrom::Words(e.to_string()),
        })
    }
}

/// Where a ledger session's vectors come from, as its answers say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VectorsFrom {
    /// The judge's own (an embedding judge).
    Judge(String),
    /// The embedding plugin named, beside a judge without vectors.
    Model(String),
    /// None: lessons pair and recall by their words; why.
    Words(String),
}

impl VectorsFrom {
    /// How candidate pairs are found, for a sleep or review answer.
    pub fn describe(&self) -> String {
        match self {
            VectorsFrom::Judge(j) => format!("by meaning (judge {j}'s vectors) and by words"),
            VectorsFrom::Model(m) => format!("by meaning ({m}'s vectors) and by words"),
            VectorsFrom::Words(why) => format!("by words only: {why}"),
        }
    }
}

/// The embedding plugin a ledger names, loaded on the engine's first
/// `embed` (its compile can take seconds).
struct LazyEmbedder {
    runtime: Arc<Runtime>,
    name: String,
    loaded: tokio::sync::OnceCell<Option<Arc<dyn BoundJudge>>>,
}

impl EmbedderSource for LazyEmbedder {
    fn get(&self) -> Pending<'_, Option<Arc<dyn BoundJudge>>> {
        Box::pin(async {
            self.loaded
                .get_or_init(|| async {
                    match self.runtime.judge(&self.name).await {
                        Ok(j) if j.has_vectors() => Some(j as Arc<dyn BoundJudge>),
                        Ok(_) => None,
                        Err(e) => {
                            tracing::debug!("lessons pair and recall by their words only: {e}");
                            None
                        }
                    }
                })
                .await
                .clone()
        })
    }
}

/// A second instance of the ledger engine, in a sandbox of its own (the
/// manifest's limits), started for one search: what the engine's sleep
/// pass hands to a spare core (`searching-ahead`).
struct SecondInstance {
    engine: Arc<Loaded<LedgerEnginePre<PluginState>>>,
    /// Where the instances started here leave their peak memory.
    peaks: Arc<LedgerPeaks>,
}

/// One call of the engine's `partners` on a fresh instance.
type PartnersCall<T> = Box<
    dyn for<'a> FnOnce(
            &'a LedgerEngine,
            &'a mut Store<PluginState>,
        ) -> Pending<'a, wasmtime::Result<T>>
        + Send,
>;

impl SecondInstance {
    /// Runs `call` on a new instance within the manifest's limits, and
    /// logs `what` it searched, in how long and at what memory peak.
    fn run<T: Send + 'static>(
        &self,
        what: String,
        call: PartnersCall<T>,
    ) -> Pending<'static, Result<T, String>> {
        let engine = self.engine.clone();
        let peaks = self.peaks.clone();
        Box::pin(async move {
            let sandbox = engine.sandbox();
            let mut store = sandbox.store().map_err(|e| e.to_string())?;
            let started = std::time::Instant::now();
            let outcome = tokio::time::timeout(sandbox.wall(), async {
                let bindings = engine.pre.instantiate_async(&mut store).await?;
                call(&bindings, &mut store).await
            })
            .await;
            let found = sandbox.finish(&store, outcome).map_err(|e| e.to_string());
            let peak = store.data().memory.peak;
            peaks.second_instance.fetch_max(peak, Ordering::Relaxed);
            tracing::debug!(
                "searched {what} on a second engine instance in {:.3} s, its memory peaking at {:.1} MiB",
                started.elapsed().as_secs_f64(),
                peak as f64 / (1 << 20) as f64
            );
            found
        })
    }
}

impl PartnerSearcher for SecondInstance {
    fn strongest(
        &self,
        texts: Vec<String>,
        search: searching_ahead::PartnerSearch,
    ) -> Pending<'static, Result<PartnerLists, String>> {
        let search = partners::PartnerSearch {
            threshold: search.threshold,
            keep: search.keep,
            max_checks: search.max_checks,
        };
        let what = format!("{} texts by words", texts.len());
        self.run(
            what,
            Box::new(move |bindings, store| {
                Box::pin(async move {
                    bindings
                        .silt_ledger_partners()
                        .call_strongest(store, &texts, search)
                        .await
                })
            }),
        )
    }

    fn near(
        &self,
        rows: Vec<i8>,
        dim: u32,
        cut: f64,
        per_row: u32,
    ) -> Pending<'static, Result<Vec<(u32, u32)>, String>> {
        let what = format!(
            "{} rows by meaning",
            rows.len().checked_div(dim as usize).unwrap_or(0)
        );
        self.run(
            what,
            Box::new(move |bindings, store| {
                Box::pin(async move {
                    bindings
                        .silt_ledger_partners()
                        .call_near(store, &rows, dim, cut, per_row)
                        .await
                })
            }),
        )
    }
}

/// Runs one call on the session's warm store with a fresh CPU budget and
/// the manifest's wall-clock limit.
macro_rules! call {
    ($session:expr, |$b:ident, $store:ident, $res:ident| $body:expr) => {{
        let s: &mut LedgerSession = $session;
        if s.poisoned {
            return Err(CallError::InvalidRequest(
                "this ledger session failed earlier; open a new one".into(),
            ));
        }
        Sandbox::refresh(&mut s.store);
        let sandbox = s.engine.sandbox();
        let wall: Duration = sandbox.wall();
        let ($b, $store, $res) = (&s.bindings, &mut s.store, s.ledger);
        let outcome = tokio::time::timeout(wall, async { $body }).await;
        let result = sandbox.finish(&s.store, outcome);
        let peak = s.store.data().memory.peak;
        s.peaks.engine.fetch_max(peak, Ordering::Relaxed);
        if result.is_err() {
            s.poisoned = true;
        }
        result.map_err(CallError::from)
    }};
}

fn ledger_error(e: LedgerError) -> CallError {
    match e {
        LedgerError::UnknownId(m) | LedgerError::Invalid(m) => CallError::InvalidRequest(m),
        LedgerError::JudgeFailed(m) => CallError::JudgeFailed(m),
    }
}

impl LedgerSession {
    /// Loads entries (new or changed) into the engine.
    pub async fn sync(&mut self, entries: &[Entry]) -> Result<(), CallError> {
        call!(self, |b, store, res| b
            .silt_ledger_engine()
            .ledger()
            .call_sync(&mut *store, res, entries)
            .await)
    }

    /// Decays, fades and evicts as of `now` (Unix seconds).
    pub async fn homeostasis(
        &mut self,
        now: f64,
    ) -> Result<(HomeostasisReport, Change), CallError> {
        call!(self, |b, store, res| b
            .silt_ledger_engine()
            .ledger()
            .call_homeostasis(&mut *store, res, now)
            .await)
    }

    /// The sleep pass; `judged` (when given) counts the lesson pairs
    /// related as it goes, for progress reports.
    pub async fn sleep(
        &mut self,
        now: f64,
        judged: Option<Arc<AtomicU64>>,
    ) -> Result<(SleepReport, Change), CallError> {
        self.store.data_mut().judge.related_pairs = judged;
        let out = call!(self, |b, store, res| b
            .silt_ledger_engine()
            .ledger()
            .call_sleep(&mut *store, res, now)
            .await);
        self.store.data_mut().judge.related_pairs = None;
        out?.map_err(ledger_error)
    }

    /// Up to `limit` entries by effective confidence at `now`, highest first;
    /// retired ones only with `include_retired`.
    pub async fn stats(
        &mut self,
        include_retired: bool,
        limit: u32,
        now: f64,
    ) -> Result<Vec<Entry>, CallError> {
        call!(self, |b, store, res| b
            .silt_ledger_engine()
            .ledger()
            .call_stats(&mut *store, res, include_retired, limit, now)
            .await)
    }

    /// Keeps every search on the engine's own thread from now on, as a
    /// host without a spare core does (the pass is the same; only where
    /// its searches run differs).
    pub fn search_on_one_core(&mut self) {
        self.store.data_mut().search_ahead = SearchAhead::new(None);
    }

    /// Searches this session's engine handed to a second instance, those
    /// whose answers came back, and those it took back before they began.
    pub fn searched_ahead(&self) -> (u32, u32, u32) {
        let ahead = &self.store.data().search_ahead;
        let count = |n: &std::sync::atomic::AtomicU32| n.load(Ordering::Relaxed);
        (
            count(&ahead.handed_over),
            count(&ahead.answered),
            count(&ahead.taken_back),
        )
    }

    /// Whether a call failed in the sandbox (a trap, a limit): every later
    /// call is refused, and a new session must be opened.
    pub fn poisoned(&self) -> bool {
        self.poisoned
    }

    /// The top `k` active lessons for `context`; each returned fires at `now`.
    pub async fn recall(
        &mut self,
        context: &str,
        k: u32,
        now: f64,
    ) -> Result<(Vec<Entry>, Change), CallError> {
        call!(self, |b, store, res| b
            .silt_ledger_engine()
            .ledger()
            .call_recall(&mut *store, res, context, k, now)
            .await)
    }

    /// Records lesson `when` → `prefer` under the host-chosen `id`, with how
    /// it turned out.
    pub async fn capture(
        &mut self,
        id: &str,
        when: &str,
        prefer: &str,
        feedback: Feedback,
        now: f64,
    ) -> Result<Change, CallError> {
        call!(self, |b, store, res| b
            .silt_ledger_engine()
            .ledger()
            .call_capture(&mut *store, res, id, when, prefer, feedback, now)
            .await)
    }

    /// "That lesson worked": confirms lesson `id` (a dormant one revives).
    pub async fn confirm(&mut self, id: &str, now: f64) -> Result<Change, CallError> {
        call!(self, |b, store, res| b
            .silt_ledger_engine()
            .ledger()
            .call_confirm(&mut *store, res, id, now)
            .await)?
        .map_err(ledger_error)
    }

    /// "That lesson failed": contradicts lesson `id`.
    pub async fn contradict(&mut self, id: &str, now: f64) -> Result<Change, CallError> {
        call!(self, |b, store, res| b
            .silt_ledger_engine()
            .ledger()
            .call_contradict(&mut *store, res, id, now)
            .await)?
        .map_err(ledger_error)
    }

    /// Pairs for the agent to judge, without those a recorded verdict settles.
    pub async fn review_candidates(&mut self) -> Result<Vec<Candidate>, CallError> {
        call!(self, |b, store, res| b
            .silt_ledger_engine()
            .ledger()
            .call_review_candidates(&mut *store, res)
            .await)
    }

    /// Whether the judge's relations read meaning.
    pub fn reads_meaning(&self) -> bool {
        self.reads_meaning
    }

    /// `silt:ledger`'s `review-page`: the pairs most in need of a verdict.
    pub async fn review_page(
        &mut self,
        limit: u32,
    ) -> Result<crate::bindings::ledger_engine::silt::ledger::types::ReviewPage, CallError> {
        let reads_meaning = self.reads_meaning;
        call!(self, |b, store, res| b
            .silt_ledger_engine()
            .ledger()
            .call_review_page(&mut *store, res, limit, reads_meaning)
            .await)?
        .map_err(ledger_error)
    }

    /// `silt:ledger`'s `near-lessons`: what a capture asks about.
    pub async fn near_lessons(
        &mut self,
        id: &str,
        limit: u32,
    ) -> Result<Vec<crate::bindings::ledger_engine::silt::ledger::types::ReviewPair>, CallError>
    {
        let reads_meaning = self.reads_meaning;
        call!(self, |b, store, res| b
            .silt_ledger_engine()
            .ledger()
            .call_near_lessons(&mut *store, res, id, limit, reads_meaning)
            .await)?
        .map_err(ledger_error)
    }

    /// `silt:ledger`'s `settle`: the relation an agent gave a capture.
    pub async fn settle(
        &mut self,
        id: &str,
        relation: crate::bindings::ledger_engine::silt::ledger::types::CaptureRelation,
        other: &str,
        now: f64,
    ) -> Result<Change, CallError> {
        call!(self, |b, store, res| b
            .silt_ledger_engine()
            .ledger()
            .call_settle(&mut *store, res, id, relation, other, now)
            .await)?
        .map_err(ledger_error)
    }

    /// Applies the agent's verdicts on pairs.
    pub async fn apply_judgments(
        &mut self,
        judgments: &[Judgment],
        now: f64,
    ) -> Result<(ApplyReport, Change), CallError> {
        call!(self, |b, store, res| b
            .silt_ledger_engine()
            .ledger()
            .call_apply_judgments(&mut *store, res, judgments, now)
            .await)
    }

    /// The candidate pairs lesson `id` forms that hold a lesson captured
    /// after `since` (`silt:ledger`'s `unslept-pairs-of`).
    pub async fn unslept_pairs_of(&mut self, id: &str, since: f64) -> Result<u32, CallError> {
        call!(self, |b, store, res| b
            .silt_ledger_engine()
            .ledger()
            .call_unslept_pairs_of(&mut *store, res, id, since)
            .await)?
        .map_err(ledger_error)
    }

    /// How many candidate pairs no sleep pass has judged (they hold a lesson
    /// captured after `since`, Unix seconds), counted up to `stop_at` per
    /// active lesson (0: all), and how many lessons are active.
    pub async fn redundancy(&mut self, since: f64, stop_at: f64) -> Result<Redundancy, CallError> {
        call!(self, |b, store, res| b
            .silt_ledger_engine()
            .ledger()
            .call_redundancy(&mut *store, res, since, stop_at)
            .await)
    }
}

/// The judge a ledger relates with: a model's relations (a judge that
/// reads meaning and gives the same answer again) are kept in the answer
/// cache, so review pages and sleep passes ask a pair once while neither
/// lesson changes.
fn relations_kept(
    judge: Arc<crate::LoadedJudge>,
    reads_meaning: bool,
    answers: &Option<Arc<crate::answer_cache::AnswerCache>>,
) -> Arc<dyn BoundJudge> {
    match answers {
        Some(cache) if reads_meaning && judge.info.deterministic => Arc::new(
            crate::capability::relation_cache::CachedRelations::new(judge, cache.clone()),
        ),
        _ => judge,
    }
}
