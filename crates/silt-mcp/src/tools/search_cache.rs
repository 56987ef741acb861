//! The backend cache: a backend's hits for (backend, its configuration,
//! query, count, page), kept for a TTL. It stores queries and snippets, so
//! its folder is mode 700 and its database files 600 (`silt_files::private`).

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};

/// Seconds an entry lives unless `$SILT_SEARCH_CACHE_TTL` says otherwise
/// (0 turns the cache off).
pub const DEFAULT_TTL: u64 = 3600;
/// Entries kept: the newest.
pub const MAX_ROWS: i64 = 2000;

/// The cache.
pub struct SearchCache {
    conn: Mutex<Connection>,
    ttl: Duration,
}

/// The TTL from `$SILT_SEARCH_CACHE_TTL`'s value (None: unset).
pub fn ttl_from(value: Option<&str>) -> Result<Duration, String> {
    match value.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(Duration::from_secs(DEFAULT_TTL)),
        Some(v) => v.parse::<u64>().map(Duration::from_secs).map_err(|_| {
            format!("SILT_SEARCH_CACHE_TTL is '{v}'; set whole seconds (0 turns the cache off)")
        }),
    }
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl SearchCache {
    /// Opens (or creates) the cache in folder `dir`; None when `ttl` is 0.
    pub fn open(dir: &Path, ttl: Duration) -> Result<Option<SearchCache>> {
        if ttl.is_zero() {
            return Ok(None);
        }
        silt_files::private::folder(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join("backend.sqlite");
        // 0600 before SQLite opens it, so its -wal and -shm are 0600 too
        silt_files::private::sqlite_file(&path)
            .with_context(|| format!("cannot create search cache {}", path.display()))?;
        let conn = Connection::open(&path)
            .with_context(|| format!("cannot open search cache {}", path.display()))?;
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS hits (
                 key TEXT PRIMARY KEY,
                 result TEXT NOT NULL,
                 stored REAL NOT NULL)",
        )
        .with_context(|| format!("{} is not a usable search cache", path.display()))?;
        let cache = SearchCache {
            conn: Mutex::new(conn),
            ttl,
        };
        Ok(Some(cache))
    }

    /// The key of one backend call.
    pub fn key(backend: &str, config: &str, query: &str, count: u32, page: u32) -> String {
        let query = query
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase();
        let text = format!("{backend}\n{config}\n{query}\n{count}\n{page}");
        hex::encode(Sha256::digest(text.as_bytes()))
    }

    /// A fresh entry's stored result.
    pub fn get(&self, key: &str) -> Result<Option<String>> {
        let oldest = now() - self.ttl.as_secs_f64();
        let conn = self.conn.lock().expect("search cache lock");
        Ok(conn
            .query_row(
                "SELECT result FROM hits WHERE key = ?1 AND stored >= ?2",
                params![key, oldest],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Stores `result` under `key` and keeps the newest [`MAX_ROWS`].
    pub fn put(&self, key: &str, result: &str) -> Result<()> {
        let conn = self.conn.lock().expect("search cache lock");
        conn.execute(
            "INSERT OR REPLACE INTO hits (key, result, stored) VALUES (?1, ?2, ?3)",
            params![key, result, now()],
        )?;
        conn.execute(
            "DELETE FROM hits WHERE key NOT IN (SELECT key FROM hits ORDER BY stored DESC LIMIT ?1)",
            params![MAX_ROWS],
        )?;
        Ok(())
    }

    /// Rows stored (tests and stats).
    pub fn len(&self) -> Result<i64> {
        let conn = self.conn.lock().expect("search cache lock");
        Ok(conn.query_row("SELECT COUNT(*) FROM hits", [], |r| r.get(0))?)
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_comes_from_the_environment_value() {
        assert_eq!(ttl_from(None).unwrap().as_secs(), 3600);
        assert_eq!(ttl_from(Some("0")).unwrap().as_secs(), 0);
        assert_eq!(ttl_from(Some(" 60 ")).unwrap().as_secs(), 60);
        assert!(
            ttl_from(Some("an hour"))
                .unwrap_err()
                .contains("whole seconds")
        );
    }

    #[test]
    fn stores_finds_expires_and_trims() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("search");
        assert!(
            SearchCache::open(&folder, Duration::ZERO)
                .unwrap()
                .is_none()
        );
        let cache = SearchCache::open(&folder, Duration::from_secs(60))
            .unwrap()
            .unwrap();
        let k = SearchCache::key("searxng", "http://x", "  Rust  WASM ", 10, 1);
        assert_eq!(
            k,
            SearchCache::key("searxng", "http://x", "rust wasm", 10, 1)
        );
        assert_ne!(
            k,
            SearchCache::key("searxng", "http://y", "rust wasm", 10, 1)
        );
        assert_eq!(cache.get(&k).unwrap(), None);
        cache.put(&k, "[1]").unwrap();
        assert_eq!(cache.get(&k).unwrap().as_deref(), Some("[1]"));
        for i in 0..(MAX_ROWS + 5) {
            cache.put(&format!("k{i}"), "[]").unwrap();
        }
        assert_eq!(cache.len().unwrap(), MAX_ROWS);
        assert_eq!(cache.get("k0").unwrap(), None, "the oldest went first");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&folder), 0o700);
            assert_eq!(mode(&folder.join("backend.sqlite")), 0o600);
            assert_eq!(mode(&folder.join("backend.sqlite-wal")), 0o600);
        }
        // an expired entry is not served
        let stale = SearchCache::open(&folder, Duration::from_nanos(1))
            .unwrap()
            .unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(stale.get(&format!("k{}", MAX_ROWS + 4)).unwrap(), None);
    }
}
