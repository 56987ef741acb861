//! A question's items sent to the client's model in numbered batches, the
//! stated answers read back, and invalid answers handled the one way
//! `silt_core::closed::stated` allows: the items that failed are asked
//! once more, in smaller batches, and any still invalid fail the whole
//! call with a judge error naming them. An invented answer (uniform, or
//! the first letter) would read as a finding, so none is ever made up.

use silt_core::closed::{Prompt, stated};
use silt_core::types::Usage;
use silt_guest::types::JudgeError;

use crate::silt::host::sampling::{self, ModelPreferences, Request, SamplingError};

/// Items per batch when asking again: a batch that ran out of tokens or
/// lost items would likely do it again at its first size.
const RETRY_ITEMS: usize = 10;

/// Model families whose small, fast members suit closed questions; the
/// client maps them onto what it has.
const HINTS: [&str; 3] = ["haiku", "mini", "flash"];

/// The judges that work without an MCP client that samples.
const OTHER_JUDGES: &str = "lexical (the default), embedding, embedding-static, llm, or openai \
     with SILT_MODEL_URL";

/// What the client's model costs per million tokens, in US dollars, as
/// the user states it (`SILT_SAMPLING_PRICE_IN`, `SILT_SAMPLING_PRICE_OUT`;
/// 0 when unset): silt cannot see the client's price, and with one stated
/// usage reports a cost and `budget_usd` binds.
pub struct Prices {
    pub input: f64,
    pub output: f64,
}

impl Prices {
    pub fn from_env() -> Prices {
        let read = |key: &str| {
            std::env::var(key)
                .ok()
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|p| p.is_finite() && *p >= 0.0)
                .unwrap_or(0.0)
        };
        Prices {
            input: read("SILT_SAMPLING_PRICE_IN"),
            output: read("SILT_SAMPLING_PRICE_OUT"),
        }
    }
}

/// A fast, cheap model: closed questions with the options spelled out
/// need little reasoning, and a batch may hold 30 items.
fn preferences() -> ModelPreferences {
    ModelPreferences {
        hints: HINTS.iter().map(|h| h.to_string()).collect(),
        cost_priority: 0.8,
        speed_priority: 0.9,
        intelligence_priority: 0.5,
    }
}

/// The tokens a reply to `items` items over `options` options needs: per
/// item its key and braces (about 4) and per option a letter and a
/// probability (about 6), and room for a code fence.
pub fn max_tokens(items: usize, options: usize) -> u32 {
    (64 + items * (4 + 6 * options)) as u32
}

/// Each of `n` items' distribution over `options` options, asking the
/// client with the prompts `prompt` makes for a list of item places.
pub fn answer(
    n: usize,
    options: usize,
    prompt: impl Fn(&[usize]) -> Prompt,
) -> Result<(Vec<Vec<f64>>, Usage), JudgeError> {
    sampling::available().map_err(|why| {
        JudgeError::Unavailable(format!(
            "the sampling judge cannot ask the client's model: {why}. Use {OTHER_JUDGES}"
        ))
    })?;
    let mut usage = Usage::default();
    let mut answers: Vec<Option<Vec<f64>>> = vec![None; n];
    let mut why: Vec<String> = vec![String::new(); n];
    let mut models: Vec<String> = Vec::new();
    let all: Vec<usize> = (0..n).collect();
    let mut pending = all;
    for size in [stated::BATCH_ITEMS, RETRY_ITEMS] {
        if pending.is_empty() {
            break;
        }
        let batches: Vec<&[usize]> = pending.chunks(size).collect();
        let prompts: Vec<Prompt> = batches.iter().map(|b| prompt(b)).collect();
        let requests: Vec<Request> = prompts
            .iter()
            .zip(&batches)
            .map(|(p, b)| Request {
                system: p.system.clone(),
                user: p.user.clone(),
                max_tokens: max_tokens(b.len(), options),
                temperature: Some(0.0),
                preferences: preferences(),
            })
            .collect();
        let replies = sampling::create_messages(&requests);
        for ((reply, batch), prompt) in replies.into_iter().zip(&batches).zip(&prompts) {
            usage.input_tokens +=
                silt_core::text::estimate_tokens(prompt.system.len() + prompt.user.len());
            let reply = match reply {
                Ok(r) => r,
                Err(e) => {
                    // what no retry can mend ends the call; an unusable
                    // reply fails its items, which are asked again
                    let said = settled(e)?;
                    for &i in *batch {
                        why[i] = said.clone();
                    }
                    continue;
                }
            };
            usage.output_tokens += silt_core::text::estimate_tokens(reply.text.len());
            if !models.contains(&reply.model) {
                models.push(reply.model.clone());
            }
            match stated::read(&reply.text, batch.len(), options) {
                Ok(items) => {
                    for (&i, item) in batch.iter().zip(items) {
                        match item {
                            Ok(p) => answers[i] = Some(p),
                            Err(e) => why[i] = e,
                        }
                    }
                }
                Err(e) => {
                    for &i in *batch {
                        why[i] = e.to_string();
                    }
                }
            }
        }
        pending = (0..n).filter(|&i| answers[i].is_none()).collect();
    }
    if !pending.is_empty() {
        let items: stated::Items = (0..n)
            .map(|i| answers[i].clone().ok_or_else(|| why[i].clone()))
            .collect();
        let model = match models.len() {
            0 => "the client's model".to_string(),
            _ => format!("the client's model ({})", models.join(", ")),
        };
        return Err(JudgeError::Unavailable(format!(
            "{model} did not answer validly, even when asked again: {}; nothing was \
             answered. Ask again, or use {OTHER_JUDGES}",
            stated::describe(&items, &pending)
        )));
    }
    let answers = answers
        .into_iter()
        .map(|a| a.expect("every item answered"))
        .collect();
    let prices = Prices::from_env();
    usage.cost_usd = (usage.input_tokens as f64 * prices.input
        + usage.output_tokens as f64 * prices.output)
        / 1e6;
    Ok((answers, usage))
}

/// A request's error as this judge acts on it: the reason its items are
/// asked again, or the judge error that ends the call.
fn settled(e: SamplingError) -> Result<String, JudgeError> {
    match e {
        SamplingError::Unavailable(why) => Err(JudgeError::Unavailable(format!(
            "the sampling judge cannot ask the client's model: {why}. Use {OTHER_JUDGES}"
        ))),
        SamplingError::Refused(why) => Err(JudgeError::Unavailable(format!(
            "the client refused to sample: {why}"
        ))),
        SamplingError::Timeout(why) => Err(JudgeError::LimitExceeded(format!(
            "the client's model did not answer in time: {why}"
        ))),
        SamplingError::MaxTokens(why) => Ok(format!("the reply was cut at max tokens ({why})")),
        SamplingError::Failed(why) => Ok(format!("the reply was unusable ({why})")),
    }
}
