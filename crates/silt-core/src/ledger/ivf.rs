//! The index that finds near pairs among many lessons' vectors without
//! comparing every pair: an inverted file. Spherical k-means splits the
//! rows into lists; a row is compared with the rows of the [`PROBES`]
//! lists whose centroids are nearest it; a pair both rows reach is
//! compared once. Before an exact cosine, the rows' sign sketches
//! ([`Sketches`]) pass over pairs too far apart to be near.
//!
//! Where the time goes, measured at 100k generated 384-dimension rows in
//! wasm (examples/near_pairs_scale.rs): comparing a row with a
//! candidate costs about 11 ns by sketch and 50 ns by exact cosine, and
//! each row meets about a thousand candidates. So the lists are many
//! (2√n: smaller lists, fewer candidates), the k-means is trained with
//! sketch-shortlisted assignments (its cost grows with the square of the
//! lists), and only about one candidate in thirty reaches the exact
//! cosine.

use super::rows::{Rows, dot, quantise};
use super::sketch::{Sketch, Sketches, WORDS};

/// Lists each row is compared with (its own among them).
pub const PROBES: usize = 4;

/// Lists, per square root of the rows. Measured in wasm at 100k generated
/// rows with 4 probes (examples/near_pairs_scale.rs, 2026-12-02, one run
/// each): 2√n lists 3.0 s a view, sampled recall 0.83; 3√n 3.2 s, 0.86
/// (smaller lists cost less to scan, but the k-means' cost grows with the
/// square of the lists). 2 keeps a pass's three views under 10 s with
/// some margin; 3 is the better recall if that margin is not needed.
const LISTS_PER_ROOT: f64 = 2.0;

/// Lloyd rounds of the spherical k-means that makes the lists.
const KMEANS_ROUNDS: usize = 4;

/// Sample rows per list the k-means is trained on.
const SAMPLE_PER_LIST: usize = 24;

/// Centroids per probe shortlisted by sketch before the exact cosine
/// ranks them: sketches rank centroids poorly (a row's cosines to them
/// differ little), so the shortlist is wide.
const SHORTLIST: usize = 8;

/// Centroids shortlisted by sketch while training, where only the
/// nearest one counts.
const TRAIN_SHORTLIST: usize = 8;

/// Standard deviations of the sketch's spread allowed over its mean at
/// the cut-off (see [`Sketches::most_apart`]): a pair exactly at the
/// cut-off is passed over about one time in 44, a pair 0.05 over it
/// about one in 2,000. Measured on generated rows, 2 returned the same
/// sampled near pairs as 3 with a fifth of the exact cosines.
const SPREAD: f64 = 2.0;

/// Rows grouped by list and copied list by list into one buffer, so a
/// list is scanned from contiguous memory. Rows are named by their place
/// `g` in that buffer.
pub struct Ivf {
    packed: Rows,
    sketches: Vec<Sketch>,
    /// The lesson (row of the input) of each packed row.
    ids: Vec<u32>,
    /// The list of each packed row.
    list_of: Vec<u32>,
    /// The lists each packed row is compared with, its own first.
    probes: Vec<[u32; PROBES]>,
    /// Where each list's rows start in `packed`, and where the last ends.
    starts: Vec<usize>,
}

impl Ivf {
    /// The index of `rows` (none zero: `near_pairs` leaves those out).
    pub fn build(rows: &Rows) -> Ivf {
        // the comparisons monomorphised on the words the sketches use
        match Sketches::words(rows.dim) {
            1 => Self::build_in::<1>(rows),
            2 => Self::build_in::<2>(rows),
            3 | 4 => Self::build_in::<4>(rows),
            _ => Self::build_in::<WORDS>(rows),
        }
    }

