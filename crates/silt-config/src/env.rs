//! silt's environment variables as values: a variable set to nothing
//! counts as unset, as shells treat `VAR= silt …`. An empty path would
//! otherwise name the current folder, and a cache or model set up there
//! lands inside whatever repository the agent runs in.

use std::ffi::OsString;
use std::path::PathBuf;

/// The folder or file `key` names, unless it is unset or empty.
pub fn path(key: &str) -> Option<PathBuf> {
    non_empty(std::env::var_os(key)).map(PathBuf::from)
}

/// The text of `key`, trimmed, unless it is unset, empty or blank.
pub fn text(key: &str) -> Option<String> {
    std::env::var(key)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

fn non_empty(value: Option<OsString>) -> Option<OsString> {
    value.filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_value_is_unset() {
        assert_eq!(non_empty(Some(OsString::new())), None);
        assert_eq!(non_empty(None), None);
        assert_eq!(
            non_empty(Some(OsString::from("/var/cache/silt"))),
            Some(OsString::from("/var/cache/silt"))
        );
        // (a variable no test sets reads as unset)
        assert_eq!(path("SILT_TEST_NEVER_SET_9F3A"), None);
        assert_eq!(text("SILT_TEST_NEVER_SET_9F3A"), None);
    }
}
