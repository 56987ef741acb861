//! WASI for a plugin, narrowed to its manifest's grants: read-only
//! folders, installed models, chosen environment keys, and `wasi:http` only
//! to granted hosts. The grants are resolved once, when the plugin loads
//! (a model's folder found, `env:VAR` hosts read); each store then gets a
//! fresh context built from them.

use std::path::PathBuf;

use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, ResourceTable, WasiCtx, WasiCtxView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView};

use super::http_policy::{HttpPolicy, PolicyHooks};
use silt_config::env;
use silt_plugins::manifest::Manifest;

/// How much of a guest's stderr is kept, to explain a trap.
const STDERR_KEEP: usize = 16 << 10;

/// A manifest's WASI grants, resolved.
#[derive(Debug, Clone)]
pub struct WasiGrants {
    plugin: String,
    /// (host folder, path the guest sees), all read-only.
    folders: Vec<(PathBuf, String)>,
    /// Granted keys that are set, with their values.
    env: Vec<(String, String)>,
    http: HttpPolicy,
}

impl WasiGrants {
    /// Resolves `manifest`'s grants: an installed model's folder, the
    /// environment's values, the hosts `env:VAR` entries name.
    pub fn resolve(manifest: &Manifest) -> anyhow::Result<Self> {
        let plugin = manifest.plugin.name.clone();
        let mut folders = Vec::new();
        for dir in &manifest.grants.read {
            let guest = dir
                .to_str()
                .ok_or_else(|| anyhow::anyhow!("grant {} is not UTF-8", dir.display()))?;
            folders.push((dir.clone(), guest.to_string()));
        }
        for entry in &manifest.grants.models {
            let name = silt_plugins::manifest::granted_model(entry, env::var);
            folders.push((
                silt_plugins::models::installed(&name)?,
                format!("/models/{name}"),
            ));
        }
        let env = manifest
            .grants
            .env
            .iter()
            .filter_map(|k| env::var(k).map(|v| (k.clone(), v)))
            .collect();
        let http = HttpPolicy::new(&http_grants(&manifest.grants.http, env::var));
        Ok(WasiGrants {
            plugin,
            folders,
            env,
            http,
        })
    }

    /// A fresh WASI context for one store.
    pub fn build(&self) -> anyhow::Result<Wasi> {
        let mut wasi = WasiCtx::builder();
        let stderr = MemoryOutputPipe::new(STDERR_KEEP);
        wasi.stderr(stderr.clone());
        for (dir, guest) in &self.folders {
            wasi.preopened_dir(dir, guest, FsPerms::ReadOnly)
                .map_err(|e| {
                    anyhow::anyhow!(
                        "plugin '{}' is granted {} but it cannot be opened: {e}",
                        self.plugin,
                        dir.display()
                    )
                })?;
        }
        for (key, value) in &self.env {
            wasi.env(key, value);
        }
        Ok(Wasi {
            ctx: wasi.build(),
            table: ResourceTable::new(),
            http: WasiHttpCtx::new(),
            hooks: PolicyHooks {
                policy: self.http.clone(),
            },
            stderr,
        })
    }
}

/// One store's WASI and `wasi:http` state.
pub struct Wasi {
    ctx: WasiCtx,
    table: ResourceTable,
    http: WasiHttpCtx,
    hooks: PolicyHooks,
    stderr: MemoryOutputPipe,
}

impl Wasi {
    /// This store's WASI context and resource table.
    pub fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.ctx,
            table: &mut self.table,
        }
    }

    /// This store's `wasi:http` context; every request passes its [`HttpPolicy`].
    pub fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.hooks,
        }
    }

    /// The guest's last words on stderr (a panic's location and message,
    /// usually), without Rust's backtrace hint.
    pub fn stderr_tail(&self) -> Option<String> {
        let bytes = self.stderr.contents();
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("note: run with `RUST_BACKTRACE"))
            .collect();
        (!lines.is_empty()).then(|| lines[lines.len().saturating_sub(2)..].join(" "))
    }
}

/// The `wasi:http` grants with each `env:VAR` entry replaced by the
/// `host:port` of the URL in VAR (nothing when VAR is unset or not a URL:
/// the plugin then reaches no server of the user's choosing).
pub fn http_grants(entries: &[String], env: impl Fn(&str) -> Option<String>) -> Vec<String> {
    entries
        .iter()
        .filter_map(|e| match e.strip_prefix("env:") {
            None => Some(e.clone()),
            Some(var) => {
                let raw = env(var)?;
                let url = url::Url::parse(raw.trim()).ok()?;
                // the policy compares hosts without IPv6 brackets
                let host = url
                    .host_str()?
                    .trim_start_matches('[')
                    .trim_end_matches(']');
                Some(format!("{host}:{}", url.port_or_known_default()?))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_http_grants_become_the_host_and_port_of_the_url() {
        let env = |v: &str| match v {
            "LOCAL" => Some(" http://127.0.0.1:8888/searx ".to_string()),
            "REMOTE" => Some("https://search.example".to_string()),
            "V6" => Some("http://[::1]:8888".to_string()),
            "BAD" => Some("not a url".to_string()),
            _ => None,
        };
        let entries: Vec<String> = [
            "api.example.com",
            "env:LOCAL",
            "env:REMOTE",
            "env:V6",
            "env:BAD",
            "env:UNSET",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            http_grants(&entries, env),
            [
                "api.example.com",
                "127.0.0.1:8888",
                "search.example:443",
                "::1:8888"
            ]
        );
    }

    #[test]
    fn a_granted_folder_that_vanished_fails_the_store_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        std::fs::create_dir(&gone).unwrap();
        let manifest = Manifest::parse(
            &format!(
                "[plugin]\nname = \"p\"\nkind = \"judge\"\n[grants]\nread = [{:?}]\n",
                gone.display().to_string()
            ),
            "t",
        )
        .unwrap();
        let grants = WasiGrants::resolve(&manifest).unwrap();
        assert!(grants.build().is_ok());
        std::fs::remove_dir(&gone).unwrap();
        let err = grants.build().err().unwrap().to_string();
        assert!(err.contains("cannot be opened"), "{err}");
    }
}
