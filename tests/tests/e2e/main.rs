//! silt's end-to-end tests, in one test binary.
//!
//! Each module was its own binary once; every one of them linked the host,
//! wasmtime, rmcp and tokio and instantiated their generic code again, so
//! the seventeen cost 440 s of CPU to build on 2 cores against this one
//! binary's 101 s (docs/BENCHMARKS.md, "CI time"). Run one family with
//! `cargo test --release --workspace --locked --test e2e -- embedding::`.

mod agent_judge;
mod embedding;
mod env_reads;
mod folder_races;
mod fuzz;
mod hostile;
mod http_server;
mod inspector;
mod ledger_store;
mod llm_judge;
mod mcp_sediment;
mod mcp_stdio;
mod module_cycles;
mod openai_judge;
mod pipeline_ceiling;
mod plugin_distribution;
mod plugin_languages;
mod plugin_swap;
mod plugin_updates;
mod postgres_ledger;
mod private_files;
mod python_sampling;
mod python_sdk;
mod review_loop;
mod runtime;
mod search;
mod search_cli;
mod standalone;
mod triage;
mod untested_targets;
mod verify;
