//! `plugins.lock`: what `silt plugins add` installed in a plugin folder,
//! with the digest of each component and manifest. Every load checks the
//! bytes against it; only `silt plugins update` moves a pin.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The lock file's name, in each plugin folder that has installs.
pub const LOCK_FILE: &str = "plugins.lock";

/// `sha256:<hex>` of some bytes.
pub fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// One installed plugin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    /// Where it came from, as given to `silt plugins add` (a folder, a URL
    /// or an OCI reference): `update` fetches it from there again.
    pub source: String,
    /// The OCI manifest digest the reference resolved to, for OCI sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<String>,
    /// Digest of the component file.
    pub component: String,
    /// Digest of `plugin.toml`: its grants are part of what was accepted.
    pub manifest: String,
    /// The key that signed it, when signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
}

/// A plugin folder's lock file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockFile {
    /// The file format's version: this silt reads and writes 1.
    pub version: u32,
    /// Each installed plugin's pin, by plugin name.
    #[serde(default)]
    pub plugins: BTreeMap<String, Pin>,
}

impl LockFile {
    /// The lock file of plugin folder `dir`; empty when there is none. A
    /// file that cannot be read is an error: treating it as empty would
    /// load every plugin unchecked.
    pub fn read(dir: &Path) -> Result<LockFile> {
        let path = dir.join(LOCK_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let lock: LockFile = toml::from_str(&text).with_context(|| {
                    format!(
                        "{} is not a plugin lock file; restore it from a backup or remove it \
                         and add the plugins again",
                        path.display()
                    )
                })?;
                anyhow::ensure!(
                    lock.version == 1,
                    "{} is version {}; this silt reads version 1",
                    path.display(),
                    lock.version
                );
                Ok(lock)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(LockFile {
                version: 1,
                plugins: BTreeMap::new(),
            }),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// Changes the lock file of `dir` under an exclusive lock, so two
    /// `silt plugins` commands at once never drop each other's pins; the
    /// new file replaces the old in one rename.
    pub fn update<T>(dir: &Path, change: impl FnOnce(&mut LockFile) -> Result<T>) -> Result<T> {
        silt_files::private::missing_folders(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let guard_path = dir.join(".plugins.lock.guard");
        let guard = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&guard_path)
            .with_context(|| format!("cannot open {}", guard_path.display()))?;
        guard
            .lock()
            .with_context(|| format!("cannot lock {}", guard_path.display()))?;
        let mut lock = LockFile::read(dir)?;
        let out = change(&mut lock)?;
        let text = format!(
            "# What `silt plugins add` installed here. Every load checks the bytes\n\
             # against these digests; `silt plugins update NAME` moves a pin.\n{}",
            toml::to_string(&lock).context("writing the lock file")?
        );
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        std::io::Write::write_all(&mut tmp, text.as_bytes())?;
        tmp.as_file().sync_all()?;
        tmp.persist(dir.join(LOCK_FILE))
            .with_context(|| format!("cannot write {}", dir.join(LOCK_FILE).display()))?;
        Ok(out)
    }
}

/// Holds the lock [`LockFile::update`] takes, shared: while it is held no
/// install or update is half done in `dir`, so the pins and the plugin
/// folders read under it belong together. None when `dir` has no guard
/// file (nothing was ever installed there) or it cannot be locked.
pub fn hold_shared(dir: &Path) -> Option<std::fs::File> {
    // read-only: discovering plugins never writes to their folder
    let guard = std::fs::File::open(dir.join(".plugins.lock.guard")).ok()?;
    guard.lock_shared().ok()?;
    Some(guard)
}

/// What a load checks a plugin folder's files against.
#[derive(Debug, Clone)]
pub struct Expected {
    /// The lock file that pins it.
    pub lock_file: PathBuf,
    /// The pin its component and manifest must match.
    pub pin: Pin,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_round_trip_and_a_broken_lock_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(LockFile::read(dir.path()).unwrap().plugins.is_empty());
        let pin = Pin {
            source: "oci://127.0.0.1:5000/p:1".into(),
            resolved: Some(digest(b"m")),
            component: digest(b"c"),
            manifest: digest(b"t"),
            signer: None,
        };
        LockFile::update(dir.path(), |l| {
            l.plugins.insert("p".into(), pin.clone());
            Ok(())
        })
        .unwrap();
        assert_eq!(LockFile::read(dir.path()).unwrap().plugins["p"], pin);
        std::fs::write(dir.path().join(LOCK_FILE), "plugins = 3").unwrap();
        let err = format!("{:#}", LockFile::read(dir.path()).unwrap_err());
        assert!(err.contains("not a plugin lock file"), "{err}");
        // a change that fails leaves the file as it was
        let before = std::fs::read(dir.path().join(LOCK_FILE)).unwrap();
        assert!(LockFile::update(dir.path(), |_| Ok(())).is_err());
        assert_eq!(std::fs::read(dir.path().join(LOCK_FILE)).unwrap(), before);
    }
}
