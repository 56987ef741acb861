//! MCP over stdin/stdout, with a line filter in front of rmcp's reader.
//!
//! rmcp (like the other official SDKs) drops a line it cannot parse
//! without a word, so a replying peer cannot start an error storm. That
//! leaves a client whose request was well meant but unparsable — nested
//! deeper than the JSON parser's 128 levels, or over the 16 MiB line cap,
//! a JSON-RPC batch (rmcp serves none), a `jsonrpc` other than "2.0" —
//! waiting forever. The filter parses each line first; when a line fails
//! and its top-level `id` can still be read, that request is answered with
//! a JSON-RPC error naming the problem. A line with no readable id is
//! dropped, as rmcp would, and logged.
//!
//! On SIGTERM (or Ctrl-C) the filter stops handing requests on, answers
//! new ones that silt is stopping, and waits for the calls in flight to be
//! answered (at most [`DRAIN_LIMIT`]) before it closes rmcp's input, so a
//! call whose work was committed is not left without its answer.

use std::collections::HashSet;
use std::sync::{LazyLock, Mutex};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

use rmcp::model::ClientJsonRpcMessage;
use serde::Deserialize;
use serde_json::{Value, json};

use super::http::DRAIN_LIMIT;
use super::jsonrpc::{INVALID_REQUEST, MAX_LINE, PARSE_ERROR};

/// How much of an oversized line is kept to find its id.
const HEAD: usize = 64 << 10;

/// The code of the answer to a request that arrives while silt stops.
const STOPPING: i64 = -32000;

/// The requests handed to rmcp and not yet answered: the filter adds
/// them, [`merge_responses`] takes them off as their answers pass.
#[derive(Default)]
pub struct InFlight {
    ids: Mutex<HashSet<String>>,
    count: tokio::sync::watch::Sender<usize>,
}

impl InFlight {
    fn add(&self, id: &Value) {
        let mut ids = self.ids.lock().expect("in-flight lock");
        ids.insert(id.to_string());
        self.count.send_replace(ids.len());
    }

    fn remove(&self, id: &Value) {
        let mut ids = self.ids.lock().expect("in-flight lock");
        if ids.remove(&id.to_string()) {
            self.count.send_replace(ids.len());
        }
    }

    /// Returns once no request is in flight.
    async fn emptied(&self) {
        let mut count = self.count.subscribe();
        let _ = count.wait_for(|n| *n == 0).await;
    }
}

/// The one stdio session a process serves.
static SESSION: LazyLock<InFlight> = LazyLock::new(InFlight::default);

/// Copies request lines from `input` to `to_server`; answers the ones that
/// cannot be served through `errors`. Returns at the end of `input`, or
/// after a SIGTERM or SIGINT once the calls in flight are answered.
pub async fn filter_requests(
    input: impl AsyncRead + Unpin,
    to_server: impl AsyncWrite + Unpin,
    errors: tokio::sync::mpsc::UnboundedSender<String>,
) -> std::io::Result<()> {
    let stop = super::http::shutdown_on_signals().map_err(std::io::Error::other)?;
    filter_until(input, to_server, errors, &SESSION, stop).await
}

enum Event {
    Line { ended: bool, oversized: bool },
    Stop,
    Drained,
}

