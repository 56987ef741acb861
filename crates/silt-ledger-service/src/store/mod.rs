//! The ledger's store: lessons, the event log with its undo records, the
//! judge's vectors and a few marks, between calls. Two backends under one
//! set of rules, chosen by where the ledger is:
//!
//! - a path: one SQLite file (WAL), the embedded default, for the agents
//!   of one machine ([`sqlite`]);
//! - a `postgres://` URL: a PostgreSQL database, for a team whose agents
//!   run on several machines ([`postgres`]).
//!
//! Several processes may share either. Every write runs under the
//! ledger's one write lock, after syncing the rows other writers
//! committed, so no update is lost. The rules that do not depend on what
//! holds the rows (the version counter, the kept pair count, forgetting,
//! importing, copying a ledger) live here once; a backend only runs
//! statements.

mod postgres;
mod sqlite;
pub mod vector_rows;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use rusqlite::OptionalExtension;
use silt_core::ledger::Entry;
use silt_core::ledger::events::Event;

pub use self::postgres::{PgLink, Scratch};

/// Marks a database as a silt ledger, with its schema version.
const SCHEMA: &str = "silt-ledger/1";

/// What auto-sleep's pressure is made of, kept with the rows so that
/// each lesson's pairs are counted once, by the process that captures it,
/// instead of by every process its row reaches.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Pressure {
    /// Whose candidate pairs these are (the judge and the candidate
    /// threshold): another judge pairs differently.
    pub method: String,
    /// The `slept_through` the pairs are counted after.
    pub since: f64,
    /// Candidate pairs holding a lesson captured after `since`.
    pub pairs: u64,
    /// Active lessons.
    pub active: u64,
}

/// [`Pressure`] with the store version it is true at.
#[derive(serde::Serialize, serde::Deserialize)]
struct Stamped {
    #[serde(flatten)]
    pressure: Pressure,
    version: i64,
}

/// An event as stored, with its sequence number.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StoredEvent {
    /// The log's number for the event: increasing, never reused (history and
    /// undo name events by it).
    pub seq: i64,
    /// The event itself (flattened beside `seq` in JSON).
    #[serde(flatten)]
    pub event: Event,
}

/// An `events` row (with its undo record, where one was read) as a
/// backend gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRow {
    /// The log's number (ignored when the row is appended: the database
    /// assigns it).
    pub seq: i64,
    /// When it happened, in Unix seconds.
    pub at: f64,
    /// The [`silt_core::ledger::events::EventKind`] in snake_case
    /// (`merged`, `forgotten`, ...).
    pub kind: String,
    /// The entry acted on first (the survivor, the parent, the winner).
    pub id: String,
    /// JSON array of ids.
    pub others: String,
    /// Why, in words (the engine's or the caller's).
    pub reason: String,
    /// JSON array of the entries as they were before the event.
    pub before: Option<String>,
}

impl EventRow {
    fn into_stored(self) -> Result<StoredEvent> {
        let seq = self.seq;
        let event = Event {
            at: self.at,
            kind: serde_json::from_value(serde_json::Value::String(self.kind))?,
            id: self.id,
            others: serde_json::from_str(&self.others)?,
            reason: self.reason,
            before: match self.before {
                Some(b) => serde_json::from_str(&b)
                    .with_context(|| format!("the undo record of event {seq} is unreadable"))?,
                None => Vec::new(),
            },
        };
        Ok(StoredEvent { seq, event })
    }
}

/// How a transaction begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Begin {
    /// Takes the write lock; the commit waits for the disk.
    Write,
    /// Takes the write lock for counters and caches only: the commit
    /// need not wait for the disk (see [`Store::begin_counters_write`]).
    Counters,
    /// One consistent state to read, holding no lock.
    Read,
}

/// A whole ledger, as [`Store::copy_to`] moves it between backends.
#[derive(Debug, Default)]
struct Dump {
    /// The marks that travel (the version, the deletion generation, how
    /// far sleep has read); the schema mark is the target's own, and the
    /// kept pair count is a cache that is counted again.
    meta: Vec<(String, String)>,
    /// (id, body, version), in stored order.
    entries: Vec<(String, String, i64)>,
    events: Vec<EventRow>,
    /// (model, text sha256, data).
    vectors: Vec<(String, Vec<u8>, Vec<u8>)>,
    /// (model, same_above, related_above, unrelated_below).
    models: Vec<(String, f64, f64, f64)>,
}

/// How many rows of each kind a ledger holds (a copy's check).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// Lessons, of any status.
    pub entries: i64,
    /// Events in the log.
    pub events: i64,
    /// Stored lesson vectors, over every model.
    pub vectors: i64,
}

