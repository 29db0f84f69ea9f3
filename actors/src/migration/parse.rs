//! Parsing the legacy Markdown memory into structured items (pure; spec:
//! "Migration (`migrate_from_markdown`)").
//!
//! - preferences.md: every bullet of the form `key: value` becomes a
//!   semantic entry. Keys are folded to the store's key alphabet (accents
//!   stripped, lower case, other characters to `_`); a key that already
//!   names an allowed prefix (`pref.`, `user.`, `project.`) keeps it, a bare
//!   prefix (`pref`, `user`, `project`) gets `.default`, anything else goes
//!   under `pref.`. A key repeated in the file keeps its last value (the
//!   file is read top to bottom, as a person would edit it).
//! - projects.md: each `##`/`###` section, or top-level bullet, names a
//!   project → `project.<name>` (value: the first detail line, or the name)
//!   plus one episodic fragment with the details.
//! - history/YYYY-MM-DD.md: each entry → one episodic fragment dated by the
//!   file name and the entry's `HH:MM`, local time.
//! - lessons.jsonl: one [`FileLesson`] per line (`rule`, optional
//!   `negative`, `category`).

use chrono::{DateTime, Local, NaiveDate, NaiveTime, TimeZone, Utc};
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

use crate::lessons_file::FileLesson;
use crate::memory_files::history;
use crate::vector_store::episodic::MAX_TEXT_CHARS;
use crate::vector_store::MAX_KEY_LEN;

/// Prefixes a preferences key may name itself.
const FACT_PREFIXES: &[&str] = &["pref", "user", "project"];
/// Longest legacy key text read as a key (longer "keys" are prose).
const MAX_RAW_KEY_CHARS: usize = 60;
/// Longest project summary kept as the semantic value.
const MAX_SUMMARY_CHARS: usize = 500;

/// A parsed preferences.md.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Preferences {
    /// `(key, value)` in first-seen order, duplicates resolved.
    pub entries: Vec<(String, String)>,
    /// Bullets whose key appeared again later (the later one wins).
    pub duplicates: usize,
    /// Bullets that are not `key: value` or whose key has no usable
    /// characters, with the reason.
    pub skipped: Vec<String>,
}

/// A project from projects.md.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    /// As written.
    pub name: String,
    /// `project.<slug>`.
    pub key: String,
    /// The semantic value.
    pub summary: String,
    /// The episodic fragment, when the project has details.
    pub details: Option<String>,
}

/// One history entry to store as an episodic fragment.
#[derive(Debug, Clone, PartialEq)]
pub struct Fragment {
    /// The text (at most 2,000 characters).
    pub text: String,
    /// When it happened.
    pub created_at: DateTime<Utc>,
    /// Whether the text was cut to fit.
    pub truncated: bool,
}

