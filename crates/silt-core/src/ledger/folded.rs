//! Which active lesson recalls a folded one in its place.
//!
//! Sleep folds siblings under an abstracted parent: the children turn
//! dormant with the note "folded under ID", and the parent's trigger names
//! every child's situation. Named together, though, a group reads as one
//! long list or pattern ("editing the parser in repo r0, testing the auth
//! middleware in repo r0 before a release or …"), which a context naming
//! one of its situations matches only in part: ranked by its own text, a
//! parent loses to lessons with other advice that match better, and the
//! fold costs recall what it was meant to keep. So recall scores a parent
//! by its own text or by any lesson folded under it, whichever is nearer
//! the context (`Ledger::recall`, `Ledger::recall_near`).
//!
//! A parent may later be merged into another lesson that says the same
//! (retired, "merged into ID"): its children are then recalled as the
//! lesson it was merged into, which gives their advice, rather than
//! hidden from recall with nothing in their place.

use rustc_hash::FxHashMap;

use super::entry::{Entry, Status};

/// The note a folded lesson carries, before its parent's id.
pub const FOLDED_UNDER: &str = "folded under ";

/// The note a lesson merged away carries, before the id of the lesson
/// it was merged into.
pub const MERGED_INTO: &str = "merged into ";

/// Whether `e` is a lesson folded under a parent (which may itself be
/// gone: see [`Positions::recalled_for`]).
pub fn is_folded(e: &Entry) -> bool {
    e.status == Status::Dormant && e.note.starts_with(FOLDED_UNDER)
}

/// Each entry's position by id, caught up as the ledger grows, and the
/// parent each folded entry was last found under.
///
/// The engine only appends entries, and replaces one only with a new
/// version of the same lesson (`Ledger::replace_entry`), so an id keeps
/// its position; a ledger that shrank is read again. Every position is
/// checked against the id it is found by, so a ledger rebuilt in another
/// order at the same length finds fewer parents, never wrong ones. Where
/// two entries share an id, the first is its parent, as a scan would
/// find it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Positions {
    by_id: FxHashMap<Box<str>, u32>,
    read: usize,
    /// Per entry, the position of the parent its note named when last
    /// looked up ([`NO_LINK`] if none): checked against the note on every
    /// use, so a note changed since is looked up again. A recall looks
    /// up every folded lesson that may reach its top k, hundreds or
    /// thousands after a sleep over text agents write, and hashing each
    /// one's parent id cost more than scoring it.
    links: Vec<u32>,
}

const NO_LINK: u32 = u32::MAX;

impl Positions {
    /// Reads the ids of the entries appended since the last call.
    pub fn catch_up(&mut self, entries: &[Entry]) {
        if entries.len() < self.read {
            *self = Positions::default();
        }
        for (i, e) in entries.iter().enumerate().skip(self.read) {
            self.by_id.entry(e.id.as_str().into()).or_insert(i as u32);
        }
        self.read = entries.len();
        self.links.resize(entries.len(), NO_LINK);
    }

    /// The entry that stands for entry `i`, if its note names one: the
    /// parent a dormant lesson is folded under, or the lesson a retired
    /// one was merged into.
    fn parent(&mut self, entries: &[Entry], i: usize) -> Option<usize> {
        let e = &entries[i];
        let id = match e.status {
            Status::Dormant => e.note.strip_prefix(FOLDED_UNDER)?,
            Status::Retired => e.note.strip_prefix(MERGED_INTO)?,
            Status::Active => return None,
        };
        let known = *self.links.get(i)? as usize;
        if entries.get(known).is_some_and(|p| p.id == id) {
            return Some(known);
        }
        let found = self.of(entries, id)?;
        self.links[i] = found as u32;
        Some(found)
    }

    fn of(&self, entries: &[Entry], id: &str) -> Option<usize> {
        let i = *self.by_id.get(id)? as usize;
        // checked, not trusted: a position read before its entry was
        // replaced with another lesson names nothing
        (entries.get(i)?.id == id).then_some(i)
    }

