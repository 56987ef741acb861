//! The repository's lexical evidence for a grep question: BM25F over each
//! file's path, its definitions and its content, with term weights (IDF)
//! from the whole repository.
//!
//! # Why the engine computes it
//!
//! Whether a word tells files apart depends on the repository: "repository"
//! says nothing in a Git client where every file has it, and "lock" says a
//! lot. A judge cannot know that. It sees one batch of at most
//! [`crate::ask::MAX_BATCH`] items, and the host caches its answer per
//! (judge, question, item text), so an answer must not depend on which other
//! files shared the batch. The engine sees the whole walk, so the statistics
//! are computed here, and the judge contract (`silt:judge`) does not change.
//!
//! How grep uses the evidence (`super::run`):
//!
//! - **silt's lexical judge** (a judge whose info equals
//!   [`crate::lexical::info`]: the same name and version): its method is word overlap between the
//!   question and one preview, which this module computes over the whole
//!   file with the repository's weights. Its answers would add nothing but
//!   noise, so grep does not ask it. Each file's probability is the lexical
//!   judge's mapping applied to the file's evidence:
//!   `p = softmax(BETA × [coverage, 0])[0]`, so no evidence gives 0.5, the
//!   lexical judge's "no evidence" answer. No judge request is made, so no
//!   answer is cached either.
//! - **Any other judge** (an embedding judge, an LLM behind HTTP): it reads
//!   the same previews as before and its answers are the results,
//!   unchanged. The evidence only orders files the judge gave the same
//!   probability (model judges often do), before the path does.
//!
//! A fixed-weight blend of the judge's answer with the evidence was
//! rejected: a weight large enough to rank well with the lexical judge
//! (whose answers are confident but carry no repository statistics) would
//! overrule a model judge, and an embedding judge's narrow spread of
//! probabilities most of all.
//!
//! # The score
//!
//! Features are the question's terms ([`crate::text::terms`]: words split
//! on camelCase and snake_case, stopwords out, stemmed) and its adjacent
//! term pairs (after stopwords are dropped), so a file quoting the
//! question's error text or naming its identifier (`stateReason`, "state
//! reason") gets the pairs too. Each file is read as three fields: its path,
//! its definition lines (lines starting with a declaring keyword such as
//! `func`, `fn`, `def`, `class`, `type`, up to the first `{` or `=`) and its
//! whole text. For feature `t` and file `d`:
//!
//! ```text
//! tf(t, d)  = Σ_fields  w_f · count_f(t, d) / (1 − b + b · len_f(d) / avglen_f)
//! idf(t)    = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))      over the N walked text files
//! score(d)  = Σ_t  qtf(t) · idf(t) · tf(t, d) / (K1 + tf(t, d))
//! coverage  = score(d) / Σ_t qtf(t) · idf(t)                  in [0, 1)
//! ```
//!
//! with `qtf(t)` the feature's count in the question, sums over the
//! features present somewhere in the repository, and the constants below:
//! textbook BM25 values (K1 = 1.2, b = 0.75), a path worth three content
//! words and a definition two. No constant is fitted to the evaluation set;
//! the choice of features (pairs, question counts) was made on its
//! development cases. `docs/eval/RESULTS.md` reports how it ranks.

use std::collections::HashMap;

use crate::lexical::{BETA, softmax};
use crate::text::{is_stopword, stem, words};

/// Term frequency saturation.
pub const K1: f64 = 1.2;
/// Length normalisation, the same for every field.
pub const B: f64 = 0.75;
/// Field weights: path, definitions, content.
pub const FIELD_WEIGHTS: [f64; FIELDS] = [3.0, 2.0, 1.0];

const PATH: usize = 0;
const DEFINITIONS: usize = 1;
const CONTENT: usize = 2;
const FIELDS: usize = 3;

