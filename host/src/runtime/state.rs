//! What one plugin call's `Store` holds: its WASI view (built from the
//! manifest's grants), its limits, and for engines the judge it may ask.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use wasmtime::ResourceLimiter;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, ResourceTable, WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::http_policy::{HttpPolicy, PolicyHooks};
use super::judge::LoadedJudge;
use crate::plugins::manifest::Manifest;

/// How much of a guest's stderr is kept, to explain a trap.
const STDERR_KEEP: usize = 16 << 10;

/// Refuses memory growth past a plugin's cap, remembering that it did so
/// the failure can be reported as a memory limit rather than a bare trap.
#[derive(Debug)]
pub struct MemoryCap {
    pub max_bytes: usize,
    pub denied: bool,
    /// The largest linear memory the guest has asked for, for benchmarks.
    pub peak: usize,
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.peak = self.peak.max(desired);
        if desired > self.max_bytes {
            self.denied = true;
            wasmtime::bail!("memory limit of {} MiB reached", self.max_bytes >> 20);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 20)
    }
}

/// The state of one store.
pub struct PluginState {
    pub plugin: String,
    wasi: WasiCtx,
    table: ResourceTable,
    http: WasiHttpCtx,
    hooks: PolicyHooks,
    pub stderr: MemoryOutputPipe,
    pub memory: MemoryCap,
    /// Epoch ticks (10 ms of guest execution each) used and allowed.
    pub ticks_used: u64,
    pub tick_budget: u64,
    /// The judge an engine's `silt:judge` import forwards to.
    pub judge: Option<Arc<LoadedJudge>>,
    /// The time engines see through `silt:host/clock` (None: the system clock).
    pub fixed_now: Option<f64>,
    /// Lesson pairs the engine has had related so far, when someone is
    /// watching a long sleep pass (progress notifications).
    pub related_pairs: Option<Arc<AtomicU64>>,
    /// Where an engine's judge questions look for earlier answers.
    pub answers: Option<Arc<super::answer_cache::AnswerCache>>,
    /// Where the ledger engine's vectors are kept between processes.
    pub vectors: Option<Arc<dyn VectorKeeper>>,
    /// Calls actually made to the judge, and items answered from the cache.
    pub judge_calls: u32,
    pub cache_hits: u32,
    /// The repository a grep call may walk and read, once walked.
    pub repo: Option<RepoGrant>,
    /// Steps of work done (files read, sources fetched, items judged),
    /// when someone is watching a long grep or verify call.
    pub steps: Option<Arc<crate::progress::Stages>>,
    /// Where a verify call's `sources` import fetches from.
    pub sources: Option<Arc<crate::fetch::SourceFetcher>>,
    /// The programs a CLI search backend may run.
    pub exec: super::exec::ExecGrants,
}

/// Keeps a judge's vectors for texts between calls and processes (the
/// ledger file), so an unchanged text is embedded once.
pub trait VectorKeeper: Send + Sync {
    /// The kept vector of each text under `model`, and the model's
    /// calibrated cosines (same, related, unrelated) when known.
    fn lookup(&self, model: &str, texts: &[String]) -> (Vec<Option<Vec<f32>>>, Option<[f64; 3]>);
    /// Keeps vectors the judge just gave.
    fn remember(&self, model: &str, texts: &[String], vectors: &[Vec<f32>], calibration: [f64; 3]);
}

/// A folder an engine may walk and read for this call only.
#[derive(Debug, Clone)]
pub struct RepoGrant {
    pub root: std::path::PathBuf,
    /// The name of a cache folder inside the root, never walked.
    pub cache_dir: String,
    pub walked: Option<Vec<crate::walk::WalkedFile>>,
    /// The walk's text files by path (relative): all `read` may open.
    pub readable: std::collections::HashMap<String, std::path::PathBuf>,
    /// The root, opened when walked: every read resolves beneath it.
    pub beneath: Option<Arc<crate::beneath::Beneath>>,
    /// What the call could not read in full, for its answer.
    pub notes: Arc<std::sync::Mutex<WalkNotes>>,
}

/// What a grep left out or read only in part.
#[derive(Debug, Clone, Default)]
pub struct WalkNotes {
    /// Entries not ranked at all, and why.
    pub skipped: Vec<crate::walk::Skipped>,
    /// Files over the read cap, ranked on their head only.
    pub read_in_part: std::collections::BTreeSet<String>,
}

impl RepoGrant {
    /// A grant of `root`, not yet walked.
    pub fn new(root: std::path::PathBuf, cache_dir: &str) -> Self {
        RepoGrant {
            root,
            cache_dir: cache_dir.to_string(),
            walked: None,
            readable: Default::default(),
            beneath: None,
            notes: Default::default(),
        }
    }
}

