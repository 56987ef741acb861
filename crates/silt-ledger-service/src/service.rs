//! One ledger, served: every operation takes the store's write lock, syncs
//! what other writers committed into the engine, runs the engine, and
//! commits the entries and events it changed in the same transaction.

use std::path::Path;
use std::sync::Arc;

use silt_core::ledger::events::Event;

use super::store::{Pressure, Store};
use super::vectors::VectorStore;
use crate::values::{entry_from_wit, entry_to_wit, event_from_wit};
use silt_core::ledger::Status;
use silt_runtime::bindings::ledger_engine::silt::ledger::types::{
    ApplyReport, Candidate, CaptureRelation, Change, Entry, Feedback, HomeostasisReport, Judgment,
    Params, Redundancy, ReviewPage, ReviewPair, SleepReport,
};
use silt_runtime::capability::judge_calls::VectorKeeper;
use silt_runtime::ledger::{LedgerSession, default_params};
use silt_runtime::{CallError, Runtime};

/// What a sleep computed away from the lock starts from: the rows as of
/// one store version.
pub struct SleepSnapshot {
    version: i64,
    generation: i64,
    rows: Vec<Entry>,
    judge: String,
    embedder: Option<String>,
    params: Params,
    vectors: Arc<VectorStore>,
}

/// How committing a sleep computed from a snapshot went.
pub enum SleepCommit {
    /// Written; the events it logged.
    Done(Vec<Event>),
    /// Another writer changed (or deleted) a lesson the sleep changed, by
    /// more than a recall's counters, or took an id it made: nothing was
    /// written; sleep again.
    Stale,
}

/// An operation that may share a commit with others (see
/// [`LedgerService::run_batch`]).
#[derive(Clone, Debug)]
pub enum Op {
    /// Fire the top `k` active lessons for `context` (a task description).
    Recall {
        /// The task at hand, in the caller's words.
        context: String,
        /// At most this many lessons.
        k: u32,
        /// The time of the call, in Unix seconds.
        now: f64,
    },
    /// Record a lesson under a fresh id.
    Capture {
        /// The situation the lesson applies to.
        when: String,
        /// The action it recommends there.
        prefer: String,
        /// How the action went.
        feedback: Feedback,
        /// The time of the call, in Unix seconds.
        now: f64,
    },
}

/// What an [`Op`] gave back.
#[derive(Clone, Debug)]
pub enum Done {
    /// The lessons a recall fired.
    Recalled(Vec<Entry>),
    /// The captured lesson as stored.
    Captured(Entry),
}

fn no_captured_entry() -> CallError {
    CallError::JudgeFailed("the ledger engine did not return the captured entry".into())
}

/// A ledger file and the engine instance that works on it.
pub struct LedgerService {
    runtime: Arc<Runtime>,
    judge: String,
    /// The embedding plugin that gives lessons vectors when the judge has
    /// none (`[ledger] embedder`).
    embedder: Option<String>,
    /// The engine's tunables (the destructive margin from silt.toml).
    params: Params,
    /// The rows; callers read through it between operations (`all`,
    /// `contains`, `last_event_seqs`).
    pub store: Store,
    /// The judge's vectors kept in the ledger file, and new ones waiting
    /// for the next transaction.
    vectors: Arc<VectorStore>,
    session: Option<LedgerSession>,
    /// The store version the engine instance has seen.
    seen: i64,
    /// The store's deletion generation the engine instance was filled at.
    generation: i64,
    /// An operation is under way. Still set when the next one starts, the
    /// last one's future was dropped at an await (its caller went away):
    /// its transaction is rolled back and its engine, which may hold
    /// changes the store never got, replaced.
    in_flight: bool,
}

impl LedgerService {
    /// Opens the ledger at `path`; the sleep pass will ask `judge`.
    pub fn open(runtime: Arc<Runtime>, judge: &str, path: &Path) -> Result<Self, CallError> {
        Ok(LedgerService {
            runtime,
            judge: judge.to_string(),
            embedder: Some(silt_config::DEFAULT_EMBEDDER.to_string()),
            params: default_params(),
            store: Store::open(path)?,
            vectors: Arc::new(VectorStore::open(path)),
            session: None,
            seen: i64::MIN,
            generation: 0,
            in_flight: false,
        })
    }

    /// The judge sleep passes ask.
    pub fn judge(&self) -> &str {
        &self.judge
    }

