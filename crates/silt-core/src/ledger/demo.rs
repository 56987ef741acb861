//! The seed's demo ledger: ten rotted entries that consolidate.

use super::entry::{DAY, Entry};

/// (when, prefer, confirmations = hits, confidence, days since confirmed).
const ROWS: [(&str, &str, u64, f64, f64); 10] = [
    (
        "target model is Claude",
        "use XML delimiter tags for structure",
        4,
        0.6,
        0.0,
    ),
    (
        "when the model is Claude / Anthropic",
        "wrap sections in XML tags",
        2,
        0.5,
        0.0,
    ),
    (
        "Anthropic model as target",
        "structure with XML style tags",
        3,
        0.55,
        0.0,
    ),
    (
        "non-reasoning GPT target",
        "inject explicit step-by-step CoT",
        5,
        0.7,
        0.0,
    ),
    (
        "non-reasoning GPT target",
        "do not inject CoT, keep it terse",
        1,
        0.3,
        0.0,
    ),
    (
        "user asks for a haiku generator",
        "default to 5-7-5 syllables",
        1,
        0.5,
        120.0,
    ),
    (
        "trading prompt for XAUUSD",
        "anchor reasoning on HTF bias first",
        3,
        0.6,
        0.0,
    ),
    (
        "trading prompt for crypto perps",
        "anchor reasoning on HTF bias first",
        2,
        0.55,
        0.0,
    ),
    (
        "trading prompt for futures",
        "anchor reasoning on HTF bias first",
        2,
        0.55,
        0.0,
    ),
    (
        "output must be valid JSON",
        "append a self-verification checklist step",
        6,
        0.8,
        0.0,
    ),
];

/// The ten entries as of `now`, with ids "00000000".."00000009".
pub fn entries(now: f64) -> Vec<Entry> {
    ROWS.iter()
        .enumerate()
        .map(|(i, (when, prefer, n, confidence, days))| {
            let mut e = Entry::new(
                format!("{i:08x}"),
                when.to_string(),
                prefer.to_string(),
                *confidence,
                *n,
                now - days * DAY,
            );
            e.hit_count = *n;
            e
        })
        .collect()
}

/// Active entries in `entries`.
fn active(entries: &[Entry]) -> usize {
    entries
        .iter()
        .filter(|e| e.status == super::Status::Active)
        .count()
}

/// The demo's result as `silt demo --json` prints it, built here so every
/// runner of the demo (the native host, the standalone component) reports
/// it in one shape.
pub fn report(
    judge: &str,
    before: &[Entry],
    consolidate: &super::ops::Homeostasis,
    sleep: &super::sleep::SleepReport,
    after: &[Entry],
    events: &[super::events::Event],
    now: f64,
) -> serde_json::Value {
    serde_json::json!({
        "judge": judge,
        "before": {"active": active(before)},
        "consolidate": consolidate,
        "sleep": sleep,
        "after": {
            "active": active(after),
            "entries": after.iter().map(|e| e.view(now)).collect::<Vec<_>>(),
        },
        "events": events,
    })
}
