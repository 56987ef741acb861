//! The benchmark's generated ledger: a deterministic ledger of lesson
//! families (about four entries each) that repeat, narrow or contradict one
//! lesson, written in made-up words so families share nothing: candidate
//! pairs grow with the ledger, and the time shows the candidate search's
//! own scaling. (With the reference's candidate threshold of 0.18, lessons
//! that share a common phrase such as "for Claude" are all candidates of
//! each other, so a ledger full of them has quadratically many pairs
//! whatever the search.) `silt-bench ledger` writes it as a Sediment
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
    /// The trigger: four to five made-up words.
    pub when: String,
    /// The action: one of [`ACTIONS`], or "do not" one of them.
    pub prefer: String,
    /// Stored base confidence, 0.30 to 0.79.
    pub confidence: f64,
    /// Days before now it was captured (0 to 59).
    pub created_days_ago: u32,
    /// Days before now it was last confirmed (0 to 29), decay counted from then.
    pub confirmed_days_ago: u32,
    /// Times recalled (0 to 9).
    pub hit_count: u32,
    /// Times confirmed (0 to 3).
    pub confirm_count: u32,
}

impl Lesson {
    /// The lesson as a ledger entry under `id`, its days counted back
    /// from `now`.
    pub fn entry(self, id: String, now: f64) -> super::Entry {
        let mut e = super::Entry::new(
            id,
            self.when,
            self.prefer,
            self.confidence,
            u64::from(self.confirm_count),
            now - f64::from(self.created_days_ago) * super::DAY,
        );
        e.last_confirmed = now - f64::from(self.confirmed_days_ago) * super::DAY;
        e.decayed_at = Some(e.last_confirmed);
        e.hit_count = u64::from(self.hit_count);
        e
    }
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

/// What agents work on, by how often they come up (most often first).
pub(crate) const VERBS: [&str; 12] = [
    "editing",
    "testing",
    "refactoring",
    "reviewing",
    "debugging",
    "deploying",
    "migrating",
    "profiling",
    "documenting",
    "releasing",
    "upgrading",
    "benchmarking",
];
pub(crate) const SUBJECTS: [&str; 40] = [
    "the parser",
    "the HTTP client",
    "the database schema",
    "the CI pipeline",
    "the auth middleware",
    "the cache layer",
    "the build script",
    "the config loader",
    "the retry policy",
    "the logging setup",
    "the CLI flags",
    "the test fixtures",
    "the docs site",
    "the release workflow",
    "the websocket server",
    "the payment service",
    "the search index",
    "the job queue",
    "the rate limiter",
    "the feature flags",
    "the API client",
    "the SQL migrations",
    "the Dockerfile",
    "the Helm chart",
    "the frontend bundle",
    "the error handling",
    "the metrics exporter",
    "the scheduler",
    "the plugin loader",
    "the session store",
    "the email templates",
    "the upload handler",
    "the permission checks",
    "the GraphQL resolvers",
    "the cron jobs",
    "the lockfile",
    "the date parsing",
    "the i18n strings",
    "the websocket reconnect",
    "the PDF export",
];
const QUALIFIERS: [&str; 10] = [
    "before a release",
    "on a Friday",
    "with Postgres",
    "after a dependency bump",
    "under load",
    "for the mobile app",
    "on Windows",
    "in a hotfix",
    "with flaky tests",
    "during an incident",
];
const AGENT_ACTIONS: [&str; 40] = [
    "run the focused tests first",
    "keep the change small",
    "take a backup first",
    "pin the versions",
    "ask before deleting anything",
    "read the existing tests first",
    "write the test first",
    "check the changelog",
    "log the request id",
    "add a retry with backoff",
    "review the diff twice",
    "wrap it in a transaction",
    "document the flag",
    "measure before optimising",
    "split the change",
    "run the linter before committing",
    "update the snapshot files",
    "use the staging database",
    "bump the version in one commit",
    "keep the old path working",
    "grep for other callers",
    "clear the build cache",
    "run it under the race detector",
    "check the error budget",
    "ping the owning team",
    "use feature flags for the rollout",
    "keep secrets out of logs",
    "prefer the existing helper",
    "add a regression test",
    "check the migration is reversible",
    "run the full suite at the end",
    "avoid touching generated files",
    "keep the API stable",
    "note the decision in the ADR",
    "test on a copy of production data",
    "rebase before merging",
    "set a timeout",
    "profile with the release build",
    "use UTC everywhere",
    "keep the diff readable",
];

/// A deterministic sampler of ranks with probability ∝ 1 / (rank + 1)^1.1.
struct Zipf {
    seed: u64,
}

impl Zipf {
    fn next(&mut self) -> u64 {
        self.seed = self
            .seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.seed >> 11
    }

    fn uniform(&mut self, m: usize) -> usize {
        (self.next() % m as u64) as usize
    }

    fn rank(&mut self, m: usize) -> usize {
        let weight = |r: usize| 1.0 / ((r + 1) as f64).powf(1.1);
        let total: f64 = (0..m).map(weight).sum();
        let mut x = (self.next() as f64 / (1u64 << 53) as f64) * total;
        for r in 0..m {
            x -= weight(r);
            if x <= 0.0 {
                return r;
            }
        }
        m - 1
    }
}

/// [`agent_lessons`] as ledger entries (ids are their positions in hex),
/// their days counted back from `now`.
pub fn agent_entries(n: usize, now: f64) -> Vec<super::Entry> {
    agent_lessons(n)
        .into_iter()
        .enumerate()
        .map(|(i, l)| l.entry(format!("{i:08x}"), now))
        .collect()
}

/// `n` lessons as agents write them: a few verbs, subjects, repositories
/// and actions recur with Zipf frequencies ("editing the parser in repo r3
/// → run the focused tests first"), so many lessons share phrases, as in a
/// real ledger — the opposite of [`lessons`], whose families share nothing.
/// The same `n` always gives the same lessons.
pub fn agent_lessons(n: usize) -> Vec<Lesson> {
    let mut z = Zipf { seed: 0xa9e7 };
    (0..n)
        .map(|_| {
            let when = agent_situation(&mut z);
            let prefer = AGENT_ACTIONS[z.rank(AGENT_ACTIONS.len())].to_string();
            Lesson {
                when,
                prefer,
                confidence: 0.3 + z.uniform(50) as f64 / 100.0,
                created_days_ago: z.uniform(60) as u32,
                confirmed_days_ago: z.uniform(30) as u32,
                hit_count: z.uniform(10) as u32,
                confirm_count: z.uniform(4) as u32,
            }
        })
        .collect()
}

/// `n` recall contexts drawn like [`agent_lessons`]' situations (another
/// stream of the same distributions).
pub fn agent_contexts(n: usize) -> Vec<String> {
    let mut z = Zipf { seed: 0xc0ffee };
    (0..n).map(|_| agent_situation(&mut z)).collect()
}

fn agent_situation(z: &mut Zipf) -> String {
    let verb = VERBS[z.rank(VERBS.len())];
    let subject = SUBJECTS[z.rank(SUBJECTS.len())];
    let repo = z.rank(200);
    match z.uniform(3) {
        0 => format!(
            "{verb} {subject} in repo r{repo} {}",
            QUALIFIERS[z.rank(QUALIFIERS.len())]
        ),
        _ => format!("{verb} {subject} in repo r{repo}"),
    }
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
