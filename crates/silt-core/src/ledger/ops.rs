//! The cheap, every-call operations: recall, capture, confirm, contradict,
//! homeostasis, review and the agent's judgments.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use serde::{Deserialize, Serialize};

use super::Params;
use super::best_first::visit_in_order;
use super::entry::{Entry, Status};
use super::events::{Event, EventKind};
use super::folded::{MERGED_INTO, Positions, is_folded};
use super::kept_verdicts::DecidedBy;
use super::meaning::{Cuts, VectorCache, dot};
use super::recall_index::RecallIndex;
use super::relate::Verdict;
use super::rows::Rows;
use super::similarity::{TermSets, Vocabulary, text_sim};

/// How a captured lesson turned out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Feedback {
    /// It worked: captured at confidence 0.55, confirmed once.
    Positive,
    /// It did not: captured at confidence 0.10.
    Negative,
    /// Not known yet: captured at confidence 0.30.
    Neutral,
}

/// New lessons up to which [`Ledger::unslept_pair_count`] scans each one
/// against the ledger; past it, one candidate search over the active set
/// (which skips pairs sharing nothing rare, and stops at the threshold).
/// A scan costs a similarity per active lesson; 64 is a first choice, and
/// where the two cost the same was not measured.
const MAX_SCANNED_NEW: usize = 64;

/// A ledger held in memory.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    /// Every entry held, retired ones included; positions are not stable ids.
    pub entries: Vec<Entry>,
    /// The tunables every operation reads.
    pub params: Params,
    /// Recall's term sets ("when prefer") and content-word postings.
    recall_index: RecallIndex,
    /// Entries' positions by id: which parent a folded lesson is recalled
    /// for.
    positions: Positions,
    /// The trigger's term sets per entry, by position.
    trigger_sets: Vec<Option<CachedSets>>,
    vocabulary: Vocabulary,
    /// The judge's vectors for lesson texts, when it has them: candidate
    /// pairs by meaning join the lexical ones.
    pub(crate) vectors: VectorCache,
    /// Per entry position, the rows in `vectors` of its trigger's and its
    /// action's vectors (as of `lesson_rows_generation`): recall by
    /// meaning and the check that every lesson has its vectors read rows
    /// by position instead of hashing every lesson's two texts on each
    /// call. A position whose texts had no vector is looked up again.
    lesson_rows: Vec<Option<(u32, u32)>>,
    lesson_rows_generation: u64,
    /// Per entry position, a copy of its trigger's vector where
    /// `lesson_rows` has one (zeros elsewhere): recall by meaning reads
    /// every active lesson's trigger, and reading them in order from one
    /// buffer, not scattered among the actions' rows in `vectors`, halved
    /// its scan (examples/recall_meaning.rs). Costs one row per lesson.
    trigger_rows: Rows,
}

/// Whether the engine keeps `e`'s vectors: an active lesson's, or
/// a folded one's, which recall by meaning reads for its parent.
fn keeps_vectors(e: &Entry) -> bool {
    e.status == Status::Active || is_folded(e)
}

/// An entry's term sets with the texts they were built from, so an entry
/// whose text changed is rebuilt.
#[derive(Debug, Clone)]
struct CachedSets {
    when: String,
    /// Empty for trigger-only sets.
    prefer: String,
    sets: TermSets,
}

/// Brings `cache` up to date for every active entry: the sets of `when`,
/// or of "when prefer" when `with_prefer`.
fn refresh_sets(
    entries: &[Entry],
    cache: &mut Vec<Option<CachedSets>>,
    vocabulary: &mut Vocabulary,
    with_prefer: bool,
) {
    cache.resize(entries.len(), None);
    for (e, cached) in entries.iter().zip(cache.iter_mut()) {
        if e.status != Status::Active {
            continue;
        }
        let prefer = if with_prefer { e.prefer.as_str() } else { "" };
        let fresh = cached
            .as_ref()
            .is_some_and(|c| c.when == e.when && c.prefer == prefer);
        if !fresh {
            let text = if with_prefer {
                format!("{} {}", e.when, e.prefer)
            } else {
                e.when.clone()
            };
            *cached = Some(CachedSets {
                when: e.when.clone(),
                prefer: prefer.to_string(),
                sets: vocabulary.learn(&text),
            });
        }
    }
}

/// An entry id nobody holds.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "no entry with id '{0}'; list ids with sediment_stats (on the command line: silt ledger stats)"
)]
pub struct UnknownId(pub String);

/// What homeostasis did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Homeostasis {
    /// Entries faded below the floor.
    pub retired: usize,
    /// Entries pushed out by the cap.
    pub evicted: usize,
    /// Active entries afterwards.
    pub active: usize,
}

/// A pair the agent may judge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    /// The first entry's id.
    pub a_id: String,
    /// The second entry's id.
    pub b_id: String,
    /// The first lesson as "WHEN x -> PREFER y".
    pub a: String,
    /// The second lesson as "WHEN x -> PREFER y".
    pub b: String,
    /// Lexical similarity of the triggers, 0 to 1, rounded to 3 places.
    pub trigger_similarity: f64,
    /// Lexical similarity of the actions, 0 to 1, rounded to 3 places.
    pub action_similarity: f64,
}

/// One verdict from the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgment {
    /// The first entry's id.
    pub a_id: String,
    /// The second entry's id; must differ from `a_id`.
    pub b_id: String,
    /// What the agent decided about the pair.
    pub verdict: Verdict,
}

/// A judgment that was not applied, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    /// The judgment's first entry id.
    pub a_id: String,
    /// The judgment's second entry id.
    pub b_id: String,
    /// Why it was not applied (an unknown id, an inactive entry, ...).
    pub reason: String,
}

/// What applying the agent's judgments did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Applied {
    /// Pairs merged.
    pub merged: usize,
    /// Contradictions resolved into boundary rules.
    pub contradictions_resolved: usize,
    /// Pairs judged distinct or sibling: recorded, nothing else done.
    pub distinct: usize,
    /// Judgments not applied, each with its reason.
    pub skipped: Vec<Skipped>,
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

impl Ledger {
    /// A ledger over `entries` with empty caches (no vectors yet).
    pub fn new(entries: Vec<Entry>, params: Params) -> Self {
        Ledger {
            entries,
            params,
            ..Default::default()
        }
    }

    /// The position of the entry with `id`, whatever its status.
    pub fn index_of(&self, id: &str) -> Result<usize, UnknownId> {
        self.entries
            .iter()
            .position(|e| e.id == id)
            .ok_or_else(|| UnknownId(id.to_string()))
    }

