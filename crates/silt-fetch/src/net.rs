//! Fetching a URL for verify under a network policy: public addresses
//! only (unless configured), every redirect re-checked, and caps on size
//! and time that hold for slow or endless responses.
//!
//! The address check lives in the DNS resolver reqwest connects through,
//! so the address that was checked is the address connected to (no window
//! for a name to re-resolve elsewhere); IP literals never reach a resolver,
//! so they are checked on the URL itself, first and at every redirect.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::redirect;
use silt_config::env;

use crate::addresses::is_internal;
use crate::error::FetchError;

/// The most bytes read of a source that is not a PDF.
pub const MAX_BYTES: usize = 2 << 20;
/// The most bytes read of a PDF.
pub const MAX_PDF_BYTES: usize = 25 << 20;
/// The whole fetch, connect to last byte.
pub const TIMEOUT: Duration = Duration::from_secs(15);
/// Redirects followed before giving up.
pub const MAX_REDIRECTS: usize = 5;

/// Which internal addresses (loopback, private, link-local, cloud
/// metadata) may be fetched: none by default, so a report's links cannot
/// make silt probe the machine's own network.
#[derive(Debug, Clone)]
pub struct NetPolicy {
    /// Every internal address.
    pub allow_internal: bool,
    /// Hosts (names or IP literals, lowercase) fetched even though internal,
    /// e.g. an intranet wiki.
    pub allow_hosts: Arc<Vec<String>>,
    /// The whole fetch, connect to last byte.
    pub timeout: Duration,
}

impl Default for NetPolicy {
    fn default() -> Self {
        NetPolicy {
            allow_internal: false,
            allow_hosts: Arc::new(Vec::new()),
            timeout: TIMEOUT,
        }
    }
}

impl NetPolicy {
    /// The policy from `$SILT_FETCH_ALLOW_PRIVATE` (1/true/on allows every
    /// internal address) and `$SILT_FETCH_ALLOW_HOSTS` (comma-separated
    /// hosts allowed although internal).
    pub fn from_env() -> Self {
        NetPolicy {
            allow_internal: env::flag("SILT_FETCH_ALLOW_PRIVATE"),
            allow_hosts: Arc::new(
                env::list("SILT_FETCH_ALLOW_HOSTS")
                    .iter()
                    .map(|h| h.to_ascii_lowercase())
                    .collect(),
            ),
            timeout: TIMEOUT,
        }
    }

    /// [`NetPolicy::from_env`] widened by silt.toml's `[fetch]` table.
    pub fn from_config(config: &silt_config::FetchConfig) -> Self {
        let env = Self::from_env();
        let mut hosts: Vec<String> = env.allow_hosts.as_ref().clone();
        hosts.extend(
            config
                .allow_hosts
                .iter()
                .map(|h| h.trim().to_ascii_lowercase()),
        );
        NetPolicy {
            allow_internal: env.allow_internal || config.allow_private == Some(true),
            allow_hosts: Arc::new(hosts),
            timeout: TIMEOUT,
        }
    }

    fn granted(&self, host: &str) -> bool {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        self.allow_internal
            || self
                .allow_hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host))
    }

    fn refuse(&self, host: &str, ip: IpAddr) -> bool {
        is_internal(ip) && !self.granted(host)
    }

    /// Checks a URL before it is requested (or followed to).
    pub fn check_url(&self, url: &reqwest::Url) -> Result<(), FetchError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(FetchError::refused(
                url,
                "only http and https sources can be fetched",
            ));
        }
        let host = url.host_str().unwrap_or("");
        match url.host() {
            Some(url::Host::Ipv4(ip)) if self.refuse(host, IpAddr::V4(ip)) => {
                Err(refused(url, ip.into()))
            }
            Some(url::Host::Ipv6(ip)) if self.refuse(host, IpAddr::V6(ip)) => {
                Err(refused(url, ip.into()))
            }
            Some(_) => Ok(()),
            None => Err(FetchError::refused(url, "the URL has no host")),
        }
    }
}

fn refused(url: &reqwest::Url, ip: IpAddr) -> FetchError {
    FetchError::refused(
        url,
        format!(
            "refused, {ip} is an internal address (loopback, private, link-local or \
             metadata); allow it with SILT_FETCH_ALLOW_HOSTS={ip} or all with \
             SILT_FETCH_ALLOW_PRIVATE=1"
        ),
    )
}

