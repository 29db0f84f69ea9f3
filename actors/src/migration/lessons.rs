//! lessons.jsonl → `lesson.*` rows (spec: "Lessons → Migration":
//! `source=migration, confidence=0.9`; user-explicit lessons can't be
//! overwritten).
//!
//! LEAD: switch this to the lesson write path (`write_lesson` on
//! `VectorStoreHandle`, actors/src/vector_store/lessons*.rs) once it lands
//! on main, so migrated lessons get its substring / topic-overlap /
//! embedding dedup and its own key and value format. Until then each lesson
//! is written as a plain semantic row `lesson.<md5(rule text)>` through the
//! conflict ladder, skipping any key that already has an active row.

use md5::{Digest, Md5};
use serde_json::Value;

use super::parse::LegacyLesson;
use super::{write_key, Outcome, LESSON_CONFIDENCE};
use crate::vector_store::{VectorStoreError, VectorStoreHandle};

/// The key a lesson is stored under: `lesson.<md5 of its text>`.
pub fn lesson_key(text: &str) -> String {
    format!("lesson.{}", hex::encode(Md5::digest(text.as_bytes())))
}

/// Writes one legacy lesson; returns its key and what happened.
pub(super) async fn migrate_lesson(
    store: &VectorStoreHandle,
    lesson: &LegacyLesson,
) -> Result<(String, Outcome), VectorStoreError> {
    let text = lesson.text();
    let key = lesson_key(lesson.rule.trim());
    let outcome = write_key(store, &key, Value::String(text), LESSON_CONFIDENCE).await?;
    Ok((key, outcome))
}

#[cfg(test)]
mod tests {
    #[test]
    fn keys_are_md5_of_the_rule() {
        assert_eq!(
            super::lesson_key("abc"),
            "lesson.900150983cd24fb0d6963f7d28e17f72"
        );
    }
}
