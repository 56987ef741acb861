//! The OpenAI-compatible judge: closed questions answered by a language
//! model behind any server that speaks OpenAI's API (llama.cpp's
//! llama-server, Ollama, vLLM, LM Studio, OpenAI, OpenRouter, Groq,
//! Together), read from the top log-probabilities of one answer token.
//! The prompts and the reading are `silt_core::closed`; this component
//! only carries them over `wasi:http` to the one server its grant names.

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

mod http;
mod settings;

wit_bindgen::generate!({
    path: "../../wit/judge",
    world: "silt:judge/lesson-judge-plugin",
    with: { "silt:judge/types@0.1.2": silt_guest::types },
});

use std::cell::RefCell;

use exports::silt::judge::judge::Guest;
use exports::silt::judge::relations::{Guest as RelationsGuest, LessonPair, Relation};
use exports::silt::judge::relations_by_index::{self as by_index, Guest as ByIndexGuest};
use silt_core::closed::openai::{self, Endpoint};
use silt_core::closed::{Outcome, Plan, ReadError, label_probabilities};
use silt_core::ledger::relate::{Lesson, RELATIONS, pairs_by_index};
use silt_core::types::{Answer, Usage};
use silt_guest::types::{Item, JudgeError, JudgeInfo, Question, Response};

use http::{Answered, PostError, Target};
use settings::Settings;

/// The settings and the endpoint the probe chose, kept while the
/// instance is warm.
struct State {
    settings: Settings,
    endpoint: Endpoint,
}

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
}

/// The settings, probing the server for an endpoint with log-probabilities
/// on first use.
fn with_state<T>(f: impl FnOnce(&State) -> Result<T, JudgeError>) -> Result<T, JudgeError> {
    STATE.with(|cell| {
        if cell.borrow().is_none() {
            let settings = Settings::from_env()?;
            let endpoint = match settings.endpoint {
                Some(e) => e,
                None => probe(&settings)?,
            };
            *cell.borrow_mut() = Some(State { settings, endpoint });
        }
        f(cell.borrow().as_ref().expect("set above"))
    })
}

/// The first endpoint whose reply carries log-probabilities: chat, then
/// the legacy completions, then llama.cpp's native API.
fn probe(settings: &Settings) -> Result<Endpoint, JudgeError> {
    let question = silt_core::types::Question {
        text: "Is the sky blue on a clear day?".into(),
        space: silt_core::types::AnswerSpace::Judge {
            yes: "yes".into(),
            no: "no".into(),
        },
    };
    let plan = Plan::ask(&question, &["a clear day"], silt_core::closed::Debias::None);
    let mut tried = Vec::new();
    for endpoint in Endpoint::ALL {
        let body = openai::body(
            endpoint,
            &settings.model,
            &plan.prompts[0],
            settings.top_logprobs,
        );
        let reply = send(settings, endpoint, &[body.to_string().into_bytes()])
            .pop()
            .expect("one reply");
        match reply {
            Ok(r) if !r.top.is_empty() => return Ok(endpoint),
            Ok(_) => tried.push(format!(
                "{} answered without log-probabilities",
                endpoint.path()
            )),
            Err(f) if f.every_endpoint => return Err(f.error),
            Err(f) => tried.push(format!("{}: {}", endpoint.path(), message(&f.error))),
        }
    }
    Err(JudgeError::Unsupported(format!(
        "the server at {} gives no token log-probabilities ({}); this judge needs them: use \
         llama-server, vLLM, Ollama 0.12 or later, or OpenAI's API",
        settings.base,
        tried.join("; ")
    )))
}

/// A request that got no usable reply.
struct Failure {
    error: JudgeError,
    /// The server is down, refuses us or is out of quota: another endpoint
    /// of the same server would fail the same way, so the probe stops.
    every_endpoint: bool,
}

impl Failure {
    fn server(error: JudgeError) -> Failure {
        Failure {
            error,
            every_endpoint: true,
        }
    }

    fn endpoint(error: JudgeError) -> Failure {
        Failure {
            error,
            every_endpoint: false,
        }
    }
}

