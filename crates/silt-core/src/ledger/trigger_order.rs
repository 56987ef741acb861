//! Lessons sharing one action, read nearest a lesson's own trigger first.
//!
//! Every judge calls two lessons with one action siblings only when their
//! situations are related, so a lesson's partners by action are worth
//! judging in order of how alike their triggers are. Where thousands of
//! lessons say one action word for word, a list by position held sixteen
//! arbitrary ones: on 100k `agents` lessons the lists by action held 1.6M
//! pairs, 11% of them on related triggers (lexical similarity 0.45 or
//! more); read as below, 1.2M pairs, 61% related.
//!
//! Each trigger gets a MinHash signature of its words: for each of
//! [`SIGNATURE`] hash functions, the least hash of any of its words. Two
//! triggers agree on one such entry with probability equal to the
//! Jaccard similarity of their word sets, whatever the words' order. A
//! group's members are sorted by signature once a pass, and a lesson reads
//! outward from where its signature sorts, the side whose next member
//! agrees with it on more leading entries first: word-for-word twins (and
//! rewordings of the same words) first, then triggers sharing most of
//! their words. (Sorting the texts themselves put together triggers that
//! begin alike: in agents' text, those with the same verb, whatever the
//! subject.) What two sorted signatures agree on is the least of what each
//! neighbour on the way agrees on with the next, so a round reads no text
//! for a lesson's own group.

use super::similarity::each_token;

/// Hash functions in a signature: each more makes the order finer (a
/// neighbour agreeing on all of them shares most words) at 4 bytes a
/// lesson.
const SIGNATURE: usize = 4;

/// A trigger's MinHash signature.
type Signature = [u32; SIGNATURE];

