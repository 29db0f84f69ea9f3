//! The embedding space: which model's vectors the store holds, and the
//! generation counter that lets a write made under a superseded model be
//! stored without its vector (spec: "Vector Memory → Thread safety", the
//! space-generation contract; "Dashboard Enable Flow" apply ordering).
//!
//! Rows carry the signature (`<model_id>/<dim>`) of the space their vector
//! was made in; only vectors of the current signature are ever compared
//! with a query. Changing the space bumps the generation and clears every
//! vector of another signature, so the backfill sweep re-embeds them.

use serde::Serialize;
use sqlx::sqlite::{SqliteConnection, SqlitePool};

use super::error::VectorStoreError;
use crate::embedder::vector::{from_blob, to_blob};

/// The active embedding space.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SpaceInfo {
    /// The model whose vectors are stored, if any yet.
    pub model_id: Option<String>,
    /// Their dimension.
    pub dim: Option<usize>,
    /// Bumped on every change of model or dimension.
    pub generation: i64,
}

impl SpaceInfo {
    /// The signature rows carry, or `None` before any model was recorded.
    pub fn signature(&self) -> Option<String> {
        match (&self.model_id, self.dim) {
            (Some(model), Some(dim)) => Some(signature(model, dim)),
            _ => None,
        }
    }

    /// The signature, if a vector of `dim` made by `model_id` belongs to
    /// this space (only such vectors are compared or stored).
    pub fn signature_for(&self, model_id: &str, dim: usize) -> Option<String> {
        (self.model_id.as_deref() == Some(model_id) && self.dim == Some(dim))
            .then(|| signature(model_id, dim))
    }
}

/// A stored vector with the signature of its space, if both are present
/// and the BLOB decodes.
pub fn stored_vector(space: Option<String>, blob: Option<&[u8]>) -> Option<(String, Vec<f32>)> {
    Some((space?, from_blob(blob?)?))
}

/// `<model_id>/<dim>`.
pub fn signature(model_id: &str, dim: usize) -> String {
    format!("{model_id}/{dim}")
}

/// Background re-embed progress, for the embedding-status endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReembedStatus {
    /// `idle`, `applying`, `running`, `done` or `failed`.
    pub step: &'static str,
    /// Rows embedded so far.
    pub done: u64,
    /// Rows that needed a vector when the sweep started.
    pub total: u64,
    /// Why it failed.
    pub error: Option<String>,
}

impl Default for ReembedStatus {
    fn default() -> Self {
        Self {
            step: "idle",
            done: 0,
            total: 0,
            error: None,
        }
    }
}

impl ReembedStatus {
    /// Whether a sweep or an apply holds the single-flight slot.
    pub fn is_busy(&self) -> bool {
        matches!(self.step, "applying" | "running")
    }
}

/// A vector ready to be committed with the generation it was made in.
#[derive(Debug, Clone)]
pub struct CommitVector {
    /// The vector.
    pub vector: std::sync::Arc<Vec<f32>>,
    /// The model that made it.
    pub model_id: String,
    /// The space generation sampled before embedding.
    pub generation: i64,
}

impl CommitVector {
    /// The signature to store, if this vector belongs to `space`.
    pub fn signature_in(&self, space: &SpaceInfo) -> Option<String> {
        if self.generation != space.generation {
            return None;
        }
        space.signature_for(&self.model_id, self.vector.len())
    }
}

/// Reads the recorded space.
pub async fn load_space(pool: &SqlitePool) -> Result<SpaceInfo, VectorStoreError> {
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
pub async fn change_space(
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
pub async fn store_semantic_vector(
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
pub async fn semantic_missing_vectors(
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

/// How many rows (semantic and episodic) need a vector.
pub async fn count_semantic_missing(pool: &SqlitePool) -> Result<u64, VectorStoreError> {
    let n: i64 = sqlx::query_scalar(
        "SELECT (SELECT COUNT(*) FROM semantic_memory
                 WHERE is_deleted = 0 AND embedding IS NULL AND substr(key, 1, 7) != 'lesson.')
              + (SELECT COUNT(*) FROM episodic_memories WHERE is_deleted = 0 AND embedding IS NULL)",
    )
    .fetch_one(pool)
    .await?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// The text a semantic row is embedded as: `"<key> <value_json>"`.
pub fn semantic_document(key: &str, value_json: &str) -> String {
    format!("{key} {value_json}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn vectors_commit_only_into_their_own_space() {
        let space = SpaceInfo {
            model_id: Some("m".into()),
            dim: Some(2),
            generation: 3,
        };
        let v = |model: &str, generation, dim| CommitVector {
            vector: Arc::new(vec![0.5; dim]),
            model_id: model.into(),
            generation,
        };
        assert_eq!(v("m", 3, 2).signature_in(&space).as_deref(), Some("m/2"));
        assert_eq!(
            v("m", 2, 2).signature_in(&space),
            None,
            "superseded generation"
        );
        assert_eq!(v("x", 3, 2).signature_in(&space), None, "other model");
        assert_eq!(v("m", 3, 3).signature_in(&space), None, "other dimension");
        assert_eq!(SpaceInfo::default().signature(), None);
    }
}
