//! Compiled components cached on disk, keyed by content.
//!
//! The key is sha256 over the component bytes, the wasmtime version and the
//! engine's compatibility hash, so a changed component, a wasmtime upgrade or
//! a different engine configuration never loads a stale artifact.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Whether a component came from the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheOutcome {
    /// Read precompiled from the cache folder.
    Hit,
    /// Compiled now, and written to the cache folder when it could be.
    Miss,
    /// Compiled now; there is no cache folder.
    Disabled,
}

/// A folder of precompiled components (`*.cwasm`).
#[derive(Debug, Clone)]
pub struct CompileCache {
    dir: Option<PathBuf>,
}

/// Feeds `Hash` output into sha256, so the engine's compatibility hash is
/// stable across Rust releases (unlike `DefaultHasher`).
struct ShaHasher(Sha256);

impl Hasher for ShaHasher {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

impl CompileCache {
    /// A cache in `dir` (created with mode 700), or none.
    pub fn new(dir: Option<PathBuf>) -> Self {
        CompileCache { dir }
    }

    /// The cache key for `bytes` under `engine`.
    pub fn key(engine: &Engine, bytes: &[u8]) -> String {
        let mut h = ShaHasher(Sha256::new());
        h.write(bytes);
        h.write(env!("SILT_WASMTIME_VERSION").as_bytes());
        engine.precompile_compatibility_hash().hash(&mut h);
        hex::encode(h.0.finalize())
    }

    /// Loads `bytes` as a component, from the cache when possible.
    pub fn load(&self, engine: &Engine, bytes: &[u8]) -> Result<(Component, CacheOutcome)> {
        let Some(dir) = &self.dir else {
            return Ok((Component::new(engine, bytes)?, CacheOutcome::Disabled));
        };
        let path = dir.join(format!("{}.cwasm", Self::key(engine, bytes)));
        // Read, not mmap (`deserialize_file`): a mapped artifact that someone
        // truncates or rewrites in place would crash this process (SIGBUS).
        if let Ok(artifact) = std::fs::read(&path) {
            // SAFETY: files in this folder are written only by `store` below,
            // from `Component::serialize` of this same engine configuration
            // (the key covers it), in a folder created private (0700).
            // wasmtime checks the header and refuses a mismatched artifact.
            match unsafe { Component::deserialize(engine, &artifact) } {
                Ok(c) => return Ok((c, CacheOutcome::Hit)),
                Err(e) => tracing::warn!(
                    "discarding unreadable cached component {}: {e}",
                    path.display()
                ),
            }
        }
        let component = Component::new(engine, bytes)?;
        if let Err(e) = store(dir, &path, &component.serialize()?) {
            tracing::warn!(
                "could not cache compiled component in {}: {e:#}",
                dir.display()
            );
        }
        Ok((component, CacheOutcome::Miss))
    }
}

/// Writes atomically: a reader sees the whole artifact or none.
fn store(dir: &Path, path: &Path, bytes: &[u8]) -> Result<()> {
    create_private_dir(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).context("creating a temporary file")?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)
        .context("moving the artifact into place")?;
    Ok(())
}

fn create_private_dir(dir: &Path) -> Result<()> {
    silt_files::private::folder(dir).with_context(|| format!("creating {}", dir.display()))
}
