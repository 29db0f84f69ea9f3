//! The spec's lenient frontmatter grammar, used when strict YAML parsing
//! fails (spec: "Skills", `_parse_frontmatter`).
//!
//! Only a column-0 `key: value` line is a field ([`super::keys`]). A value
//! that is a bare block-scalar indicator (`>` or `|`, optionally chomped
//! with `-` or `+`) is resolved from the indented lines that follow: folded
//! (`>`) turns single line breaks into spaces while keeping blank-line
//! counts and the breaks around more-indented lines, literal (`|`) keeps
//! every break. Explicit indentation indicators (`>2`) are not supported.
//! Other values: quoted strings are unquoted (escapes in double quotes,
//! `''` in single quotes, continuation lines folded), `[a, b]` and `- a`
//! entries are lists, and a plain value continues on indented lines (folded
//! with spaces; the narrower "indented lines continue a value" rule, so a
//! top-level comment after `always: true` is not part of its value).
//! Duplicate keys: the last one wins, as in PyYAML.
//!
//! Hand-written on purpose: no YAML crate offers "parse what you can"; this
//! grammar is exactly the spec's and must accept what YAML refuses.

use super::keys::{line_spans, top_level_key};

/// A lenient value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum LenientValue {
    /// A scalar's text.
    Scalar(String),
    /// A flow (`[a, b]`) or block (`- a`) list of scalars.
    List(Vec<String>),
}

/// The fields of a block, in order (a later duplicate wins in [`Fields::get`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Fields(pub Vec<(String, LenientValue)>);

impl Fields {
    /// The last value given for `key`; an empty scalar reads as absent.
    pub(super) fn get(&self, key: &str) -> Option<&LenientValue> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
            .filter(|v| !matches!(v, LenientValue::Scalar(s) if s.is_empty()))
    }
}

/// Parses a frontmatter block with the lenient grammar.
pub(super) fn parse(block: &str) -> Fields {
    let lines: Vec<&str> = line_spans(block)
        .map(|(_, l)| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut fields = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(key) = top_level_key(lines[i]) else {
            i += 1;
            continue;
        };
        let line = lines[i];
        let after = line.find(':').map_or("", |c| &line[c + 1..]);
        let raw = after.trim();
        let mut end = i + 1;
        while end < lines.len() && top_level_key(lines[end]).is_none() {
            end += 1;
        }
        let rest = &lines[i + 1..end];
        // The scalar view: indented or blank lines directly after the key.
        let indented = rest
            .iter()
            .position(|l| !(l.trim().is_empty() || l.starts_with([' ', '\t'])))
            .map_or(rest, |n| &rest[..n]);
        fields.push((key.to_owned(), value(raw, indented, rest)));
        i = end;
    }
    Fields(fields)
}

fn value(raw: &str, indented: &[&str], block: &[&str]) -> LenientValue {
    if let Some((folded, chomp)) = block_indicator(raw) {
        return LenientValue::Scalar(block_scalar(indented, folded, chomp));
    }
    if raw.is_empty() {
        let items: Vec<String> = block
            .iter()
            .filter_map(|l| {
                l.trim_start()
                    .strip_prefix("- ")
                    .or_else(|| (l.trim() == "-").then_some(""))
            })
            .map(|s| unquote_inline(strip_comment(s.trim())))
            .collect();
        if !items.is_empty() {
            return LenientValue::List(items);
        }
        return LenientValue::Scalar(fold_plain(indented.iter().copied()));
    }
    if raw.starts_with('"') || raw.starts_with('\'') {
        return LenientValue::Scalar(quoted(raw, indented));
    }
    if let Some(inner) = raw
        .strip_prefix('[')
        .and_then(|r| strip_comment(r).strip_suffix(']'))
    {
        if !inner.contains('[') && !inner.contains(']') {
            return LenientValue::List(
                split_flow(inner)
                    .into_iter()
                    .map(|s| unquote_inline(s.trim()))
                    .filter(|s| !s.is_empty())
                    .collect(),
            );
        }
    }
    let first = strip_comment(raw);
    LenientValue::Scalar(fold_plain(
        std::iter::once(first).chain(indented.iter().copied()),
    ))
}

