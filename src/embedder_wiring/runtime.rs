//! [`EmbeddingRuntime`]: the embedder, its download and the store's
//! space, as one value the daemon's faces share; and [`EmbeddingStatus`],
//! what `GET /api/memory/embedding-status` answers. Changing the model at
//! run time is [`super::apply`]'s.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use kirocrew_actors::download::{
    DownloadHandle, DownloadSettings, DownloadStatus, DownloadStep, ModelSource,
    DOWNLOAD_ATTEMPTS_BACKGROUND,
};
use kirocrew_actors::embedder::{
    BackendFactory, EmbedderHandle, EmbedderStatus, LlamaConfig, LlamaCppBackend, SharedBackend,
};
use kirocrew_actors::vector_store::{run_backfill, ReembedStatus, VectorStoreHandle};
use serde::Serialize;

use crate::config::Settings;
use crate::home::DataHome;

/// The environment variable that pins the model file.
pub const MODEL_PATH_ENV: &str = "KIROCREW_EMBED_MODEL_PATH";

/// The calibration cache in the models folder (`embedder/calibration.rs`).
pub const CALIBRATION_FILE: &str = "calibration.json";

/// How long boot waits for a model to load before giving up this round.
const LOAD_WAIT: Duration = Duration::from_secs(600);

/// Everything embedding-related the routes and the daemon need.
#[derive(Clone)]
pub struct EmbeddingRuntime {
    /// The embedder.
    pub embedder: EmbedderHandle,
    /// The download manager.
    pub download: DownloadHandle,
    /// The store, with the embedder attached.
    pub store: VectorStoreHandle,
    home: DataHome,
    default_path: PathBuf,
    env_override: bool,
    llama: Arc<LlamaConfig>,
}

/// Where the model file comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelChoice {
    /// The file to load.
    pub path: PathBuf,
    /// Whether `KIROCREW_EMBED_MODEL_PATH` chose it.
    pub env_override: bool,
    /// Whether it is the download target (so a missing file is fetched).
    pub downloadable: bool,
}

/// Resolves the model file (pure, for tests).
pub fn choose_model(
    env_path: Option<&str>,
    config_path: &str,
    download_target: &Path,
) -> ModelChoice {
    match env_path.map(str::trim).filter(|p| !p.is_empty()) {
        Some(p) => ModelChoice {
            path: PathBuf::from(p),
            env_override: true,
            downloadable: false,
        },
        None if !config_path.trim().is_empty() => ModelChoice {
            path: PathBuf::from(config_path.trim()),
            env_override: false,
            downloadable: false,
        },
        None => ModelChoice {
            path: download_target.to_path_buf(),
            env_override: false,
            downloadable: true,
        },
    }
}

/// The model source and the file the configuration serves (env, config,
/// download target), as the daemon resolves them.
pub fn configured_model(home: &DataHome, settings: &Settings) -> (ModelSource, ModelChoice) {
    let source = ModelSource::from_env(
        &settings.memory.embed_model_url,
        &settings.memory.embed_model_sha256,
    );
    let default_path = home.root().join("models").join(&source.file_name);
    let env_path = std::env::var(MODEL_PATH_ENV).ok();
    let choice = choose_model(
        env_path.as_deref(),
        &settings.memory.embed_model_path,
        &default_path,
    );
    (source, choice)
}

impl EmbeddingRuntime {
    /// Starts the embedder and download manager and attaches them to
    /// `store`. Loads nothing and downloads nothing yet (see [`Self::boot`]).
    pub fn start(home: &DataHome, settings: &Settings, store: VectorStoreHandle) -> Self {
        let (source, choice) = configured_model(home, settings);
        let models_dir = home.root().join("models");
        let default_path = models_dir.join(&source.file_name);
        let mut llama = LlamaConfig::new(choice.path.clone());
        llama.n_threads = settings.memory.embed_threads as i32;
        llama.workers = settings.memory.embed_workers as usize;
        llama.profile = settings.memory.embed_model_profile.clone();
        let llama = Arc::new(llama);
        let embedder = EmbedderHandle::start(factory_for(Arc::clone(&llama)));
        let download = DownloadHandle::start(source, DownloadSettings::from_env(models_dir));
        Self {
            embedder: embedder.clone(),
            download,
            store: store.with_embedder(embedder),
            home: home.clone(),
            default_path,
            env_override: choice.env_override,
            llama,
        }
    }

