//! `sieve_verify`: arguments and results as the seed's `jev_verify`, plus
//! `judge`. The host resolves the base path and fetches; the engine picks
//! passages and asks the judge.

use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::tools::ask::add_usage;
use silt_config::Config;
use silt_core::ask::DEFAULT_BUDGET_USD;
use silt_core::verify::run::{DEFAULT_CONTRADICT_THRESHOLD, DEFAULT_SUPPORT_THRESHOLD};
use silt_fetch::{Base, NetPolicy, SourceFetcher};
use silt_runtime::bindings::verify_engine::exports::silt::sieve::verify::{
    Citation, ClaimKind, ClaimRecord, ClaimResult, Claims, Passage, VerifyRequest,
};
use silt_runtime::folders::Folders;
use silt_runtime::{CallError, Runtime};

/// fact or recommendation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(rename_all = "lowercase")]
pub enum KindParam {
    /// Checked against its citations.
    #[default]
    Fact,
    /// Gets no verdict; its premises are checked as facts.
    Recommendation,
}

/// A cited source.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct CitationParam {
    /// An http(s) URL, or a file path (relative to base_path).
    pub locator: String,
    /// Words the source is said to contain.
    #[serde(default)]
    pub quote: Option<String>,
}

/// One claim to check.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct RecordParam {
    /// The claim as written.
    pub claim: String,
    /// Where the claim sits (section, parent point).
    #[serde(default)]
    pub claim_context: Option<String>,
    /// fact (default) or recommendation.
    #[serde(default)]
    pub kind: KindParam,
    /// For a recommendation: the facts it rests on, checked with its citations.
    #[serde(default)]
    pub premises: Vec<String>,
    /// The sources the claim cites.
    #[serde(default)]
    pub citations: Vec<CitationParam>,
}

/// Arguments of `sieve_verify`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct VerifyParams {
    /// Claims with their citations. Give this or `report`.
    #[serde(default)]
    pub records: Option<Vec<RecordParam>>,
    /// A Markdown report to read claims from. Give this or `records`.
    #[serde(default)]
    pub report: Option<String>,
    /// The folder file locators resolve against and may not leave: absolute, or (over stdio) relative to the server's folder, which is also the default.
    #[serde(default)]
    pub base_path: Option<String>,
    /// The most the call may spend, in USD (default 0.50).
    #[serde(default, deserialize_with = "crate::tools::schema::opt_f64")]
    #[schemars(range(min = 0.0))]
    pub budget_usd: Option<f64>,
    /// Full support below this flags a claim (default 0.80).
    #[serde(default, deserialize_with = "crate::tools::schema::opt_f64")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub support_threshold: Option<f64>,
    /// A contradiction at or above this flags a claim and blocks relay (default 0.50).
    #[serde(default, deserialize_with = "crate::tools::schema::opt_f64")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub contradict_threshold: Option<f64>,
    /// The judge plugin to ask (default: silt.toml's choice for sieve_verify, else lexical).
    #[serde(default)]
    pub judge: Option<String>,
}

impl VerifyParams {
    fn to_request(&self) -> Result<VerifyRequest, CallError> {
        let claims = match (&self.records, &self.report) {
            (Some(records), None) => Claims::Records(
                records
                    .iter()
                    .map(|r| ClaimRecord {
                        claim: r.claim.clone(),
                        claim_context: r.claim_context.clone(),
                        kind: match r.kind {
                            KindParam::Fact => ClaimKind::Fact,
                            KindParam::Recommendation => ClaimKind::Recommendation,
                        },
                        premises: r.premises.clone(),
                        citations: r
                            .citations
                            .iter()
                            .map(|c| Citation {
                                locator: c.locator.clone(),
                                quote: c.quote.clone(),
                            })
                            .collect(),
                    })
                    .collect(),
            ),
            (None, Some(report)) => Claims::Report(report.clone()),
            _ => {
                return Err(CallError::InvalidRequest(
                    "give exactly one of records (a list of claims) or report (Markdown)".into(),
                ));
            }
        };
        Ok(VerifyRequest {
            claims,
            budget_usd: self.budget_usd.unwrap_or(DEFAULT_BUDGET_USD),
            support_threshold: self.support_threshold.unwrap_or(DEFAULT_SUPPORT_THRESHOLD),
            contradict_threshold: self
                .contradict_threshold
                .unwrap_or(DEFAULT_CONTRADICT_THRESHOLD),
            // the runtime sets it from the judge's manifest
            judge_entails: false,
        })
    }
}

