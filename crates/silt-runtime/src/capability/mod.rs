//! What the host can give a plugin, one capability per module: its state
//! in a store, the `Host` side of its WIT interfaces, the function that
//! links them, and its tests. A store's [`super::state::PluginState`]
//! composes the capabilities; which plugin gets which is decided in
//! [`super::linkers`] and by its manifest's grants.
//!
//! A new capability goes here as a module of its own: a state struct, the
//! generated `Host` trait implemented on it (never on `PluginState`, so a
//! capability cannot reach another's state), and an `add_to_linker` that
//! takes the getter from the store's data to that struct. Nothing in this
//! folder imports the runtime above it.

pub mod basics;
pub mod exec;
pub mod files;
pub mod http_policy;
pub mod judge_calls;
pub mod progress;
pub mod relation_cache;
pub mod sampling;
pub mod search_ahead;
pub mod sources;
pub mod wasi;
