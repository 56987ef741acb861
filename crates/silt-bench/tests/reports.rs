//! The benchmarks' own checks: each report holds what its label says.
//! They start the `silt` binary built beside `silt-bench`, so run them
//! with the workspace (`cargo test --release --workspace`), which builds it.

use serde_json::Value;

/// `silt-bench http --entries`: the ledger holds the seeded lessons, every
/// capture the server acknowledged is counted once (an import also logs
/// its lessons as captured), and no call fails.
#[test]
fn the_load_bench_seeds_its_ledger_and_counts_only_its_captures() {
    let report = bench_json(&[
        "http",
        "--entries",
        "300",
        "--clients",
        "1,4",
        "--seconds",
        "1",
        "--json",
    ]);
    assert_eq!(report["entries_at_start"], 300, "{report}");
    let acknowledged = report["captures_acknowledged"].as_u64().unwrap();
    assert!(acknowledged > 0, "{report}");
    assert_eq!(report["captures_in_ledger"], acknowledged, "{report}");
    for level in report["levels"].as_array().unwrap() {
        assert_eq!(level["errors"], 0, "{report}");
        assert!(level["max_ms"].as_f64().unwrap() >= level["p99_ms"].as_f64().unwrap());
    }
}

/// `silt-bench ledger --writers`: each writer process captures and then
/// recalls, the ledger ends with every lesson (the bench checks it), and
/// the row times both.
#[test]
fn the_writers_bench_times_captures_and_recalls_from_each_process() {
    let report = bench_json(&[
        "ledger",
        "--entries",
        "60",
        "--calls",
        "2",
        "--text",
        "agents",
        "--no-sleep",
        "--writers",
        "1,3",
        "--writer-captures",
        "4",
        "--json",
    ]);
    let rows = report["writers"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{report}");
    for (row, w) in rows.iter().zip([1, 3]) {
        assert_eq!(row["writers"], w, "{row}");
        assert_eq!(row["captures"], w * 4, "{row}");
        assert_eq!(row["recalls"], w * 4, "{row}");
        for kind in ["capture", "recall"] {
            let p50 = row[format!("{kind}_p50_ms")].as_f64().unwrap();
            let p99 = row[format!("{kind}_p99_ms")].as_f64().unwrap();
            assert!(p50 > 0.0 && p99 >= p50, "{row}");
        }
    }
}

/// `silt-bench ledger` with its sleep pass reports what the pass did and
/// the sandboxes' peak memory: the ledger engine's and the lexical
/// judge's, whose instance stays warm between calls.
#[test]
fn the_ledger_bench_reports_the_sleep_and_the_engines_memory() {
    let report = bench_json(&["ledger", "--entries", "300", "--calls", "3", "--json"]);
    let s = &report["silt"];
    assert!(s["sleep_ms"].as_f64().unwrap() > 0.0, "{report}");
    assert!(s["sleep"]["merged"].as_u64().is_some(), "{report}");
    let engine = s["engine_peak_memory_mib"].as_f64().unwrap();
    // the engine's manifest allows 512 MiB; 300 lessons need a few
    assert!(engine > 0.0 && engine < 64.0, "{report}");
    // the judge's manifest allows 64 MiB
    let judge = s["judge_peak_memory_mib"].as_f64().unwrap();
    assert!(judge > 0.0 && judge < 64.0, "{report}");
}

/// Runs a `silt-bench` command that must succeed; its JSON output.
fn bench_json(args: &[&str]) -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_silt-bench"))
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}
