//! `sieve_grep`: arguments and results as the seed's `jev_grep`, plus
//! `judge`. The host opens the folder (see [`silt_runtime::folders`]); the engine
//! walks and reads it only through the host's `files` import.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::tools::ask::add_usage;
use silt_config::Config;
use silt_core::ask::DEFAULT_BUDGET_USD;
use silt_runtime::bindings::ask_engine::exports::silt::sieve::grep::{GrepRequest, Mode};
use silt_runtime::folders::Folders;
use silt_runtime::{CallError, Runtime};

pub use silt_files::walk::CACHE_DIR;

/// files or functions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(rename_all = "lowercase")]
pub enum GrepMode {
    /// Score every file by its path and preview.
    #[default]
    Files,
    /// Then split the strongest files and score the pieces.
    Functions,
}

/// Arguments of `sieve_grep`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct GrepParams {
    /// What you are trying to find out, in plain language.
    pub question: String,
    /// The repository or folder to search: absolute, or (over stdio) relative to the server's working folder.
    pub path: String,
    /// files (default) or functions.
    #[serde(default)]
    pub mode: GrepMode,
    /// How many results to return (1 to 200, default 20).
    #[serde(default, deserialize_with = "crate::tools::schema::opt_u32")]
    #[schemars(range(min = 1, max = 200))]
    pub top_k: Option<u32>,
    /// Drop units scoring below this probability (default 0.5).
    #[serde(default, deserialize_with = "crate::tools::schema::opt_f64")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub threshold: Option<f64>,
    /// The most the call may spend, in USD (default 0.50).
    #[serde(default, deserialize_with = "crate::tools::schema::opt_f64")]
    #[schemars(range(min = 0.0))]
    pub budget_usd: Option<f64>,
    /// The judge plugin to ask (default: silt.toml's choice for sieve_grep, else lexical).
    #[serde(default)]
    pub judge: Option<String>,
}

/// Runs `sieve_grep` on the folder `params.path` names, as `folders`
/// allows; `steps` follows its stages for a progress report.
pub async fn run(
    runtime: &Runtime,
    config: &Config,
    params: &GrepParams,
    folders: &Folders,
    steps: Option<Arc<silt_progress::Stages>>,
) -> Result<Value, CallError> {
    let root = folders.open(&params.path)?;
    let request = GrepRequest {
        question: params.question.trim().into(),
        mode: match params.mode {
            GrepMode::Files => Mode::Files,
            GrepMode::Functions => Mode::Functions,
        },
        top_k: params.top_k.unwrap_or(20),
        threshold: params.threshold.unwrap_or(0.5),
        budget_usd: params.budget_usd.unwrap_or(DEFAULT_BUDGET_USD),
        judge_weight: config
            .grep_judge_weight()
            .map_err(|e| CallError::InvalidRequest(format!("{e:#}")))?,
        // the runtime sets it from the judge's manifest
        engine_ranks: false,
    };
    let judge = params
        .judge
        .as_deref()
        .unwrap_or_else(|| config.judge_for("sieve_grep"));
    let (r, notes) = runtime.grep(judge, root, &request, steps).await?;
    let mut out = json!({
        "results": r.results.iter().map(|h| json!({
            "path": h.path, "line_start": h.line_start, "line_end": h.line_end,
            "kind": h.kind, "probability": h.probability,
        })).collect::<Vec<_>>(),
        "units_scored": r.units_scored,
    });
    // beyond the seed's shape, and only when something was left out: what
    // the ranking could not see in full
    if !notes.skipped.is_empty() {
        out["skipped"] = json!(notes.skipped);
    }
    if !notes.read_in_part.is_empty() {
        out["read_in_part"] = json!({
            "paths": notes.read_in_part,
            "note": format!(
                "larger than {} MiB: ranked on the file's first {} MiB",
                silt_files::walk::MAX_READ_BYTES >> 20,
                silt_files::walk::MAX_READ_BYTES >> 20
            ),
        });
    }
    add_usage(&mut out, &r.usage);
    runtime.judged_by(judge)?.stamp(&mut out);
    Ok(out)
}