fn message(e: &JudgeError) -> String {
    match e {
        JudgeError::InvalidQuestion(m)
        | JudgeError::Unsupported(m)
        | JudgeError::Unavailable(m)
        | JudgeError::LimitExceeded(m)
        | JudgeError::Internal(m) => m.clone(),
    }
}

/// Sends `bodies` to `endpoint` and reads each reply; an HTTP or transport
/// failure is the judge error it amounts to.
fn send(
    settings: &Settings,
    endpoint: Endpoint,
    bodies: &[Vec<u8>],
) -> Vec<Result<openai::Reply, Failure>> {
    let url = settings.url(endpoint);
    let target = Target {
        url: url::Url::parse(&url).expect("built from a parsed URL"),
        api_key: settings.api_key.clone(),
        timeout_ms: settings.timeout_ms,
        concurrency: settings.concurrency,
        attempts: settings.attempts,
    };
    target
        .post_all(bodies)
        .into_iter()
        .map(|r| reply(settings, &url, endpoint, r))
        .collect()
}

fn reply(
    settings: &Settings,
    url: &str,
    endpoint: Endpoint,
    r: Result<Answered, PostError>,
) -> Result<openai::Reply, Failure> {
    let answered = r.map_err(|e| {
        Failure::server(match e {
            PostError::Denied(why) => JudgeError::Unavailable(format!(
                "the sandbox refused to reach {url} ({why}): the judge may reach only the host \
                 in SILT_MODEL_URL as it was when silt started; restart silt after changing it"
            )),
            PostError::Unreachable(why) => JudgeError::Unavailable(format!(
                "cannot reach the model server at {} ({why}): start it, or point SILT_MODEL_URL \
                 at a running one",
                settings.base
            )),
        })
    })?;
    let words = || openai::error_message(&answered.body);
    match answered.status {
        200..=299 => openai::parse(endpoint, &answered.body).map_err(|e| {
            Failure::endpoint(JudgeError::Unavailable(format!(
                "{url} answered oddly: {e}"
            )))
        }),
        401 | 403 => Err(Failure::server(JudgeError::Unavailable(format!(
            "{url} refused the request (HTTP {}: {}); set SILT_MODEL_API_KEY to a valid key",
            answered.status,
            words()
        )))),
        429 => Err(Failure::server(JudgeError::LimitExceeded(format!(
            "{url} kept answering HTTP 429 (up to {} attempts within SILT_MODEL_TIMEOUT_MS, \
             {} ms): {}",
            settings.attempts,
            settings.timeout_ms,
            words()
        )))),
        s => Err(Failure::endpoint(JudgeError::Unavailable(format!(
            "{url} answered HTTP {s}: {}",
            words()
        )))),
    }
}

/// Runs a plan: every prompt to the server, every reply read; each item's
/// outcome and the usage.
fn run(state: &State, plan: &Plan) -> Result<(Vec<Outcome>, Usage), JudgeError> {
    let s = &state.settings;
    let bodies: Vec<Vec<u8>> = plan
        .prompts
        .iter()
        .map(|p| {
            openai::body(state.endpoint, &s.model, p, s.top_logprobs)
                .to_string()
                .into_bytes()
        })
        .collect();
    let labels = plan.labels();
    let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
    let mut usage = Usage::default();
    let mut read = Vec::with_capacity(bodies.len());
    for (reply, prompt) in send(s, state.endpoint, &bodies)
        .into_iter()
        .zip(&plan.prompts)
    {
        let reply = reply.map_err(|f| f.error)?;
        let input = reply.prompt_tokens.unwrap_or_else(|| {
            silt_core::text::estimate_tokens(prompt.system.len() + prompt.user.len())
        });
        usage.input_tokens += input;
        usage.output_tokens += reply.completion_tokens.unwrap_or(1);
        read.push(label_probabilities(&reply.top, &labels));
    }
    usage.cost_usd =
        (usage.input_tokens as f64 * s.price_in + usage.output_tokens as f64 * s.price_out) / 1e6;
    let outcomes = plan.outcomes(&read).map_err(|e| match e {
        ReadError::NoLogprobs => JudgeError::Unsupported(format!(
            "{} sent no log-probabilities for some requests; set SILT_MODEL_ENDPOINT to another \
             endpoint or use a server that returns them",
            s.url(state.endpoint)
        )),
        other => JudgeError::Internal(other.to_string()),
    })?;
    Ok((outcomes, usage))
}

