//! Sediment's lexical similarity, exactly as the reference computes it.

use std::collections::HashSet;

use rustc_hash::FxHashMap;

/// The set of `[a-z0-9]+` runs of the lowercased text.
pub fn tokens(s: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    each_token(s, |t| {
        out.insert(t.to_string());
    });
    out
}

/// The set of 3-character slices of the lowercased text with whitespace
/// runs collapsed to one space and trimmed; `{s}` when it is shorter.
pub fn trigrams(s: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    each_trigram(s, |t| {
        out.insert(t.to_string());
    });
    out
}

/// Each element of [`tokens`], repeats included, without allocating one
/// string per element (the candidate search meets every element of every
/// trigger).
pub(crate) fn each_token(s: &str, f: impl FnMut(&str)) {
    s.to_lowercase()
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|t| !t.is_empty())
        .for_each(f);
}

/// Each element of [`trigrams`], repeats included, as [`each_token`].
pub(crate) fn each_trigram(s: &str, mut f: impl FnMut(&str)) {
    let norm = s
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let starts: Vec<usize> = norm.char_indices().map(|(i, _)| i).collect();
    if starts.len() < 3 {
        f(&norm);
        return;
    }
    for (k, &start) in starts[..starts.len() - 2].iter().enumerate() {
        let end = starts.get(k + 3).copied().unwrap_or(norm.len());
        f(&norm[start..end]);
    }
}

/// |a ∩ b| / max(1, |a ∪ b|), and 1 when both are empty.
pub fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let inter = a.intersection(b).count();
    let union = a.len() + b.len() - inter;
    inter as f64 / union.max(1) as f64
}

/// 0.5 × jaccard(tokens) + 0.5 × jaccard(trigrams).
pub fn text_sim(a: &str, b: &str) -> f64 {
    0.5 * jaccard(&tokens(a), &tokens(b)) + 0.5 * jaccard(&trigrams(a), &trigrams(b))
}

/// Ids for the tokens and trigrams [`text_sim`] compares, so a ledger can
/// keep each entry's sets between calls instead of rebuilding them.
#[derive(Debug, Clone, Default)]
pub struct Vocabulary {
    ids: FxHashMap<String, u32>,
}

/// A text's token and trigram sets as sorted ids. Terms the vocabulary
/// does not hold are counted (they make the union bigger) but not listed
/// (they cannot be shared).
#[derive(Debug, Clone, PartialEq)]
pub struct TermSets {
    tokens: Vec<u32>,
    n_tokens: usize,
    trigrams: Vec<u32>,
    n_trigrams: usize,
}

impl Vocabulary {
    /// The sets of `text`, adding its new terms to the vocabulary.
    pub fn learn(&mut self, text: &str) -> TermSets {
        // straight from the text's slices: building the string sets first
        // hashed every term twice, and reading texts is most of what a
        // lexical judge does
        let tokens = self.learn_each(|f| each_token(text, f));
        let trigrams = self.learn_each(|f| each_trigram(text, f));
        TermSets {
            n_tokens: tokens.len(),
            tokens,
            n_trigrams: trigrams.len(),
            trigrams,
        }
    }

    /// The sorted ids of the terms `each` hands over, each once.
    fn learn_each(&mut self, each: impl FnOnce(&mut dyn FnMut(&str))) -> Vec<u32> {
        let mut v = Vec::new();
        each(&mut |t| v.push(self.id(t)));
        v.sort_unstable();
        v.dedup();
        // kept for as long as the reading: no room for the repeats
        v.shrink_to_fit();
        v
    }

    /// The id of `term`, new ones numbered in the order they are met.
    fn id(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.ids.get(term) {
            return id;
        }
        let id = self.ids.len() as u32;
        self.ids.insert(term.to_owned(), id);
        id
    }

    /// The sets of `text` without growing the vocabulary (for queries,
    /// whose words need not be remembered).
    pub fn look_up(&self, text: &str) -> TermSets {
        let ids = |set: HashSet<String>| -> (Vec<u32>, usize) {
            let mut v: Vec<u32> = set
                .iter()
                .filter_map(|t| self.ids.get(t).copied())
                .collect();
            v.sort_unstable();
            (v, set.len())
        };
        TermSets::of(text, ids)
    }
}

impl Vocabulary {
    /// The ids of `words`, sorted and each once, adding new words.
    pub fn ids_of(&mut self, words: impl IntoIterator<Item = String>) -> Vec<u32> {
        self.learn_each(|f| words.into_iter().for_each(|w| f(&w)))
    }

