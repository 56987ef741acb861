//! What each tool returns when it succeeds, as the JSON Schema its MCP
//! `outputSchema` declares: the fields every success carries, with their
//! types. Clients (the official Python SDK among them) validate a tool's
//! structured result against it, so the schema is checked on every call
//! the tests make. Fields a result carries only sometimes, or that may be
//! null, are left out: a schema may under-describe, never mis-describe.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::{Value, json};

fn t(kind: &str) -> Value {
    json!({"type": kind})
}

/// An object with these fields, all required, others allowed.
fn object(fields: &[(&str, Value)]) -> Value {
    let properties: serde_json::Map<String, Value> = fields
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let required: Vec<&str> = fields.iter().map(|(k, _)| *k).collect();
    json!({"type": "object", "properties": properties, "required": required})
}

fn array_of(item: Value) -> Value {
    json!({"type": "array", "items": item})
}

/// The usage object every `sieve_*` result carries; `model` only where
/// the judge has one.
fn usage() -> Value {
    let mut usage = object(&[
        ("tokens", t("integer")),
        ("input_tokens", t("integer")),
        ("output_tokens", t("integer")),
        ("requests", t("integer")),
        ("cache_hits", t("integer")),
        ("cost_usd", t("number")),
        ("budget_exhausted", t("boolean")),
        ("judge", t("string")),
        ("judge_reads_meaning", t("boolean")),
    ]);
    usage["properties"]["model"] = t("string");
    usage
}

/// The usage of a `sediment_*` result that asked the judge: which judge,
/// whether it reads meaning, and its model where it has one.
fn judged_usage() -> Value {
    let mut usage = object(&[
        ("judge", t("string")),
        ("judge_reads_meaning", t("boolean")),
    ]);
    usage["properties"]["model"] = t("string");
    usage
}

/// A `sieve_*` result: its own fields plus `usage` and `judge`.
fn sieve(fields: &[(&str, Value)]) -> Value {
    let mut all = fields.to_vec();
    all.push(("usage", usage()));
    all.push(("judge", t("string")));
    object(&all)
}

/// A `sediment_*` result: `ok: true` and its own fields.
fn sediment(fields: &[(&str, Value)]) -> Value {
    let mut all = vec![("ok", json!({"const": true}))];
    all.extend_from_slice(fields);
    object(&all)
}

/// A lesson as the ledger tools show it.
fn lesson() -> Value {
    object(&[
        ("id", t("string")),
        ("when", t("string")),
        ("prefer", t("string")),
        ("status", t("string")),
    ])
}

fn probability() -> Value {
    json!({"type": "number", "minimum": 0, "maximum": 1})
}

