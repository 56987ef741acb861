//! Candidate pairs for the sleep pass without comparing every pair, and
//! exactly: the pairs found are the pairs brute force finds.
//!
//! `text_sim = (J_tokens + J_trigrams) / 2 ≥ t` needs `J_tokens ≥ x` or
//! `J_trigrams ≥ 2t − x`, for any split `x`. silt takes `x = t/2`: short
//! triggers keep every token in their prefix either way, and trigrams (a
//! small alphabet, so each is shared widely) get the stricter threshold.
//! (A smaller `x` scans a little less on made-up words but lets stopwords
//! propose far more pairs in English.) Each family proposes the pairs that
//! could reach its own threshold `θ`, and a pair either family proposes is
//! checked once, exactly. A family proposes a pair only when it passes all
//! of these, each a consequence of `J ≥ θ`, so no pair at or above `t` is
//! missed:
//!
//! - Size: `J ≤ min/max`, so the smaller set has at least `θ` times the
//!   larger one's elements.
//! - Overlap: `J = m / (|x| + |y| − m) ≥ θ` means the pair shares
//!   `m ≥ α = ⌈θ/(1+θ)·(|x|+|y|)⌉` elements, and `m ≥ θ·max(|x|, |y|)`.
//! - Prefixes, counted (PPJoin's prefix filter, generalised as in pkwise):
//!   with elements in one global order, the `j`-th smallest shared
//!   element has `m − j` shared elements after it in each set, so it sits
//!   within the first `|x| − m + j` elements of each. Hence the first
//!   `|x| − ⌈θ|x|⌉ + K` elements of `x` and of `y` hold at least
//!   `min(K, m)` shared elements, and the pair is proposed only when they
//!   share `min(K, α)`. Counting to `K > 1` instead of stopping at one
//!   shared element is what keeps the exact checks in step with the pairs
//!   found: each random trigram is in a fixed fraction of the triggers, so
//!   pairs sharing one prefix trigram grow with the square of the ledger,
//!   while `K` of them rarely coincide by chance.
//! - A shorter indexed prefix for trigrams: texts are taken in order of
//!   trigram-set size, so each is compared only with ones no larger. For
//!   `|y| ≤ |x|`, `m ≥ α ≥ 2θ/(1+θ)·|y|`, so `y` need only be indexed by
//!   its first `|y| − ⌈2θ/(1+θ)·|y|⌉ + K` elements; and by the same order
//!   each trigram's list holds texts by growing size, so those too small
//!   for the size filter are dropped from its front once for all.
//!
//! Before the exact check, both families together must be able to reach
//! `t`: every shared element up to where the first of the two prefixes
//! ends is counted, the rest lie past it, so `m` is at most the count plus
//! that set's remainder. The exact check then merges tokens, and stops
//! merging trigrams once those left cannot make up the rest of `2t`.
//!
//! The global order is rarity, so prefixes are made of the rarest
//! elements and the lists they hit are short. What still grows faster
//! than the pairs is the scan of those lists (counting, not checking) on
//! text whose trigrams are all about equally common. An empty token set
//! stands as a set of one element only empty sets have: Jaccard 1 with
//! another empty set and 0 with any other, as `jaccard` counts them.

use std::collections::HashMap;

use super::best_first::Strongest;
use super::dense_counts::{Heavy, SlicedCounts, holds};
use super::neighbours::neighbour_pairs;
#[cfg(test)]
use super::similarity::text_sim;
use super::similarity::{each_token, each_trigram, jaccard_counts, shared};
use super::twins::Twins;

/// Shared prefix elements a pair needs (when its overlap bound allows as
/// many) before it is checked; see the module comment. More means fewer
/// chance candidates but longer prefixes to scan: on 100k of the
/// benchmark's triggers 2 leaves eight times the candidates 3 does, and 4
/// or 5 save a third of those but scan a fifth to two fifths more.
const K: usize = 3;

/// The most candidate partners one lesson is judged against per sleep
/// round, of each kind (by trigger, by action, by meaning): what keeps a
/// sleep over a dense ledger (thousands of lessons sharing a phrase) in
/// bounded memory; a lesson's duplicates and contradictions are its most
/// similar partners, and the next round sees the ledger again. Eight, not
/// the sixteen it was until session 34: on 100k generated lessons a pass
/// judged 0.8–1.2M pairs instead of 1.7–2.2M and slept 5–7 s faster, with
/// the same `silt eval ledger` results for every judge and the same
/// merges but for 3% on the `agents` text, where a lesson with more than
/// eight near duplicates merges them over one more round
/// (docs/history/benchmarks.md, session 34).
pub const MAX_PARTNERS: usize = 8;

/// Pairs (i < j) of `texts` with `text_sim ≥ threshold`, with their
/// similarity, sorted by (i, j).
///
/// Memory stays linear in the input plus the output: the index holds each
/// text once per prefix element, and candidates for each text are counted
/// in one array reset after it rather than kept as a set of all pairs.
pub fn similar_pairs(texts: &[&str], threshold: f64) -> Vec<(usize, usize, f64)> {
    let mut out = Vec::new();
    for_each_similar_pair(texts, threshold, None, |i, j, sim| {
        out.push((i, j, sim));
        true
    });
    out.sort_by_key(|&(i, j, _)| (i, j));
    out
}

/// How many pairs [`similar_pairs`] would return, without keeping them.
pub fn similar_pair_count(texts: &[&str], threshold: f64) -> usize {
    count_pairs_until(texts, threshold, |_, _| true, usize::MAX)
}

/// How many pairs [`similar_pairs`] would return that `keep(i, j)` lets
/// through, counting no further than `need`: the search stops there.
pub fn count_pairs_until(
    texts: &[&str],
    threshold: f64,
    keep: impl Fn(usize, usize) -> bool,
    need: usize,
) -> usize {
    let mut n = 0;
    if need == 0 {
        return 0;
    }
    for_each_similar_pair(texts, threshold, None, |i, j, _| {
        n += usize::from(keep(i, j));
        n < need
    });
    n
}

/// Exact checks per partner kept, in [`strongest_pairs`]: each text is
/// checked against the `8 × per_text` earlier texts sharing most of its
/// rarest elements.
const CHECKS_PER_PARTNER: usize = 8;

/// The pairs of [`similar_pairs`] that are among the `per_text` most
/// similar partners of at least one of their two texts (of the candidates
/// checked, see [`for_each_similar_pair`]), sorted by (i, j).
///
/// Memory is bounded by `texts.len() × per_text` pairs whatever the
/// ledger: where thousands of lessons share a phrase, the full list is
/// quadratic (a 30k-lesson ledger of templated triggers has hundreds of
/// millions of pairs), and a lesson's duplicates and contradictions are
/// among its most similar partners anyway. Ties keep the partner found
/// first, so the answer is deterministic.
pub fn strongest_pairs(
    texts: &[&str],
    threshold: f64,
    per_text: usize,
) -> Vec<(usize, usize, f64)> {
    let checks = per_text.saturating_mul(CHECKS_PER_PARTNER);
    strongest_pairs_checking(texts, threshold, per_text, Some(checks))
}

