//! Conversions between [`Entry`](super::Entry) and the `entry` record that
//! wit-bindgen (in the component) and wasmtime's bindgen (in the host) each
//! generate from `silt:ledger/types`: one definition for both sides.

/// Defines `entry_to_wit` and `entry_from_wit` for a generated `entry`
/// record type and its `status` enum, both in scope under the given names.
#[macro_export]
macro_rules! ledger_entry_conversions {
    ($entry:ident, $status:ident) => {
        /// A core entry as the generated WIT record.
        pub fn entry_to_wit(e: &$crate::ledger::Entry) -> $entry {
            $entry {
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
                    $crate::ledger::Status::Active => $status::Active,
                    $crate::ledger::Status::Dormant => $status::Dormant,
                    $crate::ledger::Status::Retired => $status::Retired,
                },
                note: e.note.clone(),
                decayed_at: e.decayed_at,
                extra: $crate::serde_json::Value::Object(e.extra.clone()).to_string(),
            }
        }

        /// The generated WIT record as a core entry (unknown fields parsed
        /// back from their JSON).
        pub fn entry_from_wit(e: &$entry) -> $crate::ledger::Entry {
            $crate::ledger::Entry {
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
                    $status::Active => $crate::ledger::Status::Active,
                    $status::Dormant => $crate::ledger::Status::Dormant,
                    $status::Retired => $crate::ledger::Status::Retired,
                },
                note: e.note.clone(),
                decayed_at: e.decayed_at,
                extra: $crate::serde_json::from_str(&e.extra).unwrap_or_default(),
            }
        }
    };
}
