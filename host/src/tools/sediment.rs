//! The Sediment ledger's values as the host handles them: conversions
//! between the engine's WIT entries and `silt_core`'s, and the seed's JSON
//! view of an entry.

use serde_json::{Map, Value, json};
use silt_core::ledger as core;

use crate::bindings::ledger_engine::silt::ledger::types::{Entry, Status};

/// A core entry as the engine takes it.
pub fn to_wit(e: &core::Entry) -> Entry {
    Entry {
        when: e.when.clone(),
        prefer: e.prefer.clone(),
        id: e.id.clone(),
        confidence: e.confidence,
        created: e.created,
        last_confirmed: e.last_confirmed,
        last_fired: e.last_fired,
        hit_count: e.hit_count,
        confirm_count: e.confirm_count,
        contradiction_count: e.contradiction_count,
        status: match e.status {
            core::Status::Active => Status::Active,
            core::Status::Dormant => Status::Dormant,
            core::Status::Retired => Status::Retired,
        },
        note: e.note.clone(),
        decayed_at: e.decayed_at,
        extra: Value::Object(e.extra.clone()).to_string(),
    }
}

/// An engine entry as a core entry (unknown fields parsed back).
pub fn from_wit(e: &Entry) -> core::Entry {
    core::Entry {
        when: e.when.clone(),
        prefer: e.prefer.clone(),
        id: e.id.clone(),
        confidence: e.confidence,
        created: e.created,
        last_confirmed: e.last_confirmed,
        last_fired: e.last_fired,
        hit_count: e.hit_count,
        confirm_count: e.confirm_count,
        contradiction_count: e.contradiction_count,
        status: match e.status {
            Status::Active => core::Status::Active,
            Status::Dormant => core::Status::Dormant,
            Status::Retired => core::Status::Retired,
        },
        note: e.note.clone(),
        decayed_at: e.decayed_at,
        extra: serde_json::from_str::<Map<String, Value>>(&e.extra).unwrap_or_default(),
    }
}

/// The seed's view: {id, when, prefer, confidence (effective, 3 places),
/// hits, confirmations, status, note}.
pub fn view(e: &Entry, now: f64) -> Value {
    let effective = from_wit(e).effective(now);
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
