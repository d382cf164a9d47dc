//! Specifies the house rules a newcomer relies on, over the repository's own
//! source: within each crate no two files import each other, directly or
//! around a cycle (a file's imports are its `use` items and paths, read in
//! both directions: `crate::` and `super::` paths, and a parent's paths
//! into its own child modules, `child::X` or `self::child::X`; a parent
//! declaring `mod child` is not an import), and no source file is over 500
//! lines before its unit tests, and no function over 80 lines but a few
//! named with their reasons.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates' source roots.
const CRATES: [&str; 10] = [
    "src",
    "core/src",
    "proto/src",
    "store/src",
    "solution/src",
    "worker/src",
    "coordinator/src",
    "plan/src",
    "players/src",
    "serve/src",
];

/// Lines a file may hold before its `#[cfg(test)]` module.
const MOST_LINES: usize = 500;

/// Lines a function may span, from its `fn` to its closing brace.
const MOST_FUNCTION_LINES: usize = 80;

/// The functions allowed over [`MOST_FUNCTION_LINES`]: (file, function,
/// why it is one piece).
const LONG_FUNCTIONS: [(&str, &str, &str); 0] = [];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file under a crate root: `lib.rs`/`main.rs` is
/// `[]`, `a/mod.rs` and `a.rs` are `["a"]`, `a/b.rs` is `["a", "b"]`.
fn module_of(root: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The source before the unit tests (`#[cfg(test)]` at the start of a line),
/// without comments.
fn code(text: &str) -> String {
    let body = text.split("\n#[cfg(test)]").next().unwrap_or(text);
    body.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths a file's code names: `crate::a::b...` and `super::...`
/// (resolved from `module`), including those inside `use` trees such as
/// `use crate::{a::X, b}` and `use super::{x, y}`.
fn named_paths(module: &[String], code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let text: String = bytes.iter().collect();
    for (start, prefix) in [("crate::", None), ("super::", Some(1usize))] {
        let mut from = 0;
        while let Some(i) = text[from..].find(start) {
            let at = from + i;
            from = at + start.len();
            // Not part of a longer identifier (e.g. `my_crate::`) or path
            // (the second `super::` of `super::super::`).
            if text[..at].ends_with("::") {
                continue;
            }
            if at > 0 {
                let c = text[..at].chars().last().unwrap();
                if is_ident(c) {
                    continue;
                }
            }
            let mut base: Vec<String> = match prefix {
                None => Vec::new(),
                Some(_) => module[..module.len().saturating_sub(1)].to_vec(),
            };
            // `super::super::...`
            let mut rest = &text[from..];
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
            for path in expand(rest) {
                let mut full = base.clone();
                full.extend(path);
                out.push(full);
            }
        }
    }
    out
}

/// The module paths a file's code names relative to its own module, into
/// its child modules `children`: `use child::X`, `use self::child::{X, Y}`
/// and path expressions `child::f()` or `self::child::f()` outside `use`
/// items. Returned resolved from `module`.
fn child_paths(module: &[String], code: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let resolve = |path: Vec<String>| -> Vec<String> {
        let mut full = module.to_vec();
        full.extend(path);
        full
    };
    let mut out = Vec::new();
    let mut outside = String::with_capacity(code.len());
    let mut rest = code;
    // `use` items: their root decides; the rest of the text is scanned for
    // path expressions.
    while let Some(i) = find_word(rest, "use") {
        outside.push_str(&rest[..i]);
        let after = &rest[i + 3..];
        let end = after.find(';').unwrap_or(after.len());
        let tree = after[..end].trim_start();
        let tree = tree.strip_prefix("self::").unwrap_or(tree);
        let root: String = tree.chars().take_while(|&c| is_ident(c)).collect();
        if children.contains(&root) || tree.starts_with('{') {
            out.extend(
                expand(tree)
                    .into_iter()
                    .filter(|p| p.first().is_some_and(|r| children.contains(r)))
                    .map(resolve),
            );
        }
        rest = &after[end..];
    }
    outside.push_str(rest);
    let text = outside;
    let mut from = 0;
    while let Some(i) = text[from..].find("::") {
        let at = from + i;
        from = at + 2;
        let head = &text[..at];
        let ident_start = head
            .char_indices()
            .rev()
            .take_while(|&(_, c)| is_ident(c))
            .last()
            .map_or(at, |(j, _)| j);
        let ident = &text[ident_start..at];
        let before = &text[..ident_start];
        let before = match before.strip_suffix("self::") {
            Some(b) if !b.ends_with(is_ident) => b,
            _ => before,
        };
        // The first segment of a path (or the one after `self::`).
        if ident.is_empty() || before.ends_with("::") || !children.contains(ident) {
            continue;
        }
        if let Some(path) = expand(&text[ident_start..]).into_iter().next() {
            out.push(resolve(path));
        }
    }
    out
}

/// Whether `c` may be part of an identifier.
fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where `word` first starts in `s` as a whole word.
fn find_word(s: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = s[from..].find(word) {
        let at = from + i;
        from = at + word.len();
        let before = s[..at].chars().last();
        let after = s[at + word.len()..].chars().next();
        let boundary = |c: Option<char>| !c.is_some_and(is_ident);
        if boundary(before) && boundary(after) {
            return Some(at);
        }
    }
    None
}

/// The paths of one use tree or path expression at the start of `s`:
/// `a::b::C` gives [[a, b, C]], `{a::X, b}` gives [[a, X], [b]].
fn expand(s: &str) -> Vec<Vec<String>> {
    let s = s.trim_start();
    if let Some(inner) = s.strip_prefix('{') {
        let mut depth = 1;
        let mut end = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let mut out = Vec::new();
        let (mut depth, mut last) = (0, 0);
        let inner = &inner[..end];
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.extend(expand(&inner[last..i]));
                    last = i + 1;
                }
                _ => {}
            }
        }
        out.extend(expand(&inner[last..]));
        return out;
    }
    let mut path = Vec::new();
    let mut rest = s;
    loop {
        let ident: String = rest.chars().take_while(|&c| is_ident(c)).collect();
        if ident.is_empty() {
            break;
        }
        rest = &rest[ident.len()..];
        path.push(ident);
        match rest.strip_prefix("::") {
            Some(r) if r.starts_with('{') => {
                return expand(r)
                    .into_iter()
                    .map(|tail| path.iter().cloned().chain(tail).collect())
                    .collect();
            }
            Some(r) => rest = r,
            None => break,
        }
    }
    vec![path]
}

