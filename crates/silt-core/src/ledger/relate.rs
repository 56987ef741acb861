//! How two lessons relate, as a judge decides it for the sleep pass, and
//! when sleep may act on the judge's answer.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::Params;
use super::similarity::text_sim;
use crate::text::{negated, terms};

/// The relation between two lessons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The same lesson said twice: fold into one.
    Merge,
    /// The same situation with incompatible actions: keep the stronger,
    /// note the other as a boundary.
    Contradict,
    /// Related but different situations with the same action: material for
    /// an abstracted parent.
    Sibling,
    /// Anything else, a different but compatible action included.
    Distinct,
}

/// A judge's probabilities for one pair, in the order of [`RELATIONS`]
/// (the order in which the deprecated `silt:judge/relate` listed them).
pub type Relation = [f64; 4];

/// The relations in the order a [`Relation`] lists them.
pub const RELATIONS: [Verdict; 4] = [
    Verdict::Merge,
    Verdict::Contradict,
    Verdict::Sibling,
    Verdict::Distinct,
];

impl Verdict {
    /// Whether acting on it retires a lesson.
    pub fn is_destructive(self) -> bool {
        matches!(self, Verdict::Merge | Verdict::Contradict)
    }

    fn position(self) -> usize {
        RELATIONS.iter().position(|&v| v == self).expect("listed")
    }
}

/// The most probable relation (the first on a tie).
pub fn most_probable(r: &Relation) -> Verdict {
    let best = (0..4).fold(0, |b, j| if r[j] > r[b] { j } else { b });
    RELATIONS[best]
}

/// What the sleep pass does with a pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decision {
    /// Act on the verdict.
    Apply(Verdict),
    /// The judge leans to a verdict that would retire a lesson but its
    /// probability is under the margin: leave the pair as it is.
    Hold { verdict: Verdict, probability: f64 },
}

/// The least probability a judge must give "sibling" for the pair to
/// count toward an abstracted parent: more likely siblings than anything
/// else together. Folding retires nothing, but the children turn dormant
/// (kept, not recalled until confirmed), so a parent formed on a judge's
/// noise hides good lessons: SmolLM2-135M, at chance on relations, formed
/// parents on half of the clusters that should have none when any lean
/// to "sibling" counted.
pub const SIBLING_MARGIN: f64 = 0.5;

/// Applies the margins: merge and contradict retire a lesson, so they are
/// acted on only at `margin` or above (held below it); a sibling under
/// [`SIBLING_MARGIN`] is read as distinct; distinct always is.
pub fn decide(r: &Relation, margin: f64) -> Decision {
    let verdict = most_probable(r);
    let probability = r[verdict.position()];
    // NaN never clears a margin
    let clears = |m: f64| probability.partial_cmp(&m).is_some_and(|o| o.is_ge());
    if verdict.is_destructive() && !clears(margin) {
        Decision::Hold {
            verdict,
            probability,
        }
    } else if verdict == Verdict::Sibling && !clears(SIBLING_MARGIN) {
        Decision::Apply(Verdict::Distinct)
    } else {
        Decision::Apply(verdict)
    }
}

/// A lesson as a judge sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Lesson<'a> {
    pub when: &'a str,
    pub prefer: &'a str,
}

