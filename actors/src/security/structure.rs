//! Structured text (issue 41): tells a JSON document, a YAML mapping, a
//! Python-dict or JS-object rendering, a CSV table, an e-mail's headers or
//! a Markdown table from prose, and gives each of its string values with
//! its field name.
//!
//! Why: a tool result reaches memory as a rendered record — `subject:
//! Lunch on Friday`, `{'body': 'Hi Emma,\n…'}` — and the n-gram model,
//! trained on prose, reads the keys, quotes and layout as signal: plain
//! records (a grocery list, a lunch invitation, a password-reset notice)
//! scored 0.81–0.93. `screen.rs` therefore lets the statistical layer
//! score the prose values (pooled into one text, and each long value alone
//! with its field name as context), never the scaffolding; the rules still
//! read the whole text (and the values, decoded). Detection is cheap: a look at the first and last
//! characters and at the line shapes before any parser runs.
//!
//! Parsers: `serde_json` (JSON), `yaml-rust2` (YAML, already used for skill
//! frontmatter), `csv` (CSV); hand-written where no crate reads the form:
//! Python / JS literals (`structure/pylit.rs`), e-mail headers and Markdown
//! tables (line shapes, a few lines each). Called by `screen.rs`.

mod field;
mod pylit;

pub(crate) use field::Field;

use yaml_rust2::{Yaml, YamlLoader};

/// Longest text parsed for structure; a longer one is screened as prose.
const MAX_CHARS: usize = 200_000;

/// Which form a structured text has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Json,
    Yaml,
    PyLiteral,
    Csv,
    EmailHeaders,
    MarkdownTable,
}

/// A structured text's form and string values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Structured {
    pub(crate) format: Format,
    pub(crate) fields: Vec<Field>,
}

/// The form and string values of `text`, or `None` for prose (and for a
/// structure with no string value worth reading).
pub(crate) fn structured(text: &str) -> Option<Structured> {
    let t = text.trim();
    if t.len() < 8 || t.len() > MAX_CHARS {
        return None;
    }
    let (first, last) = (t.as_bytes()[0], t.as_bytes()[t.len() - 1]);
    let found = if matches!((first, last), (b'{', b'}') | (b'[', b']') | (b'(', b')')) {
        json(t)
            .map(|f| (Format::Json, f))
            .or_else(|| pylit::fields(t).map(|f| (Format::PyLiteral, f)))
    } else if let Some(f) = email(t) {
        Some((Format::EmailHeaders, f))
    } else if let Some(f) = markdown_table(t) {
        Some((Format::MarkdownTable, f))
    } else if let Some(f) = yaml(t) {
        Some((Format::Yaml, f))
    } else {
        csv_table(t).map(|f| (Format::Csv, f))
    };
    let (format, fields) = found?;
    (!fields.is_empty()).then_some(Structured { format, fields })
}

fn json(t: &str) -> Option<Vec<Field>> {
    let value: serde_json::Value = serde_json::from_str(t).ok()?;
    let mut out = Vec::new();
    walk_json(&value, "", &mut out);
    Some(out)
}

fn walk_json(value: &serde_json::Value, key: &str, out: &mut Vec<Field>) {
    match value {
        serde_json::Value::String(s) => push(out, key, s),
        serde_json::Value::Array(items) => items.iter().for_each(|v| walk_json(v, key, out)),
        serde_json::Value::Object(map) => map.iter().for_each(|(k, v)| walk_json(v, k, out)),
        _ => {}
    }
}

fn push(out: &mut Vec<Field>, key: &str, value: &str) {
    if !value.trim().is_empty() {
        out.push(Field {
            name: key.to_owned(),
            value: value.to_owned(),
        });
    }
}

/// Whether `line` starts like a YAML mapping entry or list item.
fn yaml_line(line: &str) -> bool {
    let l = line.trim_start().trim_start_matches("- ");
    if line.trim_start() == "-" {
        return true;
    }
    let Some(colon) = l.find(':') else {
        return line.trim_start().starts_with("- ");
    };
    let key = l[..colon].trim_matches(|c| c == '"' || c == '\'');
    let after = &l[colon + 1..];
    (after.is_empty() || after.starts_with(' '))
        && !key.is_empty()
        && key.len() <= 40
        && key.split_whitespace().count() <= 3
}