    /// How many distinct terms it holds.
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    /// The ids of `text`'s content words (two characters or more, not a
    /// stopword) the vocabulary holds, sorted: what a lesson must share
    /// with a context to count as evidence it applies.
    pub fn content_ids(&self, text: &str) -> Vec<u32> {
        let mut v: Vec<u32> = tokens(text)
            .iter()
            .filter(|t| t.chars().count() > 1 && !crate::text::is_stopword(t))
            .filter_map(|t| self.ids.get(t).copied())
            .collect();
        v.sort_unstable();
        v
    }
}

impl TermSets {
    /// How many ids it lists.
    pub(crate) fn ids(&self) -> usize {
        self.tokens.len() + self.trigrams.len()
    }

    /// Whether any of `ids` (sorted) is among this text's tokens.
    pub fn shares_any(&self, ids: &[u32]) -> bool {
        shared_reaching(&self.tokens, ids, 1).is_some()
    }

    /// The vocabulary's ids of the tokens, sorted.
    pub(crate) fn token_ids(&self) -> &[u32] {
        &self.tokens
    }

    /// The vocabulary's ids of the trigrams, sorted.
    pub(crate) fn trigram_ids(&self) -> &[u32] {
        &self.trigrams
    }

    /// Tokens, known to the vocabulary or not.
    pub(crate) fn token_count(&self) -> usize {
        self.n_tokens
    }

    /// Trigrams, known to the vocabulary or not.
    pub(crate) fn trigram_count(&self) -> usize {
        self.n_trigrams
    }

    /// The most [`Self::similarity`] can be with a text of `n_tokens`
    /// tokens and `n_trigrams` trigrams sharing at most `tokens` and
    /// `trigrams` of this text's: the same formula with the counts as
    /// shared, so it is never below the similarity itself (Jaccard grows
    /// with what is shared).
    pub(crate) fn similarity_at_most(
        &self,
        n_tokens: usize,
        n_trigrams: usize,
        tokens: usize,
        trigrams: usize,
    ) -> f64 {
        let st = tokens.min(self.tokens.len()).min(n_tokens);
        let sg = trigrams.min(self.trigrams.len()).min(n_trigrams);
        0.5 * jaccard_counts(self.n_tokens, n_tokens, st)
            + 0.5 * jaccard_counts(self.n_trigrams, n_trigrams, sg)
    }
}

/// Shared ids of two sorted lists (each id once in a list).
///
/// Without a branch on which list steps, which cannot be predicted where
/// the lists interleave. This merge is the embedding judge's largest
/// single cost in a 100k-lesson sleep (the lexical part of its relations,
/// a quarter of its samples under perf); natively it relates families'
/// pairs 15% faster this way (docs/BENCHMARKS.md, session 35).
pub(crate) fn shared(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        n += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    n
}

/// Shared ids of two sorted lists, or `None` as soon as what is left of
/// them cannot bring the count to `need` (a check can stop half way).
pub(crate) fn shared_reaching(a: &[u32], b: &[u32], need: usize) -> Option<usize> {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        if n + (a.len() - i).min(b.len() - j) < need {
            return None;
        }
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (n >= need).then_some(n)
}

/// [`jaccard`] from set sizes and the shared count.
pub(crate) fn jaccard_counts(na: usize, nb: usize, inter: usize) -> f64 {
    if na == 0 && nb == 0 {
        return 1.0;
    }
    inter as f64 / (na + nb - inter).max(1) as f64
}

impl TermSets {
    /// The sets of `text`, each turned into (ids, size) by `ids`.
    fn of(text: &str, mut ids: impl FnMut(HashSet<String>) -> (Vec<u32>, usize)) -> TermSets {
        let (tokens, n_tokens) = ids(tokens(text));
        let (trigrams, n_trigrams) = ids(trigrams(text));
        TermSets {
            tokens,
            n_tokens,
            trigrams,
            n_trigrams,
        }
    }