/// Decides relations between pairs of lessons.
pub trait RelationJudge {
    /// One [`Relation`] per pair, in order.
    fn relate(&mut self, pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Result<Vec<Relation>, String>;
}

/// Words that only say "not": left out when asking whether two actions
/// are about the same thing.
const NEGATION_TERMS: &[&str] = &[
    "never", "avoid", "without", "stop", "don", "dont", "instead",
];

/// The content terms of an action, negations left out.
fn action_terms(prefer: &str) -> HashSet<String> {
    terms(prefer)
        .into_iter()
        .filter(|t| !NEGATION_TERMS.contains(&t.as_str()))
        .collect()
}

/// The content terms of what a negated action says not to do: the words
/// after its first negation up to the end of that clause ("do not inject
/// CoT, keep it terse" → inject, cot).
fn negated_clause_terms(prefer: &str) -> HashSet<String> {
    // the words keep their case: terms() splits "CoT" as it does elsewhere
    let mut clause = String::new();
    let mut inside = false;
    for piece in prefer.split_inclusive(|c: char| !(c.is_alphanumeric() || c == '\'')) {
        let word = piece.trim_end_matches(|c: char| !(c.is_alphanumeric() || c == '\''));
        if inside {
            clause.push_str(word);
            clause.push(' ');
            if piece.ends_with([',', ';', '.', ':', '(', ')']) {
                break;
            }
        } else if crate::text::says_not(&word.to_lowercase()) {
            inside = true;
        }
    }
    action_terms(&clause)
}

/// Whether a negated clause says "not" to the other action: at least two
/// thirds of its terms are in that action ("do not inject CoT" against
/// "inject explicit step-by-step CoT"), not merely one word in common
/// ("avoid touching generated files" against "update the snapshot
/// files" is two compatible lessons).
fn restates(clause: &HashSet<String>, action: &HashSet<String>) -> bool {
    let shared = clause.intersection(action).count();
    !clause.is_empty() && 3 * shared >= 2 * clause.len()
}

/// The lexical judge's relation, from word overlap alone:
///
/// - **contradict** (0.85) only for the same situation (trigger similarity
///   at `merge_threshold` or more) where exactly one action is negated and
///   the negated clause restates the other action (two thirds of its
///   content words): "inject CoT" against "do not inject CoT", not "update
///   the snapshot files" against "avoid touching generated files". Word
///   overlap cannot tell an
///   incompatible action from a compatible one otherwise ("use tabs"
///   against "run the linter"), so a same-situation pair with different
///   actions is distinct, with 0.3 on contradict: under any margin.
/// - **merge** (0.9) for the same action (action similarity at
///   `action_threshold` or more) on a trigger said again in other function
///   words: the same content words once stemmed ("writing a SQL
///   migration" / "writing an SQL migration"). A changed content word may
///   be another situation ("editing the client" / "testing the client"),
///   and retiring a lesson on it would lose one. The actions must not
///   swap a word either: one restates the other, perhaps with more words
///   ("wrap it in a transaction" / "wrap the migration in a
///   transaction"). A swapped word is as likely the choice itself ("use LF
///   everywhere" / "use CRLF everywhere", "indent with 2 spaces" / "with
///   4 spaces") as a synonym, so such a pair leans to merge (0.6) and is
///   held for review under any margin.
/// - **sibling** (0.8) for related situations (`trigger_threshold` or more)
///   with the same action and the same polarity.
/// - **distinct** otherwise.
pub fn lexical_relation(a: &Lesson<'_>, b: &Lesson<'_>, p: &Params) -> Relation {
    const DISTINCT: Relation = [0.0, 0.0, 0.0, 1.0];
    let trigger = text_sim(a.when, b.when);
    if trigger < p.trigger_threshold {
        return DISTINCT;
    }
    let flipped = negated(a.prefer) != negated(b.prefer);
    let same_situation = trigger >= p.merge_threshold;
    if flipped {
        let (no, yes) = if negated(a.prefer) { (a, b) } else { (b, a) };
        let about_the_same = restates(&negated_clause_terms(no.prefer), &action_terms(yes.prefer));
        return if same_situation && about_the_same {
            [0.0, 0.85, 0.0, 0.15]
        } else {
            DISTINCT
        };
    }
    let same_action = text_sim(a.prefer, b.prefer) >= p.action_threshold;
    let same_words = || {
        let (ta, tb) = (trigger_terms(a.when), trigger_terms(b.when));
        !ta.is_empty() && ta == tb
    };
    match (same_situation, same_action) {
        (_, true) if same_words() && one_restates_the_other(a.prefer, b.prefer) => {
            [0.9, 0.0, 0.0, 0.1]
        }
        (_, true) if same_words() => [0.6, 0.0, 0.0, 0.4],
        (_, true) => [0.0, 0.0, 0.8, 0.2],
        (true, false) => [0.0, 0.3, 0.0, 0.7],
        (false, false) => DISTINCT,
    }
}

/// Whether every word of one action (stopwords left out, numbers and
/// one-letter words kept: "2 spaces" is not "4 spaces") is in the other.
fn one_restates_the_other(a: &str, b: &str) -> bool {
    let words = |t: &str| -> HashSet<String> {
        crate::text::words(t)
            .into_iter()
            .filter(|w| !crate::text::is_stopword(w))
            .map(|w| crate::text::stem(&w))
            .collect()
    };
    let (wa, wb) = (words(a), words(b));
    wa.is_subset(&wb) || wb.is_subset(&wa)
}

/// The content terms of a trigger (stemmed, stopwords left out).
fn trigger_terms(when: &str) -> HashSet<String> {
    terms(when).into_iter().collect()
}

/// The most probable relation under [`lexical_relation`].
pub fn lexical_verdict(a: &Lesson<'_>, b: &Lesson<'_>, p: &Params) -> Verdict {
    most_probable(&lexical_relation(a, b, p))
}

/// The lexical relation judge.
pub struct LexicalRelations(pub Params);

impl RelationJudge for LexicalRelations {
    fn relate(&mut self, pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Result<Vec<Relation>, String> {
        Ok(pairs
            .iter()
            .map(|(a, b)| lexical_relation(a, b, &self.0))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(a: (&str, &str), b: (&str, &str)) -> Verdict {
        let l = |(when, prefer)| Lesson { when, prefer };
        lexical_verdict(&l(a), &l(b), &Params::default())
    }

    #[test]
    fn a_swapped_word_in_the_action_is_held_not_merged() {
        let relation = |a: (&str, &str), b: (&str, &str)| {
            let l = |(when, prefer)| Lesson { when, prefer };
            decide(
                &lexical_relation(&l(a), &l(b), &Params::default()),
                Params::default().destructive_margin,
            )
        };
        let held = |d: Decision| {
            matches!(
                d,
                Decision::Hold {
                    verdict: Verdict::Merge,
                    ..
                }
            )
        };
        let eol = "choosing line endings";
        assert!(held(relation(
            (eol, "use LF everywhere"),
            (eol, "use CRLF everywhere")
        )));
        let indent = "indenting YAML files";
        assert!(held(relation(
            (indent, "indent with 2 spaces"),
            (indent, "indent with 4 spaces")
        )));
        // one restating the other with more words still merges
        let sql = "writing a SQL migration";
        assert_eq!(
            relation(
                (sql, "wrap it in a transaction"),
                (
                    "writing an SQL migration",
                    "wrap the migration in a transaction"
                )
            ),
            Decision::Apply(Verdict::Merge)
        );
    }

    #[test]
    fn only_a_negated_action_on_the_same_situation_contradicts() {
        let gpt = "non-reasoning GPT target";
        assert_eq!(
            verdict(
                (gpt, "inject explicit step-by-step CoT"),
                (gpt, "do not inject CoT, keep it terse")
            ),
            Verdict::Contradict
        );
        // same situation, a different but compatible action: kept apart
        let parser = "editing the parser in repo r3";
        assert_eq!(
            verdict(
                (parser, "run the focused tests first"),
                (parser, "update the changelog entry")
            ),
            Verdict::Distinct
        );
        // a negation about something else is no contradiction
        assert_eq!(
            verdict(
                (parser, "run the focused tests first"),
                (parser, "never push to main directly")
            ),
            Verdict::Distinct
        );
        // one shared word is not a restated action: both lessons hold
        // (the agents benchmark resolved 18 such pairs before)
        assert_eq!(
            verdict(
                (parser, "update the snapshot files"),
                (parser, "avoid touching generated files")
            ),
            Verdict::Distinct
        );
        // the negated clause restates the other action
        assert_eq!(
            verdict(
                (parser, "retry the flaky tests"),
                (parser, "don't retry flaky tests, fix them")
            ),
            Verdict::Contradict
        );
    }

    #[test]
    fn the_negated_clause_ends_with_its_clause() {
        let t = negated_clause_terms("do not inject CoT, keep it terse");
        assert_eq!(t, action_terms("inject CoT"));
        assert_eq!(t.len(), 2, "{t:?}");
        assert!(negated_clause_terms("keep it terse").is_empty());
    }

    #[test]
    fn the_same_action_merges_or_is_a_sibling_by_how_close_the_situations_are() {
        assert_eq!(
            verdict(
                ("writing a SQL migration", "wrap it in a transaction"),
                (
                    "writing an SQL migration",
                    "wrap the migration in a transaction"
                )
            ),
            Verdict::Merge
        );
        assert_eq!(
            verdict(
                (
                    "trading prompt for XAUUSD",
                    "anchor reasoning on HTF bias first"
                ),
                (
                    "trading prompt for crypto perps",
                    "anchor reasoning on HTF bias first"
                )
            ),
            Verdict::Sibling
        );
    }

    #[test]
    fn a_destructive_verdict_under_the_margin_is_held() {
        assert_eq!(
            decide(&[0.79, 0.0, 0.0, 0.21], 0.8),
            Decision::Hold {
                verdict: Verdict::Merge,
                probability: 0.79
            }
        );
        assert_eq!(
            decide(&[0.0, 0.8, 0.0, 0.2], 0.8),
            Decision::Apply(Verdict::Contradict)
        );
        // siblings retire nothing: a lean of 0.5 or more makes one, a
        // weaker lean is no sibling at all
        assert_eq!(
            decide(&[0.1, 0.1, 0.5, 0.3], 0.8),
            Decision::Apply(Verdict::Sibling)
        );
        assert_eq!(
            decide(&[0.2, 0.2, 0.45, 0.15], 0.8),
            Decision::Apply(Verdict::Distinct)
        );
        // NaN never clears a margin
        assert!(matches!(
            decide(&[f64::NAN, 0.0, 0.0, 0.0], 0.8),
            Decision::Apply(Verdict::Distinct) | Decision::Hold { .. }
        ));
        // the lexical judge's unsure contradiction stays under the default
        let unsure = [0.0, 0.3, 0.0, 0.7];
        assert_eq!(
            decide(&unsure, Params::default().destructive_margin),
            Decision::Apply(Verdict::Distinct)
        );
    }
}
