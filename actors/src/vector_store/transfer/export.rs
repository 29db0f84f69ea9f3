//! Export: every active semantic row, the lesson categories and every
//! active episodic fragment, as one document that
//! `VectorStoreHandle::import` restores.

use actix::prelude::*;
use sqlx::sqlite::SqlitePool;

use super::format::{EpisodicExport, MemoryExport, EXPORT_FORMAT, EXPORT_VERSION};
use crate::vector_store::actor::VectorStore;
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::semantic::db::list_semantic;

/// Exports every active entry.
#[derive(Debug, Message)]
#[rtype(result = "Result<MemoryExport, VectorStoreError>")]
pub(crate) struct ExportMemory;

impl Handler<ExportMemory> for VectorStore {
    type Result = ResponseActFuture<Self, Result<MemoryExport, VectorStoreError>>;

    fn handle(&mut self, _: ExportMemory, _: &mut Context<Self>) -> Self::Result {
        self.concurrent(|pool, _, now| async move { export(&pool, now).await })
    }
}

/// Every active semantic row, sorted by key.
async fn export(pool: &SqlitePool, now: String) -> Result<MemoryExport, VectorStoreError> {
    let mut semantic = list_semantic(pool, None, None).await?;
    semantic.sort_by(|a, b| a.key.cmp(&b.key));
    // Lesson categories live beside the rows (lesson_meta); carry them so a
    // restore keeps them.
    let lesson_categories: std::collections::BTreeMap<String, String> = sqlx::query_as(
        "SELECT m.key, m.category FROM lesson_meta m
         JOIN semantic_memory s ON s.key = m.key WHERE s.is_deleted = 0",
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .collect();
    // Oldest first (ties by text), so two exports of the same memories are
    // the same document whatever the row ids.
    let rows: Vec<(String, String, f64, String)> = sqlx::query_as(
        "SELECT text, tags, importance, created_at FROM episodic_memories
         WHERE is_deleted = 0 ORDER BY created_at, text",
    )
    .fetch_all(pool)
    .await?;
    let episodic = rows
        .into_iter()
        .map(|(text, tags, importance, created_at)| EpisodicExport {
            text,
            // Tags are stored as the JSON array the writer made.
            tags: serde_json::from_str(&tags).unwrap_or_default(),
            importance,
            created_at,
        })
        .collect();
    Ok(MemoryExport {
        format: EXPORT_FORMAT.to_owned(),
        version: EXPORT_VERSION,
        exported_at: now,
        semantic,
        lesson_categories,
        episodic,
    })
}
