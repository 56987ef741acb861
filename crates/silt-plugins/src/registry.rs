//! The plugins silt knows: built-ins embedded in the binary, then every
//! folder holding a `plugin.toml` under the plugin directories.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};

use super::lock::{self, LockFile, Pin};
use super::manifest::Manifest;
use super::signature::{SignatureFile, Signed, Trust};

/// Built-in plugins: (manifest, component bytes).
const BUILTINS: &[(&str, &[u8])] = &[
    (
        include_str!("../builtin/lexical.toml"),
        include_bytes!(env!("SILT_WASM_SILT_JUDGE_LEXICAL")),
    ),
    (
        include_str!("../builtin/embedding.toml"),
        include_bytes!(env!("SILT_WASM_SILT_JUDGE_EMBEDDING")),
    ),
    (
        include_str!("../builtin/embedding-static.toml"),
        include_bytes!(env!("SILT_WASM_SILT_JUDGE_EMBEDDING")),
    ),
    (
        include_str!("../builtin/openai.toml"),
        include_bytes!(env!("SILT_WASM_SILT_JUDGE_OPENAI")),
    ),
    (
        include_str!("../builtin/llm.toml"),
        include_bytes!(env!("SILT_WASM_SILT_JUDGE_LLM")),
    ),
    (
        include_str!("../builtin/agent.toml"),
        include_bytes!(env!("SILT_WASM_SILT_JUDGE_AGENT")),
    ),
    (
        include_str!("../builtin/sampling.toml"),
        include_bytes!(env!("SILT_WASM_SILT_JUDGE_SAMPLING")),
    ),
    (
        include_str!("../builtin/ask.toml"),
        include_bytes!(env!("SILT_WASM_SILT_ASK")),
    ),
    (
        include_str!("../builtin/verify.toml"),
        include_bytes!(env!("SILT_WASM_SILT_VERIFY")),
    ),
    (
        include_str!("../builtin/ledger.toml"),
        include_bytes!(env!("SILT_WASM_SILT_LEDGER")),
    ),
    (
        include_str!("../builtin/searxng.toml"),
        include_bytes!(env!("SILT_WASM_SILT_SEARCH_SEARXNG")),
    ),
    (
        include_str!("../builtin/brave.toml"),
        include_bytes!(env!("SILT_WASM_SILT_SEARCH_BRAVE")),
    ),
    // one component drives either CLI: the one its manifest grants
    (
        include_str!("../builtin/claude.toml"),
        include_bytes!(env!("SILT_WASM_SILT_SEARCH_CLI")),
    ),
    (
        include_str!("../builtin/codex.toml"),
        include_bytes!(env!("SILT_WASM_SILT_SEARCH_CLI")),
    ),
];

/// The component built-in plugin `name` runs, as embedded in the binary:
/// a test or a user can install it under another manifest (other limits,
/// other grants) without building it again.
pub fn builtin_component(name: &str) -> Option<&'static [u8]> {
    BUILTINS.iter().find_map(|(manifest, wasm)| {
        Manifest::parse(manifest, "a built-in manifest")
            .ok()
            .filter(|m| m.plugin.name == name)
            .map(|_| *wasm)
    })
}

/// Where a plugin's component comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A built-in's component, embedded in the binary.
    Builtin(&'static [u8]),
    /// A component file, held open since discovery: an update renames a
    /// new folder into place and removes the old one, which never changes
    /// what this handle reads, so the bytes always belong with the pin and
    /// manifest read beside them (a call that arrives mid-update runs the
    /// old plugin, until a reload finds the new one).
    File {
        /// Where it was found, for messages and fingerprints.
        path: PathBuf,
        /// The open handle every load reads the bytes from.
        file: Arc<std::fs::File>,
    },
}

