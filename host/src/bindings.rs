//! Host-side bindings generated from the WIT contracts in `wit/`.

/// A judge plugin: the component exports `silt:judge/judge`.
pub mod judge {
    wasmtime::component::bindgen!({
        path: "../wit/judge",
        world: "silt:judge/judge-plugin",
        imports: { default: async },
        exports: { default: async },
    });
}

/// The ask engine: exports `silt:sieve/ask`, imports a judge and the host.
pub mod ask_engine {
    wasmtime::component::bindgen!({
        path: ["../wit/judge", "../wit/host", "../wit/sieve"],
        world: "silt:sieve/ask-engine",
        imports: { default: async | trappable },
        exports: { default: async },
        with: { "silt:judge/types": crate::bindings::judge::silt::judge::types },
    });
}

pub use judge::silt::judge::types;
