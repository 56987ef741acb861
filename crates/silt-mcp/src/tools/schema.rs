//! Tool argument schemas every MCP client can send, and argument parsing
//! that meets clients where they are.
//!
//! schemars writes an optional field as `{"type": ["integer", "null"],
//! "default": null, "format": "uint32"}`. Several clients (the MCP
//! Inspector among them) warn on such unions, render them as free text and
//! send the number back as a string. [`portable`] rewrites every schema to
//! plain types: an optional field is simply not required, and its default
//! is in its description. The numeric deserializers here accept a number
//! sent as a numeric string ("3"), and [`id`] a lesson id that a client
//! read as a number (the Inspector CLI parses `id=12345678` as JSON): the
//! two mismatches known in the wild.

use schemars::Schema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// Formats JSON Schema does not define (schemars' Rust-type hints).
const RUST_FORMATS: [&str; 10] = [
    "uint", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "double",
];

/// A schemars transform for every tool's argument type: no `null` in a
/// `type`, no `anyOf` with a null branch, no `default: null`, no Rust-only
/// `format`. Applied with `#[schemars(transform = portable)]`.
pub fn portable(schema: &mut Schema) {
    let mut value = Value::from(schema.clone());
    clean(&mut value);
    if let Ok(s) = Schema::try_from(value) {
        *schema = s;
    }
}

fn clean(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if let Some(Value::Array(types)) = o.get("type") {
                let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                let t = if kept.len() == 1 {
                    kept[0].clone()
                } else {
                    Value::Array(kept)
                };
                o.insert("type".into(), t);
            }
            for key in ["anyOf", "oneOf"] {
                if let Some(Value::Array(branches)) = o.get(key) {
                    let kept: Vec<Value> = branches
                        .iter()
                        .filter(|b| b.get("type") != Some(&Value::from("null")))
                        .cloned()
                        .collect();
                    if kept.len() != branches.len() {
                        o.remove(key);
                        if kept.len() == 1 {
                            if let Value::Object(only) = &kept[0] {
                                for (k, val) in only {
                                    o.entry(k.clone()).or_insert_with(|| val.clone());
                                }
                            }
                        } else {
                            o.insert(key.into(), Value::Array(kept));
                        }
                    }
                }
            }
            if o.get("default") == Some(&Value::Null) {
                o.remove("default");
            }
            if o.get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| RUST_FORMATS.contains(&f))
            {
                o.remove("format");
            }
            for child in o.values_mut() {
                clean(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(clean),
        _ => {}
    }
}

/// A number, or a string holding one.
#[derive(Deserialize)]
#[serde(untagged)]
enum Lenient {
    Number(serde_json::Number),
    Text(String),
}

fn number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<serde_json::Number>, D::Error> {
    use serde::de::Error;
    match Option::<Lenient>::deserialize(d)? {
        None => Ok(None),
        Some(Lenient::Number(n)) => Ok(Some(n)),
        Some(Lenient::Text(s)) => s
            .trim()
            .parse::<serde_json::Number>()
            .map(Some)
            .map_err(|_| D::Error::custom(format!("expected a number, got \"{s}\""))),
    }
}

/// An optional whole number, sent as a number or a numeric string.
pub fn opt_u32<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    use serde::de::Error;
    number(d)?
        .map(|n| {
            n.as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| D::Error::custom(format!("expected a whole number ≥ 0, got {n}")))
        })
        .transpose()
}

/// A whole number, sent as a number or a numeric string.
pub fn u32<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    use serde::de::Error;
    opt_u32(d)?.ok_or_else(|| D::Error::custom("expected a whole number, got null"))
}

/// An optional number, sent as a number or a numeric string.
pub fn opt_f64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    use serde::de::Error;
    number(d)?
        .map(|n| {
            n.as_f64()
                .ok_or_else(|| D::Error::custom(format!("expected a number, got {n}")))
        })
        .transpose()
}

/// A lesson id: text, or a whole number a client parsed out of an
/// all-digit id, given back as the digits it was written with. Anything
/// else (a fraction, an exponent) did not come from an id.
pub fn id<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    use serde::de::Error;
    match Lenient::deserialize(d)? {
        Lenient::Text(s) => Ok(s),
        Lenient::Number(n) if n.is_u64() => Ok(n.to_string()),
        Lenient::Number(n) => Err(D::Error::custom(format!(
            "expected a lesson id (text such as \"a3f09c21\"), got the number {n}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Deserialize, schemars::JsonSchema)]
    #[schemars(transform = portable)]
    #[allow(dead_code)] // read through its schema only
    struct Args {
        /// How many (1 to 20, default 5).
        #[serde(default, deserialize_with = "opt_u32")]
        #[schemars(range(min = 1, max = 20))]
        top_k: Option<u32>,
        #[serde(default, deserialize_with = "opt_f64")]
        threshold: Option<f64>,
        #[serde(default)]
        judge: Option<String>,
        #[serde(default)]
        mode: Option<Mode>,
    }

    #[derive(Deserialize)]
    struct IdArg {
        #[serde(deserialize_with = "id")]
        id: String,
    }

    #[derive(Deserialize, schemars::JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Mode {
        Files,
    }

    #[test]
    fn schemas_have_no_null_unions_or_rust_formats() {
        let schema = serde_json::to_value(schemars::schema_for!(Args)).unwrap();
        let text = schema.to_string();
        assert!(!text.contains("null"), "{schema:#}");
        assert!(
            !text.contains("uint32") && !text.contains("double"),
            "{schema:#}"
        );
        assert_eq!(schema["properties"]["top_k"]["type"], "integer");
        assert_eq!(schema["properties"]["top_k"]["minimum"], 1);
        assert_eq!(schema["properties"]["judge"]["type"], "string");
        assert!(
            schema["properties"]["mode"].get("anyOf").is_none(),
            "{schema:#}"
        );
    }

    #[test]
    fn numbers_arrive_as_numbers_or_numeric_strings() {
        let a: Args = serde_json::from_value(json!({"top_k": "3", "threshold": " 0.5"})).unwrap();
        assert_eq!((a.top_k, a.threshold), (Some(3), Some(0.5)));
        let a: Args = serde_json::from_value(json!({"top_k": 3, "threshold": 1})).unwrap();
        assert_eq!((a.top_k, a.threshold), (Some(3), Some(1.0)));
        let a: Args = serde_json::from_value(json!({})).unwrap();
        assert_eq!((a.top_k, a.threshold), (None, None));
        for bad in [
            json!({"top_k": "three"}),
            json!({"top_k": -1}),
            json!({"top_k": 1.5}),
        ] {
            assert!(
                serde_json::from_value::<Args>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn an_id_read_as_a_number_arrives_as_its_digits() {
        let a: IdArg = serde_json::from_value(json!({"id": "0a1b2c3d"})).unwrap();
        assert_eq!(a.id, "0a1b2c3d");
        let a: IdArg = serde_json::from_value(json!({"id": 12345678})).unwrap();
        assert_eq!(a.id, "12345678");
        for bad in [json!({"id": 1.5e9}), json!({"id": -3}), json!({"id": null})] {
            assert!(
                serde_json::from_value::<IdArg>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }
}
