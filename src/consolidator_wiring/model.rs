//! The model behind consolidation in the service: which backend serves,
//! the default chat model's background download, and the status the
//! dashboard and `kirocrew consolidation status` read (spec:
//! "Consolidation"; issue 14).
//!
//! The backend resolves, first match wins: an OpenAI-compatible endpoint
//! when `consolidation.llm_base_url` and `llm_model` are set; then the
//! local GGUF `consolidation.chat_model_path`; then the default chat model
//! `$KIROCREW_HOME/models/consolidation-chat.gguf`. Only that last file is
//! downloaded (SmolLM2-135M-Instruct Q4_1, sha256-pinned, through the same
//! download manager as the embedding model: staged, verified, resumed,
//! retried), and only while `consolidation.chat_model_download` is on and
//! `KIROCREW_SKIP_MODEL_DOWNLOAD` is not set. Until the file is installed
//! and loaded, runs answer "not ready" and the next trigger tries the same
//! messages again: no message ever waits for the model.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use kirocrew_actors::download::{
    DownloadHandle, DownloadSettings, DownloadStatus, DownloadStep, DOWNLOAD_ATTEMPTS_BACKGROUND,
};
use kirocrew_actors::llm::{
    chat_model_source, JsonMode, LocalChat, LocalChatConfig, ModelInfo, OpenAiClient, OpenAiConfig,
    SharedLlm, DEFAULT_CHAT_MODEL_FILE,
};
use serde::Serialize;

use crate::config::{ConsolidationConfig, Settings};
use crate::home::DataHome;

/// What status, `doctor` and the README say of the default chat model.
pub const TEST_GRADE_NOTE: &str = "the default SmolLM2-135M is test grade: it invents facts (consolidation keeps only what the conversation supports, so it also finds little); set consolidation.chat_model_path to a stronger instruct GGUF (e.g. Qwen2.5-1.5B-Instruct Q4_K_M) or consolidation.llm_base_url + llm_model for an endpoint";

/// Which backend the configuration selects (pure, for tests).
#[derive(Debug, Clone, PartialEq)]
pub enum ModelSelection {
    /// The OpenAI-compatible endpoint.
    Endpoint(OpenAiConfig),
    /// A local GGUF (configured, or the default file).
    Local {
        /// The file.
        path: PathBuf,
        /// Whether it is the default (downloaded) model.
        default: bool,
    },
}

/// Resolves the backend from `consolidation.*` (see the module docs).
pub fn select_model(config: &ConsolidationConfig, models_dir: &Path) -> ModelSelection {
    let base = config.llm_base_url.trim();
    if !base.is_empty() && !config.llm_model.trim().is_empty() {
        let mut endpoint = OpenAiConfig::new(base, config.llm_model.trim());
        endpoint.api_key = Some(config.llm_api_key.clone()).filter(|k| !k.is_empty());
        endpoint.timeout = Duration::from_secs(config.llm_timeout_secs);
        endpoint.retries = config.llm_retries;
        endpoint.max_response_bytes = config.llm_max_response_bytes;
        endpoint.json_mode = JsonMode::parse(&config.llm_json_mode).unwrap_or_default();
        return ModelSelection::Endpoint(endpoint);
    }
    match config.chat_model_path.trim() {
        "" => ModelSelection::Local {
            path: models_dir.join(DEFAULT_CHAT_MODEL_FILE),
            default: true,
        },
        path => ModelSelection::Local {
            path: PathBuf::from(path),
            default: false,
        },
    }
}

/// The consolidation model: the client the consolidator asks, and the
/// default model's download when that is what serves.
#[derive(Clone)]
pub struct ChatModel {
    llm: SharedLlm,
    /// The local backend, when one serves (warmed after a download).
    local: Option<LocalChat>,
    /// The default model's download manager, when it may download.
    download: Option<DownloadHandle>,
    /// Load the local model when the daemon starts (consolidation is on),
    /// so the first run (a forced one too) does not find it unloaded.
    load_at_start: bool,
    /// The default (test-grade) model serves.
    test_grade: bool,
}

/// `model` in `GET /api/memory/consolidation`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatModelStatus {
    /// What serves and its state (`downloading` while the default model
    /// is being fetched).
    #[serde(flatten)]
    pub info: ModelInfo,
    /// The default model's download, when the daemon may fetch it.
    pub download: Option<DownloadStatus>,
    /// What to know about the model: [`TEST_GRADE_NOTE`] for the default.
    pub note: Option<&'static str>,
}

impl ChatModel {
    /// The model for the configuration; starts the download manager of the
    /// default model (nothing is fetched before [`Self::boot`]). Must run
    /// inside an actix `System`.
    pub fn start(settings: &Settings, home: &DataHome) -> Self {
        let config = &settings.consolidation;
        let models_dir = home.root().join("models");
        match select_model(config, &models_dir) {
            ModelSelection::Endpoint(endpoint) => Self {
                llm: Arc::new(OpenAiClient::new(endpoint)),
                local: None,
                download: None,
                load_at_start: false,
                test_grade: false,
            },
            ModelSelection::Local { path, default } => {
                let mut local = LocalChatConfig::new(path);
                local.n_ctx = config.chat_ctx_tokens;
                local.n_threads = config.chat_threads as i32;
                let local = LocalChat::new(local);
                let download =
                    (default && config.enabled && config.chat_model_download).then(|| {
                        DownloadHandle::start(
                            chat_model_source(&config.chat_model_url, &config.chat_model_sha256),
                            DownloadSettings::from_env(models_dir),
                        )
                    });
                Self {
                    llm: Arc::new(local.clone()),
                    local: Some(local),
                    download,
                    load_at_start: config.enabled,
                    test_grade: default,
                }
            }
        }
    }

