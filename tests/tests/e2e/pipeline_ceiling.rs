//! The pipelines' ceiling: each pipeline run with a judge that is always
//! right (a loopback model server answering every prompt from the labels
//! of the committed sets, through the `openai` judge), so that what falls
//! short is the pipeline's doing, not the judge's. The figures print with
//! `--nocapture`; docs/JUDGES.md "Pipeline ceiling" records them.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use silt_e2e::loopback_model::{Asked, LoopbackModel, Oracle};
use silt_e2e::silt_binary;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// "when|prefer" of a labelled lesson.
fn key(lesson: &Value) -> String {
    format!(
        "{}|{}",
        lesson["when"].as_str().unwrap().trim(),
        lesson["prefer"].as_str().unwrap().trim()
    )
}

/// The lessons of a labelled set ("when|prefer"), and the relation of
/// every labelled pair of them (either order) as the head of the relation
/// prompt's option that states it.
pub(crate) struct RelationLabels {
    lessons: HashSet<String>,
    pairs: HashMap<(String, String), &'static str>,
}

/// The labels of docs/eval's two ledger sets.
fn relation_labels(root: &Path) -> RelationLabels {
    relation_labels_of(
        root,
        &[
            "docs/eval/ledger-pairs.jsonl",
            "docs/eval/ledger-clusters.jsonl",
        ],
    )
}

/// The same for the sets at `files` (under `root`): rows of a pair (`a`,
/// `b`), a cluster (`lessons`) or a lesson alone.
pub(crate) fn relation_labels_of(root: &Path, files: &[&str]) -> RelationLabels {
    let (mut labels, mut known) = (HashMap::new(), HashSet::new());
    let mut put = |a: String, b: String, option: &'static str| {
        labels.insert((a.clone(), b.clone()), option);
        labels.insert((b, a), option);
    };
    for file in files {
        for row in json_lines(&root.join(file)) {
            let option = match row["label"].as_str().unwrap() {
                "merge" => "The same lesson said twice",
                "contradict" => "They contradict",
                "abstract" => "Siblings",
                _ => "Distinct",
            };
            let lessons: Vec<&Value> = match row.get("lessons") {
                Some(ls) => ls.as_array().unwrap().iter().collect(),
                None => [&row["a"], &row["b"]]
                    .into_iter()
                    .filter(|l| !l.is_null())
                    .collect(),
            };
            known.extend(lessons.iter().map(|l| key(l)));
            for (i, a) in lessons.iter().enumerate() {
                for b in &lessons[i + 1..] {
                    put(key(a), key(b), option);
                }
            }
        }
    }
    RelationLabels {
        lessons: known,
        pairs: labels,
    }
}

/// Answers a relation prompt from the labels: a lesson said twice is one
/// lesson, and any pair of the set's lessons the labels do not name is
/// distinct (lessons of different rows are about other things). A lesson
/// the set does not hold (the content-free item a judge measures its
/// prior on) gets no answer, so every letter is as likely: a prior
/// leaning to "distinct" would cancel the right answer of every distinct
/// pair.
pub(crate) fn relation_oracle(labels: RelationLabels) -> Oracle {
    Arc::new(move |asked: &Asked<'_>| {
        let lesson = |n: &str| {
            let text = asked.between(&format!("Lesson {n}: WHEN "), "\n")?;
            let (when, prefer) = text.split_once(" -> PREFER ")?;
            Some(format!("{}|{}", when.trim(), prefer.trim()))
        };
        let (a, b) = (lesson("1")?, lesson("2")?);
        if !labels.lessons.contains(&a) || !labels.lessons.contains(&b) {
            return None;
        }
        let option = if a == b {
            "The same lesson said twice"
        } else {
            labels.pairs.get(&(a, b)).copied().unwrap_or("Distinct")
        };
        asked.letter_of(option).map(str::to_string)
    })
}

fn run_eval(model: &LoopbackModel, what: &str) -> Value {
    run_eval_with(model, what, &[])
}

fn run_eval_with(model: &LoopbackModel, what: &str, env: &[(&str, &str)]) -> Value {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("silt.toml"), "").unwrap();
    let out = std::process::Command::new(silt_binary())
        .envs(env.iter().copied())
        .current_dir(repo_root())
        .args(["eval", what, "--judge", "openai", "--json"])
        .env("SILT_CONFIG", home.path().join("silt.toml"))
        .env("SILT_CACHE_DIR", home.path().join("cache"))
        .env("SILT_ANSWER_CACHE", "0")
        .env("SILT_MODEL_URL", &model.url)
        .env("SILT_MODEL_ENDPOINT", "chat")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "silt eval {what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn ratio(s: &Value) -> (u64, u64) {
    let (a, b) = s.as_str().unwrap().split_once('/').unwrap();
    (a.parse().unwrap(), b.parse().unwrap())
}

