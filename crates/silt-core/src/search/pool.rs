//! The candidate pool: every variant's hits interleaved rank by rank,
//! de-duplicated by canonical URL and cut to the pool's depth.

use super::canonical::canonical_url;

/// The deepest pool reranked.
pub const MAX_DEPTH: u32 = 50;
/// The fewest hits a variant asks for.
pub const MIN_PER_VARIANT: u32 = 10;

/// One search result as a backend returns it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Hit {
    /// The page's URL, as the backend gave it.
    pub url: String,
    /// The page's title (transcribed by the model for a CLI's written list).
    pub title: String,
    /// A short excerpt of the page; empty when the backend gives none.
    pub snippet: String,
    /// The upstream engines that returned it (SearXNG), else empty.
    pub engines: Vec<String>,
    /// When the page was published, where the backend knows.
    pub published: Option<String>,
}

impl Hit {
    /// What the reranking judge reads.
    pub fn candidate_text(&self) -> String {
        format!("{} — {} — {}", self.title, self.url, self.snippet)
    }
}

/// The pool's depth: `depth` capped at 50 and never below `top_k`.
pub fn pool_depth(depth: u32, top_k: u32) -> u32 {
    depth.min(MAX_DEPTH).max(top_k)
}

/// How many hits each variant asks for: an even share of the pool, at
/// least 10; with a paging backend the original (first) variant asks for
/// the whole pool, since another page costs less than another variant.
pub fn hits_requested(depth: u32, variants: usize, paging: bool) -> Vec<u32> {
    let n = variants.max(1) as u32;
    let share = depth.div_ceil(n).max(MIN_PER_VARIANT);
    (0..n)
        .map(|i| if paging && i == 0 { depth } else { share })
        .collect()
}

/// The merged pool and its counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Pool {
    /// The pool, interleaved, de-duplicated and cut to depth.
    pub hits: Vec<Hit>,
    /// Hits the variants returned, duplicates included.
    pub found: usize,
    /// Distinct pages among them (before the cut to depth).
    pub deduped: usize,
}

/// Interleaves `lists` rank by rank (variant order within a rank),
/// de-duplicates by canonical URL and keeps the first `depth`. The first
/// occurrence's title and URL win; an empty snippet or date is filled from
/// a later duplicate, and engines are the union. Hits whose URL is not an
/// http(s) URL are dropped.
pub fn interleave(lists: &[Vec<Hit>], depth: u32) -> Pool {
    let found = lists.iter().map(Vec::len).sum();
    let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
    let mut keys: Vec<String> = Vec::new();
    let mut merged: Vec<Hit> = Vec::new();
    for rank in 0..longest {
        for hit in lists.iter().filter_map(|l| l.get(rank)) {
            let Some(key) = canonical_url(&hit.url) else {
                continue;
            };
            match keys.iter().position(|k| *k == key) {
                Some(i) => {
                    let kept = &mut merged[i];
                    if kept.snippet.trim().is_empty() && !hit.snippet.trim().is_empty() {
                        kept.snippet = hit.snippet.clone();
                    }
                    if kept.published.is_none() {
                        kept.published = hit.published.clone();
                    }
                    for e in &hit.engines {
                        if !kept.engines.contains(e) {
                            kept.engines.push(e.clone());
                        }
                    }
                }
                None => {
                    keys.push(key);
                    merged.push(hit.clone());
                }
            }
        }
    }
    let deduped = merged.len();
    merged.truncate(depth as usize);
    Pool {
        hits: merged,
        found,
        deduped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(url: &str, title: &str, snippet: &str) -> Hit {
        Hit {
            url: url.into(),
            title: title.into(),
            snippet: snippet.into(),
            ..Hit::default()
        }
    }

    #[test]
    fn depth_is_capped_at_fifty_and_never_below_top_k() {
        assert_eq!(pool_depth(30, 10), 30);
        assert_eq!(pool_depth(80, 10), 50);
        assert_eq!(pool_depth(5, 10), 10);
    }

    #[test]
    fn each_variant_asks_for_an_even_share_of_at_least_ten() {
        // the reference's example: depth 50, 3 variants, a paging backend
        assert_eq!(hits_requested(50, 3, true), [50, 17, 17]);
        assert_eq!(hits_requested(50, 3, false), [17, 17, 17]);
        assert_eq!(hits_requested(30, 4, false), [10, 10, 10, 10]);
        assert_eq!(hits_requested(30, 2, false), [15, 15]);
    }

    #[test]
    fn hits_interleave_by_rank_and_duplicates_merge_into_the_first() {
        let a = vec![
            hit("https://www.example.com/a/", "A first", ""),
            hit("https://b.example/", "B", "b snippet"),
        ];
        let b = vec![
            Hit {
                engines: vec!["google".into()],
                published: Some("2026-01-02".into()),
                ..hit("https://example.com/a?utm_source=x", "A later", "a snippet")
            },
            hit("https://c.example/", "C", "c"),
            hit("mailto:x@example.com", "not a page", ""),
        ];
        let pool = interleave(&[a, b], 50);
        assert_eq!(pool.found, 5);
        assert_eq!(pool.deduped, 3);
        let titles: Vec<&str> = pool.hits.iter().map(|h| h.title.as_str()).collect();
        assert_eq!(titles, ["A first", "B", "C"]);
        let first = &pool.hits[0];
        assert_eq!(
            first.url, "https://www.example.com/a/",
            "the first URL wins"
        );
        assert_eq!(first.snippet, "a snippet", "an empty snippet is filled");
        assert_eq!(first.engines, ["google"]);
        assert_eq!(first.published.as_deref(), Some("2026-01-02"));
        // cut to depth after de-duplication
        let cut = interleave(std::slice::from_ref(&pool.hits), 2);
        assert_eq!((cut.hits.len(), cut.deduped), (2, 3));
        assert_eq!(
            pool.hits[1].candidate_text(),
            "B — https://b.example/ — b snippet"
        );
    }
}
