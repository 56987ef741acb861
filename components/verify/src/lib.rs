//! The verify engine as a component: `silt_core::verify` run against the
//! judge this component imports, with sources fetched through the host.

// A component only: on the host target the crate is empty, so
// `cargo build --workspace` does not try to link its wasm exports.
#![cfg(target_arch = "wasm32")]

wit_bindgen::generate!({
    path: ["../../wit/judge", "../../wit/host", "../../wit/sieve"],
    world: "silt:sieve/verify-engine",
    with: {
        "silt:judge/types@0.1.2": silt_guest::types,
        "silt:judge/judge@0.1.2": generate,
        "silt:host/log@0.2.1": generate,
        "silt:host/clock@0.2.1": generate,
        "silt:host/sources@0.2.1": generate,
        "silt:sieve/types@0.3.0": generate,
        "silt:sieve/progress@0.3.0": generate,
    },
});

use exports::silt::sieve::verify::{
    Citation, CitationCheck, ClaimKind, ClaimResult, Claims, Guest, Passage, SourceCheck,
    VerdictCount, VerifyRequest, VerifyResult,
};
use silt::sieve::types::{AskError, LabelledProbability};
use silt_core::verify::{self as core, run as core_run};

silt_guest::imported_judge!(silt::judge::judge);
silt_guest::ask_conversions!(silt::sieve::types);

/// The host's fetch, seen through `silt_core`'s trait.
struct ImportedSources;

impl core_run::Sources for ImportedSources {
    fn fetch(&mut self, locator: &str) -> Result<core_run::Source, String> {
        silt::host::sources::fetch(locator).map(|s| core_run::Source {
            text: s.text,
            version: s.version,
        })
    }

    fn stage(&mut self, name: &str, total: u64) {
        silt::sieve::progress::stage(name, total);
    }
}

fn kind_in(k: ClaimKind) -> core::ClaimKind {
    match k {
        ClaimKind::Fact => core::ClaimKind::Fact,
        ClaimKind::Recommendation => core::ClaimKind::Recommendation,
    }
}

fn kind_out(k: core::ClaimKind) -> ClaimKind {
    match k {
        core::ClaimKind::Fact => ClaimKind::Fact,
        core::ClaimKind::Recommendation => ClaimKind::Recommendation,
    }
}

fn citation_in(c: Citation) -> core::Citation {
    core::Citation {
        locator: c.locator,
        quote: c.quote,
    }
}

fn passage_out(p: core_run::Passage) -> Passage {
    Passage {
        locator: p.locator,
        start: p.start,
        end: p.end,
        via: p.via.into(),
        text: p.text,
        probabilities: p
            .probabilities
            .into_iter()
            .map(|(label, probability)| LabelledProbability { label, probability })
            .collect(),
    }
}

fn check_out(c: core_run::CitationCheck) -> CitationCheck {
    CitationCheck {
        locator: c.locator,
        quote: c.quote,
        quote_found: c.quote_found,
        quote_start: c.quote_start,
        quote_end: c.quote_end,
        fetched: c.fetched,
    }
}

fn row_out(r: core_run::ClaimResult) -> ClaimResult {
    ClaimResult {
        record_index: r.record,
        premise_of: r.premise_of,
        claim: r.claim,
        claim_context: r.claim_context,
        kind: kind_out(r.kind),
        extraction_uncertain: r.extraction_uncertain,
        citations: r.citations.into_iter().map(check_out).collect(),
        passages: r.passages.into_iter().map(passage_out).collect(),
        best_passage: r.best_passage,
        verdict: r.verdict.map(str::to_string),
        support: r.support,
        max_contradicts: r.max_contradicts,
        flags: r.flags.into_iter().map(str::to_string).collect(),
    }
}

struct Engine;

impl Guest for Engine {
    fn verify(request: VerifyRequest) -> Result<VerifyResult, AskError> {
        let input = match request.claims {
            Claims::Report(markdown) => core_run::Input::Report(markdown),
            Claims::Records(records) => core_run::Input::Records(
                records
                    .into_iter()
                    .map(|r| core::Record {
                        claim: r.claim,
                        claim_context: r.claim_context,
                        kind: kind_in(r.kind),
                        premises: r.premises,
                        citations: r.citations.into_iter().map(citation_in).collect(),
                        extraction_uncertain: false,
                    })
                    .collect(),
            ),
        };
        let request = core_run::VerifyRequest {
            input,
            budget_usd: request.budget_usd,
            support_threshold: request.support_threshold,
            contradict_threshold: request.contradict_threshold,
            judge_entails: request.judge_entails,
        };
        let out =
            core_run::run(&mut ImportedJudge, &mut ImportedSources, &request).map_err(error_out)?;
        Ok(VerifyResult {
            results: out.results.into_iter().map(row_out).collect(),
            counts: out
                .counts
                .into_iter()
                .map(|(verdict, count)| VerdictCount {
                    verdict: verdict.into(),
                    count,
                })
                .collect(),
            flagged: out.flagged,
            unqualified_factual_relay_blocked: out.unqualified_factual_relay_blocked,
            sources: out
                .sources
                .into_iter()
                .map(|s| SourceCheck {
                    locator: s.locator,
                    version: s.version,
                    chars: s.chars,
                    error: s.error,
                })
                .collect(),
            usage: usage_out(out.usage),
        })
    }
}

export!(Engine);
