//! The MCP server (rmcp): one tool per engine, over stdio or, shared by
//! every agent on the machine, over streamable HTTP ([`http`]).

#![deny(missing_docs)]

pub mod tools;

pub mod admission;
pub mod auth;
pub mod http;
pub mod jsonrpc;
pub mod plugin_watch;
pub mod sampling;
pub mod sessions;
pub mod stdio;

use std::sync::Arc;

use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};

use silt_config::Config;
use silt_progress::ProgressReporter;
use silt_runtime::folders::{Folders, Roots};

/// What grep's and verify's progress counts before their first stage.
const STEPS: &str = "steps";
use crate::tools::ask::{self, AskParams};
use crate::tools::error::{ToolError, parse_args};
use crate::tools::grep::{self, GrepParams};
use crate::tools::rank::{self, RankParams};
use crate::tools::route::{self, RouteParams};
use crate::tools::search::{self, SearchParams};
use crate::tools::sediment_tools::{self as sed, LedgerTools, ToolOutcome};
use crate::tools::triage::{self, TriageParams};
use crate::tools::verify::{self, VerifyParams};
use rmcp::handler::server::common::schema_for_type;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::JsonObject;
use silt_runtime::{CallError, Runtime};

/// The server: shared runtime and config; no per-session state.
#[derive(Clone)]
pub struct SiltServer {
    runtime: Arc<Runtime>,
    config: Arc<Config>,
    ledger: Arc<LedgerTools>,
    /// The folders file tools may read and where relative paths resolve:
    /// over stdio any folder, relative to the caller's (the client started
    /// us there; the caller is the user who started us); over HTTP only
    /// under the owner's roots, opened at start, absolute paths only (one
    /// process serves callers in many folders).
    folders: Folders,
    /// The tools, built once: building them (every tool's schemas) took
    /// a third of a loaded HTTP server's time when done per call.
    router: Arc<ToolRouter<SiltServer>>,
}

/// `{ok: true, ...}` as structured content, or `{ok: false, error: {code,
/// message, hint?}}` as the text of a tool error: one shape for every
/// tool. The error carries no structured content because a tool's
/// `outputSchema` describes its success, and the TypeScript SDK (the MCP
/// Inspector, Claude Code) validates any structured content against it,
/// error or not, turning a clear refusal into a schema failure.
fn ledger_result(outcome: ToolOutcome) -> CallToolResult {
    match outcome {
        Ok(value) => CallToolResult::structured(value),
        Err(error) => CallToolResult::error(vec![rmcp::model::ContentBlock::text(
            error.to_json().to_string(),
        )]),
    }
}

fn tool_result(outcome: Result<serde_json::Value, CallError>) -> CallToolResult {
    ledger_result(outcome.map_err(ToolError::from))
}

#[tool_router]
impl SiltServer {
    /// A server whose relative paths resolve against `caller_dir` (None:
    /// paths must be absolute).
    pub fn new(
        runtime: Arc<Runtime>,
        config: Arc<Config>,
        caller_dir: Option<std::path::PathBuf>,
    ) -> Self {
        let ledger =
            Arc::new(LedgerTools::new(runtime.clone(), config.clone()).sleeping_in_background());
        SiltServer {
            runtime,
            config,
            ledger,
            folders: Folders::local(caller_dir.as_deref()),
            router: Arc::new(Self::tool_router()),
        }
    }

    /// The shared server's: absolute paths only, and only under `roots`
    /// (empty refuses every file tool).
    pub fn new_http(runtime: Arc<Runtime>, config: Arc<Config>, roots: Arc<Roots>) -> Self {
        SiltServer {
            folders: Folders::Roots(roots),
            ..SiltServer::new(runtime, config, None)
        }
    }

    #[tool(
        name = "sediment_recall",
        output_schema = crate::tools::output_schema::of("sediment_recall"),
        description = "Load the top-k lessons (WHEN -> PREFER) relevant to the task at hand. Call at task start. Each returned lesson counts a hit (this tool writes).",
        input_schema = schema_for_type::<sed::RecallParams>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn sediment_recall(&self, args: JsonObject) -> CallToolResult {
        ledger_result(self.ledger.recall(args).await)
    }

