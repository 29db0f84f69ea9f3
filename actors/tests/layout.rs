//! The crate's house rule, checked: no import cycle between its files.
//!
//! Each file is a node; a `use` or a path (`super::x`, `crate::a::b`,
//! `child::x`) that names another file's module is an edge. A cycle means
//! two files each need the other, which is how one domain's internals end
//! up reached from another's; the shape that avoids it is in `lib.rs`
//! (`mod.rs` holds only declarations and re-exports, items are imported
//! from the file that defines them). Inline test modules are left out:
//! their `super::*` is their own file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_of(root: &Path, file: &Path) -> Module {
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
fn code_only(src: &str) -> String {
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
fn paths(code: &str) -> Vec<Vec<String>> {
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
        if token.contains("::") && !token.starts_with("::") {
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
fn resolve(from: &Module, path: &[String], files: &BTreeSet<Module>) -> Option<Module> {
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
fn cycles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
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

#[test]
fn no_file_of_the_crate_imports_one_that_imports_it_back() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut list = Vec::new();
    rust_files(&root, &mut list);
    let modules: BTreeMap<Module, PathBuf> = list
        .into_iter()
        .map(|f| (module_of(&root, &f), f))
        .collect();
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
    let found = cycles(&edges);
    let shown: Vec<String> = found
        .iter()
        .map(|c| {
            c.iter()
                .map(|m| m.join("/"))
                .collect::<Vec<_>>()
                .join(" <-> ")
        })
        .collect();
    assert!(found.is_empty(), "import cycles between files: {shown:#?}");
}

#[test]
fn the_checker_sees_a_cycle_and_ignores_inline_tests() {
    let files: BTreeSet<Module> = [vec![], vec!["a".to_owned()], vec!["b".to_owned()]]
        .into_iter()
        .collect();
    let a = code_only("use super::b::X;\n#[cfg(test)]\nmod tests { use super::*; use crate::b; }");
    let b = code_only(
        "// use super::a::Y;\nfn f() { let q = '\"'; let s = r#\"x\"super::a::Z\"#; super::a::g(); }",
    );
    let mut edges = BTreeMap::new();
    for (name, code) in [("a", &a), ("b", &b)] {
        let module = vec![name.to_owned()];
        let targets = paths(code)
            .iter()
            .filter_map(|p| resolve(&module, p, &files))
            .collect();
        edges.insert(module, targets);
    }
    assert_eq!(cycles(&edges).len(), 1, "a -> b -> a");
    edges.insert(vec!["b".to_owned()], BTreeSet::new());
    assert!(cycles(&edges).is_empty());
}
