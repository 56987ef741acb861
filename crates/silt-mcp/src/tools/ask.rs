//! `sieve_ask`: arguments and results exactly as the seed's `jev_ask`, plus
//! `judge`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use silt_config::Config;
use silt_core::ask::{DEFAULT_BUDGET_USD, DEFAULT_MAX_CHARS};
use silt_runtime::bindings::ask_engine::exports::silt::sieve::ask::{
    AskRequest, AskResult, Results,
};
use silt_runtime::bindings::ask_engine::silt::sieve::types::{AskUsage, LabelledProbability};
use silt_runtime::bindings::types::{AnswerSpace, ChoiceOption, Item, Question, YesNo};
use silt_runtime::{CallError, Runtime};

/// The question kinds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// yes/no criteria → one probability per item
    #[default]
    Judge,
    /// labelled options → a distribution and the pick per item
    Choose,
    /// ordered levels, lowest first → a distribution, level and expected value per item
    Score,
}

/// An item id: a string or a number (returned as a string).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(untagged)]
pub enum ItemId {
    /// A string, used as it is.
    Text(String),
    /// A number, used as its decimal text (`7` is the id "7").
    Number(serde_json::Number),
}

/// An item: a plain string, or `{id, text}`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(untagged)]
pub enum ItemInput {
    /// The item's text; its id is its position in the list.
    Text(String),
    /// The item's text with an id of its own.
    Object {
        /// Defaults to the item's position in the list.
        #[serde(default)]
        id: Option<ItemId>,
        /// The item's text.
        text: String,
    },
}

/// Arguments of `sieve_ask`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::tools::schema::portable)]
#[serde(deny_unknown_fields)]
pub struct AskParams {
    /// The question asked of every item; put shared context (the traceback, the spec, the goal) here.
    pub question: String,
    /// The items: strings or {id, text}; a missing id is the list position.
    pub items: Vec<ItemInput>,
    /// judge (default), choose or score.
    #[serde(default)]
    pub kind: Kind,
    /// judge: what makes the answer yes.
    #[serde(default)]
    pub yes: Option<String>,
    /// judge: what makes the answer no.
    #[serde(default)]
    pub no: Option<String>,
    /// choose: {label: when it applies}, in the order to report them. Add your own `none` option when no label may fit.
    #[serde(default)]
    pub options: Option<Map<String, Value>>,
    /// score: the ordered levels, lowest first.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// judge: keep at most this many results.
    #[serde(default, deserialize_with = "crate::tools::schema::opt_u32")]
    #[schemars(range(min = 1))]
    pub top_k: Option<u32>,
    /// judge: drop results below this probability (default 0).
    #[serde(default, deserialize_with = "crate::tools::schema::opt_f64")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub threshold: Option<f64>,
    /// Each item is cut to this many characters (default 4000, at least 100).
    #[serde(default, deserialize_with = "crate::tools::schema::opt_u32")]
    #[schemars(range(min = 100))]
    pub max_chars: Option<u32>,
    /// The most the call may spend, in USD (default 0.50).
    #[serde(default, deserialize_with = "crate::tools::schema::opt_f64")]
    #[schemars(range(min = 0.0))]
    pub budget_usd: Option<f64>,
    /// The judge plugin to ask (default: silt.toml's choice for sieve_ask, else lexical).
    #[serde(default)]
    pub judge: Option<String>,
}

