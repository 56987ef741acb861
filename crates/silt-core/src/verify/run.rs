//! The verify pipeline: fetch every cited source once, pick passages for
//! each factual claim, ask the judge how each passage bears on the claim,
//! and reduce the answers to a verdict, flags and counts.

use std::collections::HashMap;

use crate::ask::{self, AskError, AskRequest, AskRows, AskUsage, round4};
use crate::budget::Budget;
use crate::types::{AnswerSpace, ChoiceOption, Item, Judge, Question};

use super::details;
use super::evidence::{self, Via, Window};
use super::quote::find_quote;
use super::{ClaimKind, Record, report};

/// The four ways a passage can bear on a claim, in the order they are offered.
pub const SUPPORTS_FULLY: &str = "supports_fully";
/// The passage supports part of the claim.
pub const PARTIALLY_SUPPORTS: &str = "partially_supports";
/// The passage says the claim is false.
pub const CONTRADICTS: &str = "contradicts";
/// The passage does not bear on the claim.
pub const DOES_NOT_ADDRESS: &str = "does_not_address";
/// All four, in the order the judge is offered them.
pub const VERDICTS: [&str; 4] = [
    SUPPORTS_FULLY,
    PARTIALLY_SUPPORTS,
    CONTRADICTS,
    DOES_NOT_ADDRESS,
];
/// The verdict of a claim the judge could not assess (it scores
/// similarity and does not read entailment: flag
/// [`JUDGE_CANNOT_CONFIRM`]), and the count key for it and for a factual
/// claim no passage could be judged for (no verdict).
pub const UNVERIFIED: &str = "unverified";

/// Flag: the judge does not read entailment (see
/// [`VerifyRequest::judge_entails`]), so the verdict is [`UNVERIFIED`]
/// whatever its numbers.
pub const JUDGE_CANNOT_CONFIRM: &str = "judge_cannot_confirm";

/// Fitted by the reference's own evaluation (its shipped 0.6 was never refitted).
pub const DEFAULT_SUPPORT_THRESHOLD: f64 = 0.80;
/// The `contradicts` probability from which a claim is flagged and relay
/// blocked, when the caller sets none.
pub const DEFAULT_CONTRADICT_THRESHOLD: f64 = 0.50;
/// The most claims one call checks (records, premises and report claims).
pub const MAX_CLAIMS: usize = 500;
/// The most characters of a Markdown report.
pub const MAX_REPORT_CHARS: usize = 1_000_000;

/// What verify needs from the host.
pub trait Sources {
    /// A locator's text, fetched and converted by the host.
    fn fetch(&mut self, locator: &str) -> Result<Source, String>;
    /// A stage of the call begins, of `total` steps in the host's units
    /// (sources fetched, passages sent to the judge); for progress only.
    fn stage(&mut self, _name: &str, _total: u64) {}
}

/// A fetched source.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// As text (HTML and PDF already converted).
    pub text: String,
    /// sha256 of the raw bytes, hex.
    pub version: String,
}

/// Claims as records or as a report to extract them from.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// Claims as the caller wrote them.
    Records(Vec<Record>),
    /// A Markdown report (at most [`MAX_REPORT_CHARS`]): sentences, list
    /// items and table rows become claims, marked extraction-uncertain.
    Report(String),
}

/// One verify call.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyRequest {
    /// The claims, as records or a report.
    pub input: Input,
    /// The most the call may spend, in US dollars.
    pub budget_usd: f64,
    /// Full support below this flags the claim.
    pub support_threshold: f64,
    /// A contradiction at or above this flags the claim and blocks relay.
    pub contradict_threshold: f64,
    /// Whether the judge reads what a passage states (entailment) rather
    /// than which words or topics it shares with a claim (its manifest's
    /// `[judge] entailment`). Without it no claim is `supports_fully`:
    /// similarity shows that a source talks about a claim, not that it
    /// states it, and a claim with one word changed is as similar as the
    /// true one.
    pub judge_entails: bool,
}

/// One passage the judge read, with its answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Passage {
    /// The source it was read from.
    pub locator: String,
    /// Character offsets into the source text (end exclusive).
    pub start: u32,
    /// Where it ends, in characters (exclusive).
    pub end: u32,
    /// `quote` or `overlap`.
    pub via: &'static str,
    /// What the judge read.
    pub text: String,
    /// The four verdicts' probabilities, in [`VERDICTS`] order; empty when
    /// the budget ran out before this passage was judged.
    pub probabilities: Vec<(String, f64)>,
}

/// A citation as it fared.
#[derive(Debug, Clone, PartialEq)]
pub struct CitationCheck {
    /// The URL or path cited.
    pub locator: String,
    /// The words the citation quotes, if any.
    pub quote: Option<String>,
    /// None when there was no quote or the source could not be fetched.
    pub quote_found: Option<bool>,
    /// Character offsets of the quote in the source, when found.
    pub quote_start: Option<u32>,
    /// Where the found quote ends, in characters (exclusive).
    pub quote_end: Option<u32>,
    /// Whether the source was fetched.
    pub fetched: bool,
}