/// [`filter_requests`] for the requests tracked in `in_flight`, stopping
/// when `stop` is cancelled.
pub async fn filter_until(
    input: impl AsyncRead + Unpin,
    mut to_server: impl AsyncWrite + Unpin,
    errors: tokio::sync::mpsc::UnboundedSender<String>,
    in_flight: &InFlight,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    let mut draining = false;
    let mut input_ended = false;
    let deadline = tokio::time::sleep(DRAIN_LIMIT);
    tokio::pin!(deadline);
    loop {
        let event = tokio::select! {
            // a line that arrives with the signal is answered as stopping
            biased;
            () = stop.cancelled(), if !draining => Event::Stop,
            () = in_flight.emptied(), if draining => Event::Drained,
            () = &mut deadline, if draining => {
                tracing::warn!(
                    "stopping with calls still running after {} s",
                    DRAIN_LIMIT.as_secs()
                );
                Event::Drained
            }
            read = read_line(&mut input, &mut line), if !input_ended => {
                let (ended, oversized) = read?;
                Event::Line { ended, oversized }
            }
        };
        match event {
            Event::Stop => {
                // a line half read stays in `line`, and is finished next
                eprintln!(
                    "silt: stopping: no new calls; waiting up to {} s for the calls in flight",
                    DRAIN_LIMIT.as_secs()
                );
                draining = true;
                deadline
                    .as_mut()
                    .reset(tokio::time::Instant::now() + DRAIN_LIMIT);
            }
            Event::Drained => return to_server.shutdown().await,
            Event::Line { ended, oversized } => {
                if !line.is_empty() {
                    let pass = if oversized {
                        refuse(
                            &line,
                            INVALID_REQUEST,
                            format!("the request is larger than {} MiB", MAX_LINE >> 20),
                            &errors,
                        );
                        false
                    } else {
                        admit(&line, draining, in_flight, &errors)
                    };
                    if pass {
                        to_server.write_all(&line).await?;
                        if !line.ends_with(b"\n") {
                            to_server.write_all(b"\n").await?;
                        }
                        to_server.flush().await?;
                    }
                }
                line.clear();
                if ended {
                    if !draining {
                        return to_server.shutdown().await;
                    }
                    input_ended = true;
                }
            }
        }
    }
}

/// Whether a whole line goes on to rmcp; answers (or logs) one that
/// rmcp would drop, and notes the requests it passes as in flight.
fn admit(
    line: &[u8],
    draining: bool,
    in_flight: &InFlight,
    errors: &tokio::sync::mpsc::UnboundedSender<String>,
) -> bool {
    // a Value, not IgnoredAny: skipping a value ignores the depth limit
    // that rmcp's typed parse keeps
    let message = match serde_json::from_slice::<Value>(trim(line)) {
        Ok(m) => m,
        Err(_) if trim(line).is_empty() => return false,
        Err(e) => {
            refuse(line, PARSE_ERROR, format!("parse error: {e}"), errors);
            return false;
        }
    };
    let object = match &message {
        Value::Object(o) => o,
        Value::Array(batch) => {
            refuse_batch(batch, errors);
            return false;
        }
        _ => {
            tracing::warn!("dropped an input line that is not a JSON-RPC object");
            return false;
        }
    };
    let id = object.get("id").filter(|i| i.is_string() || i.is_number());
    let request = object.contains_key("method");
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        let message = "invalid request: `jsonrpc` must be \"2.0\"".to_string();
        match (request, id) {
            (true, Some(id)) => answer(id, INVALID_REQUEST, message, errors),
            _ => tracing::warn!("dropped an input line: {message}"),
        }
        return false;
    }
    match (request, id) {
        (true, Some(id)) if draining => {
            answer(
                id,
                STOPPING,
                "silt is stopping; send the call again".into(),
                errors,
            );
            return false;
        }
        (true, Some(id)) => {
            // rmcp answers a request it cannot type with a null id, which
            // the client cannot match to its call: answer it with its own
            if let Err(e) = ClientJsonRpcMessage::deserialize(&message) {
                answer(id, INVALID_REQUEST, format!("invalid request: {e}"), errors);
                return false;
            }
            in_flight.add(id);
        }
        // a cancelled request is not answered (MCP's cancellation)
        (true, None)
            if object.get("method").and_then(Value::as_str) == Some("notifications/cancelled") =>
        {
            if let Some(id) = object.get("params").and_then(|p| p.get("requestId")) {
                in_flight.remove(id);
            }
        }
        _ => {}
    }
    true
}