/// The statements a backend runs; the rules are [`Store`]'s. Every
/// method but `begin` and `commit` runs inside the transaction under way
/// when there is one, on its own otherwise.
trait Backend: Send {
    fn begin(&mut self, how: Begin) -> Result<()>;
    fn commit(&mut self) -> Result<()>;
    /// Errors are dropped: a transaction that cannot be rolled back is
    /// rolled back by the database when the connection ends.
    fn rollback(&mut self);
    /// The values of `keys` in `meta` that are set, read as one state.
    fn meta(&self, keys: &[&str]) -> Result<Vec<(String, String)>>;
    fn put_meta(&mut self, key: &str, value: &str) -> Result<()>;
    fn delete_meta(&mut self, key: &str) -> Result<()>;
    /// The newest `created` of any entry.
    fn newest_created(&self) -> Result<Option<f64>>;
    /// Bodies of entries written after `version`, in stored order.
    fn bodies_since(&self, version: i64) -> Result<Vec<String>>;
    /// Ids and bodies of entries written after `version`, in stored
    /// order: read only to name rows that failed (reading ids beside
    /// every body cost a full read of 100k rows a fifth more).
    fn rows_since(&self, version: i64) -> Result<Vec<(String, String)>>;
    fn body(&self, id: &str) -> Result<Option<String>>;
    /// Inserts or replaces (id, body) rows at `version`.
    fn put_entries(&mut self, rows: &[(&str, String)], version: i64) -> Result<()>;
    /// Logs an event (its `seq` is ignored) with its undo record; its
    /// sequence number.
    fn append_event(&mut self, row: &EventRow) -> Result<i64>;
    /// Deletes entry `id`, the vectors of `texts` and every undo record
    /// that holds the entry.
    fn remove(&mut self, id: &str, texts: &[[u8; 32]]) -> Result<()>;
    /// Makes a forgotten entry's text unreadable in the files, as far as
    /// the backend can (after the commit).
    fn scrub(&mut self);
    /// The log, newest first, only events naming `id` when given; no undo
    /// records.
    fn events(&self, id: Option<&str>, limit: usize) -> Result<Vec<EventRow>>;
    fn event(&self, seq: i64) -> Result<Option<EventRow>>;
    fn touched_after(&self, seq: i64, id: &str) -> Result<bool>;
    fn daily_events(&self, days: usize) -> Result<Vec<(i64, String, i64, i64)>>;
    fn event_counts(&self) -> Result<Vec<(String, i64)>>;
    fn save_vectors(&mut self, pending: &vector_rows::Pending) -> Result<()>;
    fn counts(&self) -> Result<Counts>;
    /// Everything but `meta` (read inside a read transaction).
    fn dump(&self) -> Result<Dump>;
    /// Writes `dump` into an empty ledger, keeping event numbers.
    fn load(&mut self, dump: &Dump) -> Result<()>;
}

