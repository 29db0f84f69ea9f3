//! The Markdown layers' part of the prompt context (spec: "Memory →
//! Context injection includes source citations per section", the
//! per-section caps of "Context Builder").
//!
//! Three sections, each with the file it came from and its own cap:
//! `## Preferences` (4,290 chars at the reference window), `## Projects`
//! (6,435) and `## Recent History` (26,400, the decayed history). A caller
//! on a smaller model window passes smaller caps; larger ones are clamped
//! to the reference values, which are the ceiling at any window. An empty
//! layer emits no section; a zero cap on a non-empty layer emits the header
//! and the `…[truncated]` marker, as the reference does.

use serde::{Deserialize, Serialize};

use super::history::cap_text;

/// Per-section character caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextCaps {
    /// preferences.md (`_MEMORY_PREFS_CAP`).
    pub preferences: usize,
    /// projects.md (`_MEMORY_PROJECTS_CAP`).
    pub projects: usize,
    /// The decayed history (`_MEMORY_HISTORY_CAP`).
    pub history: usize,
}

impl ContextCaps {
    /// The caps at the reference (1M-token) window.
    pub const REFERENCE: Self = Self {
        preferences: 4_290,
        projects: 6_435,
        history: 26_400,
    };

    /// Each cap limited to its reference value.
    pub fn clamped(self) -> Self {
        let r = Self::REFERENCE;
        Self {
            preferences: self.preferences.min(r.preferences),
            projects: self.projects.min(r.projects),
            history: self.history.min(r.history),
        }
    }
}

impl Default for ContextCaps {
    fn default() -> Self {
        Self::REFERENCE
    }
}

/// One cited section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextSection {
    /// `Preferences`, `Projects` or `Recent History`.
    pub title: &'static str,
    /// The file or folder it was read from.
    pub source: String,
    /// The capped text.
    pub text: String,
}

/// The Markdown layers' context.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MemoryContext {
    /// Non-empty sections in prompt order.
    pub sections: Vec<ContextSection>,
}

impl MemoryContext {
    /// The sections as prompt text.
    pub fn render(&self) -> String {
        self.sections
            .iter()
            .map(|s| format!("## {}\n(source: {})\n{}", s.title, s.source, s.text))
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

/// Builds the context from the three texts and their sources.
pub fn build_context(
    layers: [(&'static str, String, &str); 3],
    caps: ContextCaps,
) -> MemoryContext {
    let caps = caps.clamped();
    let limits = [caps.preferences, caps.projects, caps.history];
    let sections = layers
        .into_iter()
        .zip(limits)
        .filter(|((_, _, text), _)| !text.trim().is_empty())
        .map(|((title, source, text), cap)| ContextSection {
            title,
            source,
            text: cap_text(text.trim(), cap),
        })
        .collect();
    MemoryContext { sections }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory_files::history::TRUNCATED_MARKER;

    #[test]
    fn sections_are_cited_capped_and_skipped_when_empty() {
        let ctx = build_context(
            [
                ("Preferences", "/m/preferences.md".into(), "- editor: vim\n"),
                ("Projects", "/m/projects.md".into(), "  "),
                (
                    "Recent History",
                    "/m/history/".into(),
                    "### 2026-03-14\n- x",
                ),
            ],
            ContextCaps {
                preferences: 0,
                projects: 10,
                history: 1_000_000,
            },
        );
        assert_eq!(ctx.sections.len(), 2);
        assert_eq!(ctx.sections[0].text, TRUNCATED_MARKER);
        assert_eq!(
            ctx.render(),
            format!(
                "## Preferences\n(source: /m/preferences.md)\n{TRUNCATED_MARKER}\n\n## Recent History\n(source: /m/history/)\n### 2026-03-14\n- x"
            )
        );
    }

    #[test]
    fn caps_never_exceed_the_reference() {
        let big = ContextCaps {
            preferences: 10_000,
            projects: 1,
            history: 30_000,
        };
        assert_eq!(
            big.clamped(),
            ContextCaps {
                preferences: 4_290,
                projects: 1,
                history: 26_400
            }
        );
        let long = "x".repeat(5_000);
        let ctx = build_context(
            [
                ("Preferences", "p".into(), &long),
                ("Projects", "q".into(), ""),
                ("Recent History", "h".into(), ""),
            ],
            ContextCaps::default(),
        );
        assert!(ctx.sections[0].text.chars().count() <= 4_290 + TRUNCATED_MARKER.len() + 1);
    }
}
