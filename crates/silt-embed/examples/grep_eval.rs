//! Evaluates `sieve_grep`'s files mode with the lexical judge on real bug
//! fixes (`docs/eval/grep-cases.json`): recall@10 per case and the mean,
//! and how often the primary fix file is in the top 10, against two
//! references: the largest files first, and the judge reading previews alone
//! (grep before it had repository statistics).
//!
//! Usage: `cargo run --release -p silt-embed --example grep_eval -- \
//!     --git GITDIR [--cases docs/eval/grep-cases.json] \
//!     [--trees DIR (default $TMPDIR/silt-grep-eval)] [--json OUT.json] [--top N] \
//!     [--model DIR [--shortlist N|all] [--weights W,W,...] [--held-out-only]]`
//!
//! `--model` adds columns: grep with the embedding judge on that model
//! folder (natively, the same code the component runs), reading the
//! `--shortlist` (default: grep's own, `LOCAL_SHORTLIST`) units with the
//! strongest lexical evidence, or every unit with `all` (a transformer then
//! takes about a minute and a half per case on 2 cores; `--held-out-only`
//! limits the run to the held-out cases); one column per judge weight of
//! `--weights` (default `1` — the judge alone, the evidence only breaking
//! ties — and grep's `JUDGE_WEIGHT`), the judge's answers cached across
//! them so a sweep costs one run.
//!
//! Each case's parent tree is extracted once with `git archive` into
//! `--trees` and kept there. The walk is the host's: depth first, each
//! folder's children sorted by name, `.git` skipped, binary = a NUL in the
//! first 8192 bytes. Cases are split before any result was seen: every
//! fourth case (index 3, 7, 11, ...) is held out as a check on tuning, the
//! rest are the development set.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::{Value, json};
use silt_core::grep::run::{self as grep, GrepRequest, Mode, Repository};
use silt_core::grep::units::{OutlineSource, file_preview};
use silt_core::lexical::LexicalJudge;
use silt_core::types::{Answer, AnswerSpace, Item, Judge, Question};

/// Results per case that count.
const K: usize = 10;
/// Bytes probed for a NUL, as the host's walk.
const BINARY_PROBE: usize = 8192;

/// Where a case has several truth files, the one the fix is about (from the
/// case's `note`): the others hold an extraction or a help-text change.
const PRIMARY: &[(&str, &str)] = &[
    ("pr-checks-stale-duplicates", "pkg/cmd/pr/checks/checks.go"),
    ("pr-merge-no-commits-panic", "pkg/cmd/pr/merge/merge.go"),
    (
        "issue-develop-missing-base",
        "api/queries_branch_issue_reference.go",
    ),
];

struct Case {
    id: String,
    parent: String,
    question: String,
    truth: Vec<String>,
    primary: String,
    held_out: bool,
}

fn load_cases(path: &str) -> Vec<Case> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let doc: Value = serde_json::from_str(&text).expect("cases file is not JSON");
    let str_of = |v: &Value, k: &str| {
        v[k].as_str()
            .unwrap_or_else(|| panic!("no {k}"))
            .to_string()
    };
    doc["cases"]
        .as_array()
        .expect("no cases")
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let id = str_of(c, "id");
            let truth: Vec<String> = c["truth"]
                .as_array()
                .expect("no truth")
                .iter()
                .map(|t| t.as_str().expect("truth is a path").to_string())
                .collect();
            let primary = match PRIMARY.iter().find(|(case, _)| *case == id) {
                Some((_, p)) => p.to_string(),
                None if truth.len() == 1 => truth[0].clone(),
                None => panic!("{id}: several truth files and no primary named"),
            };
            assert!(
                truth.contains(&primary),
                "{id}: primary is not a truth file"
            );
            Case {
                parent: str_of(c, "parent"),
                question: str_of(c, "question"),
                held_out: i % 4 == 3,
                id,
                truth,
                primary,
            }
        })
        .collect()
}

/// The parent tree, extracted once.
fn tree(git: &str, trees: &Path, parent: &str) -> PathBuf {
    let dir = trees.join(parent);
    if dir.is_dir() {
        return dir;
    }
    let partial = trees.join(format!("{parent}.partial"));
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir_all(&partial).expect("cannot create the tree folder");
    let status = Command::new("sh")
        .arg("-c")
        .arg("git -C \"$1\" archive \"$2\" | tar -x -C \"$3\"")
        .args(["sh", git, parent, partial.to_str().expect("utf-8 path")])
        .status()
        .expect("cannot run git archive");
    assert!(status.success(), "extracting {parent} failed");
    std::fs::rename(&partial, &dir).expect("cannot move the tree in place");
    dir
}

