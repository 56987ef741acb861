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
}

/// An event as stored, with its sequence number.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StoredEvent {
    pub seq: i64,
    #[serde(flatten)]
    pub event: Event,
}

impl Store {
    /// `$SILT_LEDGER_PATH`; else, when the seed's `$SEDIMENT_LEDGER_PATH`
    /// names a Sediment JSON ledger, a silt ledger beside it
    /// (`ledger.json` → `ledger.silt.db`, imported on first open); else
    /// `<data dir>/silt/ledger.db`. Returns the path and the Sediment file
    /// to import if the ledger is new.
    pub fn default_path() -> (PathBuf, Option<PathBuf>) {
        if let Some(p) = std::env::var_os("SILT_LEDGER_PATH") {
            return (PathBuf::from(p), None);
        }
        if let Some(p) = std::env::var_os("SEDIMENT_LEDGER_PATH") {
            let json = PathBuf::from(p);
            return (json.with_extension("silt.db"), Some(json));
        }
        let dir = dirs::data_dir().unwrap_or_else(std::env::temp_dir);
        (dir.join("silt").join("ledger.db"), None)
    }

    /// Opens (or creates) the ledger at `path`, refusing anything that is
    /// not a healthy silt ledger without writing to it.
    pub fn open(path: &Path) -> Result<Store> {
        if path.exists() {
            check_existing(path)?;
        } else if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let conn =
            Connection::open(path).with_context(|| format!("opening ledger {}", path.display()))?;
        conn.busy_timeout(std::time::Duration::from_secs(60))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // FULL: a committed operation survives a crash or power loss.
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.execute_batch(&format!(
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
             INSERT OR IGNORE INTO meta VALUES ('schema', '{SCHEMA}');
             INSERT OR IGNORE INTO meta VALUES ('version', '0');
             COMMIT;"
        ))?;
        Ok(Store { conn, in_tx: false })
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
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        self.in_tx = true;
        Ok(())
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
        anyhow::ensure!(self.in_tx, "commit without begin_write");
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
            for ev in events {
                let kind = serde_json::to_value(ev.kind)?;
                log.execute(params![
                    ev.at,
                    kind.as_str(),
                    ev.id,
                    serde_json::to_string(&ev.others)?,
                    ev.reason
                ])?;
            }
        }
        self.conn.execute(
            "UPDATE meta SET value = ?1 WHERE key = 'version'",
            [version.to_string()],
        )?;
        self.conn.execute_batch("COMMIT")?;
        self.in_tx = false;
        Ok(version)
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
        if let Err(e) = self.commit(entries, &events) {
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
    pub fn history(&self, id: Option<&str>, limit: usize) -> Result<Vec<StoredEvent>> {
        let mut stmt = self.conn.prepare(
            "SELECT seq, at, kind, id, others, reason FROM events
             WHERE ?1 IS NULL OR id = ?1 OR others LIKE '%\"' || ?1 || '\"%'
             ORDER BY seq DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![id, limit as i64], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, f64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, at, kind, id, others, reason) = row?;
            let event = Event {
                at,
                kind: serde_json::from_value(serde_json::Value::String(kind))?,
                id,
                others: serde_json::from_str(&others)?,
                reason,
            };
            out.push(StoredEvent { seq, event });
        }
        out.reverse();
        Ok(out)
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
