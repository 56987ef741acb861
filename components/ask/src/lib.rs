//! The ask engine as a component: `silt_core::ask` run against the judge
//! this component imports.

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

wit_bindgen::generate!({
    path: ["../../wit/judge", "../../wit/host", "../../wit/sieve"],
    world: "silt:sieve/ask-engine",
    with: {
        "silt:judge/types@0.1.2": silt_guest::types,
        "silt:judge/judge@0.1.2": generate,
        "silt:host/log@0.2.1": generate,
        "silt:host/clock@0.2.1": generate,
        "silt:host/files@0.2.1": generate,
        "silt:sieve/types@0.3.0": generate,
        "silt:sieve/progress@0.3.0": generate,
    },
});

use exports::silt::sieve::ask::{AskRequest, AskResult, Chosen, Guest, Judged, Results, Scored};
use exports::silt::sieve::grep::{GrepRequest, GrepResult, Hit, Mode};
use exports::silt::sieve::rank::{RankRequest, RankResult};
use exports::silt::sieve::route::{RouteRequest, RouteResult};
use silt::sieve::types::{AskError, LabelledProbability};
use silt_core::ask::{self as core_ask, AskRows};

silt_guest::imported_judge!(silt::judge::judge);
silt_guest::ask_conversions!(silt::sieve::types);

fn labelled(pairs: Vec<(String, f64)>) -> Vec<LabelledProbability> {
    pairs
        .into_iter()
        .map(|(label, probability)| LabelledProbability { label, probability })
        .collect()
}

struct Engine;

impl Guest for Engine {
    fn ask(request: AskRequest) -> Result<AskResult, AskError> {
        let request = core_ask::AskRequest {
            question: request.question.into(),
            items: request.items.into_iter().map(Into::into).collect(),
            max_chars: request.max_chars,
            budget_usd: request.budget_usd,
            top_k: request.top_k,
            threshold: request.threshold,
        };
        let out = core_ask::run(&mut ImportedJudge, &request).map_err(error_out)?;
        let results = match out.rows {
            AskRows::Judge(rows) => Results::Judge(
                rows.into_iter()
                    .map(|r| Judged {
                        id: r.id,
                        probability: r.probability,
                    })
                    .collect(),
            ),
            AskRows::Choose(rows) => Results::Choose(
                rows.into_iter()
                    .map(|r| Chosen {
                        id: r.id,
                        choice: r.choice,
                        probabilities: labelled(r.probabilities),
                    })
                    .collect(),
            ),
            AskRows::Score(rows) => Results::Score(
                rows.into_iter()
                    .map(|r| Scored {
                        id: r.id,
                        level: r.level,
                        label: r.label,
                        expected: r.expected,
                        probabilities: labelled(r.probabilities),
                    })
                    .collect(),
            ),
        };
        Ok(AskResult {
            results,
            items_scored: out.items_scored,
            usage: usage_out(out.usage),
        })
    }
}

impl exports::silt::sieve::rank::Guest for Engine {
    fn rank(request: RankRequest) -> Result<RankResult, AskError> {
        let request = silt_core::rank::RankRequest {
            question: request.question,
            candidates: request.candidates.into_iter().map(Into::into).collect(),
            top_k: request.top_k,
            threshold: request.threshold,
        };
        let out = silt_core::rank::run(&mut ImportedJudge, &request).map_err(error_out)?;
        let AskRows::Judge(rows) = out.rows else {
            return Err(AskError::JudgeFailed("rank asked a yes/no question".into()));
        };
        Ok(RankResult {
            results: rows
                .into_iter()
                .map(|r| Judged {
                    id: r.id,
                    probability: r.probability,
                })
                .collect(),
            candidates_scored: out.items_scored,
            usage: usage_out(out.usage),
        })
    }
}

impl exports::silt::sieve::route::Guest for Engine {
    fn route(request: RouteRequest) -> Result<RouteResult, AskError> {
        let request = silt_core::route::RouteRequest {
            ask: request.ask,
            routes: request
                .routes
                .into_iter()
                .map(|r| silt_core::route::Route {
                    id: r.id,
                    description: r.description,
                    aliases: r.aliases,
                })
                .collect(),
            budget_usd: request.budget_usd,
        };
        let out = silt_core::route::run(&mut ImportedJudge, &request).map_err(error_out)?;
        Ok(RouteResult {
            choice: out.choice,
            confidence: out.confidence,
            probabilities: labelled(out.probabilities),
            usage: usage_out(out.usage),
            stages: out.stages,
            batches: out.batches,
        })
    }
}

