//! The Sediment ledger on the host side: the SQLite store and the service
//! that keeps the ledger engine component in step with it.

#![deny(missing_docs)]

pub mod sediment_json;
pub mod service;
pub mod store;
pub mod values;
pub mod vectors;