/// The output schema of tool `name`; None for a tool without one.
pub fn for_tool(name: &str) -> Option<Value> {
    let sleep_counts = [
        ("merged", t("integer")),
        ("contradictions_resolved", t("integer")),
    ];
    Some(match name {
        "sieve_ask" => sieve(&[
            ("results", array_of(object(&[("id", t("string"))]))),
            ("kind", t("string")),
            ("items_scored", t("integer")),
        ]),
        "sieve_rank" => sieve(&[
            (
                "results",
                array_of(object(&[
                    ("id", t("string")),
                    ("probability", probability()),
                ])),
            ),
            ("candidates_scored", t("integer")),
        ]),
        "sieve_route" => object(&[
            ("choice", t("string")),
            ("confidence", probability()),
            ("confidence_source", t("string")),
            ("probabilities", t("object")),
            ("usage", usage()),
            ("judge", t("string")),
        ]),
        "sieve_search" => object(&[
            (
                "results",
                array_of(object(&[
                    ("url", t("string")),
                    ("title", t("string")),
                    ("probability", probability()),
                ])),
            ),
            ("variants", t("array")),
            ("backend", t("string")),
            ("usage", t("object")),
        ]),
        "sieve_grep" => sieve(&[
            (
                "results",
                array_of(object(&[
                    ("path", t("string")),
                    ("line_start", t("integer")),
                    ("line_end", t("integer")),
                    ("kind", t("string")),
                    ("probability", probability()),
                ])),
            ),
            ("units_scored", t("integer")),
        ]),
        "sieve_verify" => sieve(&[
            (
                "results",
                array_of(object(&[
                    ("claim", t("string")),
                    ("kind", t("string")),
                    ("passages", t("array")),
                    ("citations", t("array")),
                    ("flags", array_of(t("string"))),
                ])),
            ),
            ("counts", t("object")),
            ("flagged", t("array")),
            ("unqualified_factual_relay_blocked", t("boolean")),
            ("sources", t("array")),
        ]),
        "sieve_triage_threads" => sieve(&[(
            "threads",
            array_of(object(&[
                ("thread_id", t("string")),
                ("bucket", t("string")),
                ("coverage", t("string")),
                ("requests", t("array")),
            ])),
        )]),
        "sediment_recall" => {
            sediment(&[("count", t("integer")), ("heuristics", array_of(lesson()))])
        }
        "sediment_capture" => sediment(&[("captured", lesson())]),
        "sediment_confirm" | "sediment_contradict" => sediment(&[("updated", lesson())]),
        "sediment_consolidate" => sediment(&[
            ("retired", t("integer")),
            ("evicted", t("integer")),
            ("active", t("integer")),
        ]),
        "sediment_sleep" => sediment(&[
            sleep_counts[0].clone(),
            sleep_counts[1].clone(),
            ("generalized", t("integer")),
            ("held_for_review", t("integer")),
            ("undoable", t("array")),
            ("candidates", t("string")),
            ("usage", judged_usage()),
        ]),
        "sediment_undo" => sediment(&[
            ("undone", t("integer")),
            ("restored", array_of(lesson())),
            ("partial", t("boolean")),
        ]),
        "sediment_forget" => sediment(&[("forgotten", t("string"))]),
        "sediment_review_candidates" => sediment(&[
            ("count", t("integer")),
            ("remaining", t("integer")),
            (
                "pairs",
                array_of(object(&[("a_id", t("string")), ("b_id", t("string"))])),
            ),
            ("usage", judged_usage()),
        ]),
        "sediment_apply_judgments" => sediment(&[
            sleep_counts[0].clone(),
            sleep_counts[1].clone(),
            ("skipped", t("integer")),
            ("skipped_judgments", t("array")),
        ]),
        "sediment_stats" => sediment(&[
            ("path", t("string")),
            ("total", t("integer")),
            ("active", t("integer")),
            ("entries", array_of(lesson())),
        ]),
        _ => return None,
    })
}

/// [`for_tool`] as rmcp's tool attribute takes it.
pub fn of(name: &str) -> Arc<JsonObject> {
    match for_tool(name) {
        Some(Value::Object(o)) => Arc::new(o),
        _ => panic!("no output schema for {name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_an_object_whose_required_fields_are_described() {
        for name in [
            "sieve_ask",
            "sieve_rank",
            "sieve_route",
            "sieve_search",
            "sieve_grep",
            "sieve_verify",
            "sieve_triage_threads",
            "sediment_recall",
            "sediment_capture",
            "sediment_confirm",
            "sediment_contradict",
            "sediment_consolidate",
            "sediment_sleep",
            "sediment_undo",
            "sediment_forget",
            "sediment_review_candidates",
            "sediment_apply_judgments",
            "sediment_stats",
        ] {
            let s = for_tool(name).unwrap();
            assert_eq!(s["type"], "object", "{name}");
            for field in s["required"].as_array().unwrap() {
                assert!(
                    s["properties"].get(field.as_str().unwrap()).is_some(),
                    "{name}: {field}"
                );
            }
        }
        assert!(for_tool("nope").is_none());
    }
}
