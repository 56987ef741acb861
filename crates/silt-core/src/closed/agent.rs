//! The agent CLI the user is logged into (`claude -p`, or `codex exec`)
//! as a judge: a batch of closed questions as one prompt
//! ([`super::stated`]), one run of the CLI with no tools and nothing
//! saved, the stated probabilities read off its reply. The program runs
//! through the same [`Exec`] transport as the CLI search backends (the
//! host's `exec` in the judge component, a script in tests), with their
//! hygiene: empty stdin, a fresh empty folder, the routing variables
//! stripped, a wall clock.
//!
//! An item the reply leaves out or answers badly is asked once more, in a
//! smaller batch with the others that failed; one still invalid fails the
//! whole call with a judge error naming it (never a made-up answer). A
//! run that fails (not installed, not logged in, timed out) fails the
//! call at once: asking again would cost as much and end the same way.

use serde_json::Value;

use super::prompt::Prompt;
use super::stated;
use crate::search::cli::{Cli, Exec, ExecError};
use crate::search::{claude, codex};
use crate::types::{JudgeError, Usage};

/// How long one run may take unless `SILT_AGENT_TIMEOUT` (seconds) says:
/// a batch of 30 items is one answer of about 1,000 tokens, which a small
/// model writes in well under a minute; the rest is room for a slow
/// start. Kept well inside the ask engine's 300 s for a whole call.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;

/// Items per batch when the failed items are asked again: a batch that
/// lost items would likely lose them again at its first size.
pub const RETRY_ITEMS: usize = 10;

/// The most bytes of prompt one run's argument may carry: Linux refuses
/// to start a program with any one argument over 128 KiB (E2BIG), and the
/// prompt goes as an argument (stdin stays empty). About 24 items at
/// silt's 4,000-character cap fit in one run; a batch of longer or more
/// items (grep's function units, up to 12,000) is split.
pub const MAX_PROMPT_BYTES: usize = 100_000;

/// What the user set in the judge's granted environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The CLI that answers.
    pub cli: Cli,
    /// The model it answers with (`SILT_AGENT_MODEL`, else the CLI's cheap default).
    pub model: String,
    /// Codex's reasoning effort (None for Claude).
    pub effort: Option<String>,
    /// How long one run may take, in milliseconds.
    pub timeout_ms: u64,
    /// USD per million tokens read and written, for a CLI that reports
    /// tokens but no cost (Codex), and for planning a budget.
    pub price_in: f64,
    /// USD per million output tokens, read the same way as `price_in`.
    pub price_out: f64,
}

/// Claude Haiku 4.5's list price, USD per million tokens in and out (the
/// default model; Claude Code reports each run's own cost).
const CLAUDE_PRICE: (f64, f64) = (1.0, 5.0);
/// An estimate for Codex's default model, which reports tokens only.
const CODEX_PRICE: (f64, f64) = (1.25, 10.0);

