//! A plugin's release version (`[plugin] version` in `plugin.toml`):
//! semantic versioning's `MAJOR.MINOR.PATCH[-PRE][+BUILD]`, ordered as
//! semver orders it. The manifest's digest is what a signature signs, so
//! a signed manifest signs its version too: an update that would go back
//! to an older signed release is told apart from a new one.

use std::cmp::Ordering;
use std::fmt;

use anyhow::{Result, bail};

/// A parsed version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    numbers: [u64; 3],
    /// The pre-release identifiers (`1.0.0-rc.1` has `rc`, `1`).
    pre: Vec<String>,
    text: String,
}

impl Version {
    /// Reads `MAJOR.MINOR.PATCH[-PRE][+BUILD]`, kept as written for display; a
    /// number with a leading zero or an empty pre-release identifier is refused.
    pub fn parse(text: &str) -> Result<Version> {
        let bad = || {
            anyhow::anyhow!(
                "version '{text}' must be MAJOR.MINOR.PATCH (semantic versioning, such as 1.2.0 \
                 or 1.2.0-rc.1)"
            )
        };
        // build metadata takes no part in the order
        let core = text.split_once('+').map_or(text, |(c, _)| c);
        let (numbers, pre) = core
            .split_once('-')
            .map_or((core, None), |(n, p)| (n, Some(p)));
        let parts: Vec<&str> = numbers.split('.').collect();
        if parts.len() != 3 {
            return Err(bad());
        }
        let mut out = [0u64; 3];
        for (slot, part) in out.iter_mut().zip(&parts) {
            if part.is_empty()
                || !part.bytes().all(|b| b.is_ascii_digit())
                || (part.len() > 1 && part.starts_with('0'))
            {
                return Err(bad());
            }
            *slot = part.parse().map_err(|_| bad())?;
        }
        let pre: Vec<String> = match pre {
            Some(p) => p.split('.').map(str::to_string).collect(),
            None => Vec::new(),
        };
        if pre
            .iter()
            .any(|id| id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        {
            return Err(bad());
        }
        Ok(Version {
            numbers: out,
            pre,
            text: text.to_string(),
        })
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Version) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Version {
    /// Semver precedence: numbers first; a pre-release comes before its
    /// release; pre-release identifiers compare numerically when both are
    /// numbers, a number before a word, and a longer list after its prefix.
    fn cmp(&self, other: &Version) -> Ordering {
        self.numbers
            .cmp(&other.numbers)
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => {
                    for (a, b) in self.pre.iter().zip(&other.pre) {
                        let order = match (a.parse::<u64>(), b.parse::<u64>()) {
                            (Ok(x), Ok(y)) => x.cmp(&y),
                            (Ok(_), Err(_)) => Ordering::Less,
                            (Err(_), Ok(_)) => Ordering::Greater,
                            (Err(_), Err(_)) => a.cmp(b),
                        };
                        if order != Ordering::Equal {
                            return order;
                        }
                    }
                    self.pre.len().cmp(&other.pre.len())
                }
            })
            // equal precedence, different build metadata: still ordered,
            // so Ord agrees with Eq
            .then_with(|| self.text.cmp(&other.text))
    }
}

/// What an update does to the version installed: None when it may go on
/// without a word, else the note to show (Ok) or why it is refused
/// without `--allow-downgrade` (Err).
pub fn judge_update(
    name: &str,
    installed: Option<&str>,
    fetched: Option<&str>,
    allow_downgrade: bool,
) -> Result<Option<String>> {
    let refuse = |why: String| -> Result<Option<String>> {
        if allow_downgrade {
            Ok(Some(format!(
                "{why}; installing it, as --allow-downgrade says"
            )))
        } else {
            bail!(
                "{why}: a tag moved back to an old release looks like this. Nothing was changed; \
                 run again with --allow-downgrade to install it anyway"
            )
        }
    };
    match (installed, fetched) {
        (Some(old), Some(new)) => {
            let (old_v, new_v) = (Version::parse(old)?, Version::parse(new)?);
            if new_v < old_v {
                refuse(format!(
                    "plugin '{name}' {new} is older than the installed {old}"
                ))
            } else {
                Ok(None)
            }
        }
        (Some(old), None) => refuse(format!(
            "plugin '{name}' as fetched states no version, so it may be older than the \
             installed {old}"
        )),
        (None, Some(_)) => Ok(None),
        (None, None) => Ok(Some(format!(
            "plugin '{name}' states no version, before or now: silt cannot tell whether this \
             update goes back to an older release"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_as_semver_does() {
        let ordered = [
            "0.9.9",
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
            "1.0.1",
            "1.2.0",
            "1.10.0",
            "2.0.0",
        ];
        for pair in ordered.windows(2) {
            let (a, b) = (
                Version::parse(pair[0]).unwrap(),
                Version::parse(pair[1]).unwrap(),
            );
            assert!(a < b, "{a} < {b}");
        }
        for bad in [
            "1",
            "1.2",
            "1.2.3.4",
            "v1.2.3",
            "01.2.3",
            "1.2.x",
            "1.2.3-",
            "1.2.3-a..b",
            "",
        ] {
            assert!(Version::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Version::parse("1.2.3+build.7").unwrap().to_string(),
            "1.2.3+build.7"
        );
    }

    #[test]
    fn an_update_to_an_older_version_needs_allow_downgrade() {
        let err = judge_update("p", Some("1.2.0"), Some("1.1.9"), false)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("1.1.9 is older than the installed 1.2.0")
                && err.contains("--allow-downgrade"),
            "{err}"
        );
        let allowed = judge_update("p", Some("1.2.0"), Some("1.1.9"), true)
            .unwrap()
            .unwrap();
        assert!(
            allowed.contains("1.1.9 is older than the installed 1.2.0"),
            "{allowed}"
        );
        // a versioned install is not given up for an unversioned release
        let err = judge_update("p", Some("1.2.0"), None, false)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("states no version") && err.contains("1.2.0"),
            "{err}"
        );
        assert_eq!(
            judge_update("p", Some("1.2.0"), Some("1.2.0"), false).unwrap(),
            None
        );
        assert_eq!(
            judge_update("p", Some("1.2.0"), Some("1.3.0"), false).unwrap(),
            None
        );
        assert_eq!(judge_update("p", None, Some("0.1.0"), false).unwrap(), None);
        // an old unversioned plugin still updates, with a word
        let note = judge_update("p", None, None, false).unwrap().unwrap();
        assert!(note.contains("cannot tell"), "{note}");
    }
}
