//! `sieve_route`: arguments and results as the seed's `jev_route`, plus
//! `judge`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::tools::ask::{distribution, usage_json};
use silt_config::Config;
use silt_core::route::DEFAULT_ROUTE_BUDGET_USD;
use silt_runtime::bindings::ask_engine::exports::silt::sieve::route::{Destination, RouteRequest};
use silt_runtime::{CallError, Runtime};

/// One route the caller offers.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct RouteInput {
    /// Unique; `none` is reserved.
    pub id: String,
    /// What this route handles.
    pub description: String,
    /// Other names for it.
    #[serde(default)]
    pub aliases: Vec<String>,
}

/// Arguments of `sieve_route`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct RouteParams {
    /// The request to route.
    pub ask: String,
    /// Routes as [{id, description, aliases}]. Ids must be unique; `none` is reserved.
    pub routes: Vec<RouteInput>,
    /// Approximate budget in USD (default 0.10).
    #[serde(default, deserialize_with = "crate::tools::schema::opt_f64")]
    #[schemars(range(min = 0.0))]
    pub budget_usd: Option<f64>,
    /// The judge plugin to ask (default: silt.toml's choice for sieve_route, else lexical).
    #[serde(default)]
    pub judge: Option<String>,
}

impl RouteParams {
    /// The engine request, every text trimmed; the engine checks it.
    pub fn to_request(&self) -> RouteRequest {
        RouteRequest {
            ask: self.ask.trim().into(),
            routes: self
                .routes
                .iter()
                .map(|r| Destination {
                    id: r.id.trim().into(),
                    description: r.description.trim().into(),
                    aliases: r.aliases.iter().map(|a| a.trim().to_string()).collect(),
                })
                .collect(),
            budget_usd: self.budget_usd.unwrap_or(DEFAULT_ROUTE_BUDGET_USD),
        }
    }
}

/// Runs `sieve_route` end to end.
pub async fn run(
    runtime: &Runtime,
    config: &Config,
    params: &RouteParams,
) -> Result<Value, CallError> {
    let judge = params
        .judge
        .as_deref()
        .unwrap_or_else(|| config.judge_for("sieve_route"));
    let r = runtime.route(judge, &params.to_request()).await?;
    let mut usage = usage_json(&r.usage);
    usage.insert("stages".into(), json!(r.stages));
    usage.insert("batches".into(), json!(r.batches));
    let mut out = json!({
        "choice": r.choice,
        "confidence": r.confidence,
        "confidence_source": "judge",
        "probabilities": distribution(&r.probabilities),
        "usage": usage,
    });
    runtime.judged_by(judge)?.stamp(&mut out);
    Ok(out)
}
