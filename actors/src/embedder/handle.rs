//! [`EmbedderHandle`]: the cloneable front door to the `Embedder` actor.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;

use super::actor::Embedder;
use super::backend::{BackendFactory, EmbedError, EmbedKind, SharedBackend};
use super::cache::EmbedCache;
use super::calibration::{fingerprint, measure_probes, probes, Calibration, CosineScale, Probe};
use super::messages::{
    CloseEmbedder, EmbedTexts, EmbeddedTexts, EmbedderStatus, GetEmbedderStatus, StartLoading,
    SwapBackend, WaitReady,
};
use super::vector::cosine;
use crate::ask::ask;

/// The text whose vector identifies a model's behaviour.
const FINGERPRINT_TEXT: &str = "kirocrew calibration fingerprint: the quick brown fox.";

/// The calibrations cached in `path` (none when it is absent or unreadable).
fn read_calibrations(path: &Path) -> Vec<Calibration> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Writes the cache whole, atomically.
fn write_calibrations(path: &Path, all: &[Calibration]) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(all)?;
    crate::atomic_file::write_atomic(path, &bytes)
}

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

    /// Measures the loaded model's cosine scale on the bundled probe set
    /// and moves every similarity threshold onto it (`calibration.rs`).
    /// `cache` is a JSON file of earlier calibrations keyed by the model's
    /// fingerprint: a model seen before is not measured again. A cache that
    /// cannot be read or written is ignored (and logged).
    pub async fn calibrate(&self, cache: Option<&Path>) -> Result<Calibration, EmbedError> {
        let (model_id, probe) = self.embed(FINGERPRINT_TEXT, EmbedKind::Document).await?;
        let fingerprint = fingerprint(&probe);
        let mut known = cache.map(read_calibrations).unwrap_or_default();
        if let Some(found) = known.iter().find(|c| c.fingerprint == fingerprint) {
            return Ok(found.clone());
        }
        let pairs = probes();
        let texts: Vec<String> = pairs
            .iter()
            .flat_map(|p| [p.a.clone(), p.b.clone()])
            .collect();
        let mut vectors = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(32) {
            let out = self
                .embed_texts(chunk.to_vec(), EmbedKind::Document)
                .await?;
            vectors.extend(out.vectors);
        }
        let cosines: Vec<(&Probe, f32)> = pairs
            .iter()
            .zip(vectors.chunks(2))
            .filter_map(|(p, v)| match v {
                [a, b] => Some((p, cosine(a, b))),
                _ => None,
            })
            .collect();
        let (anchors, weak_languages) = measure_probes(&cosines);
        let scale = anchors.filter(CosineScale::in_order).ok_or_else(|| {
            EmbedError::Uncalibrated(format!(
                "{model_id}: paraphrase, related and unrelated probe pairs do not score in that order ({anchors:?})"
            ))
        })?;
        let calibration = Calibration {
            model_id,
            fingerprint,
            pairs: cosines.len(),
            scale,
            weak_languages,
        };
        if let Some(path) = cache {
            known.retain(|c| c.model_id != calibration.model_id);
            known.push(calibration.clone());
            if let Err(e) = write_calibrations(path, &known) {
                tracing::warn!(path = %path.display(), error = %e, "calibration not cached");
            }
        }
        Ok(calibration)
    }

    /// Unloads the model.
    pub async fn close(&self) -> Result<(), EmbedError> {
        ask(&self.addr, CloseEmbedder).await
    }
}
