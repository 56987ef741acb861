//! Recall's inverted index: each content word to the entries that hold it.
//!
//! Lexical recall only ever scores a text that shares a content word with
//! the context (see [`super::ops::Ledger::recall`]): an active lesson's,
//! or that of a lesson folded under one, which scores for its parent. So
//! the texts worth scoring are exactly the union of the context words'
//! postings: the index gives the same answer as a scan of every entry,
//! and a recall costs the postings it touches instead of the ledger's
//! size. An entry's text is
//! fixed once captured (merges, resolutions and undo change status, counts
//! and notes, never `when` or `prefer`), so the index grows with the ledger
//! and re-reads an entry only when [`super::ops::Ledger::replace_entry`]
//! gives it a new text.
//!
//! Where a word is in most lessons ("repo" in text agents write), those
//! lessons are most of the ledger, and scoring each exactly (two sorted
//! merges and a decay) made recall linear. [`RecallIndex::top`] scores them
//! in order of an upper bound instead and stops once no bound reaches the
//! k-th best score: the bound counts the context words each lesson holds
//! (from the postings) and its shared trigrams from the postings of the
//! context's rarer trigrams, allowing every common trigram as shared. The
//! answer is the scan's, ties included.

use std::collections::HashMap;

use super::best_first::visit_in_order;
use super::entry::{Entry, Status};
use super::similarity::{TermSets, Vocabulary};

#[derive(Debug, Clone)]
pub(crate) struct RecallIndex {
    /// Per entry position: the text indexed and its term sets.
    indexed: Vec<Indexed>,
    /// Entry positions by content-word id, ascending.
    postings: HashMap<u32, Vec<u32>>,
    /// Entry positions by trigram id, ascending.
    grams: HashMap<u32, Vec<u32>>,
    /// Per entry position, reset after each [`Self::top`]: context words
    /// held, and rare context trigrams held.
    word_hits: Vec<u16>,
    gram_hits: Vec<u16>,
    /// The highest confidence of any entry read (by [`Self::catch_up`] or
    /// [`Self::refresh`]), and at least 1: what bounds a folded holder's
    /// parent before it is known. The engine's own changes never raise a
    /// confidence past 1; an entry from elsewhere (a store edited by
    /// hand) might, and would otherwise be dropped from the top k by a
    /// bound it exceeds.
    ceiling: f64,
}

/// A context trigram held by more than one lesson in this many (and by
/// more than 32) counts as common in [`RecallIndex::top`]: its postings are
/// not read, and every lesson's bound allows it as shared. Reading a list
/// costs its length; allowing it costs bound tightness. The value is a
/// first choice, not a fitted one: only 16 was benchmarked (in the git
/// history of docs/BENCHMARKS.md).
const COMMON_TRIGRAM_SHARE: usize = 16;

/// A dormant holder's target before its parent is looked up: no
/// position (positions are `u32` throughout the index, the last one
/// never reached).
const UNRESOLVED: u32 = u32::MAX;

impl Default for RecallIndex {
    fn default() -> Self {
        RecallIndex {
            indexed: Vec::new(),
            postings: HashMap::new(),
            grams: HashMap::new(),
            word_hits: Vec::new(),
            gram_hits: Vec::new(),
            ceiling: 1.0,
        }
    }
}

#[derive(Debug, Clone)]
struct Indexed {
    when: String,
    prefer: String,
    sets: TermSets,
    /// The content-word ids it is posted under.
    content: Vec<u32>,
}

/// The text recall compares with the context.
fn recall_text(e: &Entry) -> String {
    format!("{} {}", e.when, e.prefer)
}

impl RecallIndex {
    /// Indexes the entries appended since the last call (all of them when
    /// the ledger shrank, which only a rebuilt ledger does).
    pub fn catch_up(&mut self, entries: &[Entry], vocabulary: &mut Vocabulary) {
        if entries.len() < self.indexed.len() {
            *self = RecallIndex::default();
        }
        for (i, e) in entries.iter().enumerate().skip(self.indexed.len()) {
            self.ceiling = self.ceiling.max(e.confidence);
            let indexed = Self::read(e, vocabulary);
            post(&mut self.postings, i, &indexed.content);
            post(&mut self.grams, i, indexed.sets.trigram_ids());
            self.indexed.push(indexed);
        }
    }

    /// Re-reads entry `i` if its text is not the one indexed, and its
    /// confidence.
    pub fn refresh(&mut self, i: usize, e: &Entry, vocabulary: &mut Vocabulary) {
        self.ceiling = self.ceiling.max(e.confidence);
        let Some(old) = self.indexed.get(i) else {
            return; // not indexed yet: catch_up reads it
        };
        if old.when == e.when && old.prefer == e.prefer {
            return;
        }
        unpost(&mut self.postings, i, &old.content);
        unpost(&mut self.grams, i, old.sets.trigram_ids());
        let indexed = Self::read(e, vocabulary);
        post(&mut self.postings, i, &indexed.content);
        post(&mut self.grams, i, indexed.sets.trigram_ids());
        self.indexed[i] = indexed;
    }

