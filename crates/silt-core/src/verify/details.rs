//! The details a passage must itself state before any judge's answer may
//! confirm a claim: its figures, its code names, its negation and its
//! scope words. A one-word change to a true sentence ("0" to "1",
//! "does not poison" to "poisons", "all senders" to "any sender") leaves
//! a claim that reads almost exactly like its source, and a similarity
//! judge (or a small language model) scores it as if it were the source.
//! These checks are judge-independent and only ever withhold
//! `supports_fully`; they never make a claim look better.
//!
//! Figures and names are looked for in the stretch of the passage the
//! claim aligns with (its best-matching sentence and the sentence on each
//! side), not anywhere in a 1500-character window, where a stray "1" or a
//! name from another sentence would vouch for a changed one. Negation is
//! compared with the best-matching sentence alone.

use std::collections::HashSet;

use super::evidence::paragraphs;
use super::report::sentences;
use crate::text::terms;

/// Flag: a number in the claim is not in the aligned passage text.
pub const FIGURE_NOT_IN_PASSAGE: &str = "figure_not_in_passage";
/// Flag: a code name (backticked, `a::b`, `snake_case`, `CamelCase`,
/// `call()`) in the claim is not in the aligned passage text.
pub const NAME_NOT_IN_PASSAGE: &str = "name_not_in_passage";
/// Flag: the claim is negated and its best-matching sentence is not, or
/// the other way round.
pub const NEGATION_DIFFERS: &str = "negation_differs";
/// Flag: the claim widens or narrows the passage's scope: a quantifier
/// (all, every, any, only, both…) the passage does not use, or a hedge
/// (typically, may, some…) of the passage that the claim drops.
pub const SCOPE_DIFFERS: &str = "scope_differs";

/// Every flag these checks raise, in the order [`unmet`] lists them.
pub const FLAGS: [&str; 4] = [
    FIGURE_NOT_IN_PASSAGE,
    NAME_NOT_IN_PASSAGE,
    NEGATION_DIFFERS,
    SCOPE_DIFFERS,
];

/// Words that set how much a claim covers.
const QUANTIFIERS: &[&str] = &[
    "all",
    "always",
    "any",
    "both",
    "completely",
    "each",
    "entirely",
    "every",
    "everything",
    "none",
    "only",
    "whatever",
    "whenever",
];

/// Words with which a source limits what it states.
const HEDGES: &[&str] = &[
    "generally",
    "may",
    "might",
    "often",
    "some",
    "sometimes",
    "typically",
    "usually",
];

/// Spelled-out numbers, read as their figures.
const NUMBER_WORDS: &[(&str, &str)] = &[
    ("zero", "0"),
    ("one", "1"),
    ("two", "2"),
    ("three", "3"),
    ("four", "4"),
    ("five", "5"),
    ("six", "6"),
    ("seven", "7"),
    ("eight", "8"),
    ("nine", "9"),
    ("ten", "10"),
    ("eleven", "11"),
    ("twelve", "12"),
    ("twenty", "20"),
    ("hundred", "100"),
    ("thousand", "1000"),
];

/// The fewest content terms a sentence must share with a claim to be the
/// one the claim restates; below it nothing is aligned and the whole
/// passage stands in.
const MIN_SHARED_TERMS: usize = 2;

/// The flags for the details of `claim` that `passage` does not state,
/// in a fixed order; empty when every detail is there.
pub fn unmet(claim: &str, passage: &str) -> Vec<&'static str> {
    let aligned = align(claim, passage);
    let (span, best) = match &aligned {
        Some((span, best)) => (span.as_str(), Some(best.as_str())),
        None => (passage, None),
    };
    let mut flags = Vec::new();
    let have = figures(span);
    if figures(claim).iter().any(|f| !have.contains(f)) {
        flags.push(FIGURE_NOT_IN_PASSAGE);
    }
    let plain = strip_markup(span);
    if names(claim).iter().any(|n| !plain.contains(n.as_str())) {
        flags.push(NAME_NOT_IN_PASSAGE);
    }
    if let Some(best) = best
        && negated(claim) != negated(best)
    {
        flags.push(NEGATION_DIFFERS);
    }
    let claim_words = lower_words(claim);
    let span_words = lower_words(span);
    let widened = claim_words
        .iter()
        .any(|w| QUANTIFIERS.contains(&w.as_str()) && !span_words.contains(w));
    let unhedged = best.is_some_and(|b| {
        lower_words(b)
            .iter()
            .any(|w| HEDGES.contains(&w.as_str()) && !claim_words.contains(w))
    });
    if widened || unhedged {
        flags.push(SCOPE_DIFFERS);
    }
    flags
}