    #[tool(
        name = "sediment_capture",
        output_schema = crate::tools::output_schema::of("sediment_capture"),
        description = "Distil a real outcome into a generalised lesson: `when` is the situation, `prefer` the action, `feedback` how it went (positive, negative, neutral). Never log verbatim events.",
        input_schema = schema_for_type::<sed::CaptureParams>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn sediment_capture(&self, args: JsonObject) -> CallToolResult {
        ledger_result(self.ledger.capture(args).await)
    }

    #[tool(
        name = "sediment_confirm",
        output_schema = crate::tools::output_schema::of("sediment_confirm"),
        description = "That lesson worked: strengthens it and lengthens its half-life.",
        input_schema = schema_for_type::<sed::IdParams>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn sediment_confirm(&self, args: JsonObject) -> CallToolResult {
        ledger_result(self.ledger.feedback(args, false).await)
    }

    #[tool(
        name = "sediment_contradict",
        output_schema = crate::tools::output_schema::of("sediment_contradict"),
        description = "That lesson failed: halves its confidence; the audit trail is kept.",
        input_schema = schema_for_type::<sed::IdParams>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn sediment_contradict(&self, args: JsonObject) -> CallToolResult {
        ledger_result(self.ledger.feedback(args, true).await)
    }

    #[tool(
        name = "sediment_consolidate",
        output_schema = crate::tools::output_schema::of("sediment_consolidate"),
        description = "Cheap hygiene, every run: decay, retire lessons below the floor, evict over the budget cap.",
        input_schema = schema_for_type::<sed::NoParams>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn sediment_consolidate(&self, args: JsonObject) -> CallToolResult {
        ledger_result(self.ledger.consolidate(args).await)
    }

    #[tool(
        name = "sediment_sleep",
        output_schema = crate::tools::output_schema::of("sediment_sleep"),
        description = "The deep pass, periodically: merge duplicates, turn contradictions into boundary rules, fold 3+ siblings under an abstracted parent. `judge` picks the judge that relates lessons.",
        input_schema = schema_for_type::<sed::SleepParams>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn sediment_sleep(
        &self,
        args: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        // a sleep over a large ledger takes minutes: report pairs judged
        let progress = ProgressReporter::start(
            ctx.peer.clone(),
            ctx.meta.get_progress_token(),
            "lesson pairs judged",
        )
        .await;
        let out = self
            .ledger
            .sleep_counting(args, Some(progress.stages.counter()))
            .await;
        progress.finish().await;
        ledger_result(out)
    }

    #[tool(
        name = "sediment_undo",
        output_schema = crate::tools::output_schema::of("sediment_undo"),
        description = "Take back a merge or a resolved contradiction by its event number (`seq` in the history): the retired lesson is active again and the survivor as it was before (or, if it changed since, without what the step gave it). The undo is logged.",
        input_schema = schema_for_type::<sed::UndoParams>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn sediment_undo(&self, args: JsonObject) -> CallToolResult {
        ledger_result(self.ledger.undo(args).await)
    }

    #[tool(
        name = "sediment_forget",
        output_schema = crate::tools::output_schema::of("sediment_forget"),
        description = "Delete a lesson for good, by id (for one that is wrong, private or broken); the log keeps only its id and your reason. Retiring happens on its own; use this when the text itself must go.",
        input_schema = schema_for_type::<sed::ForgetParams>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn sediment_forget(&self, args: JsonObject) -> CallToolResult {
        ledger_result(self.ledger.forget(args).await)
    }

