//! The ledger engine as a component: a `ledger` resource holding entries
//! the host syncs in, running `silt_core::ledger` on them and handing back
//! what changed.

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

mod convert;

wit_bindgen::generate!({
    path: ["../../wit/judge", "../../wit/host", "../../wit/embed", "../../wit/ledger"],
    world: "silt:ledger/ledger-engine",
    generate_all,
});

use std::cell::RefCell;
use std::collections::HashMap;

use exports::silt::ledger::engine::{Guest, GuestLedger};
use silt::ledger::types::{
    ApplyReport, Candidate, CaptureRelation, Change, Entry, Feedback, HomeostasisReport, Judgment,
    LedgerError, Params, Redundancy, ReviewPage, ReviewPair, Skipped, SleepReport,
};
use silt_core::ledger::{self as core, ops};

/// Lesson pairs sent to the judge per call.
const RELATE_BATCH: usize = 256;

/// The imported judge's `relations`, validated, and the host's
/// `relating-ahead` with the calls it started.
#[derive(Default)]
struct ImportedRelations {
    /// Each started call with its number of pairs, by the number `start`
    /// gave it.
    started: HashMap<u64, (silt::ledger::relating_ahead::Pending, usize)>,
    next: u64,
}

impl core::relate::RelationJudge for ImportedRelations {
    fn start(&mut self, lessons: &[core::relate::Lesson<'_>], pairs: &[(u32, u32)]) -> Option<u64> {
        use silt::ledger::relating_ahead::Lesson;
        let lessons: Vec<Lesson> = lessons
            .iter()
            .map(|l| Lesson {
                when: l.when.to_string(),
                prefer: l.prefer.to_string(),
            })
            .collect();
        let pending = silt::ledger::relating_ahead::start(&lessons, pairs)?;
        self.next += 1;
        self.started.insert(self.next, (pending, pairs.len()));
        Some(self.next)
    }

    fn finish(&mut self, call: u64) -> Result<Vec<core::relate::Relation>, String> {
        let (pending, pairs) = self
            .started
            .remove(&call)
            .ok_or_else(|| format!("no call {call} was started"))?;
        let answers: Vec<silt::judge::relations::Relation> =
            silt::ledger::relating_ahead::Pending::finish(pending)
                .map_err(|e| format!("the judge could not relate lessons: {e}"))?
                .into_iter()
                .map(|r| silt::judge::relations::Relation {
                    merge: r.merge,
                    contradict: r.contradict,
                    sibling: r.sibling,
                    distinct: r.distinct,
                })
                .collect();
        convert::relations(&answers, pairs)
    }

    fn relate(
        &mut self,
        pairs: &[(core::relate::Lesson<'_>, core::relate::Lesson<'_>)],
    ) -> Result<Vec<core::relate::Relation>, String> {
        use silt::judge::relations::{Lesson, LessonPair};
        let lesson = |l: &core::relate::Lesson<'_>| Lesson {
            when: l.when.to_string(),
            prefer: l.prefer.to_string(),
        };
        let pairs: Vec<LessonPair> = pairs
            .iter()
            .map(|(a, b)| LessonPair {
                a: lesson(a),
                b: lesson(b),
            })
            .collect();
        let mut relations = Vec::with_capacity(pairs.len());
        // bounded batches keep each answer well under a judge's output cap
        for batch in pairs.chunks(RELATE_BATCH) {
            let answers = silt::judge::relations::relate(batch)
                .map_err(|e| format!("the judge could not relate lessons: {e:?}"))?;
            relations.extend(convert::relations(&answers, batch.len())?);
        }
        Ok(relations)
    }
}

/// The host's `searching-ahead`, with the searches it started.
#[derive(Default)]
struct ImportedSpareCore {
    started: HashMap<u64, silt::ledger::searching_ahead::PendingSearch>,
    near: HashMap<u64, silt::ledger::searching_ahead::PendingNear>,
    next: u64,
}

