//! A review an agent can do: the pairs most in need of its verdict first,
//! a page at a time, and the near lessons a capture should ask about.
//!
//! Every undecided candidate pair ([`Ledger::review_pairs`]) is related by
//! the ledger's judge and ranked: first the pairs the judge leans to merge
//! or contradict without clearing the destructive margin (what sleep
//! holds, and only a verdict will settle), most probable first; then the
//! rest by the judge's probability of merge or contradict; a tie (a judge
//! that cannot read meaning gives many pairs 0) by how near the two are
//! as one lesson (the lesser of their triggers' and actions' cosines
//! where the ledger has vectors, else their triggers' similarity in
//! words). A pair judged once is not offered again until one
//! of its lessons changes ([`super::decisions`]), so `remaining` falls
//! with every page the agent answers.

use super::entry::Entry;
use super::events::{Event, EventKind};
use super::ops::Ledger;
use super::relate::{Decision, Lesson, Relation, RelationJudge, Verdict, decide, most_probable};

/// Pairs a page holds at most.
pub const MAX_PAGE: usize = 50;

/// Near lessons a capture asks about at most.
pub const MAX_NEAR: usize = 3;

/// One pair for a verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewPair {
    pub a_id: String,
    pub b_id: String,
    /// "WHEN x → PREFER y".
    pub a: String,
    pub b: String,
    /// What the judge suspects: merge or contradict where it gives either
    /// any probability, else its most probable relation.
    pub relation: Verdict,
    /// The judge's probability for `relation`.
    pub probability: f64,
    /// Whether sleep holds this pair: the judge leans to merge or
    /// contradict without clearing the destructive margin.
    pub held: bool,
}

/// A page of pairs, most in need of a verdict first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReviewPage {
    pub pairs: Vec<ReviewPair>,
    /// Undecided pairs after this page.
    pub remaining: usize,
}

/// A lesson as review shows it: "WHEN x → PREFER y".
pub fn shown(e: &Entry) -> String {
    format!("WHEN {} → PREFER {}", e.when, e.prefer)
}

/// How much a pair needs a verdict, highest first: held pairs, then the
/// judge's probability of a step that retires a lesson, then nearness.
/// (Taking nearness when it beat the judge's probability ranked worse on
/// the dev split with the lexical judge: 4 of 40 duplicates and
/// contradictions in the first 4 pages instead of 9.)
fn need(r: &Relation, margin: f64, nearness: f64) -> (bool, f64, f64) {
    let held = matches!(decide(r, margin), Decision::Hold { .. });
    (held, r[0].max(r[1]), nearness)
}

/// What the judge suspects of a pair, and with what probability.
fn suspected(r: &Relation) -> (Verdict, f64) {
    if r[0] > 0.0 || r[1] > 0.0 {
        if r[0] >= r[1] {
            (Verdict::Merge, r[0])
        } else {
            (Verdict::Contradict, r[1])
        }
    } else {
        let v = most_probable(r);
        let p = match v {
            Verdict::Merge => r[0],
            Verdict::Contradict => r[1],
            Verdict::Sibling => r[2],
            Verdict::Distinct => r[3],
        };
        (v, p)
    }
}

/// How near two lessons are as one lesson: where the ledger has their
/// vectors, the lesser of their triggers' and their actions' cosines
/// (a duplicate is near on both; a contradiction too, since embeddings
/// barely see negation; a compatible action in the same situation, or
/// one action in an unrelated situation, is far on one); else their
/// triggers' similarity in words.
fn nearness(ledger: &Ledger, a: usize, b: usize, words: f64) -> f64 {
    let (ea, eb) = (&ledger.entries[a], &ledger.entries[b]);
    let v = &ledger.vectors;
    let cosine = |x: &str, y: &str| Some(f64::from(super::meaning::dot(v.get(x)?, v.get(y)?)));
    match (cosine(&ea.when, &eb.when), cosine(&ea.prefer, &eb.prefer)) {
        (Some(t), Some(p)) => t.min(p),
        _ => words,
    }
}

/// The judge's relations for `pairs` of entry positions, in order.
fn relate(
    ledger: &Ledger,
    judge: &mut dyn RelationJudge,
    pairs: &[(usize, usize)],
) -> Result<Vec<Relation>, String> {
    if pairs.is_empty() {
        return Ok(Vec::new());
    }
    let lesson = |i: usize| Lesson {
        when: &ledger.entries[i].when,
        prefer: &ledger.entries[i].prefer,
    };
    let asked: Vec<_> = pairs.iter().map(|&(a, b)| (lesson(a), lesson(b))).collect();
    let relations = judge.relate(&asked)?;
    if relations.len() != pairs.len() {
        return Err(format!(
            "the judge returned {} relations for {} pairs",
            relations.len(),
            pairs.len()
        ));
    }
    Ok(relations)
}

