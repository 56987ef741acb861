//! Text helpers: terms for lexical matching, character-safe cutting, and the
//! token estimate budgets are planned with.

/// English words too common to say anything about relevance.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "being", "but", "by", "can", "could", "did", "do", "does", "doing", "done", "for",
    "from", "had", "has", "have", "having", "he", "her", "here", "him", "his", "how", "i", "if",
    "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "no", "nor",
    "not", "of", "on", "once", "only", "or", "other", "our", "out", "over", "own", "please",
    "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up",
    "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why",
    "will", "with", "would", "you", "your",
];

/// True for words [`terms`] leaves out.
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// Splits text into lowercase words: runs of letters and digits, with
/// camelCase and snake_case identifiers broken into their parts.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for run in text.split(|c: char| !c.is_alphanumeric()) {
        if run.is_empty() {
            continue;
        }
        let chars: Vec<char> = run.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, cur) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            // "fooBar" | "HTTPServer" -> "HTTP" "Server" | "v2beta" stays whole
            let boundary = (prev.is_lowercase() && cur.is_uppercase())
                || (prev.is_uppercase() && cur.is_uppercase() && next_lower);
            if boundary {
                out.push(chars[start..i].iter().collect::<String>().to_lowercase());
                start = i;
            }
        }
        out.push(chars[start..].iter().collect::<String>().to_lowercase());
    }
    out
}

/// Reduces a lowercase word to its Snowball (Porter 2) English stem, so
/// "crashes", "crashed" and "crashing" meet at "crash".
pub fn stem(word: &str) -> String {
    thread_local! {
        static STEMMER: rust_stemmers::Stemmer =
            rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
    }
    STEMMER.with(|s| s.stem(word).into_owned())
}

/// The terms lexical relevance is computed over: words, minus stopwords and
/// one-character words, stemmed.
pub fn terms(text: &str) -> Vec<String> {
    words(text)
        .into_iter()
        .filter(|w| w.chars().count() > 1 && !is_stopword(w))
        .map(|w| stem(&w))
        .collect()
}

/// The first `max_chars` characters of `text` (never splits a character).
pub fn cut_chars(text: &str, max_chars: usize) -> &str {
    match text.char_indices().nth(max_chars) {
        Some((byte, _)) => &text[..byte],
        None => text,
    }
}

/// The token estimate budgets use: ceil(chars / 4).
pub fn estimate_tokens(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        let mut sorted = STOPWORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOPWORDS);
    }

    #[test]
    fn words_split_identifiers() {
        assert_eq!(words("parseHTTPHeader"), ["parse", "http", "header"]);
        assert_eq!(words("snake_case_name"), ["snake", "case", "name"]);
        assert_eq!(words("Crash on launch!"), ["crash", "on", "launch"]);
    }

    #[test]
    fn stems_meet() {
        assert_eq!(stem("crashes"), "crash");
        assert_eq!(stem("crashing"), "crash");
        assert_eq!(stem("crashed"), "crash");
        assert_eq!(stem("describes"), stem("described"));
    }

    #[test]
    fn terms_drop_stopwords() {
        assert_eq!(
            terms("Does the item describe a bug?"),
            ["item", "describ", "bug"]
        );
    }

    #[test]
    fn cut_respects_characters() {
        assert_eq!(cut_chars("héllo", 2), "hé");
        assert_eq!(cut_chars("abc", 10), "abc");
        assert_eq!(estimate_tokens(9), 3);
    }
}

/// Whether a lesson's action says not to do something. Sentence embeddings
/// barely see negation ("inject CoT" and "do not inject CoT" sit close),
/// so the embedding judge and recall by meaning read polarity from words.
pub fn negated(text: &str) -> bool {
    first_negation_end(text).is_some()
}

/// Where the first word of `text` that says "not" ends, if one does: a
/// word standing alone between spaces (its punctuation trimmed), so a
/// name that holds one is a name, not a negation. On the commit history
/// of rust-lang/cargo, "add inherit no default features case → edit
/// tests/…/inherit_no_default_features_2024_edition/in/Cargo.toml" read as
/// saying not to do its sibling's action, and the lexical judge retired
/// that sibling as a contradiction; "no-op" and "src/not_found.rs" are
/// names too.
pub fn first_negation_end(text: &str) -> Option<usize> {
    let mut at = 0;
    for token in text.split_inclusive(char::is_whitespace) {
        let start = at;
        at += token.len();
        let word = token.trim_matches(|c: char| !c.is_alphanumeric());
        let plain = word.chars().all(|c| c.is_alphanumeric() || c == '\'');
        if plain && !word.is_empty() && says_not(&word.to_lowercase()) {
            let offset = word.as_ptr() as usize - token.as_ptr() as usize;
            return Some(start + offset + word.len());
        }
    }
    None
}

