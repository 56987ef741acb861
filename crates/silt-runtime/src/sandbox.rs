//! The sandbox one plugin call runs in: a fresh store with the plugin's
//! resolved grants, its memory cap and CPU budget, an epoch callback that
//! yields to tokio every tick, and the wall clock around the call.

use std::time::Duration;

use wasmtime::{Engine, Store, UpdateDeadline};

use super::failure::PluginFailure;
use super::grants::Grants;
use super::state::PluginState;
use silt_plugins::manifest::Manifest;

/// Limits that apply to one plugin call.
pub struct Sandbox<'a> {
    /// The engine the store is made for.
    pub engine: &'a Engine,
    /// The plugin's manifest: its name and limits.
    pub manifest: &'a Manifest,
    /// Its resolved grants, from which each store's capabilities are built.
    pub grants: &'a Grants,
}

impl Sandbox<'_> {
    /// A fresh store for one call.
    pub fn store(&self) -> Result<Store<PluginState>, PluginFailure> {
        let plugin = &self.manifest.plugin.name;
        let state = PluginState::new(plugin, self.grants, &self.manifest.limits).map_err(|e| {
            PluginFailure::Start {
                plugin: plugin.clone(),
                reason: format!("{e:#}"),
            }
        })?;
        let mut store = Store::new(self.engine, state);
        store.limiter(|s| &mut s.memory);
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|mut cx| {
            Ok(if cx.data_mut().cpu.tick() {
                UpdateDeadline::Yield(1)
            } else {
                UpdateDeadline::Interrupt
            })
        });
        Ok(store)
    }

    /// Gives a kept store the whole CPU budget again for its next call,
    /// and the client of that call to sample.
    pub fn refresh(store: &mut Store<PluginState>) {
        let state = store.data_mut();
        state.cpu.reset();
        state.sampling.renew();
        state.memory.denied = false;
        store.set_epoch_deadline(1);
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
            Ok(Err(e)) => {
                let state = store.data();
                Err(PluginFailure::classify(
                    e,
                    &state.plugin,
                    state.memory.denied,
                    state.wasi.stderr_tail(),
                    &self.manifest.limits,
                ))
            }
            Err(_) => Err(PluginFailure::WallClock {
                plugin: self.manifest.plugin.name.clone(),
                ms: self.manifest.limits.wall_ms,
            }),
        }
    }
}