/// A crate's import graph: a file's module -> the modules it imports.
type Graph = BTreeMap<Vec<String>, BTreeSet<Vec<String>>>;

/// For each crate, its files' import graph: file module -> module files it
/// names (the longest prefix of a named path that is a file of the crate).
fn import_graphs() -> Vec<(String, Graph)> {
    let mut graphs = Vec::new();
    for root in CRATES {
        let root = repo().join(root);
        let mut files = Vec::new();
        rust_files(&root, &mut files);
        let modules: BTreeMap<Vec<String>, PathBuf> = files
            .iter()
            .map(|f| (module_of(&root, f), f.clone()))
            .collect();
        let mut graph = Graph::new();
        for (module, file) in &modules {
            let text = std::fs::read_to_string(file).unwrap();
            let edges = graph.entry(module.clone()).or_default();
            let children: BTreeSet<String> = modules
                .keys()
                .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
                .map(|m| m[module.len()].clone())
                .collect();
            let code = code(&text);
            let mut paths = named_paths(module, &code);
            paths.extend(child_paths(module, &code, &children));
            for path in paths {
                let target = (0..=path.len())
                    .rev()
                    .map(|n| path[..n].to_vec())
                    .find(|p| modules.contains_key(p))
                    .unwrap_or_default();
                // Naming oneself or the crate root's re-exports is no
                // import between files.
                if target != *module && !target.is_empty() {
                    edges.insert(target);
                }
            }
        }
        graphs.push((root.display().to_string(), graph));
    }
    graphs
}

