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
    /// The first lesson's id.
    pub a_id: String,
    /// The second lesson's id.
    pub b_id: String,
    /// "WHEN x → PREFER y".
    pub a: String,
    /// The second lesson, shown the same way.
    pub b: String,
    /// What the judge suspects: merge or contradict where it gives either
    /// any probability, else its most probable relation.
    pub relation: Verdict,
    /// The judge's probability for `relation`, rounded to 3 places.
    pub probability: f64,
    /// Whether sleep holds this pair: the judge leans to merge or
    /// contradict without clearing the destructive margin.
    pub held: bool,
}

/// A page of pairs, most in need of a verdict first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReviewPage {
    /// This page's pairs, at most [`MAX_PAGE`].
    pub pairs: Vec<ReviewPair>,
    /// Undecided pairs after this page.
    pub remaining: usize,
}

/// A lesson as review shows it: "WHEN x → PREFER y".
pub fn shown(e: &Entry) -> String {
    format!("WHEN {} → PREFER {}", e.when, e.prefer)
}

/// How many nearest lessons (by whole lesson, in meaning) each of a pair
/// must be among for review to offer it; a pair sleep holds is offered
/// whatever its rank. On the committed labelled set (potion's vectors,
/// all of a split in one ledger) 4 offers 37 of the 40 dev duplicates
/// and contradictions in 1.4 pairs a lesson, 5 offers 39 in 1.7, 3
/// offers 35 in 1.1; the test split's 19 of 20 at 4 and 5.
pub const REVIEW_NEAREST: usize = 4;

/// How much a pair needs a verdict, compared highest first: held pairs,
/// then, from a judge that reads meaning, its probability of a step
/// that retires a lesson before nearness; from one that reads only
/// words (lexical, similarity), nearness before its probability, since
/// its merge or contradict is a count of shared words. Nearness is the
/// worse of the two lessons' ranks among each other's nearest (mutual
/// nearest neighbours first), then their cosine.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Need {
    held: bool,
    keys: [f64; 3],
}

impl Need {
    fn of(r: &Relation, held: bool, near: Near, reads_meaning: bool) -> Need {
        let p = r[0].max(r[1]);
        let rank = -(near.rank as f64);
        let keys = if reads_meaning {
            [p, rank, near.cosine]
        } else {
            [rank, near.cosine, p]
        };
        Need {
            held: held && reads_meaning,
            keys,
        }
    }

    fn cmp(&self, other: &Need) -> std::cmp::Ordering {
        let mut order = self.held.cmp(&other.held);
        for (a, b) in self.keys.iter().zip(&other.keys) {
            order = order.then(a.total_cmp(b));
        }
        order
    }
}

/// How near two lessons are: the worse of their ranks among each other's
/// nearest by whole lesson (0 where the ledger has no vectors), and the
/// cosine of their whole lessons (their triggers' similarity in words
/// where it has none).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Near {
    rank: usize,
    cosine: f64,
}

/// Whether sleep holds a pair the judge relates as `r`: it leans to merge
/// or contradict without clearing the destructive margin.
fn held(r: &Relation, margin: f64) -> bool {
    matches!(decide(r, margin), Decision::Hold { .. })
}

/// Whether the judge's most probable relation for `r` retires a lesson
/// (merge or contradict), held or not. From a judge that reads meaning
/// such a pair is offered wherever it sits by nearness: sleep would take
/// it unasked when it clears the margin, and an agent should see it first
/// (a paraphrase sharing no words can be far from its twin even by
/// meaning: 5 of 40 labelled pairs of docs/eval/ledger-review.jsonl are
/// outside potion's 4 mutual nearest).
fn leans_to_retire(r: &Relation) -> bool {
    most_probable(r).is_destructive()
}

/// Nearness for review, when the ledger has the active lessons' vectors:
/// their whole-lesson rows, and each active pair mutually among
/// [`REVIEW_NEAREST`] nearest with its rank, by entry positions.
struct Nearness {
    by_meaning: Option<ByMeaning>,
}

struct ByMeaning {
    /// Each active entry's row in `views`.
    row_of: std::collections::HashMap<usize, usize>,
    views: super::meaning::Views,
    mutual: std::collections::HashMap<(usize, usize), usize>,
}

impl Nearness {
    fn of(ledger: &Ledger) -> Nearness {
        let active: Vec<usize> = (0..ledger.entries.len())
            .filter(|&i| ledger.entries[i].status == super::entry::Status::Active)
            .collect();
        let views = ledger.vectors.views(active.iter().map(|&i| {
            (
                ledger.entries[i].when.as_str(),
                ledger.entries[i].prefer.as_str(),
            )
        }));
        let by_meaning = views.map(|views| {
            let mutual =
                super::meaning::mutual_nearest(&views.lesson, views.cuts.lesson, REVIEW_NEAREST)
                    .into_iter()
                    .map(|(i, j, rank)| ((active[i], active[j]), rank))
                    .collect();
            let row_of = active.iter().enumerate().map(|(r, &i)| (i, r)).collect();
            ByMeaning {
                row_of,
                views,
                mutual,
            }
        });
        Nearness { by_meaning }
    }

    /// Whether review offers the pair (a < b) unless sleep holds it.
    fn offers(&self, a: usize, b: usize) -> bool {
        self.by_meaning
            .as_ref()
            .is_none_or(|m| m.mutual.contains_key(&(a, b)))
    }

