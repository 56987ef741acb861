//! OpenAI-compatible servers: the request that asks for one answer token
//! with its top log-probabilities, and the reading of the reply, for the
//! three endpoints servers offer: chat completions (OpenAI, vLLM,
//! llama-server, LM Studio, Ollama, hosted APIs), the legacy completions,
//! and llama.cpp's native `/completion`.

use serde_json::{Value, json};

use super::prompt::Prompt;
use super::read::TopToken;

/// The most top log-probabilities OpenAI's API returns per token.
pub const MAX_TOP_LOGPROBS: u32 = 20;

/// Where a judge asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `POST /v1/chat/completions` with `logprobs` and `top_logprobs`.
    Chat,
    /// `POST /v1/completions` with `logprobs: N` (the legacy API).
    Completions,
    /// llama.cpp's `POST /completion` with `n_probs`.
    Native,
}

impl Endpoint {
    /// In the order a probe tries them.
    pub const ALL: [Endpoint; 3] = [Endpoint::Chat, Endpoint::Completions, Endpoint::Native];

    /// The path under the server's base URL (which ends before `/v1`).
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::Chat => "/v1/chat/completions",
            Endpoint::Completions => "/v1/completions",
            Endpoint::Native => "/completion",
        }
    }

    /// The name settings and messages use: `chat`, `completions` or `native`.
    pub fn name(self) -> &'static str {
        match self {
            Endpoint::Chat => "chat",
            Endpoint::Completions => "completions",
            Endpoint::Native => "native",
        }
    }

    /// The endpoint [`Self::name`] names (surrounding whitespace ignored).
    pub fn parse(name: &str) -> Option<Endpoint> {
        Endpoint::ALL.into_iter().find(|e| e.name() == name.trim())
    }
}

/// The request body: one token, greedy, with the top log-probabilities of
/// that token (`top`, at most [`MAX_TOP_LOGPROBS`]).
pub fn body(endpoint: Endpoint, model: &str, prompt: &Prompt, top: u32) -> Value {
    let top = top.clamp(1, MAX_TOP_LOGPROBS);
    match endpoint {
        Endpoint::Chat => json!({
            "model": model,
            "messages": [
                {"role": "system", "content": prompt.system},
                {"role": "user", "content": prompt.user},
            ],
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": true,
            "top_logprobs": top,
        }),
        Endpoint::Completions => json!({
            "model": model,
            "prompt": prompt.plain(),
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": top,
        }),
        Endpoint::Native => json!({
            "prompt": prompt.plain(),
            "n_predict": 1,
            "temperature": 0,
            "n_probs": top,
            "cache_prompt": true,
        }),
    }
}

/// What a reply says about the answer token.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reply {
    /// The top candidates for the first answer token (empty when the server
    /// sent no log-probabilities).
    pub top: Vec<TopToken>,
    /// Tokens read, when the server counted them.
    pub prompt_tokens: Option<u64>,
    /// Tokens written, when the server counted them.
    pub completion_tokens: Option<u64>,
}

