//! `sieve_triage_threads`: which agent threads wait on a human. Code lists
//! candidate requests (assistant sentences that ask something of the
//! human); the judge answers separate yes/no questions about each: is it a
//! request, did later human dialogue answer it, did the assistant withdraw
//! it, does the latest assistant statement say progress is blocked on it.
//! Long later dialogue is read in overlapping windows (the strongest window
//! counts). The reference's own evaluation found this no better than
//! scoring whole windows, so the result is a filter to inspect, not a
//! ranking to trust.

use crate::ask::{self, AskError, AskUsage, round4};
use crate::budget::Budget;
use crate::text::cut_chars;
use crate::types::{AnswerSpace, Judge, Question};

/// Characters of later dialogue one window holds, and how far windows overlap.
pub const WINDOW_CHARS: usize = 3000;
/// Characters each window shares with the one before it.
pub const WINDOW_OVERLAP: usize = 500;
/// The most characters of a candidate's own message read with it.
pub const MESSAGE_CHARS: usize = 1500;
/// The most threads and events one call reads.
pub const MAX_THREADS: usize = 200;
/// The most events one call reads, over all its threads.
pub const MAX_EVENTS: usize = 20_000;
/// p(request) from which a candidate counts as a request, when the caller
/// sets no threshold.
pub const DEFAULT_REQUEST_THRESHOLD: f64 = 0.5;

/// One event of a thread, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The caller's id for the event, echoed in results.
    pub id: String,
    /// As the caller records time; triage does not read it.
    pub ts: String,
    /// `user`/`human`, `assistant`, or anything else (tools, system).
    pub role: String,
    /// `message` for prose; tool calls and results are other kinds.
    pub kind: String,
    /// What was said or done.
    pub text: String,
}

/// What the human asked of the thread.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Contract {
    /// The thread's title as the caller has it; no question reads it.
    pub title: String,
    /// The human's opening prompt.
    pub first_prompt: String,
    /// What the human added or changed since; read with the first prompt
    /// for acceptance criteria.
    pub human_amendments: Vec<String>,
}

/// One agent thread.
#[derive(Debug, Clone, PartialEq)]
pub struct Thread {
    /// The caller's id for the thread, echoed in results.
    pub thread_id: String,
    /// The thread's history, oldest first.
    pub events: Vec<Event>,
    /// What the human asked of it.
    pub contract: Contract,
    /// e.g. `running`, `idle`, `done`.
    pub status: Option<String>,
    /// Orders threads within a bucket, highest first (None counts as 0).
    pub journal_priority: Option<f64>,
    /// False when the events are a tail of a longer history.
    pub complete: bool,
}

/// One triage call.
#[derive(Debug, Clone, PartialEq)]
pub struct TriageRequest {
    /// At most [`MAX_THREADS`], with at most [`MAX_EVENTS`] events in all.
    pub threads: Vec<Thread>,
    /// The most the call may spend, in US dollars.
    pub budget_usd: f64,
    /// p(request) from which a candidate counts as a request, in [0, 1].
    pub request_threshold: f64,
}

/// A candidate request and what the judge said of it.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestResult {
    /// The assistant event it was found in.
    pub event_id: String,
    /// The candidate sentence.
    pub text: String,
    /// p(it asks the human for input, a decision or an action).
    pub request: Option<f64>,
    /// p(later human dialogue answered it); None when unknown (a truncated
    /// history with no later human turn) or not judged.
    pub answered: Option<f64>,
    /// p(the assistant withdrew or settled it itself).
    pub withdrawn: Option<f64>,
    /// p(the latest assistant statement says progress waits on it).
    pub blocking: Option<f64>,
    /// The events read to answer: the request's and those after it.
    pub source_event_ids: Vec<String>,
    /// request ≥ threshold, and neither answered nor withdrawn (< 0.5).
    pub open: bool,
}

/// One thread's triage.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadResult {
    /// The thread's id, as given.
    pub thread_id: String,
    /// `blocked` (an open request the agent says it waits on),
    /// `needs_input` (an open request), `unknown` (a request whose answer
    /// lies outside a truncated history), or `clear`.
    pub bucket: &'static str,
    /// `full` or `truncated`.
    pub coverage: &'static str,
    /// The snapshot scored: its last event and how many events it had.
    pub last_event_id: Option<String>,
    /// Events in the snapshot.
    pub events: u32,
    /// When the contract states acceptance criteria: p(exactly one action
    /// remains to meet them).
    pub one_action_remains: Option<f64>,
    /// The thread's candidate requests, in the order found.
    pub requests: Vec<RequestResult>,
    /// The thread's journal priority, as given.
    pub journal_priority: Option<f64>,
}