    /// Runs the engine with `params` from now on (a new engine instance).
    pub fn set_params(&mut self, params: Params) {
        self.params = params;
        self.session = None;
    }

    /// Gives lessons the vectors of `embedder` when the judge has none
    /// (None: words only); a new engine instance.
    pub fn set_embedder(&mut self, embedder: Option<String>) {
        if self.embedder != embedder {
            self.embedder = embedder;
            self.session = None;
        }
    }

    /// The embedding plugin named for a judge without vectors.
    pub fn embedder(&self) -> Option<&str> {
        self.embedder.as_deref()
    }

    /// Makes later sleep passes ask `judge` (a new engine instance).
    pub fn set_judge(&mut self, judge: &str) {
        if self.judge != judge {
            self.judge = judge.to_string();
            self.session = None;
        }
    }

    /// Brings the engine up to date with the store (a fresh instance gets
    /// everything, a warm one only what changed).
    async fn sync(&mut self) -> Result<(), CallError> {
        // an entry deleted (here or by another process) is still in a warm
        // engine, and a sync cannot take it out: start from a fresh one
        let generation = self.store.generation()?;
        if generation != self.generation {
            self.session = None;
        }
        if self.session.as_ref().is_none_or(LedgerSession::poisoned) {
            let keeper: Arc<dyn VectorKeeper> = self.vectors.clone();
            self.session = Some(
                self.runtime
                    .open_ledger(
                        &self.judge,
                        &self.params,
                        Some(keeper),
                        self.embedder.as_deref(),
                    )
                    .await?,
            );
            self.seen = i64::MIN;
            self.generation = generation;
        }
        let version = self.store.version()?;
        if version != self.seen {
            let rows: Vec<Entry> = self
                .store
                .changed_since(self.seen)?
                .iter()
                .map(entry_to_wit)
                .collect();
            self.vectors.note_lessons(
                rows.iter()
                    .flat_map(|e| [e.when.as_str(), e.prefer.as_str()]),
            );
            self.session_mut().sync(&rows).await?;
            self.seen = version;
        }
        Ok(())
    }

    fn session_mut(&mut self) -> &mut LedgerSession {
        self.session.as_mut().expect("synced before use")
    }

    /// Starts an operation, first cleaning up after one that was dropped.
    fn enter(&mut self) {
        if self.in_flight {
            self.store.rollback();
            self.session = None;
        }
        self.in_flight = true;
    }

    async fn begin(&mut self) -> Result<(), CallError> {
        self.begin_as(false).await
    }

    /// [`Self::begin`]; with `counters`, for an operation that writes only
    /// counters (see `Store::begin_counters_write`).
    async fn begin_as(&mut self, counters: bool) -> Result<(), CallError> {
        self.enter();
        let began = if counters {
            self.store.begin_counters_write()
        } else {
            self.store.begin_write()
        };
        if let Err(e) = began {
            self.in_flight = false;
            return Err(e.into());
        }
        if let Err(e) = self.sync().await {
            self.store.rollback();
            self.in_flight = false;
            return Err(e);
        }
        Ok(())
    }

    fn finish<T>(
        &mut self,
        outcome: Result<(T, Change), CallError>,
    ) -> Result<(T, Vec<Event>), CallError> {
        self.in_flight = false;
        match outcome {
            Ok((value, change)) => {
                self.store.clear_event_seqs();
                let events = self.stage(&change)?;
                self.seal()?;
                Ok((value, events))
            }
            Err(e) => {
                self.store.rollback();
                Err(e)
            }
        }
    }

    /// Writes what an operation changed into the open transaction (see
    /// [`Self::seal`]); on failure rolls back and drops the engine, which
    /// holds changes the store refused.
    fn stage(&mut self, change: &Change) -> Result<Vec<Event>, CallError> {
        let entries: Vec<_> = change.entries.iter().map(entry_from_wit).collect();
        let events: Vec<Event> = change.events.iter().map(event_from_wit).collect();
        self.vectors.note_lessons(
            change
                .entries
                .iter()
                .flat_map(|e| [e.when.as_str(), e.prefer.as_str()]),
        );
        if let Err(e) = self.store.write(&entries, &events) {
            self.abandon();
            return Err(e.into());
        }
        Ok(events)
    }