/// Each text's strongest partners found as [`strongest_pairs`] finds them
/// (`per_text × 8` exact checks per text), kept by distinct text: see
/// [`PartnerGroups`].
pub fn strongest_partners(
    texts: &[&str],
    threshold: f64,
    per_text: usize,
    keep: usize,
) -> PartnerGroups {
    PartnerSearch::strongest(threshold, per_text, keep).groups(texts)
}

/// Each text's partners, strongest first: (place of the partner,
/// similarity).
pub type PartnerLists = Vec<Vec<(u32, f64)>>;

/// How a search for partners by words runs: the part of
/// [`strongest_partners`] that reads only the distinct texts, which a
/// sleep pass hands to a spare core where its host has one
/// ([`super::spare_core`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PartnerSearch {
    /// The least similarity of a partner.
    pub threshold: f64,
    /// Partners kept per distinct text, beside its twins.
    pub keep: usize,
    /// Exact checks per distinct text (None: every candidate, so each list
    /// is exactly the best).
    pub max_checks: Option<usize>,
}

impl PartnerSearch {
    /// The search of [`strongest_partners`].
    pub fn strongest(threshold: f64, per_text: usize, keep: usize) -> PartnerSearch {
        PartnerSearch {
            threshold,
            keep,
            max_checks: Some(per_text.saturating_mul(CHECKS_PER_PARTNER)),
        }
    }

    /// Each of `texts`' partners among them (the texts all different), by
    /// place, strongest first, with their similarity: the lists
    /// [`PartnerGroups`] keeps, without its own group.
    pub fn lists(&self, texts: &[&str]) -> PartnerLists {
        distinct_partner_lists(texts, self.threshold, self.keep, self.max_checks)
    }

    /// The groups of `texts`, searched here.
    pub fn groups(&self, texts: &[&str]) -> PartnerGroups {
        let twins = Twins::group(texts.iter().copied().map(Some));
        let lists = self.lists(&twins.distinct);
        PartnerGroups::of_lists(texts.len(), twins.members, lists, self.threshold)
    }
}

/// Texts' strongest partners by distinct text: identical texts are
/// searched once, and a text's partners are its twins (at similarity 1)
/// first, then the members of the distinct texts found near it, strongest
/// first, each group's members by position.
///
/// Kept by group rather than expanded per text, a list outlasts the
/// lessons a sleep round retires: merging a thousand word-for-word
/// duplicates empties every expanded list that held only them, and each
/// such list sent the pass back to a whole search (26 s at 100k lessons
/// of the `agents` text, in the sandbox).
pub struct PartnerGroups {
    /// Each text's group.
    pub group_of: Vec<u32>,
    /// Each group's texts, by position.
    pub members: Vec<Vec<u32>>,
    /// Each group's partner groups, strongest first, with their
    /// similarity: itself first (its twins), then up to `keep` others. A
    /// list of `keep` others may have left stronger partners out; a
    /// shorter one holds every partner found.
    pub near: Vec<Vec<(u32, f64)>>,
}

impl PartnerGroups {
    /// The groups of `texts` with `max_checks` exact checks per distinct
    /// text (None: every candidate, so each list is exactly the best).
    /// On 100k generated lessons (32 distinct actions) the search by
    /// action took 14 s natively before identical texts were grouped,
    /// every text reading thousands of equal ones.
    fn find(
        texts: &[&str],
        threshold: f64,
        keep: usize,
        max_checks: Option<usize>,
    ) -> PartnerGroups {
        let search = PartnerSearch {
            threshold,
            keep,
            max_checks,
        };
        search.groups(texts)
    }

    /// Whether `lists`, searched elsewhere, can be the partner lists of
    /// `groups` distinct texts ([`PartnerSearch::lists`]): one a text,
    /// each partner a text in range at a similarity in 0–1. Lists that do
    /// not fit are said, not taken.
    pub(crate) fn check_lists(groups: usize, lists: &[Vec<(u32, f64)>]) -> Result<(), String> {
        if lists.len() != groups {
            return Err(format!(
                "{} partner lists for {groups} distinct texts",
                lists.len()
            ));
        }
        let fits = |&(g, sim): &(u32, f64)| (g as usize) < groups && (0.0..=1.0).contains(&sim);
        match lists
            .iter()
            .enumerate()
            .find_map(|(g, list)| list.iter().find(|p| !fits(p)).map(|p| (g, *p)))
        {
            Some((g, (h, sim))) => Err(format!(
                "distinct text {g} has partner {h} at similarity {sim}, of {groups} texts"
            )),
            None => Ok(()),
        }
    }

    /// The groups of `len` texts whose twins are `members`, from each
    /// group's partner lists (which [`PartnerGroups::check_lists`] passed
    /// where they were searched elsewhere).
    pub(crate) fn of_lists(
        len: usize,
        members: Vec<Vec<u32>>,
        lists: Vec<Vec<(u32, f64)>>,
        threshold: f64,
    ) -> PartnerGroups {
        let mut group_of = vec![0; len];
        for (g, members) in members.iter().enumerate() {
            for &i in members {
                group_of[i as usize] = g as u32;
            }
        }
        let near = lists
            .into_iter()
            .enumerate()
            .map(|(g, list)| {
                let own = (threshold <= 1.0).then_some((g as u32, 1.0));
                own.into_iter().chain(list).collect()
            })
            .collect();
        PartnerGroups {
            group_of,
            members,
            near,
        }
    }

    /// Text `i`'s partners, strongest first, among the texts `member`
    /// keeps of each group (by position): `i` itself left out.
    pub fn partners_of<'a>(
        &'a self,
        i: usize,
        member: impl Fn(u32) -> &'a [u32] + 'a,
    ) -> impl Iterator<Item = (u32, f64)> + 'a {
        self.near[self.group_of[i] as usize]
            .iter()
            .flat_map(move |&(g, sim)| member(g).iter().map(move |&j| (j, sim)))
            .filter(move |&(j, _)| j as usize != i)
    }
}

/// Each text's `keep` strongest partners (as [`PartnerGroups`] expands
/// them) with `max_checks` exact checks per distinct text.
fn partner_lists(
    texts: &[&str],
    threshold: f64,
    keep: usize,
    max_checks: Option<usize>,
) -> Vec<Vec<(u32, f64)>> {
    let groups = PartnerGroups::find(texts, threshold, keep, max_checks);
    (0..texts.len())
        .map(|i| {
            groups
                .partners_of(i, |g| &groups.members[g as usize])
                .take(keep)
                .collect()
        })
        .collect()
}

/// Distinct texts past which a capped search may take its candidates
/// from sorted neighbourhoods ([`super::neighbours`]) instead of counting
/// shared prefix elements: below it, always the counting search (the
/// evaluation's sets, a working ledger).
const NEIGHBOURS_FROM: usize = 4096;

