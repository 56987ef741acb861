//! Counting shared prefix elements that most texts hold, a word of 64
//! texts at a time.
//!
//! The lexical join ([`super::candidates`]) counts, for each text, how
//! many prefix elements every earlier text shares with it, by walking the
//! earlier texts listed under each element. On text agents write ("editing
//! the parser in repo r3", a few hundred words in all) every trigger's
//! prefix holds "the", "in", "repo" and trigrams that a third of all
//! triggers hold, so each text walked lists of nearly every earlier text:
//! 5 G increments at 37k distinct triggers, 15 s natively and 39 s in the
//! sandbox. Here an element held by many texts is a bitset over the texts'
//! places in the join's order, and the counts of all earlier texts are
//! added up as bit slices (slice `s` of a word holds bit `s` of 64 texts'
//! counts), a few word operations per element per 64 texts.

/// Slices of a count: counts up to 65,535, more prefix elements than any
/// text has.
pub const SLICES: usize = 16;

/// The largest count.
const MAX: u32 = (1 << SLICES) - 1;

/// Elements held by many texts' index prefixes, each as a bitset over the
/// texts' places in the join's order.
pub struct Heavy {
    /// `u64` words per bitset.
    words: usize,
    /// Each element's bitset, or `NONE` for an element that stays in the
    /// join's lists.
    slot: Vec<u32>,
    /// The bitsets, one after another.
    bits: Vec<u64>,
}

const NONE: u32 = u32::MAX;

impl Heavy {
    /// The elements of `universe` that more than `n / share` of the `n`
    /// texts index (`prefix(place)` is the indexed prefix of the text at
    /// that place); none when `share` is 0. Below `share`·64 bits of
    /// bitset per listed text a list would be smaller than a bitset, and
    /// a bitset costs its whole length to count.
    pub fn new<'a>(
        universe: usize,
        n: usize,
        share: usize,
        prefix: impl Fn(usize) -> &'a [u32],
    ) -> Heavy {
        let words = n.div_ceil(64);
        let mut slot = vec![NONE; universe];
        if share == 0 || n == 0 {
            return Heavy {
                words,
                slot,
                bits: Vec::new(),
            };
        }
        let mut held = vec![0usize; universe];
        for place in 0..n {
            for &e in prefix(place) {
                held[e as usize] += 1;
            }
        }
        let mut slots = 0u32;
        for (e, &h) in held.iter().enumerate() {
            if h * share > n {
                slot[e] = slots;
                slots += 1;
            }
        }
        let mut bits = vec![0u64; slots as usize * words];
        for place in 0..n {
            for &e in prefix(place) {
                let s = slot[e as usize];
                if s != NONE {
                    bits[s as usize * words + place / 64] |= 1 << (place % 64);
                }
            }
        }
        Heavy { words, slot, bits }
    }

    /// Element `e`'s bitset, if it has one.
    pub fn bitset(&self, e: u32) -> Option<&[u64]> {
        let s = self.slot[e as usize];
        (s != NONE).then(|| &self.bits[s as usize * self.words..(s as usize + 1) * self.words])
    }
}

/// Whether bit `place` of `bits` is set.
pub fn holds(bits: &[u64], place: usize) -> bool {
    bits[place / 64] >> (place % 64) & 1 == 1
}

/// How many of some bitsets hold each place below an end, as bit slices.
#[derive(Default)]
pub struct SlicedCounts {
    slices: Vec<[u64; SLICES]>,
}

impl SlicedCounts {
    /// Counts, for each place below `end`, the `inputs` that hold it, each
    /// input counting only from its own first place (a bitset and that
    /// place). Counts past the largest stay there.
    pub fn count(&mut self, end: usize, inputs: &[(&[u64], usize)]) {
        let words = end.div_ceil(64);
        self.slices.clear();
        self.slices.resize(words, [0; SLICES]);
        for (w, c) in self.slices.iter_mut().enumerate() {
            let below_end = if (w + 1) * 64 <= end {
                u64::MAX
            } else {
                (1u64 << (end % 64)) - 1
            };
            // two inputs at a time: a full adder into the lowest slice,
            // then the carry rippled up while any of the 64 lanes has one
            let mut pending: Option<u64> = None;
            for &(bits, from) in inputs {
                let b = bits[w] & below_end & from_mask(w, from);
                match pending.take() {
                    None => pending = Some(b),
                    Some(a) => {
                        let x = a ^ b;
                        let carry = (a & b) | (c[0] & x);
                        c[0] ^= x;
                        add_at(c, 1, carry);
                    }
                }
            }
            if let Some(a) = pending {
                add_at(c, 0, a);
            }
        }
    }

    /// The count at `place`.
    pub fn of(&self, place: usize) -> u32 {
        let (w, lane) = (place / 64, place % 64);
        self.slices.get(w).map_or(0, |c| {
            (0..SLICES).map(|s| ((c[s] >> lane & 1) as u32) << s).sum()
        })
    }