/// The first `limit` (at most [`MAX_PAGE`]) undecided pairs, most in need
/// of a verdict first, and how many remain after them.
pub fn review_page(
    ledger: &Ledger,
    judge: &mut dyn RelationJudge,
    limit: usize,
) -> Result<ReviewPage, String> {
    let limit = limit.min(MAX_PAGE);
    let candidates = ledger.review_pairs();
    let pairs: Vec<(usize, usize)> = candidates.iter().map(|&(a, b, _)| (a, b)).collect();
    let relations = relate(ledger, judge, &pairs)?;
    let margin = ledger.params.destructive_margin;
    let mut ranked: Vec<((bool, f64, f64), usize)> = candidates
        .iter()
        .zip(&relations)
        .enumerate()
        .map(|(k, (&(a, b, words), r))| (need(r, margin, nearness(ledger, a, b, words)), k))
        .collect();
    // highest need first; the candidates' order on a tie
    ranked.sort_by(|(x, i), (y, j)| {
        y.0.cmp(&x.0)
            .then(y.1.total_cmp(&x.1))
            .then(y.2.total_cmp(&x.2))
            .then(i.cmp(j))
    });
    let remaining = ranked.len().saturating_sub(limit);
    let pairs = ranked
        .into_iter()
        .take(limit)
        .map(|((held, _, _), k)| {
            let (a, b, _) = candidates[k];
            let (relation, probability) = suspected(&relations[k]);
            ReviewPair {
                a_id: ledger.entries[a].id.clone(),
                b_id: ledger.entries[b].id.clone(),
                a: shown(&ledger.entries[a]),
                b: shown(&ledger.entries[b]),
                relation,
                probability: (probability * 1000.0).round() / 1000.0,
                held,
            }
        })
        .collect();
    Ok(ReviewPage { pairs, remaining })
}

/// Up to `limit` (at most [`MAX_NEAR`]) active lessons near the one at
/// `i` that the judge could not clear as distinct: those it leans to
/// merge or contradict (under the margin or over it), nearest first, and
/// without a recorded verdict. What a capture asks the agent about while
/// the lesson is fresh.
pub fn near_lessons(
    ledger: &mut Ledger,
    judge: &mut dyn RelationJudge,
    i: usize,
    limit: usize,
) -> Result<Vec<ReviewPair>, String> {
    if ledger.entries[i].status != super::entry::Status::Active {
        return Ok(Vec::new());
    }
    let pairs: Vec<(usize, usize, f64)> = ledger
        .pairs_with(i)
        .into_iter()
        .map(|(j, sim)| (i, j, sim))
        .collect();
    let ledger = &*ledger;
    let me = &ledger.entries[i];
    let asked: Vec<(usize, usize)> = pairs.iter().map(|&(a, b, _)| (a, b)).collect();
    let relations = relate(ledger, judge, &asked)?;
    let margin = ledger.params.destructive_margin;
    let mut near: Vec<((bool, f64, f64), usize)> = pairs
        .iter()
        .zip(&relations)
        .enumerate()
        .filter(|(_, (_, r))| r[0] > 0.0 || r[1] > 0.0)
        .map(|(k, (&(a, b, words), r))| (need(r, margin, nearness(ledger, a, b, words)), k))
        .collect();
    near.sort_by(|(x, i), (y, j)| y.1.total_cmp(&x.1).then(y.2.total_cmp(&x.2)).then(i.cmp(j)));
    Ok(near
        .into_iter()
        .take(limit.min(MAX_NEAR))
        .map(|((held, _, _), k)| {
            let (_, b, _) = pairs[k];
            let (relation, probability) = suspected(&relations[k]);
            ReviewPair {
                a_id: me.id.clone(),
                b_id: ledger.entries[b].id.clone(),
                a: shown(me),
                b: shown(&ledger.entries[b]),
                relation,
                probability: (probability * 1000.0).round() / 1000.0,
                held,
            }
        })
        .collect())
}

/// How a lesson being captured relates to one already held, as the agent
/// says while the lesson is fresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaptureRelation {
    /// The same lesson said again: merged (the stronger keeps).
    Restates,
    /// The same situation, the opposite action, and the new lesson is the
    /// one to follow: the old one retires as its boundary, as sleep
    /// resolves a contradiction (but the new one wins).
    Contradicts,
    /// A narrower or sharper version of the other: both stay, the new one
    /// noted "refines ID", and the pair is recorded as decided, so sleep
    /// neither merges nor resolves nor folds them together.
    Refines,
}

/// Settles the relation the agent gave the new lesson at `new` with the
/// one at `other` (both active, checked by the caller): the events it
/// logs.
pub fn settle(
    ledger: &mut Ledger,
    new: usize,
    other: usize,
    relation: CaptureRelation,
    now: f64,
) -> Vec<Event> {
    let (new_id, other_id) = (
        ledger.entries[new].id.clone(),
        ledger.entries[other].id.clone(),
    );
    let said = match relation {
        CaptureRelation::Restates => "restates",
        CaptureRelation::Contradicts => "contradicts",
        CaptureRelation::Refines => "refines",
    };
    let mut events = vec![Event::new(
        now,
        EventKind::Judged,
        &new_id,
        vec![other_id.clone()],
        format!("captured as: {said} {other_id}"),
    )];
    match relation {
        CaptureRelation::Restates => events.push(ledger.merge(new, other, now)),
        CaptureRelation::Contradicts => events.push(ledger.resolve_for(new, other, now)),
        CaptureRelation::Refines => {
            ledger.entries[new].note = format!("refines {other_id}");
            ledger.record_decision(
                new,
                other,
                Verdict::Distinct,
                super::decisions::DecidedBy::Agent,
                now,
            );
        }
    }
    events
}
