//! Sediment's `ledger.json`: read unchanged, written so Sediment loads it.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};
use silt_core::ledger::{DAY, Entry, limits};

/// The fields every Sediment entry has.
const REQUIRED: [&str; 12] = [
    "when",
    "prefer",
    "id",
    "confidence",
    "created",
    "last_confirmed",
    "last_fired",
    "hit_count",
    "confirm_count",
    "contradiction_count",
    "status",
    "note",
];

/// How many bad entries an import refusal lists before counting the rest.
const LISTED: usize = 20;

/// Reads a Sediment ledger; unknown fields are kept on each entry. Every
/// entry is checked as a capture would be (`limits::stored_entry`, with
/// `now` for "not in the future"); one bad entry refuses the whole file,
/// naming each bad entry by its position.
pub fn read(path: &Path, now: f64) -> Result<Vec<Entry>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let rows: Vec<Map<String, Value>> = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a Sediment ledger (a JSON list of entries)",
            path.display()
        )
    })?;
    let mut entries = Vec::with_capacity(rows.len());
    let mut bad = Vec::new();
    for (i, row) in rows.into_iter().enumerate() {
        let checked = match REQUIRED.iter().find(|k| !row.contains_key(**k)) {
            Some(missing) => Err(format!("has no '{missing}'")),
            None => serde_json::from_value::<Entry>(Value::Object(row))
                .map_err(|e| format!("is malformed ({e})"))
                .and_then(|e| limits::stored_entry(&e, now).map(|()| e)),
        };
        match checked {
            Ok(e) => entries.push(e),
            Err(why) => bad.push(format!("entry {i}: {why}")),
        }
    }
    if !bad.is_empty() {
        let more = bad.len().saturating_sub(LISTED);
        bad.truncate(LISTED);
        let tail = if more > 0 {
            format!("\n… and {more} more")
        } else {
            String::new()
        };
        bail!(
            "{} holds {} bad entr{}; nothing was imported. Fix or remove them (positions count from 0):\n{}{tail}",
            path.display(),
            bad.len() + more,
            if bad.len() + more == 1 { "y" } else { "ies" },
            bad.join("\n"),
        );
    }
    Ok(entries)
}

/// Entries as Sediment writes them: its fields in its order, decay folded
/// so Sediment's formula (decay from `last_confirmed`) gives silt's
/// effective confidence, then any unknown fields; `indent=2`.
pub fn write(entries: &[Entry]) -> Result<String> {
    let rows: Vec<Value> = entries
        .iter()
        .map(|e| {
            let mut e = e.clone();
            if let Some(decayed_at) = e.decayed_at.take() {
                let days = (decayed_at - e.last_confirmed) / DAY;
                e.confidence *= 2f64.powf(days / e.half_life_days());
            }
            serde_json::to_value(&e)
        })
        .collect::<Result<_, _>>()?;
    Ok(serde_json::to_string_pretty(&rows)?)
}