impl AskParams {
    /// Builds the engine request, refusing arguments that do not fit `kind`.
    pub fn to_request(&self) -> Result<AskRequest, CallError> {
        let bad = |m: String| Err(CallError::InvalidRequest(m));
        let space = match self.kind {
            Kind::Judge => {
                if self.options.is_some() || self.levels.is_some() {
                    return bad(
                        "kind 'judge' takes `yes` and `no`, not `options` or `levels`".into(),
                    );
                }
                match (&self.yes, &self.no) {
                    (Some(yes), Some(no)) => AnswerSpace::Judge(YesNo {
                        yes: yes.trim().into(),
                        no: no.trim().into(),
                    }),
                    _ => return bad("kind 'judge' needs both `yes` and `no` criteria".into()),
                }
            }
            Kind::Choose => {
                if self.yes.is_some() || self.no.is_some() || self.levels.is_some() {
                    return bad("kind 'choose' takes `options`, not `yes`/`no` or `levels`".into());
                }
                let Some(options) = &self.options else {
                    return bad("kind 'choose' needs `options` as {label: when it applies}".into());
                };
                let mut out = Vec::with_capacity(options.len());
                for (label, when) in options {
                    let Some(when) = when.as_str() else {
                        return bad(format!(
                            "option '{label}' must map to a string saying when it applies"
                        ));
                    };
                    out.push(ChoiceOption {
                        label: label.trim().into(),
                        criterion: when.trim().into(),
                    });
                }
                AnswerSpace::Choose(out)
            }
            Kind::Score => {
                if self.yes.is_some() || self.no.is_some() || self.options.is_some() {
                    return bad("kind 'score' takes `levels`, not `yes`/`no` or `options`".into());
                }
                match &self.levels {
                    Some(levels) => {
                        AnswerSpace::Score(levels.iter().map(|l| l.trim().to_string()).collect())
                    }
                    None => {
                        return bad(
                            "kind 'score' needs `levels`, an ordered list, lowest first".into()
                        );
                    }
                }
            }
        };
        if self.kind != Kind::Judge && (self.top_k.is_some() || self.threshold.is_some()) {
            return bad("`top_k` and `threshold` apply to kind 'judge' only".into());
        }
        let items = items_in(&self.items);
        Ok(AskRequest {
            question: Question {
                text: self.question.trim().into(),
                space,
            },
            items,
            max_chars: self.max_chars.unwrap_or(DEFAULT_MAX_CHARS),
            budget_usd: self.budget_usd.unwrap_or(DEFAULT_BUDGET_USD),
            top_k: self.top_k,
            threshold: self.threshold.unwrap_or(0.0),
        })
    }
}

/// Items as the engine takes them: a missing id is the list position,
/// a numeric id its decimal string.
pub fn items_in(items: &[ItemInput]) -> Vec<Item> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            ItemInput::Text(text) => Item {
                id: i.to_string(),
                text: text.clone(),
            },
            ItemInput::Object { id, text } => Item {
                id: match id {
                    Some(ItemId::Text(s)) => s.clone(),
                    Some(ItemId::Number(n)) => n.to_string(),
                    None => i.to_string(),
                },
                text: text.clone(),
            },
        })
        .collect()
}

/// `{label: probability}` in the order given.
pub fn distribution(probabilities: &[LabelledProbability]) -> Value {
    Value::Object(
        probabilities
            .iter()
            .map(|p| (p.label.clone(), json!(p.probability)))
            .collect(),
    )
}

/// The seed's result shape.
pub fn result_json(kind: Kind, judge: &str, result: &AskResult) -> Value {
    use silt_core::ask::{is_uninformative, is_uninformative_yes};
    // an answer that says nothing is marked, and names no choice or level
    let flat =
        |p: &[LabelledProbability]| -> Vec<f64> { p.iter().map(|l| l.probability).collect() };
    let results: Vec<Value> = match &result.results {
        Results::Judge(rows) => rows
            .iter()
            .map(|r| {
                let mut row = json!({"id": r.id, "probability": r.probability});
                if is_uninformative_yes(r.probability) {
                    row["evidence"] = json!("none");
                }
                row
            })
            .collect(),
        Results::Choose(rows) => rows
            .iter()
            .map(|r| {
                let mut row = json!({"id": r.id, "choice": r.choice, "probabilities": distribution(&r.probabilities)});
                if is_uninformative(&flat(&r.probabilities)) {
                    row["choice"] = Value::Null;
                    row["evidence"] = json!("none");
                }
                row
            })
            .collect(),
        Results::Score(rows) => rows
            .iter()
            .map(|r| {
                let mut row = json!({"id": r.id, "level": r.level, "label": r.label, "expected": r.expected,
                       "probabilities": distribution(&r.probabilities)});
                if is_uninformative(&flat(&r.probabilities)) {
                    row["level"] = Value::Null;
                    row["label"] = Value::Null;
                    row["evidence"] = json!("none");
                }
                row
            })
            .collect(),
    };
    let mut out = json!({
        "results": results,
        "kind": kind,
        "items_scored": result.items_scored,
    });
    add_usage(&mut out, &result.usage);
    out["judge"] = json!(judge);
    out
}