impl core::spare_core::SpareCore for ImportedSpareCore {
    fn start_partner_lists(
        &mut self,
        texts: &[&str],
        search: core::candidates::PartnerSearch,
    ) -> Option<u64> {
        use silt::ledger::searching_ahead::{PartnerSearch, start_partners};
        let texts: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
        let search = PartnerSearch {
            threshold: search.threshold,
            keep: search.keep.min(u32::MAX as usize) as u32,
            max_checks: search.max_checks.map(|c| c.min(u32::MAX as usize) as u32),
        };
        let pending = start_partners(&texts, search)?;
        self.next += 1;
        self.started.insert(self.next, pending);
        Some(self.next)
    }

    fn finish_partner_lists(
        &mut self,
        call: u64,
    ) -> Result<core::candidates::PartnerLists, String> {
        let pending = self
            .started
            .remove(&call)
            .ok_or_else(|| format!("no search {call} was started"))?;
        silt::ledger::searching_ahead::PendingSearch::finish(pending)
    }

    fn start_pairs_near(
        &mut self,
        rows: &core::rows::Rows,
        cut: f64,
        per_row: usize,
    ) -> Option<u64> {
        let dim = u32::try_from(rows.dim).ok()?;
        let per_row = per_row.min(u32::MAX as usize) as u32;
        let pending = silt::ledger::searching_ahead::start_near(rows.stored(), dim, cut, per_row)?;
        self.next += 1;
        self.near.insert(self.next, pending);
        Some(self.next)
    }

    fn take_back_pairs_near(&mut self, call: u64) -> bool {
        let taken = self.near.get(&call).is_some_and(|p| p.take_back());
        if taken {
            self.near.remove(&call);
        }
        taken
    }

    fn finish_pairs_near(&mut self, call: u64) -> Result<Vec<(u32, u32)>, String> {
        let pending = self
            .near
            .remove(&call)
            .ok_or_else(|| format!("no search {call} was started"))?;
        silt::ledger::searching_ahead::PendingNear::finish(pending)
    }

    fn not_taken(&mut self, why: &str) {
        // the pass searched itself: the same answer, later
        silt::host::log::log(
            silt::host::log::Level::Warn,
            &format!(
                "a search handed to a spare core was not taken ({why}); searched here instead"
            ),
        );
    }
}

struct LedgerResource {
    ledger: RefCell<ops::Ledger>,
    /// Position of each id in `ledger.entries`.
    index: RefCell<HashMap<String, usize>>,
    /// Whether the judge gives vectors, once it has said.
    embeds: std::cell::Cell<Option<bool>>,
    /// Every active lesson's texts have vectors here: no lesson was added,
    /// revived or reworded since the last refresh found none missing (a
    /// recall need not look through the ledger for them).
    vectors_current: std::cell::Cell<bool>,
    /// The judge's calibrated cosines, from its last vectors.
    calibration: std::cell::Cell<Option<Calibration>>,
}

impl LedgerResource {
    /// The entries at `positions`, as WIT values.
    fn entries_at(&self, positions: impl IntoIterator<Item = usize>) -> Vec<Entry> {
        let l = self.ledger.borrow();
        let mut seen = std::collections::BTreeSet::new();
        positions
            .into_iter()
            .filter(|p| seen.insert(*p))
            .map(|p| convert::entry_to_wit(&l.entries[p]))
            .collect()
    }

    /// Runs `op`, which reports the positions it touched, and hands those
    /// entries back: no copy of the whole ledger for the frequent calls.
    fn touching<T>(
        &self,
        op: impl FnOnce(&mut ops::Ledger) -> (T, Vec<usize>, Vec<core::events::Event>),
    ) -> (T, Change) {
        let (out, touched, events) = op(&mut self.ledger.borrow_mut());
        self.reindex();
        let change = Change {
            entries: self.entries_at(touched),
            events: events.iter().map(convert::event_to_wit).collect(),
        };
        (out, change)
    }

