//! Direct-read crediting, phase one (spec: "Direct reads"): which served
//! skills a tool call would deliver. Pure; the actor records hits only once
//! the call completed (phase two).
//!
//! Only content-delivering reads qualify. A shell command is split into
//! segments at `&&`, `||`, `;`, `|`, `&` and line breaks (outside quotes),
//! and each segment's own verb decides: `cat`, `head`, `tail`, `less`,
//! `more`, `bat`, `nl`, `tac` and `sed` (not `sed -i`) read; `rm`, `mv`,
//! `cp`, `wc`, `chmod`, `stat`, `grep` and everything else do not — so
//! `cat a.txt && rm x/SKILL.md` reads nothing of the skill. A path after
//! `>`/`>>` is a write target, one after `<` is read by the verb. A
//! structured tool counts only if its name is on the content-read
//! allowlist (an edit or grep tool carrying a path is no delivery), and a
//! read in `Search`/`Directory` mode is not one either.
//!
//! The allowlists encode today's tool spellings; a rename would silently
//! stop the crediting, so a call that names a SKILL.md but yields no
//! candidate is logged at debug by the caller.
//!
//! Hand-written tokenizer: `shlex`-style crates split words but not
//! control operators, and the segment rule needs both.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

/// Shell verbs whose output is the file's content.
pub(super) const SHELL_READ_VERBS: &[&str] = &[
    "cat", "head", "tail", "less", "more", "bat", "batcat", "nl", "tac", "sed", "most",
];
/// Structured tools that return a file's content.
pub(super) const CONTENT_READ_TOOLS: &[&str] = &[
    "read",
    "fs_read",
    "read_file",
    "readfile",
    "read_text_file",
    "view",
    "view_file",
    "open_file",
];
/// Tools whose input is a shell command.
pub(super) const SHELL_TOOLS: &[&str] = &[
    "bash",
    "shell",
    "execute_bash",
    "execute_command",
    "run_shell_command",
    "run_terminal_cmd",
    "terminal",
    "exec",
];
/// Wrappers skipped before a segment's verb.
const WRAPPERS: &[&str] = &["sudo", "command", "env", "nice", "time", "nohup"];
/// JSON keys whose string (or string list) values are paths.
const PATH_KEYS: &[&str] = &[
    "path",
    "file_path",
    "filepath",
    "file",
    "filename",
    "target_file",
    "uri",
    "absolute_path",
    "paths",
    "files",
];

/// The cheap gate run before anything else.
pub(super) fn mentions_skill_file(text: &str) -> bool {
    text.contains("SKILL.md")
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    ReadFrom,
    WriteTo,
}

