//! The `silt` command line: the subcommands a person runs, each a thin
//! caller of the crates that hold the products.

#![deny(missing_docs)]

pub mod cli;
