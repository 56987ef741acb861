//! Claims read out of a Markdown report: sentences of paragraphs and list
//! items, and table rows, each with the headings and parent items above it
//! as context and the sources it cites. The Markdown is parsed by
//! pulldown-cmark, so code spans, links and tables mean what they render
//! as.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::{Citation, ClaimKind, Record};

/// Abbreviations whose full stop does not end a sentence (compared
/// lowercase, without the final stop).
const ABBREVIATIONS: &[&str] = &[
    "al", "approx", "apr", "aug", "ca", "cf", "co", "corp", "dec", "dept", "dr", "e.g", "ed",
    "eds", "eq", "est", "etc", "feb", "fig", "figs", "gen", "gov", "i.e", "inc", "jan", "jr",
    "jul", "jun", "ltd", "mar", "mr", "mrs", "ms", "no", "nos", "nov", "oct", "p", "pp", "prof",
    "ref", "refs", "sec", "sep", "sept", "sr", "st", "u.k", "u.s", "vol", "vols", "vs",
];

/// The claims of `markdown`, in document order. Every one is marked
/// `extraction_uncertain`: code, not the author, decided its wording.
pub fn extract(markdown: &str) -> Vec<Record> {
    let mut x = Extractor::default();
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        x.event(event);
    }
    x.close_block();
    x.out
}

/// Text gathered for one block, with the citations found in it and where.
#[derive(Default)]
struct Block {
    text: String,
    /// (byte offset in `text`, locator)
    cites: Vec<(usize, String)>,
}

/// An open list item: its own first block's text and citations, which
/// become context and inherited citations for what is nested in it.
#[derive(Default)]
struct ItemFrame {
    text: Option<String>,
    cites: Vec<String>,
}

#[derive(Default)]
struct Table {
    columns: Vec<String>,
    in_head: bool,
    row: Vec<String>,
    row_cites: Vec<String>,
    cell: Block,
}

#[derive(Default)]
struct Extractor {
    out: Vec<Record>,
    headings: Vec<(u8, String)>,
    heading: Option<(u8, Block)>,
    items: Vec<ItemFrame>,
    block: Option<Block>,
    table: Option<Table>,
    /// Inside a code block or raw HTML block: nothing there is a claim.
    skipping: usize,
}

