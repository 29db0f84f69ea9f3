//! [`EmbedderHandle`]: the cloneable front door to the `Embedder` actor.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;

use super::backend::{BackendFactory, EmbedError, EmbedKind, SharedBackend};
use super::cache::EmbedCache;
use super::{
    CloseEmbedder, EmbedTexts, EmbeddedTexts, Embedder, EmbedderStatus, GetBackend,
    GetEmbedderStatus, SwapBackend, MAX_WAIT,
};

/// A cloneable reference to the running `Embedder`.
#[derive(Clone)]
pub struct EmbedderHandle {
    addr: Addr<Embedder>,
}

impl std::fmt::Debug for EmbedderHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbedderHandle").finish_non_exhaustive()
    }
}

fn unavailable(e: MailboxError) -> EmbedError {
    EmbedError::Unavailable(e.to_string())
}

impl EmbedderHandle {
    /// Starts the supervised actor with the backend `factory` builds; the
    /// same factory restores the default after a swap. Must run inside an
    /// actix `System`. Nothing is loaded until first use or
    /// [`Self::start_loading`].
    pub fn start(factory: BackendFactory) -> Self {
        let backend = factory();
        let addr = Supervisor::start(move |_| Embedder {
            backend,
            default_factory: factory,
            cache: EmbedCache::default(),
        });
        Self { addr }
    }

    /// Embeds `texts` (cache first). `NotReady` comes back at once while
    /// the model loads.
    pub async fn embed_texts(
        &self,
        texts: Vec<String>,
        kind: EmbedKind,
    ) -> Result<EmbeddedTexts, EmbedError> {
        self.addr
            .send(EmbedTexts { texts, kind })
            .await
            .map_err(unavailable)?
    }

    /// Embeds one text; returns the model id with the vector.
    pub async fn embed(
        &self,
        text: &str,
        kind: EmbedKind,
    ) -> Result<(String, Arc<Vec<f32>>), EmbedError> {
        let out = self.embed_texts(vec![text.to_owned()], kind).await?;
        let vector = out
            .vectors
            .into_iter()
            .next()
            .ok_or(EmbedError::EmptyText)?;
        Ok((out.model_id, vector))
    }

    /// Backend and cache state.
    pub async fn status(&self) -> Result<EmbedderStatus, EmbedError> {
        self.addr.send(GetEmbedderStatus).await.map_err(unavailable)
    }

    /// Kicks the background load without waiting.
    pub async fn start_loading(&self) -> Result<(), EmbedError> {
        let backend = self.backend().await?;
        let _ = backend.is_ready();
        Ok(())
    }

    /// Waits (on a blocking thread) until the model is ready, failed, or
    /// `timeout` (capped at 10 minutes) passed. For the one-shot CLI, the
    /// apply flow and tests.
    pub async fn wait_ready(&self, timeout: Duration) -> Result<bool, EmbedError> {
        let backend = self.backend().await?;
        let timeout = timeout.min(MAX_WAIT);
        tokio::task::spawn_blocking(move || backend.wait_ready(timeout))
            .await
            .map_err(|e| EmbedError::Unavailable(e.to_string()))
    }

    /// The current backend.
    pub async fn backend(&self) -> Result<SharedBackend, EmbedError> {
        self.addr.send(GetBackend).await.map_err(unavailable)
    }

    /// Installs `backend` (or the default with `None`), closing the old one.
    pub async fn swap_backend(&self, backend: Option<SharedBackend>) -> Result<(), EmbedError> {
        self.addr
            .send(SwapBackend { backend })
            .await
            .map_err(unavailable)
    }

    /// Unloads the model.
    pub async fn close(&self) -> Result<(), EmbedError> {
        self.addr.send(CloseEmbedder).await.map_err(unavailable)
    }
}
