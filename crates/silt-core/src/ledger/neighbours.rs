//! Candidate partners on a large ledger in near-linear time: the texts
//! next to each text in a few orders of MinHash sketches (sorted
//! neighbourhoods), to be checked exactly by the caller.
//!
//! Each order has its own hash function and sorts the texts by their
//! [`KEY`] least hashed elements (a bottom-k sketch). Two sets' least
//! hashed element is the same with probability equal to their Jaccard
//! similarity, so texts sharing most of their elements agree on the
//! leading values of some order and sort side by side in it, however many
//! other texts share a common element with them. A text is checked
//! against the [`WINDOW`] texts after it in each order (and so the
//! [`WINDOW`] before it): a fixed number of exact checks per text, where
//! counting shared prefix elements (the exact search,
//! [`super::candidates`]) reads lists that grow with the ledger on
//! templated text: 4.1 s natively for the 37k distinct triggers of 100k
//! `agents` lessons, 2.0 s this way.
//!
//! Approximate: a pair that sits apart in every order is never proposed.
//! Over [`ORDERS`] = 16 orders, a pair at Jaccard 0.3 agrees on the least
//! hashed element of at least one with probability 1 − 0.7¹⁶ ≈ 99.7%,
//! yet among thousands of texts sharing that element only the
//! [`WINDOW`] nearest by the rest of the sketch are read. What the sleep
//! pass needs of it (each lesson's strongest few) is measured against
//! brute force in `candidates`' tests: 97% of the 8 best similarities on
//! 4,250 templated triggers, and docs/BENCHMARKS.md.

/// Orders the texts are sorted in, each by its own hash function.
pub(crate) const ORDERS: usize = 16;

/// Least hash values an order sorts by (a bottom-k sketch): the first
/// splits texts by their least-hashed element, the rest sort each such run
/// so that texts agreeing on more of them sit closer.
const KEY: usize = 8;

/// Texts after a text in each order that it is paired with.
pub(crate) const WINDOW: usize = 8;

/// One order's sort key: the text's `KEY` least hashes, ascending (a text
/// with fewer elements pads with `u32::MAX`).
type Key = [u32; KEY];

/// Pairs `(x, y)`, `x < y`, of the `n` texts that sit within [`WINDOW`]
/// places of each other in one of the [`ORDERS`] orders, each once,
/// sorted. `elements(i, add)` gives text `i`'s elements (any u64 ids,
/// each once).
pub(crate) fn neighbour_pairs(
    n: usize,
    mut elements: impl FnMut(usize, &mut dyn FnMut(u64)),
) -> Vec<(u32, u32)> {
    let mut keys: Vec<[Key; ORDERS]> = vec![[[u32::MAX; KEY]; ORDERS]; n];
    for (i, key) in keys.iter_mut().enumerate() {
        elements(i, &mut |e| {
            let base = mix(e);
            for (o, least) in key.iter_mut().enumerate() {
                let h = (base ^ (o as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15))
                    .wrapping_mul(0xbf58_476d_1ce4_e5b9);
                insert_least(least, (h >> 32) as u32);
            }
        });
    }
    let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(n * ORDERS * WINDOW);
    for o in 0..ORDERS {
        // one order's keys side by side, sorted with their text
        let mut sorted: Vec<(Key, u32)> = keys
            .iter()
            .enumerate()
            .map(|(i, key)| (key[o], i as u32))
            .collect();
        sorted.sort_unstable();
        for (p, &(_, x)) in sorted.iter().enumerate() {
            for &(_, y) in sorted.iter().skip(p + 1).take(WINDOW) {
                pairs.push((x.min(y), x.max(y)));
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

/// Keeps `h` among the `KEY` least values of `least` (ascending).
fn insert_least(least: &mut Key, h: u32) {
    if h >= least[KEY - 1] {
        return;
    }
    let mut k = KEY - 1;
    while k > 0 && least[k - 1] > h {
        least[k] = least[k - 1];
        k -= 1;
    }
    least[k] = h;
}

/// SplitMix64's finaliser: element ids are small and dense, and the hash
/// functions above only multiply, so each id is spread over 64 bits first.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs_of(sets: &[Vec<u64>]) -> Vec<(u32, u32)> {
        neighbour_pairs(sets.len(), |i, add| sets[i].iter().for_each(|&e| add(e)))
    }

    #[test]
    fn each_pair_once_in_order_and_bounded() {
        let sets: Vec<Vec<u64>> = (0..500u64).map(|i| vec![i % 7, i % 11, i]).collect();
        let pairs = pairs_of(&sets);
        assert!(pairs.windows(2).all(|w| w[0] < w[1]));
        assert!(
            pairs
                .iter()
                .all(|&(x, y)| x < y && (y as usize) < sets.len())
        );
        assert!(pairs.len() <= sets.len() * ORDERS * WINDOW);
    }

    /// Among thousands of texts sharing common elements, a pair sharing
    /// most of theirs is proposed: the lists that made the exact search
    /// slow do not hide it.
    #[test]
    fn near_sets_meet_among_many_sharing_common_elements() {
        let mut sets: Vec<Vec<u64>> = (0..5000u64)
            .map(|i| vec![0, 1, 2, 1000 + i, 100_000 + i])
            .collect();
        let (a, b) = (sets.len() as u32, sets.len() as u32 + 1);
        sets.push(vec![0, 1, 2, 7, 8, 9, 10, 11]);
        sets.push(vec![0, 1, 2, 7, 8, 9, 10, 12]);
        assert!(pairs_of(&sets).contains(&(a, b)));
        // and texts with the same elements sit side by side in every order
        sets.push(vec![5, 6, 7, 8]);
        sets.push(vec![8, 7, 6, 5]);
        let (c, d) = (sets.len() as u32 - 2, sets.len() as u32 - 1);
        assert!(pairs_of(&sets).contains(&(c, d)));
    }

    /// Texts that share nothing are paired only by where they fall, a
    /// bounded number each: no text meets every other.
    #[test]
    fn unrelated_texts_meet_a_bounded_few() {
        let sets: Vec<Vec<u64>> = (0..2000u64).map(|i| vec![3 * i, 3 * i + 1]).collect();
        let pairs = pairs_of(&sets);
        let mut met = vec![0usize; sets.len()];
        for &(x, y) in &pairs {
            met[x as usize] += 1;
            met[y as usize] += 1;
        }
        assert!(met.iter().all(|&m| m <= 2 * ORDERS * WINDOW));
    }
}