    /// The active lesson recalled in place of entry `i`: the parent it is
    /// folded under, or that parent's when it is folded in turn, or the
    /// lesson a parent was merged into. None for an entry that is not
    /// dormant under a parent, or whose ancestors are gone (retired
    /// otherwise than by a merge, evicted) or not all read by
    /// `catch_up`, or whose notes make a cycle.
    pub fn recalled_for(&mut self, entries: &[Entry], i: usize) -> Option<usize> {
        if entries[i].status != Status::Dormant {
            return None;
        }
        let mut at = i;
        // a chain longer than the ledger is a cycle
        for _ in 0..entries.len() {
            at = self.parent(entries, at)?;
            if entries[at].status == Status::Active {
                return Some(at);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, status: Status, note: &str) -> Entry {
        let mut e = Entry::new(id.into(), "w".into(), "p".into(), 0.5, 0, 0.0);
        e.status = status;
        e.note = note.into();
        e
    }

    #[test]
    fn a_folded_lesson_is_recalled_as_its_nearest_active_ancestor() {
        let under = |p: &str| format!("{FOLDED_UNDER}{p}");
        let entries = vec![
            entry("a", Status::Dormant, &under("p")),
            entry("p", Status::Dormant, &under("g")),
            entry("g", Status::Active, "abstracted parent"),
            entry("b", Status::Dormant, &under("q")),
            entry("q", Status::Retired, "abstracted parent"),
            entry("c", Status::Dormant, "faded"),
            entry("x", Status::Dormant, &under("y")),
            entry("y", Status::Dormant, &under("x")),
            entry("d", Status::Active, &under("g")),
            entry("e", Status::Dormant, &under("nobody")),
            // a parent merged into a lesson that was merged in turn
            entry("f", Status::Dormant, &under("m")),
            entry("m", Status::Retired, "merged into n"),
            entry("n", Status::Retired, "merged into g"),
            // merged away itself: recalled as nothing (not folded)
            entry("o", Status::Retired, "merged into g"),
            // folded under a lesson retired otherwise, naming a merge
            entry("h", Status::Dormant, &under("r")),
            entry("r", Status::Retired, "boundary: merged into g"),
            // "merged into" on a dormant parent is not a merge
            entry("i", Status::Dormant, &under("s")),
            entry("s", Status::Dormant, "merged into g"),
        ];
        let mut at = Positions::default();
        at.catch_up(&entries);
        let mut got = Vec::new();
        for i in 0..entries.len() {
            got.push(at.recalled_for(&entries, i));
        }
        assert_eq!(
            got,
            [
                Some(2), // through a parent folded in turn
                Some(2),
                None, // active itself
                None, // its parent retired
                None,
                None, // dormant, folded under nobody
                None, // a cycle of notes
                None,
                None,    // revived: active, its old note kept
                None,    // an unknown parent
                Some(2), // through two merges
                None,
                None,
                None, // merged away, not folded
                None, // its parent retired, not merged
                None,
                None, // a dormant parent's note is not a merge
                None,
            ]
        );
    }

    #[test]
    fn a_long_chain_resolves_and_the_first_of_two_ids_is_the_parent() {
        // each sleep may fold the last parent under a new one
        let mut entries: Vec<Entry> = (0..200)
            .map(|i| {
                entry(
                    &format!("p{i}"),
                    Status::Dormant,
                    &format!("folded under p{}", i + 1),
                )
            })
            .collect();
        entries.push(entry("p200", Status::Active, ""));
        entries.push(entry("p200", Status::Active, "a second entry with the id"));
        let mut at = Positions::default();
        at.catch_up(&entries);
        assert_eq!(at.recalled_for(&entries, 0), Some(200));
    }

    #[test]
    fn positions_follow_the_ledger_as_it_grows_and_is_rebuilt() {
        let mut entries = vec![
            entry("a", Status::Dormant, "folded under p"),
            entry("p", Status::Active, ""),
        ];
        let mut at = Positions::default();
        at.catch_up(&entries);
        assert_eq!(at.recalled_for(&entries, 0), Some(1));
        // a new parent appended
        entries[0].note = "folded under q".into();
        entries.push(entry("q", Status::Active, ""));
        assert_eq!(at.recalled_for(&entries, 0), None, "not read yet");
        at.catch_up(&entries);
        assert_eq!(at.recalled_for(&entries, 0), Some(2));
        // rebuilt in another order: read again, never trusted stale
        entries.swap(1, 2);
        assert_eq!(at.recalled_for(&entries, 0), None);
        entries.pop();
        at.catch_up(&entries);
        assert_eq!(at.recalled_for(&entries, 0), Some(1));
    }
}