/// A folder walked as the host walks it.
struct Folder {
    root: PathBuf,
    /// (path, binary, bytes) in walk order.
    files: Vec<(String, bool, u64)>,
}

impl Folder {
    fn open(root: PathBuf) -> Folder {
        let mut files = Vec::new();
        walk(&root, "", &mut files);
        Folder { root, files }
    }
}

fn walk(dir: &Path, prefix: &str, out: &mut Vec<(String, bool, u64)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("cannot list a folder")
        .map(|e| e.expect("cannot read a folder entry"))
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = format!("{prefix}{name}");
        let kind = e.file_type().expect("no file type");
        if kind.is_dir() {
            if name != ".git" {
                walk(&e.path(), &format!("{path}/"), out);
            }
        } else if kind.is_file() {
            let mut probe = Vec::with_capacity(BINARY_PROBE);
            std::fs::File::open(e.path())
                .expect("cannot open a file")
                .take(BINARY_PROBE as u64)
                .read_to_end(&mut probe)
                .expect("cannot read a file");
            let bytes = e.metadata().expect("no metadata").len();
            out.push((path, probe.contains(&0), bytes));
        }
    }
}

impl Repository for Folder {
    fn walk(&mut self) -> Result<Vec<(String, bool)>, String> {
        Ok(self.files.iter().map(|(p, b, _)| (p.clone(), *b)).collect())
    }

    fn read(&mut self, path: &str) -> Result<String, String> {
        let bytes = std::fs::read(self.root.join(path)).map_err(|e| format!("{path}: {e}"))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// The largest text files first (ties by path).
fn by_size(folder: &Folder) -> Vec<String> {
    let mut files: Vec<&(String, bool, u64)> = folder.files.iter().filter(|f| !f.1).collect();
    files.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    files.iter().map(|f| f.0.clone()).collect()
}

/// grep before repository statistics: the judge reads `path\npreview` in
/// batches of 40 and its answer alone orders the files (ties by path).
fn previews_alone(folder: &mut Folder, question: &str) -> Vec<String> {
    let q = Question {
        text: silt_core::rank::QUESTION.into(),
        space: AnswerSpace::Judge {
            yes: format!("{} {}", silt_core::rank::RELEVANT, question.trim()),
            no: silt_core::rank::NOT_RELEVANT.into(),
        },
    };
    let paths: Vec<String> = folder
        .files
        .iter()
        .filter(|f| !f.1)
        .map(|f| f.0.clone())
        .collect();
    let items: Vec<Item> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let text = folder.read(p).expect("walked file is readable");
            Item {
                id: i.to_string(),
                text: format!("{p}\n{}", file_preview(&text, &OutlineSource::for_path(p))),
            }
        })
        .collect();
    let mut scored: Vec<(f64, String)> = Vec::new();
    for (batch, names) in items
        .chunks(silt_core::ask::MAX_BATCH)
        .zip(paths.chunks(silt_core::ask::MAX_BATCH))
    {
        let r = silt_core::lexical::answer(&q, batch).expect("lexical answers");
        for (a, p) in r.answers.iter().zip(names) {
            let Answer::YesProbability(y) = a else {
                panic!("not a yes/no answer")
            };
            scored.push((*y, p.clone()));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, p)| p).collect()
}

/// A judge whose answers are remembered by question and item text, so a
/// sweep over weights asks the model once per unit.
struct Remembering<'a> {
    judge: &'a mut dyn Judge,
    answers: std::collections::HashMap<(String, String), Answer>,
}

impl Judge for Remembering<'_> {
    fn info(&mut self) -> silt_core::types::JudgeInfo {
        self.judge.info()
    }

    fn ask(
        &mut self,
        q: &Question,
        items: &[Item],
    ) -> Result<silt_core::types::Response, silt_core::types::JudgeError> {
        let key = |i: &Item| (format!("{q:?}"), i.text.clone());
        let fresh: Vec<Item> = items
            .iter()
            .filter(|i| !self.answers.contains_key(&key(i)))
            .cloned()
            .collect();
        let mut usage = silt_core::types::Usage::default();
        if !fresh.is_empty() {
            let got = self.judge.ask(q, &fresh)?;
            usage = got.usage;
            for (i, a) in fresh.iter().zip(got.answers) {
                self.answers.insert(key(i), a);
            }
        }
        Ok(silt_core::types::Response {
            answers: items
                .iter()
                .map(|i| self.answers[&key(i)].clone())
                .collect(),
            usage,
        })
    }
}

