//! Which stretches of a source the judge reads for a claim: around the
//! quote when the citation gave one that was found, else the paragraphs
//! that share the most rare words with the claim (BM25).

use std::collections::{HashMap, HashSet};

use super::quote::QuoteMatch;
use crate::text::is_stopword;

/// The most characters one window holds.
pub const WINDOW_CHARS: usize = 1500;
/// Paragraphs BM25 picks when no quote was found.
pub const BM25_TOP: usize = 3;
const K1: f64 = 1.5;
const B: f64 = 0.75;

/// How a window was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// Around a quote that was found.
    Quote,
    /// By lexical overlap with the claim.
    Overlap,
}

impl Via {
    /// The name a passage's `via` reports: `quote` or `overlap`.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Quote => "quote",
            Via::Overlap => "overlap",
        }
    }
}

/// A stretch of a source, as byte offsets into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First byte, inclusive.
    pub start: usize,
    /// Last byte, exclusive.
    pub end: usize,
    /// How the window was chosen.
    pub via: Via,
}

/// Paragraphs: runs of lines between blank lines, as byte ranges with
/// their surrounding whitespace trimmed. A line holding only a comment
/// marker (`///`, `//!`, a block comment's `*`) is blank, as it reads in
/// the rendered docs; a list item starts a paragraph of its own; and a
/// paragraph longer than half a window is cut at line ends, so that a
/// paragraph and the next fit one window. Before, a source file's whole
/// doc comment, or a README's list of twenty features, was one
/// paragraph cut to its first window, and the sentence a claim restated
/// never reached the judge (docs/JUDGES.md, "Pipeline ceiling").
pub fn paragraphs(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    // the open paragraph: its start, its end, its length in characters
    let mut open: Option<(usize, usize, usize)> = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let content = under_comment_marker(line);
        let lead = line.len() - line.trim_start().len();
        let (start, end) = (at + lead, at + line.trim_end().len());
        let chars = line.trim().chars().count();
        at += line.len();
        if content.is_empty() {
            out.extend(open.take().map(|(s, e, _)| (s, e)));
            continue;
        }
        if let Some((s, e, n)) = open
            && (starts_item(content) || n + chars > WINDOW_CHARS / 2)
        {
            out.push((s, e));
            open = None;
        }
        open = Some(match open {
            Some((s, _, n)) => (s, end, n + chars + 1),
            None => (start, end, chars),
        });
    }
    out.extend(open.map(|(s, e, _)| (s, e)));
    out
}

/// A line's text under the comment marker a doc or block comment puts
/// before it; empty for a line of nothing else.
fn under_comment_marker(line: &str) -> &str {
    let t = line.trim();
    for marker in ["///", "//!", "//"] {
        if let Some(rest) = t.strip_prefix(marker) {
            return rest.trim();
        }
    }
    match t {
        "*" | "/**" | "/*!" | "*/" => "",
        _ => t,
    }
}

/// Whether a line starts a list item: `* `, `- `, `+ `, `1. `, `1) `.
fn starts_item(content: &str) -> bool {
    if ["* ", "- ", "+ "].iter().any(|m| content.starts_with(m)) {
        return true;
    }
    let digits = content.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && (content[digits..].starts_with(". ") || content[digits..].starts_with(") "))
}

/// The paragraph before, the one holding the quote and the one after,
/// cut to [`WINDOW_CHARS`] around the quote's middle when longer.
pub fn quote_window(text: &str, paras: &[(usize, usize)], m: QuoteMatch) -> Window {
    let first = paras.iter().position(|&(_, e)| e > m.start).unwrap_or(0);
    let last = paras
        .iter()
        .rposition(|&(s, _)| s < m.end)
        .unwrap_or(first)
        .max(first);
    let lo = paras
        .get(first.saturating_sub(1))
        .map_or(m.start, |p| p.0)
        .min(m.start);
    let hi = paras
        .get((last + 1).min(paras.len().saturating_sub(1)))
        .map_or(m.end, |p| p.1)
        .max(m.end);
    let (start, end) = centred(text, lo, hi, (m.start + m.end) / 2);
    Window {
        start,
        end,
        via: Via::Quote,
    }
}