/// Splits `command` into segments of tokens.
fn segments(command: &str) -> Vec<Vec<Token>> {
    let mut out = vec![Vec::new()];
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = command.chars().peekable();
    let flush = |word: &mut String, in_word: &mut bool, out: &mut Vec<Vec<Token>>| {
        if *in_word {
            if let Some(seg) = out.last_mut() {
                seg.push(Token::Word(std::mem::take(word)));
            }
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => {
                if let Some(n) = chars.next() {
                    word.push(n);
                }
            }
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    word.push(n);
                    in_word = true;
                }
            }
            (None, ' ' | '\t') => flush(&mut word, &mut in_word, &mut out),
            (None, ';' | '&' | '|' | '\n' | '(' | ')') => {
                flush(&mut word, &mut in_word, &mut out);
                if chars.peek() == Some(&c) {
                    chars.next();
                }
                out.push(Vec::new());
            }
            (None, '<' | '>') => {
                // `2>` / `&>`: the digit is the fd, not a word.
                if word.chars().all(|d| d.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                flush(&mut word, &mut in_word, &mut out);
                if chars.peek() == Some(&c) {
                    chars.next();
                }
                if let Some(seg) = out.last_mut() {
                    seg.push(if c == '<' {
                        Token::ReadFrom
                    } else {
                        Token::WriteTo
                    });
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    flush(&mut word, &mut in_word, &mut out);
    out.retain(|s| !s.is_empty());
    out
}

/// Paths naming a SKILL.md that a content-reading segment of `command`
/// delivers.
pub(super) fn shell_read_paths(command: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for seg in segments(command) {
        let mut tokens = seg.into_iter().peekable();
        let mut verb = None;
        while let Some(Token::Word(w)) = tokens.peek() {
            let base = w.rsplit('/').next().unwrap_or(w);
            if (w.contains('=') && !w.starts_with('=')) || WRAPPERS.contains(&base) {
                tokens.next();
                continue;
            }
            verb = Some(base.to_owned());
            tokens.next();
            break;
        }
        let Some(verb) = verb else { continue };
        if !SHELL_READ_VERBS.contains(&verb.as_str()) {
            continue;
        }
        let rest: Vec<Token> = tokens.collect();
        let in_place = verb == "sed"
            && rest.iter().any(|t| matches!(t, Token::Word(w) if w.starts_with("-i") || w.starts_with("--in-place")));
        if in_place {
            continue;
        }
        let mut skip_next = false;
        for t in rest {
            match t {
                Token::WriteTo => skip_next = true,
                Token::ReadFrom => skip_next = false,
                Token::Word(w) => {
                    if std::mem::take(&mut skip_next) || w.starts_with('-') {
                        continue;
                    }
                    if mentions_skill_file(&w) {
                        paths.push(w);
                    }
                }
            }
        }
    }
    paths
}

fn tool_matches(tool_name: &str, list: &[&str]) -> bool {
    let lower = tool_name.to_ascii_lowercase();
    let short = lower.rsplit(['/', '.']).next().unwrap_or(&lower);
    let short = short.rsplit("__").next().unwrap_or(short);
    list.contains(&lower.as_str()) || list.contains(&short)
}

fn collect_paths(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            let mode = map
                .get("mode")
                .and_then(Value::as_str)
                .map(str::to_ascii_lowercase);
            if matches!(mode.as_deref(), Some("search" | "directory")) {
                return;
            }
            for (k, v) in map {
                if PATH_KEYS.contains(&k.to_ascii_lowercase().as_str()) {
                    match v {
                        Value::String(s) => out.push(s.clone()),
                        Value::Array(items) => {
                            out.extend(items.iter().filter_map(Value::as_str).map(str::to_owned))
                        }
                        _ => collect_paths(v, out),
                    }
                } else if v.is_object() || v.is_array() {
                    collect_paths(v, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_paths(v, out)),
        _ => {}
    }
}

/// Paths naming a SKILL.md that a tool call delivers: `kind` is the ACP
/// tool kind when the gateway has it (`read`, `execute`).
pub(super) fn read_paths(
    tool_name: &str,
    kind: Option<&str>,
    raw_input: Option<&Value>,
    command: Option<&str>,
) -> Vec<String> {
    let shell = kind == Some("execute") || tool_matches(tool_name, SHELL_TOOLS);
    let reader = kind == Some("read") || tool_matches(tool_name, CONTENT_READ_TOOLS);
    let mut out = Vec::new();
    if shell {
        let from_input = raw_input
            .and_then(|v| v.get("command").or_else(|| v.get("cmd")))
            .and_then(Value::as_str);
        for cmd in command.into_iter().chain(from_input) {
            out.extend(shell_read_paths(cmd));
        }
    } else if reader {
        if let Some(v) = raw_input {
            collect_paths(v, &mut out);
        }
    }
    out.retain(|p| mentions_skill_file(p));
    out.sort();
    out.dedup();
    out
}

/// A served skill as the resolver sees it.
#[derive(Debug, Clone)]
pub(super) struct ServedSkill {
    /// The skill's key.
    pub name: String,
    /// Its SKILL.md as listed.
    pub path: PathBuf,
    /// The same file with symlinks resolved (when it resolves).
    pub real_path: Option<PathBuf>,
    /// The key a read of this file is credited to (alias folding).
    pub canonical: String,
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The canonical key a read of `raw` delivers, if any. Absolute paths
/// must be a served SKILL.md (as listed or resolved); a relative path (the
/// caller's working directory is unknown) matches the served skill whose
/// key is the longest suffix of its directory.
pub(super) fn resolve_path(
    raw: &str,
    home: Option<&Path>,
    served: &[ServedSkill],
) -> Option<String> {
    let raw = raw.strip_prefix("file://").unwrap_or(raw);
    let expanded = match (raw.strip_prefix("~/"), home) {
        (Some(rest), Some(h)) => h.join(rest),
        _ => PathBuf::from(raw),
    };
    let path = normalize(&expanded);
    if path.file_name().is_none_or(|f| f != "SKILL.md") {
        return None;
    }
    if path.is_absolute() {
        let real = path.canonicalize().ok();
        return served
            .iter()
            .find(|s| s.path == path || s.real_path.is_some() && s.real_path == real)
            .map(|s| s.canonical.clone());
    }
    let dir: Vec<String> = path
        .parent()?
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (0..dir.len()).find_map(|start| {
        let key = dir[start..].join("/");
        served
            .iter()
            .find(|s| s.name == key)
            .map(|s| s.canonical.clone())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shell_crediting_table() {
        let cases: &[(&str, &[&str])] = &[
            ("cat a.txt && rm x/SKILL.md", &[]),
            (
                "head -50 skills/a/SKILL.md | grep x",
                &["skills/a/SKILL.md"],
            ),
            ("cat skills/a/SKILL.md", &["skills/a/SKILL.md"]),
            (
                "tail -n 5 'skills/my dir/SKILL.md'",
                &["skills/my dir/SKILL.md"],
            ),
            ("sed -n '1,40p' s/b/SKILL.md", &["s/b/SKILL.md"]),
            ("sed -i 's/a/b/' s/b/SKILL.md", &[]),
            ("grep name s/a/SKILL.md", &[]),
            ("wc -l s/a/SKILL.md; stat s/a/SKILL.md", &[]),
            ("rm s/a/SKILL.md || mv s/a/SKILL.md /tmp", &[]),
            (
                "cp s/a/SKILL.md s/b/SKILL.md && chmod 600 s/b/SKILL.md",
                &[],
            ),
            ("echo hi > s/a/SKILL.md", &[]),
            ("cat notes.md > s/a/SKILL.md", &[]),
            ("cat < s/a/SKILL.md", &["s/a/SKILL.md"]),
            (
                "cd /x && LANG=C /usr/bin/cat s/c/SKILL.md 2>/dev/null",
                &["s/c/SKILL.md"],
            ),
            ("sudo less s/d/SKILL.md", &["s/d/SKILL.md"]),
            (
                "bat s/a/SKILL.md s/b/SKILL.md",
                &["s/a/SKILL.md", "s/b/SKILL.md"],
            ),
            ("echo 'cat s/a/SKILL.md'", &[]),
        ];
        for (cmd, want) in cases {
            assert_eq!(shell_read_paths(cmd), *want, "{cmd}");
        }
    }

    #[test]
    fn structured_tools() {
        let input = json!({"path": "/h/skills/a/SKILL.md"});
        assert_eq!(
            read_paths("Read", None, Some(&input), None),
            ["/h/skills/a/SKILL.md"]
        );
        assert_eq!(
            read_paths("mcp__fs__read_file", None, Some(&input), None).len(),
            1
        );
        assert!(read_paths("Edit", None, Some(&input), None).is_empty());
        assert!(read_paths("Grep", None, Some(&input), None).is_empty());
        let fs_read = json!({"operations": [{"mode": "Line", "path": "/h/skills/a/SKILL.md"}, {"mode": "Search", "path": "/h/skills/b/SKILL.md"}]});
        assert_eq!(
            read_paths("fs_read", None, Some(&fs_read), None),
            ["/h/skills/a/SKILL.md"]
        );
        let shell = json!({"command": "cat skills/a/SKILL.md"});
        assert_eq!(
            read_paths("execute_bash", None, Some(&shell), None),
            ["skills/a/SKILL.md"]
        );
        assert_eq!(
            read_paths("whatever", Some("execute"), None, Some("cat s/a/SKILL.md")).len(),
            1
        );
        assert_eq!(
            read_paths("whatever", Some("read"), Some(&input), None).len(),
            1
        );
    }

    #[test]
    fn path_resolution() {
        let served = vec![
            ServedSkill {
                name: "a".into(),
                path: "/h/skills/a/SKILL.md".into(),
                real_path: None,
                canonical: "a".into(),
            },
            ServedSkill {
                name: "utils/tiny-url".into(),
                path: "/h/skills/utils/tiny-url/SKILL.md".into(),
                real_path: None,
                canonical: "utils/tiny-url".into(),
            },
            ServedSkill {
                name: "alias".into(),
                path: "/h/skills/alias/SKILL.md".into(),
                real_path: None,
                canonical: "a".into(),
            },
        ];
        let r = |p: &str| resolve_path(p, Some(Path::new("/h")), &served);
        assert_eq!(r("/h/skills/a/SKILL.md").as_deref(), Some("a"));
        assert_eq!(r("/h/skills/./a/../a/SKILL.md").as_deref(), Some("a"));
        assert_eq!(
            r("~/skills/utils/tiny-url/SKILL.md").as_deref(),
            Some("utils/tiny-url")
        );
        assert_eq!(
            r("skills/utils/tiny-url/SKILL.md").as_deref(),
            Some("utils/tiny-url")
        );
        assert_eq!(r("tiny-url/SKILL.md"), None);
        assert_eq!(r("skills/alias/SKILL.md").as_deref(), Some("a"));
        assert_eq!(r("/elsewhere/a/SKILL.md"), None);
        assert_eq!(r("skills/a/notes.md"), None);
    }
}
