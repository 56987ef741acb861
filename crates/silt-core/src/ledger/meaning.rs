//! Candidate pairs by meaning: lessons whose vectors (from a judge that
//! embeds, `silt:embed`) are near, whatever words they use. Word overlap
//! never pairs "writing a database migration" with "authoring a schema
//! change"; their vectors do.
//!
//! Each active lesson has three unit vectors: its trigger (WHEN), its
//! action (PREFER), and the whole lesson, taken as the normalised sum of
//! the two (no third embedding per lesson). Near triggers or near whole
//! lessons pair duplicates and contradictions. Near actions pair siblings
//! (one action across situations): they are found between distinct
//! action texts ([`VectorCache::near_texts`]), and the sleep pass pairs
//! their lessons nearest by trigger, as it does lessons whose actions
//! are near in words (`sleep::Partners`).
//!
//! Up to [`EXACT_UP_TO`] lessons every pair is compared. Past it, an
//! inverted-file index ([`super::ivf`]) compares a lesson with about a
//! thousand others instead of all of them: approximate (a near pair split
//! across lists no probe reaches is missed), and every pair it returns is
//! checked exactly against the cut-off.

use rustc_hash::FxHashMap as HashMap;

use super::best_first::Strongest;
use super::ivf::{Ivf, Near};
use super::rows::dot_f32;
pub use super::rows::{Rows, dot, quantise};
use super::twins::Twins;

/// The cut-offs, as cosines, from which two lessons' vectors are near
/// enough to be judged as a pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cuts {
    /// For two triggers (WHEN).
    pub trigger: f64,
    /// For two whole lessons (trigger and action summed).
    pub lesson: f64,
    /// For two actions (PREFER): siblings.
    pub action: f64,
}

/// The probability of "about the same thing" on the judge's calibrated
/// relatedness curve from which two triggers, or two whole lessons, are
/// near. Fitted on the dev split of docs/eval/ledger-pairs.jsonl with
/// `examples/near_lessons.rs` (silt-embed; docs/JUDGES.md "Candidates by
/// meaning"): every level from 0.10 to 0.40 keeps all 40 dev merges and
/// contradictions candidates with MiniLM and 39 of 40 with potion, and
/// makes no unrelated pair one from 0.15 up. 0.15 is the low end of that
/// range: a missed pair can never be merged, an extra one only costs a
/// judgment.
pub const NEAR_P: f64 = 0.15;

/// The same for actions (siblings share an action said in other words):
/// the dev clusters of docs/eval/ledger-clusters.jsonl pair all 21 of
/// their same-action pairs at every level up to 0.5 with both models.
pub const NEAR_ACTION_P: f64 = 0.15;

impl Cuts {
    /// The cut-offs for a judge whose relatedness curve is logistic in
    /// the cosine, given by two of its points: P = 1/2 at `related_above`
    /// and P = 0.1 at `unrelated_below` (what `silt:embed` reports).
    pub fn from_calibration(related_above: f64, unrelated_below: f64) -> Option<Cuts> {
        let at = |p: f64| cosine_at(related_above, unrelated_below, p);
        Some(Cuts {
            trigger: at(NEAR_P)?,
            lesson: at(NEAR_P)?,
            action: at(NEAR_ACTION_P)?,
        })
    }
}

/// The cosine at which a logistic curve through (related_above, 1/2) and
/// (unrelated_below, 0.1) reaches `p`; None when the two points cannot
/// make one (a judge reporting them in the wrong order).
pub fn cosine_at(related_above: f64, unrelated_below: f64, p: f64) -> Option<f64> {
    let logit = |p: f64| (p / (1.0 - p)).ln();
    let span = related_above - unrelated_below;
    if !(span > 0.0 && span.is_finite() && p > 0.0 && p < 1.0) {
        return None;
    }
    let slope = -logit(0.1) / span;
    Some(related_above + logit(p) / slope)
}

/// Lessons up to which every pair is compared (about 0.2 G multiply-adds
/// at 384 dimensions): exact, and cheaper than building an index.
pub const EXACT_UP_TO: usize = 1024;

