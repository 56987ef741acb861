//! Reading a `wasi:http` reply body whole, up to a cap: what every
//! component that talks HTTP does with a reply.

use wasi::clocks::monotonic_clock;
use wasi::http::types::{ErrorCode, http_error_code};
use wasi::io::poll::poll;
use wasi::io::streams::{InputStream, StreamError};

/// Why a body could not be read whole.
#[derive(Debug, Clone, PartialEq)]
pub enum BodyError {
    /// It is longer than the cap (bytes).
    TooLarge(usize),
    /// The server sent nothing for as long as the request's between-bytes
    /// limit allowed.
    TimedOut,
    /// The stream failed otherwise; the host's words.
    Failed(String),
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::TooLarge(cap) => write!(f, "the reply is over {} MB", cap >> 20),
            BodyError::TimedOut => write!(f, "the reply stopped arriving (read timeout)"),
            BodyError::Failed(why) => write!(f, "reading the reply failed: {why}"),
        }
    }
}

/// Every byte of `stream` until it closes, at most `cap`. `between_bytes_ns`
/// is the limit the request set on the wait for each chunk: a read that
/// fails after waiting that long is a timeout, known from the clock, not
/// from how the host words its error.
pub fn read_all(
    stream: &InputStream,
    cap: usize,
    between_bytes_ns: u64,
) -> Result<Vec<u8>, BodyError> {
    read_chunks(cap, between_bytes_ns, || Ok(stream.blocking_read(CHUNK)))
}

/// [`read_all`] that also gives up at `deadline` (a monotonic-clock
/// instant, ns), however steadily the bytes trickle in: a server sending
/// one byte a second never trips the between-bytes limit.
pub fn read_all_until(
    stream: &InputStream,
    cap: usize,
    between_bytes_ns: u64,
    deadline: u64,
) -> Result<Vec<u8>, BodyError> {
    let timer = monotonic_clock::subscribe_instant(deadline);
    let readable = stream.subscribe();
    read_chunks(cap, between_bytes_ns, || {
        if poll(&[&readable, &timer]).contains(&1) {
            return Err(BodyError::TimedOut);
        }
        Ok(stream.read(CHUNK))
    })
}

/// The most asked of one read.
const CHUNK: u64 = 64 * 1024;

/// Gathers what `next` reads until the stream closes, at most `cap`.
fn read_chunks(
    cap: usize,
    between_bytes_ns: u64,
    mut next: impl FnMut() -> Result<Result<Vec<u8>, StreamError>, BodyError>,
) -> Result<Vec<u8>, BodyError> {
    let mut bytes = Vec::new();
    loop {
        let asked = monotonic_clock::now();
        match next()? {
            Ok(chunk) => {
                bytes.extend_from_slice(&chunk);
                if bytes.len() > cap {
                    return Err(BodyError::TooLarge(cap));
                }
            }
            Err(StreamError::Closed) => return Ok(bytes),
            Err(StreamError::LastOperationFailed(e)) => {
                return Err(failed(&e, asked, between_bytes_ns));
            }
        }
    }
}

/// A failed read asked at `asked`: a timeout when it waited the
/// between-bytes limit, known from the clock, not from the host's words.
fn failed(e: &wasi::io::error::Error, asked: u64, between_bytes_ns: u64) -> BodyError {
    // the host's timer started at the last chunk, a moment before this
    // read asked: a tenth of slack
    let waited = monotonic_clock::now().saturating_sub(asked);
    let timed_out = waited >= between_bytes_ns - between_bytes_ns / 10
        || matches!(http_error_code(e), Some(ErrorCode::ConnectionReadTimeout));
    if timed_out {
        BodyError::TimedOut
    } else {
        BodyError::Failed(e.to_debug_string())
    }
}