    /// Commits the open transaction with the judge's new vectors.
    fn seal(&mut self) -> Result<(), CallError> {
        let vectors = self.vectors.take_pending();
        match self
            .store
            .save_vectors(&vectors)
            .and_then(|()| self.store.seal())
        {
            Ok(version) => {
                self.seen = version;
                Ok(())
            }
            Err(e) => {
                self.vectors.restore(vectors);
                self.abandon();
                Err(e.into())
            }
        }
    }

    /// Rolls back the open transaction and drops the engine instance,
    /// which may hold changes the store never got.
    fn abandon(&mut self) {
        self.store.rollback();
        self.session = None;
        self.in_flight = false;
    }

    /// Runs `ops` in one transaction and one commit (group commit: a busy
    /// server's concurrent recalls and captures share the commit's cost).
    /// Each sees the ones before it, in the engine and in the store, so
    /// the kept pair count adds each new lesson's pairs once. All or
    /// nothing: on any failure nothing is written and the error is
    /// returned; the caller runs the operations one by one instead.
    pub async fn run_batch(&mut self, ops: &[Op]) -> Result<Vec<Done>, CallError> {
        let counters = ops.iter().all(|op| matches!(op, Op::Recall { .. }));
        self.begin_as(counters).await?;
        self.store.clear_event_seqs();
        let mut out = Vec::with_capacity(ops.len());
        // carried in memory through the batch, kept once at the end: a
        // count kept mid-transaction is stamped with the version the
        // commit will have, so the next operation would not see it
        let mut kept = self.kept_pressure();
        for op in ops {
            let outcome = match op {
                Op::Recall { context, k, now } => self
                    .session_mut()
                    .recall(context, *k, *now)
                    .await
                    .map(|(hits, c)| (Done::Recalled(hits), c)),
                Op::Capture {
                    when,
                    prefer,
                    feedback,
                    now,
                } => match self.fresh_id() {
                    Ok(id) => self
                        .session_mut()
                        .capture(&id, when, prefer, *feedback, *now)
                        .await
                        .and_then(|c| {
                            let e = c.entries.iter().find(|e| e.id == id).cloned();
                            e.map(|e| (Done::Captured(e), c))
                                .ok_or_else(no_captured_entry)
                        }),
                    Err(e) => Err(e),
                },
            };
            match outcome {
                Ok((done, change)) => {
                    self.carry(&mut kept, &change).await;
                    self.stage(&change)?;
                    out.push(done);
                }
                Err(e) => {
                    self.abandon();
                    return Err(e);
                }
            }
        }
        if let Some(p) = kept {
            // never fails the batch: a count not kept is recounted later
            let _ = self.store.keep_pressure(&p);
        }
        self.in_flight = false;
        self.seal()?;
        Ok(out)
    }

    /// Runs `op` in a commit of its own (a batch of one).
    pub async fn run_one(&mut self, op: &Op) -> Result<Done, CallError> {
        let mut done = self.run_batch(std::slice::from_ref(op)).await?;
        Ok(done.pop().expect("one answer per operation"))
    }

    /// A lesson id no stored entry has.
    fn fresh_id(&mut self) -> Result<String, CallError> {
        loop {
            let id = silt_core::ids::new_id();
            if !self.store.contains(&id)? {
                return Ok(id);
            }
        }
    }

    /// A read: sync without the write lock. A commit landing between the
    /// version read and the row read is only re-sent on the next sync.
    async fn read<T>(
        &mut self,
        op: impl AsyncFnOnce(&mut LedgerSession) -> Result<T, CallError>,
    ) -> Result<T, CallError> {
        self.enter();
        let out = match self.sync().await {
            Ok(()) => op(self.session_mut()).await,
            Err(e) => Err(e),
        };
        self.in_flight = false;
        out
    }

    /// Confirms (or, with `contradict`, contradicts) entry `id`.
    pub async fn feedback(
        &mut self,
        id: &str,
        contradict: bool,
        now: f64,
    ) -> Result<Entry, CallError> {
        self.begin().await?;
        let session = self.session_mut();
        let out = if contradict {
            session.contradict(id, now).await
        } else {
            session.confirm(id, now).await
        };
        let out = out.map(|c| ((), c));
        self.carry_pressure(&out).await;
        let updated = out
            .as_ref()
            .ok()
            .and_then(|(_, c)| c.entries.iter().find(|e| e.id == id).cloned());
        self.finish(out)?;
        updated.ok_or_else(|| {
            CallError::JudgeFailed("the ledger engine did not return the entry".into())
        })
    }

