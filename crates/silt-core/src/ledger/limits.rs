//! What a lesson may hold, checked the same way wherever one enters the
//! ledger: a capture, an import, a migration. An entry that passes here
//! can be recalled, slept and reviewed; one that fails would poison them
//! (a 50 MB trigger makes every recall scan it).

use super::entry::{DAY, Entry};

/// A captured trigger or action, in characters after trimming.
pub const MAX_TEXT_CHARS: usize = 300;
/// A trigger as stored: parents abstracted before 2026-12-02 were named
/// "(general) " and the shared words of a member's trigger, and ledgers
/// keep them (new parents fit in [`MAX_TEXT_CHARS`]).
pub const MAX_WHEN_CHARS: usize = MAX_TEXT_CHARS + "(general) ".len();
/// A note: the longest silt writes is a boundary rule quoting two actions.
pub const MAX_NOTE_CHARS: usize = 2 * MAX_TEXT_CHARS + 200;
/// An id, as the confirm/contradict tools accept it.
pub const MAX_ID_CHARS: usize = 32;
/// Fields silt does not know, kept on an entry, as JSON bytes.
pub const MAX_EXTRA_BYTES: usize = 16 << 10;
/// A timestamp may run ahead of the clock by this much (clock skew
/// between machines), no more.
const FUTURE_SLACK: f64 = DAY;

/// A trimmed text within 1 to `max` characters, or why not.
pub fn text(name: &str, value: &str, max: usize) -> Result<String, String> {
    let v = value.trim();
    let n = v.chars().count();
    if n == 0 || n > max {
        return Err(format!(
            "{name} must be 1 to {max} characters after trimming, got {n}"
        ));
    }
    Ok(v.to_string())
}

/// An id: 1 to 32 visible ASCII characters.
pub fn id(value: &str) -> Result<(), String> {
    let n = value.chars().count();
    if n == 0 || n > MAX_ID_CHARS {
        return Err(format!(
            "id must be 1 to {MAX_ID_CHARS} characters, got {n}"
        ));
    }
    if !value.chars().all(|c| c.is_ascii_graphic()) {
        return Err(format!(
            "id '{}' holds a space, a control or a non-ASCII character",
            value.escape_debug()
        ));
    }
    Ok(())
}

/// Checks a stored entry (one read from a file) as capture checks a new
/// one, plus what only a stored entry has: ranges, finite times in the
/// past, a bounded note and bounded unknown fields.
pub fn stored_entry(e: &Entry, now: f64) -> Result<(), String> {
    id(&e.id)?;
    bounded("when", &e.when, MAX_WHEN_CHARS)?;
    bounded("prefer", &e.prefer, MAX_TEXT_CHARS)?;
    if e.note.chars().count() > MAX_NOTE_CHARS {
        return Err(format!(
            "note is over {MAX_NOTE_CHARS} characters ({})",
            e.note.chars().count()
        ));
    }
    if !(0.0..=1.0).contains(&e.confidence) {
        return Err(format!(
            "confidence must be between 0 and 1, got {}",
            e.confidence
        ));
    }
    finite_times(e)?;
    for (name, t) in times(e) {
        if t > now + FUTURE_SLACK {
            return Err(format!(
                "{name} lies {:.0} days in the future",
                (t - now) / DAY
            ));
        }
    }
    let extra = serde_json::to_string(&e.extra).map_or(usize::MAX, |s| s.len());
    if extra > MAX_EXTRA_BYTES {
        return Err(format!(
            "its unknown fields take {extra} bytes, over the {MAX_EXTRA_BYTES}-byte cap"
        ));
    }
    Ok(())
}

/// A text or note as a store row may hold it, in bytes: far past
/// anything silt writes (a note quotes two actions and an id), but an
/// older silt imported files unchecked, and those rows are the user's.
pub const MAX_ROW_TEXT_BYTES: usize = 64 << 10;
/// An id as a store row may hold it, in bytes, for the same reason;
/// `forget` takes ids this long, so any row that passes can be removed.
pub const MAX_ROW_ID_BYTES: usize = 4096;
/// Unknown fields as a store row may hold them, as JSON bytes.
pub const MAX_ROW_EXTRA_BYTES: usize = 1 << 20;

/// Checks an entry read back from the ledger's own store for what no
/// lesson of any age holds: a confidence or time that is not a finite
/// number at or above 0, or texts, a note or unknown fields past
/// anything silt ever wrote. Gentler than [`stored_entry`] on purpose: a
/// silt from before these limits imported files unchecked (long ids and
/// texts), another writer's clock may run ahead, and silt's own export
/// writes confidences past 1 (decay folded back in, for Sediment's
/// formula), so those rows load as they are; recall bounds a confidence
/// past 1 by the highest it has read. What fails here was damaged or
/// edited by hand: worked on as it is, a NaN confidence would scramble
/// every ordering it enters, a 50 MB trigger be scanned on every recall.
pub fn store_row(e: &Entry) -> Result<(), String> {
    for (name, len, max) in [
        ("id", e.id.len(), MAX_ROW_ID_BYTES),
        ("when", e.when.len(), MAX_ROW_TEXT_BYTES),
        ("prefer", e.prefer.len(), MAX_ROW_TEXT_BYTES),
        ("note", e.note.len(), MAX_ROW_TEXT_BYTES),
    ] {
        if len > max {
            return Err(format!(
                "its {name} takes {len} bytes, over the {max} a row may hold"
            ));
        }
    }
    if !(e.confidence.is_finite() && e.confidence >= 0.0) {
        return Err(format!(
            "confidence must be a number at or above 0, got {}",
            e.confidence
        ));
    }
    finite_times(e)?;
    if !e.extra.is_empty() {
        let extra = serde_json::to_string(&e.extra).map_or(usize::MAX, |s| s.len());
        if extra > MAX_ROW_EXTRA_BYTES {
            return Err(format!(
                "its unknown fields take {extra} bytes, over the {MAX_ROW_EXTRA_BYTES} a row may hold"
            ));
        }
    }
    Ok(())
}

