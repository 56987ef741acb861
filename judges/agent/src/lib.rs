//! The agent judge: closed questions answered by the agent CLI the user
//! is logged into (`claude -p`, or `codex exec` with
//! `SILT_AGENT_CLI=codex`), a batch of numbered items a run, the model
//! stating each option's probability as JSON. The prompts, the command
//! lines and the reading are `silt_core::closed::{stated, agent}`; this
//! component only runs the CLI through the host's `exec`, which runs
//! nothing but the programs its manifest grants. It has no network.

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

wit_bindgen::generate!({
    path: ["../../wit/judge", "../../wit/search"],
    inline: "package silt:agent-judge;
        world plugin {
            import silt:search/exec@0.2.0;
            include silt:judge/lesson-judge-plugin@0.1.2;
        }",
    world: "silt:agent-judge/plugin",
    with: { "silt:judge/types@0.1.2": silt_guest::types },
    generate_all,
});

use exports::silt::judge::judge::Guest;
use silt::search::exec;
use silt_core::closed::agent::{self, Settings};
use silt_core::closed::{Prompt, stated};
use silt_core::ledger::relate::{Lesson, Relation};
use silt_core::search::cli::{self, ExecError, Exit};
use silt_guest::types::{Item, JudgeError, JudgeInfo, Question, Response};

/// `silt_core`'s runs over the host's `exec`.
struct HostExec;

impl cli::Exec for HostExec {
    fn run(&mut self, program: &str, args: &[String], timeout_ms: u64) -> Result<Exit, ExecError> {
        exec::run(program, args, timeout_ms)
            .map(|e| Exit {
                status: e.status,
                stdout: e.stdout,
                stderr: e.stderr,
            })
            .map_err(|e| match e {
                exec::ExecError::Denied(m) => ExecError::Denied(m),
                exec::ExecError::NotFound(m) => ExecError::NotFound(m),
                exec::ExecError::TimedOut(ms) => ExecError::TimedOut(ms),
                exec::ExecError::TooMuchOutput(n) => ExecError::TooMuchOutput(n),
                exec::ExecError::Failed(m) => ExecError::Failed(m),
            })
    }
}

/// The settings from the granted environment and programs.
fn settings() -> Result<Settings, silt_core::types::JudgeError> {
    Settings::from_env(&exec::granted(), |k| std::env::var(k).ok())
}

/// Each of `n` items' distribution over `options` options, one run of
/// the CLI per batch.
fn answer(n: usize, options: usize, prompt: &dyn Fn(&[usize]) -> Prompt) -> stated::Answered {
    agent::answer(
        &mut HostExec,
        &settings()?,
        n,
        options,
        stated::BATCH_ITEMS,
        prompt,
    )
}

struct Agent;

impl Guest for Agent {
    fn info() -> JudgeInfo {
        let (version, price) = match settings() {
            Ok(s) => (s.describe(), s.price_in),
            Err(e) => (format!("unconfigured ({e})"), 0.0),
        };
        JudgeInfo {
            name: "agent".into(),
            version: format!("{}+{version}", env!("CARGO_PKG_VERSION")),
            // the CLIs sample at their own temperature: the same batch may
            // be answered a little differently, so answers are not cached
            deterministic: false,
            // what the budget plans with; each run reports its own cost
            cost_per_million_input_tokens: price,
            preferred_batch_size: stated::BATCH_ITEMS as u32,
        }
    }

    fn ask(question: Question, items: Vec<Item>) -> Result<Response, JudgeError> {
        let texts: Vec<&str> = items.iter().map(|i| i.text.as_str()).collect();
        stated::ask_with(&question.into(), &texts, answer)
            .map(Into::into)
            .map_err(Into::into)
    }
}

silt_guest::lesson_relations!(Agent, relate_lessons);

/// The model's relation for each pair, in silt_core's relation order.
fn relate_lessons(
    pairs: &[(Lesson<'_>, Lesson<'_>)],
) -> Result<Vec<Relation>, silt_core::types::JudgeError> {
    stated::relate_with(pairs, answer)
}

export!(Agent);