    /// Cheap hygiene at `now`: decay, retire lessons below the floor, evict
    /// over the budget cap.
    pub async fn homeostasis(&mut self, now: f64) -> Result<HomeostasisReport, CallError> {
        self.begin().await?;
        let out = self.session_mut().homeostasis(now).await;
        Ok(self.finish(out)?.0)
    }

    /// The sleep pass; `judged` counts the lesson pairs related so far.
    pub async fn sleep(
        &mut self,
        now: f64,
        judged: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    ) -> Result<(SleepReport, Vec<Event>), CallError> {
        self.begin().await?;
        let out = self.session_mut().sleep(now, judged).await;
        // under the lock the pass read every lesson stored
        let out = match out {
            Ok(v) => self
                .store
                .mark_slept_through(None)
                .map(|()| v)
                .map_err(Into::into),
            Err(e) => Err(e),
        };
        self.finish(out)
    }

    /// Applies an agent's verdicts on reviewed pairs, each applied or
    /// reported skipped.
    pub async fn apply_judgments(
        &mut self,
        judgments: &[Judgment],
        now: f64,
    ) -> Result<ApplyReport, CallError> {
        self.begin().await?;
        let out = self.session_mut().apply_judgments(judgments, now).await;
        Ok(self.finish(out)?.0)
    }

    /// Every pair for an agent to judge, without those a recorded verdict
    /// settles.
    pub async fn review_candidates(&mut self) -> Result<Vec<Candidate>, CallError> {
        self.read(async |s| s.review_candidates().await).await
    }

    /// The first `limit` undecided pairs, most in need of a verdict first,
    /// and how many remain (`silt:ledger`'s `review-page`).
    pub async fn review_page(&mut self, limit: u32) -> Result<ReviewPage, CallError> {
        self.read(async |s| s.review_page(limit).await).await
    }

    /// The near lessons a capture of `id` asks the agent about.
    pub async fn near_lessons(
        &mut self,
        id: &str,
        limit: u32,
    ) -> Result<Vec<ReviewPair>, CallError> {
        self.read(async |s| s.near_lessons(id, limit).await).await
    }

    /// Acts on the relation an agent gave lesson `id` with `other`.
    pub async fn settle(
        &mut self,
        id: &str,
        relation: CaptureRelation,
        other: &str,
        now: f64,
    ) -> Result<Vec<Event>, CallError> {
        self.begin().await?;
        let out = self
            .session_mut()
            .settle(id, relation, other, now)
            .await
            .map(|c| ((), c));
        Ok(self.finish(out)?.1)
    }

    /// The rows a sleep asking `judge` can work on without the lock.
    pub fn sleep_snapshot(&mut self, judge: &str) -> Result<SleepSnapshot, CallError> {
        self.enter();
        self.in_flight = false;
        // read in one transaction, so the version matches the rows
        self.store.begin_read()?;
        let snapshot = (|| -> Result<SleepSnapshot, CallError> {
            Ok(SleepSnapshot {
                version: self.store.version()?,
                generation: self.store.generation()?,
                rows: self.store.all()?.iter().map(entry_to_wit).collect(),
                judge: judge.to_string(),
                embedder: self.embedder.clone(),
                params: self.params,
                vectors: self.vectors.clone(),
            })
        })();
        self.store.end_read();
        snapshot
    }

    /// Sleeps `snapshot` on an engine instance of its own, holding no lock:
    /// the slow part (a judge relating pairs) runs while other calls come
    /// and go. Commit the outcome with [`LedgerService::commit_sleep`].
    pub async fn sleep_apart(
        runtime: &Arc<Runtime>,
        snapshot: &SleepSnapshot,
        now: f64,
        judged: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    ) -> Result<(SleepReport, Change), CallError> {
        let keeper: Arc<dyn VectorKeeper> = snapshot.vectors.clone();
        let started = std::time::Instant::now();
        let mut session = runtime
            .open_ledger(
                &snapshot.judge,
                &snapshot.params,
                Some(keeper),
                snapshot.embedder.as_deref(),
            )
            .await?;
        let opened = started.elapsed();
        session.sync(&snapshot.rows).await?;
        tracing::debug!(
            "sleep apart: engine opened in {:.3} s, {} rows synced in {:.3} s",
            opened.as_secs_f64(),
            snapshot.rows.len(),
            (started.elapsed() - opened).as_secs_f64()
        );
        session.sleep(now, judged).await
    }

