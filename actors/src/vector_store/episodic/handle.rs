//! Episodic methods of [`VectorStoreHandle`]: embed first (outside the
//! store), then write or search through the actor.

use super::block::render_episodic_items;
use super::index::IndexState;
use super::index_messages::GetEpisodicIndexState;
use super::messages::{
    DeleteEpisodic, HasEpisodicText, ListEpisodic, ListMissingEpisodicVectors, RestoreEpisodic,
    SearchEpisodic, StoreEpisodicVectors, WriteEpisodic,
};
use super::types::{
    EpisodicContext, EpisodicEntry, EpisodicHit, EpisodicQuery, EpisodicWrite, Retrieval,
    SearchMode, CONTEXT_LIMIT,
};
use super::write::validate_text;
use crate::context_block::ContextBlock;
use crate::security::screen::find_injection;
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::handle::VectorStoreHandle;
use crate::vector_store::space::types::CommitVector;
use crate::vector_store::space::types::{QueryEmbedStatus, QueryEmbedding};

impl VectorStoreHandle {
    /// Stores a fragment. Length and injection are checked before any
    /// embedding work; with `defer_embedding` (or no ready model) the row is
    /// stored without a vector and the backfill sweep embeds it later.
    pub async fn write_episodic(&self, write: EpisodicWrite) -> Result<i64, VectorStoreError> {
        let text = validate_text(&write.text)?;
        let vector = if write.defer_embedding || find_injection(&text).is_some() {
            None
        } else {
            self.commit_vector(&text).await
        };
        self.ask(WriteEpisodic { write, vector }).await
    }

    /// The episodic HNSW index: absent, building or ready (with its size and
    /// whether it was loaded from disk).
    pub async fn episodic_index_state(&self) -> Result<IndexState, VectorStoreError> {
        self.ask(GetEpisodicIndexState).await
    }

    /// Whether a fragment with this text was ever stored (even if deleted).
    pub async fn episodic_text_seen(&self, text: &str) -> Result<bool, VectorStoreError> {
        self.ask(HasEpisodicText {
            text: text.to_owned(),
        })
        .await
    }

    /// Searches fragments (the full ranked set with score parts).
    pub async fn search_episodic(
        &self,
        query: EpisodicQuery,
    ) -> Result<Vec<EpisodicHit>, VectorStoreError> {
        // Keyword mode ranks by BM25 alone: no embed, no cosines.
        let embedded = match query.mode {
            SearchMode::Keyword => None,
            _ => self.embed_query(&query.text).await,
        };
        self.ask(SearchEpisodic { query, embedded }).await
    }

    /// The `[Episodic Memory]` block for a message: at most 8 fragments,
    /// within min(3,000, `cap`) characters, and which retrieval produced it.
    /// Vector candidates must clear the relevance gate; keyword candidates
    /// are served without a model too. Empty without a query.
    pub async fn episodic_context(
        &self,
        message: &str,
        cap: usize,
    ) -> Result<EpisodicContext, VectorStoreError> {
        let embedded = QueryEmbedding {
            embedded: self.embed_query(message).await,
            status: QueryEmbedStatus::Embedded,
        };
        let (block, retrieval) = self.episodic_block(message, cap, &embedded).await?;
        Ok(EpisodicContext {
            block: block.text,
            retrieval,
        })
    }

    /// [`episodic_context`](Self::episodic_context) with every hit's fate and
    /// score parts, ranked with the build's shared query embedding.
    pub async fn episodic_block(
        &self,
        message: &str,
        cap: usize,
        query_embedding: &QueryEmbedding,
    ) -> Result<(ContextBlock, Retrieval), VectorStoreError> {
        if message.trim().is_empty() {
            return Ok((ContextBlock::default(), Retrieval::Keyword));
        }
        let mut query = EpisodicQuery::new(message, CONTEXT_LIMIT);
        query.relevance_filter = true;
        let embedded = query_embedding.embedded.clone();
        // The vector counts only in the space the store holds (the actor
        // ignores it otherwise), so the report asks the same question.
        let retrieval = match &embedded {
            Some(e)
                if self
                    .space()
                    .await?
                    .signature_for(&e.model_id, e.vector.len())
                    .is_some() =>
            {
                Retrieval::Hybrid
            }
            _ => Retrieval::Keyword,
        };
        let hits = self.ask(SearchEpisodic { query, embedded }).await?;
        Ok((render_episodic_items(&hits, cap), retrieval))
    }

    /// Fragments without a vector.
    pub async fn missing_episodic_vectors(
        &self,
        limit: u32,
    ) -> Result<Vec<(i64, String)>, VectorStoreError> {
        self.ask(ListMissingEpisodicVectors { limit }).await
    }

    /// Stores backfilled fragment vectors.
    pub async fn store_episodic_vectors(
        &self,
        rows: Vec<(i64, String, CommitVector)>,
    ) -> Result<u64, VectorStoreError> {
        self.ask(StoreEpisodicVectors { rows }).await
    }

    /// Tombstones a fragment, with a `delete` audit event (memory type
    /// `episodic`, key = row id, old value = its text) by `source`.
    /// Clears a fragment's tombstone (a delete, a retirement after a
    /// superseded value, or a merge is undone), with a `restore` audit
    /// event. Refused when an active row holds the same text or the store
    /// is full.
    pub async fn restore_episodic(&self, id: i64, source: &str) -> Result<(), VectorStoreError> {
        self.ask(RestoreEpisodic {
            id,
            source: source.to_owned(),
        })
        .await
    }

    pub async fn delete_episodic(&self, id: i64, source: &str) -> Result<(), VectorStoreError> {
        self.ask(DeleteEpisodic {
            id,
            source: source.to_owned(),
        })
        .await
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
