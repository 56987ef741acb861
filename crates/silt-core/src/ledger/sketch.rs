//! Sign sketches of stored vectors: each vector turned by one fixed
//! random rotation and reduced to the signs of its components, one bit
//! each. Two vectors at angle θ differ in a share θ/π of those bits
//! (random-hyperplane hashing), so the count of differing bits, a few
//! popcounts, tells a far pair from a possibly near one before the exact
//! cosine is paid for.
//!
//! The rotation is three rounds of random sign flips and a Walsh-Hadamard
//! transform over the vector padded to a power of two: it costs
//! n·log n per vector instead of the n² of a dense random matrix, and it
//! spreads every input direction over all coordinates, which is what
//! makes the signs behave like random hyperplanes.

/// Rounds of sign flips and transforms; one leaves sparse inputs
/// poorly spread, three is the usual choice.
const ROUNDS: usize = 3;

/// Words of a sketch: 512 bits, the padded length of the common
/// 384-dimension vectors. Longer vectors keep the first 512 turned
/// components (each already mixes them all); a fixed length lets the
/// compiler unroll a comparison into eight popcounts.
pub const WORDS: usize = 8;

/// One row's sketch.
pub type Sketch = [u64; WORDS];

/// The sketches of a set of rows.
pub struct Sketches {
    data: Vec<Sketch>,
}

/// The fixed rotation: its padded length and its sign flips, as factors
/// of ±1 (a multiply in lanes where a branch a component was not).
struct Rotation {
    len: usize,
    flips: Vec<f32>,
}

impl Rotation {
    fn new(dim: usize) -> Rotation {
        // at least one word, so even tiny test vectors get 64 bits
        let len = dim.next_power_of_two().max(64);
        // a fixed seed: the same vector always gets the same sketch
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let flips = (0..ROUNDS * len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                if state >> 63 == 1 { -1.0 } else { 1.0 }
            })
            .collect();
        Rotation { len, flips }
    }

    fn turn(&self, v: &[i8], buf: &mut [f32]) {
        buf.fill(0.0);
        for (b, x) in buf.iter_mut().zip(v) {
            *b = f32::from(*x);
        }
        for round in self.flips.chunks_exact(self.len) {
            for (b, flip) in buf.iter_mut().zip(round) {
                *b *= flip;
            }
            walsh_hadamard(buf);
        }
    }
}

/// The unnormalised fast Walsh-Hadamard transform, in place (the length
/// is a power of two); the scale does not change a sign.
fn walsh_hadamard(buf: &mut [f32]) {
    let mut h = 1;
    if buf.len() >= 4 {
        // the first two levels together, a group of four at a time: as
        // levels of their own their halves (1 and 2 long) are too short
        // for lanes (the same sums, in the same order)
        for q in buf.chunks_exact_mut(4) {
            let (a0, a1) = (q[0] + q[1], q[0] - q[1]);
            let (a2, a3) = (q[2] + q[3], q[2] - q[3]);
            q[0] = a0 + a2;
            q[1] = a1 + a3;
            q[2] = a0 - a2;
            q[3] = a1 - a3;
        }
        h = 4;
    }
    while h < buf.len() {
        for block in buf.chunks_exact_mut(2 * h) {
            let (lo, hi) = block.split_at_mut(h);
            for (a, b) in lo.iter_mut().zip(hi) {
                let (x, y) = (*a, *b);
                *a = x + y;
                *b = x - y;
            }
        }
        h *= 2;
    }
}