    fn build_in<const W: usize>(rows: &Rows) -> Ivf {
        let ids: Vec<usize> = (0..rows.len()).collect();
        if ids.is_empty() {
            // nothing to pair: no lists, no probes
            return Ivf {
                packed: Rows::new(rows.dim),
                sketches: vec![],
                ids: vec![],
                list_of: vec![],
                probes: vec![],
                starts: vec![0],
            };
        }
        let sketches = Sketches::of(rows.dim, ids.iter().map(|&i| rows.row(i)));
        let lists = ((ids.len() as f64).sqrt() * LISTS_PER_ROOT)
            .round()
            .clamp(1.0, ids.len().max(1) as f64) as usize;
        // an even stride over the rows: deterministic, and spread over a
        // ledger's history rather than its first lessons
        let stride = (ids.len() / (lists * SAMPLE_PER_LIST)).max(1);
        let sample: Vec<usize> = (0..ids.len()).step_by(stride).collect();
        let mut centroids = Rows::new(rows.dim);
        for k in 0..lists {
            centroids.push_stored(rows.row(ids[sample[k * sample.len() / lists]]));
        }
        let near = |centroids: &Rows, of: &[usize], shortlist: usize| {
            nearest_centroids::<W>(rows, &ids, &sketches, of, centroids, shortlist)
        };
        for _ in 0..KMEANS_ROUNDS {
            let nearest = near(&centroids, &sample, TRAIN_SHORTLIST);
            let mut sums = vec![0f32; lists * rows.dim];
            for (&k, probes) in sample.iter().zip(&nearest) {
                let at = probes[0] as usize * rows.dim;
                for (acc, x) in sums[at..at + rows.dim].iter_mut().zip(rows.row(ids[k])) {
                    *acc += f32::from(*x);
                }
            }
            for (c, sum) in sums.chunks_exact(rows.dim).enumerate() {
                let norm = sum.iter().map(|s| s * s).sum::<f32>().sqrt();
                // a list that drew no sample keeps its centroid
                if norm > 0.0 {
                    let unit: Vec<f32> = sum.iter().map(|s| s / norm).collect();
                    centroids.replace(c, &quantise(&unit));
                }
            }
        }
        let every: Vec<usize> = (0..ids.len()).collect();
        let nearest = near(&centroids, &every, SHORTLIST * PROBES);
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); lists];
        for (k, probes) in nearest.iter().enumerate() {
            members[probes[0] as usize].push(k);
        }
        let mut index = Ivf {
            packed: Rows::new(rows.dim),
            sketches: Vec::with_capacity(ids.len()),
            ids: Vec::with_capacity(ids.len()),
            list_of: Vec::with_capacity(ids.len()),
            probes: Vec::with_capacity(ids.len()),
            starts: Vec::with_capacity(lists + 1),
        };
        for (l, list) in members.iter().enumerate() {
            index.starts.push(index.packed.len());
            for &k in list {
                index.packed.push_stored(rows.row(ids[k]));
                index.sketches.push(*sketches.row(k));
                index.ids.push(ids[k] as u32);
                index.list_of.push(l as u32);
                index.probes.push(nearest[k]);
            }
        }
        index.starts.push(index.packed.len());
        index
    }

    /// Calls `near.found(i, j, cosine)` once for each pair of rows at
    /// `near.bar` of either row or nearer that the probes reach (i, j in
    /// the input's numbering).
    ///
    /// A caller that keeps each row's few nearest raises a row's bar to
    /// the weakest it keeps once its list is full: on dense text (the
    /// `families` generator: about 580 rows past the cut-off a row) most
    /// pairs then fail the sketch test for the bar of both rows, and are
    /// neither compared exactly nor offered.
    pub fn for_each_near(&self, near: &mut impl Near) {
        // the comparisons monomorphised on the words the sketches use
        match Sketches::words(self.packed.dim) {
            1 => self.search::<1>(near),
            2 => self.search::<2>(near),
            3 | 4 => self.search::<4>(near),
            _ => self.search::<WORDS>(near),
        }
    }

    fn search<const W: usize>(&self, near: &mut impl Near) {
        let limits = Limits::new(self.packed.dim);
        // each packed row's bar and the sketch limit at it, kept in step
        // with `near` (a bar moves only when `found` names its row): read
        // in list order where `near`'s are scattered, and the limit of a
        // pair is the larger of its rows' (the limit at the lower bar)
        // instead of a lookup per candidate
        let mut bars: Vec<f32> = self.ids.iter().map(|&i| near.bar(i as usize)).collect();
        let mut lims: Vec<u32> = bars.iter().map(|&bar| limits.at(bar)).collect();
        // packed row by packed row, so consecutive rows probe mostly the
        // same lists while they are in cache
        for (g, probed) in self.probes.iter().enumerate() {
            let l = self.list_of[g];
            let i = self.ids[g] as usize;
            let (v, sketch) = (self.packed.row(g), &self.sketches[g]);
            for (k, &p) in probed.iter().enumerate() {
                if probed[..k].contains(&p) {
                    continue;
                }
                for h in self.starts[p as usize]..self.starts[p as usize + 1] {
                    // a pair both rows reach is compared from the row
                    // packed first
                    if h == g || (h < g && self.probes[h].contains(&l)) {
                        continue;
                    }
                    let limit = lims[g].max(lims[h]);
                    if Sketches::apart_in::<W>(sketch, &self.sketches[h]) > limit {
                        continue;
                    }
                    // not f32::min: its NaN rule makes it a call to
                    // libm's fminf in wasm, 4% of pairing (no NaN comes)
                    let (x, y) = (bars[g], bars[h]);
                    let bar = if x < y { x } else { y };
                    let sim = dot(v, self.packed.row(h));
                    if sim >= bar {
                        let j = self.ids[h] as usize;
                        near.found(i, j, sim);
                        for (at, row) in [(g, i), (h, j)] {
                            bars[at] = near.bar(row);
                            lims[at] = limits.at(bars[at]);
                        }
                    }
                }
            }
        }
    }
}

