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
                // the verdicts cross in `extra`, as the store keeps them: in
                // the row's JSON body (see `ledger::decisions`)
                extra: {
                    let mut extra = e.extra.clone();
                    if !e.verdicts.is_empty() {
                        extra.insert(
                            "verdicts".into(),
                            $crate::serde_json::to_value(&e.verdicts).unwrap_or_default(),
                        );
                    }
                    $crate::serde_json::Value::Object(extra).to_string()
                },
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
                verdicts: Vec::new(),
                extra: $crate::serde_json::from_str(&e.extra).unwrap_or_default(),
            }
            .with_verdicts_from_extra()
        }
    };
}

/// Defines `event_to_wit` and `event_from_wit` for a generated `event`
/// record and its `event-kind` enum, both in scope under the given names,
/// beside [`ledger_entry_conversions`] (the events carry entries).
#[macro_export]
macro_rules! ledger_event_conversions {
    ($event:ident, $kind:ident) => {
        /// A core event as the generated WIT record.
        #[allow(dead_code)]
        pub fn event_to_wit(e: &$crate::ledger::events::Event) -> $event {
            use $crate::ledger::events::EventKind as K;
            $event {
                at: e.at,
                kind: match e.kind {
                    K::Captured => $kind::Captured,
                    K::Fired => $kind::Fired,
                    K::Confirmed => $kind::Confirmed,
                    K::Contradicted => $kind::Contradicted,
                    K::Revived => $kind::Revived,
                    K::Faded => $kind::Faded,
                    K::Evicted => $kind::Evicted,
                    K::Merged => $kind::Merged,
                    K::Resolved => $kind::Resolved,
                    K::Abstracted => $kind::Abstracted,
                    K::Judged => $kind::Judged,
                    K::Undone => $kind::Undone,
                    K::Unfolded => $kind::Unfolded,
                    K::Forgotten => $kind::Forgotten,
                },
                id: e.id.clone(),
                others: e.others.clone(),
                reason: e.reason.clone(),
                before: e.before.iter().map(entry_to_wit).collect(),
            }
        }

        /// The generated WIT record as a core event.
        #[allow(dead_code)]
        pub fn event_from_wit(e: &$event) -> $crate::ledger::events::Event {
            use $crate::ledger::events::EventKind as K;
            $crate::ledger::events::Event {
                at: e.at,
                kind: match e.kind {
                    $kind::Captured => K::Captured,
                    $kind::Fired => K::Fired,
                    $kind::Confirmed => K::Confirmed,
                    $kind::Contradicted => K::Contradicted,
                    $kind::Revived => K::Revived,
                    $kind::Faded => K::Faded,
                    $kind::Evicted => K::Evicted,
                    $kind::Merged => K::Merged,
                    $kind::Resolved => K::Resolved,
                    $kind::Abstracted => K::Abstracted,
                    $kind::Judged => K::Judged,
                    $kind::Undone => K::Undone,
                    $kind::Unfolded => K::Unfolded,
                    $kind::Forgotten => K::Forgotten,
                },
                id: e.id.clone(),
                others: e.others.clone(),
                reason: e.reason.clone(),
                before: e.before.iter().map(entry_from_wit).collect(),
            }
        }
    };
}

/// Defines `params_to_wit` and `params_from_wit` for a generated `params`
/// record in scope under the given name.
#[macro_export]
macro_rules! ledger_params_conversions {
    ($params:ident) => {
        /// Core tunables as the generated WIT record.
        #[allow(dead_code)]
        pub fn params_to_wit(p: &$crate::ledger::Params) -> $params {
            $params {
                floor: p.floor,
                cap: p.cap as u32,
                trigger_threshold: p.trigger_threshold,
                action_threshold: p.action_threshold,
                destructive_margin: p.destructive_margin,
                candidate_threshold: p.candidate_threshold,
                merge_threshold: p.merge_threshold,
                abstraction_min: p.abstraction_min as u32,
            }
        }

        /// The generated WIT record as core tunables.
        #[allow(dead_code)]
        pub fn params_from_wit(p: &$params) -> $crate::ledger::Params {
            $crate::ledger::Params {
                floor: p.floor,
                cap: p.cap as usize,
                trigger_threshold: p.trigger_threshold,
                action_threshold: p.action_threshold,
                destructive_margin: p.destructive_margin,
                candidate_threshold: p.candidate_threshold,
                merge_threshold: p.merge_threshold,
                abstraction_min: p.abstraction_min as usize,
            }
        }
    };
}
