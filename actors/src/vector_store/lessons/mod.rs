//! Lessons: user-taught corrections ("always do X", "never do Y"), spec
//! sections "Lessons (learn.py → vector_memory.py)", "Lessons in Vector
//! Memory" and the lesson rows of "Conflict resolution".
//!
//! A lesson is a semantic row `lesson.<blake3 of the rule>` whose value is
//! the text "rule" or "rule — NOT: negative", written by user_explicit at
//! confidence 1.0 (0.9 for migration), with its category in `lesson_meta`.
//! Every lesson write goes through `VectorStoreHandle::write_lesson`, which
//! runs the dedup ladder (`rules::dedup`) inside the store's critical section, so two concurrent writes
//! of near-identical rules cannot both land.
//!
//! Files: `rules.rs` the pure parts (key, text, dedup ladder, ranking, the
//! `[Learned corrections]` block); `db.rs` the SQL, `messages.rs` the actor
//! messages, `handle.rs` the embed-first handle methods.

pub(super) mod db;
mod handle;
pub(super) mod messages;
pub(super) mod rules;
#[cfg(test)]
mod tests;

pub use crate::vector_store::semantic::validate::LESSON_PREFIX;
pub use rules::{
    check_lesson_chars, lesson_key, lesson_text, parse_lesson_text, render_lessons_block,
    validate_lesson, Lesson, LessonCategory, LessonOutcome, LessonWrite, AGENT_LESSON_MARK,
    LESSONS_HEADER, LESSONS_PREAMBLE, MAX_RULE_CHARS, NEGATIVE_SEPARATOR,
};
pub(crate) use rules::{dedup, Dedup, ExistingLesson};
