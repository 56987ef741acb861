//! How much of a text the model can read: the share of its content words
//! its tokenizer knows whole or in a few pieces.
//!
//! A sentence encoder places text it cannot read anywhere: random-letter
//! identifiers ("whhqzz qyuuvq vmhjt lzzuob" / "xmdhals mlcq fyfi jvss")
//! sit at cosine 0.8 or more with potion and with MiniLM alike, and their
//! curves read that as the same situation or as siblings. The relation
//! judge weighs its own answer by this share and gives the rest of the
//! weight to the lexical rule, which reads such words as strings.

use silt_core::text::is_stopword;

/// Whether the model reads a word: it splits into at most one piece more
/// than a third of its letters. Of STS-B's dev sentences' content words
/// 99.8% pass; of the `families` generator's random-letter words, 22%.
/// English words with suffixes ("configuring": 4 pieces of 11 letters)
/// pass where a two-piece rule would fail them.
/// `usize::MAX` pieces (no token for it) never passes.
pub fn reads_word(letters: usize, pieces: usize) -> bool {
    pieces.saturating_mul(3) <= letters.saturating_add(3)
}

/// Whether [`readable_share`] counts a word: three letters or more, no
/// digits, not a stopword.
pub fn is_content_word(word: &str) -> bool {
    word.chars().count() >= 3
        && word.chars().all(char::is_alphabetic)
        && !is_stopword(&word.to_lowercase())
}

/// The share of a text's content words (three letters or more, no
/// digits, not a stopword) that [`reads_word`] passes, from each word the
/// tokenizer reads and the pieces it cuts it into. A text without
/// content words is read whole (1.0): there is nothing the model missed,
/// and numbered words are compared apart from the model.
pub fn readable_share<'t>(words: impl IntoIterator<Item = (&'t str, usize)>) -> f64 {
    ReadCount::of(words).share()
}

/// A text's (or a part's) content words and how many of them
/// [`reads_word`] passes: counts of the parts of a text add up to the
/// text's, so a part read once serves every text it appears in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadCount {
    /// Content words counted.
    pub seen: u32,
    /// Of those, the words [`reads_word`] passes.
    pub read: u32,
}

impl std::ops::Add for ReadCount {
    type Output = ReadCount;

    /// Both counts together.
    fn add(self, other: ReadCount) -> ReadCount {
        ReadCount {
            seen: self.seen.saturating_add(other.seen),
            read: self.read.saturating_add(other.read),
        }
    }
}

impl ReadCount {
    /// The count of `words`, each with the pieces the tokenizer cut it
    /// into (see [`readable_share`]).
    pub fn of<'t>(words: impl IntoIterator<Item = (&'t str, usize)>) -> ReadCount {
        let mut count = ReadCount::default();
        for (word, pieces) in words.into_iter().filter(|w| is_content_word(w.0)) {
            count.seen += 1;
            if reads_word(word.chars().count(), pieces) {
                count.read += 1;
            }
        }
        count
    }

    /// The share read; 1.0 without content words.
    pub fn share(self) -> f64 {
        if self.seen == 0 {
            1.0
        } else {
            f64::from(self.read) / f64::from(self.seen)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words split at spaces and punctuation, each known whole if it is
    /// in `known` and cut into pieces of two letters if not: a stand-in
    /// for a tokenizer.
    fn share(text: &str, known: &[&str]) -> f64 {
        readable_share(
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(|w| {
                    let pieces = if known.contains(&w.to_lowercase().as_str()) {
                        1
                    } else {
                        w.chars().count().div_ceil(2)
                    };
                    (w, pieces)
                }),
        )
    }

    #[test]
    fn counts_content_words_only() {
        let known = ["editing", "parser"];
        // "The" and "in" are stopwords, "r3" has a digit, "go" is short
        assert_eq!(share("Editing The parser in repo r3 go", &known), 1.0);
        // "qzvkxw" is three pieces of six letters: read (3 ≤ 1 + 6/3);
        // "qzvkxwpj" is four of eight: not read (4 > 1 + 8/3)
        assert_eq!(share("editing qzvkxw", &known), 1.0);
        assert_eq!(share("editing qzvkxwpj", &known), 0.5);
        assert_eq!(share("", &known), 1.0);
        assert_eq!(share("r3 v2 of", &known), 1.0);
    }

    #[test]
    fn counts_of_parts_add_up_to_the_whole() {
        let words = [("editing", 1), ("qzvkxwpj", 4), ("the", 1), ("parser", 1)];
        let whole = ReadCount::of(words);
        assert_eq!(whole, ReadCount { seen: 3, read: 2 });
        let parts =
            ReadCount::of(words[..2].iter().copied()) + ReadCount::of(words[2..].iter().copied());
        assert_eq!(parts, whole);
        assert_eq!(whole.share(), 2.0 / 3.0);
        assert_eq!(ReadCount::default().share(), 1.0);
    }

    #[test]
    fn the_rule_allows_a_piece_per_three_letters_beyond_the_first() {
        assert!(reads_word(3, 2));
        assert!(!reads_word(3, 3));
        assert!(reads_word(11, 4));
        assert!(!reads_word(11, 5));
        assert!(!reads_word(5, 3));
        assert!(!reads_word(300, usize::MAX));
    }
}
