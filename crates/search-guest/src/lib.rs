//! What every search backend component shares: the `silt:search` types as
//! wit-bindgen generates them (backends name them with `with`), their
//! conversions to and from `silt_core::search`, and [`WasiFetch`], the
//! transport `silt_core`'s backend rules run over inside the sandbox.

#![deny(missing_docs)]

// Generated from the WIT contracts (wit/search), which carry the docs.
#[allow(missing_docs)]
mod bindings {
    wit_bindgen::generate!({
        inline: "package silt:search-guest; world types { import silt:search/types@0.2.0; }",
        path: "../../wit/search",
        world: "silt:search-guest/types",
        generate_all,
    });
}

pub use bindings::silt;
pub use silt::search::types;

mod fetch;
pub use fetch::WasiFetch;

use silt_core::search as core;

impl From<core::Hit> for types::Hit {
    fn from(h: core::Hit) -> Self {
        types::Hit {
            url: h.url,
            title: h.title,
            snippet: h.snippet,
            engines: h.engines,
            published: h.published,
        }
    }
}

impl From<core::BackendUsage> for types::BackendUsage {
    fn from(u: core::BackendUsage) -> Self {
        types::BackendUsage {
            requests: u.requests,
            pages: u.pages,
            stopped: u.stopped,
            unresponsive_engines: u.unresponsive_engines,
            page_errors: u.page_errors,
            hits_source: u.hits_source,
            unobserved_links: u.unobserved_links,
            cost_usd: u.cost_usd,
        }
    }
}

impl From<core::BackendOutcome> for types::SearchResult {
    fn from(o: core::BackendOutcome) -> Self {
        types::SearchResult {
            hits: o.hits.into_iter().map(Into::into).collect(),
            usage: o.usage.into(),
        }
    }
}

impl From<core::BackendError> for types::SearchError {
    fn from(e: core::BackendError) -> Self {
        use core::BackendError as E;
        match e {
            E::InvalidRequest(m) => types::SearchError::InvalidRequest(m),
            E::NotConfigured(m) => types::SearchError::NotConfigured(m),
            E::Unauthorized(m) => types::SearchError::Unauthorized(m),
            E::RateLimited(m) => types::SearchError::RateLimited(m),
            E::Unavailable(m) => types::SearchError::Unavailable(m),
        }
    }
}

/// Checks a request's query and count before any network use.
pub fn validate(request: &types::SearchRequest) -> Result<(), types::SearchError> {
    if request.query.trim().is_empty() {
        return Err(types::SearchError::InvalidRequest(
            "the query is empty".into(),
        ));
    }
    if !(1..=50).contains(&request.count) {
        return Err(types::SearchError::InvalidRequest(format!(
            "count is {}, it must be 1 to 50",
            request.count
        )));
    }
    Ok(())
}

/// A granted environment variable, trimmed; None when unset or empty.
pub fn granted_env(name: &str) -> Option<String> {
    wasi::cli::environment::get_environment()
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.trim().to_string())
        .filter(|v| !v.is_empty())
}
