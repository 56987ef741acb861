//! Reading a `wasi:http` reply body whole, up to a cap: what every
//! component that talks HTTP does with a reply.

use wasi::io::streams::{InputStream, StreamError};

/// Why a body could not be read whole.
#[derive(Debug, Clone, PartialEq)]
pub enum BodyError {
    /// It is longer than the cap (bytes).
    TooLarge(usize),
    /// The stream failed; the host's words.
    Failed(String),
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::TooLarge(cap) => write!(f, "the reply is over {} MB", cap >> 20),
            BodyError::Failed(why) => write!(f, "reading the reply failed: {why}"),
        }
    }
}

/// Every byte of `stream` until it closes, at most `cap`.
pub fn read_all(stream: &InputStream, cap: usize) -> Result<Vec<u8>, BodyError> {
    let mut bytes = Vec::new();
    loop {
        match stream.blocking_read(64 * 1024) {
            Ok(chunk) => {
                bytes.extend_from_slice(&chunk);
                if bytes.len() > cap {
                    return Err(BodyError::TooLarge(cap));
                }
            }
            Err(StreamError::Closed) => return Ok(bytes),
            Err(StreamError::LastOperationFailed(e)) => {
                return Err(BodyError::Failed(e.to_debug_string()));
            }
        }
    }
}
