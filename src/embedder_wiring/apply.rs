//! Changing the embedding model at runtime (spec: "Dashboard Enable Flow →
//! POST /api/memory/embedding-model", apply ordering).
//!
//! Each step gates the next, so a failure rolls back instead of
//! half-applying: build the candidate (not serving) → install it, closing
//! the outgoing model in the same step so two models never co-reside →
//! claim the re-embed slot → wait until ready (bounded) → record the new
//! space (bumps the generation, clears old vectors) → verify it → persist
//! config LAST → re-embed in the background. Because config is written last,
//! a failure at any earlier step leaves config naming the previous model,
//! and the rollback reinstalls exactly that model and its space (vector
//! width included).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kirocrew_actors::vector_store::{run_backfill, VectorStoreError};
use serde::Serialize;

use super::runtime::EmbeddingRuntime;

/// Smallest plausible GGUF (the download manager's truncation bound too).
const MIN_MODEL_BYTES: u64 = 1024 * 1024;

/// How long an apply waits for the candidate to load.
const APPLY_WAIT: Duration = Duration::from_secs(600);

/// Why a model change was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// `KIROCREW_EMBED_MODEL_PATH` pins the model.
    #[error(
        "KIROCREW_EMBED_MODEL_PATH is set; it wins at load, so the model cannot be changed here"
    )]
    EnvOverride,
    /// A re-embed or another apply holds the single-flight slot.
    #[error("a re-embed or model change is already running")]
    Busy,
    /// The file is not a usable model.
    #[error("invalid model file: {0}")]
    InvalidModel(String),
    /// The candidate failed after installation; the previous model serves again.
    #[error("model change failed and was rolled back: {0}")]
    RolledBack(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] VectorStoreError),
}

/// What a validation found.
#[derive(Debug, Clone, Serialize)]
pub struct ModelCheck {
    /// The checked file.
    pub path: String,
    /// Its size.
    pub size_bytes: u64,
    /// The model id it would serve under.
    pub model_id: String,
}

/// Checks that `path` is a readable GGUF file of plausible size, without
/// touching the live backend.
///
/// The path comes from an API client and the daemon may read files the
/// client cannot, so a refusal says only "not a readable GGUF model",
/// whatever the reason (missing, a directory, unreadable, too small, wrong
/// magic): no size, no OS error. The reason goes to the log. Only a file
/// that is a GGUF model is described (its size and model id).
pub fn validate_model_file(path: &Path) -> Result<ModelCheck, ApplyError> {
    let refuse = |reason: String| {
        tracing::info!(path = %path.display(), %reason, "model file refused");
        ApplyError::InvalidModel(format!(
            "{} is not a readable GGUF model file",
            path.display()
        ))
    };
    let meta = std::fs::metadata(path).map_err(|e| refuse(e.to_string()))?;
    if !meta.is_file() {
        return Err(refuse("not a regular file".into()));
    }
    if meta.len() < MIN_MODEL_BYTES {
        return Err(refuse(format!(
            "{} bytes, below {MIN_MODEL_BYTES}",
            meta.len()
        )));
    }
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .map_err(|e| refuse(e.to_string()))?;
    if &magic != b"GGUF" {
        return Err(refuse("no GGUF magic".into()));
    }
    Ok(ModelCheck {
        path: path.display().to_string(),
        size_bytes: meta.len(),
        model_id: kirocrew_actors::embedder::model_id_for(path),
    })
}

impl EmbeddingRuntime {
    /// Applies `path` (empty: revert to the default download target).
    /// Returns the check of the model now serving.
    pub async fn apply_model(&self, path: &str) -> Result<ModelCheck, ApplyError> {
        if self.env_override() {
            return Err(ApplyError::EnvOverride);
        }
        let target = if path.trim().is_empty() {
            self.default_path().to_path_buf()
        } else {
            PathBuf::from(path.trim())
        };
        let check = validate_model_file(&target)?;
        match self.store.begin_reembed("applying", 0).await {
            Ok(()) => {}
            Err(VectorStoreError::ReembedBusy(_)) => return Err(ApplyError::Busy),
            Err(e) => return Err(e.into()),
        }
        let previous = self.serving_path().await;
        match self.install(&target, path.trim().is_empty()).await {
            Ok(()) => {
                let store = self.store.clone();
                actix_rt::spawn(async move {
                    if let Err(e) = run_backfill(&store, true).await {
                        tracing::warn!(error = %e, "re-embed after model change failed");
                    }
                });
                tracing::info!(model = %check.model_id, "embedding model changed");
                Ok(check)
            }
            Err(reason) => {
                tracing::warn!(%reason, previous = %previous.display(), "model change failed; rolling back");
                self.rollback(&previous).await;
                self.store
                    .record_reembed(0, 0, Some("failed"), Some(reason.clone()))
                    .await;
                // Vectors cleared by the failed attempt are re-made for
                // the restored model.
                let store = self.store.clone();
                actix_rt::spawn(async move {
                    let _ = run_backfill(&store, false).await;
                });
                Err(ApplyError::RolledBack(reason))
            }
        }
    }

    async fn install(&self, target: &Path, revert: bool) -> Result<(), String> {
        self.embedder
            .swap_backend(Some(self.backend_for(target)))
            .await
            .map_err(|e| e.to_string())?;
        if !self
            .embedder
            .wait_ready(APPLY_WAIT)
            .await
            .map_err(|e| e.to_string())?
        {
            let status = self.embedder.status().await.map_err(|e| e.to_string())?;
            return Err(status
                .backend
                .error
                .unwrap_or_else(|| "the model did not become ready in time".into()));
        }
        let status = self.embedder.status().await.map_err(|e| e.to_string())?;
        let (Some(model_id), Some(dim)) = (status.backend.model_id, status.backend.dim) else {
            return Err("the loaded model reports no id or dimension".into());
        };
        let (space, _) = self
            .store
            .reconcile_space(&model_id, dim)
            .await
            .map_err(|e| e.to_string())?;
        if space.model_id.as_deref() != Some(model_id.as_str()) || space.dim != Some(dim) {
            return Err("the store did not record the new embedding space".into());
        }
        // The new model's thresholds (the reference ones until measured).
        self.calibrate().await;
        let value = if revert {
            String::new()
        } else {
            target.display().to_string()
        };
        crate::config::set_value(self.home().root(), "memory.embed_model_path", &value)
            .map_err(|e| format!("persisting config: {e}"))?;
        Ok(())
    }

    async fn rollback(&self, previous: &Path) {
        if self
            .embedder
            .swap_backend(Some(self.backend_for(previous)))
            .await
            .is_err()
        {
            return;
        }
        if !matches!(self.embedder.wait_ready(APPLY_WAIT).await, Ok(true)) {
            tracing::error!(path = %previous.display(), "the previous model did not reload");
            return;
        }
        if let Ok(status) = self.embedder.status().await {
            if let (Some(model_id), Some(dim)) = (status.backend.model_id, status.backend.dim) {
                let _ = self.store.reconcile_space(&model_id, dim).await;
                self.calibrate().await;
            }
        }
    }
}
