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

use silt_core::lexical::coverage;
use silt_core::sts::{Choice, choice_fit, fit_beta, paraphrase_choices, read_pairs};

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

    let beta = fit_beta(&train, 0.1, 60.0);
    let fit = |x: &[[f64; 2]]| {
        let f = choice_fit(x, beta);
        (f.nll, f.accuracy, f.confidence)
    };
    let (train_nll, train_acc, train_conf) = fit(&train);
    let (test_nll, test_acc, test_conf) = fit(&test);
    println!("pairs: train {} test {}", train.len(), test.len());
    println!("fitted BETA = {beta:.3}");
    println!("train: nll {train_nll:.4}  accuracy {train_acc:.4}  mean confidence {train_conf:.4}");
    println!("test:  nll {test_nll:.4}  accuracy {test_acc:.4}  mean confidence {test_conf:.4}");
    println!("(uniform answer: nll {:.4})", 2f64.ln());
}