/// The passage sentence sharing the most content terms with the claim
/// (earliest on a tie), and that sentence with its neighbours; None when
/// no sentence shares [`MIN_SHARED_TERMS`].
fn align(claim: &str, passage: &str) -> Option<(String, String)> {
    let want: HashSet<String> = terms(claim).into_iter().collect();
    let mut units: Vec<&str> = Vec::new();
    for (ps, pe) in paragraphs(passage) {
        let para = &passage[ps..pe];
        units.extend(sentences(para).into_iter().map(|(s, e)| &para[s..e]));
    }
    let shared = |s: &str| {
        let got: HashSet<String> = terms(s).into_iter().collect();
        want.intersection(&got).count()
    };
    let (best, score) = units.iter().enumerate().map(|(i, s)| (i, shared(s))).fold(
        None,
        |acc: Option<(usize, usize)>, (i, n)| match acc {
            Some((_, m)) if m >= n => acc,
            _ => Some((i, n)),
        },
    )?;
    if score < MIN_SHARED_TERMS.min(want.len()) || score == 0 {
        return None;
    }
    let lo = best.saturating_sub(1);
    let hi = (best + 2).min(units.len());
    Some((units[lo..hi].join(" "), units[best].to_string()))
}

/// Lowercase words, apostrophes kept inside them ("don't").
fn lower_words(text: &str) -> HashSet<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(|w| w.trim_matches('\'').to_string())
        .collect()
}

/// Whether a sentence states a negation.
fn negated(text: &str) -> bool {
    lower_words(text).iter().any(|w| {
        matches!(
            w.as_str(),
            "not" | "no" | "never" | "none" | "nothing" | "neither" | "nor" | "cannot" | "without"
        ) || w.ends_with("n't")
    })
}

/// Every figure in `text`: runs holding a digit (thousands separators
/// dropped, a trailing `%` or full stop cut) and spelled-out numbers.
pub fn figures(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    for raw in text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '.' | ',' | '%'))) {
        let token = raw.trim_matches(|c: char| matches!(c, '.' | ',' | '%'));
        if token.is_empty() {
            continue;
        }
        let lower = token.to_lowercase();
        if let Some((_, digits)) = NUMBER_WORDS.iter().find(|(w, _)| *w == lower) {
            out.insert((*digits).to_string());
            continue;
        }
        if !token.chars().any(|c| c.is_ascii_digit()) {
            continue;
        }
        // "14,000" is 14000; a comma between words or after a figure ends it
        let mut figure = String::new();
        let chars: Vec<char> = lower.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            let between_digits = i > 0
                && chars[i - 1].is_ascii_digit()
                && chars.get(i + 1).is_some_and(char::is_ascii_digit);
            match c {
                ',' if between_digits => {}
                ',' | '%' => {
                    if !figure.is_empty() {
                        out.insert(std::mem::take(&mut figure));
                    }
                }
                _ => figure.push(c),
            }
        }
        let figure = figure.trim_end_matches('.');
        // "v1.20.0" names the version "1.20.0"
        let figure = match figure.strip_prefix('v') {
            Some(rest) if rest.starts_with(|c: char| c.is_ascii_digit()) => rest,
            _ => figure,
        }
        .to_string();
        if !figure.is_empty() {
            out.insert(figure);
        }
    }
    out
}

