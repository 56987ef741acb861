//! What one store may use, counted as it runs: linear memory (refused past
//! the cap, with the refusal remembered so the failure says why) and CPU
//! time in epoch ticks.

use wasmtime::ResourceLimiter;

/// Milliseconds per epoch tick: the granularity of CPU limits.
pub const TICK_MS: u64 = 10;

/// Refuses memory growth past a plugin's cap, remembering that it did so
/// the failure can be reported as a memory limit rather than a bare trap.
#[derive(Debug)]
pub struct MemoryCap {
    /// The cap, in bytes (the manifest's `memory_mib`).
    pub max_bytes: usize,
    /// Set when a growth past the cap was refused, so the failure names the
    /// memory limit; cleared when a kept store starts its next call.
    pub denied: bool,
    /// The largest linear memory the guest has asked for, for benchmarks.
    pub peak: usize,
}

impl MemoryCap {
    /// A cap of `max_mib` MiB.
    pub fn new(max_mib: u64) -> Self {
        MemoryCap {
            max_bytes: (max_mib << 20) as usize,
            denied: false,
            peak: 0,
        }
    }
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.peak = self.peak.max(desired);
        if desired > self.max_bytes {
            self.denied = true;
            wasmtime::bail!("memory limit of {} MiB reached", self.max_bytes >> 20);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 20)
    }
}

/// Epoch ticks (10 ms of guest execution each) used and allowed.
#[derive(Debug, Clone, Copy)]
pub struct CpuBudget {
    /// Ticks counted since the call began.
    pub used: u64,
    /// Ticks allowed: the CPU limit over [`TICK_MS`], rounded up, at least 1.
    pub allowed: u64,
}

impl CpuBudget {
    /// A budget of `cpu_ms` milliseconds of guest execution.
    pub fn new(cpu_ms: u64) -> Self {
        CpuBudget {
            used: 0,
            allowed: cpu_ms.div_ceil(TICK_MS).max(1),
        }
    }

    /// Counts one tick; false once the budget is spent.
    pub fn tick(&mut self) -> bool {
        self.used += 1;
        self.used <= self.allowed
    }

    /// A fresh budget for the next call on a kept instance.
    pub fn reset(&mut self) {
        self.used = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_allows_its_ticks_then_stops() {
        let mut b = CpuBudget::new(25); // three ticks of 10 ms
        assert!(b.tick() && b.tick() && b.tick());
        assert!(!b.tick());
        b.reset();
        assert!(b.tick());
    }

    #[test]
    fn memory_past_the_cap_is_refused_and_remembered() {
        let mut cap = MemoryCap::new(1);
        assert!(cap.memory_growing(0, 1 << 20, None).unwrap());
        assert!(cap.memory_growing(0, (1 << 20) + 1, None).is_err());
        assert!(cap.denied);
        assert_eq!(cap.peak, (1 << 20) + 1);
    }
}