/// List entries the counting search would scan per text
/// ([`scan_per_text`]) past which the sorted neighbourhoods are used: they
/// check a fixed `ORDERS × WINDOW × 2` = 256 neighbours a text (about
/// 56 µs natively), while counting costs with the lists. Natively, on the
/// distinct triggers of generated lessons: `agents` 10k lessons (6.5k
/// texts) scan 19.5k a text and count in 42 µs a text, 100k (37k texts)
/// scan 105k and count in 108 µs; families of made-up words scan 470 a
/// text at 100k and count in 15 µs.
const DENSE_SCAN: u64 = 32_768;

/// The token and trigram families of `texts` for a search at `threshold`
/// (see the module comment for the split).
fn families(texts: &[&str], threshold: f64) -> (Family, Family) {
    (
        Family::new(texts, |t, f| each_token(t, f), threshold / 2.0),
        Family::new(texts, |t, f| each_trigram(t, f), threshold * 1.5),
    )
}

/// About how many list entries the counting search reads per text: each
/// element in `c` texts' prefixes is read `c(c − 1)/2` times as they are
/// indexed one by one (heavy elements included, counted the same way by
/// bitset).
fn scan_per_text(tok: &Family, tri: &Family) -> u64 {
    let n = tok.len.len();
    let mut scanned = 0u64;
    for (family, prefix) in [
        (tok, Family::probe_prefix as fn(&Family, usize) -> &[u32]),
        (tri, Family::index_prefix),
    ] {
        let mut in_prefix = vec![0u64; family.universe];
        for i in 0..n {
            for &e in prefix(family, i) {
                in_prefix[e as usize] += 1;
            }
        }
        scanned += in_prefix
            .iter()
            .map(|&c| c * c.saturating_sub(1) / 2)
            .sum::<u64>();
    }
    scanned / n.max(1) as u64
}

/// [`partner_lists`] over texts that are all different.
fn distinct_partner_lists(
    texts: &[&str],
    threshold: f64,
    keep: usize,
    max_checks: Option<usize>,
) -> Vec<Vec<(u32, f64)>> {
    // (sim, (partner, when found)): ties keep the partner found first
    let mut best: Strongest<f64, (u32, u64)> = Strongest::new(texts.len(), keep);
    let mut found = 0u64;
    let offer = |i: usize, j: usize, sim: f64| {
        found += 1;
        best.offer(i, sim, (j as u32, found));
        best.offer(j, sim, (i as u32, found));
        true
    };
    let (tok, tri) = families(texts, threshold);
    if max_checks.is_some()
        && texts.len() > NEIGHBOURS_FROM
        && scan_per_text(&tok, &tri) > DENSE_SCAN
    {
        for_each_neighbour_pair(&tok, &tri, threshold, offer);
    } else {
        search_families(&tok, &tri, threshold, max_checks, HEAVY_SHARE, offer);
    }
    best.into_lists()
        .into_iter()
        .map(|mut list| {
            list.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.1.cmp(&b.1.1)));
            list.into_iter().map(|(sim, (j, _))| (j, sim)).collect()
        })
        .collect()
}

/// [`strongest_pairs`] with `max_checks` exact checks per text (None:
/// every candidate, so each text's partners are exactly its best).
fn strongest_pairs_checking(
    texts: &[&str],
    threshold: f64,
    per_text: usize,
    max_checks: Option<usize>,
) -> Vec<(usize, usize, f64)> {
    let mut out: Vec<(usize, usize, f64)> = partner_lists(texts, threshold, per_text, max_checks)
        .into_iter()
        .enumerate()
        .flat_map(|(i, list)| {
            list.into_iter()
                .map(move |(j, sim)| (i.min(j as usize), i.max(j as usize), sim))
        })
        .collect();
    out.sort_by_key(|p| (p.0, p.1));
    out.dedup_by(|a, b| (a.0, a.1) == (b.0, b.1));
    out
}

/// An element with more than `1 / HEAVY_SHARE` of the texts in its index
/// is counted from a bitset (see [`super::dense_counts`]) when the exact
/// checks are capped. On the 37k distinct triggers of 100k `agents`
/// lessons, natively: lists only 15.4 s, 1/8 10.3 s, 1/16 7.4 s, 1/32
/// 5.6–6.6 s, 1/64 6.3 s; the made-up-word text has no such element.
const HEAVY_SHARE: usize = 32;

/// Calls `found(i, j, sim)` (i < j) for every pair with `text_sim ≥
/// threshold`, in no particular order, until it returns false.
///
/// With `max_checks`, at most that many earlier texts are checked exactly
/// against each text: those sharing the most of its probing prefix (its
/// rarest elements), the earliest in the search's order on a tie. Where a
/// phrase is shared by thousands of texts every pair passes the filters
/// and exact checks make the pass quadratic in time; the cap keeps it
/// near-linear and is what [`strongest_pairs`] uses, since a text's
/// strongest partners share the most of its rare elements.
fn for_each_similar_pair(
    texts: &[&str],
    threshold: f64,
    max_checks: Option<usize>,
    found: impl FnMut(usize, usize, f64) -> bool,
) {
    for_each_similar_pair_counting(texts, threshold, max_checks, HEAVY_SHARE, found)
}

/// [`for_each_similar_pair`], with the elements in more than `1 / share`
/// of the texts' indexes counted from bitsets (none when 0; only with
/// `max_checks`, where a text need not meet every text sharing an element).
fn for_each_similar_pair_counting(
    texts: &[&str],
    threshold: f64,
    max_checks: Option<usize>,
    share: usize,
    found: impl FnMut(usize, usize, f64) -> bool,
) {
    let (tok, tri) = families(texts, threshold);
    search_families(&tok, &tri, threshold, max_checks, share, found)
}

