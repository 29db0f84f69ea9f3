//! The embedding-space part of the `VectorStore` protocol: which model's
//! vectors the store holds, switching that space, the backfill sweep's
//! reads and writes, and the single-flight re-embed status (spec:
//! "In-Process Embedder → model change", "backfill_missing_embeddings").

use actix::prelude::*;

use std::sync::Arc;

use super::db;
use super::types::{CommitVector, ReembedStatus, SpaceInfo};
use crate::vector_store::actor::VectorStore;
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::screening::ExemplarBank;

/// Reports the active embedding space.
#[derive(Debug, Message)]
#[rtype(result = "Result<SpaceInfo, VectorStoreError>")]
pub(crate) struct GetSpace;

/// Records the serving model as the space (bumping the generation and
/// clearing foreign vectors if it changed). Returns the space and the
/// number of vectors cleared.
#[derive(Debug, Message)]
#[rtype(result = "Result<(SpaceInfo, u64), VectorStoreError>")]
pub(crate) struct ReconcileSpace {
    /// The model id.
    pub model_id: String,
    /// Its dimension.
    pub dim: usize,
}

/// Semantic rows without a vector: (key, value JSON).
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<(String, String)>, VectorStoreError>")]
pub(crate) struct ListMissingVectors {
    /// At most this many.
    pub limit: u32,
}

/// Counts semantic rows without a vector.
#[derive(Debug, Message)]
#[rtype(result = "Result<u64, VectorStoreError>")]
pub(crate) struct CountMissingVectors;

/// Stores backfilled vectors (each only if its row is unchanged and the
/// generation is current). Returns how many were stored.
#[derive(Debug, Message)]
#[rtype(result = "Result<u64, VectorStoreError>")]
pub(crate) struct StoreVectors {
    /// (key, value JSON the vector was made from, vector).
    pub rows: Vec<(String, String, CommitVector)>,
}

/// Claims the single-flight re-embed slot with `step` (`applying` or
/// `running`); fails with `ReembedBusy` if taken.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), VectorStoreError>")]
pub(crate) struct BeginReembed {
    /// The step to enter.
    pub step: &'static str,
    /// Rows to embed, if known.
    pub total: u64,
}

/// Records sweep progress, or its end (`Some(step)` of `done`/`failed`).
#[derive(Debug, Message)]
#[rtype(result = "Result<(), VectorStoreError>")]
pub(crate) struct RecordReembed {
    /// Rows embedded so far.
    pub done: u64,
    /// Total to embed.
    pub total: u64,
    /// A final step, when finishing.
    pub finish: Option<&'static str>,
    /// Error, when failed.
    pub error: Option<String>,
}

/// Reports re-embed progress.
#[derive(Debug, Message)]
#[rtype(result = "Result<ReembedStatus, VectorStoreError>")]
pub(crate) struct GetReembedStatus;

impl Handler<GetSpace> for VectorStore {
    type Result = Result<SpaceInfo, VectorStoreError>;

    fn handle(&mut self, _: GetSpace, _: &mut Context<Self>) -> Self::Result {
        Ok(self.space.clone())
    }
}

impl Handler<ReconcileSpace> for VectorStore {
    type Result = AtomicResponse<Self, Result<(SpaceInfo, u64), VectorStoreError>>;

    fn handle(&mut self, msg: ReconcileSpace, _: &mut Context<Self>) -> Self::Result {
        let pool = match self.pool() {
            Ok(pool) => pool,
            Err(e) => return AtomicResponse::new(Box::pin(fut::ready(Err(e)))),
        };
        AtomicResponse::new(Box::pin(
            async move { db::change_space(&pool, &msg.model_id, msg.dim).await }
                .into_actor(self)
                .map(|res, act, _| {
                    if let Ok((space, cleared)) = &res {
                        if *space != act.space {
                            tracing::info!(?space, cleared, "embedding space changed");
                        }
                        act.space = space.clone();
                    }
                    res
                }),
        ))
    }
}

impl Handler<ListMissingVectors> for VectorStore {
    type Result = ResponseActFuture<Self, Result<Vec<(String, String)>, VectorStoreError>>;

