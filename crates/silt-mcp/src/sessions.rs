//! Sessions on the shared server, for clients whose model a judge may
//! sample. The server is stateless ([`super::http`]): each request stands
//! alone, so a request silt sends the client in the middle of a call
//! (`sampling/createMessage`) has no stream to go out on, its answer's
//! POST is refused, and the client's capabilities are unknown. A client
//! that declares `sampling` when it initialises is therefore served by a
//! second, session-keeping service: its `initialize` opens a session (the
//! `Mcp-Session-Id` it is given routes every later request there), each
//! call answers on its own event stream, on which silt's requests to the
//! client go too.
//!
//! Everything else stays stateless. Both services sit behind the same
//! token check and admission places, and share the one `SiltServer`
//! (runtime, answer cache, ledger). What a session costs: it lives in
//! this process (a restart forgets it and the client initialises again),
//! it ends after 5 minutes without a request, and a call in it is not
//! stopped when its HTTP connection drops (only by the client's
//! `notifications/cancelled`).

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;

use super::SiltServer;
use super::jsonrpc::MAX_LINE;

/// The header naming a session.
const SESSION_HEADER: &str = "mcp-session-id";

/// The shared server's two services, and which one a request goes to.
#[derive(Clone)]
pub struct Route {
    /// Every request of a client that keeps no session (JSON answers,
    /// nothing kept between requests).
    pub stateless: StreamableHttpService<SiltServer, NeverSessionManager>,
    /// Clients that declared sampling: a session each, calls answered on
    /// event streams.
    pub sessions: StreamableHttpService<SiltServer, LocalSessionManager>,
}

impl Route {
    /// Serves `req` on the service it belongs to.
    pub async fn serve(self, req: Request) -> Response {
        let (parts, body) = req.into_parts();
        let bytes = match to_bytes(body, MAX_LINE).await {
            Ok(b) => b,
            // parse_errors, outside, caps POST bodies; this is anything else
            Err(_) => return StatusCode::PAYLOAD_TOO_LARGE.into_response(),
        };
        let in_session = parts.headers.contains_key(SESSION_HEADER)
            || (parts.method == Method::POST && initialises_with_sampling(&bytes));
        let req = Request::from_parts(parts, Body::from(bytes));
        let answered = if in_session {
            self.sessions.handle(req).await
        } else {
            self.stateless.handle(req).await
        };
        answered.map(Body::new)
    }
}

/// Whether `body` is an `initialize` request whose client declares the
/// `sampling` capability.
fn initialises_with_sampling(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Initialize {
        method: String,
        #[serde(default)]
        params: Option<serde_json::Value>,
    }
    let Ok(request) = serde_json::from_slice::<Initialize>(body) else {
        return false;
    };
    request.method == "initialize"
        && request
            .params
            .as_ref()
            .and_then(|p| p.get("capabilities"))
            .and_then(|c| c.get("sampling"))
            .is_some_and(|s| !s.is_null())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_initialize_declaring_sampling_opens_a_session() {
        let init = |caps: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{caps},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
            )
        };
        assert!(initialises_with_sampling(
            init(r#"{"sampling":{}}"#).as_bytes()
        ));
        assert!(!initialises_with_sampling(init("{}").as_bytes()));
        assert!(!initialises_with_sampling(
            init(r#"{"sampling":null}"#).as_bytes()
        ));
        assert!(!initialises_with_sampling(
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"capabilities":{"sampling":{}}}}"#
        ));
        assert!(!initialises_with_sampling(b"[1, 2]"));
        assert!(!initialises_with_sampling(b""));
    }
}
