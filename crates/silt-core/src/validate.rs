//! Validation of a judge's answers before anyone acts on them.
//!
//! A judge may be third-party code: an answer that does not cover exactly the
//! offered options, is not a probability, or picks an option that is not the
//! most likely is refused with a message that names the fault.

use crate::types::{Answer, AnswerSpace, Question, Response};

/// How far a distribution's sum may stray from 1.
pub const SUM_TOLERANCE: f64 = 0.02;
/// How far below the maximum a reported pick may be (answers are rounded).
pub const PICK_TOLERANCE: f64 = 0.01;

/// Checks that a question is well formed: text present, criteria present,
/// at least two options or levels, labels unique and non-empty.
pub fn validate_question(question: &Question) -> Result<(), String> {
    if question.text.trim().is_empty() {
        return Err("the question is empty: write what the items should be judged on".into());
    }
    match &question.space {
        AnswerSpace::Judge { yes, no } => {
            if yes.trim().is_empty() || no.trim().is_empty() {
                return Err("a judge question needs both `yes` and `no` criteria".into());
            }
        }
        AnswerSpace::Choose(options) => {
            if options.len() < 2 {
                return Err(format!(
                    "a choose question needs at least 2 options, got {}",
                    options.len()
                ));
            }
            for (i, o) in options.iter().enumerate() {
                if o.label.trim().is_empty() {
                    return Err(format!("option {i} has an empty label"));
                }
                if o.criterion.trim().is_empty() {
                    return Err(format!(
                        "option '{}' says nothing about when it applies",
                        o.label
                    ));
                }
                if options[..i].iter().any(|p| p.label == o.label) {
                    return Err(format!("option label '{}' is given twice", o.label));
                }
            }
        }
        AnswerSpace::Score(levels) => {
            if levels.len() < 2 {
                return Err(format!(
                    "a score question needs at least 2 levels, got {}",
                    levels.len()
                ));
            }
            if let Some(i) = levels.iter().position(|l| l.trim().is_empty()) {
                return Err(format!("level {i} is empty"));
            }
            if let Some(i) = (1..levels.len()).find(|&i| levels[..i].contains(&levels[i])) {
                return Err(format!("level '{}' is given twice", levels[i]));
            }
        }
    }
    Ok(())
}

/// Checks that `response` answers `question` for `item_count` items.
pub fn validate_response(
    question: &Question,
    item_count: usize,
    response: &Response,
) -> Result<(), String> {
    if response.answers.len() != item_count {
        return Err(format!(
            "returned {} answers for {} items",
            response.answers.len(),
            item_count
        ));
    }
    let usage = &response.usage;
    if !usage.cost_usd.is_finite() || usage.cost_usd < 0.0 {
        return Err(format!(
            "reported a cost of {} USD (must be finite and >= 0)",
            usage.cost_usd
        ));
    }
    for (i, answer) in response.answers.iter().enumerate() {
        validate_answer(&question.space, answer).map_err(|e| format!("answer {i}: {e}"))?;
    }
    Ok(())
}

/// Checks one answer against the answer space it should cover.
pub fn validate_answer(space: &AnswerSpace, answer: &Answer) -> Result<(), String> {
    match (space, answer) {
        (AnswerSpace::Judge { .. }, Answer::YesProbability(p)) => check_probability(*p),
        (
            AnswerSpace::Choose(_) | AnswerSpace::Score(_),
            Answer::Distribution {
                probabilities,
                pick,
            },
        ) => {
            let n = space.labels().len();
            if probabilities.len() != n {
                return Err(format!(
                    "a distribution over {} values for {} offered {}",
                    probabilities.len(),
                    n,
                    if matches!(space, AnswerSpace::Choose(_)) {
                        "options"
                    } else {
                        "levels"
                    }
                ));
            }
            for p in probabilities {
                check_probability(*p)?;
            }
            let sum: f64 = probabilities.iter().sum();
            if (sum - 1.0).abs() > SUM_TOLERANCE {
                return Err(format!(
                    "probabilities sum to {sum:.4}, not 1 (±{SUM_TOLERANCE})"
                ));
            }
            if let Some(pick) = pick {
                let max = probabilities.iter().copied().fold(f64::MIN, f64::max);
                match probabilities.get(*pick as usize) {
                    None => return Err(format!("picked option {pick} of {n}")),
                    Some(p) if *p < max - PICK_TOLERANCE => {
                        return Err(format!(
                            "picked option {pick} with probability {p:.4} below the maximum {max:.4}"
                        ));
                    }
                    Some(_) => {}
                }
            }
            Ok(())
        }
        (space, Answer::YesProbability(_)) => {
            Err(format!("a yes probability for a {} question", space.kind()))
        }
        (space, Answer::Distribution { .. }) => {
            Err(format!("a distribution for a {} question", space.kind()))
        }
    }
}