impl Extractor {
    fn event(&mut self, event: Event) {
        match event {
            Event::Start(Tag::CodeBlock(_)) | Event::Start(Tag::HtmlBlock) => self.skipping += 1,
            Event::End(TagEnd::CodeBlock) | Event::End(TagEnd::HtmlBlock) => {
                self.skipping = self.skipping.saturating_sub(1)
            }
            _ if self.skipping > 0 => {}
            Event::Start(Tag::Heading { level, .. }) => {
                self.close_block();
                self.heading = Some((level as u8, Block::default()));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, block)) = self.heading.take() {
                    self.headings.retain(|(l, _)| *l < level);
                    self.headings.push((level, collapse(&block.text)));
                }
            }
            Event::Start(Tag::Paragraph) => {
                self.close_block();
                self.block = Some(Block::default());
            }
            Event::End(TagEnd::Paragraph) => self.close_block(),
            Event::Start(Tag::Item) => {
                self.close_block();
                self.items.push(ItemFrame::default());
            }
            Event::End(TagEnd::Item) => {
                self.close_block();
                self.items.pop();
            }
            Event::Start(Tag::List(_)) => self.close_block(),
            Event::Start(Tag::Table(_)) => {
                self.close_block();
                self.table = Some(Table::default());
            }
            Event::End(TagEnd::Table) => self.table = None,
            Event::Start(Tag::TableHead) => {
                if let Some(t) = &mut self.table {
                    t.in_head = true;
                }
            }
            Event::End(TagEnd::TableHead) => {
                if let Some(t) = &mut self.table {
                    t.in_head = false;
                    t.columns = std::mem::take(&mut t.row);
                }
            }
            Event::Start(Tag::TableCell) => {
                if let Some(t) = &mut self.table {
                    t.cell = Block::default();
                }
            }
            Event::End(TagEnd::TableCell) => {
                if let Some(t) = &mut self.table {
                    let cell = std::mem::take(&mut t.cell);
                    let text = collapse(&cell.text);
                    t.row_cites.extend(cell.cites.into_iter().map(|(_, c)| c));
                    add_bare_urls(&text, &mut Vec::new(), &mut t.row_cites);
                    t.row.push(text);
                }
            }
            Event::End(TagEnd::TableRow) => self.table_row(),
            // links to places in the report itself cite nothing
            Event::Start(Tag::Link { dest_url, .. }) if !dest_url.starts_with('#') => {
                let target = self.target();
                let at = target.text.len();
                target.cites.push((at, dest_url.to_string()));
            }
            Event::Text(t) => self.target().text.push_str(&t),
            Event::Code(code) => {
                let target = self.target();
                if is_path_like(&code) {
                    let at = target.text.len();
                    target.cites.push((at, code.to_string()));
                }
                target.text.push_str(&code);
            }
            Event::SoftBreak | Event::HardBreak => self.target().text.push(' '),
            _ => {}
        }
    }

    /// Where inline content goes: the open heading, table cell or block
    /// (a tight list item's text arrives with no paragraph around it).
    fn target(&mut self) -> &mut Block {
        // a heading's links cite nothing: a heading is context, not a claim
        if let Some((_, block)) = &mut self.heading {
            return block;
        }
        if let Some(t) = &mut self.table {
            return &mut t.cell;
        }
        self.block.get_or_insert_with(Block::default)
    }

    fn context(&self, own_item: bool) -> Vec<String> {
        let mut parts: Vec<String> = self.headings.iter().map(|(_, h)| h.clone()).collect();
        let parents = if own_item {
            &self.items[..self.items.len().saturating_sub(1)]
        } else {
            &self.items[..]
        };
        parts.extend(parents.iter().filter_map(|i| i.text.clone()));
        parts
    }

    /// Citations a block without its own inherits: its nearest enclosing
    /// item's that has any.
    fn inherited(&self, own_item: bool) -> Vec<String> {
        let parents = if own_item {
            &self.items[..self.items.len().saturating_sub(1)]
        } else {
            &self.items[..]
        };
        parents
            .iter()
            .rev()
            .find(|i| !i.cites.is_empty())
            .map(|i| i.cites.clone())
            .unwrap_or_default()
    }

    fn close_block(&mut self) {
        let Some(mut block) = self.block.take() else {
            return;
        };
        let raw = std::mem::take(&mut block.text);
        add_bare_urls(&raw, &mut block.cites, &mut Vec::new());
        let text = collapse(&raw);
        if text.is_empty() {
            return;
        }
        // the first block of an item is the item's own text
        let own_item = self.items.last().is_some_and(|i| i.text.is_none());
        let context = self.context(own_item);
        let block_cites: Vec<String> = dedup(block.cites.iter().map(|(_, c)| c.clone()));
        let fallback = if block_cites.is_empty() {
            self.inherited(own_item)
        } else {
            block_cites.clone()
        };
        if own_item && let Some(item) = self.items.last_mut() {
            item.text = Some(text.clone());
            item.cites = fallback.clone();
        }
        for (start, end) in sentences(&raw) {
            let claim = collapse(&raw[start..end]);
            if !claim.chars().any(char::is_alphanumeric) {
                continue;
            }
            let own: Vec<String> = dedup(
                block
                    .cites
                    .iter()
                    .filter(|(at, _)| (start..end).contains(at))
                    .map(|(_, c)| c.clone()),
            );
            let cites = if own.is_empty() {
                fallback.clone()
            } else {
                own
            };
            self.out.push(record(claim, &context, cites));
        }
    }

    fn table_row(&mut self) {
        let Some(t) = &mut self.table else { return };
        if t.in_head {
            return;
        }
        let row = std::mem::take(&mut t.row);
        let cites = dedup(std::mem::take(&mut t.row_cites).into_iter());
        let claim = t
            .columns
            .iter()
            .zip(&row)
            .filter(|(_, v)| !v.is_empty())
            .map(|(c, v)| format!("{c}: {v}"))
            .collect::<Vec<_>>()
            .join("; ");
        if !claim.chars().any(char::is_alphanumeric) {
            return;
        }
        let columns = format!("table columns: {}", t.columns.join(" | "));
        let mut context = self.context(false);
        context.push(columns);
        let cites = if cites.is_empty() {
            self.inherited(false)
        } else {
            cites
        };
        self.out.push(record(claim, &context, cites));
    }
}

fn record(claim: String, context: &[String], cites: Vec<String>) -> Record {
    Record {
        claim,
        claim_context: (!context.is_empty()).then(|| context.join(" > ")),
        kind: ClaimKind::Fact,
        premises: Vec::new(),
        citations: cites
            .into_iter()
            .map(|locator| Citation {
                locator,
                quote: None,
            })
            .collect(),
        extraction_uncertain: true,
    }
}

