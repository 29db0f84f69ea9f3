//! Rendering of the `[Semantic Memory]` context block (spec: "Semantic
//! Memory → Context injection").

use super::types::ScoredEntry;
use super::validate::LESSON_PREFIX;
use crate::context_block::{fit_items, BlockItem, ContextBlock};
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
pub(crate) fn render_semantic_items(ranked: &[ScoredEntry], cap: usize) -> ContextBlock {
    let candidates: Vec<_> = ranked
        .iter()
        .filter(|scored| !scored.entry.key.starts_with(LESSON_PREFIX))
        .map(|scored| {
            let entry = &scored.entry;
            let score = serde_json::json!({
                "score": scored.score,
                "confidence": entry.confidence,
                "source": entry.source,
            });
            (
                Some(format!("{}: {}", entry.key, value_text(&entry.value))),
                BlockItem::new(entry.key.clone(), "semantic", Some(score)),
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
    fn nothing_fits_means_no_block() {
        let ranked = vec![scored("pref.a", Value::String("1".into()), 0.9)];
        assert_eq!(render_semantic_block(&ranked, 5), "");
        assert_eq!(render_semantic_block(&[], 1000), "");
    }
}