/// A YAML mapping (or list of them): at least two entries, and most lines
/// that start at an entry's indentation shaped like entries — prose with
/// one "Note: …" line is not YAML.
fn yaml(t: &str) -> Option<Vec<Field>> {
    let lines: Vec<&str> = t.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() < 2 || !yaml_line(lines[0]) {
        return None;
    }
    let shaped = lines.iter().filter(|l| yaml_line(l)).count();
    if shaped < 2 || shaped * 2 < lines.len() {
        return None;
    }
    let docs = YamlLoader::load_from_str(t).ok()?;
    let doc = docs.first()?;
    if !matches!(doc, Yaml::Hash(_) | Yaml::Array(_)) {
        return None;
    }
    let mut out = Vec::new();
    walk_yaml(doc, "", &mut out, 0);
    Some(out)
}

fn walk_yaml(value: &Yaml, key: &str, out: &mut Vec<Field>, depth: usize) {
    if depth > 64 {
        return;
    }
    match value {
        Yaml::String(s) => push(out, key, s),
        Yaml::Array(items) => items.iter().for_each(|v| walk_yaml(v, key, out, depth + 1)),
        Yaml::Hash(map) => {
            for (k, v) in map {
                let name = match k {
                    Yaml::String(s) => s.clone(),
                    Yaml::Integer(i) => i.to_string(),
                    _ => String::new(),
                };
                walk_yaml(v, &name, out, depth + 1);
            }
        }
        _ => {}
    }
}

/// Header names that mark an e-mail (or a message export).
const EMAIL_HEADERS: [&str; 9] = [
    "from",
    "to",
    "cc",
    "subject",
    "date",
    "reply-to",
    "sent",
    "message-id",
    "bcc",
];

/// An e-mail: `Name: value` header lines up to the first blank line, two
/// of them known headers; the rest is the `body` field.
fn email(t: &str) -> Option<Vec<Field>> {
    let (head, body) = t.split_once("\n\n").unwrap_or((t, ""));
    let mut out = Vec::new();
    let mut known = 0;
    for line in head.lines() {
        if line.starts_with([' ', '\t']) {
            // A folded header line continues the previous value.
            let last = out.last_mut()?;
            let Field { value, .. } = last;
            value.push(' ');
            value.push_str(line.trim());
            continue;
        }
        let (name, value) = line.split_once(':')?;
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return None;
        }
        let name = name.to_ascii_lowercase();
        known += usize::from(EMAIL_HEADERS.contains(&name.as_str()));
        out.push(Field {
            name,
            value: value.trim().to_owned(),
        });
    }
    if known < 2 {
        return None;
    }
    push(&mut out, "body", body);
    out.retain(|f| !f.value.is_empty());
    Some(out)
}

/// A Markdown table: a header row, a `|---|` separator, then rows; every
/// non-blank line a row. Cells are fields named by their column.
fn markdown_table(t: &str) -> Option<Vec<Field>> {
    let lines: Vec<&str> = t.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    if lines.len() < 3 || !lines.iter().all(|l| l.starts_with('|') || l.ends_with('|')) {
        return None;
    }
    let cells = |l: &str| -> Vec<String> {
        l.trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_owned())
            .collect()
    };
    let separator = cells(lines[1]);
    if !separator
        .iter()
        .all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':' | ' ')))
    {
        return None;
    }
    let header = cells(lines[0]);
    let mut out = Vec::new();
    for line in &lines[2..] {
        for (i, cell) in cells(line).iter().enumerate() {
            push(&mut out, header.get(i).map_or("", String::as_str), cell);
        }
    }
    Some(out)
}

/// CSV (comma, tab or semicolon): at least three lines, every record with
/// the header's field count (two or more), the header's names short.
fn csv_table(t: &str) -> Option<Vec<Field>> {
    let mut lines = t.lines();
    let head = lines.next()?;
    if t.lines().count() < 3 {
        return None;
    }
    let delimiter = [b',', b'\t', b';']
        .into_iter()
        .max_by_key(|d| head.bytes().filter(|b| b == d).count())?;
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .flexible(false)
        .from_reader(t.as_bytes());
    let header: Vec<String> = reader.headers().ok()?.iter().map(str::to_owned).collect();
    if header.len() < 2
        || header
            .iter()
            .any(|h| h.trim().is_empty() || h.len() > 40 || h.split_whitespace().count() > 4)
    {
        return None;
    }
    let mut out = Vec::new();
    for record in reader.records() {
        let record = record.ok()?;
        for (name, value) in header.iter().zip(record.iter()) {
            push(&mut out, name.trim(), value);
        }
    }
    Some(out)
}

#[cfg(test)]
#[path = "structure/tests.rs"]
mod tests;
