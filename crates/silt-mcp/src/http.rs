//! The shared server: MCP over streamable HTTP, one long-running process
//! for every agent on the machine.
//!
//! Stateless: every request builds nothing per session, so a client that
//! idles for hours or outlives a restart keeps working without
//! re-initialising. The exception is a client that declares MCP sampling,
//! whose model a judge may ask mid-call: it gets a session
//! ([`super::sessions`]). Safe on loopback: it binds 127.0.0.1 unless told
//! otherwise, and refuses requests whose `Host` or `Origin` is not a
//! loopback name (DNS rebinding: a web page cannot reach it through a name
//! it controls), with allow-lists for users behind a proxy. Not open to
//! other users of the machine: every request carries the owner's token
//! ([`auth`]), and file tools read only under the roots the owner lists.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::SiltServer;
use super::admission::{self, Admission, Seat};
use super::auth::{Token, require_token};
use silt_config::Config;
use silt_runtime::Runtime;
use silt_runtime::folders::Roots;

pub use silt_config::DEFAULT_HTTP_PORT as DEFAULT_PORT;

/// How long a stopping server waits for the calls in flight.
pub const DRAIN_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// The path the MCP endpoint is served at.
pub const ENDPOINT: &str = "/mcp";

/// `Host` names always accepted.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Browser origins always accepted: pages served from this machine.
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// Where and for whom the server listens.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The address to bind: 127.0.0.1 unless the config's `[server] bind`
    /// says otherwise; port 0 picks a free one.
    pub addr: SocketAddr,
    /// `Host` values accepted besides the loopback names.
    pub allowed_hosts: Vec<String>,
    /// `Origin` values accepted besides loopback pages.
    pub allowed_origins: Vec<String>,
    /// The secret every request must carry.
    pub token: Token,
    /// The folders file tools may read, opened when the options resolve.
    pub roots: Arc<Roots>,
    /// Connections that showed the token served at once; a request past
    /// them is answered 503.
    pub max_connections: usize,
    /// The time a connection gets to send headers, or to idle between
    /// requests.
    pub header_timeout: std::time::Duration,
}

/// Connections served at once when the config does not say.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;

/// Seconds a connection may take to send headers or idle, by default.
pub const DEFAULT_HEADER_TIMEOUT_SECS: u64 = 10;

/// The connection cap: the configured one, else 512, kept below half the
/// descriptor limit (the rest is for ledgers, caches, plugins and fetches)
/// so accepting never fails for want of a descriptor.
fn connection_cap(configured: Option<usize>) -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct it is given
    let fds = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
        usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX)
    } else {
        1024
    };
    configured
        .unwrap_or(DEFAULT_MAX_CONNECTIONS)
        .min(fds / 2)
        .max(1)
}

impl HttpOptions {
    /// The options from `--port` (then `env_port`, the value of
    /// `$SILT_HTTP_PORT`, then the config's `[server]` table, then 8723) and
    /// the config's bind address and allow-lists.
    pub fn resolve(
        config: &Config,
        port_flag: Option<u16>,
        env_port: Option<&str>,
    ) -> anyhow::Result<HttpOptions> {
        let env_port = match env_port.map(str::trim) {
            Some(v) if !v.is_empty() => Some(v.parse::<u16>().with_context(|| {
                format!("SILT_HTTP_PORT is '{v}'; set it to a port number (1-65535)")
            })?),
            _ => None,
        };
        let port = port_flag
            .or(env_port)
            .or(config.server.port)
            .unwrap_or(DEFAULT_PORT);
        let ip = config
            .server
            .bind
            .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
        let token = Token::load_or_create(&config.token_file())?;
        Ok(HttpOptions {
            addr: SocketAddr::new(ip, port),
            allowed_hosts: config.server.allowed_hosts.clone(),
            allowed_origins: config.server.allowed_origins.clone(),
            token,
            roots: Arc::new(
                Roots::open(&canonical_roots(&config.server.roots)?)
                    .context("[server] roots: cannot open")?,
            ),
            max_connections: connection_cap(config.server.max_connections),
            header_timeout: std::time::Duration::from_secs(
                config
                    .server
                    .header_timeout_secs
                    .unwrap_or(DEFAULT_HEADER_TIMEOUT_SECS)
                    .max(1),
            ),
        })
    }

    /// How a client that declared sampling is served ([`super::sessions`]):
    /// in a session, each call answering on its own event stream, where
    /// silt's requests to the client go too.
    fn session_config(&self, calls: &CancellationToken) -> StreamableHttpServerConfig {
        self.transport_config(calls)
            .with_legacy_session_mode(true)
            .with_json_response(false)
    }

    fn transport_config(&self, calls: &CancellationToken) -> StreamableHttpServerConfig {
        let hosts: Vec<String> = LOOPBACK_HOSTS
            .iter()
            .map(|h| h.to_string())
            .chain(self.allowed_hosts.iter().cloned())
            .collect();
        let origins: Vec<String> = LOOPBACK_ORIGINS
            .iter()
            .map(|o| o.to_string())
            .chain(self.allowed_origins.iter().cloned())
            .collect();
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_allowed_hosts(hosts)
            .with_allowed_origins(origins)
            .enforce_origin_validation()
            .with_cancellation_token(calls.child_token())
    }
}