/// Reads a 2xx reply of `endpoint`. A body that is not the endpoint's JSON
/// is an error naming what was missing; a well-formed reply without
/// log-probabilities has an empty `top`.
pub fn parse(endpoint: Endpoint, body: &[u8]) -> Result<Reply, String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        let head = String::from_utf8_lossy(&body[..body.len().min(120)]).into_owned();
        format!("the reply is not JSON ({e}): {head}")
    })?;
    let top = match endpoint {
        Endpoint::Chat => {
            let choice = first_choice(&v)?;
            choice
                .pointer("/logprobs/content/0/top_logprobs")
                .and_then(Value::as_array)
                .map(|list| list.iter().filter_map(token_logprob).collect())
                .unwrap_or_default()
        }
        Endpoint::Completions => {
            let choice = first_choice(&v)?;
            // llama-server answers the legacy route in the chat form
            if let Some(list) = choice
                .pointer("/logprobs/content/0/top_logprobs")
                .and_then(Value::as_array)
            {
                return Ok(Reply {
                    top: list.iter().filter_map(token_logprob).collect(),
                    prompt_tokens: v.pointer("/usage/prompt_tokens").and_then(Value::as_u64),
                    completion_tokens: v
                        .pointer("/usage/completion_tokens")
                        .and_then(Value::as_u64),
                });
            }
            match choice.pointer("/logprobs/top_logprobs/0") {
                // {"A": -0.1, " B": -2.3}
                Some(Value::Object(map)) => map
                    .iter()
                    .filter_map(|(t, l)| {
                        Some(TopToken {
                            token: t.clone(),
                            logprob: number(l)?,
                        })
                    })
                    .collect(),
                // some servers send the chat form here too
                Some(Value::Array(list)) => list.iter().filter_map(token_logprob).collect(),
                _ => Vec::new(),
            }
        }
        Endpoint::Native => {
            let first = v
                .pointer("/completion_probabilities/0")
                .cloned()
                .unwrap_or(Value::Null);
            if let Some(list) = first.get("top_logprobs").and_then(Value::as_array) {
                list.iter().filter_map(token_logprob).collect()
            } else if let Some(list) = first
                .get("top_probs")
                .or_else(|| first.get("probs"))
                .and_then(Value::as_array)
            {
                // older servers: {"tok_str" | "token", "prob"}
                list.iter()
                    .filter_map(|t| {
                        let token = t.get("token").or_else(|| t.get("tok_str"))?.as_str()?;
                        let p = number(t.get("prob")?)?;
                        Some(TopToken {
                            token: token.to_string(),
                            logprob: if p > 0.0 { p.ln() } else { f64::NEG_INFINITY },
                        })
                    })
                    .collect()
            } else {
                if v.get("content").is_none() {
                    return Err(
                        "the reply has neither `content` nor `completion_probabilities`".into(),
                    );
                }
                Vec::new()
            }
        }
    };
    let count = |p: &str| v.pointer(p).and_then(Value::as_u64);
    let (prompt_tokens, completion_tokens) = match endpoint {
        Endpoint::Native => (count("/tokens_evaluated"), count("/tokens_predicted")),
        _ => (
            count("/usage/prompt_tokens"),
            count("/usage/completion_tokens"),
        ),
    };
    Ok(Reply {
        top,
        prompt_tokens,
        completion_tokens,
    })
}

fn first_choice(v: &Value) -> Result<&Value, String> {
    v.pointer("/choices/0")
        .ok_or_else(|| "the reply has no `choices`".to_string())
}

/// `{"token": "A", "logprob": -0.1}`.
fn token_logprob(t: &Value) -> Option<TopToken> {
    Some(TopToken {
        token: t.get("token")?.as_str()?.to_string(),
        logprob: number(t.get("logprob")?)?,
    })
}

