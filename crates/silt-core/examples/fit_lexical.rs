//! Fits the lexical judge's softmax sharpness (`lexical::BETA`) offline.
//!
//! Usage: `cargo run --release -p silt-core --example fit_lexical -- \
//!     --train PATH/sts-train.csv --test PATH/sts-test.csv`
//!
//! Data: STS Benchmark (tab-separated: genre, source, year, id, score,
//! sentence 1, sentence 2). Every pair scored >= 4 (a paraphrase) becomes
//! two two-option choices: the item is sentence 1, the options its own
//! sentence 2 and a distractor, once an easy one (the sentence 2 seven rows
//! on) and once a hard one (the other sentence of the split that shares
//! the most vocabulary with the item), so the fit sees both clear and
//! close calls.
//! BETA maximises the likelihood of picking the paraphrase on the train
//! split; the test split is reported, never fitted. Nothing from the data is
//! committed: only the fitted constant and this script.

use silt_core::lexical::{coverage, softmax};
use silt_core::sts::{Choice, paraphrase_choices, read_pairs};

fn load(path: &str) -> Vec<Choice> {
    paraphrase_choices(&read_pairs(path), |item, other| {
        coverage("", &[other], item)[0]
    })
}

/// Coverage of (right, wrong) per choice: what the softmax sees.
fn features(choices: &[Choice]) -> Vec<[f64; 2]> {
    choices
        .iter()
        .map(|c| {
            let cov = coverage("", &[&c.right, &c.wrong], &c.item);
            [cov[0], cov[1]]
        })
        .collect()
}

/// Mean negative log-likelihood of the right option, accuracy, and the
/// mean probability given to the predicted option (for calibration).
fn evaluate(x: &[[f64; 2]], beta: f64) -> (f64, f64, f64) {
    let mut nll = 0.0;
    let mut right = 0.0;
    let mut confidence = 0.0;
    for f in x {
        let p = softmax(f, beta);
        nll -= p[0].max(1e-12).ln();
        // a tie is half right, as a coin flip would be
        right += if p[0] > p[1] {
            1.0
        } else if p[0] == p[1] {
            0.5
        } else {
            0.0
        };
        confidence += p[0].max(p[1]);
    }
    let n = x.len() as f64;
    (nll / n, right / n, confidence / n)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .unwrap_or_else(|| {
                panic!("usage: fit_lexical --train FILE --test FILE (missing {name})")
            })
            .clone()
    };
    let train = features(&load(&arg("--train")));
    let test = features(&load(&arg("--test")));

    // The likelihood is unimodal in beta: golden-section search on [0.1, 60].
    let (mut lo, mut hi) = (0.1f64, 60.0f64);
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..80 {
        let a = hi - g * (hi - lo);
        let b = lo + g * (hi - lo);
        if evaluate(&train, a).0 < evaluate(&train, b).0 {
            hi = b
        } else {
            lo = a
        }
    }
    let beta = (lo + hi) / 2.0;
    let (train_nll, train_acc, train_conf) = evaluate(&train, beta);
    let (test_nll, test_acc, test_conf) = evaluate(&test, beta);
    println!("pairs: train {} test {}", train.len(), test.len());
    println!("fitted BETA = {beta:.3}");
    println!("train: nll {train_nll:.4}  accuracy {train_acc:.4}  mean confidence {train_conf:.4}");
    println!("test:  nll {test_nll:.4}  accuracy {test_acc:.4}  mean confidence {test_conf:.4}");
    println!("(uniform answer: nll {:.4})", 2f64.ln());
}