    /// Words of 64 places counted.
    pub fn words(&self) -> usize {
        self.slices.len()
    }

    /// The places of word `w` whose count is at least `t`.
    pub fn at_least(&self, w: usize, t: u32) -> u64 {
        if t == 0 {
            return u64::MAX;
        }
        if t > MAX {
            return 0;
        }
        let c = &self.slices[w];
        // from the top bit down: places above `t` so far, and places equal
        // to it so far
        let (mut above, mut equal) = (0u64, u64::MAX);
        for s in (0..SLICES).rev() {
            if t >> s & 1 == 1 {
                equal &= c[s];
            } else {
                above |= equal & c[s];
                equal &= !c[s];
            }
        }
        above | equal
    }
}

/// The places of word `w` at or after `from`.
fn from_mask(w: usize, from: usize) -> u64 {
    let first = w * 64;
    if from <= first {
        u64::MAX
    } else if from >= first + 64 {
        0
    } else {
        u64::MAX << (from - first)
    }
}

/// Adds `carry` at slice `s` and up; lanes already at the largest count
/// stay there.
fn add_at(c: &mut [u64; SLICES], mut s: usize, mut carry: u64) {
    while carry != 0 {
        if s == SLICES {
            // overflowed lanes: back to the largest, as a saturating count
            for slice in c.iter_mut() {
                *slice |= carry;
            }
            return;
        }
        let next = c[s] & carry;
        c[s] ^= carry;
        carry = next;
        s += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Draw(u64);

    impl Draw {
        fn bit(&mut self, one_in: u64) -> bool {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33).is_multiple_of(one_in)
        }
    }

    fn bitset(n: usize, on: impl Fn(usize) -> bool) -> Vec<u64> {
        let mut bits = vec![0u64; n.div_ceil(64)];
        for place in (0..n).filter(|&p| on(p)) {
            bits[place / 64] |= 1 << (place % 64);
        }
        bits
    }

    // places index every input's set, not one sequence
    #[allow(clippy::needless_range_loop)]
    #[test]
    fn sliced_counts_are_the_counts_place_by_place() {
        let mut draw = Draw(3);
        let n = 333;
        let sets: Vec<Vec<bool>> = (0..300)
            .map(|k| (0..n).map(|_| draw.bit(1 + k as u64 % 5)).collect())
            .collect();
        let bitsets: Vec<Vec<u64>> = sets.iter().map(|s| bitset(n, |p| s[p])).collect();
        let mut counts = SlicedCounts::default();
        for (inputs, end) in [(0, 333), (1, 100), (2, 64), (7, 333), (300, 333), (41, 129)] {
            let from: Vec<usize> = (0..inputs).map(|k| (k * 37) % 90).collect();
            let given: Vec<(&[u64], usize)> = (0..inputs)
                .map(|k| (bitsets[k].as_slice(), from[k]))
                .collect();
            counts.count(end, &given);
            for place in 0..end {
                let want = (0..inputs)
                    .filter(|&k| place >= from[k] && sets[k][place])
                    .count() as u32;
                assert_eq!(counts.of(place), want, "{inputs} inputs, place {place}");
                for t in [0, 1, want, want + 1, MAX, MAX + 1] {
                    let w = place / 64;
                    let lane = counts.at_least(w, t) >> (place % 64) & 1 == 1;
                    assert_eq!(lane, want >= t, "place {place}, t {t}, count {want}");
                }
            }
            assert_eq!(counts.words(), end.div_ceil(64));
        }
        // past the largest count a place stays at it
        let all = [u64::MAX];
        let many: Vec<(&[u64], usize)> = (0..MAX as usize + 9).map(|_| (&all[..], 0)).collect();
        counts.count(64, &many);
        assert_eq!((counts.of(0), counts.of(63)), (MAX, MAX));
        assert_eq!(counts.at_least(0, MAX), u64::MAX);
    }

    #[test]
    fn only_elements_most_texts_index_get_a_bitset() {
        // element 0 in every text, 1 in every third, 2 in one
        let prefixes: Vec<Vec<u32>> = (0..30)
            .map(|p| {
                let mut e = vec![0];
                if p % 3 == 0 {
                    e.push(1);
                }
                if p == 7 {
                    e.push(2);
                }
                e
            })
            .collect();
        let heavy = Heavy::new(3, 30, 4, |p| &prefixes[p]);
        assert!(holds(heavy.bitset(0).unwrap(), 29));
        let third = heavy.bitset(1).unwrap();
        assert!(holds(third, 27) && !holds(third, 28));
        assert!(heavy.bitset(2).is_none());
        assert!(Heavy::new(3, 30, 0, |p| &prefixes[p]).bitset(0).is_none());
    }
}
