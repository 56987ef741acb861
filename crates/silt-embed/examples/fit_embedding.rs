//! Fits the embedding judge's calibration (`calibration.rs`) offline.
//!
//! Usage: `cargo run --release -p silt-embed --example fit_embedding -- \
//!     --model DIR --train PATH/sts-train.csv --test PATH/sts-test.csv [--write]`
//!
//! Data: STS Benchmark. `beta` maximises the likelihood of picking the
//! paraphrase in two-option choices built as for the lexical judge (hard
//! distractors by cosine here); `same` and `related` are Platt curves over
//! pair cosines (score >= 4 vs < 3, and >= 2 vs < 1). Fitted on train,
//! reported on test. `--write` stores the fit as the model folder's
//! `silt-calibration.json`. Nothing from the data is committed.

use std::collections::HashMap;

use silt_core::sts::{Pair, choice_fit, fit_beta, paraphrase_choices, read_pairs};
use silt_embed::calibration::{Calibration, FILE, Platt, fit_platt};
use silt_embed::{Encoder, cosine};

struct Vectors(HashMap<String, Vec<f32>>);

impl Vectors {
    fn cos(&self, a: &str, b: &str) -> f64 {
        cosine(&self.0[a], &self.0[b])
    }
}

fn embed_all(encoder: &Encoder, pairs: &[&[Pair]]) -> Vectors {
    let mut texts: Vec<&str> = pairs
        .iter()
        .flat_map(|p| p.iter().flat_map(|r| [r.a.as_str(), r.b.as_str()]))
        .collect();
    texts.sort();
    texts.dedup();
    eprintln!("embedding {} sentences", texts.len());
    let started = std::time::Instant::now();
    let vectors = encoder.encode(&texts).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("  {:.1} s", started.elapsed().as_secs_f64());
    Vectors(texts.iter().map(|t| t.to_string()).zip(vectors).collect())
}

fn choice_features(v: &Vectors, pairs: &[Pair]) -> Vec<[f64; 2]> {
    paraphrase_choices(pairs, |a, b| v.cos(a, b))
        .iter()
        .map(|c| [v.cos(&c.item, &c.right), v.cos(&c.item, &c.wrong)])
        .collect()
}

fn labelled(v: &Vectors, pairs: &[Pair], yes: f64, no: f64) -> Vec<(f64, bool)> {
    pairs
        .iter()
        .filter_map(|p| {
            let x = v.cos(&p.a, &p.b);
            if p.score >= yes {
                Some((x, true))
            } else if p.score < no {
                Some((x, false))
            } else {
                None
            }
        })
        .collect()
}

/// Mean log loss and accuracy at 1/2.
fn platt_report(c: &Platt, points: &[(f64, bool)]) -> (f64, f64) {
    let mut loss = 0.0;
    let mut right = 0.0;
    for &(x, y) in points {
        let p = c.p(x).clamp(1e-12, 1.0 - 1e-12);
        loss -= if y { p.ln() } else { (1.0 - p).ln() };
        right += f64::from(u8::from((p >= 0.5) == y));
    }
    (loss / points.len() as f64, right / points.len() as f64)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .unwrap_or_else(|| {
                panic!("usage: fit_embedding --model DIR --train FILE --test FILE [--write] (missing {name})")
            })
            .clone()
    };
    let dir = std::path::PathBuf::from(arg("--model"));
    let encoder = Encoder::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    let train = read_pairs(&arg("--train"));
    let test = read_pairs(&arg("--test"));
    let v = embed_all(&encoder, &[&train, &test]);

    let (tr, te) = (choice_features(&v, &train), choice_features(&v, &test));
    let beta = fit_beta(&tr, 0.1, 200.0);
    println!("choices: train {} test {}", tr.len(), te.len());
    println!("beta = {beta:.3}");
    for (name, x) in [("train", &tr), ("test", &te)] {
        let f = choice_fit(x, beta);
        println!("  {name}: nll {:.4} accuracy {:.4}", f.nll, f.accuracy);
    }

    let mut curves = Vec::new();
    for (name, yes, no) in [("same", 4.0, 3.0), ("related", 2.0, 1.0)] {
        let (tr, te) = (labelled(&v, &train, yes, no), labelled(&v, &test, yes, no));
        let c = fit_platt(&tr);
        println!(
            "{name}: a = {:.4}, b = {:.4} (midpoint cosine {:.3}); pairs train {} test {}",
            c.a,
            c.b,
            c.midpoint(),
            tr.len(),
            te.len()
        );
        let (l, acc) = platt_report(&c, &tr);
        println!("  train: log loss {l:.4} accuracy {acc:.4}");
        let (l, acc) = platt_report(&c, &te);
        println!("  test:  log loss {l:.4} accuracy {acc:.4}");
        curves.push(c);
    }
    let fit = Calibration {
        beta,
        same: curves[0],
        related: curves[1],
        // not from STS: fit_siblings fits it (on labelled lessons)
        siblings: Calibration::for_kind(encoder.kind()).siblings,
    };
    println!("{}", serde_json::to_string(&fit).expect("serialisable"));
    if args.iter().any(|a| a == "--write") {
        let path = dir.join(FILE);
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&fit).expect("serialisable"),
        )
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        println!("wrote {}", path.display());
    }
}
