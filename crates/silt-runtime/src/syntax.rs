//! What grep's `files.syntax` import answers: a source file's top-level
//! definitions (its outline rows) and its function spans, parsed natively
//! with tree-sitter. The engines cannot parse themselves: the grammars are
//! C, and there is no C compiler for the wasm targets here.
//!
//! Rules (spec: sieve-rules.md, grep):
//! - Function spans: nodes of the kinds in [`FUNCTION_KINDS`], searched
//!   depth first with no descent into a match, so a nested function stays
//!   inside its parent's span.
//! - Definitions: the root's children of the kinds in
//!   [`DEFINITION_KINDS`] (plus exports that declare something, Python
//!   module-level assignments and TypeScript namespaces); comments,
//!   imports, `use`, `package` and Rust attributes are not definitions.
//!   A definition's row is its first non-blank line not starting with
//!   `@`, lines inside a decorator skipped as well (a decorator spread
//!   over several lines does not become the row).

use silt_core::grep::units::{FunctionSpan, Syntax};
use tree_sitter::{Language, Node, Parser};

/// Files larger than this are not parsed (they get the plain outline and
/// chunks): generated or minified sources are not worth the time.
pub const MAX_PARSE_BYTES: usize = 1 << 20;

/// Node kinds that are a function span (the reference's list, across
/// grammars).
pub const FUNCTION_KINDS: [&str; 12] = [
    "function_definition",
    "function_declaration",
    "function_item",
    "method_definition",
    "method_declaration",
    "constructor_declaration",
    "class_method",
    "singleton_method",
    "method",
    "func_literal",
    "subroutine",
    "fun",
];

/// Top-level node kinds that are a definition, across the grammars silt
/// carries (Python, Rust, Go, JavaScript, TypeScript).
pub const DEFINITION_KINDS: [&str; 35] = [
    // Python
    "function_definition",
    "class_definition",
    "decorated_definition",
    "type_alias_statement",
    // Rust
    "function_item",
    "function_signature_item",
    "struct_item",
    "enum_item",
    "union_item",
    "trait_item",
    "impl_item",
    "mod_item",
    "const_item",
    "static_item",
    "type_item",
    "macro_definition",
    "macro_invocation",
    "foreign_mod_item",
    // Go
    "function_declaration",
    "method_declaration",
    "type_declaration",
    "const_declaration",
    "var_declaration",
    // JavaScript and TypeScript
    "generator_function_declaration",
    "class_declaration",
    "abstract_class_declaration",
    "lexical_declaration",
    "variable_declaration",
    "interface_declaration",
    "type_alias_declaration",
    "enum_declaration",
    "module",
    "internal_module",
    "ambient_declaration",
    "function_signature",
];

/// The grammar for a path, by extension.
pub fn language_for(path: &str) -> Option<Language> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    let language = match ext.as_str() {
        "rs" => tree_sitter_rust::LANGUAGE,
        "py" | "pyi" => tree_sitter_python::LANGUAGE,
        "go" => tree_sitter_go::LANGUAGE,
        "js" | "mjs" | "cjs" | "jsx" => tree_sitter_javascript::LANGUAGE,
        "ts" | "mts" | "cts" => tree_sitter_typescript::LANGUAGE_TYPESCRIPT,
        "tsx" => tree_sitter_typescript::LANGUAGE_TSX,
        _ => return None,
    };
    Some(language.into())
}

/// The definitions and function spans of `text`, the contents of `path`;
/// None when the extension has no grammar or the file is over
/// [`MAX_PARSE_BYTES`]. A file with syntax errors still gives what the
/// parser recovered.
pub fn parse(path: &str, text: &str) -> Option<Syntax> {
    if text.len() > MAX_PARSE_BYTES {
        return None;
    }
    let language = language_for(path)?;
    let mut parser = Parser::new();
    parser.set_language(&language).ok()?;
    let tree = parser.parse(text, None)?;
    let root = tree.root_node();
    let lines: Vec<&str> = text.split('\n').collect();
    let mut cursor = root.walk();
    let definitions = root
        .named_children(&mut cursor)
        .filter(is_definition)
        .filter_map(|n| definition_row(n, &lines))
        .collect();
    Some(Syntax {
        definitions,
        functions: functions(root, text.as_bytes()),
    })
}

/// True for a top-level node that defines something.
fn is_definition(node: &Node) -> bool {
    let kind = node.kind();
    if DEFINITION_KINDS.contains(&kind) {
        return true;
    }
    match kind {
        // `export function f`, `export default x`; not `export { a } from`
        "export_statement" => {
            node.child_by_field_name("declaration").is_some()
                || node.child_by_field_name("value").is_some()
        }
        // Python `X = 1`; TypeScript `namespace N {}` parses as an expression
        "expression_statement" => node
            .named_child(0)
            .is_some_and(|c| matches!(c.kind(), "assignment" | "internal_module")),
        _ => false,
    }
}

