//! The wasmtime runtime: one engine, a compile cache, plugins loaded once
//! (compiled, linked to the capabilities their kind may use, grants
//! resolved), and a fresh sandboxed store for every call.
//!
//! Layout: [`capability`] holds what the host can give a plugin (one
//! module each); [`state`] composes them into a store's data; [`linkers`]
//! ties each kind of plugin's imports to them; [`sandbox`] runs a call
//! under the plugin's limits; [`judge`], [`search`], [`ledger`] and
//! [`sieve`] are the kinds of plugin silt calls.

#![deny(missing_docs)]

pub mod app;
pub mod bindings;
pub mod folders;
pub mod syntax;

pub mod answer_cache;
pub mod cache;
pub mod capability;
pub mod failure;
pub mod grants;
pub mod judge;
pub mod judged_by;
pub mod ledger;
pub mod limits;
pub mod linkers;
pub mod sandbox;
pub mod search;
pub mod sieve;
pub mod state;

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::sync::OnceCell;
use wasmtime::component::{Component, InstancePre, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use cache::{CacheOutcome, CompileCache};
use failure::PluginFailure;
use grants::Grants;
use judge::{LoadedJudge, RelatePre};
use limits::TICK_MS;
use linkers::Linkers;
use sandbox::Sandbox;
use silt_plugins::manifest::{MAX_MEMORY_MIB, Manifest, PluginKind};
use silt_plugins::registry::{Registry, UnknownPlugin};
use state::PluginState;

/// Concurrent component instances the pool holds.
const POOL_INSTANCES: u32 = 128;
/// Instances one tool call holds at once at most: an engine and its
/// judge (a sleep pass: also the judge relating ahead and the engine's
/// second instance searching ahead), or one backend per query variant of
/// a search (2 to 4).
const INSTANCES_PER_CALL: u32 = 4;
/// Instances left for what lives between calls: warm judges and ledger
/// engines.
const KEPT_INSTANCES: u32 = 32;
/// Tool calls that run at once. More wait for a turn: without the limit,
/// 256 concurrent clients of the HTTP server filled the pool and calls
/// failed with "maximum concurrent limit of 128 for component instances"
/// (`silt-bench http`, docs/BENCHMARKS.md).
pub const CONCURRENT_CALLS: u32 = (POOL_INSTANCES - KEPT_INSTANCES) / INSTANCES_PER_CALL;

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

/// The profiler `SILT_PROFILE` names: `perfmap` writes
/// `/tmp/perf-PID.map`, so `perf record` names the functions of compiled
/// components (docs/BENCHMARKS.md, "Profiling").
fn profiling() -> Result<Option<wasmtime::ProfilingStrategy>> {
    match silt_config::env::text("SILT_PROFILE").as_deref() {
        None => Ok(None),
        Some("perfmap") => Ok(Some(wasmtime::ProfilingStrategy::PerfMap)),
        Some(other) => {
            anyhow::bail!("SILT_PROFILE is '{other}'; the profiler silt supports is 'perfmap'")
        }
    }
}

/// How components were loaded, for benchmarks and `plugins inspect`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LoadReport {
    /// Which plugin was loaded, by name.
    pub plugin: String,
    /// Whether its compiled code came from the on-disk cache.
    pub cache: CacheOutcome,
    /// Time to compile it or read it from the cache, in ms.
    pub millis: f64,
}

/// A plugin compiled, linked and ready to instantiate, with its grants
/// resolved: what every call of it starts from.
pub struct Loaded<P> {
    /// Its manifest, as the registry held it at load.
    pub manifest: Arc<Manifest>,
    /// The component's digest for a plugin from a folder, empty for a
    /// built-in.
    pub build: String,
    /// Its grants, resolved once at load.
    pub grants: Grants,
    /// The typed instance template every call instantiates.
    pub pre: P,
    engine: Engine,
}

impl<P> Loaded<P> {
    /// The sandbox a call of this plugin runs in.
    pub fn sandbox(&self) -> Sandbox<'_> {
        Sandbox {
            engine: &self.engine,
            manifest: &self.manifest,
            grants: &self.grants,
        }
    }
}

/// A kind of plugin, as a sentence names it.
fn described(kind: PluginKind) -> &'static str {
    match kind {
        PluginKind::Judge => "a judge",
        PluginKind::Engine => "an engine",
        PluginKind::Search => "a search backend",
    }
}

/// Loaded plugins by name and by what they were loaded as; each is loaded
/// once, by whichever call needs it first.
type PluginTable = Mutex<HashMap<(String, TypeId), Arc<OnceCell<Arc<dyn Any + Send + Sync>>>>>;