    /// Writes a sleep computed from `snapshot`, unless a lesson it changed
    /// (or an id it made) was written by someone else since, by more than
    /// recalls (whose hits are carried over), or a lesson was deleted:
    /// then nothing is written and the caller sleeps again.
    /// The engine of this service learns the outcome on its next sync.
    pub fn commit_sleep(
        &mut self,
        snapshot: &SleepSnapshot,
        change: &Change,
    ) -> Result<SleepCommit, CallError> {
        self.enter();
        self.in_flight = false;
        self.store.begin_write()?;
        self.vectors.note_lessons(
            snapshot
                .rows
                .iter()
                .chain(&change.entries)
                .flat_map(|e| [e.when.as_str(), e.prefer.as_str()]),
        );
        let vectors = self.vectors.take_pending();
        let outcome = (|| -> Result<SleepCommit, CallError> {
            if self.store.generation()? != snapshot.generation {
                return Ok(SleepCommit::Stale);
            }
            // A lesson the pass changed and another writer changed since
            // is written only when that writer was recalls alone (their
            // hits carried over); anything else is computed again.
            let moved: std::collections::HashMap<String, silt_core::ledger::Entry> = self
                .store
                .changed_since(snapshot.version)?
                .into_iter()
                .map(|e| (e.id.clone(), e))
                .collect();
            let mut entries = Vec::with_capacity(change.entries.len());
            for ours in change.entries.iter().map(entry_from_wit) {
                let Some(theirs) = moved.get(&ours.id) else {
                    entries.push(ours);
                    continue;
                };
                let base = snapshot.rows.iter().find(|e| e.id == ours.id);
                match base.and_then(|b| ours.rebased_over_recalls(&entry_from_wit(b), theirs)) {
                    Some(rebased) => entries.push(rebased),
                    None => return Ok(SleepCommit::Stale),
                }
            }
            let events: Vec<Event> = change.events.iter().map(event_from_wit).collect();
            let read_through = snapshot.rows.iter().map(|e| e.created).fold(0.0, f64::max);
            self.store.mark_slept_through(Some(read_through))?;
            self.store.save_vectors(&vectors)?;
            self.store.commit(&entries, &events)?;
            Ok(SleepCommit::Done(events))
        })();
        if !matches!(outcome, Ok(SleepCommit::Done(_))) {
            self.store.rollback();
            self.vectors.restore(vectors);
        }
        outcome
    }

    /// Takes back merge or resolution `seq` from the log: the retired
    /// lesson is active again and the survivor as it was (or, when it
    /// changed since, without what the step gave it). Needs no judge, so
    /// the engine is not involved; it syncs the rows on its next call.
    pub fn undo(&mut self, seq: i64, now: f64) -> Result<silt_core::ledger::undo::Undo, CallError> {
        self.enter();
        self.in_flight = false;
        self.store.begin_write()?;
        let outcome = (|| -> Result<_, CallError> {
            let stored = self.store.event(seq)?.ok_or_else(|| {
                CallError::InvalidRequest(format!(
                    "no event {seq} in this ledger; `silt ledger history` lists them"
                ))
            })?;
            let event = &stored.event;
            let mut current = Vec::new();
            for id in std::iter::once(&event.id).chain(&event.others) {
                current.extend(self.store.get(id)?);
            }
            let changed = self.store.touched_after(seq, &event.id)?;
            let undo = silt_core::ledger::undo::undo(seq, event, &current, changed, now)
                .map_err(CallError::InvalidRequest)?;
            self.store
                .commit(&undo.entries, std::slice::from_ref(&undo.event))?;
            Ok(undo)
        })();
        if outcome.is_err() {
            self.store.rollback();
        }
        outcome
    }

    /// Deletes entry `id` for good (logged with `reason`); the engine
    /// learns of it on its next call. An error when there is no such entry.
    pub fn forget(
        &mut self,
        id: &str,
        reason: &str,
        now: f64,
    ) -> Result<Option<silt_core::ledger::Entry>, CallError> {
        self.enter();
        self.in_flight = false;
        if !self.store.contains(id)? {
            return Err(CallError::InvalidRequest(format!(
                "no entry '{id}' in this ledger; `silt ledger stats --all` lists them"
            )));
        }
        Ok(self.store.forget(id, reason, now)?)
    }

