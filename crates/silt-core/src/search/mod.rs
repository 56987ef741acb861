//! Web search: the rules every backend and `sieve_search` share. Query
//! variants, canonical URLs and the candidate pool are pure; the SearXNG
//! and Brave backends' paging and parsing run over a [`backend::Fetch`]
//! transport (`wasi:http` in their components, a script in tests).

pub mod backend;
pub mod brave;
pub mod canonical;
pub mod pool;
pub mod searxng;
pub mod variants;

pub use backend::{BackendError, BackendOutcome, BackendUsage, Fetch, FetchError, Fetched};
pub use canonical::canonical_url;
pub use pool::{Hit, Pool};
