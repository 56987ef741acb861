//! How two lessons relate, as a judge decides it for the sleep pass, and
//! when sleep may act on the judge's answer.

use std::collections::HashSet;
use std::rc::Rc;

use rustc_hash::FxHashMap as HashMap;

use serde::{Deserialize, Serialize};

use super::Params;
use super::similarity::{TermSets, Vocabulary, shared};
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

/// The most probable relation; on a tie the last, the one that retires
/// less (distinct, then sibling): a judge that cannot tell (every relation
/// equally likely, as an unreadable answer reads) leans to nothing, where
/// taking the first made it a held merge that review put first.
pub fn most_probable(r: &Relation) -> Verdict {
    let best = (0..4).fold(0, |b, j| if r[j] >= r[b] { j } else { b });
    RELATIONS[best]
}

/// What the sleep pass does with a pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decision {
    /// Act on the verdict.
    Apply(Verdict),
    /// The judge leans to a verdict that would retire a lesson but its
    /// probability is under the margin: leave the pair as it is.
    Hold {
        /// The destructive verdict the judge leans to (merge or contradict).
        verdict: Verdict,
        /// The judge's probability for it, below the margin.
        probability: f64,
    },
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
/// acted on only at `margin` or above (held below it). A sibling folds a
/// lesson under a parent, out of recall until it is confirmed: held to
/// the same margin (and never under [`SIBLING_MARGIN`]), and read as
/// distinct below it. Distinct always is.
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
    } else if verdict == Verdict::Sibling && !clears(margin.max(SIBLING_MARGIN)) {
        Decision::Apply(Verdict::Distinct)
    } else {
        Decision::Apply(verdict)
    }
}

/// A lesson as a judge sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Lesson<'a> {
    /// The trigger ("WHEN ...").
    pub when: &'a str,
    /// The action ("PREFER ...").
    pub prefer: &'a str,
}

/// The pairs of a by-index call (`silt:judge/relations-by-index`) as
/// places in its list of `lessons` lessons; a pair naming one past the end
/// is the caller's mistake, said.
pub fn places(lessons: usize, pairs: &[(u32, u32)]) -> Result<Vec<(usize, usize)>, String> {
    pairs
        .iter()
        .enumerate()
        .map(|(k, &(a, b))| {
            let (a, b) = (a as usize, b as usize);
            if a.max(b) < lessons {
                Ok((a, b))
            } else {
                Err(format!(
                    "pair {k} names lesson {} of the {lessons} sent",
                    a.max(b)
                ))
            }
        })
        .collect()
}

/// The pairs of a by-index call as pairs of lessons, for a judge that
/// relates whole pairs (a model asked pair by pair): `view` reads a
/// lesson of the judge's own bindings as a [`Lesson`].
pub fn pairs_by_index<'a, T>(
    lessons: &'a [T],
    pairs: &[(u32, u32)],
    view: impl Fn(&'a T) -> Lesson<'a>,
) -> Result<Vec<(Lesson<'a>, Lesson<'a>)>, String> {
    Ok(places(lessons.len(), pairs)?
        .into_iter()
        .map(|(i, j)| (view(&lessons[i]), view(&lessons[j])))
        .collect())
}

