//! Embedding-space methods of [`VectorStoreHandle`], and the one place a
//! vector is made for the store.
//!
//! The space-generation contract (spec: "Vector Memory → Thread safety"):
//! a writer samples the space generation, embeds *outside* the store's
//! critical section, and sends the vector tagged with model and generation;
//! the store keeps it only if the generation is still current. Every writer
//! (semantic, episodic, lessons, the backfill sweep) goes through
//! [`VectorStoreHandle::embed_for_commit`], so that sequence exists once.

use std::time::Duration;

use super::messages::{
    BeginReembed, CountMissingVectors, GetReembedStatus, GetSpace, ListMissingVectors,
    ReconcileSpace, RecordReembed, StoreVectors,
};
use super::types::{
    CommitVector, EmbeddedQuery, QueryEmbedStatus, QueryEmbedding, ReembedStatus, SpaceInfo,
};
use crate::embedder::EmbedKind;
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::handle::VectorStoreHandle;

impl VectorStoreHandle {
    /// Embeds `texts` as documents for a commit: samples the space
    /// generation, embeds outside the store, and tags every vector with the
    /// model and that generation. Fails as `Unavailable` without an attached
    /// embedder or when the model cannot embed now.
    pub(crate) async fn embed_for_commit(
        &self,
        texts: Vec<String>,
    ) -> Result<Vec<CommitVector>, VectorStoreError> {
        let embedder = self.embedder().ok_or_else(|| {
            VectorStoreError::Unavailable("no embedding model is attached".into())
        })?;
        let generation = self.ask(GetSpace).await?.generation;
        let embedded = embedder
            .embed_texts(texts, EmbedKind::Document)
            .await
            .map_err(|e| VectorStoreError::Unavailable(format!("embedding failed: {e}")))?;
        let model_id = embedded.model_id;
        Ok(embedded
            .vectors
            .into_iter()
            .map(|vector| CommitVector {
                vector,
                model_id: model_id.clone(),
                generation,
            })
            .collect())
    }

    /// One document's vector for a write, or `None` when none can be made
    /// now (no model, not ready, cooling down): the row is then stored
    /// without one and the backfill sweep embeds it later.
    pub(crate) async fn commit_vector(&self, text: &str) -> Option<CommitVector> {
        self.embedder()?;
        match self.embed_for_commit(vec![text.to_owned()]).await {
            Ok(mut vectors) => vectors.pop(),
            Err(e) => {
                tracing::debug!(error = %e, "no vector now; the backfill sweep adds it");
                None
            }
        }
    }

    /// The query's embedding, or `None` for an empty query or without a
    /// ready model (the caller ranks by keywords alone).
    pub(crate) async fn embed_query(&self, query: &str) -> Option<EmbeddedQuery> {
        let embedder = self.embedder()?;
        if query.trim().is_empty() {
            return None;
        }
        match embedder.embed(query, EmbedKind::Query).await {
            Ok((model_id, vector)) => Some(EmbeddedQuery { vector, model_id }),
            Err(e) => {
                tracing::debug!(error = %e, "embedding unavailable; keyword only");
                None
            }
        }
    }

    /// Embeds `query` once for a context build, waiting at most `deadline`.
    /// Past it the build goes on with keywords; the embed still finishes in
    /// the background and lands in the embedder's cache, so the next build
    /// with the same text is hybrid.
    pub async fn embed_query_within(&self, query: &str, deadline: Duration) -> QueryEmbedding {
        if query.trim().is_empty() {
            return QueryEmbedding::none();
        }
        if self.embedder().is_none() {
            return QueryEmbedding {
                embedded: None,
                status: QueryEmbedStatus::NoModel,
            };
        }
        let this = self.clone();
        let text = query.to_owned();
        // A local task: handles live on actix's single-threaded arbiters.
        let task = actix::spawn(async move { this.embed_query(&text).await });
        match tokio::time::timeout(deadline, task).await {
            Ok(Ok(Some(embedded))) => QueryEmbedding {
                embedded: Some(embedded),
                status: QueryEmbedStatus::Embedded,
            },
            Ok(_) => QueryEmbedding {
                embedded: None,
                status: QueryEmbedStatus::NoModel,
            },
            Err(_) => QueryEmbedding {
                embedded: None,
                status: QueryEmbedStatus::DeadlinePassed,
            },
        }
    }

    /// The active embedding space.
    pub async fn space(&self) -> Result<SpaceInfo, VectorStoreError> {
        self.ask(GetSpace).await
    }

    /// Records the serving model as the space (bumping the generation and clearing
    /// foreign vectors if it changed); returns the space and the vectors cleared.
    pub async fn reconcile_space(
        &self,
        model_id: &str,
        dim: usize,
    ) -> Result<(SpaceInfo, u64), VectorStoreError> {
        self.ask(ReconcileSpace {
            model_id: model_id.to_owned(),
            dim,
        })
        .await
    }

    /// Re-embed progress.
    pub async fn reembed_status(&self) -> Result<ReembedStatus, VectorStoreError> {
        self.ask(GetReembedStatus).await
    }

    /// Claims the single-flight re-embed slot.
    pub async fn begin_reembed(
        &self,
        step: &'static str,
        total: u64,
    ) -> Result<(), VectorStoreError> {
        self.ask(BeginReembed { step, total }).await
    }

    /// Records re-embed progress (or its end, with `finish`).
    pub async fn record_reembed(
        &self,
        done: u64,
        total: u64,
        finish: Option<&'static str>,
        error: Option<String>,
    ) {
        // Progress is advisory: a store that went away has nobody to tell.
        let _ = self
            .ask(RecordReembed {
                done,
                total,
                finish,
                error,
            })
            .await;
    }

    /// Semantic rows without a vector.
    pub async fn missing_vectors(
        &self,
        limit: u32,
    ) -> Result<Vec<(String, String)>, VectorStoreError> {
        self.ask(ListMissingVectors { limit }).await
    }

    /// How many rows lack a vector (semantic rows, lessons included, and
    /// episodic fragments): the re-embed sweep's total.
    pub async fn count_missing_vectors(&self) -> Result<u64, VectorStoreError> {
        self.ask(CountMissingVectors).await
    }

    /// Stores backfilled vectors.
    pub async fn store_vectors(
        &self,
        rows: Vec<(String, String, CommitVector)>,
    ) -> Result<u64, VectorStoreError> {
        self.ask(StoreVectors { rows }).await
    }
}
