//! Unit vectors stored compactly: a row of signed bytes per vector, and
//! the cosine of two rows. Shared by the pair index, its sketches and
//! the candidates by meaning, which all compare the same rows.

/// Rows of unit vectors, `dim` components each, in one buffer, each
/// component stored as a signed byte (×127): a quarter of the memory of
/// floats (100k lessons × 3 vectors × 384 dimensions is 115 MB, not 460)
/// for a cosine off by about 0.003, far inside any cut-off's margin.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rows {
    /// Components per row (0 until the first row sets it, for [`Rows::put`]).
    pub dim: usize,
    data: Vec<i8>,
}

/// The scale of a stored component.
const SCALE: f32 = 127.0;

/// A unit vector's components as stored. Ties round to even: that is
/// wasm's own `f32.nearest`, where `round` (ties away from zero) is a
/// call to libm's `roundf` (0.4 s of a sleep over 100k lessons, perf).
pub fn quantise(v: &[f32]) -> Vec<i8> {
    v.iter()
        .map(|x| (x * SCALE).round_ties_even().clamp(-127.0, 127.0) as i8)
        .collect()
}

impl Rows {
    /// No rows, each to hold `dim` components.
    pub fn new(dim: usize) -> Rows {
        Rows { dim, data: vec![] }
    }

    /// Rows held (0 while `dim` is 0).
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    /// True when no row is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i`'s stored components; panics past the end.
    pub fn row(&self, i: usize) -> &[i8] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// Appends a unit vector of `dim` floats.
    pub fn push(&mut self, v: &[f32]) {
        debug_assert_eq!(v.len(), self.dim);
        self.data.extend(quantise(v));
    }

    /// Puts `v` (stored bytes) in the place of row `i`.
    pub fn replace(&mut self, i: usize, v: &[i8]) {
        self.data[i * self.dim..(i + 1) * self.dim].copy_from_slice(v);
    }

    /// Puts `v` (stored bytes) in row `i`, first growing the rows with
    /// zeros to reach it; the first row put sets the width.
    pub fn put(&mut self, i: usize, v: &[i8]) {
        if self.data.is_empty() {
            self.dim = v.len();
        }
        debug_assert_eq!(v.len(), self.dim);
        if self.len() <= i {
            self.data.resize((i + 1) * self.dim, 0);
        }
        self.replace(i, v);
    }

    /// Appends a row already stored as bytes.
    pub fn push_stored(&mut self, v: &[i8]) {
        debug_assert_eq!(v.len(), self.dim);
        self.data.extend_from_slice(v);
    }

    /// Every row's stored bytes, one row after another: what
    /// [`Rows::from_stored`] takes back (rows handed to another instance).
    pub fn stored(&self) -> &[i8] {
        &self.data
    }

    /// Rows of `dim` stored bytes each, from [`Rows::stored`]; None when
    /// `dim` is 0 or does not divide the bytes.
    pub fn from_stored(dim: usize, data: Vec<i8>) -> Option<Rows> {
        (dim > 0 && data.len().is_multiple_of(dim)).then_some(Rows { dim, data })
    }
}

/// The cosine of two stored rows.
pub fn dot(a: &[i8], b: &[i8]) -> f32 {
    let whole = a.len().min(b.len()) / 16 * 16;
    let tail: i32 = a[whole..]
        .iter()
        .zip(&b[whole..])
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    (dot_chunks(&a[..whole], &b[..whole]) + tail) as f32 / (SCALE * SCALE)
}