/// A name that resolved to an internal address: a refusal, carried
/// through reqwest's error chain to [`describe`].
#[derive(Debug, thiserror::Error)]
#[error(
    "{host} resolves to {ip}, an internal address; allow it with \
     SILT_FETCH_ALLOW_HOSTS={host} or all with SILT_FETCH_ALLOW_PRIVATE=1"
)]
struct ResolvedInternal {
    host: String,
    ip: IpAddr,
}

/// A redirect the policy refused, carried the same way.
#[derive(Debug, thiserror::Error)]
#[error("redirect refused: {0}")]
struct RedirectRefused(FetchError);

/// Resolves names and drops the answer when any address is internal.
struct CheckedResolver(NetPolicy);

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.0.clone();
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if let Some(bad) = addrs.iter().find(|a| policy.refuse(&host, a.ip())) {
                return Err(ResolvedInternal { host, ip: bad.ip() }.into());
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// A client that applies `policy` to every connection and redirect.
pub fn client(policy: &NetPolicy) -> reqwest::Result<reqwest::Client> {
    let timeout = policy.timeout;
    let resolver = CheckedResolver(policy.clone());
    let policy = policy.clone();
    let redirects = redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= MAX_REDIRECTS {
            return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
        }
        match policy.check_url(attempt.url()) {
            Ok(()) => attempt.follow(),
            Err(e) => attempt.error(RedirectRefused(e)),
        }
    });
    reqwest::Client::builder()
        .redirect(redirects)
        .dns_resolver(Arc::new(resolver))
        // a proxy would connect for us, past the address check
        .no_proxy()
        .timeout(timeout)
        .connect_timeout(timeout)
        .user_agent(concat!(
            "silt/",
            env!("CARGO_PKG_VERSION"),
            " (sieve_verify)"
        ))
        .build()
}

/// What a URL returned.
#[derive(Debug)]
pub struct Fetched {
    /// The body, within its cap.
    pub bytes: Vec<u8>,
    /// The `Content-Type` header, lowercase; empty when there was none.
    pub content_type: String,
}

