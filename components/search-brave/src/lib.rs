//! The Brave Search backend: the Brave API with the key in its granted
//! `BRAVE_API_KEY`, reached only through `wasi:http` (the host lets it
//! reach api.search.brave.com and nothing else). `SILT_BRAVE_ENDPOINT`,
//! when granted, replaces the endpoint (a proxy, or a test server).

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

wit_bindgen::generate!({
    path: "../../wit/search",
    world: "silt:search/search-backend-plugin",
    with: { "silt:search/types@0.2.0": search_guest::types },
});

use exports::silt::search::backend::Guest;
use search_guest::types::{BackendInfo, SearchError, SearchRequest, SearchResult};
use search_guest::{WasiFetch, granted_env};
use silt_core::search::brave;

struct Brave;

impl Guest for Brave {
    fn info() -> BackendInfo {
        BackendInfo {
            name: "brave".into(),
            pages: false,
        }
    }

    fn search(request: SearchRequest) -> Result<SearchResult, SearchError> {
        search_guest::validate(&request)?;
        let key = granted_env("BRAVE_API_KEY").ok_or_else(|| {
            SearchError::NotConfigured(
                "BRAVE_API_KEY is not set; put it in ~/.config/silt/env".into(),
            )
        })?;
        let endpoint = granted_env("SILT_BRAVE_ENDPOINT").unwrap_or_else(|| brave::ENDPOINT.into());
        brave::search(
            &mut WasiFetch,
            &endpoint,
            &key,
            request.query.trim(),
            request.count,
            request.page,
        )
        .map(Into::into)
        .map_err(Into::into)
    }
}

export!(Brave);
