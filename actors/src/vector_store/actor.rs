//! The `VectorStore` actor itself: the memory.db pool it owns, how its
//! handlers run database work, and its supervision. Domain handlers live
//! beside their domain (`semantic/messages.rs`, `episodic/messages.rs`, …)
//! and reach the pool only through [`VectorStore::atomic`] (writes) and
//! [`VectorStore::concurrent`] (reads).
//!
//! ## Why an actor and a pool
//! The reference serialized every statement on one connection behind a
//! reentrant lock. Here the mailbox is the lock: writes run as
//! `AtomicResponse` futures, so a read-modify-write (fetch incumbent → ladder
//! → upsert → audit) cannot interleave with another message. Reads run as
//! ordinary response futures on the same pool and may overlap writes; WAL
//! gives each a consistent snapshot. The pool is never shared outside the
//! actor.
//!
//! ## Supervision
//! The actor runs under `actix::Supervisor`. When a request fails in a way
//! that leaves the pool unusable (closed pool, I/O error), the actor stops
//! itself; the supervisor restarts it and `started` reopens the database.
//! Messages sent meanwhile wait in the mailbox. `CloseStore` is the orderly
//! end: it checkpoints the WAL and closes the pool for good.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use actix::prelude::*;
use sqlx::sqlite::SqlitePool;
use tokio_util::task::TaskTracker;

use super::db;
use std::sync::Arc;

use super::episodic::mirror::EpisodicMirror;
use super::error::VectorStoreError;
use super::quarantine::replay::SkillReplay;
use super::screening::{ExemplarBank, Screening};
use super::semantic::mirror::SemanticMirror;
use super::settings::StoreSettings;
use super::space::types::{ReembedStatus, SpaceInfo};
use crate::clock::{format_ts, SharedClock};
use crate::embedder::calibration::{Calibration, Thresholds};
use crate::security::similarity::SimilarityPolicy;
use crate::security_log::SecurityLogHandle;

/// How long to wait before retrying a failed reopen after a restart.
const REOPEN_RETRY: Duration = Duration::from_secs(2);

/// The actor. Construct it with `VectorStoreHandle::open`.
pub(crate) struct VectorStore {
    pub(super) db_path: PathBuf,
    pub(super) pool: Option<SqlitePool>,
    pub(super) settings: StoreSettings,
    pub(super) clock: SharedClock,
    pub(super) closed: bool,
    /// The semantic rows' ranking mirror (`semantic/mirror.rs`).
    pub(super) mirror: SemanticMirror,
    /// The episodic rows' mirror and vector index (`episodic/mirror.rs`).
    pub(super) episodic: EpisodicMirror,
    pub(super) space: SpaceInfo,
    pub(super) reembed: ReembedStatus,
    /// The attack exemplars embedded in some space (`screening.rs`); used
    /// only while that space is the current one.
    pub(super) exemplar_bank: Option<Arc<ExemplarBank>>,
    /// Where injection blocks are also recorded, once attached.
    pub(super) security_log: Option<SecurityLogHandle>,
    /// The writer of released skills, once the skills actor attached
    /// itself (`quarantine/replay.rs`).
    pub(super) skill_replay: Option<Arc<dyn SkillReplay>>,
    /// The embedding model's calibration (its similarity thresholds), once
    /// measured; used only while its model is the space's.
    pub(super) calibration: Option<Calibration>,
    /// Rung after every handler: the live audit trail's publisher
    /// (`audit_feed.rs`) looks for newly committed rows.
    pub(super) audit_wake: Arc<tokio::sync::Notify>,
    /// Every task the store spawns that may hold a pool connection (reads,
    /// `last_accessed` stamps): `CloseStore` waits for them, so none is
    /// still running, connection in hand, when the runtime is dropped.
    pub(super) background: TaskTracker,
}

impl VectorStore {
    /// The similarity thresholds in force: the calibration's when it was
    /// measured for the space's model, else the reference constants.
    pub(super) fn thresholds(&self) -> Thresholds {
        match (&self.calibration, &self.space.model_id) {
            (Some(c), Some(model)) if c.model_id == *model => c.thresholds(),
            _ => Thresholds::REFERENCE,
        }
    }