/// Fetches `url`: the status must be below 400 and the body within its cap
/// (2 MB, 25 MB for a PDF), all within the policy's timeout.
pub async fn fetch(
    client: &reqwest::Client,
    policy: &NetPolicy,
    url: &str,
) -> Result<Fetched, FetchError> {
    let parsed = reqwest::Url::parse(url)
        .map_err(|e| FetchError::refused(url, format!("not a valid URL ({e})")))?;
    policy.check_url(&parsed)?;
    let work = async {
        let mut response = client
            .get(parsed.clone())
            .send()
            .await
            .map_err(|e| describe(url, &e, policy.timeout))?;
        let status = response.status();
        if status.as_u16() >= 400 {
            return Err(FetchError::unreachable(url, format!("HTTP {status}")));
        }
        // a redirect reqwest did not follow (to `file:`, `ftp:` …) is not
        // the source: its empty body must not pass for one
        if status.is_redirection() {
            let to = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("nowhere");
            return Err(FetchError::unreachable(
                url,
                format!(
                    "redirected to {to}, which cannot be followed (only http and https \
                     sources can be fetched)"
                ),
            ));
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let is_pdf =
            content_type.contains("pdf") || parsed.path().to_ascii_lowercase().ends_with(".pdf");
        let cap = if is_pdf { MAX_PDF_BYTES } else { MAX_BYTES };
        if response.content_length().is_some_and(|n| n as usize > cap) {
            return Err(FetchError::too_large(url, cap));
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| describe(url, &e, policy.timeout))?
        {
            if bytes.len() + chunk.len() > cap {
                return Err(FetchError::too_large(url, cap));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(Fetched {
            bytes,
            content_type,
        })
    };
    // reqwest's own timeout covers the body too; this one also bounds
    // anything it does not (a resolver that never answers)
    match tokio::time::timeout(policy.timeout + Duration::from_millis(500), work).await {
        Ok(r) => r,
        Err(_) => Err(timed_out(url, policy.timeout)),
    }
}

fn timed_out(url: &str, limit: Duration) -> FetchError {
    FetchError::unreachable(
        url,
        format!("no complete answer within {} s", limit.as_secs_f64()),
    )
}

/// A reqwest error as one actionable line (its source chain included: the
/// resolver's refusal sits there).
fn describe(url: &str, e: &reqwest::Error, limit: Duration) -> FetchError {
    if e.is_timeout() {
        return timed_out(url, limit);
    }
    let mut msg = e.to_string();
    let mut refused = false;
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        // the resolver's and the redirect policy's refusals are the
        // policy's, not the network's
        refused |= s.is::<ResolvedInternal>() || s.is::<RedirectRefused>();
        let s_msg = s.to_string();
        if !msg.contains(&s_msg) {
            msg.push_str(": ");
            msg.push_str(&s_msg);
        }
        source = s.source();
    }
    let reason = match msg.strip_prefix(url) {
        Some(rest) => rest.trim_start_matches(':').trim_start().to_string(),
        None => msg,
    };
    if refused {
        FetchError::refused(url, reason)
    } else {
        FetchError::unreachable(url, reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A loopback HTTP server: `/page` answers HTML, `/to/<url>` redirects
    /// there, `/loop/<n>` redirects to `/loop/<n+1>`, `/missing` is 404,
    /// `/endless` streams forever, `/huge` announces 3 MB, `/slow` never
    /// finishes. Counts the requests it saw.
    async fn server() -> (String, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(AtomicUsize::new(0));
        let counter = seen.clone();
        tokio::spawn(async move {
            loop {
                let (mut sock, _) = listener.accept().await.unwrap();
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 4096];
                    let n = sock.read(&mut buf).await.unwrap_or(0);
                    let req = String::from_utf8_lossy(&buf[..n]).to_string();
                    let path = req.split_whitespace().nth(1).unwrap_or("/").to_string();
                    let reply = |status: &str, headers: &str, body: &str| {
                        format!(
                            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n{body}",
                            body.len()
                        )
                    };
                    let out = if path == "/page" {
                        reply(
                            "200 OK",
                            "Content-Type: text/html\r\n",
                            "<p>hello</p><p>world</p>",
                        )
                    } else if let Some(to) = path.strip_prefix("/to/") {
                        reply("302 Found", &format!("Location: {to}\r\n"), "")
                    } else if let Some(n) = path.strip_prefix("/loop/") {
                        let n: u32 = n.parse().unwrap();
                        reply("302 Found", &format!("Location: /loop/{}\r\n", n + 1), "")
                    } else if path == "/missing" {
                        reply("404 Not Found", "", "no")
                    } else if path == "/huge" {
                        "HTTP/1.1 200 OK\r\nContent-Length: 3145728\r\n\r\n".to_string()
                    } else if path == "/endless" {
                        let _ = sock
                            .write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                            .await;
                        let chunk = format!("{:x}\r\n{}\r\n", 65536, "x".repeat(65536));
                        while sock.write_all(chunk.as_bytes()).await.is_ok() {}
                        return;
                    } else if path == "/slow" {
                        let _ = sock
                            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nstart")
                            .await;
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        return;
                    } else {
                        reply("400 Bad Request", "", "")
                    };
                    let _ = sock.write_all(out.as_bytes()).await;
                });
            }
        });
        (base, seen)
    }

    fn allowing_loopback_ip() -> NetPolicy {
        NetPolicy {
            allow_hosts: Arc::new(vec!["127.0.0.1".into()]),
            timeout: Duration::from_secs(2),
            ..NetPolicy::default()
        }
    }

    async fn get(policy: &NetPolicy, url: &str) -> Result<Fetched, String> {
        fetch(&client(policy).unwrap(), policy, url)
            .await
            .map_err(|e| e.to_string())
    }

    async fn kind_of(policy: &NetPolicy, url: &str) -> FetchError {
        fetch(&client(policy).unwrap(), policy, url)
            .await
            .unwrap_err()
    }

    #[tokio::test]
    async fn internal_addresses_are_refused_by_default_before_any_request() {
        let (base, seen) = server().await;
        let port = base.rsplit(':').next().unwrap();
        let policy = NetPolicy::default();
        let err = get(&policy, &format!("{base}/page")).await.unwrap_err();
        assert!(err.contains("internal address"), "{err}");
        // a name that resolves to loopback is refused by the resolver
        let err = get(&policy, &format!("http://localhost:{port}/page"))
            .await
            .unwrap_err();
        assert!(err.contains("internal address"), "{err}");
        for url in [
            "http://169.254.169.254/latest/meta-data/",
            "http://10.0.0.1/",
            "http://[::1]/",
        ] {
            assert!(
                get(&policy, url).await.unwrap_err().contains("internal"),
                "{url}"
            );
        }
        assert_eq!(seen.load(Ordering::SeqCst), 0, "nothing reached the server");
        assert!(
            get(&policy, "ftp://example.com/x")
                .await
                .unwrap_err()
                .contains("only http")
        );
    }

    #[tokio::test]
    async fn silt_toml_grants_add_to_the_environments() {
        let config = silt_config::FetchConfig {
            allow_hosts: vec![" 127.0.0.1 ".into()],
            allow_private: None,
        };
        let (base, _) = server().await;
        let policy = NetPolicy {
            timeout: Duration::from_secs(2),
            ..NetPolicy::from_config(&config)
        };
        assert!(get(&policy, &format!("{base}/page")).await.is_ok());
        let port = base.rsplit(':').next().unwrap();
        // the grant names the IP literal, not the names that resolve to it
        let err = get(&policy, &format!("http://localhost:{port}/page"))
            .await
            .unwrap_err();
        assert!(err.contains("internal address"), "{err}");
        let all = NetPolicy::from_config(&silt_config::FetchConfig {
            allow_hosts: vec![],
            allow_private: Some(true),
        });
        assert!(all.allow_internal);
    }

    #[tokio::test]
    async fn a_granted_host_is_fetched() {
        let (base, _) = server().await;
        let got = get(&allowing_loopback_ip(), &format!("{base}/page"))
            .await
            .unwrap();
        assert_eq!(got.bytes, b"<p>hello</p><p>world</p>");
        assert!(got.content_type.contains("html"));
        let all = NetPolicy {
            allow_internal: true,
            ..NetPolicy::default()
        };
        assert!(get(&all, &format!("{base}/page")).await.is_ok());
    }

    #[tokio::test]
    async fn every_redirect_is_checked_again_and_chains_are_cut() {
        let (base, _) = server().await;
        let port = base.rsplit(':').next().unwrap();
        let policy = allowing_loopback_ip();
        // a granted host may not bounce the fetch to an address that is not
        let err = get(&policy, &format!("{base}/to/http://localhost:{port}/page"))
            .await
            .unwrap_err();
        assert!(err.contains("internal address"), "{err}");
        let err = get(&policy, &format!("{base}/to/http://169.254.169.254/"))
            .await
            .unwrap_err();
        assert!(err.contains("redirect refused"), "{err}");
        // both are the policy's refusals, which the caller can lift
        for to in ["http://localhost:{port}/page", "http://169.254.169.254/"] {
            let url = format!("{base}/to/{}", to.replace("{port}", port));
            assert!(
                matches!(kind_of(&policy, &url).await, FetchError::Refused { .. }),
                "{url}"
            );
        }
        // a redirect within the grant is followed
        assert!(
            get(&policy, &format!("{base}/to/{base}/page"))
                .await
                .is_ok()
        );
        let err = get(&policy, &format!("{base}/loop/0")).await.unwrap_err();
        assert!(err.contains("redirects"), "{err}");
        // a redirect out of http(s) is an error, never an empty source
        for to in ["file:///etc/passwd", "ftp://example.com/x"] {
            let err = get(&policy, &format!("{base}/to/{to}")).await.unwrap_err();
            assert!(
                err.contains("cannot be followed") || err.contains("redirect refused"),
                "{to}: {err}"
            );
        }
    }

    #[tokio::test]
    async fn status_size_and_time_caps_hold() {
        let (base, _) = server().await;
        let policy = allowing_loopback_ip();
        let err = get(&policy, &format!("{base}/missing")).await.unwrap_err();
        assert!(err.contains("HTTP 404"), "{err}");
        assert!(matches!(
            kind_of(&policy, &format!("{base}/missing")).await,
            FetchError::Unreachable { .. }
        ));
        assert_eq!(
            kind_of(&policy, &format!("{base}/huge")).await,
            FetchError::TooLarge {
                locator: format!("{base}/huge"),
                cap_mb: 2
            }
        );
        let err = get(&policy, &format!("{base}/huge")).await.unwrap_err();
        assert!(err.contains("2 MB cap"), "{err}");
        let started = std::time::Instant::now();
        let err = get(&policy, &format!("{base}/endless")).await.unwrap_err();
        assert!(err.contains("2 MB cap"), "{err}");
        let err = get(&policy, &format!("{base}/slow")).await.unwrap_err();
        assert!(err.contains("within 2 s"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