    /// How near the pair (a < b) is; `words` its triggers' similarity in
    /// words, for a ledger without vectors.
    fn near(&self, a: usize, b: usize, words: f64) -> Near {
        let Some(m) = &self.by_meaning else {
            return Near {
                rank: REVIEW_NEAREST,
                cosine: words,
            };
        };
        let rank = m.mutual.get(&(a, b)).copied().unwrap_or(REVIEW_NEAREST);
        let row = |i: usize| m.views.lesson.row(m.row_of[&i]);
        Near {
            rank,
            cosine: f64::from(super::meaning::dot(row(a), row(b))),
        }
    }
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

/// How near two lessons are as one lesson: the cosine of their whole
/// lessons' vectors (trigger and action summed) where the ledger has
/// them, else their triggers' similarity in words.
fn nearness(ledger: &Ledger, a: usize, b: usize, words: f64) -> f64 {
    let (ea, eb) = (&ledger.entries[a], &ledger.entries[b]);
    let v = &ledger.vectors;
    let lesson = |e: &Entry| {
        Some(super::meaning::lesson_vector(
            v.get(&e.when)?,
            v.get(&e.prefer)?,
        ))
    };
    match (lesson(ea), lesson(eb)) {
        (Some(x), Some(y)) => f64::from(super::meaning::dot(&x, &y)),
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
/// of a verdict first, and how many remain after them. Offered are the
/// pairs sleep holds, those a judge that reads meaning leans to merge or
/// contradict, and, where the ledger has vectors, those mutually among
/// [`REVIEW_NEAREST`] nearest; without vectors every candidate.
/// `reads_meaning` says whether the judge's relations read meaning (a
/// model) or words (lexical, similarity): see [`Need`].
pub fn review_page(
    ledger: &Ledger,
    judge: &mut dyn RelationJudge,
    limit: usize,
    reads_meaning: bool,
) -> Result<ReviewPage, String> {
    let limit = limit.min(MAX_PAGE);
    let candidates = ledger.review_pairs();
    let pairs: Vec<(usize, usize)> = candidates.iter().map(|&(a, b, _)| (a, b)).collect();
    let relations = relate(ledger, judge, &pairs)?;
    let margin = ledger.params.destructive_margin;
    let nearness = Nearness::of(ledger);
    let mut ranked: Vec<(Need, bool, usize)> = candidates
        .iter()
        .zip(&relations)
        .enumerate()
        .map(|(k, (&(a, b, words), r))| {
            let held = held(r, margin);
            (
                Need::of(r, held, nearness.near(a, b, words), reads_meaning),
                held,
                k,
            )
        })
        .filter(|&(_, held, k)| {
            let (a, b, _) = candidates[k];
            held || nearness.offers(a, b) || (reads_meaning && leans_to_retire(&relations[k]))
        })
        .collect();
    // highest need first; the candidates' order on a tie
    ranked.sort_by(|(x, _, i), (y, _, j)| y.cmp(x).then(i.cmp(j)));
    let remaining = ranked.len().saturating_sub(limit);
    let pairs = ranked
        .into_iter()
        .take(limit)
        .map(|(_, held, k)| {
            let (a, b, _) = candidates[k];
            pair(ledger, a, b, &relations[k], held)
        })
        .collect();
    Ok(ReviewPage { pairs, remaining })
}

/// A pair as review shows it.
fn pair(ledger: &Ledger, a: usize, b: usize, r: &Relation, held: bool) -> ReviewPair {
    let (relation, probability) = suspected(r);
    ReviewPair {
        a_id: ledger.entries[a].id.clone(),
        b_id: ledger.entries[b].id.clone(),
        a: shown(&ledger.entries[a]),
        b: shown(&ledger.entries[b]),
        relation,
        probability: (probability * 1000.0).round() / 1000.0,
        held,
    }
}

/// Up to `limit` (at most [`MAX_NEAR`]) active lessons near the one at
/// `i` that the judge could not clear as distinct: those it leans to
/// merge or contradict (under the margin or over it), without a recorded
/// verdict, most in need of a verdict first (as [`review_page`] ranks,
/// the nearness being their whole lessons' cosine). What a capture asks
/// the agent about while the lesson is fresh.
pub fn near_lessons(
    ledger: &mut Ledger,
    judge: &mut dyn RelationJudge,
    i: usize,
    limit: usize,
    reads_meaning: bool,
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
    let asked: Vec<(usize, usize)> = pairs.iter().map(|&(a, b, _)| (a, b)).collect();
    let relations = relate(ledger, judge, &asked)?;
    let margin = ledger.params.destructive_margin;
    let mut near: Vec<(Need, usize)> = pairs
        .iter()
        .zip(&relations)
        .enumerate()
        .filter(|(_, (_, r))| r[0] > 0.0 || r[1] > 0.0)
        .map(|(k, (&(a, b, words), r))| {
            let cosine = nearness(ledger, a, b, words);
            // held or not, a capture asks about the most suspect first
            let need = Need::of(r, false, Near { rank: 0, cosine }, reads_meaning);
            (need, k)
        })
        .collect();
    near.sort_by(|(x, i), (y, j)| y.cmp(x).then(i.cmp(j)));
    Ok(near
        .into_iter()
        .take(limit.min(MAX_NEAR))
        .map(|(_, k)| {
            let (a, b, _) = pairs[k];
            pair(ledger, a, b, &relations[k], held(&relations[k], margin))
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