    pub(super) fn now(&self) -> String {
        format_ts(self.clock.now())
    }

    /// What a write is screened with now: the exemplar bank only if it was
    /// embedded in the current space, its thresholds on the space model's
    /// scale, and the attached security log.
    pub(super) fn screening(&self) -> Screening {
        let current = self.space.signature();
        Screening {
            bank: self
                .exemplar_bank
                .clone()
                .filter(|bank| current.as_deref() == Some(bank.signature.as_str())),
            policy: SimilarityPolicy::of(&self.thresholds()),
            log: self.security_log.clone(),
            released: false,
        }
    }

    pub(super) fn pool(&self) -> Result<SqlitePool, VectorStoreError> {
        match (&self.pool, self.closed) {
            (_, true) => Err(VectorStoreError::Unavailable("the store is closed".into())),
            (Some(pool), false) => Ok(pool.clone()),
            (None, false) => Err(VectorStoreError::Unavailable(
                "the database is being reopened".into(),
            )),
        }
    }

    /// Runs `op` on the pool with the mailbox held (read-modify-write).
    pub(super) fn atomic<T, F, Fut>(
        &mut self,
        op: F,
    ) -> AtomicResponse<Self, Result<T, VectorStoreError>>
    where
        T: 'static,
        F: FnOnce(SqlitePool, StoreSettings, String) -> Fut,
        Fut: Future<Output = Result<T, VectorStoreError>> + 'static,
    {
        AtomicResponse::new(self.run(op))
    }

    /// Runs `op` on the pool without holding the mailbox (reads).
    ///
    /// The query runs as its own task, not inside this actor's context:
    /// while an `AtomicResponse` write is pending, actix polls none of the
    /// context's other futures, so a read polled in-context would sit on the
    /// pool connection it had taken. Four such reads exhaust the pool and the
    /// write then waits for a connection until sqlx's acquire timeout
    /// (`PoolTimedOut` after 30 s), and `CloseStore` waits forever. As a task
    /// the read finishes and returns its connection regardless; only the
    /// delivery of its result waits for the write.
    pub(super) fn concurrent<T, F, Fut>(
        &mut self,
        op: F,
    ) -> ResponseActFuture<Self, Result<T, VectorStoreError>>
    where
        T: 'static,
        F: FnOnce(SqlitePool, StoreSettings, String) -> Fut,
        Fut: Future<Output = Result<T, VectorStoreError>> + 'static,
    {
        // The read runs as its own task, not inside the actor: while an
        // AtomicResponse write holds the actor, futures inside the actor are
        // not polled, so a read that had already taken a pool connection
        // would sit on it and starve the write (and `close`) of connections.
        // As a task it finishes and returns its connection; only the
        // delivery of its result waits for the write.
        let tracker = self.background.clone();
        self.run(move |pool, settings, now| {
            let task = actix::spawn(tracker.track_future(op(pool, settings, now)));
            async move {
                task.await.unwrap_or_else(|e| {
                    Err(VectorStoreError::Unavailable(format!(
                        "read task failed: {e}"
                    )))
                })
            }
        })
    }

    fn run<T, F, Fut>(&mut self, op: F) -> ResponseActFuture<Self, Result<T, VectorStoreError>>
    where
        T: 'static,
        F: FnOnce(SqlitePool, StoreSettings, String) -> Fut,
        Fut: Future<Output = Result<T, VectorStoreError>> + 'static,
    {
        let pool = match self.pool() {
            Ok(pool) => pool,
            Err(e) => return Box::pin(fut::ready(Err(e))),
        };
        let mut settings = self.settings.clone();
        settings.similarity = self.thresholds();
        let fut = op(pool, settings, self.now());
        Box::pin(fut.into_actor(self).map(|res, act, ctx| {
            act.stop_if_fatal(&res, ctx);
            res
        }))
    }

    /// The one place a failed request can end the actor: an error that
    /// leaves the pool unusable drops it and stops the actor, so the
    /// supervisor restarts it and `started` reopens memory.db. Every
    /// handler's result passes through here (via [`Self::run`] or, for
    /// handlers that chain actor futures themselves, directly).
    pub(super) fn stop_if_fatal<T>(
        &mut self,
        res: &Result<T, VectorStoreError>,
        ctx: &mut Context<Self>,
    ) {
        // Whatever the handler was, it may have committed audit rows.
        self.audit_wake.notify_one();
        if let Err(e) = res {
            if e.is_fatal() && !self.closed {
                tracing::error!(error = %e, "memory.db connection lost; restarting the store");
                self.pool = None;
                ctx.stop();
            }
        }
    }

