//! Backends that search through a locally installed model CLI (`claude`,
//! `codex`): the command line each gets, and how its output stream becomes
//! hits. The program runs through an [`Exec`] transport: the host's
//! `silt:search/exec` in the backend component, a script in tests.

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

use super::backend::{BackendError, BackendOutcome, BackendUsage, HitsSource};
use super::canonical::canonical_url;
pub use super::cli_turn::{Parsed, Settings, prompt};
use super::pool::{Hit, interleave};
use super::{claude, codex};

/// How a program ended.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Exit {
    /// Its exit code; None when a signal ended it.
    pub status: Option<i32>,
    /// Everything it wrote to stdout.
    pub stdout: String,
    /// The end of its stderr.
    pub stderr: String,
}

/// Why a program did not run to its end.
#[derive(Debug, Clone, PartialEq)]
pub enum ExecError {
    /// Not granted to this plugin.
    Denied(String),
    /// Not installed, not on PATH, or its override is malformed.
    NotFound(String),
    /// Killed at the time limit (ms).
    TimedOut(u64),
    /// Killed for writing more than the cap (bytes).
    TooMuchOutput(u64),
    /// Its override is unusable, or the host could not set the run up.
    Failed(String),
}

/// The transport: the host's `exec` in a component, a script in tests.
pub trait Exec {
    /// Runs `program` with `args`, waiting at most `timeout_ms`.
    fn run(&mut self, program: &str, args: &[String], timeout_ms: u64) -> Result<Exit, ExecError>;
}

/// The per-call limit unless `SILT_SEARCH_TIMEOUT` (seconds) says otherwise.
pub const DEFAULT_TIMEOUT_MS: u64 = 90_000;

/// The CLIs silt can search through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cli {
    /// Claude Code (`claude -p`), searching with its WebSearch tool.
    Claude,
    /// Codex (`codex exec`), searching live.
    Codex,
}

impl Cli {
    /// The backend's name, which is also the program it is granted.
    pub fn name(self) -> &'static str {
        match self {
            Cli::Claude => "claude",
            Cli::Codex => "codex",
        }
    }

    /// The CLI a backend granted these programs drives: exactly one of
    /// `claude` and `codex`.
    pub fn from_granted(granted: &[String]) -> Result<Cli, String> {
        let known: Vec<Cli> = [Cli::Claude, Cli::Codex]
            .into_iter()
            .filter(|c| granted.iter().any(|g| g == c.name()))
            .collect();
        match known.as_slice() {
            [one] => Ok(*one),
            [] => Err(format!(
                "this backend is granted {granted:?}; it needs `exec` to grant \"claude\" or \"codex\""
            )),
            _ => Err("this backend is granted both claude and codex; grant exactly one".into()),
        }
    }
}

