//! Unit vectors stored compactly: a row of signed bytes per vector, and
//! the cosine of two rows. Shared by the pair index, its sketches and
//! the candidates by meaning, which all compare the same rows.

/// Rows of unit vectors, `dim` components each, in one buffer, each
/// component stored as a signed byte (×127): a quarter of the memory of
/// floats (100k lessons × 3 vectors × 384 dimensions is 115 MB, not 460)
/// for a cosine off by about 0.003, far inside any cut-off's margin.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rows {
    pub dim: usize,
    data: Vec<i8>,
}

/// The scale of a stored component.
const SCALE: f32 = 127.0;

/// A unit vector's components as stored.
pub fn quantise(v: &[f32]) -> Vec<i8> {
    v.iter()
        .map(|x| (x * SCALE).round().clamp(-127.0, 127.0) as i8)
        .collect()
}

impl Rows {
    pub fn new(dim: usize) -> Rows {
        Rows { dim, data: vec![] }
    }

    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

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
}

/// The cosine of two stored rows.
pub fn dot(a: &[i8], b: &[i8]) -> f32 {
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let tail: i32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    (dot_chunks(ca, cb) + tail) as f32 / (SCALE * SCALE)
}

/// The products of whole 16-byte chunks. In wasm with simd128 (how the
/// ledger engine is built), by explicit 128-bit lanes: a widening
/// multiply of bytes into i16 and a pairwise add into i32, which
/// wasmtime turns into a few SSE instructions. Measured at 384
/// dimensions: 25 ns a cosine, against 41 ns for what the compiler makes
/// of the portable loop below.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn dot_chunks(ca: std::slice::ChunksExact<'_, i8>, cb: std::slice::ChunksExact<'_, i8>) -> i32 {
    use core::arch::wasm32::{
        i8x16, i16x8_extmul_high_i8x16, i16x8_extmul_low_i8x16, i32x4_add,
        i32x4_extadd_pairwise_i16x8, i32x4_extract_lane, i32x4_splat, v128,
    };
    fn load(x: &[i8]) -> v128 {
        let x: &[i8; 16] = x.try_into().expect("chunks of 16");
        // compiles to one unaligned v128.load
        i8x16(
            x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13],
            x[14], x[15],
        )
    }
    let mut acc = i32x4_splat(0);
    for (x, y) in ca.zip(cb) {
        let (x, y) = (load(x), load(y));
        // a product of two bytes fits an i16
        acc = i32x4_add(
            acc,
            i32x4_extadd_pairwise_i16x8(i16x8_extmul_low_i8x16(x, y)),
        );
        acc = i32x4_add(
            acc,
            i32x4_extadd_pairwise_i16x8(i16x8_extmul_high_i8x16(x, y)),
        );
    }
    i32x4_extract_lane::<0>(acc)
        + i32x4_extract_lane::<1>(acc)
        + i32x4_extract_lane::<2>(acc)
        + i32x4_extract_lane::<3>(acc)
}

/// The products of whole 16-byte chunks, in sixteen integer lanes so the
/// compiler can keep them in SIMD registers.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn dot_chunks(ca: std::slice::ChunksExact<'_, i8>, cb: std::slice::ChunksExact<'_, i8>) -> i32 {
    let mut lanes = [0i32; 16];
    for (x, y) in ca.zip(cb) {
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