    fn reopen(&mut self, ctx: &mut Context<Self>) {
        let path = self.db_path.clone();
        ctx.wait(
            async move { db::open_pool(&path).await }
                .into_actor(self)
                .map(|res, act, ctx| match res {
                    Ok(pool) => {
                        tracing::info!(path = %act.db_path.display(), "memory.db reopened");
                        act.pool = Some(pool);
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "reopening memory.db failed; retrying");
                        ctx.run_later(REOPEN_RETRY, |act, ctx| act.reopen(ctx));
                    }
                }),
        );
    }
}

impl Actor for VectorStore {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if self.pool.is_none() && !self.closed {
            self.reopen(ctx);
        }
    }
}

impl Supervised for VectorStore {
    fn restarting(&mut self, _ctx: &mut Self::Context) {
        tracing::warn!("VectorStore restarting");
        self.pool = None;
        self.mirror.reset();
        self.episodic.reset();
    }
}

#[cfg(test)]
pub(super) mod supervision_tests {
    use super::*;
    use crate::clock::system_clock;
    use crate::vector_store::handle::VectorStoreHandle;
    use crate::vector_store::semantic::types::SemanticWrite;
    use crate::vector_store::semantic::validate::USER_EXPLICIT;

    /// A store on `path` with default settings (the store's tests share it).
    pub(in crate::vector_store) async fn open_store(path: std::path::PathBuf) -> VectorStoreHandle {
        VectorStoreHandle::open(path, StoreSettings::default(), system_clock())
            .await
            .unwrap()
    }

    /// A user write of `key` (the store's tests share it).
    pub(in crate::vector_store) fn write(key: &str) -> SemanticWrite {
        SemanticWrite {
            key: key.to_owned(),
            value: serde_json::json!("v"),
            confidence: 1.0,
            source: USER_EXPLICIT.to_owned(),
        }
    }

    /// A lost connection pool stops the actor; the supervisor restarts it,
    /// `started` reopens memory.db, and the store serves again with its
    /// data intact.
    #[actix_rt::test]
    async fn a_dead_pool_is_reopened_by_the_supervisor() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.db");
        let pool = db::open_pool(&path).await.unwrap();
        let doomed = pool.clone();
        let addr = Supervisor::start(move |_| VectorStore {
            db_path: path,
            pool: Some(pool),
            settings: StoreSettings::default(),
            clock: system_clock(),
            closed: false,
            mirror: Default::default(),
            episodic: Default::default(),
            space: Default::default(),
            reembed: Default::default(),
            exemplar_bank: None,
            security_log: None,
            skill_replay: None,
            calibration: None,
            audit_wake: Default::default(),
            background: TaskTracker::new(),
        });
        let store = VectorStoreHandle {
            addr,
            embedder: None,
            audit_live: tokio::sync::broadcast::channel(1).0,
        };
        store.write_semantic(write("pref.before")).await.unwrap();

        doomed.close().await;
        let failed = store.write_semantic(write("pref.during")).await;
        assert!(
            matches!(
                failed,
                Err(VectorStoreError::Database(sqlx::Error::PoolClosed))
            ),
            "{failed:?}"
        );
        // The restart reopens the database before the next message is handled.
        store.write_semantic(write("pref.after")).await.unwrap();
        let keys: Vec<String> = store
            .list_semantic(None, 10)
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.key)
            .collect();
        assert_eq!(keys, vec!["pref.after", "pref.before"]);
    }

    /// An orderly close is final: no restart, later calls are refused.
    #[actix_rt::test]
    async fn close_is_not_undone_by_the_supervisor() {
        let dir = tempfile::tempdir().unwrap();
        let store = open_store(dir.path().join("memory.db")).await;
        store.close().await.unwrap();
        assert!(matches!(
            store.check_health().await,
            Err(VectorStoreError::Unavailable(_))
        ));
    }
}
