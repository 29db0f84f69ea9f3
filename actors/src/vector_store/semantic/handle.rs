//! Semantic methods of [`VectorStoreHandle`]: the value is embedded first
//! (outside the store), then written or searched through the actor.

use super::messages::{
    DeleteSemantic, GetKeyState, GetSemantic, GetSemanticContext, ListSemantic, SearchSemantic,
    WriteSemantic, WriteSemanticIfAbsent,
};
use super::types::{
    IfAbsentOutcome, KeyState, ScoredEntry, SemanticEntry, SemanticWrite, WriteOutcome,
};
use super::validate::refuse_lesson_key;
use crate::context_block::ContextBlock;
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::handle::VectorStoreHandle;
use crate::vector_store::space::types::QueryEmbedding;
use crate::vector_store::space::types::{semantic_document, CommitVector};

impl VectorStoreHandle {
    /// Writes through the conflict ladder. The value is embedded first,
    /// outside the store's critical section, with the space generation
    /// sampled before the embed; the store drops the vector if the space
    /// changed meanwhile. A `lesson.*` key answers
    /// [`VectorStoreError::LessonKeyReserved`]: lessons go through
    /// [`write_lesson`](Self::write_lesson).
    pub async fn write_semantic(
        &self,
        write: SemanticWrite,
    ) -> Result<(WriteOutcome, SemanticEntry), VectorStoreError> {
        refuse_lesson_key(&write.key)?;
        let mut vector = None;
        if let Ok(value_json) = serde_json::to_string(&write.value) {
            let document = semantic_document(&write.key, &value_json);
            vector = self.commit_vector(&document).await;
        }
        self.write_with_vector(write, vector).await
    }

    /// Writes with a vector embedded elsewhere (the write path's second
    /// half; used by importers that batch their own embeds). Refuses
    /// `lesson.*` keys like [`write_semantic`](Self::write_semantic).
    pub async fn write_with_vector(
        &self,
        write: SemanticWrite,
        vector: Option<CommitVector>,
    ) -> Result<(WriteOutcome, SemanticEntry), VectorStoreError> {
        refuse_lesson_key(&write.key)?;
        self.ask(WriteSemantic { write, vector }).await
    }

    /// Writes only if the key has no active row. Refuses `lesson.*` keys
    /// like [`write_semantic`](Self::write_semantic).
    pub async fn set_semantic_if_absent(
        &self,
        write: SemanticWrite,
    ) -> Result<IfAbsentOutcome, VectorStoreError> {
        refuse_lesson_key(&write.key)?;
        self.ask(WriteSemanticIfAbsent(write)).await
    }

    /// Tombstones `key`.
    pub async fn delete_semantic(&self, key: &str, source: &str) -> Result<(), VectorStoreError> {
        self.ask(DeleteSemantic {
            key: key.to_owned(),
            source: source.to_owned(),
        })
        .await
    }

    /// Whether `key` is absent, active, or tombstoned.
    pub async fn key_state(&self, key: &str) -> Result<KeyState, VectorStoreError> {
        self.ask(GetKeyState {
            key: key.to_owned(),
        })
        .await
    }

    /// The active row for `key`.
    pub async fn get_semantic(&self, key: &str) -> Result<SemanticEntry, VectorStoreError> {
        self.ask(GetSemantic {
            key: key.to_owned(),
        })
        .await
    }

    /// Active entries, newest first.
    pub async fn list_semantic(
        &self,
        prefix: Option<String>,
        limit: u32,
    ) -> Result<Vec<SemanticEntry>, VectorStoreError> {
        self.ask(ListSemantic { prefix, limit }).await
    }

    /// Entries matching `query`, best first (newest first for an empty query).
    pub async fn search_semantic(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<Vec<ScoredEntry>, VectorStoreError> {
        let embedded = self.embed_query(query).await;
        self.ask(SearchSemantic {
            query: query.to_owned(),
            embedded,
            limit,
        })
        .await
    }

    /// The `[Semantic Memory]` block for `query` within `cap` characters.
    pub async fn semantic_context(
        &self,
        query: &str,
        cap: usize,
    ) -> Result<String, VectorStoreError> {
        let embedded = self.embed_query(query).await;
        let block = self
            .ask(GetSemanticContext {
                query: query.to_owned(),
                embedded,
                cap,
            })
            .await?;
        Ok(block.text)
    }

    /// [`semantic_context`](Self::semantic_context) with every entry's fate
    /// and score, ranked with the build's shared query embedding.
    pub async fn semantic_block(
        &self,
        query: &str,
        cap: usize,
        embedded: &QueryEmbedding,
    ) -> Result<ContextBlock, VectorStoreError> {
        self.ask(GetSemanticContext {
            query: query.to_owned(),
            embedded: embedded.embedded.clone(),
            cap,
        })
        .await
    }
}
