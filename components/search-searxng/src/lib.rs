//! The SearXNG backend: a SearXNG instance's JSON API, at the URL in its
//! granted `SILT_SEARXNG_URL`, reached only through `wasi:http` (the host
//! lets it reach that instance and nothing else). Paging, retry, deadline
//! and early-stop rules are `silt_core::search::searxng`'s.

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
use silt_core::search::searxng::{self, MAX_PAGES, Settings};

struct Searxng;

/// The longest query deadline: under the built-in manifest's 45 s wall.
const MAX_DEADLINE_MS: u64 = 40_000;

/// A positive whole number from a granted variable, else `default`.
fn number(name: &str, default: u64) -> Result<u64, SearchError> {
    match granted_env(name) {
        None => Ok(default),
        Some(v) => v.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
            SearchError::NotConfigured(format!("{name} is '{v}'; set a positive whole number"))
        }),
    }
}

impl Guest for Searxng {
    fn info() -> BackendInfo {
        BackendInfo {
            name: "searxng".into(),
            pages: true,
        }
    }

    fn search(request: SearchRequest) -> Result<SearchResult, SearchError> {
        search_guest::validate(&request)?;
        let base = granted_env("SILT_SEARXNG_URL").ok_or_else(|| {
            SearchError::NotConfigured(
                "SILT_SEARXNG_URL is not set; set it to your instance, e.g. http://127.0.0.1:8888"
                    .into(),
            )
        })?;
        let mut settings = Settings::new(&base);
        settings.max_pages = number("SILT_SEARXNG_MAX_PAGES", u64::from(settings.max_pages))?
            .min(u64::from(MAX_PAGES)) as u32;
        // seconds, as the reference's variables
        settings.request_timeout_ms =
            number("SILT_SEARXNG_TIMEOUT", settings.request_timeout_ms / 1000)? * 1000;
        // the sandbox stops the call at the manifest's 45 s wall, which would
        // lose the pages already read: the query's deadline stays under it
        settings.deadline_ms = (number("SILT_SEARXNG_DEADLINE", settings.deadline_ms / 1000)?
            * 1000)
            .min(MAX_DEADLINE_MS);
        settings.request_timeout_ms = settings.request_timeout_ms.min(settings.deadline_ms);
        searxng::search(
            &mut WasiFetch,
            &settings,
            request.query.trim(),
            request.count,
            request.page,
        )
        .map(Into::into)
        .map_err(Into::into)
    }
}

export!(Searxng);
