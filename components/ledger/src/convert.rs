//! Between the WIT values and `silt_core::ledger`.

use silt_core::ledger::{self as core, ops};
use silt_core::types::{Answer, AnswerSpace, ChoiceOption};

use crate::silt::judge::relations::Relation;
use crate::silt::ledger::types::{
    Candidate, Entry, Event, EventKind, Judgment, Params, ReviewPair, Status, Verdict,
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

pub fn review_pair_out(p: core::review::ReviewPair) -> ReviewPair {
    use core::relate::Verdict as V;
    ReviewPair {
        a_id: p.a_id,
        b_id: p.b_id,
        a: p.a,
        b: p.b,
        relation: match p.relation {
            V::Merge => Verdict::Merge,
            V::Contradict => Verdict::Contradict,
            V::Sibling => Verdict::Sibling,
            V::Distinct => Verdict::Distinct,
        },
        probability: p.probability,
        held: p.held,
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

/// Validates the judge's relations like any choose answer over the four
/// (each finite in [0, 1], summing to 1).
pub fn relations(
    answers: &[Relation],
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
        .map(|(i, r)| {
            let p = [r.merge, r.contradict, r.sibling, r.distinct];
            let answer = Answer::Distribution {
                probabilities: p.to_vec(),
                pick: None,
            };
            silt_core::validate::validate_answer(&space, &answer)
                .map_err(|e| format!("the judge's relation for pair {i} was refused: {e}"))?;
            Ok(p)
        })
        .collect()
}