/// Sleep over one ledger of every labelled lesson, the judge always right:
/// merge and contradict F1 ≥ 0.95 on each split, abstraction on ≥ 90% of
/// the abstract clusters and none of the others, no keep-apart pair
/// retired.
#[tokio::test(flavor = "multi_thread")]
async fn sleep_with_a_perfect_judge_reaches_the_labels() {
    let root = repo_root();
    let model = LoopbackModel::start(relation_oracle(relation_labels(&root))).await;
    let out = run_eval(&model, "sleep");
    println!("{}", serde_json::to_string_pretty(&out["splits"]).unwrap());
    println!(
        "candidates {}; prompts answered {} (known {})",
        out["candidates"],
        model.asked.load(std::sync::atomic::Ordering::Relaxed),
        model.known.load(std::sync::atomic::Ordering::Relaxed)
    );
    assert!(
        out["candidates"]
            .as_str()
            .unwrap()
            .starts_with("by meaning"),
        "{}",
        out["candidates"]
    );
    let (mut abstract_formed, mut abstract_all, mut none_formed) = (0, 0, 0);
    for split in ["dev", "test"] {
        let s = &out["splits"][split];
        for class in ["merge", "contradict"] {
            let f1 = s[class]["f1"].as_f64().unwrap();
            assert!(f1 >= 0.95, "{split} {class} F1 {f1}: {s}");
        }
        assert_eq!(s["keep_apart_retired"], 0, "{split}: {s}");
        let (formed, all) = ratio(&s["abstract_formed"]);
        abstract_formed += formed;
        abstract_all += all;
        none_formed += ratio(&s["none_formed"]).0;
    }
    assert!(
        abstract_formed * 10 >= abstract_all * 9,
        "abstraction formed on {abstract_formed} of {abstract_all} abstract clusters"
    );
    assert_eq!(none_formed, 0, "a parent formed on a cluster that has none");
    // the control: the same judge shown only the pairs that share words
    let words = run_eval_with(&model, "sleep", &[("SILT_LEDGER_EMBEDDER", "none")]);
    println!(
        "by words only ({}):\n{}",
        words["candidates"],
        serde_json::to_string_pretty(&words["splits"]).unwrap()
    );
}

/// Lower-case words of a text, comment markers and punctuation dropped.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `passage` holds the gold sentence `note`: half of its word
/// 4-grams (a passage may cut a long sentence at its edge).
fn holds(passage: &[String], note: &[String]) -> bool {
    if note.len() < 4 {
        return passage.windows(note.len().max(1)).any(|w| w == note);
    }
    let grams: std::collections::HashSet<&[String]> = passage.windows(4).collect();
    let found = note.windows(4).filter(|g| grams.contains(g)).count();
    found * 2 >= note.len() - 3
}

/// The verdict a passage holding the gold sentence gives each labelled
/// claim: a true claim (and a true claim under a made-up quote) is fully
/// supported, a changed figure, actor or negation is contradicted, a
/// widened or narrowed scope is partly supported.
fn gold_verdict(row: &Value) -> &'static str {
    match row["alteration"].as_str() {
        None | Some("fabricated_quote") => "supports_fully",
        Some("scope") => "partially_supports",
        Some(_) => "contradicts",
    }
}

fn verify_oracle(root: &Path) -> Oracle {
    let rows: Vec<(String, Vec<String>, &'static str)> =
        json_lines(&root.join("docs/eval/verify/claims.jsonl"))
            .iter()
            .map(|r| {
                (
                    r["claim"].as_str().unwrap().trim().to_string(),
                    words(r["note"].as_str().unwrap()),
                    gold_verdict(r),
                )
            })
            .collect();
    Arc::new(move |asked: &Asked<'_>| {
        let claim = asked
            .options
            .iter()
            .find_map(|(_, t)| t.split_once("this claim says: ").map(|(_, c)| c.trim()))?;
        let (_, note, verdict) = rows.iter().find(|(c, _, _)| c == claim)?;
        let passage = words(asked.between("Item:\n\"\"\"\n", "\n\"\"\"")?);
        let label = if holds(&passage, note) {
            *verdict
        } else {
            "does_not_address"
        };
        asked.letter_of(&format!("{label}:")).map(str::to_string)
    })
}

/// verify over the labelled claims, the passage judge always right: the
/// four verdicts ≥ 90% right, ≥ 90% of true claims accepted, no altered
/// claim accepted.
#[tokio::test(flavor = "multi_thread")]
async fn verify_with_a_perfect_judge_reaches_the_labels() {
    let root = repo_root();
    let rows = json_lines(&root.join("docs/eval/verify/claims.jsonl"));
    let model = LoopbackModel::start(verify_oracle(&root)).await;
    let out = run_eval(&model, "verify");
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), rows.len());
    let (mut right, mut true_all, mut true_accepted) = (0, 0, 0);
    let mut altered_accepted = Vec::new();
    let mut misses = Vec::new();
    for (row, r) in rows.iter().zip(results) {
        assert_eq!(r["id"], row["id"]);
        let verdict = r["verdict"].as_str().unwrap_or("none");
        let flags = r["flags"].to_string();
        let expected = match row["alteration"].as_str() {
            // the claim is true; the made-up quote is what must not pass
            Some("fabricated_quote") => verdict != "supports_fully" && flags.contains("quote"),
            _ => verdict == gold_verdict(row),
        };
        right += usize::from(expected);
        if !expected {
            misses.push(format!(
                "{} {} -> {verdict} {flags}",
                row["id"],
                gold_verdict(row)
            ));
        }
        if row["label"] == "true" {
            true_all += 1;
            true_accepted += usize::from(verdict == "supports_fully");
        } else if verdict == "supports_fully" {
            altered_accepted.push(row["id"].to_string());
        }
    }
    println!(
        "verify, perfect judge: {right}/{} verdicts right, {true_accepted}/{true_all} true claims accepted, altered accepted {altered_accepted:?}\nmisses:\n{}",
        rows.len(),
        misses.join("\n")
    );
    assert!(altered_accepted.is_empty(), "{altered_accepted:?}");
    assert!(right * 10 >= rows.len() * 9, "{right} of {}", rows.len());
    assert!(
        true_accepted * 10 >= true_all * 9,
        "{true_accepted} of {true_all}"
    );
}
