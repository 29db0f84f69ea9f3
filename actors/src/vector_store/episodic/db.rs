//! SQL for episodic rows.

use chrono::{DateTime, Utc};
use sqlx::sqlite::{SqliteConnection, SqlitePool};

use super::mirror::ChangedEpisode;
use super::types::EpisodicEntry;
use crate::embedder::vector::to_blob;
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::space::types::stored_vector;

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    text: String,
    tags: String,
    importance: f64,
    created_at: String,
}

impl From<Row> for EpisodicEntry {
    fn from(r: Row) -> Self {
        EpisodicEntry {
            id: r.id,
            text: r.text,
            tags: serde_json::from_str(&r.tags).unwrap_or_default(),
            importance: r.importance,
            created_at: r.created_at,
        }
    }
}

/// Rows changed after `since` (tombstones included).
pub(crate) async fn fetch_changed(
    pool: &SqlitePool,
    since: i64,
) -> Result<Vec<ChangedEpisode>, VectorStoreError> {
    #[derive(sqlx::FromRow)]
    struct Changed {
        #[sqlx(flatten)]
        row: Row,
        seq: i64,
        is_deleted: bool,
        embedding: Option<Vec<u8>>,
        embedding_space: Option<String>,
    }
    let rows: Vec<Changed> = sqlx::query_as(
        "SELECT id, text, tags, importance, created_at, seq, is_deleted, embedding, embedding_space
         FROM episodic_memories WHERE seq > ?",
    )
    .bind(since)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|c| {
            let created = DateTime::parse_from_rfc3339(&c.row.created_at)
                .map(|d| d.with_timezone(&Utc))
                .unwrap_or_default();
            ChangedEpisode {
                entry: c.row.into(),
                created,
                seq: c.seq,
                is_deleted: c.is_deleted,
                vector: stored_vector(c.embedding_space, c.embedding.as_deref()),
            }
        })
        .collect())
}

/// The active row with this content hash.
/// A tombstoned row's text and content hash (`None` when the id is not a
/// tombstoned row).
pub(crate) async fn tombstoned(
    conn: &mut SqliteConnection,
    id: i64,
) -> Result<Option<(String, String)>, VectorStoreError> {
    Ok(sqlx::query_as(
        "SELECT text, content_hash FROM episodic_memories WHERE id = ? AND is_deleted = 1",
    )
    .bind(id)
    .fetch_optional(conn)
    .await?)
}

/// Clears a row's tombstone (the change feed then hands it back to the
/// mirror and the vector index).
pub(crate) async fn untombstone(
    conn: &mut SqliteConnection,
    id: i64,
) -> Result<(), VectorStoreError> {
    sqlx::query("UPDATE episodic_memories SET is_deleted = 0 WHERE id = ? AND is_deleted = 1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

pub(crate) async fn active_by_hash(
    conn: &mut SqliteConnection,
    hash: &str,
) -> Result<Option<i64>, VectorStoreError> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM episodic_memories WHERE content_hash = ? AND is_deleted = 0 LIMIT 1",
    )
    .bind(hash)
    .fetch_optional(conn)
    .await?)
}

/// Whether any row, active or tombstoned, has this content hash.
pub(crate) async fn any_by_hash(pool: &SqlitePool, hash: &str) -> Result<bool, VectorStoreError> {
    let found: Option<i64> =
        sqlx::query_scalar("SELECT id FROM episodic_memories WHERE content_hash = ? LIMIT 1")
            .bind(hash)
            .fetch_optional(pool)
            .await?;
    Ok(found.is_some())
}

/// Active rows.
pub(crate) async fn count_active(conn: &mut SqliteConnection) -> Result<u64, VectorStoreError> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM episodic_memories WHERE is_deleted = 0")
        .fetch_one(conn)
        .await?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Tombstones the `n` least important, oldest active rows; returns their
/// ids and texts (for the `evict` audit events).
pub(crate) async fn evict(
    conn: &mut SqliteConnection,
    n: u64,
) -> Result<Vec<(i64, String)>, VectorStoreError> {
    Ok(sqlx::query_as(
        "UPDATE episodic_memories SET is_deleted = 1 WHERE id IN (
             SELECT id FROM episodic_memories WHERE is_deleted = 0
             ORDER BY importance ASC, created_at ASC, id ASC LIMIT ?)
         RETURNING id, text",
    )
    .bind(i64::try_from(n).unwrap_or(i64::MAX))
    .fetch_all(conn)
    .await?)
}

/// What an insert stores.
pub(crate) struct NewEpisode<'a> {
    /// Text.
    pub text: &'a str,
    /// Tags as JSON.
    pub tags_json: &'a str,
    /// Importance.
    pub importance: f64,
    /// Content hash.
    pub hash: &'a str,
    /// Source.
    pub source: &'a str,
    /// Creation time.
    pub created_at: &'a str,
    /// Vector and signature, if it belongs to the current space.
    pub vector: Option<(&'a [f32], &'a str)>,
}