/// Every time an entry holds is a time since 1970, or why not.
fn finite_times(e: &Entry) -> Result<(), String> {
    for (name, t) in times(e) {
        if !t.is_finite() || t < 0.0 {
            return Err(format!(
                "{name} must be a time in seconds since 1970, got {t}"
            ));
        }
    }
    Ok(())
}

/// An entry's times, named as its fields are.
fn times(e: &Entry) -> impl Iterator<Item = (&'static str, f64)> {
    [
        ("created", Some(e.created)),
        ("last_confirmed", Some(e.last_confirmed)),
        ("last_fired", Some(e.last_fired)),
        ("decayed_at", e.decayed_at),
    ]
    .into_iter()
    .filter_map(|(name, t)| Some((name, t?)))
}

/// Like [`text`], but a stored text is taken as it is (not trimmed).
fn bounded(name: &str, value: &str, max: usize) -> Result<(), String> {
    text(name, value, max).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry::new(
            "0a1b2c3d".into(),
            "editing the parser".into(),
            "run the parser tests".into(),
            0.5,
            1,
            1000.0,
        )
    }

    fn refused(f: impl FnOnce(&mut Entry)) -> String {
        let mut e = entry();
        f(&mut e);
        stored_entry(&e, 2000.0).unwrap_err()
    }

    #[test]
    fn a_captured_shape_passes() {
        assert_eq!(stored_entry(&entry(), 2000.0), Ok(()));
        let mut parent = entry();
        parent.when = format!("(general) {}", "w".repeat(MAX_TEXT_CHARS - 1));
        assert_eq!(stored_entry(&parent, 2000.0), Ok(()));
    }

    #[test]
    fn what_capture_would_refuse_is_refused() {
        assert!(refused(|e| e.when = "   ".into()).contains("when must be 1 to"));
        assert!(refused(|e| e.prefer = "x".repeat(301)).contains("prefer must be 1 to 300"));
        assert!(refused(|e| e.when = "x".repeat(50 << 20)).contains("when"));
        assert!(refused(|e| e.id = String::new()).contains("id must be 1 to 32"));
        assert!(refused(|e| e.id = "x".repeat(1 << 20)).contains("id must be"));
        assert!(refused(|e| e.id = "a b".into()).contains("space"));
    }

    #[test]
    fn ranges_and_times_are_checked() {
        for c in [5.0, -3.0, 1e308, f64::NAN, f64::INFINITY] {
            assert!(refused(|e| e.confidence = c).contains("confidence"), "{c}");
        }
        assert!(refused(|e| e.created = -1.0).contains("created"));
        assert!(refused(|e| e.last_fired = f64::NAN).contains("last_fired"));
        assert!(refused(|e| e.last_confirmed = 2000.0 + 3.0 * DAY).contains("future"));
        assert!(refused(|e| e.decayed_at = Some(f64::INFINITY)).contains("decayed_at"));
        assert!(refused(|e| e.note = "n".repeat(MAX_NOTE_CHARS + 1)).contains("note"));
        assert!(
            refused(|e| {
                e.extra
                    .insert("blob".into(), "b".repeat(MAX_EXTRA_BYTES).into());
            })
            .contains("unknown fields")
        );
    }

    #[test]
    fn a_store_row_is_refused_only_for_what_no_lesson_holds() {
        let row = |f: &dyn Fn(&mut Entry)| {
            let mut e = entry();
            f(&mut e);
            store_row(&e)
        };
        // what older silts and other writers left is a lesson still: a
        // long id or text from an unchecked import, a clock ahead, an
        // exported confidence past 1, an empty trigger
        for ok in [
            row(&|e| e.id = "x".repeat(MAX_ROW_ID_BYTES)),
            row(&|e| e.when = "w".repeat(MAX_WHEN_CHARS * 10)),
            row(&|e| e.when = String::new()),
            row(&|e| e.note = format!("merged into {}", "x".repeat(MAX_ROW_ID_BYTES))),
            row(&|e| e.last_confirmed = 2000.0 + 30.0 * DAY),
            row(&|e| e.confidence = 1.7),
        ] {
            assert_eq!(ok, Ok(()));
        }
        for c in [-0.1, f64::NAN, f64::INFINITY] {
            assert!(
                row(&|e| e.confidence = c)
                    .unwrap_err()
                    .contains("confidence")
            );
        }
        assert!(
            row(&|e| e.created = f64::INFINITY)
                .unwrap_err()
                .contains("created")
        );
        assert!(
            row(&|e| e.decayed_at = Some(-1.0))
                .unwrap_err()
                .contains("decayed_at")
        );
        assert!(
            row(&|e| e.id = "x".repeat(MAX_ROW_ID_BYTES + 1))
                .unwrap_err()
                .contains("id")
        );
        let big = "x".repeat(MAX_ROW_TEXT_BYTES + 1);
        assert!(
            row(&|e| e.prefer = big.clone())
                .unwrap_err()
                .contains("prefer")
        );
        assert!(row(&|e| e.note = big.clone()).unwrap_err().contains("note"));
        assert!(
            row(&|e| {
                e.extra
                    .insert("blob".into(), "b".repeat(MAX_ROW_EXTRA_BYTES).into());
            })
            .unwrap_err()
            .contains("unknown fields")
        );
    }
}
