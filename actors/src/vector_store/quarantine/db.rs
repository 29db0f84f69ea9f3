//! The quarantine table's SQL (`sql/0006_quarantine.sql`).

use sqlx::sqlite::SqliteConnection;
use sqlx::SqlitePool;

use super::types::{Held, QuarantineItem};
use crate::vector_store::error::VectorStoreError;

/// A row to insert.
pub(crate) struct NewItem<'a> {
    pub held: &'a Held,
    pub text: &'a str,
    pub rule: &'a str,
    pub category: Option<&'a str>,
}

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    layer: String,
    key: Option<String>,
    text: String,
    rule: String,
    category: Option<String>,
    source: String,
    created_at: String,
}

impl From<Row> for QuarantineItem {
    fn from(r: Row) -> Self {
        Self {
            id: r.id,
            layer: r.layer,
            key: r.key,
            text: r.text,
            rule: r.rule,
            category: r.category,
            source: r.source,
            created_at: r.created_at,
        }
    }
}

const COLUMNS: &str = "id, layer, key, text, rule, category, source, created_at";

/// Inserts a held write; returns its id.
pub(crate) async fn insert(
    conn: &mut SqliteConnection,
    item: NewItem<'_>,
    now: &str,
) -> Result<i64, VectorStoreError> {
    let payload = serde_json::to_string(item.held)
        .map_err(|e| VectorStoreError::InvalidValue(format!("unstorable write: {e}")))?;
    let id = sqlx::query_scalar(
        "INSERT INTO quarantine (layer, key, text, payload, rule, category, source, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(item.held.layer())
    .bind(item.held.key())
    .bind(item.text)
    .bind(payload)
    .bind(item.rule)
    .bind(item.category)
    .bind(item.held.source())
    .bind(now)
    .fetch_one(conn)
    .await?;
    Ok(id)
}

/// The item already holding this very write (same layer, key and text), so
/// a repeated write (a re-run import, a retried call) is held once.
pub(crate) async fn find_same(
    conn: &mut SqliteConnection,
    held: &Held,
    text: &str,
) -> Result<Option<i64>, VectorStoreError> {
    let id = sqlx::query_scalar(
        "SELECT id FROM quarantine WHERE layer = ? AND key IS ? AND text = ? LIMIT 1",
    )
    .bind(held.layer())
    .bind(held.key())
    .bind(text)
    .fetch_optional(conn)
    .await?;
    Ok(id)
}

/// The oldest items beyond `keep`, removed; returns them.
pub(crate) async fn trim(
    conn: &mut SqliteConnection,
    keep: i64,
) -> Result<Vec<QuarantineItem>, VectorStoreError> {
    let rows: Vec<Row> = sqlx::query_as(&format!(
        "DELETE FROM quarantine WHERE id IN (
             SELECT id FROM quarantine ORDER BY id DESC LIMIT -1 OFFSET ?)
         RETURNING {COLUMNS}"
    ))
    .bind(keep)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(Into::into).collect())
}

/// Items held before `cutoff` (RFC 3339), removed; returns them.
pub(crate) async fn expire(
    conn: &mut SqliteConnection,
    cutoff: &str,
) -> Result<Vec<QuarantineItem>, VectorStoreError> {
    let rows: Vec<Row> = sqlx::query_as(&format!(
        "DELETE FROM quarantine WHERE created_at < ? RETURNING {COLUMNS}"
    ))
    .bind(cutoff)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(Into::into).collect())
}

/// The newest `limit` items, newest first, and how many there are.
pub(crate) async fn list(
    pool: &SqlitePool,
    limit: u32,
) -> Result<(Vec<QuarantineItem>, i64), VectorStoreError> {
    let rows: Vec<Row> = sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM quarantine ORDER BY id DESC LIMIT ?"
    ))
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await?;
    let total = sqlx::query_scalar("SELECT COUNT(*) FROM quarantine")
        .fetch_one(pool)
        .await?;
    Ok((rows.into_iter().map(Into::into).collect(), total))
}

/// A row with the write it holds.
#[derive(sqlx::FromRow)]
struct HeldRow {
    #[sqlx(flatten)]
    row: Row,
    payload: String,
}

/// One item and the write it holds.
pub(crate) async fn get(
    conn: &mut SqliteConnection,
    id: i64,
) -> Result<Option<(QuarantineItem, Held)>, VectorStoreError> {
    let found: Option<HeldRow> = sqlx::query_as(&format!(
        "SELECT {COLUMNS}, payload FROM quarantine WHERE id = ?"
    ))
    .bind(id)
    .fetch_optional(conn)
    .await?;
    let Some(HeldRow { row, payload }) = found else {
        return Ok(None);
    };
    let held: Held = serde_json::from_str(&payload)
        .map_err(|e| VectorStoreError::InvalidValue(format!("quarantine item {id}: {e}")))?;
    Ok(Some((row.into(), held)))
}

/// Deletes one item; whether it existed.
pub(crate) async fn delete(conn: &mut SqliteConnection, id: i64) -> Result<bool, VectorStoreError> {
    let done = sqlx::query("DELETE FROM quarantine WHERE id = ?")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Items whose text holds some of `words` (case-insensitive), most words
/// first, then newest: what a search marks as held for review.
pub(crate) async fn matching(
    pool: &SqlitePool,
    words: &[String],
    limit: u32,
) -> Result<Vec<QuarantineItem>, VectorStoreError> {
    if words.is_empty() {
        return Ok(Vec::new());
    }
    let score = vec!["(instr(lower(text), ?) > 0)"; words.len()].join(" + ");
    let sql = format!(
        "SELECT {COLUMNS} FROM (SELECT *, {score} AS hits FROM quarantine)
         WHERE hits > 0 ORDER BY hits DESC, id DESC LIMIT ?"
    );
    let mut query = sqlx::query_as::<_, Row>(&sql);
    for w in words {
        query = query.bind(w.to_lowercase());
    }
    let rows = query.bind(i64::from(limit)).fetch_all(pool).await?;
    Ok(rows.into_iter().map(Into::into).collect())
}
