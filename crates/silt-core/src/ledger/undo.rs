//! Taking back a merge, a resolved contradiction or an abstraction, from
//! the entries its event recorded as they were before it. An undo is
//! remembered on the lessons it gives back (a `distinct` verdict by
//! `undo`, [`super::decisions`]), so no later sleep pass takes the same
//! step on the same two texts again.

use super::decisions::{DecidedBy, record};
use super::entry::{Entry, Status};
use super::events::{Event, EventKind};
use super::folded::FOLDED_UNDER;
use super::relate::Verdict;

/// What undoing one event writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Undo {
    /// The entries in their restored state.
    pub entries: Vec<Entry>,
    /// The `undone` event to log.
    pub event: Event,
    /// Whether the surviving lesson changed after the event, so only what
    /// the event did to it was taken back (its note and the counts it
    /// absorbed) rather than its whole state.
    pub partial: bool,
}

/// Undoes `event` (logged as number `seq`). `current` holds the present
/// state of the entries it names; `survivor_changed_since` says whether a
/// later event touched the surviving lesson.
pub fn undo(
    seq: i64,
    event: &Event,
    current: &[Entry],
    survivor_changed_since: bool,
    now: f64,
) -> Result<Undo, String> {
    if event.kind == EventKind::Abstracted {
        return unfold(seq, event, current, now);
    }
    if !matches!(event.kind, EventKind::Merged | EventKind::Resolved) {
        return Err(format!(
            "event {seq} is '{}'; only merges, resolved contradictions and abstractions \
             can be undone",
            serde_json::to_value(event.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        ));
    }
    if event.before.is_empty() {
        return Err(format!(
            "event {seq} was logged without the lessons' earlier state (before silt kept it), \
             so it cannot be undone"
        ));
    }
    let find = |id: &str, list: &[Entry]| list.iter().find(|e| e.id == id).cloned();
    let mut entries = Vec::new();
    for gone in &event.others {
        let now_state = find(gone, current)
            .ok_or_else(|| format!("lesson {gone} of event {seq} is no longer in the ledger"))?;
        if now_state.status != Status::Retired {
            return Err(format!(
                "lesson {gone} is {} again: event {seq} was already undone or the lesson came back",
                status_word(now_state.status)
            ));
        }
        let before = find(gone, &event.before)
            .ok_or_else(|| format!("event {seq} recorded no earlier state of lesson {gone}"))?;
        entries.push(before);
    }
    let survivor_before = find(&event.id, &event.before).ok_or_else(|| {
        format!(
            "event {seq} recorded no earlier state of lesson {}",
            event.id
        )
    })?;
    let mut survivor = find(&event.id, current)
        .ok_or_else(|| format!("lesson {} is no longer in the ledger", event.id))?;
    if survivor_changed_since {
        // keep what happened to it since; take back only this event's part
        survivor.note = survivor_before.note.clone();
        if event.kind == EventKind::Merged {
            for gone in &entries {
                survivor.hit_count = survivor.hit_count.saturating_sub(gone.hit_count);
                survivor.confirm_count = survivor.confirm_count.saturating_sub(gone.confirm_count);
            }
        }
    } else {
        survivor = survivor_before;
    }
    entries.insert(0, survivor);
    // the pair stays apart: a later pass may not merge or resolve these
    // two texts again
    let (first, rest) = entries.split_first_mut().expect("the survivor is first");
    for gone in rest {
        record(first, gone, Verdict::Distinct, DecidedBy::Undo, now);
    }
    let restored: Vec<String> = event.others.clone();
    Ok(Undo {
        entries,
        event: Event::new(
            now,
            EventKind::Undone,
            &event.id,
            restored,
            format!("undo of event {seq}"),
        ),
        partial: survivor_changed_since,
    })
}

/// Takes back abstraction `event`: the parent is retired, and each child
/// still folded under it is active again with the note it had (as the
/// event recorded it; an event from before silt recorded that, with none).
/// A child revived since stays as it is. The children are kept apart
/// from each other from now on, so the next pass does not fold them
/// again.
fn unfold(seq: i64, event: &Event, current: &[Entry], now: f64) -> Result<Undo, String> {
    let find = |id: &str, list: &[Entry]| list.iter().find(|e| e.id == id).cloned();
    let mut parent = find(&event.id, current)
        .ok_or_else(|| format!("lesson {} is no longer in the ledger", event.id))?;
    if parent.status != Status::Active {
        return Err(format!(
            "the parent {} of event {seq} is {} ({}): undo what happened to it first",
            parent.id,
            status_word(parent.status),
            if parent.note.is_empty() {
                "no note"
            } else {
                &parent.note
            }
        ));
    }
    let folded_here = format!("{FOLDED_UNDER}{}", event.id);
    let mut children = Vec::new();
    let mut restored = Vec::new();
    for id in &event.others {
        let Some(mut child) = find(id, current) else {
            continue; // forgotten since
        };
        if child.status == Status::Dormant && child.note == folded_here {
            let before = find(id, &event.before);
            child.status = Status::Active;
            child.note = before.map(|b| b.note).unwrap_or_default();
            restored.push(child.id.clone());
        }
        if child.status == Status::Active {
            children.push(child);
        }
    }
    for i in 0..children.len() {
        let (left, right) = children.split_at_mut(i + 1);
        for other in right {
            record(
                &mut left[i],
                other,
                Verdict::Distinct,
                DecidedBy::Unfold,
                now,
            );
        }
    }
    parent.status = Status::Retired;
    parent.note = format!("abstraction undone (event {seq})");
    let mut entries = vec![parent];
    entries.extend(children);
    Ok(Undo {
        entries,
        event: Event::new(
            now,
            EventKind::Unfolded,
            &event.id,
            restored,
            format!("undo of event {seq}"),
        ),
        partial: false,
    })
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Active => "active",
        Status::Dormant => "dormant",
        Status::Retired => "retired",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::Params;
    use crate::ledger::ops::{Feedback, Ledger};

    const NOW: f64 = 1_750_000_000.0;

    fn merged() -> (Ledger, Vec<Entry>, Event) {
        let mut l = Ledger::new(vec![], Params::default());
        l.capture(
            "a".into(),
            "writing a SQL migration",
            "wrap it in a transaction",
            Feedback::Positive,
            NOW,
        );
        l.capture(
            "b".into(),
            "writing an SQL migration",
            "wrap the migration in a transaction",
            Feedback::Neutral,
            NOW,
        );
        // a keeps (more hits), b's 4 hits go to it
        l.entries[0].hit_count = 5;
        l.entries[1].hit_count = 4;
        let before = l.entries.clone();
        let event = l.merge(0, 1, NOW + 1.0);
        (l, before, event)
    }

    #[test]
    fn undoing_a_merge_restores_both_lessons_exactly() {
        let (l, before, event) = merged();
        assert_eq!(l.active_count(), 1);
        let u = undo(7, &event, &l.entries, false, NOW + 2.0).unwrap();
        assert_eq!(u.entries.len(), 2);
        for e in &u.entries {
            // as they were, and kept apart from now on
            let mut as_was = e.clone();
            assert_eq!(as_was.verdicts.len(), 1);
            assert_eq!(
                as_was.verdicts[0].verdict,
                crate::ledger::relate::Verdict::Distinct
            );
            as_was.verdicts.clear();
            assert!(before.contains(&as_was), "{e:?}");
        }
        assert_eq!(u.event.kind, EventKind::Undone);
        assert_eq!(u.event.others, vec!["b".to_string()]);
        assert_eq!(u.event.reason, "undo of event 7");
        assert!(!u.partial);
    }

    #[test]
    fn a_survivor_changed_since_keeps_its_later_history() {
        let (mut l, _, event) = merged();
        l.entries[0].hit_count += 10; // fired ten times after the merge
        let u = undo(7, &event, &l.entries, true, NOW + 2.0).unwrap();
        let survivor = &u.entries[0];
        assert_eq!(survivor.id, "a");
        assert_eq!(survivor.hit_count, 15, "the merged-in 4 hits go back to b");
        assert!(survivor.note.is_empty());
        assert!(u.partial);
        assert_eq!(u.entries[1].status, Status::Active);
    }

    #[test]
    fn undo_refuses_twice_and_other_kinds() {
        let (l, _, event) = merged();
        let u = undo(7, &event, &l.entries, false, NOW).unwrap();
        let err = undo(7, &event, &u.entries, false, NOW).unwrap_err();
        assert!(err.contains("already undone"), "{err}");
        let captured = Event::new(NOW, EventKind::Captured, "a", vec![], "x");
        assert!(
            undo(1, &captured, &l.entries, false, NOW)
                .unwrap_err()
                .contains("only merges")
        );
        let mut old = event.clone();
        old.before.clear();
        assert!(
            undo(1, &old, &l.entries, false, NOW)
                .unwrap_err()
                .contains("earlier state")
        );
    }
}
