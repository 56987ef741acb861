//! `sieve_route`: one request, the caller's routes, one choice (or
//! `none`). More than ten routes are shortlisted in groups first.

use std::collections::HashSet;

use serde::Serialize;

use crate::ask::{self, AskError, AskRequest, AskRows, AskUsage, DEFAULT_MAX_CHARS};
use crate::budget::Budget;
use crate::types::{AnswerSpace, ChoiceOption, Item, Judge, Question};

/// The budget when the caller sets none, in US dollars.
pub const DEFAULT_ROUTE_BUDGET_USD: f64 = 0.10;
/// Routes asked about in one choice.
pub const GROUP: usize = 10;
/// Routes each group passes to the final choice.
pub const KEEP_PER_GROUP: usize = 2;
/// With more than this many groups, only the strongest survivors go on.
pub const MAX_GROUPS_KEPT_WHOLE: usize = 5;
/// The most survivors in the final choice when groups were cut.
pub const FINAL_MAX: usize = 10;
/// The reserved label for "no listed route fits".
pub const NONE: &str = "none";
const NONE_CRITERION: &str = "no listed route fits";
const QUESTION: &str = "Which route should handle this request?";

/// A destination the caller offers.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    /// Unique among the routes (compared trimmed); [`NONE`] is reserved.
    pub id: String,
    /// What the route handles; must not be blank.
    pub description: String,
    /// Other names for it, read after the description.
    pub aliases: Vec<String>,
}

impl Route {
    /// What the judge reads for this route: its description, then its
    /// aliases.
    pub fn criterion(&self) -> String {
        if self.aliases.is_empty() {
            self.description.clone()
        } else {
            format!(
                "{}  Also known as: {}",
                self.description,
                self.aliases.join(", ")
            )
        }
    }
}

/// One route call.
#[derive(Debug, Clone)]
pub struct RouteRequest {
    /// The request to route; must not be blank.
    pub ask: String,
    /// The routes to choose from; at least one.
    pub routes: Vec<Route>,
    /// The most the call may spend, in US dollars.
    pub budget_usd: f64,
}

/// The choice, its probability, the final distribution (routes then
/// `none`) and what it took.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RouteOutcome {
    /// A route id, or [`NONE`]; ties go to the earlier route.
    pub choice: String,
    /// The choice's probability in the final choice.
    pub confidence: f64,
    /// Every option of the final choice, finalist routes then `none`.
    pub probabilities: Vec<(String, f64)>,
    /// What every stage's judge calls cost together.
    pub usage: AskUsage,
    /// 1, or 2 when routes were shortlisted in groups first.
    pub stages: u32,
    /// Groups in the first stage (1 when there was one stage).
    pub batches: u32,
    /// Routes offered in each judge request, in the order asked.
    pub request_sizes: Vec<u32>,
}

fn invalid(m: impl Into<String>) -> AskError {
    AskError::InvalidRequest(m.into())
}

fn validate(req: &RouteRequest) -> Result<(), AskError> {
    if req.ask.trim().is_empty() {
        return Err(invalid("ask is empty: pass the request to route"));
    }
    if req.routes.is_empty() {
        return Err(invalid(
            "routes is empty: pass at least one {id, description, aliases}",
        ));
    }
    let mut seen = HashSet::new();
    for (i, r) in req.routes.iter().enumerate() {
        let id = r.id.trim();
        if id.is_empty() {
            return Err(invalid(format!("route {i} has an empty id")));
        }
        if id.eq_ignore_ascii_case(NONE) {
            return Err(invalid(
                "route id 'none' is reserved for \"no listed route fits\"; rename that route",
            ));
        }
        if !seen.insert(id) {
            return Err(invalid(format!(
                "route id '{id}' appears twice; ids must be unique"
            )));
        }
        if r.description.trim().is_empty() {
            return Err(invalid(format!(
                "route '{id}' has no description: say what it handles"
            )));
        }
    }
    if !req.budget_usd.is_finite() || req.budget_usd < 0.0 {
        return Err(invalid(format!(
            "budget_usd is {}, it must be a number >= 0",
            req.budget_usd
        )));
    }
    Ok(())
}