fn check_probability(p: f64) -> Result<(), String> {
    if p.is_finite() && (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(format!("probability {p} is not finite in [0, 1]"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ChoiceOption, Usage};

    fn choose3() -> Question {
        let opt = |l: &str| ChoiceOption {
            label: l.into(),
            criterion: format!("{l} things"),
        };
        Question {
            text: "which".into(),
            space: AnswerSpace::Choose(vec![opt("a"), opt("b"), opt("c")]),
        }
    }

    fn judge() -> Question {
        Question {
            text: "bug?".into(),
            space: AnswerSpace::Judge {
                yes: "y".into(),
                no: "n".into(),
            },
        }
    }

    fn dist(p: &[f64], pick: Option<u32>) -> Answer {
        Answer::Distribution {
            probabilities: p.to_vec(),
            pick,
        }
    }

    fn response(answers: Vec<Answer>) -> Response {
        Response {
            answers,
            usage: Usage::default(),
        }
    }

    #[test]
    fn accepts_good_answers() {
        let q = choose3();
        validate_response(&q, 1, &response(vec![dist(&[0.5, 0.3, 0.2], Some(0))])).unwrap();
        // rounded answers: sum 0.99 and a pick 0.01 below the max both pass
        validate_response(&q, 1, &response(vec![dist(&[0.33, 0.33, 0.33], Some(2))])).unwrap();
        validate_response(&q, 1, &response(vec![dist(&[0.40, 0.41, 0.19], Some(0))])).unwrap();
        validate_response(
            &judge(),
            2,
            &response(vec![
                Answer::YesProbability(0.0),
                Answer::YesProbability(1.0),
            ]),
        )
        .unwrap();
    }

    #[test]
    fn refuses_sum_of_two() {
        let err = validate_response(&choose3(), 1, &response(vec![dist(&[1.0, 0.5, 0.5], None)]))
            .unwrap_err();
        assert!(err.contains("sum to 2.0000"), "{err}");
    }

    #[test]
    fn refuses_wrong_shapes() {
        let q = choose3();
        assert!(
            validate_response(&q, 2, &response(vec![dist(&[0.5, 0.3, 0.2], None)]))
                .unwrap_err()
                .contains("1 answers for 2 items")
        );
        assert!(
            validate_response(&q, 1, &response(vec![dist(&[0.5, 0.5], None)]))
                .unwrap_err()
                .contains("over 2 values for 3 offered options")
        );
        assert!(
            validate_response(&q, 1, &response(vec![Answer::YesProbability(0.5)]))
                .unwrap_err()
                .contains("yes probability for a choose")
        );
        assert!(
            validate_response(&judge(), 1, &response(vec![dist(&[1.0], None)]))
                .unwrap_err()
                .contains("distribution for a judge")
        );
    }

    #[test]
    fn refuses_non_probabilities() {
        for bad in [f64::NAN, f64::INFINITY, -0.1, 1.01] {
            let err = validate_response(&judge(), 1, &response(vec![Answer::YesProbability(bad)]))
                .unwrap_err();
            assert!(err.contains("not finite in [0, 1]"), "{err}");
        }
        assert!(
            validate_response(
                &choose3(),
                1,
                &response(vec![dist(&[1.2, -0.2, 0.0], None)])
            )
            .is_err()
        );
    }

    #[test]
    fn refuses_a_pick_that_is_not_the_max() {
        let err = validate_response(
            &choose3(),
            1,
            &response(vec![dist(&[0.6, 0.3, 0.1], Some(1))]),
        )
        .unwrap_err();
        assert!(err.contains("below the maximum"), "{err}");
        assert!(
            validate_response(
                &choose3(),
                1,
                &response(vec![dist(&[0.6, 0.3, 0.1], Some(7))])
            )
            .is_err()
        );
    }

    #[test]
    fn refuses_negative_cost() {
        let mut r = response(vec![Answer::YesProbability(0.5)]);
        r.usage.cost_usd = -1.0;
        assert!(
            validate_response(&judge(), 1, &r)
                .unwrap_err()
                .contains("cost")
        );
    }
}
