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
                .map(|e| unfold_decay(e, now))
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

/// Undoes what [`write`] folds in: a confidence past 1 is one whose decay
/// silt had folded in (at a merge, say) and `write` scaled back up to
/// Sediment's formula. Read as the same effective confidence, from a
/// `decayed_at` at or before `now`, it is a lesson like any other; read
/// as it stands, silt's own export could not be imported again.
fn unfold_decay(mut e: Entry, now: f64) -> Entry {
    if e.decayed_at.is_none() && e.confidence > 1.0 && e.confidence.is_finite() {
        let half_life = e.half_life_days() * DAY;
        let at = (e.last_confirmed + half_life * e.confidence.log2()).min(now);
        e.confidence = (e.confidence * 0.5f64.powf((at - e.last_confirmed) / half_life)).min(1.0);
        e.decayed_at = Some(at);
    }
    e
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_export_with_decay_folded_in_imports_again_as_it_was() {
        let now = 1_750_000_000.0;
        // merged today after a month unconfirmed: decay folded in at now,
        // so the export scales the confidence past 1
        let mut merged = Entry::new("m".into(), "w".into(), "p".into(), 0.9, 0, now - 40.0 * DAY);
        merged.last_confirmed = now - 30.0 * DAY;
        merged.decayed_at = Some(now);
        // decay folded in long ago: the export's confidence stays under 1
        let mut old = merged.clone();
        old.id = "o".into();
        old.decayed_at = Some(now - 29.0 * DAY);
        // confirmed today, nothing to unfold
        let fresh = Entry::new("f".into(), "w2".into(), "p2".into(), 0.6, 1, now);
        let entries = [merged, old, fresh];
        let text = write(&entries).unwrap();
        let exported: Vec<Value> = serde_json::from_str(&text).unwrap();
        assert!(exported[0]["confidence"].as_f64().unwrap() > 1.0, "{text}");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("ledger.json");
        std::fs::write(&file, text).unwrap();
        let back = read(&file, now).unwrap();
        for (a, b) in entries.iter().zip(&back) {
            for t in [now, now + 10.0 * DAY, now + 200.0 * DAY] {
                let (x, y) = (a.effective(t), b.effective(t));
                assert!((x - y).abs() < 1e-9, "{}: {x} against {y}", a.id);
            }
            assert!(b.confidence <= 1.0);
        }
    }
}