/// One choice over `routes` and `none`: (label, probability) in that order.
fn choose(
    judge: &mut dyn Judge,
    ask_text: &str,
    routes: &[&Route],
    budget: &mut Budget,
    usage: &mut AskUsage,
) -> Result<Vec<(String, f64)>, AskError> {
    let mut options: Vec<ChoiceOption> = routes
        .iter()
        .map(|r| ChoiceOption {
            label: r.id.trim().to_string(),
            criterion: r.criterion(),
        })
        .collect();
    options.push(ChoiceOption {
        label: NONE.into(),
        criterion: NONE_CRITERION.into(),
    });
    let out = ask::run_budgeted(
        judge,
        &AskRequest {
            question: Question {
                text: QUESTION.into(),
                space: AnswerSpace::Choose(options),
            },
            items: vec![Item {
                id: "ask".into(),
                text: ask_text.into(),
            }],
            max_chars: DEFAULT_MAX_CHARS,
            budget_usd: budget.limit_usd(),
            top_k: None,
            threshold: 0.0,
        },
        ask::MAX_BATCH,
        budget,
    )?;
    usage.add(&out.usage);
    match out.rows {
        AskRows::Choose(mut rows) if !rows.is_empty() => Ok(rows.remove(0).probabilities),
        _ => Err(invalid(format!(
            "budget_usd {} ran out before the route was chosen; raise it",
            budget.limit_usd()
        ))),
    }
}

