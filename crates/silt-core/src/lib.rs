//! Logic shared by silt's native host and its WebAssembly components.
//!
//! Nothing here does I/O: the components call it from inside the sandbox and
//! the host calls it natively, so one piece of logic has one implementation.

#![deny(missing_docs)]

pub mod ask;
pub mod budget;
pub mod closed;
pub mod grep;
pub mod ids;
pub mod ledger;
pub mod lexical;
pub mod rank;
pub mod route;
pub mod search;
pub mod sts;
pub mod text;
pub mod triage;
pub mod types;
pub mod validate;
pub mod verify;

/// Re-exported for [`ledger_entry_conversions!`].
pub use serde_json;