fn dedup(cites: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in cites {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Bare http(s) URLs in `text` become citations (with their offsets in
/// `positioned`, or plainly in `plain`); closing punctuation after a URL
/// is the sentence's, not the URL's.
fn add_bare_urls(text: &str, positioned: &mut Vec<(usize, String)>, plain: &mut Vec<String>) {
    let mut from = 0;
    while let Some(rel) = text[from..].find("http") {
        let at = from + rel;
        let rest = &text[at..];
        let is_url = (rest.starts_with("http://") || rest.starts_with("https://"))
            && (at == 0 || !text[..at].ends_with(|c: char| c.is_alphanumeric()));
        let len = rest.find(char::is_whitespace).unwrap_or(rest.len());
        if is_url {
            let url = rest[..len].trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '\'', '"']);
            if url.len() > "https://".len() {
                let url = url.to_string();
                if !positioned.iter().any(|(_, c)| *c == url) && !plain.contains(&url) {
                    positioned.push((at, url.clone()));
                    plain.push(url);
                }
            }
        }
        from = at + len.max(4);
    }
}

/// A code span names a file when it is one path-like token: no spaces or
/// brackets, and a `/` or a file extension with a letter in it.
fn is_path_like(code: &str) -> bool {
    let allowed = |c: char| c.is_alphanumeric() || matches!(c, '.' | '_' | '/' | '-' | '~');
    if code.is_empty() || !code.chars().all(allowed) {
        return false;
    }
    if code.contains('/') {
        return code.chars().any(char::is_alphanumeric);
    }
    match code.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        }
        None => false,
    }
}

