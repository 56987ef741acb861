//! HTML to text with an HTML5 parser (html5ever, through scraper): the
//! text a reader sees, with block elements as paragraphs so evidence
//! windows fall on the page's own paragraph breaks.

use scraper::{Html, Node};

/// Elements whose content is never text a reader sees.
const HIDDEN: &[&str] = &[
    "script", "style", "noscript", "template", "head", "svg", "iframe", "object", "canvas",
];

/// Elements that start and end a paragraph.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "td",
    "th",
    "tr",
    "ul",
];

/// The visible text of an HTML document, paragraphs separated by blank lines.
pub fn to_text(html: &str) -> String {
    let doc = Html::parse_document(html);
    let mut out = String::new();
    walk(doc.tree.root(), &mut out);
    tidy(&out)
}

fn walk(node: ego_tree::NodeRef<'_, Node>, out: &mut String) {
    match node.value() {
        Node::Text(t) => out.push_str(t),
        Node::Element(e) => {
            let name = e.name();
            if HIDDEN.contains(&name) {
                return;
            }
            let block = BLOCKS.contains(&name);
            if block {
                out.push_str("\n\n");
            }
            for child in node.children() {
                walk(child, out);
            }
            if block {
                out.push_str("\n\n");
            }
        }
        _ => {
            for child in node.children() {
                walk(child, out);
            }
        }
    }
}

/// Whitespace inside a paragraph collapsed to single spaces; paragraphs
/// joined by one blank line.
fn tidy(raw: &str) -> String {
    raw.split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_text_in_paragraphs() {
        let html = "<html><head><title>T</title><style>p{}</style></head><body>\
                    <h1>Title</h1><p>One <b>bold</b>\n   line.</p><script>alert(1)</script>\
                    <ul><li>first</li><li>second &amp; more</li></ul><div>tail<br>end</div></body></html>";
        assert_eq!(
            to_text(html),
            "Title\n\nOne bold line.\n\nfirst\n\nsecond & more\n\ntail\n\nend"
        );
    }

    #[test]
    fn broken_html_still_yields_its_text() {
        assert_eq!(
            to_text("<p>unclosed <i>italic<p>next"),
            "unclosed italic\n\nnext"
        );
    }
}
