//! `sieve_rank`: arguments and results as the seed's `jev_rank`, plus
//! `judge`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::tools::ask::{ItemInput, add_usage, items_in};
use silt_config::Config;
use silt_runtime::bindings::ask_engine::exports::silt::sieve::rank::RankRequest;
use silt_runtime::{CallError, Runtime};

/// Arguments of `sieve_rank`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct RankParams {
    /// What the candidates are being ranked against.
    pub question: String,
    /// Candidates as [{id, text}] (or strings); a missing id is the list position. Each is cut to 2000 characters.
    pub candidates: Vec<ItemInput>,
    /// Return at most this many results; omit for all.
    #[serde(default, deserialize_with = "crate::tools::schema::opt_u32")]
    #[schemars(range(min = 1))]
    pub top_k: Option<u32>,
    /// Drop candidates scoring below this probability (default 0).
    #[serde(default, deserialize_with = "crate::tools::schema::opt_f64")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub threshold: Option<f64>,
    /// The judge plugin to ask (default: silt.toml's choice for sieve_rank, else lexical).
    #[serde(default)]
    pub judge: Option<String>,
}

impl RankParams {
    /// The engine request; the engine checks it.
    pub fn to_request(&self) -> RankRequest {
        RankRequest {
            question: self.question.trim().into(),
            candidates: items_in(&self.candidates),
            top_k: self.top_k,
            threshold: self.threshold.unwrap_or(0.0),
        }
    }
}

/// Runs `sieve_rank` end to end.
pub async fn run(
    runtime: &Runtime,
    config: &Config,
    params: &RankParams,
) -> Result<Value, CallError> {
    let request = params.to_request();
    let judge = params
        .judge
        .as_deref()
        .unwrap_or_else(|| config.judge_for("sieve_rank"));
    let result = runtime.rank(judge, &request).await?;
    let mut out = json!({
        "results": result.results.iter().map(|r| json!({"id": r.id, "probability": r.probability})).collect::<Vec<_>>(),
        "candidates_scored": result.candidates_scored,
    });
    add_usage(&mut out, &result.usage);
    runtime.judged_by(judge)?.stamp(&mut out);
    Ok(out)
}
