//! The Sediment ledger's values as the host handles them: conversions
//! between the engine's WIT entries and `silt_core`'s, and the seed's JSON
//! view of an entry.

use serde_json::{Value, json};

use crate::bindings::ledger_engine::silt::ledger::types::{Entry, Event, EventKind, Status};
use silt_core::ledger::events::{Event as CoreEvent, EventKind as K};

silt_core::ledger_entry_conversions!(Entry, Status);

/// The seed's view: {id, when, prefer, confidence (effective, 3 places),
/// hits, confirmations, status, note}.
pub fn view(e: &Entry, now: f64) -> Value {
    let effective = entry_from_wit(e).effective(now);
    json!({
        "id": e.id,
        "when": e.when,
        "prefer": e.prefer,
        "confidence": (effective * 1000.0).round() / 1000.0,
        "hits": e.hit_count,
        "confirmations": e.confirm_count,
        "status": status_name(e.status),
        "note": e.note,
    })
}

/// "active", "dormant" or "retired".
pub fn status_name(s: Status) -> &'static str {
    match s {
        Status::Active => "active",
        Status::Dormant => "dormant",
        Status::Retired => "retired",
    }
}

/// An engine event as the event log stores it.
pub fn event_from_wit(e: &Event) -> CoreEvent {
    let kind = match e.kind {
        EventKind::Captured => K::Captured,
        EventKind::Fired => K::Fired,
        EventKind::Confirmed => K::Confirmed,
        EventKind::Contradicted => K::Contradicted,
        EventKind::Revived => K::Revived,
        EventKind::Faded => K::Faded,
        EventKind::Evicted => K::Evicted,
        EventKind::Merged => K::Merged,
        EventKind::Resolved => K::Resolved,
        EventKind::Abstracted => K::Abstracted,
        EventKind::Judged => K::Judged,
    };
    CoreEvent {
        at: e.at,
        kind,
        id: e.id.clone(),
        others: e.others.clone(),
        reason: e.reason.clone(),
    }
}
