//! The sleep pass: merge duplicates, resolve contradictions into boundary
//! rules (repeated until nothing changes), then abstract clusters of
//! siblings under a parent.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

// a pass looks its pairs up several times a round: SipHash was 2-5% of
// a pass over 100k lessons (perf, `agents` text)
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use serde::Serialize;

use super::abstraction::{GroupName, abstract_parent, parent_trigger, strongest, trigger_words};
use super::candidates::{MAX_PARTNERS, PartnerGroups, PartnerSearch};
use super::entry::{Entry, Status};
use super::events::Event;
use super::folded::FOLDED_UNDER;
use super::meaning::check_pairs;
use super::ops::Ledger;
use super::relate::{Decision, Lesson, Relation, RelationJudge, Verdict, decide, most_probable};
use super::spare_core::{NoSpareCore, SpareCore};
use super::trigger_order::TriggerOrder;
use super::twins::Twins;

/// What one sleep pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SleepReport {
    /// Duplicates folded into one.
    pub merged: usize,
    /// Contradictions turned into boundary rules.
    pub contradictions_resolved: usize,
    /// Abstracted parents created over siblings.
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
    sleep_staged(
        ledger,
        judge,
        &mut NoSpareCore,
        new_id,
        now,
        &mut |_, _, _| {},
    )
}

/// The stages [`sleep_staged`] reports, in order: pairing by meaning
/// (trigger and whole lesson), by words and by action (trigger and action
/// in words, and the distinct actions near in meaning), the rounds of
/// judging and applying, the judge's share of those rounds, and
/// abstraction.
pub const STAGES: [&str; 5] = ["meaning", "words", "rounds", "judge", "abstraction"];

