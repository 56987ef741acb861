//! Prints, for each labelled cluster (docs/eval/ledger-clusters.jsonl),
//! the cosines an embedding judge could read a "one kind of task" from:
//! between the members' triggers, between their actions, and between
//! each member's trigger and its own action.
//!
//! `cargo run --release -p silt-embed --example cluster_signals -- DIR [CLUSTERS]`

use silt_embed::Encoder;

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| f64::from(x * y)).sum()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let encoder = Encoder::load(std::path::Path::new(&args[0])).expect("a model folder");
    let path = args
        .get(1)
        .map(String::as_str)
        .unwrap_or("docs/eval/ledger-clusters.jsonl");
    for line in std::fs::read_to_string(path).expect("clusters").lines() {
        let c: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let members = c["lessons"].as_array().expect("lessons");
        let whens: Vec<&str> = members
            .iter()
            .map(|m| m["when"].as_str().unwrap())
            .collect();
        let prefers: Vec<&str> = members
            .iter()
            .map(|m| m["prefer"].as_str().unwrap())
            .collect();
        let w = encoder.encode(&whens).expect("encode");
        let p = encoder.encode(&prefers).expect("encode");
        let mut tt = vec![];
        let mut aa = vec![];
        let mut cross = vec![];
        for i in 0..w.len() {
            for j in i + 1..w.len() {
                tt.push(cosine(&w[i], &w[j]));
                aa.push(cosine(&p[i], &p[j]));
                cross.push(cosine(&w[i], &p[j]).min(cosine(&w[j], &p[i])));
            }
        }
        let ta: Vec<f64> = (0..w.len()).map(|i| cosine(&w[i], &p[i])).collect();
        let fmt = |v: &[f64]| {
            let min = v.iter().copied().fold(f64::INFINITY, f64::min);
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            format!("{min:.2}/{mean:.2}")
        };
        println!(
            "{:12} {:5} {:8} tt {} aa {} ta {} cross {}",
            c["id"].as_str().unwrap(),
            c["split"].as_str().unwrap(),
            c["label"].as_str().unwrap(),
            fmt(&tt),
            fmt(&aa),
            fmt(&ta),
            fmt(&cross)
        );
    }
}