/// The result of a triage call.
#[derive(Debug, Clone, PartialEq)]
pub struct TriageOutcome {
    /// Most urgent bucket first, then journal priority (highest first),
    /// then thread id.
    pub threads: Vec<ThreadResult>,
    /// What every judge call cost together.
    pub usage: AskUsage,
}

fn is_human(role: &str) -> bool {
    matches!(role, "user" | "human")
}

fn is_prose(e: &Event) -> bool {
    matches!(e.kind.as_str(), "message" | "text" | "")
}

/// Words that mark a sentence as possibly asking something of the human;
/// the judge decides whether it really does.
const CUES: &[&str] = &[
    "let me know",
    "please",
    "should i",
    "shall i",
    "do you want",
    "would you like",
    "would you prefer",
    "can you",
    "could you",
    "need your",
    "need you",
    "waiting for",
    "waiting on",
    "approve",
    "confirm",
    "which option",
    "your call",
    "your decision",
    "your input",
    "up to you",
];

/// Candidate requests in an assistant message: its sentences that end in
/// a question mark or carry a request cue.
pub fn candidates(text: &str) -> Vec<String> {
    crate::verify::report::sentences(text)
        .into_iter()
        .map(|(s, e)| text[s..e].split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| {
            let lower = s.to_lowercase();
            s.ends_with('?') || CUES.iter().any(|c| lower.contains(c))
        })
        .collect()
}

/// `text` in windows of [`WINDOW_CHARS`] overlapping by [`WINDOW_OVERLAP`].
pub fn windows(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= WINDOW_CHARS {
        return vec![text.to_string()];
    }
    let step = WINDOW_CHARS - WINDOW_OVERLAP;
    let mut out = Vec::new();
    let mut start = 0;
    loop {
        let end = (start + WINDOW_CHARS).min(chars.len());
        out.push(chars[start..end].iter().collect());
        if end == chars.len() {
            break;
        }
        start += step;
    }
    out
}

