//! Which lower-layer text a semantic fact (or a lesson) supersedes in a
//! prompt (spec "Conflict resolution: which layer wins"; issue 13: "when a
//! lower layer contradicts a higher one on the same key/subject only the
//! higher one is included").
//!
//! A contradiction needs two things: the same subject, and a different
//! value. Both are judged on stemmed words, as the rest of the store does:
//!
//! - A **lesson** supersedes a semantic row when the lesson's rule (the
//!   part before "— NOT:") names every subject word of the row's key
//!   (`pref.package_manager` → `packag`, `manag`) and does not state the
//!   row's value: "Use pnpm as the package manager" beats
//!   `pref.package_manager: npm`, and leaves `…: pnpm` alone.
//! - A **semantic row** supersedes a Markdown line (preferences.md,
//!   projects.md) only when the line has the `label: value` shape and its
//!   label is about the key's subject (every subject word, at most two
//!   more: "Preferred editor") and the line does not state the row's
//!   value. Free-form lines ("- Prefers vim") are never judged: without a
//!   label a subject word may be incidental ("likes short variable
//!   names" is not about `user.name`), and a wrongly dropped preference is
//!   a silent loss, while a kept one is still outranked by the semantic
//!   block's framing.

use std::collections::HashSet;

use super::retire::subject_stems;
use crate::vector_store::keyword::stems;

/// Extra label words a Markdown line may have beside the key's subject.
const MAX_EXTRA_LABEL_WORDS: usize = 2;

/// Whether every stem of `value` occurs in `stems` (an empty value never
/// counts as stated).
fn states(text_stems: &HashSet<String>, value: &str) -> bool {
    let value = stems(value);
    !value.is_empty() && value.is_subset(text_stems)
}

/// Whether the lesson `rule` supersedes the semantic row `key: value`.
pub fn lesson_supersedes(rule: &str, key: &str, value: &str) -> bool {
    let positive = rule.split("— NOT:").next().unwrap_or(rule);
    let subject = subject_stems(key);
    if subject.is_empty() {
        return false;
    }
    let rule_stems = stems(positive);
    subject.iter().all(|s| rule_stems.contains(s)) && !states(&rule_stems, value)
}

/// Whether the semantic row `key: value` supersedes the Markdown `line`.
pub fn fact_supersedes_line(key: &str, value: &str, line: &str) -> bool {
    let body = line
        .trim_start()
        .trim_start_matches(['-', '*', '+'])
        .trim_start();
    let Some((label, rest)) = body.split_once(':') else {
        return false;
    };
    let subject: HashSet<String> = subject_stems(key).into_iter().collect();
    if subject.is_empty() {
        return false;
    }
    let label_stems = stems(label);
    let about = subject.is_subset(&label_stems)
        && label_stems.len() <= subject.len() + MAX_EXTRA_LABEL_WORDS;
    about && !states(&stems(rest), value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lesson_beats_a_fact_on_its_subject_with_another_value() {
        assert!(lesson_supersedes(
            "Use pnpm as the package manager",
            "pref.package_manager",
            "npm"
        ));
        assert!(!lesson_supersedes(
            "Use pnpm as the package manager",
            "pref.package_manager",
            "pnpm"
        ));
        // The negative part is what the lesson forbids, not what it states.
        assert!(lesson_supersedes(
            "Use pnpm as the package manager — NOT: npm",
            "pref.package_manager",
            "npm"
        ));
        assert!(!lesson_supersedes(
            "Always answer in French",
            "pref.editor",
            "vim"
        ));
        assert!(!lesson_supersedes("anything", "pref.x", "y"));
    }

    #[test]
    fn a_fact_beats_a_labelled_line_on_its_subject() {
        assert!(fact_supersedes_line(
            "pref.editor",
            "emacs",
            "- Editor: vim"
        ));
        assert!(fact_supersedes_line(
            "pref.editor",
            "emacs",
            "* Preferred editor: vim"
        ));
        assert!(!fact_supersedes_line(
            "pref.editor",
            "emacs",
            "- Editor: emacs"
        ));
        // Free-form lines are never judged.
        assert!(!fact_supersedes_line(
            "pref.editor",
            "emacs",
            "- Prefers vim as editor"
        ));
        assert!(!fact_supersedes_line(
            "user.name",
            "Ada",
            "- Likes short variable names"
        ));
        // A label about something larger is not the same subject.
        assert!(!fact_supersedes_line(
            "user.name",
            "Ada",
            "- Name of the staging database cluster in eu: kiro-db"
        ));
        assert!(!fact_supersedes_line("pref.theme", "dark", "Theme"));
    }
}