    fn handle(&mut self, msg: ListMissingVectors, _: &mut Context<Self>) -> Self::Result {
        self.concurrent(move |pool, _, _| async move {
            db::semantic_missing_vectors(&pool, msg.limit).await
        })
    }
}

impl Handler<CountMissingVectors> for VectorStore {
    type Result = ResponseActFuture<Self, Result<u64, VectorStoreError>>;

    fn handle(&mut self, _: CountMissingVectors, _: &mut Context<Self>) -> Self::Result {
        self.concurrent(|pool, _, _| async move { db::count_semantic_missing(&pool).await })
    }
}

impl Handler<StoreVectors> for VectorStore {
    type Result = AtomicResponse<Self, Result<u64, VectorStoreError>>;

    fn handle(&mut self, msg: StoreVectors, _: &mut Context<Self>) -> Self::Result {
        let space = self.space.clone();
        self.atomic(move |pool, _, _| async move {
            let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
            let mut stored = 0;
            for (key, value_json, vector) in msg.rows {
                if let Some(sig) = vector.signature_in(&space) {
                    if db::store_semantic_vector(&mut tx, &key, &value_json, &vector.vector, &sig)
                        .await?
                    {
                        stored += 1;
                    }
                }
            }
            tx.commit().await?;
            Ok(stored)
        })
    }
}

impl Handler<BeginReembed> for VectorStore {
    type Result = Result<(), VectorStoreError>;

    fn handle(&mut self, msg: BeginReembed, _: &mut Context<Self>) -> Self::Result {
        if self.reembed.is_busy() {
            return Err(VectorStoreError::ReembedBusy(self.reembed.step));
        }
        self.reembed = ReembedStatus {
            step: msg.step,
            done: 0,
            total: msg.total,
            error: None,
        };
        Ok(())
    }
}

impl Handler<RecordReembed> for VectorStore {
    type Result = Result<(), VectorStoreError>;

    fn handle(&mut self, msg: RecordReembed, _: &mut Context<Self>) -> Self::Result {
        self.reembed.done = msg.done;
        self.reembed.total = msg.total;
        if let Some(step) = msg.finish {
            self.reembed.step = step;
            self.reembed.error = msg.error;
        } else if self.reembed.step == "applying" {
            self.reembed.step = "running";
        }
        Ok(())
    }
}

impl Handler<GetReembedStatus> for VectorStore {
    type Result = Result<ReembedStatus, VectorStoreError>;

    fn handle(&mut self, _: GetReembedStatus, _: &mut Context<Self>) -> Self::Result {
        Ok(self.reembed.clone())
    }
}

/// Whether the exemplar bank is embedded in the current space (so the
/// writers' similarity signal is live).
#[derive(Debug, Message)]
#[rtype(result = "Result<bool, VectorStoreError>")]
pub(crate) struct HasExemplarBank;

impl Handler<HasExemplarBank> for VectorStore {
    type Result = Result<bool, VectorStoreError>;

    fn handle(&mut self, _: HasExemplarBank, _: &mut Context<Self>) -> Self::Result {
        Ok(self.screening().bank.is_some())
    }
}

/// Keeps the exemplar bank's vectors (one per exemplar, in bank order) if
/// every one was made in the current space; answers whether it was kept.
#[derive(Debug, Message)]
#[rtype(result = "Result<bool, VectorStoreError>")]
pub(crate) struct StoreExemplarBank {
    /// The vectors, tagged with the generation they were made in.
    pub vectors: Vec<CommitVector>,
}

impl Handler<StoreExemplarBank> for VectorStore {
    type Result = Result<bool, VectorStoreError>;

    fn handle(&mut self, msg: StoreExemplarBank, _: &mut Context<Self>) -> Self::Result {
        let Some(signature) = self.space.signature() else {
            return Ok(false);
        };
        let current = msg
            .vectors
            .iter()
            .all(|v| v.signature_in(&self.space).as_deref() == Some(signature.as_str()));
        if !current || msg.vectors.is_empty() {
            return Ok(false);
        }
        self.exemplar_bank = Some(Arc::new(ExemplarBank {
            signature,
            vectors: msg.vectors.into_iter().map(|v| v.vector.to_vec()).collect(),
        }));
        Ok(true)
    }
}