/// First words of a line that declares something, across common languages.
const DECLARING: &[&str] = &[
    "abstract",
    "async",
    "class",
    "const",
    "def",
    "enum",
    "export",
    "fn",
    "func",
    "function",
    "impl",
    "interface",
    "let",
    "module",
    "namespace",
    "package",
    "private",
    "protected",
    "pub",
    "public",
    "static",
    "struct",
    "trait",
    "type",
    "var",
];

/// The declaring part of `line` (up to its first `{` or `=`), if it declares.
fn definition(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let first = t
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()?;
    if DECLARING.binary_search(&first).is_err() {
        return None;
    }
    Some(&t[..t.find(['{', '=']).unwrap_or(t.len())])
}

/// One grep call's question, read once, and a stem cache for the files.
pub struct Evidence {
    /// Distinct features (terms, and pairs as "a b"), sorted.
    features: Vec<String>,
    /// Each feature's count in the question.
    qtf: Vec<u32>,
    /// Word → term (None for stopwords and one-letter words).
    stems: HashMap<String, Option<String>>,
}

/// What one unit (a file, or a stretch of one) holds of the question.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts {
    /// (feature, count per field) for each feature present, by feature.
    hits: Vec<(usize, [u32; FIELDS])>,
    /// Terms per field.
    len: [u32; FIELDS],
}

impl Evidence {
    /// Reads `question` into its features, with an empty stem cache.
    pub fn new(question: &str) -> Evidence {
        let mut e = Evidence {
            features: vec![],
            qtf: vec![],
            stems: HashMap::new(),
        };
        let seq: Vec<String> = words(question)
            .into_iter()
            .filter_map(|w| e.term(w))
            .collect();
        let pairs = seq
            .windows(2)
            .filter(|w| w[0] != w[1])
            .map(|w| format!("{} {}", w[0], w[1]));
        let mut counts: HashMap<String, u32> = HashMap::new();
        for f in seq.iter().cloned().chain(pairs) {
            *counts.entry(f).or_default() += 1;
        }
        let mut sorted: Vec<(String, u32)> = counts.into_iter().collect();
        sorted.sort();
        (e.features, e.qtf) = sorted.into_iter().unzip();
        e
    }

    fn term(&mut self, word: String) -> Option<String> {
        if let Some(t) = self.stems.get(&word) {
            return t.clone();
        }
        let t = (word.chars().count() > 1 && !is_stopword(&word)).then(|| stem(&word));
        self.stems.insert(word, t.clone());
        t
    }

    fn feature(&self, f: &str) -> Option<usize> {
        self.features.binary_search_by(|x| x.as_str().cmp(f)).ok()
    }

    /// Counts the question's features in a unit at `path` holding `text`.
    pub fn count(&mut self, path: &str, text: &str) -> Counts {
        let mut per: HashMap<usize, [u32; FIELDS]> = HashMap::new();
        let mut len = [0u32; FIELDS];
        let mut field = |e: &mut Evidence, f: usize, text: &str| {
            // the previous term, when it is one of the question's (a pair
            // feature is two question terms)
            let mut prev: Option<String> = None;
            for w in words(text) {
                let Some(t) = e.term(w) else { continue };
                len[f] += 1;
                let Some(i) = e.feature(&t) else {
                    prev = None;
                    continue;
                };
                per.entry(i).or_default()[f] += 1;
                if let Some(p) = prev.filter(|p| *p != t)
                    && let Some(j) = e.feature(&format!("{p} {t}"))
                {
                    per.entry(j).or_default()[f] += 1;
                }
                prev = Some(t);
            }
        };
        field(self, PATH, path);
        for line in text.lines() {
            if let Some(d) = definition(line) {
                field(self, DEFINITIONS, d);
            }
        }
        field(self, CONTENT, text);
        let mut hits: Vec<(usize, [u32; FIELDS])> = per.into_iter().collect();
        hits.sort_by_key(|h| h.0);
        Counts { hits, len }
    }
}

/// Feature weights from the repository: `qtf · idf`, 0 for features no
/// file holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Weights {
    weight: Vec<f64>,
    total: f64,
}

