//! Stated probabilities: the answer format for model judges that cannot
//! return log-probabilities (an agent CLI such as `claude -p` or
//! `codex exec`, a client's model through MCP sampling).
//!
//! Such a model is shown the same lettered options as every model judge
//! ([`super::prompt::options`], the relations of
//! [`super::prompt::RELATION_OPTIONS`]) and told to state, in JSON, how
//! probable each option is. A call to one costs seconds, so one prompt
//! carries a whole batch of numbered items and the reply is one object
//! keyed by item number:
//!
//! ```text
//! {"1": {"A": 0.9, "B": 0.1}, "2": {"A": 0.2, "B": 0.8}}
//! ```
//!
//! A JSON array of the per-item objects, in item order, is read as well
//! (some models answer lists with lists); the prompt asks for the object.
//!
//! Reading ([`read`]) is strict where a lenient reading would invent an
//! answer, and lenient only where the model's intent is plain:
//! - the JSON may sit in prose or a code fence: the last JSON value in the
//!   reply shaped like a batch is read (a model that corrects itself ends
//!   with the correction);
//! - each item must name exactly the offered letters (case aside), each a
//!   JSON number finite in [0, 1];
//! - the seed's validation accepts sums within 0.02 of 1; a stated
//!   distribution is rounded by the model option by option (two decimals
//!   over up to 20 options move the sum by up to 0.1), so sums within
//!   [`SUM_BAND`] of 1 are renormalised to 1, and anything further off
//!   (percentages, one independent probability per option, all zeros) is
//!   an invalid item;
//! - an item the reply leaves out, or answers badly, is an error for that
//!   item; an item number outside the batch is an error for the reply.
//!
//! The reply as a whole is an error when no batch can be found in it.
//! What a judge does with an invalid item is its own policy, written on
//! [`read_all`]: the seed aborts the call with a clear error, and a silt
//! judge reports it as a `judge-error` after at most one retry of the
//! items that failed (never a made-up uniform answer, which would read as
//! a finding).

use serde_json::{Map, Value};

use super::prompt::{self, MAX_OPTIONS, Prompt, RELATION_OPTIONS};
use crate::ledger::relate::{Lesson, RELATIONS, Relation};
use crate::types::{Answer, AnswerSpace, JudgeError, Question, Response, Usage};

/// How far a stated distribution's sum may stray from 1 and still be
/// read (renormalised): rounding, not a different kind of answer.
pub const SUM_BAND: f64 = 0.1;

/// Items per call a judge should send: a call to an agent CLI costs
/// seconds of start-up and a system prompt of thousands of tokens whatever
/// it asks, so fewer calls are cheaper and faster; but every item adds
/// about 30 output tokens to one JSON answer that must come back whole,
/// and a long answer is where a model starts skipping items. 30 items is
/// about 1,000 output tokens and, at silt's 4,000-character item cap,
/// at most about 30k input tokens.
pub const BATCH_ITEMS: usize = 30;

const SYSTEM: &str = "You answer closed questions about numbered items. For each item, \
judge which of the lettered options applies and state how probable each option is, as a \
number between 0 and 1; an item's probabilities sum to 1. Be decisive when the item is \
clear and spread the probability when it is not. Reply with one JSON object only, no \
other text: its keys are the item numbers, each value an object mapping every option's \
letter to its probability.";

