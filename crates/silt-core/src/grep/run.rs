//! The grep pipeline: every text file's preview judged against the
//! question; in functions mode, the strongest files' stretches judged
//! again. The repository is reached through [`Repository`] (the host's
//! walk, reads and parser, in the component).
//!
//! Every unit also gets the repository's lexical evidence
//! ([`super::evidence`]): with silt's lexical judge it is the answer (the
//! judge is not asked); any other judge's answer is fused with it
//! ([`JUDGE_WEIGHT`]), because a judge reads one unit at a time and cannot
//! weigh a word by how rare it is in the repository: alone, the embedding
//! judges ranked the fix file in the top 10 on 13 of 20 cases against
//! BM25F's 19. A judge that runs on this machine (no cost per token: an
//! embedding model, a local model server) reads only the units with the
//! strongest evidence ([`LOCAL_SHORTLIST`] or top_k per stage), because
//! reading every preview of a large repository takes it minutes; a paid
//! hosted judge reads every unit, as the reference does.

use crate::ask::{self, AskError, AskUsage, round4};
use crate::budget::Budget;
use crate::rank::{NOT_RELEVANT, QUESTION, RELEVANT};
use crate::types::{AnswerSpace, Judge, Question};

use super::evidence::{Counts, Evidence, Weights, lexical_probability};
use super::units::{self, FUNCTION_UNIT_CHARS, OutlineSource, SMALL_FILE_LINES, Syntax};

/// A judge's share of a unit's probability; the rest is the engine's own
/// BM25F evidence read as the lexical judge reads it:
/// `p = w × judge + (1 − w) × lexical`. Fitted on the 15 development cases
/// of docs/eval/grep-cases.json (`grep_eval --weights 1,0.9,…,0`) as the
/// largest weight at which neither embedding judge ranks below the engine
/// alone: potion-base-8M held up to 0.4, all-MiniLM-L6-v2 only to 0.1
/// (0.3 cost it a case). On these cases a judge adds nothing BM25F does
/// not find; the weight is what keeps it from doing harm. The held-out 5
/// are reported apart in docs/eval/RESULTS.md.
pub const JUDGE_WEIGHT: f64 = 0.1;

/// The most results a call may ask for.
pub const MAX_TOP_K: u32 = 200;
/// Function units per judge request.
pub const FUNCTION_BATCH: usize = 8;
/// Units a local judge reads per stage (files, then functions), or top_k
/// when that is more: the ones with the strongest lexical evidence. The
/// transformer judge reads about 2.5 long texts a second in its sandbox, so
/// a stage takes it about 10 s cold; and on the grep evaluation a longer
/// shortlist only let the embedding judges promote weaker files (recall@10
/// by shortlist size in docs/eval/RESULTS.md).
pub const LOCAL_SHORTLIST: usize = 24;

/// What grep needs from the host.
pub trait Repository {
    /// (path, binary) of every walked file, in walk order.
    fn walk(&mut self) -> Result<Vec<(String, bool)>, String>;
    /// A walked text file's contents.
    fn read(&mut self, path: &str) -> Result<String, String>;
    /// What a parser found in a walked text file (top-level definitions
    /// and function spans); None when its language has no grammar. The
    /// default has no parser: outlines by extension and 60-line chunks.
    fn syntax(&mut self, _path: &str) -> Result<Option<Syntax>, String> {
        Ok(None)
    }
    /// A stage of the call begins, of `total` steps in the host's units
    /// (files read, items sent to the judge); for progress only.
    fn stage(&mut self, _name: &str, _total: u64) {}
}

/// Files or functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every text file, by its path and preview.
    Files,
    /// The strongest files' functions (or fixed chunks where none are known).
    Functions,
}

/// One grep call.
#[derive(Debug, Clone)]
pub struct GrepRequest {
    /// What the caller is trying to find, in plain language; must not be blank.
    pub question: String,
    /// Whether files or stretches of them are scored.
    pub mode: Mode,
    /// How many results to return, 1 to [`MAX_TOP_K`].
    pub top_k: u32,
    /// Drop units below this probability, in [0, 1].
    pub threshold: f64,
    /// The most the call may spend, in US dollars.
    pub budget_usd: f64,
    /// The judge's share of each unit's probability, 0 to 1 (None:
    /// [`JUDGE_WEIGHT`]); ignored when the engine answers (lexical).
    pub judge_weight: Option<f64>,
    /// The judge declared (its manifest's `[judge] engine_ranking`) that
    /// its answer is the repository's own lexical evidence: the engine
    /// ranks with the whole repository in view and does not ask it. Set
    /// by the host from the manifest, never by the caller, and never
    /// inferred from what a judge calls itself.
    pub engine_ranks: bool,
}

/// One ranked unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The file's path, as the host's walk gave it.
    pub path: String,
    /// First line, 1-based.
    pub line_start: u32,
    /// Last line, inclusive.
    pub line_end: u32,
    /// `file`, `function` or `chunk`.
    pub kind: &'static str,
    /// How relevant the unit is, in [0, 1].
    pub probability: f64,
}

