//! [`VectorStoreHandle`]: the only way the rest of kirocrew talks to the
//! store. Cloneable, `Send`, and free of actix types in its signatures.
//!
//! This file holds the handle itself and the store-wide calls (open, health,
//! stats, close). Each domain adds its own methods in its `handle.rs`
//! (`semantic/`, `episodic/`, `lessons/`, `space/`, `transfer/`, and the
//! audit trail in `audit.rs`), so a domain's protocol reads top to bottom in
//! one folder.

use std::path::PathBuf;

use actix::prelude::*;

use super::actor::VectorStore;
use super::audit::{ListEvents, MemoryEvent, RecordEvent};
use super::audit_feed;
use super::db;
use super::episodic::index_messages::SaveEpisodicIndex;
use super::error::VectorStoreError;
use super::messages::{
    AttachSecurityLog, CheckHealth, CloseStore, GetSimilarity, GetStats, SetCalibration,
};
use super::settings::StoreSettings;
use super::space::db::load_space;
use super::stats::MemoryStats;
use crate::ask::ask;
use crate::clock::SharedClock;
use crate::embedder::calibration::{Calibration, Similarity};
use crate::embedder::EmbedderHandle;
use crate::security_log::SecurityLogHandle;

/// A cloneable reference to the running `VectorStore` actor.
#[derive(Clone)]
pub struct VectorStoreHandle {
    pub(super) addr: Addr<VectorStore>,
    pub(super) embedder: Option<EmbedderHandle>,
    /// Where the live audit feed is read from (`subscribe_events`).
    pub(super) audit_live: tokio::sync::broadcast::Sender<super::audit::MemoryEvent>,
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
        let space = load_space(&pool).await?;
        let audit_live = audit_feed::channel();
        let audit_wake = std::sync::Arc::new(tokio::sync::Notify::new());
        let wake = audit_wake.clone();
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
            exemplar_bank: None,
            security_log: None,
            skill_replay: None,
            calibration: None,
            audit_wake: wake,
            background: tokio_util::task::TaskTracker::new(),
        });
        audit_feed::spawn_publisher(addr.downgrade(), audit_live.clone(), audit_wake);
        Ok(Self {
            addr,
            embedder: None,
            audit_live,
        })
    }

    /// Sends `msg` to the actor and waits for its answer.
    pub(super) async fn ask<M, T>(&self, msg: M) -> Result<T, VectorStoreError>
    where
        M: Message<Result = Result<T, VectorStoreError>> + Send + 'static,
        T: Send + 'static,
        VectorStore: Handler<M>,
    {
        ask(&self.addr, msg).await
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

    /// Uses `calibration`'s similarity thresholds while its model is the
    /// space's (the daemon measures it when the embedder is ready).
    pub async fn set_calibration(&self, calibration: Calibration) -> Result<(), VectorStoreError> {
        self.ask(SetCalibration(calibration)).await
    }

    /// The similarity thresholds in force (the reference constants until a
    /// calibration of the space's model is set), with that calibration.
    pub async fn similarity(&self) -> Result<Similarity, VectorStoreError> {
        self.ask(GetSimilarity).await
    }

    /// Records every injection block of every writer in `log` as well
    /// (category `injection_blocked`, actor = the write's source), from
    /// now on and for every clone of this handle. The daemon and the
    /// one-shot commands that write attach the data home's log.
    pub async fn attach_security_log(
        &self,
        log: SecurityLogHandle,
    ) -> Result<(), VectorStoreError> {
        self.ask(AttachSecurityLog(log)).await
    }

    /// The attached embedder, if any.
    pub fn embedder(&self) -> Option<&EmbedderHandle> {
        self.embedder.as_ref()
    }

    /// Counts and sizes.
    pub async fn stats(&self) -> Result<MemoryStats, VectorStoreError> {
        self.ask(GetStats).await
    }

    /// Checks that the actor runs and the database answers.
    pub async fn check_health(&self) -> Result<(), VectorStoreError> {
        self.ask(CheckHealth).await
    }

    /// Checkpoints and closes the database; later requests fail as unavailable.
    pub async fn close(&self) -> Result<(), VectorStoreError> {
        // Save the episodic index first, so the next start loads it instead
        // of rebuilding; a failure costs only that rebuild.
        if let Err(e) = self.ask(SaveEpisodicIndex).await {
            tracing::warn!(error = %e, "episodic index not saved at close");
        }
        self.ask(CloseStore).await
    }
}

// The audit trail's queries live with the handle (not in audit.rs) so
// that audit.rs, which the live feed reads, imports nothing that imports
// the feed back.
impl VectorStoreHandle {
    /// Appends an audit event that belongs to no single write.
    pub async fn record_event(&self, event: RecordEvent) -> Result<(), VectorStoreError> {
        self.ask(event).await
    }

    /// The newest audit events.
    pub async fn list_events(&self, limit: u32) -> Result<Vec<MemoryEvent>, VectorStoreError> {
        self.ask(ListEvents { limit }).await
    }

    /// A live feed of every audit row committed from now on, oldest first
    /// (`audit_feed.rs`). A receiver more than a bounded queue behind gets
    /// `RecvError::Lagged(n)` with the count it missed; it never slows a
    /// writer.
    pub fn subscribe_events(&self) -> tokio::sync::broadcast::Receiver<MemoryEvent> {
        self.audit_live.subscribe()
    }
}
