//! The semantic rows' SQL (`semantic_memory`): fetch, upsert, tombstone,
//! list, and the change feed that keeps the ranking mirror current.

use serde_json::Value;
use sqlx::sqlite::{SqliteConnection, SqlitePool};

use super::mirror::ChangedRow;
use super::types::SemanticEntry;
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::space::types::stored_vector;

#[derive(sqlx::FromRow)]
struct SemanticRow {
    key: String,
    value: String,
    confidence: f64,
    source: String,
    created_at: String,
    updated_at: String,
}

impl From<SemanticRow> for SemanticEntry {
    fn from(row: SemanticRow) -> Self {
        // Stored values are canonical JSON written by us; should a row have
        // been edited by hand into invalid JSON, show its text rather than fail.
        let value = serde_json::from_str(&row.value).unwrap_or(Value::String(row.value));
        SemanticEntry {
            key: row.key,
            value,
            confidence: row.confidence,
            source: row.source,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

const SEMANTIC_COLUMNS: &str = "key, value, confidence, source, created_at, updated_at";

/// The active (not tombstoned) row for `key`.
pub(crate) async fn fetch_active_semantic(
    conn: &mut SqliteConnection,
    key: &str,
) -> Result<Option<SemanticEntry>, VectorStoreError> {
    let row: Option<SemanticRow> = sqlx::query_as(&format!(
        "SELECT {SEMANTIC_COLUMNS} FROM semantic_memory WHERE key = ? AND is_deleted = 0"
    ))
    .bind(key)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(Into::into))
}

/// The active row's stored vector and its space signature, if it has one.
pub(crate) async fn fetch_semantic_vector(
    conn: &mut SqliteConnection,
    key: &str,
) -> Result<Option<(String, Vec<f32>)>, VectorStoreError> {
    let row: Option<(Option<Vec<u8>>, Option<String>)> = sqlx::query_as(
        "SELECT embedding, embedding_space FROM semantic_memory WHERE key = ? AND is_deleted = 0",
    )
    .bind(key)
    .fetch_optional(conn)
    .await?;
    Ok(row.and_then(|(blob, space)| stored_vector(space, blob.as_deref())))
}

/// Inserts or replaces the row for `key` and returns it as stored.
///
/// A tombstoned row is revived with a fresh `created_at`. The stored vector
/// survives only a re-affirmation of the same value; a changed value clears
/// it so a row never ranks by a vector for text it no longer holds.
pub(crate) async fn upsert_semantic(
    conn: &mut SqliteConnection,
    key: &str,
    value_json: &str,
    confidence: f64,
    source: &str,
    now: &str,
) -> Result<SemanticEntry, VectorStoreError> {
    let row: SemanticRow = sqlx::query_as(&format!(
        "INSERT INTO semantic_memory (key, value, confidence, source, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?5)
         ON CONFLICT (key) DO UPDATE SET
             created_at = CASE WHEN semantic_memory.is_deleted = 1
                               THEN excluded.created_at ELSE semantic_memory.created_at END,
             embedding = CASE WHEN semantic_memory.is_deleted = 0
                                   AND semantic_memory.value = excluded.value
                              THEN semantic_memory.embedding ELSE NULL END,
             embedding_space = CASE WHEN semantic_memory.is_deleted = 0
                                         AND semantic_memory.value = excluded.value
                                    THEN semantic_memory.embedding_space ELSE NULL END,
             value = excluded.value,
             confidence = excluded.confidence,
             source = excluded.source,
             updated_at = excluded.updated_at,
             is_deleted = 0
         RETURNING {SEMANTIC_COLUMNS}"
    ))
    .bind(key)
    .bind(value_json)
    .bind(confidence)
    .bind(source)
    .bind(now)
    .fetch_one(conn)
    .await?;
    Ok(row.into())
}

/// Tombstones the active row for `key`; the row stays, hidden from reads.
pub(crate) async fn tombstone_semantic(
    conn: &mut SqliteConnection,
    key: &str,
    now: &str,
) -> Result<(), VectorStoreError> {
    sqlx::query(
        "UPDATE semantic_memory SET is_deleted = 1, updated_at = ? WHERE key = ? AND is_deleted = 0",
    )
    .bind(now)
    .bind(key)
    .execute(conn)
    .await?;
    Ok(())
}

/// Active rows, newest first, optionally under one key prefix.
pub(crate) async fn list_semantic(
    pool: &SqlitePool,
    prefix: Option<&str>,
    limit: Option<u32>,
) -> Result<Vec<SemanticEntry>, VectorStoreError> {
    // LIKE would treat '_' in a prefix as a wildcard; substr compares exactly.
    let rows: Vec<SemanticRow> = sqlx::query_as(&format!(
        "SELECT {SEMANTIC_COLUMNS} FROM semantic_memory
         WHERE is_deleted = 0 AND (?1 IS NULL OR substr(key, 1, length(?1)) = ?1)
         ORDER BY updated_at DESC, rowid DESC
         LIMIT ?2"
    ))
    .bind(prefix)
    .bind(limit.map_or(-1, i64::from))
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(Into::into).collect())
}

/// Rows (tombstones included) changed after change sequence `since`.
pub(crate) async fn fetch_changed_semantic(
    pool: &SqlitePool,
    since: i64,
) -> Result<Vec<ChangedRow>, VectorStoreError> {
    #[derive(sqlx::FromRow)]
    struct Changed {
        #[sqlx(flatten)]
        row: SemanticRow,
        seq: i64,
        is_deleted: bool,
        embedding: Option<Vec<u8>>,
        embedding_space: Option<String>,
    }
    let rows: Vec<Changed> = sqlx::query_as(&format!(
        "SELECT {SEMANTIC_COLUMNS}, seq, is_deleted, embedding, embedding_space
         FROM semantic_memory WHERE seq > ?"
    ))
    .bind(since)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|c| ChangedRow {
            entry: c.row.into(),
            seq: c.seq,
            is_deleted: c.is_deleted,
            vector: stored_vector(c.embedding_space, c.embedding.as_deref()),
        })
        .collect())
}
