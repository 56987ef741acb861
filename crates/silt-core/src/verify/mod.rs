//! `sieve_verify`'s pure parts: claims (given as records or read out of a
//! Markdown report), quotes found in their sources, the passages a judge
//! reads, and the verdicts, flags and counts built from its answers. The
//! fetching is the host's.

pub mod details;
pub mod evidence;
pub mod quote;
pub mod report;
pub mod run;

/// A source a claim cites, and optionally the words it quotes from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Citation {
    /// An http(s) URL or a file path (relative ones resolve against the
    /// call's base path, on the host).
    pub locator: String,
    /// Words the claim says the source contains.
    pub quote: Option<String>,
}

/// What a claim is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimKind {
    /// Checked against its sources.
    Fact,
    /// Advice: gets no verdict itself; its premises are checked as facts.
    Recommendation,
}

impl ClaimKind {
    /// `fact` or `recommendation`, as results name it.
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimKind::Fact => "fact",
            ClaimKind::Recommendation => "recommendation",
        }
    }

    /// `fact` or `recommendation`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "fact" => Some(ClaimKind::Fact),
            "recommendation" => Some(ClaimKind::Recommendation),
            _ => None,
        }
    }
}

/// One claim to verify.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The claim's text.
    pub claim: String,
    /// Where the claim sits (headings, parent items), to read it by.
    pub claim_context: Option<String>,
    /// A fact, or a recommendation.
    pub kind: ClaimKind,
    /// For a recommendation: the facts it rests on.
    pub premises: Vec<String>,
    /// The sources the claim cites.
    pub citations: Vec<Citation>,
    /// True when code, not the author, cut the claim out of a report.
    pub extraction_uncertain: bool,
}