    /// The daemon's background boot task: fetch the model if it is the
    /// download target and missing, load it, record its space, re-embed
    /// rows that lack vectors. Never called by one-shot CLI commands.
    pub async fn boot(self) {
        let path = self.serving_path().await;
        let downloadable = !self.env_override && path == self.default_path;
        if !path.exists() && downloadable {
            match self
                .download
                .ensure_model(DOWNLOAD_ATTEMPTS_BACKGROUND)
                .await
            {
                Ok(installed) => {
                    tracing::info!(path = %installed.display(), "embedding model installed");
                    // A fresh backend: the old one may sit in its cooldown
                    // after failing on the missing file.
                    let _ = self.embedder.swap_backend(None).await;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "embedding model unavailable; memory stays keyword-only");
                    return;
                }
            }
        }
        self.activate().await;
    }

    /// Waits for the serving model, records its space and backfills.
    pub async fn activate(&self) {
        match self.embedder.wait_ready(LOAD_WAIT).await {
            Ok(true) => {}
            Ok(false) | Err(_) => {
                tracing::warn!("embedding model did not load; memory stays keyword-only");
                return;
            }
        }
        let Ok(status) = self.embedder.status().await else {
            return;
        };
        let (Some(model_id), Some(dim)) = (status.backend.model_id, status.backend.dim) else {
            return;
        };
        if let Err(e) = self.store.reconcile_space(&model_id, dim).await {
            tracing::error!(error = %e, "recording the embedding space failed");
            return;
        }
        self.calibrate().await;
        if let Err(e) = run_backfill(&self.store, false).await {
            tracing::warn!(error = %e, "re-embed sweep did not run");
        }
    }

    /// Embeds the rows written while the model could not (busy with its
    /// start-up work, a space change in flight): the write keeps the row
    /// and leaves its vector to "the next sweep", and without one after it
    /// the row would stay keyword-only until a restart or a model change.
    /// Every `every` while the model serves, a count of rows without a
    /// vector; a sweep only when there are some, and not again for the same
    /// count after a sweep that could embed none of them (no retry storm on
    /// a text the model refuses).
    pub async fn catch_up(self, every: Duration) {
        let mut stuck_at: Option<u64> = None;
        loop {
            tokio::time::sleep(every).await;
            let ready = matches!(self.embedder.status().await, Ok(s) if s.backend.state == "ready");
            if !ready {
                continue;
            }
            let missing = match self.store.count_missing_vectors().await {
                Ok(0) | Err(_) => {
                    stuck_at = None;
                    continue;
                }
                Ok(n) => n,
            };
            if stuck_at == Some(missing) {
                continue;
            }
            match run_backfill(&self.store, false).await {
                Ok(0) => stuck_at = Some(missing),
                Ok(_) => stuck_at = None,
                Err(kirocrew_actors::vector_store::VectorStoreError::ReembedBusy(_)) => {}
                Err(e) => {
                    tracing::debug!(error = %e, "catch-up sweep did not run");
                    stuck_at = Some(missing);
                }
            }
        }
    }

    /// Measures the serving model's cosine scale (cached by the model's
    /// fingerprint in `models/calibration.json`) and gives the store its
    /// thresholds. A model that cannot be calibrated keeps the reference
    /// thresholds, with a warning.
    pub async fn calibrate(&self) {
        let cache = self.home.root().join("models").join(CALIBRATION_FILE);
        match self.embedder.calibrate(Some(&cache)).await {
            Ok(calibration) => {
                if let Err(e) = self.store.set_calibration(calibration).await {
                    tracing::warn!(error = %e, "calibration not applied; reference thresholds stay");
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "embedding model not calibrated; reference thresholds stay");
            }
        }
    }

    /// The file the embedder is (or will be) serving.
    pub async fn serving_path(&self) -> PathBuf {
        self.embedder
            .status()
            .await
            .ok()
            .and_then(|s| s.backend.path)
            .map(PathBuf::from)
            .unwrap_or_else(|| self.llama.path.clone())
    }

    /// Whether `KIROCREW_EMBED_MODEL_PATH` pins the model.
    pub fn env_override(&self) -> bool {
        self.env_override
    }

    /// The download target (what an empty path reverts to).
    pub fn default_path(&self) -> &Path {
        &self.default_path
    }

    /// A backend for `path` with the configured threads and profile.
    pub fn backend_for(&self, path: &Path) -> SharedBackend {
        let mut config = (*self.llama).clone();
        config.path = path.to_path_buf();
        Arc::new(LlamaCppBackend::new(config))
    }

    /// The data home.
    pub fn home(&self) -> &DataHome {
        &self.home
    }

    /// The snapshot behind `GET /api/memory/embedding-status`.
    pub async fn status(&self) -> EmbeddingStatus {
        let embedder = self.embedder.status().await.ok();
        let path = self.serving_path().await;
        let download =
            relevant_download(self.download.status().await.ok(), path == self.default_path);
        let reembed = self.store.reembed_status().await.unwrap_or_default();
        let mut status = EmbeddingStatus::assemble(embedder, download, reembed, path.exists());
        status.cpu_module = kirocrew_actors::embedder::kernels::report();
        status.similarity = self.store.similarity().await.ok();
        status
    }

    /// Closes the embedder (shutdown).
    pub async fn close(&self) {
        let _ = self.embedder.close().await;
    }
}

