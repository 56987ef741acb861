//! What one plugin call's `Store` holds: the capabilities the host may
//! give it, each owning its own state, and the limits it runs under. Which
//! capabilities a plugin's imports reach is decided by its linker
//! ([`super::linkers`]); the rest stay at their empty defaults.

use wasmtime_wasi::{WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtxView, WasiHttpView};

use super::capability::basics::Basics;
use super::capability::exec::ExecGrants;
use super::capability::files::Files;
use super::capability::judge_calls::JudgeCalls;
use super::capability::progress::Progress;
use super::capability::sampling::Sampling;
use super::capability::search_ahead::SearchAhead;
use super::capability::sources::Sources;
use super::capability::wasi::Wasi;
use super::grants::Grants;
use super::limits::{CpuBudget, MemoryCap};
use silt_plugins::manifest::Limits;

/// The state of one store.
pub struct PluginState {
    /// The plugin's name, for logs and failures.
    pub plugin: String,
    /// Its WASI and `wasi:http` context, narrowed to its grants.
    pub wasi: Wasi,
    /// Its linear memory cap, and how far the memory grew.
    pub memory: MemoryCap,
    /// Its CPU budget, in epoch ticks.
    pub cpu: CpuBudget,
    /// The log, the clock and fresh ids.
    pub basics: Basics,
    /// The judge an engine's calls go to; unbound for judges and backends.
    pub judge: JudgeCalls,
    /// The ledger engine's searches handed to a second instance.
    pub search_ahead: SearchAhead,
    /// The repository a grep call walks; none for other calls.
    pub files: Files,
    /// The fetcher a verify call reads cited sources through; none otherwise.
    pub sources: Sources,
    /// Where the engine's stages and steps are reported.
    pub progress: Progress,
    /// The programs it may run.
    pub exec: ExecGrants,
    /// The MCP client model it may ask, when granted sampling.
    pub sampling: Sampling,
}

impl PluginState {
    /// A store's state under `grants` and `limits`; the per-call
    /// capabilities (judge, search ahead, files, sources, progress) start
    /// empty, and a plugin granted sampling takes the client of the tool
    /// call this store is made for.
    pub fn new(plugin: &str, grants: &Grants, limits: &Limits) -> anyhow::Result<Self> {
        Ok(PluginState {
            plugin: plugin.to_string(),
            wasi: grants.wasi.build()?,
            memory: MemoryCap::new(limits.memory_mib),
            cpu: CpuBudget::new(limits.cpu_ms),
            basics: Basics::new(plugin),
            judge: JudgeCalls::new(plugin, None),
            search_ahead: SearchAhead::default(),
            files: Files::default(),
            sources: Sources::new(plugin, None, Progress::default()),
            progress: Progress::default(),
            exec: grants.exec.clone(),
            sampling: Sampling::of_this_call(grants.sampling),
        })
    }
}

impl WasiView for PluginState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        self.wasi.ctx()
    }
}

impl WasiHttpView for PluginState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        self.wasi.http()
    }
}
