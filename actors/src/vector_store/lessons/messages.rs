//! Lesson messages of the `VectorStore` actor. Writes are atomic (the dedup
//! ladder reads every lesson and must not interleave with another write);
//! reads run as tasks.

use actix::prelude::*;

use super::db::{self as store, StoredLesson};
use super::rules::{
    lesson_relevance, lesson_text, render_lessons_items, Lesson, LessonOutcome, LessonWrite,
};
use crate::context_block::ContextBlock;
use crate::embedder::vector::cosine;
use crate::vector_store::actor::VectorStore;
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::keyword::KeywordQuery;
use crate::vector_store::space::types::{CommitVector, EmbeddedQuery};

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
        self.atomic(|pool, settings, now| async move {
            store::write(&pool, &settings, &space, msg.write, msg.vector, &now).await
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

/// Ranks lessons for a request: hybrid relevance, newest first on ties
/// (and for an empty request).
fn rank_lessons(
    rows: Vec<StoredLesson>,
    query: &str,
    vector: Option<(&[f32], &str)>,
) -> Vec<Lesson> {
    if query.trim().is_empty() {
        return rows.into_iter().map(|s| s.lesson).collect();
    }
    let keywords = KeywordQuery::new(query);
    let mut scored: Vec<(f64, Lesson)> = rows
        .into_iter()
        .map(|s| {
            let cos = vector.map(|(q, sig)| match &s.vector {
                Some((vs, v)) if vs == sig => Some(cosine(q, v)),
                _ => None,
            });
            let text = lesson_text(&s.lesson.rule, s.lesson.negative.as_deref());
            (lesson_relevance(&keywords, &text, cos), s.lesson)
        })
        .collect();
    // Rows arrive newest first; a stable sort keeps that order on ties.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().map(|(_, l)| l).collect()
}

impl Handler<GetLessonsContext> for VectorStore {
    type Result = ResponseActFuture<Self, Result<ContextBlock, VectorStoreError>>;

    fn handle(&mut self, msg: GetLessonsContext, _: &mut Context<Self>) -> Self::Result {
        let signature = msg
            .embedded
            .as_ref()
            .and_then(|e| self.space.signature_for(&e.model_id, e.vector.len()));
        self.concurrent(move |pool, _, _| async move {
            let mut conn = pool.acquire().await?;
            let rows = store::active_lessons(&mut conn).await?;
            let vector = msg
                .embedded
                .as_ref()
                .zip(signature.as_deref())
                .map(|(e, sig)| (e.vector.as_slice(), sig));
            let ranked = rank_lessons(rows, &msg.query, vector);
            Ok(render_lessons_items(&ranked, msg.budget))
        })
    }
}
