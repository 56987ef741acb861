//! Candidate pairs for the sleep pass without comparing every pair.
//!
//! `text_sim = (J_tokens + J_trigrams) / 2 ≥ t` needs `J_tokens ≥ t` or
//! `J_trigrams ≥ t`. Pairs of sets with Jaccard ≥ t always share an element
//! among the first `|x| − ⌈t·|x|⌉ + 1` elements of each set when elements
//! are ordered by a global order (prefix filtering, as in PPJoin). Ordering
//! by rarity keeps those prefixes made of rare tokens, so the pairs probed
//! are few; each is then checked exactly. No pair at or above `t` is missed.

use std::collections::{HashMap, HashSet};

use super::similarity::{text_sim, tokens, trigrams};

/// Pairs (i < j) of `texts` with `text_sim ≥ threshold`, with their
/// similarity, sorted by (i, j).
pub fn similar_pairs(texts: &[&str], threshold: f64) -> Vec<(usize, usize, f64)> {
    let token_sets: Vec<HashSet<String>> = texts.iter().map(|t| tokens(t)).collect();
    let trigram_sets: Vec<HashSet<String>> = texts.iter().map(|t| trigrams(t)).collect();
    let mut probe: HashSet<(usize, usize)> = HashSet::new();
    for sets in [&token_sets, &trigram_sets] {
        probe.extend(prefix_candidates(sets, threshold));
    }
    let mut out: Vec<(usize, usize, f64)> = probe
        .into_iter()
        .filter_map(|(i, j)| {
            let s = text_sim(texts[i], texts[j]);
            (s >= threshold).then_some((i, j, s))
        })
        .collect();
    out.sort_by_key(|&(i, j, _)| (i, j));
    out
}

/// Pairs that could reach Jaccard ≥ t (a superset of those that do).
fn prefix_candidates(sets: &[HashSet<String>], t: f64) -> HashSet<(usize, usize)> {
    let mut df: HashMap<&str, usize> = HashMap::new();
    for s in sets {
        for e in s {
            *df.entry(e.as_str()).or_default() += 1;
        }
    }
    let mut index: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut pairs = HashSet::new();
    for (i, s) in sets.iter().enumerate() {
        let mut ordered: Vec<&str> = s.iter().map(String::as_str).collect();
        ordered.sort_by(|a, b| df[a].cmp(&df[b]).then(a.cmp(b)));
        // An empty set has Jaccard 1 with another empty set: keep it probed.
        let prefix = if ordered.is_empty() {
            vec![""]
        } else {
            let n = ordered.len();
            let keep = n - (t * n as f64).ceil() as usize + 1;
            ordered[..keep.min(n)].to_vec()
        };
        for e in prefix {
            let seen = index.entry(e).or_default();
            for &j in seen.iter() {
                pairs.insert((j, i));
            }
            seen.push(i);
        }
    }
    pairs
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
        for t in [0.18, 0.45, 0.7] {
            let fast: Vec<(usize, usize)> = similar_pairs(&refs, t)
                .into_iter()
                .map(|(i, j, _)| (i, j))
                .collect();
            assert_eq!(fast, brute(&refs, t), "threshold {t}");
        }
    }
}
