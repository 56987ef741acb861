//! Plugins: their manifests and where they are found.

pub mod compose;
pub mod manifest;
pub mod registry;
