//! # Embedder: the owner of the embedding backend
//!
//! Owns the shared [`EmbeddingBackend`] (llama.cpp by default) and the
//! embedding cache. Talked to by the `VectorStore` handle (write-time and
//! query embeddings), the embedding endpoints and `kirocrew bench embed`,
//! always through [`EmbedderHandle`].
//!
//! Spec: "In-Process Embedder" (non-blocking load, cooldown, cache, swap
//! seam) and "Embedding backend abstraction".
//!
//! The actor never computes on its own thread: a cache miss is embedded on
//! a blocking thread (the backend's workers do the work), so the mailbox
//! keeps answering — in particular `NotReady` comes back at once while the
//! model loads. The cache is touched only inside the actor, so it needs no
//! lock. `SwapBackend` installs a new backend and closes the old one in the
//! same step, so two models never stay resident together.

mod backend;
mod bf16;
mod cache;
mod handle;
mod llama;
mod pack;
mod profile;
pub mod vector;

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use serde::Serialize;

pub use backend::{
    BackendFactory, BackendStatus, EmbedError, EmbedKind, EmbeddingBackend, SharedBackend,
};
pub use cache::{CacheStats, CACHE_CAPACITY};
pub use handle::EmbedderHandle;
pub use llama::kernels;
pub use llama::{
    bf16_kernels, cpu_backend, model_id_for, CpuBackend, LlamaConfig, LlamaCppBackend, Weights,
    BACKENDS_DIR_ENV, LOAD_COOLDOWN,
};
pub use profile::{known_profiles, EmbeddingProfile, Pooling};

use cache::EmbedCache;

/// The actor.
pub struct Embedder {
    backend: SharedBackend,
    default_factory: BackendFactory,
    cache: EmbedCache,
}

impl Actor for Embedder {
    type Context = Context<Self>;
}

impl Supervised for Embedder {}

/// Embeds texts (cache first, then the backend).
#[derive(Debug, Message)]
#[rtype(result = "Result<EmbeddedTexts, EmbedError>")]
pub struct EmbedTexts {
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
#[rtype(result = "EmbedderStatus")]
pub struct GetEmbedderStatus;

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
#[rtype(result = "()")]
pub struct SwapBackend {
    /// The new backend, or `None` for the default factory's.
    pub backend: Option<SharedBackend>,
}

/// Returns the current backend (for a blocking `wait_ready`).
#[derive(Debug, Message)]
#[rtype(result = "SharedBackend")]
pub struct GetBackend;

/// Unloads the model (shutdown).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct CloseEmbedder;

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
    type Result = MessageResult<GetEmbedderStatus>;

    fn handle(&mut self, _: GetEmbedderStatus, _: &mut Context<Self>) -> Self::Result {
        MessageResult(EmbedderStatus {
            backend: self.backend.status(),
            cache: self.cache.stats(),
        })
    }
}

impl Handler<SwapBackend> for Embedder {
    type Result = ();

    fn handle(&mut self, msg: SwapBackend, _: &mut Context<Self>) {
        let next = msg.backend.unwrap_or_else(|| (self.default_factory)());
        let old = std::mem::replace(&mut self.backend, next);
        old.close();
        tracing::info!(model = %self.backend.model_id(), "embedding backend swapped");
    }
}

impl Handler<GetBackend> for Embedder {
    type Result = MessageResult<GetBackend>;

    fn handle(&mut self, _: GetBackend, _: &mut Context<Self>) -> Self::Result {
        MessageResult(Arc::clone(&self.backend))
    }
}

impl Handler<CloseEmbedder> for Embedder {
    type Result = ();

    fn handle(&mut self, _: CloseEmbedder, _: &mut Context<Self>) {
        self.backend.close();
    }
}

/// How long `wait_ready` may block at most in one call.
pub const MAX_WAIT: Duration = Duration::from_secs(600);
