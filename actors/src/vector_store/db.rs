//! memory.db access: opening, migrations, and the SQL each operation needs.
//!
//! These functions are the only place SQL text lives. They take a pool or a
//! connection and never hold state, so the actor decides ordering and
//! atomicity (one `BEGIN IMMEDIATE` transaction per read-modify-write; the
//! IMMEDIATE lock also orders us against a one-shot CLI process writing the
//! same file).

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};

use super::error::VectorStoreError;
use super::mirror::ChangedRow;
use super::space::stored_vector;
use super::types::{MemoryEvent, SemanticEntry};

/// The schema migrations in `sql/`, embedded at compile time.
pub static MIGRATOR: Migrator = sqlx::migrate!("../sql");

/// How long a statement waits for another process's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens (creating if needed) memory.db in WAL mode and applies migrations.
pub async fn open_pool(path: &Path) -> Result<SqlitePool, VectorStoreError> {
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(BUSY_TIMEOUT)
        .foreign_keys(true)
        // Reads (FTS5 postings, vector BLOBs) are served from memory
        // instead of a pread syscall per page: 16 MiB page cache per
        // connection and the file memory-mapped (WAL-safe; 256 MiB bounds
        // the mapping, not the memory used).
        .pragma("cache_size", "-16384")
        .pragma("mmap_size", "268435456");
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .min_connections(1)
        .connect_with(options)
        .await?;
    MIGRATOR.run(&pool).await?;
    Ok(pool)
}

/// Checkpoints the WAL into the main file and closes every connection, so a
/// stopped daemon leaves a self-contained memory.db behind.
pub async fn close_pool(pool: &SqlitePool) -> Result<(), VectorStoreError> {
    sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
        .execute(pool)
        .await?;
    pool.close().await;
    Ok(())
}

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
pub async fn fetch_active_semantic(
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

/// Inserts or replaces the row for `key` and returns it as stored.
///
/// A tombstoned row is revived with a fresh `created_at`. The stored vector
/// survives only a re-affirmation of the same value; a changed value clears
/// it so a row never ranks by a vector for text it no longer holds.
pub async fn upsert_semantic(
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
pub async fn tombstone_semantic(
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
pub async fn list_semantic(
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
pub async fn fetch_changed_semantic(
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

/// What a new audit event records.
#[derive(Debug, Clone, Copy)]
pub struct NewEvent<'a> {
    /// `create`, `update`, `delete`, `conflict_skip`, `injection_blocked`, …
    pub event_type: &'a str,
    /// `semantic`, `episodic`, …
    pub memory_type: &'a str,
    /// The key concerned.
    pub key: &'a str,
    /// Value before.
    pub old_value: Option<&'a str>,
    /// Value after (or a redacted snippet).
    pub new_value: Option<&'a str>,
    /// Writer's source.
    pub source: &'a str,
}

/// Appends an audit event and drops the oldest beyond `max_events`.
pub async fn record_event(
    conn: &mut SqliteConnection,
    event: NewEvent<'_>,
    now: &str,
    max_events: u32,
) -> Result<(), VectorStoreError> {
    let id = sqlx::query(
        "INSERT INTO memory_events (event_type, memory_type, key, old_value, new_value, source, ts)
         VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(event.event_type)
    .bind(event.memory_type)
    .bind(event.key)
    .bind(event.old_value)
    .bind(event.new_value)
    .bind(event.source)
    .bind(now)
    .execute(&mut *conn)
    .await?
    .last_insert_rowid();
    // Ids are AUTOINCREMENT (never reused), so this keeps exactly the newest
    // `max_events` rows.
    sqlx::query("DELETE FROM memory_events WHERE id <= ?")
        .bind(id - i64::from(max_events))
        .execute(conn)
        .await?;
    Ok(())
}

#[derive(sqlx::FromRow)]
struct EventRow {
    id: i64,
    event_type: String,
    memory_type: String,
    key: String,
    old_value: Option<String>,
    new_value: Option<String>,
    source: String,
    ts: String,
}

/// The newest `limit` events, newest first.
pub async fn list_events(
    pool: &SqlitePool,
    limit: u32,
) -> Result<Vec<MemoryEvent>, VectorStoreError> {
    let rows: Vec<EventRow> = sqlx::query_as(
        "SELECT id, event_type, memory_type, key, old_value, new_value, source, ts
         FROM memory_events ORDER BY id DESC LIMIT ?",
    )
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| MemoryEvent {
            id: r.id,
            event_type: r.event_type,
            memory_type: r.memory_type,
            key: r.key,
            old_value: r.old_value,
            new_value: r.new_value,
            source: r.source,
            ts: r.ts,
        })
        .collect())
}

/// Scalar counts for the stats report.
pub async fn count(pool: &SqlitePool, sql: &str) -> Result<i64, VectorStoreError> {
    Ok(sqlx::query_scalar(sql).fetch_one(pool).await?)
}

/// Active semantic rows per prefix (the text before the first dot).
pub async fn count_by_prefix(pool: &SqlitePool) -> Result<Vec<(String, i64)>, VectorStoreError> {
    Ok(sqlx::query_as(
        "SELECT substr(key, 1, instr(key, '.') - 1) AS prefix, COUNT(*)
         FROM semantic_memory WHERE is_deleted = 0 GROUP BY prefix ORDER BY prefix",
    )
    .fetch_all(pool)
    .await?)
}

/// A cheap liveness probe of the connection pool.
pub async fn ping(pool: &SqlitePool) -> Result<(), VectorStoreError> {
    sqlx::query("SELECT 1").execute(pool).await?;
    Ok(())
}
