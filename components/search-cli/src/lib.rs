//! The `claude` and `codex` search backends: one component, two manifests.
//! Which CLI it drives follows from the one program its manifest grants
//! through `exec`; it has no network and reads only its granted settings.

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

wit_bindgen::generate!({
    path: "../../wit/search",
    world: "silt:search/cli-search-backend-plugin",
    with: { "silt:search/types@0.2.0": search_guest::types },
});

use exports::silt::search::backend::Guest;
use search_guest::granted_env;
use search_guest::types::{BackendInfo, SearchError, SearchRequest, SearchResult};
use silt::search::exec;
use silt_core::search::cli::{self, Cli, ExecError, Exit, Settings};

/// `silt_core`'s rules run over the host's `exec`.
struct HostExec;

impl cli::Exec for HostExec {
    fn run(&mut self, program: &str, args: &[String], timeout_ms: u64) -> Result<Exit, ExecError> {
        exec::run(program, args, timeout_ms)
            .map(|e| Exit {
                status: e.status,
                stdout: e.stdout,
                stderr: e.stderr,
            })
            .map_err(|e| match e {
                exec::ExecError::Denied(m) => ExecError::Denied(m),
                exec::ExecError::NotFound(m) => ExecError::NotFound(m),
                exec::ExecError::TimedOut(ms) => ExecError::TimedOut(ms),
                exec::ExecError::TooMuchOutput(n) => ExecError::TooMuchOutput(n),
                exec::ExecError::Failed(m) => ExecError::Failed(m),
            })
    }
}

fn which() -> Result<Cli, SearchError> {
    Cli::from_granted(&exec::granted()).map_err(SearchError::NotConfigured)
}

struct CliBackend;

impl Guest for CliBackend {
    fn info() -> BackendInfo {
        BackendInfo {
            name: which().map_or("cli", Cli::name).into(),
            pages: false,
        }
    }

    fn search(request: SearchRequest) -> Result<SearchResult, SearchError> {
        search_guest::validate(&request)?;
        let cli = which()?;
        let settings = Settings::from_env(cli, granted_env).map_err(SearchError::from)?;
        cli::search(
            &mut HostExec,
            cli,
            &settings,
            request.query.trim(),
            request.count,
        )
        .map(Into::into)
        .map_err(Into::into)
    }
}

export!(CliBackend);
