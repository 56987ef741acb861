//! No module of a workspace crate imports back into one that imports it.
//!
//! Rust allows modules to use each other in a circle; this test does not.
//! A cycle among siblings (`runtime::state` ↔ `runtime::exec`) or among a
//! crate's top-level modules (`runtime` → `tools` → `runtime`) means neither
//! can be read, tested or moved without the other. The check reads the
//! source, not the compiler's view: every `crate::`, `super::` and
//! child-module path (in `use` trees and inline), with `pub use`
//! re-exports followed to where the item lives. A module using its own
//! ancestors or descendants is allowed (that is what `mod.rs` is for);
//! only edges between different children of one parent count.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

type ModPath = Vec<String>;

/// One reference from a file's module to a path, with where it was seen.
struct Reference {
    from: ModPath,
    path: ModPath,
    at: String,
}

#[derive(Default)]
struct Crate {
    /// Every module that has a file, by path.
    modules: BTreeSet<ModPath>,
    /// `pub use` re-exports: (module, name) → the full path it names.
    reexports: HashMap<(ModPath, String), ModPath>,
    references: Vec<Reference>,
}

#[test]
fn no_module_imports_back_into_one_that_imports_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut problems = Vec::new();
    let crates = crate_sources(root);
    assert!(
        crates.len() >= 10,
        "found only {} crates under {}",
        crates.len(),
        root.display()
    );
    for src in crates {
        let krate = read_crate(&src);
        for cycle in cycles(&krate) {
            problems.push(format!("{}: {cycle}", src.display()));
        }
    }
    assert!(
        problems.is_empty(),
        "module cycles (break each by moving the shared item down or into its own module):\n{}",
        problems.join("\n")
    );
}

/// Between crates the same rule holds, dev- and build-dependencies
/// included: cargo refuses a cycle of normal dependencies but allows one
/// through a crate's tests, and a test that needs a crate above it means
/// the two cannot be built or read apart.
#[test]
fn no_workspace_crate_depends_back_on_one_that_depends_on_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let graph = crate_graph(root);
    assert!(graph.len() >= 20, "found only {} crates", graph.len());
    let cycles = crate_cycles(&graph);
    assert!(
        cycles.is_empty(),
        "crate cycles (through any kind of dependency):\n{}",
        cycles.join("\n")
    );
    // the checker itself: a test-only edge back closes a cycle
    let mut looped = graph.clone();
    looped
        .get_mut("silt-config")
        .unwrap()
        .insert("silt-mcp".to_string());
    assert!(
        !crate_cycles(&looped).is_empty(),
        "the checker missed a cycle"
    );
}

/// Each workspace crate's name → the workspace crates it depends on, in
/// any section of its Cargo.toml.
fn crate_graph(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut manifests = BTreeMap::new();
    for src in crate_sources(root) {
        let manifest = fs::read_to_string(src.parent().unwrap().join("Cargo.toml")).unwrap();
        let name = manifest
            .lines()
            .find_map(|l| l.strip_prefix("name = "))
            .map(|n| n.trim_matches('"').to_string())
            .unwrap();
        manifests.insert(name, manifest);
    }
    let names: BTreeSet<String> = manifests.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for (name, manifest) in &manifests {
        let mut deps = BTreeSet::new();
        let mut in_deps = false;
        for line in manifest.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                in_deps = line.ends_with("dependencies]");
                continue;
            }
            if !in_deps {
                continue;
            }
            let key = line.split(['=', '.', ' ']).next().unwrap_or("");
            if names.contains(key) && key != name {
                deps.insert(key.to_string());
            }
        }
        graph.insert(name.clone(), deps);
    }
    graph
}