/// grep as it is: files mode, threshold 0, with `judge` reading at most
/// `shortlist` units and weighing `weight` against the evidence; or, with
/// `engine_ranks` (the lexical judge), ranked by the engine alone.
fn grep_now(
    engine_ranks: bool,
    judge: &mut dyn Judge,
    folder: &mut Folder,
    question: &str,
    top: usize,
    shortlist: Option<usize>,
    weight: f64,
) -> Vec<String> {
    let out = grep::run_shortlisted(
        judge,
        folder,
        &GrepRequest {
            question: question.into(),
            mode: Mode::Files,
            top_k: top as u32,
            threshold: 0.0,
            budget_usd: 0.5,
            judge_weight: None,
            engine_ranks,
        },
        shortlist,
        weight,
    )
    .expect("grep runs");
    out.results.into_iter().map(|h| h.path).collect()
}

/// One method's result on one case.
struct Scored {
    recall: f64,
    primary_in_top: bool,
    /// 1-based rank of the primary file (None: not ranked).
    primary_rank: Option<usize>,
    top: Vec<String>,
}

fn score(case: &Case, ranking: &[String]) -> Scored {
    let top = &ranking[..ranking.len().min(K)];
    let found = case.truth.iter().filter(|t| top.contains(t)).count();
    let primary_rank = ranking
        .iter()
        .position(|p| *p == case.primary)
        .map(|i| i + 1);
    Scored {
        recall: found as f64 / case.truth.len() as f64,
        primary_in_top: primary_rank.is_some_and(|r| r <= K),
        primary_rank,
        top: top.to_vec(),
    }
}

