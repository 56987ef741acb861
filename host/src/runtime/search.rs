//! Search backend plugins: compiled once, instantiated fresh per call (a
//! backend holds no state worth keeping, and a fresh store means one
//! query's failure cannot leak into the next), under the manifest's
//! grants: `wasi:http` only to its granted hosts, only its granted keys.

use std::sync::Arc;

use wasmtime::{Engine, Store};

use super::failure::PluginFailure;
use super::state::PluginState;
use super::{CallError, Runtime, Sandbox};
use crate::bindings::cli_search_backend::CliSearchBackendPluginPre;
use crate::bindings::search_backend::SearchBackendPluginPre;
use crate::bindings::search_backend::silt::search::types::{
    BackendInfo, SearchError, SearchRequest, SearchResult,
};
use crate::plugins::manifest::{Manifest, PluginKind};

/// A backend ready to search.
pub struct LoadedBackend {
    pub manifest: Arc<Manifest>,
    pub info: BackendInfo,
    engine: Engine,
    pre: BackendPre,
}

/// A backend's instance template: over `wasi:http`, or driving a CLI
/// through `exec`.
enum BackendPre {
    Http(SearchBackendPluginPre<PluginState>),
    Cli(CliSearchBackendPluginPre<PluginState>),
}

impl BackendPre {
    async fn info(&self, store: &mut Store<PluginState>) -> wasmtime::Result<BackendInfo> {
        match self {
            BackendPre::Http(pre) => {
                let b = pre.instantiate_async(&mut *store).await?;
                b.silt_search_backend().call_info(store).await
            }
            BackendPre::Cli(pre) => {
                let b = pre.instantiate_async(&mut *store).await?;
                b.silt_search_backend().call_info(store).await
            }
        }
    }

    async fn search(
        &self,
        store: &mut Store<PluginState>,
        request: &SearchRequest,
    ) -> wasmtime::Result<Result<SearchResult, SearchError>> {
        match self {
            BackendPre::Http(pre) => {
                let b = pre.instantiate_async(&mut *store).await?;
                b.silt_search_backend().call_search(store, request).await
            }
            BackendPre::Cli(pre) => {
                let b = pre.instantiate_async(&mut *store).await?;
                b.silt_search_backend().call_search(store, request).await
            }
        }
    }
}

/// The variable `sieve_search` lets replace any CLI backend's command line
/// after the backend's own (the search chain reads only the backend's own).
pub const GENERIC_COMMAND_VAR: &str = "SILT_SEARCH_CMD";

/// Why a backend call gave no result.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BackendFailure {
    /// The backend answered with an error.
    #[error("{0}")]
    Search(String),
    /// The sandbox stopped it (a trap, a limit, a timeout).
    #[error("{0}")]
    Plugin(String),
}

fn search_error_text(e: &SearchError) -> String {
    match e {
        SearchError::InvalidRequest(m) => format!("invalid request: {m}"),
        SearchError::NotConfigured(m) => format!("not configured: {m}"),
        SearchError::Unauthorized(m) => format!("unauthorized: {m}"),
        SearchError::RateLimited(m) => format!("rate-limited: {m}"),
        SearchError::Unavailable(m) => format!("unavailable: {m}"),
    }
}

impl LoadedBackend {
    /// The identity of this backend's configuration, for cache keys: the
    /// values of the environment it is granted and of its programs'
    /// command-line overrides (hashed into the key, never stored or shown).
    pub fn config_fingerprint(&self, command_fallback: Option<&str>) -> String {
        let var = |k: &str| format!("{k}={}", std::env::var(k).unwrap_or_default());
        let grants = &self.manifest.grants;
        grants
            .env
            .iter()
            .map(|k| var(k))
            .chain(grants.exec.iter().flat_map(|(program, g)| {
                let overrides = g
                    .override_var
                    .iter()
                    .map(String::as_str)
                    .chain(command_fallback);
                std::iter::once(format!("exec {program}")).chain(overrides.map(var))
            }))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn sandbox(&self) -> Sandbox<'_> {
        Sandbox {
            engine: &self.engine,
            manifest: &self.manifest,
        }
    }

    /// One query on a fresh instance; a CLI backend's program may be
    /// replaced by `command_fallback` (a variable name) after its own
    /// override.
    pub async fn search(
        &self,
        request: &SearchRequest,
        command_fallback: Option<&str>,
    ) -> Result<SearchResult, BackendFailure> {
        let sandbox = self.sandbox();
        let plugin = |f: PluginFailure| BackendFailure::Plugin(f.to_string());
        let mut store = sandbox.store(None).map_err(plugin)?;
        store.data_mut().exec.fallback_var = command_fallback.map(str::to_string);
        let outcome =
            tokio::time::timeout(sandbox.wall(), self.pre.search(&mut store, request)).await;
        let result = sandbox.finish(&store, outcome).map_err(plugin)?;
        let result = result.map_err(|e| {
            BackendFailure::Search(format!(
                "{} {}",
                self.manifest.plugin.name,
                search_error_text(&e)
            ))
        })?;
        let size: usize = result
            .hits
            .iter()
            .map(|h| h.url.len() + h.title.len() + h.snippet.len() + 32)
            .sum();
        PluginFailure::check_output(&self.manifest.plugin.name, size, &self.manifest.limits)
            .map_err(plugin)?;
        Ok(result)
    }
}

impl Runtime {
    /// The search backend plugin `name`, loaded once.
    pub async fn search_backend(&self, name: &str) -> Result<Arc<LoadedBackend>, CallError> {
        let cell = {
            let mut backends = self.backends.lock().expect("backend table lock");
            backends.entry(name.to_string()).or_default().clone()
        };
        let backend = cell
            .get_or_try_init(|| async {
                let (manifest, component) = self.component(name)?;
                if manifest.plugin.kind != PluginKind::Search {
                    return Err(CallError::InvalidRequest(format!(
                        "plugin '{name}' is not a search backend (it is a {:?} plugin)",
                        manifest.plugin.kind
                    )));
                }
                // a backend granted programs drives a CLI; the others
                // reach the web
                let pre = if manifest.grants.exec.is_empty() {
                    self.judge_linker
                        .instantiate_pre(&component)
                        .and_then(SearchBackendPluginPre::new)
                        .map(BackendPre::Http)
                } else {
                    self.cli_linker
                        .instantiate_pre(&component)
                        .and_then(CliSearchBackendPluginPre::new)
                        .map(BackendPre::Cli)
                };
                let pre = pre.map_err(|e| PluginFailure::Start {
                    plugin: name.into(),
                    reason: format!("it does not fit the search contract silt:search@0.2.0: {e}"),
                })?;
                let mut loaded = LoadedBackend {
                    manifest,
                    info: BackendInfo {
                        name: name.into(),
                        pages: false,
                    },
                    engine: self.engine.clone(),
                    pre,
                };
                let sandbox = loaded.sandbox();
                let mut store = sandbox.store(None)?;
                let outcome =
                    tokio::time::timeout(sandbox.wall(), loaded.pre.info(&mut store)).await;
                loaded.info = sandbox.finish(&store, outcome)?;
                Ok::<_, CallError>(Arc::new(loaded))
            })
            .await?;
        Ok(backend.clone())
    }
}
