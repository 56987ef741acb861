//! The ask engine as a component: `silt_core::ask` run against the judge
//! this component imports.

wit_bindgen::generate!({
    path: ["../../wit/judge", "../../wit/host", "../../wit/sieve"],
    world: "silt:sieve/ask-engine",
    with: {
        "silt:judge/types@0.1.0": silt_guest::types,
        "silt:judge/judge@0.1.0": generate,
        "silt:host/log@0.1.0": generate,
        "silt:host/clock@0.1.0": generate,
    },
});

use exports::silt::sieve::ask::{
    AskError, AskRequest, AskResult, AskUsage, Chosen, Guest, Judged, LabelledProbability, Results,
    Scored,
};
use silt::judge::judge as imported;
use silt_core::ask::{self as core_ask, AskRows};
use silt_core::types as core;

/// The imported judge, seen through `silt_core`'s trait.
struct ImportedJudge;

impl core::Judge for ImportedJudge {
    fn info(&mut self) -> core::JudgeInfo {
        imported::info().into()
    }

    fn ask(
        &mut self,
        question: &core::Question,
        items: &[core::Item],
    ) -> Result<core::Response, core::JudgeError> {
        let items: Vec<_> = items.iter().map(Into::into).collect();
        imported::ask(&question.into(), &items)
            .map(Into::into)
            .map_err(Into::into)
    }
}

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
        let out = core_ask::run(&mut ImportedJudge, &request).map_err(|e| match e {
            core_ask::AskError::InvalidRequest(m) => AskError::InvalidRequest(m),
            core_ask::AskError::JudgeFailed(m) => AskError::JudgeFailed(m),
        })?;
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
        let u = out.usage;
        Ok(AskResult {
            results,
            items_scored: out.items_scored,
            usage: AskUsage {
                tokens: u.tokens,
                input_tokens: u.input_tokens,
                output_tokens: u.output_tokens,
                requests: u.requests,
                cache_hits: u.cache_hits,
                cost_usd: u.cost_usd,
                budget_exhausted: u.budget_exhausted,
            },
        })
    }
}

export!(Engine);