/// Every cycle of the graph, each as "a -> b -> a".
fn crate_cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut found = Vec::new();
    for start in graph.keys() {
        // a path from `start` back to itself through crates after it in
        // order, so each cycle is reported once, from its first crate
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((at, path)) = stack.pop() {
            for next in graph.get(&at).into_iter().flatten() {
                if next == start {
                    found.push(format!("{} -> {start}", path.join(" -> ")));
                } else if next > start && seen.insert(next.clone()) {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    found
}

#[test]
fn the_checker_finds_a_sibling_cycle_through_a_reexport() {
    let dir = tempfile_dir();
    let src = dir.join("src");
    fs::create_dir_all(src.join("runtime")).unwrap();
    fs::write(src.join("lib.rs"), "mod runtime;\nmod tools;\n").unwrap();
    fs::write(
        src.join("runtime/mod.rs"),
        "mod exec;\nmod state;\npub use state::State;\n",
    )
    .unwrap();
    // exec reaches state only through the parent's re-export.
    fs::write(
        src.join("runtime/exec.rs"),
        "use super::State;\npub fn run() {}\n",
    )
    .unwrap();
    fs::write(
        src.join("runtime/state.rs"),
        "// crate::runtime::exec::run in a comment is not a use\n\
         pub struct State;\nfn f() { super::exec::run(); let _ = \"crate::tools::x\"; }\n",
    )
    .unwrap();
    fs::write(src.join("tools.rs"), "use crate::runtime::State;\n").unwrap();
    let found = cycles(&read_crate(&src));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("exec") && found[0].contains("state"),
        "{found:?}"
    );
    // Top level: tools → runtime only, no cycle; the string and the
    // comment were not read as paths.
    fs::write(src.join("tools.rs"), "pub fn x() {}\n").unwrap();
    fs::write(
        src.join("runtime/mod.rs"),
        "mod exec;\nmod state;\npub use state::State;\nfn g() { crate::tools::x(); }\n",
    )
    .unwrap();
    fs::write(
        src.join("lib.rs"),
        "mod runtime;\nmod tools;\nuse crate::runtime::State;\n",
    )
    .unwrap();
    fs::write(
        src.join("tools.rs"),
        "pub fn x() {}\nfn h() { let _ = crate::runtime::State; }\n",
    )
    .unwrap();
    let found = cycles(&read_crate(&src));
    assert!(
        found
            .iter()
            .any(|c| c.contains("runtime") && c.contains("tools")),
        "{found:?}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("silt-cycles-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// The `src` folder of every crate in the workspace.
pub(crate) fn crate_sources(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if !path.is_dir() || name.starts_with('.') || name == "target" || name == "node_modules"
            {
                continue;
            }
            if name == "src" && dir.join("Cargo.toml").is_file() {
                found.push(path);
            } else {
                dirs.push(path);
            }
        }
    }
    found.sort();
    found
}

fn read_crate(src: &Path) -> Crate {
    let mut krate = Crate::default();
    let mut files = Vec::new();
    collect_files(src, src, &mut files);
    for (_, module) in &files {
        krate.modules.insert(module.clone());
    }
    for (file, module) in &files {
        let text = strip_comments_and_strings(&fs::read_to_string(file).unwrap());
        let at = file.strip_prefix(src).unwrap_or(file).display().to_string();
        scan(&text, module, &at, &mut krate);
    }
    krate
}

/// (file, module path) for every `.rs` file under `src`.
fn collect_files(src: &Path, dir: &Path, out: &mut Vec<(PathBuf, ModPath)>) {
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_files(src, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(src).unwrap();
            let mut module: ModPath = relative
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                module.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                module.pop();
            }
            // src/bin/x.rs is a crate of its own; it cannot form a cycle
            // with the library's modules.
            if module.first().is_some_and(|m| m == "bin") {
                continue;
            }
            out.push((path, module));
        }
    }
}

/// Blanks comments and the contents of string and char literals, keeping
/// line breaks so positions still map to lines.
fn strip_comments_and_strings(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !chars
                .get(i.wrapping_sub(1))
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            // raw string r"..." or r#"..."#
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            out.push('"');
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                out.push(blank(chars[j]));
                j += 1;
            }
            out.push('"');
            i = j;
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let close = if next == Some('\\') {
                (i + 2..chars.len().min(i + 12)).find(|&j| chars[j] == '\'')
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match close {
                Some(end) => {
                    out.push_str("' '");
                    for _ in i + 3..=end {
                        out.push(' ');
                    }
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Semi,
    Star,
    Other(char),
}

fn tokenize(text: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let word = word.strip_prefix("r#").map(str::to_string).unwrap_or(word);
            tokens.push((Token::Ident(word), line));
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            tokens.push((Token::PathSep, line));
            i += 2;
        } else {
            let token = match c {
                '{' => Token::Open,
                '}' => Token::Close,
                ',' => Token::Comma,
                ';' => Token::Semi,
                '*' => Token::Star,
                other => Token::Other(other),
            };
            tokens.push((token, line));
            i += 1;
        }
    }
    tokens
}

