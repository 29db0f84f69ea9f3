//! Counts and sizes over the whole store (`/api/memory/stats`,
//! `kirocrew memory stats`).

use std::path::Path;

use sqlx::sqlite::SqlitePool;

use serde::Serialize;

use super::db;
use super::error::VectorStoreError;
use super::space::types::SpaceInfo;

/// Counts for `/api/memory/stats` and `kirocrew memory stats`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryStats {
    /// Semantic rows.
    pub semantic: SemanticStats,
    /// Episodic rows.
    pub episodic: EpisodicStats,
    /// Rows in the audit trail.
    pub events: i64,
    /// memory.db size on disk (main file plus WAL).
    pub db_size_bytes: u64,
    /// `hybrid` once an embedding space is recorded, else `keyword`.
    pub retrieval: &'static str,
    /// The recorded embedding space.
    pub embedding_space: SpaceInfo,
}

/// Semantic counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SemanticStats {
    /// Active (not tombstoned) rows.
    pub active: i64,
    /// Tombstoned rows.
    pub deleted: i64,
    /// Active rows that carry a vector.
    pub embedded: i64,
    /// Active rows per key prefix (`pref`, `project`, …).
    pub by_prefix: std::collections::BTreeMap<String, i64>,
}

/// Episodic counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EpisodicStats {
    /// Active rows.
    pub active: i64,
    /// Tombstoned rows.
    pub deleted: i64,
}

/// Counts and sizes for the stats endpoint.
/// `hybrid` once a model's space is recorded (rows then rank by cosine and
/// keywords), else `keyword`.
pub(super) async fn stats(
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