/// A JSON number; servers that cannot print -inf send null or a string.
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// The server's own words from an error body (`{"error": {"message"}}`,
/// `{"error": "..."}` or `{"message"}`), else the body's start.
pub fn error_message(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let from_json = serde_json::from_str::<Value>(&text).ok().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error"))
            .or_else(|| v.get("message"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    let words = from_json.unwrap_or_else(|| text.trim().to_string());
    crate::text::cut_chars(&words, 300).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt() -> Prompt {
        Prompt {
            system: "sys".into(),
            user: "Question".into(),
            shared: 0,
        }
    }

    #[test]
    fn each_endpoint_asks_for_one_greedy_token_with_its_alternatives() {
        let chat = body(Endpoint::Chat, "m", &prompt(), 50);
        assert_eq!(chat["max_tokens"], 1);
        assert_eq!(chat["logprobs"], true);
        assert_eq!(chat["top_logprobs"], 20, "capped at the API's maximum");
        assert_eq!(chat["messages"][1]["content"], "Question");
        let legacy = body(Endpoint::Completions, "m", &prompt(), 5);
        assert_eq!(legacy["logprobs"], 5);
        assert!(legacy["prompt"].as_str().unwrap().ends_with("Answer:"));
        let native = body(Endpoint::Native, "m", &prompt(), 5);
        assert_eq!(
            (native["n_predict"].clone(), native["n_probs"].clone()),
            (json!(1), json!(5))
        );
    }

    #[test]
    fn chat_replies_are_read_with_their_usage() {
        let reply = br#"{"choices":[{"message":{"content":"A"},"logprobs":{"content":[
            {"token":"A","logprob":-0.2,"top_logprobs":[{"token":"A","logprob":-0.2,"bytes":[65]},
            {"token":" B","logprob":-1.9}]}]}}],"usage":{"prompt_tokens":120,"completion_tokens":1}}"#;
        let r = parse(Endpoint::Chat, reply).unwrap();
        assert_eq!(r.top.len(), 2);
        assert_eq!(r.top[1].token, " B");
        assert_eq!((r.prompt_tokens, r.completion_tokens), (Some(120), Some(1)));
        // a chat reply without logprobs is read as such
        let bare = br#"{"choices":[{"message":{"content":"A"}}]}"#;
        assert!(parse(Endpoint::Chat, bare).unwrap().top.is_empty());
        assert!(
            parse(Endpoint::Chat, br#"{"object":"list"}"#)
                .unwrap_err()
                .contains("choices")
        );
        assert!(
            parse(Endpoint::Chat, b"<html>502</html>")
                .unwrap_err()
                .contains("not JSON")
        );
    }

    #[test]
    fn legacy_and_native_replies_are_read() {
        let legacy = br#"{"choices":[{"text":"A","logprobs":{"tokens":["A"],
            "top_logprobs":[{"A":-0.1," B":-2.5}]}}],"usage":{"prompt_tokens":9}}"#;
        let r = parse(Endpoint::Completions, legacy).unwrap();
        assert_eq!(r.top.len(), 2);
        let native = br#"{"content":"A","tokens_evaluated":33,"tokens_predicted":1,
            "completion_probabilities":[{"token":"A","logprob":-0.3,
            "top_logprobs":[{"id":1,"token":"A","logprob":-0.3},{"id":2,"token":"B","logprob":-1.4}]}]}"#;
        let r = parse(Endpoint::Native, native).unwrap();
        assert_eq!((r.top.len(), r.prompt_tokens), (2, Some(33)));
        let old = br#"{"content":"A","completion_probabilities":[{"content":"A",
            "probs":[{"tok_str":"A","prob":0.75},{"tok_str":"B","prob":0.25}]}]}"#;
        let r = parse(Endpoint::Native, old).unwrap();
        assert!((r.top[0].logprob - 0.75f64.ln()).abs() < 1e-12);
    }

    /// Replies recorded from llama.cpp's llama-server (b10359) serving
    /// SmolLM2-135M-Instruct; fixtures/README.md says how.
    #[test]
    fn recorded_llama_server_replies_are_read() {
        let labels = ["A", "B"];
        for (endpoint, body) in [
            (
                Endpoint::Chat,
                &include_bytes!("fixtures/chat_logprobs.json")[..],
            ),
            (
                Endpoint::Completions,
                &include_bytes!("fixtures/completions_logprobs.json")[..],
            ),
            (
                Endpoint::Native,
                &include_bytes!("fixtures/native_completion_nprobs.json")[..],
            ),
        ] {
            let r = parse(endpoint, body).unwrap();
            assert!(r.top.len() >= 10, "{endpoint:?}: {r:?}");
            let p = super::super::read::label_probabilities(&r.top, &labels).unwrap();
            assert!(p[0] > p[1], "{endpoint:?}: the model leaned to A: {p:?}");
            assert!(r.prompt_tokens.unwrap() > 0, "{endpoint:?}");
        }
        let bare = parse(
            Endpoint::Chat,
            include_bytes!("fixtures/chat_no_logprobs.json"),
        )
        .unwrap();
        assert!(bare.top.is_empty());
        assert!(!error_message(include_bytes!("fixtures/error_missing_messages.json")).is_empty());
    }

    #[test]
    fn error_bodies_give_the_servers_words() {
        assert_eq!(
            error_message(
                br#"{"error":{"message":"model 'x' not found","type":"invalid_request_error"}}"#
            ),
            "model 'x' not found"
        );
        assert_eq!(error_message(br#"{"error":"busy"}"#), "busy");
        assert_eq!(error_message(b"Bad Gateway\n"), "Bad Gateway");
    }
}