impl Settings {
    /// Reads `SILT_AGENT_CLI` (claude or codex; else whichever of the two
    /// the manifest grants, claude first), `SILT_AGENT_MODEL`,
    /// `SILT_AGENT_EFFORT` (Codex), `SILT_AGENT_TIMEOUT` (seconds) and
    /// `SILT_AGENT_PRICE_IN` / `_OUT` (USD per million tokens); an
    /// unusable value makes the judge unavailable, with an error naming
    /// it (the question is not at fault).
    pub fn from_env(
        granted: &[String],
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Settings, JudgeError> {
        let set = |k: &str| {
            env(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let is_granted = |c: Cli| granted.iter().any(|g| g == c.name());
        let cli = match set("SILT_AGENT_CLI").as_deref() {
            Some("claude") => Cli::Claude,
            Some("codex") => Cli::Codex,
            Some(other) => {
                return Err(JudgeError::Unavailable(format!(
                    "SILT_AGENT_CLI is '{other}'; it must be claude or codex"
                )));
            }
            None if !is_granted(Cli::Claude) && is_granted(Cli::Codex) => Cli::Codex,
            None => Cli::Claude,
        };
        if !is_granted(cli) {
            return Err(JudgeError::Unavailable(format!(
                "this judge is granted {granted:?}; it needs `exec` to grant \"{}\"",
                cli.name()
            )));
        }
        let timeout_ms = match set("SILT_AGENT_TIMEOUT") {
            None => DEFAULT_TIMEOUT_MS,
            Some(v) => match v.parse::<f64>() {
                Ok(s) if s > 0.0 && s <= 3600.0 => (s * 1000.0) as u64,
                _ => {
                    return Err(JudgeError::Unavailable(format!(
                        "SILT_AGENT_TIMEOUT is '{v}'; it must be seconds between 0 and 3600"
                    )));
                }
            },
        };
        let (default_model, (price_in, price_out)) = match cli {
            Cli::Claude => (claude::MODEL, CLAUDE_PRICE),
            Cli::Codex => (codex::MODEL, CODEX_PRICE),
        };
        let price = |k: &str, default: f64| match set(k) {
            None => Ok(default),
            Some(v) => v
                .parse::<f64>()
                .ok()
                .filter(|p| p.is_finite() && *p >= 0.0)
                .ok_or_else(|| {
                    JudgeError::Unavailable(format!(
                        "{k} is '{v}'; it must be USD per million tokens, 0 or more"
                    ))
                }),
        };
        Ok(Settings {
            cli,
            model: set("SILT_AGENT_MODEL").unwrap_or_else(|| default_model.into()),
            effort: (cli == Cli::Codex)
                .then(|| set("SILT_AGENT_EFFORT").unwrap_or_else(|| codex::EFFORT.into())),
            timeout_ms,
            price_in: price("SILT_AGENT_PRICE_IN", price_in)?,
            price_out: price("SILT_AGENT_PRICE_OUT", price_out)?,
        })
    }

    /// What answers: the CLI, its model and effort (the judge's version
    /// names it, so another model is another judge's answers).
    pub fn describe(&self) -> String {
        match &self.effort {
            Some(e) => format!("{}/{}/{e}", self.cli.name(), self.model),
            None => format!("{}/{}", self.cli.name(), self.model),
        }
    }
}

/// The arguments after the program. Claude Code: print mode, the
/// prompt's own system message in place of Claude Code's, no tools at
/// all (`--tools ""`, and `--strict-mcp-config` so the user's MCP servers
/// add none), one turn, no slash commands or saved session; stream-json,
/// whose last line carries the reply, the cost and the tokens. Codex:
/// as its search backend but with web search disabled, the system
/// message heading the one prompt (`codex exec` takes no other).
pub fn args(settings: &Settings, prompt: &Prompt) -> Vec<String> {
    let owned = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    match settings.cli {
        Cli::Claude => {
            let mut a = owned(&["-p", &prompt.user, "--system-prompt", &prompt.system]);
            a.extend(owned(&[
                "--output-format",
                "stream-json",
                "--verbose",
                "--model",
                &settings.model,
                "--tools",
                "",
                "--permission-mode",
                "dontAsk",
                "--max-turns",
                "1",
                "--strict-mcp-config",
                "--disable-slash-commands",
                "--no-session-persistence",
            ]));
            a
        }
        Cli::Codex => {
            let effort = settings.effort.as_deref().unwrap_or(codex::EFFORT);
            let mut a = owned(&[
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--ephemeral",
                "--sandbox",
                "read-only",
                "--ignore-user-config",
                "--ignore-rules",
                "--color",
                "never",
                "--model",
                &settings.model,
                "-c",
            ]);
            a.push(format!("model_reasoning_effort=\"{effort}\""));
            a.extend(owned(&["-c", "web_search=\"disabled\""]));
            a.push(format!("{}\n\n{}", prompt.system, prompt.user));
            a
        }
    }
}

/// What one run gave.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Turn {
    /// The model's final reply.
    pub reply: String,
    /// An error the stream itself reported (a failed turn, an error result).
    pub error: Option<String>,
    /// What the CLI reported the run cost, in US dollars (Claude Code only).
    pub cost_usd: Option<f64>,
    /// Input tokens, cache reads and writes included; None when no usage
    /// line was seen.
    pub input_tokens: Option<u64>,
    /// Output tokens; None when no usage line was seen.
    pub output_tokens: Option<u64>,
}

/// Reads a run's stdout: the reply, error and cost as the search backends
/// read them ([`claude::parse`], [`codex::parse`]), and the tokens from
/// Claude Code's `result` line (cached input counted) or Codex's
/// `turn.completed` events.
pub fn turn(cli: Cli, stdout: &str) -> Turn {
    let parsed = match cli {
        Cli::Claude => claude::parse(stdout),
        Cli::Codex => codex::parse(stdout),
    };
    let (mut input, mut output) = (None, None);
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        let usage = match (cli, v.get("type").and_then(Value::as_str)) {
            (Cli::Claude, Some("result")) | (Cli::Codex, Some("turn.completed")) => {
                v.get("usage").cloned().unwrap_or(Value::Null)
            }
            _ => continue,
        };
        let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
        let read = match cli {
            // Claude counts cache reads and writes apart from input
            Cli::Claude => {
                n("input_tokens") + n("cache_creation_input_tokens") + n("cache_read_input_tokens")
            }
            Cli::Codex => n("input_tokens"),
        };
        *input.get_or_insert(0) += read;
        *output.get_or_insert(0) += n("output_tokens");
    }
    Turn {
        reply: parsed.reply,
        error: parsed.error,
        cost_usd: parsed.cost_usd,
        input_tokens: input,
        output_tokens: output,
    }
}

fn last_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("")
}