/// What a stage counted, by name: see [`sleep_staged`].
pub type Counts<'a> = &'a [(&'static str, usize)];

/// Told each stage's name, time and counts.
pub type StageReport<'a> = dyn FnMut(&'static str, Duration, Counts<'_>) + 'a;

/// [`sleep`], telling `stage` how long each of [`STAGES`] took once it is
/// done and what it counted (pairs by meaning; rounds and the pairs they
/// went through; pairs the judge was asked about; parents formed): where
/// a pass over a large ledger spends its time, without a profiler (the
/// engine logs it at debug level).
pub fn sleep_staged(
    ledger: &mut Ledger,
    judge: &mut dyn RelationJudge,
    spare: &mut dyn SpareCore,
    new_id: &mut dyn FnMut() -> String,
    now: f64,
    stage: &mut StageReport<'_>,
) -> Result<(SleepReport, Vec<Event>), String> {
    let mut clock = Instant::now();
    let mut lap = |stage: &mut StageReport<'_>, name, counts: Counts<'_>| {
        stage(name, clock.elapsed(), counts);
        clock = Instant::now();
    };
    let mut report = SleepReport::default();
    let mut events = Vec::new();
    let mut siblings: Vec<(usize, usize)> = Vec::new();
    let mut held = HashSet::default();
    // a pair's relation depends on its texts only, which a pass never
    // changes (merge and resolve change counts, status and notes): each
    // pair of texts is judged once a pass, not once a round, and lessons
    // said word for word alike are judged as one
    let mut judged = Judged::new(ledger);
    // the index by meaning is the costly part on a large ledger: built once
    // a pass (rounds only retire lessons, which are filtered out)
    //
    // the first round takes every pair by meaning: where the judge's host
    // has a core to spare, each view's pairs are related while the next
    // view and then the pairs by words are searched
    //
    // so are each lesson's strongest partners by words and its action's
    // near actions (in words and in meaning), with a reserve for the
    // partners that rounds retire; the search in words reads only the
    // texts, so where the host has a core to spare it runs there from the
    // start, while this thread searches by meaning
    let by_words = Partners::start(ledger, spare);
    let mut ahead = Vec::new();
    let by_meaning = pairs_by_meaning(ledger, spare, |pairs| {
        ahead.extend(judged.start(ledger, judge, pairs));
    });
    lap(stage, "meaning", &[("pairs", by_meaning.len())]);
    let by_words = by_words.finish(ledger, spare);
    lap(stage, "words", &[]);
    // the first round's pairs before the relations ahead: the last view's
    // are still being related, and these need only the lists
    let mut next_pairs = Some(by_words.pairs(ledger, &by_meaning));
    for call in ahead {
        judged.finish(ledger, judge, call)?;
    }
    let (mut rounds, mut round_pairs) = (0, 0);
    for _ in 0..MAX_ROUNDS {
        let pairs = match next_pairs.take() {
            Some(pairs) => pairs,
            None => by_words.pairs(ledger, &by_meaning),
        };
        judged.next_round();
        rounds += 1;
        round_pairs += pairs.len();
        siblings.clear();
        let mut changed = false;
        // each chunk's new pairs go to the judge (on its own thread, where
        // its host has one) while the chunks before are ruled and applied
        let mut chunks = pairs.chunks(JUDGE_CHUNK);
        let mut prepared = std::collections::VecDeque::new();
        loop {
            while prepared.len() < CHUNKS_AHEAD {
                let Some(c) = chunks.next() else { break };
                prepared.push_back(judged.prepare(ledger, judge, live_pairs(ledger, c)));
            }
            let Some(this) = prepared.pop_front() else {
                break;
            };
            let Ruled { pairs, rulings } = judged.complete(ledger, judge, this)?;
            for ((a, b), ruling) in pairs.into_iter().zip(rulings) {
                // an earlier verdict may have retired one of a pair since
                // its chunk was prepared
                if ledger.entries[a].status != Status::Active
                    || ledger.entries[b].status != Status::Active
                {
                    continue;
                }
                // a verdict recorded on these two versions (an agent's, or
                // an undo's) stands instead of the judge's: a pass never
                // retakes a step that was judged or taken back
                let ruling = ledger.ruling(a, b, ruling);
                let verdict = match ruling {
                    Some(v) => v,
                    None => {
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
    lap(
        stage,
        "rounds",
        &[("rounds", rounds), ("pairs", round_pairs)],
    );
    stage(
        "judge",
        judged.judging,
        &[("pairs", judged.known.len()), ("ahead", judged.ahead)],
    );
    for (members, when) in held_together(ledger, judge, sibling_groups(ledger, &siblings), now)? {
        events.push(abstract_parent(ledger, &members, when, new_id(), now));
        report.generalized += 1;
    }
    lap(stage, "abstraction", &[("parents", report.generalized)]);
    Ok((report, events))
}

/// Pairs judged per call of the judge, so memory holds a few chunks'
/// lessons at a time ([`CHUNKS_AHEAD`]) however many candidates a dense
/// ledger has.
const JUDGE_CHUNK: usize = 16384;

/// Chunks of a round prepared (their new pairs sent to the judge) before
/// the first of them is applied.
const CHUNKS_AHEAD: usize = 2;

/// Partner texts a lesson keeps beyond its [`MAX_PARTNERS`] for the
/// rounds of a pass: each round retires lessons, and a lesson whose list
/// runs short takes what is left (see [`Partners::pairs`]).
const RESERVE_PARTNERS: usize = 8;

/// Each active lesson's strongest partners by trigger (the same
/// situation: merges, contradictions) and by action (one action across
/// situations whose words differ: siblings, which similar triggers alone
/// never pair), found once a pass with [`RESERVE_PARTNERS`] more partner
/// texts than a round takes. A round only retires lessons, so a lesson's
/// [`MAX_PARTNERS`] strongest among those still active are the first
/// active ones of its list, as long as the list has not run short.
///
/// By action, the lessons of each near action (in words, then in
/// meaning: [`add_near_in_meaning`]) are read nearest the lesson's own
/// trigger first ([`TriggerOrder`]), not by position.
struct Partners {
    /// Entry index of each text the lists are over.
    entry: Vec<usize>,
    /// By trigger and by action: each distinct text's partner texts (by
    /// action, those near in meaning after those near in words, with
    /// their cosine).
    groups: [PartnerGroups; 2],
    /// The groups by action, their members in trigger order.
    by_action: TriggerOrder,
}

impl Partners {
    /// The partners, searched here.
    #[cfg(test)]
    fn find(ledger: &Ledger) -> Partners {
        Partners::start(ledger, &mut NoSpareCore).finish(ledger, &mut NoSpareCore)
    }

    /// Starts the searches by words: on `spare`'s core where it has one,
    /// so they run while the pass searches by meaning. [`StartedPartners::finish`] takes them.
    fn start<'a>(ledger: &'a Ledger, spare: &mut dyn SpareCore) -> StartedPartners<'a> {
        let entry: Vec<usize> = (0..ledger.entries.len())
            .filter(|&i| ledger.entries[i].status == Status::Active)
            .collect();
        let p = &ledger.params;
        let keep = MAX_PARTNERS + RESERVE_PARTNERS;
        let mut field = |text: fn(&Entry) -> &str, threshold: f64| {
            let twins = Twins::group(entry.iter().map(|&i| Some(text(&ledger.entries[i]))));
            let search = PartnerSearch::strongest(threshold, MAX_PARTNERS, keep);
            let call = spare.start_partner_lists(&twins.distinct, search);
            StartedSearch {
                twins,
                search,
                call,
            }
        };
        let fields = [
            field(|e| &e.when, p.candidate_threshold),
            field(|e| &e.prefer, p.action_threshold),
        ];
        StartedPartners { entry, fields }
    }
}

/// The searches by words of [`Partners::start`], under way.
struct StartedPartners<'a> {
    entry: Vec<usize>,
    /// By trigger and by action.
    fields: [StartedSearch<'a>; 2],
}

/// One field's search by words: its distinct texts, and the spare core's
/// call searching them, if one took it.
struct StartedSearch<'a> {
    twins: Twins<&'a str>,
    search: PartnerSearch,
    call: Option<u64>,
}

impl StartedSearch<'_> {
    /// The groups, from the spare core's lists; searched here where no
    /// core took the search or its answer does not fit (the same lists
    /// either way, so a failed hand-over only costs time).
    fn finish(self, spare: &mut dyn SpareCore) -> PartnerGroups {
        let groups = self.twins.members.len();
        let handed = self.call.and_then(|call| {
            match spare
                .finish_partner_lists(call)
                .and_then(|lists| PartnerGroups::check_lists(groups, &lists).map(|()| lists))
            {
                Ok(lists) => Some(lists),
                Err(why) => {
                    spare.not_taken(&why);
                    None
                }
            }
        });
        let lists = handed.unwrap_or_else(|| self.search.lists(&self.twins.distinct));
        let len = self.twins.members.iter().map(Vec::len).sum();
        PartnerGroups::of_lists(len, self.twins.members, lists, self.search.threshold)
    }
}

impl StartedPartners<'_> {
    /// The partners, the searches by words taken from where they ran, and
    /// the actions near in meaning added.
    fn finish(self, ledger: &Ledger, spare: &mut dyn SpareCore) -> Partners {
        let StartedPartners { entry, fields } = self;
        let [when, prefer] = fields;
        let mut groups = [when.finish(spare), prefer.finish(spare)];
        add_near_in_meaning(ledger, &entry, &mut groups[BY_ACTION]);
        let when = |x: u32| ledger.entries[entry[x as usize]].when.as_str();
        let by_action = TriggerOrder::new(&groups[BY_ACTION].members, when);
        Partners {
            by_action,
            groups,
            entry,
        }
    }
}

impl Partners {
    /// Candidate pairs (by entry index, sorted) among active entries: each
    /// lesson's [`MAX_PARTNERS`] strongest still active by trigger and by
    /// action, and `by_meaning` (sorted, each pair once; a judge with
    /// vectors: reworded duplicates and siblings share few words).
    ///
    /// A lesson whose list has fewer active partners left than a round
    /// takes is paired with those it has: they are its strongest, since
    /// what a full list left out is weaker than all it kept. Searching the
    /// ledger again for it cost a whole search (26 s at 100k lessons of
    /// the `agents` text in the sandbox, where merges in the first round
    /// retire most of some lessons' near texts); the next pass searches
    /// afresh.
    fn pairs(&self, ledger: &Ledger, by_meaning: &[(usize, usize)]) -> Vec<(usize, usize)> {
        let is_active = |i: usize| ledger.entries[i].status == Status::Active;
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        let by_trigger = &self.groups[BY_TRIGGER];
        // each group's texts still active, found once a round: a group of
        // a thousand duplicates merged into one is read once
        let active: Vec<Vec<u32>> = by_trigger
            .members
            .iter()
            .map(|m| {
                m.iter()
                    .copied()
                    .filter(|&x| is_active(self.entry[x as usize]))
                    .collect()
            })
            .collect();
        let by_action = &self.groups[BY_ACTION];
        for (x, &a) in self.entry.iter().enumerate() {
            if !is_active(a) {
                continue;
            }
            let mut pair = |y: u32| {
                let b = self.entry[y as usize];
                pairs.push((a.min(b), a.max(b)));
            };
            for (y, _) in by_trigger
                .partners_of(x, |g| &active[g as usize])
                .take(MAX_PARTNERS)
            {
                pair(y);
            }
            let near_actions = &by_action.near[by_action.group_of[x] as usize];
            self.by_action.nearest(
                x as u32,
                near_actions.iter().map(|&(g, _)| g),
                |y| is_active(self.entry[y as usize]),
                MAX_PARTNERS,
                pair,
            );
        }
        pairs.sort_unstable();
        pairs.dedup();
        // `by_meaning` comes sorted: merged in, not sorted again each
        // round with the rest (its 3.9M pairs on 100k lessons)
        let by_meaning = by_meaning
            .iter()
            .copied()
            .filter(|&(a, b)| is_active(a) && is_active(b));
        merge_sorted(&pairs, by_meaning)
    }
}

/// Adds to each action's near actions (in words) those near in meaning,
/// when the judge has given vectors: after those near in words, each
/// once. Lessons sharing an action are read nearest by trigger, so these
/// pair a lesson with the lessons of a reworded action whose situations
/// are most like its own.
fn add_near_in_meaning(ledger: &Ledger, entry: &[usize], by_action: &mut PartnerGroups) {
    let actions: Vec<&str> = by_action
        .members
        .iter()
        .map(|m| ledger.entries[entry[m[0] as usize]].prefer.as_str())
        .collect();
    let Some(near) = ledger.vectors.near_texts(&actions, MAX_PARTNERS) else {
        return;
    };
    for (g, h, cosine) in near {
        for (from, to) in [(g, h), (h, g)] {
            let list = &mut by_action.near[from];
            if list.iter().all(|&(k, _)| k as usize != to) {
                list.push((to as u32, cosine));
            }
        }
    }
}

/// Where [`Partners`] keeps its lists by trigger and by action.
const BY_TRIGGER: usize = 0;
const BY_ACTION: usize = 1;

/// The union of two sorted lists of distinct pairs, sorted.
fn merge_sorted(
    a: &[(usize, usize)],
    b: impl Iterator<Item = (usize, usize)>,
) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(a.len() + b.size_hint().0);
    let mut a = a.iter().copied().peekable();
    for y in b {
        while let Some(x) = a.next_if(|&x| x < y) {
            out.push(x);
        }
        a.next_if_eq(&y);
        out.push(y);
    }
    out.extend(a);
    out
}

/// Pairs (by entry index) of active lessons near in meaning, when the
/// judge has given vectors for all of them: each lesson's
/// [`MAX_PARTNERS`] nearest by trigger and by whole lesson, sorted, each
/// once. (Near actions are [`Partners`]' to pair.) Each view's pairs go to
/// `found` as soon as they are known, sorted, each once. One view may be
/// searched on `spare`'s core while this thread searches the other.
fn pairs_by_meaning(
    ledger: &Ledger,
    spare: &mut dyn SpareCore,
    mut found: impl FnMut(&[(usize, usize)]),
) -> Vec<(usize, usize)> {
    let active: Vec<usize> = (0..ledger.entries.len())
        .filter(|&i| ledger.entries[i].status == Status::Active)
        .collect();
    let Some(views) = ledger.vectors.views(active.iter().map(|&i| {
        let e = &ledger.entries[i];
        (e.when.as_str(), e.prefer.as_str())
    })) else {
        return vec![];
    };
    // entry indices grow with the active indices, so the order holds
    let entries = |pairs: Vec<(usize, usize)>| -> Vec<(usize, usize)> {
        pairs
            .into_iter()
            .map(|(i, j)| (active[i], active[j]))
            .collect()
    };
    // the whole-lesson view is searched on the spare core where the host
    // has one (after the searches by words, which started first), while
    // this thread searches the trigger view and sends its pairs to the
    // judge; here too if that core has not reached it by then (a dense
    // text's search by words takes longer than a view: 3 s against 1.5 s
    // on 100k `agents` lessons)
    let cut = views.cuts.lesson;
    let handed = spare.start_pairs_near(&views.lesson, cut, MAX_PARTNERS);
    let by_trigger = entries(views.trigger_pairs(MAX_PARTNERS));
    found(&by_trigger);
    let taken = handed.and_then(|call| {
        let handed = match spare.take_back_pairs_near(call) {
            true => return None,
            false => spare.finish_pairs_near(call),
        };
        let checked = handed.and_then(|pairs| {
            check_pairs(views.lesson.len(), &pairs)?;
            Ok(pairs
                .into_iter()
                .map(|(i, j)| (i as usize, j as usize))
                .collect())
        });
        checked.map_err(|why| spare.not_taken(&why)).ok()
    });
    let by_lesson = entries(taken.unwrap_or_else(|| views.lesson_pairs(MAX_PARTNERS)));
    found(&by_lesson);
    merge_sorted(&by_trigger, by_lesson.into_iter())
}

/// What a pass has had from its judge, by the pair of texts: the verdict
/// to act on, or None for a pair held under the margin. Only the ruling
/// is kept, not the four probabilities: on 100k lessons a pass judges
/// millions of pairs, and a map of whole relations (40 bytes a pair) took
/// the ledger engine over its 512 MiB as it grew.
struct Judged {
    /// Each entry's text id: entries with the same WHEN and PREFER share one.
    text: Vec<u32>,
    known: HashMap<(u32, u32), Known>,
    /// The rulings of the pairs the last round went through, in the
    /// round's order (by entry index), and how far this round has read
    /// them. A round's pairs are mostly the last round's (a round only
    /// retires lessons, and a lesson takes a new partner only for one
    /// retired): they are read in step instead of looked up, which on
    /// 100k `agents` lessons cost 2.3 s of random reads in `known` (perf).
    last_round: Vec<((u32, u32), Option<Verdict>)>,
    read: usize,
    /// This round's so far.
    this_round: Vec<((u32, u32), Option<Verdict>)>,
    /// Time spent in the judge's calls (for pairs related ahead, waiting
    /// for them).
    judging: Duration,
    /// Pairs related ahead ([`Judged::start`], [`Judged::prepare`]).
    ahead: usize,
    /// Whether the judge may still relate in the background: once it
    /// says it cannot, this pass stops offering (each offer sends a
    /// chunk's lessons across the boundary for nothing).
    background: bool,
}

/// What a pass knows of a pair of texts.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Known {
    /// The judge's ruling under the margin (None: held).
    Ruled(Option<Verdict>),
    /// Asked in a call not finished yet: no ruling to read until it is.
    Asked,
}

/// A chunk's pairs still active when it completed, and their rulings.
struct Ruled {
    pairs: Vec<(usize, usize)>,
    rulings: Vec<Option<Verdict>>,
}

/// A chunk of a round's pairs whose rulings are being made
/// ([`Judged::prepare`]).
struct Preparing {
    pairs: Vec<(usize, usize)>,
    /// Each pair's ruling where it was known when the chunk was prepared;
    /// None: read once this chunk's call and those before it are in.
    found: Vec<Option<Option<Verdict>>>,
    /// The pairs asked for their texts, and the judge's call relating
    /// them in the background (None: asked when the chunk completes).
    asked: Vec<(usize, usize)>,
    call: Option<u64>,
}

/// A call [`Judged::start`] started: the judge's call and its pairs.
struct Ahead {
    call: u64,
    pairs: Vec<(usize, usize)>,
}

impl Judged {
    fn new(ledger: &Ledger) -> Judged {
        let mut ids: HashMap<(&str, &str), u32> = HashMap::default();
        let text = ledger
            .entries
            .iter()
            .map(|e| {
                let next = ids.len() as u32;
                *ids.entry((e.when.as_str(), e.prefer.as_str()))
                    .or_insert(next)
            })
            .collect();
        Judged {
            text,
            known: HashMap::default(),
            last_round: Vec::new(),
            read: 0,
            this_round: Vec::new(),
            judging: Duration::ZERO,
            ahead: 0,
            background: true,
        }
    }

