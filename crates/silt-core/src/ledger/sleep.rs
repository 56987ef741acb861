//! The sleep pass: merge duplicates, resolve contradictions into boundary
//! rules (repeated until nothing changes), then abstract clusters of
//! siblings under a parent.

use std::collections::BTreeMap;

use serde::Serialize;

use super::entry::{Entry, Status};
use super::events::{Event, EventKind};
use super::ops::Ledger;
use super::relate::{Decision, Lesson, Relation, RelationJudge, Verdict, decide};
use super::similarity::tokens;

/// What one sleep pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SleepReport {
    pub merged: usize,
    pub contradictions_resolved: usize,
    pub generalized: usize,
    /// Pairs the judge leaned to merge or contradict without clearing the
    /// destructive margin: left as they were (review them with
    /// `sediment_review_candidates`).
    pub held_for_review: usize,
}

/// Rounds of the pairwise pass before giving up on reaching a fixed point.
const MAX_ROUNDS: usize = 32;

/// Runs the sleep pass. `new_id` names abstracted parents.
pub fn sleep(
    ledger: &mut Ledger,
    judge: &mut dyn RelationJudge,
    new_id: &mut dyn FnMut() -> String,
    now: f64,
) -> Result<(SleepReport, Vec<Event>), String> {
    let mut report = SleepReport::default();
    let mut events = Vec::new();
    let mut siblings: Vec<(usize, usize)> = Vec::new();
    let mut held = std::collections::HashSet::new();
    for _ in 0..MAX_ROUNDS {
        let pairs = candidate_pairs(ledger);
        siblings.clear();
        let mut changed = false;
        for chunk in pairs.chunks(JUDGE_CHUNK) {
            // an earlier verdict this round may have retired one of a pair
            let active = |i: usize| ledger.entries[i].status == Status::Active;
            let live: Vec<(usize, usize)> = chunk
                .iter()
                .copied()
                .filter(|&(a, b)| active(a) && active(b))
                .collect();
            let relations = judge_pairs(ledger, judge, &live)?;
            for ((a, b), relation) in live.into_iter().zip(relations) {
                if ledger.entries[a].status != Status::Active
                    || ledger.entries[b].status != Status::Active
                {
                    continue;
                }
                let verdict = match decide(&relation, ledger.params.destructive_margin) {
                    Decision::Apply(v) => v,
                    Decision::Hold { .. } => {
                        // counted once per pass, not once per round
                        if held.insert((a, b)) {
                            report.held_for_review += 1;
                        }
                        continue;
                    }
                };
                match verdict {
                    Verdict::Merge => {
                        events.push(ledger.merge(a, b, now));
                        report.merged += 1;
                        changed = true;
                    }
                    Verdict::Contradict => {
                        events.push(ledger.resolve(a, b, now));
                        report.contradictions_resolved += 1;
                        changed = true;
                    }
                    Verdict::Sibling => siblings.push((a, b)),
                    Verdict::Distinct => {}
                }
            }
        }
        if !changed {
            break;
        }
    }
    for cluster in clusters(&siblings, ledger.entries.len()) {
        if cluster.len() >= ledger.params.abstraction_min
            && let Some(event) = abstract_parent(ledger, &cluster, new_id(), now)
        {
            events.push(event);
            report.generalized += 1;
        }
    }
    Ok((report, events))
}

/// Pairs judged per call of the judge, so memory holds one chunk's lessons
/// at a time however many candidates a dense ledger has.
const JUDGE_CHUNK: usize = 4096;

/// The most candidate partners one lesson is judged against per round:
/// what keeps a sleep over a dense ledger (thousands of lessons sharing a
/// phrase) in bounded memory; a lesson's duplicates and contradictions are
/// its most similar partners, and the next round sees the ledger again.
pub const MAX_PARTNERS: usize = 16;

/// Candidate pairs (by entry index) among active entries: each lesson's
/// [`MAX_PARTNERS`] most similar.
fn candidate_pairs(ledger: &Ledger) -> Vec<(usize, usize)> {
    let active: Vec<usize> = (0..ledger.entries.len())
        .filter(|&i| ledger.entries[i].status == Status::Active)
        .collect();
    let triggers: Vec<&str> = active
        .iter()
        .map(|&i| ledger.entries[i].when.as_str())
        .collect();
    super::candidates::strongest_pairs(&triggers, ledger.params.candidate_threshold, MAX_PARTNERS)
        .into_iter()
        .map(|(i, j, _)| (active[i], active[j]))
        .collect()
}

/// The judge's relations for `pairs`, in order.
fn judge_pairs(
    ledger: &Ledger,
    judge: &mut dyn RelationJudge,
    pairs: &[(usize, usize)],
) -> Result<Vec<Relation>, String> {
    let lesson = |i: usize| Lesson {
        when: &ledger.entries[i].when,
        prefer: &ledger.entries[i].prefer,
    };
    let lessons: Vec<_> = pairs.iter().map(|&(a, b)| (lesson(a), lesson(b))).collect();
    let verdicts = if lessons.is_empty() {
        vec![]
    } else {
        judge.relate(&lessons)?
    };
    if verdicts.len() != pairs.len() {
        return Err(format!(
            "the judge returned {} verdicts for {} pairs",
            verdicts.len(),
            pairs.len()
        ));
    }
    Ok(verdicts)
}