/// Runs `prompt` once: the reply, and what it cost in `usage`; a run that
/// failed is the judge error that ends the call.
fn run_once(
    exec: &mut dyn Exec,
    settings: &Settings,
    prompt: &Prompt,
    usage: &mut Usage,
) -> Result<String, JudgeError> {
    let name = settings.cli.name();
    let exit = exec
        .run(name, &args(settings, prompt), settings.timeout_ms)
        .map_err(|e| match e {
            ExecError::Denied(m) => {
                JudgeError::Unavailable(format!("the sandbox refused to run {name}: {m}"))
            }
            ExecError::NotFound(m) => JudgeError::Unavailable(format!(
                "{m}. The agent judge needs the {name} CLI installed and logged in \
                 (SILT_AGENT_CLI chooses claude or codex)"
            )),
            ExecError::TimedOut(ms) if ms < settings.timeout_ms => {
                JudgeError::LimitExceeded(format!(
                    "{name} did not answer within {} s, the most the judge's wall clock allows \
                     (SILT_AGENT_TIMEOUT asks {} s); nothing was answered",
                    ms as f64 / 1000.0,
                    settings.timeout_ms as f64 / 1000.0
                ))
            }
            ExecError::TimedOut(ms) => JudgeError::LimitExceeded(format!(
                "{name} did not answer within {} s (SILT_AGENT_TIMEOUT); nothing was answered",
                ms as f64 / 1000.0
            )),
            ExecError::TooMuchOutput(cap) => JudgeError::Unavailable(format!(
                "{name} wrote more than {cap} bytes and was stopped"
            )),
            ExecError::Failed(m) => JudgeError::Unavailable(format!("{name} could not run: {m}")),
        })?;
    let t = turn(settings.cli, &exit.stdout);
    let chars = prompt.system.len() + prompt.user.len();
    let input = t
        .input_tokens
        .unwrap_or_else(|| crate::text::estimate_tokens(chars));
    let output = t
        .output_tokens
        .unwrap_or_else(|| crate::text::estimate_tokens(t.reply.len()));
    usage.input_tokens += input;
    usage.output_tokens += output;
    usage.cost_usd += t
        .cost_usd
        .filter(|c| c.is_finite() && *c >= 0.0)
        .unwrap_or((input as f64 * settings.price_in + output as f64 * settings.price_out) / 1e6);
    if exit.status != Some(0) || t.error.is_some() {
        let code = exit.status.map_or_else(
            || "was killed by a signal".to_string(),
            |c| format!("exited {c}"),
        );
        let why = t
            .error
            .filter(|e| !e.is_empty())
            .unwrap_or_else(|| last_line(&exit.stderr).to_string());
        return Err(JudgeError::Unavailable(format!(
            "{name} {code}: {why}; nothing was answered"
        )));
    }
    Ok(t.reply)
}

