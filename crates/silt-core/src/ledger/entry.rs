//! One lesson (WHEN → PREFER) and the forgetting-curve formulas.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Seconds in a day.
pub const DAY: f64 = 86_400.0;

/// Where an entry stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Recalled, decayed and consolidated.
    Active,
    /// Folded under an abstracted parent; revivable.
    Dormant,
    /// Faded, evicted, merged away or lost a contradiction.
    Retired,
}

/// One heuristic, with Sediment's fields in Sediment's order. Fields silt
/// does not know are kept in `extra` and written back unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The trigger: the situation the lesson applies to.
    pub when: String,
    /// The action: what to do in it.
    pub prefer: String,
    /// Host-chosen (8 lowercase hex characters); stable for the lesson's life.
    pub id: String,
    /// The stored base confidence, as of `decayed_at`.
    pub confidence: f64,
    /// When it was captured, in Unix seconds.
    pub created: f64,
    /// When it was last confirmed, in Unix seconds.
    pub last_confirmed: f64,
    /// When a recall last returned it, in Unix seconds.
    pub last_fired: f64,
    /// Times recalled (summed on merges).
    pub hit_count: u64,
    /// Times confirmed (summed on merges); lengthens the half-life.
    pub confirm_count: u64,
    /// Times contradicted.
    pub contradiction_count: u64,
    /// Active, dormant or retired.
    pub status: Status,
    /// Why it last changed in words: a boundary rule, "merged into ID", ...
    pub note: String,
    /// When decay was last folded into `confidence`. Sediment measures decay
    /// from `last_confirmed` and overwrites it; silt keeps the two apart so
    /// decay counts once and "last confirmed" keeps its meaning. Absent in a
    /// Sediment file, where it equals `last_confirmed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decayed_at: Option<f64>,
    /// What an agent decided about this lesson and others, and what undos
    /// took back, against both lessons' versions
    /// (see the `decisions` module). Absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<super::kept_verdicts::Decision>,
    /// Fields silt does not know, written back unchanged.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Entry {
    /// A new active entry captured at `now`.
    pub fn new(
        id: String,
        when: String,
        prefer: String,
        confidence: f64,
        confirm_count: u64,
        now: f64,
    ) -> Self {
        Entry {
            when,
            prefer,
            id,
            confidence,
            created: now,
            last_confirmed: now,
            last_fired: now,
            hit_count: 0,
            confirm_count,
            contradiction_count: 0,
            status: Status::Active,
            note: String::new(),
            decayed_at: Some(now),
            verdicts: Vec::new(),
            extra: Map::new(),
        }
    }

    /// This entry with the verdicts that crossed the WIT boundary inside
    /// `extra` moved back to their field (where the store keeps them).
    /// Verdicts that do not read as such stay unknown fields, kept as
    /// they are.
    pub fn with_verdicts_from_extra(mut self) -> Self {
        if let Some(v) = self.extra.remove("verdicts") {
            match serde_json::from_value(v.clone()) {
                Ok(verdicts) => self.verdicts = verdicts,
                Err(_) => {
                    self.extra.insert("verdicts".into(), v);
                }
            }
        }
        self
    }

    /// The time decay is measured from.
    pub fn decay_origin(&self) -> f64 {
        self.decayed_at.unwrap_or(self.last_confirmed)
    }

    /// 14 × (1 + confirm_count) days.
    pub fn half_life_days(&self) -> f64 {
        14.0 * (1.0 + self.confirm_count as f64)
    }

    /// confidence × 0.5 ^ (days since decay was folded in / half-life).
    pub fn effective(&self, now: f64) -> f64 {
        let days = (now - self.decay_origin()).max(0.0) / DAY;
        self.confidence * 0.5f64.powf(days / self.half_life_days())
    }

    /// effective × (1 + ln(1 + hits)) × (1 + 0.2 × confirmations).
    pub fn retention(&self, now: f64) -> f64 {
        self.effective(now)
            * (1.0 + (self.hit_count as f64).ln_1p())
            * (1.0 + 0.2 * self.confirm_count as f64)
    }

    /// Folds decay up to `now` into the stored confidence.
    pub fn fold_decay(&mut self, now: f64) {
        self.confidence = self.effective(now);
        self.decayed_at = Some(now);
    }

    /// This lesson as a pass wrote it from `base`, with what recalls did
    /// to the same lesson meanwhile (`theirs`) carried over: the hits they
    /// added and their latest firing. None when `theirs` changed anything
    /// a recall does not: then the pass's judgment may rest on what
    /// changed and it must be computed again. A recall's changes add up,
    /// so carrying them loses no one's update; rejecting every lesson a
    /// recall touched made a pass on a busy server start over (or wait
    /// for the lock) once per recall of a lesson it changed.
    pub fn rebased_over_recalls(&self, base: &Entry, theirs: &Entry) -> Option<Entry> {
        let mut only_counters = theirs.clone();
        only_counters.hit_count = base.hit_count;
        only_counters.last_fired = base.last_fired;
        if only_counters != *base || theirs.hit_count < base.hit_count {
            return None;
        }
        let mut out = self.clone();
        out.hit_count += theirs.hit_count - base.hit_count;
        out.last_fired = out.last_fired.max(theirs.last_fired);
        Some(out)
    }

    /// "WHEN x -> PREFER y".
    pub fn render(&self) -> String {
        format!("WHEN {} -> PREFER {}", self.when, self.prefer)
    }

    /// The seed's view of an entry: {id, when, prefer, confidence (effective
    /// at `now`, 3 places), hits, confirmations, status, note}.
    pub fn view(&self, now: f64) -> Value {
        serde_json::json!({
            "id": self.id,
            "when": self.when,
            "prefer": self.prefer,
            "confidence": (self.effective(now) * 1000.0).round() / 1000.0,
            "hits": self.hit_count,
            "confirmations": self.confirm_count,
            "status": self.status,
            "note": self.note,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decay_halves_over_a_half_life() {
        let mut e = Entry::new("a".into(), "w".into(), "p".into(), 0.6, 0, 0.0);
        assert!((e.effective(14.0 * DAY) - 0.3).abs() < 1e-12);
        e.confirm_count = 1;
        assert!((e.effective(28.0 * DAY) - 0.3).abs() < 1e-12);
        assert_eq!(e.effective(-5.0), 0.6);
    }

    #[test]
    fn a_pass_keeps_what_recalls_added_and_nothing_else() {
        let base = Entry::new("a".into(), "w".into(), "p".into(), 0.5, 0, 0.0);
        let mut ours = base.clone();
        ours.status = Status::Retired;
        ours.hit_count = 4; // a merge gave it the other lesson's hits
        let mut theirs = base.clone();
        theirs.hit_count = 2;
        theirs.last_fired = 9.0;
        let out = ours.rebased_over_recalls(&base, &theirs).unwrap();
        assert_eq!(out.status, Status::Retired);
        assert_eq!((out.hit_count, out.last_fired), (6, 9.0));
        // untouched by anyone else: the pass's row as it is
        assert_eq!(ours.rebased_over_recalls(&base, &base).unwrap(), ours);
        // a confirm, a contradiction or a new status is not a recall
        let mut confirmed = theirs.clone();
        confirmed.confirm_count = 1;
        assert!(ours.rebased_over_recalls(&base, &confirmed).is_none());
        let mut dormant = theirs.clone();
        dormant.status = Status::Dormant;
        assert!(ours.rebased_over_recalls(&base, &dormant).is_none());
        let mut noted = theirs;
        noted.note = "merged elsewhere".into();
        assert!(ours.rebased_over_recalls(&base, &noted).is_none());
    }

    #[test]
    fn retention_uses_ln_1p() {
        let mut e = Entry::new("a".into(), "w".into(), "p".into(), 0.5, 0, 0.0);
        assert!((e.retention(0.0) - 0.5).abs() < 1e-12);
        e.hit_count = 3;
        e.confirm_count = 2;
        let want = 0.5 * (1.0 + 4f64.ln()) * 1.4;
        assert!((e.retention(0.0) - want).abs() < 1e-12);
    }

    #[test]
    fn sediment_json_round_trips_with_unknown_fields() {
        let text = r#"{"when":"w","prefer":"p","id":"0a1b2c3d","confidence":0.3,"created":1.0,
            "last_confirmed":2.0,"last_fired":3.0,"hit_count":1,"confirm_count":0,
            "contradiction_count":0,"status":"active","note":"","tags":["x"]}"#;
        let e: Entry = serde_json::from_str(text).unwrap();
        assert_eq!(e.decay_origin(), 2.0);
        assert_eq!(e.extra["tags"], serde_json::json!(["x"]));
        let back = serde_json::to_value(&e).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(text).unwrap());
    }
}
