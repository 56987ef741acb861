//! The calling client's model as a judge's `silt:host/sampling` reaches
//! it: `sampling/createMessage` sent to the peer of the tool call, tied to
//! that call's request (so a streamable HTTP server answers it on the
//! call's own stream), each request under a wall clock and cancelled when
//! it times out or the call goes away.
#![expect(
    deprecated,
    reason = "rmcp marks MCP sampling deprecated (SEP-2577); clients still use it"
)]

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CancelledNotificationParam, ClientResult, CreateMessageRequest, CreateMessageRequestParams,
    CreateMessageResult, ModelHint, ModelPreferences, ProtocolVersion, RequestId, Role,
    SamplingMessage, SamplingMessageContentBlock, ServerRequest,
};
use rmcp::service::{OriginatingRequestId, PeerRequestOptions, RequestContext};
use rmcp::{Peer, RoleServer};

use silt_runtime::bindings::sampling_host::silt::host::sampling::{Reply, Request, SamplingError};
use silt_runtime::capability::judge_calls::Pending;
use silt_runtime::capability::sampling::ClientModel;

/// How long one request may take when `SILT_SAMPLING_TIMEOUT_MS` does not
/// say: a client may ask its user first, and a batch of 30 items is about
/// a thousand tokens to write.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// The client of one tool call.
pub struct ClientLink {
    peer: Peer<RoleServer>,
    /// The tool call's request, which each createMessage is tied to.
    call: RequestId,
    /// Why this client cannot sample, when it cannot.
    unavailable: Option<String>,
    timeout: Duration,
}

impl ClientLink {
    /// The client of the call `ctx` belongs to.
    pub fn of(ctx: &RequestContext<RoleServer>) -> Arc<ClientLink> {
        // not named: a stateless HTTP request's client reads as rmcp's
        // default, whoever it is
        let client = "the client";
        let unavailable = if let Some(v) = ctx
            .protocol_version()
            .filter(|v| *v >= ProtocolVersion::V_2026_07_28)
        {
            Some(format!(
                "{client} speaks MCP {v}, which forbids requests from server to client, so \
                 sampling cannot be asked for"
            ))
        } else if ctx.client_capabilities().and_then(|c| c.sampling).is_none() {
            Some(format!(
                "{client} did not declare the sampling capability (clients that do: VS Code \
                 with Copilot, Visual Studio, Goose, the MCP Inspector; not Claude Code, \
                 Claude Desktop or Cursor)"
            ))
        } else {
            None
        };
        Arc::new(ClientLink {
            peer: ctx.peer.clone(),
            call: ctx.id.clone(),
            unavailable,
            timeout: timeout_from_env(),
        })
    }
}

/// `SILT_SAMPLING_TIMEOUT_MS`, else [`DEFAULT_TIMEOUT`].
fn timeout_from_env() -> Duration {
    silt_config::env::number::<u64>("SILT_SAMPLING_TIMEOUT_MS")
        .filter(|&ms| ms > 0)
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_TIMEOUT)
}

/// MCP's request for one of silt's.
fn params(r: Request) -> CreateMessageRequestParams {
    let preferences = ModelPreferences::new()
        .with_hints(
            r.preferences
                .hints
                .into_iter()
                .map(ModelHint::new)
                .collect(),
        )
        .with_cost_priority(r.preferences.cost_priority as f32)
        .with_speed_priority(r.preferences.speed_priority as f32)
        .with_intelligence_priority(r.preferences.intelligence_priority as f32);
    let mut p =
        CreateMessageRequestParams::new(vec![SamplingMessage::user_text(r.user)], r.max_tokens)
            .with_model_preferences(preferences)
            .with_system_prompt(r.system);
    p.temperature = r.temperature.map(|t| t as f32);
    p
}

/// The reply's text, or why it cannot be used.
pub fn reply(result: CreateMessageResult) -> Result<Reply, SamplingError> {
    if result.stop_reason.as_deref() == Some(CreateMessageResult::STOP_REASON_END_MAX_TOKEN) {
        return Err(SamplingError::MaxTokens(format!(
            "{} stopped at maxTokens",
            result.model
        )));
    }
    if result.message.role != Role::Assistant {
        return Err(SamplingError::Failed(
            "the reply's role is not assistant".into(),
        ));
    }
    let text: Vec<String> = result
        .message
        .content
        .iter()
        .filter_map(|c| match c {
            SamplingMessageContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect();
    if text.is_empty() {
        return Err(SamplingError::Failed(format!(
            "{} replied without text",
            result.model
        )));
    }
    Ok(Reply {
        text: text.join("\n"),
        model: result.model,
    })
}

/// Cancels a request sent to the client unless it was answered: a
/// dropped call (its caller went away) sends no cancel by itself.
struct Unanswered {
    peer: Peer<RoleServer>,
    id: Option<RequestId>,
}

impl Drop for Unanswered {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(
                        Some(id),
                        Some("silt's tool call ended".into()),
                    ))
                    .await;
            });
        }
    }
}

