//! The Sediment ledger engine: WHEN → PREFER lessons that decay, merge,
//! resolve contradictions into boundary rules and fold siblings under an
//! abstracted parent. Pure logic over entries and a caller-supplied time;
//! storage and ids come from the host.

pub mod abstraction;
mod best_first;
pub mod candidates;
pub mod decisions;
#[cfg(test)]
mod decisions_stick;
pub mod demo;
mod dense_counts;
pub mod entry;
pub mod events;
pub(crate) mod folded;
mod ivf;
pub mod kept_verdicts;
pub mod limits;
pub mod meaning;
mod neighbours;
pub mod ops;
mod recall_index;
pub mod relate;
pub mod review;
pub mod rows;
pub mod similarity;
mod sketch;
pub mod sleep;
pub mod spare_core;
pub mod synthetic;
mod trigger_order;
mod twins;
pub mod undo;
pub mod wit;

pub use entry::{DAY, Entry, Status};

/// The default [`Params::destructive_margin`]: a merge or a resolved
/// contradiction needs the judge's probability for it at 0.8 or more.
pub const DEFAULT_DESTRUCTIVE_MARGIN: f64 = 0.8;

/// The ledger's tunables, with the reference's values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// Below this effective confidence an entry fades (is retired).
    pub floor: f64,
    /// The most active entries kept; the rest are evicted by retention.
    pub cap: usize,
    /// Trigger similarity from which two entries are about the same situation.
    pub trigger_threshold: f64,
    /// Action similarity from which two actions are the same.
    pub action_threshold: f64,
    /// The least probability a judge must give merge or contradict for
    /// sleep to act on it: both retire a lesson, so a pair the judge is
    /// less sure of is left alone (and counted as held for review).
    pub destructive_margin: f64,
    /// Trigger similarity from which a pair is a candidate for the sleep pass.
    pub candidate_threshold: f64,
    /// Trigger similarity from which the same action is the same lesson said
    /// twice (merge); below it, same-action pairs are siblings. 0.65 sits
    /// between the demo's sibling triggers (0.49–0.58) and a trigger said
    /// again with one small word changed (0.70 for "a"/"an").
    pub merge_threshold: f64,
    /// Siblings needed to abstract a parent.
    pub abstraction_min: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            floor: 0.05,
            cap: 200,
            trigger_threshold: 0.45,
            action_threshold: 0.45,
            destructive_margin: DEFAULT_DESTRUCTIVE_MARGIN,
            candidate_threshold: 0.18,
            merge_threshold: 0.65,
            abstraction_min: 3,
        }
    }
}
