//! Visiting scored items best first when only the first few are wanted:
//! recall needs its k best, yet may have thousands of candidates, and
//! sorting all of them cost as much as the rest of a recall.

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

#[cfg(test)]
mod tests {
    use super::*;

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
