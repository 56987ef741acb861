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
use exports::silt::judge::relations::{Guest as RelationsGuest, LessonPair, Relation};
use exports::silt::judge::relations_by_index::{self as by_index, Guest as ByIndexGuest};
use silt::search::exec;
use silt_core::closed::agent::{self, Settings};
use silt_core::closed::prompt::MAX_OPTIONS;
use silt_core::closed::stated;
use silt_core::ledger::relate::{Lesson, RELATIONS, pairs_by_index};
use silt_core::search::cli::{self, ExecError, Exit};
use silt_core::types::Answer;
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
fn settings() -> Result<Settings, JudgeError> {
    Settings::from_env(&exec::granted(), |k| std::env::var(k).ok()).map_err(Into::into)
}

/// Each of `n` items' distribution over `options` options.
fn answer(
    n: usize,
    options: usize,
    prompt: impl Fn(&[usize]) -> silt_core::closed::Prompt,
) -> Result<(Vec<Vec<f64>>, silt_core::types::Usage), JudgeError> {
    let settings = settings()?;
    agent::answer(
        &mut HostExec,
        &settings,
        n,
        options,
        stated::BATCH_ITEMS,
        prompt,
    )
    .map_err(Into::into)
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
        let question: silt_core::types::Question = question.into();
        silt_core::validate::validate_question(&question).map_err(JudgeError::InvalidQuestion)?;
        let n = question.space.criteria().len();
        if n > MAX_OPTIONS {
            return Err(JudgeError::Unsupported(format!(
                "{n} options; this judge labels at most {MAX_OPTIONS}"
            )));
        }
        let texts: Vec<&str> = items.iter().map(|i| i.text.as_str()).collect();
        let (read, mut usage) = answer(texts.len(), n, |places| {
            let batch: Vec<&str> = places.iter().map(|&i| texts[i]).collect();
            stated::ask(&question, &batch)
        })?;
        usage.units = items.len() as u32;
        let answers = read
            .into_iter()
            .map(|p| Answer::from_probabilities(&question.space, p))
            .collect();
        Ok(silt_core::types::Response { answers, usage }.into())
    }
}

impl RelationsGuest for Agent {
    fn relate(pairs: Vec<LessonPair>) -> Result<Vec<Relation>, JudgeError> {
        fn view(l: &exports::silt::judge::relations::Lesson) -> Lesson<'_> {
            Lesson {
                when: &l.when,
                prefer: &l.prefer,
            }
        }
        let lessons: Vec<(Lesson<'_>, Lesson<'_>)> =
            pairs.iter().map(|p| (view(&p.a), view(&p.b))).collect();
        Ok(relate_lessons(&lessons)?
            .into_iter()
            .map(|[merge, contradict, sibling, distinct]| Relation {
                merge,
                contradict,
                sibling,
                distinct,
            })
            .collect())
    }
}

impl ByIndexGuest for Agent {
    fn relate(
        lessons: Vec<by_index::Lesson>,
        pairs: Vec<(u32, u32)>,
    ) -> Result<Vec<by_index::Relation>, JudgeError> {
        let pairs = pairs_by_index(&lessons, &pairs, |l| Lesson {
            when: &l.when,
            prefer: &l.prefer,
        })
        .map_err(JudgeError::InvalidQuestion)?;
        Ok(relate_lessons(&pairs)?
            .into_iter()
            .map(
                |[merge, contradict, sibling, distinct]| by_index::Relation {
                    merge,
                    contradict,
                    sibling,
                    distinct,
                },
            )
            .collect())
    }
}

/// The model's relation for each pair, in silt_core's relation order
/// (the order `stated::relate` offers them in).
fn relate_lessons(pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Result<Vec<[f64; 4]>, JudgeError> {
    let (read, _) = answer(pairs.len(), RELATIONS.len(), |places| {
        let batch: Vec<(Lesson<'_>, Lesson<'_>)> =
            places.iter().map(|&i| pairs[i].clone()).collect();
        stated::relate(&batch)
    })?;
    Ok(read.into_iter().map(|p| [p[0], p[1], p[2], p[3]]).collect())
}

export!(Agent);