/// One checked claim.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimResult {
    /// The record it comes from (report claims are numbered in order).
    pub record: u32,
    /// For a premise: the recommendation's position in `results`.
    pub premise_of: Option<u32>,
    /// The claim's text.
    pub claim: String,
    /// Where the claim sits (headings, parent items), as given.
    pub claim_context: Option<String>,
    /// A fact, or a recommendation (no verdict of its own).
    pub kind: ClaimKind,
    /// True when code, not the author, cut the claim out of a report.
    pub extraction_uncertain: bool,
    /// How each of its citations fared, in order.
    pub citations: Vec<CitationCheck>,
    /// The passages the judge read for it.
    pub passages: Vec<Passage>,
    /// The passage with the strongest full support (index into `passages`).
    pub best_passage: Option<u32>,
    /// The verdict by the thresholds (see `reduce`); None for a
    /// recommendation or when no passage was judged.
    pub verdict: Option<&'static str>,
    /// The best passage's `supports_fully` probability.
    pub support: Option<f64>,
    /// The largest `contradicts` probability over all passages.
    pub max_contradicts: Option<f64>,
    /// Why the claim needs a look (`no_citations`, `fetch_failed`,
    /// `quote_not_found`, `support_below_threshold`, ...); empty when none.
    pub flags: Vec<&'static str>,
}

/// A source as fetched.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceCheck {
    /// The URL or path, as cited.
    pub locator: String,
    /// sha256 of the raw bytes, hex; None when the fetch failed.
    pub version: Option<String>,
    /// The text's length in characters (0 when the fetch failed).
    pub chars: u32,
    /// Why the fetch failed; None when it did not.
    pub error: Option<String>,
}

/// The result of a verify call.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyOutcome {
    /// Every checked claim, each recommendation followed by its premises.
    pub results: Vec<ClaimResult>,
    /// Factual claims by top verdict (and [`UNVERIFIED`]), every key present.
    pub counts: Vec<(&'static str, u32)>,
    /// Positions in `results` of claims with any flag.
    pub flagged: Vec<u32>,
    /// A factual claim has no fetchable source, or a passage contradicts
    /// one at or above the contradict threshold.
    pub unqualified_factual_relay_blocked: bool,
    /// Every cited source, each fetched once, in order of first citation.
    pub sources: Vec<SourceCheck>,
    /// What the call cost.
    pub usage: AskUsage,
}

fn invalid(msg: impl Into<String>) -> AskError {
    AskError::InvalidRequest(msg.into())
}

fn validate(req: &VerifyRequest) -> Result<(), AskError> {
    for (name, v) in [
        ("support_threshold", req.support_threshold),
        ("contradict_threshold", req.contradict_threshold),
    ] {
        if !(0.0..=1.0).contains(&v) {
            return Err(invalid(format!(
                "{name} is {v}, it must be between 0 and 1"
            )));
        }
    }
    if !req.budget_usd.is_finite() || req.budget_usd < 0.0 {
        return Err(invalid(format!(
            "budget_usd is {}, it must be a number >= 0",
            req.budget_usd
        )));
    }
    match &req.input {
        Input::Report(r) if r.chars().count() > MAX_REPORT_CHARS => Err(invalid(format!(
            "the report has more than {MAX_REPORT_CHARS} characters; split it"
        ))),
        Input::Report(_) => Ok(()),
        Input::Records(records) => {
            if records.is_empty() {
                return Err(invalid("records is empty; give at least one claim"));
            }
            for (i, r) in records.iter().enumerate() {
                if r.claim.trim().is_empty() {
                    return Err(invalid(format!("records[{i}].claim is empty")));
                }
                if r.premises.iter().any(|p| p.trim().is_empty()) {
                    return Err(invalid(format!("records[{i}] has an empty premise")));
                }
                if let Some(j) = r.citations.iter().position(|c| c.locator.trim().is_empty()) {
                    return Err(invalid(format!(
                        "records[{i}].citations[{j}].locator is empty; give a URL or a file path"
                    )));
                }
            }
            Ok(())
        }
    }
}

/// The closed question a passage is asked for one claim. The claim is
/// written into the full-support option, not the question, so a judge that
/// weighs what tells the options apart reads it there.
pub fn question_for(claim: &str, context: Option<&str>) -> Question {
    let mut text = String::from(
        "How does the passage bear on the claim quoted in the supports_fully option? \
         Judge only what the passage itself states.",
    );
    if let Some(c) = context.filter(|c| !c.is_empty()) {
        text.push_str(&format!(" The claim appears under: {c}."));
    }
    let option = |label: &str, criterion: String| ChoiceOption {
        label: label.into(),
        criterion,
    };
    Question {
        text,
        space: AnswerSpace::Choose(vec![
            option(
                SUPPORTS_FULLY,
                format!("The passage states everything this claim says: {claim}"),
            ),
            option(
                PARTIALLY_SUPPORTS,
                "The passage states part of it, or states it with a narrower scope, \
                 less certainty or other figures"
                    .into(),
            ),
            option(
                CONTRADICTS,
                "The passage states something incompatible with it: the opposite, \
                 a different figure or a different outcome"
                    .into(),
            ),
            option(
                DOES_NOT_ADDRESS,
                "The passage is about something else and says nothing on whether it holds".into(),
            ),
        ]),
    }
}

/// A claim to check, flattened: facts, recommendations and their premises.
struct Claim {
    record: u32,
    premise_of: Option<u32>,
    claim: String,
    context: Option<String>,
    kind: ClaimKind,
    uncertain: bool,
    citations: Vec<super::Citation>,
}

