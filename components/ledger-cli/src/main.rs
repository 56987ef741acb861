//! Drives an imported ledger engine from the command line, so the ledger
//! composed with a judge runs under any WASI host (`wasmtime run`, jco):
//!
//! - `demo [--now SECONDS]`: the seed's ten entries, consolidated and slept;
//!   prints what `silt demo --json` prints.
//! - `script`: reads `{"entries": [...], "steps": [...]}` on stdin, runs
//!   each step (capture, recall, confirm, contradict, consolidate, sleep,
//!   stats) and prints `{"results": [...]}`, one result per step.

wit_bindgen::generate!({
    path: ["../../wit/judge", "../../wit/host", "../../wit/embed", "../../wit/ledger"],
    world: "silt:ledger/ledger-cli",
    generate_all,
});

use serde_json::{Value, json};
use silt::ledger::engine::Ledger;
use silt::ledger::types::{Change, Entry, Event, EventKind, Feedback, Params, Status};
use silt_core::ledger as core;

silt_core::ledger_entry_conversions!(Entry, Status);
silt_core::ledger_event_conversions!(Event, EventKind);
silt_core::ledger_params_conversions!(Params);

fn params() -> Params {
    params_to_wit(&core::Params::default())
}

fn core_entries(entries: &[Entry]) -> Vec<core::Entry> {
    entries.iter().map(entry_from_wit).collect()
}

fn now_arg(args: &[String]) -> Result<f64, String> {
    match args.iter().position(|a| a == "--now") {
        None => Ok(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0)),
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| "--now takes unix seconds, e.g. --now 1764000000".to_string()),
    }
}

fn demo(now: f64) -> Result<Value, String> {
    let ledger = Ledger::new(params());
    let seed: Vec<Entry> = core::demo::entries(now).iter().map(entry_to_wit).collect();
    ledger.sync(&seed);
    let before = ledger.stats(true, 500, now);
    let (consolidate, _) = ledger.homeostasis(now);
    let (sleep, change) = ledger
        .sleep(now)
        .map_err(|e| format!("sleep failed: {e:?}"))?;
    let after = ledger.stats(true, 500, now);
    let events: Vec<core::events::Event> = change.events.iter().map(event_from_wit).collect();
    Ok(core::demo::report(
        "composed",
        &core_entries(&before),
        &core::ops::Homeostasis {
            retired: consolidate.retired as usize,
            evicted: consolidate.evicted as usize,
            active: consolidate.active as usize,
        },
        &core::sleep::SleepReport {
            merged: sleep.merged as usize,
            contradictions_resolved: sleep.contradictions_resolved as usize,
            generalized: sleep.generalized as usize,
            held_for_review: sleep.held_for_review as usize,
        },
        &core_entries(&after),
        &events,
        now,
    ))
}

fn str_field<'a>(step: &'a Value, key: &str) -> Result<&'a str, String> {
    step[key]
        .as_str()
        .ok_or_else(|| format!("step {step} needs a string field '{key}'"))
}

fn now_field(step: &Value) -> Result<f64, String> {
    step["now"]
        .as_f64()
        .ok_or_else(|| format!("step {step} needs 'now' (unix seconds)"))
}

fn changed(change: &Change, now: f64) -> Value {
    json!({
        "entries": change.entries.iter().map(|e| entry_from_wit(e).view(now)).collect::<Vec<_>>(),
        "events": change.events.iter().map(event_from_wit).collect::<Vec<_>>(),
    })
}

fn step(ledger: &Ledger, step: &Value) -> Result<Value, String> {
    let op = str_field(step, "op")?;
    let now = now_field(step)?;
    let views = |entries: &[Entry]| -> Vec<Value> {
        entries
            .iter()
            .map(|e| entry_from_wit(e).view(now))
            .collect()
    };
    Ok(match op {
        "capture" => {
            let feedback = match step["feedback"].as_str().unwrap_or("neutral") {
                "positive" => Feedback::Positive,
                "negative" => Feedback::Negative,
                "neutral" => Feedback::Neutral,
                other => {
                    return Err(format!(
                        "feedback '{other}' is not positive, negative or neutral"
                    ));
                }
            };
            let id = match step["id"].as_str() {
                Some(id) => id.to_string(),
                None => silt_core::ids::new_id(),
            };
            let change = ledger.capture(
                &id,
                str_field(step, "when")?,
                str_field(step, "prefer")?,
                feedback,
                now,
            );
            changed(&change, now)
        }
        "recall" => {
            let k = step["k"].as_u64().unwrap_or(5) as u32;
            let (hits, change) = ledger.recall(str_field(step, "context")?, k, now);
            json!({"hits": views(&hits), "events": changed(&change, now)["events"]})
        }
        "confirm" => changed(
            &ledger
                .confirm(str_field(step, "id")?, now)
                .map_err(|e| format!("{e:?}"))?,
            now,
        ),
        "contradict" => changed(
            &ledger
                .contradict(str_field(step, "id")?, now)
                .map_err(|e| format!("{e:?}"))?,
            now,
        ),
        "consolidate" => {
            let (report, change) = ledger.homeostasis(now);
            json!({"retired": report.retired, "evicted": report.evicted, "active": report.active,
                   "events": changed(&change, now)["events"]})
        }
        "sleep" => {
            let (report, change) = ledger
                .sleep(now)
                .map_err(|e| format!("sleep failed: {e:?}"))?;
            json!({"merged": report.merged, "contradictions_resolved": report.contradictions_resolved,
                   "generalized": report.generalized, "events": changed(&change, now)["events"]})
        }
        "stats" => json!({"entries": views(&ledger.stats(
            step["include_retired"].as_bool().unwrap_or(false),
            step["limit"].as_u64().unwrap_or(500) as u32,
            now,
        ))}),
        other => {
            return Err(format!(
                "unknown op '{other}': use capture, recall, confirm, contradict, consolidate, sleep or stats"
            ));
        }
    })
}

fn script() -> Result<Value, String> {
    let mut input = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut input)
        .map_err(|e| format!("could not read the script on stdin: {e}"))?;
    let script: Value =
        serde_json::from_str(&input).map_err(|e| format!("the script is not JSON: {e}"))?;
    let entries: Vec<core::Entry> = serde_json::from_value(script["entries"].clone())
        .or_else(|_| {
            if script["entries"].is_null() {
                Ok(vec![])
            } else {
                Err(())
            }
        })
        .map_err(|_| "'entries' must be a list of Sediment entries".to_string())?;
    let ledger = Ledger::new(params());
    ledger.sync(&entries.iter().map(entry_to_wit).collect::<Vec<_>>());
    let steps = script["steps"]
        .as_array()
        .ok_or("the script needs 'steps', a list of {op, now, ...}")?;
    let results = steps
        .iter()
        .map(|s| step(&ledger, s))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(json!({"results": results}))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = match args.first().map(String::as_str) {
        Some("demo") => now_arg(&args).and_then(demo),
        Some("script") => script(),
        _ => Err("usage: silt-ledger-cli demo [--now SECONDS] | script < steps.json".to_string()),
    };
    match out {
        Ok(v) => println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