/// A bound, not yet serving, server: its address is known (port 0 picks a
/// free one), so callers can report it before requests arrive.
pub struct BoundServer {
    listener: tokio::net::TcpListener,
    options: HttpOptions,
}

impl BoundServer {
    /// Binds the listening socket.
    pub async fn bind(options: HttpOptions) -> anyhow::Result<BoundServer> {
        let listener = tokio::net::TcpListener::bind(options.addr)
            .await
            .with_context(|| {
                format!(
                    "cannot listen on {}; is another silt serving there? pick another with --port or $SILT_HTTP_PORT",
                    options.addr
                )
            })?;
        defer_accept(
            &listener,
            admission::AUTHENTICATION_DEADLINE.min(options.header_timeout),
        );
        Ok(BoundServer { listener, options })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> anyhow::Result<SocketAddr> {
        Ok(self.listener.local_addr()?)
    }

    /// Serves until `shutdown` is cancelled, then stops accepting and lets
    /// the calls in flight finish — each answered with what it did — for
    /// up to [`DRAIN_LIMIT`]; calls still running then are stopped.
    pub async fn serve(
        self,
        runtime: Arc<Runtime>,
        config: Arc<Config>,
        shutdown: CancellationToken,
    ) -> anyhow::Result<()> {
        // one server for every request: the ledger behind it is one handle,
        // whose lock orders concurrent writers
        let server = SiltServer::new_http(runtime.clone(), config, self.options.roots.clone());
        // the server keeps no sessions, so there is no client to tell of a
        // swap: new calls and the next tools/list see it
        let watch = tokio::spawn(super::plugin_watch::watch(runtime.clone(), None));
        let _stop_watching = AbortOnDrop(watch);
        // cancelled only when the drain runs out, never by the signal
        // itself: a capture that commits during shutdown still says so
        let calls = CancellationToken::new();
        // a session's event streams stay open while its client is there:
        // once a stop has let the calls in flight finish, they are closed,
        // so an idle client that samples does not hold the stop for the
        // whole drain
        let sessions_stop = calls.child_token();
        let _close_sessions = AbortOnDrop(tokio::spawn(close_sessions_when_idle(
            runtime,
            shutdown.clone(),
            sessions_stop.clone(),
        )));
        let sessions = {
            let server = server.clone();
            StreamableHttpService::new(
                move || Ok(server.clone()),
                Arc::new(LocalSessionManager::default()),
                self.options.session_config(&sessions_stop),
            )
        };
        let stateless = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(NeverSessionManager::default()),
            self.options.transport_config(&calls),
        );
        let route = super::sessions::Route {
            stateless,
            sessions,
        };
        let service =
            axum::routing::any(move |req: axum::extract::Request| route.clone().serve(req));
        // the token guards every path, so nothing (not even a 404) answers
        // a caller who is not the owner
        // layers run outside in: refused callers closed after their answer,
        // the token, a place for the connection that showed it, the body check
        let admission = Admission::new(self.options.max_connections);
        let router = axum::Router::new()
            .nest_service(ENDPOINT, service)
            .layer(axum::middleware::from_fn(super::jsonrpc::parse_errors))
            .layer(axum::middleware::from_fn(admission::promote))
            .layer(axum::middleware::from_fn_with_state(
                self.options.token.clone(),
                require_token,
            ))
            .layer(axum::middleware::from_fn(admission::close_refused));
        let served = accept_loop(
            self.listener,
            router,
            admission,
            self.options.header_timeout,
            shutdown.clone(),
        );
        let deadline = async {
            shutdown.cancelled().await;
            eprintln!(
                "silt: stopping: no new calls; waiting up to {} s for the calls in flight",
                DRAIN_LIMIT.as_secs()
            );
            tokio::time::sleep(DRAIN_LIMIT).await;
        };
        tokio::select! {
            () = served => Ok(()),
            () = deadline => {
                calls.cancel();
                eprintln!(
                    "silt: calls still running after {} s were stopped",
                    DRAIN_LIMIT.as_secs()
                );
                Ok(())
            }
        }
    }
}

/// Cancels `sessions` once `shutdown` is and no tool call is running.
async fn close_sessions_when_idle(
    runtime: Arc<Runtime>,
    shutdown: CancellationToken,
    sessions: CancellationToken,
) {
    shutdown.cancelled().await;
    while runtime.calls_running() > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    sessions.cancel();
}