/// Folds free text to `[a-z0-9_]` words joined by `sep_dot` ('.' kept) or not.
fn fold(raw: &str, keep_dots: bool) -> String {
    let mut out = String::new();
    for c in raw.nfkd().filter(|c| !is_combining_mark(*c)) {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() || (keep_dots && c == '.') {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    // Tidy the segments: no empty ones, none starting or ending with '_'.
    out.split('.')
        .map(|seg| seg.trim_matches('_'))
        .filter(|seg| !seg.is_empty())
        .collect::<Vec<_>>()
        .join(".")
}

/// The semantic key for a preferences bullet's key text, if it has usable
/// characters.
pub fn preference_key(raw: &str) -> Option<String> {
    let folded = fold(raw, true);
    if folded.is_empty() {
        return None;
    }
    let key = if FACT_PREFIXES.contains(&folded.as_str()) {
        format!("{folded}.default")
    } else if FACT_PREFIXES
        .iter()
        .any(|p| folded.starts_with(p) && folded[p.len()..].starts_with('.'))
    {
        folded
    } else {
        format!("pref.{folded}")
    };
    Some(clip_key(key))
}

fn clip_key(mut key: String) -> String {
    if key.len() > MAX_KEY_LEN {
        key.truncate(MAX_KEY_LEN);
        while key.ends_with(['_', '.']) {
            key.pop();
        }
    }
    key
}

/// Strips a bullet marker; `None` if the line is not a bullet.
fn bullet_text(line: &str) -> Option<&str> {
    let t = line.trim_start();
    ["- ", "* ", "+ "]
        .iter()
        .find_map(|m| t.strip_prefix(m))
        .map(str::trim)
}

/// Splits `key: value` (ASCII or full-width colon), removing Markdown
/// emphasis around the key. `None` for prose and URLs.
fn split_key_value(text: &str) -> Option<(String, String)> {
    let (pos, colon) = text.char_indices().find(|(_, c)| matches!(c, ':' | '：'))?;
    let key = text[..pos].replace(['*', '`', '_'], " ");
    let key = key.trim();
    let mut value = text[pos + colon.len_utf8()..].trim();
    // "**key:** value" leaves the closing emphasis on the value.
    value = value.trim_start_matches(['*', '_']).trim();
    if key.is_empty() || value.is_empty() || value.starts_with("//") {
        return None;
    }
    if key.chars().count() > MAX_RAW_KEY_CHARS {
        return None;
    }
    Some((key.to_owned(), value.to_owned()))
}

/// Parses preferences.md.
pub fn parse_preferences(text: &str) -> Preferences {
    let mut parsed = Preferences::default();
    for line in text.lines() {
        let Some(bullet) = bullet_text(line) else {
            continue;
        };
        if bullet.is_empty() {
            continue;
        }
        let Some((raw_key, value)) = split_key_value(bullet) else {
            parsed
                .skipped
                .push(format!("not a `key: value` bullet: {bullet}"));
            continue;
        };
        let Some(key) = preference_key(&raw_key) else {
            parsed
                .skipped
                .push(format!("no usable characters in key {raw_key:?}"));
            continue;
        };
        if let Some(slot) = parsed.entries.iter_mut().find(|(k, _)| *k == key) {
            slot.1 = value;
            parsed.duplicates += 1;
        } else {
            parsed.entries.push((key, value));
        }
    }
    parsed
}

fn truncate_chars(text: &str, max: usize) -> (String, bool) {
    match text.char_indices().nth(max) {
        None => (text.to_owned(), false),
        Some((cut, _)) => {
            let head = &text[..cut];
            // Prefer a word boundary in the last tenth.
            let head = match head.rfind(char::is_whitespace) {
                Some(ws) if ws >= cut - cut / 10 => &head[..ws],
                _ => head,
            };
            (head.trim_end().to_owned(), true)
        }
    }
}

fn project(name: &str, body: &str) -> Option<Project> {
    let name = name.trim().trim_matches(['*', '_', '`']).trim();
    let slug = fold(name, false);
    if slug.is_empty() {
        return None;
    }
    let details = body.trim();
    let first = details
        .lines()
        .map(|l| bullet_text(l).unwrap_or(l).trim())
        .find(|l| !l.is_empty());
    let summary = truncate_chars(first.unwrap_or(name), MAX_SUMMARY_CHARS).0;
    let details = (!details.is_empty())
        .then(|| truncate_chars(&format!("Project {name}: {details}"), MAX_TEXT_CHARS).0);
    Some(Project {
        name: name.to_owned(),
        key: clip_key(format!("project.{slug}")),
        summary,
        details,
    })
}

/// Parses projects.md: `##`/`###` sections, else top-level bullets.
pub fn parse_projects(text: &str) -> Vec<Project> {
    let mut projects = Vec::new();
    let mut current: Option<(String, String)> = None;
    let mut loose = String::new();
    for line in text.lines() {
        let heading = line
            .strip_prefix("### ")
            .or_else(|| line.strip_prefix("## "));
        if let Some(name) = heading {
            if let Some((n, b)) = current.take() {
                projects.extend(project(&n, &b));
            }
            current = Some((name.to_owned(), String::new()));
        } else if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
            body.push('\n');
        } else if !line.starts_with("# ") {
            loose.push_str(line);
            loose.push('\n');
        }
    }
    if let Some((n, b)) = current.take() {
        projects.extend(project(&n, &b));
    }
    // Bullets before any section: "- name: description" or "- name".
    for line in loose.lines().filter(|l| !l.starts_with([' ', '\t'])) {
        if let Some(bullet) = bullet_text(line).filter(|b| !b.is_empty()) {
            let found = match split_key_value(bullet) {
                Some((name, description)) => project(&name, &description),
                None => project(bullet, ""),
            };
            projects.extend(found);
        }
    }
    projects
}

/// The entries of one dated history file as fragments.
pub fn history_fragments(date: NaiveDate, text: &str) -> Vec<Fragment> {
    history::parse_entries(text)
        .into_iter()
        .map(|entry| {
            let time = entry
                .time
                .as_deref()
                .and_then(|t| NaiveTime::parse_from_str(t.get(..5).unwrap_or(t), "%H:%M").ok())
                .unwrap_or(NaiveTime::MIN);
            let created_at = Local
                .from_local_datetime(&date.and_time(time))
                .earliest()
                .map_or_else(|| date.and_time(time).and_utc(), |t| t.with_timezone(&Utc));
            let (text, truncated) = truncate_chars(&entry.text, MAX_TEXT_CHARS);
            Fragment {
                text,
                created_at,
                truncated,
            }
        })
        .collect()
}

/// Parses lessons.jsonl (the lines of [`FileLesson`]): the lessons, and
/// the rejected lines with reasons.
pub fn parse_lessons(text: &str) -> (Vec<FileLesson>, Vec<String>) {
    let mut lessons = Vec::new();
    let mut rejected = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<FileLesson>(line) {
            Ok(lesson) if !lesson.rule.trim().is_empty() => lessons.push(lesson),
            Ok(_) => rejected.push(format!("lessons.jsonl line {}: empty rule", n + 1)),
            Err(e) => rejected.push(format!("lessons.jsonl line {}: {e}", n + 1)),
        }
    }
    (lessons, rejected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_fold_to_the_store_alphabet() {
        assert_eq!(preference_key("editor").as_deref(), Some("pref.editor"));
        assert_eq!(
            preference_key(" Code Style ").as_deref(),
            Some("pref.code_style")
        );
        assert_eq!(
            preference_key("Ünïcode Kéy").as_deref(),
            Some("pref.unicode_key")
        );
        assert_eq!(preference_key("pref").as_deref(), Some("pref.default"));
        assert_eq!(preference_key("User").as_deref(), Some("user.default"));
        assert_eq!(preference_key("user.name").as_deref(), Some("user.name"));
        assert_eq!(
            preference_key("preferred.x").as_deref(),
            Some("pref.preferred.x")
        );
        assert_eq!(preference_key("lesson.x").as_deref(), Some("pref.lesson.x"));
        assert_eq!(preference_key("..a..b.."), Some("pref.a.b".into()));
        assert_eq!(preference_key("2fa"), Some("pref.2fa".into()));
        assert_eq!(preference_key("言語"), None);
        assert_eq!(preference_key("___"), None);
        let long = preference_key(&"a_".repeat(80)).unwrap();
        assert!(long.len() <= MAX_KEY_LEN && !long.ends_with('_'));
    }

    #[test]
    fn preferences_bullets_with_odd_spacing_unicode_and_duplicates() {
        let text = "# Preferences\n\nIntro prose: not a bullet.\n\n## Coding\n-   editor :   neovim  \n\t* language: Rust\n+ **Theme:** dark\n- `shell`: fish\n- Prefers concise answers\n- homepage: https://example.com\n- https://example.com/x\n- 言語: 日本語\n- Café: ☕ au lait\n- language: Rust 2021\n-\n- pref: terse\n";
        let parsed = parse_preferences(text);
        assert_eq!(
            parsed.entries,
            vec![
                ("pref.editor".into(), "neovim".into()),
                ("pref.language".into(), "Rust 2021".into()),
                ("pref.theme".into(), "dark".into()),
                ("pref.shell".into(), "fish".into()),
                ("pref.homepage".into(), "https://example.com".into()),
                ("pref.cafe".into(), "☕ au lait".into()),
                ("pref.default".into(), "terse".into()),
            ]
        );
        assert_eq!(parsed.duplicates, 1);
        assert_eq!(parsed.skipped.len(), 3, "{:?}", parsed.skipped);
    }

    #[test]
    fn projects_by_section_and_by_bullet() {
        let text = "# Projects\n- Side Quest: a tiny game\n- bare-name\n\n## KiroCrew\n- Rust actor service\n- uses sqlx\n\n### Ünï Project\n";
        let projects = parse_projects(text);
        let keys: Vec<_> = projects.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            vec![
                "project.kirocrew",
                "project.uni_project",
                "project.side_quest",
                "project.bare_name"
            ]
        );
        assert_eq!(projects[0].summary, "Rust actor service");
        assert_eq!(
            projects[0].details.as_deref(),
            Some("Project KiroCrew: - Rust actor service\n- uses sqlx")
        );
        assert_eq!(projects[1].summary, "Ünï Project");
        assert_eq!(projects[1].details, None);
        assert_eq!(projects[2].summary, "a tiny game");
    }

    #[test]
    fn history_entries_are_dated_in_local_time() {
        let date = NaiveDate::from_ymd_opt(2026, 3, 14).unwrap();
        let long = "word ".repeat(600);
        let text = format!("# 2026-03-14\n\n## 09:15\nMorning.\n\n## 14:02:33\n{long}\n");
        let fragments = history_fragments(date, &text);
        assert_eq!(fragments.len(), 2);
        let expected = Local
            .with_ymd_and_hms(2026, 3, 14, 9, 15, 0)
            .earliest()
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(fragments[0].created_at, expected);
        assert!(fragments[1].truncated);
        assert!(fragments[1].text.chars().count() <= MAX_TEXT_CHARS);
    }

    #[test]
    fn lessons_lines() {
        let text = "{\"rule\": \"run tests first\", \"negative\": \"push untested code\", \"category\": \"tool\"}\n\n{\"rule\": \"use metric units\", \"category\": \"odd\"}\nnot json\n{\"rule\": \"  \"}\n{\"text\": \"no rule field\"}\n";
        let (lessons, rejected) = parse_lessons(text);
        assert_eq!(lessons.len(), 2);
        assert_eq!(lessons[0].negative.as_deref(), Some("push untested code"));
        assert_eq!(lessons[1].rule, "use metric units");
        assert_eq!(rejected.len(), 3, "{rejected:?}");
        assert!(rejected[0].contains("line 4"));
    }
}
