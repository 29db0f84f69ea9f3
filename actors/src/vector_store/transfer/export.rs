//! Export: every active semantic row and the lesson categories, as one
//! document that `VectorStoreHandle::import` restores.

use actix::prelude::*;
use sqlx::sqlite::SqlitePool;

use super::format::{MemoryExport, EXPORT_FORMAT, EXPORT_VERSION};
use crate::vector_store::actor::VectorStore;
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::semantic::db::list_semantic;

/// Exports every active semantic entry.
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
    Ok(MemoryExport {
        format: EXPORT_FORMAT.to_owned(),
        version: EXPORT_VERSION,
        exported_at: now,
        semantic,
        lesson_categories,
    })
}