    /// The client the consolidator asks.
    pub fn llm(&self) -> SharedLlm {
        Arc::clone(&self.llm)
    }

    /// The daemon's background task: fetch (or verify) the default model,
    /// then load it so the next run finds it ready; a configured file (or a
    /// default one that may not be downloaded but is there) is loaded at
    /// once. Never called by one-shot commands; does nothing for an
    /// endpoint.
    pub async fn boot(self) {
        let Some(download) = &self.download else {
            if let Some(local) = self.local.as_ref().filter(|_| self.load_at_start) {
                local.start_loading();
            }
            return;
        };
        match download.ensure_model(DOWNLOAD_ATTEMPTS_BACKGROUND).await {
            Ok(path) => {
                tracing::info!(path = %path.display(), "consolidation chat model installed");
                if let Some(local) = &self.local {
                    local.start_loading();
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "consolidation chat model unavailable; consolidation waits for it");
            }
        }
    }

    /// The snapshot behind `model` in the status.
    pub async fn status(&self) -> ChatModelStatus {
        let download = match &self.download {
            Some(d) => d.status().await.ok(),
            None => None,
        };
        ChatModelStatus {
            info: with_download(self.llm.info(), download.as_ref()),
            download,
            note: self.test_grade.then_some(TEST_GRADE_NOTE),
        }
    }

    /// Stops the local model's worker (shutdown).
    pub fn close(&self) {
        if let Some(local) = &self.local {
            local.close();
        }
    }
}

/// The model's state with the download folded in (pure): a model whose
/// file is missing is `downloading` while a transfer or a retry wait runs,
/// and carries the download's error (a refused checksum, disabled
/// downloads) while it has one.
pub fn with_download(mut info: ModelInfo, download: Option<&DownloadStatus>) -> ModelInfo {
    let Some(download) = download else {
        return info;
    };
    if info.state != "missing" {
        return info;
    }
    if matches!(
        download.step,
        DownloadStep::Downloading | DownloadStep::Verifying | DownloadStep::WaitingRetry
    ) {
        info.state = "downloading".into();
    }
    if info.error.is_none() {
        info.error = download.error.clone();
    }
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> ConsolidationConfig {
        crate::config::load(Path::new("/nonexistent"), std::iter::empty())
            .unwrap()
            .settings
            .consolidation
    }

    #[test]
    fn endpoint_then_local_path_then_the_default_file() {
        let models = Path::new("/home/models");
        assert_eq!(
            select_model(&config(), models),
            ModelSelection::Local {
                path: models.join(DEFAULT_CHAT_MODEL_FILE),
                default: true
            }
        );
        let mut c = config();
        c.chat_model_path = "/m/chat.gguf".into();
        assert_eq!(
            select_model(&c, models),
            ModelSelection::Local {
                path: "/m/chat.gguf".into(),
                default: false
            }
        );
        c.llm_base_url = "http://127.0.0.1:9/v1".into();
        c.llm_model = "qwen".into();
        c.llm_api_key = "k".into();
        c.llm_json_mode = "json_object".into();
        let ModelSelection::Endpoint(e) = select_model(&c, models) else {
            panic!("endpoint expected");
        };
        assert_eq!(e.model, "qwen");
        assert_eq!(e.api_key.as_deref(), Some("k"));
        assert_eq!(e.json_mode, JsonMode::Object);
    }

    #[test]
    fn the_defaults_pin_the_builtin_chat_model() {
        let c = config();
        assert!(c.chat_model_download);
        assert_eq!(
            c.chat_model_url,
            kirocrew_actors::llm::DEFAULT_CHAT_MODEL_URL
        );
        assert_eq!(
            c.chat_model_sha256,
            kirocrew_actors::llm::DEFAULT_CHAT_MODEL_SHA256
        );
    }

    fn missing() -> ModelInfo {
        ModelInfo {
            backend: "llama_cpp",
            model: DEFAULT_CHAT_MODEL_FILE.into(),
            state: "missing".into(),
            error: None,
        }
    }

    fn download(step: DownloadStep, error: Option<&str>) -> DownloadStatus {
        DownloadStatus {
            step,
            error: error.map(str::to_owned),
            attempt: 1,
            max_attempts: 6,
            bytes_downloaded: 0,
            bytes_total: None,
            path: None,
        }
    }

    #[test]
    fn the_download_shows_in_the_model_state() {
        assert_eq!(with_download(missing(), None), missing());
        let busy = with_download(missing(), Some(&download(DownloadStep::Downloading, None)));
        assert_eq!(busy.state, "downloading");
        let retry = with_download(
            missing(),
            Some(&download(
                DownloadStep::WaitingRetry,
                Some("model checksum mismatch"),
            )),
        );
        assert_eq!(retry.state, "downloading");
        assert_eq!(retry.error.as_deref(), Some("model checksum mismatch"));
        let failed = with_download(
            missing(),
            Some(&download(DownloadStep::Failed, Some("disabled"))),
        );
        assert_eq!(failed.state, "missing");
        assert_eq!(failed.error.as_deref(), Some("disabled"));
        // An installed model's own state wins.
        let mut ready = missing();
        ready.state = "ready".into();
        let shown = with_download(ready.clone(), Some(&download(DownloadStep::Ready, None)));
        assert_eq!(shown, ready);
    }
}