fn flatten(records: Vec<Record>) -> Vec<Claim> {
    let mut out = Vec::new();
    for (i, r) in records.into_iter().enumerate() {
        let at = out.len() as u32;
        out.push(Claim {
            record: i as u32,
            premise_of: None,
            claim: r.claim,
            context: r.claim_context.clone(),
            kind: r.kind,
            uncertain: r.extraction_uncertain,
            citations: r.citations.clone(),
        });
        if r.kind == ClaimKind::Recommendation {
            for p in r.premises {
                out.push(Claim {
                    record: i as u32,
                    premise_of: Some(at),
                    claim: p,
                    context: r.claim_context.clone(),
                    kind: ClaimKind::Fact,
                    uncertain: r.extraction_uncertain,
                    citations: r.citations.clone(),
                });
            }
        }
    }
    out
}

fn char_offset(text: &str, byte: usize) -> u32 {
    text[..byte].chars().count() as u32
}

/// Runs a verify call.
pub fn run(
    judge: &mut dyn Judge,
    sources: &mut dyn Sources,
    req: &VerifyRequest,
) -> Result<VerifyOutcome, AskError> {
    validate(req)?;
    let records = match &req.input {
        Input::Records(r) => r.clone(),
        Input::Report(markdown) => {
            let r = report::extract(markdown);
            if r.is_empty() {
                return Err(invalid(
                    "the report has no sentences, list items or table rows to check",
                ));
            }
            r
        }
    };
    let claims = flatten(records);
    if claims.len() > MAX_CLAIMS {
        return Err(invalid(format!(
            "{} claims (with premises) is more than the {MAX_CLAIMS} one call checks; split them",
            claims.len()
        )));
    }

    // every cited source once, in first-cited order
    let mut order: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for c in claims.iter().filter(|c| c.kind == ClaimKind::Fact) {
        for cite in &c.citations {
            if seen.insert(cite.locator.as_str()) {
                order.push(cite.locator.clone());
            }
        }
    }
    // the host may have fetched them ahead (its own "fetching sources")
    sources.stage("reading sources", order.len() as u64);
    let mut fetched: HashMap<String, Result<Source, String>> = order
        .iter()
        .map(|locator| (locator.clone(), sources.fetch(locator)))
        .collect();

    let mut usage = AskUsage::default();
    let cost = judge.info().cost_per_million_input_tokens;
    let mut budget = Budget::new(req.budget_usd, cost);
    let mut results = Vec::with_capacity(claims.len());
    for c in &claims {
        let mut row = ClaimResult {
            record: c.record,
            premise_of: c.premise_of,
            claim: c.claim.clone(),
            claim_context: c.context.clone(),
            kind: c.kind,
            extraction_uncertain: c.uncertain,
            citations: Vec::new(),
            passages: Vec::new(),
            best_passage: None,
            verdict: None,
            support: None,
            max_contradicts: None,
            flags: Vec::new(),
        };
        if c.kind == ClaimKind::Recommendation {
            results.push(row);
            continue;
        }
        let mut windows: Vec<(String, &str, Window)> = Vec::new();
        for cite in &c.citations {
            let mut check = CitationCheck {
                locator: cite.locator.clone(),
                quote: cite.quote.clone(),
                quote_found: None,
                quote_start: None,
                quote_end: None,
                fetched: false,
            };
            if let Some(Ok(src)) = fetched.get(&cite.locator) {
                check.fetched = true;
                let paras = evidence::paragraphs(&src.text);
                let found = cite
                    .quote
                    .as_deref()
                    .filter(|q| !q.trim().is_empty())
                    .map(|q| find_quote(&src.text, q));
                let mut picked = match found {
                    Some(Some(m)) => {
                        check.quote_found = Some(true);
                        check.quote_start = Some(char_offset(&src.text, m.start));
                        check.quote_end = Some(char_offset(&src.text, m.end));
                        vec![evidence::quote_window(&src.text, &paras, m)]
                    }
                    Some(None) => {
                        check.quote_found = Some(false);
                        evidence::overlap_windows(&src.text, &paras, &c.claim)
                    }
                    None => evidence::overlap_windows(&src.text, &paras, &c.claim),
                };
                picked.retain(|w| w.end > w.start);
                windows.extend(
                    picked
                        .into_iter()
                        .map(|w| (cite.locator.clone(), src.text.as_str(), w)),
                );
            }
            row.citations.push(check);
        }
        // the same stretch cited twice is read once
        let mut seen = std::collections::HashSet::new();
        windows.retain(|(locator, _, w)| seen.insert((locator.clone(), w.start, w.end)));

        if c.citations.is_empty() {
            row.flags.push("no_citations");
        }
        if row.citations.iter().any(|k| !k.fetched) {
            row.flags.push("fetch_failed");
        }
        if row.citations.iter().any(|k| k.quote_found == Some(false)) {
            row.flags.push("quote_not_found");
        }
        row.passages = windows
            .iter()
            .map(|(locator, text, w)| Passage {
                locator: locator.clone(),
                start: char_offset(text, w.start),
                end: char_offset(text, w.end),
                via: match w.via {
                    Via::Quote => "quote",
                    Via::Overlap => "overlap",
                },
                text: text[w.start..w.end].to_string(),
                probabilities: Vec::new(),
            })
            .collect();
        if row.passages.is_empty() {
            row.flags.push("no_evidence");
            results.push(row);
            continue;
        }

        results.push(row);
    }

    // every passage is picked before any is judged, so the wait has a size
    let judged = |r: &ClaimResult| r.kind == ClaimKind::Fact && !r.passages.is_empty();
    sources.stage(
        "judging passages",
        results
            .iter()
            .filter(|r| judged(r))
            .map(|r| r.passages.len() as u64)
            .sum(),
    );
    for row in results.iter_mut().filter(|r| judged(r)) {
        let request = AskRequest {
            question: question_for(&row.claim, row.claim_context.as_deref()),
            items: row
                .passages
                .iter()
                .enumerate()
                .map(|(i, p)| Item {
                    id: i.to_string(),
                    text: p.text.clone(),
                })
                .collect(),
            max_chars: ask::DEFAULT_MAX_CHARS,
            budget_usd: req.budget_usd,
            top_k: None,
            threshold: 0.0,
        };
        let out = ask::run_budgeted(judge, &request, ask::MAX_BATCH, &mut budget)?;
        usage.add(&out.usage);
        let AskRows::Choose(rows) = out.rows else {
            return Err(AskError::JudgeFailed(
                "verify asked a choice and got another kind of answer".into(),
            ));
        };
        if rows.len() < row.passages.len() {
            row.flags.push("budget_exhausted");
        }
        for r in rows {
            let i: usize = r.id.parse().expect("ids are the passages' positions");
            row.passages[i].probabilities = r.probabilities;
        }
        reduce(row, req);
    }

    let mut counts: Vec<(&'static str, u32)> = VERDICTS
        .iter()
        .chain(std::iter::once(&UNVERIFIED))
        .map(|v| (*v, 0))
        .collect();
    let mut blocked = false;
    for r in results.iter().filter(|r| r.kind == ClaimKind::Fact) {
        let key = r.verdict.unwrap_or(UNVERIFIED);
        if let Some(c) = counts.iter_mut().find(|(k, _)| *k == key) {
            c.1 += 1;
        }
        let fetchable = r.citations.iter().any(|k| k.fetched);
        if !fetchable || r.flags.contains(&"contradiction_above_threshold") {
            blocked = true;
        }
    }
    let flagged = results
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.flags.is_empty())
        .map(|(i, _)| i as u32)
        .collect();
    let sources = order
        .into_iter()
        .map(|locator| {
            let got = fetched
                .remove(&locator)
                .expect("every ordered locator was fetched");
            match got {
                Ok(s) => SourceCheck {
                    chars: s.text.chars().count() as u32,
                    version: Some(s.version),
                    error: None,
                    locator,
                },
                Err(e) => SourceCheck {
                    locator,
                    version: None,
                    chars: 0,
                    error: Some(e),
                },
            }
        })
        .collect();
    Ok(VerifyOutcome {
        results,
        counts,
        flagged,
        unqualified_factual_relay_blocked: blocked,
        sources,
        usage,
    })
}