/// A cycle in `graph`, if any, as the modules around it.
fn find_cycle(graph: &Graph) -> Option<Vec<Vec<String>>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        m: &Vec<String>,
        graph: &Graph,
        marks: &mut BTreeMap<Vec<String>, Mark>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        match marks.get(m) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let i = stack.iter().position(|s| s == m).unwrap();
                return Some(stack[i..].to_vec());
            }
            None => {}
        }
        marks.insert(m.clone(), Mark::Open);
        stack.push(m.clone());
        for next in graph.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, graph, marks, stack) {
                return Some(c);
            }
        }
        stack.pop();
        marks.insert(m.clone(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for m in graph.keys() {
        if let Some(c) = visit(m, graph, &mut marks, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

#[test]
fn no_two_files_of_a_crate_import_each_other() {
    let mut cycles = Vec::new();
    for (root, graph) in import_graphs() {
        assert!(
            graph.len() > 1 || root.ends_with("proto/src"),
            "{root}: no files found"
        );
        if let Some(c) = find_cycle(&graph) {
            let names: Vec<String> = c.iter().map(|m| m.join("::")).collect();
            cycles.push(format!("{root}: {}", names.join(" -> ")));
        }
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_cycle_finder_finds_cycles_and_use_trees() {
    let m = |s: &str| -> Vec<String> {
        s.split("::")
            .filter(|p| !p.is_empty())
            .map(String::from)
            .collect()
    };
    let paths = named_paths(
        &m("a::b"),
        "use crate::{x::Y, z::{self, W}};\nuse super::c::D;\nlet q = crate::r::s();",
    );
    assert!(paths.contains(&m("x::Y")), "{paths:?}");
    assert!(paths.contains(&m("z::W")), "{paths:?}");
    assert!(paths.contains(&m("a::c::D")), "{paths:?}");
    assert!(paths.contains(&m("r::s")), "{paths:?}");
    let paths = named_paths(&m("a::b::c"), "use super::super::d::E;");
    assert_eq!(paths, [m("a::d::E")]);
    // A parent's paths into its children, in `use` items and expressions;
    // a child's name after another path, or in a `crate::` tree, is not one.
    let children = BTreeSet::from(["c".to_string(), "d".to_string()]);
    let paths = child_paths(
        &m("a"),
        "mod c;\nuse c::{X, Y};\npub use self::d::Z;\nuse crate::e::{c::W};\n\
         fn f() { d::g(); self::c::h(); x::c::i(); }",
        &children,
    );
    assert_eq!(
        paths,
        [
            m("a::c::X"),
            m("a::c::Y"),
            m("a::d::Z"),
            m("a::d::g"),
            m("a::c::h")
        ]
    );
    let mut graph = BTreeMap::new();
    graph.insert(m("a"), BTreeSet::from([m("b")]));
    graph.insert(m("b"), BTreeSet::from([m("c")]));
    graph.insert(m("c"), BTreeSet::new());
    assert_eq!(find_cycle(&graph), None);
    graph.get_mut(&m("c")).unwrap().insert(m("a"));
    assert_eq!(find_cycle(&graph).map(|c| c.len()), Some(3));
}

#[test]
fn no_source_file_is_over_500_lines_before_its_tests() {
    let mut long = Vec::new();
    for root in CRATES {
        let mut files = Vec::new();
        rust_files(&repo().join(root), &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let lines = text.split("\n#[cfg(test)]").next().unwrap().lines().count();
            if lines > MOST_LINES {
                long.push(format!("{}: {lines} lines", f.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "files over {MOST_LINES} lines:\n{}",
        long.join("\n")
    );
}

/// `text` with its comments and the insides of its string and character
/// literals blanked (line breaks kept), so that what braces and words
/// remain are code.
fn blank_literals(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = c.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for x in &mut out[from..to.min(c.len())] {
            if *x != '\n' {
                *x = ' ';
            }
        }
    };
    let at = |i: usize, s: &str| s.chars().enumerate().all(|(k, x)| c.get(i + k) == Some(&x));
    let mut i = 0;
    while i < c.len() {
        let ident_before = i > 0 && is_ident(c[i - 1]);
        let hashes = c[i + 1..].iter().take_while(|&&x| x == '#').count();
        let end = if at(i, "//") {
            i + c[i..]
                .iter()
                .position(|&x| x == '\n')
                .unwrap_or(c.len() - i)
        } else if at(i, "/*") {
            let (mut j, mut depth) = (i + 2, 1);
            while j < c.len() && depth > 0 {
                depth += usize::from(at(j, "/*"));
                depth -= usize::from(at(j, "*/"));
                j += if at(j, "/*") || at(j, "*/") { 2 } else { 1 };
            }
            j
        } else if c[i] == 'r' && !ident_before && c.get(i + 1 + hashes) == Some(&'"') {
            let close: String = std::iter::once('"')
                .chain("#".repeat(hashes).chars())
                .collect();
            let mut j = i + 2 + hashes;
            while j < c.len() && !at(j, &close) {
                j += 1;
            }
            j + close.len()
        } else if c[i] == '"' {
            let mut j = i + 1;
            while j < c.len() && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            j + 1
        } else if c[i] == '\'' && c.get(i + 1) == Some(&'\\') {
            i + 2 + c[i + 2..].iter().position(|&x| x == '\'').unwrap_or(0) + 1
        } else if c[i] == '\'' && c.get(i + 2) == Some(&'\'') {
            i + 3
        } else {
            i += 1;
            continue;
        };
        blank(&mut out, i, end);
        i = end;
    }
    out.into_iter().collect()
}

/// Each function with a body in `code` (as [`blank_literals`] leaves it):
/// its name, its first line (from 1) and how many lines it spans.
fn function_lengths(code: &str) -> Vec<(String, usize, usize)> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    for i in 0..c.len() {
        let word =
            c[i..].starts_with(&['f', 'n']) && c.get(i + 2).is_some_and(|x| x.is_whitespace());
        if !word || (i > 0 && is_ident(c[i - 1])) {
            continue;
        }
        let start = i + 2 + c[i + 2..].iter().take_while(|x| x.is_whitespace()).count();
        let name: String = c[start..].iter().take_while(|&&x| is_ident(x)).collect();
        let Some(open) = c[start..].iter().position(|&x| x == '{' || x == ';') else {
            continue;
        };
        if name.is_empty() || c[start + open] == ';' {
            continue;
        }
        let mut depth = 0;
        for (j, &x) in c.iter().enumerate().skip(start + open) {
            depth += i32::from(x == '{') - i32::from(x == '}');
            if depth == 0 {
                let line = c[..i].iter().filter(|&&x| x == '\n').count() + 1;
                let lines = c[i..j].iter().filter(|&&x| x == '\n').count() + 1;
                out.push((name, line, lines));
                break;
            }
        }
    }
    out
}

#[test]
fn no_function_is_over_80_lines() {
    assert!(LONG_FUNCTIONS.len() <= 5, "at most 5 long functions");
    let mut long = Vec::new();
    let mut allowed_seen = BTreeSet::new();
    for root in CRATES {
        let mut files = Vec::new();
        rust_files(&repo().join(root), &mut files);
        // A file of unit tests (`tests.rs`) is test code.
        for f in files.iter().filter(|f| !f.ends_with("tests.rs")) {
            let text = std::fs::read_to_string(f).unwrap();
            let code = blank_literals(text.split("\n#[cfg(test)]").next().unwrap());
            let file = f
                .strip_prefix(repo())
                .unwrap()
                .to_string_lossy()
                .to_string();
            for (name, line, lines) in function_lengths(&code) {
                let allowed = LONG_FUNCTIONS
                    .iter()
                    .any(|&(f, n, _)| f == file && n == name);
                if allowed {
                    allowed_seen.insert((file.clone(), name.clone()));
                } else if lines > MOST_FUNCTION_LINES {
                    long.push(format!("{file}:{line}: {name}, {lines} lines"));
                }
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MOST_FUNCTION_LINES} lines:\n{}",
        long.join("\n")
    );
    for (file, name, _) in LONG_FUNCTIONS {
        let seen = allowed_seen.contains(&(file.to_string(), name.to_string()));
        assert!(seen, "{file}: {name} is allowed to be long but not found");
    }
}

#[test]
fn the_function_counter_sees_bodies_not_literals() {
    let body = |n: usize| format!("fn f() {{\n{}}}\n", "    x();\n".repeat(n - 2));
    let lengths = |code: &str| function_lengths(&blank_literals(code));
    assert_eq!(lengths(&body(81)), [("f".to_string(), 1, 81)]);
    assert_eq!(lengths(&body(80))[0].2, 80);
    // Braces in literals and comments are not code; declarations without a
    // body and function pointer types are not functions.
    let code = "trait T { fn g(&self); }\n\
                /* } /* { */ } */\n\
                pub fn h<'a>(f: fn(u8) -> u8, s: &'a str) -> char {\n\
                    let _ = (\"}\\\"\", r#\"\"}\"#, b'{', '\\'', \"// }\");\n\
                    '}' // {\n\
                }\n\
                fn last() {}";
    assert_eq!(
        lengths(code),
        [("h".to_string(), 3, 4), ("last".to_string(), 7, 1)]
    );
}
