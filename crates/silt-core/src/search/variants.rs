//! Query variants: the original query and string rewrites of it, so a
//! backend's ranking of one phrasing does not decide the whole pool.

/// Words a search engine gains nothing from: question scaffolding and
/// articles. Kept short on purpose: prepositions such as "for" and "in"
/// often carry meaning in a query.
const FILLER: &[&str] = &[
    "a", "an", "the", "how", "do", "does", "did", "i", "please", "what", "whats", "is", "are",
    "can", "could", "would", "should", "you", "me", "my", "we", "some", "any", "there",
];

/// Words that, alone, say a query is about software.
const SOFTWARE_WORDS: &[&str] = &[
    "api",
    "apis",
    "sdk",
    "cli",
    "library",
    "package",
    "framework",
    "crate",
    "module",
    "plugin",
    "npm",
    "pip",
    "pypi",
    "cargo",
    "docker",
    "kubernetes",
    "github",
    "git",
    "linux",
    "python",
    "rust",
    "javascript",
    "typescript",
    "golang",
    "java",
    "compiler",
    "install",
    "installing",
    "config",
    "configuration",
    "function",
    "error",
    "exception",
    "repository",
    "repo",
    "server",
    "database",
    "sql",
    "json",
    "yaml",
    "http",
    "wasm",
    "webassembly",
];

/// The most variants a query gets, and the fewest asked for.
pub const MAX_VARIANTS: usize = 4;
/// The fewest variants a caller may ask for (fewer may come back when
/// variants coincide).
pub const MIN_VARIANTS: usize = 2;

fn words(text: &str) -> Vec<&str> {
    text.split_whitespace().collect()
}

fn is_filler(word: &str) -> bool {
    let w: String = word
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase()
        .replace('\'', "");
    FILLER.contains(&w.as_str())
}

/// The query without filler words; the query itself when only filler is
/// left. Whitespace-normalised.
pub fn strip_filler(query: &str) -> String {
    let kept: Vec<&str> = words(query).into_iter().filter(|w| !is_filler(w)).collect();
    if kept.is_empty() {
        words(query).join(" ")
    } else {
        kept.join(" ")
    }
}

/// A reordered phrasing: quotes become spaces, filler is dropped, and with
/// three or more words the last moves to the front.
pub fn rephrase(query: &str) -> String {
    let unquoted = query.replace(['"', '\u{201c}', '\u{201d}'], " ");
    let mut kept: Vec<&str> = words(&unquoted)
        .into_iter()
        .filter(|w| !is_filler(w))
        .collect();
    if kept.is_empty() {
        kept = words(&unquoted);
    }
    if kept.len() >= 3 {
        let last = kept.pop().expect("three or more");
        kept.insert(0, last);
    }
    kept.join(" ")
}

/// Whether the query names software: a software word, a package-like token
/// (`foo.py`, `tree-sitter-language-pack`, `snake_case`), CamelCase, all
/// capitals of two or more letters, or a capitalised word longer than two
/// letters after the first word.
pub fn names_software(query: &str) -> bool {
    words(query).iter().enumerate().any(|(i, raw)| {
        let w = raw.trim_matches(|c: char| !c.is_alphanumeric());
        let letters: Vec<char> = w.chars().filter(|c| c.is_alphabetic()).collect();
        let lower = w.to_lowercase();
        let software_word = SOFTWARE_WORDS.contains(&lower.as_str());
        let package_like = w.contains(['.', '-', '_'])
            && w.split(['.', '-', '_']).filter(|p| !p.is_empty()).count() >= 2
            && w.chars().all(|c| c.is_alphanumeric() || "._-".contains(c));
        let camel = w
            .chars()
            .zip(w.chars().skip(1))
            .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
        let all_caps = letters.len() >= 2 && letters.iter().all(|c| c.is_uppercase());
        let capitalised_later =
            i > 0 && w.chars().count() > 2 && w.chars().next().is_some_and(char::is_uppercase);
        software_word || package_like || camel || all_caps || capitalised_later
    })
}

/// The variants of `query`, at most `wanted` (clamped to 2..=4): the
/// original, the stripped query, the rephrase, then "<stripped> docs" and
/// "<stripped> github" when the query names software. Whitespace is
/// normalised and variants equal but for case are dropped, so fewer may
/// come back.
pub fn variants(query: &str, wanted: usize) -> Vec<String> {
    let wanted = wanted.clamp(MIN_VARIANTS, MAX_VARIANTS);
    let original = words(query).join(" ");
    let stripped = strip_filler(query);
    let mut candidates = vec![original, stripped.clone(), rephrase(query)];
    if names_software(query) {
        candidates.push(format!("{stripped} docs"));
        candidates.push(format!("{stripped} github"));
    }
    let mut out: Vec<String> = Vec::new();
    for c in candidates {
        if c.is_empty() || out.iter().any(|o| o.eq_ignore_ascii_case(&c)) {
            continue;
        }
        out.push(c);
        if out.len() == wanted {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_cases_strip_and_rephrase() {
        assert_eq!(strip_filler("how do I please fix the a build"), "fix build");
        assert_eq!(strip_filler("how do I"), "how do I");
        assert_eq!(
            rephrase("the \"tree sitter\" python grammar"),
            "grammar tree sitter python"
        );
        assert_eq!(rephrase("two words"), "two words");
    }

    #[test]
    fn the_spec_cases_name_software_or_not() {
        for q in [
            "the TypeSafe SDK",
            "install tree-sitter-language-pack",
            "what does FastMCP do",
            "reading a foo.py file",
        ] {
            assert!(names_software(q), "{q}");
        }
        assert!(!names_software("best sourdough starter recipe"));
        // a capitalised first word is only the start of a sentence
        assert!(!names_software("Best sourdough starter recipe"));
    }

    #[test]
    fn variants_are_normalised_deduplicated_and_capped() {
        assert_eq!(
            variants("  what does   FastMCP do ", 4),
            [
                "what does FastMCP do",
                "FastMCP",
                "FastMCP docs",
                "FastMCP github"
            ]
        );
        assert_eq!(
            variants("what does FastMCP do", 3),
            ["what does FastMCP do", "FastMCP", "FastMCP docs"]
        );
        // nothing to strip or reorder: one variant is all there is
        assert_eq!(variants("sourdough", 3), ["sourdough"]);
        assert_eq!(
            variants("best sourdough starter recipe", 4),
            [
                "best sourdough starter recipe",
                "recipe best sourdough starter"
            ]
        );
        // asked for 1 or 9: clamped to 2..=4
        assert_eq!(variants("how to fix the build", 1).len(), 2);
        assert_eq!(
            variants("install the tree-sitter python grammar", 9).len(),
            4
        );
    }
}
