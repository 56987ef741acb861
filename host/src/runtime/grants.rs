//! A plugin's grants, resolved once when it loads: what its WASI view
//! opens and which programs it may run. Every store of the plugin is
//! built from these, so a call never re-reads the manifest or the
//! environment to learn what it may do.

use super::capability::exec::ExecGrants;
use super::capability::wasi::WasiGrants;
use crate::plugins::manifest::Manifest;

/// Everything `manifest` grants, resolved.
#[derive(Debug, Clone)]
pub struct Grants {
    pub wasi: WasiGrants,
    pub exec: ExecGrants,
}

impl Grants {
    pub fn resolve(manifest: &Manifest) -> anyhow::Result<Self> {
        for warning in http_grant_warnings(&manifest.grants.http) {
            tracing::warn!("plugin '{}': {warning}", manifest.plugin.name);
        }
        Ok(Grants {
            wasi: WasiGrants::resolve(manifest)?,
            exec: ExecGrants::new(manifest),
        })
    }
}

/// What is risky in `http` grants written into a manifest (an `env:`
/// entry is the owner's own setting, a SearXNG on loopback say, and is
/// not questioned): a link-local address (cloud metadata services answer
/// there), loopback (the services of this machine), and silt's own HTTP
/// port. A grant by literal address or `localhost` is the one way past
/// the internal-address rule, so each is named at load and by `plugins
/// add`.
pub fn http_grant_warnings(entries: &[String]) -> Vec<String> {
    let own_ports: Vec<u16> = std::iter::once(crate::config::DEFAULT_HTTP_PORT)
        .chain(
            std::env::var("SILT_HTTP_PORT")
                .ok()
                .and_then(|p| p.trim().parse().ok()),
        )
        .collect();
    entries
        .iter()
        .filter(|e| !e.starts_with("env:"))
        .filter_map(|entry| {
            let (host, port) = host_and_port(entry);
            let ip = if host.eq_ignore_ascii_case("localhost") {
                Some(std::net::IpAddr::from([127, 0, 0, 1]))
            } else {
                host.parse::<std::net::IpAddr>().ok()
            };
            let what = match ip {
                Some(ip) if crate::addresses::is_link_local(ip) => {
                    "a link-local address, where cloud metadata services hand out credentials"
                }
                Some(ip) if crate::addresses::is_loopback(ip) => match port {
                    Some(p) if own_ports.contains(&p) => "silt's own HTTP server",
                    Some(_) => "a service on this machine (loopback)",
                    None => {
                        "every port on this machine (loopback), silt's own HTTP server's among them"
                    }
                },
                _ => return None,
            };
            Some(format!("grants.http entry '{entry}' reaches {what}"))
        })
        .collect()
}

/// `name`, `name:port`, `[v6]:port` or a bare IPv6 address, split.
fn host_and_port(entry: &str) -> (&str, Option<u16>) {
    if let Some(rest) = entry.strip_prefix('[') {
        let (host, tail) = rest.split_once(']').unwrap_or((rest, ""));
        return (host, tail.strip_prefix(':').and_then(|p| p.parse().ok()));
    }
    if entry.parse::<std::net::Ipv6Addr>().is_ok() {
        return (entry, None);
    }
    match entry.rsplit_once(':') {
        Some((host, port)) => (host, port.parse().ok()),
        None => (entry, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_grants_to_metadata_loopback_and_silts_port_are_named() {
        let entries: Vec<String> = [
            "169.254.169.254",
            "[fe80::1]:80",
            "::ffff:0:a9fe:a9fe",
            "localhost",
            "127.0.0.1:8723",
            "[::1]:9000",
            "api.example.com",
            "10.0.0.5:8080",
            "env:SILT_SEARXNG_URL",
        ]
        .map(String::from)
        .to_vec();
        let warnings = http_grant_warnings(&entries);
        assert_eq!(warnings.len(), 6, "{warnings:#?}");
        for (w, part) in warnings.iter().zip([
            "'169.254.169.254' reaches a link-local",
            "'[fe80::1]:80' reaches a link-local",
            "'::ffff:0:a9fe:a9fe' reaches a link-local",
            "'localhost' reaches every port",
            "'127.0.0.1:8723' reaches silt's own HTTP server",
            "'[::1]:9000' reaches a service on this machine",
        ]) {
            assert!(w.contains(part), "{w}");
        }
    }
}