/// A batch (a top-level array): rmcp serves none, and MCP dropped them
/// (2025-06-18), so each request in it is answered, in one array as
/// JSON-RPC 2.0 asks, that batches are not accepted. An empty batch gets
/// one error with a null id.
fn refuse_batch(batch: &[Value], errors: &tokio::sync::mpsc::UnboundedSender<String>) {
    let message = "invalid request: JSON-RPC batches are not accepted; send each request on a \
                   line of its own";
    let error = |id: Value| json!({"jsonrpc": "2.0", "id": id, "error": {"code": INVALID_REQUEST, "message": message}});
    if batch.is_empty() {
        let _ = errors.send(error(Value::Null).to_string());
        return;
    }
    let answers: Vec<Value> = batch
        .iter()
        .filter_map(|m| match m.as_object() {
            // a notification (no id) is never answered
            Some(o) if !o.contains_key("id") => None,
            Some(o) => Some(error(
                o.get("id")
                    .filter(|i| i.is_string() || i.is_number())
                    .cloned()
                    .unwrap_or(Value::Null),
            )),
            None => Some(error(Value::Null)),
        })
        .collect();
    if !answers.is_empty() {
        let _ = errors.send(Value::Array(answers).to_string());
    }
}

/// Merges the server's output lines and the filter's error answers onto
/// `output`, one whole line at a time.
pub async fn merge_responses(
    from_server: impl AsyncRead + Unpin,
    errors: tokio::sync::mpsc::UnboundedReceiver<String>,
    output: impl AsyncWrite + Unpin,
) -> std::io::Result<()> {
    merge_for(from_server, errors, output, &SESSION).await
}

/// [`merge_responses`], taking the requests it sees answered off `in_flight`.
pub async fn merge_for(
    from_server: impl AsyncRead + Unpin,
    mut errors: tokio::sync::mpsc::UnboundedReceiver<String>,
    mut output: impl AsyncWrite + Unpin,
    in_flight: &InFlight,
) -> std::io::Result<()> {
    let mut lines = BufReader::new(from_server).lines();
    let mut errors_open = true;
    loop {
        tokio::select! {
            line = lines.next_line() => match line? {
                Some(l) => {
                    output.write_all(format!("{l}\n").as_bytes()).await?;
                    // an answer (not a request of the server's own)
                    if let Some(id) = top_level(l.as_bytes(), b"id")
                        && top_level(l.as_bytes(), b"method").is_none()
                    {
                        in_flight.remove(&id);
                    }
                }
                None => break,
            },
            e = errors.recv(), if errors_open => match e {
                Some(e) => output.write_all(format!("{e}\n").as_bytes()).await?,
                None => errors_open = false,
            },
        }
        output.flush().await?;
    }
    // answers the filter queued after the server finished
    while let Ok(e) = errors.try_recv() {
        output.write_all(format!("{e}\n").as_bytes()).await?;
    }
    output.flush().await
}

/// Reads one line into `line` (with its `\n`), keeping at most [`HEAD`]
/// bytes of one over [`MAX_LINE`]. Returns (end of input, oversized).
async fn read_line(
    input: &mut (impl AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
) -> std::io::Result<(bool, bool)> {
    let mut seen = 0usize;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok((true, seen > MAX_LINE));
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        if seen + take <= MAX_LINE {
            line.extend_from_slice(&available[..take]);
        } else if line.len() < HEAD {
            let room = HEAD - line.len();
            line.extend_from_slice(&available[..take.min(room)]);
        }
        seen += take;
        input.consume(take);
        if newline.is_some() {
            return Ok((false, seen > MAX_LINE));
        }
    }
}

fn trim(line: &[u8]) -> &[u8] {
    line.trim_ascii()
}

/// Queues a JSON-RPC error for the line's request, when its id is legible.
fn refuse(
    line: &[u8],
    code: i64,
    message: String,
    errors: &tokio::sync::mpsc::UnboundedSender<String>,
) {
    match top_level_id(line) {
        Some(id) => answer(&id, code, message, errors),
        None => tracing::warn!("dropped an input line with no legible request id: {message}"),
    }
}

/// Queues a JSON-RPC error answering request `id`.
fn answer(
    id: &Value,
    code: i64,
    message: String,
    errors: &tokio::sync::mpsc::UnboundedSender<String>,
) {
    let answer = json!({"jsonrpc": "2.0", "id": id, "error": {
        "code": code, "message": message}});
    let _ = errors.send(answer.to_string());
}

/// The `id` member of the top-level object, read without parsing the rest
/// (which may be too deep or cut short): a number or a string.
pub fn top_level_id(line: &[u8]) -> Option<Value> {
    top_level(line, b"id")
}

