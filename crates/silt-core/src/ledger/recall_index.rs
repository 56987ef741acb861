//! Recall's inverted index: each content word to the entries that hold it.
//!
//! Lexical recall only ever scores a lesson that shares a content word with
//! the context (see [`super::ops::Ledger::recall`]), so the lessons worth
//! scoring are exactly the union of the context words' postings: the index
//! gives the same answer as a scan of every entry, and a recall costs the
//! postings it touches instead of the ledger's size. An entry's text is
//! fixed once captured (merges, resolutions and undo change status, counts
//! and notes, never `when` or `prefer`), so the index grows with the ledger
//! and re-reads an entry only when [`super::ops::Ledger::replace_entry`]
//! gives it a new text.

use std::collections::HashMap;

use super::entry::Entry;
use super::similarity::{TermSets, Vocabulary};

#[derive(Debug, Clone, Default)]
pub(crate) struct RecallIndex {
    /// Per entry position: the text indexed and its term sets.
    indexed: Vec<Indexed>,
    /// Entry positions by content-word id, ascending.
    postings: HashMap<u32, Vec<u32>>,
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
            let indexed = Self::read(e, vocabulary);
            self.post(i, &indexed.content);
            self.indexed.push(indexed);
        }
    }

    /// Re-reads entry `i` if its text is not the one indexed.
    pub fn refresh(&mut self, i: usize, e: &Entry, vocabulary: &mut Vocabulary) {
        let Some(old) = self.indexed.get(i) else {
            return; // not indexed yet: catch_up reads it
        };
        if old.when == e.when && old.prefer == e.prefer {
            return;
        }
        let old_content = old.content.clone();
        for id in old_content {
            if let Some(list) = self.postings.get_mut(&id)
                && let Ok(at) = list.binary_search(&(i as u32))
            {
                list.remove(at);
            }
        }
        let indexed = Self::read(e, vocabulary);
        self.post(i, &indexed.content);
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

    fn post(&mut self, i: usize, content: &[u32]) {
        let i = i as u32;
        for id in content {
            let list = self.postings.entry(*id).or_default();
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

    /// Positions of the entries holding any of `content` (sorted ids),
    /// ascending, each once.
    pub fn holding_any(&self, content: &[u32]) -> Vec<usize> {
        let mut out: Vec<usize> = content
            .iter()
            .filter_map(|id| self.postings.get(id))
            .flat_map(|list| list.iter().map(|&i| i as usize))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The term sets of entry `i` (indexed by [`Self::catch_up`]).
    pub fn sets(&self, i: usize) -> &TermSets {
        &self.indexed[i].sets
    }

    /// Whether entry `i` is indexed with the text it has now.
    pub fn is_current(&self, i: usize, e: &Entry) -> bool {
        self.indexed
            .get(i)
            .is_some_and(|x| x.when == e.when && x.prefer == e.prefer)
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

    /// Recall as a scan of every entry, from the definitions alone.
    fn scan(l: &Ledger, context: &str, k: usize) -> Vec<(usize, f64)> {
        let content: Vec<String> = tokens(context)
            .into_iter()
            .filter(|t| t.chars().count() > 1 && !crate::text::is_stopword(t))
            .collect();
        let mut scored: Vec<(usize, f64)> = l
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.status == Status::Active)
            .filter_map(|(i, e)| {
                let text = format!("{} {}", e.when, e.prefer);
                let mine = tokens(&text);
                content
                    .iter()
                    .any(|t| mine.contains(t))
                    .then(|| (i, text_sim(context, &text) * e.effective(NOW)))
            })
            .filter(|(_, s)| *s > 0.0)
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored.truncate(k);
        scored
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
                match rng.below(4) {
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
                    _ => {}
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