    #[tool(
        name = "sediment_review_candidates",
        output_schema = crate::tools::output_schema::of("sediment_review_candidates"),
        description = "A page of lesson pairs for you to judge (merge, contradict or distinct), most in need of a verdict first, and how many remain; send verdicts to sediment_apply_judgments, then ask for the next page. A judged pair is not offered again until a lesson changes.",
        input_schema = schema_for_type::<sed::ReviewParams>(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn sediment_review_candidates(&self, args: JsonObject) -> CallToolResult {
        ledger_result(self.ledger.review(args).await)
    }

    #[tool(
        name = "sediment_apply_judgments",
        output_schema = crate::tools::output_schema::of("sediment_apply_judgments"),
        description = "Apply your verdicts on reviewed pairs (1 to 100 of {a_id, b_id, verdict}); each is applied or reported skipped with its reason.",
        input_schema = schema_for_type::<sed::ApplyParams>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn sediment_apply_judgments(&self, args: JsonObject) -> CallToolResult {
        ledger_result(self.ledger.apply(args).await)
    }

    #[tool(
        name = "sediment_stats",
        output_schema = crate::tools::output_schema::of("sediment_stats"),
        description = "Inspect ledger health: counts and lessons by effective confidence; `telemetry` adds what fires most, what was pruned, the event counts and the daily drift of active lessons.",
        input_schema = schema_for_type::<sed::StatsParams>(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn sediment_stats(&self, args: JsonObject) -> CallToolResult {
        ledger_result(self.ledger.stats(args).await)
    }

    #[tool(
        name = "sieve_ask",
        output_schema = crate::tools::output_schema::of("sieve_ask"),
        input_schema = schema_for_type::<AskParams>(),
        description = "Ask one closed question of every item you hold and get one validated answer per item. \
kind=judge: `yes`/`no` criteria -> {id, probability}, sorted, cut by top_k and threshold. \
kind=choose: `options` {label: when it applies} -> {id, choice, probabilities}. \
kind=score: `levels`, ordered lowest first -> {id, level, label, expected, probabilities}. \
Items are strings or {id, text}. Write criteria concretely and mutually exclusive; put shared context in the question. \
`judge` picks the judge plugin (default lexical).",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn sieve_ask(&self, args: JsonObject) -> CallToolResult {
        let params: AskParams = match parse_args(args) {
            Ok(p) => p,
            Err(e) => return ledger_result(Err(e)),
        };
        tool_result(ask::run(&self.runtime, &self.config, &params).await)
    }

    #[tool(
        name = "sieve_rank",
        output_schema = crate::tools::output_schema::of("sieve_rank"),
        input_schema = schema_for_type::<RankParams>(),
        description = "Rerank candidates you already hold against a question, with relevance criteria already written: [{id, probability}] sorted by probability (ties by id), cut by top_k and threshold, plus usage. Candidates are [{id, text}]; each is cut to 2000 characters. `judge` picks the judge plugin (default lexical).",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn sieve_rank(&self, args: JsonObject) -> CallToolResult {
        let params: RankParams = match parse_args(args) {
            Ok(p) => p,
            Err(e) => return ledger_result(Err(e)),
        };
        tool_result(rank::run(&self.runtime, &self.config, &params).await)
    }

    #[tool(
        name = "sieve_search",
        output_schema = crate::tools::output_schema::of("sieve_search"),
        input_schema = schema_for_type::<SearchParams>(),
        description = "Search the web and rerank the hits: 2 to 4 query variants (`variants`, default 3) run concurrently through one sandboxed backend (SearXNG at SILT_SEARXNG_URL, else Brave with BRAVE_API_KEY; SILT_SEARCH_BACKEND picks), hits are deduplicated by canonical URL into a pool of `depth` (30, at most 50, never below top_k) and reranked against the original query by the judge: {results: [{url, title, snippet, probability, engines}], variants, backend, usage, depth, hits_requested, hits_found, hits_deduped, candidates_scored, backend_requests, backend_calls, wall_seconds}, plus pool_short and backend_errors when they apply. Backend results are cached for SILT_SEARCH_CACHE_TTL seconds (3600). `top_k` (10), `judge`.",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = true
        )
    )]
    async fn sieve_search(&self, args: JsonObject) -> CallToolResult {
        let params: SearchParams = match parse_args(args) {
            Ok(p) => p,
            Err(e) => return ledger_result(Err(e)),
        };
        tool_result(search::run(&self.runtime, &self.config, &params).await)
    }

    #[tool(
        name = "sieve_route",
        output_schema = crate::tools::output_schema::of("sieve_route"),
        input_schema = schema_for_type::<RouteParams>(),
        description = "Choose one of your routes [{id, description, aliases}] for a request, or `none` when no route fits: {choice, confidence, probabilities, usage}. More than ten routes are shortlisted in groups of ten before a final choice (usage.stages, usage.batches). `judge` picks the judge plugin (default lexical).",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn sieve_route(&self, args: JsonObject) -> CallToolResult {
        let params: RouteParams = match parse_args(args) {
            Ok(p) => p,
            Err(e) => return ledger_result(Err(e)),
        };
        tool_result(route::run(&self.runtime, &self.config, &params).await)
    }

    #[tool(
        name = "sieve_grep",
        output_schema = crate::tools::output_schema::of("sieve_grep"),
        input_schema = schema_for_type::<GrepParams>(),
        description = "Rank a repository's files (mode=files), or stretches of its strongest files (mode=functions), by how relevant they are to a plain-language question: {path, line_start, line_end, kind, probability} sorted by probability, plus usage. The walk honours .gitignore and .ignore and never follows symlinks. `path` is the folder (over HTTP absolute and under the server's [server] roots; over stdio a relative path resolves against the server's folder); `top_k` (20), `threshold` (0.5), `judge` (a local judge such as embedding reads the 24 units, or top_k, with the strongest lexical evidence per stage).",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn sieve_grep(
        &self,
        args: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let params: GrepParams = match parse_args(args) {
            Ok(p) => p,
            Err(e) => return ledger_result(Err(e)),
        };
        let out = ProgressReporter::around(
            ctx.peer.clone(),
            ctx.meta.get_progress_token(),
            STEPS,
            |steps| {
                grep::run(
                    &self.runtime,
                    &self.config,
                    &params,
                    &self.folders,
                    Some(steps),
                )
            },
        )
        .await;
        tool_result(out)
    }

    #[tool(
        name = "sieve_verify",
        output_schema = crate::tools::output_schema::of("sieve_verify"),
        input_schema = schema_for_type::<VerifyParams>(),
        description = "Check claims against the sources they cite. Give `records` [{claim, claim_context?, kind: fact|recommendation, premises?, citations: [{locator, quote?}]}] or a Markdown `report` (sentences, bullets and table rows become claims, marked extraction_uncertain). Locators are http(s) URLs (public addresses only; 2 MB, 25 MB for PDF; 15 s) or files under `base_path` (over stdio default the server's folder; over HTTP it must be given, absolute, under the server's [server] roots). Per claim: verdict by the thresholds (unverified when the judge does not read entailment: the lexical and embedding judges score similarity and cannot assess a claim, flag judge_cannot_confirm; else contradicts when any passage's contradiction reaches contradict_threshold; else supports_fully when a passage's full support reaches support_threshold, no cited quote failed, and the passage states the claim's figures, code names, negation and scope or the judge is sure (full support >= 0.95, flag detail_checks_overruled); else partially_supports when a passage leans to support, else does_not_address), support, max_contradicts, every passage's distribution, flags; plus counts, flagged, unqualified_factual_relay_blocked, sources (sha256 source_version) and usage. support_threshold 0.80, contradict_threshold 0.50, budget_usd 0.50, `judge`.",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = true
        )
    )]
    async fn sieve_verify(
        &self,
        args: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let params: VerifyParams = match parse_args(args) {
            Ok(p) => p,
            Err(e) => return ledger_result(Err(e)),
        };
        let out = ProgressReporter::around(
            ctx.peer.clone(),
            ctx.meta.get_progress_token(),
            STEPS,
            |steps| {
                verify::run(
                    &self.runtime,
                    &self.config,
                    &params,
                    &self.folders,
                    Some(steps),
                )
            },
        )
        .await;
        tool_result(out)
    }

    #[tool(
        name = "sieve_triage_threads",
        output_schema = crate::tools::output_schema::of("sieve_triage_threads"),
        input_schema = schema_for_type::<TriageParams>(),
        description = "Which agent threads wait on a human. threads: [{thread_id, events: [{id, ts, role, kind, text}], contract: {title, first_prompt, human_amendments}, status?, journal_priority?, complete?}]. Code finds candidate requests in assistant prose; the judge answers separate yes/no questions (a request? answered by later human dialogue? withdrawn? does the latest statement say it blocks progress?), long dialogue in overlapping windows. Per thread: bucket (blocked, needs_input, unknown, clear), coverage (full, truncated), snapshot, requests with raw probabilities and source event ids; usage. A filter to inspect, not a ranking to trust. request_threshold 0.5, budget_usd 0.50, `judge`.",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn sieve_triage_threads(&self, args: JsonObject) -> CallToolResult {
        let params: TriageParams = match parse_args(args) {
            Ok(p) => p,
            Err(e) => return ledger_result(Err(e)),
        };
        tool_result(triage::run(&self.runtime, &self.config, &params).await)
    }
}

