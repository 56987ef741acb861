//! Outgoing HTTP for plugins: only to granted hosts, and never to internal
//! addresses unless the host was granted by that literal name.

use std::net::{IpAddr, SocketAddr};

use silt_fetch::addresses::is_internal;
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
    /// A policy of `granted` entries, `name` or `name:port` (`env:` entries
    /// already replaced: [`super::wasi::http_grants`]).
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

/// The wasi-http hooks that apply a plugin's [`HttpPolicy`].
pub struct PolicyHooks {
    /// The policy every request is checked against.
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
