//! The wasmtime runtime: one engine, a compile cache, pre-instantiated
//! components, and a fresh sandboxed store for every call.

pub mod answer_cache;
pub mod cache;
pub mod exec;
pub mod failure;
pub mod http_policy;
pub mod judge;
pub mod ledger;
pub mod search;
pub mod state;

mod host_imports;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::sync::OnceCell;
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, UpdateDeadline,
};

use crate::bindings::ask_engine::{AskEngine, AskEnginePre};
use crate::bindings::judge::JudgePluginPre;
use crate::bindings::ledger_engine::{LedgerEngine, LedgerEnginePre};
use crate::bindings::lesson_judge::LessonJudgePluginPre;
use crate::bindings::verify_engine::{VerifyEngine, VerifyEnginePre};
use crate::plugins::manifest::{MAX_MEMORY_MIB, Manifest, PluginKind};
use crate::plugins::registry::{Registry, UnknownPlugin};
use cache::{CacheOutcome, CompileCache};
use failure::PluginFailure;
use judge::LoadedJudge;
use state::PluginState;

/// Milliseconds per epoch tick: the granularity of CPU limits.
pub const TICK_MS: u64 = 10;

/// Concurrent component instances the pool holds (an ask call uses two).
const POOL_INSTANCES: u32 = 128;

/// Limits that apply to one plugin call.
pub(crate) struct Sandbox<'a> {
    pub engine: &'a Engine,
    pub manifest: &'a Manifest,
}

impl Sandbox<'_> {
    /// A fresh store for one call: the manifest's grants and limits, and an
    /// epoch callback that yields to tokio every tick and stops the guest
    /// once its CPU budget is spent.
    pub fn store(
        &self,
        judge: Option<Arc<LoadedJudge>>,
    ) -> Result<Store<PluginState>, PluginFailure> {
        let mut state = PluginState::new(self.manifest).map_err(|e| PluginFailure::Start {
            plugin: self.manifest.plugin.name.clone(),
            reason: format!("{e:#}"),
        })?;
        state.judge = judge;
        let mut store = Store::new(self.engine, state);
        store.limiter(|s| &mut s.memory);
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|mut cx| {
            let s = cx.data_mut();
            s.ticks_used += 1;
            Ok(if s.ticks_used > s.tick_budget {
                UpdateDeadline::Interrupt
            } else {
                UpdateDeadline::Yield(1)
            })
        });
        Ok(store)
    }

    /// The wall-clock limit of one call.
    pub fn wall(&self) -> Duration {
        Duration::from_millis(self.manifest.limits.wall_ms)
    }

    /// Turns a call's outcome into a result or a contained failure.
    pub fn finish<T>(
        &self,
        store: &Store<PluginState>,
        outcome: Result<wasmtime::Result<T>, tokio::time::error::Elapsed>,
    ) -> Result<T, PluginFailure> {
        match outcome {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(PluginFailure::classify(
                e,
                store.data(),
                &self.manifest.limits,
            )),
            Err(_) => Err(PluginFailure::WallClock {
                plugin: self.manifest.plugin.name.clone(),
                ms: self.manifest.limits.wall_ms,
            }),
        }
    }
}

/// Why a tool call through the runtime failed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The caller's request is wrong.
    #[error("{0}")]
    InvalidRequest(String),
    /// The judge failed or was refused.
    #[error("{0}")]
    JudgeFailed(String),
    /// A plugin was stopped or could not start.
    #[error(transparent)]
    Plugin(#[from] PluginFailure),
    /// The named plugin does not exist.
    #[error(transparent)]
    Unknown(#[from] UnknownPlugin),
    /// Loading or compiling failed.
    #[error("{0:#}")]
    Setup(#[from] anyhow::Error),
}

/// Increments the engine's epoch every tick until the engine is dropped.
fn start_ticker(engine: &Engine) {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("silt-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(Duration::from_millis(TICK_MS));
            }
        })
        .expect("spawning the epoch ticker");
}

/// How components were loaded, for benchmarks and `plugins inspect`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LoadReport {
    pub plugin: String,
    pub cache: CacheOutcome,
    pub millis: f64,
}