/// All of an open file, read by position (a shared handle has no cursor
/// to race on).
#[cfg(unix)]
fn read_whole(file: &std::fs::File) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let mut bytes = Vec::with_capacity(file.metadata()?.len() as usize);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match file.read_at(&mut buf, bytes.len() as u64) {
            Ok(0) => return Ok(bytes),
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Opens a component without waiting on it (a FIFO put in its place would
/// block the open) and refuses anything but a regular file.
fn open_component(path: &Path) -> Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options
        .open(path)
        .with_context(|| format!("its component {} cannot be opened", path.display()))?;
    if !file.metadata()?.is_file() {
        anyhow::bail!("its component {} is not a regular file", path.display());
    }
    Ok(file)
}

/// One known plugin.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its `plugin.toml`, as parsed at discovery.
    pub manifest: Arc<Manifest>,
    /// Where its component's bytes come from.
    pub source: Source,
    /// What every load of a plugin from a folder checks its files against.
    pub checks: Option<Arc<Checks>>,
}

/// A folder plugin's pin, signature and the keys trusted to sign it.
#[derive(Debug)]
pub struct Checks {
    /// Digest of its `plugin.toml` as read (the grants in force).
    pub manifest_digest: String,
    /// The lock file that pins it and the pin, when it was installed by
    /// `silt plugins add`; None for a folder put there by hand.
    pub pin: Option<(PathBuf, Pin)>,
    /// Its `plugin.sig`, read at discovery; None when the folder has none.
    pub signature: Option<SignatureFile>,
    /// The keys trusted to sign it (`[plugins] trusted_keys`).
    pub trust: Arc<Trust>,
}

/// What a load found a folder plugin to be.
#[derive(Debug, Clone)]
pub struct Verified {
    /// `sha256:<hex>` of the component bytes loaded.
    pub component_digest: String,
    /// `sha256:<hex>` of `plugin.toml` as read at discovery.
    pub manifest_digest: String,
    /// Who signed it; None when unsigned.
    pub signer: Option<Signed>,
    /// Whether a lock file pins it (and it matched).
    pub pinned: bool,
}

impl Checks {
    /// Checks a component's bytes (and the manifest read at discovery)
    /// against the pin and the signature.
    pub fn verify(&self, name: &str, bytes: &[u8]) -> Result<Verified> {
        let component_digest = lock::digest(bytes);
        if let Some((lock_file, pin)) = &self.pin {
            for (what, pinned, found) in [
                ("component", &pin.component, &component_digest),
                (
                    "manifest (plugin.toml)",
                    &pin.manifest,
                    &self.manifest_digest,
                ),
            ] {
                if pinned != found {
                    anyhow::bail!(
                        "plugin '{name}' refused: its {what} is not the one installed ({} pins \
                         {pinned}, the file is {found}); install it again with `silt plugins \
                         update {name}` (from {}) or remove it with `silt plugins remove {name}`",
                        lock_file.display(),
                        pin.source
                    );
                }
            }
        }
        let signer = self.trust.check(
            name,
            self.signature.as_ref(),
            &component_digest,
            &self.manifest_digest,
        )?;
        Ok(Verified {
            component_digest,
            manifest_digest: self.manifest_digest.clone(),
            signer,
            pinned: self.pin.is_some(),
        })
    }
}

impl Entry {
    /// The component's bytes, checked against the plugin's pin and
    /// signature when it comes from a folder.
    pub fn bytes(&self) -> Result<Cow<'static, [u8]>> {
        Ok(self.verified_bytes()?.0)
    }

    /// [`Entry::bytes`] and what the checks found (None for a built-in).
    pub fn verified_bytes(&self) -> Result<(Cow<'static, [u8]>, Option<Verified>)> {
        match &self.source {
            Source::Builtin(b) => Ok((Cow::Borrowed(b), None)),
            Source::File { path, file } => {
                #[cfg(unix)]
                let bytes = read_whole(file);
                #[cfg(not(unix))]
                let bytes = {
                    let _ = file;
                    std::fs::read(path)
                };
                let bytes =
                    bytes.with_context(|| format!("cannot read component {}", path.display()))?;
                let verified = match &self.checks {
                    Some(c) => Some(c.verify(&self.manifest.plugin.name, &bytes)?),
                    None => None,
                };
                Ok((Cow::Owned(bytes), verified))
            }
        }
    }

    /// A short description of where it comes from.
    pub fn origin(&self) -> String {
        match &self.source {
            Source::Builtin(_) => "built-in".into(),
            Source::File { path, .. } => path.display().to_string(),
        }
    }
}

