//! Units of a repository the judge scores: a file's preview, and the
//! stretches of functions mode (function spans from the host's parser, or
//! fixed-size chunks where there are none). Rules and constants are the
//! reference's (spec: sieve-rules.md, grep).

/// A file of at most this many lines is shown whole.
pub const SMALL_FILE_LINES: usize = 80;
/// A longer file shows this many lines, then its outline.
pub const HEAD_LINES: usize = 40;
/// A file unit's size cap, in characters.
pub const FILE_UNIT_CHARS: usize = 6000;
/// A function unit's size cap, in characters.
pub const FUNCTION_UNIT_CHARS: usize = 12000;
/// Outline rows at most.
pub const OUTLINE_ROWS: usize = 60;
/// An outline row's text, at most, in characters.
pub const OUTLINE_ROW_CHARS: usize = 160;
/// Lines per chunk where no function spans are known.
pub const CHUNK_LINES: usize = 60;
/// Appended where a unit was cut, so the judge (and a reader) can tell.
pub const TRUNCATION_MARKER: &str = "\n... [truncated]";

/// A function the host's parser found, lines 1-based and inclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionSpan {
    /// Empty when the function has none (a Go `func` literal).
    pub name: String,
    /// First line, 1-based.
    pub line_start: usize,
    /// Last line, inclusive.
    pub line_end: usize,
}

impl FunctionSpan {
    /// A span of `name` over lines `line_start` to `line_end`.
    pub fn new(name: &str, line_start: usize, line_end: usize) -> FunctionSpan {
        FunctionSpan {
            name: name.into(),
            line_start,
            line_end,
        }
    }
}

/// What the host's parser found in a file whose language has a grammar.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Syntax {
    /// The outline row (1-based line) of each top-level definition, in
    /// file order.
    pub definitions: Vec<usize>,
    /// Outermost functions, in file order (a nested function is inside its
    /// parent's span).
    pub functions: Vec<FunctionSpan>,
}

/// Where a long file's outline rows come from.
#[derive(Debug, Clone, PartialEq)]
pub enum OutlineSource {
    /// ATX headings outside fenced code blocks.
    Markdown,
    /// Lines (1-based) where top-level definitions start, from a parser.
    Definitions(Vec<usize>),
    /// Evenly spaced non-blank lines after the head.
    Plain,
}

impl OutlineSource {
    /// The outline kind for a file, by extension; languages with a
    /// grammar get `Definitions` from the host's parser instead.
    pub fn for_path(path: &str) -> OutlineSource {
        let lower = path.to_ascii_lowercase();
        if [".md", ".markdown", ".mdx"]
            .iter()
            .any(|e| lower.ends_with(e))
        {
            OutlineSource::Markdown
        } else {
            OutlineSource::Plain
        }
    }

    /// The outline kind for a file the parser may have read: its
    /// definitions when it found any, else as [`OutlineSource::for_path`]
    /// (a grammar file with no top-level definition, a script, gets the
    /// plain outline rather than an empty one).
    pub fn for_file(path: &str, syntax: Option<&Syntax>) -> OutlineSource {
        match syntax {
            Some(s) if !s.definitions.is_empty() => {
                OutlineSource::Definitions(s.definitions.clone())
            }
            _ => OutlineSource::for_path(path),
        }
    }
}

/// The text's lines, as Python's `splitlines` would mostly see them
/// (`\n` and `\r\n`).
pub fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

/// `s` cut to `max` characters, with the marker when it was cut.
pub fn cut_with_marker(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((at, _)) => {
            let keep = max.saturating_sub(TRUNCATION_MARKER.chars().count());
            let end = s.char_indices().nth(keep).map_or(at, |(i, _)| i);
            format!("{}{TRUNCATION_MARKER}", &s[..end])
        }
    }
}

/// Evenly thinned picks of `n` items down to `OUTLINE_ROWS`: index
/// round(i × (n−1) / (OUTLINE_ROWS−1)), ties to even, as the reference.
pub fn thinned(n: usize) -> Vec<usize> {
    if n <= OUTLINE_ROWS {
        return (0..n).collect();
    }
    (0..OUTLINE_ROWS)
        .map(|i| ((i * (n - 1)) as f64 / (OUTLINE_ROWS - 1) as f64).round_ties_even() as usize)
        .collect()
}

