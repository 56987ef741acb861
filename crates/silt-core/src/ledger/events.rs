//! What the engine did, for the append-only event log.

use serde::{Deserialize, Serialize};

/// One mutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A lesson was captured.
    Captured,
    /// A recall returned it.
    Fired,
    /// The agent confirmed it.
    Confirmed,
    /// The agent contradicted it.
    Contradicted,
    /// A dormant child came back.
    Revived,
    /// It decayed below the floor and retired.
    Faded,
    /// The cap on active entries pushed it out.
    Evicted,
    /// Another entry (in `others`) was folded into it.
    Merged,
    /// It won a contradiction; the loser (in `others`) is its boundary.
    Resolved,
    /// It is a new parent over the siblings in `others`.
    Abstracted,
    /// The agent gave a verdict on it and the partner in `others`.
    Judged,
    /// A merge or a resolved contradiction taken back (`silt ledger
    /// undo`): `others` are the lessons active again.
    Undone,
    /// An abstraction taken back (`silt ledger undo`): the parent `id` is
    /// retired and `others`, the children it folded, are active again.
    Unfolded,
    /// An entry deleted on request (`silt ledger forget`); only its id and
    /// the reason remain, here. `others` repeats the id when the entry was
    /// active, so the drift counts it.
    Forgotten,
}

/// A mutation, the entries it touched and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// When, in Unix seconds.
    pub at: f64,
    /// What happened.
    pub kind: EventKind,
    /// The entry acted on first (the survivor, the parent, the winner).
    pub id: String,
    /// Other entries involved (the merged, the loser, the children).
    pub others: Vec<String>,
    /// Why, in words.
    pub reason: String,
    /// The entries as they were just before, for the steps that retire a
    /// lesson (merge, resolve): what undo restores.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<super::entry::Entry>,
}

impl Event {
    /// An event at `at` (Unix seconds) with no `before` entries.
    pub fn new(
        at: f64,
        kind: EventKind,
        id: &str,
        others: Vec<String>,
        reason: impl Into<String>,
    ) -> Self {
        Event {
            at,
            kind,
            id: id.to_string(),
            others,
            reason: reason.into(),
            before: Vec::new(),
        }
    }

    /// The same event, recording the entries as they were before it.
    pub fn with_before(mut self, before: Vec<super::entry::Entry>) -> Self {
        self.before = before;
        self
    }
}

impl EventKind {
    /// How `n` events of this kind, naming `others` entries in all, moved
    /// the active count: a capture or a revival adds one, fading and
    /// eviction take one, a merge or a resolved contradiction retires the
    /// others, an abstraction adds a parent and puts its children to sleep.
    pub fn active_delta(self, n: i64, others: i64) -> i64 {
        match self {
            EventKind::Captured | EventKind::Revived => n,
            EventKind::Faded | EventKind::Evicted => -n,
            EventKind::Merged | EventKind::Resolved | EventKind::Forgotten => -others,
            EventKind::Abstracted => n - others,
            EventKind::Undone => others,
            EventKind::Unfolded => others - n,
            EventKind::Fired
            | EventKind::Confirmed
            | EventKind::Contradicted
            | EventKind::Judged => 0,
        }
    }
}

/// "YYYY-MM-DD" for a day counted from the Unix epoch (UTC).
pub fn day_label(day: i64) -> String {
    // Howard Hinnant's days-to-civil
    let z = day + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_labelled_as_calendar_dates() {
        assert_eq!(day_label(0), "1970-01-01");
        assert_eq!(day_label(1_764_000_000 / 86_400), "2025-11-24");
        assert_eq!(day_label(11_016), "2000-02-29");
        assert_eq!(day_label(-1), "1969-12-31");
    }

    #[test]
    fn active_deltas_follow_what_each_event_does() {
        assert_eq!(EventKind::Captured.active_delta(3, 0), 3);
        assert_eq!(EventKind::Merged.active_delta(2, 3), -3);
        assert_eq!(EventKind::Abstracted.active_delta(1, 3), -2);
        assert_eq!(EventKind::Fired.active_delta(9, 0), 0);
        assert_eq!(EventKind::Undone.active_delta(1, 1), 1);
        assert_eq!(EventKind::Unfolded.active_delta(1, 3), 2);
    }
}
