//! silt's native host: the wasmtime runtime that sandboxes engines and
//! judges, the plugin registry, the MCP server and the CLI.

pub mod addresses;
pub mod app;
pub mod beneath;
pub mod bindings;
pub mod cli;
pub mod config;
pub mod fetch;
pub mod folders;
pub mod ledger;
pub mod mcp;
pub mod models;
pub mod plugins;
pub mod private;
pub mod progress;
pub mod runtime;
pub mod syntax;
pub mod tools;
pub mod walk;
