//! Lesson methods of [`VectorStoreHandle`]: the rule is embedded before the
//! store's critical section (plus at most five lessons still missing a
//! vector, so the embedding rung of the dedup ladder fills in lazily).

use super::messages::{GetLessonsContext, ListLessons, ListLessonsMissingVectors, WriteLesson};
use super::rules::{
    check_lesson_chars, parse_lesson_text, validate_lesson, Lesson, LessonOutcome, LessonWrite,
    MAX_BACKFILLS_PER_WRITE,
};
use crate::context_block::ContextBlock;
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::handle::VectorStoreHandle;
use crate::vector_store::semantic::validate::LESSON_PREFIX;
use crate::vector_store::space::types::QueryEmbedding;
use crate::vector_store::text::value_text;

impl VectorStoreHandle {
    /// The one lesson write path (spec: `write_lesson`): validation, then the
    /// rule's embed and up to five lazy backfills, then the dedup ladder and
    /// the write inside the store. A duplicate answers
    /// [`VectorStoreError::DuplicateLesson`] naming the lesson that already
    /// says it.
    pub async fn write_lesson(
        &self,
        write: LessonWrite,
    ) -> Result<LessonOutcome, VectorStoreError> {
        check_lesson_chars(&write)?;
        let (rule, _) = validate_lesson(&write).map_err(VectorStoreError::InvalidLesson)?;
        let vector = self.commit_vector(&rule).await;
        if vector.is_some() {
            self.backfill_lessons().await;
        }
        self.ask(WriteLesson { write, vector }).await
    }

    /// Embeds up to [`MAX_BACKFILLS_PER_WRITE`] lessons that have no vector
    /// (their rule text, as the writer would have). Best effort: a failure
    /// leaves them for the next write or the re-embed sweep.
    async fn backfill_lessons(&self) {
        if let Err(e) = self.embed_lesson_batch(MAX_BACKFILLS_PER_WRITE).await {
            tracing::debug!(error = %e, "lesson vectors not backfilled");
        }
    }

    /// One batch of lessons without a vector, embedded from their rule text
    /// (never the key-value document a plain semantic row gets) and stored
    /// if the row and the space are unchanged. Returns (rows listed, rows
    /// stored): the re-embed sweep stops when nothing is listed, or when a
    /// batch lands nothing (the space moved; the next sweep starts over).
    pub(crate) async fn embed_lesson_batch(
        &self,
        limit: u32,
    ) -> Result<(usize, u64), VectorStoreError> {
        let missing = self.ask(ListLessonsMissingVectors { limit }).await?;
        if missing.is_empty() {
            return Ok((0, 0));
        }
        let rules: Vec<String> = missing
            .iter()
            .map(|(_, value_json)| {
                let text = serde_json::from_str(value_json)
                    .map(|v| value_text(&v))
                    .unwrap_or_else(|_| value_json.clone());
                parse_lesson_text(&text).0
            })
            .collect();
        let vectors = self.embed_for_commit(rules).await?;
        let rows: Vec<_> = missing
            .into_iter()
            .zip(vectors)
            .map(|((key, value_json), vector)| (key, value_json, vector))
            .collect();
        let listed = rows.len();
        Ok((listed, self.store_vectors(rows).await?))
    }

    /// Active lessons, newest first.
    pub async fn list_lessons(&self) -> Result<Vec<Lesson>, VectorStoreError> {
        self.ask(ListLessons).await
    }

    /// Tombstones a lesson; a key outside `lesson.*` is not a lesson.
    pub async fn delete_lesson(&self, key: &str, source: &str) -> Result<(), VectorStoreError> {
        if !key.starts_with(LESSON_PREFIX) {
            return Err(VectorStoreError::NotFound(key.to_owned()));
        }
        self.delete_semantic(key, source).await
    }

    /// The `[Learned corrections]` block for a request within `budget`
    /// characters, lessons ranked by hybrid relevance to it.
    pub async fn lessons_context(
        &self,
        request: &str,
        budget: usize,
    ) -> Result<String, VectorStoreError> {
        let embedded = self.embed_query(request).await;
        let block = self
            .ask(GetLessonsContext {
                query: request.to_owned(),
                embedded,
                budget,
            })
            .await?;
        Ok(block.text)
    }

    /// [`lessons_context`](Self::lessons_context) with every lesson's fate,
    /// ranked with the build's shared query embedding.
    pub async fn lessons_block(
        &self,
        request: &str,
        budget: usize,
        query: &QueryEmbedding,
    ) -> Result<ContextBlock, VectorStoreError> {
        self.ask(GetLessonsContext {
            query: request.to_owned(),
            embedded: query.embedded.clone(),
            budget,
        })
        .await
    }
}
