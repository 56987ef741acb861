//! silt's own state is private to its owner: the ledger (and SQLite's
//! `-wal` and `-shm` beside it) holds lessons, the caches hold questions,
//! answers and search hits, the config folder holds the HTTP token and API
//! keys. Its folders are made 0700 and its files 0600 whatever the umask,
//! and a looser mode found on one of them (left by an older silt, or by a
//! recipe run under the usual umask 022) is tightened with a warning.
//!
//! SQLite makes its `-wal` and `-shm` with the database file's own mode
//! (`findCreateFileMode` and `unixOpenSharedMemory` copy it, and
//! `robust_open` fchmods past the umask), so a database file created 0600
//! before SQLite first opens it is enough for its sidecars.

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use silt_config::env;

/// A private folder's mode.
pub const FOLDER_MODE: u32 = 0o700;
/// A private file's mode.
pub const FILE_MODE: u32 = 0o600;

/// Makes `dir` and its missing parents 0700 (as the XDG base directory
/// spec asks of the folders it names), or tightens an existing `dir` that
/// other users could enter.
pub fn folder(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        tighten(dir, FOLDER_MODE);
        return Ok(());
    }
    missing_folders(dir)?;
    // exactly 0700, even under a umask that took the owner's own bits
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(FOLDER_MODE))
}

/// Makes the missing folders of `dir` 0700 (less what the umask takes),
/// leaving existing ones as they are: for a folder that may be shared on
/// purpose (`$SILT_MODELS_DIR`) but whose new parents are silt's own.
pub fn missing_folders(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(FOLDER_MODE)
        .create(dir)
}

/// Creates the new, empty file `path` 0600 (never replacing one).
pub fn new_file(path: &Path) -> io::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(FILE_MODE))?;
    Ok(file)
}

/// Readies the SQLite database `db` for its first open: creates it empty
/// and 0600 when missing (SQLite takes an empty file for a new database),
/// and tightens an existing database, `-wal` and `-shm` others could read.
pub fn sqlite_file(db: &Path) -> io::Result<()> {
    match new_file(db) {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    tighten_sqlite(db);
    Ok(())
}

/// Tightens an existing database and its `-wal` and `-shm`.
pub fn tighten_sqlite(db: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = db.as_os_str().to_owned();
        p.push(suffix);
        tighten(Path::new(&p), FILE_MODE);
    }
}

/// Gives `path` `mode` when group or other users have any right to it,
/// with a warning. A missing path, a symlink (SQLite opens its sidecars
/// with `O_NOFOLLOW`; a link is not silt's) or someone else's file is left
/// as it is: silt runs on, as it did before.
pub fn tighten(path: &Path, mode: u32) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    let bits = meta.mode() & 0o777;
    if meta.file_type().is_symlink() || bits & 0o077 == 0 {
        return;
    }
    // SAFETY: geteuid has no preconditions and cannot fail
    if meta.uid() != unsafe { libc::geteuid() } {
        tracing::warn!(
            "{} can be read by other users (mode {bits:o}) and belongs to uid {}; silt cannot \
             restrict it",
            path.display(),
            meta.uid()
        );
        return;
    }
    match std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)) {
        Ok(()) => tracing::warn!(
            "{} could be read by other users (mode {bits:o}); silt made it {mode:o}",
            path.display()
        ),
        Err(e) => tracing::warn!(
            "{} can be read by other users (mode {bits:o}) and silt cannot restrict it: {e}",
            path.display()
        ),
    }
}

/// The env file `bin/silt-mcp` sources: `$SILT_ENV_FILE`, else
/// `$HOME/.config/silt/env` (the launcher's own default).
pub fn env_file() -> Option<PathBuf> {
    env::path("SILT_ENV_FILE").or_else(|| env::path("HOME").map(|h| h.join(".config/silt/env")))
}

/// Tightens the config folders and env file that hold the token and API
/// keys, where they exist: every command runs this first.
pub fn check_config() {
    let folders = [
        dirs::config_dir().map(|d| d.join("silt")),
        env::path("HOME").map(|h| h.join(".config/silt")),
    ];
    for dir in folders.iter().flatten() {
        if dir.is_dir() {
            tighten(dir, FOLDER_MODE);
        }
    }
    if let Some(env) = env_file() {
        tighten(&env, FILE_MODE);
    }
}

/// Sets `name=value` in the env file at `path`, replacing an earlier line
/// for `name`: written whole to a 0600 file beside it, then moved into
/// place, in a folder made 0700 if missing.
pub fn set_env_line(path: &Path, name: &str, value: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        folder(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let old = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut text: String = old
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("export ").unwrap_or(l).trim_start();
            !l.starts_with(&format!("{name}="))
        })
        .flat_map(|l| [l, "\n"])
        .collect();
    text.push_str(&format!("{name}={value}\n"));
    // tempfile makes its file 0600
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(FILE_MODE))?;
    tmp.persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().mode() & 0o777
    }

    #[test]
    fn folders_and_files_are_private_and_loose_ones_are_tightened() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("a").join("silt");
        folder(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&t.path().join("a")), 0o700);
        let db = dir.join("x.sqlite");
        sqlite_file(&db).unwrap();
        assert_eq!(mode(&db), 0o600);
        for (p, m) in [(&dir, 0o755), (&db, 0o644)] {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
        }
        let wal = dir.join("x.sqlite-wal");
        std::fs::write(&wal, "").unwrap();
        std::fs::set_permissions(&wal, std::fs::Permissions::from_mode(0o666)).unwrap();
        folder(&dir).unwrap();
        sqlite_file(&db).unwrap();
        assert_eq!((mode(&dir), mode(&db), mode(&wal)), (0o700, 0o600, 0o600));
    }

    #[test]
    fn sqlite_gives_its_wal_and_shm_the_database_files_mode() {
        let t = tempfile::tempdir().unwrap();
        let db = t.path().join("x.sqlite");
        sqlite_file(&db).unwrap();
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        for suffix in ["", "-wal", "-shm"] {
            let p = t.path().join(format!("x.sqlite{suffix}"));
            assert_eq!(mode(&p), 0o600, "{}", p.display());
        }
    }

    #[test]
    fn the_env_line_is_set_once_in_a_private_file() {
        let t = tempfile::tempdir().unwrap();
        let env = t.path().join("silt").join("env");
        set_env_line(&env, "SILT_HTTP_TOKEN", "one").unwrap();
        std::fs::write(&env, "A=1\nexport SILT_HTTP_TOKEN=old\n").unwrap();
        std::fs::set_permissions(&env, std::fs::Permissions::from_mode(0o644)).unwrap();
        set_env_line(&env, "SILT_HTTP_TOKEN", "two").unwrap();
        assert_eq!(
            std::fs::read_to_string(&env).unwrap(),
            "A=1\nSILT_HTTP_TOKEN=two\n"
        );
        assert_eq!(mode(&env), 0o600);
        assert_eq!(mode(env.parent().unwrap()), 0o700);
    }
}
