//! Work a sleep pass hands to its host's spare core. A component has one
//! thread; its host may have more. The search for partners by words reads
//! only the lessons' texts, never what the search by meaning finds, so a
//! host with a core to spare runs it there (on a second instance of the
//! same engine, so it is this very code) while the pass searches by
//! meaning, and the pass takes the lists when it needs them. So does the
//! search by meaning of one view (it reads only that view's vectors),
//! while the pass searches the other. The answer is the same either way:
//! only when it is made differs.

use super::candidates::{PartnerLists, PartnerSearch};
use super::rows::Rows;

/// A host that may run searches on a core of its own.
pub trait SpareCore {
    /// Starts [`PartnerSearch::lists`] of `texts` and returns at once,
    /// where the host has a core to spare; the caller takes the lists with
    /// [`SpareCore::finish_partner_lists`]. None (the default) when it
    /// cannot, or when the texts are too few to be worth the hand-over
    /// (the host knows what that costs it): the caller then searches
    /// itself.
    fn start_partner_lists(&mut self, _texts: &[&str], _search: PartnerSearch) -> Option<u64> {
        None
    }

    /// The lists of the call `start_partner_lists` returned, or why there
    /// are none (the caller then searches itself).
    fn finish_partner_lists(&mut self, call: u64) -> Result<PartnerLists, String> {
        Err(format!("no search {call} was started"))
    }

    /// Starts [`super::meaning::pairs_near`] of `rows` and returns at
    /// once, as [`SpareCore::start_partner_lists`] does; the caller takes
    /// the pairs with [`SpareCore::finish_pairs_near`].
    fn start_pairs_near(&mut self, _rows: &Rows, _cut: f64, _per_row: usize) -> Option<u64> {
        None
    }

    /// The pairs of the call `start_pairs_near` returned, or why there are
    /// none (the caller then searches itself).
    fn finish_pairs_near(&mut self, call: u64) -> Result<Vec<(u32, u32)>, String> {
        Err(format!("no search {call} was started"))
    }

    /// Takes back the call `start_pairs_near` returned if the spare core
    /// has not begun it (it waits behind the searches started before it,
    /// which on some ledgers take longer than the caller's own work):
    /// true when it never will, and the caller searches itself; false
    /// when it has begun, and [`SpareCore::finish_pairs_near`] takes it.
    fn take_back_pairs_near(&mut self, _call: u64) -> bool {
        false
    }

    /// A search's answer was not taken (`why`: the host's error, or an
    /// answer that does not fit what was searched), so the pass searched
    /// itself: the same answer, later. Where the host can say so, it
    /// should.
    fn not_taken(&mut self, _why: &str) {}
}

/// A host without a spare core: every search stays on the pass's thread.
pub struct NoSpareCore;

impl SpareCore for NoSpareCore {}
