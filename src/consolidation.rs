//! The consolidator in the service: which model serves it, and starting it
//! subscribed to the heartbeat's idle checks (spec: "Consolidation";
//! issue 14).
//!
//! The model resolves, first match wins: an OpenAI-compatible endpoint
//! when `consolidation.llm_base_url` and `llm_model` are set (env
//! `KIROCREW_LLM_BASE_URL`, `KIROCREW_LLM_MODEL`, `KIROCREW_LLM_API_KEY`);
//! then the local GGUF `consolidation.chat_model_path`
//! (`KIROCREW_CHAT_MODEL_PATH`); then the default chat model file
//! `$KIROCREW_HOME/models/` [`DEFAULT_CHAT_MODEL_FILE`]. Until a local file
//! is there and loaded, runs answer "not ready" and are retried by the
//! next trigger; no message ever waits for the model.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::config::{ConsolidationConfig, Settings};
use crate::home::DataHome;
use kirocrew_actors::clock::SharedClock;
use kirocrew_actors::consolidator::{
    ConsolidationSettings, ConsolidatorConfig, ConsolidatorHandle, PREFS_EVERY,
};
use kirocrew_actors::lessons_file::LessonFile;
use kirocrew_actors::llm::{
    JsonMode, LocalChat, LocalChatConfig, OpenAiClient, OpenAiConfig, SharedLlm,
};
use kirocrew_actors::memory_files::MemoryFilesHandle;
use kirocrew_actors::transcripts::TranscriptsHandle;
use kirocrew_actors::vector_store::VectorStoreHandle;

/// The default local chat model's file name under `models/`.
pub const DEFAULT_CHAT_MODEL_FILE: &str = "consolidation-chat.gguf";

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
pub fn select_model(config: &ConsolidationConfig, models_dir: &std::path::Path) -> ModelSelection {
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

/// The model client for the configuration.
pub fn llm_client(settings: &Settings, home: &DataHome) -> SharedLlm {
    let config = &settings.consolidation;
    match select_model(config, &home.root().join("models")) {
        ModelSelection::Endpoint(endpoint) => Arc::new(OpenAiClient::new(endpoint)),
        ModelSelection::Local { path, .. } => {
            let mut local = LocalChatConfig::new(path);
            local.n_ctx = config.chat_ctx_tokens;
            local.n_threads = config.chat_threads as i32;
            Arc::new(LocalChat::new(local))
        }
    }
}

/// What the consolidator is started with besides the configuration.
pub struct ConsolidatorParts {
    /// Session transcripts.
    pub transcripts: TranscriptsHandle,
    /// The memory store.
    pub store: VectorStoreHandle,
    /// The Markdown layers.
    pub files: MemoryFilesHandle,
    /// The live `memory.migrated`.
    pub migrated: Arc<std::sync::atomic::AtomicBool>,
    /// Time source.
    pub clock: SharedClock,
}

/// Starts the consolidator with `llm`; answers its handle and the sender
/// to subscribe to the heartbeat with. Must run inside an actix `System`.
pub fn start(
    settings: &Settings,
    home: &DataHome,
    parts: ConsolidatorParts,
    llm: SharedLlm,
) -> (
    ConsolidatorHandle,
    tokio::sync::mpsc::Sender<kirocrew_actors::heartbeat::CheckIdleSessions>,
) {
    ConsolidatorHandle::start(ConsolidatorConfig {
        transcripts: parts.transcripts,
        store: parts.store,
        files: parts.files,
        lessons_file: LessonFile::new(home.lessons_file()),
        llm,
        clock: parts.clock,
        migrated: parts.migrated,
        after_consolidation: None,
        settings: ConsolidationSettings {
            prefs_every: PREFS_EVERY,
            max_tokens: settings.consolidation.max_answer_tokens,
            transcript_chars: settings.consolidation.transcript_chars,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> ConsolidationConfig {
        crate::config::load(std::path::Path::new("/nonexistent"), std::iter::empty())
            .unwrap()
            .settings
            .consolidation
    }

    #[test]
    fn endpoint_then_local_path_then_the_default_file() {
        let models = std::path::Path::new("/home/models");
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
}