/// `>`, `|`, `>-`, `|+` …: (folded?, chomping `-`/`+`/none).
fn block_indicator(raw: &str) -> Option<(bool, Option<char>)> {
    let raw = strip_comment(raw);
    let mut chars = raw.chars();
    let folded = match chars.next()? {
        '>' => true,
        '|' => false,
        _ => return None,
    };
    match (chars.next(), chars.next()) {
        (None, _) => Some((folded, None)),
        (Some(c @ ('-' | '+')), None) => Some((folded, Some(c))),
        _ => None,
    }
}

/// Resolves a block scalar from its (indented) lines.
pub(crate) fn block_scalar(lines: &[&str], folded: bool, chomp: Option<char>) -> String {
    let indent = lines
        .iter()
        .find(|l| !l.trim().is_empty())
        .map_or(0, |l| l.len() - l.trim_start_matches([' ', '\t']).len());
    let mut out = String::new();
    let mut pending_blanks = 0usize;
    let mut prev_more: Option<bool> = None;
    for line in lines {
        if line.trim().is_empty() {
            pending_blanks += 1;
            continue;
        }
        let lead = line.len() - line.trim_start_matches([' ', '\t']).len();
        let content = &line[lead.min(indent)..];
        let more = content.starts_with([' ', '\t']);
        match prev_more {
            None => out.push_str(&"\n".repeat(pending_blanks)),
            Some(prev) if folded && !prev && !more => {
                if pending_blanks == 0 {
                    out.push(' ');
                } else {
                    out.push_str(&"\n".repeat(pending_blanks));
                }
            }
            Some(_) => out.push_str(&"\n".repeat(pending_blanks + 1)),
        }
        out.push_str(content);
        prev_more = Some(more);
        pending_blanks = 0;
    }
    if prev_more.is_none() {
        // No content: the value is empty whatever the chomping (YAML keeps
        // the blank lines only with `+`).
        return if chomp == Some('+') {
            "\n".repeat(pending_blanks)
        } else {
            String::new()
        };
    }
    match chomp {
        Some('-') => {}
        Some('+') => out.push_str(&"\n".repeat(pending_blanks + 1)),
        _ => out.push('\n'),
    }
    out
}

/// Joins plain-scalar lines: single breaks become spaces, each blank line a
/// newline.
fn fold_plain<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::new();
    let mut blanks = 0;
    for line in lines {
        let t = line.trim();
        if t.is_empty() {
            blanks += 1;
            continue;
        }
        if !out.is_empty() {
            if blanks == 0 {
                out.push(' ');
            } else {
                out.push_str(&"\n".repeat(blanks));
            }
        }
        blanks = 0;
        out.push_str(t);
    }
    out
}

/// A plain value without its trailing ` # comment`.
fn strip_comment(raw: &str) -> &str {
    let cut = raw
        .char_indices()
        .find(|&(i, c)| c == '#' && (i == 0 || raw[..i].ends_with([' ', '\t'])))
        .map_or(raw.len(), |(i, _)| i);
    raw[..cut].trim_end()
}

/// A quoted scalar that may continue on the following lines.
fn quoted(raw: &str, more: &[&str]) -> String {
    let quote = raw.chars().next().unwrap_or('"');
    let mut text = raw[1..].to_owned();
    let mut lines = more.iter();
    while find_close(&text, quote).is_none() {
        match lines.next() {
            Some(l) if l.trim().is_empty() => text.push('\n'),
            Some(l) => {
                if !text.ends_with('\n') {
                    text.push(' ');
                }
                text.push_str(l.trim());
            }
            None => break,
        }
    }
    let inner = match find_close(&text, quote) {
        Some(end) => &text[..end],
        None => text.as_str(),
    };
    if quote == '\'' {
        inner.replace("''", "'")
    } else {
        unescape(inner)
    }
}

