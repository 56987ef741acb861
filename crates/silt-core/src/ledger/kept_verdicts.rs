//! A verdict as a lesson keeps it in its row (the `decisions` module says
//! how they are used): its own module, so the entry that holds them and
//! the ledger that records them depend on it and not on each other.

use serde::{Deserialize, Serialize};

use super::relate::Verdict;

/// Who decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// An agent's verdict (`sediment_apply_judgments`, or a relation
    /// given with a capture).
    Agent,
    /// An undo took a merge or a resolved contradiction back: read as
    /// the agent's `distinct`, so the step is not taken again.
    Undo,
    /// An undo took an abstraction back: these two are not folded
    /// together again either.
    Unfold,
}

/// One verdict about this lesson and another, as this lesson keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The other lesson's id.
    pub with: String,
    /// This lesson's [`version`] when it was decided.
    pub mine: String,
    /// The other lesson's [`version`] when it was decided.
    pub theirs: String,
    /// What was decided: `distinct` or `sibling` (a merge or a
    /// contradiction is acted on at once and retires one of the two).
    pub verdict: Verdict,
    /// An agent, or an undo that stands for one.
    pub by: DecidedBy,
    /// Unix seconds.
    pub at: f64,
}

/// A lesson's version: 16 hex digits of the 64-bit FNV-1a hash of its
/// trigger and action (a unit separator between them). Stable across
/// builds and platforms, unlike the standard library's hasher.
pub fn version(when: &str, prefer: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in when
        .as_bytes()
        .iter()
        .chain(&[0x1f])
        .chain(prefer.as_bytes())
    {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}