    /// [`text_sim`] of the two texts, exactly.
    pub fn similarity(&self, other: &TermSets) -> f64 {
        let t = jaccard_counts(
            self.n_tokens,
            other.n_tokens,
            shared(&self.tokens, &other.tokens),
        );
        let g = jaccard_counts(
            self.n_trigrams,
            other.n_trigrams,
            shared(&self.trigrams, &other.trigrams),
        );
        0.5 * t + 0.5 * g
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The merge without branches counts what a set intersection counts,
    /// and stops where the early-stopping merge says it can.
    #[test]
    fn shared_ids_are_the_intersection() {
        fn draw(state: &mut u64, m: u64) -> u64 {
            *state ^= *state << 13;
            *state ^= *state >> 7;
            *state ^= *state << 17;
            *state % m
        }
        fn set(state: &mut u64, span: u64) -> Vec<u32> {
            let len = draw(state, 60);
            let mut v: Vec<u32> = (0..len).map(|_| draw(state, span) as u32).collect();
            v.sort_unstable();
            v.dedup();
            v
        }
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            let span = 1 + draw(&mut state, 200);
            let (a, b) = (set(&mut state, span), set(&mut state, span));
            let want = a.iter().filter(|x| b.contains(x)).count();
            assert_eq!(shared(&a, &b), want, "{a:?} {b:?}");
            assert_eq!(shared(&b, &a), want);
            for need in [0, 1, want, want + 1] {
                assert_eq!(
                    shared_reaching(&a, &b, need),
                    (want >= need).then_some(want)
                );
            }
        }
    }

    fn r3(x: f64) -> f64 {
        (x * 1000.0).round() / 1000.0
    }

    #[test]
    fn measured_similarities_of_the_reference() {
        assert_eq!(
            r3(text_sim(
                "target model is Claude",
                "Anthropic model as target"
            )),
            0.299
        );
        assert_eq!(
            r3(text_sim(
                "trading prompt for XAUUSD",
                "trading prompt for crypto perps"
            )),
            0.493
        );
        assert_eq!(
            r3(text_sim(
                "trading prompt for XAUUSD",
                "trading prompt for futures"
            )),
            0.583
        );
        assert_eq!(
            r3(text_sim(
                "trading prompt for crypto perps",
                "trading prompt for futures"
            )),
            0.486
        );
        assert_eq!(
            r3(text_sim(
                "inject explicit step-by-step CoT",
                "do not inject CoT, keep it terse"
            )),
            0.192
        );
        assert_eq!(
            r3(text_sim(
                "target model is Claude",
                "when the model is Claude / Anthropic"
            )),
            0.389
        );
        assert_eq!(
            r3(text_sim(
                "when the model is Claude / Anthropic",
                "Anthropic model as target"
            )),
            0.258
        );
    }

    #[test]
    fn edge_cases() {
        assert_eq!(text_sim("", ""), 1.0);
        assert_eq!(trigrams("ab"), HashSet::from(["ab".to_string()]));
        assert_eq!(
            trigrams("  A   b c "),
            ["a b", " b ", "b c"]
                .iter()
                .map(|s| s.to_string())
                .collect()
        );
    }

    #[test]
    fn trigrams_are_the_char_windows_of_the_normalised_text() {
        // the definition as it read before the walk over slices
        let windows = |s: &str| -> HashSet<String> {
            let norm = s
                .to_lowercase()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let chars: Vec<char> = norm.chars().collect();
            if chars.len() < 3 {
                return HashSet::from([norm]);
            }
            chars.windows(3).map(|w| w.iter().collect()).collect()
        };
        for s in [
            "",
            "a",
            "ab",
            "abc",
            " \t ab \n",
            "émigré café naïve",
            "ÉÉ",
            "İstanbul ﬁne",
            "日本語のテキスト",
            "a\u{0}b  c",
            "trading prompt for XAUUSD",
        ] {
            assert_eq!(trigrams(s), windows(s), "{s:?}");
        }
    }

    #[test]
    fn term_sets_give_text_sim_exactly() {
        let texts = [
            "target model is Claude use XML delimiter tags for structure",
            "Anthropic model as target structure with XML style tags",
            "trading prompt for XAUUSD",
            "trading prompt for crypto perps",
            "",
            "ab",
            "  Ab  ",
            "non-reasoning GPT target inject explicit step-by-step CoT",
            "émigré café naïve",
        ];
        let mut vocabulary = Vocabulary::default();
        let sets: Vec<TermSets> = texts.iter().map(|t| vocabulary.learn(t)).collect();
        for (i, a) in texts.iter().enumerate() {
            for (j, b) in texts.iter().enumerate() {
                assert_eq!(
                    sets[i].similarity(&sets[j]),
                    text_sim(a, b),
                    "{a:?} ~ {b:?}"
                );
            }
            // a query with words the ledger never saw
            let query = format!("{a} unseen zzqx words");
            assert_eq!(
                vocabulary.look_up(&query).similarity(&sets[i]),
                text_sim(&query, a),
                "{query:?}"
            );
        }
    }
}
