//! Identical items compared once: a ledger of 100k generated lessons
//! holds about 49k distinct triggers and only 32 distinct actions, and one
//! text repeated in thousands of lessons makes every search for similar
//! pairs read thousands of equal candidates per lesson. A search runs over
//! the distinct items instead, and each item's partners are then filled
//! from its twins and the members of the distinct items found near it.

use std::hash::Hash;

use rustc_hash::FxHashMap as HashMap;

/// Items grouped by key, groups in order of first appearance.
pub(crate) struct Twins<K> {
    /// The key of each group.
    pub distinct: Vec<K>,
    /// The items of each group, by position.
    pub members: Vec<Vec<u32>>,
}

impl<K: Hash + Eq + Copy> Twins<K> {
    /// Groups `keys` (one per item; None leaves the item out of every
    /// group: it pairs with nothing).
    pub fn group(keys: impl IntoIterator<Item = Option<K>>) -> Twins<K> {
        let mut group_of: HashMap<K, u32> = HashMap::default();
        let mut twins = Twins {
            distinct: Vec::new(),
            members: Vec::new(),
        };
        for (i, key) in keys.into_iter().enumerate() {
            let Some(key) = key else { continue };
            let g = *group_of.entry(key).or_insert_with(|| {
                twins.distinct.push(key);
                twins.members.push(Vec::new());
                (twins.members.len() - 1) as u32
            });
            twins.members[g as usize].push(i as u32);
        }
        twins
    }

    /// The partners of item `i`, at most `per`: the members of the groups
    /// in `near` in the order given (nearest first; `i`'s own group among
    /// them where twins count as near), each group's by position, `i`
    /// itself left out. Groups taken whole, nearest first, are what make
    /// the partners of an item the same as a search over every item finds
    /// (ties aside).
    pub fn partners_of<'a, S: Copy + 'a>(
        &'a self,
        i: u32,
        near: &'a [(S, u32)],
        per: usize,
    ) -> impl Iterator<Item = (S, u32)> + 'a {
        near.iter()
            .flat_map(move |&(sim, g)| self.members[g as usize].iter().map(move |&j| (sim, j)))
            .filter(move |&(_, j)| j != i)
            .take(per)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_by_key_and_fills_partners_twins_then_near_groups() {
        let keys = ["a", "b", "a", "", "c", "a"];
        let twins = Twins::group(keys.iter().map(|&k| (!k.is_empty()).then_some(k)));
        assert_eq!(twins.distinct, ["a", "b", "c"]);
        assert_eq!(twins.members, [vec![0, 2, 5], vec![1], vec![4]]);
        // item 2's group first (its twins), then group c's members
        let near = [(1.0, 0), (0.5, 2), (0.4, 1)];
        let got: Vec<_> = twins.partners_of(2, &near, 3).collect();
        assert_eq!(got, [(1.0, 0), (1.0, 5), (0.5, 4)]);
        let all: Vec<_> = twins.partners_of(2, &near, 9).collect();
        assert_eq!(all.len(), 4);
    }
}