    /// Runs `op`, then reports every entry it changed or created (for the
    /// passes that may touch any entry).
    fn changing<T>(
        &self,
        op: impl FnOnce(&mut ops::Ledger) -> (T, Vec<core::events::Event>),
    ) -> (T, Change) {
        self.vectors_current.set(false);
        let before: Vec<core::Entry> = self.ledger.borrow().entries.clone();
        let (out, events) = op(&mut self.ledger.borrow_mut());
        let changed: Vec<usize> = {
            let l = self.ledger.borrow();
            (0..l.entries.len())
                .filter(|&i| before.get(i) != Some(&l.entries[i]))
                .collect()
        };
        self.reindex();
        let change = Change {
            entries: self.entries_at(changed),
            events: events.iter().map(convert::event_to_wit).collect(),
        };
        (out, change)
    }

    fn reindex(&self) {
        let l = self.ledger.borrow();
        let mut index = self.index.borrow_mut();
        if index.len() != l.entries.len() {
            for (i, e) in l.entries.iter().enumerate().skip(index.len()) {
                index.insert(e.id.clone(), i);
            }
        }
    }
}

/// Texts sent to the judge per `embed` call, so each answer stays far
/// under a judge's output cap (384 floats a text).
const EMBED_BATCH: usize = 256;

/// Texts whose vectors are stored (as bytes) before the next are asked
/// for: 4 MB of floats at 256 dimensions, and few enough batches that the
/// engine's look for stale texts after each costs nothing at 100k lessons.
const LEARN_BATCH: usize = 16 * EMBED_BATCH;

/// How a judge's vectors read: its calibrated cosines.
#[derive(Clone, Copy)]
struct Calibration {
    related_above: f64,
    unrelated_below: f64,
}

impl LedgerResource {
    /// Asks the judge for vectors of `texts`, in batches; None (logged
    /// unless the judge simply has none) when it cannot give them.
    fn embed(&self, texts: &[String]) -> Option<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(EMBED_BATCH) {
            match silt::embed::embed::embed(batch) {
                Ok(e) if e.vectors.len() == batch.len() => {
                    self.embeds.set(Some(true));
                    self.calibration.set(Some(Calibration {
                        related_above: e.related_above,
                        unrelated_below: e.unrelated_below,
                    }));
                    out.extend(e.vectors);
                }
                Ok(e) => {
                    warn(&format!(
                        "the judge returned {} vectors for {} texts; pairing and recalling lexically",
                        e.vectors.len(),
                        batch.len()
                    ));
                    return None;
                }
                // a judge without vectors: the lexical path, silently
                Err(silt::judge::types::JudgeError::Unsupported(_)) => {
                    self.embeds.set(Some(false));
                    return None;
                }
                // unavailable now, perhaps not later: ask again next time
                Err(e) => {
                    warn(&format!(
                        "the judge could not embed ({e:?}); pairing and recalling lexically"
                    ));
                    return None;
                }
            }
        }
        Some(out)
    }

    /// Gives the engine vectors for the texts of every active lesson, and
    /// of every lesson folded under a parent (recall reads a parent
    /// through them), it does not hold yet (each text is embedded once
    /// per warm engine), so candidate pairs by meaning join the lexical
    /// ones. False when the
    /// judge has no vectors (known after its first answer) or failed.
    fn refresh_vectors(&self) -> bool {
        if self.embeds.get() == Some(false) {
            return false;
        }
        if self.vectors_current.get() && self.embeds.get() == Some(true) {
            return true;
        }
        let missing = self.ledger.borrow_mut().texts_to_embed();
        if missing.is_empty() {
            let embeds = self.embeds.get() == Some(true);
            self.vectors_current.set(embeds);
            return embeds;
        }
        // learnt a batch at a time: the floats of every text at once
        // (200k texts of 100k made-up lessons: 200 MB at 256 dimensions)
        // took the engine over its memory limit before they were stored
        // as bytes
        for batch in missing.chunks(LEARN_BATCH) {
            let Some(vectors) = self.embed(batch) else {
                return false;
            };
            let Some(c) = self.calibration.get() else {
                return false;
            };
            let Some(cuts) =
                core::meaning::Cuts::from_calibration(c.related_above, c.unrelated_below)
            else {
                warn("the judge's calibrated cosines are out of order; pairing lexically");
                return false;
            };
            if let Err(e) = self
                .ledger
                .borrow_mut()
                .learn_vectors(batch, &vectors, cuts)
            {
                warn(&format!("{e}; pairing and recalling lexically"));
                return false;
            }
        }
        self.vectors_current.set(true);
        true
    }

    /// The context's vector, with every active and folded lesson's kept, when the
    /// judge has vectors (`silt:embed`); None sends recall down its
    /// lexical path.
    fn context_vector(&self, context: &str) -> Option<(Vec<i8>, Calibration)> {
        // the context first: a judge without vectors says so on one text,
        // not on every lesson's
        if self.embeds.get() == Some(false) {
            return None;
        }
        let query = self.embed(&[context.to_string()])?.pop()?;
        if !self.refresh_vectors() {
            return None;
        }
        Some((core::meaning::quantise(&query), self.calibration.get()?))
    }
}

