//! Plugins: their manifests, where they are found, and how an install is
//! fetched, pinned and signed.

#![deny(missing_docs)]

pub mod models;

pub mod compose;
pub mod install;
pub mod lock;
pub mod manifest;
pub mod registry;
pub mod signature;
pub mod version;
