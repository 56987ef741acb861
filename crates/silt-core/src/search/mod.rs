//! Web search: the rules every backend and `sieve_search` share. Query
//! variants, canonical URLs and the candidate pool are pure; the SearXNG
//! and Brave backends' paging and parsing run over a [`backend::Fetch`]
//! transport (`wasi:http` in their components, a script in tests); the
//! `claude` and `codex` CLI backends run a program over an
//! [`cli::Exec`] transport (the host's `exec` import, or a script).

pub mod backend;
pub mod brave;
pub mod canonical;
pub mod claude;
pub mod cli;
pub mod cli_turn;
pub mod codex;
pub mod pool;
pub mod searxng;
pub mod variants;

pub use backend::{
    BackendError, BackendOutcome, BackendUsage, Fetch, FetchError, Fetched, HitsSource,
};
pub use canonical::canonical_url;
pub use pool::{Hit, Pool};
