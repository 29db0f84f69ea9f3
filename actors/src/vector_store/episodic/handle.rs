//! Episodic methods of [`VectorStoreHandle`]: embed first (outside the
//! store), then write or search through the actor.

use super::messages::validate_text;
use super::{DeleteEpisodic, ListEpisodic, SearchEpisodic, WriteEpisodic};
use super::{EpisodicEntry, EpisodicHit, EpisodicQuery, EpisodicWrite};
use crate::embedder::EmbedKind;
use crate::vector_store::messages::EmbeddedQuery;
use crate::vector_store::space::CommitVector;
use crate::vector_store::space_messages::GetSpace;
use crate::vector_store::{VectorStoreError, VectorStoreHandle};

impl VectorStoreHandle {
    /// Stores a fragment. Length and injection are checked before any
    /// embedding work; with `defer_embedding` (or no ready model) the row is
    /// stored without a vector and the backfill sweep embeds it later.
    pub async fn write_episodic(&self, write: EpisodicWrite) -> Result<i64, VectorStoreError> {
        let text = validate_text(&write.text)?;
        let mut vector = None;
        if !write.defer_embedding && crate::screening::find_injection(&text).is_none() {
            if let Some(embedder) = self.embedder() {
                let generation = self.ask(GetSpace).await?.generation;
                if let Ok((model_id, v)) = embedder.embed(&text, EmbedKind::Document).await {
                    vector = Some(CommitVector {
                        vector: v,
                        model_id,
                        generation,
                    });
                }
            }
        }
        self.ask(WriteEpisodic { write, vector }).await
    }

    /// The episodic HNSW index: absent, building or ready (with its size and
    /// whether it was loaded from disk).
    pub async fn episodic_index_state(&self) -> Result<super::index::IndexState, VectorStoreError> {
        self.ask(super::GetEpisodicIndexState).await
    }

    /// Whether a fragment with this text was ever stored (even if deleted).
    pub async fn episodic_text_seen(&self, text: &str) -> Result<bool, VectorStoreError> {
        self.ask(super::HasEpisodicText {
            text: text.to_owned(),
        })
        .await
    }

    /// Searches fragments (the full ranked set with score parts).
    pub async fn search_episodic(
        &self,
        query: EpisodicQuery,
    ) -> Result<Vec<EpisodicHit>, VectorStoreError> {
        let embedded = match self.embedder() {
            // Keyword mode ranks by BM25 alone: no embed, no cosines.
            Some(embedder)
                if !query.text.trim().is_empty() && query.mode != super::SearchMode::Keyword =>
            {
                embedder
                    .embed(&query.text, EmbedKind::Query)
                    .await
                    .ok()
                    .map(|(model_id, vector)| EmbeddedQuery { vector, model_id })
            }
            _ => None,
        };
        self.ask(SearchEpisodic { query, embedded }).await
    }

    /// The `[Episodic Memory]` block for a message: gated, at most 8
    /// fragments, within min(3,000, `cap`) characters. Empty without a query.
    pub async fn episodic_context(
        &self,
        message: &str,
        cap: usize,
    ) -> Result<String, VectorStoreError> {
        if message.trim().is_empty() {
            return Ok(String::new());
        }
        let mut query = EpisodicQuery::new(message, super::CONTEXT_LIMIT);
        query.relevance_filter = true;
        let hits = self.search_episodic(query).await?;
        Ok(super::render_episodic_block(&hits, cap))
    }

    /// Fragments without a vector.
    pub async fn missing_episodic_vectors(
        &self,
        limit: u32,
    ) -> Result<Vec<(i64, String)>, VectorStoreError> {
        self.ask(super::ListMissingEpisodicVectors { limit }).await
    }

    /// Stores backfilled fragment vectors.
    pub async fn store_episodic_vectors(
        &self,
        rows: Vec<(i64, String, CommitVector)>,
    ) -> Result<u64, VectorStoreError> {
        self.ask(super::StoreEpisodicVectors { rows }).await
    }

    /// Tombstones a fragment.
    pub async fn delete_episodic(&self, id: i64) -> Result<(), VectorStoreError> {
        self.ask(DeleteEpisodic { id }).await
    }

    /// A page of active fragments, newest first, and the total.
    pub async fn list_episodic(
        &self,
        offset: u32,
        limit: u32,
    ) -> Result<(Vec<EpisodicEntry>, i64), VectorStoreError> {
        self.ask(ListEpisodic { offset, limit }).await
    }
}
