//! The real model, as `silt models install smollm2` put it (`.ci/run`
//! installs it first): `$SILT_MODELS_DIR/smollm2`, else
//! `<data dir>/silt/models/smollm2`. A missing model fails with the
//! command that installs it.

use std::path::PathBuf;

use silt_core::closed::{Debias, Plan, TopToken};
use silt_core::ledger::relate::Lesson;
use silt_core::types::{AnswerSpace, ChoiceOption, Item, Judge, Question};
use silt_llm::runner::Runner;
use silt_llm::{LlmJudge, Model, find_gguf};

fn smollm2() -> PathBuf {
    let root = std::env::var_os("SILT_MODELS_DIR")
        .map(PathBuf::from)
        .or_else(|| dirs::data_dir().map(|d| d.join("silt").join("models")))
        .expect("a data folder");
    let dir = root.join("smollm2");
    assert!(
        dir.is_dir(),
        "model 'smollm2' is not installed at {}; run `cargo run --release -- models install smollm2` (as .ci/run does)",
        dir.display()
    );
    find_gguf(&dir).unwrap()
}

fn items(texts: &[&str]) -> Vec<Item> {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| Item {
            id: i.to_string(),
            text: t.to_string(),
        })
        .collect()
}

fn choose() -> Question {
    let option = |label: &str, criterion: &str| ChoiceOption {
        label: label.into(),
        criterion: criterion.into(),
    };
    Question {
        text: "Which kind of change is this commit?".into(),
        space: AnswerSpace::Choose(vec![
            option("fix", "repairs wrong behaviour"),
            option("feature", "adds behaviour"),
            option("docs", "changes documentation only"),
        ]),
    }
}

/// The log-probability of each label A, B, C in a prompt's top tokens.
fn label_logprobs(top: &[TopToken]) -> Vec<f64> {
    ["A", "B", "C"]
        .iter()
        .map(|l| {
            top.iter()
                .find(|t| t.token == *l)
                .map_or(f64::NEG_INFINITY, |t| t.logprob)
        })
        .collect()
}

#[test]
fn a_shared_head_gives_the_answers_of_whole_runs() {
    let model = Model::load(&smollm2()).unwrap();
    let texts = [
        "fix off-by-one in the pager",
        "add a --json flag to the list command",
        "README: explain the install steps",
    ];
    let plan = Plan::ask(&choose(), &texts, Debias::None);
    let (prompts, heads): (Vec<_>, Vec<_>) = plan
        .prompts
        .iter()
        .map(|p| model.prompt_tokens(p).unwrap())
        .unzip();
    assert!(heads.iter().all(|&h| h > 50), "{heads:?}");
    let mut shared = Runner::default();
    let mut whole = Runner::default();
    whole.share = false;
    let a = shared.next_tokens(&model, &prompts, &heads, 20).unwrap();
    let b = whole.next_tokens(&model, &prompts, &heads, 20).unwrap();
    for (x, y) in a.iter().zip(&b) {
        let (x, y) = (label_logprobs(x), label_logprobs(y));
        // rounding moves them by up to 0.08 (see runner.rs); a cache at
        // the wrong positions or of the wrong text moves them by nats
        for (u, v) in x.iter().zip(&y) {
            assert!((u - v).abs() < 0.25, "{x:?} vs {y:?}");
        }
    }
    // the head ran once, not per item
    assert_eq!(shared.counts.reused, heads.iter().sum::<usize>() as u64);
    assert!(
        shared.counts.run * 2 < whole.counts.run,
        "{:?} vs {:?}",
        shared.counts,
        whole.counts
    );
    // a kept head serves the next call
    let before = shared.counts.run;
    let again = shared
        .next_tokens(&model, &prompts[..1], &heads[..1], 20)
        .unwrap();
    assert_eq!(again[0], a[0]);
    assert_eq!(
        shared.counts.run - before,
        (prompts[0].len() - heads[0]) as u64
    );
}

#[test]
fn an_item_gets_the_same_answer_in_any_batch() {
    let mut judge = LlmJudge::load(&smollm2(), Debias::Both).unwrap();
    let alone = judge
        .ask(&choose(), &items(&["fix off-by-one in the pager"]))
        .unwrap();
    let mut other = LlmJudge::load(&smollm2(), Debias::Both).unwrap();
    let batch = other
        .ask(
            &choose(),
            &items(&["add a --json flag", "fix off-by-one in the pager", "typo"]),
        )
        .unwrap();
    assert_eq!(alone.answers[0], batch.answers[1]);
}

#[test]
fn answers_are_distributions_and_repeat_exactly() {
    let mut judge = LlmJudge::load(&smollm2(), Debias::Both).unwrap();
    let q = Question {
        text: "Is this sentence about cooking?".into(),
        space: AnswerSpace::Judge {
            yes: "it is about cooking".into(),
            no: "it is not".into(),
        },
    };
    let texts = [
        "Simmer the onions in butter until soft.",
        "The train left at noon.",
    ];
    let first = judge.ask(&q, &items(&texts)).unwrap();
    silt_core::validate::validate_response(&q, texts.len(), &first).unwrap();
    let again = judge.ask(&q, &items(&texts)).unwrap();
    assert_eq!(first.answers, again.answers);
    assert!(first.usage.input_tokens > 0);
    let relations = judge
        .relate(&[(
            Lesson {
                when: "indenting Python",
                prefer: "use 4 spaces",
            },
            Lesson {
                when: "indenting Python code",
                prefer: "use tabs",
            },
        )])
        .unwrap();
    let sum: f64 = relations[0].iter().sum();
    assert!((sum - 1.0).abs() < 1e-6, "{relations:?}");
}

#[test]
fn slow_weight_types_load_as_q8_0() {
    let model = Model::load(&smollm2()).unwrap();
    // SmolLM2's file is Q4_1, which has no SIMD kernel in candle
    assert!(model.requantized > 0);
    let ids = model
        .encode("<|im_start|>user\nWeigh 12 apples<|im_end|>")
        .unwrap();
    // the control tokens are one token each, and digits are split
    assert_eq!(ids[0], 1);
    assert!(ids.contains(&2));
    let digits: Vec<String> = ids
        .iter()
        .map(|&id| model.tokenizer.decode(&[id], false).unwrap())
        .filter(|t| t.trim().chars().all(|c| c.is_ascii_digit()) && !t.trim().is_empty())
        .collect();
    assert_eq!(digits, ["1", "2"].map(String::from).to_vec(), "{ids:?}");
}

#[test]
fn a_cut_short_or_foreign_file_is_refused_with_the_reason() {
    let path = smollm2();
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.gguf");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = Model::load(&cut).err().expect("a cut file is refused");
    assert!(e.to_string().contains("cut short"), "{e}");
    let foreign = dir.path().join("model.gguf");
    std::fs::write(&foreign, b"{\"not\": \"a model\"}").unwrap();
    let e = Model::load(&foreign)
        .err()
        .expect("a foreign file is refused");
    assert!(e.to_string().contains("not a GGUF model file"), "{e}");
}