/// Pairs (i < j) of rows whose cosine is at least `cut`, each among the
/// `per_row` nearest partners of at least one of its two rows (of those
/// compared), with their cosine, sorted by (i, j). Zero rows (a text
/// without tokens) pair with nothing. Identical rows (one text in many
/// lessons) are nearest each other, twins first by position.
///
/// Identical rows are compared once: the search runs over distinct rows,
/// and each row's list is then filled from its twins and the members of
/// the distinct rows found near it, nearest first. Generated ledgers of
/// 100k lessons hold about 49k distinct texts, and one action in
/// thousands of lessons made lists of 5,000 rows that every probe read
/// in full (15 s of 21 for a view, natively).
pub fn near_pairs(rows: &Rows, cut: f64, per_row: usize) -> Vec<(usize, usize, f64)> {
    let twins = Twins::group((0..rows.len()).map(|i| {
        let row = rows.row(i);
        row.iter().any(|&x| x != 0).then_some(row)
    }));
    let mut distinct = Rows::new(rows.dim);
    for row in &twins.distinct {
        distinct.push_stored(row);
    }
    let cut = cut as f32;
    let near = nearest_lists(&distinct, cut, per_row);
    let mut out: Vec<(usize, usize, f64)> = Vec::new();
    for (g, list) in near.into_iter().enumerate() {
        let twin_sim = dot(distinct.row(g), distinct.row(g));
        // the group itself (its twins) among its near groups, nearest first
        let mut by_sim: Vec<(f32, u32)> = list;
        if twin_sim >= cut {
            by_sim.push((twin_sim, g as u32));
        }
        by_sim.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        for &i in &twins.members[g] {
            for (sim, j) in twins.partners_of(i, &by_sim, per_row) {
                let (i, j) = (i as usize, j as usize);
                out.push((i.min(j), i.max(j), f64::from(sim)));
            }
        }
    }
    out.sort_by_key(|&(i, j, _)| (i, j));
    out.dedup_by_key(|p| (p.0, p.1));
    out
}

/// For each of `rows` (distinct, none zero), its `per_row` nearest others
/// at `cut` or nearer (of those compared), as (cosine, row).
fn nearest_lists(rows: &Rows, cut: f32, per_row: usize) -> Vec<Vec<(f32, u32)>> {
    let n = rows.len();
    let mut lists = Lists {
        best: Strongest::new(n, per_row),
        bars: vec![cut; n],
        cut,
    };
    if n <= EXACT_UP_TO {
        for i in 0..n {
            for j in i + 1..n {
                let sim = dot(rows.row(i), rows.row(j));
                if sim >= cut {
                    lists.found(i, j, sim);
                }
            }
        }
    } else {
        Ivf::build(rows).for_each_near(&mut lists);
    }
    lists.best.into_lists()
}

/// Each row's nearest so far, and the cosine a pair must reach to enter
/// its list: the cut-off, then the weakest of a full list.
struct Lists {
    best: Strongest<f32, u32>,
    bars: Vec<f32>,
    cut: f32,
}

impl Near for Lists {
    fn bar(&self, i: usize) -> f32 {
        self.bars[i]
    }

    fn found(&mut self, i: usize, j: usize, sim: f32) {
        for (at, partner) in [(i, j), (j, i)] {
            if let Some(weakest) = self.best.offer(at, sim, partner as u32) {
                // a comparison, not f32::max (libm's fmaxf in wasm)
                self.bars[at] = if weakest > self.cut {
                    weakest
                } else {
                    self.cut
                };
            }
        }
    }
}

/// Pairs (i < j) of rows each among the other's `k` nearest at `cut` or
/// nearer (mutual nearest neighbours), with the worse of the two ranks
/// (0 = each is the other's nearest). A pair near only because one of
/// its rows sits in a crowd (ten lessons on one topic) ranks low from
/// the crowd's side; a duplicate or a contradiction is usually each
/// other's first or second. Zero rows pair with nothing.
pub fn mutual_nearest(rows: &Rows, cut: f64, k: usize) -> Vec<(usize, usize, usize)> {
    let mut nonzero = Rows::new(rows.dim);
    let mut place = Vec::new();
    for i in 0..rows.len() {
        let row = rows.row(i);
        if row.iter().any(|&x| x != 0) {
            nonzero.push_stored(row);
            place.push(i);
        }
    }
    let mut lists = nearest_lists(&nonzero, cut as f32, k);
    for list in &mut lists {
        list.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    }
    let rank = |i: usize, j: usize| lists[i].iter().position(|&(_, r)| r as usize == j);
    let mut out = Vec::new();
    for (i, list) in lists.iter().enumerate() {
        for (ri, &(_, j)) in list.iter().enumerate() {
            let j = j as usize;
            if i < j
                && let Some(rj) = rank(j, i)
            {
                out.push((place[i], place[j], ri.max(rj)));
            }
        }
    }
    out.sort_unstable();
    out
}