/// [`for_each_similar_pair_counting`] over the texts' families.
fn search_families(
    tok: &Family,
    tri: &Family,
    threshold: f64,
    max_checks: Option<usize>,
    share: usize,
    mut found: impl FnMut(usize, usize, f64) -> bool,
) {
    let n = tok.len.len();
    if threshold <= 0.0 {
        // every pair qualifies, sharing an element or not
        for x in 0..n {
            for y in x + 1..n {
                if !found(x, y, 0.5 * tok.jaccard(x, y) + 0.5 * tri.jaccard(x, y)) {
                    return;
                }
            }
        }
        return;
    }
    // texts are named by their place in this order from here on
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|&i| (tri.len[i as usize], i));
    let text = |place: u32| order[place as usize] as usize;
    // without a cap every text sharing an element is checked anyway
    let share = if max_checks.is_some() { share } else { 0 };
    let heavy = [
        Heavy::new(tok.universe, n, share, |p| tok.probe_prefix(text(p as u32))),
        Heavy::new(tri.universe, n, share, |p| tri.index_prefix(text(p as u32))),
    ];

    // each element's texts so far: tokens by their probing prefix, which
    // holds whatever the order; trigrams by the shorter one the size order
    // allows, and from `tri_start` on (those before are too small for
    // every text still to come); heavy elements by their bitsets instead
    let mut tok_index: Vec<Vec<u32>> = vec![Vec::new(); tok.universe];
    let mut tri_index: Vec<Vec<u32>> = vec![Vec::new(); tri.universe];
    let mut tri_start: Vec<usize> = vec![0; tri.universe];
    // each text's elements marked once for all its checks (see `Marked`)
    let mut marks = Marked::new(tok, tri);
    // listed prefix elements each earlier text shares with the current
    // one, per family
    let mut hits: Vec<[u16; 2]> = vec![[0, 0]; n];
    let mut touched: Vec<u32> = Vec::new();
    let mut marked: Vec<u64> = vec![0; n.div_ceil(64)];
    let mut counts = SlicedCounts::default();
    let mut chosen: Vec<(u32, [u16; 2])> = Vec::new();
    for place in 0..n as u32 {
        let xu = text(place);
        let need = [tok.least_hits(xu), tri.least_hits(xu)];
        let too_small = tri.min_partner(tri.len[xu]);
        // the first place whose trigram set is large enough to pair
        let tri_from =
            order[..place as usize].partition_point(|&y| tri.len[y as usize] < too_small);
        let mut dense: [Vec<&[u64]>; 2] = [Vec::new(), Vec::new()];
        for &e in tok.probe_prefix(xu) {
            if let Some(bits) = heavy[0].bitset(e) {
                dense[0].push(bits);
                continue;
            }
            for &y in &tok_index[e as usize] {
                let h = &mut hits[y as usize];
                if *h == [0, 0] {
                    touched.push(y);
                }
                h[0] = h[0].saturating_add(1);
            }
        }
        for &e in tri.probe_prefix(xu) {
            if let Some(bits) = heavy[1].bitset(e) {
                dense[1].push(bits);
                continue;
            }
            let list = &tri_index[e as usize];
            let start = &mut tri_start[e as usize];
            while *start < list.len() && tri.len[text(list[*start])] < too_small {
                *start += 1;
            }
            for &y in &list[*start..] {
                let h = &mut hits[y as usize];
                if *h == [0, 0] {
                    touched.push(y);
                }
                h[1] = h[1].saturating_add(1);
            }
        }
        chosen.clear();
        if dense[0].is_empty() && dense[1].is_empty() {
            if let Some(cap) = max_checks.filter(|&c| touched.len() > c) {
                // the most shared prefix elements first; ties to the
                // earlier place
                let key = |y: &u32| {
                    let [ht, hg] = hits[*y as usize];
                    (std::cmp::Reverse(u32::from(ht) + u32::from(hg)), *y)
                };
                touched.select_nth_unstable_by_key(cap, key);
                for &y in &touched[cap..] {
                    hits[y as usize] = [0, 0];
                }
                touched.truncate(cap);
            }
            chosen.extend(
                touched
                    .iter()
                    .map(|&y| (y, std::mem::take(&mut hits[y as usize]))),
            );
        } else {
            let inputs: Vec<(&[u64], usize)> = dense[0]
                .iter()
                .map(|&b| (b, 0))
                .chain(dense[1].iter().map(|&b| (b, tri_from)))
                .collect();
            counts.count(place as usize, &inputs);
            let cap = max_checks.expect("bitsets only with a cap");
            choose_with_dense(&counts, &mut hits, &touched, &mut marked, cap, &mut chosen);
            for (y, h) in chosen.iter_mut() {
                // the heavy elements' share, family by family
                let y = *y as usize;
                let tok_dense = dense[0].iter().filter(|b| holds(b, y)).count();
                let tri_dense = if y >= tri_from {
                    dense[1].iter().filter(|b| holds(b, y)).count()
                } else {
                    0
                };
                h[0] = h[0].saturating_add(tok_dense as u16);
                h[1] = h[1].saturating_add(tri_dense as u16);
            }
        }
        touched.clear();
        // checked by place, so what is found, and in which order, does
        // not depend on how the shares were counted
        chosen.sort_unstable_by_key(|c| c.0);
        for &(y, hits) in &chosen {
            let yu = text(y);
            // the filters read counts past 255 as 255 (see `Family::bound`)
            let [ht, hg] = hits.map(|h| h.min(255) as u8);
            let proposed = (ht >= need[0] && tok.proposes(xu, yu, ht))
                || (hg >= need[1] && tri.proposes(xu, yu, hg));
            // and both families together must be able to reach the
            // threshold (margin as in `jaccard_reaching`)
            if !proposed
                || 0.5 * tok.bound(xu, yu, ht, Family::probe_len)
                    + 0.5 * tri.bound(xu, yu, hg, Family::index_len)
                    < threshold - 1e-6
            {
                continue;
            }
            marks.mark(xu);
            if let Some(sim) = marks.sim_reaching(yu, threshold)
                && !found(xu.min(yu), xu.max(yu), sim)
            {
                return;
            }
        }
        for &e in tok.probe_prefix(xu) {
            if heavy[0].bitset(e).is_none() {
                tok_index[e as usize].push(place);
            }
        }
        for &e in tri.index_prefix(xu) {
            if heavy[1].bitset(e).is_none() {
                tri_index[e as usize].push(place);
            }
        }
    }
}

/// Calls `found(i, j, sim)` (i < j) for the pairs with `text_sim ≥
/// threshold` among the texts' sorted neighbours
/// ([`super::neighbours::neighbour_pairs`] over their tokens and
/// trigrams), in order, until it returns false: a fixed number of exact
/// checks per text however many texts share an element.
fn for_each_neighbour_pair(
    tok: &Family,
    tri: &Family,
    threshold: f64,
    mut found: impl FnMut(usize, usize, f64) -> bool,
) {
    let pairs = neighbour_pairs(tok.len.len(), |i, add| {
        tok.sets[i].iter().for_each(|&e| add(u64::from(e) << 1));
        tri.sets[i].iter().for_each(|&e| add(u64::from(e) << 1 | 1));
    });
    // pairs come sorted, so each text's pairs come together: its elements
    // are marked once and each partner's counted against the marks
    let mut marked = Marked::new(tok, tri);
    for (x, y) in pairs {
        let (x, y) = (x as usize, y as usize);
        marked.mark(x);
        if let Some(sim) = marked.sim_reaching(y, threshold)
            && !found(x, y, sim)
        {
            return;
        }
    }
}

/// One text's elements marked in each family, so that its shared count
/// with another text is a sum over that text's elements rather than a
/// merge of two sorted lists, which branches on every step: checking the
/// 3.0M neighbour pairs of 100k `agents` lessons in the sandbox took 2.4 s
/// by merging and 1.3 s this way, the offers of the pairs found included
/// (session 35; in the git history of docs/BENCHMARKS.md).
struct Marked<'a> {
    tok: &'a Family,
    tri: &'a Family,
    tok_marks: Vec<u8>,
    tri_marks: Vec<u8>,
    /// The text marked, if any.
    text: Option<usize>,
}