fn warn(message: &str) {
    silt::host::log::log(silt::host::log::Level::Warn, message);
}

impl GuestLedger for LedgerResource {
    fn new(params: Params) -> Self {
        LedgerResource {
            ledger: RefCell::new(ops::Ledger::new(vec![], convert::params_from_wit(&params))),
            index: RefCell::new(HashMap::new()),
            embeds: std::cell::Cell::new(None),
            vectors_current: std::cell::Cell::new(false),
            calibration: std::cell::Cell::new(None),
        }
    }

    fn sync(&self, entries: Vec<Entry>) {
        // No count is adjusted here: the host keeps the unslept pair count
        // with its store, added to by the process that captures (see
        // `unslept_pairs_of`), so a lesson from elsewhere costs no scan.
        if !entries.is_empty() {
            self.vectors_current.set(false);
        }
        let mut l = self.ledger.borrow_mut();
        let mut index = self.index.borrow_mut();
        for e in entries {
            let e = convert::entry_from_wit(&e);
            match index.get(&e.id) {
                Some(&i) => l.replace_entry(i, e),
                None => {
                    index.insert(e.id.clone(), l.entries.len());
                    l.entries.push(e);
                }
            }
        }
    }

    fn size(&self) -> u32 {
        self.ledger.borrow().entries.len() as u32
    }

    fn recall(&self, context: String, k: u32, now: f64) -> (Vec<Entry>, Change) {
        let by_meaning = self.context_vector(&context);
        let (hits, change) = self.touching(|l| {
            let near = by_meaning.and_then(|(query, c)| {
                l.recall_near(&query, c.related_above, c.unrelated_below, k as usize, now)
            });
            let (hits, events) = near.unwrap_or_else(|| l.recall(&context, k as usize, now));
            (hits.clone(), hits, events)
        });
        let l = self.ledger.borrow();
        (
            hits.iter()
                .map(|&i| convert::entry_to_wit(&l.entries[i]))
                .collect(),
            change,
        )
    }

    fn capture(
        &self,
        id: String,
        when: String,
        prefer: String,
        feedback: Feedback,
        now: f64,
    ) -> Change {
        let feedback = match feedback {
            Feedback::Positive => ops::Feedback::Positive,
            Feedback::Negative => ops::Feedback::Negative,
            Feedback::Neutral => ops::Feedback::Neutral,
        };
        self.vectors_current.set(false);
        self.touching(|l| {
            let (i, events) = l.capture(id, &when, &prefer, feedback, now);
            ((), vec![i], events)
        })
        .1
    }

    fn confirm(&self, id: String, now: f64) -> Result<Change, LedgerError> {
        // a dormant lesson may come back, or an active one go
        self.vectors_current.set(false);
        self.ledger
            .borrow()
            .index_of(&id)
            .map_err(|e| LedgerError::UnknownId(e.to_string()))?;
        Ok(self
            .touching(|l| {
                let (i, events) = l.confirm(&id, now).expect("checked above");
                ((), vec![i], events)
            })
            .1)
    }

    fn contradict(&self, id: String, now: f64) -> Result<Change, LedgerError> {
        // a dormant lesson may come back, or an active one go
        self.vectors_current.set(false);
        self.ledger
            .borrow()
            .index_of(&id)
            .map_err(|e| LedgerError::UnknownId(e.to_string()))?;
        Ok(self
            .touching(|l| {
                let (i, events) = l.contradict(&id, now).expect("checked above");
                ((), vec![i], events)
            })
            .1)
    }