/// The contract states acceptance criteria when it says what "done" is.
fn acceptance_criteria(c: &Contract) -> Option<String> {
    let all = std::iter::once(c.first_prompt.as_str())
        .chain(c.human_amendments.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("\n");
    let lower = all.to_lowercase();
    [
        "acceptance criteria",
        "done when",
        "definition of done",
        "success criteria",
    ]
    .iter()
    .any(|m| lower.contains(m))
    .then_some(all)
}

fn yes_no(text: &str, yes: &str, no: &str) -> Question {
    Question {
        text: text.into(),
        space: AnswerSpace::Judge {
            yes: yes.into(),
            no: no.into(),
        },
    }
}

fn q_request() -> Question {
    yes_no(
        "Does the assistant's sentence ask the human for something?",
        "It asks the human for input, a decision, an approval or an action.",
        "It informs, narrates or asks itself; nothing is asked of the human.",
    )
}

fn q_answered() -> Question {
    yes_no(
        "Does the human's later dialogue answer the assistant's request?",
        "The human replies to the request: gives the input, decides or acts on it.",
        "The human's turns are about something else or do not settle the request.",
    )
}

fn q_withdrawn() -> Question {
    yes_no(
        "Did the assistant later withdraw the request or settle it itself?",
        "The assistant says it no longer needs it, decided itself, or found the answer.",
        "The assistant still needs the human on this request.",
    )
}

fn q_blocking() -> Question {
    yes_no(
        "Does the assistant's latest statement say its progress waits on the request?",
        "The latest statement says the work is blocked, paused or waiting for the human.",
        "The latest statement reports progress or work that goes on without the human.",
    )
}

fn q_one_action() -> Question {
    yes_no(
        "Given the acceptance criteria, does exactly one action remain?",
        "Exactly one action remains before the acceptance criteria are met.",
        "Several actions remain, or none does.",
    )
}

/// One question asked of many texts under the call's budget.
fn ask_all(
    judge: &mut dyn Judge,
    question: Question,
    items: Vec<String>,
    budget: &mut Budget,
    usage: &mut AskUsage,
) -> Result<Vec<Option<f64>>, AskError> {
    ask::yes_probabilities(
        judge,
        question,
        items,
        ask::DEFAULT_MAX_CHARS,
        ask::MAX_BATCH,
        budget,
        usage,
    )
}

/// The highest probability over each candidate's windows.
fn max_by_owner(owners: &[usize], p: &[Option<f64>], n: usize) -> Vec<Option<f64>> {
    let mut out: Vec<Option<f64>> = vec![None; n];
    for (&o, v) in owners.iter().zip(p) {
        if let Some(v) = v {
            out[o] = Some(out[o].map_or(*v, |m: f64| m.max(*v)));
        }
    }
    out
}

fn validate(req: &TriageRequest) -> Result<(), AskError> {
    let bad = |m: String| Err(AskError::InvalidRequest(m));
    if req.threads.is_empty() {
        return bad("threads is empty; give at least one thread".into());
    }
    if req.threads.len() > MAX_THREADS {
        return bad(format!(
            "{} threads is more than the {MAX_THREADS} one call reads",
            req.threads.len()
        ));
    }
    let events: usize = req.threads.iter().map(|t| t.events.len()).sum();
    if events > MAX_EVENTS {
        return bad(format!(
            "{events} events is more than the {MAX_EVENTS} one call reads; send tails"
        ));
    }
    if !(0.0..=1.0).contains(&req.request_threshold) {
        return bad(format!(
            "request_threshold is {}, it must be between 0 and 1",
            req.request_threshold
        ));
    }
    if !req.budget_usd.is_finite() || req.budget_usd < 0.0 {
        return bad(format!(
            "budget_usd is {}, it must be a number >= 0",
            req.budget_usd
        ));
    }
    for (i, t) in req.threads.iter().enumerate() {
        if t.thread_id.trim().is_empty() {
            return bad(format!("threads[{i}].thread_id is empty"));
        }
        if let Some(j) = t.events.iter().position(|e| e.id.trim().is_empty()) {
            return bad(format!("threads[{i}].events[{j}].id is empty"));
        }
    }
    Ok(())
}

/// A candidate found in a thread, with what its questions read.
struct Candidate {
    thread: usize,
    event: usize,
    text: String,
    /// The request and its message.
    ask_item: String,
    /// Later human turns (None: there are none).
    later_human: Option<String>,
    later_assistant: Option<String>,
    latest_assistant: Option<String>,
}

fn joined(events: &[&Event]) -> Option<String> {
    (!events.is_empty()).then(|| {
        events
            .iter()
            .map(|e| format!("[{}] {}", e.role, e.text.trim()))
            .collect::<Vec<_>>()
            .join("\n\n")
    })
}

/// Runs a triage call.
pub fn run(judge: &mut dyn Judge, req: &TriageRequest) -> Result<TriageOutcome, AskError> {
    validate(req)?;
    let mut cands: Vec<Candidate> = Vec::new();
    for (ti, t) in req.threads.iter().enumerate() {
        let latest = t
            .events
            .iter()
            .rev()
            .find(|e| e.role == "assistant" && is_prose(e))
            .map(|e| e.text.clone());
        for (ei, e) in t.events.iter().enumerate() {
            if e.role != "assistant" || !is_prose(e) {
                continue;
            }
            let after = &t.events[ei + 1..];
            let human: Vec<&Event> = after.iter().filter(|x| is_human(&x.role)).collect();
            let assistant: Vec<&Event> = after
                .iter()
                .filter(|x| x.role == "assistant" && is_prose(x))
                .collect();
            for text in candidates(&e.text) {
                cands.push(Candidate {
                    thread: ti,
                    event: ei,
                    ask_item: format!(
                        "{text}\n\n(from the message: {})",
                        cut_chars(&e.text, MESSAGE_CHARS)
                    ),
                    later_human: joined(&human).map(|d| format!("Request: {text}\n\n{d}")),
                    later_assistant: joined(&assistant).map(|d| format!("Request: {text}\n\n{d}")),
                    latest_assistant: latest
                        .as_ref()
                        .map(|l| format!("Request: {text}\n\nLatest statement: {l}")),
                    text,
                });
            }
        }
    }

    let mut usage = AskUsage::default();
    let cost = judge.info().cost_per_million_input_tokens;
    let mut budget = Budget::new(req.budget_usd, cost);
    let n = cands.len();
    let p_request = ask_all(
        judge,
        q_request(),
        cands.iter().map(|c| c.ask_item.clone()).collect(),
        &mut budget,
        &mut usage,
    )?;
    // only candidates that are requests get the follow-up questions
    let is_request = |i: usize| p_request[i].is_some_and(|p| p >= req.request_threshold);
    let windowed = |pick: &dyn Fn(&Candidate) -> Option<&String>| {
        let mut owners = Vec::new();
        let mut items = Vec::new();
        for (i, c) in cands.iter().enumerate() {
            if let Some(text) = pick(c).filter(|_| is_request(i)) {
                for w in windows(text) {
                    owners.push(i);
                    items.push(w);
                }
            }
        }
        (owners, items)
    };
    let (owners, items) = windowed(&|c| c.later_human.as_ref());
    let p = ask_all(judge, q_answered(), items, &mut budget, &mut usage)?;
    let p_answered = max_by_owner(&owners, &p, n);
    let (owners, items) = windowed(&|c| c.later_assistant.as_ref());
    let p = ask_all(judge, q_withdrawn(), items, &mut budget, &mut usage)?;
    let p_withdrawn = max_by_owner(&owners, &p, n);
    // a running agent that has moved on since the request is not blocked
    let moved_on = |c: &Candidate| {
        let t = &req.threads[c.thread];
        t.status.as_deref() == Some("running")
            && t.events[c.event + 1..]
                .iter()
                .any(|e| e.role == "assistant")
    };
    let (owners, items) = windowed(&|c| {
        if moved_on(c) {
            None
        } else {
            c.latest_assistant.as_ref()
        }
    });
    let p = ask_all(judge, q_blocking(), items, &mut budget, &mut usage)?;
    let p_blocking = max_by_owner(&owners, &p, n);
    let criteria: Vec<(usize, String)> = req
        .threads
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let ac = acceptance_criteria(&t.contract)?;
            let latest = t
                .events
                .iter()
                .rev()
                .find(|e| e.role == "assistant" && is_prose(e))?;
            Some((
                i,
                format!(
                    "Acceptance criteria:\n{ac}\n\nLatest statement: {}",
                    latest.text
                ),
            ))
        })
        .collect();
    let p_one = ask_all(
        judge,
        q_one_action(),
        criteria.iter().map(|(_, t)| t.clone()).collect(),
        &mut budget,
        &mut usage,
    )?;

    let mut threads: Vec<ThreadResult> = req
        .threads
        .iter()
        .enumerate()
        .map(|(ti, t)| ThreadResult {
            thread_id: t.thread_id.clone(),
            bucket: "clear",
            coverage: if t.complete { "full" } else { "truncated" },
            last_event_id: t.events.last().map(|e| e.id.clone()),
            events: t.events.len() as u32,
            one_action_remains: criteria
                .iter()
                .position(|(i, _)| *i == ti)
                .and_then(|k| p_one[k])
                .map(round4),
            requests: Vec::new(),
            journal_priority: t.journal_priority,
        })
        .collect();
    for (i, c) in cands.iter().enumerate() {
        let t = &req.threads[c.thread];
        let requested = is_request(i);
        // with the whole history, no later human turn means unanswered;
        // with a tail, the answer may lie outside it
        let answered = match (&c.later_human, t.complete) {
            (Some(_), _) => p_answered[i],
            (None, true) if requested => Some(0.0),
            _ => None,
        };
        let blocking = if requested && moved_on(c) {
            Some(0.0)
        } else {
            p_blocking[i]
        };
        let withdrawn =
            p_withdrawn[i].or((requested && c.later_assistant.is_none()).then_some(0.0));
        let settled = answered.is_some_and(|p| p >= 0.5) || withdrawn.is_some_and(|p| p >= 0.5);
        let open = requested && answered.is_some() && !settled;
        let row = &mut threads[c.thread];
        let urgency = |b: &str| {
            ["clear", "unknown", "needs_input", "blocked"]
                .iter()
                .position(|x| *x == b)
        };
        let bucket = if open && blocking.is_some_and(|p| p >= 0.5) {
            "blocked"
        } else if open {
            "needs_input"
        } else if requested && answered.is_none() && !settled {
            "unknown"
        } else {
            "clear"
        };
        if urgency(bucket) > urgency(row.bucket) {
            row.bucket = bucket;
        }
        row.requests.push(RequestResult {
            event_id: t.events[c.event].id.clone(),
            text: c.text.clone(),
            request: p_request[i].map(round4),
            answered: answered.map(round4),
            withdrawn: withdrawn.map(round4),
            blocking: blocking.map(round4),
            source_event_ids: t.events[c.event..].iter().map(|e| e.id.clone()).collect(),
            open,
        });
    }
    let rank = |b: &str| match b {
        "blocked" => 0,
        "needs_input" => 1,
        "unknown" => 2,
        _ => 3,
    };
    threads.sort_by(|a, b| {
        rank(a.bucket)
            .cmp(&rank(b.bucket))
            .then(
                b.journal_priority
                    .unwrap_or(0.0)
                    .total_cmp(&a.journal_priority.unwrap_or(0.0)),
            )
            .then(a.thread_id.cmp(&b.thread_id))
    });
    Ok(TriageOutcome { threads, usage })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Answer, Item, JudgeError, JudgeInfo, Response, Usage};

    /// Answers by keywords, as a model would by meaning: a request asks
    /// "which", an answer says "go with", a withdrawal says "never mind",
    /// a blocked statement says "waiting".
    struct Keywords {
        asked: Vec<(String, usize)>,
    }

    impl Judge for Keywords {
        fn info(&mut self) -> JudgeInfo {
            JudgeInfo {
                name: "keywords".into(),
                version: "1".into(),
                deterministic: true,
                cost_per_million_input_tokens: 0.0,
                preferred_batch_size: 40,
            }
        }

        fn ask(&mut self, q: &Question, items: &[Item]) -> Result<Response, JudgeError> {
            self.asked.push((q.text.clone(), items.len()));
            let word = if q.text.contains("ask the human") {
                "which"
            } else if q.text.contains("answer the assistant") {
                "go with"
            } else if q.text.contains("withdraw") {
                "never mind"
            } else if q.text.contains("waits on") {
                "waiting"
            } else {
                "one step"
            };
            Ok(Response {
                answers: items
                    .iter()
                    .map(|i| {
                        Answer::YesProbability(if i.text.to_lowercase().contains(word) {
                            0.9
                        } else {
                            0.1
                        })
                    })
                    .collect(),
                usage: Usage::default(),
            })
        }
    }

    fn ev(id: &str, role: &str, text: &str) -> Event {
        Event {
            id: id.into(),
            ts: id.into(),
            role: role.into(),
            kind: "message".into(),
            text: text.into(),
        }
    }

    fn thread(id: &str, events: Vec<Event>) -> Thread {
        Thread {
            thread_id: id.into(),
            events,
            contract: Contract::default(),
            status: None,
            journal_priority: None,
            complete: true,
        }
    }

    fn run_on(threads: Vec<Thread>) -> (TriageOutcome, Vec<(String, usize)>) {
        let mut j = Keywords { asked: vec![] };
        let out = run(
            &mut j,
            &TriageRequest {
                threads,
                budget_usd: 0.5,
                request_threshold: DEFAULT_REQUEST_THRESHOLD,
            },
        )
        .unwrap();
        (out, j.asked)
    }

    #[test]
    fn candidates_are_questions_and_cued_sentences() {
        assert_eq!(
            candidates(
                "I fixed the build. Which option do you prefer? Please confirm the name. Done."
            ),
            ["Which option do you prefer?", "Please confirm the name."]
        );
        assert!(candidates("All tests pass. Shipping now.").is_empty());
    }

    #[test]
    fn windows_overlap_and_cover_everything() {
        let text = "x".repeat(7000);
        let w = windows(&text);
        assert_eq!(w.len(), 3);
        assert!(w.iter().all(|s| s.chars().count() <= WINDOW_CHARS));
        assert_eq!(
            w.iter().map(|s| s.len()).sum::<usize>() - 2 * WINDOW_OVERLAP,
            7000
        );
        assert_eq!(windows("short"), ["short"]);
    }

    #[test]
    fn buckets_follow_the_answers() {
        let (out, asked) = run_on(vec![
            thread(
                "answered",
                vec![
                    ev("1", "assistant", "Which database should I use?"),
                    ev("2", "user", "Go with Postgres."),
                ],
            ),
            thread(
                "blocked",
                vec![
                    ev("1", "assistant", "Which port should the server use?"),
                    ev("2", "tool", "ran tests"),
                    ev(
                        "3",
                        "assistant",
                        "I am waiting for your answer before I deploy.",
                    ),
                ],
            ),
            thread(
                "open",
                vec![ev(
                    "1",
                    "assistant",
                    "Which name do you like? I carry on with the tests meanwhile.",
                )],
            ),
            thread(
                "withdrawn",
                vec![
                    ev("1", "assistant", "Which file holds the config?"),
                    ev("2", "assistant", "Never mind, I found it in config.toml."),
                ],
            ),
            thread(
                "quiet",
                vec![ev(
                    "1",
                    "assistant",
                    "Refactored the parser; all tests pass.",
                )],
            ),
        ]);
        let by_id = |id: &str| out.threads.iter().find(|t| t.thread_id == id).unwrap();
        assert_eq!(by_id("answered").bucket, "clear");
        assert_eq!(by_id("answered").requests[0].answered, Some(0.9));
        assert_eq!(by_id("blocked").bucket, "blocked");
        assert_eq!(
            by_id("blocked").requests[0].source_event_ids,
            ["1", "2", "3"]
        );
        assert_eq!(by_id("open").bucket, "needs_input");
        assert_eq!(
            by_id("open").requests[0].answered,
            Some(0.0),
            "full coverage, no reply"
        );
        assert_eq!(by_id("withdrawn").bucket, "clear");
        assert_eq!(by_id("quiet").bucket, "clear");
        assert!(by_id("quiet").requests.is_empty());
        // most urgent first
        assert_eq!(out.threads[0].thread_id, "blocked");
        assert_eq!(out.threads[1].thread_id, "open");
        // one question per kind, every candidate in one batch
        assert_eq!(asked[0].1, 5);
        assert!(asked.iter().all(|(q, _)| !q.contains("acceptance")));
    }

    #[test]
    fn a_truncated_history_leaves_an_unreplied_request_unknown() {
        let mut t = thread(
            "tail",
            vec![ev("9", "assistant", "Which region should I deploy to?")],
        );
        t.complete = false;
        let (out, _) = run_on(vec![t]);
        assert_eq!(out.threads[0].coverage, "truncated");
        assert_eq!(out.threads[0].bucket, "unknown");
        assert_eq!(out.threads[0].requests[0].answered, None);
    }

    #[test]
    fn a_running_agent_that_moved_on_is_not_blocked() {
        let mut t = thread(
            "run",
            vec![
                ev(
                    "1",
                    "assistant",
                    "Which port should the server use? I am waiting for it.",
                ),
                ev(
                    "2",
                    "assistant",
                    "Meanwhile I wrote the docs; still waiting.",
                ),
            ],
        );
        t.status = Some("running".into());
        let (out, _) = run_on(vec![t]);
        assert_eq!(out.threads[0].requests[0].blocking, Some(0.0));
        assert_eq!(out.threads[0].bucket, "needs_input");
    }

    #[test]
    fn acceptance_criteria_get_the_one_action_question() {
        let mut t = thread(
            "ac",
            vec![ev("1", "assistant", "One step left: tag the release.")],
        );
        t.contract.first_prompt =
            "Ship it. Acceptance criteria: tests pass, release tagged.".into();
        let (out, asked) = run_on(vec![t]);
        assert_eq!(out.threads[0].one_action_remains, Some(0.9));
        assert!(asked.iter().any(|(q, _)| q.contains("acceptance")));
    }

    #[test]
    fn bad_requests_are_refused() {
        let mut j = Keywords { asked: vec![] };
        for (threads, needle) in [
            (vec![], "threads is empty"),
            (vec![thread(" ", vec![])], "thread_id is empty"),
            (vec![thread("t", vec![ev("", "user", "x")])], "id is empty"),
        ] {
            let err = run(
                &mut j,
                &TriageRequest {
                    threads,
                    budget_usd: 0.5,
                    request_threshold: 0.5,
                },
            )
            .unwrap_err();
            assert!(err.to_string().contains(needle), "{err}");
        }
    }
}
