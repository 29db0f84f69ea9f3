//! The `Embedder` protocol: one struct per request, each with its thin
//! handler, and the plain data they answer with.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use serde::Serialize;

use super::actor::Embedder;
use super::backend::{BackendStatus, EmbedError, EmbedKind, SharedBackend};
use super::cache::CacheStats;

/// Embeds texts (cache first, then the backend).
#[derive(Debug, Message)]
#[rtype(result = "Result<EmbeddedTexts, EmbedError>")]
pub(crate) struct EmbedTexts {
    /// Texts, each non-empty.
    pub texts: Vec<String>,
    /// Query or document.
    pub kind: EmbedKind,
}

/// Vectors with the model that made them.
#[derive(Debug, Clone)]
pub struct EmbeddedTexts {
    /// The backend's model id (the vector space).
    pub model_id: String,
    /// One vector per text, in order.
    pub vectors: Vec<Arc<Vec<f32>>>,
}

/// Reports the backend and cache state.
#[derive(Debug, Message)]
#[rtype(result = "Result<EmbedderStatus, EmbedError>")]
pub(crate) struct GetEmbedderStatus;

/// Backend and cache state.
#[derive(Debug, Clone, Serialize)]
pub struct EmbedderStatus {
    /// The backend's state.
    pub backend: BackendStatus,
    /// Cache counters.
    pub cache: CacheStats,
}

/// Replaces the backend (`None` restores the default), closing the old one.
#[derive(Message)]
#[rtype(result = "Result<(), EmbedError>")]
pub(crate) struct SwapBackend {
    /// The new backend, or `None` for the default factory's.
    pub backend: Option<SharedBackend>,
}

/// Kicks the backend's background load without waiting.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), EmbedError>")]
pub(crate) struct StartLoading;

/// Waits until the model is ready or failed, or `timeout` passed; answers
/// whether it is ready. The wait runs on a blocking thread, not the actor.
#[derive(Debug, Message)]
#[rtype(result = "Result<bool, EmbedError>")]
pub(crate) struct WaitReady {
    /// At most this long (capped at [`MAX_WAIT`]).
    pub timeout: Duration,
}

/// Unloads the model (shutdown).
#[derive(Debug, Message)]
#[rtype(result = "Result<(), EmbedError>")]
pub(crate) struct CloseEmbedder;

impl Handler<EmbedTexts> for Embedder {
    type Result = ResponseActFuture<Self, Result<EmbeddedTexts, EmbedError>>;

    fn handle(&mut self, msg: EmbedTexts, _: &mut Context<Self>) -> Self::Result {
        if let Some(i) = msg.texts.iter().position(|t| t.trim().is_empty()) {
            tracing::debug!(index = i, "refusing to embed empty text");
            return Box::pin(fut::ready(Err(EmbedError::EmptyText)));
        }
        if !self.backend.is_ready() {
            return Box::pin(fut::ready(Err(EmbedError::NotReady)));
        }
        let model_id = self.backend.model_id();
        let kind = msg.kind;
        let mut vectors: Vec<Option<Arc<Vec<f32>>>> = msg
            .texts
            .iter()
            .map(|t| self.cache.get(t, &model_id, kind))
            .collect();
        let missing: Vec<usize> = (0..vectors.len())
            .filter(|&i| vectors[i].is_none())
            .collect();
        if missing.is_empty() {
            let vectors = vectors.into_iter().flatten().collect();
            return Box::pin(fut::ready(Ok(EmbeddedTexts { model_id, vectors })));
        }
        let texts: Vec<String> = missing.iter().map(|&i| msg.texts[i].clone()).collect();
        let backend = Arc::clone(&self.backend);
        let job = tokio::task::spawn_blocking(move || {
            let out = backend.embed_batch(&texts, kind);
            (texts, out)
        });
        Box::pin(job.into_actor(self).map(move |joined, act, _| {
            let (texts, result) =
                joined.map_err(|e| EmbedError::Inference(format!("embed task failed: {e}")))?;
            let computed = result?;
            for ((index, text), vector) in missing.into_iter().zip(texts).zip(computed) {
                let vector = Arc::new(vector);
                // A backend swapped in meanwhile has another id; the
                // key keeps the two apart.
                act.cache
                    .put(text, model_id.clone(), kind, Arc::clone(&vector));
                vectors[index] = Some(vector);
            }
            Ok(EmbeddedTexts {
                model_id,
                vectors: vectors.into_iter().flatten().collect(),
            })
        }))
    }
}

impl Handler<GetEmbedderStatus> for Embedder {
    type Result = Result<EmbedderStatus, EmbedError>;

    fn handle(&mut self, _: GetEmbedderStatus, _: &mut Context<Self>) -> Self::Result {
        Ok(EmbedderStatus {
            backend: self.backend.status(),
            cache: self.cache.stats(),
        })
    }
}

impl Handler<SwapBackend> for Embedder {
    type Result = Result<(), EmbedError>;

    fn handle(&mut self, msg: SwapBackend, _: &mut Context<Self>) -> Self::Result {
        let next = msg.backend.unwrap_or_else(|| (self.default_factory)());
        let old = std::mem::replace(&mut self.backend, next);
        old.close();
        tracing::info!(model = %self.backend.model_id(), "embedding backend swapped");
        Ok(())
    }
}

impl Handler<StartLoading> for Embedder {
    type Result = Result<(), EmbedError>;

    fn handle(&mut self, _: StartLoading, _: &mut Context<Self>) -> Self::Result {
        // Asking a lazy backend whether it is ready starts its load.
        let _ = self.backend.is_ready();
        Ok(())
    }
}

impl Handler<WaitReady> for Embedder {
    type Result = ResponseFuture<Result<bool, EmbedError>>;

    fn handle(&mut self, msg: WaitReady, _: &mut Context<Self>) -> Self::Result {
        let backend = Arc::clone(&self.backend);
        let timeout = msg.timeout.min(MAX_WAIT);
        Box::pin(async move {
            tokio::task::spawn_blocking(move || backend.wait_ready(timeout))
                .await
                .map_err(|e| EmbedError::Unavailable(e.to_string()))
        })
    }
}

impl Handler<CloseEmbedder> for Embedder {
    type Result = Result<(), EmbedError>;

    fn handle(&mut self, _: CloseEmbedder, _: &mut Context<Self>) -> Self::Result {
        self.backend.close();
        Ok(())
    }
}

/// How long `wait_ready` may block at most in one call.
pub const MAX_WAIT: Duration = Duration::from_secs(600);