/// The `wasi:http` grants with each `env:VAR` entry replaced by the
/// `host:port` of the URL in VAR (nothing when VAR is unset or not a URL:
/// the plugin then reaches no server of the user's choosing).
pub fn http_grants(entries: &[String], env: impl Fn(&str) -> Option<String>) -> Vec<String> {
    entries
        .iter()
        .filter_map(|e| match e.strip_prefix("env:") {
            None => Some(e.clone()),
            Some(var) => {
                let raw = env(var)?;
                let url = url::Url::parse(raw.trim()).ok()?;
                // the policy compares hosts without IPv6 brackets
                let host = url
                    .host_str()?
                    .trim_start_matches('[')
                    .trim_end_matches(']');
                Some(format!("{host}:{}", url.port_or_known_default()?))
            }
        })
        .collect()
}

impl PluginState {
    /// Counts `n` steps of work for whoever watches the call.
    pub fn step(&self, n: u64) {
        if let Some(c) = &self.steps {
            c.advance(n);
        }
    }

    /// A state whose WASI view grants exactly what `manifest` says.
    pub fn new(manifest: &Manifest) -> anyhow::Result<Self> {
        let mut wasi = WasiCtx::builder();
        let stderr = MemoryOutputPipe::new(STDERR_KEEP);
        wasi.stderr(stderr.clone());
        for dir in &manifest.grants.read {
            let guest = dir
                .to_str()
                .ok_or_else(|| anyhow::anyhow!("grant {} is not UTF-8", dir.display()))?;
            wasi.preopened_dir(dir, guest, FsPerms::ReadOnly)
                .map_err(|e| {
                    anyhow::anyhow!(
                        "plugin '{}' is granted {} but it cannot be opened: {e}",
                        manifest.plugin.name,
                        dir.display()
                    )
                })?;
        }
        for name in &manifest.grants.models {
            let dir = crate::models::installed(name)?;
            wasi.preopened_dir(&dir, format!("/models/{name}"), FsPerms::ReadOnly)
                .map_err(|e| {
                    anyhow::anyhow!(
                        "plugin '{}' is granted model '{name}' but {} cannot be opened: {e}",
                        manifest.plugin.name,
                        dir.display()
                    )
                })?;
        }
        for key in &manifest.grants.env {
            if let Ok(value) = std::env::var(key) {
                wasi.env(key, &value);
            }
        }
        Ok(PluginState {
            plugin: manifest.plugin.name.clone(),
            wasi: wasi.build(),
            table: ResourceTable::new(),
            http: WasiHttpCtx::new(),
            hooks: PolicyHooks {
                policy: HttpPolicy::new(&http_grants(&manifest.grants.http, |v| {
                    std::env::var(v).ok()
                })),
            },
            stderr,
            memory: MemoryCap {
                max_bytes: (manifest.limits.memory_mib << 20) as usize,
                denied: false,
                peak: 0,
            },
            ticks_used: 0,
            tick_budget: manifest.limits.cpu_ms.div_ceil(super::TICK_MS).max(1),
            judge: None,
            fixed_now: None,
            related_pairs: None,
            answers: None,
            vectors: None,
            judge_calls: 0,
            cache_hits: 0,
            repo: None,
            sources: None,
            steps: None,
            exec: super::exec::ExecGrants::new(manifest),
        })
    }

    /// The guest's last words on stderr (a panic's location and message,
    /// usually), without Rust's backtrace hint.
    pub fn stderr_tail(&self) -> Option<String> {
        let bytes = self.stderr.contents();
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("note: run with `RUST_BACKTRACE"))
            .collect();
        (!lines.is_empty()).then(|| lines[lines.len().saturating_sub(2)..].join(" "))
    }
}

impl WasiView for PluginState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for PluginState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.hooks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_http_grants_become_the_host_and_port_of_the_url() {
        let env = |v: &str| match v {
            "LOCAL" => Some(" http://127.0.0.1:8888/searx ".to_string()),
            "REMOTE" => Some("https://search.example".to_string()),
            "V6" => Some("http://[::1]:8888".to_string()),
            "BAD" => Some("not a url".to_string()),
            _ => None,
        };
        let entries: Vec<String> = [
            "api.example.com",
            "env:LOCAL",
            "env:REMOTE",
            "env:V6",
            "env:BAD",
            "env:UNSET",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            http_grants(&entries, env),
            [
                "api.example.com",
                "127.0.0.1:8888",
                "search.example:443",
                "::1:8888"
            ]
        );
    }
}