/// Whether any word of `text` says "not", names included
/// ("inherit_no_default_features", "don't"): what makes two triggers
/// otherwise said alike two situations. [`negated`] reads only words
/// standing alone, since an action that names such a thing does not say
/// not to do anything.
pub fn says_not_anywhere(text: &str) -> bool {
    text.split_whitespace().any(|token| {
        let word = token.trim_matches(|c: char| !c.is_alphanumeric());
        says_not(&word.to_lowercase()) || words(word).iter().any(|w| says_not(w))
    })
}

/// Whether one lowercase word of an action says "not" (see [`negated`]).
pub fn says_not(word: &str) -> bool {
    matches!(
        word,
        "not" | "no" | "never" | "avoid" | "without" | "stop" | "dont"
    ) || word.ends_with("n't")
}

/// The cosine of two unit vectors (0 when either is the zero vector).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    // eight running sums, which the compiler keeps in two SIMD lanes: one
    // running sum is a chain of dependent adds it may not reorder, and in
    // the sandbox the scalar loop (an epoch check every element) was a
    // quarter of the embedding judge's time relating lessons
    const LANES: usize = 8;
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut sums = [0f32; LANES];
    let (whole, tail) = (n / LANES * LANES, n % LANES);
    for (x, y) in a[..whole]
        .chunks_exact(LANES)
        .zip(b[..whole].chunks_exact(LANES))
    {
        let (x, y): (&[f32; LANES], &[f32; LANES]) = (
            x.try_into().expect("a chunk"),
            y.try_into().expect("a chunk"),
        );
        for k in 0..LANES {
            sums[k] += x[k] * y[k];
        }
    }
    for k in 0..tail {
        sums[k] += a[whole + k] * b[whole + k];
    }
    sums.iter().sum::<f32>() as f64
}

#[cfg(test)]
mod negation_tests {
    use super::negated;

    #[test]
    fn cosine_sums_every_product_at_any_length() {
        use super::cosine;
        for n in [0, 1, 7, 8, 9, 16, 255, 256, 384] {
            let a: Vec<f32> = (0..n).map(|i| ((i * 7 % 13) as f32 - 6.0) / 8.0).collect();
            let b: Vec<f32> = (0..n).map(|i| ((i * 5 % 11) as f32 - 5.0) / 4.0).collect();
            let plain: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(x * y)).sum();
            assert!((cosine(&a, &b) - plain).abs() < 1e-4, "{n}");
            // the shorter length counts, as a zip does
            assert!((cosine(&a, &b[..n / 2]) - cosine(&a[..n / 2], &b)).abs() < 1e-6);
        }
    }

    #[test]
    fn negation_is_read_from_words() {
        assert!(negated("do not inject CoT, keep it terse"));
        assert!(negated("Don't retry on 4xx"));
        assert!(negated("avoid global state"));
        assert!(!negated("inject explicit step-by-step CoT"));
        assert!(!negated("annotate the notes"));
        assert!(negated("(not) the defaults"));
        assert!(negated("never, ever"));
    }

    /// A negation inside a name (a path, an identifier, a compound) is
    /// part of the name.
    #[test]
    fn a_name_holding_a_negation_is_not_one() {
        for name in [
            "edit tests/testsuite/cargo_add/inherit_no_default_features_2024_edition/in/Cargo.toml",
            "use a no-op logger",
            "open src/not_found.rs",
            "call stop_server() first",
            "set NO_COLOR=1",
        ] {
            assert!(!negated(name), "{name}");
        }
        assert_eq!(
            crate::text::first_negation_end("do not inject CoT"),
            Some(6)
        );
        assert_eq!(
            crate::text::first_negation_end("edit a_no_b, not c"),
            Some(16)
        );
        use crate::text::says_not_anywhere;
        assert!(says_not_anywhere("tests don't pass"));
        assert!(says_not_anywhere("add inherit_no_default_features"));
        assert!(says_not_anywhere("deploying without tests"));
        assert!(!says_not_anywhere("add inherit_default_features"));
    }
}

/// The words of a text that hold a digit ("r12", "3", "v2"), lowercase:
/// repository, version and ticket names. Sentence embeddings barely see
/// them ("editing the parser in repo r3" and "… in repo r12" sit at a
/// cosine near 1), yet two situations naming different ones are two
/// situations, so the embedding judge reads them from the words, as it
/// reads polarity.
pub fn numbered_words(text: &str) -> std::collections::BTreeSet<String> {
    // lowercasing never makes a digit, so most texts end here unread
    if !text.bytes().any(|b| b.is_ascii_digit()) {
        return Default::default();
    }
    text.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '.' || c == '-'))
        .map(|w| w.trim_matches(|c: char| c == '.' || c == '-'))
        .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod numbered_tests {
    use super::numbered_words;

    #[test]
    fn names_with_digits_are_read_from_the_words() {
        assert_eq!(
            numbered_words("Editing the parser in repo R12, then v2.1 and PEP-8."),
            ["pep-8", "r12", "v2.1"].map(String::from).into()
        );
        assert!(numbered_words("writing a database migration").is_empty());
    }
}
