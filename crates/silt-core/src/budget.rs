//! The spending check every judged pipeline runs before each judge call.

use crate::types::Usage;

/// Tracks spend against a limit and projects the next call's cost from the
/// token estimate, corrected by how far actual use has run over estimates.
#[derive(Debug, Clone)]
pub struct Budget {
    limit_usd: f64,
    cost_per_million: f64,
    spent_usd: f64,
    estimated_tokens: u64,
    actual_tokens: u64,
}

impl Budget {
    /// A budget of `limit_usd` US dollars with nothing spent, for a judge
    /// priced per million input tokens (a negative price counts as free).
    pub fn new(limit_usd: f64, cost_per_million_input_tokens: f64) -> Self {
        Budget {
            limit_usd,
            cost_per_million: cost_per_million_input_tokens.max(0.0),
            spent_usd: 0.0,
            estimated_tokens: 0,
            actual_tokens: 0,
        }
    }

    /// The projected cost of a call estimated at `estimated_tokens`:
    /// estimate × max(1, actual / estimated so far), priced per million.
    pub fn projected_usd(&self, estimated_tokens: u64) -> f64 {
        let ratio = if self.estimated_tokens == 0 {
            1.0
        } else {
            (self.actual_tokens as f64 / self.estimated_tokens as f64).max(1.0)
        };
        estimated_tokens as f64 * ratio * self.cost_per_million / 1e6
    }

    /// Whether a call estimated at `estimated_tokens` fits, given `reserved_usd`
    /// already promised to calls in flight.
    pub fn allows(&self, estimated_tokens: u64, reserved_usd: f64) -> bool {
        self.spent_usd + reserved_usd + self.projected_usd(estimated_tokens) <= self.limit_usd
    }

    /// Records what a call estimated at `estimated_tokens` really used.
    pub fn record(&mut self, estimated_tokens: u64, usage: &Usage) {
        self.estimated_tokens += estimated_tokens;
        self.actual_tokens += usage.input_tokens;
        self.spent_usd += usage.cost_usd;
    }

    /// The limit, in US dollars.
    pub fn limit_usd(&self) -> f64 {
        self.limit_usd
    }

    /// What recorded calls cost so far, in US dollars.
    pub fn spent_usd(&self) -> f64 {
        self.spent_usd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_judges_never_exhaust() {
        let b = Budget::new(0.0, 0.0);
        assert!(b.allows(1_000_000_000, 0.0));
    }

    #[test]
    fn projection_scales_with_underestimates() {
        let mut b = Budget::new(1.0, 1.0); // $1 per million tokens
        assert!((b.projected_usd(1000) - 0.001).abs() < 1e-12);
        b.record(
            1000,
            &Usage {
                units: 1,
                input_tokens: 2000,
                output_tokens: 0,
                cost_usd: 0.002,
            },
        );
        assert!((b.projected_usd(1000) - 0.002).abs() < 1e-12);
        // overestimates do not shrink the projection
        b.record(
            10_000,
            &Usage {
                units: 1,
                input_tokens: 100,
                output_tokens: 0,
                cost_usd: 0.0001,
            },
        );
        assert!((b.projected_usd(1000) - 0.001).abs() < 1e-12);
    }

    #[test]
    fn stops_before_overspending() {
        let mut b = Budget::new(0.003, 1.0);
        assert!(b.allows(2000, 0.0));
        b.record(
            2000,
            &Usage {
                units: 1,
                input_tokens: 2000,
                output_tokens: 0,
                cost_usd: 0.002,
            },
        );
        assert!(b.allows(1000, 0.0));
        assert!(!b.allows(1001, 0.0));
        assert!(!b.allows(1000, 0.0005));
    }
}