/// True for an ATX heading: 1 to 6 `#` then a space, a tab or the end,
/// after at most 3 spaces.
fn is_atx_heading(line: &str) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return false;
    }
    let rest = &line[indent..];
    let hashes = rest.len() - rest.trim_start_matches('#').len();
    (1..=6).contains(&hashes)
        && rest[hashes..]
            .chars()
            .next()
            .is_none_or(|c| c == ' ' || c == '\t')
}

/// The opening or closing fence of a fenced code block.
fn fence(line: &str) -> Option<char> {
    let t = line.trim_start();
    if line.len() - t.len() > 3 {
        return None;
    }
    ['`', '~']
        .into_iter()
        .find(|&c| t.starts_with(&String::from(c).repeat(3)))
}

/// (line number, text) of every outline candidate in `lines`.
fn outline_rows<'a>(
    lines: &[&'a str],
    source: &OutlineSource,
    head: usize,
) -> Vec<(usize, &'a str)> {
    match source {
        OutlineSource::Markdown => {
            let mut open: Option<char> = None;
            let mut rows = Vec::new();
            for (i, line) in lines.iter().enumerate() {
                match (open, fence(line)) {
                    (None, Some(c)) => open = Some(c),
                    (Some(o), Some(c)) if o == c => open = None,
                    (None, None) if is_atx_heading(line) => rows.push((i + 1, *line)),
                    _ => {}
                }
            }
            rows
        }
        OutlineSource::Definitions(starts) => starts
            .iter()
            .filter(|&&n| n >= 1 && n <= lines.len())
            .map(|&n| (n, lines[n - 1]))
            .collect(),
        OutlineSource::Plain => lines
            .iter()
            .enumerate()
            .skip(head)
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| (i + 1, *l))
            .collect(),
    }
}

/// The outline block: a header naming the file's length, then at most
/// `OUTLINE_ROWS` rows `L{n}: {text}`.
pub fn outline(lines: &[&str], source: &OutlineSource, head: usize) -> String {
    let rows = outline_rows(lines, source, head);
    let mut out = format!(
        "... [outline of the whole file, {} lines total]",
        lines.len()
    );
    for i in thinned(rows.len()) {
        let (n, text) = rows[i];
        let text: String = text.trim_end().chars().take(OUTLINE_ROW_CHARS).collect();
        out.push_str(&format!("\nL{n}: {text}"));
    }
    out
}

/// What the judge reads for a whole file: all of it when short, else the
/// head, a blank line and the outline; cut to `FILE_UNIT_CHARS`.
pub fn file_preview(text: &str, source: &OutlineSource) -> String {
    let all = lines(text);
    let preview = if all.len() <= SMALL_FILE_LINES {
        text.to_string()
    } else {
        format!(
            "{}\n\n{}",
            all[..HEAD_LINES].join("\n"),
            outline(&all, source, HEAD_LINES)
        )
    };
    cut_with_marker(&preview, FILE_UNIT_CHARS)
}

/// Fixed chunks of `CHUNK_LINES` lines as (first, last) line numbers,
/// 1-based and inclusive, skipping chunks with only blank lines.
pub fn chunks(lines: &[&str]) -> Vec<(usize, usize)> {
    (0..lines.len())
        .step_by(CHUNK_LINES)
        .map(|start| (start, (start + CHUNK_LINES).min(lines.len())))
        .filter(|&(s, e)| lines[s..e].iter().any(|l| !l.trim().is_empty()))
        .map(|(s, e)| (s + 1, e))
        .collect()
}

/// Which kind of stretch functions mode scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StretchKind {
    /// A function span the host's parser found.
    Function,
    /// A fixed chunk of [`CHUNK_LINES`] lines, where no spans are known.
    Chunk,
}

impl StretchKind {
    /// The result row's `kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            StretchKind::Function => "function",
            StretchKind::Chunk => "chunk",
        }
    }
}