/// The options block, each under its letter in the order given.
fn option_lines<S: AsRef<str>>(options: &[S]) -> String {
    options
        .iter()
        .enumerate()
        .map(|(k, o)| format!("{}. {}", prompt::letter(k), o.as_ref()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The closing instruction, with an example over this question's letters
/// whose rows each sum to exactly 1.
fn answer_line(items: usize, options: usize) -> String {
    let letters = prompt::letters(options);
    let row = |p: &dyn Fn(usize) -> &'static str| {
        let cells: Vec<String> = letters
            .iter()
            .enumerate()
            .map(|(k, l)| format!("\"{l}\": {}", p(k)))
            .collect();
        format!("{{{}}}", cells.join(", "))
    };
    let first = row(&|k| match k {
        0 => "0.9",
        1 => "0.1",
        _ => "0",
    });
    let last = row(&|k| match k {
        0 => "0.2",
        k if k == options - 1 => "0.8",
        _ => "0",
    });
    format!(
        "Answer all {items} item{} with one JSON object keyed by item number, every item \
         giving a probability for each of the letters {}. For example, for two items: \
         {{\"1\": {first}, \"2\": {last}}}",
        if items == 1 { "" } else { "s" },
        letters.join(", "),
    )
}

/// The numbered items block.
fn item_lines<S: AsRef<str>>(items: &[S]) -> String {
    items
        .iter()
        .enumerate()
        .map(|(i, text)| format!("Item {}:\n\"\"\"\n{}\n\"\"\"", i + 1, text.as_ref().trim()))
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn batch(question: &str, intro: &str, options: &[String], items: &[String]) -> Prompt {
    let head = format!(
        "Question: {}\n{intro}\n\nOptions:\n{}\n\nItems:\n\n",
        question.trim(),
        option_lines(options),
    );
    Prompt {
        system: SYSTEM.to_string(),
        user: format!(
            "{head}{}\n\n{}",
            item_lines(items),
            answer_line(items.len(), options.len())
        ),
        shared: head.len(),
    }
}

/// The prompt asking `question` of every item, numbered from 1, the
/// options in the question's order (a capable model needs no rotation of
/// the letters; the order the answers list them keeps the reading plain).
pub fn ask(question: &Question, items: &[&str]) -> Prompt {
    let intro = match &question.space {
        AnswerSpace::Judge { .. } => "For each item, decide whether the answer is yes or no.",
        AnswerSpace::Choose(_) => "For each item, choose the one option that applies.",
        AnswerSpace::Score(_) => "Place each item on this scale, lowest level first.",
    };
    let items: Vec<String> = items.iter().map(|s| s.to_string()).collect();
    batch(
        &question.text,
        intro,
        &prompt::options(&question.space),
        &items,
    )
}

/// The prompt relating each pair of lessons, the four relations of
/// [`RELATION_OPTIONS`] in their order (merge, contradict, sibling,
/// distinct), so a read distribution is a [`crate::ledger::relate::Relation`].
pub fn relate(pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Prompt {
    let options: Vec<String> = RELATION_OPTIONS.iter().map(|s| s.to_string()).collect();
    let items: Vec<String> = pairs
        .iter()
        .map(|(a, b)| {
            format!(
                "First: WHEN {} -> PREFER {}\nSecond: WHEN {} -> PREFER {}",
                a.when.trim(),
                a.prefer.trim(),
                b.when.trim(),
                b.prefer.trim()
            )
        })
        .collect();
    batch(
        "An agent learned two lessons, each \"WHEN situation -> PREFER action\". How do they \
         relate?",
        "Each item is a pair of lessons; for each pair, choose the one relation that applies.",
        &options,
        &items,
    )
}

/// How a judge's transport answers: each of `n` items' distribution over
/// `options` options, asking with the prompts `prompt` makes for a list
/// of item places (0-based), and what that cost.
pub type Answered = Result<(Vec<Vec<f64>>, Usage), JudgeError>;

/// A stated-probability judge's whole `ask`: the question checked, the
/// items asked through `answer(n, options, prompt)`, each distribution
/// the answer its kind takes; usage counts the items.
pub fn ask_with(
    question: &Question,
    items: &[&str],
    answer: impl FnOnce(usize, usize, &dyn Fn(&[usize]) -> Prompt) -> Answered,
) -> Result<Response, JudgeError> {
    crate::validate::validate_question(question).map_err(JudgeError::InvalidQuestion)?;
    let n = question.space.criteria().len();
    if n > MAX_OPTIONS {
        return Err(JudgeError::Unsupported(format!(
            "{n} options; this judge labels at most {MAX_OPTIONS}"
        )));
    }
    let (read, mut usage) = answer(items.len(), n, &|places| {
        let batch: Vec<&str> = places.iter().map(|&i| items[i]).collect();
        ask(question, &batch)
    })?;
    usage.units = items.len() as u32;
    let answers = read
        .into_iter()
        .map(|p| Answer::from_probabilities(&question.space, p))
        .collect();
    Ok(Response { answers, usage })
}

/// A stated-probability judge's relations: each pair asked through
/// `answer(n, 4, prompt)`, read in [`RELATIONS`]' order.
pub fn relate_with(
    pairs: &[(Lesson<'_>, Lesson<'_>)],
    answer: impl FnOnce(usize, usize, &dyn Fn(&[usize]) -> Prompt) -> Answered,
) -> Result<Vec<Relation>, JudgeError> {
    let (read, _) = answer(pairs.len(), RELATIONS.len(), &|places| {
        let batch: Vec<(Lesson<'_>, Lesson<'_>)> =
            places.iter().map(|&i| pairs[i].clone()).collect();
        relate(&batch)
    })?;
    Ok(read.into_iter().map(|p| [p[0], p[1], p[2], p[3]]).collect())
}

/// Why a reply could not be read at all.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplyError {
    /// No JSON value shaped like a batch anywhere in the reply.
    #[error("the reply holds no JSON object of numbered items ({0})")]
    NoAnswer(String),
    /// The batch names an item the prompt did not ask about.
    #[error("the reply answers item {0}, but the prompt numbered {1} items")]
    UnknownItem(String, usize),
}

/// Each item's distribution over the options (in letter order), or why
/// that item could not be read.
pub type Items = Vec<Result<Vec<f64>, String>>;

/// Reads a reply to a prompt of `items` items over `options` options.
pub fn read(reply: &str, items: usize, options: usize) -> Result<Items, ReplyError> {
    let found = last_batch(reply).ok_or_else(|| ReplyError::NoAnswer(glimpse(reply)))?;
    let mut answers: Vec<Option<&Value>> = vec![None; items];
    match &found {
        Value::Object(map) => {
            for (key, value) in map {
                let place = key
                    .trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| (1..=items).contains(&n))
                    .ok_or_else(|| ReplyError::UnknownItem(key.clone(), items))?;
                answers[place - 1] = Some(value);
            }
        }
        Value::Array(list) => {
            if list.len() > items {
                return Err(ReplyError::UnknownItem(list.len().to_string(), items));
            }
            for (k, value) in list.iter().enumerate() {
                answers[k] = Some(value);
            }
        }
        _ => unreachable!("last_batch returns objects and arrays only"),
    }
    Ok(answers
        .into_iter()
        .map(|a| match a {
            None => Err("missing from the reply".to_string()),
            Some(v) => distribution(v, options),
        })
        .collect())
}

/// Reads a reply whose every item must be valid: the first few invalid
/// items, each with why, are the error. This is the seed's rule (a
/// failing answer aborts the call); a judge may first ask the failed
/// items again ([`failed`]) and call this on the second reply.
pub fn read_all(reply: &str, items: usize, options: usize) -> Result<Vec<Vec<f64>>, String> {
    let read = read(reply, items, options).map_err(|e| e.to_string())?;
    let bad = failed(&read);
    if bad.is_empty() {
        return Ok(read.into_iter().map(|r| r.expect("checked")).collect());
    }
    Err(describe(&read, &bad))
}

/// The places (0-based) of the items that could not be read.
pub fn failed(items: &Items) -> Vec<usize> {
    (0..items.len()).filter(|&i| items[i].is_err()).collect()
}

/// Names up to five invalid items (1-based, as the prompt numbered them)
/// and why, and how many more there were.
pub fn describe(items: &Items, bad: &[usize]) -> String {
    let shown: Vec<String> = bad
        .iter()
        .take(5)
        .map(|&i| format!("item {}: {}", i + 1, items[i].as_ref().unwrap_err()))
        .collect();
    let more = match bad.len().saturating_sub(5) {
        0 => String::new(),
        n => format!(" (and {n} more)"),
    };
    format!(
        "{} of {} items were not answered validly: {}{more}",
        bad.len(),
        items.len(),
        shown.join("; ")
    )
}

/// One item's stated probabilities, checked and renormalised.
fn distribution(value: &Value, options: usize) -> Result<Vec<f64>, String> {
    let Value::Object(map) = value else {
        return Err(format!(
            "not an object of letters but {}",
            glimpse(&value.to_string())
        ));
    };
    let letters = prompt::letters(options);
    let mut p: Vec<Option<f64>> = vec![None; options];
    for (key, v) in map {
        let letter = key.trim().to_ascii_uppercase();
        let place = letters
            .iter()
            .position(|l| *l == letter)
            .ok_or_else(|| format!("names option '{key}', which was not offered"))?;
        if p[place].is_some() {
            return Err(format!("names option {letter} twice"));
        }
        let x = v
            .as_f64()
            .ok_or_else(|| format!("gives option {letter} {v}, not a number"))?;
        if !(x.is_finite() && (0.0..=1.0).contains(&x)) {
            return Err(format!("gives option {letter} {x}, not in [0, 1]"));
        }
        p[place] = Some(x);
    }
    let missing: Vec<&str> = (0..options)
        .filter(|&k| p[k].is_none())
        .map(|k| letters[k].as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!("gives no probability for {}", missing.join(", ")));
    }
    let p: Vec<f64> = p.into_iter().map(|x| x.expect("checked")).collect();
    let sum: f64 = p.iter().sum();
    if (sum - 1.0).abs() > SUM_BAND {
        return Err(format!(
            "its probabilities sum to {sum:.3}, not 1 (±{SUM_BAND})"
        ));
    }
    // a sum off by float rounding alone is left as stated
    if (sum - 1.0).abs() < 1e-9 {
        return Ok(p);
    }
    Ok(p.into_iter().map(|x| x / sum).collect())
}

/// Whether `v` has a batch's shape: an object keyed by numbers, or an
/// array of objects. An item's own letters object is not one, so a
/// truncated batch is never read from the items that survived in it.
fn batch_shaped(v: &Value) -> bool {
    match v {
        Value::Object(map) => !map.is_empty() && map.keys().all(|k| numbered(k)),
        Value::Array(list) => !list.is_empty() && list.iter().all(Value::is_object),
        _ => false,
    }
}

fn numbered(key: &str) -> bool {
    !key.trim().is_empty() && key.trim().bytes().all(|b| b.is_ascii_digit())
}

/// The last batch-shaped JSON value in `reply`: the whole reply when it is
/// one, else the values that start at a `{` or `[` outside any value
/// already read (prose, code fences and all).
fn last_batch(reply: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(reply.trim())
        && batch_shaped(&v)
    {
        return Some(v);
    }
    let mut found = None;
    let mut at = 0;
    while let Some(offset) = reply[at..].find(['{', '[']) {
        let start = at + offset;
        let mut values = serde_json::Deserializer::from_str(&reply[start..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(v)) => {
                at = start + values.byte_offset();
                if batch_shaped(&v) {
                    found = Some(v);
                }
            }
            _ => at = start + 1,
        }
    }
    found
}

/// The start of a text, for an error message.
fn glimpse(text: &str) -> String {
    let t = text.trim();
    if t.is_empty() {
        return "the reply is empty".into();
    }
    let cut: String = t.chars().take(120).collect();
    if cut.len() < t.len() {
        format!("it begins: {cut}…")
    } else {
        format!("it reads: {cut}")
    }
}

/// An object of `items` items, each mapping the letters to `p(item)`:
/// what a perfect model replies (tests, stand-ins).
pub fn reply_of(items: usize, p: impl Fn(usize) -> Vec<f64>) -> String {
    let mut batch = Map::new();
    for i in 0..items {
        let row: Map<String, Value> = p(i)
            .into_iter()
            .enumerate()
            .map(|(k, x)| (prompt::letter(k), Value::from(x)))
            .collect();
        batch.insert((i + 1).to_string(), Value::Object(row));
    }
    Value::Object(batch).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ChoiceOption;

    fn yes_no() -> Question {
        Question {
            text: "Does the commit fix a bug?".into(),
            space: AnswerSpace::Judge {
                yes: "It repairs wrong behaviour".into(),
                no: "It adds behaviour".into(),
            },
        }
    }

    #[test]
    fn a_batch_numbers_its_items_under_lettered_options() {
        let p = ask(&yes_no(), &["fix off-by-one", "  add a flag  "]);
        assert!(p.user.starts_with("Question: Does the commit fix a bug?\n"));
        assert!(
            p.user
                .contains("A. Yes: It repairs wrong behaviour\nB. No: It adds behaviour"),
            "{}",
            p.user
        );
        assert!(p.user.contains("Item 1:\n\"\"\"\nfix off-by-one\n\"\"\""));
        assert!(p.user.contains("Item 2:\n\"\"\"\nadd a flag\n\"\"\""));
        assert!(p.user.contains("Answer all 2 items"));
        // the example is itself a valid reply over these letters
        let example = &p.user[p.user.rfind("two items: ").unwrap() + 11..];
        assert_eq!(
            read_all(example, 2, 2).unwrap(),
            [vec![0.9, 0.1], vec![0.2, 0.8]]
        );
        assert!(p.user[..p.shared].ends_with("Items:\n\n"));
        assert!(p.system.contains("JSON object"));
    }

    #[test]
    fn choose_score_and_relations_offer_their_own_options() {
        let q = Question {
            text: "Which kind?".into(),
            space: AnswerSpace::Choose(vec![
                ChoiceOption {
                    label: "added".into(),
                    criterion: "new".into(),
                },
                ChoiceOption {
                    label: "fixed".into(),
                    criterion: "repair".into(),
                },
                ChoiceOption {
                    label: "removed".into(),
                    criterion: "gone".into(),
                },
            ]),
        };
        let p = ask(&q, &["x"]);
        assert!(p.user.contains("C. removed: gone"));
        assert!(p.user.contains("Answer all 1 item with"));
        assert!(p.user.contains("letters A, B, C."));
        let s = Question {
            text: "How bad?".into(),
            space: AnswerSpace::Score(vec!["low".into(), "mid".into(), "high".into()]),
        };
        assert!(ask(&s, &["x"]).user.contains("C. high (level 3 of 3)"));
        let a = Lesson {
            when: "indenting Python",
            prefer: "use 4 spaces",
        };
        let b = Lesson {
            when: "indenting Python",
            prefer: "use tabs",
        };
        let r = relate(&[(a.clone(), b.clone()), (b, a)]);
        assert!(r.user.contains("B. They contradict"));
        assert!(r.user.contains("D. Distinct"));
        assert!(r.user.contains(
            "Item 2:\n\"\"\"\nFirst: WHEN indenting Python -> PREFER use tabs\nSecond: WHEN \
             indenting Python -> PREFER use 4 spaces\n\"\"\""
        ));
        let example = &r.user[r.user.rfind("two items: ").unwrap() + 11..];
        assert_eq!(
            read_all(example, 2, 4).unwrap()[1],
            [0.2, 0.0, 0.0, 0.8],
            "{example}"
        );
    }

    #[test]
    fn json_is_found_in_prose_and_code_fences() {
        let bare = r#"{"1": {"A": 0.9, "B": 0.1}, "2": {"A": 0.25, "B": 0.75}}"#;
        let want = vec![vec![0.9, 0.1], vec![0.25, 0.75]];
        assert_eq!(read_all(bare, 2, 2).unwrap(), want);
        let prose = format!("Here is my answer: {bare} Hope it helps {{not json}}.");
        assert_eq!(read_all(&prose, 2, 2).unwrap(), want);
        let fenced = format!("Sure.\n\n```json\n{bare}\n```\n");
        assert_eq!(read_all(&fenced, 2, 2).unwrap(), want);
        // an array in item order is read too, letters in any case
        let array = r#"[{"a": 0.9, "b": 0.1}, {"A": 0.25, "B": 0.75}]"#;
        assert_eq!(read_all(array, 2, 2).unwrap(), want);
        // a model that corrects itself: the last batch is the answer
        let twice = format!(
            r#"First try {{"1": {{"A": 0.1, "B": 0.9}}, "2": {{"A": 1, "B": 0}}}}. Corrected: {bare}"#
        );
        assert_eq!(read_all(&twice, 2, 2).unwrap(), want);
    }

    #[test]
    fn malformed_json_or_no_json_is_an_error_for_the_reply() {
        for reply in [
            "",
            "I think the first one is a bug fix.",
            r#"{"1": {"A": 0.9, "B": 0.1}, "2": {"A": 0.2, "B": 0.8}"#,
            r#"{"1": {"A": 0.9, "B": 0.1}, "2": {"A": NaN, "B": 0.8}}"#,
            r#"{"A": 0.9, "B": 0.1}"#,
            "[1, 2]",
        ] {
            let e = read(reply, 2, 2).unwrap_err();
            assert!(matches!(e, ReplyError::NoAnswer(_)), "{reply}: {e}");
            assert!(read_all(reply, 2, 2).is_err());
        }
        assert!(read("", 1, 2).unwrap_err().to_string().contains("empty"));
        assert!(
            read("no json here", 1, 2)
                .unwrap_err()
                .to_string()
                .contains("it reads: no json here")
        );
    }

    #[test]
    fn items_outside_the_batch_fail_the_reply() {
        let extra = r#"{"1": {"A": 1, "B": 0}, "3": {"A": 1, "B": 0}}"#;
        assert_eq!(
            read(extra, 2, 2).unwrap_err(),
            ReplyError::UnknownItem("3".into(), 2)
        );
        let zero = r#"{"0": {"A": 1, "B": 0}}"#;
        assert!(read(zero, 2, 2).is_err());
        let long = r#"[{"A": 1, "B": 0}, {"A": 1, "B": 0}, {"A": 1, "B": 0}]"#;
        assert!(read(long, 2, 2).is_err());
    }

    #[test]
    fn each_invalid_item_says_why_and_the_rest_are_read() {
        let reply = r#"{
            "1": {"A": 0.7, "B": 0.2, "C": 0.1},
            "2": {"A": 0.7, "B": 0.3},
            "3": {"A": 0.7, "B": 0.2, "C": 0.05, "D": 0.05},
            "4": {"A": 1.5, "B": 0, "C": 0},
            "5": {"A": 0.5, "B": 0.5, "C": 0.5},
            "6": {"A": "0.5", "B": 0.5, "C": 0},
            "7": 0.4,
            "8": {"A": 0.31, "B": 0.31, "C": 0.31},
            "9": {"A": 0, "B": 0, "C": 0},
            "10": {"A": 0.5, "a": 0.5, "C": 0},
            "11": {"A": -0.1, "B": 0.6, "C": 0.5}
        }"#;
        let read = read(reply, 12, 3).unwrap();
        assert_eq!(read[0], Ok(vec![0.7, 0.2, 0.1]));
        let why = |i: usize| read[i].clone().unwrap_err();
        assert!(why(1).contains("no probability for C"), "{}", why(1));
        assert!(why(2).contains("'D', which was not offered"), "{}", why(2));
        assert!(why(3).contains("1.5, not in [0, 1]"), "{}", why(3));
        assert!(why(4).contains("sum to 1.500"), "{}", why(4));
        assert!(why(5).contains("not a number"), "{}", why(5));
        assert!(why(6).contains("not an object"), "{}", why(6));
        // rounding is renormalised, not rejected
        let p = read[7].clone().unwrap();
        assert!(p.iter().all(|x| (x - 1.0 / 3.0).abs() < 1e-12), "{p:?}");
        assert!(why(8).contains("sum to 0.000"), "{}", why(8));
        assert!(why(9).contains("twice"), "{}", why(9));
        assert!(why(10).contains("-0.1"), "{}", why(10));
        assert_eq!(why(11), "missing from the reply");
        assert_eq!(
            failed(&read),
            (1..12).filter(|&i| i != 7).collect::<Vec<_>>()
        );
        let message = describe(&read, &failed(&read));
        assert!(
            message.starts_with("10 of 12 items were not answered validly: item 2: gives no"),
            "{message}"
        );
        assert!(message.ends_with("(and 5 more)"), "{message}");
    }

    #[test]
    fn read_all_fails_the_call_on_any_missing_item() {
        let reply = r#"{"1": {"A": 0.6, "B": 0.4}}"#;
        let e = read_all(reply, 3, 2).unwrap_err();
        assert!(e.contains("2 of 3 items"), "{e}");
        assert!(
            e.contains("item 2: missing from the reply; item 3: missing"),
            "{e}"
        );
    }

    #[test]
    fn ask_with_checks_the_question_and_shapes_the_answers() {
        let mut asked = Vec::new();
        let r = ask_with(&yes_no(), &["a", "b", "c"], |n, options, prompt| {
            assert_eq!(options, 2);
            asked.push(prompt(&[2, 0]).user);
            Ok((vec![vec![0.8, 0.2]; n], Usage::default()))
        })
        .unwrap();
        assert_eq!(r.answers, vec![Answer::YesProbability(0.8); 3]);
        assert_eq!(r.usage.units, 3);
        // places pick the items, numbered afresh from 1
        assert!(
            asked[0].contains("Item 1:\n\"\"\"\nc\n") && asked[0].contains("Item 2:\n\"\"\"\na\n")
        );
        let never = |_: usize, _: usize, _: &dyn Fn(&[usize]) -> Prompt| -> Answered {
            panic!("an invalid question is never asked")
        };
        let bad = Question {
            text: "".into(),
            space: AnswerSpace::Score(vec!["low".into(), "high".into()]),
        };
        assert!(matches!(
            ask_with(&bad, &["x"], never),
            Err(JudgeError::InvalidQuestion(_))
        ));
        let wide = Question {
            text: "Which?".into(),
            space: AnswerSpace::Choose(
                (0..27)
                    .map(|i| ChoiceOption {
                        label: format!("o{i}"),
                        criterion: format!("option {i}"),
                    })
                    .collect(),
            ),
        };
        assert!(matches!(
            ask_with(&wide, &["x"], never),
            Err(JudgeError::Unsupported(_))
        ));
        let a = Lesson {
            when: "w",
            prefer: "p",
        };
        let rel = relate_with(&[(a.clone(), a)], |n, options, prompt| {
            assert_eq!(options, 4);
            assert!(prompt(&[0]).user.contains("D. Distinct"));
            Ok((vec![vec![0.1, 0.2, 0.3, 0.4]; n], Usage::default()))
        })
        .unwrap();
        assert_eq!(rel, [[0.1, 0.2, 0.3, 0.4]]);
    }

    #[test]
    fn a_perfect_reply_reads_back_exactly() {
        let reply = reply_of(40, |i| {
            let mut p = vec![0.0; 4];
            p[i % 4] = 1.0;
            p
        });
        let read = read_all(&reply, 40, 4).unwrap();
        assert!((0..40).all(|i| read[i][i % 4] == 1.0));
    }
}