    /// Starts relating the pairs of texts among `pairs` not yet known, in
    /// the background where the judge can ([`RelationJudge::start`]): each
    /// lesson crosses once, the pairs as indices. None when nothing was
    /// started.
    fn start(
        &mut self,
        ledger: &Ledger,
        judge: &mut dyn RelationJudge,
        pairs: &[(usize, usize)],
    ) -> Option<Ahead> {
        let mut asked = HashSet::default();
        let new: Vec<(usize, usize)> = pairs
            .iter()
            .copied()
            .filter(|&(a, b)| {
                let key = (self.text[a], self.text[b]);
                !self.known.contains_key(&key) && asked.insert(key)
            })
            .collect();
        if new.is_empty() {
            return None;
        }
        let call = self.ask_ahead(ledger, judge, &new)?;
        // asked until `finish` rules on them: a later call leaves them out
        // (a pass ends with an error if the call fails)
        for key in asked {
            self.known.insert(key, Known::Asked);
        }
        Some(Ahead { call, pairs: new })
    }

    /// Starts relating `pairs` in the background, while the judge has not
    /// said it cannot: each lesson crosses once, the pairs as indices
    /// into them.
    fn ask_ahead(
        &mut self,
        ledger: &Ledger,
        judge: &mut dyn RelationJudge,
        pairs: &[(usize, usize)],
    ) -> Option<u64> {
        if !self.background {
            return None;
        }
        let mut place: HashMap<usize, u32> = HashMap::default();
        let mut lessons = Vec::new();
        let mut index = |i: usize| {
            *place.entry(i).or_insert_with(|| {
                let e = &ledger.entries[i];
                lessons.push(Lesson {
                    when: &e.when,
                    prefer: &e.prefer,
                });
                lessons.len() as u32 - 1
            })
        };
        let indices: Vec<(u32, u32)> = pairs.iter().map(|&(a, b)| (index(a), index(b))).collect();
        let call = judge.start(&lessons, &indices);
        self.background = call.is_some();
        call
    }

    /// Waits for the relations `ahead` started and keeps their rulings.
    fn finish(
        &mut self,
        ledger: &Ledger,
        judge: &mut dyn RelationJudge,
        ahead: Ahead,
    ) -> Result<(), String> {
        let waiting = Instant::now();
        let taken = self.take(ledger, judge, ahead.call, &ahead.pairs);
        self.judging += waiting.elapsed();
        taken
    }

    /// Waits for the background call relating `pairs` and keeps their
    /// rulings.
    fn take(
        &mut self,
        ledger: &Ledger,
        judge: &mut dyn RelationJudge,
        call: u64,
        pairs: &[(usize, usize)],
    ) -> Result<(), String> {
        let relations = judge.finish(call)?;
        one_per_pair(&relations, pairs)?;
        self.ahead += pairs.len();
        self.keep(ledger, pairs, &relations);
        Ok(())
    }

    /// Keeps the rulings `relations` give `pairs` under the ledger's margin.
    fn keep(&mut self, ledger: &Ledger, pairs: &[(usize, usize)], relations: &[Relation]) {
        let margin = ledger.params.destructive_margin;
        for (&(a, b), r) in pairs.iter().zip(relations) {
            let ruling = match decide(r, margin) {
                Decision::Apply(v) => Some(v),
                Decision::Hold { .. } => None,
            };
            self.known
                .insert((self.text[a], self.text[b]), Known::Ruled(ruling));
        }
    }

    /// Starts a round, whose pairs come in order of entry index.
    fn next_round(&mut self) {
        self.last_round = std::mem::take(&mut self.this_round);
        self.read = 0;
    }

    /// The last round's ruling of `pair`, if it went through it. Pairs
    /// must come in order within a round.
    fn carried(&mut self, pair: (u32, u32)) -> Option<Option<Verdict>> {
        let last = &self.last_round;
        while self.read < last.len() && last[self.read].0 < pair {
            self.read += 1;
        }
        last.get(self.read)
            .filter(|(p, _)| *p == pair)
            .map(|&(_, ruling)| ruling)
    }

    /// Prepares the rulings for `pairs` (the round's next ones, in
    /// order): those known are read now; the pairs of texts not yet asked
    /// are asked at once, in the background where the judge can
    /// ([`RelationJudge::start`]), so the judge relates them while the
    /// caller applies the chunk before. Each pair of texts is asked once.
    fn prepare(
        &mut self,
        ledger: &Ledger,
        judge: &mut dyn RelationJudge,
        pairs: Vec<(usize, usize)>,
    ) -> Preparing {
        let mut keys = HashSet::default();
        let mut asked: Vec<(usize, usize)> = Vec::new();
        let found = pairs
            .iter()
            .map(|&(a, b)| {
                self.carried((a as u32, b as u32)).or_else(|| {
                    let key = (self.text[a], self.text[b]);
                    match self.known.get(&key) {
                        Some(Known::Ruled(ruling)) => Some(*ruling),
                        Some(Known::Asked) => None,
                        None => {
                            if keys.insert(key) {
                                asked.push((a, b));
                            }
                            None
                        }
                    }
                })
            })
            .collect();
        let call = match asked.is_empty() {
            true => None,
            false => self.ask_ahead(ledger, judge, &asked),
        };
        match call {
            // a chunk prepared before this one completes leaves them out
            Some(_) => {
                for key in keys {
                    self.known.insert(key, Known::Asked);
                }
            }
            // a judge that cannot relate in the background is asked when
            // the chunk completes, about the pairs still active then: a
            // pair retired meanwhile would be a call wasted on a judge
            // that is dear per pair
            None => asked.clear(),
        }
        Preparing {
            pairs,
            found,
            asked,
            call,
        }
    }

    /// The pairs [`Judged::prepare`] took that are still active, and their
    /// rulings: the judge's relations for those asked decided under the
    /// ledger's margin. Chunks complete in the order they were prepared;
    /// a ruling still missing then (a judge that relates nothing in the
    /// background) is asked now, each pair of texts once.
    fn complete(
        &mut self,
        ledger: &Ledger,
        judge: &mut dyn RelationJudge,
        chunk: Preparing,
    ) -> Result<Ruled, String> {
        let asking = Instant::now();
        if let Some(call) = chunk.call {
            self.take(ledger, judge, call, &chunk.asked)?;
        }
        let active = |i: usize| ledger.entries[i].status == Status::Active;
        let (pairs, found): (Vec<_>, Vec<_>) = chunk
            .pairs
            .into_iter()
            .zip(chunk.found)
            .filter(|&((a, b), _)| active(a) && active(b))
            .unzip();
        let mut keys = HashSet::default();
        let missing: Vec<(usize, usize)> = pairs
            .iter()
            .zip(&found)
            .filter(|&(&(a, b), found)| {
                let key = (self.text[a], self.text[b]);
                found.is_none()
                    && !matches!(self.known.get(&key), Some(Known::Ruled(_)))
                    && keys.insert(key)
            })
            .map(|(&pair, _)| pair)
            .collect();
        let relations = judge_pairs(ledger, judge, &missing)?;
        self.keep(ledger, &missing, &relations);
        self.judging += asking.elapsed();
        let rulings: Vec<Option<Verdict>> = pairs
            .iter()
            .zip(found)
            .map(|(&(a, b), found)| {
                found.unwrap_or_else(|| match self.known[&(self.text[a], self.text[b])] {
                    Known::Ruled(ruling) => ruling,
                    Known::Asked => unreachable!("a missing ruling was asked"),
                })
            })
            .collect();
        self.this_round.extend(
            pairs
                .iter()
                .map(|&(a, b)| (a as u32, b as u32))
                .zip(rulings.iter().copied()),
        );
        Ok(Ruled { pairs, rulings })
    }
}

/// The pairs of `chunk` whose lessons are both active.
fn live_pairs(ledger: &Ledger, chunk: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let active = |i: usize| ledger.entries[i].status == Status::Active;
    chunk
        .iter()
        .copied()
        .filter(|&(a, b)| active(a) && active(b))
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
    one_per_pair(&verdicts, pairs)?;
    Ok(verdicts)
}

/// An error unless the judge gave one relation per pair.
fn one_per_pair(relations: &[Relation], pairs: &[(usize, usize)]) -> Result<(), String> {
    if relations.len() == pairs.len() {
        return Ok(());
    }
    Err(format!(
        "the judge returned {} verdicts for {} pairs",
        relations.len(),
        pairs.len()
    ))
}