/// The host's walk, reads and parser, seen through `silt_core`'s trait.
struct ImportedRepository;

impl silt_core::grep::run::Repository for ImportedRepository {
    fn walk(&mut self) -> Result<Vec<(String, bool)>, String> {
        Ok(silt::host::files::walk()?
            .into_iter()
            .map(|f| (f.path, f.binary))
            .collect())
    }

    fn read(&mut self, path: &str) -> Result<String, String> {
        silt::host::files::read(path)
    }

    fn stage(&mut self, name: &str, total: u64) {
        silt::sieve::progress::stage(name, total);
    }

    fn syntax(&mut self, path: &str) -> Result<Option<silt_core::grep::units::Syntax>, String> {
        use silt_core::grep::units::{FunctionSpan, Syntax};
        Ok(silt::host::files::syntax(path)?.map(|s| Syntax {
            definitions: s.definitions.into_iter().map(|n| n as usize).collect(),
            functions: s
                .functions
                .into_iter()
                .map(|f| FunctionSpan {
                    name: f.name,
                    line_start: f.line_start as usize,
                    line_end: f.line_end as usize,
                })
                .collect(),
        }))
    }
}

impl exports::silt::sieve::grep::Guest for Engine {
    fn grep(request: GrepRequest) -> Result<GrepResult, AskError> {
        use silt_core::grep::run as core_grep;
        let request = core_grep::GrepRequest {
            question: request.question,
            mode: match request.mode {
                Mode::Files => core_grep::Mode::Files,
                Mode::Functions => core_grep::Mode::Functions,
            },
            top_k: request.top_k,
            threshold: request.threshold,
            budget_usd: request.budget_usd,
            judge_weight: request.judge_weight,
            engine_ranks: request.engine_ranks,
        };
        let out = core_grep::run(&mut ImportedJudge, &mut ImportedRepository, &request)
            .map_err(error_out)?;
        Ok(GrepResult {
            results: out
                .results
                .into_iter()
                .map(|h| Hit {
                    path: h.path,
                    line_start: h.line_start,
                    line_end: h.line_end,
                    kind: h.kind.to_string(),
                    probability: h.probability,
                })
                .collect(),
            units_scored: out.units_scored,
            usage: usage_out(out.usage),
        })
    }
}

impl exports::silt::sieve::triage::Guest for Engine {
    fn triage(
        request: exports::silt::sieve::triage::TriageRequest,
    ) -> Result<exports::silt::sieve::triage::TriageResult, AskError> {
        use exports::silt::sieve::triage::{RequestResult, ThreadResult, TriageResult};
        use silt_core::triage as core_triage;
        let request = core_triage::TriageRequest {
            threads: request
                .threads
                .into_iter()
                .map(|t| core_triage::Thread {
                    thread_id: t.thread_id,
                    events: t
                        .events
                        .into_iter()
                        .map(|e| core_triage::Event {
                            id: e.id,
                            ts: e.ts,
                            role: e.role,
                            kind: e.kind,
                            text: e.text,
                        })
                        .collect(),
                    contract: core_triage::Contract {
                        title: t.contract.title,
                        first_prompt: t.contract.first_prompt,
                        human_amendments: t.contract.human_amendments,
                    },
                    status: t.status,
                    journal_priority: t.journal_priority,
                    complete: t.complete,
                })
                .collect(),
            budget_usd: request.budget_usd,
            request_threshold: request.request_threshold,
        };
        let out = core_triage::run(&mut ImportedJudge, &request).map_err(error_out)?;
        Ok(TriageResult {
            threads: out
                .threads
                .into_iter()
                .map(|t| ThreadResult {
                    thread_id: t.thread_id,
                    bucket: t.bucket.into(),
                    coverage: t.coverage.into(),
                    last_event_id: t.last_event_id,
                    events: t.events,
                    one_action_remains: t.one_action_remains,
                    requests: t
                        .requests
                        .into_iter()
                        .map(|r| RequestResult {
                            event_id: r.event_id,
                            text: r.text,
                            request: r.request,
                            answered: r.answered,
                            withdrawn: r.withdrawn,
                            blocking: r.blocking,
                            source_event_ids: r.source_event_ids,
                            open: r.open,
                        })
                        .collect(),
                    journal_priority: t.journal_priority,
                })
                .collect(),
            usage: usage_out(out.usage),
        })
    }
}

export!(Engine);
