//! The one place silt reads its environment. The variables are read once,
//! on first use (the binaries call [`capture`] at start-up), so a value
//! cannot change between two reads of one run, and every variable silt
//! honours can be found by reading this module's callers. The e2e test
//! `env_reads` holds the rule: no other module of a shipped crate calls
//! `std::env::var`.
//!
//! A variable set to nothing counts as unset in [`path`] and [`text`], as
//! shells treat `VAR= silt …`. An empty path would otherwise name the
//! current folder, and a cache or model set up there lands inside whatever
//! repository the agent runs in.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::sync::OnceLock;

fn snapshot() -> &'static BTreeMap<OsString, OsString> {
    static VARS: OnceLock<BTreeMap<OsString, OsString>> = OnceLock::new();
    VARS.get_or_init(|| std::env::vars_os().collect())
}

/// Reads the environment now. A binary calls this first, so what it runs
/// with is what it was started with.
pub fn capture() {
    snapshot();
}

/// The value of `key` as it was set, unless it is unset or not Unicode
/// (what `std::env::var(key).ok()` gives). For values passed on to a
/// plugin or a program unchanged.
pub fn var(key: &str) -> Option<String> {
    snapshot()
        .get(OsStr::new(key))
        .and_then(|v| v.to_str())
        .map(str::to_string)
}

/// The raw value of `key`, Unicode or not.
pub fn var_os(key: &str) -> Option<&'static OsStr> {
    snapshot().get(OsStr::new(key)).map(OsString::as_os_str)
}

/// Every variable, for a child process that inherits the environment.
pub fn vars_os() -> impl Iterator<Item = (&'static OsStr, &'static OsStr)> {
    snapshot()
        .iter()
        .map(|(k, v)| (k.as_os_str(), v.as_os_str()))
}

/// The folder or file `key` names, unless it is unset or empty.
pub fn path(key: &str) -> Option<PathBuf> {
    non_empty(var_os(key)).map(PathBuf::from)
}

/// The text of `key`, trimmed, unless it is unset, empty or blank.
pub fn text(key: &str) -> Option<String> {
    var(key)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// Whether `key` is switched on (`1`, `true`, `on` or `yes`).
pub fn flag(key: &str) -> bool {
    text(key)
        .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "on" | "yes"))
}

/// The comma-separated items of `key`, trimmed, blanks dropped.
pub fn list(key: &str) -> Vec<String> {
    text(key)
        .map(|v| {
            v.split(',')
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The number `key` holds, or `None` when it is unset or not a number.
pub fn number<T: std::str::FromStr>(key: &str) -> Option<T> {
    text(key).and_then(|v| v.parse().ok())
}

/// The programs' search path, `$PATH`.
pub fn search_path() -> Vec<PathBuf> {
    var_os("PATH")
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default()
}

fn non_empty(value: Option<&OsStr>) -> Option<&OsStr> {
    value.filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_value_is_unset() {
        assert_eq!(non_empty(Some(OsStr::new(""))), None);
        assert_eq!(non_empty(None), None);
        assert_eq!(
            non_empty(Some(OsStr::new("/var/cache/silt"))),
            Some(OsStr::new("/var/cache/silt"))
        );
        // (a variable no test sets reads as unset)
        assert_eq!(path("SILT_TEST_NEVER_SET_9F3A"), None);
        assert_eq!(text("SILT_TEST_NEVER_SET_9F3A"), None);
        assert!(!flag("SILT_TEST_NEVER_SET_9F3A"));
        assert!(list("SILT_TEST_NEVER_SET_9F3A").is_empty());
    }

    #[test]
    fn the_snapshot_is_the_environment_the_process_started_with() {
        // PATH is set wherever cargo runs the tests
        assert_eq!(var("PATH"), std::env::var("PATH").ok());
        assert!(!search_path().is_empty());
        assert!(vars_os().any(|(k, _)| k == "PATH"));
    }
}