    /// Up to `limit` entries by effective confidence at `now`, highest
    /// first; retired ones too when `include_retired`.
    pub async fn stats(
        &mut self,
        include_retired: bool,
        limit: u32,
        now: f64,
    ) -> Result<Vec<Entry>, CallError> {
        self.read(async |s| s.stats(include_retired, limit, now).await)
            .await
    }

    /// The pairs no sleep pass has judged, counted until they reach
    /// `stop_at` per active lesson (0: all); see `silt:ledger`'s
    /// `redundancy`. The count kept with the store answers without the
    /// engine; else the engine counts, and a count that was not cut short
    /// is recorded for the captures that follow (here or in another
    /// process) to add to.
    pub async fn redundancy(&mut self, stop_at: f64) -> Result<Redundancy, CallError> {
        let method = self.pressure_method();
        if let Some(p) = self.store.pressure()?
            && p.method == method
        {
            return Ok(Redundancy {
                candidate_pairs: p.pairs.min(u32::MAX.into()) as u32,
                active: p.active.min(u32::MAX.into()) as u32,
            });
        }
        let since = self.store.slept_through()?;
        let r = self
            .read(async |s| s.redundancy(since, stop_at).await)
            .await?;
        let need = (stop_at * f64::from(r.active)).ceil().max(1.0);
        if stop_at <= 0.0 || f64::from(r.candidate_pairs) < need {
            let counted = Pressure {
                method,
                since,
                pairs: r.candidate_pairs.into(),
                active: r.active.into(),
            };
            // a count another commit overtook is not kept: the next
            // check counts again
            self.store.record_pressure(&counted, self.seen)?;
        }
        Ok(r)
    }

    /// The engine's own count, never the kept one: what `redundancy`
    /// would answer with no count kept (for checks of the kept count).
    pub async fn recount(&mut self) -> Result<Redundancy, CallError> {
        let since = self.store.slept_through()?;
        self.read(async |s| s.redundancy(since, 0.0).await).await
    }

    /// Whose pairs the kept count holds: the judge's (by meaning, its
    /// vectors) at this candidate threshold.
    fn pressure_method(&self) -> String {
        format!("{}@{}", self.judge, self.params.candidate_threshold)
    }

    /// Carries the kept pair count through an operation about to be
    /// committed: a new active lesson adds its pairs (one scan, here, so
    /// no other process scans for it), entries whose status and wording
    /// stay as they were change nothing, anything else leaves the count
    /// stale for the next check to recount. Never fails the operation: a
    /// count that cannot be carried is only recounted later.
    async fn carry_pressure<T>(&mut self, outcome: &Result<(T, Change), CallError>) {
        let Ok((_, change)) = outcome else { return };
        let mut kept = self.kept_pressure();
        self.carry(&mut kept, change).await;
        if let Some(p) = kept {
            let _ = self.store.keep_pressure(&p);
        }
    }

    /// The kept pair count, if it is this judge's and current.
    fn kept_pressure(&self) -> Option<Pressure> {
        match self.store.pressure() {
            Ok(Some(p)) if p.method == self.pressure_method() => Some(p),
            _ => None,
        }
    }

    /// Adds what `change` (about to be written) does to the pair count
    /// `kept`, or drops it when the change is more than new lessons and
    /// counters. The entries before are read from the store, so a change
    /// written earlier in the same transaction is already there.
    async fn carry(&mut self, kept: &mut Option<Pressure>, change: &Change) {
        let Some(p) = kept.as_mut() else { return };
        let mut new = Vec::new();
        for e in &change.entries {
            let after = entry_from_wit(e);
            let active = after.status == Status::Active;
            match self.store.get(&e.id) {
                Ok(None) if active => new.push(e.id.clone()),
                Ok(None) => {}
                Ok(Some(before))
                    if (before.status == Status::Active) == active
                        && (!active
                            || (before.when == after.when && before.prefer == after.prefer)) => {}
                _ => {
                    *kept = None;
                    return;
                }
            }
        }
        // two new lessons' pair would be counted by each: recount instead
        if new.len() > 1 {
            *kept = None;
            return;
        }
        for id in new {
            match self.session_mut().unslept_pairs_of(&id, p.since).await {
                Ok(n) => {
                    p.pairs += u64::from(n);
                    p.active += 1;
                }
                Err(_) => {
                    *kept = None;
                    return;
                }
            }
        }
    }
}
