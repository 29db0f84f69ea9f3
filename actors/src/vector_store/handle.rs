//! [`VectorStoreHandle`]: the only way the rest of kirocrew talks to the
//! store. Cloneable, `Send`, and free of actix types in its signatures.

use std::path::PathBuf;

use actix::prelude::*;
use serde_json::Value;

use super::error::VectorStoreError;
use super::lessons::{LessonCategory, SetLessonCategory};
use super::messages::*;
use super::semantic::IfAbsentOutcome;
use super::space::{semantic_document, CommitVector, ReembedStatus, SpaceInfo};
use super::space_messages::*;
use super::transfer::{ImportDocument, ImportEntry, ImportReport, MemoryExport};
use super::types::{
    MemoryEvent, MemoryStats, ScoredEntry, SemanticEntry, SemanticWrite, WriteOutcome,
};
use super::{db, StoreSettings, VectorStore};
use crate::clock::SharedClock;
use crate::embedder::{EmbedKind, EmbedderHandle};
use std::sync::Arc;

/// A cloneable reference to the running `VectorStore` actor.
#[derive(Clone)]
pub struct VectorStoreHandle {
    pub(super) addr: Addr<VectorStore>,
    pub(super) embedder: Option<EmbedderHandle>,
}

impl std::fmt::Debug for VectorStoreHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorStoreHandle")
            .field("connected", &self.addr.connected())
            .finish()
    }
}

impl VectorStoreHandle {
    /// Opens memory.db at `db_path` (creating it and applying migrations) and
    /// starts the supervised actor. Must run inside an actix `System`.
    ///
    /// Opening happens here, before the actor exists, so a bad path or a
    /// database from a newer kirocrew fails start-up with a clear error
    /// instead of surfacing later as an unavailable store.
    pub async fn open(
        db_path: PathBuf,
        settings: StoreSettings,
        clock: SharedClock,
    ) -> Result<Self, VectorStoreError> {
        let pool = db::open_pool(&db_path).await?;
        let space = super::space::load_space(&pool).await?;
        let addr = Supervisor::start(move |_| VectorStore {
            db_path,
            pool: Some(pool),
            settings,
            clock,
            closed: false,
            mirror: Default::default(),
            episodic: Default::default(),
            space,
            reembed: Default::default(),
        });
        Ok(Self {
            addr,
            embedder: None,
        })
    }

    pub(super) async fn ask<M, T>(&self, msg: M) -> Result<T, VectorStoreError>
    where
        M: Message<Result = Result<T, VectorStoreError>> + Send + 'static,
        T: Send + 'static,
        VectorStore: Handler<M>,
    {
        self.addr
            .send(msg)
            .await
            .map_err(|e| VectorStoreError::Unavailable(e.to_string()))?
    }

    /// Attaches the embedder: writes then store vectors and queries rank by
    /// 0.6 × cosine + 0.4 × keyword. Without one the store is keyword-only.
    pub fn with_embedder(mut self, embedder: EmbedderHandle) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// Records a loaded embedder's space (model id and dimension), then
    /// attaches it, so its vectors are never compared with another model's.
    /// For one-shot tools and tests whose embedder is already ready.
    pub async fn with_ready_embedder(
        self,
        embedder: EmbedderHandle,
    ) -> Result<Self, VectorStoreError> {
        let status = embedder
            .status()
            .await
            .map_err(|e| VectorStoreError::Unavailable(e.to_string()))?;
        if let (Some(model_id), Some(dim)) = (status.backend.model_id, status.backend.dim) {
            self.reconcile_space(&model_id, dim).await?;
        }
        Ok(self.with_embedder(embedder))
    }

    /// The attached embedder, if any.
    pub fn embedder(&self) -> Option<&EmbedderHandle> {
        self.embedder.as_ref()
    }

    /// Embeds `text` for the store: `None` when there is no embedder or it
    /// is not ready (the caller degrades to keyword / a NULL vector).
    async fn embed(&self, text: &str, kind: EmbedKind) -> Option<(String, Arc<Vec<f32>>)> {
        let embedder = self.embedder.as_ref()?;
        match embedder.embed(text, kind).await {
            Ok(embedded) => Some(embedded),
            Err(e) => {
                tracing::debug!(error = %e, "embedding unavailable; keyword only");
                None
            }
        }
    }

    /// Writes through the conflict ladder. The value is embedded first,
    /// outside the store's critical section, with the space generation
    /// sampled before the embed; the store drops the vector if the space
    /// changed meanwhile. Lessons are not embedded here.
    pub async fn write_semantic(
        &self,
        write: SemanticWrite,
    ) -> Result<(WriteOutcome, SemanticEntry), VectorStoreError> {
        let mut vector = None;
        if self.embedder.is_some() && !write.key.starts_with("lesson.") {
            let generation = self.ask(GetSpace).await?.generation;
            if let Ok(value_json) = serde_json::to_string(&write.value) {
                let document = semantic_document(&write.key, &value_json);
                if let Some((model_id, v)) = self.embed(&document, EmbedKind::Document).await {
                    vector = Some(CommitVector {
                        vector: v,
                        model_id,
                        generation,
                    });
                }
            }
        }
        self.write_with_vector(write, vector).await
    }