const METHODS: [&str; 3] = ["size", "lexical-before", "lexical-after"];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str, default: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
            .unwrap_or_else(|| default.to_string())
    };
    let cases = load_cases(&arg("--cases", "docs/eval/grep-cases.json"));
    // a bare clone of github.com/cli/cli: wherever the user keeps it
    let git = args
        .iter()
        .position(|a| a == "--git")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .expect("--git GITDIR: a clone of github.com/cli/cli (its git directory)");
    let trees = args
        .iter()
        .position(|a| a == "--trees")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("silt-grep-eval"));
    // grep's own results are ranked this deep, so the primary's rank is
    // reported past the top 10 too
    let depth: usize = arg("--top", "200").parse().expect("--top is a number");
    std::fs::create_dir_all(&trees).expect("cannot create the trees folder");
    let model = args
        .iter()
        .position(|a| a == "--model")
        .and_then(|i| args.get(i + 1));
    let mut embedding = model.map(|dir| {
        silt_embed::EmbeddingJudge::load(std::path::Path::new(dir))
            .unwrap_or_else(|e| panic!("cannot load {dir}: {e:?}"))
    });
    let weights: Vec<f64> = arg("--weights", &format!("1,{}", grep::JUDGE_WEIGHT))
        .split(',')
        .map(|w| {
            w.trim()
                .parse()
                .expect("--weights: numbers between 0 and 1")
        })
        .collect();
    let mut names: Vec<String> = METHODS.iter().map(|m| m.to_string()).collect();
    if embedding.is_some() {
        names.extend(weights.iter().map(|w| format!("judge-w{w}")));
    }
    let methods = names.len();
    let shortlist = match arg("--shortlist", "").as_str() {
        "" => Some(grep::LOCAL_SHORTLIST),
        "all" => None,
        n => Some(n.parse().expect("--shortlist is a number or `all`")),
    };
    let held_out_only = args.iter().any(|a| a == "--held-out-only");
    let cases: Vec<Case> = cases
        .into_iter()
        .filter(|c| c.held_out || !held_out_only)
        .collect();

    let mut rows: Vec<(&Case, usize, Vec<Scored>)> = Vec::new();
    let mut seconds = vec![0.0f64; methods];
    for case in &cases {
        let mut folder = Folder::open(tree(&git, &trees, &case.parent));
        let text_files = folder.files.iter().filter(|f| !f.1).count();
        let mut timed = |i: usize, f: &mut dyn FnMut() -> Vec<String>| {
            let t = Instant::now();
            let ranking = f();
            seconds[i] += t.elapsed().as_secs_f64();
            score(case, &ranking)
        };
        let size = timed(0, &mut || by_size(&folder));
        let before = timed(1, &mut || previews_alone(&mut folder, &case.question));
        let after = timed(2, &mut || {
            grep_now(
                true,
                &mut LexicalJudge,
                &mut folder,
                &case.question,
                depth,
                None,
                0.0,
            )
        });
        let mut scored = vec![size, before, after];
        if let Some(judge) = embedding.as_mut() {
            let mut judge = Remembering {
                judge,
                answers: Default::default(),
            };
            for (k, &w) in weights.iter().enumerate() {
                scored.push(timed(3 + k, &mut || {
                    grep_now(
                        false,
                        &mut judge,
                        &mut folder,
                        &case.question,
                        depth,
                        shortlist,
                        w,
                    )
                }));
            }
            eprintln!("{}: {:.1} s", case.id, seconds[3]);
        }
        rows.push((case, text_files, scored));
    }

    let rank = |r: Option<usize>| r.map_or("-".to_string(), |r| r.to_string());
    println!(
        "{:<32} {:>5}  {:>12}  {:>12}  {:>12}",
        "case (* held out)", "files", METHODS[0], METHODS[1], METHODS[2]
    );
    println!(
        "{:<32} {:>5}  {:>12}  {:>12}  {:>12}",
        "", "", "R@10 (rank)", "R@10 (rank)", "R@10 (rank)"
    );
    for (case, n, s) in &rows {
        let cell = |s: &Scored| format!("{:.2} ({})", s.recall, rank(s.primary_rank));
        println!(
            "{:<32} {:>5}  {:>12}  {:>12}  {:>12}",
            format!("{}{}", case.id, if case.held_out { " *" } else { "" }),
            n,
            cell(&s[0]),
            cell(&s[1]),
            cell(&s[2])
        );
    }
    let mut summary = serde_json::Map::new();
    for (name, keep) in [
        ("all", &(|_: &Case| true) as &dyn Fn(&Case) -> bool),
        ("development", &|c: &Case| !c.held_out),
        ("held-out", &|c: &Case| c.held_out),
    ] {
        let subset: Vec<&(&Case, usize, Vec<Scored>)> = rows.iter().filter(|r| keep(r.0)).collect();
        let n = subset.len();
        if n == 0 {
            continue;
        }
        let mut line = format!("{name:<20} ({n:>2} cases)");
        let mut per = serde_json::Map::new();
        for (m, method) in names.iter().enumerate() {
            let recall = subset.iter().map(|r| r.2[m].recall).sum::<f64>() / n as f64;
            let primary = subset.iter().filter(|r| r.2[m].primary_in_top).count();
            line.push_str(&format!(
                "  {method}: R@10 {recall:.3}, primary {primary}/{n}"
            ));
            per.insert(
                method.to_string(),
                json!({"recall_at_10": (recall * 1000.0).round() / 1000.0, "primary_in_top_10": primary, "cases": n}),
            );
        }
        println!("{line}");
        summary.insert(name.to_string(), Value::Object(per));
    }
    let timings: Vec<String> = names
        .iter()
        .zip(&seconds)
        .map(|(n, s)| format!("{n} {s:.1}"))
        .collect();
    // the first judge column holds the model's time; the others reuse its answers
    println!("seconds over all cases: {}", timings.join(", "));

    let cases_json: Vec<Value> = rows
        .iter()
        .map(|(case, n, s)| {
            let mut per = serde_json::Map::new();
            for (m, method) in names.iter().enumerate() {
                per.insert(
                    method.to_string(),
                    json!({
                        "recall_at_10": s[m].recall,
                        "primary_in_top_10": s[m].primary_in_top,
                        "primary_rank": s[m].primary_rank,
                        "top_10": s[m].top,
                    }),
                );
            }
            json!({
                "id": case.id,
                "held_out": case.held_out,
                "text_files": n,
                "truth": case.truth,
                "primary": case.primary,
                "methods": per,
            })
        })
        .collect();
    let report = json!({ "k": K, "summary": summary, "cases": cases_json });
    let text = serde_json::to_string_pretty(&report).expect("report serialises");
    match args
        .iter()
        .position(|a| a == "--json")
        .and_then(|i| args.get(i + 1))
    {
        Some(path) => std::fs::write(path, text + "\n").expect("cannot write the JSON report"),
        None => println!("{text}"),
    }
}
