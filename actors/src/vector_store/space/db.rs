//! The embedding space's SQL: the recorded space (`embedding_space`), the
//! space change that clears foreign vectors, and the semantic rows' vector
//! columns (backfill). Episodic vectors are stored by `episodic/db.rs`.

use sqlx::sqlite::{SqliteConnection, SqlitePool};

use super::types::{signature, SpaceInfo};
use crate::embedder::vector::to_blob;
use crate::vector_store::error::VectorStoreError;

/// Reads the recorded space.
pub(crate) async fn load_space(pool: &SqlitePool) -> Result<SpaceInfo, VectorStoreError> {
    let (model_id, dim, generation): (Option<String>, Option<i64>, i64) =
        sqlx::query_as("SELECT model_id, dim, generation FROM embedding_space WHERE id = 1")
            .fetch_one(pool)
            .await?;
    Ok(SpaceInfo {
        model_id,
        dim: dim.and_then(|d| usize::try_from(d).ok()),
        generation,
    })
}

/// Records `model_id`/`dim` as the space. If it differs from the stored
/// one, bumps the generation and clears every vector of another signature.
/// Returns the space and how many vectors were cleared.
pub(crate) async fn change_space(
    pool: &SqlitePool,
    model_id: &str,
    dim: usize,
) -> Result<(SpaceInfo, u64), VectorStoreError> {
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    let (old_model, old_dim, generation): (Option<String>, Option<i64>, i64) =
        sqlx::query_as("SELECT model_id, dim, generation FROM embedding_space WHERE id = 1")
            .fetch_one(&mut *tx)
            .await?;
    let dim_i = i64::try_from(dim).unwrap_or(i64::MAX);
    if old_model.as_deref() == Some(model_id) && old_dim == Some(dim_i) {
        tx.commit().await?;
        return Ok((
            SpaceInfo {
                model_id: Some(model_id.to_owned()),
                dim: Some(dim),
                generation,
            },
            0,
        ));
    }
    let generation = generation + 1;
    sqlx::query("UPDATE embedding_space SET model_id = ?, dim = ?, generation = ? WHERE id = 1")
        .bind(model_id)
        .bind(dim_i)
        .bind(generation)
        .execute(&mut *tx)
        .await?;
    let sig = signature(model_id, dim);
    let mut cleared = 0;
    for table in ["semantic_memory", "episodic_memories"] {
        cleared += sqlx::query(&format!(
            "UPDATE {table} SET embedding = NULL, embedding_space = NULL
             WHERE embedding IS NOT NULL AND (embedding_space IS NULL OR embedding_space != ?)"
        ))
        .bind(&sig)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    }
    tx.commit().await?;
    Ok((
        SpaceInfo {
            model_id: Some(model_id.to_owned()),
            dim: Some(dim),
            generation,
        },
        cleared,
    ))
}

/// Stores a semantic vector if the row still holds `value_json` and has no
/// vector (a changed value means the vector describes stale text).
pub(crate) async fn store_semantic_vector(
    conn: &mut SqliteConnection,
    key: &str,
    value_json: &str,
    vector: &[f32],
    signature: &str,
) -> Result<bool, VectorStoreError> {
    let done = sqlx::query(
        "UPDATE semantic_memory SET embedding = ?, embedding_space = ?
         WHERE key = ? AND value = ? AND is_deleted = 0 AND embedding IS NULL",
    )
    .bind(to_blob(vector))
    .bind(signature)
    .bind(key)
    .bind(value_json)
    .execute(conn)
    .await?
    .rows_affected();
    Ok(done > 0)
}

/// Semantic rows that need a vector (lessons excluded: their vector is
/// made from the rule text by the lesson writer).
pub(crate) async fn semantic_missing_vectors(
    pool: &SqlitePool,
    limit: u32,
) -> Result<Vec<(String, String)>, VectorStoreError> {
    Ok(sqlx::query_as(
        "SELECT key, value FROM semantic_memory
         WHERE is_deleted = 0 AND embedding IS NULL AND substr(key, 1, 7) != 'lesson.'
         ORDER BY updated_at DESC LIMIT ?",
    )
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await?)
}

/// How many rows need a vector: semantic rows (lessons included: the sweep
/// embeds them from their rule text) and episodic fragments.
pub(crate) async fn count_semantic_missing(pool: &SqlitePool) -> Result<u64, VectorStoreError> {
    let n: i64 = sqlx::query_scalar(
        "SELECT (SELECT COUNT(*) FROM semantic_memory WHERE is_deleted = 0 AND embedding IS NULL)
              + (SELECT COUNT(*) FROM episodic_memories WHERE is_deleted = 0 AND embedding IS NULL)",
    )
    .fetch_one(pool)
    .await?;
    Ok(u64::try_from(n).unwrap_or(0))
}
