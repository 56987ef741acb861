//! JSON-RPC's own answer to a POST whose body is not JSON: a parse error
//! (-32700) with a null id, as the JSON-RPC 2.0 specification asks, where
//! the MCP transport would answer with a bare HTTP status (415) that a
//! client library reports as a transport failure rather than a bad request.

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The longest request taken, a stdio line or an HTTP body (rmcp's own
/// cap for a line).
pub const MAX_LINE: usize = 16 << 20;

/// The JSON-RPC code for a body that is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON-RPC code for a request that is not acceptable as sent.
pub const INVALID_REQUEST: i64 = -32600;

fn error(status: StatusCode, code: i64, message: String) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Axum middleware: reads a POST body (at most the stdio line cap, 16
/// MiB), answers JSON-RPC errors for one that is too large or not JSON,
/// and hands the rest on unchanged.
pub async fn parse_errors(req: Request, next: Next) -> Response {
    if req.method() != Method::POST {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match to_bytes(body, MAX_LINE).await {
        Ok(b) => b,
        Err(_) => {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                INVALID_REQUEST,
                format!(
                    "the request body is over {} MiB (or was cut off); send smaller calls",
                    MAX_LINE >> 20
                ),
            );
        }
    };
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes) {
        return error(
            StatusCode::BAD_REQUEST,
            PARSE_ERROR,
            format!("Parse error: the body is not JSON ({e})"),
        );
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}
