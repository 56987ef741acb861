//! `sieve_triage_threads`: arguments and results as the seed's
//! `jev_triage_threads`, plus `judge` and a per-thread `complete` flag.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::tools::ask::add_usage;
use silt_config::Config;
use silt_core::ask::DEFAULT_BUDGET_USD;
use silt_core::triage::DEFAULT_REQUEST_THRESHOLD;
use silt_runtime::bindings::ask_engine::exports::silt::sieve::triage::{
    Contract, Event, Thread, TriageRequest,
};
use silt_runtime::{CallError, Runtime};

/// One event of a thread.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct EventParam {
    /// Your id for the event, echoed in the results.
    pub id: String,
    /// A timestamp, as you record them (passed through).
    #[serde(default)]
    pub ts: String,
    /// user (or human), assistant, tool, system.
    pub role: String,
    /// message (default) for prose; tool calls and results are other kinds.
    #[serde(default = "message")]
    pub kind: String,
    /// What was said or done.
    pub text: String,
}

fn message() -> String {
    "message".into()
}

/// What the human asked of the thread.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct ContractParam {
    /// The thread's title.
    #[serde(default)]
    pub title: String,
    /// The human's opening prompt.
    #[serde(default)]
    pub first_prompt: String,
    /// What the human added or changed since, read with the first prompt for acceptance criteria.
    #[serde(default)]
    pub human_amendments: Vec<String>,
}

/// One agent thread.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct ThreadParam {
    /// Your id for the thread, echoed in the results.
    pub thread_id: String,
    /// Chronological events.
    pub events: Vec<EventParam>,
    /// What the human asked of the thread.
    #[serde(default)]
    pub contract: ContractParam,
    /// e.g. running, idle, done.
    #[serde(default)]
    pub status: Option<String>,
    /// Orders threads within a bucket, highest first (default 0).
    #[serde(default, deserialize_with = "crate::tools::schema::opt_f64")]
    pub journal_priority: Option<f64>,
    /// False when `events` is only the tail of the history (default true).
    #[serde(default)]
    pub complete: Option<bool>,
}

/// Arguments of `sieve_triage_threads`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct TriageParams {
    /// The threads to triage: at most 200, with at most 20000 events in all.
    pub threads: Vec<ThreadParam>,
    /// The most the call may spend, in USD (default 0.50).
    #[serde(default, deserialize_with = "crate::tools::schema::opt_f64")]
    #[schemars(range(min = 0.0))]
    pub budget_usd: Option<f64>,
    /// A candidate counts as a request at or above this probability (default 0.5).
    #[serde(default, deserialize_with = "crate::tools::schema::opt_f64")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub request_threshold: Option<f64>,
    /// The judge plugin to ask (default: silt.toml's choice for sieve_triage_threads, else lexical).
    #[serde(default)]
    pub judge: Option<String>,
}

fn request_of(params: &TriageParams) -> TriageRequest {
    TriageRequest {
        threads: params
            .threads
            .iter()
            .map(|t| Thread {
                thread_id: t.thread_id.clone(),
                events: t
                    .events
                    .iter()
                    .map(|e| Event {
                        id: e.id.clone(),
                        ts: e.ts.clone(),
                        role: e.role.to_ascii_lowercase(),
                        kind: e.kind.to_ascii_lowercase(),
                        text: e.text.clone(),
                    })
                    .collect(),
                contract: Contract {
                    title: t.contract.title.clone(),
                    first_prompt: t.contract.first_prompt.clone(),
                    human_amendments: t.contract.human_amendments.clone(),
                },
                status: t.status.as_ref().map(|s| s.to_ascii_lowercase()),
                journal_priority: t.journal_priority,
                complete: t.complete.unwrap_or(true),
            })
            .collect(),
        budget_usd: params.budget_usd.unwrap_or(DEFAULT_BUDGET_USD),
        request_threshold: params
            .request_threshold
            .unwrap_or(DEFAULT_REQUEST_THRESHOLD),
    }
}

/// Runs `sieve_triage_threads` end to end.
pub async fn run(
    runtime: &Runtime,
    config: &Config,
    params: &TriageParams,
) -> Result<Value, CallError> {
    let judge = params
        .judge
        .as_deref()
        .unwrap_or_else(|| config.judge_for("sieve_triage_threads"));
    let r = runtime.triage(judge, &request_of(params)).await?;
    let mut out = json!({
        "threads": r.threads.iter().map(|t| json!({
            "thread_id": t.thread_id,
            "bucket": t.bucket,
            "coverage": t.coverage,
            "snapshot": {"last_event_id": t.last_event_id, "events": t.events},
            "one_action_remains": t.one_action_remains,
            "journal_priority": t.journal_priority,
            "requests": t.requests.iter().map(|q| json!({
                "event_id": q.event_id,
                "text": q.text,
                "probabilities": {
                    "request": q.request, "answered": q.answered,
                    "withdrawn": q.withdrawn, "blocking": q.blocking,
                },
                "open": q.open,
                "source_event_ids": q.source_event_ids,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    add_usage(&mut out, &r.usage);
    runtime.judged_by(judge)?.stamp(&mut out);
    Ok(out)
}
