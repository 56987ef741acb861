//! Sediment's `ledger.json`: read unchanged, written so Sediment loads it.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};
use silt_core::ledger::{DAY, Entry};

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

/// Reads a Sediment ledger; unknown fields are kept on each entry.
pub fn read(path: &Path) -> Result<Vec<Entry>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let rows: Vec<Map<String, Value>> = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a Sediment ledger (a JSON list of entries)",
            path.display()
        )
    })?;
    rows.into_iter()
        .enumerate()
        .map(|(i, row)| {
            if let Some(missing) = REQUIRED.iter().find(|k| !row.contains_key(**k)) {
                bail!("entry {i} of {} has no '{missing}'", path.display());
            }
            serde_json::from_value(Value::Object(row))
                .with_context(|| format!("entry {i} of {} is malformed", path.display()))
        })
        .collect()
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
