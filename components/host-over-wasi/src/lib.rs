//! What silt's host grants engines, done with WASI alone: the log goes to
//! stderr (stdout may carry the driver's JSON), the clock is the wall
//! clock, ids come from `wasi:random`.

wit_bindgen::generate!({
    path: "../../wit/host",
    world: "silt:host/host-over-wasi",
});

use exports::silt::host::{clock, ids, log};

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

export!(HostOverWasi);
