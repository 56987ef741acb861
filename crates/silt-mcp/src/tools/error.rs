//! One error shape for every tool: `{ok: false, error: {code, message,
//! hint?}}`, so an agent reads a failed `sieve_*` call and a failed
//! `sediment_*` call the same way, and branches on `code`, not on words.

use serde_json::{Map, Value, json};

use silt_runtime::CallError;

/// What kind of failure a tool call met: the `code` an agent branches on.
/// Stable: a new kind is added, an existing one never renamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// The arguments do not fit the tool's schema or ranges.
    InvalidArguments,
    /// The arguments fit the schema, but the request cannot be run as
    /// asked (an empty list, a judge that cannot do the question).
    InvalidRequest,
    /// No installed plugin has the name asked for.
    UnknownPlugin,
    /// The judge failed to answer (a server down, an answer out of shape).
    JudgeFailed,
    /// A plugin broke its sandbox's limits or trapped.
    PluginFailed,
    /// silt could not set the call up (a model missing, a cache unwritable).
    SetupFailed,
    /// The ledger's store or engine refused or failed.
    LedgerFailed,
}

impl ErrorCode {
    /// The code as the JSON answer spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArguments => "invalid_arguments",
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::UnknownPlugin => "unknown_plugin",
            ErrorCode::JudgeFailed => "judge_failed",
            ErrorCode::PluginFailed => "plugin_failed",
            ErrorCode::SetupFailed => "setup_failed",
            ErrorCode::LedgerFailed => "ledger_failed",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    /// Stable and machine-readable (see [`ErrorCode`]).
    pub code: ErrorCode,
    /// What went wrong, for a person.
    pub message: String,
    /// What to do about it, when there is something to say.
    pub hint: Option<String>,
}

impl ToolError {
    /// The arguments do not fit the tool's schema or ranges.
    pub fn invalid(message: impl Into<String>) -> Self {
        ToolError {
            code: ErrorCode::InvalidArguments,
            message: message.into(),
            hint: Some("the tool's input schema lists every field and its range".into()),
        }
    }

    /// The body of a tool-error result.
    pub fn to_json(&self) -> Value {
        let mut error = json!({"code": self.code.as_str(), "message": self.message});
        if let Some(hint) = &self.hint {
            error["hint"] = json!(hint);
        }
        json!({"ok": false, "error": error})
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, " ({hint})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ToolError {}

/// A tool's arguments read into its parameter type; a mismatch is an
/// `invalid_arguments` error naming the field, never a protocol error, so
/// every tool refuses bad input the same way.
pub fn parse_args<T: serde::de::DeserializeOwned>(
    args: Map<String, Value>,
) -> Result<T, ToolError> {
    serde_json::from_value(Value::Object(args))
        .map_err(|e| ToolError::invalid(format!("invalid arguments: {e}")))
}

/// A ledger operation's own message (the store's and the engine's words
/// already say what to do).
impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError {
            code: ErrorCode::LedgerFailed,
            message,
            hint: None,
        }
    }
}

/// A store's or a file's failure (anyhow, with its context): the ledger
/// failed, unless a call's own error is inside, which keeps its kind.
impl From<anyhow::Error> for ToolError {
    fn from(e: anyhow::Error) -> Self {
        match e.downcast::<CallError>() {
            Ok(call) => call.into(),
            Err(e) => format!("{e:#}").into(),
        }
    }
}

impl From<CallError> for ToolError {
    fn from(e: CallError) -> Self {
        let (code, hint) = match &e {
            CallError::InvalidRequest(_) => (ErrorCode::InvalidRequest, None),
            CallError::Unknown(_) => (
                ErrorCode::UnknownPlugin,
                Some("`silt plugins list` shows the installed plugins".to_string()),
            ),
            CallError::JudgeFailed(_) => (
                ErrorCode::JudgeFailed,
                Some("retry, or pass another `judge`".to_string()),
            ),
            CallError::Plugin(_) => (ErrorCode::PluginFailed, None),
            CallError::Setup(_) => (ErrorCode::SetupFailed, None),
        };
        ToolError {
            code,
            message: e.to_string(),
            hint,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_has_the_same_shape() {
        let from_ledger: ToolError = "no entry with id 'x'".to_string().into();
        let from_call: ToolError = CallError::InvalidRequest("items is empty".into()).into();
        for (e, code) in [
            (from_ledger, "ledger_failed"),
            (from_call, "invalid_request"),
            (
                ToolError::invalid("k must be between 1 and 50"),
                "invalid_arguments",
            ),
        ] {
            let v = e.to_json();
            assert_eq!(v["ok"], false);
            assert_eq!(v["error"]["code"], code);
            assert!(v["error"]["message"].as_str().unwrap().len() > 5);
        }
        let unknown: ToolError = CallError::JudgeFailed("server down".into()).into();
        assert_eq!(
            unknown.to_json()["error"]["hint"],
            "retry, or pass another `judge`"
        );
        assert_eq!(
            unknown.to_string(),
            "server down (retry, or pass another `judge`)"
        );
    }
}
