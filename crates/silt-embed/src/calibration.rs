//! From cosines to probabilities.
//!
//! Three curves, fitted per model kind on STS Benchmark (the permissive
//! subset of the official files; `examples/fit_embedding.rs` reproduces
//! them, docs/JUDGES.md records the runs):
//!
//! - `beta`: the softmax sharpness over an item's cosines with each
//!   criterion, fitted like the lexical judge's by maximum likelihood on
//!   two-option paraphrase choices (sts-train), reported on sts-test;
//! - `same`: P(paraphrase | cosine), a Platt curve fitted on sts-train
//!   pairs scored >= 4 (yes) against pairs scored < 3 (no);
//! - `related`: P(related | cosine), pairs scored >= 2 ("not equivalent but
//!   share some details") against pairs scored < 1 (different topics).
//!
//! A fourth is not from STS: `siblings`, P(two triggers are situations one
//! action generalises over | cosine), fitted on the dev split of the
//! project's labelled lessons (`examples/fit_siblings.rs`). STS calls
//! short task phrases of one field ("calling the payments API" /
//! "fetching data from a partner's REST endpoint") different topics, so
//! its curves never see them as siblings.
//!
//! A model folder may carry its own fit as `silt-calibration.json` (the
//! fitting example writes it with `--write`); otherwise the constants of
//! its kind apply.

use serde::{Deserialize, Serialize};

use crate::model::Kind;

/// A logistic curve `1 / (1 + exp(-(a * x + b)))`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Platt {
    /// Slope per unit of cosine; above 0 for a curve that rises with it.
    pub a: f64,
    /// Offset: the curve is 1/2 where `a * x + b` is 0.
    pub b: f64,
}

impl Platt {
    /// The probability at `x` (a cosine), in (0, 1).
    pub fn p(&self, x: f64) -> f64 {
        1.0 / (1.0 + (-(self.a * x + self.b)).exp())
    }

    /// The cosine at which the curve crosses 1/2.
    pub fn midpoint(&self) -> f64 {
        -self.b / self.a
    }

    /// The cosine at which the curve reaches `p` (0 < p < 1).
    pub fn at(&self, p: f64) -> f64 {
        ((p / (1.0 - p)).ln() - self.b) / self.a
    }
}

/// The relatedness below which a task and a lesson's situation count as
/// unrelated (`silt:embed` `unrelated-below`): a low bar, so a lesson
/// worded apart from the task still fires (all-MiniLM-L6-v2 gives
/// "writing the system prompt for an Anthropic LLM" / "Anthropic model as
/// target" 0.40, under its 0.456 midpoint), while a task about something
/// else ("bake a chocolate cake", ≤ 0.15 against coding lessons) does not.
pub const UNRELATED_BELOW_P: f64 = 0.1;

/// The fitted constants of one model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Softmax sharpness over an item's cosines with each criterion.
    pub beta: f64,
    /// P(paraphrase | cosine): STS pairs scored >= 4 against those < 3.
    pub same: Platt,
    /// P(related | cosine): STS pairs scored >= 2 against those < 1.
    pub related: Platt,
    /// P(two triggers are situations one action generalises over | cosine),
    /// fitted on the labelled lessons, not STS.
    pub siblings: Platt,
}

/// A folder's `silt-calibration.json`: a fit written before the siblings
/// curve existed (or by `fit_embedding`, which fits only STS curves) has
/// none, and its kind's applies.
#[derive(Deserialize)]
struct Stored {
    beta: f64,
    same: Platt,
    related: Platt,
    siblings: Option<Platt>,
}

/// The file a model folder may carry its own fit in.
pub const FILE: &str = "silt-calibration.json";

impl Calibration {
    /// The cosine from which two texts count as related (`silt:embed`
    /// `related-above`): where the relatedness curve crosses one half.
    pub fn related_above(&self) -> f64 {
        self.related.midpoint()
    }

    /// The cosine under which a task and a lesson's situation count as
    /// unrelated (`silt:embed` `unrelated-below`; see [`UNRELATED_BELOW_P`]).
    pub fn unrelated_below(&self) -> f64 {
        self.related.at(UNRELATED_BELOW_P)
    }

    /// The constants fitted for all-MiniLM-L6-v2 (transformer) and
    /// potion-base-8M (static).
    pub fn for_kind(kind: Kind) -> Calibration {
        match kind {
            // all-MiniLM-L6-v2 (safetensors sha256 53aa5117...), sts-train.csv
            // of the official STS Benchmark files, permissive subset; test
            // accuracy: choices 0.880, same 0.866, related 0.893
            Kind::Transformer => Calibration {
                beta: 9.981,
                same: Platt {
                    a: 15.645,
                    b: -12.125,
                },
                related: Platt {
                    a: 17.208,
                    b: -7.845,
                },
                // fit_siblings on docs/eval's dev split (21 sibling trigger
                // pairs, 27 not); midpoint cosine 0.183
                siblings: Platt {
                    a: 25.156,
                    b: -4.600,
                },
            },
            // potion-base-8M (safetensors sha256 f65d0f32...), the same
            // data; test accuracy: choices 0.870, same 0.827, related 0.897
            Kind::Static => Calibration {
                beta: 9.893,
                same: Platt {
                    a: 14.034,
                    b: -10.770,
                },
                related: Platt {
                    a: 14.309,
                    b: -6.534,
                },
                // fit_siblings, the same data (26 not); midpoint 0.202
                siblings: Platt {
                    a: 12.993,
                    b: -2.627,
                },
            },
        }
    }

