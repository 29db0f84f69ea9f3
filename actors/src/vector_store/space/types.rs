//! The embedding space: which model's vectors the store holds, and the
//! generation counter that lets a write made under a superseded model be
//! stored without its vector (spec: "Vector Memory → Thread safety", the
//! space-generation contract; "Dashboard Enable Flow" apply ordering).
//!
//! Rows carry the signature (`<model_id>/<dim>`) of the space their vector
//! was made in; only vectors of the current signature are ever compared
//! with a query. Changing the space bumps the generation and clears every
//! vector of another signature, so the backfill sweep re-embeds them.

use std::sync::Arc;

use serde::Serialize;

use crate::embedder::vector::from_blob;

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
pub(crate) fn stored_vector(
    space: Option<String>,
    blob: Option<&[u8]>,
) -> Option<(String, Vec<f32>)> {
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

/// The text a semantic row is embedded as: `"<key> <value_json>"`.
pub fn semantic_document(key: &str, value_json: &str) -> String {
    format!("{key} {value_json}")
}

/// An embedded query: the vector and the model that made it.
#[derive(Debug, Clone)]
pub(crate) struct EmbeddedQuery {
    /// The vector.
    pub vector: Arc<Vec<f32>>,
    /// The model id.
    pub model_id: String,
}

impl EmbeddedQuery {
    /// The signature of `space` if this query was made by its model (a
    /// vector of another model ranks nothing there).
    pub(crate) fn signature_in(&self, space: &SpaceInfo) -> Option<String> {
        space.signature_for(&self.model_id, self.vector.len())
    }
}

/// What became of a context build's query embedding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryEmbedStatus {
    /// Embedded in time: hybrid retrieval.
    Embedded,
    /// No query text.
    Empty,
    /// No model ready (or embedding failed): keyword retrieval.
    NoModel,
    /// The deadline passed: keyword retrieval for this request; the embed
    /// finishes in the background and lands in the cache.
    DeadlinePassed,
}

/// A query embedded once for one context build, shared by every block.
#[derive(Debug, Clone)]
pub struct QueryEmbedding {
    pub(crate) embedded: Option<EmbeddedQuery>,
    /// How it went.
    pub status: QueryEmbedStatus,
}

impl QueryEmbedding {
    /// No embedding (keyword retrieval), for callers without a query.
    pub fn none() -> Self {
        Self {
            embedded: None,
            status: QueryEmbedStatus::Empty,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
