//! The SQLite backend: one file in WAL mode, the embedded default. The
//! write lock is SQLite's own (`BEGIN IMMEDIATE`, waiting up to a minute
//! for another process's write); readers never wait. A file that is not a
//! healthy silt ledger is refused and never written to.

use std::path::Path;

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use super::{Backend, Begin, Counts, Dump, EventRow, SCHEMA};

/// An open ledger file.
pub struct SqliteDb {
    conn: Connection,
    /// The connection commits without waiting for the disk
    /// (`synchronous = NORMAL`, for counters writes).
    relaxed: bool,
}

impl SqliteDb {
    pub fn open(path: &Path) -> Result<SqliteDb> {
        if let Some(problem) = access_problem(path) {
            bail!("{problem}");
        }
        if !path.exists() {
            create(path)?;
        }
        check_existing(path)?;
        // the lessons are the owner's: a ledger, -wal or -shm others could
        // read (an older silt made them 0644) is made 0600, with a warning
        silt_files::private::tighten_sqlite(path);
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
        Ok(SqliteDb {
            conn,
            relaxed: false,
        })
    }

    fn set_relaxed(&mut self, relaxed: bool) -> Result<()> {
        if self.relaxed != relaxed {
            let level = if relaxed { "NORMAL" } else { "FULL" };
            self.conn.pragma_update(None, "synchronous", level)?;
            self.relaxed = relaxed;
        }
        Ok(())
    }
}

