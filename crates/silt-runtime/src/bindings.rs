//! Host-side bindings generated from the WIT contracts in `wit/`. Every
//! generated type is `Serialize`, so what a plugin returns can be measured
//! against its output cap ([`crate::failure::output_bytes`]).

/// A judge plugin: the component exports `silt:judge/judge`.
// generated from the WIT contracts, which carry the docs
#[allow(missing_docs)]
pub mod judge {
    wasmtime::component::bindgen!({
        path: "../../wit/judge",
        world: "silt:judge/judge-plugin",
        imports: { default: async },
        exports: { default: async },
        additional_derives: [serde::Serialize],
    });
}

/// The ask engine: exports `silt:sieve/ask`, imports a judge and the host.
// generated from the WIT contracts, which carry the docs
#[allow(missing_docs)]
pub mod ask_engine {
    wasmtime::component::bindgen!({
        path: ["../../wit/judge", "../../wit/host", "../../wit/sieve"],
        world: "silt:sieve/ask-engine",
        imports: { default: async | trappable },
        exports: { default: async },
        additional_derives: [serde::Serialize],
        with: { "silt:judge/types": crate::bindings::judge::silt::judge::types },
    });
}

/// The verify engine: exports `silt:sieve/verify`, imports a judge, the
/// host's log and clock, and `sources` (the only engine granted fetching).
// generated from the WIT contracts, which carry the docs
#[allow(missing_docs)]
pub mod verify_engine {
    wasmtime::component::bindgen!({
        path: ["../../wit/judge", "../../wit/host", "../../wit/sieve"],
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

/// What the host calls to relate lessons: `silt:judge/relations`, bound
/// alone so a judge is asked for it whatever else it exports.
// generated from the WIT contracts, which carry the docs
#[allow(missing_docs)]
pub mod relations_judge {
    wasmtime::component::bindgen!({
        path: "../../wit/judge",
        inline: "package silt:host-bindings; world relations-judge {
            export silt:judge/relations@0.1.2;
        }",
        world: "silt:host-bindings/relations-judge",
        imports: { default: async },
        exports: { default: async },
        additional_derives: [serde::Serialize],
        with: { "silt:judge/types": crate::bindings::judge::silt::judge::types },
    });
}

/// `silt:judge/relations-by-index` (0.1.2): the relations with each lesson
/// sent once, what the host calls where a judge exports it.
// generated from the WIT contracts, which carry the docs
#[allow(missing_docs)]
pub mod relations_by_index_judge {
    wasmtime::component::bindgen!({
        path: "../../wit/judge",
        inline: "package silt:host-bindings; world relations-by-index-judge {
            export silt:judge/relations-by-index@0.1.2;
        }",
        world: "silt:host-bindings/relations-by-index-judge",
        imports: { default: async },
        exports: { default: async },
        additional_derives: [serde::Serialize],
        with: { "silt:judge/types": crate::bindings::judge::silt::judge::types },
    });
}

/// The deprecated positional `silt:judge/relate`, as judges built against
/// silt:judge 0.1.0 export it (found under its 0.1.0 name by semver).
// generated from the WIT contracts, which carry the docs
#[allow(missing_docs)]
pub mod relate_judge_v0_1 {
    wasmtime::component::bindgen!({
        path: "../../wit/judge",
        inline: "package silt:host-bindings; world relate-judge {
            export silt:judge/relate@0.1.2;
        }",
        world: "silt:host-bindings/relate-judge",
        imports: { default: async },
        exports: { default: async },
        additional_derives: [serde::Serialize],
        with: { "silt:judge/types": crate::bindings::judge::silt::judge::types },
    });
}

/// What the host calls for vectors: `silt:embed/embed`, bound alone.
// generated from the WIT contracts, which carry the docs
#[allow(missing_docs)]
pub mod embedding_judge {
    wasmtime::component::bindgen!({
        path: ["../../wit/judge", "../../wit/embed"],
        inline: "package silt:host-bindings; world embedder {
            export silt:embed/embed@0.2.2;
        }",
        world: "silt:host-bindings/embedder",
        imports: { default: async },
        exports: { default: async },
        additional_derives: [serde::Serialize],
        with: { "silt:judge/types": crate::bindings::judge::silt::judge::types },
    });
}

/// The ledger engine: exports `silt:ledger/engine`, imports `relations`,
/// `embed`, fresh ids and the log.
// generated from the WIT contracts, which carry the docs
#[allow(missing_docs)]
pub mod ledger_engine {
    wasmtime::component::bindgen!({
        path: ["../../wit/judge", "../../wit/host", "../../wit/embed", "../../wit/ledger"],
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

/// `silt:host/sampling` as the host serves it to a judge granted it (the
/// judge's own exports are bound by [`judge`] and the relation modules).
// generated from the WIT contracts, which carry the docs
#[allow(missing_docs)]
pub mod sampling_host {
    wasmtime::component::bindgen!({
        path: "../../wit/host",
        inline: "package silt:host-bindings; world sampling-host {
            import silt:host/sampling@0.2.1;
        }",
        world: "silt:host-bindings/sampling-host",
        imports: { default: async },
        additional_derives: [serde::Serialize],
    });
}

/// A web search backend: exports `silt:search/backend`, imports only WASI
/// (its network and environment narrowed to its manifest's grants).
// generated from the WIT contracts, which carry the docs
#[allow(missing_docs)]
pub mod search_backend {
    wasmtime::component::bindgen!({
        path: "../../wit/search",
        world: "silt:search/search-backend-plugin",
        imports: { default: async },
        exports: { default: async },
        additional_derives: [serde::Serialize],
    });
}

/// A web search backend built against `silt:search@0.1.0`, the contract
/// as first released (`wit/compat/search-0.1.0`): still loaded, its
/// results converted to the current types ([`crate::search`]).
// generated from the WIT contracts, which carry the docs
#[allow(missing_docs)]
pub mod search_backend_v0_1 {
    wasmtime::component::bindgen!({
        path: "../../wit/compat/search-0.1.0",
        world: "silt:search/search-backend-plugin",
        imports: { default: async },
        exports: { default: async },
        additional_derives: [serde::Serialize],
    });
}

/// A search backend that drives a local CLI: exports `silt:search/backend`,
/// imports `silt:search/exec` (only the programs its manifest grants) and
/// WASI without network.
// generated from the WIT contracts, which carry the docs
#[allow(missing_docs)]
pub mod cli_search_backend {
    wasmtime::component::bindgen!({
        path: "../../wit/search",
        world: "silt:search/cli-search-backend-plugin",
        imports: { default: async },
        exports: { default: async },
        additional_derives: [serde::Serialize],
        with: { "silt:search/types": crate::bindings::search_backend::silt::search::types },
    });
}

pub use judge::silt::judge::types;