/// Byte index of the closing quote in `text` (which starts after the
/// opening one).
fn find_close(text: &str, quote: char) -> Option<usize> {
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if quote == '"' && c == '\\' {
            chars.next();
        } else if c == quote {
            if quote == '\'' && chars.peek().is_some_and(|&(_, n)| n == '\'') {
                chars.next();
                continue;
            }
            return Some(i);
        }
    }
    None
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => out.push_str(&format!("\\u{hex}")),
                }
            }
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// A one-line scalar, unquoted if quoted.
fn unquote_inline(s: &str) -> String {
    if s.len() >= 2 && (s.starts_with('"') || s.starts_with('\'')) {
        quoted(s, &[])
    } else {
        s.to_owned()
    }
}

/// Splits a flow list's inside on commas outside quotes.
fn split_flow(inner: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut quote: Option<char> = None;
    for (i, c) in inner.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, ',') => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(block: &str, key: &str) -> Option<String> {
        match parse(block).get(key) {
            Some(LenientValue::Scalar(s)) => Some(s.clone()),
            _ => None,
        }
    }

    #[test]
    fn folded_and_literal_with_chomping() {
        let b = "d: >\n  a\n  b\n\n  c\n    more\n  d\n\n\nnext: 1\n";
        assert_eq!(scalar(b, "d").as_deref(), Some("a b\nc\n  more\nd\n"));
        let b = "d: >-\n  a\n  b\n";
        assert_eq!(scalar(b, "d").as_deref(), Some("a b"));
        let b = "d: >+\n  a\n\n\n";
        assert_eq!(scalar(b, "d").as_deref(), Some("a\n\n\n"));
        let b = "d: |\n  a\n   b\n\n  c\n\n";
        assert_eq!(scalar(b, "d").as_deref(), Some("a\n b\n\nc\n"));
        let b = "d: |-\n  a\n  b\n";
        assert_eq!(scalar(b, "d").as_deref(), Some("a\nb"));
        let b = "d: |+\n  a\n\n";
        assert_eq!(scalar(b, "d").as_deref(), Some("a\n\n"));
        assert_eq!(scalar("d: >\nnext: x\n", "d"), None);
    }

    #[test]
    fn plain_quoted_and_lists() {
        let b = "description: Use when: (1) x # note\n  continues here\n# top comment\nalways: true\n# after\n";
        assert_eq!(
            scalar(b, "description").as_deref(),
            Some("Use when: (1) x continues here")
        );
        assert_eq!(scalar(b, "always").as_deref(), Some("true"));
        assert_eq!(
            scalar("d: \"a \\\"q\\\" \\u00e9\"\n", "d").as_deref(),
            Some("a \"q\" é")
        );
        assert_eq!(
            scalar("d: 'it''s\n  long\n\n  x'\n", "d").as_deref(),
            Some("it's long\nx")
        );
        assert_eq!(
            parse("t: [a, 'b, c', \"d\"]\n").get("t"),
            Some(&LenientValue::List(vec![
                "a".into(),
                "b, c".into(),
                "d".into()
            ]))
        );
        assert_eq!(
            parse("t:\n- a\n  - 'b'\n").get("t"),
            Some(&LenientValue::List(vec!["a".into(), "b".into()]))
        );
        assert_eq!(scalar("h: [a] [b]\n", "h").as_deref(), Some("[a] [b]"));
        assert_eq!(
            scalar("d:\n  next line\n  value\n", "d").as_deref(),
            Some("next line value")
        );
    }

    #[test]
    fn indented_keys_are_not_fields() {
        let b = "description: |\n  inject_on_trigger: false is documented here\nname: a\n";
        let f = parse(b);
        assert!(f.get("inject_on_trigger").is_none());
        assert_eq!(scalar(b, "name").as_deref(), Some("a"));
    }
}