/// Connected components of the sibling graph, members in ledger order.
fn clusters(edges: &[(usize, usize)], n: usize) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for &(a, b) in edges {
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        parent[ra.max(rb)] = ra.min(rb);
    }
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &(a, b) in edges {
        for x in [a, b] {
            let r = root(&mut parent, x);
            let g = groups.entry(r).or_default();
            if !g.contains(&x) {
                g.push(x);
            }
        }
    }
    groups
        .into_values()
        .map(|mut g| {
            g.sort_unstable();
            g
        })
        .collect()
}

/// Creates the parent of `members` and folds them under it. None when the
/// members' triggers share no word to name the parent by.
fn abstract_parent(ledger: &mut Ledger, members: &[usize], id: String, now: f64) -> Option<Event> {
    let first = &ledger.entries[members[0]];
    let shared: Vec<String> = ordered_tokens(&first.when)
        .into_iter()
        .filter(|t| {
            members
                .iter()
                .all(|&m| tokens(&ledger.entries[m].when).contains(t))
        })
        .collect();
    if shared.is_empty() {
        return None;
    }
    let strongest = *members
        .iter()
        .max_by(|&&a, &&b| {
            let (ea, eb) = (&ledger.entries[a], &ledger.entries[b]);
            ea.confirm_count
                .cmp(&eb.confirm_count)
                .then(ea.effective(now).total_cmp(&eb.effective(now)))
                .then(b.cmp(&a))
        })
        .expect("a cluster has members");
    let best = members
        .iter()
        .map(|&m| ledger.entries[m].effective(now))
        .fold(0.0, f64::max);
    let mut parent = Entry::new(
        id,
        format!("(general) {}", shared.join(" ")),
        ledger.entries[strongest].prefer.clone(),
        (best + 0.1).min(1.0),
        members
            .iter()
            .map(|&m| ledger.entries[m].confirm_count)
            .sum(),
        now,
    );
    parent.hit_count = members.iter().map(|&m| ledger.entries[m].hit_count).sum();
    parent.note = "abstracted parent".into();
    let mut children = Vec::new();
    for &m in members {
        let e = &mut ledger.entries[m];
        e.status = Status::Dormant;
        e.note = format!("folded under {}", parent.id);
        children.push(e.id.clone());
    }
    let event = Event::new(
        now,
        EventKind::Abstracted,
        &parent.id,
        children,
        format!("{} siblings share the action", members.len()),
    );
    ledger.entries.push(parent);
    Some(event)
}

