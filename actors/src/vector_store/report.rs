//! Read-only reports over the whole store: stats and export.

use std::path::Path;

use sqlx::sqlite::SqlitePool;

use super::db;
use super::error::VectorStoreError;
use super::space::SpaceInfo;
use super::transfer::{MemoryExport, EXPORT_FORMAT, EXPORT_VERSION};
use super::types::{EpisodicStats, MemoryStats, SemanticStats};

/// Counts and sizes for the stats endpoint.
/// `hybrid` once a model's space is recorded (rows then rank by cosine and
/// keywords), else `keyword`.
pub async fn stats(
    pool: &SqlitePool,
    db_path: &Path,
    space: SpaceInfo,
) -> Result<MemoryStats, VectorStoreError> {
    let semantic = SemanticStats {
        active: db::count(
            pool,
            "SELECT COUNT(*) FROM semantic_memory WHERE is_deleted = 0",
        )
        .await?,
        deleted: db::count(
            pool,
            "SELECT COUNT(*) FROM semantic_memory WHERE is_deleted = 1",
        )
        .await?,
        embedded: db::count(
            pool,
            "SELECT COUNT(*) FROM semantic_memory WHERE is_deleted = 0 AND embedding IS NOT NULL",
        )
        .await?,
        by_prefix: db::count_by_prefix(pool).await?.into_iter().collect(),
    };
    let episodic = EpisodicStats {
        active: db::count(
            pool,
            "SELECT COUNT(*) FROM episodic_memories WHERE is_deleted = 0",
        )
        .await?,
        deleted: db::count(
            pool,
            "SELECT COUNT(*) FROM episodic_memories WHERE is_deleted = 1",
        )
        .await?,
    };
    let events = db::count(pool, "SELECT COUNT(*) FROM memory_events").await?;
    Ok(MemoryStats {
        semantic,
        episodic,
        events,
        db_size_bytes: file_size(db_path) + file_size(&wal_path(db_path)),
        retrieval: if space.model_id.is_some() {
            "hybrid"
        } else {
            "keyword"
        },
        embedding_space: space,
    })
}

fn wal_path(db_path: &Path) -> std::path::PathBuf {
    let mut name = db_path.as_os_str().to_owned();
    name.push("-wal");
    name.into()
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Every active semantic row, sorted by key.
pub async fn export(pool: &SqlitePool, now: String) -> Result<MemoryExport, VectorStoreError> {
    let mut semantic = db::list_semantic(pool, None, None).await?;
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
