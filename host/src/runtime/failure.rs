//! How a plugin call can fail, in words a caller can act on.

use wasmtime::Trap;

use super::state::PluginState;
use crate::plugins::manifest::Limits;

/// A plugin call that was stopped or refused. The plugin's store is thrown
/// away; the host and other plugins carry on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PluginFailure {
    #[error("plugin '{plugin}' ran past its CPU limit of {ms} ms and was stopped")]
    CpuLimit { plugin: String, ms: u64 },
    #[error("plugin '{plugin}' went over its memory limit of {mib} MiB and was stopped")]
    MemoryLimit { plugin: String, mib: u64 },
    #[error("plugin '{plugin}' took longer than its wall-clock limit of {ms} ms and was stopped")]
    WallClock { plugin: String, ms: u64 },
    #[error("plugin '{plugin}' returned about {kib} KiB, over its output limit of {limit_kib} KiB")]
    OutputTooLarge {
        plugin: String,
        kib: u64,
        limit_kib: u64,
    },
    #[error("plugin '{plugin}' crashed: {reason}")]
    Trapped { plugin: String, reason: String },
    #[error("plugin '{plugin}' could not be started: {reason}")]
    Start { plugin: String, reason: String },
}

impl PluginFailure {
    /// Classifies an error from a call into the plugin whose state is `state`.
    pub fn classify(err: wasmtime::Error, state: &PluginState, limits: &Limits) -> Self {
        let plugin = state.plugin.clone();
        if state.memory.denied {
            return PluginFailure::MemoryLimit {
                plugin,
                mib: limits.memory_mib,
            };
        }
        if err.downcast_ref::<Trap>() == Some(&Trap::Interrupt) {
            return PluginFailure::CpuLimit {
                plugin,
                ms: limits.cpu_ms,
            };
        }
        let mut reason = err.root_cause().to_string();
        if let Some(tail) = state.stderr_tail() {
            reason = format!("{reason} ({tail})");
        }
        PluginFailure::Trapped { plugin, reason }
    }

    /// Checks a result's size against the plugin's output cap.
    pub fn check_output(plugin: &str, bytes: usize, limits: &Limits) -> Result<(), Self> {
        let kib = (bytes as u64).div_ceil(1024);
        if kib > limits.output_kib {
            return Err(PluginFailure::OutputTooLarge {
                plugin: plugin.into(),
                kib,
                limit_kib: limits.output_kib,
            });
        }
        Ok(())
    }
}