/// Reads the references of one file (module `module`), tracking inline
/// `mod x { }` blocks so `super::` resolves from where it is written.
fn scan(text: &str, module: &ModPath, at: &str, krate: &mut Crate) {
    let tokens = tokenize(text);
    // (inline module name, brace depth at which it closes, is a test module)
    let mut inline: Vec<(String, usize, bool)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let here: ModPath = module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(n, _, _)| n.clone()))
            .collect();
        // Tests may use any sibling for fixtures; nothing imports a test.
        let in_test = inline.iter().any(|(_, _, test)| *test);
        match &tokens[i].0 {
            Token::Open => {
                depth += 1;
                i += 1;
            }
            Token::Close => {
                if inline.last().is_some_and(|(_, d, _)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Token::Ident(w) if w == "mod" => {
                if let (Some((Token::Ident(name), _)), Some((Token::Open, _))) =
                    (tokens.get(i + 1), tokens.get(i + 2))
                {
                    depth += 1;
                    let test = i >= 7
                        && tokens[i - 7..i].iter().map(|t| &t.0).eq([
                            Token::Other('#'),
                            Token::Other('['),
                            Token::Ident("cfg".into()),
                            Token::Other('('),
                            Token::Ident("test".into()),
                            Token::Other(')'),
                            Token::Other(']'),
                        ]
                        .iter());
                    inline.push((name.clone(), depth, test || in_test));
                    i += 3;
                } else {
                    i += 1;
                }
            }
            Token::Ident(w) if w == "use" => {
                let public = i >= 1 && is_visibility_before(&tokens, i);
                let mut paths = Vec::new();
                let end = use_tree(&tokens, i + 1, Vec::new(), &mut paths);
                for (path, alias) in paths {
                    let line = tokens[i].1;
                    if let Some(full) = resolve_start(&path, &here, krate)
                        && !in_test
                    {
                        if public && let Some(name) = alias {
                            krate.reexports.insert((here.clone(), name), full.clone());
                        }
                        krate.references.push(Reference {
                            from: here.clone(),
                            path: full,
                            at: format!("{at}:{line}"),
                        });
                    }
                }
                i = end;
            }
            Token::Ident(_) => {
                // An inline path: ident (:: ident)*
                let prev_is_sep = i >= 1 && tokens[i - 1].0 == Token::PathSep;
                let mut path = Vec::new();
                let mut j = i;
                while let Some((Token::Ident(w), _)) = tokens.get(j) {
                    path.push(w.clone());
                    if tokens.get(j + 1).map(|t| &t.0) == Some(&Token::PathSep) {
                        j += 2;
                    } else {
                        j += 1;
                        break;
                    }
                }
                if !prev_is_sep
                    && !in_test
                    && path.len() >= 2
                    && let Some(full) = resolve_start(&path, &here, krate)
                {
                    krate.references.push(Reference {
                        from: here.clone(),
                        path: full,
                        at: format!("{at}:{}", tokens[i].1),
                    });
                }
                i = j.max(i + 1);
            }
            _ => i += 1,
        }
    }
}

/// Whether the `use` at `i` is preceded by `pub` or `pub(...)`.
fn is_visibility_before(tokens: &[(Token, usize)], i: usize) -> bool {
    match &tokens[i - 1].0 {
        Token::Ident(w) => w == "pub",
        Token::Other(')') => {
            // pub(crate) / pub(super) / pub(in path)
            let mut j = i - 1;
            while j > 0 && tokens[j].0 != Token::Other('(') {
                j -= 1;
            }
            j >= 1 && tokens[j - 1].0 == Token::Ident("pub".into())
        }
        _ => false,
    }
}

/// Expands a use tree starting at `i` into (path, name it binds) pairs;
/// returns the index after it.
fn use_tree(
    tokens: &[(Token, usize)],
    mut i: usize,
    prefix: ModPath,
    out: &mut Vec<(ModPath, Option<String>)>,
) -> usize {
    let mut path = prefix;
    loop {
        match tokens.get(i).map(|t| &t.0) {
            Some(Token::Ident(w)) => {
                let w = w.clone();
                i += 1;
                if tokens.get(i).map(|t| &t.0) == Some(&Token::Ident("as".into())) {
                    let alias = match tokens.get(i + 1).map(|t| &t.0) {
                        Some(Token::Ident(a)) => Some(a.clone()),
                        _ => None,
                    };
                    path.push(w);
                    out.push((path, alias));
                    return skip_to_end_of_tree(tokens, i + 2);
                }
                if tokens.get(i).map(|t| &t.0) == Some(&Token::PathSep) {
                    path.push(w);
                    i += 1;
                    continue;
                }
                let name = if w == "self" {
                    path.last().cloned()
                } else {
                    path.push(w.clone());
                    Some(w)
                };
                out.push((path, name));
                return skip_to_end_of_tree(tokens, i);
            }
            Some(Token::Star) => {
                out.push((path, None));
                return skip_to_end_of_tree(tokens, i + 1);
            }
            Some(Token::Open) => {
                i += 1;
                loop {
                    match tokens.get(i).map(|t| &t.0) {
                        Some(Token::Close) => {
                            return skip_to_end_of_tree(tokens, i + 1);
                        }
                        Some(Token::Comma) => i += 1,
                        None => return i,
                        _ => i = use_tree(tokens, i, path.clone(), out),
                    }
                }
            }
            _ => return i,
        }
    }
}