/// The stretches (first, last line, 1-based inclusive) functions mode
/// scores in a file: its function spans when the parser found any, else
/// `CHUNK_LINES`-line chunks. Spans are clamped to the file (the host
/// parsed its own read, which a concurrent edit may have changed).
pub fn stretches(lines: &[&str], syntax: Option<&Syntax>) -> Vec<(usize, usize, StretchKind)> {
    let spans: Vec<(usize, usize, StretchKind)> = syntax
        .map(|s| &s.functions[..])
        .unwrap_or_default()
        .iter()
        .map(|f| (f.line_start.max(1), f.line_end.min(lines.len())))
        .filter(|&(s, e)| s <= e)
        .map(|(s, e)| (s, e, StretchKind::Function))
        .collect();
    if !spans.is_empty() {
        return spans;
    }
    chunks(lines)
        .into_iter()
        .map(|(s, e)| (s, e, StretchKind::Chunk))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_outline_thins_the_lines_after_the_head() {
        // the spec's case: 100 lines, 5 of them previewed
        let text: Vec<String> = (1..=100).map(|i| format!("line {i}")).collect();
        let lines: Vec<&str> = text.iter().map(String::as_str).collect();
        let o = outline(&lines, &OutlineSource::Plain, 5);
        let rows: Vec<&str> = o.lines().collect();
        assert!(rows[0].contains("100 lines total"), "{}", rows[0]);
        assert_eq!(rows[1], "L6: line 6");
        assert_eq!(*rows.last().unwrap(), "L100: line 100");
        assert_eq!(rows.len(), 1 + OUTLINE_ROWS);
    }

    #[test]
    fn a_markdown_outline_is_its_headings_thinned_to_sixty() {
        // the spec's case: 400 lines, a heading on every odd line
        let text: Vec<String> = (1..=400)
            .map(|n| {
                if n % 2 == 1 {
                    format!("## H{}", n - 1)
                } else {
                    "text".into()
                }
            })
            .collect();
        let lines: Vec<&str> = text.iter().map(String::as_str).collect();
        let o = outline(&lines, &OutlineSource::Markdown, HEAD_LINES);
        let rows: Vec<&str> = o.lines().skip(1).collect();
        assert_eq!(rows.len(), 60);
        assert_eq!(rows[0], "L1: ## H0");
        assert_eq!(*rows.last().unwrap(), "L399: ## H398");
    }

    #[test]
    fn headings_inside_fences_are_not_outline() {
        let lines = [
            "# Title",
            "```",
            "# not a heading",
            "```",
            "## Real",
            "#NoSpace",
            "    # indented code",
        ];
        let o = outline(&lines, &OutlineSource::Markdown, 0);
        let rows: Vec<&str> = o.lines().skip(1).collect();
        assert_eq!(rows, ["L1: # Title", "L5: ## Real"]);
    }

    #[test]
    fn thinning_keeps_both_ends_and_spreads_evenly() {
        assert_eq!(thinned(5), [0, 1, 2, 3, 4]);
        let p = thinned(200);
        assert_eq!(p.len(), 60);
        assert_eq!((p[0], p[1], p[2], p[59]), (0, 3, 7, 199)); // 3.37, 6.75
        assert!(p.windows(2).all(|w| w[0] < w[1]));
        // (n-1)·i/59 never lands on a half (59 is odd), so the tie rule
        // the reference states never decides a row
    }

    #[test]
    fn short_files_are_whole_and_long_ones_head_plus_outline() {
        let short = "a\nb\n";
        assert_eq!(file_preview(short, &OutlineSource::Plain), short);
        let long: String = (1..=81).map(|i| format!("row {i}\n")).collect();
        let p = file_preview(&long, &OutlineSource::Plain);
        assert!(p.starts_with("row 1\n"));
        assert!(
            p.contains("row 40\n\n... [outline of the whole file, 81 lines total]\nL41: row 41")
        );
        assert!(!p.contains("\nrow 41\n"));
    }

    #[test]
    fn units_are_cut_with_a_visible_marker() {
        let big = "x".repeat(7000);
        let p = file_preview(&big, &OutlineSource::Plain);
        assert_eq!(p.chars().count(), FILE_UNIT_CHARS);
        assert!(p.ends_with(TRUNCATION_MARKER));
        assert_eq!(cut_with_marker("é".repeat(10).as_str(), 20), "é".repeat(10));
    }

    #[test]
    fn chunks_are_sixty_lines_and_skip_blank_windows() {
        let text: Vec<String> = (1..=130).map(|i| format!("# line {i}")).collect();
        let lines: Vec<&str> = text.iter().map(String::as_str).collect();
        let ends: Vec<usize> = chunks(&lines).iter().map(|c| c.1).collect();
        assert_eq!(ends, [60, 120, 130]);
        let mut sparse = vec![""; 130];
        sparse[5] = "code";
        sparse[125] = "code";
        assert_eq!(chunks(&sparse), [(1, 60), (121, 130)]);
    }

    #[test]
    fn a_definitions_outline_shows_each_definitions_row() {
        let text: Vec<String> = (1..=200)
            .map(|n| match n {
                3 => "def outer():".into(),
                50 => "class Thing:".into(),
                n => format!("    body {n}"),
            })
            .collect();
        let lines: Vec<&str> = text.iter().map(String::as_str).collect();
        let syntax = Syntax {
            definitions: vec![3, 50, 999],
            functions: vec![],
        };
        let source = OutlineSource::for_file("a.py", Some(&syntax));
        assert_eq!(source, OutlineSource::Definitions(vec![3, 50, 999]));
        let o = outline(&lines, &source, HEAD_LINES);
        let rows: Vec<&str> = o.lines().collect();
        assert_eq!(
            rows,
            [
                "... [outline of the whole file, 200 lines total]",
                "L3: def outer():",
                "L50: class Thing:"
            ],
            "a row past the end is dropped"
        );
        // a long definition line is cut like any row, and many are thinned
        let many = Syntax {
            definitions: (1..=200).collect(),
            functions: vec![],
        };
        let o = outline(
            &lines,
            &OutlineSource::for_file("a.py", Some(&many)),
            HEAD_LINES,
        );
        assert_eq!(o.lines().count(), 1 + OUTLINE_ROWS);
    }

    #[test]
    fn files_without_definitions_keep_their_extensions_outline() {
        let empty = Syntax::default();
        assert_eq!(
            OutlineSource::for_file("run.py", Some(&empty)),
            OutlineSource::Plain
        );
        assert_eq!(OutlineSource::for_file("a.rs", None), OutlineSource::Plain);
        assert_eq!(
            OutlineSource::for_file("README.md", None),
            OutlineSource::Markdown
        );
    }

    #[test]
    fn stretches_are_function_spans_when_known_else_chunks() {
        let text: Vec<String> = (1..=130).map(|i| format!("x{i}")).collect();
        let lines: Vec<&str> = text.iter().map(String::as_str).collect();
        let syntax = Syntax {
            definitions: vec![3, 8],
            functions: vec![
                FunctionSpan::new("outer", 3, 6),
                FunctionSpan::new("method", 9, 10),
                FunctionSpan::new("gone", 200, 210),
            ],
        };
        assert_eq!(
            stretches(&lines, Some(&syntax)),
            [
                (3, 6, StretchKind::Function),
                (9, 10, StretchKind::Function)
            ]
        );
        let chunked = [
            (1, 60, StretchKind::Chunk),
            (61, 120, StretchKind::Chunk),
            (121, 130, StretchKind::Chunk),
        ];
        assert_eq!(stretches(&lines, None), chunked);
        assert_eq!(
            stretches(&lines, Some(&Syntax::default())),
            chunked,
            "a grammar file with no functions is chunked"
        );
        // a span running past the end (the file shrank) is clamped
        let long = Syntax {
            definitions: vec![],
            functions: vec![FunctionSpan::new("f", 120, 140)],
        };
        assert_eq!(
            stretches(&lines, Some(&long)),
            [(120, 130, StretchKind::Function)]
        );
        assert_eq!(StretchKind::Function.as_str(), "function");
    }
}