    fn read(e: &Entry, vocabulary: &mut Vocabulary) -> Indexed {
        let text = recall_text(e);
        let sets = vocabulary.learn(&text);
        let content = vocabulary.content_ids(&text);
        Indexed {
            when: e.when.clone(),
            prefer: e.prefer.clone(),
            sets,
            content,
        }
    }

    /// The `k` best (position, score) of the active entries, where an
    /// entry's score is `query.similarity(sets) × effective(now)` for
    /// the nearest of its own text and those of the entries
    /// `recalled_for` maps to it (the lessons folded under it), each
    /// text counted only if it holds one of `content` (the context's
    /// content-word ids, sorted); the best first, ties to the lower
    /// position; only scores above 0. Every entry must be indexed with
    /// its current text (see [`Self::is_current`]), and no confidence may
    /// have risen past the highest of 1 and those the index has read
    /// (the engine's changes keep it at most 1).
    pub fn top(
        &mut self,
        entries: &[Entry],
        query: &TermSets,
        content: &[u32],
        k: usize,
        now: f64,
        mut recalled_for: impl FnMut(usize) -> Option<usize>,
    ) -> Vec<(usize, f64)> {
        let n = self.indexed.len();
        self.word_hits.resize(n, 0);
        self.gram_hits.resize(n, 0);
        let mut held: Vec<u32> = Vec::new();
        for list in content.iter().filter_map(|id| self.postings.get(id)) {
            for &p in list {
                let h = &mut self.word_hits[p as usize];
                if *h == 0 {
                    held.push(p);
                }
                *h = h.saturating_add(1);
            }
        }
        // context tokens that are no content word (stopwords, one letter)
        // are in no postings list: each may be shared by anyone
        let other_tokens = query.token_ids().len() - content.len();
        let common_above = (n / COMMON_TRIGRAM_SHARE).max(32);
        let mut common_grams = 0;
        for id in query.trigram_ids() {
            match self.grams.get(id) {
                Some(list) if list.len() > common_above => common_grams += 1,
                Some(list) => {
                    for &p in list {
                        if self.word_hits[p as usize] > 0 {
                            let g = &mut self.gram_hits[p as usize];
                            *g = g.saturating_add(1);
                        }
                    }
                }
                None => {}
            }
        }
        // (bound, position, weight, the active entry it scores for) of the
        // entries held, where the weight is an active entry's effective
        // confidence, or a dormant one's similarity bound before its
        // parent is known: the active ones, and the dormant ones that may
        // be folded under one. A dormant entry's parent is looked up only
        // when its bound is reached: until then its words and trigrams
        // bound it, times the highest confidence read (`ceiling`), as
        // looking up the parent of every holder (tens of thousands after
        // a sleep over text agents write) was most of a recall.
        let mut bounded: Vec<(f64, u32, f64, u32)> = Vec::with_capacity(held.len());
        for &p in &held {
            let i = p as usize;
            let (words, grams) = (self.word_hits[i], self.gram_hits[i]);
            self.word_hits[i] = 0;
            self.gram_hits[i] = 0;
            let target = match entries[i].status {
                Status::Active => p,
                Status::Dormant => UNRESOLVED,
                Status::Retired => continue,
            };
            let sets = &self.indexed[i].sets;
            let most = query.similarity_at_most(
                sets.token_count(),
                sets.trigram_count(),
                usize::from(words) + other_tokens,
                usize::from(grams) + common_grams,
            );
            bounded.push(if target == UNRESOLVED {
                (most * self.ceiling, p, most, target)
            } else {
                let effective = entries[i].effective(now);
                (most * effective, p, effective, target)
            });
        }
        // best bound first (a slice at a time: the scoring usually stops
        // early, and sorting every holder cost as much as the rest of a
        // recall where most lessons hold a context word); score in that
        // order until no bound left can reach the k-th best score (a
        // bound equal to it could tie and win on position, so only a
        // lower one stops)
        let order = |a: &(f64, u32, f64, u32), b: &(f64, u32, f64, u32)| {
            b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
        };
        let mut best: Vec<(usize, f64)> = Vec::with_capacity(k + 1);
        let out_of_reach =
            |best: &[(usize, f64)], bound: f64| best.len() == k && bound < best[k - 1].1;
        visit_in_order(&mut bounded, order, |(mut bound, p, weight, target)| {
            if out_of_reach(&best, bound) {
                return false;
            }
            let i = p as usize;
            let (t, effective) = if target == UNRESOLVED {
                let Some(t) = recalled_for(i) else {
                    return true;
                };
                // the bound with the parent's confidence: under the k-th
                // score it skips this text, yet a later one (bounded
                // before its parent was known) may still reach it
                let effective = entries[t].effective(now);
                debug_assert!(effective <= self.ceiling, "entry {t} is over the ceiling");
                bound = weight * effective;
                if out_of_reach(&best, bound) {
                    return true;
                }
                (t, effective)
            } else {
                (target as usize, weight)
            };
            // a parent met again through another text keeps its best: a
            // text that cannot beat it is not scored (many lessons folded
            // under one parent would each be, before k parents are found)
            let met = best.iter().position(|&(j, _)| j == t);
            if met.is_some_and(|at| best[at].1 >= bound) {
                return true;
            }
            debug_assert!(
                self.is_current(i, &entries[i]),
                "entry {i} changed text unindexed"
            );
            let s = query.similarity(&self.indexed[i].sets) * effective;
            if s > 0.0 {
                if let Some(at) = met {
                    if best[at].1 >= s {
                        return true;
                    }
                    best.remove(at);
                }
                let at = best.partition_point(|&(j, u)| u > s || (u == s && j < t));
                if at < k {
                    best.insert(at, (t, s));
                    best.truncate(k);
                }
            }
            true
        });
        best
    }

