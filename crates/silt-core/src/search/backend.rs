//! What a search backend is, whatever carries its requests: the transport
//! it is given, and what it returns.

/// A reply to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Fetched {
    pub status: u16,
    pub body: Vec<u8>,
}

/// Why a request got no reply.
#[derive(Debug, Clone, PartialEq)]
pub enum FetchError {
    /// No connection (refused, DNS, reset).
    Connect(String),
    /// No reply within the time given.
    Timeout,
    /// The sandbox refused it: the host was not granted.
    Denied(String),
}

/// The transport: `wasi:http` in a backend component, a script in tests.
pub trait Fetch {
    /// GETs `url` with `headers`, waiting at most `timeout_ms`.
    fn get(
        &mut self,
        url: &str,
        headers: &[(&str, &str)],
        timeout_ms: u64,
    ) -> Result<Fetched, FetchError>;
    /// A monotonic clock in milliseconds.
    fn now_ms(&mut self) -> u64;
}

/// What one backend call cost and how it ended.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BackendUsage {
    /// HTTP requests made, retries included.
    pub requests: u32,
    /// Result pages read.
    pub pages: u32,
    /// Why paging stopped: `count`, `no_new`, `pages`, `deadline`,
    /// `page_error` (or `single` for a backend that does not page).
    pub stopped: String,
    /// Upstream engines the backend reported as not answering.
    pub unresponsive_engines: Vec<String>,
    /// Failures of pages after the first (their earlier pages are kept).
    pub page_errors: Vec<String>,
}

/// A backend call's hits and usage.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BackendOutcome {
    pub hits: Vec<super::pool::Hit>,
    pub usage: BackendUsage,
}

/// Why a backend call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BackendError {
    /// The request itself is wrong (empty query, bad count).
    #[error("invalid search request: {0}")]
    InvalidRequest(String),
    /// The backend is not set up: no URL, no key.
    #[error("search backend not configured: {0}")]
    NotConfigured(String),
    /// The service refused the key.
    #[error("search backend refused the key: {0}")]
    Unauthorized(String),
    /// The service limited the rate.
    #[error("search backend rate-limited: {0}")]
    RateLimited(String),
    /// The service could not be reached or answered badly.
    #[error("search backend unavailable: {0}")]
    Unavailable(String),
}
