//! The judge's settings, read from the environment keys its manifest
//! grants (nothing else is visible inside the sandbox).

use silt_core::closed::Debias;
use silt_core::closed::openai::{Endpoint, MAX_TOP_LOGPROBS};
use silt_guest::types::JudgeError;

/// Where and how to ask.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The server's base URL, without a trailing `/v1`.
    pub base: url::Url,
    pub model: String,
    pub api_key: Option<String>,
    /// USD per million input and output tokens.
    pub price_in: f64,
    pub price_out: f64,
    /// Requests in flight at once.
    pub concurrency: usize,
    pub timeout_ms: u64,
    pub top_logprobs: u32,
    pub debias: Debias,
    /// None: probe chat, then completions, then llama.cpp's native API.
    pub endpoint: Option<Endpoint>,
    /// Attempts per request on 429 and 5xx.
    pub attempts: u32,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

fn number<T: std::str::FromStr>(name: &str, default: T) -> Result<T, JudgeError> {
    match var(name) {
        None => Ok(default),
        Some(v) => v
            .parse()
            .map_err(|_| JudgeError::InvalidQuestion(format!("{name}='{v}' is not a number"))),
    }
}

impl Settings {
    pub fn from_env() -> Result<Settings, JudgeError> {
        let raw = var("SILT_MODEL_URL").ok_or_else(|| {
            JudgeError::Unavailable(
                "SILT_MODEL_URL is not set: set it to your model server, e.g. \
                 http://127.0.0.1:8080 (llama-server), http://127.0.0.1:11434 (Ollama) or \
                 https://api.openai.com"
                    .into(),
            )
        })?;
        let mut base = url::Url::parse(&raw).map_err(|e| {
            JudgeError::Unavailable(format!("SILT_MODEL_URL='{raw}' is not a URL ({e})"))
        })?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(JudgeError::Unavailable(format!(
                "SILT_MODEL_URL='{raw}' must be http or https"
            )));
        }
        // accept ".../v1" and ".../v1/" as users copy them from docs
        let path = base.path().trim_end_matches('/').to_string();
        let path = path.strip_suffix("/v1").unwrap_or(&path).to_string();
        base.set_path(&path);
        let price = |name| -> Result<f64, JudgeError> {
            let p: f64 = number(name, 0.0)?;
            if !(p.is_finite() && p >= 0.0) {
                return Err(JudgeError::InvalidQuestion(format!("{name} must be >= 0")));
            }
            Ok(p)
        };
        let concurrency: usize = number("SILT_MODEL_CONCURRENCY", 8)?;
        let timeout_ms: u64 = number("SILT_MODEL_TIMEOUT_MS", 60_000)?;
        let top_logprobs: u32 = number("SILT_MODEL_TOP_LOGPROBS", MAX_TOP_LOGPROBS)?;
        let debias = var("SILT_MODEL_DEBIAS")
            .map(|d| d.parse::<Debias>())
            .transpose()
            .map_err(JudgeError::InvalidQuestion)?
            .unwrap_or_default();
        let endpoint = match var("SILT_MODEL_ENDPOINT").as_deref() {
            None | Some("auto") => None,
            Some(e) => Some(Endpoint::parse(e).ok_or_else(|| {
                JudgeError::InvalidQuestion(format!(
                    "SILT_MODEL_ENDPOINT='{e}' is not one of auto, chat, completions, native"
                ))
            })?),
        };
        Ok(Settings {
            base,
            model: var("SILT_MODEL").unwrap_or_else(|| "default".into()),
            api_key: var("SILT_MODEL_API_KEY"),
            price_in: price("SILT_MODEL_PRICE_IN")?,
            price_out: price("SILT_MODEL_PRICE_OUT")?,
            concurrency: concurrency.clamp(1, 64),
            timeout_ms: timeout_ms.clamp(1_000, 600_000),
            top_logprobs: top_logprobs.clamp(2, MAX_TOP_LOGPROBS),
            debias,
            endpoint,
            attempts: 4,
        })
    }

    /// `host:port` of the server, for messages and the cache key.
    pub fn authority(&self) -> String {
        format!(
            "{}:{}",
            self.base.host_str().unwrap_or(""),
            self.base.port_or_known_default().unwrap_or(0)
        )
    }

    /// The URL of `endpoint`.
    pub fn url(&self, endpoint: Endpoint) -> String {
        format!(
            "{}{}",
            self.base.as_str().trim_end_matches('/'),
            endpoint.path()
        )
    }
}