#[tool_handler(router = self.router)]
impl ServerHandler for SiltServer {
    /// Every tool call, stopped when its caller goes away (an HTTP client
    /// that disconnects, a `notifications/cancelled`): the work future is
    /// dropped, which stops the plugin call and the fetches in it. The
    /// ledger survives a drop at any await (see `LedgerService::begin`).
    /// The caller is the client a judge granted sampling may ask, for the
    /// length of the call.
    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        let cancelled = context.ct.clone();
        let name = request.name.clone();
        let client = sampling::ClientLink::of(&context);
        let call = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        tokio::select! {
            out = silt_runtime::capability::sampling::serving(client, async {
                let _turn = self.runtime.turn().await;
                self.router.call(call).await
            }) => out,
            () = cancelled.cancelled() => {
                tracing::info!("{name}: the caller went away; its work was stopped");
                Err(rmcp::ErrorData::internal_error(
                    format!("{name} was cancelled: the caller went away"),
                    None,
                ))
            }
        }
    }

    /// The tools, with the judges installed now named in each `judge`
    /// argument: a plugin added or removed changes this list, and the
    /// client is told (see [`plugin_watch`]).
    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, rmcp::ErrorData> {
        let supports_cache_hints = context
            .protocol_version()
            .is_some_and(|v| v >= rmcp::model::ProtocolVersion::V_2026_07_28);
        Ok(rmcp::model::ListToolsResult {
            result_type: Some(rmcp::model::ResultType::COMPLETE),
            tools: self.tools_now(),
            meta: None,
            next_cursor: None,
            // the list changes when plugins do: never cached
            ttl_ms: supports_cache_hints.then_some(0),
            cache_scope: supports_cache_hints.then_some(rmcp::model::CacheScope::Public),
        })
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("silt", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "silt: closed-question judgment (sieve_*) on local, sandboxed judges. \
                 sieve_ask asks one question of many items and validates every answer; \
                 sieve_rank reranks candidates you hold; sieve_route picks one route or none; \
                 sieve_search searches the web through a sandboxed backend and reranks the hits; \
                 sieve_grep ranks a repository's files or functions against a question; \
                 sieve_verify checks claims against the sources they cite; \
                 sieve_triage_threads finds agent threads that wait on a human.",
        )
    }
}

