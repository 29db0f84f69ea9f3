//! [`VectorStoreHandle`]: the only way the rest of kirocrew talks to the
//! store. Cloneable, `Send`, and free of actix types in its signatures.

use std::path::PathBuf;

use actix::prelude::*;
use serde_json::Value;

use super::error::VectorStoreError;
use super::messages::*;
use super::semantic::IfAbsentOutcome;
use super::transfer::{ImportDocument, ImportEntry, ImportReport, MemoryExport};
use super::types::{
    MemoryEvent, MemoryStats, ScoredEntry, SemanticEntry, SemanticWrite, WriteOutcome,
};
use super::{db, StoreSettings, VectorStore};
use crate::clock::SharedClock;

/// A cloneable reference to the running `VectorStore` actor.
#[derive(Clone)]
pub struct VectorStoreHandle {
    pub(super) addr: Addr<VectorStore>,
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
        let addr = Supervisor::start(move |_| VectorStore {
            db_path,
            pool: Some(pool),
            settings,
            clock,
            closed: false,
        });
        Ok(Self { addr })
    }

    async fn ask<M, T>(&self, msg: M) -> Result<T, VectorStoreError>
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

    /// Writes through the conflict ladder.
    pub async fn write_semantic(
        &self,
        write: SemanticWrite,
    ) -> Result<(WriteOutcome, SemanticEntry), VectorStoreError> {
        self.ask(WriteSemantic(write)).await
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

    /// The active entry for `key`.
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
        self.ask(SearchSemantic {
            query: query.to_owned(),
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
        self.ask(GetSemanticContext {
            query: query.to_owned(),
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
            let write = SemanticWrite {
                key: entry.key,
                value: entry.value,
                confidence: entry.confidence,
                source: entry.source,
            };
            match self.set_semantic_if_absent(write).await {
                Ok(IfAbsentOutcome::Inserted(_)) => report.imported += 1,
                Ok(IfAbsentOutcome::Exists) => report.skip(label, "key already exists"),
                Err(e) if e.is_rejection() => report.reject(label, e.to_string()),
                Err(e) => return Err(e),
            }
        }
        Ok(report)
    }

    /// Checks that the actor runs and the database answers.
    pub async fn check_health(&self) -> Result<(), VectorStoreError> {
        self.ask(CheckHealth).await
    }

    /// Checkpoints and closes the database; later requests fail as unavailable.
    pub async fn close(&self) -> Result<(), VectorStoreError> {
        self.ask(CloseStore).await
    }
}