/// A subtree ends at `,`, `}` (left for the caller) or `;` (consumed).
fn skip_to_end_of_tree(tokens: &[(Token, usize)], i: usize) -> usize {
    match tokens.get(i).map(|t| &t.0) {
        Some(Token::Semi) => i + 1,
        _ => i,
    }
}

/// Turns a path as written in module `here` into a path from the crate
/// root, or None when it names something outside the crate.
fn resolve_start(path: &[String], here: &ModPath, krate: &Crate) -> Option<ModPath> {
    let mut base = here.clone();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("super") | Some("self") => {
            while let Some(first) = rest.first() {
                match first.as_str() {
                    "super" => {
                        base.pop()?;
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        Some(first) => {
            // A child module of the current module, or a sibling named by
            // a `use` elsewhere: only a child module is resolvable here.
            let mut child = here.clone();
            child.push(first.to_string());
            if !krate.modules.contains(&child) {
                return None;
            }
        }
        None => return None,
    }
    Some(base.into_iter().chain(rest.iter().cloned()).collect())
}

/// The module a full path lands in, following `pub use` re-exports.
fn landing_module(path: &ModPath, krate: &Crate) -> ModPath {
    let mut path = path.clone();
    for _ in 0..8 {
        let mut module = Vec::new();
        let mut k = 0;
        while k < path.len() {
            let mut next = module.clone();
            next.push(path[k].clone());
            if krate.modules.contains(&next) {
                module = next;
                k += 1;
            } else {
                break;
            }
        }
        let Some(name) = path.get(k) else {
            return module;
        };
        match krate.reexports.get(&(module.clone(), name.clone())) {
            Some(target) if target != &path[..=k] => {
                let mut followed = target.clone();
                followed.extend(path[k + 1..].iter().cloned());
                path = followed;
            }
            _ => return module,
        }
    }
    path
}

/// Every cycle among the children of one parent, described by its edges.
fn cycles(krate: &Crate) -> Vec<String> {
    // parent → (child → (child → first place seen))
    let mut graphs: BTreeMap<ModPath, BTreeMap<String, BTreeMap<String, String>>> = BTreeMap::new();
    for r in &krate.references {
        let from: ModPath = file_module(&r.from, krate);
        let to = landing_module(&r.path, krate);
        let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        if common == from.len() || common == to.len() {
            continue; // an ancestor or a descendant
        }
        graphs
            .entry(from[..common].to_vec())
            .or_default()
            .entry(from[common].clone())
            .or_default()
            .entry(to[common].clone())
            .or_insert_with(|| r.at.clone());
    }
    let mut found = Vec::new();
    for (parent, graph) in &graphs {
        for component in strongly_connected(graph) {
            if component.len() < 2 {
                continue;
            }
            let members: BTreeSet<&String> = component.iter().collect();
            let mut edges = Vec::new();
            for a in &component {
                for (b, at) in &graph[a] {
                    if members.contains(b) {
                        edges.push(format!("{a} → {b} ({at})"));
                    }
                }
            }
            let scope = if parent.is_empty() {
                "crate".to_string()
            } else {
                parent.join("::")
            };
            found.push(format!("in {scope}: {}", edges.join(", ")));
        }
    }
    found
}

/// Inline modules belong to the file that holds them.
fn file_module(module: &ModPath, krate: &Crate) -> ModPath {
    let mut m = module.clone();
    while !m.is_empty() && !krate.modules.contains(&m) {
        m.pop();
    }
    m
}

/// Tarjan's strongly connected components.
fn strongly_connected(graph: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeMap<String, String>>,
        index: HashMap<&'a str, usize>,
        low: HashMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(edges) = s.graph.get(v) {
            for w in edges.keys() {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let low = s.low[w].min(s.low[v]);
                    s.low.insert(v, low);
                } else if s.on_stack.contains(w) {
                    let low = s.index[w].min(s.low[v]);
                    s.low.insert(v, low);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            component.sort();
            s.out.push(component);
        }
    }
    let mut s = State {
        graph,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}
