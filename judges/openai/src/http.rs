//! POSTs over `wasi:http`, several in flight at once (one poll over their
//! pollables), with retries on 429 and 5xx that honour `Retry-After`. The
//! host sends a request only to the server the manifest's grant names.
//!
//! Each request has `SILT_MODEL_TIMEOUT_MS` in all from its first send:
//! its connection, its reply's first byte and whole body, its retries and
//! the waits between them. A `Retry-After` that would end past that
//! deadline is not waited out: the 429 is the answer.

use wasi::clocks::monotonic_clock;
use wasi::http::types::{
    ErrorCode, Fields, FutureIncomingResponse, Method, OutgoingBody, OutgoingRequest,
    RequestOptions, Scheme,
};
use wasi::io::poll::{Pollable, poll};

/// The most of a reply read.
const MAX_BODY: usize = 4 << 20;

/// The longest wait between attempts, whatever `Retry-After` says.
const MAX_RETRY_WAIT_MS: u64 = 30_000;

/// A finished exchange.
#[derive(Debug)]
pub struct Answered {
    pub status: u16,
    pub body: Vec<u8>,
}

/// Why a request got no reply.
#[derive(Debug, Clone)]
pub enum PostError {
    /// The host refused to send it (the server is not granted).
    Denied(String),
    /// No connection or no reply in time.
    Unreachable(String),
}

/// How to send: the URL's parts, headers and limits.
pub struct Target {
    pub url: url::Url,
    pub api_key: Option<String>,
    pub timeout_ms: u64,
    pub concurrency: usize,
    pub attempts: u32,
}

fn describe(e: &ErrorCode) -> PostError {
    match e {
        ErrorCode::HttpRequestDenied | ErrorCode::DestinationIpProhibited => {
            PostError::Denied(format!("{e:?}"))
        }
        other => PostError::Unreachable(format!("{other:?}")),
    }
}

impl Target {
    /// Sends `body`, with no timeout past `deadline` (monotonic ns).
    fn start(&self, body: &[u8], deadline: u64) -> Result<FutureIncomingResponse, PostError> {
        let headers = Fields::new();
        let mut pairs = vec![
            ("content-type", "application/json".to_string()),
            ("accept", "application/json".to_string()),
        ];
        if let Some(key) = &self.api_key {
            pairs.push(("authorization", format!("Bearer {key}")));
        }
        for (k, v) in &pairs {
            headers
                .append(k, v.as_bytes())
                .map_err(|e| PostError::Unreachable(format!("header {k}: {e:?}")))?;
        }
        let request = OutgoingRequest::new(headers);
        let bad = |what: &str| PostError::Unreachable(format!("cannot set the request's {what}"));
        request
            .set_method(&Method::Post)
            .map_err(|_| bad("method"))?;
        let scheme = if self.url.scheme() == "https" {
            Scheme::Https
        } else {
            Scheme::Http
        };
        request
            .set_scheme(Some(&scheme))
            .map_err(|_| bad("scheme"))?;
        let host = self.url.host_str().unwrap_or_default();
        let authority = match self.url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        request
            .set_authority(Some(&authority))
            .map_err(|_| bad("host"))?;
        request
            .set_path_with_query(Some(self.url.path()))
            .map_err(|_| bad("path"))?;
        let outgoing = request.body().map_err(|_| bad("body"))?;
        let ns = self
            .timeout_ns()
            .min(deadline.saturating_sub(monotonic_clock::now()).max(1));
        let options = RequestOptions::new();
        let _ = options.set_connect_timeout(Some(ns));
        let _ = options.set_first_byte_timeout(Some(ns));
        let _ = options.set_between_bytes_timeout(Some(ns));
        let future = wasi::http::outgoing_handler::handle(request, Some(options))
            .map_err(|e| describe(&e))?;
        {
            let stream = outgoing.write().map_err(|_| bad("body stream"))?;
            for chunk in body.chunks(4096) {
                stream
                    .blocking_write_and_flush(chunk)
                    .map_err(|e| PostError::Unreachable(format!("sending the request: {e:?}")))?;
            }
        }
        OutgoingBody::finish(outgoing, None).map_err(|e| describe(&e))?;
        Ok(future)
    }