/// The products of `a` and `b`, of one length, a multiple of 16. In
/// wasm with simd128 (how the ledger engine is built), by explicit
/// 128-bit lanes: bytes widened to i16 and multiplied-and-paired into i32
/// by one `i32x4.dot_i16x8_s`, four chunks to a loop turn. The host runs
/// guests with epoch interruption, which puts a check on every loop
/// back-edge: with one chunk a turn the checks doubled a 10k-lesson scan
/// (wasmtime 48, 10k cosines at 256 dimensions: 355 µs with checks
/// before, 153 µs now; 207 / 162 µs without checks; docs/history/benchmarks.md).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn dot_chunks(a: &[i8], b: &[i8]) -> i32 {
    use core::arch::wasm32::{
        i8x16, i16x8_extend_high_i8x16, i16x8_extend_low_i8x16, i32x4_add, i32x4_dot_i16x8,
        i32x4_extract_lane, i32x4_splat, v128,
    };
    #[inline(always)]
    fn load(x: &[i8]) -> v128 {
        let x: &[i8; 16] = x.try_into().expect("chunks of 16");
        // compiles to one unaligned v128.load
        i8x16(
            x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13],
            x[14], x[15],
        )
    }
    // two accumulators, so consecutive adds do not wait on each other;
    // inlined, or each step is a call (with its own check) that keeps the
    // accumulators in memory
    #[inline(always)]
    fn step(acc: (v128, v128), x: &[i8], y: &[i8]) -> (v128, v128) {
        let (x, y) = (load(x), load(y));
        let low = i32x4_dot_i16x8(i16x8_extend_low_i8x16(x), i16x8_extend_low_i8x16(y));
        let high = i32x4_dot_i16x8(i16x8_extend_high_i8x16(x), i16x8_extend_high_i8x16(y));
        (i32x4_add(acc.0, low), i32x4_add(acc.1, high))
    }
    let mut acc = (i32x4_splat(0), i32x4_splat(0));
    let (blocks_a, blocks_b) = (a.chunks_exact(64), b.chunks_exact(64));
    let (rest_a, rest_b) = (blocks_a.remainder(), blocks_b.remainder());
    for (x, y) in blocks_a.zip(blocks_b) {
        // written out, not looped: a loop here would get its own checks
        acc = step(acc, &x[..16], &y[..16]);
        acc = step(acc, &x[16..32], &y[16..32]);
        acc = step(acc, &x[32..48], &y[32..48]);
        acc = step(acc, &x[48..], &y[48..]);
    }
    for (x, y) in rest_a.chunks_exact(16).zip(rest_b.chunks_exact(16)) {
        acc = step(acc, x, y);
    }
    let sum = i32x4_add(acc.0, acc.1);
    i32x4_extract_lane::<0>(sum)
        + i32x4_extract_lane::<1>(sum)
        + i32x4_extract_lane::<2>(sum)
        + i32x4_extract_lane::<3>(sum)
}

/// The products of `a` and `b`, of one length, a multiple of 16, in
/// sixteen integer lanes so the compiler can keep them in SIMD registers.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn dot_chunks(a: &[i8], b: &[i8]) -> i32 {
    let mut lanes = [0i32; 16];
    for (x, y) in a.chunks_exact(16).zip(b.chunks_exact(16)) {
        for k in 0..16 {
            // a product of two bytes fits an i16
            lanes[k] += i32::from(i16::from(x[k]) * i16::from(y[k]));
        }
    }
    lanes.iter().sum()
}

pub(crate) fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lane-wise products (128-bit lanes in wasm, four chunks a turn,
    /// then single chunks, then a tail) equal a plain sum of products at
    /// every length that exercises a different mix of them, extremes
    /// included.
    #[test]
    fn dot_equals_a_plain_sum_at_every_mix_of_blocks_chunks_and_tail() {
        // bytes over the whole stored range, from the ledger's test generator
        let mut rng = crate::ledger::meaning::tests::Rng(0x9e37_79b9_7f4a_7c15);
        let mut byte = || (rng.next() * 127.0).round() as i8;
        for len in [
            0, 1, 15, 16, 17, 48, 63, 64, 65, 80, 100, 128, 256, 300, 384, 768,
        ] {
            for round in 0..4 {
                let (a, b): (Vec<i8>, Vec<i8>) = match round {
                    0 => (vec![127; len], vec![127; len]),
                    1 => (vec![-127; len], vec![127; len]),
                    _ => (
                        (0..len).map(|_| byte()).collect(),
                        (0..len).map(|_| byte()).collect(),
                    ),
                };
                let plain: i32 = a
                    .iter()
                    .zip(&b)
                    .map(|(x, y)| i32::from(*x) * i32::from(*y))
                    .sum();
                assert_eq!(
                    dot(&a, &b),
                    plain as f32 / (SCALE * SCALE),
                    "length {len}, round {round}"
                );
            }
        }
    }
}
