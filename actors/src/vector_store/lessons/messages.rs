//! Lesson messages of the `VectorStore` actor. Writes are atomic (the dedup
//! ladder reads every lesson and must not interleave with another write);
//! reads run as tasks.

use actix::prelude::*;

use super::db as store;
use super::rules::{
    lesson_relevance, parse_lesson_text, render_lessons_items, Lesson, LessonCategory,
    LessonOutcome, LessonWrite,
};
use crate::context_block::ContextBlock;
use crate::embedder::vector::cosine;
use crate::vector_store::actor::VectorStore;
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::keyword::KeywordQuery;
use crate::vector_store::semantic::mirror::{MirroredLesson, QueryVector};
use crate::vector_store::space::types::{CommitVector, EmbeddedQuery};
use crate::vector_store::text::value_text;

/// Writes a lesson through the dedup ladder (rule vector made beforehand).
#[derive(Debug, Message)]
#[rtype(result = "Result<LessonOutcome, VectorStoreError>")]
pub(crate) struct WriteLesson {
    /// The lesson.
    pub write: LessonWrite,
    /// The rule's vector, if the embedder is ready.
    pub vector: Option<CommitVector>,
}

/// Lists active lessons, newest first.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<Lesson>, VectorStoreError>")]
pub(crate) struct ListLessons;

/// Lesson rows without a vector: (key, value JSON), newest first.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<(String, String)>, VectorStoreError>")]
pub(crate) struct ListLessonsMissingVectors {
    /// At most this many.
    pub limit: u32,
}

/// Renders the `[Learned corrections]` block for a request.
#[derive(Debug, Message)]
#[rtype(result = "Result<ContextBlock, VectorStoreError>")]
pub(crate) struct GetLessonsContext {
    /// The request; empty means newest first.
    pub query: String,
    /// The request's embedding, when ready.
    pub embedded: Option<EmbeddedQuery>,
    /// The caller's character budget.
    pub budget: usize,
}

impl Handler<WriteLesson> for VectorStore {
    type Result = AtomicResponse<Self, Result<LessonOutcome, VectorStoreError>>;

    fn handle(&mut self, msg: WriteLesson, _: &mut Context<Self>) -> Self::Result {
        let space = self.space.clone();
        let screening = self.screening();
        self.atomic(|pool, settings, now| async move {
            let (w, v) = (msg.write, msg.vector);
            store::write(&pool, &settings, &space, w, v, &screening, &now).await
        })
    }
}

impl Handler<ListLessons> for VectorStore {
    type Result = ResponseActFuture<Self, Result<Vec<Lesson>, VectorStoreError>>;

    fn handle(&mut self, _: ListLessons, _: &mut Context<Self>) -> Self::Result {
        self.concurrent(|pool, _, _| async move {
            let mut conn = pool.acquire().await?;
            let rows = store::active_lessons(&mut conn).await?;
            Ok(rows.into_iter().map(|s| s.lesson).collect())
        })
    }
}

impl Handler<ListLessonsMissingVectors> for VectorStore {
    type Result = ResponseActFuture<Self, Result<Vec<(String, String)>, VectorStoreError>>;

    fn handle(&mut self, msg: ListLessonsMissingVectors, _: &mut Context<Self>) -> Self::Result {
        self.concurrent(
            move |pool, _, _| async move { store::missing_vectors(&pool, msg.limit).await },
        )
    }
}

/// A mirrored lesson row as a [`Lesson`]. The category lives beside the
/// row (`lesson_meta`) and is not part of the block, so it is left at its
/// default here; `ListLessons` reads the stored one.
fn mirrored_lesson(row: &MirroredLesson<'_>) -> Lesson {
    let (rule, negative) = parse_lesson_text(&value_text(&row.entry.value));
    Lesson {
        key: row.entry.key.clone(),
        rule,
        negative,
        category: LessonCategory::default(),
        source: row.entry.source.clone(),
        created_at: row.entry.created_at.clone(),
    }
}

/// Ranks lessons for a request: hybrid relevance, newest first on ties
/// (and for an empty request). Works on the mirror's rows, whose stems are
/// computed once per change rather than once per request.
fn rank_lessons(
    mut rows: Vec<MirroredLesson<'_>>,
    query: &str,
    vector: Option<QueryVector<'_>>,
) -> Vec<Lesson> {
    // Newest first, as the lesson listing orders them (created_at, then key).
    rows.sort_by(|a, b| {
        b.entry
            .created_at
            .cmp(&a.entry.created_at)
            .then_with(|| a.entry.key.cmp(&b.entry.key))
    });
    if query.trim().is_empty() {
        return rows.iter().map(mirrored_lesson).collect();
    }
    let keywords = KeywordQuery::new(query);
    let mut scored: Vec<(f64, &MirroredLesson<'_>)> = rows
        .iter()
        .map(|row| {
            let cos = vector.map(|q| match row.vector {
                Some((sig, v)) if sig == q.signature => Some(cosine(q.vector, v)),
                _ => None,
            });
            (lesson_relevance(&keywords, row.stems, cos), row)
        })
        .collect();
    // A stable sort keeps the newest-first order on ties.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored
        .into_iter()
        .map(|(_, row)| mirrored_lesson(row))
        .collect()
}

impl Handler<GetLessonsContext> for VectorStore {
    type Result = ResponseActFuture<Self, Result<ContextBlock, VectorStoreError>>;

    fn handle(&mut self, msg: GetLessonsContext, _: &mut Context<Self>) -> Self::Result {
        self.with_fresh_mirror(move |act| {
            let signature = msg
                .embedded
                .as_ref()
                .and_then(|e| e.signature_in(&act.space));
            let vector = QueryVector::of(msg.embedded.as_ref(), signature.as_deref());
            let ranked = rank_lessons(act.mirror.lessons().collect(), &msg.query, vector);
            Ok(render_lessons_items(&ranked, msg.budget))
        })
    }
}