impl<'a> Marked<'a> {
    fn new(tok: &'a Family, tri: &'a Family) -> Marked<'a> {
        Marked {
            tok,
            tri,
            tok_marks: vec![0; tok.universe],
            tri_marks: vec![0; tri.universe],
            text: None,
        }
    }

    /// Marks text `x`'s elements (and unmarks the last text's).
    fn mark(&mut self, x: usize) {
        if self.text == Some(x) {
            return;
        }
        let sets = [
            (self.tok, &mut self.tok_marks),
            (self.tri, &mut self.tri_marks),
        ];
        for (family, marks) in sets {
            if let Some(last) = self.text {
                family.sets[last]
                    .iter()
                    .for_each(|&e| marks[e as usize] = 0);
            }
            family.sets[x].iter().for_each(|&e| marks[e as usize] = 1);
        }
        self.text = Some(x);
    }

    /// `text_sim` of the marked text and `y`, when it reaches `threshold`
    /// (the trigram count stops once it cannot).
    fn sim_reaching(&self, y: usize, threshold: f64) -> Option<f64> {
        let x = self.text.expect("a text is marked");
        // the tokens are counted whole: a need of 0 never stops early
        let tokens = count_reaching(&self.tok.sets[y], &self.tok_marks, 0)?;
        let jt = jaccard_counts(self.tok.sets[x].len(), self.tok.sets[y].len(), tokens);
        let (a, b) = (self.tri.sets[x].len(), self.tri.sets[y].len());
        let need = Family::shared_needed(a, b, 2.0 * threshold - jt);
        let shared = count_reaching(&self.tri.sets[y], &self.tri_marks, need)?;
        let sim = 0.5 * jt + 0.5 * jaccard_counts(a, b, shared);
        (sim >= threshold).then_some(sim)
    }
}

/// The marked elements of `set`, or `None` once the rest of it cannot
/// bring the count to `need` (checked once a block of eight, not once
/// an element).
fn count_reaching(set: &[u32], marks: &[u8], need: usize) -> Option<usize> {
    let mut n = 0;
    let mut left = set.len();
    for block in set.chunks(8) {
        if n + left < need {
            return None;
        }
        n += block
            .iter()
            .map(|&e| usize::from(marks[e as usize]))
            .sum::<usize>();
        left -= block.len();
    }
    (n >= need).then_some(n)
}

/// The `cap` earlier places sharing the most prefix elements (ties to the
/// earlier place), or every place sharing one when there are no more:
/// each with its listed hits (taken out of `hits`). A place's share is
/// its listed hits (`touched`) plus its heavy count (`counts`).
fn choose_with_dense(
    counts: &SlicedCounts,
    hits: &mut [[u16; 2]],
    touched: &[u32],
    marked: &mut [u64],
    cap: usize,
    chosen: &mut Vec<(u32, [u16; 2])>,
) {
    let total = |y: u32, h: [u16; 2]| u32::from(h[0]) + u32::from(h[1]) + counts.of(y as usize);
    for &y in touched {
        marked[y as usize / 64] |= 1 << (y % 64);
    }
    // the strongest `cap` so far, weakest on top: (total, place) with the
    // larger place the weaker on a tie
    let mut best: std::collections::BinaryHeap<(std::cmp::Reverse<u32>, u32)> =
        std::collections::BinaryHeap::with_capacity(cap + 1);
    let offer = |best: &mut std::collections::BinaryHeap<_>, t: u32, y: u32| {
        if t == 0 {
            return;
        }
        if let Some(&(std::cmp::Reverse(wt), wy)) = best.peek().filter(|_| best.len() == cap)
            && (t < wt || (t == wt && y > wy))
        {
            return;
        }
        best.push((std::cmp::Reverse(t), y));
        if best.len() > cap {
            best.pop();
        }
    };
    for &y in touched {
        offer(&mut best, total(y, hits[y as usize]), y);
    }
    // then the places only heavy elements reach, a word at a time, each
    // word only for the places that can enter
    for (w, &marks) in marked.iter().enumerate().take(counts.words()) {
        // a full list takes a count equal to its weakest only from an
        // earlier place, and these places are all later than one before
        // this word
        let floor = match best.peek() {
            Some(&(std::cmp::Reverse(t), y)) if best.len() == cap => {
                t + u32::from((y as usize) < w * 64)
            }
            _ => 1,
        };
        let mut lanes = counts.at_least(w, floor) & !marks;
        while lanes != 0 {
            let y = (w * 64) as u32 + lanes.trailing_zeros();
            lanes &= lanes - 1;
            offer(&mut best, counts.of(y as usize), y);
        }
    }
    for &y in touched {
        marked[y as usize / 64] &= !(1 << (y % 64));
    }
    chosen.extend(best.into_iter().map(|(_, y)| (y, hits[y as usize])));
    for &y in touched {
        hits[y as usize] = [0, 0];
    }
}

/// One family's sets (tokens or trigrams) with its share `theta` of the
/// threshold.
struct Family {
    /// Each set as sorted element ids, where ids are ranks in the global
    /// order (rarest first): sorted for exact Jaccard by merging, and its
    /// prefix is its head.
    sets: Vec<Vec<u32>>,
    /// Each set's size, apart so the hot loop reads one small array.
    len: Vec<u32>,
    universe: usize,
    theta: f64,
}

/// Calls its callback with each element of one family in a text.
type Walk = fn(&str, &mut dyn FnMut(&str));

/// `⌈v⌉`, a hair low so floating error never raises a bound that must
/// hold (a lower one only lets more pairs through to the exact check).
fn ceil_down(v: f64) -> usize {
    (v - 1e-9).ceil().max(0.0) as usize
}

impl Family {
    /// The sets `each` walks the elements of (repeats allowed).
    fn new(texts: &[&str], each: Walk, theta: f64) -> Family {
        // ids in order of first sight, then ranks; an empty set gets an
        // element of its own, reserved here (it is no text's element)
        let mut first_seen: HashMap<Box<str>, u32> = HashMap::new();
        let empty = 0;
        let mut df: Vec<u32> = vec![0];
        let mut sets: Vec<Vec<u32>> = texts
            .iter()
            .map(|text| {
                let mut set = Vec::new();
                each(text, &mut |e| {
                    let id = match first_seen.get(e) {
                        Some(&id) => id,
                        None => {
                            let id = df.len() as u32;
                            first_seen.insert(e.into(), id);
                            df.push(0);
                            id
                        }
                    };
                    set.push(id);
                });
                set.sort_unstable();
                set.dedup();
                if set.is_empty() {
                    set.push(empty);
                }
                for &id in &set {
                    df[id as usize] += 1;
                }
                set
            })
            .collect();
        drop(first_seen);
        let mut by_rarity: Vec<u32> = (0..df.len() as u32).collect();
        by_rarity.sort_unstable_by_key(|&id| (df[id as usize], id));
        let mut rank = vec![0u32; df.len()];
        for (r, &id) in by_rarity.iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        for set in &mut sets {
            for id in set.iter_mut() {
                *id = rank[*id as usize];
            }
            set.sort_unstable();
        }
        Family {
            len: sets.iter().map(|s| s.len() as u32).collect(),
            sets,
            universe: df.len(),
            theta,
        }
    }

    /// How many of a set's `len` elements go in a prefix that holds the
    /// `K` smallest shared elements of any qualifying pair, when `b·len`
    /// bounds such a pair's overlap from below; none when `θ > 1` (no pair
    /// can qualify).
    fn prefix_len(&self, len: u32, b: f64) -> u32 {
        if self.theta > 1.0 {
            return 0;
        }
        (len - (ceil_down(b * len as f64) as u32).min(len) + K as u32).min(len)
    }

