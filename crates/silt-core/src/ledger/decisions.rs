//! Verdicts that stick: what an agent decided about a pair of lessons,
//! and what an undo took back, kept on both lessons against the versions
//! they were decided on, so neither a later sleep pass nor a later review
//! asks again about the same two texts.
//!
//! A lesson's version is a hash of its texts (trigger and action). A
//! relation is a function of the two texts alone (a sleep pass already
//! judges each pair of texts once, whatever ids carry them), so a verdict
//! holds exactly as long as both texts do: no counter to bump on every
//! path that may change a text (a sync from another process, an import,
//! an edit by hand), nothing that drifts between processes or stores, and
//! a lesson exported and imported again keeps its verdicts. A lesson
//! whose text changes is asked about again; one edited back to the text
//! a verdict was given on is bound by it again, which is right, since
//! that verdict was about that text.
//!
//! The verdicts live in the lesson's own row (`verdicts` in its JSON
//! body; in the WIT record, inside `extra`), so they are written in the
//! same transaction as the step that made them, copied by `migrate`,
//! exported and imported with the lesson and forgotten with it, in
//! SQLite and PostgreSQL alike, and an existing ledger needs no schema
//! step: its lessons simply hold none yet.

use super::entry::Entry;
pub use super::kept_verdicts::{DecidedBy, Decision, version};
use super::ops::Ledger;
use super::relate::Verdict;

/// [`version`] of an entry.
pub fn version_of(e: &Entry) -> String {
    version(&e.when, &e.prefer)
}

/// The verdict `a` holds about `b` at their present versions, if any.
pub fn decided_between(a: &Entry, b: &Entry) -> Option<Verdict> {
    decision_between(a, b).map(|d| d.verdict)
}

/// The decision `a` holds about `b` at their present versions, if any.
pub fn decision_between<'a>(a: &'a Entry, b: &Entry) -> Option<&'a Decision> {
    if a.verdicts.is_empty() {
        return None;
    }
    let (mine, theirs) = (version_of(a), version_of(b));
    a.verdicts
        .iter()
        .rfind(|d| d.with == b.id && d.mine == mine && d.theirs == theirs)
}

/// Records on `a` its verdict about `b` at their present versions,
/// replacing any older one about `b`.
fn note(a: &mut Entry, b: &Entry, verdict: Verdict, by: DecidedBy, at: f64) {
    a.verdicts.retain(|d| d.with != b.id);
    a.verdicts.push(Decision {
        with: b.id.clone(),
        mine: version_of(a),
        theirs: version_of(b),
        verdict,
        by,
        at,
    });
}

/// Records `verdict` about `a` and `b` on both.
pub fn record(a: &mut Entry, b: &mut Entry, verdict: Verdict, by: DecidedBy, at: f64) {
    note(a, b, verdict, by, at);
    note(b, a, verdict, by, at);
}

impl Ledger {
    /// The verdict recorded about the entries at `a` and `b` at their
    /// present versions: what sleep and review take instead of asking.
    pub fn decided(&self, a: usize, b: usize) -> Option<Verdict> {
        decided_between(&self.entries[a], &self.entries[b])
    }

    /// What sleep acts on for the pair at `a` and `b`, given the judge's
    /// ruling (None: held): a recorded verdict stands instead. A
    /// `distinct` one says the two are not one lesson, which does not
    /// stop them being siblings (different lessons, one action), so a
    /// judge's sibling stands against it; unless it was an abstraction
    /// that was undone, which is not taken again.
    pub fn ruling(&self, a: usize, b: usize, judged: Option<Verdict>) -> Option<Verdict> {
        match decision_between(&self.entries[a], &self.entries[b]) {
            None => judged,
            Some(d) => match (d.verdict, d.by, judged) {
                (Verdict::Distinct, DecidedBy::Agent | DecidedBy::Undo, Some(Verdict::Sibling)) => {
                    Some(Verdict::Sibling)
                }
                (v, _, _) => Some(v),
            },
        }
    }

    /// Whether an undone abstraction keeps the entries at `a` and `b`
    /// from being folded together.
    pub fn kept_unfolded(&self, a: usize, b: usize) -> bool {
        decision_between(&self.entries[a], &self.entries[b])
            .is_some_and(|d| d.by == DecidedBy::Unfold)
    }

    /// Records `verdict` about the entries at `a` and `b` on both.
    pub fn record_decision(
        &mut self,
        a: usize,
        b: usize,
        verdict: Verdict,
        by: DecidedBy,
        at: f64,
    ) {
        assert_ne!(a, b, "a lesson is not judged against itself");
        let (lo, hi) = (a.min(b), a.max(b));
        let (left, right) = self.entries.split_at_mut(hi);
        record(&mut left[lo], &mut right[0], verdict, by, at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lesson(id: &str, when: &str, prefer: &str) -> Entry {
        Entry::new(id.into(), when.into(), prefer.into(), 0.5, 0, 1.0)
    }

    #[test]
    fn a_version_is_the_texts_and_nothing_else() {
        assert_eq!(version("a", "b"), version("a", "b"));
        assert_ne!(version("a", "b"), version("ab", ""));
        assert_ne!(version("a", "b"), version("a", "c"));
        // fixed across builds: it is stored
        assert_eq!(version("", ""), "af63d24c8601db8e");
    }

    #[test]
    fn a_verdict_holds_until_either_text_changes() {
        let mut a = lesson("a", "writing a migration", "wrap it in a transaction");
        let mut b = lesson("b", "writing a migration", "never wrap it");
        record(&mut a, &mut b, Verdict::Distinct, DecidedBy::Agent, 5.0);
        assert_eq!(decided_between(&a, &b), Some(Verdict::Distinct));
        assert_eq!(decided_between(&b, &a), Some(Verdict::Distinct));
        let c = lesson("c", "writing a migration", "never wrap it");
        assert_eq!(decided_between(&a, &c), None, "another lesson");
        let mut b2 = b.clone();
        b2.prefer = "never wrap it, ever".into();
        assert_eq!(decided_between(&a, &b2), None, "b changed");
        // a later verdict replaces the earlier one
        record(&mut a, &mut b2, Verdict::Sibling, DecidedBy::Agent, 6.0);
        assert_eq!(a.verdicts.len(), 1);
        assert_eq!(decided_between(&a, &b2), Some(Verdict::Sibling));
    }

    #[test]
    fn verdicts_are_kept_in_the_row_and_absent_when_there_are_none() {
        let mut a = lesson("a", "x", "y");
        let mut b = lesson("b", "x", "z");
        let bare = serde_json::to_string(&a).unwrap();
        assert!(!bare.contains("verdicts"), "{bare}");
        record(&mut a, &mut b, Verdict::Distinct, DecidedBy::Undo, 5.0);
        let body = serde_json::to_string(&a).unwrap();
        let back: Entry = serde_json::from_str(&body).unwrap();
        assert_eq!(back, a);
        assert!(back.extra.is_empty(), "a known field, not an unknown one");
    }
}
