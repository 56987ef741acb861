//! Corrections for a model's lean toward some labels whatever the content.

use std::str::FromStr;

use super::read::MIN_PROBABILITY;

/// Which corrections a judge applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Debias {
    /// Read the labels as the model gives them.
    None,
    /// Divide each label's probability by the model's probability for it
    /// on a content-free item asked the same way (contextual
    /// calibration), then renormalise: one extra request per question and
    /// label order.
    Prior,
    /// Ask once per cyclic rotation of the options, so each option is
    /// shown under every letter once, and average: n requests per item
    /// for n options.
    Rotate,
    /// Both: rotate, and divide each rotation by its own prior.
    #[default]
    Both,
}

impl Debias {
    /// Whether probabilities are divided by the content-free prior.
    pub fn divides_prior(self) -> bool {
        matches!(self, Debias::Prior | Debias::Both)
    }

    /// Whether the options are asked under every rotation of the letters.
    pub fn rotates(self) -> bool {
        matches!(self, Debias::Rotate | Debias::Both)
    }

    /// The name the settings use.
    pub fn name(self) -> &'static str {
        match self {
            Debias::None => "none",
            Debias::Prior => "prior",
            Debias::Rotate => "rotate",
            Debias::Both => "both",
        }
    }
}

impl FromStr for Debias {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" | "off" => Ok(Debias::None),
            "prior" => Ok(Debias::Prior),
            "rotate" => Ok(Debias::Rotate),
            "both" | "" => Ok(Debias::Both),
            other => Err(format!(
                "debias '{other}' is not one of none, prior, rotate, both"
            )),
        }
    }
}

/// The option orders to ask with: `orders[r][k]` is the option shown under
/// the k-th letter in rotation r.
pub fn orders(n: usize, debias: Debias) -> Vec<Vec<usize>> {
    let rotations = if debias.rotates() { n } else { 1 };
    (0..rotations)
        .map(|r| (0..n).map(|k| (k + r) % n).collect())
        .collect()
}

/// A label distribution with the prior for each label divided out and the
/// result renormalised (a prior below [`MIN_PROBABILITY`] counts as that).
pub fn divide_prior(labels: &[f64], prior: &[f64]) -> Vec<f64> {
    let raw: Vec<f64> = labels
        .iter()
        .zip(prior)
        .map(|(p, q)| p / q.max(MIN_PROBABILITY))
        .collect();
    let total: f64 = raw.iter().sum();
    if total.is_nan() || total <= 0.0 || !total.is_finite() {
        return labels.to_vec();
    }
    raw.into_iter().map(|p| p / total).collect()
}

/// Option probabilities from the label distributions read under each
/// order: each option's probability averaged over the letters it was
/// shown under.
pub fn combine(orders: &[Vec<usize>], per_order: &[Vec<f64>]) -> Vec<f64> {
    let n = orders.first().map_or(0, Vec::len);
    let mut out = vec![0.0; n];
    for (order, labels) in orders.iter().zip(per_order) {
        for (k, &option) in order.iter().enumerate() {
            out[option] += labels[k];
        }
    }
    let total: f64 = out.iter().sum();
    if total > 0.0 {
        out.iter_mut().for_each(|p| *p /= total);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotations_show_each_option_under_every_letter() {
        assert_eq!(orders(3, Debias::None), vec![vec![0, 1, 2]]);
        assert_eq!(orders(3, Debias::Prior), vec![vec![0, 1, 2]]);
        let r = orders(3, Debias::Both);
        assert_eq!(r, vec![vec![0, 1, 2], vec![1, 2, 0], vec![2, 0, 1]]);
    }

    #[test]
    fn a_model_that_always_says_a_averages_to_no_preference() {
        let r = orders(2, Debias::Rotate);
        // whatever is under A gets 0.9
        let p = combine(&r, &[vec![0.9, 0.1], vec![0.9, 0.1]]);
        assert!(
            (p[0] - 0.5).abs() < 1e-12 && (p[1] - 0.5).abs() < 1e-12,
            "{p:?}"
        );
        // a real preference for option 1 survives the rotation
        let p = combine(&r, &[vec![0.3, 0.7], vec![0.8, 0.2]]);
        assert!(p[1] > 0.7, "{p:?}");
    }

    #[test]
    fn dividing_the_prior_removes_a_lean_toward_a_letter() {
        let p = divide_prior(&[0.8, 0.2], &[0.8, 0.2]);
        assert!((p[0] - 0.5).abs() < 1e-12, "{p:?}");
        let p = divide_prior(&[0.6, 0.4], &[0.8, 0.2]);
        assert!(p[1] > p[0], "{p:?}");
        // a zero prior is floored, not a division by zero
        assert!(
            divide_prior(&[0.5, 0.5], &[1.0, 0.0])
                .iter()
                .all(|p| p.is_finite())
        );
    }

    #[test]
    fn settings_parse_by_name() {
        assert_eq!("Prior".parse::<Debias>(), Ok(Debias::Prior));
        assert_eq!("".parse::<Debias>(), Ok(Debias::Both));
        assert!(
            "sometimes"
                .parse::<Debias>()
                .unwrap_err()
                .contains("none, prior")
        );
    }
}
