//! A search backend written against `silt:search@0.1.0` as released: no
//! network, it answers every query with the same two hits, so a test can
//! tell that silt loaded it through its 0.1.0 bindings and converted what
//! it returned.

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

wit_bindgen::generate!({
    path: "../../../wit/compat/search-0.1.0",
    world: "silt:search/search-backend-plugin",
});

use exports::silt::search::backend::Guest;
use silt::search::types::{
    BackendInfo, BackendUsage, Hit, SearchError, SearchRequest, SearchResult,
};

struct Backend;

impl Guest for Backend {
    fn info() -> BackendInfo {
        BackendInfo {
            name: "old-search".into(),
            pages: false,
        }
    }

    fn search(request: SearchRequest) -> Result<SearchResult, SearchError> {
        if request.query.trim().is_empty() {
            return Err(SearchError::InvalidRequest("empty query".into()));
        }
        let hit = |n: u32| Hit {
            url: format!("https://old.example/{n}"),
            title: format!("{} ({n})", request.query),
            snippet: format!("page {n} about {}", request.query),
            engines: vec![],
            published: None,
        };
        Ok(SearchResult {
            hits: (1..=2).take(request.count as usize).map(hit).collect(),
            usage: BackendUsage {
                requests: 1,
                pages: 1,
                stopped: "single".into(),
                unresponsive_engines: vec![],
                page_errors: vec![],
            },
        })
    }
}

export!(Backend);
