//! Keeping only the best few of many scored items: recall needs its k
//! best, yet may have thousands of candidates, and sorting all of them
//! cost as much as the rest of a recall; pairing needs each lesson's few
//! strongest partners, yet on templated text every lesson meets hundreds
//! of near ones.

use std::cmp::Ordering;

/// Items ordered before the first visit; each later slice doubles.
const FIRST_SLICE: usize = 64;

/// Calls `visit` on `items` in `order` (least first), until it returns
/// false or the items run out: the same sequence a full sort gives, but
/// ordered a slice at a time (the first 64 by selection, then the next
/// 128, ...), so a visit that stops early pays for little more than
/// what it saw.
pub(crate) fn visit_in_order<T: Copy>(
    items: &mut [T],
    order: impl Fn(&T, &T) -> Ordering + Copy,
    mut visit: impl FnMut(T) -> bool,
) {
    let (mut rest, mut slice) = (items, FIRST_SLICE);
    while !rest.is_empty() {
        let take = slice.min(rest.len());
        if take < rest.len() {
            rest.select_nth_unstable_by(take - 1, order);
        }
        let (next, tail) = rest.split_at_mut(take);
        next.sort_unstable_by(order);
        for &item in next.iter() {
            if !visit(item) {
                return;
            }
        }
        (rest, slice) = (tail, slice * 2);
    }
}

/// A similarity, ordered totally (no NaN comes in, but the order must
/// not depend on that).
pub(crate) trait Score: Copy {
    fn order(&self, other: &Self) -> Ordering;
}

impl Score for f32 {
    fn order(&self, other: &Self) -> Ordering {
        self.total_cmp(other)
    }
}

impl Score for f64 {
    fn order(&self, other: &Self) -> Ordering {
        self.total_cmp(other)
    }
}

/// Each item's `keep` strongest partners, as they are offered: a full
/// list gives up its weakest (the first of equals) only to a stronger
/// offer, so among equals the partner offered first stays.
///
/// Where each lesson's view meets hundreds of near rows (generated
/// families: 580 a row, nearly all past the cut-off), finding the weakest
/// on every offer was most of pairing's time; it is kept per list and
/// found again only when a list changes.
pub(crate) struct Strongest<S, T> {
    keep: usize,
    lists: Vec<Vec<(S, T)>>,
    /// Where each full list's weakest is.
    weakest: Vec<u32>,
}

impl<S: Score, T: Copy> Strongest<S, T> {
    pub fn new(items: usize, keep: usize) -> Self {
        Strongest {
            keep,
            lists: (0..items).map(|_| Vec::new()).collect(),
            weakest: vec![0; items],
        }
    }

    /// Offers `partner` at `score` to item `at`'s list. Returns the
    /// weakest score the list keeps once it is full (a later offer must
    /// beat it), None while it has room.
    pub fn offer(&mut self, at: usize, score: S, partner: T) -> Option<S> {
        let list = &mut self.lists[at];
        if list.len() < self.keep {
            list.push((score, partner));
            if list.len() < self.keep {
                return None;
            }
            self.weakest[at] = first_weakest(list);
        } else {
            // keep is 0: nothing is ever taken
            let weakest = list.get_mut(self.weakest[at] as usize)?;
            if weakest.0.order(&score) == Ordering::Less {
                *weakest = (score, partner);
                self.weakest[at] = first_weakest(list);
            }
        }
        Some(list[self.weakest[at] as usize].0)
    }

    /// Each item's list, in no particular order.
    pub fn into_lists(self) -> Vec<Vec<(S, T)>> {
        self.lists
    }
}

fn first_weakest<S: Score, T>(list: &[(S, T)]) -> u32 {
    (0..list.len())
        .min_by(|&a, &b| list[a].0.order(&list[b].0))
        .unwrap_or(0) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same lists as finding the weakest on every offer, on offers
    /// with many equal scores, and each offer tells the weakest score of
    /// a full list.
    #[test]
    fn strongest_keeps_what_a_scan_on_every_offer_keeps() {
        let offers: Vec<(usize, f32, u32)> = (0..5000u32)
            .map(|i| ((i * 31 % 7) as usize, ((i * 7919) % 23) as f32, i))
            .collect();
        for keep in [0, 1, 3, 16, 10_000] {
            let mut fast = Strongest::new(7, keep);
            let mut slow: Vec<Vec<(f32, u32)>> = vec![vec![]; 7];
            for &(at, score, partner) in &offers {
                let weakest = fast.offer(at, score, partner);
                let list = &mut slow[at];
                if list.len() < keep {
                    list.push((score, partner));
                } else if let Some(w) = list
                    .iter_mut()
                    .min_by(|a, b| a.0.total_cmp(&b.0))
                    .filter(|w| w.0 < score)
                {
                    *w = (score, partner);
                }
                let full = keep > 0 && list.len() == keep;
                let least = list.iter().map(|w| w.0).min_by(f32::total_cmp);
                assert_eq!(weakest, least.filter(|_| full), "keep {keep}");
            }
            assert_eq!(fast.into_lists(), slow, "keep {keep}");
        }
    }

    #[test]
    fn the_visits_follow_a_full_sort_and_stop_when_asked() {
        // 1000 distinct values in a scrambled order
        let mut items: Vec<u32> = (0..1000u32).map(|i| (i * 7919) % 1000).collect();
        let mut sorted = items.clone();
        sorted.sort_unstable();
        let mut seen = vec![];
        visit_in_order(
            &mut items,
            |a, b| a.cmp(b),
            |x| {
                seen.push(x);
                true
            },
        );
        assert_eq!(seen, sorted);
        let mut first = vec![];
        visit_in_order(
            &mut items,
            |a, b| b.cmp(a),
            |x| {
                first.push(x);
                first.len() < 300
            },
        );
        assert_eq!(first, (700..1000).rev().collect::<Vec<u32>>());
    }
}