/// Where a ledger lives.
pub enum Location<'a> {
    /// A SQLite file at this path.
    File(&'a Path),
    /// A PostgreSQL database at this `postgres://` URL.
    Postgres(&'a str),
}

impl<'a> Location<'a> {
    /// A `postgres://` (or `postgresql://`) URL names a database; anything
    /// else is a file.
    pub fn of(path: &'a Path) -> Location<'a> {
        match path.to_str() {
            Some(s) if s.starts_with("postgres://") || s.starts_with("postgresql://") => {
                Location::Postgres(s)
            }
            _ => Location::File(path),
        }
    }
}

/// The ledger's name for messages and reports: a file's path, or a
/// database URL without its password.
pub fn describe(path: &Path) -> String {
    match Location::of(path) {
        Location::File(p) => p.display().to_string(),
        Location::Postgres(url) => postgres::redact(url),
    }
}

/// An open ledger.
pub struct Store {
    db: Box<dyn Backend>,
    in_tx: bool,
    /// The version and the deletion generation, read once per
    /// transaction: under the write lock (or in a read transaction's one
    /// state) only this process changes them. Each read was a statement,
    /// and on PostgreSQL a round trip; an operation asked for them four
    /// or five times.
    marks: std::sync::Mutex<Option<(i64, i64)>>,
    /// The log numbers of the events the last commit wrote, in order.
    last_event_seqs: Vec<i64>,
}

impl Store {
    /// `$SILT_LEDGER_URL`; else `$SILT_LEDGER_PATH`; else `[ledger] url`
    /// from silt.toml (`config_url`); else, when the seed's
    /// `$SEDIMENT_LEDGER_PATH` names a Sediment JSON ledger, a silt ledger
    /// beside it (`ledger.json` → `ledger.silt.db`, imported on first
    /// open); else `<data dir>/silt/ledger.db`, making silt's own data
    /// folder if need be (a folder named by the user must exist: see
    /// [`Store::open`]). Returns the ledger and the Sediment file to import
    /// if the ledger is new.
    pub fn default_path(config_url: Option<&str>) -> (PathBuf, Option<PathBuf>) {
        use silt_config::env;
        if let Some(url) = env::path("SILT_LEDGER_URL") {
            return (url, None);
        }
        if let Some(p) = env::path("SILT_LEDGER_PATH") {
            return (p, None);
        }
        if let Some(url) = config_url {
            return (PathBuf::from(url), None);
        }
        if let Some(json) = env::path("SEDIMENT_LEDGER_PATH") {
            return (json.with_extension("silt.db"), Some(json));
        }
        let dir = dirs::data_dir()
            .unwrap_or_else(std::env::temp_dir)
            .join("silt");
        // silt's own folder: private, like the lessons in it
        if let Err(e) = silt_files::private::folder(&dir) {
            // Store::open names the missing folder and the fix
            tracing::warn!("cannot create {}: {e}", dir.display());
        }
        (dir.join("ledger.db"), None)
    }

    /// Opens (or creates) the ledger at `path` (a file, or a database
    /// URL), refusing anything that is not a healthy silt ledger without
    /// writing to it. A file's folder must exist: a mistyped path is an
    /// error, not a new ledger somewhere. A database that cannot be
    /// reached is an error naming the host, never a local file instead.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some((scheme, _)) = path.to_str().and_then(|p| p.split_once("://"))
            && matches!(Location::of(path), Location::File(_))
        {
            bail!(
                "a ledger is a file path or a postgres:// URL; silt cannot keep one at a \
                 {scheme}:// URL"
            );
        }
        let db: Box<dyn Backend> = match Location::of(path) {
            Location::File(p) => Box::new(sqlite::SqliteDb::open(p)?),
            Location::Postgres(url) => Box::new(postgres::PgDb::open(url)?),
        };
        Ok(Store {
            db,
            in_tx: false,
            marks: std::sync::Mutex::new(None),
            last_event_seqs: Vec::new(),
        })
    }

    /// Whether a ledger exists at `path` (a database is asked for its
    /// rows only by [`Store::open`]: a URL always counts as existing).
    pub fn exists(path: &Path) -> bool {
        match Location::of(path) {
            Location::File(p) => p.exists(),
            Location::Postgres(_) => true,
        }
    }

    fn meta_value(&self, key: &str) -> Result<Option<String>> {
        Ok(self.db.meta(&[key])?.into_iter().next().map(|(_, v)| v))
    }

    /// Writes vectors a judge gave (inside the transaction under way).
    pub fn save_vectors(&mut self, pending: &vector_rows::Pending) -> Result<()> {
        if pending.is_empty() {
            return Ok(());
        }
        self.db
            .save_vectors(pending)
            .context("saving the judge's vectors")
    }

    /// Bumped whenever an entry is deleted: a warm engine holding rows
    /// that no longer exist must start over (a sync only adds and updates).
    /// 0 on a ledger that never deleted one.
    pub fn generation(&self) -> Result<i64> {
        Ok(self.marks()?.1)
    }

    /// (version, generation): kept for the transaction under way, read
    /// afresh outside one.
    fn marks(&self) -> Result<(i64, i64)> {
        if self.in_tx
            && let Some(m) = *self.marks.lock().expect("marks lock")
        {
            return Ok(m);
        }
        let (mut version, mut generation) = (None, 0);
        for (key, value) in self.db.meta(&["version", "generation"])? {
            if key == "version" {
                version = Some(value.parse()?);
            } else {
                generation = value.parse()?;
            }
        }
        let marks = (
            version.context("the ledger has no version mark")?,
            generation,
        );
        if self.in_tx {
            *self.marks.lock().expect("marks lock") = Some(marks);
        }
        Ok(marks)
    }

    /// Marks the transaction under way as ended.
    fn ended(&mut self) {
        self.in_tx = false;
        *self.marks.lock().expect("marks lock") = None;
    }

    /// Deletes entry `id` for good and logs why; the event keeps only the
    /// id (the point of forgetting is that the text is gone). Returns the
    /// entry as it was, or None when there is no such entry.
    pub fn forget(&mut self, id: &str, reason: &str, now: f64) -> Result<Option<Entry>> {
        self.begin_write()?;
        let outcome = (|| -> Result<Option<Entry>> {
            // read raw: an entry too broken to parse must still be removable
            let Some(body) = self.db.body(id)? else {
                return Ok(None);
            };
            let entry: Option<Entry> = serde_json::from_str(&body).ok();
            // its texts' vectors say something of the texts too
            let texts: Vec<[u8; 32]> = entry
                .iter()
                .flat_map(|e| [&e.when, &e.prefer])
                .map(|t| vector_rows::text_key(t))
                .collect();
            let active = entry
                .as_ref()
                .is_none_or(|e| e.status == silt_core::ledger::Status::Active);
            self.db.remove(id, &texts)?;
            let generation = self.generation()? + 1;
            self.db.put_meta("generation", &generation.to_string())?;
            if let Some(m) = self.marks.lock().expect("marks lock").as_mut() {
                m.1 = generation;
            }
            let event = Event::new(
                now,
                silt_core::ledger::events::EventKind::Forgotten,
                id,
                if active { vec![id.to_string()] } else { vec![] },
                reason,
            );
            self.commit(&[], &[event])?;
            Ok(entry)
        })();
        if outcome.is_err() {
            self.rollback();
            return outcome;
        }
        self.db.scrub();
        outcome
    }

    /// The newest `created` among the lessons the last sleep pass read
    /// (0 before any pass): auto-sleep's pressure counts only the pairs
    /// holding a lesson captured after it, the ones no pass has judged.
    pub fn slept_through(&self) -> Result<f64> {
        let v = self.meta_value("slept_through")?;
        Ok(v.map(|v| v.parse()).transpose()?.unwrap_or(0.0))
    }

    /// Records, inside the open write, that a sleep pass read every lesson
    /// created up to `created` (None: up to the newest stored now).
    pub fn mark_slept_through(&mut self, created: Option<f64>) -> Result<()> {
        anyhow::ensure!(self.in_tx, "mark_slept_through without begin_write");
        let created = match created {
            Some(c) => c,
            None => self.db.newest_created()?.unwrap_or(0.0),
        };
        self.db.put_meta("slept_through", &created.to_string())
    }

    /// The unslept pair count as the last commit left it, if that commit
    /// kept it (one that did not leaves it stale: the stamp is its
    /// version) and no pass has slept since it was counted. One
    /// statement, so the stamp, the version and the sleep are read as one
    /// state. A value that does not parse is stale, not an error: it is a
    /// cache of what the rows say.
    pub fn pressure(&self) -> Result<Option<Pressure>> {
        let (mut version, mut stamped, mut since) = (None, None, 0.0);
        for (key, value) in self.db.meta(&["version", "pressure", "slept_through"])? {
            match key.as_str() {
                "version" => version = value.parse::<i64>().ok(),
                "pressure" => stamped = serde_json::from_str::<Stamped>(&value).ok(),
                _ => since = value.parse().unwrap_or(f64::NAN),
            }
        }
        Ok(stamped
            .filter(|s| Some(s.version) == version && s.pressure.since == since)
            .map(|s| s.pressure))
    }

    /// Keeps `pressure` as the count after the commit about to be made
    /// under the open write.
    pub fn keep_pressure(&mut self, pressure: &Pressure) -> Result<()> {
        anyhow::ensure!(self.in_tx, "keep_pressure without begin_write");
        let version = self.version()? + 1;
        self.put_pressure(pressure, version)
    }

    /// Records `pressure`, counted on the rows as of `version`, unless a
    /// commit has landed since (a short write of its own; false if not
    /// recorded).
    pub fn record_pressure(&mut self, pressure: &Pressure, version: i64) -> Result<bool> {
        // a count is recounted from the rows if lost
        self.begin_counters_write()?;
        let out = self.version().and_then(|now| {
            if now == version {
                self.put_pressure(pressure, version).map(|()| true)
            } else {
                Ok(false)
            }
        });
        match out {
            Ok(true) => {
                let done = self.db.commit();
                self.ended();
                done.map(|()| true)
            }
            other => {
                self.rollback();
                other
            }
        }
    }

    fn put_pressure(&mut self, pressure: &Pressure, version: i64) -> Result<()> {
        let value = serde_json::to_string(&Stamped {
            pressure: pressure.clone(),
            version,
        })?;
        self.db.put_meta("pressure", &value)
    }

    /// The change counter: bumped by every committed write.
    pub fn version(&self) -> Result<i64> {
        Ok(self.marks()?.0)
    }

    fn begin(&mut self, how: Begin) -> Result<()> {
        if self.in_tx {
            // a transaction left open by an operation that went away
            self.rollback();
        }
        self.db.begin(how)?;
        *self.marks.lock().expect("marks lock") = None;
        self.in_tx = true;
        Ok(())
    }

    /// Takes the write lock (waiting for other writers).
    pub fn begin_write(&mut self) -> Result<()> {
        self.begin(Begin::Write)
    }

    /// Takes the write lock for a write of counters and caches only (a
    /// recall's hit counts and times, lesson vectors the judge just gave,
    /// the kept pair count; a context's vector is never written):
    /// committed without waiting for the disk. A killed process loses
    /// nothing; a power cut or an OS crash may lose the last such writes,
    /// never a lesson or a verdict, and the next ordinary commit, here or
    /// in another process, makes them durable with it. The fsync was most
    /// of a recall's time.
    pub fn begin_counters_write(&mut self) -> Result<()> {
        self.begin(Begin::Counters)
    }

    /// Starts a read transaction: what is read until [`Store::end_read`]
    /// is one consistent state, and no writer waits for it.
    pub fn begin_read(&mut self) -> Result<()> {
        self.begin(Begin::Read)
    }

    /// Ends a read transaction.
    pub fn end_read(&mut self) {
        self.rollback();
    }

    /// Entries written after `version`, in the order they were first
    /// stored. A row that does not parse or is out of range (edited by
    /// hand, damaged) refuses the read, naming every such row: the ledger
    /// is not worked on with it, nor written back without it.
    pub fn changed_since(&self, version: i64) -> Result<Vec<Entry>> {
        let read = |bodies: Vec<String>| -> std::result::Result<Vec<Entry>, ()> {
            bodies.iter().map(|b| read_row(b).map_err(|_| ())).collect()
        };
        if let Ok(entries) = read(self.db.bodies_since(version)?) {
            return Ok(entries);
        }
        // read again with ids, so that each bad row is named from the
        // statement that read it (outside a transaction another writer
        // may have committed since)
        let mut entries = Vec::new();
        let mut bad = Vec::new();
        for (id, body) in self.db.rows_since(version)? {
            match read_row(&body) {
                Ok(e) => entries.push(e),
                Err(why) => bad.push((id, why)),
            }
        }
        if !bad.is_empty() {
            bail!(refusal(&bad));
        }
        Ok(entries)
    }

    /// Writes changed entries and events under the open write lock, bumps
    /// the version and commits. Returns the new version.
    pub fn commit(&mut self, entries: &[Entry], events: &[Event]) -> Result<i64> {
        self.last_event_seqs.clear();
        self.write(entries, events)?;
        self.seal()
    }

    /// Writes changed entries and events under the open write lock, at
    /// the version the next [`Store::seal`] commits; their event numbers
    /// join [`Store::last_event_seqs`]. Several operations' writes may go
    /// into one commit (group commit), each seeing the ones before.
    pub fn write(&mut self, entries: &[Entry], events: &[Event]) -> Result<()> {
        anyhow::ensure!(self.in_tx, "write without begin_write");
        let version = self.version()? + 1;
        let rows = entries
            .iter()
            .map(|e| {
                // what every read checks: a row written past it would
                // refuse every later call on the ledger, not this one
                silt_core::ledger::limits::store_row(e).map_err(|why| {
                    anyhow::anyhow!(
                        "lesson {} was not stored: {why}",
                        serde_json::Value::from(e.id.as_str())
                    )
                })?;
                Ok((e.id.as_str(), serde_json::to_string(e)?))
            })
            .collect::<Result<Vec<_>>>()?;
        self.db.put_entries(&rows, version)?;
        for ev in events {
            let kind = serde_json::to_value(ev.kind)?;
            let row = EventRow {
                seq: 0,
                at: ev.at,
                kind: kind.as_str().unwrap_or_default().to_string(),
                id: ev.id.clone(),
                others: serde_json::to_string(&ev.others)?,
                reason: ev.reason.clone(),
                before: if ev.before.is_empty() {
                    None
                } else {
                    Some(serde_json::to_string(&ev.before)?)
                },
            };
            let seq = self.db.append_event(&row)?;
            self.last_event_seqs.push(seq);
        }
        Ok(())
    }

    /// Bumps the version over what was written under the open write lock
    /// and commits. Returns the new version.
    pub fn seal(&mut self) -> Result<i64> {
        anyhow::ensure!(self.in_tx, "seal without begin_write");
        let version = self.version()? + 1;
        self.db.put_meta("version", &version.to_string())?;
        let done = self.db.commit();
        if done.is_err() {
            self.rollback();
        }
        self.ended();
        done.map(|()| version)
    }

    /// Starts a new list of event numbers (an operation about to write).
    pub fn clear_event_seqs(&mut self) {
        self.last_event_seqs.clear();
    }

    /// The log numbers of the events the last commit wrote, in order.
    pub fn last_event_seqs(&self) -> &[i64] {
        &self.last_event_seqs
    }

    /// Abandons the open transaction, if any.
    pub fn rollback(&mut self) {
        if self.in_tx {
            self.db.rollback();
            self.ended();
        }
    }

    /// Adds entries read from a Sediment ledger in one transaction; refuses
    /// (changing nothing) when an id is already stored or given twice.
    pub fn import(&mut self, entries: &[Entry], origin: &str, now: f64) -> Result<usize> {
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = entries.iter().find(|e| !seen.insert(e.id.as_str())) {
            bail!("{origin} holds id '{}' twice; nothing was imported", dup.id);
        }
        self.begin_write()?;
        let outcome = (|| -> Result<()> {
            for e in entries {
                if self.contains(&e.id)? {
                    bail!(
                        "id '{}' from {origin} is already in the ledger; nothing was imported",
                        e.id
                    );
                }
            }
            let events: Vec<Event> = entries
                .iter()
                .map(|e| {
                    Event::new(
                        now,
                        silt_core::ledger::events::EventKind::Captured,
                        &e.id,
                        vec![],
                        format!("imported from {origin}"),
                    )
                })
                .collect();
            // imported lessons were never judged against these, whatever
            // their age: until the next pass, every pair counts toward
            // auto-sleep
            self.db.delete_meta("slept_through")?;
            self.commit(entries, &events)?;
            Ok(())
        })();
        if let Err(e) = outcome {
            self.rollback();
            return Err(e);
        }
        Ok(entries.len())
    }

    /// Whether an entry with `id` exists.
    pub fn contains(&self, id: &str) -> Result<bool> {
        Ok(self.db.body(id)?.is_some())
    }

    /// Every entry, in stored order.
    pub fn all(&self) -> Result<Vec<Entry>> {
        self.changed_since(i64::MIN)
    }

    /// The event log, oldest first; only events naming `id` when given.
    /// The entries an event recorded for undo are left out (see [`Store::event`]).
    pub fn history(&self, id: Option<&str>, limit: usize) -> Result<Vec<StoredEvent>> {
        let mut out = self
            .db
            .events(id, limit)?
            .into_iter()
            .map(EventRow::into_stored)
            .collect::<Result<Vec<_>>>()?;
        out.reverse();
        Ok(out)
    }

    /// Event `seq` with the entries it recorded as they were before it.
    pub fn event(&self, seq: i64) -> Result<Option<StoredEvent>> {
        self.db.event(seq)?.map(EventRow::into_stored).transpose()
    }

    /// Whether an event after `seq` names entry `id`.
    pub fn touched_after(&self, seq: i64, id: &str) -> Result<bool> {
        self.db.touched_after(seq, id)
    }

    /// The stored entry `id`, if any.
    pub fn get(&self, id: &str) -> Result<Option<Entry>> {
        self.db
            .body(id)?
            .map(|b| read_row(&b).map_err(|why| anyhow::anyhow!(refusal(&[(id.into(), why)]))))
            .transpose()
    }

    /// Per UTC day (days since the epoch), per kind: events and the
    /// entries they name besides the first, oldest day first, over the
    /// last `days` days that saw any event.
    pub fn daily_events(&self, days: usize) -> Result<Vec<(i64, String, i64, i64)>> {
        self.db.daily_events(days)
    }

    /// Counts of events by kind.
    pub fn event_counts(&self) -> Result<Vec<(String, i64)>> {
        self.db.event_counts()
    }

    /// How many entries, events and vectors the ledger holds.
    pub fn counts(&self) -> Result<Counts> {
        self.db.counts()
    }

    /// Copies this whole ledger (entries, the event log with its undo
    /// records, the marks, the judge's vectors) into `target`, which must
    /// be empty: one read here, one transaction there, so a copy that
    /// fails leaves the target as it was. Returns the counts, checked
    /// against the target's after the commit.
    pub fn copy_to(&mut self, target: &mut Store) -> Result<Counts> {
        self.begin_read()?;
        let read = (|| -> Result<(Dump, Counts)> {
            let mut dump = self.db.dump()?;
            dump.meta = self.db.meta(&["version", "generation", "slept_through"])?;
            Ok((dump, self.db.counts()?))
        })();
        self.end_read();
        let (dump, counts) = read?;
        target.begin_write()?;
        let wrote = (|| -> Result<()> {
            let there = target.db.counts()?;
            if there.entries > 0 || there.events > 0 {
                bail!(
                    "the target ledger is not empty ({} entries, {} events); copy into a new one",
                    there.entries,
                    there.events
                );
            }
            target.db.load(&dump)?;
            for (key, value) in &dump.meta {
                target.db.put_meta(key, value)?;
            }
            let done = target.db.commit();
            target.ended();
            done
        })();
        if let Err(e) = wrote {
            target.rollback();
            return Err(e);
        }
        let landed = target.counts()?;
        if landed != counts {
            bail!("the copy does not match: {counts:?} read, {landed:?} in the target");
        }
        Ok(counts)
    }
}

/// How many bad rows a refusal lists before counting the rest.
const LISTED: usize = 20;

/// An entry from its stored body, checked as the engine's own writes
/// always are ([`silt_core::ledger::limits::store_row`]).
fn read_row(body: &str) -> std::result::Result<Entry, String> {
    let e: Entry =
        serde_json::from_str(body).map_err(|e| format!("its stored body does not parse ({e})"))?;
    silt_core::ledger::limits::store_row(&e)?;
    Ok(e)
}

/// The error for rows [`read_row`] refused, with what to do about them.
fn refusal(bad: &[(String, String)]) -> String {
    use silt_core::ledger::limits::MAX_ROW_ID_BYTES;
    // each id whole and quoted, as `forget` needs it; one too long for
    // `forget` (a damaged key) is cut, and only a backup removes it
    let shown: Vec<String> = bad
        .iter()
        .take(LISTED)
        .map(|(id, why)| {
            if id.len() <= MAX_ROW_ID_BYTES {
                return format!("  {}: {why}", serde_json::Value::from(id.as_str()));
            }
            let start: String = id.chars().take(40).collect();
            format!(
                "  {}… ({} bytes, too long to forget: restore a backup): {why}",
                serde_json::Value::from(start),
                id.len()
            )
        })
        .collect();
    let more = match bad.len().saturating_sub(LISTED) {
        0 => String::new(),
        n => format!("\n  … and {n} more, listed once these are gone"),
    };
    format!(
        "the ledger holds {} lesson{} damaged or edited outside silt, and no call works on \
         its lessons until they are gone; nothing was changed. Remove each with `silt ledger \
         forget ID` or the sediment_forget tool (its text is lost), or restore the ledger from \
         a backup:\n{}{more}",
        bad.len(),
        if bad.len() == 1 { "" } else { "s" },
        shown.join("\n"),
    )
}

impl Drop for Store {
    fn drop(&mut self) {
        self.rollback();
    }
}

/// A connection of the store's own for reading vectors (see the module's
/// notes): SQLite's readers never wait for a writer, PostgreSQL's neither.
pub enum VectorReader {
    /// A read-only connection to the ledger file.
    Sqlite(rusqlite::Connection),
    /// A connection of its own to the ledger database.
    Postgres(PgLink),
}

impl VectorReader {
    /// Connects to the ledger at `path` (a file, read-only, or a database
    /// URL).
    pub fn open(path: &Path) -> anyhow::Result<VectorReader> {
        Ok(match Location::of(path) {
            Location::File(p) => {
                let c = rusqlite::Connection::open_with_flags(
                    p,
                    rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
                        | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )?;
                c.busy_timeout(std::time::Duration::from_secs(10))?;
                VectorReader::Sqlite(c)
            }
            Location::Postgres(url) => VectorReader::Postgres(PgLink::connect(url)?),
        })
    }

    /// `model`'s calibration and those of `keys`
    /// ([`vector_rows::text_key`]s) it has vectors for; a key with none is
    /// absent from the map.
    pub fn read(&self, model: &str, keys: Vec<Vec<u8>>) -> anyhow::Result<vector_rows::Stored> {
        match self {
            VectorReader::Postgres(link) => link.vectors(model, keys),
            VectorReader::Sqlite(c) => {
                let calibration = c
                    .query_row(
                        "SELECT same_above, related_above, unrelated_below FROM vector_models WHERE model = ?1",
                        rusqlite::params![model],
                        |r| {
                            Ok(vector_rows::Calibration {
                                same_above: r.get(0)?,
                                related_above: r.get(1)?,
                                unrelated_below: r.get(2)?,
                            })
                        },
                    )
                    .optional()?;
                let mut q = c.prepare_cached(
                    "SELECT data FROM vectors WHERE model = ?1 AND text_sha256 = ?2",
                )?;
                let mut found = std::collections::HashMap::new();
                for key in keys {
                    let data: Option<Vec<u8>> = q
                        .query_row(rusqlite::params![model, &key[..]], |r| r.get(0))
                        .optional()?;
                    if let Some(d) = data {
                        found.insert(key, d);
                    }
                }
                Ok((calibration, found))
            }
        }
    }
}

/// Checks that the event log finds an entry by its exact id only: an id
/// holding `_` or `%` (wildcards to SQL's LIKE) or a prefix of another id
/// must not pick up that other entry's events. Run on each backend (the
/// SQLite unit tests, the PostgreSQL end-to-end tests); panics on a miss.
#[doc(hidden)]
pub fn check_events_match_ids_exactly(store: &mut Store) {
    use silt_core::ledger::events::{Event, EventKind};
    let at = 1.0e9;
    store.begin_write().unwrap();
    store
        .commit(
            &[],
            &[
                Event::new(at, EventKind::Merged, "keep", vec!["abc".into()], "x"),
                Event::new(at, EventKind::Merged, "keep2", vec!["a%c-long".into()], "y"),
            ],
        )
        .unwrap();
    let kinds = |id| store.history(Some(id), 10).unwrap().len();
    assert_eq!(kinds("abc"), 1, "the id itself");
    assert_eq!(kinds("a_c"), 0, "`_` is not a wildcard");
    assert_eq!(kinds("a%c"), 0, "`%` is not a wildcard");
    assert_eq!(kinds("a%c-long"), 1);
    assert_eq!(kinds("ab"), 0, "a prefix is not the id");
    assert!(store.touched_after(0, "abc").unwrap());
    assert!(!store.touched_after(0, "a_c").unwrap());
    assert!(!store.touched_after(0, "a%").unwrap());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept count is read back only while nothing else has committed,
    /// and a recount is not recorded over a commit that overtook it.
    #[test]
    fn a_kept_count_goes_stale_with_any_other_commit() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("ledger.db")).unwrap();
        let p = Pressure {
            method: "lexical@0.18".into(),
            since: 0.0,
            pairs: 3,
            active: 4,
        };
        let version = store.version().unwrap();
        assert!(store.record_pressure(&p, version).unwrap());
        assert_eq!(store.pressure().unwrap(), Some(p.clone()));
        store.begin_write().unwrap();
        store
            .keep_pressure(&Pressure {
                pairs: 5,
                ..p.clone()
            })
            .unwrap();
        store.commit(&[], &[]).unwrap();
        assert_eq!(store.pressure().unwrap().unwrap().pairs, 5);
        // a commit that does not keep it
        store.begin_write().unwrap();
        store.commit(&[], &[]).unwrap();
        assert_eq!(store.pressure().unwrap(), None);
        // counted at a version another commit has passed
        assert!(!store.record_pressure(&p, version).unwrap());
        assert_eq!(store.pressure().unwrap(), None);
        // a pass slept since the count
        let now = store.version().unwrap();
        assert!(store.record_pressure(&p, now).unwrap());
        store.begin_write().unwrap();
        store.mark_slept_through(Some(5.0)).unwrap();
        store.keep_pressure(&p).unwrap();
        store.commit(&[], &[]).unwrap();
        assert_eq!(store.pressure().unwrap(), None);
    }

    #[test]
    fn events_match_ids_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("ledger.db")).unwrap();
        check_events_match_ids_exactly(&mut store);
    }

    /// What a read would refuse is never written: the call that made it
    /// fails, not every call after it.
    #[test]
    fn a_row_a_read_would_refuse_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("ledger.db")).unwrap();
        let good = Entry::new("a".into(), "w".into(), "p".into(), 0.5, 0, 1e9);
        let mut bad = good.clone();
        bad.id = "b".into();
        bad.confidence = -0.5;
        store.begin_write().unwrap();
        let err = store.commit(&[good.clone(), bad], &[]).unwrap_err();
        assert!(err.to_string().contains("\"b\" was not stored"), "{err}");
        store.rollback();
        assert!(store.all().unwrap().is_empty());
        store.begin_write().unwrap();
        store.commit(std::slice::from_ref(&good), &[]).unwrap();
        assert_eq!(store.all().unwrap(), [good]);
    }

    /// A refusal names each row as `forget` takes it, and one whose id
    /// is too long to forget is cut and sent to a backup.
    #[test]
    fn a_refusal_names_rows_as_forget_takes_them() {
        let long = "k".repeat(silt_core::ledger::limits::MAX_ROW_ID_BYTES + 1);
        let text = refusal(&[
            ("a\"b".into(), "why".into()),
            (long.clone(), "its id takes too many bytes".into()),
        ]);
        assert!(text.contains(r#"  "a\"b": why"#), "{text}");
        assert!(!text.contains(&long));
        assert!(
            text.contains("too long to forget: restore a backup"),
            "{text}"
        );
        assert!(text.starts_with("the ledger holds 2 lessons"), "{text}");
    }
}