impl Sketches {
    /// The sketches of `rows` (each `dim` stored components).
    pub fn of<'a>(dim: usize, rows: impl IntoIterator<Item = &'a [i8]>) -> Sketches {
        let rotation = Rotation::new(dim);
        let mut buf = vec![0f32; rotation.len];
        let mut data = Vec::new();
        for v in rows {
            rotation.turn(v, &mut buf);
            // shorter vectors leave the last words zero in every sketch
            let mut sketch = [0u64; WORDS];
            for (word, chunk) in sketch.iter_mut().zip(buf.chunks_exact(64)) {
                for (k, x) in chunk.iter().enumerate() {
                    *word |= u64::from(x.is_sign_negative()) << k;
                }
            }
            data.push(sketch);
        }
        Sketches { data }
    }

    pub fn row(&self, i: usize) -> &Sketch {
        &self.data[i]
    }

    /// The bits in which the first `W` words of sketches `a` and `b`
    /// differ: all the bits they differ in when their vectors have at most 64·`W`
    /// components (see [`Sketches::words`]), at `W` popcounts instead of
    /// [`WORDS`].
    #[inline(always)]
    pub fn apart_in<const W: usize>(a: &Sketch, b: &Sketch) -> u32 {
        let mut bits = 0;
        for k in 0..W {
            bits += (a[k] ^ b[k]).count_ones();
        }
        bits
    }

    /// The words a sketch of `dim`-component vectors can set: the rest
    /// are zero in every one of them. Potion's 256 dimensions fill 4 of
    /// the 8, so comparing all 8 spent half of each comparison on zeros.
    pub fn words(dim: usize) -> usize {
        Rotation::new(dim).len.div_ceil(64).min(WORDS)
    }

    /// The most bits in which the sketches of two `dim`-component
    /// vectors at cosine `cut` or nearer differ, `spread` standard
    /// deviations of the binomial count over its mean: a pair further
    /// apart than this is not compared.
    pub fn most_apart(dim: usize, cut: f64, spread: f64) -> u32 {
        let bits = Rotation::new(dim).len.min(64 * WORDS);
        let share = cut.clamp(-1.0, 1.0).acos() / std::f64::consts::PI;
        let n = bits as f64;
        let limit = n * share + spread * (n * share * (1.0 - share)).sqrt();
        (limit.ceil() as u32).min(bits as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::meaning::tests::{Rng, normalised};
    use crate::ledger::rows::{dot, quantise};

    #[test]
    fn the_transform_keeps_the_length_up_to_its_scale() {
        let mut buf: Vec<f32> = (0..8).map(|k| k as f32 - 3.5).collect();
        let before: f32 = buf.iter().map(|x| x * x).sum();
        walsh_hadamard(&mut buf);
        let after: f32 = buf.iter().map(|x| x * x).sum();
        assert!((after - 8.0 * before).abs() < 1e-3);
    }

    #[test]
    fn differing_bits_follow_the_angle() {
        // pairs at many angles: the share of differing bits estimates
        // θ/π, and pairs at or above a cut-off are almost never over
        // the limit
        let (dim, mut rng) = (384, Rng(11));
        let (mut rows, mut cosines) = (vec![], vec![]);
        for k in 0..400 {
            let a = rng.unit(dim);
            let noise = rng.unit(dim);
            let mix = (k % 20) as f32 / 10.0;
            let b = normalised(a.iter().zip(&noise).map(|(x, e)| x + mix * e).collect());
            let (qa, qb) = (quantise(&a), quantise(&b));
            cosines.push(f64::from(dot(&qa, &qb)));
            rows.push(qa);
            rows.push(qb);
        }
        let sketches = Sketches::of(dim, rows.iter().map(Vec::as_slice));
        let cut = 0.5;
        let limit = Sketches::most_apart(dim, cut, 3.0);
        let mut missed = 0;
        for (k, &cos) in cosines.iter().enumerate() {
            let bits = Sketches::apart_in::<WORDS>(sketches.row(2 * k), sketches.row(2 * k + 1));
            let share = f64::from(bits) / 512.0;
            let want = cos.clamp(-1.0, 1.0).acos() / std::f64::consts::PI;
            assert!((share - want).abs() < 0.1, "cos {cos}: {share} vs {want}");
            if cos >= cut && bits > limit {
                missed += 1;
            }
        }
        assert!(missed <= 2, "{missed} pairs over the cut-off passed over");
    }

    /// Words past [`Sketches::words`] are zero, so comparing only the
    /// words a width can set counts the same bits as comparing all.
    #[test]
    fn words_past_a_width_are_zero() {
        let mut rng = Rng(5);
        for (dim, words) in [(8, 1), (64, 1), (100, 2), (256, 4), (384, 8), (768, 8)] {
            assert_eq!(Sketches::words(dim), words, "dim {dim}");
            let rows: Vec<Vec<i8>> = (0..20).map(|_| quantise(&rng.unit(dim))).collect();
            let sketches = Sketches::of(dim, rows.iter().map(Vec::as_slice));
            for k in 0..20 {
                assert!(
                    sketches.row(k)[words..].iter().all(|&w| w == 0),
                    "dim {dim}"
                );
                let (a, b) = (sketches.row(k), sketches.row((k + 1) % 20));
                let all = Sketches::apart_in::<WORDS>(a, b);
                let first = match words {
                    1 => Sketches::apart_in::<1>(a, b),
                    2 => Sketches::apart_in::<2>(a, b),
                    4 => Sketches::apart_in::<4>(a, b),
                    _ => Sketches::apart_in::<8>(a, b),
                };
                assert_eq!(first, all, "dim {dim}");
            }
        }
    }

    #[test]
    fn the_same_vector_gets_the_same_sketch() {
        let v: Vec<i8> = (0..384).map(|k| (k % 255) as i8).collect();
        let a = Sketches::of(384, [v.as_slice()]);
        let b = Sketches::of(384, [v.as_slice(), v.as_slice()]);
        assert_eq!(a.row(0), b.row(1));
        assert_eq!(Sketches::apart_in::<WORDS>(a.row(0), b.row(0)), 0);
    }
}