/// The result of a grep call.
#[derive(Debug, Clone, PartialEq)]
pub struct GrepOutcome {
    /// Units by probability, then evidence, path and first line; cut by
    /// threshold and top-k.
    pub results: Vec<Hit>,
    /// Units the judge answered for, over both passes.
    pub units_scored: u32,
    /// What the call cost.
    pub usage: AskUsage,
}

/// Judges `items` for relevance to `question`; the probability of each
/// answered item, by position (None: not read, or the budget ran out
/// first). When `engine` is set (silt's lexical judge), the units'
/// `evidence` is read as the lexical judge's answers and no judge is
/// called; else each answer is [`fuse`]d with the unit's evidence at
/// `judge_weight`. With a `shortlist` the judge reads only that many
/// units, those with the strongest evidence (ties to the earlier unit).
#[allow(clippy::too_many_arguments)]
fn judge_units(
    judge: &mut dyn Judge,
    engine: bool,
    evidence: &[f64],
    shortlist: Option<usize>,
    judge_weight: f64,
    question: &str,
    items: Vec<String>,
    max_batch: usize,
    budget: &mut Budget,
    usage: &mut AskUsage,
) -> Result<Vec<Option<f64>>, AskError> {
    if engine {
        // no shared term is no evidence, not a coin toss: 0, which no
        // threshold above 0 lets through (lexical_probability(0) is 0.5)
        return Ok(evidence
            .iter()
            .map(|&c| Some(if c > 0.0 { lexical_probability(c) } else { 0.0 }))
            .collect());
    }
    let read = strongest(evidence, shortlist);
    let mut items: Vec<Option<String>> = items.into_iter().map(Some).collect();
    let texts: Vec<String> = read.iter().filter_map(|&i| items[i].take()).collect();
    let question = Question {
        text: QUESTION.into(),
        space: AnswerSpace::Judge {
            yes: format!("{RELEVANT} {}", question.trim()),
            no: NOT_RELEVANT.into(),
        },
    };
    // units are already cut to their caps
    let max_chars = (FUNCTION_UNIT_CHARS * 2) as u32;
    let answered =
        ask::yes_probabilities(judge, question, texts, max_chars, max_batch, budget, usage)?;
    let mut p = vec![None; evidence.len()];
    for (i, a) in read.into_iter().zip(answered) {
        p[i] = a.map(|a| fuse(a, evidence[i], judge_weight));
    }
    Ok(p)
}

/// A judge's probability for a unit mixed with the unit's own evidence;
/// no shared term counts as no evidence (0), as with the lexical judge.
pub fn fuse(judge: f64, evidence: f64, judge_weight: f64) -> f64 {
    let lexical = if evidence > 0.0 {
        lexical_probability(evidence)
    } else {
        0.0
    };
    judge_weight * judge + (1.0 - judge_weight) * lexical
}

/// The positions of the `limit` units with the strongest evidence, in
/// unit order (all of them without a limit).
fn strongest(evidence: &[f64], limit: Option<usize>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..evidence.len()).collect();
    if let Some(limit) = limit.filter(|&l| l < evidence.len()) {
        order.sort_by(|&a, &b| evidence[b].total_cmp(&evidence[a]).then(a.cmp(&b)));
        order.truncate(limit);
        order.sort_unstable();
    }
    order
}

/// A hit and its unit's evidence, which orders equal probabilities.
struct Ranked {
    hit: Hit,
    evidence: f64,
}

/// Sorts by (−p, −evidence, path, line_start), drops units below
/// `threshold`, keeps `top_k`.
fn shape(mut hits: Vec<Ranked>, threshold: f64, top_k: u32) -> Vec<Hit> {
    // as in ask: a coin-toss answer never passes a threshold of one half
    hits.retain(|r| {
        r.hit.probability >= threshold
            && !(ask::is_uninformative_yes(r.hit.probability)
                && ask::is_uninformative_yes(threshold))
    });
    hits.sort_by(|a, b| {
        b.hit
            .probability
            .total_cmp(&a.hit.probability)
            .then_with(|| b.evidence.total_cmp(&a.evidence))
            .then_with(|| a.hit.path.cmp(&b.hit.path))
            .then(a.hit.line_start.cmp(&b.hit.line_start))
    });
    hits.truncate(top_k as usize);
    hits.into_iter().map(|r| r.hit).collect()
}

fn validate(req: &GrepRequest) -> Result<(), AskError> {
    let bad = |m: String| Err(AskError::InvalidRequest(m));
    if req.question.trim().is_empty() {
        return bad("question is empty: say what you are trying to find".into());
    }
    if !(1..=MAX_TOP_K).contains(&req.top_k) {
        return bad(format!(
            "top_k is {}, it must be 1 to {MAX_TOP_K}",
            req.top_k
        ));
    }
    if !req.threshold.is_finite() || !(0.0..=1.0).contains(&req.threshold) {
        return bad(format!(
            "threshold is {}, it must be in [0, 1]",
            req.threshold
        ));
    }
    if !req.budget_usd.is_finite() || req.budget_usd < 0.0 {
        return bad(format!(
            "budget_usd is {}, it must be a number >= 0",
            req.budget_usd
        ));
    }
    if let Some(w) = req.judge_weight
        && !(w.is_finite() && (0.0..=1.0).contains(&w))
    {
        return bad(format!(
            "judge_weight is {w}, it must be in [0, 1] (0: the repository's evidence \
             alone, 1: the judge alone)"
        ));
    }
    Ok(())
}