/// Decides relations between pairs of lessons.
pub trait RelationJudge {
    /// One [`Relation`] per pair, in order.
    fn relate(&mut self, pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Result<Vec<Relation>, String>;

    /// Starts relating `pairs` (indices into `lessons`) in the background
    /// and returns at once, where the judge's host has a core to spare:
    /// the caller goes on working and takes the relations with
    /// [`RelationJudge::finish`]. None (the default) when it cannot; the
    /// caller then relates those pairs with `relate` when it needs them.
    fn start(&mut self, _lessons: &[Lesson<'_>], _pairs: &[(u32, u32)]) -> Option<u64> {
        None
    }

    /// The relations of the call `start` returned, one per pair in order.
    fn finish(&mut self, call: u64) -> Result<Vec<Relation>, String> {
        Err(format!("no call {call} was started"))
    }
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
    let Some(end) = crate::text::first_negation_end(prefer) else {
        return HashSet::new();
    };
    let mut clause = String::new();
    for piece in prefer[end..].split_inclusive(|c: char| !(c.is_alphanumeric() || c == '\'')) {
        let word = piece.trim_end_matches(|c: char| !(c.is_alphanumeric() || c == '\''));
        clause.push_str(word);
        clause.push(' ');
        // the clause ends at its punctuation, not at the negation's own
        // ("avoid: eval", "never, ever inject CoT")
        if !clause.trim().is_empty() && piece.ends_with([',', ';', '.', ':', '(', ')']) {
            break;
        }
    }
    action_terms(&clause)
}

/// Whether a negated clause says "not" to the other action: at least two
/// thirds of its terms are in that action ("do not inject CoT" against
/// "inject explicit step-by-step CoT"), not merely one word in common
/// ("avoid touching generated files" against "update the snapshot
/// files" is two compatible lessons). Both are sorted ids.
fn restates(clause: &[u32], action: &[u32]) -> bool {
    !clause.is_empty() && 3 * shared(clause, action) >= 2 * clause.len()
}

/// What [`lexical_relation`] reads from a trigger. A judge that meets one
/// trigger in many pairs reads it once: reading (tokens, trigrams, stems)
/// is most of the relation's cost.
#[derive(Debug, Clone)]
pub struct TriggerWords {
    sets: TermSets,
    /// Content terms, stemmed, stopwords left out; a mark for "not" among
    /// them when the trigger says it ([`trigger_terms`]).
    terms: Vec<u32>,
    /// Whether `terms` holds that mark.
    says_not: bool,
}

/// What [`lexical_relation`] reads from an action (see [`TriggerWords`]).
#[derive(Debug, Clone)]
pub struct ActionWords {
    sets: TermSets,
    negated: bool,
    /// [`negated_clause_terms`]: empty unless negated.
    clause: Vec<u32>,
    /// [`action_terms`].
    terms: Vec<u32>,
    /// [`one_restates_the_other`]'s words.
    words: Vec<u32>,
}

/// Reads triggers and actions for [`relation_of_words`]. Readings carry
/// ids of this reader's vocabulary, so only readings of one reader
/// compare.
#[derive(Debug, Default)]
struct WordReader {
    vocabulary: Vocabulary,
}

impl WordReader {
    fn trigger(&mut self, when: &str) -> TriggerWords {
        let says_not = crate::text::says_not_anywhere(when);
        TriggerWords {
            sets: self.vocabulary.learn(when),
            terms: self.vocabulary.ids_of(trigger_terms(when, says_not)),
            says_not,
        }
    }

    fn action(&mut self, prefer: &str) -> ActionWords {
        let negated = negated(prefer);
        ActionWords {
            sets: self.vocabulary.learn(prefer),
            negated,
            clause: if negated {
                self.vocabulary.ids_of(negated_clause_terms(prefer))
            } else {
                Vec::new()
            },
            terms: self.vocabulary.ids_of(action_terms(prefer)),
            words: self.vocabulary.ids_of(restating_words(prefer)),
        }
    }
}

/// A lesson as [`relation_of_words`] reads it.
pub type LessonWords = (Rc<TriggerWords>, Rc<ActionWords>);

/// [`WordReader`]'s readings kept by text, for a judge that meets each
/// lesson in many pairs and over many calls: a sleep sends each lesson
/// with a dozen partners or more.
#[derive(Debug, Default)]
pub struct KeptReadings {
    reader: WordReader,
    triggers: HashMap<Box<str>, Rc<TriggerWords>>,
    actions: HashMap<Box<str>, Rc<ActionWords>>,
    /// What the kept readings cost, about: see [`Self::bytes`].
    bytes: usize,
}

/// What a kept reading costs beyond its text and its ids: the map's slot,
/// the reference count, the vectors' headers.
const READING_OVERHEAD: usize = 160;

/// What a term of the vocabulary costs beyond its characters.
const TERM_OVERHEAD: usize = 48;

impl TriggerWords {
    fn ids(&self) -> usize {
        self.sets.ids() + self.terms.len()
    }
}

impl ActionWords {
    fn ids(&self) -> usize {
        self.sets.ids() + self.clause.len() + self.terms.len() + self.words.len()
    }
}

impl KeptReadings {
    /// The readings of a lesson, read the first time it is met.
    pub fn lesson(&mut self, when: &str, prefer: &str) -> LessonWords {
        let reader = &mut self.reader;
        let bytes = &mut self.bytes;
        let trigger = kept(&mut self.triggers, bytes, when, |t| {
            let read = reader.trigger(t);
            (read.ids(), read)
        });
        let action = kept(&mut self.actions, bytes, prefer, |t| {
            let read = reader.action(t);
            (read.ids(), read)
        });
        (trigger, action)
    }

    /// [`lexical_relation`] of two lessons, read once each.
    pub fn relation(&mut self, a: &Lesson<'_>, b: &Lesson<'_>, p: &Params) -> Relation {
        let (x, y) = (self.lesson(a.when, a.prefer), self.lesson(b.when, b.prefer));
        relation_of_words((&x.0, &x.1), (&y.0, &y.1), p)
    }

    /// [`lexical_relation`] of each pair of places in `lessons` (checked
    /// by [`places`]), each lesson read once however many pairs name it.
    pub fn relations_by_index(
        &mut self,
        lessons: &[Lesson<'_>],
        at: &[(usize, usize)],
        p: &Params,
    ) -> Vec<Relation> {
        let read: Vec<LessonWords> = lessons
            .iter()
            .map(|l| self.lesson(l.when, l.prefer))
            .collect();
        at.iter()
            .map(|&(i, j)| {
                let (x, y) = (&read[i], &read[j]);
                relation_of_words((&x.0, &x.1), (&y.0, &y.1), p)
            })
            .collect()
    }

    /// About how many bytes the readings and their vocabulary hold (the
    /// texts twice: the key and the vocabulary's terms; four bytes an id).
    /// A reading's ids grow with its text: a few hundred bytes for a
    /// short trigger, two kilobytes for a 300-character one.
    pub fn bytes(&self) -> usize {
        self.bytes + TERM_OVERHEAD * self.reader.vocabulary.len()
    }

    /// Starts afresh once [`Self::bytes`] reaches `budget` (ids mean
    /// nothing to another reader, so all of it goes at once). Never call
    /// it between readings that are still to be compared.
    pub fn make_room(&mut self, budget: usize) {
        if self.bytes() >= budget {
            *self = KeptReadings::default();
        }
    }
}

/// `map[text]`, read by `read` (which says how many ids the reading
/// holds) and counted in `bytes` the first time.
fn kept<T>(
    map: &mut HashMap<Box<str>, Rc<T>>,
    bytes: &mut usize,
    text: &str,
    read: impl FnOnce(&str) -> (usize, T),
) -> Rc<T> {
    if let Some(r) = map.get(text) {
        return r.clone();
    }
    let (ids, reading) = read(text);
    *bytes += 2 * text.len() + 4 * ids + READING_OVERHEAD;
    let reading = Rc::new(reading);
    map.insert(text.into(), reading.clone());
    reading
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
///   with the same action and the same polarity; and (0.6) for triggers
///   under `trigger_threshold` but at `candidate_threshold` or more that
///   share a topic ([`one_topic`]), where one action restates the other
///   ("editing the parser" / "editing the type checker" → "run the
///   focused tests first"). Folding siblings retires nothing, and the
///   parent's trigger names every word of theirs.
/// - **distinct** otherwise.
pub fn lexical_relation(a: &Lesson<'_>, b: &Lesson<'_>, p: &Params) -> Relation {
    KeptReadings::default().relation(a, b, p)
}

/// [`lexical_relation`] of two lessons read by one [`KeptReadings`].
pub fn relation_of_words(
    a: (&TriggerWords, &ActionWords),
    b: (&TriggerWords, &ActionWords),
    p: &Params,
) -> Relation {
    const DISTINCT: Relation = [0.0, 0.0, 0.0, 1.0];
    let trigger = a.0.sets.similarity(&b.0.sets);
    let (a_do, b_do) = (a.1, b.1);
    let flipped = a_do.negated != b_do.negated;
    let same_action = !flipped && a_do.sets.similarity(&b_do.sets) >= p.action_threshold;
    let restated = || {
        let common = shared(&a_do.words, &b_do.words);
        common == a_do.words.len() || common == b_do.words.len()
    };
    if trigger < p.trigger_threshold {
        let siblings =
            trigger >= p.candidate_threshold && same_action && restated() && one_topic(a.0, b.0);
        return if siblings { LOOSE_SIBLINGS } else { DISTINCT };
    }
    let same_situation = trigger >= p.merge_threshold;
    if flipped {
        let (no, yes) = if a_do.negated {
            (a_do, b_do)
        } else {
            (b_do, a_do)
        };
        let about_the_same = restates(&no.clause, &yes.terms);
        return if same_situation && about_the_same {
            [0.0, 0.85, 0.0, 0.15]
        } else {
            DISTINCT
        };
    }
    let same_words = !a.0.terms.is_empty() && a.0.terms == b.0.terms;
    match (same_situation, same_action) {
        (_, true) if same_words && restated() => [0.9, 0.0, 0.0, 0.1],
        (_, true) if same_words => [0.6, 0.0, 0.0, 0.4],
        (_, true) => [0.0, 0.0, 0.8, 0.2],
        (true, false) => [0.0, 0.3, 0.0, 0.7],
        (false, false) => DISTINCT,
    }
}

/// Siblings on less evidence than related triggers: one action said by
/// both on triggers that only share a topic. Under 0.8 (siblings on related
/// triggers), over [`SIBLING_MARGIN`].
const LOOSE_SIBLINGS: Relation = [0.0, 0.0, 0.6, 0.4];

/// Whether two triggers share a topic: content words in common (the mark
/// for "not" aside) making up a third or more of the terms of the one
/// with fewer. "adding a base image to a Dockerfile" and "adding a
/// Terraform provider" share "add", one of three; two commit subjects of
/// ten words each sharing "add" do not.
fn one_topic(a: &TriggerWords, b: &TriggerWords) -> bool {
    let mark = |t: &TriggerWords| usize::from(t.says_not);
    let common = shared(&a.terms, &b.terms) - mark(a).min(mark(b));
    let fewer = (a.terms.len() - mark(a)).min(b.terms.len() - mark(b));
    common > 0 && 3 * common >= fewer
}

/// The words by which one action restates another: a merge needs every
/// word of one action (stopwords left out, numbers and one-letter words
/// kept: "2 spaces" is not "4 spaces") in the other.
fn restating_words(prefer: &str) -> Vec<String> {
    crate::text::words(prefer)
        .into_iter()
        .filter(|w| !crate::text::is_stopword(w))
        .map(|w| crate::text::stem(&w))
        .collect()
}

/// A trigger's content terms for "said again in other function words":
/// [`terms`], and the words saying "not", which are stopwords elsewhere
/// but not here ("add the inherit default features case" / "add the
/// inherit no default features case", from rust-lang/cargo's history,
/// are two situations; so are "deploying with tests" / "without tests").
/// The term standing for "not" among a trigger's terms.
const NOT_MARK: &str = "¬";

fn trigger_terms(when: &str, says_not: bool) -> Vec<String> {
    let mut t = terms(when);
    if says_not {
        // one mark whichever word says it: "without" and "with no" agree;
        // no stem is it (stems are letters and digits), so `says_not`
        // tells exactly whether a trigger's terms hold it
        t.push(NOT_MARK.to_string());
    }
    t
}

/// The most probable relation under [`lexical_relation`].
pub fn lexical_verdict(a: &Lesson<'_>, b: &Lesson<'_>, p: &Params) -> Verdict {
    most_probable(&lexical_relation(a, b, p))
}

/// The lexical relation judge.
pub struct LexicalRelations(pub Params);

impl RelationJudge for LexicalRelations {
    fn relate(&mut self, pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Result<Vec<Relation>, String> {
        // each lesson read once a call
        let mut readings = KeptReadings::default();
        Ok(pairs
            .iter()
            .map(|(a, b)| readings.relation(a, b, &self.0))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_judge_that_cannot_tell_leans_to_nothing() {
        let uniform = [0.25; 4];
        assert_eq!(most_probable(&uniform), Verdict::Distinct);
        assert_eq!(decide(&uniform, 0.8), Decision::Apply(Verdict::Distinct));
        // a tie between the two that retire is still held
        assert!(matches!(
            decide(&[0.5, 0.5, 0.0, 0.0], 0.8),
            Decision::Hold { .. }
        ));
    }

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

    /// Two lessons from rust-lang/cargo's history: one test case with
    /// default features, one without. The "no" inside a path names a
    /// file, not a contradiction, and the "no" in a trigger is another
    /// situation, not a restatement: neither may retire the other.
    #[test]
    fn a_negation_inside_a_name_neither_contradicts_nor_merges() {
        let p = Params::default();
        let with = Lesson {
            when: "test(add): add inherit default features case",
            prefer: "edit tests/testsuite/cargo_add/inherit_default_features_2024_edition/in/Cargo.toml",
        };
        let without = Lesson {
            when: "test(add): add inherit no default features case",
            prefer: "edit tests/testsuite/cargo_add/inherit_no_default_features_2024_edition/in/Cargo.toml",
        };
        let r = lexical_relation(&with, &without, &p);
        assert_eq!(r[1], 0.0, "{r:?}");
        assert!(r[0] < p.destructive_margin, "{r:?}");
        assert!(!matches!(
            decide(&r, p.destructive_margin),
            Decision::Apply(Verdict::Merge | Verdict::Contradict)
        ));
        // a trigger said again in other function words still merges
        let again = Lesson {
            when: "test(add): add the inherit default features case",
            prefer: with.prefer,
        };
        assert_eq!(lexical_verdict(&with, &again, &p), Verdict::Merge);
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
        assert_eq!(
            negated_clause_terms("never, ever inject CoT"),
            negated_clause_terms("never ever inject CoT")
        );
        assert!(!negated_clause_terms("Avoid: eval").is_empty());
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

    /// Triggers under the related-situations threshold, each pair checked
    /// to be so: what decides is the rule for one topic, not the seed's.
    fn loosely(a: (&str, &str), b: (&str, &str)) -> (f64, Decision) {
        let p = Params::default();
        let trigger = crate::ledger::similarity::text_sim(a.0, b.0);
        assert!(
            trigger >= p.candidate_threshold && trigger < p.trigger_threshold,
            "{a:?} / {b:?}: trigger similarity {trigger}"
        );
        let l = |(when, prefer)| Lesson { when, prefer };
        let r = lexical_relation(&l(a), &l(b), &p);
        (r[2], decide(&r, p.destructive_margin))
    }

    #[test]
    fn one_action_on_triggers_sharing_a_topic_makes_siblings() {
        let tests = "run the focused tests for the module first";
        for (a, b) in [
            (
                ("editing the parser", tests),
                ("editing the type checker", tests),
            ),
            (
                (
                    "adding a base image to a Dockerfile",
                    "pin the exact version",
                ),
                ("adding a Terraform provider", "pin the exact version"),
            ),
            (
                ("prompting Claude", "wrap sections in XML tags"),
                (
                    "writing a system prompt for Claude Opus",
                    "wrap sections in XML tags",
                ),
            ),
            // one action restating the other with more words
            (
                ("editing the lexer", "run the focused tests first"),
                ("editing the type checker", tests),
            ),
        ] {
            let (sibling, decision) = loosely(a, b);
            // a lean to sibling, too weak for the default margin, which
            // abstraction is held to as merges are
            assert_eq!(
                decision,
                Decision::Apply(Verdict::Distinct),
                "{a:?} / {b:?}"
            );
            assert!(
                (SIBLING_MARGIN..0.8).contains(&sibling),
                "surer than on related triggers: {sibling}"
            );
            let l = |(when, prefer)| Lesson { when, prefer };
            let r = lexical_relation(&l(a), &l(b), &Params::default());
            assert_eq!(decide(&r, 0.6), Decision::Apply(Verdict::Sibling));
        }
    }

    #[test]
    fn sharing_a_topic_is_not_enough_without_one_action_or_a_real_share() {
        let distinct = |a, b| {
            let (_, decision) = loosely(a, b);
            assert_eq!(
                decision,
                Decision::Apply(Verdict::Distinct),
                "{a:?} / {b:?}"
            );
        };
        // other actions on one topic ("read" / "update" the changelog)
        distinct(
            (
                "reviewing the changelog of a pull request",
                "read the changelog",
            ),
            (
                "releasing the changelog of a version",
                "update the changelog",
            ),
        );
        // a swapped number: "2 spaces" is not "4 spaces"
        distinct(
            ("formatting the YAML config files", "indent with 2 spaces"),
            ("formatting the JSON fixtures", "indent with 4 spaces"),
        );
        // one action, the other said not to
        distinct(
            ("editing the parser", "run the focused tests first"),
            (
                "editing the type checker",
                "never run the focused tests first",
            ),
        );
        // two words in common among seven: two commit subjects
        distinct(
            (
                "add a regression test for the resolver picking yanked versions",
                "edit src/cargo/core/resolver/mod.rs",
            ),
            (
                "add a regression note for the lints table and its priority field",
                "edit src/cargo/core/resolver/mod.rs",
            ),
        );
        // a third of the words in common, but too little of the text to
        // be a candidate at all
        let p = Params::default();
        let (short, long) = (
            ("editing it", "run the focused tests first"),
            (
                "editing each of the many generated protobuf bindings by hand",
                "run the focused tests first",
            ),
        );
        assert!(crate::ledger::similarity::text_sim(short.0, long.0) < p.candidate_threshold);
        let l = |(when, prefer)| Lesson { when, prefer };
        assert_eq!(
            most_probable(&lexical_relation(&l(short), &l(long), &p)),
            Verdict::Distinct
        );
        // both say "not", and nothing else in common
        distinct(
            ("running the tests without a lockfile", "ask first"),
            ("deploying the docs without a cache", "ask first"),
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
        // a sibling is held to the margin as merges are (a lean under it
        // is no sibling at all), and never to less than SIBLING_MARGIN
        assert_eq!(
            decide(&[0.1, 0.1, 0.5, 0.3], 0.8),
            Decision::Apply(Verdict::Distinct)
        );
        assert_eq!(
            decide(&[0.0, 0.0, 0.8, 0.2], 0.8),
            Decision::Apply(Verdict::Sibling)
        );
        assert_eq!(
            decide(&[0.1, 0.1, 0.5, 0.3], 0.3),
            Decision::Apply(Verdict::Sibling)
        );
        assert_eq!(
            decide(&[0.1, 0.1, 0.45, 0.35], 0.3),
            Decision::Apply(Verdict::Distinct)
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

    /// A judge keeps its readings for many pairs: they must relate as
    /// readings made afresh for each pair do, whatever else was read
    /// before (ids are handed out in the order words are first met).
    #[test]
    fn readings_kept_for_many_pairs_relate_as_fresh_ones() {
        use crate::ledger::synthetic::{agent_lessons, lessons};
        let mut texts: Vec<(String, String)> = agent_lessons(300)
            .into_iter()
            .chain(lessons(200))
            .map(|l| (l.when, l.prefer))
            .collect();
        // negations and restated actions, which the generators rarely make
        let extra = [
            (
                "editing the parser in repo r3",
                "run the focused tests first",
            ),
            (
                "editing the parser in repo r3",
                "don't run the focused tests first",
            ),
            ("editing the parser in repo r3", "run the tests first"),
            (
                "editing a parser in repo r3",
                "run the focused tests first, always",
            ),
            ("choosing line endings", "use LF everywhere"),
            ("choosing line endings", "do not use LF, use CRLF"),
        ];
        texts.extend(extra.iter().map(|(w, p)| (w.to_string(), p.to_string())));
        let p = Params::default();
        let mut kept = KeptReadings::default();
        for (w, a) in texts.iter().rev() {
            kept.lesson(w, a);
        }
        let mut verdicts = [0usize; 4];
        let (mut at, mut all_fresh) = (Vec::new(), Vec::new());
        for i in 0..texts.len() {
            for j in (i + 1..texts.len())
                .step_by(7)
                .chain(i + 1..(i + 4).min(texts.len()))
            {
                let l = |k: usize| Lesson {
                    when: &texts[k].0,
                    prefer: &texts[k].1,
                };
                let fresh = lexical_relation(&l(i), &l(j), &p);
                let read_once = kept.relation(&l(i), &l(j), &p);
                assert_eq!(fresh, read_once, "{:?} / {:?}", texts[i], texts[j]);
                verdicts[most_probable(&fresh).position()] += 1;
                // and the other way round, as a by-index call may name them
                at.extend([(i, j), (j, i)]);
                all_fresh.extend([fresh, lexical_relation(&l(j), &l(i), &p)]);
            }
        }
        // every relation was met, so every branch was compared
        assert!(verdicts.iter().all(|&n| n > 0), "{verdicts:?}");
        let lessons: Vec<Lesson> = texts
            .iter()
            .map(|(w, a)| Lesson { when: w, prefer: a })
            .collect();
        let by_index = KeptReadings::default().relations_by_index(&lessons, &at, &p);
        assert_eq!(by_index, all_fresh);
    }

    /// A by-index call's pairs are checked against its lessons, and the
    /// first pair out of bounds is named.
    #[test]
    fn by_index_pairs_name_lessons_sent() {
        assert_eq!(places(3, &[(0, 2), (2, 1)]), Ok(vec![(0, 2), (2, 1)]));
        assert_eq!(places(0, &[]), Ok(vec![]));
        let texts = [("a", "x"), ("b", "y")];
        let view = |&(when, prefer): &(&'static str, &'static str)| Lesson { when, prefer };
        let pairs = pairs_by_index(&texts, &[(1, 0)], view).unwrap();
        assert_eq!((pairs[0].0.when, pairs[0].1.prefer), ("b", "x"));
        assert!(pairs_by_index(&texts, &[(0, 2)], view).is_err());
        assert_eq!(
            places(3, &[(0, 1), (1, 3), (4, 0)]),
            Err("pair 1 names lesson 3 of the 3 sent".into())
        );
        assert_eq!(
            places(2, &[(7, 0)]),
            Err("pair 0 names lesson 7 of the 2 sent".into())
        );
    }

    /// Kept readings cost what their texts cost, and past the budget they
    /// start afresh and still relate as fresh ones do.
    #[test]
    fn kept_readings_start_afresh_past_their_budget() {
        let p = Params::default();
        let short = Lesson {
            when: "editing the parser",
            prefer: "run the focused tests first",
        };
        let long_when: String = (0..40).map(|i| format!("module{i} ")).collect();
        let long = Lesson {
            when: &long_when,
            prefer: "run the focused tests first",
        };
        let mut kept = KeptReadings::default();
        kept.lesson(short.when, short.prefer);
        // the action is kept already: what a trigger alone costs
        let before = kept.bytes();
        kept.lesson("testing the lexer", short.prefer);
        let one_short = kept.bytes() - before;
        let before = kept.bytes();
        kept.lesson(long.when, long.prefer);
        let one_long = kept.bytes() - before;
        assert!(one_long > 4 * one_short, "{one_short} {one_long}");
        let before = kept.bytes();
        kept.make_room(before + 1);
        assert_eq!(kept.bytes(), before);
        kept.make_room(before);
        assert_eq!(kept.bytes(), 0);
        assert_eq!(
            kept.relation(&short, &long, &p),
            lexical_relation(&short, &long, &p)
        );
    }
}