fn probability(p: &[(String, f64)], label: &str) -> f64 {
    p.iter().find(|(l, _)| l == label).map_or(0.0, |(_, v)| *v)
}

/// The verdict from the judged passages, by the thresholds (the seed's
/// verdict was the best passage's argmax, with the thresholds only adding
/// flags; that let a weak judge call a false claim `supports_fully`):
///
/// - `unverified` when the judge does not read entailment (it scores
///   similarity; flag [`JUDGE_CANNOT_CONFIRM`]);
/// - `contradicts` when any passage's contradiction clears
///   `contradict_threshold` (one contradicting source matters even when
///   another supports);
/// - else `supports_fully` when a passage's full support reaches
///   `support_threshold`, no cited quote failed to match, the passage
///   states the claim's details (figures, code names, negation, scope:
///   [`details::unmet`]) or the judge is sure
///   ([`DETAILS_OVERRULED_FROM`], flagged [`DETAIL_CHECKS_OVERRULED`]),
///   and the judge reads entailment;
/// - else `partially_supports` when the best passage puts more than half
///   its weight on support (full or partial), `does_not_address` when not.
///
/// So the verdict and the flags never disagree: `supports_fully` carries
/// none of `support_below_threshold`, `quote_not_found`,
/// [`JUDGE_CANNOT_CONFIRM`] or the details' flags, and a claim whose
/// support cleared the threshold but was withheld carries the flags that
/// say why.
/// The full support from which a judge that reads entailment confirms a
/// claim whose details the passage does not visibly state (the detail
/// checks' flags are kept). With a judge that is always right the checks
/// withheld 12 of 35 true claims and no altered one (docs/JUDGES.md,
/// "Pipeline ceiling"); below this level they still withhold.
pub const DETAILS_OVERRULED_FROM: f64 = 0.95;

/// Flag: a `supports_fully` the judge was sure of although the detail
/// checks did not find every detail of the claim in the passage.
pub const DETAIL_CHECKS_OVERRULED: &str = "detail_checks_overruled";