struct OpenAi;

impl Guest for OpenAi {
    fn info() -> JudgeInfo {
        let settings = match Settings::from_env() {
            Ok(s) => s,
            Err(e) => {
                return JudgeInfo {
                    name: "openai".into(),
                    version: format!(
                        "{}+unconfigured ({})",
                        env!("CARGO_PKG_VERSION"),
                        message(&e)
                    ),
                    deterministic: true,
                    cost_per_million_input_tokens: 0.0,
                    preferred_batch_size: 8,
                };
            }
        };
        // the probe's choice when the server answers now; the answers of an
        // unprobed judge are still kept apart by model and server
        let endpoint = with_state(|state| Ok(state.endpoint.name())).unwrap_or("unprobed");
        let per_item = silt_core::closed::debias::orders(2, settings.debias).len() as f64;
        JudgeInfo {
            name: "openai".into(),
            // the answer cache keys on this: another model, server,
            // endpoint or correction never reuses these answers
            version: format!(
                "{}+{}@{}/{}/{}",
                env!("CARGO_PKG_VERSION"),
                settings.model,
                settings.authority(),
                endpoint,
                settings.debias.name()
            ),
            deterministic: true,
            // what one yes/no item's tokens cost, rotations included
            cost_per_million_input_tokens: settings.price_in * per_item,
            preferred_batch_size: (settings.concurrency * 4) as u32,
        }
    }

    fn ask(question: Question, items: Vec<Item>) -> Result<Response, JudgeError> {
        let question: silt_core::types::Question = question.into();
        silt_core::validate::validate_question(&question).map_err(JudgeError::InvalidQuestion)?;
        let n = question.space.criteria().len();
        if n > silt_core::closed::prompt::MAX_OPTIONS {
            return Err(JudgeError::Unsupported(format!(
                "{n} options; this judge labels at most {}",
                silt_core::closed::prompt::MAX_OPTIONS
            )));
        }
        with_state(|state| {
            let texts: Vec<&str> = items.iter().map(|i| i.text.as_str()).collect();
            let plan = Plan::ask(&question, &texts, state.settings.debias);
            let (outcomes, mut usage) = run(state, &plan)?;
            usage.units = items.len() as u32;
            let answers = outcomes
                .into_iter()
                .map(|o| Answer::from_probabilities(&question.space, o.probabilities(n)))
                .collect();
            Ok(silt_core::types::Response { answers, usage }.into())
        })
    }
}

impl RelationsGuest for OpenAi {
    fn relate(pairs: Vec<LessonPair>) -> Result<Vec<Relation>, JudgeError> {
        let lessons: Vec<(Lesson<'_>, Lesson<'_>)> = pairs
            .iter()
            .map(|p| {
                (
                    Lesson {
                        when: &p.a.when,
                        prefer: &p.a.prefer,
                    },
                    Lesson {
                        when: &p.b.when,
                        prefer: &p.b.prefer,
                    },
                )
            })
            .collect();
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

impl ByIndexGuest for OpenAi {
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

/// The model's relation for each pair, in silt_core's relation order.
fn relate_lessons(pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Result<Vec<[f64; 4]>, JudgeError> {
    with_state(|state| {
        let plan = Plan::relate(pairs, state.settings.debias);
        let (outcomes, _) = run(state, &plan)?;
        Ok(outcomes
            .into_iter()
            .map(|o| {
                // the plan asks in silt_core's relation order
                let p = o.probabilities(RELATIONS.len());
                [p[0], p[1], p[2], p[3]]
            })
            .collect())
    })
}

export!(OpenAi);