    /// Entries with status active.
    pub fn active_count(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| e.status == Status::Active)
            .count()
    }

    /// The texts (triggers and actions) of active lessons, and of lessons
    /// folded under a parent (recall reads their situations for the
    /// parent), that the vector cache does not hold yet, each once.
    pub fn texts_to_embed(&mut self) -> Vec<String> {
        self.refresh_lesson_rows();
        let mut seen = std::collections::HashSet::new();
        self.entries
            .iter()
            .zip(&self.lesson_rows)
            .filter(|(e, rows)| rows.is_none() && keeps_vectors(e))
            .flat_map(|(e, _)| [e.when.as_str(), e.prefer.as_str()])
            .filter(|t| self.vectors.get(t).is_none() && seen.insert(*t))
            .map(str::to_string)
            .collect()
    }

    /// Keeps a judge's vectors for `texts`, with its cut-offs; from then on
    /// candidate pairs by meaning join the lexical ones. Texts of lessons
    /// neither active nor folded are dropped once they outnumber the live
    /// ones.
    pub fn learn_vectors(
        &mut self,
        texts: &[String],
        vectors: &[Vec<f32>],
        cuts: Cuts,
    ) -> Result<(), String> {
        self.vectors.learn(texts, vectors, cuts)?;
        let live = self.entries.iter().filter(|e| keeps_vectors(e)).count();
        if self.vectors.len() > 4 * live + 64 {
            let live: std::collections::HashSet<&str> = self
                .entries
                .iter()
                .filter(|e| keeps_vectors(e))
                .flat_map(|e| [e.when.as_str(), e.prefer.as_str()])
                .collect();
            self.vectors.retain(|t| live.contains(t));
        }
        Ok(())
    }

    /// Brings `lesson_rows` up to date for the active entries and those
    /// folded under a parent.
    fn refresh_lesson_rows(&mut self) {
        if self.lesson_rows_generation != self.vectors.generation() {
            self.lesson_rows.clear();
            self.trigger_rows = Rows::default();
            self.lesson_rows_generation = self.vectors.generation();
        }
        self.lesson_rows.resize(self.entries.len(), None);
        for (i, (e, rows)) in self
            .entries
            .iter()
            .zip(self.lesson_rows.iter_mut())
            .enumerate()
        {
            if rows.is_none() && keeps_vectors(e) {
                *rows = self
                    .vectors
                    .row_of(&e.when)
                    .zip(self.vectors.row_of(&e.prefer));
                if let Some((trigger, _)) = *rows {
                    self.trigger_rows.put(i, self.vectors.row(trigger));
                }
            }
        }
    }

    /// The judge's vectors held for lesson texts.
    pub fn vectors(&self) -> &VectorCache {
        &self.vectors
    }

    /// The top `k` active lessons for `context`, by lexical similarity to
    /// "when prefer" times effective confidence; each one returned fires.
    /// A lesson must share a content word (not a stopword, not one letter)
    /// with the context: trigrams alone ("ing", " th") link any two English
    /// texts, and a lesson with no word in common is no evidence. So an
    /// unrelated context fires nothing rather than the k most confident.
    /// An abstracted parent is scored by the nearest of its own text and
    /// those of the lessons folded under it ([`super::folded`]), so a
    /// context that recalled a lesson before it was folded recalls its
    /// parent as surely.
    pub fn recall(&mut self, context: &str, k: usize, now: f64) -> (Vec<usize>, Vec<Event>) {
        let scored = self.recall_scores(context, k, now);
        self.fire(scored, now)
    }

    /// The top `k` (position, score) of [`Self::recall`], nothing fired.
    /// Only the entries holding one of the context's content words are
    /// scored, found through the index, best bound first: the same top k
    /// a scan of the whole ledger finds.
    fn recall_scores(&mut self, context: &str, k: usize, now: f64) -> Vec<(usize, f64)> {
        self.recall_index
            .catch_up(&self.entries, &mut self.vocabulary);
        self.positions.catch_up(&self.entries);
        let query = self.vocabulary.look_up(context);
        let content = self.vocabulary.content_ids(context);
        let (entries, positions) = (&self.entries, &mut self.positions);
        self.recall_index
            .top(entries, &query, &content, k, now, |i| {
                positions.recalled_for(entries, i)
            })
    }

    /// Puts `e` at position `i` (a new version of that lesson from the
    /// store), keeping recall's index right if its text changed.
    pub fn replace_entry(&mut self, i: usize, e: Entry) {
        self.entries[i] = e;
        if let Some(rows) = self.lesson_rows.get_mut(i) {
            *rows = None;
        }
        self.recall_index
            .refresh(i, &self.entries[i], &mut self.vocabulary);
    }

    /// Recall by meaning, from the context's vector `query` (stored
    /// bytes, [`super::meaning::quantise`]) and the judge's calibrated
    /// cosines: every active lesson's situation is compared with the
    /// context, one cosine each from the vectors kept in the engine; a
    /// lesson under `unrelated_below` never fires (an unrelated task
    /// recalls nothing, as lexical recall needs a shared content word);
    /// the rest are ranked by [`rank_by_meaning`], two
    /// lessons counting as one when their situations and actions are both
    /// at `related_above` or nearer and their actions agree in polarity
    /// (what sleep would merge or fold under one parent). An abstracted
    /// parent's situation is the nearest of its own and those of the
    /// lessons folded under it that have vectors ([`super::folded`]).
    /// None when an active lesson has no vector yet or none is active:
    /// recall then goes the lexical way.
    pub fn recall_near(
        &mut self,
        query: &[i8],
        related_above: f64,
        unrelated_below: f64,
        k: usize,
        now: f64,
    ) -> Option<(Vec<usize>, Vec<Event>)> {
        self.refresh_lesson_rows();
        self.positions.catch_up(&self.entries);
        // every situation that may fire a lesson, its own or one folded
        // under it, the active lessons' first; a folded one is bounded by
        // the highest confidence of an active lesson, and its parent is
        // looked up only when the ranking reaches it: looking up every
        // folded lesson's parent over the floor, tens of thousands after
        // a sleep, was a third of a recall
        let (mut any, mut candidates, mut relevance, mut bounds) = (false, vec![], vec![], vec![]);
        let mut highest_confidence: f64 = 0.0;
        for (i, e) in self.entries.iter().enumerate() {
            if e.status != Status::Active {
                continue;
            }
            any = true;
            let (trigger, _) = self.lesson_rows[i]?;
            debug_assert_eq!(self.trigger_rows.row(i), self.vectors.row(trigger));
            highest_confidence = highest_confidence.max(e.confidence);
            let r = f64::from(dot(query, self.trigger_rows.row(i)));
            // only the lessons that may fire are ranked and read for
            // duplicates; their bounds are taken here, while the entry is
            // at hand (a second pass over 100k entries cost 2 ms)
            if let Some(bound) = recall_bound(e.confidence, r, unrelated_below) {
                bounds.push((candidates.len(), bound));
                candidates.push(i);
                relevance.push(r);
            }
        }
        if !any {
            return None;
        }
        let actives = candidates.len();
        for (i, e) in self.entries.iter().enumerate() {
            // a dormant lesson with vectors was folded when they were
            // taken; its note is read (by `lesson_of`) only if the
            // ranking reaches it, and one that names no parent then
            // fires nothing. Reading every folded lesson's note here, a
            // cache miss each, was most of a recall after a sleep.
            if e.status != Status::Dormant || self.lesson_rows[i].is_none() {
                continue;
            }
            let r = f64::from(dot(query, self.trigger_rows.row(i)));
            // under the floor it cannot lift its parent: no bound
            if let Some(bound) = recall_bound(highest_confidence, r, unrelated_below) {
                bounds.push((candidates.len(), bound));
                candidates.push(i);
                relevance.push(r);
            }
        }
        let (vectors, rows) = (&self.vectors, &self.lesson_rows);
        let entries = &self.entries;
        // an action's polarity is read from its words, once per lesson
        // and only for those a duplicate check reaches (templated lessons
        // make many checks)
        let negated: RefCell<FxHashMap<usize, bool>> = Default::default();
        let polarity = |i: usize| {
            *negated
                .borrow_mut()
                .entry(i)
                .or_insert_with(|| crate::text::negated(&entries[i].prefer))
        };
        let duplicate = |a: usize, b: usize| {
            let (Some(x), Some(y)) = (rows[a], rows[b]) else {
                return false;
            };
            let near =
                |s: u32, t: u32| f64::from(dot(vectors.row(s), vectors.row(t))) >= related_above;
            near(x.0, y.0) && near(x.1, y.1) && polarity(a) == polarity(b)
        };
        let positions = &mut self.positions;
        let lesson_of = |c: usize| {
            if c < actives {
                Some(candidates[c])
            } else {
                positions.recalled_for(entries, candidates[c])
            }
        };
        let scored = rank_by_meaning(entries, &relevance, bounds, lesson_of, duplicate, k, now);
        Some(self.fire(scored, now))
    }

    /// Marks the recalled entries as fired, best first.
    fn fire(&mut self, scored: Vec<(usize, f64)>, now: f64) -> (Vec<usize>, Vec<Event>) {
        let mut events = Vec::new();
        for (i, score) in &scored {
            let e = &mut self.entries[*i];
            e.last_fired = now;
            e.hit_count += 1;
            events.push(Event::new(
                now,
                EventKind::Fired,
                &e.id,
                vec![],
                format!("recalled with score {:.3}", score),
            ));
        }
        (scored.into_iter().map(|(i, _)| i).collect(), events)
    }

    /// Records a new lesson under `id`.
    pub fn capture(
        &mut self,
        id: String,
        when: &str,
        prefer: &str,
        feedback: Feedback,
        now: f64,
    ) -> (usize, Vec<Event>) {
        let (confidence, confirmations) = match feedback {
            Feedback::Positive => (0.55, 1),
            Feedback::Negative => (0.10, 0),
            Feedback::Neutral => (0.30, 0),
        };
        let entry = Entry::new(
            id,
            when.to_string(),
            prefer.to_string(),
            confidence,
            confirmations,
            now,
        );
        let event = Event::new(
            now,
            EventKind::Captured,
            &entry.id,
            vec![],
            format!("{feedback:?} feedback").to_lowercase(),
        );
        self.entries.push(entry);
        (self.entries.len() - 1, vec![event])
    }

    /// "That lesson worked": +0.15 on the effective confidence, one more
    /// confirmation (a longer half-life). A dormant child is revived.
    pub fn confirm(&mut self, id: &str, now: f64) -> Result<(usize, Vec<Event>), UnknownId> {
        let i = self.index_of(id)?;
        let e = &mut self.entries[i];
        let mut events = Vec::new();
        if e.status == Status::Dormant {
            e.status = Status::Active;
            events.push(Event::new(
                now,
                EventKind::Revived,
                &e.id,
                vec![],
                "confirmed while dormant",
            ));
        }
        e.confidence = (e.effective(now) + 0.15).min(1.0);
        e.decayed_at = Some(now);
        e.confirm_count += 1;
        e.last_confirmed = now;
        events.push(Event::new(
            now,
            EventKind::Confirmed,
            &e.id,
            vec![],
            format!("confidence now {:.3}", e.confidence),
        ));
        Ok((i, events))
    }

    /// "That lesson failed": the effective confidence halves. Decay up to
    /// now is folded in, so it is not applied a second time later.
    pub fn contradict(&mut self, id: &str, now: f64) -> Result<(usize, Vec<Event>), UnknownId> {
        let i = self.index_of(id)?;
        let e = &mut self.entries[i];
        e.contradiction_count += 1;
        e.confidence = e.effective(now) * 0.5;
        e.decayed_at = Some(now);
        let event = Event::new(
            now,
            EventKind::Contradicted,
            &e.id,
            vec![],
            format!("confidence now {:.3}", e.confidence),
        );
        Ok((i, vec![event]))
    }

    /// Decay, fade below the floor, evict over the cap.
    pub fn homeostasis(&mut self, now: f64) -> (Homeostasis, Vec<Event>) {
        let mut events = Vec::new();
        let mut retired = 0;
        for e in self
            .entries
            .iter_mut()
            .filter(|e| e.status == Status::Active)
        {
            e.fold_decay(now);
            if e.confidence < self.params.floor {
                e.status = Status::Retired;
                e.note = "faded below floor".into();
                retired += 1;
                events.push(Event::new(
                    now,
                    EventKind::Faded,
                    &e.id,
                    vec![],
                    format!(
                        "confidence {:.3} below floor {}",
                        e.confidence, self.params.floor
                    ),
                ));
            }
        }
        let mut active: Vec<usize> = (0..self.entries.len())
            .filter(|&i| self.entries[i].status == Status::Active)
            .collect();
        let mut evicted = 0;
        if active.len() > self.params.cap {
            active.sort_by(|&a, &b| {
                self.entries[b]
                    .retention(now)
                    .total_cmp(&self.entries[a].retention(now))
            });
            for &i in &active[self.params.cap..] {
                let e = &mut self.entries[i];
                e.status = Status::Retired;
                e.note = "evicted (budget cap)".into();
                evicted += 1;
                events.push(Event::new(
                    now,
                    EventKind::Evicted,
                    &e.id,
                    vec![],
                    format!(
                        "retention {:.4} below the {} kept",
                        e.retention(now),
                        self.params.cap
                    ),
                ));
            }
        }
        (
            Homeostasis {
                retired,
                evicted,
                active: self.active_count(),
            },
            events,
        )
    }

    /// How many active pairs are candidates (what `review_candidates`
    /// would list, without building the list).
    pub fn candidate_pair_count(&self) -> usize {
        let (_, triggers) = self.active_triggers();
        super::candidates::similar_pair_count(&triggers, self.params.candidate_threshold)
    }

    /// How many other active entries entry `i` forms a candidate pair with
    /// among those `keep` lets through (by position and entry), in one scan.
    fn partners_of(&mut self, i: usize, keep: impl Fn(usize, &Entry) -> bool) -> usize {
        self.partner_list(i, keep).len()
    }

    /// Entry `i`'s undecided candidate pairs, as the other entry's
    /// position and the triggers' similarity in words, in one scan: what
    /// a capture asks about (the `review` module's `near_lessons`).
    pub fn pairs_with(&mut self, i: usize) -> Vec<(usize, f64)> {
        let partners = self.partner_list(i, |_, _| true);
        partners
            .into_iter()
            .filter(|&j| self.decided(i, j).is_none())
            .map(|j| (j, text_sim(&self.entries[i].when, &self.entries[j].when)))
            .collect()
    }

    /// The other active entries entry `i` forms a candidate pair with
    /// among those `keep` lets through, in one scan.
    fn partner_list(&mut self, i: usize, keep: impl Fn(usize, &Entry) -> bool) -> Vec<usize> {
        refresh_sets(
            &self.entries,
            &mut self.trigger_sets,
            &mut self.vocabulary,
            false,
        );
        let Some(CachedSets { sets: mine, .. }) = &self.trigger_sets[i] else {
            return Vec::new();
        };
        let cuts = self.vectors.cuts();
        let near = cuts.and_then(|c| {
            let e = &self.entries[i];
            let (trigger, lesson) = self.vectors.lesson_of(&e.when, &e.prefer)?;
            Some((c, trigger.to_vec(), lesson.to_vec()))
        });
        let vectors = &mut self.vectors;
        let threshold = self.params.candidate_threshold;
        self.entries
            .iter()
            .zip(&self.trigger_sets)
            .enumerate()
            .filter(|(j, (e, _))| *j != i && e.status == Status::Active && keep(*j, e))
            .filter(|(_, (e, sets))| {
                sets.as_ref()
                    .is_some_and(|theirs| mine.similarity(&theirs.sets) >= threshold)
                    || near.as_ref().is_some_and(|(cuts, trigger, lesson)| {
                        vectors.lesson_of(&e.when, &e.prefer).is_some_and(|(t, l)| {
                            f64::from(dot(trigger, t)) >= cuts.trigger
                                || f64::from(dot(lesson, l)) >= cuts.lesson
                        })
                    })
            })
            .map(|(j, _)| j)
            .collect()
    }

    /// How many other active entries entry `i` forms a candidate pair
    /// with: what capturing it added to `candidate_pair_count`, in one scan.
    pub fn candidate_pairs_of(&mut self, i: usize) -> usize {
        self.partners_of(i, |_, _| true)
    }

    /// Entry `i`'s candidate pairs that no sleep pass has judged (see
    /// [`Self::unslept_pair_count`]): all of them when `i` was captured
    /// after `since`, else those with a lesson that was. What adding or
    /// retiring `i` moves the count by, in one scan.
    pub fn unslept_pairs_of(&mut self, i: usize, since: f64) -> usize {
        let new = self.entries[i].created > since;
        self.partners_of(i, |_, e| new || e.created > since)
    }

    /// Candidate pairs of active lessons (the pairs `review_candidates`
    /// lists) holding at least one lesson captured after `since`, the
    /// newest lesson the last sleep pass read: the pairs no pass has
    /// judged. A pair sleep judged distinct stays a candidate pair but is
    /// not counted again, so the redundancy pressure falls to 0 after every
    /// pass instead of calling for another on each capture. Counting stops
    /// once it reaches `need` (the pressure only has to reach a threshold):
    /// a ledger that never slept, where thousands of lessons share a
    /// phrase, is not searched whole on a capture.
    pub fn unslept_pair_count(&mut self, since: f64, need: usize) -> usize {
        let new: Vec<usize> = (0..self.entries.len())
            .filter(|&i| {
                let e = &self.entries[i];
                e.status == Status::Active && e.created > since
            })
            .collect();
        if new.is_empty() || need == 0 {
            return 0;
        }
        let mut n = 0;
        if new.len() <= MAX_SCANNED_NEW {
            // one scan per new lesson; a pair of two new ones is counted at
            // the later of the two
            for &i in &new {
                n += self.partners_of(i, |j, e| e.created <= since || j < i);
                if n >= need {
                    break;
                }
            }
            return n;
        }
        let (active, triggers) = self.active_triggers();
        let unslept = |a: usize, b: usize| active[a].created > since || active[b].created > since;
        let lexical = super::candidates::count_pairs_until(
            &triggers,
            self.params.candidate_threshold,
            unslept,
            need,
        );
        if lexical >= need {
            return lexical;
        }
        // pairs near in meaning that share too few words to be lexical
        // candidates (each lesson's nearest, as sleep takes them)
        let by_meaning = self
            .vectors
            .views(active.iter().map(|e| (e.when.as_str(), e.prefer.as_str())))
            .map(|v| v.same_situation_pairs(super::candidates::MAX_PARTNERS))
            .unwrap_or_default();
        lexical
            + by_meaning
                .into_iter()
                .filter(|&(a, b)| {
                    unslept(a, b)
                        && text_sim(triggers[a], triggers[b]) < self.params.candidate_threshold
                })
                .count()
    }

    /// The active entries and their triggers, in the same order.
    fn active_triggers(&self) -> (Vec<&Entry>, Vec<&str>) {
        let active: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| e.status == Status::Active)
            .collect();
        let triggers = active.iter().map(|e| e.when.as_str()).collect();
        (active, triggers)
    }

    /// Active pairs whose triggers are similar enough to need a judgment,
    /// and, when the judge has vectors, the pairs near in meaning (by
    /// trigger or whole lesson) whose words differ.
    pub fn review_candidates(&self) -> Vec<Candidate> {
        self.review_pairs()
            .into_iter()
            .map(|(i, j, sim)| {
                let (a, b) = (&self.entries[i], &self.entries[j]);
                Candidate {
                    a_id: a.id.clone(),
                    b_id: b.id.clone(),
                    a: a.render(),
                    b: b.render(),
                    trigger_similarity: round3(sim),
                    action_similarity: round3(text_sim(&a.prefer, &b.prefer)),
                }
            })
            .collect()
    }

    /// The pairs of [`Self::review_candidates`] as entry positions
    /// (i < j by active order) with their triggers' similarity in words,
    /// without the pairs a recorded verdict settles
    /// (the `decisions` module): asked once, a pair is not offered again
    /// until one of its lessons changes.
    pub fn review_pairs(&self) -> Vec<(usize, usize, f64)> {
        let positions: Vec<usize> = (0..self.entries.len())
            .filter(|&i| self.entries[i].status == Status::Active)
            .collect();
        self.active_pairs()
            .into_iter()
            .map(|(i, j, sim)| (positions[i], positions[j], sim))
            .filter(|&(a, b, _)| self.decided(a, b).is_none())
            .collect()
    }

    /// Candidate pairs as places among the active entries.
    fn active_pairs(&self) -> Vec<(usize, usize, f64)> {
        let (active, triggers) = self.active_triggers();
        let mut pairs: Vec<(usize, usize, f64)> =
            super::candidates::similar_pairs(&triggers, self.params.candidate_threshold);
        if let Some(views) = self
            .vectors
            .views(active.iter().map(|e| (e.when.as_str(), e.prefer.as_str())))
        {
            let lexical: std::collections::HashSet<(usize, usize)> =
                pairs.iter().map(|&(i, j, _)| (i, j)).collect();
            pairs.extend(
                views
                    .same_situation_pairs(super::candidates::MAX_PARTNERS)
                    .into_iter()
                    .filter(|p| !lexical.contains(p))
                    .map(|(i, j)| (i, j, text_sim(triggers[i], triggers[j]))),
            );
            pairs.sort_by_key(|&(i, j, _)| (i, j));
        }
        pairs
    }

    /// Applies the agent's verdicts; each is applied or skipped with a reason.
    pub fn apply_judgments(&mut self, judgments: &[Judgment], now: f64) -> (Applied, Vec<Event>) {
        let mut applied = Applied::default();
        let mut events = Vec::new();
        for j in judgments {
            let skip = |reason: String| Skipped {
                a_id: j.a_id.clone(),
                b_id: j.b_id.clone(),
                reason,
            };
            if j.a_id == j.b_id {
                applied
                    .skipped
                    .push(skip("a_id and b_id are the same entry".into()));
                continue;
            }
            let (a, b) = match (self.index_of(&j.a_id), self.index_of(&j.b_id)) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(e), _) | (_, Err(e)) => {
                    applied.skipped.push(skip(e.to_string()));
                    continue;
                }
            };
            if let Some(e) = [a, b]
                .into_iter()
                .map(|i| &self.entries[i])
                .find(|e| e.status != Status::Active)
            {
                applied.skipped.push(skip(
                    format!("entry '{}' is {:?}, not active", e.id, e.status).to_lowercase(),
                ));
                continue;
            }
            events.push(Event::new(
                now,
                EventKind::Judged,
                &j.a_id,
                vec![j.b_id.clone()],
                format!("agent verdict: {:?}", j.verdict).to_lowercase(),
            ));
            match j.verdict {
                Verdict::Merge => {
                    events.push(self.merge(a, b, now));
                    applied.merged += 1;
                }
                Verdict::Contradict => {
                    events.push(self.resolve(a, b, now));
                    applied.contradictions_resolved += 1;
                }
                Verdict::Sibling | Verdict::Distinct => {
                    // remembered on both lessons' versions: neither sleep
                    // nor review asks about these two texts again
                    self.record_decision(a, b, j.verdict, DecidedBy::Agent, now);
                    applied.distinct += 1;
                }
            }
        }
        (applied, events)
    }

    /// Folds one of two entries into the other (the higher retention keeps).
    pub fn merge(&mut self, a: usize, b: usize, now: f64) -> Event {
        let before = vec![self.entries[a].clone(), self.entries[b].clone()];
        let (keep, gone) = if self.entries[a].retention(now) >= self.entries[b].retention(now) {
            (a, b)
        } else {
            (b, a)
        };
        let best = self.entries[a]
            .effective(now)
            .max(self.entries[b].effective(now));
        let (hits, confirms, confirmed) = {
            let g = &self.entries[gone];
            (g.hit_count, g.confirm_count, g.last_confirmed)
        };
        let k = &mut self.entries[keep];
        k.hit_count += hits;
        k.confirm_count += confirms;
        k.confidence = (best + 0.05).min(1.0);
        k.decayed_at = Some(now);
        k.last_confirmed = k.last_confirmed.max(confirmed);
        let keep_id = k.id.clone();
        let g = &mut self.entries[gone];
        g.status = Status::Retired;
        g.note = format!("{MERGED_INTO}{keep_id}");
        Event::new(
            now,
            EventKind::Merged,
            &keep_id,
            vec![g.id.clone()],
            "same trigger, same action",
        )
        .with_before(before)
    }

    /// Keeps the stronger of two contradicting entries, with the other's
    /// action as a boundary note.
    pub fn resolve(&mut self, a: usize, b: usize, now: f64) -> Event {
        let rank = |e: &Entry| (e.confirm_count, e.effective(now), e.last_confirmed);
        let (ra, rb) = (rank(&self.entries[a]), rank(&self.entries[b]));
        let a_wins = ra.0 > rb.0 || (ra.0 == rb.0 && (ra.1, ra.2) >= (rb.1, rb.2));
        let (win, lose) = if a_wins { (a, b) } else { (b, a) };
        self.resolve_for(win, lose, now)
    }

    /// Resolves the contradiction between `win` and `lose` in `win`'s
    /// favour: `lose` retires and its action becomes `win`'s boundary
    /// note.
    pub fn resolve_for(&mut self, win: usize, lose: usize, now: f64) -> Event {
        let before = vec![self.entries[win].clone(), self.entries[lose].clone()];
        let loser_prefer = self.entries[lose].prefer.clone();
        let w = &mut self.entries[win];
        w.note = format!(
            "boundary: usually '{}'; exception toward '{}' when context differs",
            w.prefer, loser_prefer
        );
        w.confidence = (w.effective(now) + 0.05).min(1.0);
        w.decayed_at = Some(now);
        let win_id = w.id.clone();
        let l = &mut self.entries[lose];
        l.status = Status::Retired;
        l.note = format!("lost contradiction to {win_id}");
        Event::new(
            now,
            EventKind::Resolved,
            &win_id,
            vec![l.id.clone()],
            "same trigger, opposite action: kept as a boundary rule",
        )
        .with_before(before)
    }
}