/// Settings' defaults are each CLI's own, so they are read here, where
/// both CLIs are known.
impl Settings {
    /// Reads `SILT_SEARCH_TIMEOUT` (seconds), the CLI's model and, for
    /// Codex, its effort; an unusable value is an error naming it.
    pub fn from_env(cli: Cli, env: impl Fn(&str) -> Option<String>) -> Result<Self, BackendError> {
        let set = |k: &str| {
            env(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let timeout_ms = match set("SILT_SEARCH_TIMEOUT") {
            None => DEFAULT_TIMEOUT_MS,
            Some(v) => match v.parse::<f64>() {
                Ok(s) if s > 0.0 && s <= 3600.0 => (s * 1000.0) as u64,
                _ => {
                    return Err(BackendError::InvalidRequest(format!(
                        "SILT_SEARCH_TIMEOUT is '{v}'; it must be seconds between 0 and 3600"
                    )));
                }
            },
        };
        Ok(match cli {
            Cli::Claude => Settings {
                timeout_ms,
                model: set("SILT_CLAUDE_SEARCH_MODEL").unwrap_or_else(|| claude::MODEL.into()),
                effort: None,
            },
            Cli::Codex => Settings {
                timeout_ms,
                model: set("SILT_CODEX_SEARCH_MODEL").unwrap_or_else(|| codex::MODEL.into()),
                effort: Some(
                    set("SILT_CODEX_SEARCH_EFFORT").unwrap_or_else(|| codex::EFFORT.into()),
                ),
            },
        })
    }
}

/// The links in a markdown reply's list items, as (title, url), in order:
/// the list the prompt asks for (a link in running prose is not a result).
pub fn reply_links(reply: &str) -> Vec<(String, String)> {
    let mut links = Vec::new();
    let mut open: Option<(String, String)> = None;
    let mut items = 0usize;
    for event in Parser::new(reply) {
        match event {
            Event::Start(Tag::Item) => items += 1,
            Event::End(TagEnd::Item) => items = items.saturating_sub(1),
            Event::Start(Tag::Link { dest_url, .. }) => {
                open = Some((String::new(), dest_url.to_string()))
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((title, _)) = open.as_mut() {
                    title.push_str(&t);
                }
            }
            Event::End(TagEnd::Link) => {
                if let Some((title, url)) = open.take()
                    && items > 0
                    && (url.starts_with("https://") || url.starts_with("http://"))
                {
                    links.push((title.trim().to_string(), url));
                }
            }
            _ => {}
        }
    }
    links
}

/// Searches `query` through `cli` for at most `count` hits.
pub fn search(
    exec: &mut dyn Exec,
    cli: Cli,
    settings: &Settings,
    query: &str,
    count: u32,
) -> Result<BackendOutcome, BackendError> {
    let name = cli.name();
    let args = match cli {
        Cli::Claude => claude::args(query, count, settings),
        Cli::Codex => codex::args(query, count, settings),
    };
    let exit = exec
        .run(name, &args, settings.timeout_ms)
        .map_err(|e| match e {
            ExecError::Denied(m) => {
                BackendError::NotConfigured(format!("the sandbox refused to run {name}: {m}"))
            }
            ExecError::NotFound(m) => BackendError::NotConfigured(format!(
                "{m}. The {name} backend needs the {name} CLI installed and logged in"
            )),
            ExecError::TimedOut(ms) if ms < settings.timeout_ms => {
                BackendError::Unavailable(format!(
                    "{name} search timed out after {} s, the most its plugin's wall clock \
                     allows (SILT_SEARCH_TIMEOUT asks {} s)",
                    ms as f64 / 1000.0,
                    settings.timeout_ms as f64 / 1000.0
                ))
            }
            ExecError::TimedOut(ms) => BackendError::Unavailable(format!(
                "{name} search timed out after {} s (SILT_SEARCH_TIMEOUT)",
                ms as f64 / 1000.0
            )),
            ExecError::TooMuchOutput(cap) => BackendError::Unavailable(format!(
                "{name} search wrote more than {cap} bytes and was stopped"
            )),
            ExecError::Failed(m) => {
                BackendError::Unavailable(format!("{name} search could not run: {m}"))
            }
        })?;
    let parsed = match cli {
        Cli::Claude => claude::parse(&exit.stdout),
        Cli::Codex => codex::parse(&exit.stdout),
    };
    outcome(name, cli, exit, parsed, count)
}

fn last_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("")
}

fn outcome(
    name: &str,
    cli: Cli,
    exit: Exit,
    parsed: Parsed,
    count: u32,
) -> Result<BackendOutcome, BackendError> {
    let failed = exit.status != Some(0) || parsed.error.is_some();
    if failed && parsed.hits.is_empty() {
        let code = exit.status.map_or_else(
            || "was killed by a signal".to_string(),
            |c| format!("exited {c}"),
        );
        let why = parsed
            .error
            .clone()
            .filter(|e| !e.is_empty())
            .unwrap_or_else(|| last_line(&exit.stderr).to_string());
        return Err(BackendError::Unavailable(format!(
            "{name} search {code}: {why}"
        )));
    }
    let links = reply_links(&parsed.reply);
    // one hit a page, in order: the pool's de-duplication, cut to `count`
    let hits = interleave(&[parsed.hits], count).hits;
    let (hits, source, unobserved) = if !hits.is_empty() {
        let observed: Vec<Option<String>> = hits.iter().map(|h| canonical_url(&h.url)).collect();
        let unobserved = links
            .iter()
            .filter(|(_, u)| !observed.contains(&canonical_url(u)))
            .count() as u32;
        let source = match cli {
            Cli::Claude => HitsSource::ToolResults,
            Cli::Codex => HitsSource::Events,
        };
        (hits, source, unobserved)
    } else if parsed.results_seen {
        // the CLI's own results said there was nothing
        (Vec::new(), HitsSource::Events, 0)
    } else if cli == Cli::Codex && parsed.searches > 0 {
        // Codex before 0.156.1 put only the query on its events: the
        // model's list is all there is
        let listed: Vec<Hit> = links
            .into_iter()
            .map(|(title, url)| Hit {
                url,
                title,
                ..Default::default()
            })
            .collect();
        (interleave(&[listed], count).hits, HitsSource::Transcript, 0)
    } else if parsed.searches == 0 {
        return Err(BackendError::Unavailable(format!(
            "{name} answered without searching the web{}",
            match last_line(&parsed.reply) {
                "" => String::new(),
                l => format!(": {}", l.chars().take(200).collect::<String>()),
            }
        )));
    } else if let Some(e) = parsed.search_errors.first() {
        return Err(BackendError::Unavailable(format!(
            "{name} web search failed: {e}"
        )));
    } else {
        (Vec::new(), HitsSource::ToolResults, 0)
    };
    Ok(BackendOutcome {
        hits,
        usage: BackendUsage {
            requests: parsed.searches,
            pages: 1,
            stopped: "single".into(),
            hits_source: source.as_str().into(),
            unobserved_links: unobserved,
            cost_usd: parsed.cost_usd,
            ..Default::default()
        },
    })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    #[test]
    fn reply_links_are_read_with_a_markdown_parser() {
        let reply = "See [prose](https://prose.example/).\n\n\
                     - [Tree-sitter | Install](https://tree-sitter.github.io/install)\n\
                     - [`cargo` book](http://doc.rust-lang.org/cargo/)\n\
                     - [local](./file.md)\n- plain text https://bare.example\n";
        assert_eq!(
            reply_links(reply),
            [
                (
                    "Tree-sitter | Install".to_string(),
                    "https://tree-sitter.github.io/install".to_string()
                ),
                (
                    "cargo book".to_string(),
                    "http://doc.rust-lang.org/cargo/".to_string()
                ),
            ]
        );
    }

    #[test]
    fn the_cli_comes_from_the_grant() {
        assert_eq!(Cli::from_granted(&["codex".into()]), Ok(Cli::Codex));
        assert_eq!(Cli::from_granted(&["claude".into()]), Ok(Cli::Claude));
        assert!(Cli::from_granted(&[]).is_err());
        assert!(Cli::from_granted(&["claude".into(), "codex".into()]).is_err());
    }

    #[test]
    fn settings_default_to_cheap_models_and_check_the_timeout() {
        let none = |_: &str| None;
        let s = Settings::from_env(Cli::Codex, none).unwrap();
        assert_eq!(
            (s.model.as_str(), s.effort.as_deref()),
            (codex::MODEL, Some("low"))
        );
        assert_eq!(s.timeout_ms, 90_000);
        let c = Settings::from_env(Cli::Claude, |k| {
            (k == "SILT_SEARCH_TIMEOUT").then(|| "2.5".to_string())
        })
        .unwrap();
        assert_eq!(
            (c.model.as_str(), c.timeout_ms, c.effort),
            (claude::MODEL, 2500, None)
        );
        for bad in ["0", "-1", "soon", "99999"] {
            let e = Settings::from_env(Cli::Claude, |k| {
                (k == "SILT_SEARCH_TIMEOUT").then(|| bad.to_string())
            })
            .unwrap_err();
            assert!(e.to_string().contains("SILT_SEARCH_TIMEOUT"), "{e}");
        }
    }

    /// Answers every run with one canned exit, and records each call as
    /// (program, args, timeout); the CLI tests share it.
    pub(in crate::search) struct Script(
        pub Result<Exit, ExecError>,
        pub Vec<(String, Vec<String>, u64)>,
    );

    impl Script {
        /// A program that prints `stdout` and exits `status`.
        pub fn printing(stdout: String, status: i32) -> Script {
            Script(
                Ok(Exit {
                    status: Some(status),
                    stdout,
                    stderr: String::new(),
                }),
                Vec::new(),
            )
        }
    }

    impl Exec for Script {
        fn run(&mut self, p: &str, a: &[String], t: u64) -> Result<Exit, ExecError> {
            self.1.push((p.to_string(), a.to_vec(), t));
            self.0.clone()
        }
    }

    fn settings(cli: Cli) -> Settings {
        Settings::from_env(cli, |_| None).unwrap()
    }

    #[test]
    fn exec_failures_say_what_to_do() {
        let cases = [
            (
                ExecError::NotFound("claude is not on PATH".into()),
                "installed and logged in",
            ),
            (ExecError::TimedOut(90_000), "timed out after 90 s"),
            (
                ExecError::Denied("not granted".into()),
                "refused to run claude",
            ),
            (ExecError::TooMuchOutput(8 << 20), "more than 8388608 bytes"),
            (
                ExecError::Failed("SILT_SEARCH_CMD_CLAUDE is set but".into()),
                "could not run: SILT",
            ),
        ];
        for (e, want) in cases {
            let mut s = Script(Err(e), Vec::new());
            let err = search(&mut s, Cli::Claude, &settings(Cli::Claude), "q", 5).unwrap_err();
            assert!(err.to_string().contains(want), "{err}");
            assert!(
                !err.to_string().contains("SILT_SEARXNG_URL"),
                "backend choice is the caller's"
            );
            assert_eq!(s.1[0].0, "claude");
            assert_eq!(s.1[0].2, 90_000);
        }
    }

    #[test]
    fn a_limit_capped_by_the_wall_clock_says_so() {
        let asked = Settings {
            timeout_ms: 300_000,
            ..settings(Cli::Codex)
        };
        let mut s = Script(Err(ExecError::TimedOut(115_000)), Vec::new());
        let err = search(&mut s, Cli::Codex, &asked, "q", 5)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("after 115 s, the most its plugin's wall clock allows"),
            "{err}"
        );
        assert!(err.contains("asks 300 s"), "{err}");
    }

    #[test]
    fn a_failed_run_reports_its_status_and_stderr() {
        let mut s = Script(
            Ok(Exit {
                status: Some(1),
                stdout: String::new(),
                stderr: "warming up\nError: not logged in\n".into(),
            }),
            Vec::new(),
        );
        let err = search(&mut s, Cli::Codex, &settings(Cli::Codex), "q", 5).unwrap_err();
        assert_eq!(
            err,
            BackendError::Unavailable("codex search exited 1: Error: not logged in".into())
        );
    }
}
