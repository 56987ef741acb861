//! Candidate pairs for the sleep pass without comparing every pair.
//!
//! `text_sim = (J_tokens + J_trigrams) / 2 ≥ t` needs `J_tokens ≥ x` or
//! `J_trigrams ≥ 2t − x`, for any split `x`. silt takes `x = t/2`: short
//! triggers keep every token in their prefix either way, and trigrams (a
//! small alphabet, so each is shared widely) get the stricter threshold.
//! Pairs of sets with Jaccard ≥ t always share an element
//! among the first `|x| − ⌈t·|x|⌉ + 1` elements of each set when elements
//! are ordered by a global order (prefix filtering, as in PPJoin). Ordering
//! by rarity keeps those prefixes made of rare tokens, so the pairs probed
//! are few; each is then checked exactly. No pair at or above `t` is missed.

use std::collections::{HashMap, HashSet};

#[cfg(test)]
use super::similarity::text_sim;
use super::similarity::{jaccard_counts, shared, tokens, trigrams};

/// Pairs (i < j) of `texts` with `text_sim ≥ threshold`, with their
/// similarity, sorted by (i, j).
///
/// Memory stays linear in the input plus the output: candidates for each
/// text are gathered with a stamp array rather than a set of all pairs, and
/// verified at once from precomputed sets.
pub fn similar_pairs(texts: &[&str], threshold: f64) -> Vec<(usize, usize, f64)> {
    let token_sets: Vec<HashSet<String>> = texts.iter().map(|t| tokens(t)).collect();
    let trigram_sets: Vec<HashSet<String>> = texts.iter().map(|t| trigrams(t)).collect();
    let (token_ids, token_prefixes) = ranked(&token_sets, threshold / 2.0);
    let (trigram_ids, trigram_prefixes) = ranked(&trigram_sets, threshold * 1.5);
    drop((token_sets, trigram_sets));
    let jaccard = |a: &[u32], b: &[u32]| jaccard_counts(a.len(), b.len(), shared(a, b));
    let mut index: HashMap<(bool, u32), Vec<u32>> = HashMap::new();
    let mut stamp: Vec<u32> = vec![u32::MAX; texts.len()];
    let mut out = Vec::new();
    let mut probe: Vec<u32> = Vec::new();
    for i in 0..texts.len() {
        probe.clear();
        for (family, prefix) in [(false, &token_prefixes[i]), (true, &trigram_prefixes[i])] {
            for &e in prefix {
                let seen = index.entry((family, e)).or_default();
                for &j in seen.iter() {
                    if stamp[j as usize] != i as u32 {
                        stamp[j as usize] = i as u32;
                        probe.push(j);
                    }
                }
                seen.push(i as u32);
            }
        }
        for &j in &probe {
            let j = j as usize;
            let sim = 0.5 * jaccard(&token_ids[i], &token_ids[j])
                + 0.5 * jaccard(&trigram_ids[i], &trigram_ids[j]);
            if sim >= threshold {
                out.push((j, i, sim));
            }
        }
    }
    out.sort_by_key(|&(i, j, _)| (i, j));
    out
}

/// Each set as sorted element ids (for exact Jaccard by merging), and its
/// prefix under a global rarity order: two sets with Jaccard ≥ t share at
/// least one element of their prefixes. An empty set's prefix is the id
/// reserved for "empty" (empty sets are Jaccard 1).
fn ranked(sets: &[HashSet<String>], t: f64) -> (Vec<Vec<u32>>, Vec<Vec<u32>>) {
    let mut ids: HashMap<&str, u32> = HashMap::new();
    let mut df: Vec<u32> = vec![0];
    for s in sets {
        for e in s {
            let next = df.len() as u32;
            let id = *ids.entry(e.as_str()).or_insert_with(|| {
                df.push(0);
                next
            });
            df[id as usize] += 1;
        }
    }
    sets.iter()
        .map(|s| {
            let mut sorted: Vec<u32> = s.iter().map(|e| ids[e.as_str()]).collect();
            sorted.sort_unstable();
            if s.is_empty() {
                return (sorted, vec![0]);
            }
            let mut ordered = sorted.clone();
            ordered.sort_by_key(|&id| (df[id as usize], id));
            let n = ordered.len();
            // the smallest overlap Jaccard ≥ t allows, rounded down a hair so
            // floating error never shortens a prefix (a longer one only costs
            // probes); above 1 nothing qualifies
            let overlap = (t * n as f64 - 1e-9).ceil().max(0.0) as usize;
            let keep = (n + 1).saturating_sub(overlap);
            ordered.truncate(keep.min(n));
            (sorted, ordered)
        })
        .unzip()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(texts: &[&str], t: f64) -> Vec<(usize, usize)> {
        let mut out = vec![];
        for i in 0..texts.len() {
            for j in i + 1..texts.len() {
                if text_sim(texts[i], texts[j]) >= t {
                    out.push((i, j));
                }
            }
        }
        out
    }

    #[test]
    fn finds_exactly_what_brute_force_finds() {
        // deterministic pseudo-random triggers over a small vocabulary
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
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        let texts: Vec<String> = (0..300)
            .map(|_| {
                (0..2 + next() % 5)
                    .map(|_| words[next() % words.len()])
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        for t in [0.18, 0.3, 0.45, 0.7, 0.9] {
            let fast: Vec<(usize, usize)> = similar_pairs(&refs, t)
                .into_iter()
                .map(|(i, j, _)| (i, j))
                .collect();
            assert_eq!(fast, brute(&refs, t), "threshold {t}");
        }
    }
}