/// At most [`WINDOW_CHARS`] characters of `text[lo..hi]`, centred on
/// byte `mid` when the range is longer than that.
fn centred(text: &str, lo: usize, hi: usize, mid: usize) -> (usize, usize) {
    let bounds: Vec<usize> = text[lo..hi]
        .char_indices()
        .map(|(i, _)| lo + i)
        .chain(std::iter::once(hi))
        .collect();
    let chars = bounds.len() - 1;
    if chars <= WINDOW_CHARS {
        return (lo, hi);
    }
    let mid_char = bounds.partition_point(|&b| b < mid);
    let first = mid_char
        .saturating_sub(WINDOW_CHARS / 2)
        .min(chars - WINDOW_CHARS);
    (bounds[first], bounds[first + WINDOW_CHARS])
}

/// The words BM25 counts: lowercase runs of letters and digits longer than
/// one character, stopwords out.
fn bm25_terms(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() > 1)
        .map(str::to_lowercase)
        .filter(|w| !is_stopword(w))
        .collect()
}

/// The [`BM25_TOP`] paragraphs that best match `claim`, each joined with the
/// paragraph after it, duplicates dropped, in document order. Paragraphs
/// that share no term with the claim are never picked.
pub fn overlap_windows(text: &str, paras: &[(usize, usize)], claim: &str) -> Vec<Window> {
    let query: HashSet<String> = bm25_terms(claim).into_iter().collect();
    if query.is_empty() || paras.is_empty() {
        return Vec::new();
    }
    let docs: Vec<HashMap<String, usize>> = paras
        .iter()
        .map(|&(s, e)| {
            let mut tf = HashMap::new();
            for t in bm25_terms(&text[s..e]) {
                *tf.entry(t).or_insert(0) += 1;
            }
            tf
        })
        .collect();
    let lengths: Vec<f64> = docs
        .iter()
        .map(|d| d.values().sum::<usize>() as f64)
        .collect();
    let avgdl = (lengths.iter().sum::<f64>() / lengths.len() as f64).max(1.0);
    let n = docs.len() as f64;
    let idf: HashMap<&str, f64> = query
        .iter()
        .map(|q| {
            let df = docs.iter().filter(|d| d.contains_key(q)).count() as f64;
            (q.as_str(), (1.0 + (n - df + 0.5) / (df + 0.5)).ln())
        })
        .collect();
    let mut scored: Vec<(usize, f64)> = docs
        .iter()
        .zip(&lengths)
        .enumerate()
        .map(|(i, (d, &dl))| {
            let s: f64 = idf
                .iter()
                .map(|(q, w)| {
                    let tf = *d.get(*q).unwrap_or(&0) as f64;
                    w * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * dl / avgdl))
                })
                .sum();
            (i, s)
        })
        .filter(|&(_, s)| s > 0.0)
        .collect();
    // strongest first; equal scores keep document order
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut picked: Vec<usize> = scored.iter().take(BM25_TOP).map(|&(i, _)| i).collect();
    picked.sort_unstable();
    picked.dedup();
    picked
        .into_iter()
        .map(|i| {
            let start = paras[i].0;
            let hi = paras.get(i + 1).map_or(paras[i].1, |p| p.1);
            let (start, end) = centred(text, start, hi, start);
            Window {
                start,
                end,
                via: Via::Overlap,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts<'a>(text: &'a str, ws: &[Window]) -> Vec<&'a str> {
        ws.iter().map(|w| &text[w.start..w.end]).collect()
    }

    #[test]
    fn paragraphs_split_on_blank_lines() {
        let text = "  one\nline two  \n\n \n three\n\nfour";
        let p: Vec<&str> = paragraphs(text).iter().map(|&(s, e)| &text[s..e]).collect();
        assert_eq!(p, ["one\nline two", "three", "four"]);
    }

    #[test]
    fn doc_comments_and_lists_split_where_their_rendering_does() {
        let text = "/// Creates a channel.\n///\n/// # Panics\n/// Panics if 0.\n\
                    fn x() {}\n\nFeatures:\n* `a` does one thing.\n  more on a.\n\
                    * `b` does another.\n1. first\n2) second";
        let p: Vec<&str> = paragraphs(text).iter().map(|&(s, e)| &text[s..e]).collect();
        assert_eq!(
            p,
            [
                "/// Creates a channel.",
                "/// # Panics\n/// Panics if 0.\nfn x() {}",
                "Features:",
                "* `a` does one thing.\n  more on a.",
                "* `b` does another.",
                "1. first",
                "2) second",
            ]
        );
    }

    #[test]
    fn a_long_paragraph_is_cut_at_line_ends_to_half_a_window() {
        let line = "word ".repeat(60);
        let text = format!("{line}\n").repeat(12);
        let paras = paragraphs(&text);
        assert!(paras.len() > 1, "{}", paras.len());
        for &(s, e) in &paras {
            assert!(text[s..e].chars().count() <= WINDOW_CHARS / 2);
        }
        assert_eq!(paras.first().unwrap().0, 0);
        assert_eq!(paras.last().unwrap().1, text.trim_end().len());
    }

    #[test]
    fn a_quote_window_holds_the_paragraphs_around_it() {
        let text = "alpha\n\nbeta\n\ngamma QUOTE here\n\ndelta\n\nepsilon";
        let paras = paragraphs(text);
        let at = text.find("QUOTE").unwrap();
        let w = quote_window(
            text,
            &paras,
            QuoteMatch {
                start: at,
                end: at + 5,
            },
        );
        assert_eq!(&text[w.start..w.end], "beta\n\ngamma QUOTE here\n\ndelta");
        // at the edges there is no neighbour on one side
        let w = quote_window(text, &paras, QuoteMatch { start: 0, end: 5 });
        assert_eq!(&text[w.start..w.end], "alpha\n\nbeta");
    }

    #[test]
    fn a_long_quote_window_is_cut_around_the_quote() {
        let text = format!("{}NEEDLE{}", "x".repeat(3000), "y".repeat(3000));
        let paras = paragraphs(&text);
        let at = text.find("NEEDLE").unwrap();
        let w = quote_window(
            &text,
            &paras,
            QuoteMatch {
                start: at,
                end: at + 6,
            },
        );
        let got = &text[w.start..w.end];
        assert_eq!(got.chars().count(), WINDOW_CHARS);
        assert!(got.contains("NEEDLE"));
        let left = got.find("NEEDLE").unwrap();
        assert!((left as i64 - 747).abs() <= 3, "centred: {left}");
    }

    #[test]
    fn overlap_picks_the_rarest_matches_with_their_next_paragraph() {
        let text = "The cat sat.\n\nThe ledger keeps lessons.\n\nUnrelated words.\n\n\
                    Lessons fade with time.\n\nA ledger entry.\n\nTail.";
        let paras = paragraphs(text);
        let ws = overlap_windows(text, &paras, "the ledger keeps lessons");
        assert_eq!(
            texts(text, &ws),
            [
                "The ledger keeps lessons.\n\nUnrelated words.",
                "Lessons fade with time.\n\nA ledger entry.",
                "A ledger entry.\n\nTail.",
            ]
        );
        // stopwords and one-letter words never match
        assert!(overlap_windows(text, &paras, "the a of").is_empty());
        assert!(overlap_windows(text, &paras, "zebra").is_empty());
    }

    #[test]
    fn rarer_terms_weigh_more() {
        let text = "common rare\n\ncommon\n\ncommon\n\ncommon common";
        let paras = paragraphs(text);
        let ws = overlap_windows(text, &paras, "common rare");
        assert_eq!(ws[0].start, 0);
    }
}