/// Sentence spans (byte ranges) of `text`. A `.`, `!` or `?` ends one when
/// whitespace follows and the next word does not start lowercase; a full
/// stop after an abbreviation or a single-letter initial does not.
pub fn sentences(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes: Vec<(usize, char)> = text.char_indices().collect();
    for (k, &(at, c)) in bytes.iter().enumerate() {
        if !matches!(c, '.' | '!' | '?') {
            continue;
        }
        // closing quotes and brackets belong to the sentence they close
        let mut end_k = k;
        while let Some(&(_, n)) = bytes.get(end_k + 1) {
            if matches!(n, '"' | '\'' | ')' | ']' | '\u{201D}' | '\u{2019}') {
                end_k += 1;
            } else {
                break;
            }
        }
        let next = bytes.get(end_k + 1).map(|&(_, n)| n);
        if !next.is_none_or(char::is_whitespace) {
            continue;
        }
        let following = bytes[end_k + 1..]
            .iter()
            .map(|&(_, n)| n)
            .find(|n| !n.is_whitespace());
        if following.is_some_and(char::is_lowercase) {
            continue;
        }
        if c == '.' {
            let word = text[start..at]
                .rsplit(|ch: char| ch.is_whitespace() || ch == '(')
                .next()
                .unwrap_or("")
                .to_lowercase();
            let single = word.chars().count() == 1 && word.chars().all(char::is_alphabetic);
            if single || ABBREVIATIONS.binary_search(&word.as_str()).is_ok() {
                continue;
            }
        }
        let end = bytes.get(end_k + 1).map_or(text.len(), |&(b, _)| b);
        if !text[start..end].trim().is_empty() {
            out.push((start, end));
        }
        start = end;
    }
    if !text[start..].trim().is_empty() {
        out.push((start, text.len()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(md: &str) -> Vec<(String, Option<String>, Vec<String>)> {
        extract(md)
            .into_iter()
            .map(|r| {
                assert!(r.extraction_uncertain);
                (
                    r.claim,
                    r.claim_context,
                    r.citations.into_iter().map(|c| c.locator).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn sentences_do_not_end_at_abbreviations_or_initials() {
        let text =
            "Dr. Smith wrote it, e.g. in 2020. J. R. Tolkien agreed! Did he? Version 2.5 shipped.";
        let got: Vec<&str> = sentences(text)
            .iter()
            .map(|&(s, e)| text[s..e].trim())
            .collect();
        assert_eq!(
            got,
            [
                "Dr. Smith wrote it, e.g. in 2020.",
                "J. R. Tolkien agreed!",
                "Did he?",
                "Version 2.5 shipped."
            ]
        );
        // a lowercase continuation is the same sentence
        assert_eq!(
            sentences("It rose approx. five percent. Then fell.").len(),
            2
        );
        assert_eq!(sentences("See the file. it goes on.").len(), 1);
    }

    #[test]
    fn headings_and_parent_items_are_context_and_citations_are_inherited() {
        let md = "# Results\n\n## Speed\n\n\
                  - Recall is fast [bench](https://example.com/bench).\n  \
                  - It beats the reference by 64x.\n  \
                  - See `docs/BENCHMARKS.md` for more.\n\
                  - Sleep is slower.\n\n\
                  # Other\n\nPlain text cites https://example.org/a, then ends. Second sentence here.\n";
        let got = claims(md);
        assert_eq!(got.len(), 6, "{got:#?}");
        assert_eq!(
            got[0],
            (
                "Recall is fast bench.".into(),
                Some("Results > Speed".into()),
                vec!["https://example.com/bench".into()]
            )
        );
        // a nested item without links inherits its parent's
        assert_eq!(
            got[1],
            (
                "It beats the reference by 64x.".into(),
                Some("Results > Speed > Recall is fast bench.".into()),
                vec!["https://example.com/bench".into()]
            )
        );
        // a backticked path is a citation of its own
        assert_eq!(got[2].2, vec!["docs/BENCHMARKS.md".to_string()]);
        assert_eq!(got[3].0, "Sleep is slower.");
        assert!(got[3].2.is_empty());
        // the level-1 heading replaced the whole stack
        assert_eq!(got[4].1.as_deref(), Some("Other"));
        assert_eq!(got[4].2, vec!["https://example.org/a".to_string()]);
        // the second sentence has no citation of its own: it takes the block's
        assert_eq!(got[5].0, "Second sentence here.");
        assert_eq!(got[5].2, vec!["https://example.org/a".to_string()]);
    }

    #[test]
    fn table_rows_are_claims_with_their_columns() {
        let md = "## Prices\n\n| Model | Price |\n|---|---|\n| Jev | $0.042 [src](https://p.example/) |\n| Other | |\n";
        let got = claims(md);
        assert_eq!(
            got,
            vec![
                (
                    "Model: Jev; Price: $0.042 src".into(),
                    Some("Prices > table columns: Model | Price".into()),
                    vec!["https://p.example/".into()]
                ),
                (
                    "Model: Other".into(),
                    Some("Prices > table columns: Model | Price".into()),
                    vec![]
                ),
            ]
        );
    }

    #[test]
    fn anchors_code_blocks_and_non_paths_cite_nothing() {
        let md = "Jump [below](#later) now.\n\n```\nnot a claim.\n```\n\nCall `foo()` or `1.5` or `x`.\n";
        let got = claims(md);
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(|c| c.2.is_empty()), "{got:?}");
        assert!(is_path_like("src/main.rs") && is_path_like("README.md"));
        assert!(!is_path_like("foo()") && !is_path_like("1.5") && !is_path_like("a b.rs"));
    }
}

#[cfg(test)]
mod deep_tests {
    use super::*;

    /// 100k levels of each nesting Markdown allows, read on a 256 KiB stack
    /// (a wasm guest's fiber is not much larger): no overflow, and linear
    /// enough to finish well inside a test's time.
    #[test]
    fn deep_nesting_neither_overflows_nor_stalls() {
        let n = 100_000;
        let cases = [
            (
                "blockquotes",
                format!("{} claim [a](https://a.example/x).\n", ">".repeat(n)),
            ),
            (
                "list items",
                (0..2000)
                    .map(|i| format!("{}- item {i} [a](https://a.example/{i}).\n", "  ".repeat(i)))
                    .collect::<String>(),
            ),
            ("brackets", format!("{}x{}\n", "[".repeat(n), "]".repeat(n))),
            (
                "emphasis",
                format!("{}x{}\n", "*_".repeat(n / 2), "_*".repeat(n / 2)),
            ),
            ("links", "[a](https://a.example/x) ".repeat(n)),
        ];
        for (name, doc) in cases {
            let started = std::time::Instant::now();
            let records = std::thread::Builder::new()
                .stack_size(256 << 10)
                .spawn(move || extract(&doc).len())
                .unwrap()
                .join()
                .unwrap_or_else(|_| panic!("{name}: the extractor panicked"));
            let took = started.elapsed();
            assert!(
                took.as_secs() < 20,
                "{name}: {took:?} for {records} records"
            );
        }
    }
}