    /// Writes with a vector embedded elsewhere (the write path's second
    /// half; used by importers that batch their own embeds).
    pub async fn write_with_vector(
        &self,
        write: SemanticWrite,
        vector: Option<CommitVector>,
    ) -> Result<(WriteOutcome, SemanticEntry), VectorStoreError> {
        self.ask(WriteSemantic { write, vector }).await
    }

    async fn embed_query(&self, query: &str) -> Option<EmbeddedQuery> {
        if query.trim().is_empty() {
            return None;
        }
        self.embed(query, EmbedKind::Query)
            .await
            .map(|(model_id, vector)| EmbeddedQuery { vector, model_id })
    }

    /// Writes only if the key has no active row.
    pub async fn set_semantic_if_absent(
        &self,
        write: SemanticWrite,
    ) -> Result<IfAbsentOutcome, VectorStoreError> {
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
        self.ask(GetSemanticContext {
            query: query.to_owned(),
            embedded,
            cap,
        })
        .await
    }

    /// The newest audit events.
    pub async fn list_events(&self, limit: u32) -> Result<Vec<MemoryEvent>, VectorStoreError> {
        self.ask(ListEvents { limit }).await
    }

    /// Counts and sizes.
    pub async fn stats(&self) -> Result<MemoryStats, VectorStoreError> {
        self.ask(GetStats).await
    }

    /// Every active semantic entry as an export document.
    pub async fn export(&self) -> Result<MemoryExport, VectorStoreError> {
        self.ask(ExportMemory).await
    }

    /// Restores an export document. Each entry is its own atomic write, so
    /// a large import never holds the store's mailbox for long. Entries that
    /// fail validation or screening are reported, not fatal; a database
    /// failure stops the import (entries already stored stay, and re-running
    /// the import skips them).
    pub async fn import(&self, document: Value) -> Result<ImportReport, VectorStoreError> {
        let document = ImportDocument::parse(document)?;
        let mut report = ImportReport::default();
        for (index, raw) in document.semantic.into_iter().enumerate() {
            let label = raw
                .get("key")
                .and_then(Value::as_str)
                .map_or_else(|| format!("#{index}"), str::to_owned);
            let entry: ImportEntry = match serde_json::from_value(raw) {
                Ok(entry) => entry,
                Err(e) => {
                    report.reject(label, format!("malformed entry: {e}"));
                    continue;
                }
            };
            let category = match document.lesson_categories.get(&entry.key) {
                None => None,
                Some(name) => match LessonCategory::parse(name) {
                    Some(c) => Some(c),
                    None => {
                        report.reject(label, format!("unknown lesson category {name:?}"));
                        continue;
                    }
                },
            };
            let key = entry.key.clone();
            let write = SemanticWrite {
                key: entry.key,
                value: entry.value,
                confidence: entry.confidence,
                source: entry.source,
            };
            match self.set_semantic_if_absent(write).await {
                Ok(IfAbsentOutcome::Inserted(_)) => {
                    report.imported += 1;
                    if let Some(category) = category {
                        self.ask(SetLessonCategory { key, category }).await?;
                    }
                }
                Ok(IfAbsentOutcome::Exists) => report.skip(label, "key already exists"),
                Err(e) if e.is_rejection() => report.reject(label, e.to_string()),
                Err(e) => return Err(e),
            }
        }
        Ok(report)
    }

    /// The active embedding space.
    pub async fn space(&self) -> Result<SpaceInfo, VectorStoreError> {
        self.ask(GetSpace).await
    }

    /// Records the serving model as the space (see [`ReconcileSpace`]).
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
        self.addr
            .send(GetReembedStatus)
            .await
            .map_err(|e| VectorStoreError::Unavailable(e.to_string()))
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
        let _ = self
            .addr
            .send(RecordReembed {
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

    /// How many semantic rows lack a vector.
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

    /// Checks that the actor runs and the database answers.
    pub async fn check_health(&self) -> Result<(), VectorStoreError> {
        self.ask(CheckHealth).await
    }

    /// Checkpoints and closes the database; later requests fail as unavailable.
    pub async fn close(&self) -> Result<(), VectorStoreError> {
        // Save the episodic index first, so the next start loads it instead
        // of rebuilding; a failure costs only that rebuild.
        if let Err(e) = self
            .ask(crate::vector_store::episodic::SaveEpisodicIndex)
            .await
        {
            tracing::warn!(error = %e, "episodic index not saved at close");
        }
        self.ask(CloseStore).await
    }
}