    /// Sends every body and returns the replies in order. At most
    /// `concurrency` are in flight; a 429 or 5xx is retried (up to
    /// `attempts` in all) after `Retry-After` or an exponential backoff.
    pub fn post_all(&self, bodies: &[Vec<u8>]) -> Vec<Result<Answered, PostError>> {
        let mut results: Vec<Option<Result<Answered, PostError>>> =
            (0..bodies.len()).map(|_| None).collect();
        let mut queue: std::collections::VecDeque<(usize, u32)> =
            (0..bodies.len()).map(|i| (i, 1)).collect();
        // each request's deadline, set when it is first sent
        let mut deadlines: Vec<Option<u64>> = vec![None; bodies.len()];
        // (index, attempt, when it may be sent again, in monotonic ns)
        let mut waiting: Vec<(usize, u32, u64)> = Vec::new();
        let mut flight: Vec<(usize, u32, FutureIncomingResponse, Pollable)> = Vec::new();
        loop {
            let now = monotonic_clock::now();
            waiting.retain(|&(i, attempt, due)| {
                if due <= now {
                    queue.push_back((i, attempt));
                    false
                } else {
                    true
                }
            });
            while flight.len() < self.concurrency
                && let Some((i, attempt)) = queue.pop_front()
            {
                let deadline =
                    *deadlines[i].get_or_insert_with(|| monotonic_clock::now() + self.timeout_ns());
                match self.start(&bodies[i], deadline) {
                    Ok(future) => {
                        let pollable = future.subscribe();
                        flight.push((i, attempt, future, pollable));
                    }
                    Err(e) => results[i] = Some(Err(e)),
                }
            }
            if flight.is_empty() && waiting.is_empty() && queue.is_empty() {
                break;
            }
            let timer = waiting
                .iter()
                .map(|w| w.2)
                .min()
                .map(|due| monotonic_clock::subscribe_duration(due.saturating_sub(now)));
            let mut ready: Vec<usize> = {
                let mut list: Vec<&Pollable> = flight.iter().map(|f| &f.3).collect();
                if let Some(t) = &timer {
                    list.push(t);
                }
                if list.is_empty() {
                    continue;
                }
                poll(&list)
                    .into_iter()
                    .map(|r| r as usize)
                    .filter(|&r| r < flight.len())
                    .collect()
            };
            ready.sort_unstable_by(|a, b| b.cmp(a));
            for r in ready {
                let (i, attempt, future, pollable) = flight.swap_remove(r);
                drop(pollable);
                let deadline = deadlines[i].unwrap_or(u64::MAX);
                match self.finish(&future, deadline) {
                    Ok((answered, retry_after)) => {
                        let retryable = answered.status == 429 || answered.status >= 500;
                        let backoff = 500u64 << (attempt - 1).min(6);
                        let wait = retry_after.unwrap_or(backoff).min(MAX_RETRY_WAIT_MS);
                        let due = monotonic_clock::now() + wait * 1_000_000;
                        // a wait that ends past the deadline leaves no time
                        // to ask again: this reply is the answer
                        if retryable && attempt < self.attempts && due < deadline {
                            waiting.push((i, attempt + 1, due));
                        } else {
                            results[i] = Some(Ok(answered));
                        }
                    }
                    Err(e) => results[i] = Some(Err(e)),
                }
            }
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(PostError::Unreachable("never sent".into()))))
            .collect()
    }

    fn timeout_ns(&self) -> u64 {
        self.timeout_ms.saturating_mul(1_000_000)
    }

    /// The reply of a ready future, with its `Retry-After` in ms if any;
    /// its body read by `deadline` (monotonic ns).
    fn finish(
        &self,
        future: &FutureIncomingResponse,
        deadline: u64,
    ) -> Result<(Answered, Option<u64>), PostError> {
        let response = future
            .get()
            .ok_or_else(|| PostError::Unreachable("no response".into()))?
            .map_err(|_| PostError::Unreachable("response taken twice".into()))?
            .map_err(|e| describe(&e))?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get("retry-after")
            .first()
            .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| (s * 1000.0) as u64);
        let body = response
            .consume()
            .map_err(|_| PostError::Unreachable("no body".into()))?;
        let stream = body
            .stream()
            .map_err(|_| PostError::Unreachable("no body stream".into()))?;
        let bytes =
            silt_guest::body::read_all_until(&stream, MAX_BODY, self.timeout_ns(), deadline)
                .map_err(|e| PostError::Unreachable(e.to_string()))?;
        Ok((
            Answered {
                status,
                body: bytes,
            },
            retry_after,
        ))
    }
}