/// A plugin name nobody provides.
#[derive(Debug, thiserror::Error)]
#[error("no plugin named '{name}'; available: {}. Install one under a plugin folder or check `silt plugins list`", available.join(", "))]
pub struct UnknownPlugin {
    /// The name asked for.
    pub name: String,
    /// Every plugin name known, in order, for the message.
    pub available: Vec<String>,
}

/// Every plugin found, by name.
#[derive(Debug, Default)]
pub struct Registry {
    entries: BTreeMap<String, Entry>,
    /// Plugin folders that could not be used, with the reason.
    pub problems: Vec<String>,
    /// See [`Registry::fingerprints`].
    prints: BTreeMap<String, String>,
}

impl Registry {
    /// The built-ins plus the plugins under `dirs` (first found wins; a
    /// plugin may not take a built-in's name), checked on every load
    /// against each folder's `plugins.lock` and the keys in `trust`.
    pub fn discover(dirs: &[PathBuf], trust: &Trust) -> Result<Registry> {
        let trust = Arc::new(trust.clone());
        let mut registry = Registry::default();
        for (manifest, bytes) in BUILTINS {
            let manifest = Manifest::parse(manifest, "built-in manifest")?;
            registry.entries.insert(
                manifest.plugin.name.clone(),
                Entry {
                    manifest: Arc::new(manifest),
                    source: Source::Builtin(bytes),
                    checks: None,
                },
            );
        }
        for dir in dirs {
            // no install is half done while this folder is read: its pins
            // and its plugin folders come from the same moment
            let _held = lock::hold_shared(dir);
            let Ok(children) = std::fs::read_dir(dir) else {
                continue;
            };
            // unreadable pins would let every plugin here load unchecked
            let lock = match LockFile::read(dir) {
                Ok(l) => l,
                Err(e) => {
                    registry.problems.push(format!("{}: {e:#}", dir.display()));
                    continue;
                }
            };
            let lock_file = dir.join(lock::LOCK_FILE);
            let mut children: Vec<PathBuf> = children.flatten().map(|e| e.path()).collect();
            children.sort();
            let mut seen = Vec::new();
            // a dot folder is silt's own staging or retired copy (see
            // plugins::install), never a plugin
            for child in children.into_iter().filter(|c| {
                c.join("plugin.toml").is_file()
                    && !c
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            }) {
                match registry.add_dir(&child, &lock, &lock_file, &trust) {
                    Ok(name) => seen.push(name),
                    Err(e) => registry
                        .problems
                        .push(format!("{}: {e:#}", child.display())),
                }
            }
            for name in lock.plugins.keys().filter(|n| !seen.contains(n)) {
                registry.problems.push(format!(
                    "{}: pins plugin '{name}', whose folder is missing or broken; add it again \
                     with `silt plugins update {name}` or drop the pin with `silt plugins \
                     remove {name}`",
                    lock_file.display()
                ));
            }
        }
        registry.prints = registry.take_prints();
        Ok(registry)
    }

    /// Adds the plugin in folder `dir`, pinned by `lock` (read from
    /// `lock_file`) when it names it; returns its name.
    fn add_dir(
        &mut self,
        dir: &Path,
        lock: &LockFile,
        lock_file: &Path,
        trust: &Arc<Trust>,
    ) -> Result<String> {
        let (manifest, manifest_digest) = Manifest::load_with_digest(dir)?;
        let name = manifest.plugin.name.clone();
        if let Some(existing) = self.entries.get(&name) {
            anyhow::bail!(
                "plugin name '{name}' is already taken by {}",
                existing.origin()
            );
        }
        let path = dir.join(manifest.component_file());
        let file = Arc::new(open_component(&path)?);
        let checks = Checks {
            manifest_digest,
            pin: lock
                .plugins
                .get(&name)
                .map(|p| (lock_file.to_path_buf(), p.clone())),
            signature: SignatureFile::read(dir)?,
            trust: trust.clone(),
        };
        self.entries.insert(
            name.clone(),
            Entry {
                manifest: Arc::new(manifest),
                source: Source::File { path, file },
                checks: Some(Arc::new(checks)),
            },
        );
        Ok(name)
    }