/// How many rows `keep` lets through are at `cut` or nearer to `v`: one
/// exact scan (a new lesson's partners, for the redundancy count).
pub fn count_near(rows: &Rows, v: &[i8], cut: f64, keep: impl Fn(usize) -> bool) -> usize {
    if v.iter().all(|&x| x == 0) {
        return 0;
    }
    (0..rows.len())
        .filter(|&j| keep(j) && dot(rows.row(j), v) as f64 >= cut)
        .count()
}

/// The whole lesson's vector: the normalised sum of its trigger's and
/// its action's (zero when both are).
pub fn lesson_vector(trigger: &[i8], action: &[i8]) -> Vec<i8> {
    let v: Vec<f32> = trigger
        .iter()
        .zip(action)
        .map(|(a, b)| f32::from(*a) + f32::from(*b))
        .collect();
    let norm = dot_f32(&v, &v).sqrt();
    if norm == 0.0 {
        return vec![0; v.len()];
    }
    quantise(&v.iter().map(|x| x / norm).collect::<Vec<f32>>())
}

/// Vectors a judge gave for lesson texts (triggers and actions), kept in
/// the warm engine so a text is embedded once, not on every recall or
/// pass; stored as [`Rows`] bytes.
#[derive(Debug, Clone, Default)]
pub struct VectorCache {
    cuts: Option<Cuts>,
    dim: usize,
    /// Every vector held, one row each; a text keeps its row while it is
    /// held, so a row number can stand for a text (see [`Self::row_of`]).
    rows: Rows,
    by_text: HashMap<String, u32>,
    /// Changes whenever row numbers stop meaning what they meant (all
    /// replaced, or rows dropped and the rest moved up).
    generation: u64,
    /// Whole-lesson vectors made so far, by (WHEN, PREFER): a capture's
    /// pair count compares the new lesson with every active one, and
    /// summing and normalising each partner's two vectors anew on every
    /// capture cost more than the comparisons.
    /// (Keyed WHEN, then PREFER, so a lookup allocates nothing.)
    by_lesson: HashMap<String, HashMap<String, Vec<i8>>>,
}

/// The views of a list of lessons by situation, row `r` for lesson `r`.
#[derive(Debug, Clone)]
pub struct Views {
    /// Each lesson's trigger vector.
    pub trigger: Rows,
    /// Each lesson's whole-lesson vector (trigger plus action, normalised).
    pub lesson: Rows,
    /// The cut-offs the views are searched with.
    pub cuts: Cuts,
}

impl VectorCache {
    /// The cut-offs, once a judge has given vectors.
    pub fn cuts(&self) -> Option<Cuts> {
        self.cuts
    }

    /// `text`'s vector as stored; None when no judge has embedded it.
    pub fn get(&self, text: &str) -> Option<&[i8]> {
        self.by_text.get(text).map(|&r| self.rows.row(r as usize))
    }

    /// The row holding `text`'s vector: valid while [`Self::generation`]
    /// stays the same.
    pub fn row_of(&self, text: &str) -> Option<u32> {
        self.by_text.get(text).copied()
    }

    /// The vector in row `r` (from [`Self::row_of`]).
    pub fn row(&self, r: u32) -> &[i8] {
        self.rows.row(r as usize)
    }

    /// Changes whenever row numbers from [`Self::row_of`] stop holding.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Texts held.
    pub fn len(&self) -> usize {
        self.by_text.len()
    }

    /// True when no text is held.
    pub fn is_empty(&self) -> bool {
        self.by_text.is_empty()
    }

