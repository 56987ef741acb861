//! Finding a cited quote in its source the way a reader would: an exact
//! find first, then a match that ignores typography (curly quotes, primes,
//! dashes, non-breaking spaces, spacing around punctuation), then the same
//! ignoring case. Offsets always point into the source as fetched.

/// Where a quote sits in its source, as byte offsets (start inclusive, end
/// exclusive) into the original text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuoteMatch {
    /// Where the quote begins, in bytes.
    pub start: usize,
    /// Where it ends, in bytes (exclusive).
    pub end: usize,
}

/// Finds `quote` in `text`; None when no form of it is there.
pub fn find_quote(text: &str, quote: &str) -> Option<QuoteMatch> {
    if quote.trim().is_empty() {
        return None;
    }
    if let Some(start) = text.find(quote) {
        return Some(QuoteMatch {
            start,
            end: start + quote.len(),
        });
    }
    let quote = drop_closing_punctuation(&normalise(quote, false).text);
    if quote.is_empty() {
        return None;
    }
    for fold_case in [false, true] {
        let hay = normalise(text, fold_case);
        let needle = if fold_case {
            normalise(&quote, true).text
        } else {
            quote.clone()
        };
        if let Some(at) = hay.text.find(&needle) {
            return Some(hay.span(at, at + needle.len()));
        }
    }
    None
}

/// Normalised text with, for every byte of it, the byte offset in the
/// original of the character it came from.
struct Normalised {
    text: String,
    origin: Vec<usize>,
    /// Byte length of the original character each normalised byte came from.
    origin_len: Vec<usize>,
}

impl Normalised {
    fn span(&self, start: usize, end: usize) -> QuoteMatch {
        let last = end - 1;
        QuoteMatch {
            start: self.origin[start],
            end: self.origin[last] + self.origin_len[last],
        }
    }

    fn push(&mut self, c: char, at: usize, len: usize) {
        let before = self.text.len();
        self.text.push(c);
        for _ in before..self.text.len() {
            self.origin.push(at);
            self.origin_len.push(len);
        }
    }
}

/// The typographic variants a writer's keyboard does not have, folded to
/// the ASCII a quote is usually typed with.
fn fold(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{00B4}' | '`' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{00AB}'
        | '\u{00BB}' => '"',
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' => '-',
        '\u{00A0}' | '\u{2007}' | '\u{202F}' => ' ',
        c => c,
    }
}

/// Folds typography, collapses whitespace runs to one space (none at the
/// ends) and drops a space before closing punctuation.
fn normalise(text: &str, fold_case: bool) -> Normalised {
    let mut out = Normalised {
        text: String::with_capacity(text.len()),
        origin: Vec::with_capacity(text.len()),
        origin_len: Vec::with_capacity(text.len()),
    };
    // a pending space is written only once a non-space follows it, and
    // not at all before closing punctuation
    let mut pending_space: Option<(usize, usize)> = None;
    for (at, raw) in text.char_indices() {
        let len = raw.len_utf8();
        let c = fold(raw);
        if c.is_whitespace() {
            if !out.text.is_empty() && pending_space.is_none() {
                pending_space = Some((at, len));
            }
            continue;
        }
        if let Some((s_at, s_len)) = pending_space.take()
            && !matches!(c, ',' | '.' | ';' | ':' | ')' | '?' | '!')
        {
            out.push(' ', s_at, s_len);
        }
        if fold_case {
            for lower in c.to_lowercase() {
                out.push(lower, at, len);
            }
        } else {
            out.push(c, at, len);
        }
    }
    out
}

/// One closing `.`, `;` or `,` is not part of what was quoted, unless a
/// digit precedes it ("version 2." keeps its full stop out, "3,5" is kept
/// whole since there the comma cannot close anything).
fn drop_closing_punctuation(quote: &str) -> String {
    let mut chars: Vec<char> = quote.chars().collect();
    if let [.., before, last] = chars.as_slice()
        && matches!(last, '.' | ';' | ',')
        && !before.is_ascii_digit()
    {
        chars.pop();
    }
    if chars.len() == 1 && matches!(chars[0], '.' | ';' | ',') {
        chars.pop();
    }
    chars.into_iter().collect::<String>().trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found<'a>(text: &'a str, quote: &str) -> Option<&'a str> {
        find_quote(text, quote).map(|m| &text[m.start..m.end])
    }

    #[test]
    fn an_exact_quote_is_found_where_it_is() {
        assert_eq!(found("one two three", "two"), Some("two"));
        assert_eq!(
            find_quote("one two", "two"),
            Some(QuoteMatch { start: 4, end: 7 })
        );
    }

    #[test]
    fn typography_does_not_hide_a_quote() {
        let text = "The model\u{2019}s \u{201C}context\u{201D} is 200\u{2009}k \u{2014} not more.";
        assert_eq!(
            found(text, "The model's \"context\""),
            Some("The model\u{2019}s \u{201C}context\u{201D}")
        );
        assert_eq!(found(text, "k - not"), Some("k \u{2014} not"));
        let spaced = "It works , mostly\u{00A0}\n\n  well .";
        assert_eq!(
            found(spaced, "It works, mostly well"),
            Some("It works , mostly\u{00A0}\n\n  well")
        );
    }

    #[test]
    fn case_is_ignored_only_when_the_exact_case_is_absent() {
        let text = "Alpha beta. ALPHA BETA.";
        assert_eq!(find_quote(text, "ALPHA beta").map(|m| m.start), Some(0));
        assert_eq!(found(text, "ALPHA BETA"), Some("ALPHA BETA"));
    }

    #[test]
    fn one_closing_stop_is_ignored_unless_after_a_digit() {
        let text = "It ships in version 2 today";
        assert_eq!(
            found(text, "It ships in version 2 today."),
            Some("It ships in version 2 today")
        );
        assert_eq!(found(text, "It ships in version 2."), None);
        assert_eq!(found("a, b c", "a, b;"), Some("a, b"));
        // only one is dropped
        assert_eq!(found("end of it", "end of it.."), None);
    }

    #[test]
    fn offsets_map_back_through_multibyte_text() {
        let text = "Straße \u{201C}Größe\u{201D} ok";
        let m = find_quote(text, "straße \"größe\"").unwrap();
        assert_eq!(&text[m.start..m.end], "Straße \u{201C}Größe\u{201D}");
    }

    #[test]
    fn absent_or_empty_quotes_are_not_found() {
        assert_eq!(find_quote("abc", "abd"), None);
        assert_eq!(find_quote("abc", "  "), None);
        assert_eq!(find_quote("abc", "."), None);
    }
}
