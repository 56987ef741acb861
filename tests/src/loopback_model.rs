//! A loopback OpenAI-compatible model server whose answers come from
//! labels: a judge that is always right (or wrong in a way a test picks),
//! so a test can tell what a pipeline keeps of a judge's answers from what
//! the judge gets wrong.
//!
//! It reads the prompts silt's model judges send (`silt_core::closed::
//! prompt`: the options under letters, then the item), asks an oracle which
//! option is right, and answers `/v1/chat/completions` with that letter and
//! its top log-probabilities, as a server with logprobs does. Where the
//! oracle has no answer (a calibration prompt, a text it does not know) all
//! letters are equally likely: what a model that cannot tell says.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// One prompt, as the oracle sees it.
#[derive(Debug)]
pub struct Asked<'a> {
    /// The user message in full.
    pub user: &'a str,
    /// The options in the order shown: (letter, text).
    pub options: Vec<(&'a str, &'a str)>,
}

impl<'a> Asked<'a> {
    /// Reads the options block of a closed-question prompt.
    pub fn read(user: &'a str) -> Asked<'a> {
        let options = user
            .split_once("Options:\n")
            .map(|(_, rest)| {
                rest.lines()
                    .take_while(|l| !l.trim().is_empty())
                    .filter_map(|l| {
                        let (letter, text) = l.split_once(". ")?;
                        (letter.len() == 1 && letter.chars().all(|c| c.is_ascii_uppercase()))
                            .then_some((letter, text))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Asked { user, options }
    }

    /// The text between two markers of the user message.
    pub fn between(&self, start: &str, end: &str) -> Option<&'a str> {
        let (_, rest) = self.user.split_once(start)?;
        Some(rest.split_once(end).map_or(rest, |(s, _)| s))
    }

    /// The letter of the first option whose text starts with `head`.
    pub fn letter_of(&self, head: &str) -> Option<&'a str> {
        self.options
            .iter()
            .find(|(_, text)| text.starts_with(head))
            .map(|(l, _)| *l)
    }
}

/// Which letter is right for a prompt; None when the oracle cannot say.
pub type Oracle = Arc<dyn for<'a> Fn(&Asked<'a>) -> Option<String> + Send + Sync>;

/// A running loopback model; stops when dropped.
pub struct LoopbackModel {
    /// The base URL to give `SILT_MODEL_URL`.
    pub url: String,
    /// Prompts answered, and those the oracle knew.
    pub asked: Arc<AtomicUsize>,
    pub known: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for LoopbackModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Clone)]
struct Served {
    oracle: Oracle,
    asked: Arc<AtomicUsize>,
    known: Arc<AtomicUsize>,
}

/// The probability the model puts on the oracle's letter.
const SURE: f64 = 0.98;

async fn chat(State(s): State<Served>, body: axum::body::Bytes) -> Response {
    s.asked.fetch_add(1, Ordering::Relaxed);
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let user = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or("");
    let asked = Asked::read(user);
    let letters: Vec<&str> = if asked.options.is_empty() {
        vec!["A", "B"]
    } else {
        asked.options.iter().map(|(l, _)| *l).collect()
    };
    let right = (s.oracle)(&asked).filter(|l| letters.contains(&l.as_str()));
    if right.is_some() {
        s.known.fetch_add(1, Ordering::Relaxed);
    }
    let n = letters.len() as f64;
    let p = |l: &str| match &right {
        Some(r) if r == l => SURE,
        Some(_) => (1.0 - SURE) / (n - 1.0),
        None => 1.0 / n,
    };
    let top: Vec<Value> = letters
        .iter()
        .map(|l| json!({"token": l, "logprob": p(l).ln()}))
        .collect();
    let answer = right.clone().unwrap_or_else(|| letters[0].to_string());
    axum::Json(json!({
        "object": "chat.completion",
        "model": "loopback",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": answer},
            "finish_reason": "length",
            "logprobs": {"content": [{"token": answer, "logprob": p(&answer).ln(), "top_logprobs": top}]},
        }],
        "usage": {"prompt_tokens": user.len() / 4, "completion_tokens": 1},
    }))
    .into_response()
}

impl LoopbackModel {
    /// Serves `oracle` on a free loopback port.
    pub async fn start(oracle: Oracle) -> LoopbackModel {
        let asked = Arc::new(AtomicUsize::new(0));
        let known = Arc::new(AtomicUsize::new(0));
        let state = Served {
            oracle,
            asked: asked.clone(),
            known: known.clone(),
        };
        let app = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(chat))
            .with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        LoopbackModel {
            url,
            asked,
            known,
            task,
        }
    }
}
