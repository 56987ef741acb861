//! MCP over stdin/stdout, with a line filter in front of rmcp's reader.
//!
//! rmcp (like the other official SDKs) drops a line it cannot parse
//! without a word, so a replying peer cannot start an error storm. That
//! leaves a client whose request was well meant but unparsable — nested
//! deeper than the JSON parser's 128 levels, or over the 16 MiB line cap —
//! waiting forever. The filter parses each line first; when a line fails
//! and its top-level `id` can still be read, that request is answered with
//! a JSON-RPC error naming the problem. A line with no readable id is
//! dropped, as rmcp would, and logged.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use serde_json::{Value, json};

/// The longest request line taken (rmcp's own cap).
pub const MAX_LINE: usize = 16 << 20;

/// How much of an oversized line is kept to find its id.
const HEAD: usize = 64 << 10;

/// Copies request lines from `input` to `to_server`; answers the ones that
/// cannot be parsed through `errors`. Returns at the end of `input`.
pub async fn filter_requests(
    input: impl AsyncRead + Unpin,
    mut to_server: impl AsyncWrite + Unpin,
    errors: tokio::sync::mpsc::UnboundedSender<String>,
) -> std::io::Result<()> {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        let (ended, oversized) = read_line(&mut input, &mut line).await?;
        if !line.is_empty() {
            if oversized {
                refuse(
                    &line,
                    -32600,
                    format!("the request is larger than {} MiB", MAX_LINE >> 20),
                    &errors,
                );
            } else {
                // a Value, not IgnoredAny: skipping a value ignores the depth limit
                // that rmcp's typed parse keeps
                match serde_json::from_slice::<Value>(trim(&line)) {
                    Ok(_) => {
                        to_server.write_all(&line).await?;
                        if !line.ends_with(b"\n") {
                            to_server.write_all(b"\n").await?;
                        }
                        to_server.flush().await?;
                    }
                    Err(e) if trim(&line).is_empty() => drop(e),
                    Err(e) => refuse(&line, -32700, format!("parse error: {e}"), &errors),
                }
            }
        }
        line.clear();
        if ended {
            return to_server.shutdown().await;
        }
    }
}

/// Merges the server's output lines and the filter's error answers onto
/// `output`, one whole line at a time.
pub async fn merge_responses(
    from_server: impl AsyncRead + Unpin,
    mut errors: tokio::sync::mpsc::UnboundedReceiver<String>,
    mut output: impl AsyncWrite + Unpin,
) -> std::io::Result<()> {
    let mut lines = BufReader::new(from_server).lines();
    let mut errors_open = true;
    loop {
        tokio::select! {
            line = lines.next_line() => match line? {
                Some(l) => output.write_all(format!("{l}\n").as_bytes()).await?,
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
        Some(id) => {
            let answer = json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": code, "message": message}});
            let _ = errors.send(answer.to_string());
        }
        None => tracing::warn!("dropped an input line with no legible request id: {message}"),
    }
}

/// The `id` member of the top-level object, read without parsing the rest
/// (which may be too deep or cut short): a number or a string.
pub fn top_level_id(line: &[u8]) -> Option<Value> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'"' => {
                let end = string_end(line, i)?;
                if depth == 1 && &line[i + 1..end - 1] == b"id" {
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
        let reader = tokio::spawn(filter_requests(std::io::Cursor::new(input), to_server, tx));
        let mut forwarded = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut server_side, &mut forwarded)
            .await
            .unwrap();
        reader.await.unwrap().unwrap();
        let mut errors = Vec::new();
        while let Ok(e) = rx.try_recv() {
            errors.push(e);
        }
        (forwarded, errors)
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