    /// Keeps `vectors[k]` for `texts[k]`. Vectors of another length than
    /// those held (another model) replace them all.
    pub fn learn(
        &mut self,
        texts: &[String],
        vectors: &[Vec<f32>],
        cuts: Cuts,
    ) -> Result<(), String> {
        if texts.len() != vectors.len() {
            return Err(format!(
                "the judge returned {} vectors for {} texts",
                vectors.len(),
                texts.len()
            ));
        }
        let Some(dim) = vectors.first().map(Vec::len) else {
            self.cuts = Some(cuts);
            return Ok(());
        };
        if vectors.iter().any(|v| v.len() != dim) || dim == 0 {
            return Err("the judge returned vectors of different lengths".into());
        }
        if dim != self.dim {
            self.by_text.clear();
            self.by_lesson.clear();
            self.rows = Rows::new(dim);
            self.generation += 1;
            self.dim = dim;
        }
        self.cuts = Some(cuts);
        for (t, v) in texts.iter().zip(vectors) {
            match self.by_text.get(t) {
                Some(&r) => {
                    // a text's vector changing (another model of the same
                    // length) makes every lesson vector holding it stale
                    self.rows.replace(r as usize, &quantise(v));
                    self.by_lesson.clear();
                }
                None => {
                    self.by_text.insert(t.clone(), self.rows.len() as u32);
                    self.rows.push(v);
                }
            }
        }
        Ok(())
    }

    /// Drops the vectors of texts `keep` refuses (lessons since retired).
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        let mut rows = Rows::new(self.dim);
        self.by_text.retain(|t, r| {
            let kept = keep(t);
            if kept {
                let moved = rows.len() as u32;
                rows.push_stored(self.rows.row(*r as usize));
                *r = moved;
            }
            kept
        });
        self.rows = rows;
        self.generation += 1;
        self.by_lesson.retain(|when, by_prefer| {
            by_prefer.retain(|prefer, _| keep(prefer));
            keep(when) && !by_prefer.is_empty()
        });
    }

    /// A lesson's trigger and whole-lesson vectors, when both texts have
    /// vectors; the whole-lesson one is made once and kept.
    pub fn lesson_of(&mut self, when: &str, prefer: &str) -> Option<(&[i8], &[i8])> {
        let trigger = self.row_of(when)?;
        let known = self
            .by_lesson
            .get(when)
            .is_some_and(|p| p.contains_key(prefer));
        if !known {
            let lesson = lesson_vector(self.row(trigger), self.get(prefer)?);
            self.by_lesson
                .entry(when.to_string())
                .or_default()
                .insert(prefer.to_string(), lesson);
        }
        Some((self.row(trigger), self.by_lesson.get(when)?.get(prefer)?))
    }

    /// The views of `lessons` (WHEN, PREFER), when every text has a
    /// vector and a judge gave cut-offs.
    pub fn views<'a>(
        &self,
        lessons: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Option<Views> {
        let cuts = self.cuts?;
        let mut views = Views {
            trigger: Rows::new(self.dim),
            lesson: Rows::new(self.dim),
            cuts,
        };
        for (when, prefer) in lessons {
            let (t, a) = (self.get(when)?, self.get(prefer)?);
            views.trigger.push_stored(t);
            views.lesson.push_stored(&lesson_vector(t, a));
        }
        Some(views)
    }

    /// Pairs (i < j) of `actions` near in meaning, with their cosine, each
    /// among the `per_row` nearest of one of its two texts, when every
    /// text has a vector and a judge gave cut-offs. The texts should be
    /// distinct: a text said in a thousand lessons is one row here, where
    /// by lesson every twin ties at cosine 1 and a list took the first by
    /// position.
    pub fn near_texts(&self, actions: &[&str], per_row: usize) -> Option<Vec<(usize, usize, f64)>> {
        let cuts = self.cuts?;
        let mut rows = Rows::new(self.dim);
        for text in actions {
            rows.push_stored(self.get(text)?);
        }
        Some(near_pairs(&rows, cuts.action, per_row))
    }
}

impl Views {
    /// Pairs near by trigger or by whole lesson (duplicates and
    /// contradictions), each among its rows' `per_row` nearest of a view.
    pub fn same_situation_pairs(&self, per_row: usize) -> Vec<(usize, usize)> {
        let mut pairs = self.trigger_pairs(per_row);
        pairs.extend(self.lesson_pairs(per_row));
        pairs.sort_unstable();
        pairs.dedup();
        pairs
    }