    /// The prefix length a set probes with: any partner shares `θ·len`.
    fn probe_len(&self, len: u32) -> u32 {
        self.prefix_len(len, self.theta)
    }

    /// The prefix length a set is indexed by when only sets at least as
    /// large probe it: those share `2θ/(1+θ)·len`.
    fn index_len(&self, len: u32) -> u32 {
        self.prefix_len(len, 2.0 * self.theta / (1.0 + self.theta))
    }

    fn probe_prefix(&self, i: usize) -> &[u32] {
        &self.sets[i][..self.probe_len(self.len[i]) as usize]
    }

    fn index_prefix(&self, i: usize) -> &[u32] {
        &self.sets[i][..self.index_len(self.len[i]) as usize]
    }

    /// The smallest set size a set of `len` elements can reach `θ` with.
    fn min_partner(&self, len: u32) -> u32 {
        ceil_down(self.theta * len as f64) as u32
    }

    /// The overlap `α` a pair of these sizes needs to reach `θ`.
    fn least_overlap(&self, a: u32, b: u32) -> usize {
        ceil_down(self.theta / (1.0 + self.theta) * (a + b) as f64)
    }

    /// The fewest shared prefix elements with which `x` and any partner
    /// (at least `min_partner` large) are proposed; more than `K` when the
    /// family can propose nothing.
    fn least_hits(&self, x: usize) -> u8 {
        if self.theta > 1.0 {
            return u8::MAX;
        }
        let a = self.len[x];
        self.least_overlap(a, self.min_partner(a)).clamp(1, K) as u8
    }

    /// Whether `x` and `y`, sharing `hits` elements of their prefixes, can
    /// reach `θ`.
    fn proposes(&self, x: usize, y: usize, hits: u8) -> bool {
        let (a, b) = (self.len[x], self.len[y]);
        hits > 0
            && a.min(b) >= self.min_partner(a.max(b))
            && hits as usize >= self.least_overlap(a, b).min(K)
    }

    /// The most Jaccard `x` (probing) and `y` (indexed by `y_len`) can
    /// have, sharing `hits` elements of those prefixes. Every shared
    /// element up to where the first of the two prefixes ends is counted,
    /// and the rest lie past it, so they are at most that set's remainder.
    fn bound(&self, x: usize, y: usize, hits: u8, y_len: fn(&Family, u32) -> u32) -> f64 {
        let (a, b) = (self.len[x], self.len[y]);
        // below the size filter the trigram lists skip `y`, so its count
        // says nothing, but then the sizes bound it
        let size = a.min(b) as f64 / a.max(b) as f64;
        if hits == u8::MAX || a.min(b) < self.min_partner(a.max(b)) {
            return size;
        }
        let rest = (a - self.probe_len(a)).max(b - y_len(self, b));
        let m = (hits as u32 + rest).min(a.min(b));
        jaccard_counts(a as usize, b as usize, m as usize)
    }

    fn jaccard(&self, x: usize, y: usize) -> f64 {
        let (a, b) = (&self.sets[x], &self.sets[y]);
        jaccard_counts(a.len(), b.len(), shared(a, b))
    }

    /// The Jaccard of `x` and `y`, or `None` once merging shows it stays
    /// below `goal` (then the pair cannot qualify; the bound is loosened
    /// by a margin far above floating error so it never drops one that
    /// the exact sum would keep).
    #[cfg(test)]
    fn jaccard_reaching(&self, x: usize, y: usize, goal: f64) -> Option<f64> {
        let (a, b) = (&self.sets[x], &self.sets[y]);
        let need = Family::shared_needed(a.len(), b.len(), goal);
        let m = super::similarity::shared_reaching(a, b, need)?;
        Some(jaccard_counts(a.len(), b.len(), m))
    }

