//! Reading STS Benchmark files for offline calibration fits (the fitting
//! examples take the data path on the command line; nothing here reads a
//! fixed location, and no data is shipped).

/// One scored pair: gold similarity 0..5 and the two sentences.
#[derive(Debug, Clone)]
pub struct Pair {
    /// Gold similarity, 0 (unrelated) to 5 (the same meaning).
    pub score: f64,
    /// Sentence 1.
    pub a: String,
    /// Sentence 2.
    pub b: String,
}

/// Reads an STS Benchmark file (tab-separated: genre, source, year, id,
/// score, sentence 1, sentence 2); rows that do not parse are skipped.
pub fn read_pairs(path: &str) -> Vec<Pair> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Some(Pair {
                score: f.get(4)?.parse().ok()?,
                a: f.get(5)?.to_string(),
                b: f.get(6)?.to_string(),
            })
        })
        .collect()
}

/// A two-option choice: which option paraphrases the item.
#[derive(Debug, Clone)]
pub struct Choice {
    /// The sentence to match (a pair's sentence 1).
    pub item: String,
    /// Its paraphrase (the same pair's sentence 2).
    pub right: String,
    /// A distractor: another pair's sentence 2.
    pub wrong: String,
}

/// Every pair scored >= 4 (a paraphrase) becomes two choices: the item is
/// sentence 1, the options its own sentence 2 and a distractor, once an
/// easy one (the sentence 2 seven rows on) and once a hard one (the other
/// sentence 2 that `closeness` rates closest to the item), so a fit sees
/// both clear and close calls.
pub fn paraphrase_choices(pairs: &[Pair], closeness: impl Fn(&str, &str) -> f64) -> Vec<Choice> {
    let n = pairs.len();
    let mut choices = Vec::new();
    for (i, r) in pairs.iter().enumerate().filter(|(_, r)| r.score >= 4.0) {
        choices.push(Choice {
            item: r.a.clone(),
            right: r.b.clone(),
            wrong: pairs[(i + 7) % n].b.clone(),
        });
        let hard = pairs
            .iter()
            .enumerate()
            .filter(|(j, o)| *j != i && o.b != r.b)
            .map(|(_, o)| (closeness(&r.a, &o.b), &o.b))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, s)| s.clone());
        if let Some(wrong) = hard {
            choices.push(Choice {
                item: r.a.clone(),
                right: r.b.clone(),
                wrong,
            });
        }
    }
    choices
}

/// How a softmax of sharpness `beta` does on two-option choices, each given
/// as (score of the right option, score of the wrong one).
#[derive(Debug, Clone, Copy)]
pub struct ChoiceFit {
    /// Mean negative log-likelihood of the right option.
    pub nll: f64,
    /// Share picked right (a tie counts half, as a coin flip would).
    pub accuracy: f64,
    /// Mean probability given to the option picked.
    pub confidence: f64,
}

/// Scores `beta` on `choices`.
pub fn choice_fit(choices: &[[f64; 2]], beta: f64) -> ChoiceFit {
    let (mut nll, mut right, mut confidence) = (0.0, 0.0, 0.0);
    for f in choices {
        let p = crate::lexical::softmax(f, beta);
        nll -= p[0].max(1e-12).ln();
        right += if p[0] > p[1] {
            1.0
        } else if p[0] == p[1] {
            0.5
        } else {
            0.0
        };
        confidence += p[0].max(p[1]);
    }
    let n = choices.len().max(1) as f64;
    ChoiceFit {
        nll: nll / n,
        accuracy: right / n,
        confidence: confidence / n,
    }
}

/// The `beta` in `[lo, hi]` of least nll on `choices` (the likelihood is
/// unimodal in beta: golden-section search).
pub fn fit_beta(choices: &[[f64; 2]], mut lo: f64, mut hi: f64) -> f64 {
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..100 {
        let a = hi - g * (hi - lo);
        let b = lo + g * (hi - lo);
        if choice_fit(choices, a).nll < choice_fit(choices, b).nll {
            hi = b
        } else {
            lo = a
        }
    }
    (lo + hi) / 2.0
}