/// The runtime.
pub struct Runtime {
    engine: Engine,
    judge_linker: Linker<PluginState>,
    engine_linker: Linker<PluginState>,
    ledger_linker: Linker<PluginState>,
    /// CLI search backends: WASI (no network) and `exec`.
    cli_linker: Linker<PluginState>,
    cache: CompileCache,
    pub registry: Registry,
    /// Earlier judge answers (None: every question goes to the judge).
    pub answers: Option<Arc<answer_cache::AnswerCache>>,
    /// The user cache folder grep's per-repository caches go under when a
    /// repository has no .gitignore to extend.
    pub grep_cache_root: Option<std::path::PathBuf>,
    judges: Mutex<HashMap<String, Arc<OnceCell<Arc<LoadedJudge>>>>>,
    backends: Mutex<HashMap<String, Arc<OnceCell<Arc<search::LoadedBackend>>>>>,
    ask: OnceCell<(Arc<Manifest>, AskEnginePre<PluginState>)>,
    verify_linker: Linker<PluginState>,
    verify: OnceCell<(Arc<Manifest>, VerifyEnginePre<PluginState>)>,
    ledger: OnceCell<(Arc<Manifest>, LedgerEnginePre<PluginState>)>,
    loads: Mutex<Vec<LoadReport>>,
}

/// One call into a fresh ask engine instance bound to judge `$judge`:
/// limits from its manifest, the output cap checked with `$size`, the
/// engine's error mapped to a [`CallError`].
macro_rules! ask_engine_call {
    ($rt:expr, $judge:expr, $size:expr, |$engine:ident, $store:ident| $body:expr) => {{
        let answers = $rt.answers.clone();
        engine_call!(
            $rt,
            ask_engine,
            crate::bindings::ask_engine::silt::sieve::types::AskError,
            $judge,
            |state| state.answers = answers,
            $size,
            |$engine, $store| $body
        )
    }};
}

/// One call into a fresh instance of the engine `$engine_fn` returns,
/// bound to judge `$judge`, its state prepared by `$setup`; usage patched
/// with what the host saw of the judge (requests made, cache hits).
macro_rules! engine_call {
    ($rt:expr, $engine_fn:ident, $($error:ident)::+, $judge:expr, |$state:ident| $setup:expr,
     $size:expr, |$engine:ident, $store:ident| $body:expr) => {{
        let judge = $rt.judge($judge).await?;
        let (manifest, pre) = $rt.$engine_fn().await?;
        let sandbox = Sandbox {
            engine: &$rt.engine,
            manifest,
        };
        let mut store = sandbox.store(Some(judge))?;
        {
            let $state = store.data_mut();
            $setup;
        }
        let outcome = tokio::time::timeout(sandbox.wall(), async {
            let $engine = pre.instantiate_async(&mut store).await?;
            let $store = &mut store;
            $body
        })
        .await;
        match sandbox.finish(&store, outcome)? {
            Ok(mut result) => {
                PluginFailure::check_output(
                    &manifest.plugin.name,
                    $size(&result),
                    &manifest.limits,
                )?;
                // the engine counted a request per batch; the host knows
                // which of them the cache answered
                result.usage.requests = store.data().judge_calls;
                result.usage.cache_hits = store.data().cache_hits;
                Ok(result)
            }
            Err($($error)::+::InvalidRequest(m)) => Err(CallError::InvalidRequest(m)),
            Err($($error)::+::JudgeFailed(m)) => Err(CallError::JudgeFailed(m)),
        }
    }};
}

