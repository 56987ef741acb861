//! The benchmark's generated ledger: a deterministic ledger of lesson
//! families (about four entries each) that repeat, narrow or contradict one
//! lesson, written in made-up words so families share nothing: candidate
//! pairs grow with the ledger, and the time shows the candidate search's
//! own scaling. (With the reference's candidate threshold of 0.18, lessons
//! that share a common phrase such as "for Claude" are all candidates of
//! each other, so a ledger full of them has quadratically many pairs
//! whatever the search.) `silt bench-ledger` writes it as a Sediment
//! ledger; the `candidates_scale` example times the search on its triggers.

/// The actions lessons prefer.
pub const ACTIONS: [&str; 16] = [
    "write the test first",
    "use XML tags for structure",
    "keep it terse",
    "take a backup first",
    "run the smoke tests",
    "pin the versions",
    "log the request id",
    "add a retry with backoff",
    "review the diff twice",
    "wrap it in a transaction",
    "ask before deleting",
    "document the flag",
    "measure before optimising",
    "split the change",
    "anchor reasoning on HTF bias first",
    "inject explicit step-by-step CoT",
];

/// One generated lesson; times are whole days before "now".
#[derive(Debug, Clone, PartialEq)]
pub struct Lesson {
    pub when: String,
    pub prefer: String,
    pub confidence: f64,
    pub created_days_ago: u32,
    pub confirmed_days_ago: u32,
    pub hit_count: u32,
    pub confirm_count: u32,
}

/// `n` lessons; the same `n` always gives the same lessons.
pub fn lessons(n: usize) -> Vec<Lesson> {
    let mut seed = 0x5eed_u64;
    let mut next = move |m: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % m
    };
    // made-up words of random letters: project names, files, identifiers
    let word = |next: &mut dyn FnMut(usize) -> usize| -> String {
        (0..4 + next(4))
            .map(|_| (b'a' + next(26) as u8) as char)
            .collect()
    };
    let families = (n / 4).max(1);
    let bases: Vec<(String, &str)> = (0..families)
        .map(|_| {
            let when = (0..4)
                .map(|_| word(&mut next))
                .collect::<Vec<_>>()
                .join(" ");
            (when, ACTIONS[next(ACTIONS.len())])
        })
        .collect();
    (0..n)
        .map(|_| {
            let (base_when, base_action) = &bases[next(families)];
            // the same lesson again, a narrower sibling, or its contradiction
            let (when, prefer) = match next(4) {
                0 | 1 => (base_when.clone(), base_action.to_string()),
                2 => (
                    format!("{base_when} {}", word(&mut next)),
                    base_action.to_string(),
                ),
                _ => (base_when.clone(), format!("do not {base_action}")),
            };
            let confirm_count = next(4) as u32;
            Lesson {
                when,
                prefer,
                confidence: 0.3 + next(50) as f64 / 100.0,
                created_days_ago: next(60) as u32,
                confirmed_days_ago: next(30) as u32,
                hit_count: next(10) as u32,
                confirm_count,
            }
        })
        .collect()
}

/// Texts for timing encoders, the same on every run: `n` short ones (one
/// lesson each, "WHEN ... PREFER ...") or, when `long`, passages of ten
/// lessons each, longer than a transformer's 256-token cut, like the file
/// previews grep asks about.
pub fn bench_texts(n: usize, long: bool) -> Vec<String> {
    let per = if long { 10 } else { 1 };
    lessons(n * per)
        .chunks(per)
        .map(|c| {
            c.iter()
                .map(|l| format!("WHEN {} PREFER {}.", l.when, l.prefer))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}
