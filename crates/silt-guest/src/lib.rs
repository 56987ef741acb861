//! The `silt:judge` types as wit-bindgen generates them for guests, and
//! their conversions to and from `silt-core`, so every silt component shares
//! one copy (components name these with wit-bindgen's `with`).

#![deny(missing_docs)]

// Generated from the WIT contracts (wit/judge), which carry the docs.
#[allow(missing_docs)]
mod bindings {
    wit_bindgen::generate!({
        inline: "package silt:guest; world types { import silt:judge/types@0.1.2; }",
        path: "../../wit/judge",
        world: "silt:guest/types",
        generate_all,
    });
}

pub use bindings::silt;
pub use silt::judge::types;

pub mod body;
pub mod relations;
pub mod warm;

use silt_core::types as core;
use types as wit;

impl From<wit::Item> for core::Item {
    fn from(i: wit::Item) -> Self {
        core::Item {
            id: i.id,
            text: i.text,
        }
    }
}

impl From<&core::Item> for wit::Item {
    fn from(i: &core::Item) -> Self {
        wit::Item {
            id: i.id.clone(),
            text: i.text.clone(),
        }
    }
}

impl From<wit::Question> for core::Question {
    fn from(q: wit::Question) -> Self {
        let space = match q.space {
            wit::AnswerSpace::Judge(yn) => core::AnswerSpace::Judge {
                yes: yn.yes,
                no: yn.no,
            },
            wit::AnswerSpace::Choose(options) => core::AnswerSpace::Choose(
                options
                    .into_iter()
                    .map(|o| core::ChoiceOption {
                        label: o.label,
                        criterion: o.criterion,
                    })
                    .collect(),
            ),
            wit::AnswerSpace::Score(levels) => core::AnswerSpace::Score(levels),
        };
        core::Question {
            text: q.text,
            space,
        }
    }
}

impl From<&core::Question> for wit::Question {
    fn from(q: &core::Question) -> Self {
        let space = match &q.space {
            core::AnswerSpace::Judge { yes, no } => wit::AnswerSpace::Judge(wit::YesNo {
                yes: yes.clone(),
                no: no.clone(),
            }),
            core::AnswerSpace::Choose(options) => wit::AnswerSpace::Choose(
                options
                    .iter()
                    .map(|o| wit::ChoiceOption {
                        label: o.label.clone(),
                        criterion: o.criterion.clone(),
                    })
                    .collect(),
            ),
            core::AnswerSpace::Score(levels) => wit::AnswerSpace::Score(levels.clone()),
        };
        wit::Question {
            text: q.text.clone(),
            space,
        }
    }
}

impl From<wit::Usage> for core::Usage {
    fn from(u: wit::Usage) -> Self {
        core::Usage {
            units: u.units,
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cost_usd: u.cost_usd,
        }
    }
}

impl From<core::Usage> for wit::Usage {
    fn from(u: core::Usage) -> Self {
        wit::Usage {
            units: u.units,
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cost_usd: u.cost_usd,
        }
    }
}

impl From<wit::Response> for core::Response {
    fn from(r: wit::Response) -> Self {
        core::Response {
            answers: r
                .answers
                .into_iter()
                .map(|a| match a {
                    wit::Answer::YesProbability(p) => core::Answer::YesProbability(p),
                    wit::Answer::Distribution(d) => core::Answer::Distribution {
                        probabilities: d.probabilities,
                        pick: d.pick,
                    },
                })
                .collect(),
            usage: r.usage.into(),
        }
    }
}

impl From<core::Response> for wit::Response {
    fn from(r: core::Response) -> Self {
        wit::Response {
            answers: r
                .answers
                .into_iter()
                .map(|a| match a {
                    core::Answer::YesProbability(p) => wit::Answer::YesProbability(p),
                    core::Answer::Distribution {
                        probabilities,
                        pick,
                    } => wit::Answer::Distribution(wit::Distribution {
                        probabilities,
                        pick,
                    }),
                })
                .collect(),
            usage: r.usage.into(),
        }
    }
}