/// Columns: seq, at, kind, id, others, reason, before.
fn event_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<EventRow> {
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

impl Backend for SqliteDb {
    fn begin(&mut self, how: Begin) -> Result<()> {
        match how {
            Begin::Write | Begin::Counters => {
                // a counters write is committed to the WAL without waiting
                // for the disk: a killed process loses nothing (the OS
                // holds the WAL's pages), and the next ordinary commit
                // syncs the WAL they are in
                self.set_relaxed(how == Begin::Counters)?;
                self.conn.execute_batch("BEGIN IMMEDIATE")?;
            }
            // WAL: a reader sees one state and no writer waits for it
            Begin::Read => self.conn.execute_batch("BEGIN DEFERRED")?,
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        self.conn.execute_batch("COMMIT")?;
        Ok(())
    }

    fn rollback(&mut self) {
        let _ = self.conn.execute_batch("ROLLBACK");
    }

    fn meta(&self, keys: &[&str]) -> Result<Vec<(String, String)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT key, value FROM meta WHERE key IN (SELECT value FROM json_each(?1))",
        )?;
        let rows = stmt.query_map([serde_json::to_string(keys)?], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn put_meta(&mut self, key: &str, value: &str) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO meta VALUES (?1, ?2)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            )?
            .execute([key, value])?;
        Ok(())
    }

    fn delete_meta(&mut self, key: &str) -> Result<()> {
        self.conn
            .execute("DELETE FROM meta WHERE key = ?1", [key])?;
        Ok(())
    }

    fn newest_created(&self) -> Result<Option<f64>> {
        Ok(self.conn.query_row(
            "SELECT max(json_extract(body, '$.created')) FROM entries",
            [],
            |r| r.get::<_, Option<f64>>(0),
        )?)
    }

    fn bodies_since(&self, version: i64) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT body FROM entries WHERE version > ?1 ORDER BY seq")?;
        let rows = stmt.query_map([version], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn rows_since(&self, version: i64) -> Result<Vec<(String, String)>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, body FROM entries WHERE version > ?1 ORDER BY seq")?;
        let rows = stmt.query_map([version], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn body(&self, id: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .prepare_cached("SELECT body FROM entries WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?)
    }

    fn put_entries(&mut self, rows: &[(&str, String)], version: i64) -> Result<()> {
        let mut put = self.conn.prepare_cached(
            "INSERT INTO entries (id, body, version) VALUES (?1, ?2, ?3)
             ON CONFLICT(id) DO UPDATE SET body = excluded.body, version = excluded.version",
        )?;
        for (id, body) in rows {
            put.execute(params![id, body, version])?;
        }
        Ok(())
    }

    fn append_event(&mut self, row: &EventRow) -> Result<i64> {
        self.conn
            .prepare_cached(
                "INSERT INTO events (at, kind, id, others, reason) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![row.at, row.kind, row.id, row.others, row.reason])?;
        let seq = self.conn.last_insert_rowid();
        if let Some(before) = &row.before {
            self.conn
                .prepare_cached("INSERT INTO undo (seq, before) VALUES (?1, ?2)")?
                .execute(params![seq, before])?;
        }
        Ok(seq)
    }

    fn remove(&mut self, id: &str, texts: &[[u8; 32]]) -> Result<()> {
        for key in texts {
            self.conn
                .execute("DELETE FROM vectors WHERE text_sha256 = ?1", [&key[..]])?;
        }
        self.conn
            .execute("DELETE FROM entries WHERE id = ?1", [id])?;
        // an undo record holding it would bring the text back
        self.conn.execute(
            "DELETE FROM undo WHERE EXISTS (
                 SELECT 1 FROM json_each(undo.before)
                 WHERE json_extract(value, '$.id') = ?1)",
            [id],
        )?;
        Ok(())
    }

    fn scrub(&mut self) {
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
    }

    fn events(&self, id: Option<&str>, limit: usize) -> Result<Vec<EventRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT seq, at, kind, id, others, reason, NULL FROM events
             WHERE ?1 IS NULL OR id = ?1
                OR (instr(others, ?1) > 0
                    AND EXISTS (SELECT 1 FROM json_each(others) WHERE value = ?1))
             ORDER BY seq DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![id, limit as i64], event_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn event(&self, seq: i64) -> Result<Option<EventRow>> {
        Ok(self
            .conn
            .query_row(
                "SELECT e.seq, e.at, e.kind, e.id, e.others, e.reason, u.before
                 FROM events e LEFT JOIN undo u ON u.seq = e.seq WHERE e.seq = ?1",
                [seq],
                event_row,
            )
            .optional()?)
    }

    fn touched_after(&self, seq: i64, id: &str) -> Result<bool> {
        Ok(self.conn.query_row(
            "SELECT EXISTS(SELECT 1 FROM events WHERE seq > ?1
                 AND (id = ?2 OR (instr(others, ?2) > 0
                      AND EXISTS (SELECT 1 FROM json_each(others) WHERE value = ?2))))",
            params![seq, id],
            |r| r.get::<_, bool>(0),
        )?)
    }

    fn daily_events(&self, days: usize) -> Result<Vec<(i64, String, i64, i64)>> {
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

    fn event_counts(&self) -> Result<Vec<(String, i64)>> {
        let mut stmt = self
            .conn
            .prepare("SELECT kind, COUNT(*) FROM events GROUP BY kind ORDER BY kind")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn save_vectors(&mut self, pending: &super::vector_rows::Pending) -> Result<()> {
        let mut model = self
            .conn
            .prepare_cached("INSERT OR REPLACE INTO vector_models VALUES (?1, ?2, ?3, ?4)")?;
        for (m, c) in &pending.models {
            model.execute(params![m, c.same_above, c.related_above, c.unrelated_below])?;
        }
        let mut row = self
            .conn
            .prepare_cached("INSERT OR REPLACE INTO vectors VALUES (?1, ?2, ?3)")?;
        for (m, key, data) in &pending.rows {
            row.execute(params![m, &key[..], data])?;
        }
        Ok(())
    }

    fn counts(&self) -> Result<Counts> {
        Ok(self.conn.query_row(
            "SELECT (SELECT COUNT(*) FROM entries), (SELECT COUNT(*) FROM events),
                    (SELECT COUNT(*) FROM vectors)",
            [],
            |r| {
                Ok(Counts {
                    entries: r.get(0)?,
                    events: r.get(1)?,
                    vectors: r.get(2)?,
                })
            },
        )?)
    }

    fn dump(&self) -> Result<Dump> {
        let c = &self.conn;
        let entries = c
            .prepare("SELECT id, body, version FROM entries ORDER BY seq")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let events = c
            .prepare(
                "SELECT e.seq, e.at, e.kind, e.id, e.others, e.reason, u.before
                 FROM events e LEFT JOIN undo u ON u.seq = e.seq ORDER BY e.seq",
            )?
            .query_map([], event_row)?
            .collect::<rusqlite::Result<_>>()?;
        let vectors = c
            .prepare("SELECT model, text_sha256, data FROM vectors")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let models = c
            .prepare("SELECT model, same_above, related_above, unrelated_below FROM vector_models")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(Dump {
            meta: Vec::new(),
            entries,
            events,
            vectors,
            models,
        })
    }

    fn load(&mut self, dump: &Dump) -> Result<()> {
        let c = &self.conn;
        let mut put = c.prepare("INSERT INTO entries (id, body, version) VALUES (?1, ?2, ?3)")?;
        for (id, body, version) in &dump.entries {
            put.execute(params![id, body, version])?;
        }
        let mut log = c.prepare(
            "INSERT INTO events (seq, at, kind, id, others, reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        let mut keep = c.prepare("INSERT INTO undo (seq, before) VALUES (?1, ?2)")?;
        for e in &dump.events {
            log.execute(params![e.seq, e.at, e.kind, e.id, e.others, e.reason])?;
            if let Some(before) = &e.before {
                keep.execute(params![e.seq, before])?;
            }
        }
        let mut vec = c.prepare("INSERT INTO vectors VALUES (?1, ?2, ?3)")?;
        for (m, key, data) in &dump.vectors {
            vec.execute(params![m, key, data])?;
        }
        let mut model = c.prepare("INSERT INTO vector_models VALUES (?1, ?2, ?3, ?4)")?;
        for (m, a, b, d) in &dump.models {
            model.execute(params![m, a, b, d])?;
        }
        Ok(())
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
        // 0600 before SQLite opens it: its -wal and -shm take its mode
        silt_files::private::new_file(&aside)
            .with_context(|| format!("creating ledger {}", path.display()))?;
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

    fn synchronous(db: &SqliteDb) -> i64 {
        db.conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap()
    }

    /// Only a counters write commits without waiting for the disk; every
    /// other write after it waits again (FULL = 2, NORMAL = 1).
    #[test]
    fn only_counter_writes_skip_the_fsync() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = SqliteDb::open(&dir.path().join("ledger.db")).unwrap();
        assert_eq!(synchronous(&db), 2);
        db.begin(Begin::Counters).unwrap();
        assert_eq!(synchronous(&db), 1);
        db.commit().unwrap();
        db.begin(Begin::Write).unwrap();
        assert_eq!(synchronous(&db), 2);
        db.rollback();
    }
}