impl Weights {
    /// IDF over `files` (every walked text file).
    pub fn new(evidence: &Evidence, files: &[Counts]) -> Weights {
        let mut df = vec![0usize; evidence.features.len()];
        for c in files {
            for (i, _) in &c.hits {
                df[*i] += 1;
            }
        }
        let n = files.len() as f64;
        let weight: Vec<f64> = df
            .iter()
            .zip(&evidence.qtf)
            .map(|(&d, &q)| {
                if d == 0 {
                    return 0.0;
                }
                let d = d as f64;
                q as f64 * (1.0 + (n - d + 0.5) / (d + 0.5)).ln()
            })
            .collect();
        let total = weight.iter().sum();
        Weights { weight, total }
    }

    /// Each unit's coverage in [0, 1); field lengths are normalised by the
    /// average over `units` (the files, or the stretches being compared).
    pub fn coverage(&self, units: &[Counts]) -> Vec<f64> {
        let n = units.len().max(1) as f64;
        let mut avg = [0.0; FIELDS];
        for u in units {
            for (a, l) in avg.iter_mut().zip(u.len) {
                *a += l as f64 / n;
            }
        }
        units
            .iter()
            .map(|u| {
                if self.total <= 0.0 {
                    return 0.0;
                }
                let norm: Vec<f64> = (0..FIELDS)
                    .map(|f| {
                        if avg[f] > 0.0 {
                            1.0 - B + B * u.len[f] as f64 / avg[f]
                        } else {
                            1.0
                        }
                    })
                    .collect();
                let score: f64 = u
                    .hits
                    .iter()
                    .map(|(i, counts)| {
                        let tf: f64 = (0..FIELDS)
                            .map(|f| FIELD_WEIGHTS[f] * counts[f] as f64 / norm[f])
                            .sum();
                        self.weight[*i] * tf / (K1 + tf)
                    })
                    .sum();
                score / self.total
            })
            .collect()
    }
}