    /// The folder's own fit if it has one, else its kind's constants; a
    /// fit without a siblings curve takes its kind's.
    pub fn for_folder(dir: &std::path::Path, kind: Kind) -> Result<Calibration, String> {
        match std::fs::read(dir.join(FILE)) {
            Ok(bytes) => {
                let s: Stored = serde_json::from_slice(&bytes)
                    .map_err(|e| format!("{}/{FILE} is not a calibration: {e}", dir.display()))?;
                let c = Calibration {
                    beta: s.beta,
                    same: s.same,
                    related: s.related,
                    siblings: s.siblings.unwrap_or(Calibration::for_kind(kind).siblings),
                };
                let curves = [c.same, c.related, c.siblings];
                let finite =
                    c.beta.is_finite() && curves.iter().all(|p| p.a.is_finite() && p.b.is_finite());
                if !finite || c.beta <= 0.0 || curves.iter().any(|p| p.a <= 0.0) {
                    return Err(format!(
                        "{}/{FILE} has a non-finite or non-increasing curve; refit it with the fit_embedding example",
                        dir.display()
                    ));
                }
                Ok(c)
            }
            Err(_) => Ok(Calibration::for_kind(kind)),
        }
    }
}

/// Fits a Platt curve to (x, label) by Newton's method on the mean log
/// loss, with a tiny ridge so a separable set still converges.
pub fn fit_platt(points: &[(f64, bool)]) -> Platt {
    let (mut a, mut b) = (1.0f64, 0.0f64);
    let n = points.len().max(1) as f64;
    for _ in 0..100 {
        let (mut ga, mut gb, mut haa, mut hab, mut hbb) = (1e-6 * a, 0.0, 1e-6, 0.0, 1e-9);
        for &(x, y) in points {
            let p = Platt { a, b }.p(x);
            let r = p - if y { 1.0 } else { 0.0 };
            let w = (p * (1.0 - p)).max(1e-12);
            ga += r * x / n;
            gb += r / n;
            haa += w * x * x / n;
            hab += w * x / n;
            hbb += w / n;
        }
        let det = haa * hbb - hab * hab;
        if det.abs() < 1e-18 {
            break;
        }
        let da = (hbb * ga - hab * gb) / det;
        let db = (haa * gb - hab * ga) / det;
        a -= da;
        b -= db;
        if da.abs() < 1e-10 && db.abs() < 1e-10 {
            break;
        }
    }
    Platt { a, b }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platt_fit_recovers_a_known_curve() {
        let truth = Platt { a: 12.0, b: -7.0 };
        // deterministic labels at the true rate in each bin
        let mut points = Vec::new();
        for i in 0..200 {
            let x = i as f64 / 200.0;
            let p = truth.p(x);
            for k in 0..50 {
                points.push((x, (k as f64 + 0.5) / 50.0 < p));
            }
        }
        let fit = fit_platt(&points);
        assert!((fit.a - 12.0).abs() < 0.8, "{fit:?}");
        assert!((fit.midpoint() - truth.midpoint()).abs() < 0.01, "{fit:?}");
    }

    #[test]
    fn shipped_constants_are_increasing_curves() {
        for kind in [Kind::Transformer, Kind::Static] {
            let c = Calibration::for_kind(kind);
            assert!(
                c.beta > 0.0 && c.same.a > 0.0 && c.related.a > 0.0,
                "{kind:?}"
            );
            // a paraphrase needs more similarity than relatedness does
            assert!(c.same.midpoint() > c.related.midpoint(), "{kind:?}");
            // situations one action covers need less than STS relatedness
            assert!(c.siblings.a > 0.0, "{kind:?}");
            assert!(c.siblings.midpoint() < c.related.midpoint(), "{kind:?}");
        }
    }

    #[test]
    fn a_fit_without_a_siblings_curve_takes_its_kinds_and_a_bad_one_is_refused() {
        let dir = std::env::temp_dir().join(format!("silt-calibration-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let old =
            r#"{"beta": 9.0, "same": {"a": 15.0, "b": -12.0}, "related": {"a": 17.0, "b": -8.0}}"#;
        std::fs::write(dir.join(FILE), old).unwrap();
        let c = Calibration::for_folder(&dir, Kind::Static).unwrap();
        assert_eq!(c.same, Platt { a: 15.0, b: -12.0 });
        assert_eq!(c.siblings, Calibration::for_kind(Kind::Static).siblings);
        let bad = r#"{"beta": 9.0, "same": {"a": 15.0, "b": -12.0}, "related": {"a": 17.0, "b": -8.0},
            "siblings": {"a": -3.0, "b": 1.0}}"#;
        std::fs::write(dir.join(FILE), bad).unwrap();
        let e = Calibration::for_folder(&dir, Kind::Static).unwrap_err();
        assert!(e.contains("non-increasing"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
