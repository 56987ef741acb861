//! How two lessons relate, as a judge decides it for the sleep pass.

use serde::{Deserialize, Serialize};

use super::Params;
use super::similarity::text_sim;

/// The relation between two lessons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The same lesson said twice: fold into one.
    Merge,
    /// The same situation with opposite actions: keep the stronger, note
    /// the other as a boundary.
    Contradict,
    /// Related but different situations with the same action: material for
    /// an abstracted parent.
    Sibling,
    /// Unrelated.
    Distinct,
}

/// A lesson as a judge sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Lesson<'a> {
    pub when: &'a str,
    pub prefer: &'a str,
}

/// Decides relations between pairs of lessons.
pub trait RelationJudge {
    fn relate(&mut self, pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Result<Vec<Verdict>, String>;
}

/// The reference's deterministic rules on lexical similarity, with silt's
/// split of same-action pairs into merges (nearly the same trigger) and
/// siblings (related triggers), so abstraction can fire.
pub fn lexical_verdict(a: &Lesson<'_>, b: &Lesson<'_>, p: &Params) -> Verdict {
    let trigger = text_sim(a.when, b.when);
    if trigger < p.trigger_threshold {
        return Verdict::Distinct;
    }
    let action = text_sim(a.prefer, b.prefer);
    if action >= p.action_threshold {
        if trigger >= p.merge_threshold {
            Verdict::Merge
        } else {
            Verdict::Sibling
        }
    } else if action <= p.contradict_threshold {
        Verdict::Contradict
    } else {
        Verdict::Distinct
    }
}

/// The lexical relation judge.
pub struct LexicalRelations(pub Params);

impl RelationJudge for LexicalRelations {
    fn relate(&mut self, pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Result<Vec<Verdict>, String> {
        Ok(pairs
            .iter()
            .map(|(a, b)| lexical_verdict(a, b, &self.0))
            .collect())
    }
}
