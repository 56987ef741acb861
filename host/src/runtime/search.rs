//! Search backend plugins: compiled once, instantiated fresh per call (a
//! backend holds no state worth keeping, and a fresh store means one
//! query's failure cannot leak into the next), under the manifest's
//! grants: `wasi:http` only to its granted hosts, only its granted keys.

use std::sync::Arc;

use wasmtime::Engine;

use super::failure::PluginFailure;
use super::state::PluginState;
use super::{CallError, Runtime, Sandbox};
use crate::bindings::search_backend::silt::search::types::{
    BackendInfo, SearchError, SearchRequest, SearchResult,
};
use crate::bindings::search_backend::{SearchBackendPlugin, SearchBackendPluginPre};
use crate::plugins::manifest::{Manifest, PluginKind};

/// A backend ready to search.
pub struct LoadedBackend {
    pub manifest: Arc<Manifest>,
    pub info: BackendInfo,
    engine: Engine,
    pre: SearchBackendPluginPre<PluginState>,
}

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
    /// values of the environment it is granted (hashed into the key, never
    /// stored or shown).
    pub fn config_fingerprint(&self) -> String {
        self.manifest
            .grants
            .env
            .iter()
            .map(|k| format!("{k}={}", std::env::var(k).unwrap_or_default()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn sandbox(&self) -> Sandbox<'_> {
        Sandbox {
            engine: &self.engine,
            manifest: &self.manifest,
        }
    }

    /// One query on a fresh instance.
    pub async fn search(&self, request: &SearchRequest) -> Result<SearchResult, BackendFailure> {
        let sandbox = self.sandbox();
        let plugin = |f: PluginFailure| BackendFailure::Plugin(f.to_string());
        let mut store = sandbox.store(None).map_err(plugin)?;
        let outcome = tokio::time::timeout(sandbox.wall(), async {
            let backend: SearchBackendPlugin = self.pre.instantiate_async(&mut store).await?;
            backend
                .silt_search_backend()
                .call_search(&mut store, request)
                .await
        })
        .await;
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
                let pre = self
                    .judge_linker
                    .instantiate_pre(&component)
                    .and_then(SearchBackendPluginPre::new)
                    .map_err(|e| PluginFailure::Start {
                        plugin: name.into(),
                        reason: format!(
                            "it does not fit the search contract silt:search@0.1.0: {e}"
                        ),
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
                let outcome = tokio::time::timeout(sandbox.wall(), async {
                    let backend = loaded.pre.instantiate_async(&mut store).await?;
                    backend.silt_search_backend().call_info(&mut store).await
                })
                .await;
                loaded.info = sandbox.finish(&store, outcome)?;
                Ok::<_, CallError>(Arc::new(loaded))
            })
            .await?;
        Ok(backend.clone())
    }
}
