//! The lessons group's `[Learned corrections]` section, with the overflow
//! rule of spec "Per-section caps → Lessons": when not every stored lesson
//! fits its cap, a `[CRITICAL ERROR — LESSONS FILE TOO LARGE]` block comes
//! first (telling the model to tell the user and offer `learn_remove`),
//! the event is logged at error, and the shown lessons follow with
//! `…[lessons truncated]`. Shown lessons stay in effect.
//!
//! When memory.db cannot answer, the lessons come from `lessons.jsonl`
//! instead (spec "Lessons": the JSONL store is the fallback while vector
//! memory is not available; lessons taught meanwhile are written there).

use kirocrew_actors::context_block::{BlockItem, DropReason};
use kirocrew_actors::lessons_file::LessonFile;
use kirocrew_actors::vector_store::{QueryEmbedding, VectorStoreHandle};

/// The overflow block's header.
pub const LESSONS_OVERFLOW_HEADER: &str = "[CRITICAL ERROR — LESSONS FILE TOO LARGE]";

/// Appended to cut lessons.
pub const LESSONS_TRUNCATED: &str = "…[lessons truncated]";

/// The section text and its items, within `cap` chars.
pub(crate) async fn lessons_section(
    store: &VectorStoreHandle,
    fallback: &LessonFile,
    request: &str,
    cap: usize,
    query: &QueryEmbedding,
) -> (String, Vec<BlockItem>) {
    let full = match store.lessons_block(request, usize::MAX / 4, query).await {
        Ok(full) => full,
        Err(e) => return from_file(fallback, cap, &e),
    };
    if full.text.chars().count() <= cap {
        return (full.text, full.items);
    }
    let total = full.items.len();
    let warning = overflow_block(total);
    let room = cap.saturating_sub(warning.chars().count() + LESSONS_TRUNCATED.len() + 2);
    let block = match store.lessons_block(request, room, query).await {
        Ok(b) => b,
        Err(e) => {
            tracing::warn!(error = %e, "lessons left out of the context");
            return (String::new(), Vec::new());
        }
    };
    let shown = block.items.iter().filter(|i| i.included).count();
    tracing::error!(
        shown,
        total,
        cap,
        "lessons exceed their context cap; the model is told to ask the user to remove some"
    );
    let mut items = block.items;
    for item in &mut items {
        if !item.included && item.dropped.is_none() {
            item.dropped = Some(DropReason::Cap);
        }
    }
    let text = if block.text.is_empty() {
        warning
    } else {
        format!("{warning}\n\n{}\n{LESSONS_TRUNCATED}", block.text)
    };
    (text, items)
}

/// The section from `lessons.jsonl` when the store failed with `why`.
fn from_file(
    fallback: &LessonFile,
    cap: usize,
    why: &dyn std::fmt::Display,
) -> (String, Vec<BlockItem>) {
    match fallback.context(cap) {
        Ok(text) => {
            tracing::warn!(error = %why, "memory.db unavailable; lessons served from lessons.jsonl");
            (text, Vec::new())
        }
        Err(e) => {
            tracing::warn!(error = %why, fallback = %e, "lessons left out of the context");
            (String::new(), Vec::new())
        }
    }
}

fn overflow_block(total: usize) -> String {
    format!(
        "{LESSONS_OVERFLOW_HEADER}\nThere are {total} learned corrections, more than fit in the context. Before anything else, tell the user that some lessons could not be loaded and offer to help remove outdated ones: the user removes their own with kirocrew learn list / kirocrew learn remove <key> (or the dashboard); learn_remove removes only the notes you wrote yourself. The lessons shown below stay in effect."
    )
}

/// `text` within `cap` chars, ending with `marker` when cut.
pub(crate) fn cap_with_marker(text: &str, cap: usize, marker: &str) -> String {
    if text.chars().count() <= cap {
        return text.to_owned();
    }
    let keep = cap.saturating_sub(marker.chars().count() + 1);
    let cut: String = text.chars().take(keep).collect();
    let cut = cut
        .rfind('\n')
        .map_or(cut.as_str(), |i| &cut[..i])
        .to_owned();
    format!("{cut}\n{marker}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capping_keeps_whole_lines_and_marks_the_cut() {
        assert_eq!(cap_with_marker("short", 100, "…"), "short");
        let text = "line one\nline two\nline three";
        let out = cap_with_marker(text, 20, "…[cut]");
        assert_eq!(out, "line one\n…[cut]");
        assert!(out.chars().count() <= 20);
    }

    /// Spec "Lessons": while memory.db cannot answer (here: the store is
    /// closed), the lessons taught meanwhile come from lessons.jsonl.
    #[actix_rt::test]
    async fn lessons_come_from_the_file_when_the_store_cannot_answer() {
        use kirocrew_actors::clock::system_clock;
        use kirocrew_actors::vector_store::lessons::LessonWrite;
        use kirocrew_actors::vector_store::StoreSettings;
        let dir = tempfile::tempdir().unwrap();
        let store = VectorStoreHandle::open(
            dir.path().join("memory.db"),
            StoreSettings::default(),
            system_clock(),
        )
        .await
        .unwrap();
        let file = LessonFile::new(dir.path().join("lessons.jsonl"));
        file.add(
            &LessonWrite::user("always run cargo fmt before committing"),
            "2026-12-07T06:00:00.000000Z",
        )
        .unwrap();
        let query = QueryEmbedding::none();
        // The store answers: its own lessons (none), not the file's.
        let (text, _) = lessons_section(&store, &file, "commit", 2_000, &query).await;
        assert!(!text.contains("cargo fmt"), "{text}");
        store.close().await.unwrap();
        let (text, _) = lessons_section(&store, &file, "commit", 2_000, &query).await;
        assert!(
            text.contains("always run cargo fmt before committing"),
            "{text}"
        );
        // No file either: nothing, no error.
        let empty = LessonFile::new(dir.path().join("none.jsonl"));
        let (text, _) = lessons_section(&store, &empty, "commit", 2_000, &query).await;
        assert!(!text.contains("cargo fmt"), "{text}");
    }

    #[test]
    fn the_overflow_block_names_the_count_and_learn_remove() {
        let b = overflow_block(250);
        assert!(b.starts_with(LESSONS_OVERFLOW_HEADER));
        assert!(b.contains("250") && b.contains("learn_remove"));
    }
}
