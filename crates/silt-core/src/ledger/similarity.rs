//! Sediment's lexical similarity, exactly as the reference computes it.

use std::collections::HashSet;

/// The set of `[a-z0-9]+` runs of the lowercased text.
pub fn tokens(s: &str) -> HashSet<String> {
    s.to_lowercase()
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// The set of 3-character slices of the lowercased text with whitespace
/// runs collapsed to one space and trimmed; `{s}` when it is shorter.
pub fn trigrams(s: &str) -> HashSet<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
