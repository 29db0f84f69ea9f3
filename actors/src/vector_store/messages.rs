//! Store-wide requests: stats, health, and the orderly close. Each domain's
//! requests live in its own `messages.rs`.

use actix::prelude::*;

use super::actor::VectorStore;
use super::db;
use super::error::VectorStoreError;
use super::stats::{stats, MemoryStats};
use crate::embedder::calibration::{Calibration, Similarity};
use crate::security_log::SecurityLogHandle;

/// Reports counts and sizes.
#[derive(Debug, Message)]
#[rtype(result = "Result<MemoryStats, VectorStoreError>")]
pub(crate) struct GetStats;

/// Liveness and database check (readiness probe, watchdog).
#[derive(Debug, Message)]
#[rtype(result = "Result<(), VectorStoreError>")]
pub(crate) struct CheckHealth;

/// Checkpoints the WAL and closes the database for good (shutdown).
#[derive(Debug, Message)]
#[rtype(result = "Result<(), VectorStoreError>")]
pub(crate) struct CloseStore;

/// Attaches the security event log injection blocks are reported to.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), VectorStoreError>")]
pub(crate) struct AttachSecurityLog(pub SecurityLogHandle);

impl Handler<AttachSecurityLog> for VectorStore {
    type Result = Result<(), VectorStoreError>;

    fn handle(&mut self, msg: AttachSecurityLog, _: &mut Context<Self>) -> Self::Result {
        self.security_log = Some(msg.0);
        Ok(())
    }
}

/// Sets the embedding model's calibration.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), VectorStoreError>")]
pub(crate) struct SetCalibration(pub Calibration);

impl Handler<SetCalibration> for VectorStore {
    type Result = Result<(), VectorStoreError>;

    fn handle(&mut self, msg: SetCalibration, _: &mut Context<Self>) -> Self::Result {
        tracing::info!(model = %msg.0.model_id, thresholds = ?msg.0.thresholds(), "similarity thresholds calibrated");
        self.calibration = Some(msg.0);
        Ok(())
    }
}

/// The similarity thresholds in force, with the calibration behind them.
#[derive(Debug, Message)]
#[rtype(result = "Result<Similarity, VectorStoreError>")]
pub(crate) struct GetSimilarity;

impl Handler<GetSimilarity> for VectorStore {
    type Result = Result<Similarity, VectorStoreError>;

    fn handle(&mut self, _: GetSimilarity, _: &mut Context<Self>) -> Self::Result {
        let calibration = self
            .calibration
            .clone()
            .filter(|c| self.space.model_id.as_deref() == Some(c.model_id.as_str()));
        Ok(Similarity {
            calibration,
            thresholds: self.thresholds(),
        })
    }
}

impl Handler<GetStats> for VectorStore {
    type Result = ResponseActFuture<Self, Result<MemoryStats, VectorStoreError>>;

    fn handle(&mut self, _: GetStats, _: &mut Context<Self>) -> Self::Result {
        let path = self.db_path.clone();
        let space = self.space.clone();
        self.concurrent(|pool, _, _| async move { stats(&pool, &path, space).await })
    }
}

impl Handler<CheckHealth> for VectorStore {
    type Result = ResponseActFuture<Self, Result<(), VectorStoreError>>;

    fn handle(&mut self, _: CheckHealth, _: &mut Context<Self>) -> Self::Result {
        self.concurrent(|pool, _, _| async move { db::ping(&pool).await })
    }
}

impl Handler<CloseStore> for VectorStore {
    type Result = AtomicResponse<Self, Result<(), VectorStoreError>>;

    fn handle(&mut self, _: CloseStore, _: &mut Context<Self>) -> Self::Result {
        let pool = self.pool.take();
        self.closed = true;
        // No task may outlive the pool with a connection in hand (dropped
        // with the runtime, sqlx panics returning it).
        let background = self.background.clone();
        background.close();
        AtomicResponse::new(Box::pin(
            async move {
                background.wait().await;
                match pool {
                    Some(pool) => db::close_pool(&pool).await,
                    None => Ok(()),
                }
            }
            .into_actor(self),
        ))
    }
}
