//! `silt eval judge`: how well a judge answers closed questions, measured
//! on labelled sentence pairs (STS Benchmark files, whose path is given:
//! nothing is shipped), in one table for any judge plugin.
//!
//! Two tasks. **Yes/no**: "do these two sentences say the same thing?" on
//! pairs scored >= 4 (yes) or < 3 (no). **Choose**: which of two sentences
//! paraphrases the item (its own partner, or the sentence of the split
//! sharing the most words with it), the right one shown first on even
//! items and second on odd ones. Accuracy, log-loss and mean confidence
//! per task; `--fit-on` a training split fits a temperature for the
//! judge's yes/no probabilities (p ∝ p^(1/T)) and reports the test split
//! with it too.

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::{Value, json};

use silt_core::sts::{Pair, paraphrase_choices, read_pairs};
use silt_runtime::app::App;
use silt_runtime::bindings::types::{Answer, AnswerSpace, ChoiceOption, Item, Question, YesNo};

/// `silt eval judge`'s options.
#[derive(Debug, Args)]
pub struct EvalJudgeArgs {
    /// The judge plugin to measure.
    #[arg(long, default_value = "lexical")]
    pub judge: String,
    /// An STS Benchmark file to report on (tab-separated; the held-out split).
    #[arg(long)]
    pub sts: std::path::PathBuf,
    /// An STS Benchmark file to fit a temperature on (the training split).
    #[arg(long)]
    pub fit_on: Option<std::path::PathBuf>,
    /// Use at most this many pairs per task (spread over the file).
    #[arg(long, default_value_t = 200)]
    pub limit: usize,
    /// Items per judge call.
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// One labelled yes/no item: the text and whether the answer is yes.
struct Labelled {
    text: String,
    yes: bool,
}

fn yes_no_items(pairs: &[Pair], limit: usize) -> Vec<Labelled> {
    let clear: Vec<&Pair> = pairs
        .iter()
        .filter(|p| p.score >= 4.0 || p.score < 3.0)
        .collect();
    spread(&clear, limit)
        .into_iter()
        .map(|p| Labelled {
            text: format!("Sentence 1: {}\nSentence 2: {}", p.a, p.b),
            yes: p.score >= 4.0,
        })
        .collect()
}

/// At most `limit` elements, evenly spread over `all` (the files are
/// sorted by source, so a prefix would see one genre).
fn spread<T: Clone>(all: &[T], limit: usize) -> Vec<T> {
    if all.len() <= limit {
        return all.to_vec();
    }
    (0..limit)
        .map(|i| all[i * all.len() / limit].clone())
        .collect()
}

fn same_meaning() -> Question {
    Question {
        text: "Do the two sentences say the same thing?".into(),
        space: AnswerSpace::Judge(YesNo {
            yes: "They say the same thing in other words (a paraphrase)".into(),
            no: "They mean different things".into(),
        }),
    }
}

/// p(yes) for each item, in order.
async fn yes_probabilities(
    app: &App,
    judge: &str,
    items: &[Labelled],
    batch: usize,
) -> Result<Vec<f64>> {
    let loaded = app.runtime.judge(judge).await?;
    let question = same_meaning();
    let mut out = Vec::with_capacity(items.len());
    for (b, chunk) in items.chunks(batch.max(1)).enumerate() {
        let wit: Vec<Item> = chunk
            .iter()
            .enumerate()
            .map(|(i, l)| Item {
                id: format!("{b}-{i}"),
                text: l.text.clone(),
            })
            .collect();
        let response = loaded
            .ask(&question, &wit)
            .await
            .map_err(|e| anyhow::anyhow!("judge '{judge}': {e:?}"))?;
        for a in response.answers {
            match a {
                Answer::YesProbability(p) => out.push(p),
                Answer::Distribution(_) => {
                    bail!("judge '{judge}' answered yes/no with a distribution")
                }
            }
        }
        eprint!("\ryes/no: {}/{} items", out.len(), items.len());
    }
    eprintln!();
    Ok(out)
}

/// The probability each choice's judge gave the right option.
async fn choice_probabilities(
    app: &App,
    judge: &str,
    pairs: &[Pair],
    limit: usize,
) -> Result<Vec<f64>> {
    let loaded = app.runtime.judge(judge).await?;
    let choices = paraphrase_choices(pairs, |item, other| {
        silt_core::lexical::coverage("", &[other], item)[0]
    });
    // the hard choices only (every second one): the easy ones are trivial
    let hard: Vec<_> = choices.into_iter().skip(1).step_by(2).collect();
    let chosen = spread(&hard, limit);
    let mut out = Vec::with_capacity(chosen.len());
    for (i, c) in chosen.iter().enumerate() {
        let right_first = i % 2 == 0;
        let (first, second) = if right_first {
            (&c.right, &c.wrong)
        } else {
            (&c.wrong, &c.right)
        };
        let question = Question {
            text: "Which sentence says the same thing as the item?".into(),
            space: AnswerSpace::Choose(vec![
                ChoiceOption {
                    label: "first".into(),
                    criterion: first.clone(),
                },
                ChoiceOption {
                    label: "second".into(),
                    criterion: second.clone(),
                },
            ]),
        };
        let item = Item {
            id: i.to_string(),
            text: c.item.clone(),
        };
        let response = loaded
            .ask(&question, std::slice::from_ref(&item))
            .await
            .map_err(|e| anyhow::anyhow!("judge '{judge}': {e:?}"))?;
        let p = match &response.answers[0] {
            Answer::Distribution(d) => d.probabilities.clone(),
            Answer::YesProbability(_) => bail!("judge '{judge}' answered choose with p(yes)"),
        };
        out.push(if right_first { p[0] } else { p[1] });
        eprint!("\rchoose: {}/{} items", out.len(), chosen.len());
    }
    eprintln!();
    Ok(out)
}

/// Accuracy (a tie counts half), log-loss and mean confidence of the
/// probabilities each item gave its right answer.
fn scores(p_right: &[f64]) -> Value {
    let n = p_right.len().max(1) as f64;
    let accuracy: f64 = p_right
        .iter()
        .map(|&p| {
            if p > 0.5 {
                1.0
            } else if p == 0.5 {
                0.5
            } else {
                0.0
            }
        })
        .sum::<f64>()
        / n;
    let log_loss = -p_right.iter().map(|p| p.clamp(1e-6, 1.0).ln()).sum::<f64>() / n;
    let confidence = p_right.iter().map(|&p| p.max(1.0 - p)).sum::<f64>() / n;
    let undecided = p_right.iter().filter(|&&p| (p - 0.5).abs() < 1e-9).count();
    json!({"n": p_right.len(), "accuracy": round(accuracy), "log_loss": round(log_loss),
           "mean_confidence": round(confidence), "undecided": undecided})
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// p(yes) tempered: p^(1/T) renormalised against (1-p)^(1/T).
fn temper(p: f64, t: f64) -> f64 {
    let p = p.clamp(1e-9, 1.0 - 1e-9);
    let (a, b) = (p.ln() / t, (1.0 - p).ln() / t);
    1.0 / (1.0 + (b - a).exp())
}

fn right_yes(p_yes: &[f64], items: &[Labelled]) -> Vec<f64> {
    p_yes
        .iter()
        .zip(items)
        .map(|(&p, l)| if l.yes { p } else { 1.0 - p })
        .collect()
}

/// The temperature of least log-loss (golden-section search on ln T).
fn fit_temperature(p_yes: &[f64], items: &[Labelled]) -> f64 {
    let loss = |ln_t: f64| {
        let t = ln_t.exp();
        let tempered: Vec<f64> = p_yes.iter().map(|&p| temper(p, t)).collect();
        -right_yes(&tempered, items)
            .iter()
            .map(|p| p.clamp(1e-9, 1.0).ln())
            .sum::<f64>()
    };
    let (mut lo, mut hi) = ((0.05f64).ln(), (20f64).ln());
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..80 {
        let a = hi - g * (hi - lo);
        let b = lo + g * (hi - lo);
        if loss(a) < loss(b) { hi = b } else { lo = a }
    }
    ((lo + hi) / 2.0).exp()
}

/// Measures the judge on both tasks and prints the table (or JSON) on
/// stdout.
pub async fn run(app: &App, args: EvalJudgeArgs) -> Result<()> {
    let path = args.sts.display().to_string();
    if !args.sts.is_file() {
        bail!("{path} is not a file: pass an STS Benchmark file (sts-test.csv)");
    }
    let pairs = read_pairs(&path);
    if pairs.is_empty() {
        bail!("{path} has no STS Benchmark rows (tab-separated, score in column 5)");
    }
    let info = app.runtime.judge(&args.judge).await?.info.clone();
    let items = yes_no_items(&pairs, args.limit);
    let started = std::time::Instant::now();
    let p_yes = yes_probabilities(app, &args.judge, &items, args.batch).await?;
    let yes_no = scores(&right_yes(&p_yes, &items));
    let choose = scores(&choice_probabilities(app, &args.judge, &pairs, args.limit).await?);
    let mut out = json!({
        "judge": args.judge, "version": info.version, "file": path,
        "yes_no": yes_no, "choose": choose,
        "seconds": round(started.elapsed().as_secs_f64()),
    });
    if let Some(train) = &args.fit_on {
        let train_pairs = read_pairs(&train.display().to_string());
        let train_items = yes_no_items(&train_pairs, args.limit);
        let train_p = yes_probabilities(app, &args.judge, &train_items, args.batch)
            .await
            .with_context(|| format!("fitting on {}", train.display()))?;
        let t = fit_temperature(&train_p, &train_items);
        let tempered: Vec<f64> = p_yes.iter().map(|&p| temper(p, t)).collect();
        out["temperature"] = json!(round(t));
        out["yes_no_tempered"] = scores(&right_yes(&tempered, &items));
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        let row = |name: &str, v: &Value| {
            format!(
                "{name:<16} n {:>4}  accuracy {:.3}  log-loss {:.3}  confidence {:.3}  undecided {}",
                v["n"],
                v["accuracy"].as_f64().unwrap_or(0.0),
                v["log_loss"].as_f64().unwrap_or(0.0),
                v["mean_confidence"].as_f64().unwrap_or(0.0),
                v["undecided"]
            )
        };
        println!("{} ({})", args.judge, info.version);
        println!("{}", row("yes/no", &out["yes_no"]));
        println!("{}", row("choose", &out["choose"]));
        if let Some(t) = out.get("temperature") {
            println!("{}", row(&format!("yes/no T={t}"), &out["yes_no_tempered"]));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_temperature_above_one_softens_and_below_sharpens() {
        assert!((temper(0.5, 3.0) - 0.5).abs() < 1e-12);
        assert!(temper(0.9, 2.0) < 0.9 && temper(0.9, 2.0) > 0.5);
        assert!(temper(0.9, 0.5) > 0.9);
    }

    #[test]
    fn an_overconfident_judge_is_fitted_a_temperature_above_one() {
        // right 70% of the time, always saying 0.99
        let items: Vec<Labelled> = (0..100)
            .map(|i| Labelled {
                text: String::new(),
                yes: i % 10 < 7,
            })
            .collect();
        let p = vec![0.99; 100];
        let t = fit_temperature(&p, &items);
        assert!(t > 2.0, "{t}");
        let tempered = temper(0.99, t);
        assert!((tempered - 0.7).abs() < 0.02, "{tempered}");
    }

    #[test]
    fn scores_count_ties_as_half() {
        let s = scores(&[1.0, 0.5, 0.0, 0.9]);
        assert_eq!(s["accuracy"], 0.625);
        assert_eq!(s["undecided"], 1);
    }
}
