//! What answered: the judge a call asked, the model behind it where there
//! is one, and whether it reads meaning, so an answer from a judge that
//! counts words is never read as a finding.

use serde_json::{Value, json};

use super::{CallError, Runtime};
use silt_plugins::manifest::{JudgeSection, granted_model};

/// The judge behind an answer, as `usage` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgedBy {
    /// The judge plugin's name, as the call named it.
    pub judge: String,
    /// The model, from the manifest's `[judge] model` or, without one, the
    /// installed models it is granted.
    pub model: Option<String>,
    /// Its manifest's `[judge] entailment`: it reads what a text states,
    /// not only which words or topics it shares.
    pub reads_meaning: bool,
}

impl JudgedBy {
    /// `judge`, `model` (when there is one) and `judge_reads_meaning`, as
    /// they join a result's `usage`.
    pub fn usage_fields(&self) -> serde_json::Map<String, Value> {
        let mut fields = serde_json::Map::new();
        fields.insert("judge".into(), json!(self.judge));
        if let Some(model) = &self.model {
            fields.insert("model".into(), json!(model));
        }
        fields.insert("judge_reads_meaning".into(), json!(self.reads_meaning));
        fields
    }

    /// Adds [`Self::usage_fields`] to `out`'s `usage` (made when missing)
    /// and names the judge at the top level, where sieve results always
    /// had it.
    pub fn stamp(&self, out: &mut Value) {
        let Some(o) = out.as_object_mut() else { return };
        o.insert("judge".into(), json!(self.judge));
        let usage = o.entry("usage").or_insert_with(|| json!({}));
        if let Some(u) = usage.as_object_mut() {
            u.extend(self.usage_fields());
        }
    }
}

impl Runtime {
    /// What answers a call asked of plugin `judge`.
    pub fn judged_by(&self, judge: &str) -> Result<JudgedBy, CallError> {
        let registry = self.registry();
        let manifest = &registry.get(judge)?.manifest;
        let section: JudgeSection = manifest.judge.clone().unwrap_or_default();
        let env = silt_config::env::var;
        let model = match &section.model {
            Some(m) => Some(granted_model(m, env)),
            None if manifest.grants.models.is_empty() => None,
            None => Some(
                manifest
                    .grants
                    .models
                    .iter()
                    .map(|m| granted_model(m, env))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        };
        Ok(JudgedBy {
            judge: judge.to_string(),
            model,
            reads_meaning: section.entailment,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamping_adds_to_usage_and_keeps_what_is_there() {
        let by = JudgedBy {
            judge: "openai".into(),
            model: Some("qwen3".into()),
            reads_meaning: true,
        };
        let mut out = json!({"usage": {"tokens": 3}, "judge": "old"});
        by.stamp(&mut out);
        assert_eq!(
            out,
            json!({"judge": "openai", "usage": {"tokens": 3, "judge": "openai",
                   "model": "qwen3", "judge_reads_meaning": true}})
        );
        let words = JudgedBy {
            judge: "lexical".into(),
            model: None,
            reads_meaning: false,
        };
        let mut out = json!({"ok": true});
        words.stamp(&mut out);
        assert_eq!(
            out["usage"],
            json!({"judge": "lexical", "judge_reads_meaning": false})
        );
    }
}