/// `places` in batches of at most `size` whose prompts fit
/// [`MAX_PROMPT_BYTES`] (a batch too long is halved until it fits), each
/// with its prompt; one item too long alone is an error, since no run
/// could carry it.
fn fitting(
    places: &[usize],
    size: usize,
    prompt: &impl Fn(&[usize]) -> Prompt,
) -> Result<Vec<(Vec<usize>, Prompt)>, JudgeError> {
    let mut out = Vec::new();
    let mut todo: Vec<&[usize]> = places.chunks(size).rev().collect();
    while let Some(batch) = todo.pop() {
        let asked = prompt(batch);
        let bytes = asked.system.len() + asked.user.len();
        if bytes <= MAX_PROMPT_BYTES {
            out.push((batch.to_vec(), asked));
        } else if batch.len() > 1 {
            let (a, b) = batch.split_at(batch.len() / 2);
            todo.extend([b, a]);
        } else {
            return Err(JudgeError::LimitExceeded(format!(
                "one item makes a prompt of {bytes} bytes, more than the {MAX_PROMPT_BYTES} a \
                 command line may carry; cut the items shorter"
            )));
        }
    }
    Ok(out)
}

/// Each of `n` items' distribution over `options` options, running the
/// CLI with the prompts `prompt` makes for a list of item places: batches
/// of `batch` items, then the failed items once more in batches of
/// [`RETRY_ITEMS`]. The usage counts every run.
pub fn answer(
    exec: &mut dyn Exec,
    settings: &Settings,
    n: usize,
    options: usize,
    batch: usize,
    prompt: impl Fn(&[usize]) -> Prompt,
) -> Result<(Vec<Vec<f64>>, Usage), JudgeError> {
    let mut usage = Usage::default();
    let mut answers: Vec<Option<Vec<f64>>> = vec![None; n];
    let mut why: Vec<String> = vec![String::new(); n];
    let mut pending: Vec<usize> = (0..n).collect();
    for size in [batch.max(1), RETRY_ITEMS] {
        for (places, asked) in fitting(&pending, size, &prompt)? {
            let places = places.as_slice();
            let reply = run_once(exec, settings, &asked, &mut usage)?;
            match stated::read(&reply, places.len(), options) {
                Ok(items) => {
                    for (&i, item) in places.iter().zip(items) {
                        match item {
                            Ok(p) => answers[i] = Some(p),
                            Err(e) => why[i] = e,
                        }
                    }
                }
                Err(e) => places.iter().for_each(|&i| why[i] = e.to_string()),
            }
        }
        pending = (0..n).filter(|&i| answers[i].is_none()).collect();
        if pending.is_empty() {
            break;
        }
    }
    if !pending.is_empty() {
        let items: stated::Items = (0..n)
            .map(|i| answers[i].clone().ok_or_else(|| why[i].clone()))
            .collect();
        return Err(JudgeError::Unavailable(format!(
            "{} did not answer validly, even when asked again: {}; nothing was answered",
            settings.describe(),
            stated::describe(&items, &pending)
        )));
    }
    let answers = answers.into_iter().map(|a| a.expect("answered")).collect();
    Ok((answers, usage))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::cli::Exit;
    use crate::types::{AnswerSpace, Question};
    use serde_json::json;

    fn settings(cli: Cli) -> Settings {
        Settings::from_env(&["claude".into(), "codex".into()], |k| {
            (k == "SILT_AGENT_CLI").then(|| cli.name().to_string())
        })
        .unwrap()
    }

    /// Answers each run from `reply(prompt, run)` as Claude Code's stream,
    /// recording every run's arguments.
    struct Stand<F: FnMut(&str, usize) -> Result<Exit, ExecError>> {
        reply: F,
        runs: Vec<(String, Vec<String>, u64)>,
    }

    impl<F: FnMut(&str, usize) -> Result<Exit, ExecError>> Exec for Stand<F> {
        fn run(&mut self, p: &str, a: &[String], t: u64) -> Result<Exit, ExecError> {
            self.runs.push((p.to_string(), a.to_vec(), t));
            (self.reply)(&a[1], self.runs.len() - 1)
        }
    }

    fn claude_stream(reply: &str, cost: f64) -> Exit {
        let lines = [
            json!({"type": "system", "subtype": "init", "tools": []}),
            json!({"type": "assistant", "message": {"content": [{"type": "text", "text": reply}]}}),
            json!({"type": "result", "subtype": "success", "is_error": false, "result": reply,
                   "total_cost_usd": cost, "usage": {"input_tokens": 100,
                   "cache_creation_input_tokens": 20, "cache_read_input_tokens": 5, "output_tokens": 40}}),
        ];
        Exit {
            status: Some(0),
            stdout: lines
                .iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join("\n"),
            stderr: String::new(),
        }
    }

    /// The item numbers a batch prompt holds.
    fn items_in(prompt: &str) -> usize {
        prompt.matches("\nItem ").count()
    }

    fn yes_no() -> Question {
        Question {
            text: "Is it a fix?".into(),
            space: AnswerSpace::Judge {
                yes: "a fix".into(),
                no: "not a fix".into(),
            },
        }
    }

    fn ask(
        exec: &mut dyn Exec,
        settings: &Settings,
        texts: &[&str],
        batch: usize,
    ) -> Result<(Vec<Vec<f64>>, Usage), JudgeError> {
        let q = yes_no();
        answer(exec, settings, texts.len(), 2, batch, |places| {
            let b: Vec<&str> = places.iter().map(|&i| texts[i]).collect();
            stated::ask(&q, &b)
        })
    }

    #[test]
    fn settings_choose_the_cli_and_check_their_values() {
        let both = ["claude".to_string(), "codex".to_string()];
        let s = Settings::from_env(&both, |_| None).unwrap();
        assert_eq!((s.cli, s.model.as_str()), (Cli::Claude, claude::MODEL));
        assert_eq!((s.timeout_ms, s.effort.as_deref()), (120_000, None));
        assert_eq!(s.describe(), format!("claude/{}", claude::MODEL));
        let c = settings(Cli::Codex);
        assert_eq!(c.describe(), format!("codex/{}/low", codex::MODEL));
        // a manifest granting codex alone drives codex
        let only = Settings::from_env(&["codex".into()], |_| None).unwrap();
        assert_eq!(only.cli, Cli::Codex);
        let e = Settings::from_env(&["codex".into()], |k| {
            (k == "SILT_AGENT_CLI").then(|| "claude".into())
        })
        .unwrap_err();
        assert!(e.to_string().contains("grant \"claude\""), "{e}");
        for (k, v) in [
            ("SILT_AGENT_CLI", "gemini"),
            ("SILT_AGENT_TIMEOUT", "0"),
            ("SILT_AGENT_TIMEOUT", "soon"),
            ("SILT_AGENT_PRICE_IN", "-1"),
        ] {
            let e = Settings::from_env(&both, |key| (key == k).then(|| v.to_string())).unwrap_err();
            assert!(
                matches!(&e, JudgeError::Unavailable(m) if m.contains(k)),
                "{e}"
            );
        }
        let m = Settings::from_env(&both, |k| match k {
            "SILT_AGENT_MODEL" => Some("claude-sonnet-4-6".into()),
            "SILT_AGENT_TIMEOUT" => Some("2.5".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(
            (m.model.as_str(), m.timeout_ms),
            ("claude-sonnet-4-6", 2500)
        );
    }

    #[test]
    fn command_lines_allow_no_tools_and_save_nothing() {
        let p = stated::ask(&yes_no(), &["x"]);
        let a = args(&settings(Cli::Claude), &p);
        assert_eq!((a[0].as_str(), a[1].as_str()), ("-p", p.user.as_str()));
        assert_eq!(
            (a[2].as_str(), a[3].as_str()),
            ("--system-prompt", p.system.as_str())
        );
        let joined = a[4..].join(" ");
        assert!(
            joined.contains("--tools  --permission-mode dontAsk --max-turns 1"),
            "{joined}"
        );
        assert!(
            joined
                .contains("--strict-mcp-config --disable-slash-commands --no-session-persistence")
        );
        assert!(joined.contains("--output-format stream-json --verbose"));
        let c = args(&settings(Cli::Codex), &p);
        let joined = c.join(" ");
        assert!(
            joined.starts_with("exec --json --skip-git-repo-check --ephemeral --sandbox read-only")
        );
        assert!(joined.contains("-c web_search=\"disabled\""), "{joined}");
        assert!(!joined.contains("live"));
        let last = c.last().unwrap();
        assert!(last.starts_with(&p.system) && last.ends_with(&p.user));
    }

    #[test]
    fn a_batch_is_one_run_and_its_cost_is_the_clis() {
        let mut stand = Stand {
            reply: |prompt: &str, _| {
                let n = items_in(prompt);
                Ok(claude_stream(
                    &format!(
                        "```json\n{}\n```",
                        stated::reply_of(n, |i| {
                            if i % 2 == 0 {
                                vec![0.9, 0.1]
                            } else {
                                vec![0.2, 0.8]
                            }
                        })
                    ),
                    0.003,
                ))
            },
            runs: Vec::new(),
        };
        let texts: Vec<String> = (0..45).map(|i| format!("change {i}")).collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let (read, usage) = ask(&mut stand, &settings(Cli::Claude), &texts, 30).unwrap();
        assert_eq!(stand.runs.len(), 2, "45 items in batches of 30");
        assert_eq!(read[0], [0.9, 0.1]);
        assert_eq!(read[31], [0.2, 0.8], "item 2 of the second batch");
        assert_eq!(read[30], [0.9, 0.1]);
        assert!((usage.cost_usd - 0.006).abs() < 1e-12);
        assert_eq!((usage.input_tokens, usage.output_tokens), (250, 80));
        assert_eq!(stand.runs[0].2, 120_000);
    }

    #[test]
    fn failed_items_are_asked_once_more_then_fail_the_call() {
        // the first reply drops item 2; asked again alone, it is answered
        let mut stand = Stand {
            reply: |prompt: &str, run| {
                let n = items_in(prompt);
                let reply = if run == 0 {
                    r#"{"1": {"A": 1, "B": 0}, "3": {"A": 0, "B": 1}}"#.to_string()
                } else {
                    stated::reply_of(n, |_| vec![0.6, 0.4])
                };
                Ok(claude_stream(&reply, 0.001))
            },
            runs: Vec::new(),
        };
        let (read, usage) = ask(&mut stand, &settings(Cli::Claude), &["a", "b", "c"], 30).unwrap();
        assert_eq!(read, [vec![1.0, 0.0], vec![0.6, 0.4], vec![0.0, 1.0]]);
        assert_eq!(stand.runs.len(), 2);
        assert!(
            stand.runs[1].1[1].contains("Item 1:\n\"\"\"\nb\n"),
            "only b again"
        );
        assert!((usage.cost_usd - 0.002).abs() < 1e-12);
        // prose without JSON twice: the call fails naming the items
        let mut garbage = Stand {
            reply: |_: &str, _| Ok(claude_stream("I would rather not say.", 0.001)),
            runs: Vec::new(),
        };
        let e = ask(&mut garbage, &settings(Cli::Claude), &["a", "b"], 30)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("did not answer validly, even when asked again"),
            "{e}"
        );
        assert!(e.contains("2 of 2 items"), "{e}");
        assert!(e.contains("no JSON object of numbered items"), "{e}");
        assert_eq!(garbage.runs.len(), 2);
    }

    #[test]
    fn a_failed_run_ends_the_call_at_once() {
        let cases: Vec<(Result<Exit, ExecError>, &str)> = vec![
            (
                Err(ExecError::TimedOut(120_000)),
                "did not answer within 120 s (SILT_AGENT_TIMEOUT)",
            ),
            (
                Err(ExecError::TimedOut(115_000)),
                "the most the judge's wall clock allows",
            ),
            (
                Err(ExecError::NotFound("claude is not on PATH".into())),
                "installed and logged in",
            ),
            (
                Err(ExecError::Denied("not granted".into())),
                "refused to run claude",
            ),
            (
                Ok(Exit {
                    status: Some(1),
                    stdout: String::new(),
                    stderr: "starting\nError: not logged in\n".into(),
                }),
                "claude exited 1: Error: not logged in",
            ),
            (
                Ok(Exit {
                    status: Some(1),
                    stdout: json!({"type": "result", "is_error": true,
                                   "result": "Invalid API key · Please run /login"})
                    .to_string(),
                    stderr: String::new(),
                }),
                "Invalid API key",
            ),
        ];
        for (exit, want) in cases {
            let mut stand = Stand {
                reply: |_: &str, _| exit.clone(),
                runs: Vec::new(),
            };
            let e = ask(&mut stand, &settings(Cli::Claude), &["a"], 30).unwrap_err();
            assert!(e.to_string().contains(want), "{e}");
            assert_eq!(stand.runs.len(), 1, "{want}: no second run");
        }
    }

    #[test]
    fn long_items_are_split_so_each_prompt_fits_a_command_line() {
        let mut stand = Stand {
            reply: |prompt: &str, _| {
                let n = items_in(prompt);
                Ok(claude_stream(&stated::reply_of(n, |_| vec![0.5, 0.5]), 0.0))
            },
            runs: Vec::new(),
        };
        let long: Vec<String> = (0..30)
            .map(|i| format!("{i} {}", "x".repeat(12_000)))
            .collect();
        let texts: Vec<&str> = long.iter().map(String::as_str).collect();
        let (read, _) = ask(&mut stand, &settings(Cli::Claude), &texts, 30).unwrap();
        assert_eq!(read.len(), 30);
        // 30 × 12 kB is 360 kB: at most 8 items a run
        assert!(stand.runs.len() >= 4, "{}", stand.runs.len());
        for (_, args, _) in &stand.runs {
            assert!(args[1].len() + args[3].len() <= MAX_PROMPT_BYTES);
        }
        let asked: usize = stand.runs.iter().map(|(_, a, _)| items_in(&a[1])).sum();
        assert_eq!(asked, 30, "each item once");
        let huge = "y".repeat(MAX_PROMPT_BYTES);
        let e = ask(&mut stand, &settings(Cli::Claude), &[&huge], 30).unwrap_err();
        assert!(
            e.to_string()
                .contains("more than the 100000 a command line"),
            "{e}"
        );
    }

    #[test]
    fn codex_streams_give_the_reply_and_tokens_priced() {
        let stdout = [
            json!({"type": "thread.started", "thread_id": "t"}),
            json!({"type": "item.completed", "item": {"type": "agent_message",
                   "text": "{\"1\": {\"A\": 0.3, \"B\": 0.7}}"}}),
            json!({"type": "turn.completed", "usage": {"input_tokens": 2000,
                   "cached_input_tokens": 0, "output_tokens": 100}}),
        ]
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
        let t = turn(Cli::Codex, &stdout);
        assert_eq!(
            (t.input_tokens, t.output_tokens, t.cost_usd),
            (Some(2000), Some(100), None)
        );
        let mut stand = Stand {
            reply: |_: &str, _| {
                Ok(Exit {
                    status: Some(0),
                    stdout: stdout.clone(),
                    stderr: String::new(),
                })
            },
            runs: Vec::new(),
        };
        let (read, usage) = ask(&mut stand, &settings(Cli::Codex), &["a"], 30).unwrap();
        assert_eq!(read, [vec![0.3, 0.7]]);
        // 2000 × 1.25 + 100 × 10 per million
        assert!(
            (usage.cost_usd - 0.0035).abs() < 1e-12,
            "{}",
            usage.cost_usd
        );
        assert_eq!(stand.runs[0].0, "codex");
        let failed =
            json!({"type": "turn.failed", "error": {"message": "usage limit reached"}}).to_string();
        assert_eq!(
            turn(Cli::Codex, &failed).error.as_deref(),
            Some("usage limit reached")
        );
    }
}
