//! Outgoing HTTP for plugins: only to granted hosts, and never to internal
//! addresses unless the host was granted by that literal name.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use wasmtime_wasi_http::{
    Error as HttpError, RequestOptions, WasiBody, WasiHttpHooks, default_send_request,
};

/// The hosts one plugin may reach.
#[derive(Debug, Clone, Default)]
pub struct HttpPolicy {
    /// Granted entries, lowercase: `name` or `name:port`.
    granted: Arc<Vec<String>>,
}

impl HttpPolicy {
    pub fn new(granted: &[String]) -> Self {
        HttpPolicy {
            granted: Arc::new(granted.iter().map(|h| h.to_ascii_lowercase()).collect()),
        }
    }

    /// Whether `host:port` is granted (by bare name or with that port).
    pub fn grants(&self, host: &str, port: u16) -> bool {
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        self.granted
            .iter()
            .any(|g| *g == host || *g == format!("{host}:{port}"))
    }

    /// Checks a request before it is sent; returns the addresses it may use.
    pub async fn check(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, HttpError> {
        if !self.grants(host, port) {
            tracing::warn!("plugin request to {host}:{port} refused: host not granted");
            return Err(HttpError::HttpRequestDenied);
        }
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((bare, port))
            .await
            .map_err(|_| HttpError::DnsError {
                rcode: None,
                info_code: None,
            })?
            .collect();
        self.decide(host, &addrs)?;
        Ok(addrs)
    }

    /// Refuses `addrs` (what `host` resolved to) when one is internal and
    /// the grant did not name an internal host outright: an IP literal or
    /// `localhost`. Any other name must resolve to public addresses, so a
    /// granted name whose DNS turns hostile cannot reach loopback, the LAN
    /// or a cloud metadata service.
    pub fn decide(&self, host: &str, addrs: &[SocketAddr]) -> Result<(), HttpError> {
        let bare = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        let named_internal = bare.parse::<IpAddr>().is_ok() || bare == "localhost";
        if named_internal {
            return Ok(());
        }
        if let Some(a) = addrs.iter().find(|a| is_internal(a.ip())) {
            tracing::warn!(
                "plugin request to {host} refused: it resolves to internal address {}",
                a.ip()
            );
            return Err(HttpError::DestinationIpProhibited);
        }
        Ok(())
    }
}

/// Loopback, private, link-local (cloud metadata lives there), CGNAT,
/// unspecified, broadcast and unique-local addresses — also when an IPv6
/// address carries one of them inside: IPv4-mapped (`::ffff:a.b.c.d`),
/// IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96` and the local
/// `64:ff9b:1::/48`) and 6to4 (`2002:AABB:CCDD::/48`).
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_internal_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => is_internal_v4(v4) || is_internal_v6(v6),
            None => is_internal_v6(v6),
        },
    }
}

/// The IPv4 address an IPv6 address routes to, for the forms that embed one.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    // IPv4-compatible (deprecated, still routed by some stacks); `::` and
    // `::1` are the unspecified and loopback addresses, not IPv4
    if s[..6] == [0; 6] && ip != Ipv6Addr::UNSPECIFIED && ip != Ipv6Addr::LOCALHOST {
        return Some(low);
    }
    // NAT64: well-known prefix and the local-use one
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1) {
        return Some(low);
    }
    // 6to4: the IPv4 address follows the prefix
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ));
    }
    None
}

fn is_internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || (a == 100 && (64..128).contains(&b))
}

fn is_internal_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)
}

/// The wasi-http hooks that apply a plugin's [`HttpPolicy`].
pub struct PolicyHooks {
    pub policy: HttpPolicy,
}

type SendResult = Result<
    (
        http::Response<WasiBody>,
        Box<dyn Future<Output = Result<(), HttpError>> + Send>,
    ),
    HttpError,
>;

impl WasiHttpHooks for PolicyHooks {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: Box<dyn Future<Output = Result<(), HttpError>> + Send>,
    ) -> Box<dyn Future<Output = SendResult> + Send> {
        let policy = self.policy.clone();
        drop(fut);
        Box::new(async move {
            use http_body_util::BodyExt;
            let uri = request.uri();
            let host = uri
                .host()
                .ok_or(HttpError::HttpRequestUriInvalid)?
                .to_string();
            let https = uri.scheme_str() != Some("http");
            let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
            // The check resolves the name; the send below resolves it again.
            // A granted name whose DNS an attacker controls could rebind in
            // between (documented in docs/PLUGINS.md).
            policy.check(&host, port).await?;
            let (response, io) = default_send_request(request, options).await?;
            Ok((
                response.map(BodyExt::boxed_unsync),
                Box::new(io) as Box<dyn Future<Output = _> + Send>,
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            // IPv4-compatible, NAT64 (well-known and local) and 6to4 forms
            "::127.0.0.1",
            "::169.254.169.254",
            "64:ff9b::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::10.0.0.1",
            "2002:7f00:1::1",
            "2002:a9fe:a9fe::",
            "2002:c0a8:0101::5",
        ] {
            assert!(is_internal(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "93.184.216.34",
            "1.1.1.1",
            "2606:4700::1111",
            "64:ff9b::5db8:d822",
            "2002:5db8:d822::1",
            "::5db8:d822",
        ] {
            assert!(!is_internal(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn names_must_not_resolve_inside() {
        let p = HttpPolicy::new(&[
            "api.example.com".into(),
            "127.0.0.1".into(),
            "localhost".into(),
        ]);
        let addr = |s: &str| vec![s.parse::<SocketAddr>().unwrap()];
        assert!(
            p.decide("api.example.com", &addr("93.184.216.34:443"))
                .is_ok()
        );
        for internal in [
            "127.0.0.1:443",
            "169.254.169.254:80",
            "10.0.0.5:443",
            "[::1]:443",
        ] {
            assert!(
                matches!(
                    p.decide("api.example.com", &addr(internal)),
                    Err(HttpError::DestinationIpProhibited)
                ),
                "{internal}"
            );
        }
        assert!(p.decide("127.0.0.1", &addr("127.0.0.1:80")).is_ok());
        assert!(p.decide("localhost", &addr("127.0.0.1:80")).is_ok());
    }

    #[test]
    fn grants_by_name_or_port() {
        let p = HttpPolicy::new(&["api.example.com".into(), "localhost:8080".into()]);
        assert!(p.grants("API.example.com", 443));
        assert!(p.grants("localhost", 8080));
        assert!(!p.grants("localhost", 8081));
        assert!(!p.grants("example.com", 443));
    }
}
