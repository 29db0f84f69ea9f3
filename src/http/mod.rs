//! The HTTP surface: one file per resource, each with a `config_*` function
//! that registers its routes. Routes talk to actors only through their
//! handles and answer errors only through [`ApiError`].
//!
//! Every request passes the guard ([`auth`]: Host, and for state-changing
//! requests Origin and a JSON content type), a body deadline
//! ([`body_timeout`]) and gets a request id ([`request_id`]); everything
//! under `/api` also needs the bearer token. `/healthz` and `/readyz` need
//! no token (systemd and probes have none), but a proper Host header.

pub mod auth;
pub mod body_timeout;
pub mod channels;
pub mod dashboard;
pub mod extract;
pub mod health;
pub mod hooks;
pub mod lessons;
pub mod linger;
pub mod memory_consolidation;
pub mod memory_embeddings;
pub mod memory_episodic;
pub mod memory_events;
pub mod memory_files;
pub mod memory_semantic;
pub mod memory_stats;
pub mod memory_transfer;
pub mod request_id;
pub mod rules;
pub mod security;
pub mod session_import;
pub mod sessions;
pub mod skills;

use std::sync::Arc;

use actix_web::{web, HttpRequest, HttpResponse, Resource};

use crate::config::Settings;
use crate::embedding::EmbeddingRuntime;
use crate::error::ApiError;
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
    pub chat_model: crate::consolidation::ChatModel,
    /// The operator console's sessions and streams (`/api/console`).
    pub console: crate::console::ConsoleHub,
    /// Thread-history summaries by the chat model, cached across builds.
    pub thread_compressor: crate::context::ThreadCompressor,
}

impl AppState {
    /// What the context builder reads from.
    pub fn context_sources(&self) -> crate::context::ContextSources {
        crate::context::ContextSources {
            store: self.store.clone(),
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

/// A resource whose unsupported methods answer a JSON 405 (actix's default
/// is an empty body).
pub fn resource(path: &str) -> Resource {
    web::resource(path).default_service(web::to(method_not_allowed))
}

async fn method_not_allowed(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError::MethodNotAllowed(req.method().to_string()))
}

/// The JSON 404 for paths no route matches.
pub async fn not_found(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotFound {
        code: "route_not_found",
        message: format!("no route for {} {}", req.method(), req.path()),
    })
}

/// Registers every `/api` resource.
pub fn config_api(cfg: &mut web::ServiceConfig, settings: &Settings) {
    memory_semantic::config_semantic(cfg);
    memory_events::config_events(cfg);
    memory_stats::config_stats(cfg);
    memory_transfer::config_transfer(cfg);
    memory_transfer::config_import(cfg, settings.server.import_limit_bytes);
    memory_embeddings::config_embeddings(cfg);
    memory_episodic::config_episodic(cfg);
    lessons::config_lessons(cfg);
    memory_files::config_memory_files(cfg);
    skills::config_skills(cfg);
    security::config_security(cfg);
    hooks::config_hooks(cfg);
    sessions::config_sessions(cfg);
    session_import::config_session_import(cfg, settings.server.import_limit_bytes);
    memory_consolidation::config_consolidation(cfg);
    channels::config_channels(cfg);
}