    /// The plugin named `name`, or an error listing the names there are.
    pub fn get(&self, name: &str) -> Result<&Entry, UnknownPlugin> {
        self.entries.get(name).ok_or_else(|| UnknownPlugin {
            name: name.into(),
            available: self.entries.keys().cloned().collect(),
        })
    }

    /// What each plugin was when found, by name, to tell a reload what
    /// changed: where it lies, its manifest's digest, its component file's
    /// size and time, its pin and its signature.
    pub fn fingerprints(&self) -> &BTreeMap<String, String> {
        &self.prints
    }

    fn take_prints(&self) -> BTreeMap<String, String> {
        self.entries
            .iter()
            .map(|(name, e)| {
                let print = match (&e.source, &e.checks) {
                    (Source::Builtin(_), _) => "built-in".to_string(),
                    (Source::File { path, file }, checks) => {
                        // the file this entry reads, not whatever the path
                        // names by now
                        let meta = file.metadata().ok();
                        format!(
                            "{} {:?} {:?} {:?} {:?}",
                            path.display(),
                            meta.as_ref().map(|m| m.len()),
                            meta.and_then(|m| m.modified().ok()),
                            checks.as_ref().map(|c| &c.manifest_digest),
                            checks.as_ref().map(|c| (&c.pin, &c.signature)),
                        )
                    }
                };
                (name.clone(), print)
            })
            .collect()
    }

    /// Every plugin found, in name order.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::{self, Mode, Origin};

    /// A valid component that differs by one byte of a custom section.
    fn component(tag: u8) -> Vec<u8> {
        let mut bytes = b"\0asm\x0d\x00\x01\x00".to_vec();
        bytes.extend([0, 3, 1, b't', tag]);
        bytes
    }

    /// A plugin folder `at` holding plugin "p" with component `tag`.
    fn source(at: &Path, tag: u8) -> Origin {
        std::fs::create_dir_all(at).unwrap();
        std::fs::write(
            at.join("plugin.toml"),
            format!(
                "[plugin]\nname = \"p\"\nkind = \"judge\"\ndescription = \"{tag}\"\ncomponent = \"p.wasm\"\n"
            ),
        )
        .unwrap();
        std::fs::write(at.join("p.wasm"), component(tag)).unwrap();
        Origin::parse(at.to_str().unwrap()).unwrap()
    }

    fn put(origin: &Origin, plugins: &Path, mode: Mode) {
        let staged = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(install::fetch(origin, plugins))
            .unwrap();
        install::install(plugins, staged, None, mode).unwrap();
    }

    /// Back-to-back updates while plugins are discovered and loaded, as a
    /// server's reloads and calls do: every load finds the plugin and its
    /// bytes match the pin read with them, old or new.
    #[test]
    fn a_load_during_back_to_back_updates_never_fails() {
        let home = tempfile::tempdir().unwrap();
        let plugins = home.path().join("plugins");
        let sources = [
            source(&home.path().join("a"), 1),
            source(&home.path().join("b"), 2),
        ];
        put(&sources[0], &plugins, Mode::Add);
        let done = std::sync::atomic::AtomicBool::new(false);
        let (mut loads, mut failures) = (0, Vec::new());
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for i in 0..200 {
                    put(&sources[(i + 1) % 2], &plugins, Mode::Update);
                }
                done.store(true, std::sync::atomic::Ordering::SeqCst);
            });
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                let found = Registry::discover(std::slice::from_ref(&plugins), &Trust::default())
                    .and_then(|r| r.get("p").cloned().map_err(Into::into));
                // a call arrives a moment after the reload
                std::thread::sleep(std::time::Duration::from_micros(200));
                match found.and_then(|entry| entry.verified_bytes()) {
                    Ok((bytes, verified)) => {
                        assert!(verified.is_some_and(|v| v.pinned));
                        assert!(bytes[..] == component(1) || bytes[..] == component(2));
                    }
                    Err(e) => failures.push(format!("{e:#}")),
                }
                loads += 1;
            }
        });
        assert!(loads > 20, "only {loads} loads");
        assert!(
            failures.is_empty(),
            "{} of {loads} loads failed, first: {}",
            failures.len(),
            failures[0]
        );
    }
}
