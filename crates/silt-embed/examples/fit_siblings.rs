//! Fits the embedding judge's `siblings` curve (`calibration.rs`): the
//! probability, from the cosine of two triggers, that they are situations
//! one action generalises over ("calling the payments API" / "fetching
//! data from a partner's REST endpoint", both "set a timeout and retry").
//!
//! `cargo run --release -p silt-embed --example fit_siblings -- DIR
//! [CLUSTERS PAIRS [MORE]]`, MORE being clusters to report with the
//! fitted curve and not fit on (a split of their own).
//!
//! The STS curves cannot give this: STS calls pairs at these cosines
//! "different topics", and short task phrases from one field sit there
//! (docs/JUDGES.md, "Abstraction by meaning"). So the curve is fitted on
//! the project's own labelled lessons, the dev split only:
//!
//! - yes: every trigger pair within a dev `abstract` cluster;
//! - no: every trigger pair within a dev `none` cluster whose two lessons
//!   share their action (the same action on situations with nothing in
//!   common: "storing passwords" / "choosing a license", "ask first"),
//!   and the triggers of every dev `unrelated` pair.
//!
//! It prints the curve and, for each cluster of both splits, the trigger
//! pairs that clear one half, so the held-out split is read apart.

use silt_embed::calibration::{Calibration, fit_platt};
use silt_embed::{Encoder, cosine};

fn lines(path: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn text<'a>(v: &'a serde_json::Value, key: &str) -> &'a str {
    v[key].as_str().expect("a string field")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = std::path::Path::new(
        args.first()
            .expect("usage: fit_siblings DIR [CLUSTERS PAIRS]"),
    );
    let clusters = lines(
        args.get(1)
            .map_or("docs/eval/ledger-clusters.jsonl", String::as_str),
    );
    let pairs = lines(
        args.get(2)
            .map_or("docs/eval/ledger-pairs.jsonl", String::as_str),
    );
    let encoder = Encoder::load(dir).unwrap_or_else(|e| panic!("{e}"));
    let calibration =
        Calibration::for_folder(dir, encoder.kind()).unwrap_or_else(|e| panic!("{e}"));
    let encode = |t: &[&str]| encoder.encode(t).unwrap_or_else(|e| panic!("{e}"));
    let same_action = |a: &str, b: &str, ca: f64| a == b || calibration.same.p(ca) >= 0.5;

    // (split, id, label, [(trigger cosine, same action)])
    let more = args.get(3).map(|p| lines(p)).unwrap_or_default();
    let mut per_cluster = Vec::new();
    for c in clusters.iter().chain(&more) {
        let members = c["lessons"].as_array().expect("lessons");
        let whens: Vec<&str> = members.iter().map(|m| text(m, "when")).collect();
        let prefers: Vec<&str> = members.iter().map(|m| text(m, "prefer")).collect();
        let (w, p) = (encode(&whens), encode(&prefers));
        let mut edges = Vec::new();
        for i in 0..w.len() {
            for j in i + 1..w.len() {
                let same = same_action(prefers[i], prefers[j], cosine(&p[i], &p[j]));
                edges.push((cosine(&w[i], &w[j]), same));
            }
        }
        per_cluster.push((text(c, "split"), text(c, "id"), text(c, "label"), edges));
    }
    let mut points = Vec::new();
    for (split, _, label, edges) in &per_cluster {
        if *split != "dev" {
            continue;
        }
        for &(cw, same) in edges {
            match *label {
                "abstract" => points.push((cw, true)),
                _ if same => points.push((cw, false)),
                _ => {}
            }
        }
    }
    for p in pairs
        .iter()
        .filter(|p| text(p, "split") == "dev" && text(p, "label") == "unrelated")
    {
        let v = encode(&[text(&p["a"], "when"), text(&p["b"], "when")]);
        points.push((cosine(&v[0], &v[1]), false));
    }
    let curve = fit_platt(&points);
    let yes = points.iter().filter(|p| p.1).count();
    println!(
        "siblings: a = {:.3}, b = {:.3} (midpoint cosine {:.3}); dev pairs {} yes, {} no",
        curve.a,
        curve.b,
        curve.midpoint(),
        yes,
        points.len() - yes
    );
    for (split, id, label, edges) in &per_cluster {
        let cleared = edges
            .iter()
            .filter(|&&(cw, same)| same && curve.p(cw) >= 0.5)
            .count();
        let cosines: Vec<String> = edges.iter().map(|(cw, _)| format!("{cw:.2}")).collect();
        println!(
            "  {split:5} {id:12} {label:8} trigger cosines {} -> {cleared} of {} sibling edges",
            cosines.join(" "),
            edges.len()
        );
    }
}
