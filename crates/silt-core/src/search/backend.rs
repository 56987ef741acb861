//! What a search backend is, whatever carries its requests: the transport
//! it is given, and what it returns.

/// A reply to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Fetched {
    /// The HTTP status code.
    pub status: u16,
    /// The response body, as received.
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
    /// Where the hits were read: `results`, `events`, `tool_results` or
    /// `transcript` (see [`HitsSource`]).
    pub hits_source: String,
    /// Links the model's reply named that no search result carried.
    pub unobserved_links: u32,
    /// What the service reported the call cost, in US dollars.
    pub cost_usd: Option<f64>,
}

/// Where a backend read its hits, from most to least trustworthy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HitsSource {
    /// The service's own result list (SearXNG, Brave).
    Results,
    /// A CLI's web-search events (Codex `web_search` items).
    Events,
    /// A CLI's search tool results (Claude Code's WebSearch).
    ToolResults,
    /// Parsed from the model's written reply: titles transcribed, no
    /// snippets, links the model may have made up.
    Transcript,
}

impl HitsSource {
    /// The name in `usage.hits_source`.
    pub fn as_str(self) -> &'static str {
        match self {
            HitsSource::Results => "results",
            HitsSource::Events => "events",
            HitsSource::ToolResults => "tool_results",
            HitsSource::Transcript => "transcript",
        }
    }
}

impl BackendUsage {
    /// Usage of a backend that reads its service's own result list.
    pub fn of_results() -> Self {
        BackendUsage {
            hits_source: HitsSource::Results.as_str().into(),
            ..Default::default()
        }
    }
}

/// A backend call's hits and usage.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BackendOutcome {
    /// The hits, in the backend's order.
    pub hits: Vec<super::pool::Hit>,
    /// What the call cost and how it ended.
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
