//! Reading an answer: the probability of each label from the top
//! log-probabilities of the first answer token.

/// One candidate for the answer token, as the server listed it.
#[derive(Debug, Clone, PartialEq)]
pub struct TopToken {
    /// The token's text, as the server wrote it.
    pub token: String,
    /// Its natural-log probability (0 or below for a real probability).
    pub logprob: f64,
}

/// Why no answer could be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReadError {
    /// The reply carried no log-probabilities at all: the server does not
    /// return them for this endpoint (or was not asked).
    #[error("the server returned no log-probabilities")]
    NoLogprobs,
    /// None of the top tokens is a label: the model answered something
    /// else. The tokens it preferred are listed.
    #[error("the model's top tokens were none of the labels ({0})")]
    NoLabel(String),
}

/// What a label absent from the top list is given: the server listed the
/// k most probable tokens, so an absent label is at most as probable as
/// the least probable listed one. It gets half that (never less than
/// `MIN_PROBABILITY`), so absence counts as "less likely than anything
/// shown", never as impossible.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabelFloor;

/// The smallest probability any label is given.
pub const MIN_PROBABILITY: f64 = 1e-6;

/// Log-probabilities at or below this are a server's sentinel for "not
/// computed" (llama.cpp and some proxies send -9999 or -inf) and read as
/// absent.
const SENTINEL_LOGPROB: f64 = -1000.0;

/// The label a token stands for: surrounding whitespace and a trailing
/// "." ")" or ":" dropped, case ignored ("A", " A", "a", "A." all read A).
fn normalise(token: &str) -> String {
    token
        .trim()
        .trim_end_matches(['.', ')', ':'])
        .trim_start_matches('(')
        .trim()
        .to_uppercase()
}

/// Each label's probability, renormalised over `labels`, from the top
/// tokens of the first answer token. Tokens that read as the same label
/// ("A" and " A") add up. NaN, infinite and sentinel log-probabilities are
/// ignored; a label not listed gets the [`LabelFloor`].
pub fn label_probabilities(top: &[TopToken], labels: &[&str]) -> Result<Vec<f64>, ReadError> {
    let usable: Vec<(String, f64)> = top
        .iter()
        .filter(|t| t.logprob.is_finite() && t.logprob > SENTINEL_LOGPROB && t.logprob <= 1e-9)
        .map(|t| (normalise(&t.token), t.logprob.min(0.0).exp()))
        .collect();
    if usable.is_empty() {
        return Err(ReadError::NoLogprobs);
    }
    let wanted: Vec<String> = labels.iter().map(|l| normalise(l)).collect();
    let mut mass = vec![0.0f64; labels.len()];
    let mut found = vec![false; labels.len()];
    for (token, p) in &usable {
        if let Some(i) = wanted.iter().position(|w| w == token) {
            mass[i] += p;
            found[i] = true;
        }
    }
    if !found.iter().any(|&f| f) {
        let listed: Vec<String> = top
            .iter()
            .take(5)
            .map(|t| format!("{:?}", t.token))
            .collect();
        return Err(ReadError::NoLabel(listed.join(", ")));
    }
    let least = usable.iter().map(|(_, p)| *p).fold(f64::INFINITY, f64::min);
    let floor = (least / 2.0).max(MIN_PROBABILITY);
    for (m, f) in mass.iter_mut().zip(&found) {
        if !f {
            *m = floor;
        }
    }
    let total: f64 = mass.iter().sum();
    Ok(mass.into_iter().map(|m| m / total).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn top(pairs: &[(&str, f64)]) -> Vec<TopToken> {
        pairs
            .iter()
            .map(|(t, l)| TopToken {
                token: t.to_string(),
                logprob: *l,
            })
            .collect()
    }

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    #[test]
    fn spellings_of_one_label_add_up_and_the_rest_is_dropped() {
        // A: 0.5 + 0.2 ("A" and " A"), b: 0.1, "The": ignored
        let t = top(&[
            ("A", 0.5f64.ln()),
            (" A", 0.2f64.ln()),
            ("The", 0.15f64.ln()),
            ("b", 0.1f64.ln()),
        ]);
        let p = label_probabilities(&t, &["A", "B"]).unwrap();
        assert!(close(&p, &[0.875, 0.125]), "{p:?}");
        let dotted = top(&[("A.", 0.6f64.ln()), ("(B)", 0.2f64.ln())]);
        assert!(close(
            &label_probabilities(&dotted, &["A", "B"]).unwrap(),
            &[0.75, 0.25]
        ));
    }

    #[test]
    fn an_absent_label_gets_half_the_least_listed_probability() {
        let t = top(&[("A", 0.8f64.ln()), ("B", 0.1f64.ln()), ("x", 0.02f64.ln())]);
        let p = label_probabilities(&t, &["A", "B", "C"]).unwrap();
        let total = 0.8 + 0.1 + 0.01;
        assert!(
            close(&p, &[0.8 / total, 0.1 / total, 0.01 / total]),
            "{p:?}"
        );
    }

    #[test]
    fn nan_and_sentinels_are_ignored() {
        let t = top(&[
            ("A", f64::NAN),
            ("B", 0.3f64.ln()),
            ("A", -9999.0),
            ("C", f64::NEG_INFINITY),
        ]);
        let p = label_probabilities(&t, &["A", "B"]).unwrap();
        // only B is usable; A gets the floor of half of 0.3
        assert!(close(&p, &[0.15 / 0.45, 0.3 / 0.45]), "{p:?}");
    }

    #[test]
    fn no_logprobs_and_no_label_are_errors() {
        assert_eq!(
            label_probabilities(&[], &["A", "B"]),
            Err(ReadError::NoLogprobs)
        );
        let only_sentinels = top(&[("A", -9999.0), ("B", f64::NAN)]);
        assert_eq!(
            label_probabilities(&only_sentinels, &["A", "B"]),
            Err(ReadError::NoLogprobs)
        );
        let prose = top(&[("The", -0.1), ("I", -2.5)]);
        match label_probabilities(&prose, &["A", "B"]) {
            Err(ReadError::NoLabel(listed)) => assert!(listed.contains("\"The\""), "{listed}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_positive_logprob_is_not_a_probability() {
        let t = top(&[("A", 0.5), ("B", 0.2f64.ln())]);
        let p = label_probabilities(&t, &["A", "B"]).unwrap();
        // A's impossible value is dropped: A gets the floor
        assert!(p[1] > p[0], "{p:?}");
    }
}