    /// The least shared count at which sets of sizes `a` and `b` reach a
    /// Jaccard of `goal`, a hair low.
    fn shared_needed(a: usize, b: usize, goal: f64) -> usize {
        let goal = goal - 1e-6;
        if goal <= 0.0 {
            0
        } else {
            ceil_down(goal / (1.0 + goal) * (a + b) as f64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator, so the cases are the same each run.
    struct Draw(u64);

    impl Draw {
        fn below(&mut self, m: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) as usize % m
        }

        fn made_up_word(&mut self) -> String {
            (0..2 + self.below(6))
                .map(|_| (b'a' + self.below(26) as u8) as char)
                .collect()
        }
    }

    /// Texts that exercise each filter: short triggers over a small
    /// vocabulary (tokens shared widely, sizes varied for the size filter);
    /// the benchmark's made-up words in families with a word added or
    /// dropped (many trigrams, so the counted prefixes and the bounds
    /// decide); long near-copies (prefix counts past what a `u8` holds);
    /// and empty, punctuation-only, short and non-ASCII texts.
    fn corpus() -> Vec<String> {
        let words = [
            "trading",
            "prompt",
            "model",
            "claude",
            "gpt",
            "json",
            "output",
            "target",
            "xml",
            "tags",
            "reasoning",
            "futures",
            "crypto",
            "haiku",
            "user",
            "asks",
            "for",
            "the",
            "a",
            "valid",
        ];
        let mut draw = Draw(12345);
        let mut texts: Vec<String> = (0..300)
            .map(|_| {
                (0..2 + draw.below(5))
                    .map(|_| words[draw.below(words.len())])
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        for _ in 0..40 {
            let base: Vec<String> = (0..2 + draw.below(5))
                .map(|_| draw.made_up_word())
                .collect();
            for _ in 0..1 + draw.below(4) {
                let mut family = base.clone();
                match draw.below(3) {
                    0 => family.push(draw.made_up_word()),
                    1 if family.len() > 1 => {
                        family.remove(draw.below(family.len()));
                    }
                    _ => {}
                }
                texts.push(family.join(" "));
            }
        }
        let long: Vec<String> = (0..300).map(|_| draw.made_up_word()).collect();
        texts.push(long.join(" "));
        texts.push(long[..280].join(" "));
        texts.push(long[30..].join(" "));
        texts.push(long[..100].join(" "));
        for odd in [
            "",
            "",
            "   ",
            "!!",
            "?",
            "a",
            "ab",
            "AB",
            "a b",
            "é",
            "émigré café",
            "Émigré Café",
            "naïve",
            "x-y",
            "1 2 3",
        ] {
            texts.push(odd.to_string());
        }
        texts
    }

    #[test]
    fn finds_exactly_what_brute_force_finds() {
        let texts = corpus();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut all = vec![];
        for i in 0..refs.len() {
            for j in i + 1..refs.len() {
                all.push((i, j, text_sim(refs[i], refs[j])));
            }
        }
        for t in [0.0, 0.05, 0.18, 0.3, 0.45, 0.7, 0.9, 1.0] {
            let brute: Vec<_> = all.iter().copied().filter(|p| p.2 >= t).collect();
            // the same pairs, with the same similarity to the last bit
            assert_eq!(similar_pairs(&refs, t), brute, "threshold {t}");
        }
    }

    #[test]
    fn the_strongest_pairs_are_each_texts_best_partners_and_bounded() {
        let texts = corpus();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let t = 0.18;
        let all = similar_pairs(&refs, t);
        assert_eq!(similar_pair_count(&refs, t), all.len());
        for per_text in [1, 2, 3, 8] {
            let kept = strongest_pairs_checking(&refs, t, per_text, None);
            assert!(kept.len() <= refs.len() * per_text);
            // every kept pair is a real pair with its true similarity
            for p in &kept {
                assert!(all.contains(p), "{p:?}");
            }
            // each text keeps its per_text best partners (ties aside)
            for i in 0..refs.len() {
                let mut mine: Vec<f64> = all
                    .iter()
                    .filter(|p| p.0 == i || p.1 == i)
                    .map(|p| p.2)
                    .collect();
                mine.sort_by(|a, b| b.total_cmp(a));
                let kept_mine = kept.iter().filter(|p| p.0 == i || p.1 == i).count();
                assert!(kept_mine >= mine.len().min(per_text), "text {i}");
                if let Some(&cut) = mine.get(per_text.saturating_sub(1)) {
                    for p in all.iter().filter(|p| (p.0 == i || p.1 == i) && p.2 > cut) {
                        assert!(kept.contains(p), "text {i} lost {p:?}");
                    }
                }
            }
        }
        // with room for every partner nothing is lost
        assert_eq!(strongest_pairs(&refs, t, refs.len()), all);
        // with the exact checks capped (8 per partner kept), still true
        // pairs, still bounded, and nearly every text keeps its best partner
        for per_text in [1, 2, 4] {
            let kept = strongest_pairs(&refs, t, per_text);
            assert!(kept.len() <= refs.len() * per_text);
            assert!(kept.iter().all(|p| all.contains(p)));
            let (mut texts_with_partners, mut best_kept) = (0, 0);
            for i in 0..refs.len() {
                let best = all
                    .iter()
                    .filter(|p| p.0 == i || p.1 == i)
                    .map(|p| p.2)
                    .fold(f64::NAN, f64::max);
                if best.is_nan() {
                    continue;
                }
                texts_with_partners += 1;
                if kept.iter().any(|p| (p.0 == i || p.1 == i) && p.2 == best) {
                    best_kept += 1;
                }
            }
            assert!(
                best_kept * 10 >= texts_with_partners * 9,
                "per_text {per_text}: {best_kept} of {texts_with_partners} kept their best"
            );
        }
    }

    /// Texts repeated word for word (one action in thousands of lessons)
    /// are searched once: each text's partners are its twins, then the
    /// members of its best distinct partners, with the same similarities
    /// a search over every copy finds.
    #[test]
    fn identical_texts_partner_as_twins_first_then_their_best() {
        let corpus = corpus();
        let mut texts: Vec<&str> = vec![];
        for copy in 0..5 {
            for (d, text) in corpus.iter().enumerate() {
                if copy <= d % 5 {
                    texts.push(text);
                }
            }
        }
        let t = 0.18;
        for keep in [1, 3, 8] {
            let grouped = partner_lists(&texts, t, keep, None);
            let every_copy = distinct_partner_lists(&texts, t, keep, None);
            for (i, (got, want)) in grouped.iter().zip(&every_copy).enumerate() {
                for &(j, sim) in got {
                    assert_ne!(j as usize, i);
                    assert_eq!(sim, text_sim(texts[i], texts[j as usize]));
                }
                let sims = |list: &[(u32, f64)]| list.iter().map(|p| p.1).collect::<Vec<_>>();
                assert_eq!(sims(got), sims(want), "text {i}, keep {keep}");
                let twins = (0..texts.len())
                    .filter(|&j| j != i && texts[j] == texts[i])
                    .count();
                let first_twins = got
                    .iter()
                    .take_while(|&&(j, _)| texts[j as usize] == texts[i])
                    .count();
                assert_eq!(first_twins, twins.min(keep), "text {i}, keep {keep}");
            }
        }
    }

    /// A ledger where every trigger shares a phrase: the full pair list is
    /// quadratic, the strongest pairs are not, and each lesson still finds
    /// the lesson that differs from it in one word.
    /// `n` triggers of one phrase, five subjects in each repository.
    fn templated(n: usize) -> Vec<String> {
        let subjects = ["parser", "lexer", "scheduler", "ledger", "cache"];
        (0..n)
            .map(|i| {
                format!(
                    "editing the {} in repo r{} before the release",
                    subjects[i % subjects.len()],
                    i / subjects.len()
                )
            })
            .collect()
    }

    #[test]
    fn a_dense_ledgers_strongest_pairs_stay_linear() {
        let texts = templated(1500);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let t = 0.18;
        assert!(similar_pair_count(&refs, t) > 1_000_000);
        let kept = strongest_pairs(&refs, t, 16);
        assert!(kept.len() <= refs.len() * 16, "{}", kept.len());
        // each lesson still meets one of its most similar (checked exactly):
        // the same subject in another repo, one short word apart
        let exact = strongest_pairs_checking(&refs, t, 1, None);
        let best = |pairs: &[(usize, usize, f64)], i: usize| {
            pairs
                .iter()
                .filter(|p| p.0 == i || p.1 == i)
                .map(|p| p.2)
                .fold(0.0, f64::max)
        };
        let found = (0..refs.len())
            .filter(|&i| best(&kept, i) >= best(&exact, i) - 1e-9)
            .count();
        assert!(found * 10 >= refs.len() * 9, "{found} of {}", refs.len());
        let same_subject = kept.iter().filter(|p| p.0 % 5 == p.1 % 5).count();
        assert!(same_subject * 10 >= kept.len() * 9, "{same_subject}");
    }

    /// The generated `agents` lessons' triggers.
    fn agent_triggers(n: usize) -> Vec<String> {
        crate::ledger::synthetic::agent_lessons(n)
            .into_iter()
            .map(|l| l.when)
            .collect()
    }

    /// Each text once, in first-seen order.
    fn distinct(texts: &[String]) -> Vec<&str> {
        let mut seen = std::collections::HashSet::new();
        texts
            .iter()
            .map(String::as_str)
            .filter(|w| seen.insert(*w))
            .collect()
    }

    /// Each text's best partners by brute force over the families, as
    /// similarities, strongest first.
    fn best_by_brute_force(tok: &Family, tri: &Family, t: f64, keep: usize) -> Vec<Vec<f64>> {
        let n = tok.len.len();
        let mut best: Strongest<f64, u32> = Strongest::new(n, keep);
        for x in 0..n {
            for y in x + 1..n {
                let sim = 0.5 * tok.jaccard(x, y) + 0.5 * tri.jaccard(x, y);
                if sim >= t {
                    best.offer(x, sim, y as u32);
                    best.offer(y, sim, x as u32);
                }
            }
        }
        sorted_scores(best)
    }

    fn sorted_scores(best: Strongest<f64, u32>) -> Vec<Vec<f64>> {
        best.into_lists()
            .into_iter()
            .map(|list| {
                let mut s: Vec<f64> = list.into_iter().map(|(sim, _)| sim).collect();
                s.sort_by(|a, b| b.total_cmp(a));
                s
            })
            .collect()
    }

    /// On templated triggers, where counting shared prefix elements reads
    /// long lists, the sorted neighbourhoods still give nearly every text
    /// its best partners: of each text's 8 best similarities (by brute
    /// force), the k-th strongest found reaches the true k-th for nine in
    /// ten, and what is missed is a partner nearly as similar.
    #[test]
    fn sorted_neighbours_find_nearly_each_texts_best_partners() {
        let whens = agent_triggers(6000);
        let refs = distinct(&whens);
        let (t, keep) = (0.18, 8);
        let (tok, tri) = families(&refs, t);
        let exact = best_by_brute_force(&tok, &tri, t, keep);
        let mut near: Strongest<f64, u32> = Strongest::new(refs.len(), keep);
        for_each_neighbour_pair(&tok, &tri, t, |x, y, sim| {
            near.offer(x, sim, y as u32);
            near.offer(y, sim, x as u32);
            true
        });
        let near = sorted_scores(near);
        let (mut places, mut reached, mut sum_exact, mut sum_near) = (0, 0, 0.0, 0.0);
        for (e, g) in exact.iter().zip(&near) {
            for (k, &sim) in e.iter().enumerate() {
                places += 1;
                sum_exact += sim;
                let got = g.get(k).copied().unwrap_or(0.0);
                sum_near += got;
                reached += usize::from(got >= sim - 1e-9);
            }
        }
        assert!(places > refs.len() * 7, "{places} places of {}", refs.len());
        assert!(reached * 10 >= places * 9, "{reached} of {places}");
        assert!(sum_near >= 0.99 * sum_exact, "{sum_near} of {sum_exact}");
    }

    /// `text_sim` of texts `x` and `y` by merging their sorted sets, when
    /// it reaches `threshold`: what the marked checks must equal.
    fn sim_reaching(tok: &Family, tri: &Family, x: usize, y: usize, threshold: f64) -> Option<f64> {
        let jt = tok.jaccard(x, y);
        let jg = tri.jaccard_reaching(x, y, 2.0 * threshold - jt)?;
        let sim = 0.5 * jt + 0.5 * jg;
        (sim >= threshold).then_some(sim)
    }

    /// Counting a text's shared elements against marks gives what merging
    /// the sorted sets gives, to the bit, pass or fail, whichever text of
    /// a run of pairs comes first.
    #[test]
    fn marked_checks_are_the_merged_checks() {
        for texts in [corpus(), agent_triggers(3000), templated(400)] {
            let refs = distinct(&texts);
            let (mut kept, mut checked) = (0, 0);
            for t in [0.18, 0.45, 0.9] {
                let (tok, tri) = families(&refs, t);
                let mut marked = Marked::new(&tok, &tri);
                for x in (0..refs.len()).step_by(7) {
                    for y in (0..refs.len()).step_by(3) {
                        marked.mark(x);
                        let want = sim_reaching(&tok, &tri, x, y, t);
                        let got = marked.sim_reaching(y, t);
                        assert_eq!(
                            got.map(f64::to_bits),
                            want.map(f64::to_bits),
                            "{x} {y} at {t}"
                        );
                        checked += 1;
                        kept += usize::from(got.is_some());
                    }
                }
            }
            // both outcomes are exercised
            assert!(kept > 0 && kept < checked, "{kept} of {checked}");
        }
    }

    /// The counting search's scan is what tells dense text from sparse:
    /// 100k generated `agents` triggers pass the bar, 100k lessons in
    /// families of made-up words stay far under it.
    #[test]
    fn templated_triggers_scan_past_the_bar_and_made_up_words_do_not() {
        let scan = |whens: Vec<String>| {
            let refs = distinct(&whens);
            assert!(refs.len() > NEIGHBOURS_FROM);
            let (tok, tri) = families(&refs, 0.18);
            scan_per_text(&tok, &tri)
        };
        let agents = scan(agent_triggers(100_000));
        let made_up = scan(
            crate::ledger::synthetic::lessons(100_000)
                .into_iter()
                .map(|l| l.when)
                .collect(),
        );
        assert!(agents > DENSE_SCAN, "{agents}");
        assert!(made_up * 16 < DENSE_SCAN, "{made_up}");
    }

    /// Counting the elements most texts hold from bitsets chooses the
    /// same texts to check as counting them from lists, and checks them
    /// in the same order: only the time differs.
    #[test]
    fn bitset_counts_choose_what_list_counts_choose() {
        for texts in [corpus(), agent_triggers(3000), templated(800)] {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            for cap in [1, 8, 128] {
                let found = |share: usize| {
                    let mut out = vec![];
                    for_each_similar_pair_counting(&refs, 0.18, Some(cap), share, |i, j, s| {
                        out.push((i, j, s));
                        true
                    });
                    out
                };
                let lists = found(0);
                assert!(!lists.is_empty());
                for share in [2, HEAVY_SHARE, refs.len()] {
                    assert!(found(share) == lists, "cap {cap}, share {share}");
                }
            }
        }
    }

    /// The filters one at a time, on every pair of many small sets over a
    /// small vocabulary (so Jaccard values fall on and around each `θ`):
    /// each is a necessary condition of `J ≥ θ`.
    #[test]
    fn each_filter_keeps_every_pair_at_or_above_theta() {
        let mut draw = Draw(7);
        let texts: Vec<String> = (0..400)
            .map(|_| {
                (0..draw.below(16))
                    .map(|_| format!("w{}", draw.below(24)))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let common = |a: &[u32], b: &[u32]| shared(a, b) as u32;
        for step in 1..20 {
            let family = Family::new(&refs, |t, f| each_token(t, f), step as f64 * 0.05);
            for x in 0..refs.len() {
                for y in 0..refs.len() {
                    let j = family.jaccard(x, y);
                    if x == y || j < family.theta {
                        continue;
                    }
                    let (a, b) = (family.len[x], family.len[y]);
                    let alpha = family.least_overlap(a, b).min(K) as u32;
                    assert!(a.min(b) >= family.min_partner(a.max(b)));
                    assert!(family.least_hits(x) as u32 <= alpha.max(1));
                    let probed = common(family.probe_prefix(x), family.probe_prefix(y));
                    assert!(probed >= alpha, "{x} {y} θ {}", family.theta);
                    assert!(family.proposes(x, y, probed as u8));
                    assert!(family.bound(x, y, probed as u8, Family::probe_len) >= j);
                    if b <= a {
                        let indexed = common(family.probe_prefix(x), family.index_prefix(y));
                        assert!(indexed >= alpha, "{x} {y} θ {}", family.theta);
                        assert!(family.bound(x, y, indexed as u8, Family::index_len) >= j);
                    }
                    assert_eq!(family.jaccard_reaching(x, y, j), Some(j));
                }
            }
        }
    }
}
