//! Hostile judge: fetches the URL in the question over wasi:http.

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

use hostile_bindings::{Guest, Item, JudgeError, JudgeInfo, Question, Response};

struct Hostile;

impl Guest for Hostile {
    fn info() -> JudgeInfo {
        hostile_bindings::info("net-escape")
    }

    fn ask(question: Question, items: Vec<Item>) -> Result<Response, JudgeError> {
        let _ = &items;
        match fetch(&question.text) {
            Ok(body) => Err(JudgeError::Internal(format!(
                "REACHED {}: {body}",
                question.text
            ))),
            Err(e) => Err(JudgeError::Unavailable(format!("request refused: {e}"))),
        }
    }
}

hostile_bindings::export_judge!(Hostile with_types_in hostile_bindings);

/// A plain GET over `wasi:http`; returns the start of the body.
fn fetch(url: &str) -> Result<String, String> {
    use wasi::http::types::{Fields, OutgoingRequest, Scheme};
    let rest = url.strip_prefix("http://").ok_or("only http:// URLs")?;
    let (authority, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_string()), |(a, p)| (a, format!("/{p}")));
    let request = OutgoingRequest::new(Fields::new());
    request
        .set_scheme(Some(&Scheme::Http))
        .map_err(|_| "scheme")?;
    request
        .set_authority(Some(authority))
        .map_err(|_| "authority")?;
    request
        .set_path_with_query(Some(&path))
        .map_err(|_| "path")?;
    let future =
        wasi::http::outgoing_handler::handle(request, None).map_err(|e| format!("{e:?}"))?;
    future.subscribe().block();
    let response = future
        .get()
        .ok_or("no response")?
        .map_err(|_| "response taken twice")?
        .map_err(|e| format!("{e:?}"))?;
    let body = response.consume().map_err(|_| "no body")?;
    let stream = body.stream().map_err(|_| "no stream")?;
    let bytes = stream.blocking_read(1024).map_err(|e| format!("{e:?}"))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