impl ClientModel for ClientLink {
    fn unavailable(&self) -> Option<String> {
        self.unavailable.clone()
    }

    fn create_message(&self, request: Request) -> Pending<'_, Result<Reply, SamplingError>> {
        Box::pin(async move {
            if let Some(why) = &self.unavailable {
                return Err(SamplingError::Unavailable(why.clone()));
            }
            let mut sent = CreateMessageRequest::new(params(request));
            sent.extensions
                .insert(OriginatingRequestId(self.call.clone()));
            let handle = self
                .peer
                .send_request_with_option(
                    ServerRequest::CreateMessageRequest(sent),
                    PeerRequestOptions::with_timeout(self.timeout),
                )
                .await
                .map_err(|e| SamplingError::Failed(format!("the request was not sent: {e}")))?;
            let mut guard = Unanswered {
                peer: self.peer.clone(),
                id: Some(handle.id.clone()),
            };
            let answered = handle.await_response().await;
            // answered, refused or timed out (rmcp cancels that itself)
            guard.id = None;
            match answered {
                Ok(ClientResult::CreateMessageResult(result)) => reply(*result),
                Ok(_) => Err(SamplingError::Failed(
                    "the client answered createMessage with another kind of result".into(),
                )),
                Err(rmcp::ServiceError::Timeout { timeout }) => {
                    Err(SamplingError::Timeout(format!(
                        "no reply in {} s (SILT_SAMPLING_TIMEOUT_MS); the request was cancelled",
                        timeout.as_secs_f64()
                    )))
                }
                Err(rmcp::ServiceError::McpError(e)) => Err(SamplingError::Refused(format!(
                    "{} ({})",
                    e.message, e.code.0
                ))),
                Err(e) => Err(SamplingError::Failed(e.to_string())),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use silt_runtime::bindings::sampling_host::silt::host::sampling::ModelPreferences as Wanted;

    #[test]
    fn the_request_carries_preferences_limits_and_the_prompt() {
        let p = params(Request {
            system: "sys".into(),
            user: "question".into(),
            max_tokens: 900,
            temperature: Some(0.0),
            preferences: Wanted {
                hints: vec!["haiku".into(), "mini".into()],
                cost_priority: 0.8,
                speed_priority: 0.9,
                intelligence_priority: 0.5,
            },
        });
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["maxTokens"], 900);
        assert_eq!(json["systemPrompt"], "sys");
        assert_eq!(json["messages"][0]["role"], "user");
        assert_eq!(json["messages"][0]["content"]["text"], "question");
        let prefs = &json["modelPreferences"];
        assert_eq!(prefs["hints"][0]["name"], "haiku");
        assert_eq!(prefs["speedPriority"].as_f64().unwrap() as f32, 0.9);
        assert_eq!(prefs["costPriority"].as_f64().unwrap() as f32, 0.8);
        assert_eq!(prefs["intelligencePriority"], 0.5);
    }

    fn result(stop: Option<&str>, text: Option<&str>) -> CreateMessageResult {
        let message = match text {
            Some(t) => SamplingMessage::assistant_text(t),
            None => SamplingMessage::new(
                Role::Assistant,
                SamplingMessageContentBlock::Image(rmcp::model::ImageContent::new(
                    "AA==",
                    "image/png",
                )),
            ),
        };
        let r = CreateMessageResult::new(message, "tiny".into());
        match stop {
            Some(s) => r.with_stop_reason(s),
            None => r,
        }
    }

    #[test]
    fn a_reply_cut_at_max_tokens_or_without_text_is_not_read() {
        assert!(matches!(
            reply(result(Some("maxTokens"), Some("{\"1\": {\"A\""))),
            Err(SamplingError::MaxTokens(_))
        ));
        assert!(matches!(
            reply(result(None, None)),
            Err(SamplingError::Failed(_))
        ));
        let ok = reply(result(Some("endTurn"), Some("{}"))).unwrap();
        assert_eq!((ok.text.as_str(), ok.model.as_str()), ("{}", "tiny"));
    }
}