fn factory_for(config: Arc<LlamaConfig>) -> BackendFactory {
    Arc::new(move || Arc::new(LlamaCppBackend::new((*config).clone())) as SharedBackend)
}

/// `GET /api/memory/embedding-status`, in the spec's vocabulary.
#[derive(Debug, Clone, Serialize)]
pub struct EmbeddingStatus {
    /// Always true: embeddings cannot be turned off.
    pub enabled: bool,
    /// The legacy token the shipped frontend checks.
    pub provider: &'static str,
    /// Legacy vocabulary: idle / downloading / done / error.
    pub setup_step: &'static str,
    /// Raw download step.
    pub download_step: DownloadStep,
    /// Current download attempt.
    pub download_attempt: u32,
    /// Bytes downloaded.
    pub bytes_downloaded: u64,
    /// Download size, when known.
    pub bytes_total: Option<u64>,
    /// Model file present or model loaded.
    pub server_healthy: bool,
    /// The serving model.
    pub model_id: Option<String>,
    /// Its vector dimension (once loaded).
    pub model_dim: Option<usize>,
    /// The model file.
    pub model_path: Option<String>,
    /// Load state: idle / loading / ready / failed / closed.
    pub model_state: &'static str,
    /// Weights computed with, once loaded: `stored` or `bf16_from_f16`.
    pub model_weights: Option<&'static str>,
    /// The llama.cpp CPU kernels in use (features of the module picked
    /// for this processor), once loaded.
    pub cpu_kernels: Option<String>,
    /// The llama.cpp CPU module choice: the module, whether it was
    /// verified on this CPU, each candidate's verdict and why the best one
    /// was passed over, if it was (`None` until kernels were needed).
    pub cpu_module: Option<kirocrew_actors::embedder::kernels::KernelReport>,
    /// The similarity thresholds in force and the model calibration behind
    /// them (`None` only when the store could not be asked).
    pub similarity: Option<kirocrew_actors::embedder::Similarity>,
    /// The latest download or load error.
    pub error: Option<String>,
    /// Whether the dashboard should offer Retry.
    pub can_retry: bool,
    /// Background re-embed progress.
    pub reembed: ReembedStatus,
    /// Embedding cache counters.
    pub cache: Option<kirocrew_actors::embedder::CacheStats>,
}

/// The default model's download as far as it concerns the status: all of
/// it when the default file is what serves (or a download of it is under
/// way), nothing when a model from a path serves and the default was never
/// attempted (downloads disabled is no failure of a model nobody asked to
/// download; the dashboard said "download failed (attempt 0)").
fn relevant_download(
    download: Option<DownloadStatus>,
    serving_default: bool,
) -> Option<DownloadStatus> {
    download.filter(|d| serving_default || d.attempt > 0 || d.step != DownloadStep::Failed)
}

impl EmbeddingStatus {
    fn assemble(
        embedder: Option<EmbedderStatus>,
        download: Option<DownloadStatus>,
        reembed: ReembedStatus,
        file_present: bool,
    ) -> Self {
        let backend = embedder.as_ref().map(|e| &e.backend);
        let model_state = backend.map_or("idle", |b| b.state);
        let ready = model_state == "ready";
        let step = download.as_ref().map_or(DownloadStep::Idle, |d| d.step);
        let setup_step = if ready {
            "done"
        } else {
            match step {
                DownloadStep::Ready => "done",
                DownloadStep::Failed => "error",
                DownloadStep::Downloading
                | DownloadStep::Verifying
                | DownloadStep::WaitingRetry => "downloading",
                DownloadStep::Idle if model_state == "failed" => "error",
                DownloadStep::Idle => "idle",
            }
        };
        // A serving model is not in error, whatever the download of the
        // default did (e.g. disabled while a custom model serves); the raw
        // `download_step` still says so.
        let error = if ready {
            None
        } else {
            download
                .as_ref()
                .and_then(|d| d.error.clone())
                .or_else(|| backend.and_then(|b| b.error.clone()))
        };
        Self {
            enabled: true,
            provider: "ollama",
            setup_step,
            download_step: step,
            download_attempt: download.as_ref().map_or(0, |d| d.attempt),
            bytes_downloaded: download.as_ref().map_or(0, |d| d.bytes_downloaded),
            bytes_total: download.as_ref().and_then(|d| d.bytes_total),
            server_healthy: file_present || ready,
            model_id: backend.and_then(|b| b.model_id.clone()),
            model_dim: backend.and_then(|b| b.dim),
            model_path: backend.and_then(|b| b.path.clone()),
            model_state,
            model_weights: backend.and_then(|b| b.weights),
            cpu_kernels: backend.and_then(|b| b.kernels.clone()),
            cpu_module: None,
            similarity: None,
            can_retry: setup_step == "error",
            error,
            reembed,
            cache: embedder.map(|e| e.cache),
        }
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