/// The code names a claim uses: backticked spans, and bare words shaped
/// like code (`a::b`, `snake_case`, inner capitals, a call's `()`).
pub fn names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut outside = String::new();
    while let Some(open) = rest.find('`') {
        outside.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('`') else {
            outside.push_str(after);
            rest = "";
            break;
        };
        let name = tidy_name(&after[..close]);
        if !name.is_empty() {
            out.push(name);
        }
        rest = &after[close + 1..];
    }
    outside.push_str(rest);
    for word in outside.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '"')) {
        let word = word.trim_matches(|c: char| matches!(c, '.' | ':' | '!' | '?' | '\''));
        let inner_capital = word
            .char_indices()
            .skip(1)
            .any(|(i, c)| c.is_uppercase() && word[..i].chars().any(char::is_lowercase));
        let code = word.contains("::")
            || (word.contains('_') && word.chars().any(char::is_alphabetic))
            || word.ends_with("()")
            || inner_capital;
        if code {
            let name = tidy_name(word);
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

/// A name as it would appear in running text: surrounding brackets and a
/// call's `()` or a macro's `!` cut.
fn tidy_name(name: &str) -> String {
    let name = name
        .trim()
        .trim_matches(|c: char| matches!(c, '(' | ')' | '[' | ']'));
    let name = name.strip_suffix("()").unwrap_or(name);
    name.trim_end_matches('!').trim().to_string()
}

/// Text with Markdown code marks and link brackets removed, so
/// "[`Regex::find_iter`]" contains "Regex::find_iter".
fn strip_markup(text: &str) -> String {
    text.chars()
        .filter(|c| !matches!(c, '`' | '[' | ']'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_read_from_digits_and_words() {
        let f = figures("Between 500 and 1,000 MB/s, 30% faster; v1.20.0 needs one retry.");
        assert!(figures("version 1.20.0").contains("1.20.0"));
        for want in ["500", "1000", "30", "1.20.0", "1"] {
            assert!(f.contains(want), "{want} in {f:?}");
        }
        assert!(!f.contains("1,000") && !f.contains("30%"));
        assert!(figures("no numbers here").is_empty());
        assert_eq!(
            figures("0o600 and 16-byte"),
            ["0o600", "16"].map(String::from).into()
        );
    }

    #[test]
    fn a_changed_figure_is_caught_and_a_spelled_out_one_is_not() {
        let src = "Panics if the buffer capacity is 0, or too large.";
        assert_eq!(
            unmet("It panics if the buffer capacity is 1, or too large.", src),
            [FIGURE_NOT_IN_PASSAGE]
        );
        assert!(unmet("It panics when the buffer capacity is zero.", src).is_empty());
        // a figure elsewhere in a long window does not vouch for the claim's
        let window = "The capacity must be at least 1 message.\n\nUnrelated text about tasks.\n\n\
                      More about schedulers and wakers.\n\nPanics if the buffer capacity is 0, \
                      or too large.";
        assert_eq!(
            unmet("It panics if the buffer capacity is 1.", window),
            [FIGURE_NOT_IN_PASSAGE]
        );
    }

    #[test]
    fn code_names_must_appear() {
        let src = "It does **not** apply to [`Regex::find_iter`] or [`Regex::captures_iter`].";
        assert_eq!(
            unmet("The bound does not apply to `Regex::is_match`.", src),
            [NAME_NOT_IN_PASSAGE]
        );
        assert!(unmet("The bound does not apply to `Regex::find_iter()`.", src).is_empty());
        assert_eq!(
            names("Use NamedTempFile, `tempfile()` and tokio::select! with max_size."),
            ["tempfile", "NamedTempFile", "tokio::select", "max_size"]
        );
        // ordinary capitalised words are not code names
        assert!(names("Serde checks JSON at compile time. It is fast.").is_empty());
    }

    #[test]
    fn negation_is_compared_with_the_matching_sentence() {
        let src = "Unrelated first sentence about queues. Note that this implementation does \
                   not poison the mutex when a thread holding the guard panics.";
        assert_eq!(
            unmet(
                "This implementation poisons the mutex when a thread holding the guard panics.",
                src
            ),
            [NEGATION_DIFFERS]
        );
        assert!(
            unmet(
                "The mutex is not poisoned when a thread holding the guard panics.",
                src
            )
            .is_empty()
        );
    }

    #[test]
    fn widened_scope_and_dropped_hedges_are_caught() {
        let src = "The channel is closed when all senders have been dropped.";
        assert_eq!(
            unmet(
                "The channel is closed as soon as any sender has been dropped.",
                src
            ),
            [SCOPE_DIFFERS]
        );
        assert!(unmet("Once all senders are dropped the channel is closed.", src).is_empty());
        let hedged =
            "If the mutex is available, this call will typically not yield to the runtime.";
        assert_eq!(
            unmet(
                "If the mutex is available, this call will not yield to the runtime.",
                hedged
            ),
            [SCOPE_DIFFERS]
        );
    }

    #[test]
    fn a_claim_sharing_nothing_is_checked_against_the_whole_passage() {
        // no sentence aligns: figures are looked for anywhere, negation not compared
        assert!(unmet("Zebras graze.", "Nothing shared. Not at all.").is_empty());
        assert_eq!(
            unmet("Exactly 7 zebras.", "Nothing shared here."),
            [FIGURE_NOT_IN_PASSAGE]
        );
    }
}