/// A definition's outline row: its first non-blank line that neither
/// starts with `@` nor lies inside one of its decorators (1-based).
fn definition_row(node: Node, lines: &[&str]) -> Option<usize> {
    let first = node.start_position().row;
    let last = node.end_position().row;
    // decorators: Python's decorated_definition and JS/TS classes and
    // exports hold them as children
    let mut cursor = node.walk();
    let decorated: Vec<(usize, usize)> = node
        .named_children(&mut cursor)
        .filter(|c| c.kind() == "decorator")
        .map(|c| (c.start_position().row, c.end_position().row))
        .collect();
    (first..=last.min(lines.len().saturating_sub(1)))
        .find(|&row| {
            let line = lines[row].trim();
            !line.is_empty()
                && !line.starts_with('@')
                && !decorated.iter().any(|&(s, e)| (s..=e).contains(&row))
        })
        .map(|row| row + 1)
}

/// The outermost function nodes, in file order, iteratively (a deep tree
/// cannot overflow the stack).
fn functions(root: Node, source: &[u8]) -> Vec<FunctionSpan> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    'visit: loop {
        let node = cursor.node();
        let matched = node.is_named() && FUNCTION_KINDS.contains(&node.kind());
        if matched {
            out.push(span(node, source));
        }
        if !matched && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'visit;
            }
            if !cursor.goto_parent() {
                break 'visit;
            }
        }
    }
    out
}

