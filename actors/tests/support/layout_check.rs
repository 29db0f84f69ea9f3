//! The import-graph checker behind the layout tests of both crates
//! (`actors/tests/layout.rs`, `tests/api/layout.rs`).
//!
//! Each file is a node; a `use` or a path (`super::x`, `crate::a::b`,
//! `child::x`) that names another file's module is an edge. Inline test
//! modules are left out: their `super::*` is their own file.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A file, as its module path under `src/`.
pub(crate) type Module = Vec<String>;

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

pub(crate) fn module_of(root: &Path, file: &Path) -> Module {
    let rel = file
        .strip_prefix(root)
        .expect("under src")
        .with_extension("");
    let mut parts: Module = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// Source without comments, string/char contents and inline `mod x { … }`
/// bodies.
pub(crate) fn code_only(src: &str) -> String {
    let bytes: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            ('/', Some('/')) => {
                while i < bytes.len() && bytes[i] != '\n' {
                    i += 1;
                }
            }
            ('/', Some('*')) => {
                i += 2;
                while i + 1 < bytes.len() && !(bytes[i] == '*' && bytes[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
            }
            ('r', Some('#' | '"'))
                if i == 0 || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_') =>
            {
                // A raw string: r"…", r#"…"#, … ends at a quote followed by
                // as many hashes as it opened with.
                let mut j = i + 1;
                let mut hashes = 0;
                while bytes.get(j) == Some(&'#') {
                    hashes += 1;
                    j += 1;
                }
                if bytes.get(j) != Some(&'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                j += 1;
                while j < bytes.len() {
                    if bytes[j] == '"' && (1..=hashes).all(|k| bytes.get(j + k) == Some(&'#')) {
                        break;
                    }
                    j += 1;
                }
                i = j + 1 + hashes;
                out.push_str("\"\"");
            }
            ('\'', _) if bytes.get(i + 2) == Some(&'\'') => i += 3,
            ('\'', Some('\\')) if bytes.get(i + 3) == Some(&'\'') => i += 4,
            ('"', _) => {
                i += 1;
                while i < bytes.len() && bytes[i] != '"' {
                    i += if bytes[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("\"\"");
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    strip_inline_mods(&out)
}

fn strip_inline_mods(src: &str) -> String {
    let mut out = String::new();
    let mut rest = src;
    while let Some(at) = find_inline_mod(rest) {
        out.push_str(&rest[..at.0]);
        let body = &rest[at.1..];
        let mut depth = 1;
        let mut end = body.len();
        for (i, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &body[end..];
    }
    out.push_str(rest);
    out
}

/// Start of `mod name {` and the index just past its `{`.
fn find_inline_mod(src: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(pos) = src[from..].find("mod ") {
        let start = from + pos;
        let boundary =
            start == 0 || !src[..start].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let after = &src[start + 4..];
        let name_len = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let tail = after[name_len..].trim_start();
        if boundary && name_len > 0 && tail.starts_with('{') {
            let brace = src.len() - tail.len() + 1;
            return Some((start, brace));
        }
        from = start + 4;
    }
    None
}

/// Paths a file names: `use` trees expanded, plus every `a::b` path.
pub(crate) fn paths(code: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(pos) = rest.find("use ") {
        let boundary =
            pos == 0 || !rest[..pos].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let tail = &rest[pos + 4..];
        match (boundary, tail.find(';')) {
            (true, Some(end)) => {
                expand(
                    &[],
                    &tail[..end].replace(char::is_whitespace, ""),
                    &mut found,
                );
                rest = &tail[end..];
            }
            _ => rest = tail,
        }
    }
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    for token in code.split(|c: char| !word(c)) {
        // `super::{a, b}` leaves the token `super::`: the group's paths
        // are the `use` trees above, not the parent module itself.
        if token.contains("::") && !token.starts_with("::") && !token.ends_with("::") {
            found.push(
                token
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect(),
            );
        }
    }
    found
}

fn expand(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
    if let (Some(open), true) = (tree.find('{'), tree.ends_with('}')) {
        let mut base = prefix.to_vec();
        base.extend(
            tree[..open]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(String::from),
        );
        let inner = &tree[open + 1..tree.len() - 1];
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&base, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(&base, &inner[start..], out);
    } else if !tree.is_empty() {
        let mut path = prefix.to_vec();
        path.extend(tree.split("::").filter(|s| !s.is_empty()).map(String::from));
        out.push(path);
    }
}

/// The file a path lands in, if it is another file of the crate.
pub(crate) fn resolve(from: &Module, path: &[String], files: &BTreeSet<Module>) -> Option<Module> {
    let (mut at, rest): (Module, &[String]) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("super" | "self") => {
            let mut at = from.clone();
            let mut i = 0;
            while let Some(seg) = path.get(i).map(String::as_str) {
                match seg {
                    "super" => {
                        at.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                i += 1;
            }
            (at, &path[i..])
        }
        Some(first) => {
            let mut child = from.clone();
            child.push(first.to_owned());
            if !files.contains(&child) {
                return None;
            }
            (from.clone(), path)
        }
        None => return None,
    };
    let mut best = files.contains(&at).then(|| at.clone());
    for seg in rest {
        at.push(seg.clone());
        if files.contains(&at) {
            best = Some(at.clone());
        } else {
            break;
        }
    }
    best.filter(|m| m != from)
}

/// Strongly connected components with more than one file (Tarjan).
pub(crate) fn cycles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<Module, usize>,
        low: BTreeMap<Module, usize>,
        stack: Vec<Module>,
        on: BTreeSet<Module>,
        found: Vec<Vec<Module>>,
    }
    fn visit(w: &mut Walk<'_>, v: &Module) {
        let n = w.index.len();
        w.index.insert(v.clone(), n);
        w.low.insert(v.clone(), n);
        w.stack.push(v.clone());
        w.on.insert(v.clone());
        for t in w.edges.get(v).into_iter().flatten() {
            if !w.index.contains_key(t) {
                visit(w, t);
                let low = w.low[v].min(w.low[t]);
                w.low.insert(v.clone(), low);
            } else if w.on.contains(t) {
                let low = w.low[v].min(w.index[t]);
                w.low.insert(v.clone(), low);
            }
        }
        if w.low[v] == w.index[v] {
            let mut comp = Vec::new();
            while let Some(t) = w.stack.pop() {
                w.on.remove(&t);
                let done = &t == v;
                comp.push(t);
                if done {
                    break;
                }
            }
            if comp.len() > 1 {
                w.found.push(comp);
            }
        }
    }
    let mut w = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !w.index.contains_key(v) {
            visit(&mut w, v);
        }
    }
    w.found
}

/// The file-level import graph of the crate whose sources are in `root`.
pub(crate) fn graph(root: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut list = Vec::new();
    rust_files(root, &mut list);
    let modules: BTreeMap<Module, PathBuf> =
        list.into_iter().map(|f| (module_of(root, &f), f)).collect();
    let files: BTreeSet<Module> = modules.keys().cloned().collect();
    let mut edges = BTreeMap::new();
    for (module, file) in &modules {
        let code = code_only(&std::fs::read_to_string(file).expect("read source"));
        let targets: BTreeSet<Module> = paths(&code)
            .iter()
            .filter_map(|p| resolve(module, p, &files))
            .collect();
        edges.insert(module.clone(), targets);
    }
    edges
}

/// The graph folded onto top-level modules (`cli`, `http`, …; files at the
/// root are their own), without self-edges.
pub(crate) fn top_level(
    edges: &BTreeMap<Module, BTreeSet<Module>>,
) -> BTreeMap<Module, BTreeSet<Module>> {
    let top = |m: &Module| m.first().cloned().into_iter().collect::<Module>();
    let mut out: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (from, targets) in edges {
        let entry = out.entry(top(from)).or_default();
        for t in targets {
            if top(t) != top(from) {
                entry.insert(top(t));
            }
        }
    }
    out
}

/// Cycles as readable lines.
pub(crate) fn show(found: &[Vec<Module>]) -> Vec<String> {
    found
        .iter()
        .map(|c| {
            c.iter()
                .map(|m| m.join("/"))
                .collect::<Vec<_>>()
                .join(" <-> ")
        })
        .collect()
}
