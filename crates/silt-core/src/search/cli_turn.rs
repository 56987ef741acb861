//! One search turn of a model CLI, as both CLIs share it: what the CLI
//! is asked (the prompt, the user's settings) and what its output stream
//! gave once parsed.

use super::pool::Hit;

/// What the user set in the backend's granted environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// How long one run of the CLI may take, in milliseconds.
    pub timeout_ms: u64,
    /// The model the CLI searches with.
    pub model: String,
    /// Codex's reasoning effort (None for Claude).
    pub effort: Option<String>,
}

/// The instruction both CLIs get: search once, then list what was found
/// (the list is only read when the CLI's own results are not on its
/// stream, and to count links the model cited beyond them).
pub fn prompt(query: &str, count: u32) -> String {
    format!(
        "Search the web for: {query}\n\n\
         Use your web search tool with exactly that query. Do not open pages, \
         edit files or run commands. Then reply with only a markdown list of up \
         to {count} results you found, one per line, as `- [title](url)`."
    )
}

/// What a parsed stream gave.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parsed {
    /// Hits from the CLI's own search results, in order.
    pub hits: Vec<Hit>,
    /// Searches the CLI ran (tool calls or events), results or not.
    pub searches: u32,
    /// Whether any search event carried a result list, even an empty one
    /// (Codex 0.156.1 and later): then the model's list is never read.
    pub results_seen: bool,
    /// Errors its search tool reported.
    pub search_errors: Vec<String>,
    /// The model's final reply.
    pub reply: String,
    /// An error the stream itself reported (a failed turn, an error result).
    pub error: Option<String>,
    /// What the CLI reported the turn cost, in US dollars (Claude's
    /// `total_cost_usd`); None when it reports nothing.
    pub cost_usd: Option<f64>,
}