/// The groups of siblings to fold, each with its parent's trigger.
///
/// A group is a centre and its siblings: not a connected component, in
/// which a chain of siblings (a ~ b ~ c ~ ..., the ends sharing only the
/// action) would fold hundreds of lessons under one parent. Centres are
/// taken greedily, the lesson with the most siblings not yet in a group
/// first (the earliest on a tie). A group holds only as many of the
/// centre's siblings as its parent's trigger can name
/// ([`GroupName`]): a parent names every lesson it folds. Siblings left
/// out stay active for a group of their own, or the next pass; a centre
/// that cannot be named makes no group.
fn sibling_groups(ledger: &Ledger, edges: &[(usize, usize)]) -> Vec<(Vec<usize>, String)> {
    // each lesson's siblings, ascending, in one buffer: the greedy loop
    // reads a centre's list on every pop, which maps of sets made 1 s of
    // 100k `agents` lessons' pass (perf)
    let mut both: Vec<(usize, usize)> = edges
        .iter()
        .filter(|(a, b)| a != b)
        .flat_map(|&(a, b)| [(a, b), (b, a)])
        .collect();
    both.sort_unstable();
    both.dedup();
    let n = ledger.entries.len();
    let mut start = vec![0usize; n + 1];
    for &(a, _) in &both {
        start[a + 1] += 1;
    }
    for k in 0..n {
        start[k + 1] += start[k];
    }
    let siblings = |c: usize| both[start[c]..start[c + 1]].iter().map(|&(_, b)| b);
    let min = ledger.params.abstraction_min.max(2);
    let when = |i: usize| ledger.entries[i].when.as_str();
    let mut centres: Vec<usize> = both.iter().map(|&(a, _)| a).collect();
    centres.dedup();
    // what names each lesson: its trigger, or for a parent the triggers
    // of the lessons it folds
    let mut folded: HashMap<&str, Vec<usize>> = HashMap::default();
    for (k, e) in ledger.entries.iter().enumerate() {
        if let Some(parent) = e.note.strip_prefix(FOLDED_UNDER)
            && e.status == Status::Dormant
        {
            folded.entry(parent).or_default().push(k);
        }
    }
    let named_by: Vec<Vec<usize>> = centres
        .iter()
        .map(|&c| folded_triggers(ledger, &folded, c))
        .collect();
    // each trigger split once: a centre's group is named anew for every
    // sibling it tries
    let mut words: Vec<Vec<&str>> = vec![Vec::new(); n];
    for &t in centres.iter().chain(named_by.iter().flatten()) {
        if words[t].is_empty() {
            words[t] = trigger_words(when(t));
        }
    }
    let mut naming: Vec<usize> = vec![usize::MAX; n];
    for (k, &c) in centres.iter().enumerate() {
        naming[c] = k;
    }
    let triggers = |c: usize| -> Vec<(&str, &[&str])> {
        named_by[naming[c]]
            .iter()
            .map(|&t| (when(t), words[t].as_slice()))
            .collect()
    };
    let own = |c: usize| -> (&str, &[&str]) { (when(c), words[c].as_slice()) };
    // a member joins named by the lessons it folds or, when those cannot
    // be named together (a legacy parent's children, a note cycle), by
    // its own trigger: whichever it joins by is in the name
    fn join<'w>(
        group: &mut GroupName<'w>,
        folded: &[(&'w str, &'w [&'w str])],
        own: (&'w str, &'w [&'w str]),
    ) -> bool {
        let is_own = folded.len() == 1 && std::ptr::eq(folded[0].0, own.0);
        group.try_push(folded) || (!is_own && group.try_push(&[own]))
    }
    let mut taken = vec![false; n];
    let free = |taken: &[bool], c: usize| siblings(c).filter(|&m| !taken[m]).count();
    // counts only fall as groups form: a popped count that is out of date
    // goes back with its new value (lazy greedy)
    let mut queue: BinaryHeap<(usize, Reverse<usize>)> = centres
        .iter()
        .map(|&c| (start[c + 1] - start[c], Reverse(c)))
        .collect();
    let mut groups = Vec::new();
    while let Some((count, Reverse(centre))) = queue.pop() {
        if taken[centre] {
            continue;
        }
        let now_free = free(&taken, centre);
        if now_free != count {
            queue.push((now_free, Reverse(centre)));
            continue;
        }
        if count + 1 < min {
            break;
        }
        // a centre is tried once, whether or not it makes a group
        taken[centre] = true;
        let mut members = vec![centre];
        let mut group = GroupName::default();
        if !join(&mut group, &triggers(centre), own(centre)) {
            continue;
        }
        for m in siblings(centre).filter(|&m| !taken[m]) {
            if join(&mut group, &triggers(m), own(m)) {
                members.push(m);
            }
        }
        let name = group.name();
        if let (Some(name), true) = (name, members.len() >= min) {
            for &m in &members {
                taken[m] = true;
            }
            members.sort_unstable();
            groups.push((members, name));
        }
    }
    groups
}

/// The groups whose parent's action every member keeps as its own: a
/// parent takes its strongest member's action, and each member was judged
/// a sibling of the group's centre, not of that member, so two members
/// may want opposite things ("skip writing new tests" and "check that the
/// tests cover the change" under a parent "keep behaviour identical and
/// run the tests"). Each member whose action differs from the parent's
/// is related, in its own situation, with the parent's action in that
/// situation; it stays only when the judge reads the two as the same
/// lesson (merge the most probable: not distinct, not contradicting).
/// A member an undone abstraction keeps apart from one already in the
/// group leaves too. A group
/// left with fewer than `abstraction_min` members makes no parent; the
/// others are named anew. All the checks go to the judge in one call.
fn held_together(
    ledger: &Ledger,
    judge: &mut dyn RelationJudge,
    groups: Vec<(Vec<usize>, String)>,
    now: f64,
) -> Result<Vec<(Vec<usize>, String)>, String> {
    let sources: Vec<usize> = groups
        .iter()
        .map(|(members, _)| strongest(ledger, members, now))
        .collect();
    let mut asked: Vec<(usize, usize)> = Vec::new();
    for ((members, _), &source) in groups.iter().zip(&sources) {
        let action = &ledger.entries[source].prefer;
        asked.extend(
            members
                .iter()
                .filter(|&&m| ledger.entries[m].prefer != *action)
                .map(|&m| (m, source)),
        );
    }
    let checks: Vec<(Lesson<'_>, Lesson<'_>)> = asked
        .iter()
        .map(|&(m, source)| {
            let child = &ledger.entries[m];
            (
                Lesson {
                    when: &child.when,
                    prefer: &child.prefer,
                },
                Lesson {
                    when: &child.when,
                    prefer: &ledger.entries[source].prefer,
                },
            )
        })
        .collect();
    let relations = if checks.is_empty() {
        Vec::new()
    } else {
        judge.relate(&checks)?
    };
    one_per_pair(&relations, &asked)?;
    let refused: HashSet<usize> = asked
        .iter()
        .zip(&relations)
        .filter(|(_, r)| most_probable(r) != Verdict::Merge)
        .map(|(&(m, _), _)| m)
        .collect();
    let min = ledger.params.abstraction_min.max(2);
    let mut kept = Vec::new();
    for ((members, when), source) in groups.into_iter().zip(sources) {
        let mut stay: Vec<usize> = vec![source];
        for &m in &members {
            let apart = stay.iter().any(|&s| ledger.kept_unfolded(m, s));
            if m != source && !refused.contains(&m) && !apart {
                stay.push(m);
            }
        }
        if stay.len() < min {
            continue;
        }
        stay.sort_unstable();
        if stay.len() == members.len() {
            kept.push((members, when));
            continue;
        }
        let whens: Vec<&str> = stay
            .iter()
            .map(|&m| ledger.entries[m].when.as_str())
            .collect();
        if let Some(when) = parent_trigger(&whens) {
            kept.push((stay, when));
        }
    }
    Ok(kept)
}

/// The triggers that name lesson `i` in a parent's trigger: its own, or,
/// when it is a parent, those of the lessons it folds (theirs in turn
/// when they are parents; `folded` holds each parent's dormant
/// children). A parent named by its children's names would list lists
/// ("reviewing, editing or testing the parser, testing the lexer or …"
/// after a few auto-sleeps over one template); named by the lessons
/// underneath, it reads as one situation that names every lesson still
/// folded under it.
fn folded_triggers(ledger: &Ledger, folded: &HashMap<&str, Vec<usize>>, i: usize) -> Vec<usize> {
    if !folded.contains_key(ledger.entries[i].id.as_str()) {
        return vec![i];
    }
    let mut leaves = Vec::new();
    let mut stack = vec![i];
    let mut seen = HashSet::default();
    while let Some(k) = stack.pop() {
        if !seen.insert(k) {
            continue;
        }
        match folded.get(ledger.entries[k].id.as_str()) {
            Some(children) => stack.extend(children),
            None => leaves.push(k),
        }
    }
    leaves.sort_unstable();
    leaves
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::Params;
    use crate::ledger::events::EventKind;
    use crate::ledger::relate::LexicalRelations;

    const NOW: f64 = 1_750_000_000.0;

    pub(crate) fn demo() -> Ledger {
        Ledger::new(crate::ledger::demo::entries(NOW), Params::default())
    }

    pub(super) fn ids() -> impl FnMut() -> String {
        let mut n = 0;
        move || {
            n += 1;
            format!("p{n:07}")
        }
    }

    /// A lesson whose duplicates a round merged still has partners: the
    /// lists are kept by distinct text, so the next round takes the near
    /// texts' lessons instead of searching the whole ledger again.
    #[test]
    fn partners_outlast_the_duplicates_a_round_merges() {
        let lesson = |i: usize, when: &str| {
            Entry::new(
                format!("e{i:03}"),
                when.into(),
                "run the focused tests first".into(),
                0.7,
                1,
                NOW,
            )
        };
        // more copies than a list holds, then two near triggers
        let copies = MAX_PARTNERS + RESERVE_PARTNERS + 10;
        let mut entries: Vec<Entry> = (0..copies)
            .map(|i| lesson(i, "editing the parser in repo r1"))
            .collect();
        entries.push(lesson(copies, "editing the parser in repo r1 today"));
        entries.push(lesson(copies + 1, "editing the parser in repo r1 again"));
        let mut ledger = Ledger::new(entries, Params::default());
        let partners = Partners::find(&ledger);
        let first = partners.pairs(&ledger, &[]);
        assert!(first.contains(&(0, 1)), "{first:?}");
        // the round merged every copy into the first
        for e in &mut ledger.entries[1..copies] {
            e.status = Status::Retired;
        }
        let next = partners.pairs(&ledger, &[]);
        assert!(next.contains(&(0, copies)), "{next:?}");
        assert!(next.contains(&(0, copies + 1)), "{next:?}");
        assert!(
            next.iter()
                .all(|&(a, b)| a == 0 || a >= copies && b >= copies)
        );
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
        assert_eq!(
            parent.when,
            "trading prompt for XAUUSD, crypto perps or futures"
        );
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

    /// Counts how often each pair reaches the judge.
    pub(super) struct Counting<J>(pub(super) J, pub(super) HashMap<String, usize>);

    impl<J: RelationJudge> RelationJudge for Counting<J> {
        fn relate(&mut self, pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Result<Vec<Relation>, String> {
            for (a, b) in pairs {
                let key = format!("{}|{}|{}|{}", a.when, a.prefer, b.when, b.prefer);
                *self.1.entry(key).or_default() += 1;
            }
            self.0.relate(pairs)
        }
    }

    #[test]
    fn a_pass_asks_the_judge_about_each_pair_once() {
        let entries = crate::ledger::synthetic::agent_entries(400, NOW);
        let mut counted = Counting(LexicalRelations(Params::default()), HashMap::default());
        let mut ledger = Ledger::new(entries, Params::default());
        let (report, _) = sleep(&mut ledger, &mut counted, &mut ids(), NOW).unwrap();
        // merges in the first round make a second one
        assert!(report.merged > 0, "{report:?}");
        let most = counted.1.values().max().copied();
        assert_eq!(most, Some(1), "a pair was judged {most:?} times");
    }

    /// Sleeps like [`LexicalRelations`], one millisecond a call.
    struct Slow(LexicalRelations);

    impl RelationJudge for Slow {
        fn relate(&mut self, pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Result<Vec<Relation>, String> {
            std::thread::sleep(std::time::Duration::from_millis(1));
            self.0.relate(pairs)
        }
    }

    #[test]
    fn a_pass_reports_each_stage_once_in_order_with_the_judges_share() {
        let entries = crate::ledger::synthetic::agent_entries(400, NOW);
        let mut ledger = Ledger::new(entries, Params::default());
        let mut judge = Slow(LexicalRelations(Params::default()));
        let mut seen: Vec<(&str, Duration)> = Vec::new();
        let mut counted: Vec<(&str, Vec<(&str, usize)>)> = Vec::new();
        let started = Instant::now();
        sleep_staged(
            &mut ledger,
            &mut judge,
            &mut NoSpareCore,
            &mut ids(),
            NOW,
            &mut |name, took, counts| {
                seen.push((name, took));
                counted.push((name, counts.to_vec()));
            },
        )
        .unwrap();
        let total = started.elapsed();
        let names: Vec<&str> = seen.iter().map(|s| s.0).collect();
        assert_eq!(names, STAGES);
        let took = |name: &str| seen.iter().find(|s| s.0 == name).unwrap().1;
        // the judge was called, and its time is part of the rounds'
        assert!(took("judge") >= Duration::from_millis(1), "{seen:?}");
        assert!(took("judge") <= took("rounds"), "{seen:?}");
        let laps: Duration = seen.iter().filter(|s| s.0 != "judge").map(|s| s.1).sum();
        assert!(laps <= total, "{seen:?} in {total:?}");
        // the rounds went through at least the pairs the judge was asked
        // about, in at least one round
        let count = |name: &str, what: &str| {
            let (_, counts) = counted.iter().find(|c| c.0 == name).unwrap();
            counts.iter().find(|c| c.0 == what).unwrap().1
        };
        assert!(count("rounds", "rounds") >= 1, "{counted:?}");
        assert!(count("judge", "pairs") > 0, "{counted:?}");
        assert!(
            count("rounds", "pairs") >= count("judge", "pairs"),
            "{counted:?}"
        );
    }

    /// A relation that depends only on the two texts: each verdict, held
    /// pairs included, for some pair of the ledger below.
    struct ByText;

    impl RelationJudge for ByText {
        fn relate(&mut self, pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Result<Vec<Relation>, String> {
            Ok(pairs
                .iter()
                .map(|(a, b)| {
                    let h = (a.when.len() * 7 + b.when.len() * 3 + a.prefer.len()) % 5;
                    let mut r = [0.0; 4];
                    // 4: a merge under the margin, held
                    r[h.min(3)] = if h == 4 { 0.0 } else { 1.0 };
                    if h == 4 {
                        r = [0.6, 0.0, 0.0, 0.4];
                    }
                    r
                })
                .collect())
        }
    }

    /// Rounds that keep most of the last round's pairs, drop some and add
    /// others, in chunks, each chunk prepared before the one before it
    /// completes (as a pass does): every ruling is the judge's own for
    /// that pair under the margin, whether it was carried from the last
    /// round, known by its texts or asked, and each pair of texts is
    /// asked once, by a judge that relates in the background and by one
    /// that cannot.
    #[test]
    fn rulings_carried_from_the_last_round_are_the_judges() {
        let entries = (0..60)
            .map(|i| {
                // every third lesson says another's texts again
                let k = if i % 3 == 2 { i - 1 } else { i };
                Entry::new(
                    format!("{i:08x}"),
                    format!("when {} {}", "x".repeat(k % 7), k % 11),
                    format!("prefer {}", "y".repeat(k % 5)),
                    0.5,
                    0,
                    NOW,
                )
            })
            .collect();
        let ledger = Ledger::new(entries, Params::default());
        let all: Vec<(usize, usize)> = (0..60)
            .flat_map(|a| (a + 1..60).map(move |b| (a, b)))
            .collect();
        let rounds = |judge: &mut dyn RelationJudge| -> Judged {
            let mut judged = Judged::new(&ledger);
            for round in 0..4usize {
                let pairs: Vec<(usize, usize)> = all
                    .iter()
                    .copied()
                    .filter(|&(a, b)| (a * 13 + b * 7 + round * (a % 3)) % 4 != 0)
                    .collect();
                judged.next_round();
                let mut chunks = pairs.chunks(97);
                let mut next = chunks
                    .next()
                    .map(|c| judged.prepare(&ledger, judge, c.to_vec()));
                while let Some(this) = next.take() {
                    next = chunks
                        .next()
                        .map(|c| judged.prepare(&ledger, judge, c.to_vec()));
                    let Ruled { pairs, rulings } = judged.complete(&ledger, judge, this).unwrap();
                    for (&(a, b), ruling) in pairs.iter().zip(rulings) {
                        let lesson = |i: usize| Lesson {
                            when: &ledger.entries[i].when,
                            prefer: &ledger.entries[i].prefer,
                        };
                        let r = ByText.relate(&[(lesson(a), lesson(b))]).unwrap()[0];
                        let want = match decide(&r, ledger.params.destructive_margin) {
                            Decision::Apply(v) => Some(v),
                            Decision::Hold { .. } => None,
                        };
                        assert_eq!(ruling, want, "round {round}, pair {a}-{b}");
                    }
                }
            }
            judged
        };
        let mut now = Counting(ByText, HashMap::default());
        let judged = rounds(&mut now);
        assert_eq!(judged.ahead, 0);
        let mut background = super::meaning_tests::RelatedAhead {
            inner: Counting(ByText, HashMap::default()),
            started: vec![],
            pairs_ahead: 0,
            fail: false,
        };
        let judged_ahead = rounds(&mut background);
        assert!(background.pairs_ahead > 0);
        assert_eq!(judged_ahead.ahead, background.pairs_ahead);
        for counted in [&now.1, &background.inner.1] {
            assert!(
                counted.values().all(|&n| n == 1),
                "a pair of texts asked twice"
            );
        }
        for judged in [judged, judged_ahead] {
            let ruled = |r: &&Known| matches!(r, Known::Ruled(_));
            assert!(judged.known.values().all(|r| ruled(&r)));
            let held = judged
                .known
                .values()
                .filter(|r| **r == Known::Ruled(None))
                .count();
            assert!(held > 0 && held < judged.known.len());
        }
    }

    /// A judge that cannot relate in the background is asked about a
    /// chunk's pairs when the chunk completes, not when it was prepared:
    /// a pair whose lesson an earlier chunk retired meanwhile costs it no
    /// call, and is not in the chunk's rulings.
    #[test]
    fn a_judge_asked_now_is_not_asked_about_pairs_retired_meanwhile() {
        let entries: Vec<Entry> = (0..6)
            .map(|i| {
                Entry::new(
                    format!("{i:08x}"),
                    format!("when case {i}"),
                    format!("prefer action {i}"),
                    0.5,
                    0,
                    NOW,
                )
            })
            .collect();
        let mut ledger = Ledger::new(entries, Params::default());
        let mut judged = Judged::new(&ledger);
        let mut judge = Counting(ByText, HashMap::default());
        judged.next_round();
        let pairs = vec![(0, 1), (0, 2), (1, 2), (3, 4), (4, 5)];
        let prepared = judged.prepare(&ledger, &mut judge, pairs);
        assert!(judge.1.is_empty(), "asked before the chunk completes");
        ledger.entries[4].status = Status::Retired;
        let Ruled { pairs, rulings } = judged.complete(&ledger, &mut judge, prepared).unwrap();
        assert_eq!(pairs, [(0, 1), (0, 2), (1, 2)]);
        assert_eq!(rulings.len(), 3);
        assert_eq!(judge.1.len(), 3, "{:?}", judge.1);
    }

    #[test]
    fn a_round_takes_active_partners_from_the_lists_and_what_is_left() {
        let mut l = Ledger::new(vec![], Params::default());
        for i in 0..40 {
            l.capture(
                format!("{i:08x}"),
                &format!("editing module {i} of the parser"),
                &format!("run the tests of module {i}"),
                crate::ledger::ops::Feedback::Neutral,
                NOW,
            );
        }
        let partners = Partners::find(&l);
        let all = partners.pairs(&l, &[]);
        assert!(!all.is_empty());
        // a few retired: their pairs go, no list runs out
        for i in [3, 17] {
            l.entries[i].status = Status::Retired;
        }
        let fewer = partners.pairs(&l, &[]);
        assert!(
            fewer
                .iter()
                .all(|&(a, b)| ![3, 17].contains(&a) && ![3, 17].contains(&b))
        );
        assert!(fewer.len() < all.len());
        // each lesson keeps MAX_PARTNERS + RESERVE_PARTNERS of 39: with
        // half retired some lists run short, and their lessons take the
        // active partners left, their strongest
        for i in 0..20 {
            l.entries[i].status = Status::Retired;
        }
        let left = partners.pairs(&l, &[]);
        assert!(left.iter().all(|&(a, b)| a >= 20 && b >= 20));
        for i in 20..40 {
            assert!(left.iter().any(|&(a, b)| a == i || b == i), "{i}");
        }
        // a fresh search pairs no lesson the old lists did not
        let fresh = Partners::find(&l).pairs(&l, &[]);
        assert!(left.iter().all(|p| fresh.contains(p)));
    }

    /// Where more lessons share an action than a list holds, a lesson's
    /// partners by action are those whose triggers share its words,
    /// wherever they sit in the ledger.
    #[test]
    fn partners_by_action_are_nearest_by_trigger_not_by_position() {
        let lesson = |i: usize, when: String| {
            Entry::new(
                format!("e{i:03}"),
                when,
                "run the focused tests first".into(),
                0.7,
                1,
                NOW,
            )
        };
        // three triggers of the same words far apart among forty others
        let related = [
            (20, "editing the parser in repo r3"),
            (31, "in repo r3, editing the parser"),
            (42, "the parser in repo r3: editing"),
        ];
        let entries: Vec<Entry> = (0..43)
            .map(|i| match related.iter().find(|r| r.0 == i) {
                Some(&(_, when)) => lesson(i, when.into()),
                None => lesson(i, format!("reviewing chapter {i} of the handbook")),
            })
            .collect();
        // no pairs by trigger: what is paired is the action lists'
        let params = Params {
            candidate_threshold: 1.1,
            ..Params::default()
        };
        let ledger = Ledger::new(entries, params);
        let pairs = Partners::find(&ledger).pairs(&ledger, &[]);
        for pair in [(20, 31), (20, 42), (31, 42)] {
            assert!(pairs.contains(&pair), "{pair:?}");
        }
    }

    #[test]
    fn merging_sorted_pairs_is_their_sorted_union() {
        let mut draw = crate::ledger::meaning::tests::Rng(0x5eed);
        let mut pairs = |n: usize| -> Vec<(usize, usize)> {
            let mut v: Vec<(usize, usize)> = (0..n)
                .map(|_| {
                    let x = |r: f32| ((r + 1.0) * 20.0) as usize;
                    let (a, b) = (x(draw.next()), x(draw.next()));
                    (a.min(b), a.max(b))
                })
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        for n in [0, 1, 5, 40, 300] {
            let (a, b) = (pairs(n), pairs(n / 2 + 1));
            let mut both = [a.clone(), b.clone()].concat();
            both.sort_unstable();
            both.dedup();
            assert_eq!(merge_sorted(&a, b.iter().copied()), both);
            assert_eq!(merge_sorted(&b, a.iter().copied()), both);
        }
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
    use crate::ledger::events::EventKind;
    use crate::ledger::ops::Feedback;

    const NOW: f64 = 1_750_000_000.0;

    /// A judge that answers every pair with the same relation.
    pub(super) struct Always(pub(super) Relation);

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

    /// Three lessons with one action on situations that share no word.
    fn one_action_three_situations() -> Ledger {
        let mut l = Ledger::new(vec![], Params::default());
        for (id, when) in [
            ("a", "logging HTTP request bodies"),
            ("b", "writing analytics events"),
            ("c", "dumping user records for debugging"),
        ] {
            l.capture(
                id.into(),
                when,
                "redact personal data before writing it",
                Feedback::Neutral,
                NOW,
            );
        }
        l
    }

    /// Sleeps [`one_action_three_situations`] with a judge answering
    /// `relation` for every pair.
    fn sleep_three(relation: Relation) -> (Ledger, SleepReport, Vec<Event>) {
        let mut l = one_action_three_situations();
        let (report, events) =
            sleep(&mut l, &mut Always(relation), &mut || "p".into(), NOW).unwrap();
        (l, report, events)
    }

    #[test]
    fn siblings_are_found_by_their_shared_action() {
        let (l, report, events) = sleep_three([0.0, 0.0, 0.9, 0.1]);
        assert_eq!(report.generalized, 1, "{events:?}");
        let parent = l.entries.last().unwrap();
        assert_eq!(
            parent.when,
            "logging HTTP request bodies, writing analytics events or dumping user records \
             for debugging"
        );
        assert_eq!(l.active_count(), 1);
    }

    /// A judge that calls the listed pairs of triggers siblings and every
    /// other pair distinct.
    struct SiblingsOnly(Vec<(String, String)>);

    impl RelationJudge for SiblingsOnly {
        fn relate(&mut self, pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Result<Vec<Relation>, String> {
            Ok(pairs
                .iter()
                .map(|(a, b)| {
                    let listed = self
                        .0
                        .iter()
                        .any(|(x, y)| (x == a.when && y == b.when) || (x == b.when && y == a.when));
                    if listed {
                        [0.0, 0.0, 0.9, 0.1]
                    } else {
                        [0.0, 0.0, 0.0, 1.0]
                    }
                })
                .collect())
        }
    }

    /// Sleeps `l` with a judge that calls every pair siblings; the
    /// parent is `id`.
    fn sleep_as_siblings(l: &mut Ledger, id: &str) -> SleepReport {
        let (report, _) = sleep(l, &mut Always([0.0, 0.0, 0.9, 0.1]), &mut || id.into(), NOW)
            .expect("the judge does not fail");
        report
    }

    fn one_action(whens: &[String]) -> Ledger {
        let mut l = Ledger::new(vec![], Params::default());
        for (i, when) in whens.iter().enumerate() {
            l.capture(
                format!("{i:08x}"),
                when,
                "set a timeout and retry with backoff",
                Feedback::Neutral,
                NOW,
            );
        }
        l
    }

    /// Folding keeps what recall found: a context naming one folded
    /// situation recalls its parent, though the parent's trigger lists
    /// many and lessons with other advice share the context's words.
    #[test]
    fn a_lesson_recalled_before_it_was_folded_recalls_its_parent() {
        let mut l = Ledger::new(vec![], Params::default());
        let mut whens = Vec::new();
        for verb in ["editing", "testing", "reviewing"] {
            for part in ["parser", "lexer", "type checker", "code generator"] {
                whens.push(format!("{verb} the {part} in repo r3"));
            }
        }
        let ours = "run the focused tests first";
        // each its own advice, so none of them are siblings
        let others = [
            "tag the release candidate",
            "ping the owning team",
            "write a changelog entry",
            "bump the version number",
            "check the flaky test list",
            "update the snapshot files",
            "take a backup first",
            "note the decision in the ADR",
            "pin the versions",
            "ask before deleting anything",
            "log the request id",
            "keep the change small",
        ];
        for (i, when) in whens.iter().enumerate() {
            l.capture(format!("a{i:07}"), when, ours, Feedback::Neutral, NOW);
            let later = format!("{when} before a release");
            l.capture(
                format!("b{i:07}"),
                &later,
                others[i],
                Feedback::Neutral,
                NOW,
            );
        }
        let advice = |l: &mut Ledger, when: &str| -> String {
            let (hits, _) = l.recall(when, 1, NOW);
            l.entries[hits[0]].prefer.clone()
        };
        for when in &whens {
            assert_eq!(advice(&mut l, when), ours, "before: {when}");
        }
        let mut n = 0;
        let (report, _) = sleep(
            &mut l,
            &mut crate::ledger::relate::LexicalRelations(Params::default()),
            &mut || {
                n += 1;
                format!("p{n:07}")
            },
            NOW,
        )
        .unwrap();
        let folded = l
            .entries
            .iter()
            .filter(|e| e.status == Status::Dormant && e.prefer == ours)
            .count();
        assert!(report.generalized >= 1 && folded >= 9, "{report:?}");
        for when in &whens {
            assert_eq!(advice(&mut l, when), ours, "after: {when}");
        }
        // a later sleep may merge a parent into a lesson that says the
        // same; its children are then recalled as that lesson
        let parents: Vec<usize> = (0..l.entries.len())
            .filter(|&i| l.entries[i].note == "abstracted parent")
            .collect();
        for (n, p) in parents.into_iter().enumerate() {
            let mut q = Entry::new(
                format!("q{n:07}"),
                "working on the compiler".into(),
                ours.into(),
                1.0,
                50,
                NOW,
            );
            q.hit_count = 50;
            l.entries.push(q);
            let q = l.entries.len() - 1;
            l.merge(p, q, NOW);
            assert_eq!(l.entries[p].status, Status::Retired);
        }
        for when in &whens {
            assert_eq!(advice(&mut l, when), ours, "after a merge: {when}");
        }
    }

    #[test]
    fn a_chain_of_siblings_is_not_one_parent() {
        // a ~ b ~ c ~ d ~ e: the ends share only the action
        let whens: Vec<String> = [
            "the payments API",
            "a weather service",
            "a partner's REST endpoint",
            "an internal gRPC service",
            "a message queue",
        ]
        .iter()
        .map(|s| format!("calling {s}"))
        .collect();
        let chain = whens
            .windows(2)
            .map(|w| (w[0].clone(), w[1].clone()))
            .collect();
        let mut l = one_action(&whens);
        let (report, events) =
            sleep(&mut l, &mut SiblingsOnly(chain), &mut || "p".into(), NOW).unwrap();
        // the first centre with two siblings takes them; the rest of the
        // chain has one sibling left and is not a group
        assert_eq!(report.generalized, 1, "{events:?}");
        assert_eq!(events[0].others, ["00000000", "00000001", "00000002"]);
        assert_eq!(l.active_count(), 3);
    }

    #[test]
    fn a_parent_names_every_lesson_it_folds() {
        // one part differs, long enough that forty cannot be listed in
        // one name
        let whens: Vec<String> = (0..40)
            .map(|i| {
                format!(
                    "calling the billing service number-{i}-in-region-{} of the fleet",
                    i % 7
                )
            })
            .collect();
        let mut l = one_action(&whens);
        let mut n = 0;
        let (report, _) = sleep(
            &mut l,
            &mut Always([0.0, 0.0, 0.9, 0.1]),
            &mut || {
                n += 1;
                format!("p{n}")
            },
            NOW,
        )
        .unwrap();
        assert!(report.generalized >= 2, "{report:?}");
        let parents: std::collections::BTreeMap<&str, &Entry> = l
            .entries
            .iter()
            .filter(|e| e.note == "abstracted parent")
            .map(|e| (e.id.as_str(), e))
            .collect();
        let mut folded = 0;
        for child in l.entries.iter().filter(|e| e.status == Status::Dormant) {
            let parent = parents[child.note.trim_start_matches("folded under ")];
            assert!(parent.when.chars().count() <= crate::ledger::limits::MAX_TEXT_CHARS);
            // the part of the child's trigger its siblings do not share is
            // one of the parent's alternatives
            let (prefix, suffix) = ("calling the billing service ", " of the fleet");
            let own = child
                .when
                .trim_start_matches(prefix)
                .trim_end_matches(suffix);
            let named: Vec<&str> = parent
                .when
                .trim_start_matches(prefix)
                .trim_end_matches(suffix)
                .split(", ")
                .flat_map(|p| p.split(" or "))
                .collect();
            assert!(
                named.contains(&own),
                "{} does not name {}",
                parent.when,
                child.when
            );
            folded += 1;
        }
        assert!(folded >= 6, "{folded}");
    }

    /// Forty situations of one pattern (two parts that differ, drawn
    /// from few alternatives) fit one name, so a parent folds all of its
    /// centre's siblings instead of the handful a list of whole triggers
    /// could name.
    #[test]
    fn a_pattern_folds_its_whole_group_under_one_parent() {
        let whens: Vec<String> = (0..40)
            .map(|i| {
                format!(
                    "calling the billing service number {} of the fleet in region {}",
                    i % 8,
                    i / 8
                )
            })
            .collect();
        let mut l = one_action(&whens);
        let report = sleep_as_siblings(&mut l, "p1");
        let parents: Vec<&str> = l
            .entries
            .iter()
            .filter(|e| e.note == "abstracted parent")
            .map(|e| e.when.as_str())
            .collect();
        // a centre folds its siblings, not every lesson of the action:
        // two centres here, each naming its group in one pattern
        assert_eq!(report.generalized, 2, "{report:?} {parents:#?}");
        let folded = l.entries.iter().filter(|e| e.status == Status::Dormant);
        assert!(folded.count() >= 36, "{parents:#?}");
        for when in parents {
            assert_eq!(when.matches("of the fleet").count(), 1, "{when}");
        }
    }

    /// A parent folded under a new parent is named by the lessons it
    /// folds: the new name reads as one situation, not a list of lists,
    /// and it names every lesson underneath.
    #[test]
    fn a_parent_of_parents_is_named_by_the_lessons_underneath() {
        let whens: Vec<String> = ["editing", "reviewing", "testing", "profiling"]
            .iter()
            .flat_map(|v| {
                ["the parser", "the lexer", "the type checker"]
                    .iter()
                    .map(move |s| format!("{v} {s} in repo r3"))
            })
            .collect();
        let mut l = one_action(&whens);
        // an earlier sleep folded the first six under a parent, which a
        // later one folded under another with the next three
        let fold = |l: &mut Ledger, members: &[usize], id: &str| {
            let whens: Vec<&str> = members
                .iter()
                .map(|&m| l.entries[m].when.as_str())
                .collect();
            let name = crate::ledger::abstraction::parent_trigger(&whens).unwrap();
            abstract_parent(l, members, name, id.into(), NOW);
            l.entries.len() - 1
        };
        let first = fold(&mut l, &[0, 1, 2, 3, 4, 5], "p1");
        assert_eq!(
            l.entries[first].when,
            "editing or reviewing the parser, lexer or type checker in repo r3"
        );
        let second = fold(&mut l, &[first, 6, 7, 8], "p2");
        // named from its members' names, it lists a list
        assert!(
            l.entries[second]
                .when
                .starts_with("editing or reviewing the parser")
        );
        let report = sleep_as_siblings(&mut l, "p3");
        assert_eq!(report.generalized, 1, "{report:?}");
        let parent = l.entries.last().unwrap();
        assert_eq!(
            parent.when,
            // the centre, a "profiling" lesson, first
            "profiling, editing, reviewing or testing the parser, lexer or type checker in repo r3"
        );
        assert_eq!(l.active_count(), 1);
    }

    /// A parent whose folded lessons cannot be named together (a parent
    /// of the old "(general)" form folded more than one name can hold)
    /// joins a group by its own trigger: the new parent still names it.
    #[test]
    fn a_parent_whose_lessons_cannot_be_named_together_joins_by_its_own_trigger() {
        let mut whens: Vec<String> = (0..12)
            .map(|i| format!("deploying the service-{i}-with-a-long-name of the fleet"))
            .collect();
        whens.push("(general) deploying the".into());
        whens.push("deploying the API server to staging".into());
        whens.push("deploying the web server to production".into());
        let mut l = one_action(&whens);
        for child in &mut l.entries[..12] {
            child.status = Status::Dormant;
            child.note = "folded under 0000000c".into();
        }
        assert_eq!(l.entries[12].id, "0000000c");
        let report = sleep_as_siblings(&mut l, "p1");
        assert_eq!(report.generalized, 1, "{report:?}");
        let parent = l.entries.last().unwrap();
        for member in &l.entries[12..15] {
            assert_eq!(member.status, Status::Dormant, "{}", member.when);
            for word in member.when.split_whitespace() {
                assert!(parent.when.contains(word), "{word} not in {}", parent.when);
            }
        }
    }

    #[test]
    fn a_lean_to_sibling_under_the_margin_folds_nothing() {
        let (l, report, events) = sleep_three([0.2, 0.2, 0.45, 0.15]);
        assert_eq!(report, SleepReport::default());
        assert!(events.is_empty(), "{events:?}");
        assert_eq!(l.active_count(), 3);
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

#[cfg(test)]
mod meaning_tests {
    use super::*;
    use crate::ledger::Params;
    use crate::ledger::meaning::Cuts;
    use crate::ledger::ops::Feedback;
    use crate::ledger::relate::LexicalRelations;

    use super::margin_tests::Always;
    use super::tests::ids;

    const NOW: f64 = 1_750_000_000.0;

    /// Two lessons saying one thing in other words, and one about
    /// something else; (text, vector) for each of their texts, the
    /// rewording near in meaning as a judge's vectors would have it.
    const LESSONS: [(&str, &str); 3] = [
        (
            "writing a database migration",
            "wrap every statement in one transaction",
        ),
        (
            "authoring schema changes",
            "run all of its SQL inside a single BEGIN/COMMIT",
        ),
        ("reviewing a pull request", "read the tests first"),
    ];

    fn vectors() -> (Vec<String>, Vec<Vec<f32>>) {
        let unit = |v: [f32; 4]| {
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.iter().map(|x| x / n).collect::<Vec<f32>>()
        };
        let rows = [
            [1.0, 0.1, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.1],
            [0.95, 0.2, 0.1, 0.0],
            [0.1, 0.9, 0.0, 0.2],
            [0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ];
        let texts = LESSONS
            .iter()
            .flat_map(|(w, p)| [w.to_string(), p.to_string()]);
        (texts.collect(), rows.into_iter().map(unit).collect())
    }

    fn ledger() -> Ledger {
        let mut l = Ledger::new(vec![], Params::default());
        for (k, (when, prefer)) in LESSONS.iter().enumerate() {
            l.capture(format!("l{k}"), when, prefer, Feedback::Neutral, NOW);
        }
        l
    }

    const CUTS: Cuts = Cuts {
        trigger: 0.6,
        lesson: 0.6,
        action: 0.6,
    };

    /// Actions said in other words, near in meaning, pair their lessons
    /// by action once the judge has given vectors, though neither the
    /// triggers nor the actions share a word.
    #[test]
    fn reworded_actions_pair_their_lessons_by_meaning() {
        let mut l = ledger();
        let pairs = |l: &Ledger| Partners::find(l).pairs(l, &[]);
        assert!(pairs(&l).is_empty(), "the words alone pair them");
        let (texts, vectors) = vectors();
        l.learn_vectors(&texts, &vectors, CUTS).unwrap();
        assert_eq!(pairs(&l), [(0, 1)]);
    }

    #[test]
    fn a_rewording_is_a_candidate_only_by_meaning() {
        let mut l = ledger();
        assert!(
            l.review_candidates().is_empty(),
            "the words alone pair them"
        );
        assert_eq!(l.unslept_pair_count(0.0, usize::MAX), 0);
        let (report, _) = sleep(
            &mut l,
            &mut Always([0.95, 0.0, 0.0, 0.05]),
            &mut || "p".into(),
            NOW,
        )
        .unwrap();
        assert_eq!(report.merged, 0);

        let (texts, vectors) = vectors();
        assert_eq!(l.texts_to_embed(), texts);
        l.learn_vectors(&texts, &vectors, CUTS).unwrap();
        assert!(l.texts_to_embed().is_empty());
        let found: Vec<(String, String)> = l
            .review_candidates()
            .into_iter()
            .map(|c| (c.a_id, c.b_id))
            .collect();
        assert_eq!(found, [("l0".to_string(), "l1".to_string())]);
        assert_eq!(l.unslept_pair_count(0.0, usize::MAX), 1);
        // the count a capture adds (one scan) agrees
        assert_eq!(l.unslept_pairs_of(1, 0.0), 1);
        assert_eq!(l.unslept_pairs_of(2, 0.0), 0);

        let (report, _) = sleep(
            &mut l,
            &mut Always([0.95, 0.0, 0.0, 0.05]),
            &mut || "p".into(),
            NOW,
        )
        .unwrap();
        assert_eq!(report.merged, 1);
        assert_eq!(l.active_count(), 2);
    }

    /// Relates like its inner judge, the pairs started ahead at `start`
    /// and handed back at `finish`, as a host with a core to spare does
    /// (or fails at `finish`, as a judge can).
    pub(super) struct RelatedAhead<J> {
        pub inner: J,
        pub started: Vec<Option<Vec<Relation>>>,
        pub pairs_ahead: usize,
        pub fail: bool,
    }

    impl<J: RelationJudge> RelationJudge for RelatedAhead<J> {
        fn relate(&mut self, pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Result<Vec<Relation>, String> {
            self.inner.relate(pairs)
        }

        fn start(&mut self, lessons: &[Lesson<'_>], pairs: &[(u32, u32)]) -> Option<u64> {
            let pairs: Vec<_> = pairs
                .iter()
                .map(|&(a, b)| (lessons[a as usize].clone(), lessons[b as usize].clone()))
                .collect();
            self.pairs_ahead += pairs.len();
            self.started.push(self.inner.relate(&pairs).ok());
            Some(self.started.len() as u64 - 1)
        }

        fn finish(&mut self, call: u64) -> Result<Vec<Relation>, String> {
            match self.started[call as usize].take() {
                Some(_) if self.fail => Err("the judge stopped".into()),
                Some(relations) => Ok(relations),
                None => Err(format!("call {call} finished twice")),
            }
        }
    }

    /// 300 generated `agents` lessons with vectors that put texts sharing
    /// words near each other (each word a fixed pseudo-random direction).
    fn agents_with_vectors() -> Ledger {
        let mut l = Ledger::new(
            crate::ledger::synthetic::agent_entries(300, NOW),
            Params::default(),
        );
        let texts = l.texts_to_embed();
        let vectors: Vec<Vec<f32>> = texts
            .iter()
            .map(|t| {
                let mut v = [0.0f32; 32];
                for word in t.split_whitespace() {
                    let mut h = word.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
                    });
                    for x in v.iter_mut() {
                        h = h.wrapping_mul(0x5851_f42d_4c95_7f2d).wrapping_add(1);
                        *x += (h >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
                    }
                }
                let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
                v.iter().map(|x| x / n).collect()
            })
            .collect();
        l.learn_vectors(&texts, &vectors, CUTS).unwrap();
        l
    }

    /// Where the judge relates pairs in the background (each view's pairs
    /// by meaning while the engine searches the next and the pairs by
    /// words; each chunk of a round's while the chunk before is applied),
    /// the pass does what it does relating them as it needs them, and no
    /// pair is asked twice.
    #[test]
    fn pairs_related_ahead_make_the_same_pass() {
        let lexical =
            || super::tests::Counting(LexicalRelations(Params::default()), HashMap::default());
        let mut plain = agents_with_vectors();
        let (report, events) = sleep(&mut plain, &mut lexical(), &mut ids(), NOW).unwrap();
        assert!(report.merged > 0, "{report:?}");
        let mut ahead = RelatedAhead {
            inner: lexical(),
            started: vec![],
            pairs_ahead: 0,
            fail: false,
        };
        let mut early = agents_with_vectors();
        let (report_ahead, events_ahead) = sleep(&mut early, &mut ahead, &mut ids(), NOW).unwrap();
        assert!(ahead.pairs_ahead > 100, "{}", ahead.pairs_ahead);
        // one call per view (the second without the first's pairs), then
        // one per chunk of a round with pairs not asked yet
        assert!(ahead.started.len() > 2, "{}", ahead.started.len());
        assert_eq!(report_ahead, report);
        assert_eq!(events_ahead, events);
        assert_eq!(early.entries, plain.entries);
        let most = ahead.inner.1.values().max().copied();
        assert_eq!(most, Some(1), "a pair was judged {most:?} times");
    }

    /// Relates like [`LexicalRelations`] and declines every offer to
    /// relate in the background, counting them.
    struct Declines(LexicalRelations, usize);

    impl RelationJudge for Declines {
        fn relate(&mut self, pairs: &[(Lesson<'_>, Lesson<'_>)]) -> Result<Vec<Relation>, String> {
            self.0.relate(pairs)
        }

        fn start(&mut self, _lessons: &[Lesson<'_>], _pairs: &[(u32, u32)]) -> Option<u64> {
            self.1 += 1;
            None
        }
    }

    /// A judge that cannot relate in the background is offered it once a
    /// pass, not once a chunk, and the pass is the one it makes relating
    /// every pair as it needs it.
    #[test]
    fn a_judge_that_declines_to_relate_ahead_is_offered_once_a_pass() {
        let mut plain = agents_with_vectors();
        let lexical = || LexicalRelations(Params::default());
        let (report, events) = sleep(&mut plain, &mut lexical(), &mut ids(), NOW).unwrap();
        let mut l = agents_with_vectors();
        let mut declines = Declines(lexical(), 0);
        let (got, got_events) = sleep(&mut l, &mut declines, &mut ids(), NOW).unwrap();
        assert_eq!(declines.1, 1);
        assert_eq!(got, report);
        assert_eq!(got_events, events);
    }

    /// A judge that fails the call it started fails the pass, before any
    /// lesson is touched.
    #[test]
    fn a_failed_call_ahead_fails_the_pass_and_changes_nothing() {
        let mut l = agents_with_vectors();
        let before = l.entries.clone();
        let mut failing = RelatedAhead {
            inner: LexicalRelations(Params::default()),
            started: vec![],
            pairs_ahead: 0,
            fail: true,
        };
        let err = sleep(&mut l, &mut failing, &mut ids(), NOW).unwrap_err();
        assert!(err.contains("the judge stopped"), "{err}");
        assert!(failing.pairs_ahead > 0);
        assert_eq!(l.entries, before);
    }

    use crate::ledger::candidates::PartnerLists;
    use crate::ledger::rows::Rows;

    /// What [`Threaded`] hands back for each search.
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Handed {
        /// The lists or pairs its thread found.
        Found,
        /// An error, as a host whose helper failed says.
        Fails,
        /// One list short; pairs out of order.
        Short,
        /// A partner past the last text; a pair past the last row.
        OutOfRange,
        /// Lists that fit but are all empty; no pairs (none found).
        Nothing,
    }

    /// Searches by words and by meaning when started, as a host with a
    /// core to spare does meanwhile (no thread: these tests run as wasm
    /// too), and hands back what [`Handed`] says.
    struct Threaded {
        running: Vec<Option<PartnerLists>>,
        texts: usize,
        near: Vec<Option<Vec<(u32, u32)>>>,
        rows: usize,
        handed: Handed,
        /// Whether the search by meaning is still waiting when the pass
        /// would take it back.
        not_begun: bool,
        /// Hands back no pairs by meaning, whatever `handed` says.
        no_pairs: bool,
        not_taken: Vec<String>,
    }

    impl Threaded {
        fn new(handed: Handed, not_begun: bool, no_pairs: bool) -> Threaded {
            Threaded {
                running: vec![],
                texts: 0,
                near: vec![],
                rows: 0,
                handed,
                not_begun,
                no_pairs,
                not_taken: vec![],
            }
        }
    }

    impl SpareCore for Threaded {
        fn start_partner_lists(&mut self, texts: &[&str], search: PartnerSearch) -> Option<u64> {
            self.texts += texts.len();
            self.running.push(Some(search.lists(texts)));
            Some(self.running.len() as u64 - 1)
        }

        fn finish_partner_lists(&mut self, call: u64) -> Result<PartnerLists, String> {
            let running = self.running[call as usize].take();
            let mut lists = running.ok_or(format!("search {call} finished twice"))?;
            match self.handed {
                Handed::Found => {}
                Handed::Fails => return Err("the spare core stopped".into()),
                Handed::Short => {
                    lists.pop();
                }
                Handed::OutOfRange => lists[0].push((u32::MAX, 0.5)),
                Handed::Nothing => lists.iter_mut().for_each(Vec::clear),
            }
            Ok(lists)
        }

        fn start_pairs_near(&mut self, rows: &Rows, cut: f64, per_row: usize) -> Option<u64> {
            self.rows += rows.len();
            let pairs = crate::ledger::meaning::pairs_near(rows, cut, per_row);
            let pairs = pairs.into_iter().map(|(i, j)| (i as u32, j as u32));
            self.near.push(Some(pairs.collect()));
            Some(self.near.len() as u64 - 1)
        }

        fn finish_pairs_near(&mut self, call: u64) -> Result<Vec<(u32, u32)>, String> {
            let running = self.near[call as usize].take();
            let mut pairs = running.ok_or(format!("search {call} finished twice"))?;
            match self.handed {
                Handed::Found => {}
                Handed::Fails => return Err("the spare core stopped".into()),
                Handed::Short => pairs.swap(0, 1),
                Handed::OutOfRange => pairs.push((0, u32::MAX)),
                Handed::Nothing => pairs.clear(),
            }
            if self.no_pairs {
                pairs.clear();
            }
            Ok(pairs)
        }

        fn take_back_pairs_near(&mut self, call: u64) -> bool {
            if self.not_begun {
                self.near[call as usize] = None;
            }
            self.not_begun
        }

        fn not_taken(&mut self, why: &str) {
            self.not_taken.push(why.to_string());
        }
    }

    /// A lexical pass over [`agents_with_vectors`] beside `spare`: its
    /// report, events and the ledger it leaves.
    fn sleep_beside(spare: &mut Threaded) -> (SleepReport, Vec<Event>, Ledger) {
        let mut l = agents_with_vectors();
        let mut lexical = LexicalRelations(Params::default());
        let stage = &mut |_: &'static str, _, _: Counts<'_>| {};
        let (report, events) =
            sleep_staged(&mut l, &mut lexical, spare, &mut ids(), NOW, stage).unwrap();
        (report, events, l)
    }

    /// Partners by words and pairs by meaning found on a spare core make
    /// the pass the engine makes searching them itself; where the core
    /// fails or hands back an answer that does not fit, the pass searches
    /// itself, says why, and still makes the same pass. Answers that fit
    /// are what the pass uses (empty ones make another pass).
    #[test]
    fn a_search_on_a_spare_core_makes_the_same_pass() {
        let mut plain = agents_with_vectors();
        let lessons = plain.entries.len();
        let lexical = || LexicalRelations(Params::default());
        let (report, events) = sleep(&mut plain, &mut lexical(), &mut ids(), NOW).unwrap();
        assert!(report.merged > 0, "{report:?}");
        for handed in [
            Handed::Found,
            Handed::Fails,
            Handed::Short,
            Handed::OutOfRange,
            Handed::Nothing,
        ] {
            let mut spare = Threaded::new(handed, false, false);
            let (got, got_events, l) = sleep_beside(&mut spare);
            // by words: by trigger and by action, each of its distinct
            // texts; by meaning: the whole-lesson view, a row a lesson
            assert_eq!(spare.running.len(), 2, "{handed:?}");
            assert!(spare.running.iter().all(Option::is_none), "{handed:?}");
            assert!(spare.texts > 100, "{handed:?}: {}", spare.texts);
            assert_eq!(spare.near.len(), 1, "{handed:?}");
            assert!(spare.near.iter().all(Option::is_none), "{handed:?}");
            assert_eq!(spare.rows, lessons, "{handed:?}");
            // what was said of the search by meaning (taken first, at the
            // end of the search by meaning), then of the two by words
            let said = |words: &str, meaning: &str| {
                let n = spare.not_taken.len();
                n == 3
                    && spare.not_taken[0].contains(meaning)
                    && spare.not_taken[1..].iter().all(|w| w.contains(words))
            };
            match handed {
                Handed::Nothing => {
                    assert!(spare.not_taken.is_empty(), "{:?}", spare.not_taken);
                    assert_ne!(got_events, events);
                    continue;
                }
                Handed::Found => assert!(spare.not_taken.is_empty(), "{:?}", spare.not_taken),
                Handed::Fails => {
                    let stopped = "the spare core stopped";
                    assert!(said(stopped, stopped), "{:?}", spare.not_taken)
                }
                Handed::Short => assert!(
                    said("partner lists for", "out of order"),
                    "{:?}",
                    spare.not_taken
                ),
                Handed::OutOfRange => assert!(
                    said("has partner", "is not of two"),
                    "{:?}",
                    spare.not_taken
                ),
            }
            assert_eq!(got, report, "{handed:?}");
            assert_eq!(got_events, events, "{handed:?}");
            assert_eq!(l.entries, plain.entries, "{handed:?}");
        }
        // pairs by meaning that fit are what the pass uses, even none
        // (which makes another pass; one that searched the view itself
        // instead would make the same pass)
        let mut spare = Threaded::new(Handed::Found, false, true);
        let (_, no_pairs, _) = sleep_beside(&mut spare);
        assert!(spare.not_taken.is_empty(), "{:?}", spare.not_taken);
        assert_ne!(no_pairs, events);
        // a search by meaning the spare core has not begun is taken back
        // and made here: nothing said, the same pass (a pass that went on
        // to finish it would hear it was taken: "finished twice")
        let mut spare = Threaded::new(Handed::Found, true, false);
        let (got, got_events, l) = sleep_beside(&mut spare);
        assert_eq!(spare.near.len(), 1);
        assert!(spare.near.iter().all(Option::is_none));
        assert!(spare.not_taken.is_empty(), "{:?}", spare.not_taken);
        assert_eq!((got, got_events), (report, events));
        assert_eq!(l.entries, plain.entries);
    }

    #[test]
    fn vectors_of_another_model_replace_the_old_ones() {
        let mut l = ledger();
        let (texts, vectors) = vectors();
        l.learn_vectors(&texts, &vectors, CUTS).unwrap();
        l.learn_vectors(&texts[..1], &[vec![1.0, 0.0]], CUTS)
            .unwrap();
        assert_eq!(l.texts_to_embed().len(), 5);
        assert!(
            l.learn_vectors(&texts[..2], &[vec![1.0, 0.0]], CUTS)
                .is_err()
        );
    }
}
