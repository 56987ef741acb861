//! How candidate pairs by meaning (`ledger::meaning::near_pairs`) scale,
//! on generated sentence-like vectors (natively; the ledger engine runs the
//! same code as wasm).
//!
//! `cargo run --release -p silt-core --example near_pairs_scale -- \
//!     [--dim 384] [--cut 0.36] 10000 100000`, or as wasm, as the ledger
//! engine runs it: `cargo build --release -p silt-core --example
//! near_pairs_scale --target wasm32-wasip2` and `wasmtime run
//! target/wasm32-wasip2/release/examples/near_pairs_scale.wasm 100000`.
//!
//! Vectors are unit vectors around a shared direction (sentence vectors of
//! one model all lean one way: unrelated sentences sit near cosine 0.1),
//! in topics of a few lessons each (rewordings of one lesson, at cosine
//! about 0.6-0.8 to one another). Reported per size: the time of one
//! `near_pairs` call (what sleep pays per view, beyond embedding), the
//! pairs returned, and the share of the exact near pairs of 200 sampled
//! rows that were returned (the index is approximate past
//! `EXACT_UP_TO`); then the time of a sleep pass's pairing by meaning
//! over as many lessons: `Views::same_situation_pairs` (trigger and whole
//! lesson) and `near_pairs` over their actions (a pass runs it over the
//! distinct action texts; here every action is distinct).

use std::collections::HashSet;
use std::time::Instant;

use silt_core::ledger::meaning::{Cuts, Rows, Views, dot, lesson_vector, near_pairs};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }
    fn gauss(&mut self) -> f32 {
        (0..4).map(|_| self.next()).sum::<f32>() * 0.866
    }
}

fn unit(v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

fn rows(n: usize, dim: usize, rng: &mut Rng) -> Rows {
    let shared = unit((0..dim).map(|_| rng.gauss()).collect());
    let mut rows = Rows::new(dim);
    let mut centre = vec![0f32; dim];
    for i in 0..n {
        // topics of 1 to 6 lessons
        if i == 0 || rng.next() > 0.6 {
            let c = unit((0..dim).map(|_| rng.gauss()).collect());
            centre = unit(shared.iter().zip(&c).map(|(s, c)| 0.35 * s + c).collect());
        }
        let noise = unit((0..dim).map(|_| rng.gauss()).collect());
        rows.push(&unit(
            centre
                .iter()
                .zip(&noise)
                .map(|(c, e)| c + 0.6 * e)
                .collect(),
        ));
    }
    rows
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str, default: f64| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(|v| v.parse().expect("a number"))
            .unwrap_or(default)
    };
    let dim = flag("--dim", 384.0) as usize;
    let cut = flag("--cut", 0.36);
    let sizes: Vec<usize> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !a.starts_with("--") && (*i == 0 || !args[i - 1].starts_with("--")))
        .map(|(_, a)| a.parse().expect("a size"))
        .collect();
    for n in sizes {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ n as u64);
        let rows = rows(n, dim, &mut rng);
        let started = Instant::now();
        let pairs = near_pairs(&rows, cut, 16);
        let secs = started.elapsed().as_secs_f64();
        let found: HashSet<(usize, usize)> = pairs.iter().map(|&(i, j, _)| (i, j)).collect();
        let (mut exact, mut hit) = (0, 0);
        for s in 0..200.min(n) {
            let i = s * n / 200.min(n);
            for j in 0..n {
                if j != i && f64::from(dot(rows.row(i), rows.row(j))) >= cut {
                    exact += 1;
                    hit += usize::from(found.contains(&(i.min(j), i.max(j))));
                }
            }
        }
        println!(
            "{n} vectors x {dim}: near_pairs {secs:.2} s, {} pairs; sampled recall {hit}/{exact}",
            pairs.len()
        );
        // what a sleep pass pays: the three views of n lessons, triggers
        // and actions drawn apart, the whole lesson their normalised sum
        let action = self::rows(n, dim, &mut rng);
        let mut lesson = Rows::new(dim);
        for i in 0..n {
            lesson.push_stored(&lesson_vector(rows.row(i), action.row(i)));
        }
        let views = Views {
            trigger: rows,
            lesson,
            cuts: Cuts {
                trigger: cut,
                lesson: cut,
                action: cut,
            },
        };
        let started = Instant::now();
        let pairs = views.same_situation_pairs(16).len() + near_pairs(&action, cut, 16).len();
        println!(
            "{n} lessons, three views: {:.2} s, {pairs} pairs",
            started.elapsed().as_secs_f64()
        );
    }
}