/// The seed's usage fields, as they sit at the top level of a result.
pub fn usage_json(u: &AskUsage) -> Map<String, Value> {
    let v = json!({
        "tokens": u.tokens,
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "requests": u.requests,
        "cache_hits": u.cache_hits,
        "cost_usd": (u.cost_usd * 1e6).round() / 1e6,
        "budget_exhausted": u.budget_exhausted,
    });
    v.as_object().cloned().unwrap_or_default()
}

/// Adds usage to a result object: as the `usage` object every tool
/// carries (route and search add their own fields to it), and, where the
/// seed's `jev_*` result had them, as top-level fields too, so clients
/// written for the seed keep reading them.
pub fn add_usage(out: &mut Value, u: &AskUsage) {
    if let Some(o) = out.as_object_mut() {
        let usage = usage_json(u);
        o.extend(usage.clone());
        o.insert("usage".into(), Value::Object(usage));
    }
}

/// Runs `sieve_ask` end to end.
pub async fn run(
    runtime: &Runtime,
    config: &Config,
    params: &AskParams,
) -> Result<Value, CallError> {
    let request = params.to_request()?;
    let judge = params
        .judge
        .as_deref()
        .unwrap_or_else(|| config.judge_for("sieve_ask"));
    let result = runtime.ask(judge, &request).await?;
    let mut out = result_json(params.kind, judge, &result);
    runtime.judged_by(judge)?.stamp(&mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(v: Value) -> Result<AskParams, serde_json::Error> {
        serde_json::from_value(v)
    }

    #[test]
    fn items_take_strings_objects_and_numeric_ids() {
        let p = params(json!({"question": "q", "yes": "y", "no": "n",
            "items": ["plain", {"id": "x", "text": "t"}, {"text": "no id"}, {"id": 7, "text": "n"}]}))
        .unwrap();
        let ids: Vec<_> = p
            .to_request()
            .unwrap()
            .items
            .into_iter()
            .map(|i| i.id)
            .collect();
        assert_eq!(ids, ["0", "x", "2", "7"]);
    }

    #[test]
    fn options_keep_their_order() {
        let p = params(json!({"question": "q", "kind": "choose", "items": ["a"],
            "options": {"zeta": "z", "alpha": "a", "none": "nothing fits"}}))
        .unwrap();
        let AnswerSpace::Choose(options) = p.to_request().unwrap().question.space else {
            panic!()
        };
        let labels: Vec<_> = options.iter().map(|o| o.label.as_str()).collect();
        assert_eq!(labels, ["zeta", "alpha", "none"]);
    }

    #[test]
    fn mismatched_arguments_are_refused_clearly() {
        for (args, needle) in [
            (
                json!({"question": "q", "items": ["a"], "yes": "y"}),
                "needs both `yes` and `no`",
            ),
            (
                json!({"question": "q", "items": ["a"], "kind": "choose"}),
                "needs `options`",
            ),
            (
                json!({"question": "q", "items": ["a"], "kind": "score", "yes": "y"}),
                "takes `levels`",
            ),
            (
                json!({"question": "q", "items": ["a"], "kind": "score", "levels": ["a", "b"], "top_k": 1}),
                "kind 'judge' only",
            ),
            (
                json!({"question": "q", "items": ["a"], "kind": "choose", "options": {"a": 1}}),
                "must map to a string",
            ),
        ] {
            let err = params(args).unwrap().to_request().unwrap_err().to_string();
            assert!(err.contains(needle), "{err}");
        }
        assert!(params(json!({"question": "q", "items": [], "colour": "red"})).is_err());
        assert!(params(json!({"question": "q", "items": [], "kind": "rank"})).is_err());
    }
}