    /// Pairs near by trigger, each among its rows' `per_row` nearest,
    /// sorted, each once.
    pub fn trigger_pairs(&self, per_row: usize) -> Vec<(usize, usize)> {
        pairs_near(&self.trigger, self.cuts.trigger, per_row)
    }

    /// Pairs near by whole lesson, as [`Views::trigger_pairs`].
    pub fn lesson_pairs(&self, per_row: usize) -> Vec<(usize, usize)> {
        pairs_near(&self.lesson, self.cuts.lesson, per_row)
    }
}

/// `(i, j)` of each of [`near_pairs`], sorted, each once: one view's
/// search, as a function of its rows alone (what a second instance runs
/// for the pass, see [`super::spare_core`]).
pub fn pairs_near(rows: &Rows, cut: f64, per_row: usize) -> Vec<(usize, usize)> {
    let mut pairs: Vec<(usize, usize)> = near_pairs(rows, cut, per_row)
        .into_iter()
        .map(|(i, j, _)| (i, j))
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

/// Whether `pairs` could be [`pairs_near`] of `rows` rows: each i < j <
/// `rows`, strictly increasing. Pairs handed back by another instance
/// are checked before use, so a wrong answer cannot point a verdict at a
/// lesson it never compared.
pub fn check_pairs(rows: usize, pairs: &[(u32, u32)]) -> Result<(), String> {
    if let Some(&(i, j)) = pairs.iter().find(|&&(i, j)| i >= j || j as usize >= rows) {
        return Err(format!("pair ({i}, {j}) is not of two of {rows} rows"));
    }
    if let Some(w) = pairs.windows(2).find(|w| w[0] >= w[1]) {
        return Err(format!(
            "pairs ({}, {}) and ({}, {}) are out of order",
            w[0].0, w[0].1, w[1].0, w[1].1
        ));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A deterministic generator (xorshift), so the tests need no crate.
    pub(crate) struct Rng(pub u64);
    impl Rng {
        pub(crate) fn next(&mut self) -> f32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        }
        /// A number in `0..m`.
        pub(crate) fn below(&mut self, m: usize) -> usize {
            self.next();
            (self.0 % m as u64) as usize
        }
        pub(crate) fn unit(&mut self, dim: usize) -> Vec<f32> {
            let v: Vec<f32> = (0..dim).map(|_| self.next()).collect();
            normalised(v)
        }
    }

    pub(crate) fn normalised(mut v: Vec<f32>) -> Vec<f32> {
        let n = dot_f32(&v, &v).sqrt();
        v.iter_mut().for_each(|x| *x /= n);
        v
    }

    /// `groups` topics of `per` rows each: a topic's rows are its centre
    /// plus noise, so rows of one topic are near and of two are not.
    fn topics(groups: usize, per: usize, noise: f32, dim: usize, seed: u64) -> Rows {
        let mut rng = Rng(seed);
        let mut rows = Rows::new(dim);
        let centres: Vec<Vec<f32>> = (0..groups).map(|_| rng.unit(dim)).collect();
        for r in 0..groups * per {
            let c = &centres[(r * 7919) % groups];
            let v: Vec<f32> = c.iter().map(|x| x + noise * rng.next()).collect();
            rows.push(&normalised(v));
        }
        rows
    }

    fn all_near(rows: &Rows, cut: f64) -> Vec<(usize, usize)> {
        let mut out = vec![];
        for i in 0..rows.len() {
            for j in i + 1..rows.len() {
                if dot(rows.row(i), rows.row(j)) as f64 >= cut {
                    out.push((i, j));
                }
            }
        }
        out
    }

    #[test]
    fn stored_rows_keep_the_cosine_within_a_hundredth() {
        let mut rng = Rng(7);
        for dim in [1, 7, 16, 17, 256, 384] {
            for _ in 0..50 {
                let a = rng.unit(dim);
                // near and far pairs alike
                let b = normalised(a.iter().map(|x| x + 0.05 * rng.next()).collect());
                let c = rng.unit(dim);
                for other in [&b, &c] {
                    let exact = dot_f32(&a, other);
                    let stored = dot(&quantise(&a), &quantise(other));
                    assert!((stored - exact).abs() < 0.01, "{dim}: {stored} vs {exact}");
                }
            }
        }
    }

    #[test]
    fn small_sets_compare_every_pair() {
        let rows = topics(40, 5, 0.05, 32, 1);
        let cut = 0.8;
        let found: Vec<(usize, usize)> = near_pairs(&rows, cut, usize::MAX)
            .into_iter()
            .map(|(i, j, _)| (i, j))
            .collect();
        let want = all_near(&rows, cut);
        assert!(!want.is_empty());
        assert_eq!(found, want);
    }

    #[test]
    fn the_index_finds_nearly_every_near_pair_of_a_large_set() {
        // 3000 rows (past EXACT_UP_TO) in 600 topics of 5
        let rows = topics(600, 5, 0.06, 48, 2);
        assert!(rows.len() > EXACT_UP_TO);
        let cut = 0.8;
        let want = all_near(&rows, cut);
        let found: std::collections::HashSet<(usize, usize)> = near_pairs(&rows, cut, 16)
            .into_iter()
            .map(|(i, j, sim)| {
                assert!(sim >= cut, "a pair under the cut-off was returned");
                (i, j)
            })
            .collect();
        let hit = want.iter().filter(|p| found.contains(p)).count();
        assert!(want.len() >= 3000, "{} near pairs", want.len());
        assert!(
            hit as f64 >= 0.95 * want.len() as f64,
            "found {hit} of {} near pairs",
            want.len()
        );
    }

    /// Dense rows (topics of 150, hundreds near each row, as generated
    /// templated lessons are): each row's exact nearest `per_row` are
    /// nearly all among the pairs the index returns, though a full list
    /// raises its row's bar and passes over most of its near rows.
    #[test]
    fn the_index_keeps_each_rows_nearest_among_many_near_ones() {
        let rows = topics(20, 150, 0.09, 48, 3);
        assert!(rows.len() > EXACT_UP_TO);
        let (cut, per_row) = (0.5, 16);
        let found: std::collections::HashSet<(usize, usize)> = near_pairs(&rows, cut, per_row)
            .into_iter()
            .map(|(i, j, _)| (i, j))
            .collect();
        let (mut want, mut hit, mut dense) = (0, 0, 0);
        for i in 0..rows.len() {
            let mut near: Vec<(f32, usize)> = (0..rows.len())
                .filter(|&j| j != i)
                .map(|j| (dot(rows.row(i), rows.row(j)), j))
                .filter(|&(sim, _)| f64::from(sim) >= cut)
                .collect();
            dense += usize::from(near.len() > 8 * per_row);
            near.sort_by(|a, b| b.0.total_cmp(&a.0));
            // ties at the last place may go either way
            let last = near.get(per_row - 1).map_or(f32::MIN, |n| n.0);
            for &(sim, j) in near.iter().take(per_row) {
                if sim > last {
                    want += 1;
                    hit += usize::from(found.contains(&(i.min(j), i.max(j))));
                }
            }
        }
        assert!(dense > rows.len() / 2, "{dense} rows have many near rows");
        assert!(
            hit as f64 >= 0.9 * want as f64,
            "found {hit} of {want} nearest pairs"
        );
        eprintln!("found {hit} of {want} nearest pairs");
    }

    /// Rows repeated many times (one text in many lessons), past the
    /// exact size in all but distinct rows: each row is paired with its
    /// twins first, and a row with fewer twins than its list holds also
    /// with its nearest other row, as a full scan finds it; every pair
    /// clears the cut-off with its true cosine, and with no cap every
    /// near pair is found.
    #[test]
    fn identical_rows_pair_as_twins_first_then_their_nearest() {
        let distinct = topics(60, 2, 0.08, 32, 5);
        let mut rows = Rows::new(32);
        let mut source = vec![];
        // distinct row d appears (d % 40) + 1 times, spread over the set
        for copy in 0..40 {
            for d in 0..distinct.len() {
                if copy <= d % 40 {
                    rows.push_stored(distinct.row(d));
                    source.push(d);
                }
            }
        }
        assert!(rows.len() > EXACT_UP_TO);
        let (cut, per_row) = (0.8, 16);
        let pairs = near_pairs(&rows, cut, per_row);
        let mut partners = vec![vec![]; rows.len()];
        for &(i, j, sim) in &pairs {
            assert!(i < j);
            assert_eq!(sim as f32, dot(rows.row(i), rows.row(j)));
            assert!(sim >= cut);
            partners[i].push(j);
            partners[j].push(i);
        }
        for i in 0..rows.len() {
            let twins = (0..rows.len())
                .filter(|&j| j != i && source[j] == source[i])
                .count();
            let paired_twins = partners[i]
                .iter()
                .filter(|&&j| source[j] == source[i])
                .count();
            assert!(paired_twins >= twins.min(per_row), "row {i}");
            if twins < per_row {
                let nearest_other = (0..distinct.len())
                    .filter(|&d| d != source[i])
                    .map(|d| (dot(distinct.row(d), distinct.row(source[i])), d))
                    .filter(|&(sim, _)| f64::from(sim) >= cut)
                    .max_by(|a, b| a.0.total_cmp(&b.0));
                if let Some((_, d)) = nearest_other {
                    assert!(
                        partners[i].iter().any(|&j| source[j] == d),
                        "row {i} lost its nearest other row"
                    );
                }
            }
        }
        let all: Vec<(usize, usize)> = near_pairs(&rows, cut, usize::MAX)
            .into_iter()
            .map(|(i, j, _)| (i, j))
            .collect();
        assert_eq!(all, all_near(&rows, cut));
    }

    #[test]
    fn zero_rows_pair_with_nothing() {
        let mut rows = topics(3, 2, 0.01, 8, 3);
        rows.push(&[0.0; 8]);
        rows.push(&[0.0; 8]);
        let pairs = near_pairs(&rows, -1.0, usize::MAX);
        assert!(pairs.iter().all(|&(i, j, _)| i < 6 && j < 6));
        assert_eq!(count_near(&rows, &[0; 8], -1.0, |_| true), 0);
        // past the exact size too: the index of nothing pairs nothing
        let mut zeros = Rows::new(8);
        for _ in 0..EXACT_UP_TO + 10 {
            zeros.push(&[0.0; 8]);
        }
        assert!(near_pairs(&zeros, -1.0, 16).is_empty());
        let mut few = zeros.clone();
        few.push(&normalised(vec![1.0; 8]));
        few.push(&normalised(vec![1.0; 8]));
        assert_eq!(near_pairs(&few, 0.5, 16).len(), 1);
    }

    #[test]
    fn a_kept_lesson_vector_follows_its_texts() {
        let cuts = Cuts {
            trigger: 0.3,
            lesson: 0.3,
            action: 0.3,
        };
        let mut cache = VectorCache::default();
        let texts = ["w".to_string(), "p".to_string()];
        cache
            .learn(&texts, &[vec![1.0, 0.0], vec![0.0, 1.0]], cuts)
            .unwrap();
        let first = cache.lesson_of("w", "p").unwrap().1.to_vec();
        assert_eq!(first, lesson_vector(&[127, 0], &[0, 127]));
        // the action's vector changes: the kept lesson vector with it
        cache.learn(&texts[1..], &[vec![1.0, 0.0]], cuts).unwrap();
        assert_eq!(cache.lesson_of("w", "p").unwrap().1, &[127, 0]);
        cache.retain(|t| t != "p");
        assert!(cache.lesson_of("w", "p").is_none());
        assert!(cache.by_lesson.is_empty());
    }

    #[test]
    fn the_cut_offs_follow_the_calibrated_curve() {
        // P = 1/2 at the related midpoint, 0.1 at the unrelated floor
        assert!((cosine_at(0.45, 0.3, 0.5).unwrap() - 0.45).abs() < 1e-12);
        assert!((cosine_at(0.45, 0.3, 0.1).unwrap() - 0.3).abs() < 1e-12);
        let quarter = cosine_at(0.45, 0.3, 0.25).unwrap();
        assert!(quarter > 0.3 && quarter < 0.45);
        assert_eq!(cosine_at(0.3, 0.45, 0.25), None);
    }
}