/// The `[a-z0-9]+` tokens of `s` in order of first appearance.
fn ordered_tokens(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in s
        .to_lowercase()
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
    {
        if !t.is_empty() && !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::Params;
    use crate::ledger::relate::LexicalRelations;

    const NOW: f64 = 1_750_000_000.0;

    pub(crate) fn demo() -> Ledger {
        Ledger::new(crate::ledger::demo::entries(NOW), Params::default())
    }

    fn ids() -> impl FnMut() -> String {
        let mut n = 0;
        move || {
            n += 1;
            format!("p{n:07}")
        }
    }

    #[test]
    fn the_deterministic_demo_ends_with_six_active() {
        let mut ledger = demo();
        assert_eq!(ledger.active_count(), 10);
        let (h, _) = ledger.homeostasis(NOW);
        assert_eq!((h.retired, h.evicted, h.active), (1, 0, 9));
        assert_eq!(ledger.entries[5].note, "faded below floor");

        let (report, events) = sleep(
            &mut ledger,
            &mut LexicalRelations(Params::default()),
            &mut ids(),
            NOW,
        )
        .unwrap();
        assert_eq!(
            report,
            SleepReport {
                merged: 0,
                contradictions_resolved: 1,
                generalized: 1,
                held_for_review: 0,
            }
        );
        assert_eq!(ledger.active_count(), 6);

        // the GPT pair: the five-times-confirmed lesson wins, with a boundary note
        assert_eq!(ledger.entries[4].status, Status::Retired);
        assert_eq!(ledger.entries[4].note, "lost contradiction to 00000003");
        assert!(
            ledger.entries[3]
                .note
                .starts_with("boundary: usually 'inject explicit step-by-step CoT'")
        );
        // the trading trio: dormant children under one parent
        let parent = ledger.entries.last().unwrap();
        assert_eq!(parent.when, "(general) trading prompt for");
        assert_eq!(parent.prefer, "anchor reasoning on HTF bias first");
        assert_eq!((parent.confirm_count, parent.hit_count), (7, 7));
        assert!((parent.confidence - 0.7).abs() < 1e-9);
        for child in &ledger.entries[6..9] {
            assert_eq!(child.status, Status::Dormant);
            assert_eq!(child.note, format!("folded under {}", parent.id));
        }
        // the XML trio is untouched: a lexical judge cannot see it is one lesson
        assert!(
            ledger.entries[..3]
                .iter()
                .all(|e| e.status == Status::Active && e.note.is_empty())
        );
        assert_eq!(
            events
                .iter()
                .filter(|e| e.kind == EventKind::Abstracted)
                .count(),
            1
        );
    }

    #[test]
    fn the_same_lesson_said_twice_merges() {
        let mut ledger = Ledger::new(vec![], Params::default());
        ledger.capture(
            "a".into(),
            "writing a SQL migration",
            "wrap it in a transaction",
            crate::ledger::ops::Feedback::Positive,
            NOW,
        );
        ledger.capture(
            "b".into(),
            "writing an SQL migration",
            "wrap the migration in a transaction",
            crate::ledger::ops::Feedback::Neutral,
            NOW,
        );
        let (report, _) = sleep(
            &mut ledger,
            &mut LexicalRelations(Params::default()),
            &mut ids(),
            NOW,
        )
        .unwrap();
        assert_eq!(report.merged, 1);
        assert_eq!(ledger.active_count(), 1);
        let kept = ledger
            .entries
            .iter()
            .find(|e| e.status == Status::Active)
            .unwrap();
        assert_eq!(kept.id, "a");
        assert!((kept.confidence - 0.60).abs() < 1e-9);
    }

    #[test]
    fn two_siblings_are_not_enough_to_abstract() {
        let mut ledger = demo();
        ledger.entries.truncate(8); // drop the futures sibling and the JSON lesson
        let (report, _) = sleep(
            &mut ledger,
            &mut LexicalRelations(Params::default()),
            &mut ids(),
            NOW,
        )
        .unwrap();
        assert_eq!(report.generalized, 0);
    }
}

#[cfg(test)]
mod margin_tests {
    use super::*;
    use crate::ledger::Params;
    use crate::ledger::ops::Feedback;

    const NOW: f64 = 1_750_000_000.0;

    /// A judge that answers every pair with the same relation.
    struct Always(Relation);

    impl RelationJudge for Always {
        fn relate(&mut self, pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Result<Vec<Relation>, String> {
            Ok(vec![self.0; pairs.len()])
        }
    }

    fn two_lessons() -> Ledger {
        let mut l = Ledger::new(vec![], Params::default());
        let when = "editing the parser in repo r3";
        l.capture(
            "a".into(),
            when,
            "run the focused tests first",
            Feedback::Neutral,
            NOW,
        );
        l.capture(
            "b".into(),
            when,
            "update the changelog entry",
            Feedback::Neutral,
            NOW,
        );
        l
    }

    #[test]
    fn a_judge_under_the_margin_retires_nothing() {
        for unsure in [
            [0.0, 0.79, 0.0, 0.21],
            [0.7, 0.0, 0.0, 0.3],
            [0.45, 0.4, 0.0, 0.15],
        ] {
            let mut l = two_lessons();
            let mut n = 0;
            let (report, events) = sleep(
                &mut l,
                &mut Always(unsure),
                &mut || {
                    n += 1;
                    format!("p{n}")
                },
                NOW,
            )
            .unwrap();
            assert_eq!(l.active_count(), 2, "{unsure:?}");
            assert!(events.is_empty(), "{events:?}");
            assert_eq!(report.held_for_review, 1, "{unsure:?}");
        }
    }

    #[test]
    fn a_sure_judge_resolves_and_records_what_it_retired() {
        let mut l = two_lessons();
        let before = l.entries.clone();
        let (report, events) = sleep(
            &mut l,
            &mut Always([0.0, 0.9, 0.0, 0.1]),
            &mut || "p".into(),
            NOW,
        )
        .unwrap();
        assert_eq!(report.contradictions_resolved, 1);
        assert_eq!(l.active_count(), 1);
        assert_eq!(events[0].kind, EventKind::Resolved);
        assert_eq!(events[0].before, before);
    }

    #[test]
    fn the_lexical_judge_keeps_compatible_lessons_on_one_subject() {
        // five verbs x four subjects x four actions, recalled as an agent would
        let verbs = [
            "editing",
            "refactoring",
            "reviewing",
            "debugging",
            "testing",
        ];
        let subjects = [
            "the parser",
            "the HTTP client",
            "the ledger store",
            "the CLI",
        ];
        let actions = [
            "run the focused tests first",
            "read the module docs before changing it",
            "keep the change small and reviewable",
            "update the changelog entry",
        ];
        let mut l = Ledger::new(
            vec![],
            Params {
                cap: 1000,
                ..Params::default()
            },
        );
        let mut n = 0;
        for v in verbs {
            for s in subjects {
                for a in actions {
                    n += 1;
                    l.capture(
                        format!("e{n}"),
                        &format!("{v} {s}"),
                        a,
                        Feedback::Neutral,
                        NOW,
                    );
                }
            }
        }
        let mut ids = 0;
        let (report, _) = sleep(
            &mut l,
            &mut crate::ledger::relate::LexicalRelations(Params::default()),
            &mut || {
                ids += 1;
                format!("p{ids}")
            },
            NOW,
        )
        .unwrap();
        assert_eq!(report.contradictions_resolved, 0, "{report:?}");
        assert_eq!(report.merged, 0, "{report:?}");
    }
}