impl SiltServer {
    /// The router's tools, each `judge` argument naming the judges
    /// installed now.
    fn tools_now(&self) -> Vec<rmcp::model::Tool> {
        let judges = plugin_watch::judge_names(&self.runtime).join(", ");
        self.router
            .list_all()
            .into_iter()
            .map(|mut tool| {
                let mut schema = (*tool.input_schema).clone();
                if let Some(judge) = schema
                    .get_mut("properties")
                    .and_then(|p| p.get_mut("judge"))
                    .and_then(|j| j.as_object_mut())
                {
                    let said = judge
                        .get("description")
                        .and_then(|d| d.as_str())
                        .unwrap_or("The judge plugin to ask.")
                        .to_string();
                    judge.insert(
                        "description".into(),
                        format!("{said} Installed: {judges}.").into(),
                    );
                    tool.input_schema = Arc::new(schema);
                }
                tool
            })
            .collect()
    }
}

/// Serves MCP on stdin/stdout until the client goes away.
pub async fn serve_stdio(runtime: Arc<Runtime>, config: Arc<Config>) -> anyhow::Result<()> {
    // over stdio the client started us in its folder
    let caller_dir = std::env::current_dir().ok();
    // rmcp reads and writes pipes; the filter between them and the real
    // stdin/stdout answers requests rmcp would drop without a word
    let (to_server, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, from_server) = tokio::io::duplex(1 << 20);
    let (errors, errors_out) = tokio::sync::mpsc::unbounded_channel();
    let reader = tokio::spawn(stdio::filter_requests(
        tokio::io::stdin(),
        to_server,
        errors,
    ));
    let writer = tokio::spawn(stdio::merge_responses(
        from_server,
        errors_out,
        tokio::io::stdout(),
    ));
    let server = SiltServer::new(runtime.clone(), config, caller_dir);
    let ledger = server.ledger.clone();
    let service = server.serve((server_in, server_out)).await?;
    let watch = tokio::spawn(plugin_watch::watch(runtime, Some(service.peer().clone())));
    service.waiting().await?;
    watch.abort();
    // a client that captured and hung up still gets the pass it started
    ledger.settle().await;
    reader.abort();
    let _ = writer.await;
    Ok(())
}