/// The ranking of recall by meaning over `entries`: candidate `c` is a
/// situation that may fire the lesson at position `lesson_of(c)` (None:
/// it fires none), `relevance[c]` how close that situation is to the
/// context (a cosine, negatives count as 0), `bounds` the candidates
/// that may fire with their [`recall_bound`]s, and `duplicate(i, j)`
/// whether the lessons at positions i and j say the same thing. A
/// lesson scores its nearest situation's relevance times its effective
/// confidence; the best are taken in order, skipping any that duplicates
/// one ranked above it (taken or itself skipped), so recall never spends
/// two of its `k` places on one lesson. Gives (position, score), nothing
/// fired.
///
/// Candidates are visited best bound first and scored as they come:
/// the forgetting curve's pow for every lesson over the floor was most
/// of a recall at 100k, and only the lessons whose bound reaches the
/// k-th score need it (about a hundred of 100k unslept lessons, measured
/// with examples/recall_meaning.rs); `lesson_of` is asked only for
/// those. The answer is a sort by score's.
fn rank_by_meaning(
    entries: &[Entry],
    relevance: &[f64],
    mut bounds: Vec<(usize, f64)>,
    mut lesson_of: impl FnMut(usize) -> Option<usize>,
    duplicate: impl Fn(usize, usize) -> bool,
    k: usize,
    now: f64,
) -> Vec<(usize, f64)> {
    let mut taken: Vec<(usize, f64)> = Vec::new();
    // duplicates chain: a lesson that repeats one already passed over
    // repeats the one taken before it
    let mut seen: Vec<usize> = Vec::new();
    let mut take = |(i, score): (usize, f64)| {
        // a lesson met again through another situation scored no higher
        if !seen.contains(&i) {
            if !seen.iter().any(|&t| duplicate(t, i)) {
                taken.push((i, score));
            }
            seen.push(i);
        }
        taken.len() < k
    };
    // Scored but not yet passed on: one goes on only once its score
    // beats every bound still unvisited, so lessons go on in the order
    // of their scores (ties by position), as a sort by score gives.
    let mut ready: BinaryHeap<Scored> = BinaryHeap::new();
    let by_bound = |a: &(usize, f64), b: &(usize, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    let more = std::cell::Cell::new(k > 0);
    let mut visit = |(c, bound): (usize, f64)| {
        while ready.peek().is_some_and(|top| top.score > bound) {
            let top = ready.pop().expect("peeked");
            if !take((top.lesson, top.score)) {
                more.set(false);
                return false;
            }
        }
        let Some(i) = lesson_of(c) else {
            return true;
        };
        let score = relevance[c].max(0.0) * entries[i].effective(now);
        // exact, not within a rounding: the release above relies on it
        debug_assert!(score <= bound, "{i} scores over its bound");
        if score > 0.0 {
            ready.push(Scored { score, lesson: i });
        }
        true
    };
    // The bounds over the [`FIRST_BOUNDS`]-th best are visited first:
    // finding that cut in one pass cost a fifth of selecting them by
    // comparison sort among 100k, and a recall rarely looks further.
    let cut = nth_best_bound(&bounds, FIRST_BOUNDS);
    let below = match cut {
        Some(cut) => {
            let (over, below): (Vec<_>, Vec<_>) = bounds.into_iter().partition(|b| b.1 >= cut);
            bounds = over;
            below
        }
        None => vec![],
    };
    for mut part in [bounds, below] {
        if more.get() {
            visit_in_order(&mut part, by_bound, &mut visit);
        }
    }
    while more.get()
        && let Some(top) = ready.pop()
    {
        more.set(take((top.lesson, top.score)));
    }
    taken
}

/// Candidates of recall by meaning visited before the rest are looked
/// at: recall takes k (5 by default), and on templated text about a
/// hundred were visited at 100k unslept lessons.
const FIRST_BOUNDS: usize = 64;

/// How high a situation could make its lesson score in recall by
/// meaning: relevance (from 0) times `confidence`, the lesson's stored
/// one or any above it (a folded situation's parent is not known yet:
/// it passes the highest of the active lessons'), which decay only
/// lowers. None when it cannot fire: under
/// the `floor`, or at 0.
fn recall_bound(confidence: f64, relevance: f64, floor: f64) -> Option<f64> {
    if relevance < floor {
        return None;
    }
    let bound = relevance.max(0.0) * confidence;
    (bound > 0.0).then_some(bound)
}

/// The `n`-th highest of `bounds` (all above 0), when there are more.
fn nth_best_bound(bounds: &[(usize, f64)], n: usize) -> Option<f64> {
    if n == 0 || bounds.len() <= n {
        return None;
    }
    // floats above 0 order as their bits do
    let mut best: BinaryHeap<Reverse<u64>> =
        bounds[..n].iter().map(|b| Reverse(b.1.to_bits())).collect();
    for b in &bounds[n..] {
        let bits = b.1.to_bits();
        if bits > best.peek().expect("n > 0").0 {
            best.pop();
            best.push(Reverse(bits));
        }
    }
    best.peek().map(|b| f64::from_bits(b.0))
}

/// A lesson's score in recall by meaning's queue: the higher score
/// first, then the earlier position.
#[derive(Debug)]
struct Scored {
    score: f64,
    lesson: usize,
}

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Scored {}

impl Ord for Scored {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.score
            .total_cmp(&other.score)
            .then(other.lesson.cmp(&self.lesson))
    }
}

impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::DAY;
    use std::collections::HashMap;

    const NOW: f64 = 1_750_000_000.0;

    fn ledger_with(rows: &[(&str, &str, &str)]) -> Ledger {
        let mut l = Ledger::new(vec![], Params::default());
        for (id, w, p) in rows {
            l.capture(id.to_string(), w, p, Feedback::Neutral, NOW);
        }
        l
    }

    #[test]
    fn capture_sets_confidence_by_feedback() {
        let mut l = Ledger::default();
        for (id, f, c, n) in [
            ("p", Feedback::Positive, 0.55, 1),
            ("n", Feedback::Negative, 0.10, 0),
            ("u", Feedback::Neutral, 0.30, 0),
        ] {
            let (i, ev) = l.capture(id.into(), "w", "p", f, NOW);
            assert_eq!(
                (l.entries[i].confidence, l.entries[i].confirm_count),
                (c, n)
            );
            assert_eq!(ev[0].kind, EventKind::Captured);
        }
    }

    #[test]
    fn a_capture_adds_exactly_its_own_candidate_pairs() {
        let mut l = ledger_with(&[
            ("a", "building a prompt for Claude", "use XML tags"),
            ("b", "deploying a database", "take a backup first"),
            ("c", "prompt for Claude models", "be direct"),
            ("d", "deploying the database on friday", "do not"),
        ]);
        l.entries[2].status = Status::Retired;
        for (id, when) in [
            ("e", "prompt for a Claude model"),
            ("f", "deploying a database"),
            ("g", "unrelated zebra"),
        ] {
            let before = l.candidate_pair_count();
            let (i, _) = l.capture(id.into(), when, "x", Feedback::Neutral, NOW);
            assert_eq!(
                before + l.candidate_pairs_of(i),
                l.candidate_pair_count(),
                "{when}"
            );
        }
    }

    /// Ledgers of `n` lessons over a few words (so triggers pair often),
    /// captured one a second from NOW, every fifth retired.
    fn dense_ledger(n: usize, seed: u64) -> Ledger {
        const WORDS: [&str; 10] = [
            "editing", "the", "parser", "in", "repo", "tests", "deploy", "config", "r1", "r2",
        ];
        let mut x = seed;
        let mut next = |m: usize| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) as usize) % m
        };
        let mut l = Ledger::new(vec![], Params::default());
        for k in 0..n {
            let when: Vec<&str> = (0..2 + next(4)).map(|_| WORDS[next(WORDS.len())]).collect();
            let (i, _) = l.capture(
                format!("e{k}"),
                &when.join(" "),
                "x",
                Feedback::Neutral,
                NOW + k as f64,
            );
            if next(5) == 0 {
                l.entries[i].status = Status::Retired;
            }
        }
        l
    }

    /// Candidate pairs with a lesson captured after `since`, from the
    /// definition: every candidate pair, filtered.
    fn unslept_by_definition(l: &Ledger, since: f64) -> usize {
        let by_id: HashMap<String, f64> = l
            .entries
            .iter()
            .map(|e| (e.id.clone(), e.created))
            .collect();
        l.review_candidates()
            .iter()
            .filter(|c| by_id[&c.a_id] > since || by_id[&c.b_id] > since)
            .count()
    }

    #[test]
    fn unslept_pairs_are_the_candidate_pairs_holding_a_lesson_newer_than_the_sleep() {
        for seed in 1..6 {
            let mut l = dense_ledger(200, seed);
            // few new lessons (a scan each), many (one search), none, all
            for new in [0usize, 1, 7, 64, 65, 150, 200] {
                let since = NOW + (200 - new) as f64 - 0.5;
                let truth = unslept_by_definition(&l, since);
                assert_eq!(l.unslept_pair_count(since, usize::MAX), truth, "{new} new");
                // counting stops at need, never short of it or past the truth
                for need in [1, truth / 2, truth] {
                    let got = l.unslept_pair_count(since, need.max(1));
                    assert!(
                        got >= need.max(1).min(truth) && got <= truth,
                        "{got} {need}"
                    );
                }
            }
            // a capture adds its own unslept pairs; retiring one removes them
            let since = NOW + 150.5;
            let before = unslept_by_definition(&l, since);
            let (i, _) = l.capture(
                "n".into(),
                "editing the parser",
                "y",
                Feedback::Neutral,
                NOW + 999.0,
            );
            let added = l.unslept_pairs_of(i, since);
            assert_eq!(before + added, unslept_by_definition(&l, since));
            let old = (0..l.entries.len())
                .find(|&j| l.entries[j].status == Status::Active && l.entries[j].created < since)
                .unwrap();
            let before = unslept_by_definition(&l, since);
            let moved = l.unslept_pairs_of(old, since);
            l.entries[old].status = Status::Retired;
            assert_eq!(before - moved, unslept_by_definition(&l, since));
        }
    }

    /// One ranking by meaning's inputs.
    struct Case<'a> {
        candidates: &'a [usize],
        relevance: &'a [f64],
        floor: f64,
        k: usize,
        now: f64,
    }

    /// Ranks by meaning with the bounds `recall_near` takes.
    fn ranked(
        l: &Ledger,
        case: &Case,
        duplicate: impl Fn(usize, usize) -> bool,
    ) -> Vec<(usize, f64)> {
        let bounds = case
            .candidates
            .iter()
            .zip(case.relevance)
            .enumerate()
            .filter(|&(_, (&i, _))| l.entries[i].status == Status::Active)
            .filter_map(|(c, (&i, &r))| {
                recall_bound(l.entries[i].confidence, r, case.floor).map(|b| (c, b))
            })
            .collect();
        rank_by_meaning(
            &l.entries,
            case.relevance,
            bounds,
            |c| Some(case.candidates[c]),
            duplicate,
            case.k,
            case.now,
        )
    }

    /// Ranks by meaning, then fires, as `recall_near` does.
    fn rank_and_fire(
        l: &mut Ledger,
        candidates: &[usize],
        relevance: &[f64],
        floor: f64,
        duplicate: impl Fn(usize, usize) -> bool,
        k: usize,
        now: f64,
    ) -> (Vec<usize>, Vec<Event>) {
        let case = Case {
            candidates,
            relevance,
            floor,
            k,
            now,
        };
        let scored = ranked(l, &case, duplicate);
        l.fire(scored, now)
    }

    /// What [`rank_by_meaning`] must give: every candidate that
    /// may fire scored, sorted by score (ties by candidate), duplicates
    /// of one ranked above passed over, the first k.
    fn rank_by_sorting(
        l: &Ledger,
        case: &Case,
        duplicate: impl Fn(usize, usize) -> bool,
    ) -> Vec<(usize, f64)> {
        let Case {
            candidates,
            relevance,
            floor,
            k,
            now,
        } = *case;
        let mut order: Vec<(usize, f64)> = (0..candidates.len())
            .filter(|&c| l.entries[candidates[c]].status == Status::Active)
            .filter(|&c| relevance[c] >= floor)
            .map(|c| {
                (
                    c,
                    relevance[c].max(0.0) * l.entries[candidates[c]].effective(now),
                )
            })
            .filter(|(_, s)| *s > 0.0)
            .collect();
        order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let (mut taken, mut seen) = (vec![], vec![]);
        for (c, score) in order {
            if taken.len() == k {
                break;
            }
            let i = candidates[c];
            if !seen.iter().any(|&t| duplicate(t, i)) {
                taken.push((i, score));
            }
            seen.push(i);
        }
        taken
    }

    #[test]
    fn ranking_by_bounds_gives_the_full_sort() {
        let mut rng = super::super::meaning::tests::Rng(0x9e37_79b9_7f4a_7c15);
        let mut unit = || f64::from(rng.next()) * 0.5 + 0.5;
        for round in 0..60 {
            // sizes either side of FIRST_BOUNDS, few distinct values (ties)
            let n = [3, 40, 64, 65, 300, 2000][round % 6];
            let mut l = Ledger::new(vec![], Params::default());
            for i in 0..n {
                let e = &mut l.entries;
                e.push(Entry::new(
                    format!("e{i}"),
                    format!("when {i}"),
                    format!("prefer {i}"),
                    (unit() * 10.0).round() / 10.0,
                    (unit() * 3.0) as u64,
                    NOW - (unit() * 90.0).round() * DAY,
                ));
                if unit() < 0.1 {
                    e[i].status = Status::Retired;
                }
            }
            let candidates: Vec<usize> = (0..n).filter(|_| unit() < 0.9).collect();
            let relevance: Vec<f64> = candidates
                .iter()
                .map(|_| (unit() * 2.0 - 0.5).min(1.0))
                .map(|r| (r * 8.0).round() / 8.0)
                .collect();
            // a lesson repeats another when they share a residue
            let groups = 1 + round % 17;
            let duplicate = |a: usize, b: usize| a % groups == b % groups && groups < 16;
            for k in [0, 1, 5, 70, n + 1] {
                let case = Case {
                    candidates: &candidates,
                    relevance: &relevance,
                    floor: [0.0, 0.25][round % 2],
                    k,
                    now: NOW + 3.0 * DAY,
                };
                let got = ranked(&l, &case, duplicate);
                let want = rank_by_sorting(&l, &case, duplicate);
                assert_eq!(got, want, "round {round}, n {n}, k {k}");
            }
        }
    }

    #[test]
    fn the_nth_best_bound_is_found_in_one_pass() {
        let bounds: Vec<(usize, f64)> = (0..100)
            .map(|i| (i, f64::from((i * 37 % 100) as u32) + 1.0))
            .collect();
        assert_eq!(nth_best_bound(&bounds, 1), Some(100.0));
        assert_eq!(nth_best_bound(&bounds, 64), Some(37.0));
        assert_eq!(
            nth_best_bound(&bounds, 100),
            None,
            "no cut when all are wanted"
        );
        assert_eq!(nth_best_bound(&bounds, 0), None);
    }

    #[test]
    fn recall_by_meaning_skips_duplicates_and_inactive_lessons() {
        let mut l = ledger_with(&[
            ("a", "target model is Claude", "use XML tags"),
            ("b", "Anthropic model as target", "structure with XML tags"),
            ("c", "deploying a database", "take a backup first"),
            ("d", "prompt for Claude models", "be direct"),
        ]);
        l.entries[3].status = Status::Retired;
        // a and b say the same thing; d would score best but is retired
        let relevance = [0.8, 0.9, 0.1, 0.95];
        let dup = |x: usize, y: usize| matches!((x.min(y), x.max(y)), (0, 1));
        let (hits, events) =
            rank_and_fire(&mut l, &[0, 1, 2, 3], &relevance, 0.0, dup, 5, NOW + 10.0);
        // effective confidences are equal, so b (0.9) comes first and a is
        // its duplicate; c still fits
        assert_eq!(hits, vec![1, 2]);
        assert_eq!(events.len(), 2);
        assert_eq!(l.entries[0].hit_count, 0, "a duplicate does not fire");
        assert_eq!(l.entries[3].hit_count, 0, "retired lessons never fire");
        let (hits, _) = rank_and_fire(
            &mut l,
            &[0, 1, 2],
            &[0.8, 0.9, -0.3],
            0.0,
            |_, _| false,
            1,
            NOW,
        );
        assert_eq!(hits, vec![1], "k caps the answer");
        // below the floor (the judge's "about the same thing" cut) nothing fires
        let (hits, events) = rank_and_fire(
            &mut l,
            &[0, 1, 2],
            &[0.3, 0.44, 0.2],
            0.45,
            |_, _| false,
            3,
            NOW,
        );
        assert!(hits.is_empty() && events.is_empty(), "{hits:?}");
        let (hits, _) = rank_and_fire(
            &mut l,
            &[0, 1, 2],
            &[0.3, 0.46, 0.2],
            0.45,
            |_, _| false,
            3,
            NOW,
        );
        assert_eq!(hits, vec![1]);
    }

    #[test]
    fn recall_near_ranks_by_kept_vectors_and_skips_duplicates() {
        let mut l = ledger_with(&[
            ("a", "target model is Claude", "use XML tags"),
            ("b", "Anthropic model as target", "structure with XML tags"),
            ("c", "deploying a database", "take a backup first"),
            ("d", "prompt for Claude models", "do not use XML tags"),
        ]);
        let cuts = Cuts {
            trigger: 0.5,
            lesson: 0.5,
            action: 0.5,
        };
        // the context leans on axis 0; a, b and d are about it, c is not;
        // a and b say the same thing, d the opposite (negated)
        let texts: Vec<String> = [
            "target model is Claude",
            "Anthropic model as target",
            "deploying a database",
            "prompt for Claude models",
            "use XML tags",
            "structure with XML tags",
            "take a backup first",
            "do not use XML tags",
        ]
        .map(String::from)
        .to_vec();
        let v = |x: f32, y: f32| {
            let n = (x * x + y * y).sqrt();
            vec![x / n, y / n]
        };
        let vectors = vec![
            v(1.0, 0.1),
            v(1.0, 0.2),
            v(0.0, 1.0),
            v(1.0, 0.5),
            v(0.3, 1.0),
            v(0.35, 1.0),
            v(1.0, -1.0),
            v(0.3, 1.0),
        ];
        let query = crate::ledger::meaning::quantise(&v(1.0, 0.0));
        // no vectors yet: the lexical way
        assert!(l.recall_near(&query, 0.8, 0.3, 5, NOW).is_none());
        l.learn_vectors(&texts, &vectors, cuts).unwrap();
        let (hits, events) = l.recall_near(&query, 0.8, 0.3, 5, NOW).unwrap();
        // equal confidences: a (0.995) first, b its duplicate, then d
        // (0.89; its action is negated, so no duplicate); c under the floor
        assert_eq!(hits, vec![0, 3]);
        assert_eq!(events.len(), 2);
        assert_eq!(l.entries[1].hit_count, 0, "a duplicate does not fire");
        assert_eq!(l.entries[2].hit_count, 0, "an unrelated lesson never fires");
        // a lesson given a new text (a sync) is read anew: its kept rows
        // are dropped, so its new texts are asked for and used
        let mut e = l.entries[2].clone();
        e.when = "writing a prompt for Claude".into();
        l.replace_entry(2, e);
        assert_eq!(l.texts_to_embed(), vec!["writing a prompt for Claude"]);
        l.learn_vectors(
            &["writing a prompt for Claude".into()],
            &[v(1.0, 0.0)],
            cuts,
        )
        .unwrap();
        let (hits, _) = l.recall_near(&query, 0.8, 0.3, 5, NOW).unwrap();
        assert_eq!(hits[0], 2, "{hits:?}");
        for e in &mut l.entries {
            e.status = Status::Retired;
        }
        assert!(l.recall_near(&query, 0.8, 0.3, 5, NOW).is_none());
    }

    #[test]
    fn recall_near_reads_a_parent_by_the_situations_folded_under_it() {
        let mut l = ledger_with(&[
            ("a", "calling the payments API", "set a timeout"),
            ("b", "calling a weather service", "set a timeout"),
            (
                "p",
                "calling the payments API or a weather service",
                "set a timeout",
            ),
            ("c", "deploying a database", "take a backup first"),
        ]);
        let cuts = Cuts {
            trigger: 0.5,
            lesson: 0.5,
            action: 0.5,
        };
        let v = |x: f32, y: f32| {
            let n = (x * x + y * y).sqrt();
            vec![x / n, y / n]
        };
        // the parent's own situation sits between its children's, under
        // the floor for a context near one of them
        let texts: Vec<String> = [
            ("calling the payments API", v(1.0, 0.0)),
            ("calling a weather service", v(0.0, 1.0)),
            ("calling the payments API or a weather service", v(0.2, 1.0)),
            ("deploying a database", v(-1.0, 0.3)),
            ("set a timeout", v(1.0, 1.0)),
            ("take a backup first", v(-1.0, 1.0)),
        ]
        .iter()
        .map(|(t, _)| t.to_string())
        .collect();
        let vectors = vec![
            v(1.0, 0.0),
            v(0.0, 1.0),
            v(0.2, 1.0),
            v(-1.0, 0.3),
            v(1.0, 1.0),
            v(-1.0, 1.0),
        ];
        for (i, child) in [0, 1].into_iter().enumerate() {
            l.entries[child].status = Status::Dormant;
            l.entries[child].note = format!("folded under {}", l.entries[2].id);
            assert_eq!(i, child);
        }
        l.learn_vectors(&texts, &vectors, cuts).unwrap();
        assert!(l.texts_to_embed().is_empty(), "the children's are kept");
        let query = crate::ledger::meaning::quantise(&v(1.0, 0.05));
        let (hits, _) = l.recall_near(&query, 0.9, 0.5, 5, NOW).unwrap();
        assert_eq!(hits, vec![2], "the parent, through its first child");
        // a child whose vectors were never learnt leaves the parent to
        // its own situation, and is asked for
        let mut fresh = l.entries[0].clone();
        fresh.when = "calling the billing API".into();
        l.replace_entry(0, fresh);
        assert_eq!(l.texts_to_embed(), vec!["calling the billing API"]);
        let (hits, _) = l.recall_near(&query, 0.9, 0.5, 5, NOW).unwrap();
        assert!(hits.is_empty(), "{hits:?}");
        // a child no longer folded (revived) recalls for itself
        l.entries[1].status = Status::Active;
        let query = crate::ledger::meaning::quantise(&v(0.05, 1.0));
        let (hits, _) = l.recall_near(&query, 0.9, 0.5, 5, NOW).unwrap();
        assert_eq!(hits[0], 1, "{hits:?}");
    }

    /// Recall by meaning's answer, found the plain way: every active
    /// lesson's relevance the nearest of its own situation and those of
    /// the lessons folded under it (at any depth), scored, sorted, and
    /// taken past duplicates.
    fn recall_near_by_scanning(
        l: &Ledger,
        query: &[i8],
        related_above: f64,
        floor: f64,
        k: usize,
        now: f64,
    ) -> (Vec<usize>, bool) {
        let v = l.vectors();
        let near = |a: &str| f64::from(dot(query, v.get(a).expect("every text has a vector")));
        let mut relevance: Vec<Option<f64>> = vec![None; l.entries.len()];
        for (i, e) in l.entries.iter().enumerate() {
            let mut at = i;
            // the active ancestor, following notes as far as they go
            for _ in 0..l.entries.len() {
                let e = &l.entries[at];
                if e.status == Status::Active {
                    break;
                }
                let link = match e.status {
                    Status::Dormant => "folded under ",
                    _ => "merged into ",
                };
                let parent = (at != i || e.status == Status::Dormant)
                    .then(|| e.note.strip_prefix(link))
                    .flatten()
                    .and_then(|id| l.entries.iter().position(|p| p.id == id));
                match parent {
                    Some(p) => at = p,
                    None => break,
                }
            }
            if l.entries[at].status != Status::Active || (at == i) != (e.status == Status::Active) {
                continue;
            }
            let r = near(&e.when);
            if at != i && r < floor {
                continue;
            }
            relevance[at] = Some(relevance[at].map_or(r, |x: f64| x.max(r)));
        }
        let mut order: Vec<(usize, f64)> = relevance
            .iter()
            .enumerate()
            .filter_map(|(i, r)| Some((i, (*r)?)))
            .filter(|&(_, r)| r >= floor)
            .map(|(i, r)| (i, r.max(0.0) * l.entries[i].effective(now)))
            .filter(|&(_, s)| s > 0.0)
            .collect();
        order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let tied = order.windows(2).take(k).any(|w| w[0].1 == w[1].1);
        let same = |a: &str, b: &str| {
            f64::from(dot(v.get(a).expect("kept"), v.get(b).expect("kept"))) >= related_above
        };
        let duplicate = |a: &Entry, b: &Entry| {
            same(&a.when, &b.when)
                && same(&a.prefer, &b.prefer)
                && crate::text::negated(&a.prefer) == crate::text::negated(&b.prefer)
        };
        let (mut taken, mut seen): (Vec<usize>, Vec<usize>) = (vec![], vec![]);
        for (i, _) in order {
            if taken.len() == k {
                break;
            }
            if !seen
                .iter()
                .any(|&t| duplicate(&l.entries[t], &l.entries[i]))
            {
                taken.push(i);
            }
            seen.push(i);
        }
        (taken, tied)
    }

    #[test]
    fn recall_near_equals_a_scan_on_random_folded_ledgers() {
        let mut ties = 0;
        let mut rng = super::super::meaning::tests::Rng(0x2545_f491_4f6c_dd1d);
        let cuts = Cuts {
            trigger: 0.5,
            lesson: 0.5,
            action: 0.5,
        };
        for round in 0..80 {
            let n = [5, 30, 90, 400][round % 4];
            let mut l = Ledger::new(vec![], Params::default());
            let (mut texts, mut vectors) = (vec![], vec![]);
            let vector = |rng: &mut super::super::meaning::tests::Rng| {
                // few directions, so cosines tie and duplicates happen
                let v: Vec<f32> = (0..4).map(|_| (rng.next() * 2.0).round()).collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-3);
                v.iter().map(|x| x / norm).collect::<Vec<f32>>()
            };
            for i in 0..n {
                let (when, prefer) = (format!("situation {i}"), format!("action {}", i % 7));
                let mut e = Entry::new(
                    format!("e{i}"),
                    when.clone(),
                    prefer.clone(),
                    // few values, so lessons tie on score
                    [0.5, 0.75, 1.0][rng.below(3)],
                    0,
                    NOW - [0.0, 14.0][rng.below(2)] * DAY,
                );
                match rng.below(10) {
                    0 => e.status = Status::Retired,
                    7 if i > 0 => {
                        // merged into an earlier lesson: a folded
                        // lesson's parent may be
                        e.status = Status::Retired;
                        e.note = format!("merged into e{}", rng.below(i));
                    }
                    1..=5 if i > 0 => {
                        // folded under an earlier lesson: active, folded
                        // in turn (a chain), or gone (an orphan)
                        e.status = Status::Dormant;
                        e.note = format!("folded under e{}", rng.below(i));
                    }
                    6 => e.status = Status::Dormant,
                    _ => {}
                }
                l.entries.push(e);
                for t in [when, prefer] {
                    if !texts.contains(&t) {
                        vectors.push(vector(&mut rng));
                        texts.push(t);
                    }
                }
            }
            if !l.entries.iter().any(|e| e.status == Status::Active) {
                continue;
            }
            l.learn_vectors(&texts, &vectors, cuts).unwrap();
            assert!(l.texts_to_embed().is_empty());
            let query = crate::ledger::meaning::quantise(&vector(&mut rng));
            let floor = [0.0, 0.3, 0.6][round % 3];
            let related_above = [0.9, 1.5][round % 2];
            for k in [1, 3, 8] {
                let (want, tied) =
                    recall_near_by_scanning(&l, &query, related_above, floor, k, NOW);
                ties += usize::from(tied);
                let (got, _) = l.recall_near(&query, related_above, floor, k, NOW).unwrap();
                assert_eq!(got, want, "round {round}, n {n}, k {k}, floor {floor}");
            }
        }
        assert!(
            ties > 20,
            "equal scores near the top in only {ties} recalls"
        );
    }

    #[test]
    fn recall_ranks_active_lessons_and_fires_them() {
        let mut l = ledger_with(&[
            ("a", "building a prompt for Claude", "use XML tags"),
            ("b", "deploying a database", "take a backup first"),
            ("c", "prompt for Claude models", "be direct"),
        ]);
        l.entries[2].status = Status::Retired;
        let (hits, events) = l.recall("building a prompt for Claude", 5, NOW + 10.0);
        // only lessons sharing a content word fire (the reference fired any
        // shared trigram): "deploying a database" shares none; best first
        assert_eq!(hits, vec![0]);
        assert_eq!(
            (l.entries[0].hit_count, l.entries[0].last_fired),
            (1, NOW + 10.0)
        );
        assert_eq!(events[0].kind, EventKind::Fired);
        assert_eq!(l.entries[2].hit_count, 0, "retired lessons never fire");
    }

    #[test]
    fn an_unrelated_context_fires_nothing() {
        let mut l = ledger_with(&[
            ("a", "building a prompt for Claude", "use XML tags"),
            ("b", "deploying a database", "take a backup first"),
            ("c", "writing a SQL migration", "wrap it in a transaction"),
        ]);
        for context in ["bake a chocolate cake", "and the it of a", ""] {
            let (hits, events) = l.recall(context, 3, NOW);
            assert!(hits.is_empty() && events.is_empty(), "{context}: {hits:?}");
        }
        assert!(l.entries.iter().all(|e| e.hit_count == 0));
        // stemming is not needed for a shared word; case is not a difference
        let (hits, _) = l.recall("Database backups before Deploying", 3, NOW);
        assert_eq!(hits, vec![1]);
    }

    #[test]
    fn contradict_counts_decay_once() {
        // Sediment halves the effective confidence but leaves the decay origin,
        // so decay already applied is applied again; silt folds it in.
        let mut l = ledger_with(&[("a", "w", "p")]);
        l.entries[0].confirm_count = 0;
        let t1 = NOW + 14.0 * DAY; // one half-life: 0.30 -> 0.15
        l.contradict("a", t1).unwrap();
        assert!((l.entries[0].effective(t1) - 0.075).abs() < 1e-12);
        let t2 = t1 + 14.0 * DAY; // one more half-life from t1, not from NOW
        assert!((l.entries[0].effective(t2) - 0.0375).abs() < 1e-12);
        assert_eq!(
            l.entries[0].last_confirmed, NOW,
            "a contradiction is not a confirmation"
        );
    }

    #[test]
    fn homeostasis_keeps_last_confirmed() {
        let mut l = ledger_with(&[("a", "w", "p")]);
        l.homeostasis(NOW + 3.0 * DAY);
        assert_eq!(l.entries[0].last_confirmed, NOW);
        assert_eq!(l.entries[0].decayed_at, Some(NOW + 3.0 * DAY));
        let before = l.entries[0].effective(NOW + 10.0 * DAY);
        l.homeostasis(NOW + 6.0 * DAY);
        assert!(
            (l.entries[0].effective(NOW + 10.0 * DAY) - before).abs() < 1e-12,
            "folding decay twice changes nothing"
        );
    }

    #[test]
    fn homeostasis_evicts_the_weakest_over_the_cap() {
        let mut l = ledger_with(&[("a", "w1", "p"), ("b", "w2", "p"), ("c", "w3", "p")]);
        l.params.cap = 2;
        l.entries[1].hit_count = 5;
        l.entries[2].confirm_count = 2;
        let (h, events) = l.homeostasis(NOW);
        assert_eq!((h.retired, h.evicted, h.active), (0, 1, 2));
        assert_eq!(l.entries[0].note, "evicted (budget cap)");
        assert_eq!(events[0].kind, EventKind::Evicted);
    }

    #[test]
    fn confirm_revives_a_dormant_child_and_refuses_unknown_ids() {
        let mut l = ledger_with(&[("a", "w", "p")]);
        l.entries[0].status = Status::Dormant;
        let (_, events) = l.confirm("a", NOW).unwrap();
        assert_eq!(l.entries[0].status, Status::Active);
        assert_eq!(events[0].kind, EventKind::Revived);
        assert!((l.entries[0].confidence - 0.45).abs() < 1e-12);
        let err = l.confirm("nope", NOW).unwrap_err().to_string();
        assert!(
            err.contains("sediment_stats") && err.contains("silt ledger stats"),
            "{err}"
        );
    }

    #[test]
    fn every_judgment_is_applied_or_skipped_with_a_reason() {
        let mut l = ledger_with(&[
            ("a", "w", "use tabs"),
            ("b", "w", "use spaces"),
            ("c", "x", "p"),
            ("d", "y", "p"),
        ]);
        let j = |a: &str, b: &str, v| Judgment {
            a_id: a.into(),
            b_id: b.into(),
            verdict: v,
        };
        let (applied, _) = l.apply_judgments(
            &[
                j("a", "b", Verdict::Contradict),
                j("a", "b", Verdict::Merge), // b is now retired
                j("a", "zz", Verdict::Contradict),
                j("c", "c", Verdict::Merge),
                j("c", "d", Verdict::Distinct),
            ],
            NOW,
        );
        assert_eq!(
            (
                applied.merged,
                applied.contradictions_resolved,
                applied.distinct
            ),
            (0, 1, 1)
        );
        let reasons: Vec<&str> = applied.skipped.iter().map(|s| s.reason.as_str()).collect();
        assert_eq!(reasons.len(), 3);
        assert!(reasons[0].contains("'b' is retired"), "{reasons:?}");
        assert!(reasons[1].contains("no entry with id 'zz'"), "{reasons:?}");
        assert!(reasons[2].contains("same entry"), "{reasons:?}");
    }

    #[test]
    fn review_lists_similar_pairs_rendered() {
        let l = ledger_with(&[
            ("a", "non-reasoning GPT target", "inject CoT"),
            ("b", "non-reasoning GPT target", "keep it terse"),
            ("c", "haiku", "5-7-5"),
        ]);
        let c = l.review_candidates();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].a, "WHEN non-reasoning GPT target -> PREFER inject CoT");
        assert_eq!(c[0].trigger_similarity, 1.0);
    }
}
