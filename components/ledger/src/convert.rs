//! Between the WIT values and `silt_core::ledger`.

use silt_core::ledger::{self as core, ops};
use silt_core::types::{Answer, AnswerSpace, ChoiceOption};

use crate::silt::judge::types::Distribution;
use crate::silt::ledger::types::{
    Candidate, Entry, Event, EventKind, Judgment, Params, Status, Verdict,
};

silt_core::ledger_params_conversions!(Params);
silt_core::ledger_entry_conversions!(Entry, Status);
silt_core::ledger_event_conversions!(Event, EventKind);

pub fn candidate_out(c: ops::Candidate) -> Candidate {
    Candidate {
        a_id: c.a_id,
        b_id: c.b_id,
        a: c.a,
        b: c.b,
        trigger_similarity: c.trigger_similarity,
        action_similarity: c.action_similarity,
    }
}

pub fn judgment_in(j: Judgment) -> ops::Judgment {
    use core::relate::Verdict as V;
    let verdict = match j.verdict {
        Verdict::Merge => V::Merge,
        Verdict::Contradict => V::Contradict,
        Verdict::Sibling => V::Sibling,
        Verdict::Distinct => V::Distinct,
    };
    ops::Judgment {
        a_id: j.a_id,
        b_id: j.b_id,
        verdict,
    }
}

/// Validates the judge's distributions like any choose answer; each is
/// one relation's probabilities (merge, contradict, sibling, distinct).
pub fn relations(
    answers: &[Distribution],
    pairs: usize,
) -> Result<Vec<core::relate::Relation>, String> {
    if answers.len() != pairs {
        return Err(format!(
            "the judge related {} pairs of {}",
            answers.len(),
            pairs
        ));
    }
    let space = AnswerSpace::Choose(
        ["merge", "contradict", "sibling", "distinct"]
            .iter()
            .map(|l| ChoiceOption {
                label: l.to_string(),
                criterion: l.to_string(),
            })
            .collect(),
    );
    answers
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let answer = Answer::Distribution {
                probabilities: d.probabilities.clone(),
                pick: d.pick,
            };
            silt_core::validate::validate_answer(&space, &answer)
                .map_err(|e| format!("the judge's relation for pair {i} was refused: {e}"))?;
            let p = &d.probabilities;
            Ok([p[0], p[1], p[2], p[3]])
        })
        .collect()
}
