//! Rendering of the `[Semantic Memory]` context block (spec: "Semantic
//! Memory → Context injection").

use super::retire::subject_stems;
use super::types::ScoredEntry;
use super::validate::LESSON_PREFIX;
use super::validate::USER_EXPLICIT;
use crate::context_block::{fit_items, BlockItem, ContextBlock, DropReason};
use crate::vector_store::text::value_text;

/// The block header.
pub const SEMANTIC_HEADER: &str = "[Semantic Memory]";

/// Renders ranked entries (best first) as `key: value` lines under the
/// header, within `cap` characters including the header. `lesson.*` keys are
/// skipped. Entries are taken in rank order; one that does not fit is
/// dropped and the scan goes on, so the lowest-ranked entries go first and a
/// single oversized entry cannot blank the whole block. Returns an empty
/// string when nothing fits.
pub fn render_semantic_block(ranked: &[ScoredEntry], cap: usize) -> String {
    render_semantic_items(ranked, cap).text
}

/// [`render_semantic_block`] with every candidate's fate and score.
///
/// Layer priority (spec "Conflict resolution: which layer wins"): a
/// user-explicit row outranks automated ones, so an automated row about the
/// same subject as a user-explicit one (same subject words of the key:
/// `pref.editor` and `project.editor`) is left out as superseded — the
/// prompt never carries a correction next to the value it corrected.
pub(crate) fn render_semantic_items(ranked: &[ScoredEntry], cap: usize) -> ContextBlock {
    let entries: Vec<&ScoredEntry> = ranked
        .iter()
        .filter(|scored| !scored.entry.key.starts_with(LESSON_PREFIX))
        .collect();
    let subjects: Vec<Vec<String>> = entries
        .iter()
        .map(|s| {
            let mut stems = subject_stems(&s.entry.key);
            stems.sort();
            stems
        })
        .collect();
    let corrected: Vec<&Vec<String>> = entries
        .iter()
        .zip(&subjects)
        .filter(|(s, subject)| s.entry.source == USER_EXPLICIT && !subject.is_empty())
        .map(|(_, subject)| subject)
        .collect();
    let candidates: Vec<_> = entries
        .iter()
        .zip(&subjects)
        .map(|(scored, subject)| {
            let entry = &scored.entry;
            let score = serde_json::json!({
                "score": scored.score,
                "confidence": entry.confidence,
                "source": entry.source,
            });
            let item = BlockItem::new(entry.key.clone(), "semantic", Some(score));
            if entry.source != USER_EXPLICIT && corrected.contains(&subject) {
                return (None, item.dropped(DropReason::Superseded));
            }
            (
                Some(format!("{}: {}", entry.key, value_text(&entry.value))),
                item,
            )
        })
        .collect();
    fit_items(SEMANTIC_HEADER, candidates, cap)
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::vector_store::semantic::types::SemanticEntry;

    fn scored(key: &str, value: Value, score: f64) -> ScoredEntry {
        ScoredEntry {
            entry: SemanticEntry {
                key: key.into(),
                value,
                confidence: 1.0,
                source: "user_explicit".into(),
                created_at: String::new(),
                updated_at: String::new(),
            },
            score,
        }
    }

    #[test]
    fn renders_key_value_lines_without_lessons() {
        let ranked = vec![
            scored("pref.theme", Value::String("dark".into()), 0.9),
            scored("lesson.abc", Value::String("always test".into()), 0.8),
            scored("user.langs", serde_json::json!(["rust", "go"]), 0.1),
        ];
        let block = render_semantic_block(&ranked, 10_000);
        assert_eq!(
            block,
            "[Semantic Memory]\npref.theme: dark\nuser.langs: [\"rust\",\"go\"]"
        );
    }

    #[test]
    fn lowest_ranked_entries_are_dropped_to_fit() {
        let ranked = vec![
            scored("pref.a", Value::String("1".into()), 0.9),
            scored("pref.b", Value::String("2".into()), 0.5),
            scored("pref.c", Value::String("3".into()), 0.1),
        ];
        let full = render_semantic_block(&ranked, 10_000);
        let cap = full.chars().count() - 1;
        let block = render_semantic_block(&ranked, cap);
        assert!(block.contains("pref.a") && block.contains("pref.b"));
        assert!(!block.contains("pref.c"));
        assert!(block.chars().count() <= cap);
    }

    #[test]
    fn an_oversized_entry_does_not_blank_the_block() {
        let ranked = vec![
            scored("pref.big", Value::String("x".repeat(500)), 0.9),
            scored("pref.small", Value::String("y".into()), 0.5),
        ];
        let block = render_semantic_block(&ranked, 100);
        assert_eq!(block, "[Semantic Memory]\npref.small: y");
    }

    #[test]
    fn an_automated_row_about_a_user_corrected_subject_is_superseded() {
        let mut corrected = scored("pref.editor", Value::String("helix".into()), 0.2);
        corrected.entry.source = USER_EXPLICIT.into();
        let mut old = scored("project.editor", Value::String("vim".into()), 0.9);
        old.entry.source = "consolidation".into();
        let mut other = scored("pref.theme", Value::String("dark".into()), 0.5);
        other.entry.source = "consolidation".into();
        let block = render_semantic_items(&[old, corrected, other], 10_000);
        assert_eq!(
            block.text,
            "[Semantic Memory]\npref.editor: helix\npref.theme: dark"
        );
        assert_eq!(block.items[0].dropped, Some(DropReason::Superseded));
        assert!(block.items[1].included && block.items[2].included);
    }

    #[test]
    fn nothing_fits_means_no_block() {
        let ranked = vec![scored("pref.a", Value::String("1".into()), 0.9)];
        assert_eq!(render_semantic_block(&ranked, 5), "");
        assert_eq!(render_semantic_block(&[], 1000), "");
    }
}
