//! The MCP server (rmcp): one tool per engine, over stdio.

use std::sync::Arc;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};

use crate::config::Config;
use crate::runtime::{CallError, Runtime};
use crate::tools::ask::{self, AskParams};

/// The server: shared runtime and config; no per-session state.
#[derive(Clone)]
pub struct SiltServer {
    runtime: Arc<Runtime>,
    config: Arc<Config>,
}

fn tool_result(outcome: Result<serde_json::Value, CallError>) -> CallToolResult {
    match outcome {
        Ok(value) => CallToolResult::structured(value),
        Err(e) => CallToolResult::error(vec![ContentBlock::text(e.to_string())]),
    }
}

#[tool_router]
impl SiltServer {
    pub fn new(runtime: Arc<Runtime>, config: Arc<Config>) -> Self {
        SiltServer { runtime, config }
    }

    #[tool(
        name = "sieve_ask",
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
    async fn sieve_ask(&self, Parameters(params): Parameters<AskParams>) -> CallToolResult {
        tool_result(ask::run(&self.runtime, &self.config, &params).await)
    }
}

#[tool_handler]
impl ServerHandler for SiltServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("silt", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "silt: closed-question judgment (sieve_*) on local, sandboxed judges. \
                 sieve_ask asks one question of many items and validates every answer.",
            )
    }
}

/// Serves MCP on stdin/stdout until the client goes away.
pub async fn serve_stdio(runtime: Arc<Runtime>, config: Arc<Config>) -> anyhow::Result<()> {
    let service = SiltServer::new(runtime, config)
        .serve(rmcp::transport::stdio())
        .await?;
    service.waiting().await?;
    Ok(())
}
