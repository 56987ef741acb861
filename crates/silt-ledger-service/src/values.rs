//! The Sediment ledger's values as the host handles them: conversions
//! between the engine's WIT entries and `silt_core`'s, and the seed's JSON
//! view of an entry.

use serde_json::Value;

use silt_runtime::bindings::ledger_engine::silt::ledger::types::{Entry, Event, EventKind, Status};

silt_core::ledger_entry_conversions!(Entry, Status);
silt_core::ledger_event_conversions!(Event, EventKind);

/// The seed's view of an engine entry (see [`silt_core::ledger::Entry::view`]).
pub fn view(e: &Entry, now: f64) -> Value {
    entry_from_wit(e).view(now)
}