    fn homeostasis(&self, now: f64) -> (HomeostasisReport, Change) {
        let (h, change) = self.changing(|l| l.homeostasis(now));
        (
            HomeostasisReport {
                retired: h.retired as u32,
                evicted: h.evicted as u32,
                active: h.active as u32,
            },
            change,
        )
    }

    fn sleep(&self, now: f64) -> Result<(SleepReport, Change), LedgerError> {
        let embedding = std::time::Instant::now();
        self.refresh_vectors();
        let mut stages = vec![format!(
            "embedding {:.3} s",
            embedding.elapsed().as_secs_f64()
        )];
        let mut failure = None;
        let (report, change) = self.changing(|l| {
            let mut next_id = || silt::host::ids::next_id();
            let mut stage = |name: &str, took: std::time::Duration, counts: &[(&str, usize)]| {
                let counts: Vec<String> = counts
                    .iter()
                    .map(|(what, n)| format!("{n} {what}"))
                    .collect();
                stages.push(if counts.is_empty() {
                    format!("{name} {:.3} s", took.as_secs_f64())
                } else {
                    format!("{name} {:.3} s ({})", took.as_secs_f64(), counts.join(", "))
                });
            };
            match core::sleep::sleep_staged(
                l,
                &mut ImportedRelations::default(),
                &mut ImportedSpareCore::default(),
                &mut next_id,
                now,
                &mut stage,
            ) {
                Ok(done) => done,
                Err(e) => {
                    failure = Some(e);
                    (Default::default(), vec![])
                }
            }
        });
        if let Some(e) = failure {
            return Err(LedgerError::JudgeFailed(e));
        }
        silt::host::log::log(
            silt::host::log::Level::Debug,
            &format!("sleep stages: {}", stages.join(", ")),
        );
        let r = SleepReport {
            merged: report.merged as u32,
            contradictions_resolved: report.contradictions_resolved as u32,
            generalized: report.generalized as u32,
            held_for_review: report.held_for_review as u32,
        };
        Ok((r, change))
    }

    fn review_candidates(&self) -> Vec<Candidate> {
        self.refresh_vectors();
        self.ledger
            .borrow()
            .review_candidates()
            .into_iter()
            .map(convert::candidate_out)
            .collect()
    }

    fn review_page(
        &self,
        limit: u32,
        judge_reads_meaning: bool,
    ) -> Result<ReviewPage, LedgerError> {
        self.refresh_vectors();
        let page = core::review::review_page(
            &self.ledger.borrow(),
            &mut ImportedRelations::default(),
            limit as usize,
            judge_reads_meaning,
        )
        .map_err(LedgerError::JudgeFailed)?;
        Ok(ReviewPage {
            pairs: page
                .pairs
                .into_iter()
                .map(convert::review_pair_out)
                .collect(),
            remaining: page.remaining.min(u32::MAX as usize) as u32,
        })
    }

    fn near_lessons(
        &self,
        id: String,
        limit: u32,
        judge_reads_meaning: bool,
    ) -> Result<Vec<ReviewPair>, LedgerError> {
        let i = self
            .ledger
            .borrow()
            .index_of(&id)
            .map_err(|e| LedgerError::UnknownId(e.to_string()))?;
        // its pairs by meaning need its vectors
        self.refresh_vectors();
        let near = core::review::near_lessons(
            &mut self.ledger.borrow_mut(),
            &mut ImportedRelations::default(),
            i,
            limit as usize,
            judge_reads_meaning,
        )
        .map_err(LedgerError::JudgeFailed)?;
        Ok(near.into_iter().map(convert::review_pair_out).collect())
    }