impl Runtime {
    /// Builds the engine and linkers; components load on first use.
    pub fn new(
        registry: Registry,
        cache: CompileCache,
        answers: Option<Arc<answer_cache::AnswerCache>>,
    ) -> Result<Arc<Runtime>> {
        let mut pool = PoolingAllocationConfig::new();
        pool.total_component_instances(POOL_INSTANCES)
            .total_core_instances(POOL_INSTANCES * 4)
            .total_memories(POOL_INSTANCES * 2)
            .total_tables(POOL_INSTANCES * 4)
            .total_stacks(POOL_INSTANCES)
            .max_memory_size((MAX_MEMORY_MIB << 20) as usize)
            .max_core_instances_per_component(16)
            .max_memories_per_component(4)
            .max_tables_per_component(8);
        let mut config = Config::new();
        config
            .wasm_component_model(true)
            .epoch_interruption(true)
            .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        let engine = Engine::new(&config)
            .map_err(anyhow::Error::from)
            .context("creating the wasmtime engine")?;
        start_ticker(&engine);

        let mut judge_linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut judge_linker)?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut judge_linker)?;

        // Engines get WASI (no grants) and silt's own imports, not wasi:http.
        let mut engine_linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut engine_linker)?;
        AskEngine::add_to_linker::<PluginState, HasSelf<PluginState>>(&mut engine_linker, |s| s)?;

        // only the verify engine gets `sources`
        let mut verify_linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut verify_linker)?;
        VerifyEngine::add_to_linker::<PluginState, HasSelf<PluginState>>(
            &mut verify_linker,
            |s| s,
        )?;

        let mut ledger_linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut ledger_linker)?;
        LedgerEngine::add_to_linker::<PluginState, HasSelf<PluginState>>(
            &mut ledger_linker,
            |s| s,
        )?;

        let mut cli_linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut cli_linker)?;
        crate::bindings::cli_search_backend::CliSearchBackendPlugin::add_to_linker::<
            PluginState,
            HasSelf<PluginState>,
        >(&mut cli_linker, |s| s)?;

        Ok(Arc::new(Runtime {
            engine,
            judge_linker,
            engine_linker,
            ledger_linker,
            cli_linker,
            cache,
            registry,
            grep_cache_root: answers
                .as_ref()
                .and_then(|a| a.path().parent())
                .map(|d| d.join("grep")),
            answers,
            judges: Mutex::new(HashMap::new()),
            backends: Mutex::new(HashMap::new()),
            ask: OnceCell::new(),
            verify_linker,
            verify: OnceCell::new(),
            ledger: OnceCell::new(),
            loads: Mutex::new(Vec::new()),
        }))
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// What was loaded so far, and whether from the cache.
    pub fn load_reports(&self) -> Vec<LoadReport> {
        self.loads.lock().expect("load report lock").clone()
    }

    /// Compiles (or loads from the cache) the component of plugin `name`.
    pub fn component(&self, name: &str) -> Result<(Arc<Manifest>, Component), CallError> {
        let entry = self.registry.get(name)?;
        let bytes = entry.bytes()?;
        let started = std::time::Instant::now();
        let (component, cache) = self
            .cache
            .load(&self.engine, &bytes)
            .with_context(|| format!("compiling plugin '{name}'"))?;
        self.loads
            .lock()
            .expect("load report lock")
            .push(LoadReport {
                plugin: name.into(),
                cache,
                millis: started.elapsed().as_secs_f64() * 1000.0,
            });
        Ok((entry.manifest.clone(), component))
    }

    /// The judge plugin `name`, loaded once.
    pub async fn judge(&self, name: &str) -> Result<Arc<LoadedJudge>, CallError> {
        let cell = {
            let mut judges = self.judges.lock().expect("judge table lock");
            judges.entry(name.to_string()).or_default().clone()
        };
        let judge = cell
            .get_or_try_init(|| async {
                let (manifest, component) = self.component(name)?;
                if manifest.plugin.kind != PluginKind::Judge {
                    return Err(CallError::InvalidRequest(format!(
                        "plugin '{name}' is not a judge (it is a {:?} plugin)",
                        manifest.plugin.kind
                    )));
                }
                let pre = self
                    .judge_linker
                    .instantiate_pre(&component)
                    .and_then(JudgePluginPre::new)
                    .map_err(|e| PluginFailure::Start {
                        plugin: name.into(),
                        reason: format!("it does not fit the judge contract silt:judge@0.1.0: {e}"),
                    })?;
                // A judge that also exports `relate` can serve the ledger.
                let relate_pre = self
                    .judge_linker
                    .instantiate_pre(&component)
                    .and_then(LessonJudgePluginPre::new)
                    .ok();
                // and one that also exports `embed` gives the ledger vectors
                let embed_pre = self
                    .judge_linker
                    .instantiate_pre(&component)
                    .and_then(crate::bindings::embedding_judge::EmbeddingJudgePluginPre::new)
                    .ok();
                Ok::<_, CallError>(Arc::new(
                    LoadedJudge::load(self.engine.clone(), manifest, pre, relate_pre, embed_pre)
                        .await?,
                ))
            })
            .await?;
        Ok(judge.clone())
    }

    async fn ask_engine(&self) -> Result<&(Arc<Manifest>, AskEnginePre<PluginState>), CallError> {
        self.ask
            .get_or_try_init(|| async {
                let (manifest, component) = self.component("ask")?;
                let pre = self
                    .engine_linker
                    .instantiate_pre(&component)
                    .and_then(AskEnginePre::new)
                    .map_err(anyhow::Error::from)
                    .context("linking the ask engine")?;
                Ok::<_, CallError>((manifest, pre))
            })
            .await
    }

    /// The verify engine, linked once.
    async fn verify_engine(
        &self,
    ) -> Result<&(Arc<Manifest>, VerifyEnginePre<PluginState>), CallError> {
        self.verify
            .get_or_try_init(|| async {
                let (manifest, component) = self.component("verify")?;
                let pre = self
                    .verify_linker
                    .instantiate_pre(&component)
                    .and_then(VerifyEnginePre::new)
                    .map_err(anyhow::Error::from)
                    .context("linking the verify engine")?;
                Ok::<_, CallError>((manifest, pre))
            })
            .await
    }

    /// The ledger engine, linked once.
    pub(crate) async fn ledger_engine(
        &self,
    ) -> Result<&(Arc<Manifest>, LedgerEnginePre<PluginState>), CallError> {
        self.ledger
            .get_or_try_init(|| async {
                let (manifest, component) = self.component("ledger")?;
                let pre = self
                    .ledger_linker
                    .instantiate_pre(&component)
                    .and_then(LedgerEnginePre::new)
                    .map_err(anyhow::Error::from)
                    .context("linking the ledger engine")?;
                Ok::<_, CallError>((manifest, pre))
            })
            .await
    }

    /// Runs the ask engine on `request` with judge `judge_name`.
    pub async fn ask(
        &self,
        judge_name: &str,
        request: &crate::bindings::ask_engine::exports::silt::sieve::ask::AskRequest,
    ) -> Result<crate::bindings::ask_engine::exports::silt::sieve::ask::AskResult, CallError> {
        ask_engine_call!(self, judge_name, ask_result_size, |engine, store| engine
            .silt_sieve_ask()
            .call_ask(store, request)
            .await)
    }

    /// Runs `sieve_rank` in the ask engine with judge `judge_name`.
    pub async fn rank(
        &self,
        judge_name: &str,
        request: &crate::bindings::ask_engine::exports::silt::sieve::rank::RankRequest,
    ) -> Result<crate::bindings::ask_engine::exports::silt::sieve::rank::RankResult, CallError>
    {
        let size = |r: &crate::bindings::ask_engine::exports::silt::sieve::rank::RankResult| {
            r.results.iter().map(|x| x.id.len() + 8).sum()
        };
        ask_engine_call!(self, judge_name, size, |engine, store| engine
            .silt_sieve_rank()
            .call_rank(store, request)
            .await)
    }

    /// Runs `sieve_route` in the ask engine with judge `judge_name`.
    pub async fn route(
        &self,
        judge_name: &str,
        request: &crate::bindings::ask_engine::exports::silt::sieve::route::RouteRequest,
    ) -> Result<crate::bindings::ask_engine::exports::silt::sieve::route::RouteResult, CallError>
    {
        let size = |r: &crate::bindings::ask_engine::exports::silt::sieve::route::RouteResult| {
            r.choice.len()
                + r.probabilities
                    .iter()
                    .map(|p| p.label.len() + 8)
                    .sum::<usize>()
        };
        ask_engine_call!(self, judge_name, size, |engine, store| engine
            .silt_sieve_route()
            .call_route(store, request)
            .await)
    }

    /// Runs `sieve_triage_threads` in the ask engine with judge `judge_name`.
    pub async fn triage(
        &self,
        judge_name: &str,
        request: &crate::bindings::ask_engine::exports::silt::sieve::triage::TriageRequest,
    ) -> Result<crate::bindings::ask_engine::exports::silt::sieve::triage::TriageResult, CallError>
    {
        let size = |r: &crate::bindings::ask_engine::exports::silt::sieve::triage::TriageResult| {
            r.threads
                .iter()
                .map(|t| {
                    t.thread_id.len() + t.requests.iter().map(|q| q.text.len() + 64).sum::<usize>()
                })
                .sum()
        };
        ask_engine_call!(self, judge_name, size, |engine, store| engine
            .silt_sieve_triage()
            .call_triage(store, request)
            .await)
    }

    /// Runs `sieve_grep` in the ask engine over the files under `root`.
    pub async fn grep(
        &self,
        judge_name: &str,
        root: &std::path::Path,
        request: &crate::bindings::ask_engine::exports::silt::sieve::grep::GrepRequest,
        steps: Option<Arc<crate::progress::Stages>>,
    ) -> Result<
        (
            crate::bindings::ask_engine::exports::silt::sieve::grep::GrepResult,
            state::WalkNotes,
        ),
        CallError,
    > {
        let size = |r: &crate::bindings::ask_engine::exports::silt::sieve::grep::GrepResult| {
            r.results.iter().map(|h| h.path.len() + 32).sum()
        };
        let grant = state::RepoGrant::new(root.to_path_buf(), crate::tools::grep::CACHE_DIR);
        let notes = grant.notes.clone();
        let repo = Some(grant);
        // grep's answers live in silt's cache, keyed by the repository
        // (never inside it: grep is read-only)
        let answers = match (&self.answers, &self.grep_cache_root) {
            (Some(_), Some(user_cache)) => {
                match answer_cache::AnswerCache::open(&answer_cache::grep_cache_path(
                    root, user_cache,
                )) {
                    Ok(c) => Some(Arc::new(c)),
                    Err(e) => {
                        tracing::warn!("grep answer cache off for this call: {e:#}");
                        None
                    }
                }
            }
            _ => None,
        };
        engine_call!(
            self,
            ask_engine,
            crate::bindings::ask_engine::silt::sieve::types::AskError,
            judge_name,
            |state| {
                state.answers = answers;
                state.repo = repo;
                state.steps = steps;
            },
            size,
            |engine, store| engine.silt_sieve_grep().call_grep(store, request).await
        )
        .map(|r| {
            let notes = notes.lock().map(|n| n.clone()).unwrap_or_default();
            (r, notes)
        })
    }

    /// Runs `sieve_verify` with judge `judge_name`, fetching through `sources`.
    pub async fn verify(
        &self,
        judge_name: &str,
        sources: crate::fetch::SourceFetcher,
        request: &crate::bindings::verify_engine::exports::silt::sieve::verify::VerifyRequest,
        steps: Option<Arc<crate::progress::Stages>>,
    ) -> Result<crate::bindings::verify_engine::exports::silt::sieve::verify::VerifyResult, CallError>
    {
        use crate::bindings::verify_engine::exports::silt::sieve::verify::VerifyResult;
        let size = |r: &VerifyResult| {
            r.results
                .iter()
                .map(|c| {
                    c.claim.len() + c.passages.iter().map(|p| p.text.len() + 64).sum::<usize>()
                })
                .sum()
        };
        let answers = self.answers.clone();
        let sources = Some(Arc::new(sources));
        // what the judge may confirm is its manifest's word, not the caller's
        let mut request = request.clone();
        request.judge_entails = self
            .registry
            .get(judge_name)?
            .manifest
            .judge
            .unwrap_or_default()
            .entailment;
        let request = &request;
        engine_call!(
            self,
            verify_engine,
            crate::bindings::ask_engine::silt::sieve::types::AskError,
            judge_name,
            |state| {
                state.answers = answers;
                state.sources = sources;
                state.steps = steps;
            },
            size,
            |engine, store| engine.silt_sieve_verify().call_verify(store, request).await
        )
    }

    /// Instantiates judge `name` in a fresh store without calling it; for
    /// benchmarks.
    pub async fn instantiate_only(&self, name: &str) -> Result<Duration, CallError> {
        let judge = self.judge(name).await?;
        let started = std::time::Instant::now();
        judge.instantiate_only().await?;
        Ok(started.elapsed())
    }
}

/// Roughly how many bytes an ask result occupies.
fn ask_result_size(r: &crate::bindings::ask_engine::exports::silt::sieve::ask::AskResult) -> usize {
    use crate::bindings::ask_engine::exports::silt::sieve::ask::Results;
    use crate::bindings::ask_engine::silt::sieve::types::LabelledProbability;
    let dist = |d: &[LabelledProbability]| d.iter().map(|p| p.label.len() + 8).sum::<usize>();
    match &r.results {
        Results::Judge(rows) => rows.iter().map(|x| x.id.len() + 8).sum(),
        Results::Choose(rows) => rows
            .iter()
            .map(|x| x.id.len() + x.choice.len() + dist(&x.probabilities))
            .sum(),
        Results::Score(rows) => rows
            .iter()
            .map(|x| x.id.len() + x.label.len() + 16 + dist(&x.probabilities))
            .sum(),
    }
}
