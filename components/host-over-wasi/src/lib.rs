//! What silt's host grants engines, done with WASI alone: the log goes to
//! stderr (stdout may carry the driver's JSON), the clock is the wall
//! clock, ids come from `wasi:random`.

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

wit_bindgen::generate!({
    // the host's grants, no vectors (an engine that asks for them, the
    // ledger's recall, falls back to its lexical path), nothing related
    // and nothing searched ahead (a WASI host has no thread to work on:
    // the ledger does that work itself)
    inline: "package silt:standalone; world host-over-wasi {
        include silt:host/host-over-wasi@0.2.1;
        export silt:embed/embed@0.2.2;
        export silt:ledger/relating-ahead@0.9.0;
        export silt:ledger/searching-ahead@0.9.0;
    }",
    path: ["../../wit/judge", "../../wit/host", "../../wit/embed", "../../wit/ledger"],
    world: "silt:standalone/host-over-wasi",
    generate_all,
});

use exports::silt::embed::embed;
use exports::silt::host::{clock, ids, log};
use exports::silt::ledger::{relating_ahead, searching_ahead};

impl embed::Guest for HostOverWasi {
    fn embed(_texts: Vec<String>) -> Result<embed::Embedding, silt::judge::types::JudgeError> {
        Err(silt::judge::types::JudgeError::Unsupported(
            "no embedding judge is composed in; recall scores lexically".into(),
        ))
    }
}

struct HostOverWasi;

impl log::Guest for HostOverWasi {
    fn log(level: log::Level, message: String) {
        let level = match level {
            log::Level::Debug => "debug",
            log::Level::Info => "info",
            log::Level::Warn => "warn",
            log::Level::Error => "error",
        };
        eprintln!("{level}: {message}");
    }
}

impl clock::Guest for HostOverWasi {
    fn now() -> f64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0)
    }
}

impl ids::Guest for HostOverWasi {
    fn next_id() -> String {
        silt_core::ids::new_id()
    }
}

impl relating_ahead::Guest for HostOverWasi {
    type Pending = NeverStarted;

    fn start(
        _lessons: Vec<relating_ahead::Lesson>,
        _pairs: Vec<(u32, u32)>,
    ) -> Option<relating_ahead::Pending> {
        None
    }
}

/// A call `start` (or `start-partners`) never returns.
struct NeverStarted;

impl relating_ahead::GuestPending for NeverStarted {
    fn finish(_call: relating_ahead::Pending) -> Result<Vec<relating_ahead::Relation>, String> {
        Err("nothing is related ahead over plain WASI".into())
    }
}

export!(HostOverWasi);

impl searching_ahead::Guest for HostOverWasi {
    type PendingSearch = NeverStarted;
    type PendingNear = NeverStarted;

    fn start_near(
        _rows: Vec<i8>,
        _dim: u32,
        _cut: f64,
        _per_row: u32,
    ) -> Option<searching_ahead::PendingNear> {
        None
    }

    fn start_partners(
        _texts: Vec<String>,
        _search: searching_ahead::PartnerSearch,
    ) -> Option<searching_ahead::PendingSearch> {
        None
    }
}

impl searching_ahead::GuestPendingSearch for NeverStarted {
    fn finish(_call: searching_ahead::PendingSearch) -> Result<Vec<Vec<(u32, f64)>>, String> {
        Err("nothing is searched ahead over plain WASI".into())
    }
}

impl searching_ahead::GuestPendingNear for NeverStarted {
    fn finish(_call: searching_ahead::PendingNear) -> Result<Vec<(u32, u32)>, String> {
        Err("nothing is searched ahead over plain WASI".into())
    }

    fn take_back(&self) -> bool {
        true
    }
}