    fn settle(
        &self,
        id: String,
        relation: CaptureRelation,
        other: String,
        now: f64,
    ) -> Result<Change, LedgerError> {
        let (new, old) = {
            let l = self.ledger.borrow();
            let find = |id: &str| {
                l.index_of(id)
                    .map_err(|e| LedgerError::UnknownId(e.to_string()))
            };
            let (new, old) = (find(&id)?, find(&other)?);
            if new == old {
                return Err(LedgerError::Invalid(format!(
                    "a lesson cannot relate to itself ('{id}')"
                )));
            }
            for i in [new, old] {
                let e = &l.entries[i];
                if e.status != core::Status::Active {
                    return Err(LedgerError::Invalid(
                        format!("lesson '{}' is {:?}, not active", e.id, e.status).to_lowercase(),
                    ));
                }
            }
            (new, old)
        };
        let relation = match relation {
            CaptureRelation::Restates => core::review::CaptureRelation::Restates,
            CaptureRelation::Contradicts => core::review::CaptureRelation::Contradicts,
            CaptureRelation::Refines => core::review::CaptureRelation::Refines,
        };
        self.vectors_current.set(false);
        Ok(self
            .touching(|l| {
                let events = core::review::settle(l, new, old, relation, now);
                ((), vec![new, old], events)
            })
            .1)
    }

    fn apply_judgments(&self, judgments: Vec<Judgment>, now: f64) -> (ApplyReport, Change) {
        let judgments: Vec<ops::Judgment> =
            judgments.into_iter().map(convert::judgment_in).collect();
        let (a, change) = self.changing(|l| l.apply_judgments(&judgments, now));
        let report = ApplyReport {
            merged: a.merged as u32,
            contradictions_resolved: a.contradictions_resolved as u32,
            distinct: a.distinct as u32,
            skipped: a
                .skipped
                .into_iter()
                .map(|s| Skipped {
                    a_id: s.a_id,
                    b_id: s.b_id,
                    reason: s.reason,
                })
                .collect(),
        };
        (report, change)
    }

    fn stats(&self, include_retired: bool, limit: u32, now: f64) -> Vec<Entry> {
        let l = self.ledger.borrow();
        let mut rows: Vec<&core::Entry> = l
            .entries
            .iter()
            .filter(|e| include_retired || e.status != core::Status::Retired)
            .collect();
        rows.sort_by(|a, b| b.effective(now).total_cmp(&a.effective(now)));
        rows.into_iter()
            .take(limit as usize)
            .map(convert::entry_to_wit)
            .collect()
    }

    fn redundancy(&self, since: f64, stop_at: f64) -> Redundancy {
        let active = self.ledger.borrow().active_count();
        let need = if stop_at > 0.0 {
            ((stop_at * active as f64).ceil() as usize).max(1)
        } else {
            usize::MAX
        };
        self.refresh_vectors();
        let pairs = self.ledger.borrow_mut().unslept_pair_count(since, need);
        Redundancy {
            candidate_pairs: pairs.min(u32::MAX as usize) as u32,
            active: active as u32,
        }
    }

    fn unslept_pairs_of(&self, id: String, since: f64) -> Result<u32, LedgerError> {
        let i = self
            .ledger
            .borrow()
            .index_of(&id)
            .map_err(|e| LedgerError::UnknownId(e.to_string()))?;
        if self.ledger.borrow().entries[i].status != core::entry::Status::Active {
            return Ok(0);
        }
        // the lesson's pairs by meaning need its vectors
        self.refresh_vectors();
        let n = self.ledger.borrow_mut().unslept_pairs_of(i, since);
        Ok(n.min(u32::MAX as usize) as u32)
    }
}

struct Component;

impl Guest for Component {
    type Ledger = LedgerResource;
}

impl exports::silt::ledger::partners::Guest for Component {
    fn strongest(
        texts: Vec<String>,
        search: exports::silt::ledger::partners::PartnerSearch,
    ) -> Vec<Vec<(u32, f64)>> {
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let search = core::candidates::PartnerSearch {
            threshold: search.threshold,
            keep: search.keep as usize,
            max_checks: search.max_checks.map(|c| c as usize),
        };
        search.lists(&texts)
    }

    fn near(rows: Vec<i8>, dim: u32, cut: f64, per_row: u32) -> Vec<(u32, u32)> {
        let Some(rows) = core::rows::Rows::from_stored(dim as usize, rows) else {
            return vec![];
        };
        core::meaning::pairs_near(&rows, cut, per_row as usize)
            .into_iter()
            .map(|(i, j)| (i as u32, j as u32))
            .collect()
    }
}

export!(Component);
