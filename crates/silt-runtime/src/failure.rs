//! How a plugin call can fail, in words a caller can act on.

use wasmtime::Trap;

use silt_plugins::manifest::Limits;

/// A plugin call that was stopped or refused. The plugin's store is thrown
/// away; the host and other plugins carry on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PluginFailure {
    /// Guest code ran past `limits.cpu_ms` (an epoch interrupt).
    #[error("plugin '{plugin}' ran past its CPU limit of {ms} ms and was stopped")]
    CpuLimit {
        /// The plugin stopped.
        plugin: String,
        /// Its CPU limit, in ms.
        ms: u64,
    },
    /// Its linear memory tried to grow past `limits.memory_mib`.
    #[error("plugin '{plugin}' went over its memory limit of {mib} MiB and was stopped")]
    MemoryLimit {
        /// The plugin stopped.
        plugin: String,
        /// Its memory cap, in MiB.
        mib: u64,
    },
    /// The call ran past `limits.wall_ms`, time waiting on the host included.
    #[error("plugin '{plugin}' took longer than its wall-clock limit of {ms} ms and was stopped")]
    WallClock {
        /// The plugin stopped.
        plugin: String,
        /// Its wall-clock limit, in ms.
        ms: u64,
    },
    /// What it returned measured over `limits.output_kib`.
    #[error("plugin '{plugin}' returned about {kib} KiB, over its output limit of {limit_kib} KiB")]
    OutputTooLarge {
        /// The plugin whose result was refused.
        plugin: String,
        /// The result's size, in KiB rounded up ([`output_bytes`]).
        kib: u64,
        /// Its output limit, in KiB.
        limit_kib: u64,
    },
    /// Any other error of the call: a trap, a panic, a failed instantiation.
    #[error("plugin '{plugin}' crashed: {reason}")]
    Trapped {
        /// The plugin that failed.
        plugin: String,
        /// The root cause, with the guest's last stderr lines when it wrote any.
        reason: String,
    },
    /// It never ran: its grants did not resolve, its store could not be
    /// built, it does not fit its contract, or its info was unusable.
    #[error("plugin '{plugin}' could not be started: {reason}")]
    Start {
        /// The plugin that could not start.
        plugin: String,
        /// Why, in words.
        reason: String,
    },
}

impl PluginFailure {
    /// Classifies an error from a call into `plugin`, whose memory cap
    /// refused a growth when `memory_denied`; `stderr_tail` is what the
    /// guest last wrote.
    pub fn classify(
        err: wasmtime::Error,
        plugin: &str,
        memory_denied: bool,
        stderr_tail: Option<String>,
        limits: &Limits,
    ) -> Self {
        let plugin = plugin.to_string();
        if memory_denied {
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
        if let Some(tail) = stderr_tail {
            reason = format!("{reason} ({tail})");
        }
        PluginFailure::Trapped { plugin, reason }
    }

    /// Checks what a plugin returned against its output cap, measured as
    /// the bytes of the value itself (strings, numbers at their width,
    /// lengths as varints: postcard's encoding), the same way for every
    /// kind of result.
    pub fn check_output(
        plugin: &str,
        value: &impl serde::Serialize,
        limits: &Limits,
    ) -> Result<(), Self> {
        let kib = (output_bytes(value) as u64).div_ceil(1024);
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

/// The encoded size of `value`, counted without allocating.
pub fn output_bytes(value: &impl serde::Serialize) -> usize {
    // Serializing a value whose types all derive Serialize cannot fail;
    // a result too odd to measure is measured as nothing rather than
    // refused.
    postcard::serialize_with_flavor(value, postcard::ser_flavors::Size::default()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_measured_by_what_it_holds() {
        let strings = vec!["x".repeat(3000); 2];
        assert!((6000..6020).contains(&output_bytes(&strings)));
        let floats = vec![0.5f32; 1000];
        assert!((4000..4010).contains(&output_bytes(&floats)));
        let limits = Limits {
            output_kib: 4,
            ..Limits::default()
        };
        assert!(PluginFailure::check_output("p", &floats, &limits).is_ok());
        assert!(matches!(
            PluginFailure::check_output("p", &strings, &limits),
            Err(PluginFailure::OutputTooLarge { kib: 6, .. })
        ));
    }
}