    /// Whether entry `i` is indexed with the text it has now.
    pub fn is_current(&self, i: usize, e: &Entry) -> bool {
        self.indexed
            .get(i)
            .is_some_and(|x| x.when == e.when && x.prefer == e.prefer)
    }
}

/// Adds position `i` to the lists of `ids`, keeping each ascending.
fn post(lists: &mut HashMap<u32, Vec<u32>>, i: usize, ids: &[u32]) {
    let i = i as u32;
    for id in ids {
        let list = lists.entry(*id).or_default();
        // positions arrive ascending except when an entry is re-read
        match list.last() {
            Some(&last) if last > i => {
                if let Err(at) = list.binary_search(&i) {
                    list.insert(at, i);
                }
            }
            Some(&last) if last == i => {}
            _ => list.push(i),
        }
    }
}

/// Takes position `i` out of the lists of `ids`.
fn unpost(lists: &mut HashMap<u32, Vec<u32>>, i: usize, ids: &[u32]) {
    for id in ids {
        if let Some(list) = lists.get_mut(id)
            && let Ok(at) = list.binary_search(&(i as u32))
        {
            list.remove(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::entry::{DAY, Entry, Status};
    use super::super::ops::Ledger;
    use super::super::similarity::{text_sim, tokens};

    const NOW: f64 = 1_800_000_000.0;
    /// Few words, stopwords among them, so texts overlap often.
    const WORDS: [&str; 24] = [
        "the",
        "a",
        "of",
        "parser",
        "tests",
        "migration",
        "deploy",
        "database",
        "prompt",
        "claude",
        "retry",
        "backoff",
        "run",
        "first",
        "keep",
        "it",
        "terse",
        "backup",
        "editing",
        "writing",
        "release",
        "tag",
        "sign",
        "x",
    ];

    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) as usize) % n
        }
        fn text(&mut self, min: usize) -> String {
            (0..min + self.below(4))
                .map(|_| WORDS[self.below(WORDS.len())])
                .collect::<Vec<_>>()
                .join(" ")
        }
        fn entry(&mut self, n: usize) -> Entry {
            let mut e = Entry::new(
                format!("e{n}"),
                self.text(1),
                self.text(1),
                (1 + self.below(9)) as f64 / 10.0,
                self.below(3) as u64,
                NOW - self.below(60) as f64 * DAY,
            );
            if self.below(5) == 0 {
                e.status = Status::Retired;
            }
            e
        }
    }

    /// Recall as a scan of every entry, from the definitions alone: an
    /// active entry's score is the best of its own text's and those of
    /// the entries folded under it, at any depth (notes followed here
    /// one by one, not through [`super::super::folded::Positions`]).
    fn scan(l: &Ledger, context: &str, k: usize) -> Vec<(usize, f64)> {
        let content: Vec<String> = tokens(context)
            .into_iter()
            .filter(|t| t.chars().count() > 1 && !crate::text::is_stopword(t))
            .collect();
        let active_above = |mut i: usize| -> Option<usize> {
            for steps in 0..l.entries.len() {
                let e = &l.entries[i];
                if e.status == Status::Active {
                    return Some(i);
                }
                // folded under a parent, or (a parent) merged into
                // another lesson
                let parent = match e.status {
                    Status::Dormant => e.note.strip_prefix("folded under ")?,
                    _ if steps > 0 => e.note.strip_prefix("merged into ")?,
                    _ => return None,
                };
                i = l.entries.iter().position(|p| p.id == parent)?;
            }
            None
        };
        let mut best: std::collections::BTreeMap<usize, f64> = Default::default();
        for (i, e) in l.entries.iter().enumerate() {
            let Some(a) = active_above(i) else { continue };
            let text = format!("{} {}", e.when, e.prefer);
            let mine = tokens(&text);
            if !content.iter().any(|t| mine.contains(t)) {
                continue;
            }
            let s = text_sim(context, &text) * l.entries[a].effective(NOW);
            if s > 0.0 && best.get(&a).is_none_or(|&b| s > b) {
                best.insert(a, s);
            }
        }
        let mut scored: Vec<(usize, f64)> = best.into_iter().collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored.truncate(k);
        scored
    }

    /// Large ledgers of phrases over common words and rare numbered ones
    /// (as "in repo r17"), so the bound reads rare trigram lists, allows
    /// common ones, and stops early: still exactly the scan's top k.
    #[test]
    fn pruned_recall_equals_a_scan_on_large_ledgers_of_shared_phrases() {
        let mut rng = Rng(11);
        for round in 0..4 {
            let n = 500 + rng.below(1000);
            let phrase = |rng: &mut Rng| {
                let mut t = rng.text(1);
                t.push_str(&format!(" in repo r{}", rng.below(300)));
                t
            };
            let mut entries = Vec::new();
            for i in 0..n {
                let mut e = rng.entry(i);
                e.when = phrase(&mut rng);
                entries.push(e);
            }
            // parents over groups of three, named by their triggers
            // joined, some of them folded under parents in turn
            for g in 0..n / 10 {
                let members: Vec<usize> = (0..3).map(|_| rng.below(entries.len())).collect();
                let when: Vec<String> = members.iter().map(|&m| entries[m].when.clone()).collect();
                let mut parent = rng.entry(n + g);
                parent.when = when.join(" or ");
                parent.status = Status::Active;
                for m in members {
                    entries[m].status = Status::Dormant;
                    entries[m].note = format!("folded under {}", parent.id);
                }
                entries.push(parent);
            }
            let mut l = Ledger::new(entries, Default::default());
            for step in 0..15 {
                let context = phrase(&mut rng);
                let k = 1 + rng.below(10);
                let want: Vec<usize> = scan(&l, &context, k).iter().map(|w| w.0).collect();
                let (got, _) = l.recall(&context, k, NOW);
                assert_eq!(got, want, "round {round} step {step}: {context}");
            }
        }
    }

    #[test]
    fn index_recall_equals_a_scan_of_every_entry_on_random_ledgers() {
        let mut rng = Rng(7);
        for round in 0..40 {
            let n = 1 + rng.below(200);
            let entries: Vec<Entry> = (0..n).map(|i| rng.entry(i)).collect();
            let mut l = Ledger::new(entries, Default::default());
            for step in 0..30 {
                // the ledger changes between recalls as it does in use
                match rng.below(5) {
                    3 => {
                        // folded under another lesson (a parent, a
                        // parent's parent, a retired one, or a cycle),
                        // or merged into one
                        let i = rng.below(l.entries.len());
                        let parent = l.entries[rng.below(l.entries.len())].id.clone();
                        let (status, link) = if rng.below(4) == 0 {
                            (Status::Retired, "merged into")
                        } else {
                            (Status::Dormant, "folded under")
                        };
                        l.entries[i].status = status;
                        l.entries[i].note = format!("{link} {parent}");
                    }
                    0 => {
                        let e = rng.entry(l.entries.len());
                        l.entries.push(e);
                    }
                    1 => {
                        let i = rng.below(l.entries.len());
                        let mut e = l.entries[i].clone();
                        e.when = rng.text(1);
                        l.replace_entry(i, e);
                    }
                    2 => {
                        let i = rng.below(l.entries.len());
                        l.entries[i].status = if l.entries[i].status == Status::Active {
                            Status::Retired
                        } else {
                            Status::Active
                        };
                    }
                    _ => {
                        // confidence past 1, as a store edited by hand
                        // could sync: no bound may fall under it
                        let i = rng.below(l.entries.len());
                        let mut e = l.entries[i].clone();
                        e.confidence = 1.0 + rng.below(20) as f64 / 10.0;
                        l.replace_entry(i, e);
                    }
                }
                let context = rng.text(1);
                let k = 1 + rng.below(8);
                let want = scan(&l, &context, k);
                let (got, _) = l.recall(&context, k, NOW);
                let want_positions: Vec<usize> = want.iter().map(|w| w.0).collect();
                assert_eq!(got, want_positions, "round {round} step {step}: {context}");
            }
        }
    }
}
