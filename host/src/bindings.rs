//! Host-side bindings generated from the WIT contracts in `wit/`. Every
//! generated type is `Serialize`, so what a plugin returns can be measured
//! against its output cap ([`crate::runtime::failure::output_bytes`]).

/// A judge plugin: the component exports `silt:judge/judge`.
pub mod judge {
    wasmtime::component::bindgen!({
        path: "../wit/judge",
        world: "silt:judge/judge-plugin",
        imports: { default: async },
        exports: { default: async },
        additional_derives: [serde::Serialize],
    });
}

/// The ask engine: exports `silt:sieve/ask`, imports a judge and the host.
pub mod ask_engine {
    wasmtime::component::bindgen!({
        path: ["../wit/judge", "../wit/host", "../wit/sieve"],
        world: "silt:sieve/ask-engine",
        imports: { default: async | trappable },
        exports: { default: async },
        additional_derives: [serde::Serialize],
        with: { "silt:judge/types": crate::bindings::judge::silt::judge::types },
    });
}

/// The verify engine: exports `silt:sieve/verify`, imports a judge, the
/// host's log and clock, and `sources` (the only engine granted fetching).
pub mod verify_engine {
    wasmtime::component::bindgen!({
        path: ["../wit/judge", "../wit/host", "../wit/sieve"],
        world: "silt:sieve/verify-engine",
        imports: { default: async | trappable },
        exports: { default: async },
        additional_derives: [serde::Serialize],
        with: {
            "silt:judge/types": crate::bindings::judge::silt::judge::types,
            "silt:judge/judge": crate::bindings::ask_engine::silt::judge::judge,
            "silt:host/log": crate::bindings::ask_engine::silt::host::log,
            "silt:host/clock": crate::bindings::ask_engine::silt::host::clock,
            "silt:sieve/types": crate::bindings::ask_engine::silt::sieve::types,
            "silt:sieve/progress": crate::bindings::ask_engine::silt::sieve::progress,
        },
    });
}

/// A judge that also relates lessons (exports `silt:judge/relate`).
pub mod lesson_judge {
    wasmtime::component::bindgen!({
        path: "../wit/judge",
        world: "silt:judge/lesson-judge-plugin",
        imports: { default: async },
        exports: { default: async },
        additional_derives: [serde::Serialize],
        with: { "silt:judge/types": crate::bindings::judge::silt::judge::types },
    });
}

/// A judge that relates lessons and embeds text (exports `silt:embed/embed`).
pub mod embedding_judge {
    wasmtime::component::bindgen!({
        path: ["../wit/judge", "../wit/embed"],
        world: "silt:embed/embedding-judge-plugin",
        imports: { default: async },
        exports: { default: async },
        additional_derives: [serde::Serialize],
        with: { "silt:judge/types": crate::bindings::judge::silt::judge::types },
    });
}

/// The ledger engine: exports `silt:ledger/engine`, imports `relate`,
/// `embed`, fresh ids and the log.
pub mod ledger_engine {
    wasmtime::component::bindgen!({
        path: ["../wit/judge", "../wit/host", "../wit/embed", "../wit/ledger"],
        world: "silt:ledger/ledger-engine",
        imports: { default: async | trappable },
        exports: { default: async },
        additional_derives: [serde::Serialize],
        with: {
            "silt:judge/types": crate::bindings::judge::silt::judge::types,
            "silt:host/log": crate::bindings::ask_engine::silt::host::log,
        },
    });
}

/// A web search backend: exports `silt:search/backend`, imports only WASI
/// (its network and environment narrowed to its manifest's grants).
pub mod search_backend {
    wasmtime::component::bindgen!({
        path: "../wit/search",
        world: "silt:search/search-backend-plugin",
        imports: { default: async },
        exports: { default: async },
        additional_derives: [serde::Serialize],
    });
}

/// A web search backend built against `silt:search@0.1.0`, the contract
/// as first released (`wit/compat/search-0.1.0`): still loaded, its
/// results converted to the current types ([`crate::runtime::search`]).
pub mod search_backend_v0_1 {
    wasmtime::component::bindgen!({
        path: "../wit/compat/search-0.1.0",
        world: "silt:search/search-backend-plugin",
        imports: { default: async },
        exports: { default: async },
        additional_derives: [serde::Serialize],
    });
}

/// A search backend that drives a local CLI: exports `silt:search/backend`,
/// imports `silt:search/exec` (only the programs its manifest grants) and
/// WASI without network.
pub mod cli_search_backend {
    wasmtime::component::bindgen!({
        path: "../wit/search",
        world: "silt:search/cli-search-backend-plugin",
        imports: { default: async },
        exports: { default: async },
        additional_derives: [serde::Serialize],
        with: { "silt:search/types": crate::bindings::search_backend::silt::search::types },
    });
}

pub use judge::silt::judge::types;
