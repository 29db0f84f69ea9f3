//! Splitting the memory files into indexable sections ([`Doc`]s): the
//! `## ` sections of preferences.md, projects.md and other notes, and the
//! entries of dated history files.

use std::path::Path;

use chrono::NaiveDate;

use super::disk::{markdown_names, read_text, HISTORY_DIR};
use super::history;

/// One indexable section of a memory file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doc {
    /// Path relative to the memory directory.
    pub file: String,
    /// `## ` heading, or the history entry's `date time`.
    pub section: String,
    /// The section's text.
    pub content: String,
}

/// Splits a non-history Markdown file into its `## ` sections (the text
/// before the first heading is a section named after the `# ` title, or
/// unnamed).
pub fn split_sections(file: &str, text: &str) -> Vec<Doc> {
    let mut docs = Vec::new();
    let mut section = String::new();
    let mut body = String::new();
    let flush = |section: &str, body: &str, docs: &mut Vec<Doc>| {
        if !body.trim().is_empty() || !section.is_empty() {
            docs.push(Doc {
                file: file.to_owned(),
                section: section.to_owned(),
                content: body.trim().to_owned(),
            });
        }
    };
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            flush(&section, &body, &mut docs);
            section = heading.trim().to_owned();
            body.clear();
        } else if let (Some(title), true) = (line.strip_prefix("# "), docs.is_empty()) {
            if section.is_empty() && body.trim().is_empty() {
                section = title.trim().to_owned();
            } else {
                body.push_str(line);
                body.push('\n');
            }
        } else {
            body.push_str(line);
            body.push('\n');
        }
    }
    flush(&section, &body, &mut docs);
    docs.retain(|d| !d.content.is_empty() || !d.section.is_empty());
    docs
}

/// The sections of a dated history file: one per entry.
pub fn history_docs(file: &str, date: NaiveDate, text: &str) -> Vec<Doc> {
    history::parse_entries(text)
        .into_iter()
        .map(|e| Doc {
            file: file.to_owned(),
            section: match e.time {
                Some(t) => format!("{date} {t}"),
                None => date.to_string(),
            },
            content: e.text,
        })
        .collect()
}

/// Every indexable section under `root`: the top-level `*.md` files and
/// `history/*.md` (dated files by entry, others by section). Unreadable
/// files are logged and skipped: one bad file must not empty the index.
pub fn collect_documents(root: &Path) -> Vec<Doc> {
    let mut docs = Vec::new();
    for (dir, prefix) in [
        (root.to_path_buf(), ""),
        (root.join(HISTORY_DIR), "history/"),
    ] {
        let mut names = markdown_names(&dir);
        names.sort();
        for name in names {
            let rel = format!("{prefix}{name}");
            match read_text(&dir.join(&name)) {
                Ok(Some(text)) => docs.extend(docs_of(&rel, &text)),
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "memory file not indexed"),
            }
        }
    }
    docs
}

/// The sections of one file, given its path relative to the memory dir.
pub fn docs_of(rel: &str, text: &str) -> Vec<Doc> {
    let dated = rel
        .strip_prefix("history/")
        .and_then(history::parse_file_name);
    match dated {
        Some(date) => history_docs(rel, date, text),
        None => split_sections(rel, text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_split_on_level_two_headings() {
        let text = "# Preferences\nintro line\n\n## Editor\n- editor: vim\n\n## Style\n- terse\n";
        let docs = split_sections("preferences.md", text);
        let sections: Vec<_> = docs.iter().map(|d| d.section.as_str()).collect();
        assert_eq!(sections, vec!["Preferences", "Editor", "Style"]);
        assert_eq!(docs[1].content, "- editor: vim");
        assert!(split_sections("x.md", "  \n").is_empty());
        assert_eq!(split_sections("x.md", "plain")[0].section, "");
    }

    #[test]
    fn dated_history_files_index_by_entry() {
        let docs = docs_of(
            "history/2026-03-14.md",
            "# 2026-03-14\n\n## 09:15\nran tests\n",
        );
        assert_eq!(docs.len(), 1);
        assert_eq!(docs[0].section, "2026-03-14 09:15");
        let other = docs_of("history/notes.md", "## A\nx\n");
        assert_eq!(other[0].section, "A");
    }
}
