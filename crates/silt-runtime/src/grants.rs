//! A plugin's grants, resolved once when it loads: what its WASI view
//! opens and which programs it may run. Every store of the plugin is
//! built from these, so a call never re-reads the manifest or the
//! environment to learn what it may do.

use super::capability::exec::ExecGrants;
use super::capability::wasi::WasiGrants;
use silt_plugins::manifest::Manifest;

/// Everything `manifest` grants, resolved.
#[derive(Debug, Clone)]
pub struct Grants {
    /// What its WASI context opens: folders, models, environment, HTTP hosts.
    pub wasi: WasiGrants,
    /// The programs it may run through `silt:search/exec`.
    pub exec: ExecGrants,
    /// Whether its stores may ask the client of their call's model.
    pub sampling: bool,
}

impl Grants {
    /// Resolves `manifest`'s grants, logging any risky HTTP grant; fails when
    /// a granted model is not installed.
    pub fn resolve(manifest: &Manifest) -> anyhow::Result<Self> {
        for warning in manifest.http_grant_warnings() {
            tracing::warn!("plugin '{}': {warning}", manifest.plugin.name);
        }
        Ok(Grants {
            wasi: WasiGrants::resolve(manifest)?,
            exec: ExecGrants::new(manifest),
            sampling: manifest.grants.sampling,
        })
    }
}