/// The lexical judge's probability for a unit with this coverage: its
/// softmax over (yes, no) with nothing covering "no".
pub fn lexical_probability(coverage: f64) -> f64 {
    softmax(&[coverage, 0.0], BETA)[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Coverage of each (path, text) against `question`, IDF over them all.
    fn ranked(question: &str, files: &[(&str, &str)]) -> Vec<f64> {
        let mut e = Evidence::new(question);
        let counts: Vec<Counts> = files.iter().map(|(p, t)| e.count(p, t)).collect();
        Weights::new(&e, &counts).coverage(&counts)
    }

    /// `n` files of filler that say nothing about anything asked below.
    fn filler(n: usize) -> Vec<(String, String)> {
        (0..n)
            .map(|i| {
                (
                    format!("src/other{i}.go"),
                    "package other\nfunc helper() int { return 1 }\n".to_string(),
                )
            })
            .collect()
    }

    fn with_filler<'a>(
        files: &[(&'a str, &'a str)],
        rest: &'a [(String, String)],
    ) -> Vec<(&'a str, &'a str)> {
        let mut all = files.to_vec();
        all.extend(rest.iter().map(|(p, t)| (p.as_str(), t.as_str())));
        all
    }

    #[test]
    fn a_rare_word_outweighs_a_common_one() {
        // "repository" is in every file, "lock" in one: the file with
        // "lock" wins although each file matches one question word
        let mut files: Vec<(String, String)> = (0..8)
            .map(|i| {
                (
                    format!("f{i}.txt"),
                    format!("the repository file number {i}"),
                )
            })
            .collect();
        files.push(("x.txt".into(), "lock".into()));
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let c = ranked("lock the repository", &refs);
        assert!(c[8] > 2.0 * c[0], "{c:?}");
        assert!(c.iter().all(|x| (0.0..1.0).contains(x)), "{c:?}");
    }

    #[test]
    fn term_frequency_saturates() {
        let rest = filler(10);
        let once = "the parser reads tokens";
        let many = "parser ".repeat(10) + "reads tokens";
        let files = with_filler(&[("a.txt", once), ("b.txt", &many)], &rest);
        let c = ranked("parser", &files);
        assert!(c[1] > c[0], "more occurrences count: {c:?}");
        assert!(c[1] < 2.0 * c[0], "but ten are not ten times one: {c:?}");
    }

    #[test]
    fn longer_files_need_more_occurrences() {
        let rest = filler(10);
        let long = format!("parser\n{}", "unrelated words here\n".repeat(200));
        let files = with_filler(&[("short.txt", "parser"), ("long.txt", &long)], &rest);
        let c = ranked("parser", &files);
        assert!(c[0] > c[1], "{c:?}");
    }

    #[test]
    fn the_path_and_definitions_count_beside_the_content() {
        let rest = filler(10);
        let files = with_filler(
            &[
                ("pkg/rename/rename.go", "package x\nfunc run() {}\n"),
                ("pkg/misc/misc.go", "package x\nfunc run() {}\n"),
                // the same words, in a definition or in a body
                (
                    "pkg/misc/def.go",
                    "package x\nfunc renameRepo() { run() }\n",
                ),
                (
                    "pkg/misc/use.go",
                    "package x\nfunc run() { renameRepo() }\n",
                ),
            ],
            &rest,
        );
        let c = ranked("rename", &files);
        assert!(c[0] > 0.0 && c[1] == 0.0, "path alone counts: {c:?}");
        assert!(c[2] > c[3], "a definition outweighs a use: {c:?}");
    }

    #[test]
    fn identifiers_are_split_and_adjacent_pairs_count() {
        let rest = filler(10);
        let files = with_filler(
            &[
                ("a.go", "x := pr.stateReason"),
                ("b.go", "state := 1\n// a reason\n// more\n// lines\n"),
                ("c.go", "x := state_reason"),
            ],
            &rest,
        );
        let c = ranked("gh pr view --json stateReason crashes", &files);
        assert!(
            c[0] > c[1],
            "the identifier as a pair beats its words apart: {c:?}"
        );
        assert!(c[2] > c[1], "snake_case is split the same way: {c:?}");
    }

    #[test]
    fn quoted_error_text_finds_its_file() {
        let rest = filler(20);
        let files = with_filler(
            &[
                (
                    "lookup.go",
                    "return fmt.Errorf(\"invalid issue format: %q\", s)",
                ),
                ("issue.go", "// issue\nvar format = 1\nvar invalid = 2\n"),
            ],
            &rest,
        );
        let c = ranked(
            "it fails with `invalid issue format: \"https://github.com/o/r/pull/60\"`",
            &files,
        );
        assert!(c[0] > c[1], "{c:?}");
    }

    #[test]
    fn no_shared_term_is_no_evidence_and_the_lexical_answer_is_uniform() {
        let c = ranked(
            "where is the parser",
            &[("a.txt", "styling"), ("b.txt", "parser")],
        );
        assert_eq!(c[0], 0.0);
        assert!(c[1] > 0.0);
        assert_eq!(lexical_probability(0.0), 0.5);
        assert!(lexical_probability(c[1]) > 0.5);
    }

    #[test]
    fn deterministic_whatever_the_order_of_reading() {
        let files = [
            ("a.go", "func parseConfig() {}"),
            ("b.go", "config parse parse"),
            ("c.md", "# Config\nhow the config is parsed"),
        ];
        let once = ranked("where is the config parsed", &files);
        assert_eq!(once, ranked("where is the config parsed", &files));
        let mut reversed = files;
        reversed.reverse();
        let mut back = ranked("where is the config parsed", &reversed);
        back.reverse();
        // the same up to the order floats were summed in
        assert!(once.iter().zip(&back).all(|(a, b)| (a - b).abs() < 1e-12));
    }

    #[test]
    fn declaring_keywords_are_sorted_for_binary_search() {
        let mut sorted = DECLARING.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, DECLARING);
        assert_eq!(
            definition("  func (c *Client) Commits() {"),
            Some("func (c *Client) Commits() ")
        );
        assert_eq!(definition("x := 1"), None);
    }
}
