//! The ledger's store: one SQLite file (WAL, one transaction per
//! operation). Several processes may share it: every write runs under
//! `BEGIN IMMEDIATE`, after syncing the rows other writers committed, so no
//! update is lost. A file that is not a healthy silt ledger is refused and
//! never written to.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use silt_core::ledger::Entry;
use silt_core::ledger::events::Event;

/// Marks a database as a silt ledger, with its schema version.
const SCHEMA: &str = "silt-ledger/1";

/// An open ledger file.
pub struct Store {
    conn: Connection,
    in_tx: bool,
    /// The connection commits without waiting for the disk (see
    /// [`Store::begin_counters_write`]).
    relaxed: bool,
    /// The log numbers of the events the last commit wrote, in order.
    last_event_seqs: Vec<i64>,
}

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
    pub seq: i64,
    #[serde(flatten)]
    pub event: Event,
}

/// An `events` row (with its undo record, if selected) as SQLite gives it.
struct EventRow {
    seq: i64,
    at: f64,
    kind: String,
    id: String,
    others: String,
    reason: String,
    before: Option<String>,
}

impl EventRow {
    /// Columns: seq, at, kind, id, others, reason, before.
    fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<EventRow> {
        Ok(EventRow {
            seq: r.get(0)?,
            at: r.get(1)?,
            kind: r.get(2)?,
            id: r.get(3)?,
            others: r.get(4)?,
            reason: r.get(5)?,
            before: r.get(6)?,
        })
    }

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

impl Store {
    /// `$SILT_LEDGER_PATH`; else, when the seed's `$SEDIMENT_LEDGER_PATH`
    /// names a Sediment JSON ledger, a silt ledger beside it
    /// (`ledger.json` → `ledger.silt.db`, imported on first open); else
    /// `<data dir>/silt/ledger.db`, making silt's own data folder if need
    /// be (a folder named by the user must exist: see [`Store::open`]).
    /// Returns the path and the Sediment file to import if the ledger is
    /// new.
    pub fn default_path() -> (PathBuf, Option<PathBuf>) {
        if let Some(p) = std::env::var_os("SILT_LEDGER_PATH") {
            return (PathBuf::from(p), None);
        }
        if let Some(p) = std::env::var_os("SEDIMENT_LEDGER_PATH") {
            let json = PathBuf::from(p);
            return (json.with_extension("silt.db"), Some(json));
        }
        let dir = dirs::data_dir()
            .unwrap_or_else(std::env::temp_dir)
            .join("silt");
        if let Err(e) = std::fs::create_dir_all(&dir) {
            // Store::open names the missing folder and the fix
            tracing::warn!("cannot create {}: {e}", dir.display());
        }
        (dir.join("ledger.db"), None)
    }

