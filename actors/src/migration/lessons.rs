//! lessons.jsonl → lessons in memory.db (spec: "Lessons → Migration":
//! `source=migration, confidence=0.9`; user-explicit lessons can't be
//! overwritten).
//!
//! Each line goes through the one lesson write path
//! ([`VectorStoreHandle::write_lesson`], with [`LessonWrite::migrated`]), so
//! the substring, topic-overlap and embedding dedup apply. A lesson whose
//! key already has a row (active, or tombstoned by its owner) is skipped
//! before that (the write path
//! would re-affirm it, touching `updated_at` and the audit trail, and a
//! second migration must change nothing). A duplicate, or a topic
//! replacement that would lose to a user_explicit lesson, counts as skipped.

use crate::lessons_file::FileLesson;
use crate::vector_store::lessons::{lesson_key, LessonWrite};
use crate::vector_store::{KeyState, VectorStoreError, VectorStoreHandle};

use super::report::Outcome;

/// Writes one legacy lesson; returns its key and what happened.
pub(super) async fn migrate_lesson(
    store: &VectorStoreHandle,
    lesson: &FileLesson,
) -> Result<(String, Outcome), VectorStoreError> {
    let key = lesson_key(&lesson.rule);
    // Screening is the store's: a flagged lesson is refused or held in
    // the quarantine there, like every other writer's (issue 41).
    // Active: kept; tombstoned: the user removed it since an earlier run.
    if store.key_state(&key).await? != KeyState::Absent {
        return Ok((key, Outcome::Skipped));
    }
    let write = LessonWrite::migrated(lesson.rule.clone())
        .with_negative(lesson.negative.clone())
        .with_category(lesson.category);
    match store.write_lesson(write).await {
        Ok(outcome) => Ok((outcome.key().to_owned(), Outcome::Migrated)),
        Err(
            VectorStoreError::DuplicateLesson { .. } | VectorStoreError::ConflictSkipped { .. },
        ) => Ok((key, Outcome::Skipped)),
        Err(e) if e.is_rejection() => Ok((key, Outcome::Rejected(e.to_string()))),
        Err(e) => Err(e),
    }
}
