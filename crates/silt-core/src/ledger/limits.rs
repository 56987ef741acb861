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
    for (name, t) in [
        ("created", Some(e.created)),
        ("last_confirmed", Some(e.last_confirmed)),
        ("last_fired", Some(e.last_fired)),
        ("decayed_at", e.decayed_at),
    ] {
        let Some(t) = t else { continue };
        if !t.is_finite() || t < 0.0 {
            return Err(format!(
                "{name} must be a time in seconds since 1970, got {t}"
            ));
        }
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
}