/// Inserts a row; returns its id.
pub(crate) async fn insert(
    conn: &mut SqliteConnection,
    row: NewEpisode<'_>,
) -> Result<i64, VectorStoreError> {
    Ok(sqlx::query_scalar(
        "INSERT INTO episodic_memories
             (text, tags, importance, content_hash, source, created_at, embedding, embedding_space)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(row.text)
    .bind(row.tags_json)
    .bind(row.importance)
    .bind(row.hash)
    .bind(row.source)
    .bind(row.created_at)
    .bind(row.vector.map(|(v, _)| to_blob(v)))
    .bind(row.vector.map(|(_, s)| s))
    .fetch_one(conn)
    .await?)
}

/// Tombstones one row inside the caller's transaction; false if it was
/// not active.
pub(crate) async fn tombstone_in(
    conn: &mut SqliteConnection,
    id: i64,
) -> Result<bool, VectorStoreError> {
    let done =
        sqlx::query("UPDATE episodic_memories SET is_deleted = 1 WHERE id = ? AND is_deleted = 0")
            .bind(id)
            .execute(conn)
            .await?
            .rows_affected();
    Ok(done > 0)
}

/// Tombstones one row; returns its text, or `None` if it was not active.
pub(crate) async fn tombstone(
    conn: &mut SqliteConnection,
    id: i64,
) -> Result<Option<String>, VectorStoreError> {
    Ok(sqlx::query_scalar(
        "UPDATE episodic_memories SET is_deleted = 1 WHERE id = ? AND is_deleted = 0
         RETURNING text",
    )
    .bind(id)
    .fetch_optional(conn)
    .await?)
}

/// An active row whose text contains `needle` (case-insensitive), with its
/// stored vector: the candidates a superseded semantic value is checked
/// against (`semantic/retire.rs` decides).
pub(crate) struct QuotingRow {
    /// Row id.
    pub id: i64,
    /// The fragment text.
    pub text: String,
    /// Its stored vector and space signature, if it has one.
    pub vector: Option<(String, Vec<f32>)>,
}

/// `(id, text, embedding, embedding_space)` as SQLite returns them.
type QuotingRowRaw = (i64, String, Option<Vec<u8>>, Option<String>);

/// Active rows whose text contains `needle` anywhere (the caller checks
/// word boundaries and subject).
pub(crate) async fn rows_containing(
    conn: &mut SqliteConnection,
    needle: &str,
) -> Result<Vec<QuotingRow>, VectorStoreError> {
    let rows: Vec<QuotingRowRaw> = sqlx::query_as(
        "SELECT id, text, embedding, embedding_space FROM episodic_memories
         WHERE is_deleted = 0 AND instr(lower(text), lower(?)) > 0",
    )
    .bind(needle.trim())
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, text, blob, space)| QuotingRow {
            id,
            text,
            vector: stored_vector(space, blob.as_deref()),
        })
        .collect())
}

/// A page of active rows, newest first, and the active total.
pub(crate) async fn page(
    pool: &SqlitePool,
    offset: u32,
    limit: u32,
) -> Result<(Vec<EpisodicEntry>, i64), VectorStoreError> {
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT id, text, tags, importance, created_at FROM episodic_memories
         WHERE is_deleted = 0 ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
    )
    .bind(i64::from(limit))
    .bind(i64::from(offset))
    .fetch_all(pool)
    .await?;
    let total: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM episodic_memories WHERE is_deleted = 0")
            .fetch_one(pool)
            .await?;
    Ok((rows.into_iter().map(Into::into).collect(), total))
}

/// Records that rows were returned by a search.
pub(crate) async fn touch(
    pool: &SqlitePool,
    ids: &[i64],
    now: &str,
) -> Result<(), VectorStoreError> {
    // One statement (one transaction, one connection) for all the hits.
    let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
    let ids = format!("[{}]", ids.join(","));
    sqlx::query(
        "UPDATE episodic_memories SET last_accessed = ?
         WHERE id IN (SELECT value FROM json_each(?))",
    )
    .bind(now)
    .bind(ids)
    .execute(pool)
    .await?;
    Ok(())
}

/// Active rows without a vector: (id, text).
pub(crate) async fn missing_vectors(
    pool: &SqlitePool,
    limit: u32,
) -> Result<Vec<(i64, String)>, VectorStoreError> {
    Ok(sqlx::query_as(
        "SELECT id, text FROM episodic_memories WHERE is_deleted = 0 AND embedding IS NULL
         ORDER BY id LIMIT ?",
    )
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await?)
}

/// Stores a backfilled vector if the row still has this text and no vector.
pub(crate) async fn store_vector(
    conn: &mut SqliteConnection,
    id: i64,
    text: &str,
    vector: &[f32],
    signature: &str,
) -> Result<bool, VectorStoreError> {
    let done = sqlx::query(
        "UPDATE episodic_memories SET embedding = ?, embedding_space = ?
         WHERE id = ? AND text = ? AND is_deleted = 0 AND embedding IS NULL",
    )
    .bind(to_blob(vector))
    .bind(signature)
    .bind(id)
    .bind(text)
    .execute(conn)
    .await?
    .rows_affected();
    Ok(done > 0)
}
