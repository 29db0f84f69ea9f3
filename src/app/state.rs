//! [`AppState`]: every handle the daemon runs on, the one value each face
//! (HTTP routes, the operator console, MCP) is handed. Built once by
//! [`crate::startup`].

use std::sync::Arc;

use crate::config::Settings;
use crate::embedder_wiring::EmbeddingRuntime;
use crate::home::DataHome;
use crate::memory_layers::MemoryLayers;
use kirocrew_actors::channel_history::ChannelHistoryHandle;
use kirocrew_actors::consolidator::ConsolidatorHandle;
use kirocrew_actors::hooks::HookRunnerHandle;
use kirocrew_actors::lessons_file::LessonFile;
use kirocrew_actors::security_log::SecurityLogHandle;
use kirocrew_actors::sensitive_paths::SafeReader;
use kirocrew_actors::skills::SkillLedgerHandle;
use kirocrew_actors::transcripts::TranscriptsHandle;
use kirocrew_actors::vector_store::VectorStoreHandle;

/// Shared state every handler can read.
#[derive(Clone)]
pub struct AppState {
    /// The memory store.
    pub store: VectorStoreHandle,
    /// The effective configuration.
    pub settings: Arc<Settings>,
    /// Embedder, download manager and model changes.
    pub embeddings: EmbeddingRuntime,
    /// The Markdown layers, their heartbeat and the migration.
    pub layers: MemoryLayers,
    /// lessons.jsonl: where `POST /api/lessons` writes while memory.db is
    /// unavailable.
    pub lessons_file: LessonFile,
    /// The security event log.
    pub security_log: SecurityLogHandle,
    /// Auth failures, recorded in the security log bounded per source.
    pub auth_failures: super::auth_failures::AuthFailures,
    /// The skill catalog and usage ledger.
    pub skills: SkillLedgerHandle,
    /// Hook rules and script hooks.
    pub hooks: HookRunnerHandle,
    /// The data home.
    pub home: DataHome,
    /// Channel buffers and modes (`/api/channels`).
    pub channels: ChannelHistoryHandle,
    /// The guarded file read (`safe_read_file`, and the audited
    /// `safe_read_file_internal`) for every route or component reading a
    /// path it was handed; its `policy()` answers `is_sensitive`.
    pub safe_reader: SafeReader,
    /// Session transcripts.
    pub transcripts: TranscriptsHandle,
    /// The consolidator (prefs path per 30 messages, history path on idle).
    pub consolidator: ConsolidatorHandle,
    /// The consolidation model and its download (status).
    pub chat_model: crate::consolidator_wiring::ChatModel,
    /// The operator console's sessions and streams (`/api/console`).
    pub console: super::console_hub::ConsoleHub,
    /// Thread-history summaries by the chat model, cached across builds.
    pub thread_compressor: crate::context::ThreadCompressor,
}

impl AppState {
    /// What the context builder reads from.
    pub fn context_sources(&self) -> crate::context::ContextSources {
        crate::context::ContextSources {
            store: self.store.clone(),
            lessons_file: self.lessons_file.clone(),
            files: self.layers.files.clone(),
            hooks: self.hooks.clone(),
            channels: self.channels.clone(),
            transcripts: self.transcripts.clone(),
            skills: self.skills.clone(),
            reader: self.safe_reader.clone(),
            clock: kirocrew_actors::clock::system_clock(),
            settings: crate::context::ContextSettings::from_config(&self.settings, &self.home),
            compressor: Some(self.thread_compressor.clone()),
        }
    }
}
