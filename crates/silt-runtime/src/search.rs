//! Search backend plugins: compiled once, instantiated fresh per call (a
//! backend holds no state worth keeping, and a fresh store means one
//! query's failure cannot leak into the next), under the manifest's
//! grants: `wasi:http` only to its granted hosts, only its granted keys.

use std::sync::Arc;

use wasmtime::Store;

use super::failure::PluginFailure;
use super::state::PluginState;
use super::{CallError, Loaded, Runtime};
use crate::bindings::cli_search_backend::CliSearchBackendPluginPre;
use crate::bindings::search_backend::SearchBackendPluginPre;
use crate::bindings::search_backend::silt::search::types::{
    BackendInfo, SearchError, SearchRequest, SearchResult,
};
use silt_plugins::manifest::{Manifest, PluginKind};

/// A backend ready to search.
pub struct LoadedBackend {
    /// Its manifest, as loaded.
    pub manifest: Arc<Manifest>,
    /// What it said about itself when it loaded.
    pub info: BackendInfo,
    plugin: Loaded<BackendPre>,
}

/// A backend's instance template: over `wasi:http`, or driving a CLI
/// through `exec`.
enum BackendPre {
    Http(SearchBackendPluginPre<PluginState>),
    Cli(CliSearchBackendPluginPre<PluginState>),
    /// Built against `silt:search@0.1.0`.
    HttpV0_1(v0_1::SearchBackendPluginPre<PluginState>),
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
            BackendPre::HttpV0_1(pre) => {
                let b = pre.instantiate_async(&mut *store).await?;
                let info = b.silt_search_backend().call_info(store).await?;
                Ok(BackendInfo {
                    name: info.name,
                    pages: info.pages,
                })
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
            BackendPre::HttpV0_1(pre) => {
                let b = pre.instantiate_async(&mut *store).await?;
                let old = v0_1::SearchRequest {
                    query: request.query.clone(),
                    count: request.count,
                    page: request.page,
                };
                let answer = b.silt_search_backend().call_search(store, &old).await?;
                Ok(answer.map(v0_1::result_now).map_err(v0_1::error_now))
            }
        }
    }
}

/// `silt:search@0.1.0` values as the current contract's: 0.2.0 only added
/// usage fields, which a 0.1.0 backend reports as a web service's list
/// with no cost.
mod v0_1 {
    pub use crate::bindings::search_backend_v0_1::SearchBackendPluginPre;
    use crate::bindings::search_backend_v0_1::silt::search::types as old;
    pub use old::SearchRequest;

    use crate::bindings::search_backend::silt::search::types::{
        BackendUsage, Hit, SearchError, SearchResult,
    };

    pub fn result_now(r: old::SearchResult) -> SearchResult {
        SearchResult {
            hits: r
                .hits
                .into_iter()
                .map(|h| Hit {
                    url: h.url,
                    title: h.title,
                    snippet: h.snippet,
                    engines: h.engines,
                    published: h.published,
                })
                .collect(),
            usage: BackendUsage {
                requests: r.usage.requests,
                pages: r.usage.pages,
                stopped: r.usage.stopped,
                unresponsive_engines: r.usage.unresponsive_engines,
                page_errors: r.usage.page_errors,
                hits_source: "results".into(),
                unobserved_links: 0,
                cost_usd: None,
            },
        }
    }

    pub fn error_now(e: old::SearchError) -> SearchError {
        match e {
            old::SearchError::InvalidRequest(m) => SearchError::InvalidRequest(m),
            old::SearchError::NotConfigured(m) => SearchError::NotConfigured(m),
            old::SearchError::Unauthorized(m) => SearchError::Unauthorized(m),
            old::SearchError::RateLimited(m) => SearchError::RateLimited(m),
            old::SearchError::Unavailable(m) => SearchError::Unavailable(m),
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
        let var = |k: &str| format!("{k}={}", silt_config::env::var(k).unwrap_or_default());
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

    /// One query on a fresh instance; a CLI backend's program may be
    /// replaced by `command_fallback` (a variable name) after its own
    /// override.
    pub async fn search(
        &self,
        request: &SearchRequest,
        command_fallback: Option<&str>,
    ) -> Result<SearchResult, BackendFailure> {
        let sandbox = self.plugin.sandbox();
        let plugin = |f: PluginFailure| BackendFailure::Plugin(f.to_string());
        let mut store = sandbox.store().map_err(plugin)?;
        store.data_mut().exec.fallback_var = command_fallback.map(str::to_string);
        let outcome =
            tokio::time::timeout(sandbox.wall(), self.plugin.pre.search(&mut store, request)).await;
        let result = sandbox.finish(&store, outcome).map_err(plugin)?;
        let result = result.map_err(|e| {
            BackendFailure::Search(format!(
                "{} {}",
                self.manifest.plugin.name,
                search_error_text(&e)
            ))
        })?;
        PluginFailure::check_output(&self.manifest.plugin.name, &result, &self.manifest.limits)
            .map_err(plugin)?;
        Ok(result)
    }
}

impl Runtime {
    /// The search backend plugin `name`, loaded once.
    pub async fn search_backend(&self, name: &str) -> Result<Arc<LoadedBackend>, CallError> {
        self.load(name, || async {
            let manifest = self.registry().get(name)?.manifest.clone();
            // a backend granted programs drives a CLI; the others reach the web
            let plugin = if manifest.grants.exec.is_empty() {
                // the current contract, else the previous one (docs/PLUGINS.md)
                self.prepare(
                    name,
                    PluginKind::Search,
                    &self.linkers.web,
                    "silt:search@0.2.0 (or 0.1.0)",
                    |pre| {
                        SearchBackendPluginPre::new(pre.clone())
                            .map(BackendPre::Http)
                            .or_else(|current| {
                                // a backend that fits neither hears why it
                                // does not fit the current contract
                                v0_1::SearchBackendPluginPre::new(pre)
                                    .map(BackendPre::HttpV0_1)
                                    .map_err(|_| current)
                            })
                    },
                )?
            } else {
                self.prepare(
                    name,
                    PluginKind::Search,
                    &self.linkers.cli,
                    "silt:search@0.2.0 (with exec)",
                    |pre| CliSearchBackendPluginPre::new(pre).map(BackendPre::Cli),
                )?
            };
            if matches!(plugin.pre, BackendPre::HttpV0_1(_)) {
                tracing::info!("search backend '{name}' is built against silt:search@0.1.0");
            }
            let sandbox = plugin.sandbox();
            let mut store = sandbox.store()?;
            let outcome = tokio::time::timeout(sandbox.wall(), plugin.pre.info(&mut store)).await;
            let info = sandbox.finish(&store, outcome)?;
            Ok(LoadedBackend {
                manifest: plugin.manifest.clone(),
                info,
                plugin,
            })
        })
        .await
    }
}
