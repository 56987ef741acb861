//! The plugins silt knows: built-ins embedded in the binary, then every
//! folder holding a `plugin.toml` under the plugin directories.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};

use super::manifest::Manifest;

/// Built-in plugins: (manifest, component bytes).
const BUILTINS: &[(&str, &[u8])] = &[
    (
        include_str!("../../builtin/lexical.toml"),
        include_bytes!(env!("SILT_WASM_SILT_JUDGE_LEXICAL")),
    ),
    (
        include_str!("../../builtin/embedding.toml"),
        include_bytes!(env!("SILT_WASM_SILT_JUDGE_EMBEDDING")),
    ),
    (
        include_str!("../../builtin/embedding-static.toml"),
        include_bytes!(env!("SILT_WASM_SILT_JUDGE_EMBEDDING")),
    ),
    (
        include_str!("../../builtin/openai.toml"),
        include_bytes!(env!("SILT_WASM_SILT_JUDGE_OPENAI")),
    ),
    (
        include_str!("../../builtin/llm.toml"),
        include_bytes!(env!("SILT_WASM_SILT_JUDGE_LLM")),
    ),
    (
        include_str!("../../builtin/ask.toml"),
        include_bytes!(env!("SILT_WASM_SILT_ASK")),
    ),
    (
        include_str!("../../builtin/verify.toml"),
        include_bytes!(env!("SILT_WASM_SILT_VERIFY")),
    ),
    (
        include_str!("../../builtin/ledger.toml"),
        include_bytes!(env!("SILT_WASM_SILT_LEDGER")),
    ),
    (
        include_str!("../../builtin/searxng.toml"),
        include_bytes!(env!("SILT_WASM_SILT_SEARCH_SEARXNG")),
    ),
    (
        include_str!("../../builtin/brave.toml"),
        include_bytes!(env!("SILT_WASM_SILT_SEARCH_BRAVE")),
    ),
    // one component drives either CLI: the one its manifest grants
    (
        include_str!("../../builtin/claude.toml"),
        include_bytes!(env!("SILT_WASM_SILT_SEARCH_CLI")),
    ),
    (
        include_str!("../../builtin/codex.toml"),
        include_bytes!(env!("SILT_WASM_SILT_SEARCH_CLI")),
    ),
];

/// Where a plugin's component comes from.
#[derive(Debug, Clone)]
pub enum Source {
    Builtin(&'static [u8]),
    File(PathBuf),
}

/// One known plugin.
#[derive(Debug, Clone)]
pub struct Entry {
    pub manifest: Arc<Manifest>,
    pub source: Source,
}

impl Entry {
    /// The component's bytes.
    pub fn bytes(&self) -> Result<Cow<'static, [u8]>> {
        match &self.source {
            Source::Builtin(b) => Ok(Cow::Borrowed(b)),
            Source::File(path) => std::fs::read(path)
                .map(Cow::Owned)
                .with_context(|| format!("cannot read component {}", path.display())),
        }
    }

    /// A short description of where it comes from.
    pub fn origin(&self) -> String {
        match &self.source {
            Source::Builtin(_) => "built-in".into(),
            Source::File(p) => p.display().to_string(),
        }
    }
}

/// A plugin name nobody provides.
#[derive(Debug, thiserror::Error)]
#[error("no plugin named '{name}'; available: {}. Install one under a plugin folder or check `silt plugins list`", available.join(", "))]
pub struct UnknownPlugin {
    pub name: String,
    pub available: Vec<String>,
}

/// Every plugin found, by name.
#[derive(Debug, Default)]
pub struct Registry {
    entries: BTreeMap<String, Entry>,
    /// Plugin folders that could not be used, with the reason.
    pub problems: Vec<String>,
}

impl Registry {
    /// The built-ins plus the plugins under `dirs` (first found wins; a
    /// plugin may not take a built-in's name).
    pub fn discover(dirs: &[PathBuf]) -> Result<Registry> {
        let mut registry = Registry::default();
        for (manifest, bytes) in BUILTINS {
            let manifest = Manifest::parse(manifest, "built-in manifest")?;
            registry.entries.insert(
                manifest.plugin.name.clone(),
                Entry {
                    manifest: Arc::new(manifest),
                    source: Source::Builtin(bytes),
                },
            );
        }
        for dir in dirs {
            let Ok(children) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut children: Vec<PathBuf> = children.flatten().map(|e| e.path()).collect();
            children.sort();
            for child in children
                .into_iter()
                .filter(|c| c.join("plugin.toml").is_file())
            {
                if let Err(e) = registry.add_dir(&child) {
                    registry
                        .problems
                        .push(format!("{}: {e:#}", child.display()));
                }
            }
        }
        Ok(registry)
    }

    /// Adds the plugin in folder `dir`.
    pub fn add_dir(&mut self, dir: &Path) -> Result<()> {
        let manifest = Manifest::load(dir)?;
        let name = manifest.plugin.name.clone();
        if let Some(existing) = self.entries.get(&name) {
            anyhow::bail!(
                "plugin name '{name}' is already taken by {}",
                existing.origin()
            );
        }
        let file = manifest
            .plugin
            .component
            .clone()
            .unwrap_or_else(|| format!("{name}.wasm").into());
        let path = dir.join(file);
        if !path.is_file() {
            anyhow::bail!("its component {} does not exist", path.display());
        }
        self.entries.insert(
            name,
            Entry {
                manifest: Arc::new(manifest),
                source: Source::File(path),
            },
        );
        Ok(())
    }

    pub fn get(&self, name: &str) -> Result<&Entry, UnknownPlugin> {
        self.entries.get(name).ok_or_else(|| UnknownPlugin {
            name: name.into(),
            available: self.entries.keys().cloned().collect(),
        })
    }

    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }
}
