//! [`EmbedderHandle`]: the cloneable front door to the `Embedder` actor.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;

use super::actor::Embedder;
use super::backend::{BackendFactory, EmbedError, EmbedKind, SharedBackend};
use super::cache::EmbedCache;
use super::messages::{
    CloseEmbedder, EmbedTexts, EmbeddedTexts, EmbedderStatus, GetEmbedderStatus, StartLoading,
    SwapBackend, WaitReady,
};
use crate::ask::ask;

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
        ask(&self.addr, EmbedTexts { texts, kind }).await
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
        ask(&self.addr, GetEmbedderStatus).await
    }

    /// Kicks the background load without waiting.
    pub async fn start_loading(&self) -> Result<(), EmbedError> {
        ask(&self.addr, StartLoading).await
    }

    /// Waits (on a blocking thread) until the model is ready, failed, or
    /// `timeout` (capped at 10 minutes) passed. For the one-shot CLI, the
    /// apply flow and tests.
    pub async fn wait_ready(&self, timeout: Duration) -> Result<bool, EmbedError> {
        ask(&self.addr, WaitReady { timeout }).await
    }

    /// Installs `backend` (or the default with `None`), closing the old one.
    pub async fn swap_backend(&self, backend: Option<SharedBackend>) -> Result<(), EmbedError> {
        ask(&self.addr, SwapBackend { backend }).await
    }

    /// Unloads the model.
    pub async fn close(&self) -> Result<(), EmbedError> {
        ask(&self.addr, CloseEmbedder).await
    }
}