/// Runs a route call against `judge`.
pub fn run(judge: &mut dyn Judge, req: &RouteRequest) -> Result<RouteOutcome, AskError> {
    validate(req)?;
    let mut usage = AskUsage::default();
    let cost = judge.info().cost_per_million_input_tokens;
    let mut budget = Budget::new(req.budget_usd, cost);
    let mut sizes = Vec::new();
    let all: Vec<&Route> = req.routes.iter().collect();
    let (finalists, stages, batches) = if all.len() <= GROUP {
        (all, 1, 1)
    } else {
        // (position, probability) of each group's strongest routes
        let mut survivors: Vec<(usize, f64)> = Vec::new();
        for (g, group) in all.chunks(GROUP).enumerate() {
            sizes.push(group.len() as u32);
            let probs = choose(judge, &req.ask, group, &mut budget, &mut usage)?;
            let mut ranked: Vec<(usize, f64)> = probs[..group.len()]
                .iter()
                .enumerate()
                .map(|(i, (_, p))| (g * GROUP + i, *p))
                .collect();
            ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            survivors.extend(ranked.into_iter().take(KEEP_PER_GROUP));
        }
        let groups = all.len().div_ceil(GROUP);
        if groups > MAX_GROUPS_KEPT_WHOLE {
            survivors.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            survivors.truncate(FINAL_MAX);
        }
        survivors.sort_by_key(|s| s.0);
        let finalists = survivors.iter().map(|&(i, _)| all[i]).collect();
        (finalists, 2, groups as u32)
    };
    sizes.push(finalists.len() as u32);
    let probabilities = choose(judge, &req.ask, &finalists, &mut budget, &mut usage)?;
    // first maximum wins, so ties go to the earlier route (and `none` last)
    let best =
        probabilities.iter().enumerate().fold(
            0,
            |b, (i, (_, p))| if *p > probabilities[b].1 { i } else { b },
        );
    Ok(RouteOutcome {
        choice: probabilities[best].0.clone(),
        confidence: probabilities[best].1,
        probabilities,
        usage,
        stages,
        batches,
        request_sizes: sizes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Answer, JudgeError, JudgeInfo, Response, Usage};

    /// Puts most of the mass on the option whose criterion mentions the
    /// asked word, and records how many options each request offered.
    struct Keyword {
        sizes: Vec<usize>,
    }

    impl Judge for Keyword {
        fn info(&mut self) -> JudgeInfo {
            JudgeInfo {
                name: "keyword".into(),
                version: "0".into(),
                deterministic: true,
                cost_per_million_input_tokens: 0.0,
                preferred_batch_size: 40,
            }
        }

        fn ask(&mut self, q: &Question, items: &[Item]) -> Result<Response, JudgeError> {
            let AnswerSpace::Choose(options) = &q.space else {
                panic!("route asks choose questions")
            };
            assert_eq!(options.last().unwrap().label, NONE);
            self.sizes.push(options.len() - 1);
            let word = items[0].text.as_str();
            let hits: Vec<bool> = options.iter().map(|o| o.criterion.contains(word)).collect();
            let n = hits.iter().filter(|h| **h).count();
            let probabilities: Vec<f64> = if n == 0 {
                // nothing fits: `none` takes the mass
                (0..options.len())
                    .map(|i| {
                        if i == options.len() - 1 {
                            0.9
                        } else {
                            0.1 / (options.len() - 1) as f64
                        }
                    })
                    .collect()
            } else {
                hits.iter()
                    .map(|&h| if h { 1.0 / n as f64 } else { 0.0 })
                    .collect()
            };
            Ok(Response {
                answers: vec![Answer::Distribution {
                    probabilities,
                    pick: None,
                }],
                usage: Usage::default(),
            })
        }
    }

    fn routes(n: usize) -> Vec<Route> {
        (0..n)
            .map(|i| Route {
                id: format!("r{i}"),
                description: format!("handles topic{i}x"),
                aliases: if i == 3 {
                    vec!["billing".into(), "invoices".into()]
                } else {
                    vec![]
                },
            })
            .collect()
    }

    fn route(ask: &str, n: usize) -> (Result<RouteOutcome, AskError>, Vec<usize>) {
        let mut judge = Keyword { sizes: vec![] };
        let out = run(
            &mut judge,
            &RouteRequest {
                ask: ask.into(),
                routes: routes(n),
                budget_usd: DEFAULT_ROUTE_BUDGET_USD,
            },
        );
        (out, judge.sizes)
    }

    #[test]
    fn a_few_routes_are_one_choice_with_none() {
        let (out, sizes) = route("topic2x", 4);
        let out = out.unwrap();
        assert_eq!((out.choice.as_str(), out.confidence), ("r2", 1.0));
        assert_eq!((out.stages, out.batches), (1, 1));
        assert_eq!(sizes, [4]);
        let labels: Vec<&str> = out.probabilities.iter().map(|p| p.0.as_str()).collect();
        assert_eq!(labels, ["r0", "r1", "r2", "r3", NONE]);
    }

    #[test]
    fn aliases_are_part_of_the_criterion() {
        let (out, _) = route("invoices", 4);
        assert_eq!(out.unwrap().choice, "r3");
        assert_eq!(
            routes(4)[3].criterion(),
            "handles topic3x  Also known as: billing, invoices"
        );
    }

    #[test]
    fn nothing_fits_is_none() {
        let (out, _) = route("weather", 4);
        assert_eq!(out.unwrap().choice, NONE);
    }

    #[test]
    fn twenty_five_routes_take_two_stages_and_four_requests() {
        let (out, sizes) = route("topic17x", 25);
        let out = out.unwrap();
        assert_eq!(out.choice, "r17");
        assert_eq!((out.stages, out.batches), (2, 3));
        let mut sorted = sizes.clone();
        sorted.sort();
        assert_eq!(sorted, [5, 6, 10, 10]);
        assert_eq!(out.request_sizes, [10, 10, 5, 6]);
    }

    #[test]
    fn more_than_five_groups_send_the_ten_strongest_on() {
        let (out, sizes) = route("topic57x", 61);
        let out = out.unwrap();
        assert_eq!(out.choice, "r57");
        assert_eq!(out.batches, 7);
        assert_eq!(*sizes.last().unwrap(), FINAL_MAX);
    }

    #[test]
    fn bad_routes_are_refused_with_what_to_fix() {
        let mut judge = Keyword { sizes: vec![] };
        let mut bad = |routes: Vec<Route>, needle: &str| {
            let err = run(
                &mut judge,
                &RouteRequest {
                    ask: "x".into(),
                    routes,
                    budget_usd: 0.1,
                },
            )
            .unwrap_err()
            .to_string();
            assert!(err.contains(needle), "{err}");
        };
        let r = |id: &str| Route {
            id: id.into(),
            description: "d".into(),
            aliases: vec![],
        };
        bad(vec![], "routes is empty");
        bad(vec![r("a"), r("a")], "appears twice");
        bad(vec![r("None")], "reserved");
        bad(vec![r(" ")], "empty id");
        bad(
            vec![Route {
                id: "a".into(),
                description: " ".into(),
                aliases: vec![],
            }],
            "no description",
        );
        assert!(judge.sizes.is_empty(), "no judge call for a bad request");
    }
}
