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
    pub plugin: String,
    pub wasi: Wasi,
    pub memory: MemoryCap,
    pub cpu: CpuBudget,
    pub basics: Basics,
    pub judge: JudgeCalls,
    pub search_ahead: SearchAhead,
    pub files: Files,
    pub sources: Sources,
    pub progress: Progress,
    pub exec: ExecGrants,
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