/// Asks the kernel to hand over a connection only once its first bytes
/// arrive (Linux's `TCP_DEFER_ACCEPT`), so a socket that connects and says
/// nothing waits in the kernel, holding none of silt's descriptors or
/// places, for up to `wait`. Where the option is missing, the waiting
/// room alone orders such sockets.
fn defer_accept(listener: &tokio::net::TcpListener, wait: std::time::Duration) {
    #[cfg(target_os = "linux")]
    {
        let secs = libc::c_int::try_from(wait.as_secs()).unwrap_or(libc::c_int::MAX);
        // SAFETY: the listener's own descriptor and an int option value
        let set = unsafe {
            libc::setsockopt(
                std::os::fd::AsRawFd::as_raw_fd(listener),
                libc::IPPROTO_TCP,
                libc::TCP_DEFER_ACCEPT,
                (&raw const secs).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if set != 0 {
            tracing::warn!(
                "TCP_DEFER_ACCEPT refused ({}); idle sockets wait in silt's room",
                std::io::Error::last_os_error()
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (listener, wait);
}

/// Accepts connections until `shutdown`, then waits for the open ones to
/// finish their requests. A new connection waits in [`Admission`]'s room
/// until a request shows the token; then it takes one of the places
/// `router`'s [`admission::promote`] gives, and past them the request is
/// answered 503. Waiting connections are closed
/// after [`admission::AUTHENTICATION_DEADLINE`], or earlier when newer
/// ones need the room, so a crowd of idle, half-open or reconnecting
/// sockets of anyone on the machine never keeps the owner out.
async fn accept_loop(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    admission: Arc<Admission>,
    header_timeout: std::time::Duration,
    shutdown: CancellationToken,
) {
    let authentication = admission::AUTHENTICATION_DEADLINE.min(header_timeout);
    loop {
        let stream = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // EMFILE and the like: back off instead of spinning
                    tracing::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let conn = admission.arrive(std::os::fd::AsRawFd::as_raw_fd(&stream));
        let seat = Seat {
            admission: admission.clone(),
            connection: conn.clone(),
        };
        let service = hyper_util::service::TowerToHyperService::new(
            router.clone().layer(axum::Extension(seat)),
        );
        let stop = shutdown.clone();
        tokio::spawn(async move {
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_timeout)
                .keep_alive(true);
            let stream = admission::Heard::new(stream, conn.clone());
            let served = http.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            tokio::pin!(served);
            let unproven = async {
                tokio::time::sleep(authentication).await;
                if conn.authenticated() {
                    std::future::pending::<()>().await;
                }
            };
            tokio::select! {
                _ = served.as_mut() => {}
                () = conn.closed.cancelled() => {}
                () = unproven => {}
                () = stop.cancelled() => {
                    if conn.authenticated() {
                        // finish the request under way, take no other
                        served.as_mut().graceful_shutdown();
                        let _ = served.await;
                    }
                }
            }
            conn.leave();
        });
    }
    admission.close_waiting();
    // every authenticated connection holds a place: all back means all closed
    admission.drained().await;
}

/// The `[server] roots`, each an existing folder, canonical (so a symlink
/// among them cannot widen what callers reach later).
fn canonical_roots(roots: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    roots
        .iter()
        .map(|r| {
            if !r.is_absolute() {
                anyhow::bail!(
                    "[server] roots: '{}' is relative; list absolute folders",
                    r.display()
                );
            }
            let real = std::fs::canonicalize(r)
                .with_context(|| format!("[server] roots: cannot open '{}'", r.display()))?;
            if !real.is_dir() {
                anyhow::bail!("[server] roots: '{}' is not a folder", r.display());
            }
            Ok(real)
        })
        .collect()
}

/// A token cancelled on SIGINT or SIGTERM.
pub fn shutdown_on_signals() -> anyhow::Result<CancellationToken> {
    let token = CancellationToken::new();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("cannot listen for SIGTERM")?;
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        cancel.cancel();
    });
    Ok(token)
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_comes_from_the_flag_then_the_environment_then_the_config() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::default();
        config.server.token_file = Some(dir.path().join("token"));
        let port = |c: &Config, flag, env| HttpOptions::resolve(c, flag, env).unwrap().addr;
        assert_eq!(port(&config, None, None), "127.0.0.1:8723".parse().unwrap());
        config.server.port = Some(9000);
        assert_eq!(port(&config, None, Some(" ")).port(), 9000);
        assert_eq!(port(&config, None, Some("9100")).port(), 9100);
        assert_eq!(port(&config, Some(9200), Some("9100")).port(), 9200);
        let err = HttpOptions::resolve(&config, None, Some("eighty"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("SILT_HTTP_PORT is 'eighty'"), "{err}");
        config.server.bind = Some("0.0.0.0".parse().unwrap());
        assert_eq!(port(&config, None, None), "0.0.0.0:9000".parse().unwrap());
    }

    #[test]
    fn roots_must_be_absolute_existing_folders() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        assert!(canonical_roots(&[PathBuf::from("rel")]).is_err());
        assert!(canonical_roots(&[dir.path().join("missing")]).is_err());
        assert!(canonical_roots(std::slice::from_ref(&file)).is_err());
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        assert_eq!(
            canonical_roots(&[link]).unwrap(),
            vec![std::fs::canonicalize(dir.path()).unwrap()]
        );
    }
}
