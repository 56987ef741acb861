//! GET over `wasi:http`: the host sends the request only to hosts the
//! backend's manifest grants, and enforces the timeouts given here.

use silt_core::search::{Fetch, FetchError, Fetched};
use wasi::http::types::{ErrorCode, Fields, OutgoingRequest, RequestOptions, Scheme};

/// The most of a reply read (a search API's JSON is far smaller).
const MAX_BODY: usize = 8 << 20;

/// The sandbox's HTTP client.
pub struct WasiFetch;

fn error_of(e: ErrorCode) -> FetchError {
    match e {
        ErrorCode::HttpRequestDenied | ErrorCode::DestinationIpProhibited => {
            FetchError::Denied(format!("{e:?}"))
        }
        ErrorCode::ConnectionTimeout | ErrorCode::ConnectionReadTimeout => FetchError::Timeout,
        other => FetchError::Connect(format!("{other:?}")),
    }
}

impl Fetch for WasiFetch {
    fn get(
        &mut self,
        raw: &str,
        headers: &[(&str, &str)],
        timeout_ms: u64,
    ) -> Result<Fetched, FetchError> {
        let url = url::Url::parse(raw).map_err(|e| FetchError::Connect(format!("{raw}: {e}")))?;
        let fields = Fields::new();
        for (k, v) in headers {
            fields
                .append(k, v.as_bytes())
                .map_err(|e| FetchError::Connect(format!("header {k}: {e:?}")))?;
        }
        let request = OutgoingRequest::new(fields);
        let scheme = match url.scheme() {
            "http" => Scheme::Http,
            "https" => Scheme::Https,
            other => {
                return Err(FetchError::Connect(format!(
                    "scheme {other} is not http(s)"
                )));
            }
        };
        let host = url
            .host_str()
            .ok_or_else(|| FetchError::Connect(format!("{raw} has no host")))?;
        let authority = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        let path = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_string(),
        };
        let bad = |what: &str| FetchError::Connect(format!("cannot set the {what} of {raw}"));
        request
            .set_scheme(Some(&scheme))
            .map_err(|_| bad("scheme"))?;
        request
            .set_authority(Some(&authority))
            .map_err(|_| bad("host"))?;
        request
            .set_path_with_query(Some(&path))
            .map_err(|_| bad("path"))?;
        let ns = timeout_ms.saturating_mul(1_000_000);
        let options = RequestOptions::new();
        // the host may not support one of these; the deadline still holds
        let _ = options.set_connect_timeout(Some(ns));
        let _ = options.set_first_byte_timeout(Some(ns));
        let _ = options.set_between_bytes_timeout(Some(ns));
        let future =
            wasi::http::outgoing_handler::handle(request, Some(options)).map_err(error_of)?;
        future.subscribe().block();
        let response = future
            .get()
            .ok_or_else(|| FetchError::Connect("no response".into()))?
            .map_err(|_| FetchError::Connect("response taken twice".into()))?
            .map_err(error_of)?;
        let status = response.status();
        let body = response
            .consume()
            .map_err(|_| FetchError::Connect("no body".into()))?;
        let stream = body
            .stream()
            .map_err(|_| FetchError::Connect("no body stream".into()))?;
        let bytes = silt_guest::body::read_all(&stream, MAX_BODY, ns).map_err(|e| match e {
            silt_guest::body::BodyError::TimedOut => FetchError::Timeout,
            other => FetchError::Connect(other.to_string()),
        })?;
        drop(stream);
        Ok(Fetched {
            status,
            body: bytes,
        })
    }

    fn now_ms(&mut self) -> u64 {
        wasi::clocks::monotonic_clock::now() / 1_000_000
    }
}