/// The runtime.
pub struct Runtime {
    engine: Engine,
    linkers: Linkers,
    cache: CompileCache,
    /// The plugins known now; [`Runtime::reload`] replaces it.
    registry: std::sync::RwLock<Arc<Registry>>,
    /// Where `registry` was found, and the keys trusted to sign: what a
    /// reload discovers with again.
    discovery: Option<(Vec<std::path::PathBuf>, silt_plugins::signature::Trust)>,
    /// Earlier judge answers (None: every question goes to the judge).
    pub answers: Option<Arc<answer_cache::AnswerCache>>,
    /// The user cache folder grep's per-repository caches go under when a
    /// repository has no .gitignore to extend.
    pub grep_cache_root: Option<std::path::PathBuf>,
    plugins: PluginTable,
    loads: Mutex<Vec<LoadReport>>,
    /// Turns for tool calls ([`CONCURRENT_CALLS`]).
    turns: tokio::sync::Semaphore,
    /// The largest linear memories ledger engine instances grew to.
    pub ledger_peaks: Arc<ledger::LedgerPeaks>,
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
        let cache = match profiling()? {
            Some(strategy) => {
                config.profiler(strategy);
                // code loaded from the cache is not announced to the profiler
                CompileCache::new(None)
            }
            None => cache,
        };
        let engine = Engine::new(&config)
            .map_err(anyhow::Error::from)
            .context("creating the wasmtime engine")?;
        start_ticker(&engine);
        let linkers = Linkers::new(&engine)
            .map_err(anyhow::Error::from)
            .context("linking the host's capabilities")?;
        Ok(Arc::new(Runtime {
            engine,
            linkers,
            cache,
            registry: std::sync::RwLock::new(Arc::new(registry)),
            discovery: None,
            grep_cache_root: answers
                .as_ref()
                .and_then(|a| a.path().parent())
                .map(|d| d.join("grep")),
            answers,
            plugins: Mutex::new(HashMap::new()),
            turns: tokio::sync::Semaphore::new(CONCURRENT_CALLS as usize),
            loads: Mutex::new(Vec::new()),
            ledger_peaks: Arc::default(),
        }))
    }

    /// Tool calls holding a turn now.
    pub fn calls_running(&self) -> usize {
        CONCURRENT_CALLS as usize - self.turns.available_permits()
    }

    /// Waits for a turn to run one tool call; the turn ends when the
    /// permit is dropped. A server takes one per call so that concurrency
    /// queues calls instead of exhausting the instance pool.
    pub async fn turn(&self) -> tokio::sync::SemaphorePermit<'_> {
        self.turns
            .acquire()
            .await
            .expect("the runtime never closes its turns")
    }

    /// The wasmtime engine every plugin is compiled for and runs on.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The plugins known now. A call keeps the registry it started with.
    pub fn registry(&self) -> Arc<Registry> {
        self.registry.read().expect("registry lock").clone()
    }

    /// Lets [`Runtime::reload`] discover plugins again under `dirs`.
    pub fn set_discovery(
        self: &mut Arc<Self>,
        dirs: Vec<std::path::PathBuf>,
        trust: silt_plugins::signature::Trust,
    ) {
        Arc::get_mut(self)
            .expect("discovery is set before the runtime is shared")
            .discovery = Some((dirs, trust));
    }

    /// Finds the plugins again. Each one added, removed or changed (its
    /// manifest, component, pin or signature) is forgotten, so the next
    /// call loads it anew, while calls in flight finish on the instance
    /// they hold. Returns the names that changed, sorted.
    pub fn reload(&self) -> Result<Vec<String>> {
        let Some((dirs, trust)) = &self.discovery else {
            return Ok(Vec::new());
        };
        let fresh = Registry::discover(dirs, trust)?;
        let mut registry = self.registry.write().expect("registry lock");
        let (before, after) = (registry.fingerprints().clone(), fresh.fingerprints());
        let changed: Vec<String> = before
            .keys()
            .chain(after.keys())
            .filter(|n| before.get(*n) != after.get(*n))
            .cloned()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        if changed.is_empty() {
            return Ok(changed);
        }
        for problem in &fresh.problems {
            tracing::warn!("plugin skipped: {problem}");
        }
        *registry = Arc::new(fresh);
        self.plugins
            .lock()
            .expect("plugin table lock")
            .retain(|(name, _), _| !changed.contains(name));
        tracing::info!("plugins reloaded; changed: {}", changed.join(", "));
        Ok(changed)
    }

    /// What was loaded so far, and whether from the cache.
    pub fn load_reports(&self) -> Vec<LoadReport> {
        self.loads.lock().expect("load report lock").clone()
    }

    /// Compiles (or loads from the cache) the component of plugin `name`,
    /// checked against its pin and signature; with its digest when it
    /// comes from a folder (empty for a built-in).
    pub fn component(&self, name: &str) -> Result<(Arc<Manifest>, Component, String), CallError> {
        let entry = self.registry().get(name)?.clone();
        let (bytes, verified) = entry.verified_bytes()?;
        let build = verified.map(|v| v.component_digest).unwrap_or_default();
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
        Ok((entry.manifest.clone(), component, build))
    }

    /// Plugin `name` as a `T`, made by `init` the first time and shared
    /// after: the one place plugins are kept.
    async fn load<T, F>(&self, name: &str, init: impl FnOnce() -> F) -> Result<Arc<T>, CallError>
    where
        T: Send + Sync + 'static,
        F: Future<Output = Result<T, CallError>>,
    {
        let cell = {
            let mut plugins = self.plugins.lock().expect("plugin table lock");
            plugins
                .entry((name.to_string(), TypeId::of::<T>()))
                .or_default()
                .clone()
        };
        let loaded = cell
            .get_or_try_init(|| async {
                Ok::<_, CallError>(Arc::new(init().await?) as Arc<dyn Any + Send + Sync>)
            })
            .await?;
        Ok(loaded
            .clone()
            .downcast::<T>()
            .expect("the table is keyed by type"))
    }

    /// Compiles plugin `name`, checks it is a `kind` plugin, resolves its
    /// grants and links it with `linker` into the typed template `typed`
    /// makes; `contract` names what it must fit, for the error.
    fn prepare<P>(
        &self,
        name: &str,
        kind: PluginKind,
        linker: &Linker<PluginState>,
        contract: &str,
        typed: impl FnOnce(InstancePre<PluginState>) -> wasmtime::Result<P>,
    ) -> Result<Loaded<P>, CallError> {
        let (manifest, component, build) = self.component(name)?;
        if manifest.plugin.kind != kind {
            return Err(CallError::InvalidRequest(format!(
                "plugin '{name}' is not {} (it is {})",
                described(kind),
                described(manifest.plugin.kind)
            )));
        }
        let grants = Grants::resolve(&manifest).map_err(|e| PluginFailure::Start {
            plugin: name.into(),
            reason: format!("{e:#}"),
        })?;
        let pre = linker
            .instantiate_pre(&component)
            .and_then(typed)
            .map_err(|e| PluginFailure::Start {
                plugin: name.into(),
                reason: format!("it does not fit the contract {contract}: {e}"),
            })?;
        Ok(Loaded {
            manifest,
            build,
            grants,
            pre,
            engine: self.engine.clone(),
        })
    }

    /// The judge plugin `name`, loaded once.
    pub async fn judge(&self, name: &str) -> Result<Arc<LoadedJudge>, CallError> {
        use crate::bindings::{embedding_judge, judge};
        self.load(name, || async {
            // a judge granted the client's model gets that and no network;
            // one granted programs (the agent judge) gets `exec` and no
            // network
            let registry = self.registry();
            let grants = &registry.get(name)?.manifest.grants;
            let linker = if grants.sampling {
                &self.linkers.sampling
            } else if !grants.exec.is_empty() {
                &self.linkers.cli
            } else {
                &self.linkers.web
            };
            let loaded = self.prepare(
                name,
                PluginKind::Judge,
                linker,
                "silt:judge@0.1.2 (or 0.1.1, 0.1.0)",
                judge::JudgePluginPre::new,
            )?;
            // A judge that also exports `relations` (or 0.1.0's `relate`)
            // can serve the ledger, and one that also exports `embed` gives
            // the ledger vectors.
            let relate_pre = RelatePre::find(loaded.pre.instance_pre());
            if matches!(relate_pre, RelatePre::Positional(_)) {
                tracing::info!(
                    "judge '{name}' relates lessons through silt:judge@0.1.0's deprecated relate"
                );
            }
            let embed_pre =
                embedding_judge::EmbedderPre::new(loaded.pre.instance_pre().clone()).ok();
            Ok(LoadedJudge::load(
                self.engine.clone(),
                loaded.build,
                loaded.manifest,
                loaded.grants,
                loaded.pre,
                relate_pre,
                embed_pre,
            )
            .await?)
        })
        .await
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