/// A function node's name and lines (1-based, inclusive).
fn span(node: Node, source: &[u8]) -> FunctionSpan {
    let start = node.start_position().row;
    let end = node.end_position();
    // a node ending at column 0 ends on the line before
    let last = if end.column == 0 && end.row > start {
        end.row - 1
    } else {
        end.row
    };
    FunctionSpan {
        name: node
            .child_by_field_name("name")
            .and_then(|n| n.utf8_text(source).ok())
            .unwrap_or_default()
            .to_string(),
        line_start: start + 1,
        line_end: last + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(path: &str, text: &str) -> Vec<(usize, usize, String)> {
        parse(path, text)
            .expect("a grammar")
            .functions
            .into_iter()
            .map(|f| (f.line_start, f.line_end, f.name))
            .collect()
    }

    fn definitions(path: &str, text: &str) -> Vec<usize> {
        parse(path, text).expect("a grammar").definitions
    }

    /// The spec's case: `outer` on lines 3–6 holds `inner`; class `Thing`
    /// on line 8 holds `method` on lines 9–10.
    const PYTHON: &str = "import os\n\ndef outer():\n    def inner():\n        return 1\n    return inner()\n\nclass Thing:\n    def method(self):\n        return os.getcwd()\n";

    #[test]
    fn python_spans_keep_nested_functions_in_their_parent() {
        let got = spans("a.py", PYTHON);
        let lines: Vec<(usize, usize)> = got.iter().map(|s| (s.0, s.1)).collect();
        let names: Vec<&str> = got.iter().map(|s| s.2.as_str()).collect();
        assert_eq!(lines, [(3, 6), (9, 10)]);
        assert_eq!(names, ["outer", "method"]);
        // the import is not a definition
        assert_eq!(definitions("a.py", PYTHON), [3, 8]);
    }

    #[test]
    fn go_func_add_is_one_span() {
        let go = "package x\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n";
        assert_eq!(spans("x.go", go), [(3, 5, "Add".to_string())]);
        assert_eq!(definitions("x.go", go), [3]);
        // methods, types and a func literal (nameless) in a var
        let more = "package x\n\nimport \"fmt\"\n\n// T is a thing.\ntype T struct{}\n\nfunc (t T) String() string {\n\treturn fmt.Sprint(1)\n}\n\nvar f = func() {\n}\n";
        assert_eq!(
            spans("x.go", more),
            [(8, 10, "String".to_string()), (12, 13, String::new())]
        );
        assert_eq!(definitions("x.go", more), [6, 8, 12]);
    }

    #[test]
    fn decorators_are_not_the_definitions_row() {
        let py = "@app.route(\n    \"/x\",\n)\n@login_required\n\ndef view():\n    return 1\n\n@dataclass\nclass Point:\n    x: int\n\nLIMIT = 3\nif __name__ == \"__main__\":\n    view()\n";
        // row 6, not the decorator's argument line 2; the spans start at def
        assert_eq!(definitions("v.py", py), [6, 10, 13]);
        assert_eq!(spans("v.py", py), [(6, 7, "view".to_string())]);
        let ts = "import { Component } from \"x\";\n\n@Component({\n  selector: \"app\",\n})\nexport class AppComponent {\n  constructor() {}\n  title(): string {\n    return \"a\";\n  }\n}\n";
        assert_eq!(definitions("app.ts", ts), [6]);
        assert_eq!(
            spans("app.ts", ts),
            [
                (7, 7, "constructor".to_string()),
                (8, 10, "title".to_string())
            ]
        );
    }

    #[test]
    fn rust_items_and_their_functions() {
        let rs = "//! A module.\n\nuse std::fmt;\n\n#[derive(Debug)]\npub struct S;\n\nimpl S {\n    pub fn new() -> Self {\n        fn helper() {}\n        S\n    }\n\n    fn other(&self) {}\n}\n\nfn main() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n";
        assert_eq!(definitions("m.rs", rs), [6, 8, 17, 20]);
        assert_eq!(
            spans("m.rs", rs),
            [
                (9, 12, "new".to_string()),
                (14, 14, "other".to_string()),
                (17, 17, "main".to_string()),
                (22, 22, "t".to_string())
            ]
        );
    }

    #[test]
    fn javascript_functions_classes_and_exports() {
        let js = "import fs from \"fs\";\n\nexport function load(path) {\n  return fs.readFileSync(path);\n}\n\nclass Cache {\n  lookup(key) {\n    return 1;\n  }\n}\n\nconst arrow = () => 1;\nexport { Cache };\nmodule.exports = load;\n";
        assert_eq!(definitions("a.js", js), [3, 7, 13]);
        assert_eq!(
            spans("a.js", js),
            [(3, 5, "load".to_string()), (8, 10, "lookup".to_string())]
        );
        // TypeScript's own declarations, and TSX
        let ts = "export interface Opts {\n  a: number;\n}\ntype Id = string;\nenum E { A }\nnamespace N {\n  export function f() {}\n}\n";
        assert_eq!(definitions("o.ts", ts), [1, 4, 5, 6]);
        assert_eq!(spans("o.ts", ts), [(7, 7, "f".to_string())]);
        let tsx = "export function App() {\n  return <div>hi</div>;\n}\n";
        assert_eq!(spans("App.tsx", tsx), [(1, 3, "App".to_string())]);
    }

    #[test]
    fn files_without_a_grammar_or_too_large_are_not_parsed() {
        assert_eq!(parse("README.md", "# x\n"), None);
        assert_eq!(parse("Makefile", "all:\n"), None);
        assert_eq!(parse("a.py.txt", "def f(): pass\n"), None);
        let huge = "x = 1\n".repeat(MAX_PARSE_BYTES / 6 + 1);
        assert_eq!(parse("big.py", &huge), None);
        // broken source still gives what the parser recovered
        let broken = "def ok():\n    return 1\n\ndef broken(:\n";
        assert_eq!(spans("b.py", broken)[0], (1, 2, "ok".to_string()));
        // CRLF line ends count lines as the engine does
        assert_eq!(
            spans("c.py", "x = 1\r\n\r\ndef f():\r\n    pass\r\n"),
            [(3, 4, "f".to_string())]
        );
        // upper-case extensions have the grammar too
        assert!(parse("Main.PY", "pass\n").is_some());
    }

    /// 100k levels of nesting in each grammar, on a 256 KiB stack: the
    /// parser and the span walk are iterative, so the outline comes back
    /// (or None) without overflow and in bounded time.
    #[test]
    fn deep_nesting_is_parsed_without_overflow() {
        let n = 100_000;
        let cases = [
            (
                "deep.py",
                format!(
                    "x = {}1{}\ndef f():\n    pass\n",
                    "(".repeat(n),
                    ")".repeat(n)
                ),
            ),
            (
                "deep.rs",
                format!("fn f() {{ {}1{} }}\n", "[".repeat(n), "]".repeat(n)),
            ),
            (
                "deep.js",
                format!(
                    "function f() {{ return {}1{}; }}\n",
                    "[".repeat(n),
                    "]".repeat(n)
                ),
            ),
            (
                "deep.go",
                format!(
                    "package x\nfunc F() {{ {}{} }}\n",
                    "{".repeat(n),
                    "}".repeat(n)
                ),
            ),
            ("deep.ts", format!("{}\n", "function f() {".repeat(n / 20))),
        ];
        for (path, text) in cases {
            let started = std::time::Instant::now();
            let got = std::thread::Builder::new()
                .stack_size(256 << 10)
                .spawn(move || parse(path, &text).map(|s| s.functions.len()))
                .unwrap()
                .join()
                .unwrap_or_else(|_| panic!("{path}: the parser overflowed or panicked"));
            assert!(
                started.elapsed().as_secs() < 30,
                "{path}: {:?}",
                started.elapsed()
            );
            assert!(got.is_some(), "{path} gave no outline");
        }
    }
}
