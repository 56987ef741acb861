//! Plugins: their manifests and where they are found.

pub mod manifest;
pub mod registry;