/// The signature of `trigger`'s words ([`each_token`]: lowercased, split
/// on anything but ASCII letters and digits); a trigger without words
/// gets the largest.
fn signature(trigger: &str) -> Signature {
    let mut sig = [u32::MAX; SIGNATURE];
    each_token(trigger, |word| {
        // FNV-1a, then one multiply per function: the functions need only
        // be independent enough that agreeing on one says little about
        // the next
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in word.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        for (k, least) in sig.iter_mut().enumerate() {
            let hk = (h ^ (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .wrapping_mul(0xbf58_476d_1ce4_e5b9);
            *least = (*least).min((hk >> 32) as u32);
        }
    });
    sig
}

/// How many leading entries `a` and `b` agree on.
fn agree(a: &Signature, b: &Signature) -> u32 {
    a.iter().zip(b).take_while(|(x, y)| x == y).count() as u32
}

/// Groups of items with their members in signature order.
pub(crate) struct TriggerOrder {
    /// Each item's signature.
    sig: Vec<Signature>,
    /// Each group's members, sorted by signature (then by position).
    members: Vec<Vec<u32>>,
    /// `agreed[g][k]`: the leading entries members `k - 1` and `k` of
    /// group `g` agree on (0 for `k = 0`).
    agreed: Vec<Vec<u32>>,
    /// Each item's group and its place among the group's sorted members.
    group_of: Vec<u32>,
    place: Vec<u32>,
}

/// The next unread member on one side: its index in the group and the
/// leading entries its signature agrees on with the reader's.
type Next = Option<(usize, u32)>;

impl TriggerOrder {
    /// `members` of each group (every item in exactly one), with each
    /// item's trigger.
    pub fn new<'a>(members: &[Vec<u32>], trigger: impl Fn(u32) -> &'a str) -> TriggerOrder {
        let items = members.iter().map(Vec::len).sum();
        let mut sig = vec![[0; SIGNATURE]; items];
        for &x in members.iter().flatten() {
            sig[x as usize] = signature(trigger(x));
        }
        let mut order = TriggerOrder {
            members: Vec::with_capacity(members.len()),
            agreed: Vec::with_capacity(members.len()),
            group_of: vec![0; items],
            place: vec![0; items],
            sig,
        };
        for (g, group) in members.iter().enumerate() {
            let mut sorted = group.clone();
            sorted.sort_by_key(|&x| (order.sig[x as usize], x));
            let mut agreed = Vec::with_capacity(sorted.len());
            for (k, &x) in sorted.iter().enumerate() {
                order.group_of[x as usize] = g as u32;
                order.place[x as usize] = k as u32;
                agreed.push(match k {
                    0 => 0,
                    _ => agree(&order.sig[sorted[k - 1] as usize], &order.sig[x as usize]),
                });
            }
            order.members.push(sorted);
            order.agreed.push(agreed);
        }
        order
    }

    /// Calls `take` with up to `limit` members of `groups` (in the order
    /// given) other than `x` that `keep` lets through: each group's
    /// nearest `x`'s trigger first.
    pub fn nearest(
        &self,
        x: u32,
        groups: impl IntoIterator<Item = u32>,
        keep: impl Fn(u32) -> bool,
        limit: usize,
        mut take: impl FnMut(u32),
    ) {
        let mut left_to_take = limit;
        let mine = &self.sig[x as usize];
        for g in groups {
            let (members, agreed) = (&self.members[g as usize], &self.agreed[g as usize]);
            let (mut left, mut right): (Next, Next) = if g == self.group_of[x as usize] {
                let p = self.place[x as usize] as usize;
                (
                    p.checked_sub(1).map(|k| (k, agreed[p])),
                    (p + 1 < members.len()).then(|| (p + 1, agreed[p + 1])),
                )
            } else {
                let p = members.partition_point(|&y| self.sig[y as usize] < *mine);
                let with = |k: usize| (k, agree(mine, &self.sig[members[k] as usize]));
                (
                    p.checked_sub(1).map(with),
                    (p < members.len()).then(|| with(p)),
                )
            };
            loop {
                if left_to_take == 0 {
                    return;
                }
                let read_left = match (left, right) {
                    (None, None) => break,
                    (Some((_, s)), Some((_, t))) => s >= t,
                    (l, _) => l.is_some(),
                };
                let k = if read_left {
                    let (k, s) = left.expect("read from the left only when there is one");
                    left = k.checked_sub(1).map(|j| (j, s.min(agreed[k])));
                    k
                } else {
                    let (k, s) = right.expect("read from the right only when there is one");
                    right = (k + 1 < members.len()).then(|| (k + 1, s.min(agreed[k + 1])));
                    k
                };
                let y = members[k];
                if y != x && keep(y) {
                    take(y);
                    left_to_take -= 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The members of `groups` nearest `x` as a scan finds them: by the
    /// leading signature entries they agree on with `x`'s, most first,
    /// then by distance from where `x` sorts (the left side first on a
    /// tie).
    fn by_scan(
        triggers: &[&str],
        members: &[Vec<u32>],
        x: u32,
        groups: &[u32],
        keep: &dyn Fn(u32) -> bool,
        limit: usize,
    ) -> Vec<(u32, u32)> {
        let sig = |i: u32| signature(triggers[i as usize]);
        let mut out = Vec::new();
        for &g in groups {
            let mut group: Vec<u32> = members[g as usize].clone();
            group.sort_by_key(|&a| (sig(a), a));
            let at = group
                .iter()
                .position(|&y| (sig(y), y) > (sig(x), x))
                .unwrap_or(group.len());
            let mut scored: Vec<(u32, usize, u32)> = group
                .iter()
                .enumerate()
                .filter(|&(_, &y)| y != x)
                .map(|(k, &y)| {
                    let from = if k < at { at - k } else { k + 1 - at };
                    (agree(&sig(x), &sig(y)), from, y)
                })
                .collect();
            scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            out.extend(scored.into_iter().filter(|s| keep(s.2)).map(|s| (s.2, s.0)));
        }
        out.truncate(limit);
        out
    }

    #[test]
    fn a_lesson_reads_the_triggers_sharing_most_of_its_words_first() {
        let triggers = [
            "editing the parser in repo r3",        // 0
            "reviewing a pull request",             // 1
            "in repo r3, editing the parser",       // 2: its words reordered
            "editing the parser in repo r3 today",  // 3
            "adding a base image",                  // 4
            "editing the parser in repo r3",        // 5: a twin of 0
            "choosing a license for a new project", // 6
        ];
        let members = vec![vec![0, 1, 2, 3, 4, 5, 6]];
        let order = TriggerOrder::new(&members, |x| triggers[x as usize]);
        let read = |x: u32, limit: usize| {
            let mut got = Vec::new();
            order.nearest(x, [0], |_| true, limit, |y| got.push(y));
            got
        };
        let set = |v: Vec<u32>| -> std::collections::BTreeSet<u32> { v.into_iter().collect() };
        // the same words (in whatever order) and most of them first
        assert_eq!(set(read(0, 3)), set(vec![2, 3, 5]));
        assert_eq!(set(read(0, 6)), set(vec![1, 2, 3, 4, 5, 6]));
        // position plays no part: the last twin reads the same way
        assert_eq!(set(read(5, 3)), set(vec![0, 2, 3]));
        // a limit and a filter
        let mut kept = Vec::new();
        order.nearest(0, [0], |y| y != 5 && y != 2, 1, |y| kept.push(y));
        assert_eq!(kept, [3]);
    }

    #[test]
    fn signatures_agree_as_often_as_the_words_overlap() {
        // two triggers sharing half their words (Jaccard 1/3) agree on a
        // signature entry about a third of the time, over many such pairs
        let (mut agreeing, mut entries) = (0, 0);
        for i in 0..2000 {
            let a = format!("w{i}a w{i}b shared{i}x shared{i}y");
            let b = format!("w{i}c w{i}d shared{i}x shared{i}y");
            let (sa, sb) = (signature(&a), signature(&b));
            agreeing += sa.iter().zip(&sb).filter(|(x, y)| x == y).count();
            entries += SIGNATURE;
        }
        let rate = agreeing as f64 / entries as f64;
        assert!((rate - 1.0 / 3.0).abs() < 0.03, "{rate}");
        assert_eq!(
            signature("Editing, the PARSER"),
            signature("the parser editing")
        );
    }

    #[test]
    fn the_walk_finds_what_a_scan_finds_in_any_group() {
        // random triggers over few words, so signatures agree at every depth
        let mut seed = 0x9e37_79b9_u64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        let words = ["a", "b", "c", "d", "e"];
        let owned: Vec<String> = (0..120)
            .map(|_| {
                (0..next(4))
                    .map(|_| words[next(words.len() as u64) as usize])
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let triggers: Vec<&str> = owned.iter().map(String::as_str).collect();
        let members: Vec<Vec<u32>> = (0..4)
            .map(|g| (0..120).filter(|i| i % 4 == g).collect())
            .collect();
        let order = TriggerOrder::new(&members, |x| triggers[x as usize]);
        let keep = |y: u32| y % 7 != 3;
        for x in 0..120u32 {
            let groups = [x % 4, (x + 1) % 4, (x + 3) % 4];
            for limit in [1, 5, 16, 90] {
                let mut got = Vec::new();
                order.nearest(x, groups, keep, limit, |y| got.push(y));
                let want = by_scan(&triggers, &members, x, &groups, &keep, limit);
                let agreed = |v: &[u32]| -> Vec<u32> {
                    v.iter()
                        .map(|&y| {
                            agree(
                                &signature(triggers[x as usize]),
                                &signature(triggers[y as usize]),
                            )
                        })
                        .collect()
                };
                // equal agreements may come in either order between the
                // two sides; what each read agrees on, in order, must not
                let want_agreed: Vec<u32> = want.iter().map(|w| w.1).collect();
                assert_eq!(agreed(&got), want_agreed, "x {x} limit {limit}");
                assert!(got.iter().all(|&y| y != x && keep(y)));
            }
        }
    }
}
