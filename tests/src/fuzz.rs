//! A small mutation fuzzer that runs on stable Rust: seed inputs, a
//! dictionary of the format's own tokens, and random edits (byte flips,
//! inserted tokens repeated up to 100 000 times for deep nesting, spliced,
//! duplicated and cut ranges). It sees no coverage, so it finds what
//! structure-aware noise finds — panics on odd boundaries, unbounded
//! recursion, quadratic blow-ups — not deep logic bugs.
//!
//! `SILT_FUZZ_ITERS` sets the inputs per target (each target has its CI
//! default), `SILT_FUZZ_SEED` replays a run, `SILT_FUZZ_SHOW=1` prints the
//! tool errors the arguments target gets. A failing input is written to
//! `$SILT_FUZZ_OUT` (default: the system temp folder) and named in the
//! panic message with the seed.

use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

/// xorshift64*: deterministic from its seed, good enough for mutation.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// A length that is usually small and sometimes huge.
    fn repeat_count(&mut self) -> usize {
        match self.below(10) {
            0 => 10_000 + self.below(90_000),
            1..=2 => 100 + self.below(900),
            _ => 1 + self.below(8),
        }
    }
}

/// The run's seed: `$SILT_FUZZ_SEED`, else the clock.
pub fn seed() -> u64 {
    std::env::var("SILT_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        })
}

/// Inputs per target: `$SILT_FUZZ_ITERS`, else `default`.
pub fn iterations(default: usize) -> usize {
    std::env::var("SILT_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// One mutated input from `corpus`, using `dictionary` tokens.
pub fn mutate(rng: &mut Rng, corpus: &[&[u8]], dictionary: &[&[u8]]) -> Vec<u8> {
    let mut out = corpus[rng.below(corpus.len())].to_vec();
    for _ in 0..1 + rng.below(6) {
        let at = if out.is_empty() {
            0
        } else {
            rng.below(out.len() + 1)
        };
        match rng.below(8) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            1 => out.insert(at, rng.next_u64() as u8),
            2 | 3 if !dictionary.is_empty() => {
                let token = dictionary[rng.below(dictionary.len())];
                let n = rng.repeat_count();
                let block: Vec<u8> = token.repeat(n);
                out.splice(at..at, block);
            }
            4 if !out.is_empty() => {
                let end = (at + 1 + rng.below(64)).min(out.len());
                let start = at.min(end);
                out.drain(start..end);
            }
            5 if !out.is_empty() => {
                let start = rng.below(out.len());
                let end = (start + 1 + rng.below(256)).min(out.len());
                let piece = out[start..end].to_vec();
                let n = rng.repeat_count().min(1000);
                out.splice(at..at, piece.repeat(n));
            }
            6 => {
                let other = corpus[rng.below(corpus.len())];
                if !other.is_empty() {
                    let start = rng.below(other.len());
                    out.splice(at..at, other[start..].iter().copied());
                }
            }
            _ => out.truncate(at),
        }
    }
    out
}

/// Runs `target` on `iterations` mutated inputs. A panic, or an input
/// that takes longer than `slow`, fails the run with the input saved.
pub fn run(
    name: &str,
    default_iterations: usize,
    slow: Duration,
    corpus: &[&[u8]],
    dictionary: &[&[u8]],
    mut target: impl FnMut(&[u8]),
) {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let n = iterations(default_iterations);
    let started = Instant::now();
    for i in 0..n {
        let input = mutate(&mut rng, corpus, dictionary);
        let t = Instant::now();
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| target(&input)));
        let took = t.elapsed();
        let failure = match outcome {
            Err(_) => Some("panicked".to_string()),
            Ok(()) if took > slow => Some(format!("took {took:?} (limit {slow:?})")),
            Ok(()) => None,
        };
        if let Some(what) = failure {
            let dir = std::env::var_os("SILT_FUZZ_OUT")
                .map(std::path::PathBuf::from)
                .unwrap_or_else(std::env::temp_dir);
            let path = dir.join(format!("silt-fuzz-{name}-{seed}-{i}"));
            let _ = std::fs::write(&path, &input);
            panic!(
                "fuzz {name}: input {i} {what}; saved to {} (SILT_FUZZ_SEED={seed} replays the run)",
                path.display()
            );
        }
    }
    eprintln!(
        "fuzz {name}: {n} inputs in {:.1} s, seed {seed}",
        started.elapsed().as_secs_f64()
    );
}

/// A JSON value with 1 to 3 of its nodes replaced by odd values (empty,
/// huge, negative, wrong-typed, deeply nested, control characters), a key
/// dropped or an unknown key added: inputs that parse, so they reach the
/// checks behind the parser.
pub fn mutate_json(rng: &mut Rng, value: &serde_json::Value) -> serde_json::Value {
    let mut out = value.clone();
    for _ in 0..1 + rng.below(3) {
        let mut pointers = Vec::new();
        pointers_of(&out, String::new(), &mut pointers);
        let pointer = pointers[rng.below(pointers.len())].clone();
        // now and then the node goes altogether
        if rng.below(8) == 0
            && let Some((parent, key)) = pointer.rsplit_once('/')
            && let Some(serde_json::Value::Object(m)) = out.pointer_mut(parent)
        {
            m.remove(&key.replace("~1", "/").replace("~0", "~"));
            continue;
        }
        if let Some(node) = out.pointer_mut(&pointer) {
            *node = odd_value(rng, node);
        }
    }
    out
}

/// The JSON pointer of every node under `v` (`at` is its own).
fn pointers_of(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, child) in m {
                let key = k.replace('~', "~0").replace('/', "~1");
                pointers_of(child, format!("{at}/{key}"), out);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                pointers_of(child, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

fn odd_value(rng: &mut Rng, old: &serde_json::Value) -> serde_json::Value {
    use serde_json::{Value, json};
    match rng.below(14) {
        0 => json!(""),
        1 => json!(" \t\n"),
        2 => json!("x".repeat(1 + rng.below(200_000))),
        3 => json!("\u{0}\u{202e}é😀\\..\"'"),
        4 => json!(-1),
        5 => json!(0),
        6 => json!(1e308),
        7 => json!(u64::MAX),
        8 => json!(0.5),
        9 => Value::Null,
        10 => json!(true),
        11 => {
            let mut v = json!([]);
            for _ in 0..rng.below(300) {
                v = json!([v]);
            }
            v
        }
        12 => match old {
            Value::Object(m) => {
                let mut m = m.clone();
                m.insert("unknown_field".into(), json!(1));
                Value::Object(m)
            }
            other => json!([other.clone(), other.clone()]),
        },
        _ => json!({"a": old.clone()}),
    }
}