fn probabilities_json(p: &Passage) -> Value {
    Value::Object(
        p.probabilities
            .iter()
            .map(|l| (l.label.clone(), json!(l.probability)))
            .collect::<Map<_, _>>(),
    )
}

fn passage_json(p: &Passage) -> Value {
    json!({
        "locator": p.locator, "start": p.start, "end": p.end, "via": p.via,
        "text": p.text, "probabilities": probabilities_json(p),
    })
}

fn claim_json(c: &ClaimResult) -> Value {
    json!({
        "record": c.record_index,
        "premise_of": c.premise_of,
        "claim": c.claim,
        "claim_context": c.claim_context,
        "kind": match c.kind { ClaimKind::Fact => "fact", ClaimKind::Recommendation => "recommendation" },
        "extraction_uncertain": c.extraction_uncertain,
        "verdict": c.verdict,
        "support": c.support,
        "max_contradicts": c.max_contradicts,
        "best_passage": c.best_passage.and_then(|i| c.passages.get(i as usize)).map(passage_json),
        "passages": c.passages.iter().map(passage_json).collect::<Vec<_>>(),
        "citations": c.citations.iter().map(|k| json!({
            "locator": k.locator, "quote": k.quote, "quote_found": k.quote_found,
            "quote_start": k.quote_start, "quote_end": k.quote_end, "fetched": k.fetched,
        })).collect::<Vec<_>>(),
        "flags": c.flags,
    })
}

/// The locators `claims` cite, in order (a report is read the way the
/// engine reads it, off the async threads).
async fn cited(claims: &Claims) -> Vec<String> {
    match claims {
        Claims::Records(records) => records
            .iter()
            .flat_map(|r| r.citations.iter().map(|c| c.locator.clone()))
            .collect(),
        Claims::Report(report) => {
            let report = report.clone();
            tokio::task::spawn_blocking(move || {
                silt_core::verify::report::extract(&report)
                    .into_iter()
                    .flat_map(|r| r.citations.into_iter().map(|c| c.locator))
                    .collect()
            })
            .await
            .unwrap_or_default()
        }
    }
}

/// Runs `sieve_verify`. `folders` says where base paths may lie; its
/// caller's folder (none over HTTP, where base_path must be absolute and
/// file locators need one) is the default base; `steps` counts sources
/// fetched and passages judged for a progress report.
pub async fn run(
    runtime: &Runtime,
    config: &Config,
    params: &VerifyParams,
    folders: &Folders,
    steps: Option<Arc<silt_progress::Stages>>,
) -> Result<Value, CallError> {
    let request = params.to_request()?;
    let base = match (&params.base_path, folders.caller_dir()) {
        (Some(b), _) => Some(Base::new(Path::new(b), folders.open(b)?)),
        (None, Some(dir)) => Some(Base::new(dir, folders.open_path(dir)?)),
        (None, None) => None,
    };
    let fetcher = SourceFetcher::new(base, NetPolicy::from_config(&config.fetch))
        .map_err(|e| CallError::Setup(anyhow::Error::new(e).context("cannot set up HTTP")))?;
    // the engine asks for sources one at a time; fetched ahead, a call
    // citing six slow URLs waits for the slowest, not for their sum
    fetcher
        .prefetch(cited(&request.claims).await, steps.as_deref())
        .await;
    let judge = params
        .judge
        .as_deref()
        .unwrap_or_else(|| config.judge_for("sieve_verify"));
    let r = runtime.verify(judge, fetcher, &request, steps).await?;
    let mut out = json!({
        "results": r.results.iter().map(claim_json).collect::<Vec<_>>(),
        "counts": r.counts.iter().map(|c| (c.verdict.clone(), json!(c.count))).collect::<Map<_, _>>(),
        "flagged": r.flagged.iter().filter_map(|&i| r.results.get(i as usize).map(|c| json!({
            "index": i, "claim": c.claim, "flags": c.flags,
        }))).collect::<Vec<_>>(),
        "unqualified_factual_relay_blocked": r.unqualified_factual_relay_blocked,
        "sources": r.sources.iter().map(|s| json!({
            "locator": s.locator, "source_version": s.version, "chars": s.chars, "error": s.error,
        })).collect::<Vec<_>>(),
    });
    add_usage(&mut out, &r.usage);
    runtime.judged_by(judge)?.stamp(&mut out);
    Ok(out)
}