/// Runs a grep call; a local judge reads a shortlist per stage of
/// [`LOCAL_SHORTLIST`] or top_k units, whichever is more.
pub fn run(
    judge: &mut dyn Judge,
    repo: &mut dyn Repository,
    req: &GrepRequest,
) -> Result<GrepOutcome, AskError> {
    let shortlist = (judge.info().cost_per_million_input_tokens == 0.0)
        .then_some(LOCAL_SHORTLIST.max(req.top_k as usize));
    let weight = req.judge_weight.unwrap_or(JUDGE_WEIGHT);
    run_shortlisted(judge, repo, req, shortlist, weight)
}

/// Runs a grep call in which the judge reads at most `shortlist` units per
/// stage (every unit with None) and weighs `judge_weight` against the
/// evidence.
pub fn run_shortlisted(
    judge: &mut dyn Judge,
    repo: &mut dyn Repository,
    req: &GrepRequest,
    shortlist: Option<usize>,
    judge_weight: f64,
) -> Result<GrepOutcome, AskError> {
    validate(req)?;
    // a judge whose method is the evidence computed here, with the
    // repository in view (see `evidence`), is not asked
    let engine_answers = req.engine_ranks;
    let walked = repo.walk().map_err(AskError::InvalidRequest)?;
    // only the previews, line counts and the question's counts are kept: a
    // large repository's text never sits in memory whole
    let mut evidence = Evidence::new(&req.question);
    let mut files: Vec<(String, usize)> = Vec::new();
    let mut counts: Vec<Counts> = Vec::new();
    let mut items: Vec<String> = Vec::new();
    repo.stage(
        "reading files",
        walked.iter().filter(|(_, binary)| !binary).count() as u64,
    );
    for (path, binary) in walked {
        if binary {
            continue;
        }
        // one unreadable file is not the repository's failure: the host
        // lists it as skipped and the rest is ranked
        let Ok(text) = repo.read(&path) else {
            continue;
        };
        counts.push(evidence.count(&path, &text));
        let n_lines = units::lines(&text).len();
        if !engine_answers {
            // the parser is asked only where its outline is shown
            let syntax = if n_lines > SMALL_FILE_LINES {
                repo.syntax(&path).map_err(AskError::InvalidRequest)?
            } else {
                None
            };
            items.push(format!(
                "{path}\n{}",
                units::file_preview(&text, &OutlineSource::for_file(&path, syntax.as_ref()))
            ));
        }
        files.push((path, n_lines.max(1)));
    }
    let weights = Weights::new(&evidence, &counts);
    let file_c = weights.coverage(&counts);
    drop(counts);
    let mut usage = AskUsage::default();
    let cost = judge.info().cost_per_million_input_tokens;
    let mut budget = Budget::new(req.budget_usd, cost);
    if !engine_answers {
        repo.stage("judging files", strongest(&file_c, shortlist).len() as u64);
    }
    let file_p = judge_units(
        judge,
        engine_answers,
        &file_c,
        shortlist,
        judge_weight,
        &req.question,
        items,
        ask::MAX_BATCH,
        &mut budget,
        &mut usage,
    )?;
    let mut units_scored = file_p.iter().flatten().count() as u32;
    let file_hits: Vec<Ranked> = files
        .iter()
        .zip(file_p.iter().zip(&file_c))
        .filter_map(|((path, n_lines), (p, c))| {
            p.map(|p| Ranked {
                hit: Hit {
                    path: path.clone(),
                    line_start: 1,
                    line_end: *n_lines as u32,
                    kind: "file",
                    probability: p,
                },
                evidence: *c,
            })
        })
        .collect();
    if req.mode == Mode::Files {
        return Ok(GrepOutcome {
            results: shape(file_hits, req.threshold, req.top_k),
            units_scored,
            usage,
        });
    }

    // functions: the strongest files (at most 2 × top_k) split into their
    // function spans, or into chunks where the parser found none
    let strongest = shape(file_hits, req.threshold, req.top_k.saturating_mul(2));
    let mut spans: Vec<(String, usize, usize, &'static str)> = Vec::new();
    let mut span_counts: Vec<Counts> = Vec::new();
    let mut items = Vec::new();
    repo.stage("reading the strongest files", strongest.len() as u64);
    for hit in &strongest {
        let Ok(text) = repo.read(&hit.path) else {
            continue;
        };
        let syntax = repo.syntax(&hit.path).unwrap_or(None);
        let lines = units::lines(&text);
        for (start, end, kind) in units::stretches(&lines, syntax.as_ref()) {
            let body = lines[start - 1..end].join("\n");
            span_counts.push(evidence.count(&hit.path, &body));
            if !engine_answers {
                items.push(units::cut_with_marker(
                    &format!("{}:{start}-{end}\n{body}", hit.path),
                    FUNCTION_UNIT_CHARS,
                ));
            }
            spans.push((hit.path.clone(), start, end, kind.as_str()));
        }
    }
    // term weights stay the repository's; lengths compare the stretches
    let span_c = weights.coverage(&span_counts);
    if !engine_answers {
        repo.stage(
            "judging functions",
            self::strongest(&span_c, shortlist).len() as u64,
        );
    }
    let span_p = judge_units(
        judge,
        engine_answers,
        &span_c,
        shortlist,
        judge_weight,
        &req.question,
        items,
        FUNCTION_BATCH,
        &mut budget,
        &mut usage,
    )?;
    units_scored += span_p.iter().flatten().count() as u32;
    let hits = spans
        .into_iter()
        .zip(span_p.into_iter().zip(span_c))
        .filter_map(|((path, s, e, kind), (p, c))| {
            p.map(|p| Ranked {
                hit: Hit {
                    path,
                    line_start: s as u32,
                    line_end: e as u32,
                    kind,
                    probability: round4(p),
                },
                evidence: c,
            })
        })
        .collect();
    Ok(GrepOutcome {
        results: shape(hits, req.threshold, req.top_k),
        units_scored,
        usage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Item;
    use crate::types::{Answer, JudgeError, JudgeInfo, Response, Usage};

    #[derive(Clone)]
    struct Files(Vec<(&'static str, String, bool)>);

    impl Repository for Files {
        fn walk(&mut self) -> Result<Vec<(String, bool)>, String> {
            Ok(self.0.iter().map(|(p, _, b)| (p.to_string(), *b)).collect())
        }
        fn read(&mut self, path: &str) -> Result<String, String> {
            self.0
                .iter()
                .find(|(p, _, _)| *p == path)
                .map(|(_, t, _)| t.clone())
                .ok_or_else(|| format!("{path} was not walked"))
        }
    }

    /// A repository that records the stages it is told of.
    struct Staged(Files, Vec<(String, u64)>);

    impl Repository for Staged {
        fn walk(&mut self) -> Result<Vec<(String, bool)>, String> {
            self.0.walk()
        }
        fn read(&mut self, path: &str) -> Result<String, String> {
            self.0.read(path)
        }
        fn stage(&mut self, name: &str, total: u64) {
            self.1.push((name.to_string(), total));
        }
    }

    #[test]
    fn each_stage_is_named_with_its_size() {
        let body: String = (1..=200).map(|i| format!("parser line {i}\n")).collect();
        let mut files: Vec<(&'static str, String, bool)> =
            vec![("parser.txt", body, false), ("blob.bin", "\0".into(), true)];
        for name in ["a.txt", "b.txt", "c.txt"] {
            files.push((name, "the parser\n".into(), false));
        }
        let stages = |judge: &mut dyn Judge, mode: Mode, engine_ranks: bool| {
            let mut repo = Staged(Files(files.clone()), Vec::new());
            let req = GrepRequest {
                engine_ranks,
                ..request(mode, 1)
            };
            run(judge, &mut repo, &req).unwrap();
            repo.1
        };
        let named = |v: &[(&str, u64)]| -> Vec<(String, u64)> {
            v.iter().map(|(n, t)| (n.to_string(), *t)).collect()
        };
        // binaries are not read; a judge reads at most its shortlist
        assert_eq!(
            stages(&mut Word(vec![]), Mode::Files, false),
            named(&[("reading files", 4), ("judging files", 4)])
        );
        // functions: the strongest files (2 × top_k) read again and split;
        // parser.txt's 200 lines are 4 chunks (a.txt, b.txt, c.txt tie)
        assert_eq!(
            stages(&mut Word(vec![]), Mode::Functions, false),
            named(&[
                ("reading files", 4),
                ("judging files", 4),
                ("reading the strongest files", 2),
                ("judging functions", 5),
            ])
        );
        // the lexical judge is never asked: no judging stage to wait on
        assert_eq!(
            stages(&mut Lexical::same(), Mode::Files, true),
            named(&[("reading files", 4)])
        );
    }

    /// p = 0.9 for units mentioning "parser", else 0.2; records batch sizes.
    struct Word(Vec<usize>);

    impl Judge for Word {
        fn info(&mut self) -> JudgeInfo {
            JudgeInfo {
                name: "word".into(),
                version: "0".into(),
                deterministic: true,
                cost_per_million_input_tokens: 0.0,
                preferred_batch_size: 40,
            }
        }
        fn ask(&mut self, _: &Question, items: &[Item]) -> Result<Response, JudgeError> {
            self.0.push(items.len());
            Ok(Response {
                answers: items
                    .iter()
                    .map(|i| {
                        Answer::YesProbability(if i.text.contains("parser") { 0.9 } else { 0.2 })
                    })
                    .collect(),
                usage: Usage::default(),
            })
        }
    }

    fn request(mode: Mode, top_k: u32) -> GrepRequest {
        GrepRequest {
            question: "where is the parser".into(),
            mode,
            top_k,
            threshold: 0.5,
            budget_usd: 0.5,
            judge_weight: None,
            engine_ranks: false,
        }
    }

    /// A repository in which some walked files cannot be read.
    struct Unreadable(Files, &'static [&'static str]);

    impl Repository for Unreadable {
        fn walk(&mut self) -> Result<Vec<(String, bool)>, String> {
            self.0.walk()
        }
        fn read(&mut self, path: &str) -> Result<String, String> {
            if self.1.contains(&path) {
                return Err(format!("cannot read {path} (Permission denied)"));
            }
            self.0.read(path)
        }
    }

    /// With the engine's own lexical scoring, a question that shares no
    /// word with the repository finds nothing at the default threshold.
    #[test]
    fn a_question_sharing_nothing_finds_nothing() {
        let files = || {
            Files(vec![
                ("a/parser.rs", "fn parse() {}\n".into(), false),
                ("b/render.rs", "fn render() {}\n".into(), false),
                ("README.md", "A small tool.\n".into(), false),
            ])
        };
        let mut lexical = crate::lexical::LexicalJudge;
        let mut req = request(Mode::Files, 20);
        req.engine_ranks = true;
        req.question = "zebra giraffe".into();
        let out = run(&mut lexical, &mut files(), &req).unwrap();
        assert!(out.results.is_empty(), "{:?}", out.results);
        // asked what is there, the file is found
        req.question = "where is the parser".into();
        let out = run(&mut lexical, &mut files(), &req).unwrap();
        assert_eq!(out.results[0].path, "a/parser.rs");
    }

    #[test]
    fn an_unreadable_file_is_left_out_and_the_rest_ranked() {
        for mode in [Mode::Files, Mode::Functions] {
            let mut repo = Unreadable(
                Files(vec![
                    ("a/parser.rs", "fn parse() {}\n".into(), false),
                    ("locked/parser.rs", "fn parse() {}\n".into(), false),
                    ("z/parser.rs", "fn parse() {}\n".into(), false),
                ]),
                &["locked/parser.rs"],
            );
            let out = run(&mut Word(vec![]), &mut repo, &request(mode, 20)).unwrap();
            let paths: Vec<&str> = out.results.iter().map(|h| h.path.as_str()).collect();
            assert_eq!(paths, ["a/parser.rs", "z/parser.rs"], "{mode:?}");
        }
    }

    #[test]
    fn files_mode_scores_text_files_and_sorts_by_probability_then_path() {
        let mut repo = Files(vec![
            ("b/parser.rs", "fn parse() {}\n".into(), false),
            ("a/parser.rs", "fn parse() {}\n".into(), false),
            ("logo.png", "\0".into(), true),
            ("readme.md", "hello\n".into(), false),
        ]);
        let mut judge = Word(vec![]);
        let out = run(&mut judge, &mut repo, &request(Mode::Files, 20)).unwrap();
        let got: Vec<(&str, u32, &str)> = out
            .results
            .iter()
            .map(|h| (h.path.as_str(), h.line_end, h.kind))
            .collect();
        assert_eq!(
            got,
            [("a/parser.rs", 1, "file"), ("b/parser.rs", 1, "file")]
        );
        assert_eq!(out.units_scored, 3, "the binary file is not scored");
    }

    #[test]
    fn functions_mode_splits_the_strongest_files_eight_units_a_request() {
        // the spec's case: 11 units → requests of [8, 3]
        let body: String = (1..=660).map(|i| format!("parser line {i}\n")).collect();
        let mut repo = Files(vec![
            ("parser.txt", body, false),
            ("other.txt", "x\n".into(), false),
        ]);
        let mut judge = Word(vec![]);
        let out = run(&mut judge, &mut repo, &request(Mode::Functions, 20)).unwrap();
        assert_eq!(judge.0, [2, 8, 3]);
        assert_eq!(out.results.len(), 11);
        assert_eq!(
            (out.results[0].line_start, out.results[0].line_end),
            (1, 60)
        );
        assert_eq!(out.results[0].kind, "chunk");
        assert_eq!(out.units_scored, 2 + 11);
    }

    /// Says it is silt's lexical judge, answers as it does, and counts
    /// asks.
    struct Lexical {
        asked: usize,
    }

    impl Lexical {
        fn same() -> Lexical {
            Lexical { asked: 0 }
        }
    }

    impl Judge for Lexical {
        fn info(&mut self) -> JudgeInfo {
            crate::lexical::info()
        }
        fn ask(&mut self, q: &Question, items: &[Item]) -> Result<Response, JudgeError> {
            self.asked += 1;
            crate::lexical::answer(q, items)
        }
    }

    /// A small repository where every file says "repository" and one file
    /// holds the rare words of the question.
    fn repository() -> Files {
        let mut files = vec![(
            "cmd/lock/lock.go",
            "package lock\n// Lock a conversation in the repository.\nfunc lockIssue(url string) error {\n\treturn fmt.Errorf(\"invalid issue format: %q\", url)\n}\n".to_string(),
            false,
        )];
        for (i, p) in [
            "cmd/a/a.go",
            "cmd/b/b.go",
            "cmd/c/c.go",
            "cmd/d/d.go",
            "cmd/e/e.go",
            "cmd/f/f.go",
        ]
        .into_iter()
        .enumerate()
        {
            files.push((
                p,
                format!("package x\n// the repository command {i} runs and fails with an error\nfunc run() error {{ return nil }}\n"),
                false,
            ));
        }
        Files(files)
    }

    const LOCK: &str = "`gh pr lock` on a repository fails with `invalid issue format` when given a URL; other commands run fine";

    #[test]
    fn with_the_lexical_judge_the_repository_evidence_answers_without_a_call() {
        let mut judge = Lexical::same();
        let mut req = request(Mode::Files, 3);
        req.question = LOCK.into();
        req.threshold = 0.0;
        req.engine_ranks = true;
        let out = run(&mut judge, &mut repository(), &req).unwrap();
        assert_eq!(judge.asked, 0, "the lexical judge is not asked");
        assert_eq!(out.usage.requests, 0);
        assert_eq!(out.units_scored, 7);
        assert_eq!(out.results[0].path, "cmd/lock/lock.go", "{out:?}");
        assert!(out.results[0].probability > out.results[1].probability);
        assert!(out.results.iter().all(|h| h.probability >= 0.5));

        // a judge that calls itself the lexical judge, to the version, but
        // did not declare engine ranking is asked as any judge is
        let mut other = Lexical::same();
        req.engine_ranks = false;
        run(&mut other, &mut repository(), &req).unwrap();
        assert_eq!(other.asked, 1);
    }

    #[test]
    fn a_model_judges_answers_are_fused_with_the_repositorys_evidence() {
        // the judge likes z.txt, which shares no word with the question, and
        // ties the rest; the evidence puts the file with the question's rare
        // words first and leaves z.txt only the judge's share
        struct Flat;
        impl Judge for Flat {
            fn info(&mut self) -> JudgeInfo {
                JudgeInfo {
                    name: "model".into(),
                    version: "1".into(),
                    deterministic: false,
                    cost_per_million_input_tokens: 1.0,
                    preferred_batch_size: 40,
                }
            }
            fn ask(&mut self, _: &Question, items: &[Item]) -> Result<Response, JudgeError> {
                Ok(Response {
                    answers: items
                        .iter()
                        .map(|i| {
                            Answer::YesProbability(if i.text.starts_with("z") { 0.9 } else { 0.3 })
                        })
                        .collect(),
                    usage: Usage::default(),
                })
            }
        }
        let mut repo = Files(vec![
            ("a.txt", "the repository\n".into(), false),
            ("b.txt", "the repository\n".into(), false),
            (
                "rare.txt",
                "lock the repository: invalid issue format\n".into(),
                false,
            ),
            ("z.txt", "nothing of the question\n".into(), false),
        ]);
        let mut req = request(Mode::Files, 10);
        req.question = LOCK.into();
        req.threshold = 0.0;
        let out = run(&mut Flat, &mut repo, &req).unwrap();
        let got: Vec<(&str, f64)> = out
            .results
            .iter()
            .map(|h| (h.path.as_str(), h.probability))
            .collect();
        let order: Vec<&str> = got.iter().map(|g| g.0).collect();
        assert_eq!(order[0], "rare.txt", "{got:?}");
        // no shared term: the judge's share alone
        let z = got.iter().find(|g| g.0 == "z.txt").unwrap().1;
        assert!((z - JUDGE_WEIGHT * 0.9).abs() < 1e-9, "{got:?}");
        // the request's weight, when it names one: the judge alone puts its
        // favourite first
        let mut alone = req.clone();
        alone.judge_weight = Some(1.0);
        let out1 = run(&mut Flat, &mut repo, &alone).unwrap();
        assert_eq!(out1.results[0].path, "z.txt", "{out1:?}");
        assert!((out1.results[0].probability - 0.9).abs() < 1e-9);
        // equal answers and equal evidence: equal probabilities, by path
        let a = got.iter().position(|g| g.0 == "a.txt").unwrap();
        assert_eq!(got[a + 1].0, "b.txt");
        assert_eq!(got[a].1, got[a + 1].1);
        // the fusion itself
        assert_eq!(fuse(0.8, 0.0, 0.3), 0.3 * 0.8);
        assert_eq!(fuse(0.8, 2.0, 1.0), 0.8, "all judge");
        assert_eq!(
            fuse(0.8, 2.0, 0.0),
            lexical_probability(2.0),
            "all evidence"
        );
    }

    /// Functions mode over `repo` for `LOCK` with the lexical judge, which
    /// is never asked.
    fn lexical_functions(repo: &mut dyn Repository, top_k: u32) -> GrepOutcome {
        let mut judge = Lexical::same();
        let mut req = request(Mode::Functions, top_k);
        req.question = LOCK.into();
        req.threshold = 0.0;
        req.engine_ranks = true;
        let out = run(&mut judge, repo, &req).unwrap();
        assert_eq!(judge.asked, 0);
        out
    }

    #[test]
    fn functions_mode_with_the_lexical_judge_ranks_stretches_by_evidence() {
        let mut body: String = (1..=130)
            .map(|i| format!("repository line {i}\n"))
            .collect();
        body.push_str("func lockIssue() { invalid issue format }\n");
        let mut repo = Files(vec![
            ("big.go", body, false),
            ("other.go", "x\n".into(), false),
        ]);
        let out = lexical_functions(&mut repo, 2);
        assert_eq!(out.results[0].kind, "chunk");
        assert_eq!(
            (out.results[0].line_start, out.results[0].line_end),
            (121, 131),
            "{out:?}"
        );
    }

    /// `Files` with a parser: syntax for some paths, and the paths asked.
    struct Parsed {
        files: Files,
        syntax: Vec<(&'static str, Syntax)>,
        asked: Vec<String>,
    }

    impl Repository for Parsed {
        fn walk(&mut self) -> Result<Vec<(String, bool)>, String> {
            self.files.walk()
        }
        fn read(&mut self, path: &str) -> Result<String, String> {
            self.files.read(path)
        }
        fn syntax(&mut self, path: &str) -> Result<Option<Syntax>, String> {
            self.asked.push(path.to_string());
            Ok(self
                .syntax
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, s)| s.clone()))
        }
    }

    /// The spec's Python case: `outer` (with `inner` nested) on lines 3–6,
    /// class `Thing` on 8 with `method` on 9–10.
    const PYTHON: &str = "import os\n\ndef outer():\n    def inner():\n        return 1\n    return inner()\n\nclass Thing:\n    def method(self):\n        return parser()\n";

    fn python_syntax() -> Syntax {
        let f = units::FunctionSpan::new;
        Syntax {
            definitions: vec![3, 8],
            functions: vec![f("outer", 3, 6), f("method", 9, 10)],
        }
    }

    /// Answers as `Word` and keeps every item's text.
    struct Reader(Vec<String>);

    impl Judge for Reader {
        fn info(&mut self) -> JudgeInfo {
            Word(vec![]).info()
        }
        fn ask(&mut self, q: &Question, items: &[Item]) -> Result<Response, JudgeError> {
            self.0.extend(items.iter().map(|i| i.text.clone()));
            Word(vec![]).ask(q, items)
        }
    }

    #[test]
    fn functions_mode_scores_the_parsers_function_spans_else_chunks() {
        let chunked: String = (1..=70).map(|i| format!("parser note {i}\n")).collect();
        let mut repo = Parsed {
            files: Files(vec![
                ("a.py", PYTHON.into(), false),
                ("notes.txt", chunked, false),
                ("empty.py", "parser = 1\n".into(), false),
            ]),
            syntax: vec![("a.py", python_syntax()), ("empty.py", Syntax::default())],
            asked: vec![],
        };
        let mut judge = Reader(vec![]);
        let mut req = request(Mode::Functions, 20);
        req.threshold = 0.0;
        let out = run(&mut judge, &mut repo, &req).unwrap();
        let mut got: Vec<(&str, u32, u32, &str)> = out
            .results
            .iter()
            .map(|h| (h.path.as_str(), h.line_start, h.line_end, h.kind))
            .collect();
        got.sort();
        assert_eq!(
            got,
            [
                ("a.py", 3, 6, "function"),
                ("a.py", 9, 10, "function"),
                ("empty.py", 1, 1, "chunk"),
                ("notes.txt", 1, 60, "chunk"),
                ("notes.txt", 61, 70, "chunk"),
            ]
        );
        // the function unit is its header and its lines; the judge saw
        // "parser" only in `method`
        assert!(
            judge.0.contains(
                &"a.py:3-6\ndef outer():\n    def inner():\n        return 1\n    return inner()"
                    .to_string()
            ),
            "{:?}",
            judge.0
        );
        let method = out.results.iter().find(|h| h.line_start == 9).unwrap();
        let outer = out.results.iter().find(|h| h.line_start == 3).unwrap();
        assert!(method.probability > outer.probability);
        // short files are previewed whole, so the parser is only asked for
        // the stretches
        let mut asked = repo.asked.clone();
        asked.sort();
        assert_eq!(asked, ["a.py", "empty.py", "notes.txt"]);
    }

    #[test]
    fn a_function_unit_is_cut_to_its_cap() {
        let mut body = String::from("def big():\n");
        for i in 0..2000 {
            body.push_str(&format!("    parser_{i} = {i}\n"));
        }
        let mut repo = Parsed {
            files: Files(vec![("big.py", body, false)]),
            syntax: vec![(
                "big.py",
                Syntax {
                    definitions: vec![1],
                    functions: vec![units::FunctionSpan::new("big", 1, 2001)],
                },
            )],
            asked: vec![],
        };
        let mut judge = Reader(vec![]);
        let out = run(&mut judge, &mut repo, &request(Mode::Functions, 5)).unwrap();
        assert_eq!(out.results.len(), 1);
        assert_eq!(out.results[0].kind, "function");
        let unit = judge.0.last().unwrap();
        assert!(unit.starts_with("big.py:1-2001\ndef big():\n"));
        assert_eq!(unit.chars().count(), FUNCTION_UNIT_CHARS);
        assert!(unit.ends_with(units::TRUNCATION_MARKER));
        // the file preview, the first unit, outlines by definitions
        assert!(
            judge.0[0].contains("lines total]\nL1: def big():"),
            "{}",
            judge.0[0]
        );
    }

    #[test]
    fn long_files_are_outlined_by_their_definitions() {
        let mut long = String::from(PYTHON);
        for i in 11..=100 {
            long.push_str(&format!("    x{i} = {i}\n"));
        }
        let mut repo = Parsed {
            files: Files(vec![
                ("long.py", long.clone(), false),
                ("short.py", PYTHON.into(), false),
                ("plain.py", long, false),
            ]),
            syntax: vec![("long.py", python_syntax()), ("short.py", python_syntax())],
            asked: vec![],
        };
        let mut judge = Reader(vec![]);
        run(&mut judge, &mut repo, &request(Mode::Files, 5)).unwrap();
        assert_eq!(
            repo.asked,
            ["long.py", "plain.py"],
            "short files are shown whole"
        );
        let preview = |p: &str| judge.0.iter().find(|t| t.starts_with(p)).unwrap().clone();
        assert!(
            preview("long.py\n").ends_with(
                "... [outline of the whole file, 100 lines total]\nL3: def outer():\nL8: class Thing:"
            ),
            "{}",
            preview("long.py\n")
        );
        // no grammar (None): the plain outline after the head
        assert!(preview("plain.py\n").contains("100 lines total]\nL41:     x41 = 41"));

        // the lexical judge reads no previews, so the parser is not asked
        // in files mode
        repo.asked.clear();
        let req = GrepRequest {
            engine_ranks: true,
            ..request(Mode::Files, 5)
        };
        run(&mut Lexical::same(), &mut repo, &req).unwrap();
        assert!(repo.asked.is_empty(), "{:?}", repo.asked);
    }

    #[test]
    fn function_units_carry_the_repositorys_evidence() {
        // the lexical judge: the function holding the question's rare words
        // comes first, the others after it
        let source = "package lock\n\nfunc run() error {\n\treturn nil\n}\n\nfunc lockIssue(url string) error {\n\treturn fmt.Errorf(\"invalid issue format: %q\", url)\n}\n";
        let f = units::FunctionSpan::new;
        let mut repo = Parsed {
            files: Files(vec![
                ("lock.go", source.into(), false),
                (
                    "other.go",
                    "package other\n// the repository\n".into(),
                    false,
                ),
            ]),
            syntax: vec![(
                "lock.go",
                Syntax {
                    definitions: vec![3, 7],
                    functions: vec![f("run", 3, 5), f("lockIssue", 7, 9)],
                },
            )],
            asked: vec![],
        };
        let out = lexical_functions(&mut repo, 1);
        assert_eq!(
            (
                out.results[0].path.as_str(),
                out.results[0].line_start,
                out.results[0].line_end,
                out.results[0].kind
            ),
            ("lock.go", 7, 9, "function"),
            "{out:?}"
        );
        assert!(out.results[0].probability > 0.5);
    }

    #[test]
    fn bad_requests_are_refused_before_any_walk() {
        struct NoWalk;
        impl Repository for NoWalk {
            fn walk(&mut self) -> Result<Vec<(String, bool)>, String> {
                panic!("walked")
            }
            fn read(&mut self, _: &str) -> Result<String, String> {
                panic!("read")
            }
        }
        let mut r = request(Mode::Files, 0);
        assert!(run(&mut Word(vec![]), &mut NoWalk, &r).is_err());
        r.top_k = 201;
        assert!(run(&mut Word(vec![]), &mut NoWalk, &r).is_err());
        r.top_k = 5;
        r.question = " ".into();
        assert!(run(&mut Word(vec![]), &mut NoWalk, &r).is_err());
        r.question = "where".into();
        for w in [-0.1, 1.5, f64::NAN] {
            r.judge_weight = Some(w);
            let e = run(&mut Word(vec![]), &mut NoWalk, &r).unwrap_err();
            assert!(format!("{e:?}").contains("judge_weight"), "{e:?}");
        }
    }

    #[test]
    fn a_local_judge_reads_the_shortlist_with_the_strongest_evidence() {
        // 40 files; the three that name the parser are last in walk order
        let mut files: Vec<(&'static str, String, bool)> = Vec::new();
        let names: Vec<&'static str> = (0..40)
            .map(|i| &*Box::leak(format!("f{i:02}.txt").into_boxed_str()))
            .collect();
        for (i, name) in names.iter().enumerate() {
            let text = if i >= 37 {
                "the parser reads tokens\n".to_string()
            } else {
                format!("notes number {i}\n")
            };
            files.push((name, text, false));
        }
        let mut free = Word(vec![]);
        let out = run(
            &mut free,
            &mut Files(files.clone()),
            &request(Mode::Files, 5),
        )
        .unwrap();
        assert_eq!(free.0.iter().sum::<usize>(), LOCAL_SHORTLIST);
        assert_eq!(out.units_scored as usize, LOCAL_SHORTLIST);
        let found: Vec<&str> = out.results.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(found, ["f37.txt", "f38.txt", "f39.txt"]);
        // a larger top_k widens it
        let mut free = Word(vec![]);
        run(
            &mut free,
            &mut Files(files.clone()),
            &request(Mode::Files, 30),
        )
        .unwrap();
        assert_eq!(free.0.iter().sum::<usize>(), 30);
        // a judge that charges per token reads every file, as the reference
        struct Paid(Word);
        impl Judge for Paid {
            fn info(&mut self) -> JudgeInfo {
                JudgeInfo {
                    cost_per_million_input_tokens: 1.0,
                    ..self.0.info()
                }
            }
            fn ask(&mut self, q: &Question, items: &[Item]) -> Result<Response, JudgeError> {
                self.0.ask(q, items)
            }
        }
        let mut paid = Paid(Word(vec![]));
        run(&mut paid, &mut Files(files), &request(Mode::Files, 5)).unwrap();
        assert_eq!(paid.0.0.iter().sum::<usize>(), 40);
    }
}
