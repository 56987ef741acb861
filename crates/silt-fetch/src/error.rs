//! Why a cited source could not be read. The kind is what a caller
//! branches on (a refusal is the caller's to fix, an unreachable source
//! may answer later); the text is one line for a person, and it crosses
//! the WIT boundary to the verify engine as that line.

/// A source that could not be read, with its locator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The call may not read it: a scheme other than http(s), an internal
    /// address, a file outside the base path or with no base path.
    #[error("{locator}: {reason}")]
    Refused {
        /// The URL or path as cited.
        locator: String,
        /// What refused it, and how to allow it where that is possible.
        reason: String,
    },
    /// It was not reached: a network error, an HTTP error status, a
    /// redirect that cannot be followed, or no answer in time.
    #[error("{locator}: {reason}")]
    Unreachable {
        /// The URL or path as cited.
        locator: String,
        /// What went wrong on the way.
        reason: String,
    },
    /// It is larger than the cap for its kind of source.
    #[error("{locator}: larger than the {cap_mb} MB cap for this kind of source")]
    TooLarge {
        /// The URL or path as cited.
        locator: String,
        /// The cap, in MiB.
        cap_mb: usize,
    },
    /// It was reached but holds no text silt can read: a PDF without a
    /// text layer or whose extractor failed, a file that is not a regular
    /// file or cannot be opened.
    #[error("{locator}: {reason}")]
    Unreadable {
        /// The URL or path as cited.
        locator: String,
        /// Why its text could not be read.
        reason: String,
    },
}

impl FetchError {
    pub(crate) fn refused(locator: impl ToString, reason: impl Into<String>) -> Self {
        FetchError::Refused {
            locator: locator.to_string(),
            reason: reason.into(),
        }
    }

    pub(crate) fn unreachable(locator: impl ToString, reason: impl Into<String>) -> Self {
        FetchError::Unreachable {
            locator: locator.to_string(),
            reason: reason.into(),
        }
    }

    pub(crate) fn unreadable(locator: impl ToString, reason: impl Into<String>) -> Self {
        FetchError::Unreadable {
            locator: locator.to_string(),
            reason: reason.into(),
        }
    }

    pub(crate) fn too_large(locator: impl ToString, cap_bytes: usize) -> Self {
        FetchError::TooLarge {
            locator: locator.to_string(),
            cap_mb: cap_bytes >> 20,
        }
    }
}

/// Why a PDF's text could not be extracted (the locator is added by the
/// caller, as [`FetchError::Unreadable`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("PDF: {0}")]
pub struct PdfError(pub String);