impl From<wit::JudgeInfo> for core::JudgeInfo {
    fn from(i: wit::JudgeInfo) -> Self {
        core::JudgeInfo {
            name: i.name,
            version: i.version,
            deterministic: i.deterministic,
            cost_per_million_input_tokens: i.cost_per_million_input_tokens,
            preferred_batch_size: i.preferred_batch_size,
        }
    }
}

impl From<core::JudgeInfo> for wit::JudgeInfo {
    fn from(i: core::JudgeInfo) -> Self {
        wit::JudgeInfo {
            name: i.name,
            version: i.version,
            deterministic: i.deterministic,
            cost_per_million_input_tokens: i.cost_per_million_input_tokens,
            preferred_batch_size: i.preferred_batch_size,
        }
    }
}

impl From<wit::JudgeError> for core::JudgeError {
    fn from(e: wit::JudgeError) -> Self {
        match e {
            wit::JudgeError::InvalidQuestion(m) => core::JudgeError::InvalidQuestion(m),
            wit::JudgeError::Unsupported(m) => core::JudgeError::Unsupported(m),
            wit::JudgeError::Unavailable(m) => core::JudgeError::Unavailable(m),
            wit::JudgeError::LimitExceeded(m) => core::JudgeError::LimitExceeded(m),
            wit::JudgeError::Internal(m) => core::JudgeError::Internal(m),
        }
    }
}

impl From<core::JudgeError> for wit::JudgeError {
    fn from(e: core::JudgeError) -> Self {
        match e {
            core::JudgeError::InvalidQuestion(m) => wit::JudgeError::InvalidQuestion(m),
            core::JudgeError::Unsupported(m) => wit::JudgeError::Unsupported(m),
            core::JudgeError::Unavailable(m) => wit::JudgeError::Unavailable(m),
            core::JudgeError::LimitExceeded(m) => wit::JudgeError::LimitExceeded(m),
            core::JudgeError::Internal(m) => wit::JudgeError::Internal(m),
        }
    }
}

/// Defines `ImportedJudge`: the judge a component imports (the generated
/// module named by the path, e.g. `silt::judge::judge`), seen through
/// `silt_core`'s `Judge` trait. A macro because each component's bindings
/// generate their own import module.
#[macro_export]
macro_rules! imported_judge {
    ($($module:ident)::+) => {
        /// The imported judge, seen through `silt_core`'s trait.
        struct ImportedJudge;

        impl silt_core::types::Judge for ImportedJudge {
            fn info(&mut self) -> silt_core::types::JudgeInfo {
                $($module)::+::info().into()
            }

            fn ask(
                &mut self,
                question: &silt_core::types::Question,
                items: &[silt_core::types::Item],
            ) -> Result<silt_core::types::Response, silt_core::types::JudgeError> {
                let items: Vec<_> = items.iter().map(Into::into).collect();
                $($module)::+::ask(&question.into(), &items)
                    .map(Into::into)
                    .map_err(Into::into)
            }
        }
    };
}

/// Defines `usage_out` and `error_out`: `silt_core::ask`'s usage and error
/// as the `silt:sieve/types` types of the component's bindings (named by the
/// module path).
#[macro_export]
macro_rules! ask_conversions {
    ($($module:ident)::+) => {
        fn usage_out(u: silt_core::ask::AskUsage) -> $($module)::+::AskUsage {
            $($module)::+::AskUsage {
                tokens: u.tokens,
                input_tokens: u.input_tokens,
                output_tokens: u.output_tokens,
                requests: u.requests,
                cache_hits: u.cache_hits,
                cost_usd: u.cost_usd,
                budget_exhausted: u.budget_exhausted,
            }
        }

        fn error_out(e: silt_core::ask::AskError) -> $($module)::+::AskError {
            match e {
                silt_core::ask::AskError::InvalidRequest(m) => {
                    $($module)::+::AskError::InvalidRequest(m)
                }
                silt_core::ask::AskError::JudgeFailed(m) => $($module)::+::AskError::JudgeFailed(m),
            }
        }
    };
}
