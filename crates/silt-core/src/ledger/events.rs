//! What the engine did, for the append-only event log.

use serde::{Deserialize, Serialize};

/// One mutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    Captured,
    Fired,
    Confirmed,
    Contradicted,
    Revived,
    Faded,
    Evicted,
    Merged,
    Resolved,
    Abstracted,
    Judged,
}

/// A mutation, the entries it touched and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub at: f64,
    pub kind: EventKind,
    /// The entry acted on first (the survivor, the parent, the winner).
    pub id: String,
    /// Other entries involved (the merged, the loser, the children).
    pub others: Vec<String>,
    pub reason: String,
}

impl Event {
    pub fn new(
        at: f64,
        kind: EventKind,
        id: &str,
        others: Vec<String>,
        reason: impl Into<String>,
    ) -> Self {
        Event {
            at,
            kind,
            id: id.to_string(),
            others,
            reason: reason.into(),
        }
    }
}