/// What [`Ivf::for_each_near`] reports to, and asks how near a pair
/// must be for a row.
pub trait Near {
    /// The least cosine at which a pair with row `i` still matters; it
    /// changes only when [`Near::found`] names `i`.
    fn bar(&self, i: usize) -> f32;
    /// A pair at cosine `sim`, at least the bar of one of its rows.
    fn found(&mut self, i: usize, j: usize, sim: f32);
}

/// Steps per unit of cosine of [`Limits`].
const LIMIT_STEPS: f32 = 1024.0;

/// [`Sketches::most_apart`] at every cosine, in steps of 1/1024 rounded
/// down (a looser limit, never a tighter one).
struct Limits(Vec<u32>);

impl Limits {
    fn new(dim: usize) -> Limits {
        let steps = 2 * LIMIT_STEPS as usize;
        let mut limits: Vec<u32> = (0..=steps)
            .map(|k| {
                let cosine = k as f64 / f64::from(LIMIT_STEPS) - 1.0;
                Sketches::most_apart(dim, cosine, SPREAD)
            })
            .collect();
        // never lower at a lower cosine, so the limit at the lower of two
        // bars is the larger of their limits (the binomial bound dips
        // only within 4/bits of a cosine of -1, never a cut-off)
        for k in (0..steps).rev() {
            limits[k] = limits[k].max(limits[k + 1]);
        }
        Limits(limits)
    }

    fn at(&self, cosine: f32) -> u32 {
        let k = ((cosine.clamp(-1.0, 1.0) + 1.0) * LIMIT_STEPS) as usize;
        self.0[k]
    }
}

/// The [`PROBES`] centroids nearest each row `ids[k]` for `k` in `of`,
/// nearest first: shortlisted by sketch, then ranked by exact cosine.
/// Fewer centroids than probes repeat the nearest.
fn nearest_centroids<const W: usize>(
    rows: &Rows,
    ids: &[usize],
    sketches: &Sketches,
    of: &[usize],
    centroids: &Rows,
    shortlist: usize,
) -> Vec<[u32; PROBES]> {
    let centres = Sketches::of(rows.dim, (0..centroids.len()).map(|c| centroids.row(c)));
    let shortlist = shortlist.clamp(1, centroids.len());
    let bits = 64 * W;
    let mut apart: Vec<u16> = Vec::with_capacity(centroids.len());
    // rows per count of differing bits: the shortlist is every centroid
    // below the count where the shortlist fills, then the first centroids
    // at it, the same set a selection over (bits, centroid) would give,
    // for two linear passes instead of a selection's branches
    let mut counts = vec![0u32; bits + 1];
    let mut near: Vec<(f32, u32)> = Vec::with_capacity(shortlist);
    of.iter()
        .map(|&k| {
            let sketch = sketches.row(k);
            apart.clear();
            apart.extend(
                (0..centroids.len())
                    .map(|c| Sketches::apart_in::<W>(sketch, centres.row(c)) as u16),
            );
            counts.fill(0);
            for &d in &apart {
                counts[usize::from(d)] += 1;
            }
            let (mut at, mut below) = (0, 0);
            while below + counts[at] < shortlist as u32 {
                below += counts[at];
                at += 1;
            }
            let (at, mut ties) = (at as u16, shortlist as u32 - below);
            let v = rows.row(ids[k]);
            near.clear();
            for (c, &d) in apart.iter().enumerate() {
                if d < at || (d == at && ties > 0) {
                    ties -= u32::from(d == at);
                    near.push((dot(centroids.row(c), v), c as u32));
                }
            }
            // only the nearest PROBES are kept, in order
            let order = |a: &(f32, u32), b: &(f32, u32)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
            if near.len() > PROBES {
                near.select_nth_unstable_by(PROBES - 1, order);
                near.truncate(PROBES);
            }
            near.sort_unstable_by(order);
            let mut out = [near[0].1; PROBES];
            for (slot, &(_, c)) in out.iter_mut().zip(&near) {
                *slot = c;
            }
            out
        })
        .collect()
}
