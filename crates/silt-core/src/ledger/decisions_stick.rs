//! A decision sticks: sleep respects every recorded verdict and every
//! undo, abstraction can be undone and is held to the merge margin, and a
//! parent's action never contradicts a child's. Tests only.

use super::Params;
use super::decisions::DecidedBy;
use super::entry::{Entry, Status};
use super::events::{Event, EventKind};
use super::ops::{Feedback, Judgment, Ledger};
use super::relate::{Lesson, LexicalRelations, Relation, RelationJudge, Verdict};
use super::review::{CaptureRelation, near_lessons, review_page, settle};
use super::sleep::sleep;
use super::undo::undo;

const NOW: f64 = 1_750_000_000.0;

/// A judge answering each pair as `f` says.
struct Scripted<F>(F);

impl<F: FnMut(&Lesson<'_>, &Lesson<'_>) -> Relation> RelationJudge for Scripted<F> {
    fn relate(&mut self, pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Result<Vec<Relation>, String> {
        Ok(pairs.iter().map(|(a, b)| (self.0)(a, b)).collect())
    }
}

fn always(r: Relation) -> Scripted<impl FnMut(&Lesson<'_>, &Lesson<'_>) -> Relation> {
    Scripted(move |_: &Lesson<'_>, _: &Lesson<'_>| r)
}

fn ids() -> impl FnMut() -> String {
    let mut n = 0;
    move || {
        n += 1;
        format!("p{n:07}")
    }
}

fn ledger(lessons: &[(&str, &str, &str)]) -> Ledger {
    let mut l = Ledger::new(vec![], Params::default());
    for (id, when, prefer) in lessons {
        l.capture(id.to_string(), when, prefer, Feedback::Neutral, NOW);
    }
    l
}

/// Writes what an undo restored back into the ledger, as the host's store
/// does (the engine then syncs the rows).
fn apply(l: &mut Ledger, entries: Vec<Entry>) {
    for e in entries {
        let i = l.index_of(&e.id).unwrap();
        l.replace_entry(i, e);
    }
}

fn event_of(events: &[Event], kind: EventKind) -> Event {
    events.iter().find(|e| e.kind == kind).unwrap().clone()
}

const MERGE: Relation = [0.95, 0.0, 0.0, 0.05];
const CONTRADICT: Relation = [0.0, 0.95, 0.0, 0.05];

fn pair() -> Ledger {
    ledger(&[
        ("a", "writing a SQL migration", "wrap it in a transaction"),
        (
            "b",
            "writing a SQL migration",
            "never wrap it in a transaction",
        ),
    ])
}

#[test]
fn an_undone_merge_is_not_merged_again_until_a_lesson_changes() {
    let mut l = pair();
    let (r, events) = sleep(&mut l, &mut always(MERGE), &mut ids(), NOW).unwrap();
    assert_eq!(r.merged, 1);
    let merged = event_of(&events, EventKind::Merged);
    let u = undo(1, &merged, &l.entries, false, NOW + 1.0).unwrap();
    apply(&mut l, u.entries);
    assert_eq!(l.active_count(), 2);
    assert_eq!(l.decided(0, 1), Some(Verdict::Distinct));
    assert_eq!(l.entries[0].verdicts[0].by, DecidedBy::Undo);
    // the judge still says merge; the undo stands
    let (r, _) = sleep(&mut l, &mut always(MERGE), &mut ids(), NOW + 2.0).unwrap();
    assert_eq!((r.merged, r.held_for_review), (0, 0));
    assert_eq!(l.active_count(), 2);
    // a new version of one lesson is a new question
    let mut b = l.entries[1].clone();
    b.prefer = "never wrap a migration in a transaction".into();
    l.replace_entry(1, b);
    let (r, _) = sleep(&mut l, &mut always(MERGE), &mut ids(), NOW + 3.0).unwrap();
    assert_eq!(r.merged, 1);
}

#[test]
fn an_undone_resolution_is_not_resolved_again() {
    let mut l = pair();
    let (r, events) = sleep(&mut l, &mut always(CONTRADICT), &mut ids(), NOW).unwrap();
    assert_eq!(r.contradictions_resolved, 1);
    let resolved = event_of(&events, EventKind::Resolved);
    let u = undo(1, &resolved, &l.entries, false, NOW + 1.0).unwrap();
    apply(&mut l, u.entries);
    let (r, _) = sleep(&mut l, &mut always(CONTRADICT), &mut ids(), NOW + 2.0).unwrap();
    assert_eq!(r.contradictions_resolved, 0);
    assert_eq!(l.active_count(), 2);
}

#[test]
fn a_distinct_verdict_holds_against_the_judge() {
    for (verdict, resolved) in [(None, 1), (Some(Verdict::Distinct), 0)] {
        let mut l = pair();
        if let Some(verdict) = verdict {
            let (applied, _) = l.apply_judgments(
                &[Judgment {
                    a_id: "a".into(),
                    b_id: "b".into(),
                    verdict,
                }],
                NOW,
            );
            assert_eq!(applied.distinct, 1);
        }
        let (r, _) = sleep(&mut l, &mut always(CONTRADICT), &mut ids(), NOW + 1.0).unwrap();
        assert_eq!(r.contradictions_resolved, resolved, "{verdict:?}");
    }
}

/// Three lessons with one action in related situations: the lexical judge
/// folds them under a parent.
fn siblings() -> Ledger {
    ledger(&[
        (
            "s1",
            "editing the parser module",
            "run the focused tests first",
        ),
        (
            "s2",
            "editing the lexer module",
            "run the focused tests first",
        ),
        (
            "s3",
            "editing the checker module",
            "run the focused tests first",
        ),
    ])
}

#[test]
fn an_abstraction_can_be_undone_and_is_not_taken_again() {
    let mut l = siblings();
    l.entries[1].note = "boundary: usually x".into();
    let (r, events) = sleep(
        &mut l,
        &mut LexicalRelations(Params::default()),
        &mut ids(),
        NOW,
    )
    .unwrap();
    assert_eq!(r.generalized, 1);
    let abstracted = event_of(&events, EventKind::Abstracted);
    assert_eq!(abstracted.before.len(), 3, "the children as they were");
    let u = undo(4, &abstracted, &l.entries, false, NOW + 1.0).unwrap();
    assert_eq!(u.event.kind, EventKind::Unfolded);
    assert_eq!(u.event.others.len(), 3);
    apply(&mut l, u.entries);
    let parent = l.index_of(&abstracted.id).unwrap();
    assert_eq!(l.entries[parent].status, Status::Retired);
    for id in ["s1", "s2", "s3"] {
        assert_eq!(l.entries[l.index_of(id).unwrap()].status, Status::Active);
    }
    assert_eq!(l.entries[1].note, "boundary: usually x", "its note is back");
    let (r, _) = sleep(
        &mut l,
        &mut LexicalRelations(Params::default()),
        &mut ids(),
        NOW + 2.0,
    )
    .unwrap();
    assert_eq!(r.generalized, 0);
    assert_eq!(l.active_count(), 3);
    // taken back twice: refused, nothing changed
    let err = undo(4, &abstracted, &l.entries, false, NOW + 3.0).unwrap_err();
    assert!(err.contains("retired"), "{err}");
}

#[test]
fn abstraction_is_held_to_the_merge_margin() {
    for (sibling, parents) in [(0.7, 0), (0.85, 1)] {
        let mut l = siblings();
        let (r, _) = sleep(
            &mut l,
            &mut always([0.0, 0.0, sibling, 1.0 - sibling]),
            &mut ids(),
            NOW,
        )
        .unwrap();
        assert_eq!(r.generalized, parents, "sibling {sibling}");
    }
}

/// The embedding judge's mistake, scripted: every pair of different
/// situations reads as siblings. Asked about a child's action against the
/// parent's in the child's own situation, it reads what a judge that
/// understands would: the same lesson only for a restatement.
fn siblings_everywhere(a: &Lesson<'_>, b: &Lesson<'_>) -> Relation {
    if a.when != b.when {
        return [0.0, 0.0, 0.9, 0.1];
    }
    let restated = |x: &str| x.starts_with("keep behaviour identical");
    match (restated(a.prefer), restated(b.prefer)) {
        (true, true) => [0.9, 0.0, 0.0, 0.1],
        _ if a.prefer.starts_with("skip") || b.prefer.starts_with("skip") => [0.0, 0.9, 0.0, 0.1],
        _ => [0.1, 0.0, 0.0, 0.9],
    }
}

#[test]
fn a_parent_never_takes_an_action_a_child_contradicts() {
    let refactoring = [
        (
            "r1",
            "refactoring a module",
            "keep behaviour identical and run the tests",
        ),
        ("r2", "refactoring a helper", "skip writing new tests"),
        (
            "r3",
            "refactoring a class",
            "check that the tests cover the change",
        ),
    ];
    let mut l = ledger(&refactoring);
    l.entries[0].confirm_count = 3; // its action is the parent's
    let (r, _) = sleep(&mut l, &mut Scripted(siblings_everywhere), &mut ids(), NOW).unwrap();
    assert_eq!(
        r.generalized, 0,
        "two children cannot hold the parent's action"
    );
    assert_eq!(l.active_count(), 3);

    // with two more restating it, those three fold and the others stay
    let mut more = refactoring.to_vec();
    more.push((
        "r4",
        "refactoring a function",
        "keep behaviour identical and run the tests again",
    ));
    more.push((
        "r5",
        "refactoring a script",
        "keep behaviour identical and run the test suite",
    ));
    let mut l = ledger(&more);
    l.entries[0].confirm_count = 3;
    let (r, events) = sleep(&mut l, &mut Scripted(siblings_everywhere), &mut ids(), NOW).unwrap();
    assert_eq!(r.generalized, 1);
    let folded = event_of(&events, EventKind::Abstracted).others;
    let mut folded = folded.clone();
    folded.sort();
    assert_eq!(folded, ["r1", "r4", "r5"]);
    let parent = l.entries.last().unwrap();
    assert_eq!(parent.prefer, "keep behaviour identical and run the tests");
    assert!(parent.when.contains("module") && !parent.when.contains("helper"));
}

#[test]
fn review_pages_rank_held_pairs_first_and_forget_nothing_judged() {
    // a held pair (the judge leans to contradict at 0.6), a merge the
    // judge is sure of, and pairs it reads as distinct
    let mut l = ledger(&[
        ("a", "writing a SQL migration", "wrap it in a transaction"),
        (
            "b",
            "writing a SQL migration",
            "never wrap it in a transaction",
        ),
        (
            "c",
            "writing a SQL migration script",
            "wrap it in a transaction",
        ),
        ("d", "writing a SQL query", "name every column"),
    ]);
    let mut judge = Scripted(|x: &Lesson<'_>, y: &Lesson<'_>| {
        let has = |s: &str| x.prefer.contains(s) || y.prefer.contains(s);
        if has("never") && !has("column") {
            [0.0, 0.6, 0.0, 0.4]
        } else if x.prefer == y.prefer {
            [0.9, 0.0, 0.0, 0.1]
        } else {
            [0.0, 0.0, 0.0, 1.0]
        }
    });
    let all = l.review_pairs().len();
    assert!(all >= 4, "{all}");
    // held: a–b and b–c (each a "never" against a "wrap")
    let page = review_page(&l, &mut judge, 3, true).unwrap();
    assert_eq!(page.pairs.len(), 3);
    assert_eq!(page.remaining, all - 3);
    for held in &page.pairs[..2] {
        assert!(held.held);
        assert_eq!(
            (held.relation, held.probability),
            (Verdict::Contradict, 0.6)
        );
        assert!(held.a.starts_with("WHEN writing a SQL migration"));
    }
    let third = &page.pairs[2];
    assert!(!third.held);
    assert_eq!((third.relation, third.probability), (Verdict::Merge, 0.9));
    assert_eq!((third.a_id.as_str(), third.b_id.as_str()), ("a", "c"));
    // the agent answers the page: distinct for both
    let verdicts: Vec<Judgment> = page
        .pairs
        .iter()
        .map(|p| Judgment {
            a_id: p.a_id.clone(),
            b_id: p.b_id.clone(),
            verdict: Verdict::Distinct,
        })
        .collect();
    l.apply_judgments(&verdicts, NOW + 1.0);
    let next = review_page(&l, &mut judge, 50, true).unwrap();
    assert_eq!(next.pairs.len(), all - 3);
    assert_eq!(next.remaining, 0);
    for p in &next.pairs {
        assert!(
            !page
                .pairs
                .iter()
                .any(|q| (&q.a_id, &q.b_id) == (&p.a_id, &p.b_id)),
            "{p:?} offered again"
        );
    }
    // a limit past 50 is 50, and an empty ledger has an empty page
    let empty = Ledger::new(vec![], Params::default());
    assert_eq!(
        review_page(&empty, &mut judge, 500, true)
            .unwrap()
            .pairs
            .len(),
        0
    );
}

#[test]
fn a_capture_asks_about_near_lessons_the_judge_cannot_clear() {
    let mut l = ledger(&[
        ("a", "writing a SQL migration", "wrap it in a transaction"),
        (
            "b",
            "writing a SQL migration",
            "never wrap it in a transaction",
        ),
        (
            "c",
            "writing a SQL migration script",
            "wrap it in a transaction",
        ),
        ("d", "writing a SQL migration", "name every column"),
        ("e", "baking a chocolate cake", "preheat the oven"),
    ]);
    let near = near_lessons(
        &mut l,
        &mut LexicalRelations(Params::default()),
        0,
        3,
        false,
    )
    .unwrap();
    // the contradiction first; a different action in one situation the
    // lexical judge cannot clear either; not the sibling, not the cake
    let ids: Vec<&str> = near.iter().map(|p| p.b_id.as_str()).collect();
    assert_eq!(ids, ["b", "d"], "{near:?}");
    assert_eq!(near[0].relation, Verdict::Contradict);
    assert!(near.iter().all(|p| p.a_id == "a"));
}

#[test]
fn a_relation_given_at_capture_is_settled_at_once() {
    // restates: one lesson left
    let mut l = pair();
    let events = settle(&mut l, 1, 0, CaptureRelation::Restates, NOW);
    assert_eq!(events[1].kind, EventKind::Merged);
    assert_eq!(l.active_count(), 1);
    // contradicts: the new lesson wins, the old one is its boundary
    let mut l = pair();
    l.entries[0].confirm_count = 5; // sleep would keep the old one
    let events = settle(&mut l, 1, 0, CaptureRelation::Contradicts, NOW);
    assert_eq!(events[1].kind, EventKind::Resolved);
    assert_eq!(events[1].id, "b");
    assert_eq!(l.entries[0].status, Status::Retired);
    assert!(l.entries[1].note.starts_with("boundary:"));
    // refines: both stay, and sleep leaves the pair alone
    let mut l = pair();
    settle(&mut l, 1, 0, CaptureRelation::Refines, NOW);
    assert_eq!(l.entries[1].note, "refines a");
    let (r, _) = sleep(&mut l, &mut always(CONTRADICT), &mut ids(), NOW + 1.0).unwrap();
    assert_eq!(r.contradictions_resolved, 0);
    assert_eq!(l.active_count(), 2);
}

#[test]
fn an_agents_distinct_does_not_stop_siblings_folding() {
    // "distinct" says two lessons are not one; siblings are two lessons
    let mut l = siblings();
    let pairs = [("s1", "s2"), ("s1", "s3"), ("s2", "s3")];
    let verdicts: Vec<Judgment> = pairs
        .iter()
        .map(|(a, b)| Judgment {
            a_id: a.to_string(),
            b_id: b.to_string(),
            verdict: Verdict::Distinct,
        })
        .collect();
    l.apply_judgments(&verdicts, NOW);
    let (r, _) = sleep(
        &mut l,
        &mut LexicalRelations(Params::default()),
        &mut ids(),
        NOW + 1.0,
    )
    .unwrap();
    assert_eq!(r.generalized, 1);
}

/// Seven lessons on an arc (10° apart in meaning, one action), with
/// words that share nothing, so only their vectors pair them.
fn arc() -> Ledger {
    let mut l = Ledger::new(vec![], Params::default());
    let (mut texts, mut vectors) = (Vec::new(), Vec::new());
    for k in 0..7 {
        let when = format!("situation{k}");
        l.capture(format!("s{k}"), &when, "do it", Feedback::Neutral, NOW);
        let angle = (10.0 * k as f32).to_radians();
        texts.push(when);
        vectors.push(vec![angle.cos(), angle.sin(), 0.0]);
    }
    texts.push("do it".into());
    vectors.push(vec![0.0, 0.0, 1.0]);
    let cuts = super::meaning::Cuts {
        trigger: 0.3,
        lesson: 0.3,
        action: 0.3,
    };
    l.learn_vectors(&texts, &vectors, cuts).unwrap();
    l
}

#[test]
fn review_offers_only_mutual_nearest_pairs_unless_sleep_holds_them() {
    let l = arc();
    let mut distinct = always([0.0, 0.0, 0.0, 1.0]);
    let page = review_page(&l, &mut distinct, 50, false).unwrap();
    let offered: Vec<(String, String)> = page
        .pairs
        .iter()
        .map(|p| (p.a_id.clone(), p.b_id.clone()))
        .collect();
    let has = |a: &str, b: &str| {
        offered
            .iter()
            .any(|(x, y)| (x.as_str(), y.as_str()) == (a, b) || (x.as_str(), y.as_str()) == (b, a))
    };
    // neighbours are offered, nearest first; lessons 40° apart are not
    // each among the other's 4 nearest, 60° not at all
    assert!(has("s0", "s1") && has("s3", "s4"), "{offered:?}");
    assert!(!has("s0", "s4") && !has("s0", "s6"), "{offered:?}");
    assert!(l.review_pairs().len() > page.pairs.len());
    // a pair sleep holds is offered whatever its rank, and first from a
    // judge that reads meaning
    let mut holds_far = Scripted(|a: &Lesson<'_>, b: &Lesson<'_>| {
        if [a.when, b.when] == ["situation0", "situation6"] {
            [0.7, 0.0, 0.0, 0.3]
        } else {
            [0.0, 0.0, 0.0, 1.0]
        }
    });
    let page = review_page(&l, &mut holds_far, 50, true).unwrap();
    assert_eq!(
        (page.pairs[0].a_id.as_str(), page.pairs[0].b_id.as_str()),
        ("s0", "s6")
    );
    assert!(page.pairs[0].held);
    // from a judge that reads words, nearness comes before its lean
    let page = review_page(&l, &mut holds_far, 50, false).unwrap();
    assert!(!(page.pairs[0].a_id == "s0" && page.pairs[0].b_id == "s6"));
    let last = page.pairs.last().unwrap();
    assert_eq!((last.a_id.as_str(), last.b_id.as_str()), ("s0", "s6"));
}

/// A pair a judge that reads meaning is sure to merge is offered however
/// far apart its lessons sit (a paraphrase sharing no words can be), and
/// first; the same lean from a judge that reads words offers nothing
/// beyond the nearest, since it is a count of shared words.
#[test]
fn review_offers_a_far_pair_a_reading_judge_would_retire() {
    let l = arc();
    let mut sure_far = Scripted(|a: &Lesson<'_>, b: &Lesson<'_>| {
        if [a.when, b.when] == ["situation0", "situation6"] {
            [0.95, 0.0, 0.0, 0.05]
        } else {
            [0.0, 0.0, 0.0, 1.0]
        }
    });
    let page = review_page(&l, &mut sure_far, 50, true).unwrap();
    let first = &page.pairs[0];
    assert_eq!((first.a_id.as_str(), first.b_id.as_str()), ("s0", "s6"));
    assert!(!first.held, "it clears the margin: {first:?}");
    let page = review_page(&l, &mut sure_far, 50, false).unwrap();
    assert!(
        !page.pairs.iter().any(|p| p.a_id == "s0" && p.b_id == "s6"),
        "{:?}",
        page.pairs
    );
}

#[test]
fn mutual_nearest_ranks_a_crowd_below_a_pair() {
    use super::meaning::{Rows, mutual_nearest, quantise};
    // a tight pair (0, 1) beside a crowd of four (2..6) about one point
    let points: [[f32; 2]; 6] = [
        [1.0, 0.0],
        [0.995, 0.0998],
        [0.0, 1.0],
        [0.05, 0.9987],
        [-0.05, 0.9987],
        [0.0998, 0.995],
    ];
    let mut rows = Rows::new(2);
    for p in points {
        rows.push_stored(&quantise(&p));
    }
    let pairs = mutual_nearest(&rows, 0.5, 2);
    assert!(pairs.contains(&(0, 1, 0)), "{pairs:?}");
    // within the crowd each has three near; a mutual pair of the crowd
    // ranks no better than 0 and some crowd pairs are not mutual at 2
    assert!(pairs.iter().all(|&(i, j, _)| (i, j) == (0, 1) || i >= 2));
    assert!(pairs.iter().filter(|&&(i, _, _)| i >= 2).count() < 6);
}
