//! The tools silt serves, independent of transport: each parses its
//! arguments, runs its engine through the runtime and shapes the result as
//! JSON. The MCP server and the CLI both call these.

pub mod ask;
pub mod error;
pub mod grep;
pub mod output_schema;
pub mod rank;
pub mod route;
pub mod schema;
pub mod search;
pub mod search_cache;
pub mod search_chain;
pub mod sediment_tools;
pub mod triage;
pub mod verify;