/// The top-level object's member `key` when it is a string or a number.
fn top_level(line: &[u8], key: &[u8]) -> Option<Value> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'"' => {
                let end = string_end(line, i)?;
                if depth == 1 && &line[i + 1..end - 1] == key {
                    let mut j = end;
                    while line.get(j).is_some_and(u8::is_ascii_whitespace) {
                        j += 1;
                    }
                    if line.get(j) == Some(&b':') {
                        return value_at(line, j + 1);
                    }
                }
                i = end;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index just past the string starting at `start` (a `"`).
fn string_end(line: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < line.len() {
        match line[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// A string or number value starting at or after `at`.
fn value_at(line: &[u8], mut at: usize) -> Option<Value> {
    while line.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    let end = match *line.get(at)? {
        b'"' => string_end(line, at)?,
        b'-' | b'0'..=b'9' => {
            let mut e = at + 1;
            while line
                .get(e)
                .is_some_and(|b| b.is_ascii_digit() || b"+-.eE".contains(b))
            {
                e += 1;
            }
            e
        }
        _ => return None,
    };
    serde_json::from_slice(&line[at..end])
        .ok()
        .filter(|v: &Value| v.is_string() || v.is_number())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_level_id_is_read_from_broken_or_deep_lines() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}1{}}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        assert_eq!(top_level_id(deep.as_bytes()), Some(json!(7)));
        assert_eq!(
            top_level_id(br#"{"params":{"id":1},"id" : "a\"b","x":"#),
            Some(json!("a\"b"))
        );
        assert_eq!(top_level_id(br#"{"method":"x","params":{"id":3}}"#), None);
        assert_eq!(top_level_id(br#"{"id":null}"#), None);
        assert_eq!(top_level_id(b"garbage"), None);
        assert_eq!(top_level_id(br#"{"id":-12.5e3}"#), Some(json!(-12500.0)));
    }

    async fn filtered(input: Vec<u8>) -> (Vec<u8>, Vec<String>) {
        let (to_server, mut server_side) = tokio::io::duplex(1 << 20);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let in_flight = InFlight::default();
        let mut forwarded = Vec::new();
        let (done, read) = tokio::join!(
            filter_until(
                std::io::Cursor::new(input),
                to_server,
                tx,
                &in_flight,
                CancellationToken::new(),
            ),
            tokio::io::AsyncReadExt::read_to_end(&mut server_side, &mut forwarded)
        );
        done.unwrap();
        read.unwrap();
        let mut errors = Vec::new();
        while let Ok(e) = rx.try_recv() {
            errors.push(e);
        }
        (forwarded, errors)
    }

    #[tokio::test]
    async fn batches_and_other_versions_get_invalid_request_errors() {
        let lines = [
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},5]"#,
            "[]",
            r#"[{"jsonrpc":"2.0","method":"n"}]"#,
            r#"{"jsonrpc":"1.0","id":"v1","method":"ping"}"#,
            r#"{"id":3,"method":"ping"}"#,
            r#"{"jsonrpc":"1.0","method":"notifications/x"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":42}"#,
        ];
        let (forwarded, errors) = filtered(lines.join("\n").into_bytes()).await;
        assert_eq!(
            String::from_utf8(forwarded).unwrap(),
            format!("{}\n", lines[6])
        );
        let errors: Vec<Value> = errors
            .iter()
            .map(|e| serde_json::from_str(e).unwrap())
            .collect();
        assert_eq!(errors.len(), 5, "{errors:?}");
        let batch = errors[0].as_array().unwrap();
        assert_eq!(batch.len(), 2, "the notification is not answered");
        assert_eq!(
            (&batch[0]["id"], &batch[1]["id"]),
            (&json!(1), &Value::Null)
        );
        assert_eq!(batch[0]["error"]["code"], INVALID_REQUEST);
        // `[]`, jsonrpc 1.0, no jsonrpc, params rmcp cannot type
        for (e, id) in errors[1..]
            .iter()
            .zip([json!(null), json!("v1"), json!(3), json!(5)])
        {
            assert_eq!(
                (&e["id"], &e["error"]["code"]),
                (&id, &json!(INVALID_REQUEST)),
                "{e}"
            );
        }
    }

    /// After `stop`, the filter answers new requests, passes everything
    /// else, and closes rmcp's input only once the calls in flight are
    /// answered (a cancelled one needs no answer).
    #[tokio::test]
    async fn a_stop_waits_for_the_calls_in_flight() {
        use tokio::io::AsyncReadExt;
        let (mut client, input) = tokio::io::duplex(1 << 16);
        let (to_server, mut server_side) = tokio::io::duplex(1 << 16);
        let (server_out, from_server) = tokio::io::duplex(1 << 16);
        let (output, mut client_in) = tokio::io::duplex(1 << 16);
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let in_flight = InFlight::default();
        let stop = CancellationToken::new();
        let filter = filter_until(input, to_server, tx, &in_flight, stop.clone());
        let merge = merge_for(from_server, rx, output, &in_flight);
        let script = async {
            let mut server_out = server_out;
            let call =
                |id: u64| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n");
            client.write_all(call(1).as_bytes()).await.unwrap();
            client.write_all(call(2).as_bytes()).await.unwrap();
            let mut seen = vec![0u8; call(1).len() + call(2).len()];
            server_side.read_exact(&mut seen).await.unwrap();
            stop.cancel();
            client.write_all(call(3).as_bytes()).await.unwrap();
            client
                .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":2}}\n")
                .await
                .unwrap();
            let mut line = String::new();
            let mut reader = BufReader::new(&mut client_in);
            reader.read_line(&mut line).await.unwrap();
            let stopping: Value = serde_json::from_str(&line).unwrap();
            assert_eq!(
                (&stopping["id"], &stopping["error"]["code"]),
                (&json!(3), &json!(STOPPING))
            );
            // the cancellation went on to rmcp; its input is still open
            let mut cancelled = String::new();
            BufReader::new(&mut server_side)
                .read_line(&mut cancelled)
                .await
                .unwrap();
            assert!(cancelled.contains("notifications/cancelled"), "{cancelled}");
            let early =
                tokio::time::timeout(std::time::Duration::from_millis(300), server_side.read_u8())
                    .await;
            assert!(early.is_err(), "rmcp's input closed with call 1 in flight");
            server_out
                .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n")
                .await
                .unwrap();
            line.clear();
            reader.read_line(&mut line).await.unwrap();
            assert!(line.contains("\"id\":1"), "{line}");
            // call 1 answered: rmcp's input ends
            let mut rest = Vec::new();
            server_side.read_to_end(&mut rest).await.unwrap();
            assert!(rest.is_empty());
            drop(server_out);
        };
        let (filtered, merged, ()) =
            tokio::time::timeout(std::time::Duration::from_secs(10), async {
                tokio::join!(filter, merge, script)
            })
            .await
            .expect("the stop finished");
        filtered.unwrap();
        merged.unwrap();
    }

    #[tokio::test]
    async fn good_lines_pass_and_unparsable_requests_are_answered() {
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{{\"arguments\":{{\"q\":{}{}}}}}}}\n",
            "[".repeat(200),
            "]".repeat(200)
        );
        let mut input = Vec::new();
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\n");
        input.extend_from_slice(deep.as_bytes());
        input.extend_from_slice(b"not json at all\n");
        input.extend_from_slice(
            b"{\"jsonrpc\":\"2.0\",\"id\":\"big\",\"method\":\"x\",\"params\":\"",
        );
        input.extend(std::iter::repeat_n(b'a', MAX_LINE + 10));
        input.extend_from_slice(b"\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
        let (forwarded, errors) = filtered(input).await;
        assert_eq!(
            String::from_utf8(forwarded).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n"
        );
        assert_eq!(errors.len(), 2, "{errors:?}");
        let deep: Value = serde_json::from_str(&errors[0]).unwrap();
        assert_eq!(deep["id"], 4);
        assert_eq!(deep["error"]["code"], -32700);
        assert!(
            deep["error"]["message"]
                .as_str()
                .unwrap()
                .contains("recursion limit")
        );
        let big: Value = serde_json::from_str(&errors[1]).unwrap();
        assert_eq!(big["id"], "big");
        assert!(big["error"]["message"].as_str().unwrap().contains("16 MiB"));
    }
}