fn reduce(row: &mut ClaimResult, req: &VerifyRequest) {
    // (position, full support, partial support, contradiction)
    let judged: Vec<(usize, f64, f64, f64)> = row
        .passages
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.probabilities.is_empty())
        .map(|(i, p)| {
            let get = |label| probability(&p.probabilities, label);
            (
                i,
                get(SUPPORTS_FULLY),
                get(PARTIALLY_SUPPORTS),
                get(CONTRADICTS),
            )
        })
        .collect();
    // strongest full support first; ties go to the earlier passage
    let mut by_support = judged.clone();
    by_support.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let Some(&(mut best, support, partial, _)) = by_support.first() else {
        if !row.flags.contains(&"no_evidence") {
            row.flags.push("no_evidence");
        }
        return;
    };
    let max_contradicts = judged.iter().map(|j| j.3).fold(0.0, f64::max);
    let quote_failed = row.flags.contains(&"quote_not_found");
    let mut leaning = support + partial;
    let contradicted = max_contradicts >= req.contradict_threshold;
    // NaN clears no threshold: it falls through to the least assertive
    let mut confirmed = false;
    if !contradicted && support >= req.support_threshold && !quote_failed {
        // the first passage over the threshold that states every detail
        // of the claim confirms it; else the strongest one's gaps are told
        let mut first_unmet = None;
        for &(i, s, _, _) in &by_support {
            if s < req.support_threshold {
                break;
            }
            let unmet = details::unmet(&row.claim, &row.passages[i].text);
            if unmet.is_empty() {
                confirmed = true;
                best = i;
                break;
            }
            first_unmet.get_or_insert(unmet);
        }
        // the checks guard a judge that is unsure; one that reads
        // entailment and is sure outranks them (they misread paraphrases:
        // "one or more" for "at least 1", "FIFO" for "first-in,
        // first-out"), and the answer says it did
        if !confirmed
            && req.judge_entails
            && let Some(&(i, _, _, _)) = by_support
                .iter()
                .find(|j| j.1 >= DETAILS_OVERRULED_FROM.max(req.support_threshold))
        {
            confirmed = true;
            best = i;
            first_unmet = None;
            row.flags.push(DETAIL_CHECKS_OVERRULED);
        }
        if !confirmed && let Some(unmet) = first_unmet {
            row.flags.extend(unmet);
        }
    }
    // unconfirmed, the claim leans as far as its most supportive window:
    // a judge that reads one window as stating part of it and the others
    // as silent gives every window the same low full support, and the
    // earliest of them (silent) stood for the claim
    if !confirmed && !contradicted {
        let most = judged.iter().map(|&(i, s, p, _)| (i, s + p)).fold(
            None,
            |m: Option<(usize, f64)>, x| match m {
                Some(m) if m.1 >= x.1 => Some(m),
                _ => Some(x),
            },
        );
        if let Some((i, l)) = most
            && l > leaning
        {
            best = i;
            leaning = l;
        }
    }
    let support = judged.iter().find(|j| j.0 == best).map_or(support, |j| j.1);
    let verdict = if !req.judge_entails {
        // a judge that scores similarity cannot tell a claim from the same
        // claim with one word changed: whatever its numbers, it did not
        // assess the claim, and no verdict that asserts something may say
        // it did (they read "partially_supports" as "somewhat true")
        row.flags.push(JUDGE_CANNOT_CONFIRM);
        UNVERIFIED
    } else if contradicted {
        CONTRADICTS
    } else if confirmed {
        SUPPORTS_FULLY
    } else if leaning > 0.5 {
        PARTIALLY_SUPPORTS
    } else {
        DOES_NOT_ADDRESS
    };
    row.best_passage = Some(best as u32);
    row.verdict = Some(verdict);
    row.support = Some(round4(support));
    row.max_contradicts = Some(round4(max_contradicts));
    if support < req.support_threshold || support.is_nan() {
        row.flags.push("support_below_threshold");
    }
    if contradicted {
        row.flags.push("contradiction_above_threshold");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Answer, JudgeError, JudgeInfo, Response, Usage};
    use crate::verify::Citation;

    /// Reads the claim back out of the supports_fully option and answers
    /// by whether the passage contains it, says "not", or neither.
    struct Scripted {
        calls: usize,
        cost: f64,
    }

    impl Judge for Scripted {
        fn info(&mut self) -> JudgeInfo {
            JudgeInfo {
                name: "scripted".into(),
                version: "1".into(),
                deterministic: true,
                cost_per_million_input_tokens: self.cost,
                preferred_batch_size: 40,
            }
        }

        fn ask(&mut self, q: &Question, items: &[Item]) -> Result<Response, JudgeError> {
            self.calls += 1;
            let AnswerSpace::Choose(options) = &q.space else {
                panic!("verify asks a choice")
            };
            let claim = options[0]
                .criterion
                .rsplit(": ")
                .next()
                .unwrap()
                .to_lowercase();
            let answers = items
                .iter()
                .map(|i| {
                    let t = i.text.to_lowercase();
                    let p = if t.contains(&claim) {
                        vec![0.9, 0.05, 0.03, 0.02]
                    } else if t.contains("not") {
                        vec![0.05, 0.05, 0.85, 0.05]
                    } else {
                        vec![0.1, 0.2, 0.1, 0.6]
                    };
                    Answer::Distribution {
                        probabilities: p,
                        pick: None,
                    }
                })
                .collect();
            let chars: usize = items.iter().map(|i| i.text.len()).sum();
            Ok(Response {
                answers,
                usage: Usage {
                    units: items.len() as u32,
                    input_tokens: (chars / 4) as u64,
                    output_tokens: 0,
                    // a judge that charges more than it said: 0.04 USD a call
                    cost_usd: if self.cost > 0.0 { 0.04 } else { 0.0 },
                },
            })
        }
    }

    struct Files(Vec<(&'static str, &'static str)>, usize);

    impl Sources for Files {
        fn fetch(&mut self, locator: &str) -> Result<Source, String> {
            self.1 += 1;
            self.0
                .iter()
                .find(|(l, _)| *l == locator)
                .map(|(_, t)| Source {
                    text: t.to_string(),
                    version: format!("v-{locator}"),
                })
                .ok_or_else(|| format!("{locator}: not found"))
        }
    }

    fn fact(claim: &str, cites: &[(&str, Option<&str>)]) -> Record {
        Record {
            claim: claim.into(),
            claim_context: None,
            kind: ClaimKind::Fact,
            premises: vec![],
            citations: cites
                .iter()
                .map(|(l, q)| Citation {
                    locator: l.to_string(),
                    quote: q.map(str::to_string),
                })
                .collect(),
            extraction_uncertain: false,
        }
    }

    fn request(records: Vec<Record>) -> VerifyRequest {
        VerifyRequest {
            input: Input::Records(records),
            budget_usd: 0.5,
            support_threshold: DEFAULT_SUPPORT_THRESHOLD,
            contradict_threshold: DEFAULT_CONTRADICT_THRESHOLD,
            judge_entails: true,
        }
    }

    const PAGE: &str = "Intro paragraph.\n\nThe ledger holds 2000 entries.\n\n\
                        Sleep does not merge XML lessons.\n\nClosing words.";

    #[test]
    fn verdicts_flags_counts_and_the_relay_block() {
        let mut judge = Scripted {
            calls: 0,
            cost: 0.0,
        };
        let mut files = Files(vec![("page.md", PAGE)], 0);
        let req = request(vec![
            fact(
                "the ledger holds 2000 entries",
                &[("page.md", Some("holds 2000 entries."))],
            ),
            fact(
                "sleep merges xml lessons",
                &[("page.md", Some("not in the page"))],
            ),
            fact("an uncited claim", &[]),
            fact("a claim on a missing page", &[("gone.md", None)]),
        ]);
        let out = run(&mut judge, &mut files, &req).unwrap();
        assert_eq!(files.1, 2, "each locator is fetched once");
        let r = &out.results;
        assert_eq!(r[0].verdict, Some(SUPPORTS_FULLY));
        assert_eq!(r[0].citations[0].quote_found, Some(true));
        assert_eq!(r[0].passages[0].via, "quote");
        assert!(r[0].passages[0].text.contains("Intro paragraph."));
        assert!(r[0].flags.is_empty(), "{:?}", r[0].flags);

        assert_eq!(r[1].citations[0].quote_found, Some(false));
        assert_eq!(r[1].verdict, Some(CONTRADICTS));
        assert_eq!(
            r[1].flags,
            [
                "quote_not_found",
                "support_below_threshold",
                "contradiction_above_threshold"
            ]
        );
        assert_eq!(r[2].flags, ["no_citations", "no_evidence"]);
        assert_eq!(r[3].flags, ["fetch_failed", "no_evidence"]);
        assert_eq!(r[3].verdict, None);
        assert_eq!(out.flagged, [1, 2, 3]);
        assert!(out.unqualified_factual_relay_blocked);
        let count = |k: &str| out.counts.iter().find(|c| c.0 == k).unwrap().1;
        assert_eq!(
            (count(SUPPORTS_FULLY), count(CONTRADICTS), count(UNVERIFIED)),
            (1, 1, 2)
        );
        assert_eq!(out.sources.len(), 2);
        assert_eq!(out.sources[0].version.as_deref(), Some("v-page.md"));
        assert!(
            out.sources[1]
                .error
                .as_deref()
                .unwrap()
                .contains("not found")
        );
        assert_eq!(out.usage.requests, 2);
    }

    /// One claim's row with one judged passage per distribution, reduced.
    #[test]
    fn an_unconfirmed_claim_leans_as_far_as_its_most_supportive_window() {
        // one window states part of the claim, the earlier one is silent;
        // both give full support the same low probability
        let r = reduced(&[[0.01, 0.01, 0.01, 0.97], [0.01, 0.97, 0.01, 0.01]], false);
        assert_eq!(r.verdict, Some(PARTIALLY_SUPPORTS));
        assert_eq!(r.best_passage, Some(1));
        // a silent source stays silent
        let r = reduced(&[[0.01, 0.01, 0.01, 0.97], [0.02, 0.01, 0.01, 0.96]], false);
        assert_eq!(r.verdict, Some(DOES_NOT_ADDRESS));
    }

    fn reduced(dists: &[[f64; 4]], quote_failed: bool) -> ClaimResult {
        reduced_as("c", &vec!["t"; dists.len()], dists, quote_failed, true)
    }

    /// `claim` over passages `texts` judged `dists`, reduced.
    fn reduced_as(
        claim: &str,
        texts: &[&str],
        dists: &[[f64; 4]],
        quote_failed: bool,
        judge_entails: bool,
    ) -> ClaimResult {
        let mut row = ClaimResult {
            record: 0,
            premise_of: None,
            claim: claim.into(),
            claim_context: None,
            kind: ClaimKind::Fact,
            extraction_uncertain: false,
            verdict: None,
            support: None,
            max_contradicts: None,
            best_passage: None,
            passages: dists
                .iter()
                .zip(texts)
                .map(|(d, text)| Passage {
                    locator: "p".into(),
                    start: 0,
                    end: 1,
                    via: "overlap",
                    text: text.to_string(),
                    probabilities: VERDICTS
                        .iter()
                        .zip(d)
                        .map(|(v, p)| (v.to_string(), *p))
                        .collect(),
                })
                .collect(),
            citations: Vec::new(),
            flags: if quote_failed {
                vec!["quote_not_found"]
            } else {
                vec![]
            },
        };
        let req = VerifyRequest {
            judge_entails,
            ..request(vec![])
        };
        reduce(&mut row, &req);
        row
    }

    #[test]
    fn a_judge_that_does_not_read_entailment_never_confirms() {
        let text = "The ledger holds 2000 entries.";
        let claim = "the ledger holds 2000 entries";
        let row = reduced_as(claim, &[text], &[[0.95, 0.05, 0.0, 0.0]], false, false);
        assert_eq!(row.verdict, Some(UNVERIFIED));
        assert_eq!(row.flags, [JUDGE_CANNOT_CONFIRM]);
        assert_eq!(row.support, Some(0.95), "its numbers are kept");
        let row = reduced_as(claim, &[text], &[[0.95, 0.05, 0.0, 0.0]], false, true);
        assert_eq!(row.verdict, Some(SUPPORTS_FULLY));
        assert!(row.flags.is_empty());
        // nor does it contradict, or say the source is silent
        for d in [[0.0, 0.0, 0.9, 0.1], [0.1, 0.0, 0.0, 0.9]] {
            let row = reduced_as(claim, &[text], &[d], false, false);
            assert_eq!(row.verdict, Some(UNVERIFIED), "{d:?}");
            assert!(row.flags.contains(&JUDGE_CANNOT_CONFIRM));
        }
    }

    #[test]
    fn a_passage_that_lacks_the_claims_details_does_not_confirm_it() {
        let claim = "The ledger holds 3000 entries.";
        let wrong = "The ledger holds 2000 entries.";
        let right = "Since June the ledger holds 3000 entries.";
        let row = reduced_as(claim, &[wrong], &[[0.9, 0.1, 0.0, 0.0]], false, true);
        assert_eq!(row.verdict, Some(PARTIALLY_SUPPORTS));
        assert_eq!(row.flags, [details::FIGURE_NOT_IN_PASSAGE]);
        // a judge that is sure outranks the checks, and the answer says so
        let row = reduced_as(claim, &[wrong], &[[0.97, 0.03, 0.0, 0.0]], false, true);
        assert_eq!(row.verdict, Some(SUPPORTS_FULLY));
        assert_eq!(row.flags, [DETAIL_CHECKS_OVERRULED]);
        // ...but not a judge that cannot read entailment
        let row = reduced_as(claim, &[wrong], &[[0.97, 0.03, 0.0, 0.0]], false, false);
        assert_eq!(row.verdict, Some(UNVERIFIED));
        // a weaker passage that states the figure confirms it, and is the best
        let row = reduced_as(
            claim,
            &[wrong, right],
            &[[0.97, 0.03, 0.0, 0.0], [0.85, 0.1, 0.0, 0.05]],
            false,
            true,
        );
        assert_eq!(row.verdict, Some(SUPPORTS_FULLY));
        assert_eq!(row.best_passage, Some(1));
        assert_eq!(row.support, Some(0.85));
        assert!(row.flags.is_empty());
    }

    #[test]
    fn the_verdict_follows_the_thresholds() {
        // [supports_fully, partially_supports, contradicts, does_not_address]
        let v = |d: &[[f64; 4]], q: bool| reduced(d, q).verdict.unwrap();
        assert_eq!(v(&[[0.85, 0.05, 0.05, 0.05]], false), SUPPORTS_FULLY);
        // the argmax is supports_fully, but below 0.80 it is not full support
        assert_eq!(v(&[[0.70, 0.10, 0.10, 0.10]], false), PARTIALLY_SUPPORTS);
        assert_eq!(v(&[[0.45, 0.00, 0.10, 0.45]], false), DOES_NOT_ADDRESS);
        // a uniform answer is no evidence of support
        assert_eq!(v(&[[0.25, 0.25, 0.25, 0.25]], false), DOES_NOT_ADDRESS);
        // one contradicting passage beats another's support
        assert_eq!(
            v(&[[0.90, 0.05, 0.0, 0.05], [0.1, 0.1, 0.6, 0.2]], false),
            CONTRADICTS
        );
        assert_eq!(v(&[[0.3, 0.1, 0.5, 0.1]], false), CONTRADICTS);
        // a quote that is not in the source never leaves full support
        assert_eq!(v(&[[0.95, 0.05, 0.0, 0.0]], true), PARTIALLY_SUPPORTS);
        // NaN clears nothing
        assert_eq!(v(&[[f64::NAN, 0.0, 0.0, 0.0]], false), DOES_NOT_ADDRESS);
    }

    #[test]
    fn flags_and_verdict_never_disagree() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % 1000) as f64
        };
        for _ in 0..5000 {
            let passages = 1 + (next() as usize) % 3;
            let dists: Vec<[f64; 4]> = (0..passages)
                .map(|_| {
                    let raw = [next(), next(), next(), next()];
                    let sum: f64 = raw.iter().sum::<f64>().max(1.0);
                    raw.map(|x| x / sum)
                })
                .collect();
            let quote_failed = next() < 300.0;
            let row = reduced(&dists, quote_failed);
            let has = |f: &str| row.flags.contains(&f);
            match row.verdict.unwrap() {
                SUPPORTS_FULLY => {
                    assert!(!has("support_below_threshold") && !has("quote_not_found"));
                    assert!(!has(JUDGE_CANNOT_CONFIRM));
                    assert!(!has("contradiction_above_threshold"));
                }
                CONTRADICTS => assert!(has("contradiction_above_threshold")),
                _ => assert!(!has("contradiction_above_threshold")),
            }
        }
    }

    /// Sources that record the stages they are told of.
    struct Staged(Files, Vec<(String, u64)>);

    impl Sources for Staged {
        fn fetch(&mut self, locator: &str) -> Result<Source, String> {
            self.0.fetch(locator)
        }
        fn stage(&mut self, name: &str, total: u64) {
            self.1.push((name.to_string(), total));
        }
    }

    #[test]
    fn the_stages_are_named_with_their_sizes_before_they_run() {
        let mut judge = Scripted {
            calls: 0,
            cost: 0.0,
        };
        let mut sources = Staged(Files(vec![("page.md", PAGE)], 0), Vec::new());
        let req = request(vec![
            fact("the ledger holds 2000 entries", &[("page.md", None)]),
            fact(
                "sleep merges xml lessons",
                &[("page.md", None), ("gone.md", None)],
            ),
            fact("an uncited claim", &[]),
        ]);
        let out = run(&mut judge, &mut sources, &req).unwrap();
        let passages: usize = out.results.iter().map(|r| r.passages.len()).sum();
        assert!(passages >= 2, "{passages}");
        assert_eq!(
            sources.1,
            [
                ("reading sources".to_string(), 2),
                ("judging passages".to_string(), passages as u64)
            ]
        );
        assert_eq!(sources.0.1, 2, "each source fetched once");
    }

    #[test]
    fn a_supported_claim_alone_does_not_block_relay() {
        let mut judge = Scripted {
            calls: 0,
            cost: 0.0,
        };
        let mut files = Files(vec![("page.md", PAGE)], 0);
        let out = run(
            &mut judge,
            &mut files,
            &request(vec![fact(
                "the ledger holds 2000 entries",
                &[("page.md", None)],
            )]),
        )
        .unwrap();
        assert!(!out.unqualified_factual_relay_blocked);
        assert_eq!(out.results[0].passages[0].via, "overlap");
        assert_eq!(out.results[0].verdict, Some(SUPPORTS_FULLY));
    }

    #[test]
    fn a_recommendation_gets_no_verdict_and_its_premises_are_facts() {
        let mut judge = Scripted {
            calls: 0,
            cost: 0.0,
        };
        let mut files = Files(vec![("page.md", PAGE)], 0);
        let mut rec = fact("use silt", &[("page.md", None)]);
        rec.kind = ClaimKind::Recommendation;
        rec.premises = vec!["the ledger holds 2000 entries".into()];
        let out = run(&mut judge, &mut files, &request(vec![rec])).unwrap();
        assert_eq!(out.results.len(), 2);
        assert_eq!(out.results[0].verdict, None);
        assert!(out.results[0].passages.is_empty());
        assert_eq!(out.results[1].premise_of, Some(0));
        assert_eq!(out.results[1].kind, ClaimKind::Fact);
        assert_eq!(out.results[1].verdict, Some(SUPPORTS_FULLY));
        assert_eq!(judge.calls, 1);
    }

    #[test]
    fn the_budget_stops_judging_and_flags_what_was_left() {
        let mut judge = Scripted {
            calls: 0,
            cost: 10.0,
        };
        let mut files = Files(vec![("page.md", PAGE)], 0);
        let mut req = request(vec![
            fact("the ledger holds 2000 entries", &[("page.md", None)]),
            fact("sleep merges xml lessons", &[("page.md", None)]),
        ]);
        req.budget_usd = 0.041;
        let out = run(&mut judge, &mut files, &req).unwrap();
        assert_eq!(judge.calls, 1);
        assert!(out.usage.budget_exhausted);
        assert!(out.results[1].flags.contains(&"budget_exhausted"));
        assert_eq!(out.results[1].verdict, None);
    }

    #[test]
    fn a_report_is_extracted_and_checked() {
        let mut judge = Scripted {
            calls: 0,
            cost: 0.0,
        };
        let mut files = Files(vec![("page.md", PAGE)], 0);
        let req = VerifyRequest {
            input: Input::Report(
                "# Findings\n\n- The ledger holds 2000 entries (`page.md`).\n".into(),
            ),
            ..request(vec![])
        };
        let out = run(&mut judge, &mut files, &req).unwrap();
        assert_eq!(out.results.len(), 1);
        assert!(out.results[0].extraction_uncertain);
        assert_eq!(out.results[0].claim_context.as_deref(), Some("Findings"));
        assert_eq!(out.results[0].citations[0].locator, "page.md");
    }

    #[test]
    fn bad_requests_are_refused_before_any_fetch() {
        let mut judge = Scripted {
            calls: 0,
            cost: 0.0,
        };
        let mut files = Files(vec![], 0);
        for (req, needle) in [
            (request(vec![]), "records is empty"),
            (request(vec![fact(" ", &[])]), "claim is empty"),
            (request(vec![fact("x", &[("", None)])]), "locator is empty"),
            (
                VerifyRequest {
                    support_threshold: 1.5,
                    ..request(vec![fact("x", &[])])
                },
                "support_threshold",
            ),
            (
                VerifyRequest {
                    input: Input::Report("```\ncode only\n```\n".into()),
                    ..request(vec![])
                },
                "no sentences",
            ),
        ] {
            let err = run(&mut judge, &mut files, &req).unwrap_err();
            assert!(err.to_string().contains(needle), "{err} lacks {needle}");
        }
        assert_eq!(files.1, 0);
    }
}
