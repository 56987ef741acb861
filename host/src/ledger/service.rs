//! One ledger, served: every operation takes the store's write lock, syncs
//! what other writers committed into the engine, runs the engine, and
//! commits the entries and events it changed in the same transaction.

use std::path::Path;
use std::sync::Arc;

use silt_core::ledger::events::Event;

use super::store::Store;
use crate::bindings::ledger_engine::silt::ledger::types::{
    ApplyReport, Candidate, Change, Entry, Feedback, HomeostasisReport, Judgment, Params,
    Redundancy, SleepReport,
};
use crate::runtime::ledger::{LedgerSession, default_params};
use crate::runtime::{CallError, Runtime};
use crate::tools::sediment::{entry_from_wit, entry_to_wit, event_from_wit};

/// A ledger file and the engine instance that works on it.
pub struct LedgerService {
    runtime: Arc<Runtime>,
    judge: String,
    /// The engine's tunables (the destructive margin from silt.toml).
    params: Params,
    pub store: Store,
    session: Option<LedgerSession>,
    /// The store version the engine instance has seen.
    seen: i64,
}

impl LedgerService {
    /// Opens the ledger at `path`; the sleep pass will ask `judge`.
    pub fn open(runtime: Arc<Runtime>, judge: &str, path: &Path) -> Result<Self, CallError> {
        Ok(LedgerService {
            runtime,
            judge: judge.to_string(),
            params: default_params(),
            store: Store::open(path)?,
            session: None,
            seen: i64::MIN,
        })
    }

    /// Runs the engine with `params` from now on (a new engine instance).
    pub fn set_params(&mut self, params: Params) {
        self.params = params;
        self.session = None;
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
        if self.session.as_ref().is_none_or(LedgerSession::poisoned) {
            self.session = Some(self.runtime.open_ledger(&self.judge, &self.params).await?);
            self.seen = i64::MIN;
        }
        let version = self.store.version()?;
        if version != self.seen {
            let rows: Vec<Entry> = self
                .store
                .changed_since(self.seen)?
                .iter()
                .map(entry_to_wit)
                .collect();
            self.session_mut().sync(&rows).await?;
            self.seen = version;
        }
        Ok(())
    }

    fn session_mut(&mut self) -> &mut LedgerSession {
        self.session.as_mut().expect("synced before use")
    }

    async fn begin(&mut self) -> Result<(), CallError> {
        self.store.begin_write()?;
        if let Err(e) = self.sync().await {
            self.store.rollback();
            return Err(e);
        }
        Ok(())
    }

    fn finish<T>(
        &mut self,
        outcome: Result<(T, Change), CallError>,
    ) -> Result<(T, Vec<Event>), CallError> {
        match outcome {
            Ok((value, change)) => {
                let entries: Vec<_> = change.entries.iter().map(entry_from_wit).collect();
                let events: Vec<Event> = change.events.iter().map(event_from_wit).collect();
                match self.store.commit(&entries, &events) {
                    Ok(version) => {
                        self.seen = version;
                        Ok((value, events))
                    }
                    Err(e) => {
                        self.store.rollback();
                        // the engine holds changes the store refused: start over
                        self.session = None;
                        Err(e.into())
                    }
                }
            }
            Err(e) => {
                self.store.rollback();
                Err(e)
            }
        }
    }

    /// A read: sync without the write lock. A commit landing between the
    /// version read and the row read is only re-sent on the next sync.
    async fn read(&mut self) -> Result<(), CallError> {
        self.sync().await
    }

    pub async fn recall(
        &mut self,
        context: &str,
        k: u32,
        now: f64,
    ) -> Result<Vec<Entry>, CallError> {
        self.begin().await?;
        let out = self.session_mut().recall(context, k, now).await;
        Ok(self.finish(out)?.0)
    }

    /// Captures a lesson under a fresh id; returns the stored entry.
    pub async fn capture(
        &mut self,
        when: &str,
        prefer: &str,
        feedback: Feedback,
        now: f64,
    ) -> Result<Entry, CallError> {
        self.begin().await?;
        let id = loop {
            let id = silt_core::ids::new_id();
            match self.store.contains(&id) {
                Ok(false) => break id,
                Ok(true) => continue,
                Err(e) => {
                    self.store.rollback();
                    return Err(e.into());
                }
            }
        };
        let out = self
            .session_mut()
            .capture(&id, when, prefer, feedback, now)
            .await
            .map(|c| ((), c));
        let captured = out
            .as_ref()
            .ok()
            .and_then(|(_, c)| c.entries.iter().find(|e| e.id == id).cloned());
        self.finish(out)?;
        captured.ok_or_else(|| {
            CallError::JudgeFailed("the ledger engine did not return the captured entry".into())
        })
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
        let updated = out
            .as_ref()
            .ok()
            .and_then(|(_, c)| c.entries.iter().find(|e| e.id == id).cloned());
        self.finish(out)?;
        updated.ok_or_else(|| {
            CallError::JudgeFailed("the ledger engine did not return the entry".into())
        })
    }

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
        self.finish(out)
    }

    pub async fn apply_judgments(
        &mut self,
        judgments: &[Judgment],
        now: f64,
    ) -> Result<ApplyReport, CallError> {
        self.begin().await?;
        let out = self.session_mut().apply_judgments(judgments, now).await;
        Ok(self.finish(out)?.0)
    }

    pub async fn review_candidates(&mut self) -> Result<Vec<Candidate>, CallError> {
        self.read().await?;
        self.session_mut().review_candidates().await
    }

    /// Takes back merge or resolution `seq` from the log: the retired
    /// lesson is active again and the survivor as it was (or, when it
    /// changed since, without what the step gave it). Needs no judge, so
    /// the engine is not involved; it syncs the rows on its next call.
    pub fn undo(&mut self, seq: i64, now: f64) -> Result<silt_core::ledger::undo::Undo, CallError> {
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

    pub async fn stats(
        &mut self,
        include_retired: bool,
        limit: u32,
        now: f64,
    ) -> Result<Vec<Entry>, CallError> {
        self.read().await?;
        self.session_mut().stats(include_retired, limit, now).await
    }

    pub async fn redundancy(&mut self) -> Result<Redundancy, CallError> {
        self.read().await?;
        self.session_mut().redundancy().await
    }
}