    /// Opens (or creates) the ledger at `path`, refusing anything that is
    /// not a healthy silt ledger without writing to it. The folder must
    /// exist: a mistyped path is an error, not a new ledger somewhere.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(problem) = access_problem(path) {
            bail!("{problem}");
        }
        if !path.exists() {
            create(path)?;
        }
        check_existing(path)?;
        let conn =
            Connection::open(path).with_context(|| format!("opening ledger {}", path.display()))?;
        conn.busy_timeout(std::time::Duration::from_secs(60))?;
        // FULL: a committed operation survives a crash or power loss.
        conn.pragma_update(None, "synchronous", "FULL")?;
        // freed space is zeroed, so a forgotten lesson's text (and the old
        // copies every update leaves behind) does not linger in the file
        conn.pragma_update(None, "secure_delete", true)?;
        // a ledger made by an older silt may lack a table added since; one
        // with every table is opened without a write, so a reader never
        // queues behind a long sleep for the write lock
        if !has_every_table(&conn)? {
            conn.execute_batch(&schema_batch())?;
        }
        Ok(Store {
            conn,
            in_tx: false,
            relaxed: false,
            last_event_seqs: Vec::new(),
        })
    }

    /// Writes vectors a judge gave (inside the transaction under way).
    pub fn save_vectors(&mut self, pending: &super::vectors::Pending) -> Result<()> {
        if pending.is_empty() {
            return Ok(());
        }
        super::vectors::save(&self.conn, pending).context("saving the judge's vectors")
    }

    /// Bumped whenever an entry is deleted: a warm engine holding rows
    /// that no longer exist must start over (a sync only adds and updates).
    /// 0 on a ledger that never deleted one.
    pub fn generation(&self) -> Result<i64> {
        let v: Option<String> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'generation'", [], |r| {
                r.get(0)
            })
            .optional()?;
        Ok(v.map(|v| v.parse()).transpose()?.unwrap_or(0))
    }

    /// Deletes entry `id` for good and logs why; the event keeps only the
    /// id (the point of forgetting is that the text is gone). Returns the
    /// entry as it was, or None when there is no such entry.
    pub fn forget(&mut self, id: &str, reason: &str, now: f64) -> Result<Option<Entry>> {
        self.begin_write()?;
        let outcome = (|| -> Result<Option<Entry>> {
            // read raw: an entry too broken to parse must still be removable
            let body: Option<String> = self
                .conn
                .query_row("SELECT body FROM entries WHERE id = ?1", [id], |r| r.get(0))
                .optional()?;
            let Some(body) = body else {
                return Ok(None);
            };
            let entry: Option<Entry> = serde_json::from_str(&body).ok();
            // its texts' vectors say something of the texts too
            if let Some(e) = &entry {
                for text in [&e.when, &e.prefer] {
                    self.conn.execute(
                        "DELETE FROM vectors WHERE text_sha256 = ?1",
                        [&super::vectors::text_key(text)[..]],
                    )?;
                }
            }
            let active = entry
                .as_ref()
                .is_none_or(|e| e.status == silt_core::ledger::Status::Active);
            self.conn
                .execute("DELETE FROM entries WHERE id = ?1", [id])?;
            // an undo record holding it would bring the text back
            self.conn.execute(
                "DELETE FROM undo WHERE EXISTS (
                     SELECT 1 FROM json_each(undo.before)
                     WHERE json_extract(value, '$.id') = ?1)",
                [id],
            )?;
            self.conn.execute(
                "INSERT INTO meta VALUES ('generation', '1')
                 ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
                [],
            )?;
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
        // the log holds the older page images with the text: fold it into
        // the (zeroed) database and empty it. A reader mid-transaction in
        // another process can keep it from finishing; the next checkpoint
        // then does it.
        if let Err(e) = self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        {
            tracing::warn!("checkpoint after forget: {e}");
        }
        outcome
    }

    /// The newest `created` among the lessons the last sleep pass read
    /// (0 before any pass): auto-sleep's pressure counts only the pairs
    /// holding a lesson captured after it, the ones no pass has judged.
    pub fn slept_through(&self) -> Result<f64> {
        let v: Option<String> = self
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'slept_through'",
                [],
                |r| r.get(0),
            )
            .optional()?;
        Ok(v.map(|v| v.parse()).transpose()?.unwrap_or(0.0))
    }

    /// Records, inside the open write, that a sleep pass read every lesson
    /// created up to `created` (None: up to the newest stored now).
    pub fn mark_slept_through(&mut self, created: Option<f64>) -> Result<()> {
        anyhow::ensure!(self.in_tx, "mark_slept_through without begin_write");
        let created = match created {
            Some(c) => c,
            None => self
                .conn
                .query_row(
                    "SELECT max(json_extract(body, '$.created')) FROM entries",
                    [],
                    |r| r.get::<_, Option<f64>>(0),
                )?
                .unwrap_or(0.0),
        };
        self.conn.execute(
            "INSERT INTO meta VALUES ('slept_through', ?1)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [created.to_string()],
        )?;
        Ok(())
    }

    /// The unslept pair count as the last commit left it, if that commit
    /// kept it (one that did not leaves it stale: the stamp is its
    /// version) and no pass has slept since it was counted. One
    /// statement, so the stamp, the version and the sleep are read as one
    /// state. A value that does not parse is stale, not an error: it is a
    /// cache of what the rows say.
    pub fn pressure(&self) -> Result<Option<Pressure>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT key, value FROM meta WHERE key IN ('version', 'pressure', 'slept_through')",
        )?;
        let (mut version, mut stamped, mut since) = (None, None, 0.0);
        for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))? {
            let (key, value) = row?;
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
                self.conn.execute_batch("COMMIT")?;
                self.in_tx = false;
                Ok(true)
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
        self.conn.execute(
            "INSERT INTO meta VALUES ('pressure', ?1)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [value],
        )?;
        Ok(())
    }

    /// The change counter: bumped by every committed write.
    pub fn version(&self) -> Result<i64> {
        let v: String =
            self.conn
                .query_row("SELECT value FROM meta WHERE key = 'version'", [], |r| {
                    r.get(0)
                })?;
        Ok(v.parse()?)
    }

    /// Takes the write lock (waiting for other writers).
    pub fn begin_write(&mut self) -> Result<()> {
        self.set_relaxed(false)?;
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        self.in_tx = true;
        Ok(())
    }

    /// Takes the write lock for a write of counters and caches only (a
    /// recall's hit counts and times, lesson vectors the judge just gave,
    /// the kept pair count; a context's vector is never written): committed
    /// to the WAL without waiting for the disk (`synchronous = NORMAL`). A
    /// killed process loses nothing (the OS holds the WAL's pages); a
    /// power cut or an OS crash may lose the last such writes, never a
    /// lesson or a verdict, and the next ordinary commit, here or in
    /// another process, syncs the WAL they are in. The fsync was most of
    /// a recall's time.
    pub fn begin_counters_write(&mut self) -> Result<()> {
        self.set_relaxed(true)?;
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        self.in_tx = true;
        Ok(())
    }

    fn set_relaxed(&mut self, relaxed: bool) -> Result<()> {
        if self.relaxed != relaxed {
            let level = if relaxed { "NORMAL" } else { "FULL" };
            self.conn.pragma_update(None, "synchronous", level)?;
            self.relaxed = relaxed;
        }
        Ok(())
    }

    /// Starts a read transaction: what is read until [`Store::end_read`]
    /// is one consistent state, and no writer waits for it (WAL).
    pub fn begin_read(&mut self) -> Result<()> {
        self.conn.execute_batch("BEGIN DEFERRED")?;
        self.in_tx = true;
        Ok(())
    }

    /// Ends a read transaction.
    pub fn end_read(&mut self) {
        self.rollback();
    }

    /// Entries written after `version`, in the order they were first stored.
    pub fn changed_since(&self, version: i64) -> Result<Vec<Entry>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT body FROM entries WHERE version > ?1 ORDER BY seq")?;
        let rows = stmt.query_map([version], |r| r.get::<_, String>(0))?;
        rows.map(|body| {
            let body = body?;
            serde_json::from_str(&body)
                .with_context(|| format!("a stored entry is unreadable: {body}"))
        })
        .collect()
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
        {
            let mut put = self.conn.prepare_cached(
                "INSERT INTO entries (id, body, version) VALUES (?1, ?2, ?3)
                 ON CONFLICT(id) DO UPDATE SET body = excluded.body, version = excluded.version",
            )?;
            for e in entries {
                put.execute(params![e.id, serde_json::to_string(e)?, version])?;
            }
            let mut log = self.conn.prepare_cached(
                "INSERT INTO events (at, kind, id, others, reason) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            let mut keep = self
                .conn
                .prepare_cached("INSERT INTO undo (seq, before) VALUES (?1, ?2)")?;
            for ev in events {
                let kind = serde_json::to_value(ev.kind)?;
                log.execute(params![
                    ev.at,
                    kind.as_str(),
                    ev.id,
                    serde_json::to_string(&ev.others)?,
                    ev.reason
                ])?;
                let seq = self.conn.last_insert_rowid();
                self.last_event_seqs.push(seq);
                if !ev.before.is_empty() {
                    keep.execute(params![seq, serde_json::to_string(&ev.before)?])?;
                }
            }
        }
        Ok(())
    }

    /// Bumps the version over what was written under the open write lock
    /// and commits. Returns the new version.
    pub fn seal(&mut self) -> Result<i64> {
        anyhow::ensure!(self.in_tx, "seal without begin_write");
        let version = self.version()? + 1;
        self.conn.execute(
            "UPDATE meta SET value = ?1 WHERE key = 'version'",
            [version.to_string()],
        )?;
        self.conn.execute_batch("COMMIT")?;
        self.in_tx = false;
        Ok(version)
    }

    /// Starts a new list of event numbers (an operation about to write).
    pub fn clear_event_seqs(&mut self) {
        self.last_event_seqs.clear();
    }

    /// The log numbers of the events the last commit wrote, in order.
    pub fn last_event_seqs(&self) -> &[i64] {
        &self.last_event_seqs
    }

    /// Abandons the open write, if any.
    pub fn rollback(&mut self) {
        if self.in_tx {
            let _ = self.conn.execute_batch("ROLLBACK");
            self.in_tx = false;
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
        let clash = entries.iter().find_map(|e| match self.contains(&e.id) {
            Ok(true) => Some(Ok(e.id.clone())),
            Ok(false) => None,
            Err(err) => Some(Err(err)),
        });
        match clash {
            Some(Ok(id)) => {
                self.rollback();
                bail!("id '{id}' from {origin} is already in the ledger; nothing was imported");
            }
            Some(Err(e)) => {
                self.rollback();
                return Err(e);
            }
            None => {}
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
        // imported lessons were never judged against these, whatever their
        // age: until the next pass, every pair counts toward auto-sleep
        let forgot = self
            .conn
            .execute("DELETE FROM meta WHERE key = 'slept_through'", []);
        if let Err(e) = forgot
            .map_err(anyhow::Error::from)
            .and_then(|_| self.commit(entries, &events))
        {
            self.rollback();
            return Err(e);
        }
        Ok(entries.len())
    }

    /// Whether an entry with `id` exists.
    pub fn contains(&self, id: &str) -> Result<bool> {
        Ok(self
            .conn
            .query_row("SELECT 1 FROM entries WHERE id = ?1", [id], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Every entry, in stored order.
    pub fn all(&self) -> Result<Vec<Entry>> {
        self.changed_since(i64::MIN)
    }

    /// The event log, oldest first; only events naming `id` when given.
    /// The entries an event recorded for undo are left out (see [`Store::event`]).
    pub fn history(&self, id: Option<&str>, limit: usize) -> Result<Vec<StoredEvent>> {
        let mut stmt = self.conn.prepare(
            "SELECT seq, at, kind, id, others, reason, NULL FROM events
             WHERE ?1 IS NULL OR id = ?1 OR others LIKE '%\"' || ?1 || '\"%'
             ORDER BY seq DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![id, limit as i64], EventRow::read)?;
        let mut out = rows
            .map(|row| row?.into_stored())
            .collect::<Result<Vec<_>>>()?;
        out.reverse();
        Ok(out)
    }

    /// Event `seq` with the entries it recorded as they were before it.
    pub fn event(&self, seq: i64) -> Result<Option<StoredEvent>> {
        self.conn
            .query_row(
                "SELECT e.seq, e.at, e.kind, e.id, e.others, e.reason, u.before
                 FROM events e LEFT JOIN undo u ON u.seq = e.seq WHERE e.seq = ?1",
                [seq],
                EventRow::read,
            )
            .optional()?
            .map(EventRow::into_stored)
            .transpose()
    }

    /// Whether an event after `seq` names entry `id`.
    pub fn touched_after(&self, seq: i64, id: &str) -> Result<bool> {
        Ok(self.conn.query_row(
            "SELECT EXISTS(SELECT 1 FROM events WHERE seq > ?1
                 AND (id = ?2 OR others LIKE '%\"' || ?2 || '\"%'))",
            params![seq, id],
            |r| r.get::<_, bool>(0),
        )?)
    }

    /// The stored entry `id`, if any.
    pub fn get(&self, id: &str) -> Result<Option<Entry>> {
        let body: Option<String> = self
            .conn
            .query_row("SELECT body FROM entries WHERE id = ?1", [id], |r| r.get(0))
            .optional()?;
        body.map(|b| {
            serde_json::from_str(&b).with_context(|| format!("a stored entry is unreadable: {b}"))
        })
        .transpose()
    }

    /// Counts of events by kind.
    /// Per UTC day (days since the epoch), per kind: events and the
    /// entries they name besides the first, oldest day first, over the
    /// last `days` days that saw any event.
    pub fn daily_events(&self, days: usize) -> Result<Vec<(i64, String, i64, i64)>> {
        let mut stmt = self.conn.prepare(
            "WITH recent AS (
                 SELECT DISTINCT CAST(at / 86400 AS INTEGER) AS day
                 FROM events ORDER BY day DESC LIMIT ?1)
             SELECT CAST(at / 86400 AS INTEGER) AS day, kind, COUNT(*),
                    SUM(json_array_length(others))
             FROM events WHERE CAST(at / 86400 AS INTEGER) IN (SELECT day FROM recent)
             GROUP BY day, kind ORDER BY day, kind",
        )?;
        let rows = stmt.query_map(params![days as i64], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    pub fn event_counts(&self) -> Result<Vec<(String, i64)>> {
        let mut stmt = self
            .conn
            .prepare("SELECT kind, COUNT(*) FROM events GROUP BY kind ORDER BY kind")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        self.rollback();
    }
}

/// Why this user cannot write the ledger at `path` (and the `-wal` and
/// `-shm` files SQLite keeps beside it), with the fix; None when it can.
/// Said before SQLite tries, whose own words ("unable to open database
/// file", "disk I/O error") would read as a damaged ledger.
fn access_problem(path: &Path) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    let writable = |p: &Path, mode: libc::c_int| -> Result<(), std::io::Error> {
        let c = std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        if unsafe { libc::access(c.as_ptr(), mode) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    };
    let explain = |what: &str, p: &Path, e: std::io::Error| {
        let fix = if e.raw_os_error() == Some(libc::EROFS) {
            "it lies on a read-only file system; copy the ledger to a writable place and point SILT_LEDGER_PATH at the copy".to_string()
        } else {
            format!(
                "this user may not write there ({e}); fix the permissions (for example `chmod u+w {}`) or point SILT_LEDGER_PATH elsewhere",
                p.display()
            )
        };
        format!(
            "ledger {} cannot be used: {what} {} is not writable; {fix}. The ledger itself was not touched",
            path.display(),
            p.display()
        )
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if path.exists()
        && let Err(e) = writable(path, libc::R_OK | libc::W_OK)
    {
        return Some(explain("the file", path, e));
    }
    // the folder must take the -wal and -shm files (and a new ledger)
    if dir.exists()
        && let Err(e) = writable(dir, libc::W_OK | libc::X_OK)
    {
        return Some(explain("its folder", dir, e));
    }
    None
}

/// The tables, indexes and marks of a silt ledger, in one transaction.
fn schema_batch() -> String {
    format!(
        "BEGIN IMMEDIATE;
         CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
         CREATE TABLE IF NOT EXISTS entries (
             seq INTEGER PRIMARY KEY AUTOINCREMENT,
             id TEXT NOT NULL UNIQUE,
             body TEXT NOT NULL,
             version INTEGER NOT NULL);
         CREATE INDEX IF NOT EXISTS entries_version ON entries(version);
         CREATE TABLE IF NOT EXISTS events (
             seq INTEGER PRIMARY KEY AUTOINCREMENT,
             at REAL NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL,
             others TEXT NOT NULL, reason TEXT NOT NULL);
         CREATE INDEX IF NOT EXISTS events_id ON events(id);
         CREATE TABLE IF NOT EXISTS undo (
             seq INTEGER PRIMARY KEY, before TEXT NOT NULL);
         CREATE TABLE IF NOT EXISTS vectors (
             model TEXT NOT NULL, text_sha256 BLOB NOT NULL, data BLOB NOT NULL,
             PRIMARY KEY (model, text_sha256)) WITHOUT ROWID;
         CREATE TABLE IF NOT EXISTS vector_models (
             model TEXT PRIMARY KEY, same_above REAL NOT NULL,
             related_above REAL NOT NULL, unrelated_below REAL NOT NULL);
         INSERT OR IGNORE INTO meta VALUES ('schema', '{SCHEMA}');
         INSERT OR IGNORE INTO meta VALUES ('version', '0');
         COMMIT;"
    )
}

/// Makes a new ledger at `path` whole or not at all: built aside under a
/// name of its own, then linked into place only if nothing is there yet.
/// A process that loses the race finds a complete ledger (the winner's)
/// and uses it; none ever sees a half-made file.
fn create(path: &Path) -> Result<()> {
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d,
        None => Path::new("."),
    };
    if !dir.is_dir() {
        bail!(
            "the folder {} does not exist; create it (or point SILT_LEDGER_PATH at an existing folder) — silt does not make folders for a ledger",
            dir.display()
        );
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "ledger".into());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let aside = dir.join(format!(".{name}.new-{}-{nanos}", std::process::id()));
    let built = (|| -> Result<()> {
        let conn = Connection::open(&aside)
            .with_context(|| format!("creating ledger {}", path.display()))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.execute_batch(&schema_batch())?;
        // closing the only connection folds the log into the file
        conn.close().map_err(|(_, e)| e)?;
        Ok(())
    })();
    let placed =
        built.and_then(|()| match std::fs::hard_link(&aside, path) {
            Ok(()) => Ok(()),
            // another process placed its ledger first: use that one
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(anyhow::Error::new(e)
                .context(format!("placing the new ledger at {}", path.display()))),
        });
    for leftover in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{leftover}", aside.display()));
    }
    placed
}

/// Whether the ledger already has every table this silt uses.
fn has_every_table(conn: &Connection) -> Result<bool> {
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'
         AND name IN ('meta', 'entries', 'events', 'undo', 'vectors', 'vector_models')",
        [],
        |r| r.get(0),
    )?;
    Ok(n == 6)
}

/// Refuses, without writing, a file that is not a healthy silt ledger.
fn check_existing(path: &Path) -> Result<()> {
    let mut header = [0u8; 16];
    let read = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut header))
        .with_context(|| format!("cannot read ledger {}", path.display()))?;
    if read == 0 {
        bail!(
            "ledger {} is an empty file; silt will not use it. Remove it to start a new ledger",
            path.display()
        );
    }
    if &header != b"SQLite format 3\0" {
        let looks_json = header
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|b| *b == b'[');
        let hint = if looks_json {
            format!(
                "it looks like a Sediment ledger.json: import it with `silt ledger import {}` into a silt ledger at another path",
                path.display()
            )
        } else {
            "restore it from a backup or point SILT_LEDGER_PATH elsewhere".into()
        };
        bail!(
            "ledger {} is not a silt ledger (not SQLite); it was left untouched. {hint}",
            path.display()
        );
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .with_context(|| format!("cannot open ledger {}", path.display()))?;
    let damaged = |e: &dyn std::fmt::Display| {
        anyhow::anyhow!(
            "ledger {} is damaged ({e}); it was left untouched. Restore it from a backup",
            path.display()
        )
    };
    let check: String = conn
        .query_row("PRAGMA quick_check", [], |r| r.get(0))
        .map_err(|e| damaged(&e))?;
    if check != "ok" {
        return Err(damaged(&check));
    }
    let schema: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| {
            r.get(0)
        })
        .optional()
        .unwrap_or(None);
    match schema.as_deref() {
        Some(SCHEMA) => Ok(()),
        Some(other) => bail!(
            "ledger {} has schema '{other}', which this silt does not read; it was left untouched",
            path.display()
        ),
        None => bail!(
            "{} is an SQLite database but not a silt ledger; it was left untouched",
            path.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synchronous(store: &Store) -> i64 {
        store
            .conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap()
    }

    /// Only a counters write commits without waiting for the disk; every
    /// other write after it waits again (FULL = 2, NORMAL = 1).
    #[test]
    fn only_counter_writes_skip_the_fsync() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("ledger.db")).unwrap();
        assert_eq!(synchronous(&store), 2);
        store.begin_counters_write().unwrap();
        assert_eq!(synchronous(&store), 1);
        store.commit(&[], &[]).unwrap();
        store.begin_write().unwrap();
        assert_eq!(synchronous(&store), 2);
        store.rollback();
    }

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
}
