//! [`ApiError`]: the one error type of the HTTP layer, and the mapping from
//! every actor error to an HTTP status and a stable, snake_case error code
//! (lessons.jsonl's errors map beside their one route, `http/lessons.rs`).
//!
//! Every error body is `{"error": {"code": "...", "message": "..."}}`. Codes
//! are part of the API: clients branch on them, so they never change meaning.
//! The `From` impls match exhaustively, so a new actor error variant does not
//! compile until it has a status here.
//!
//! 5xx bodies are opaque: a stable code and a generic message naming the
//! request id. Their cause (a database or I/O error's whole source chain,
//! with paths and SQL error text) goes to the log only, at error level with
//! the same request id, so clients learn nothing about files, schema or the
//! machine, and the operator can still find what happened.

pub mod request_id;

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use serde_json::json;

use crate::config::ConfigError;
use crate::migration::MigrationBusy;
use kirocrew_actors::channel_history::ChannelHistoryError;
use kirocrew_actors::consolidator::ConsolidatorError;
use kirocrew_actors::heartbeat::HeartbeatError;
use kirocrew_actors::hooks::HookError;
use kirocrew_actors::memory_files::MemoryFilesError;
use kirocrew_actors::security_log::SecurityLogError;
use kirocrew_actors::sensitive_paths::SafeReadError;
use kirocrew_actors::skills::SkillError;
use kirocrew_actors::transcripts::TranscriptError;
use kirocrew_actors::vector_store::VectorStoreError;

/// An error answered to an HTTP client.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the request could not be read (malformed JSON, bad query string).
    #[error("{message}")]
    BadRequest {
        /// Stable code.
        code: &'static str,
        /// Human-readable detail.
        message: String,
    },
    /// 401: missing or wrong bearer token.
    #[error("{0}")]
    Unauthorized(String),
    /// 403: refused regardless of credentials (e.g. a foreign Host header).
    #[error("{message}")]
    Forbidden {
        /// Stable code.
        code: &'static str,
        /// Human-readable detail.
        message: String,
    },
    /// 404: no such route or resource.
    #[error("{message}")]
    NotFound {
        /// Stable code.
        code: &'static str,
        /// Human-readable detail.
        message: String,
    },
    /// 405: the route exists but not for this method.
    #[error("method {0} is not allowed on this path")]
    MethodNotAllowed(String),
    /// 408: the request body did not arrive within `server.body_timeout_secs`.
    #[error("{0}")]
    RequestTimeout(String),
    /// 409: the request conflicts with the stored state.
    #[error("{message}")]
    Conflict {
        /// Stable code.
        code: &'static str,
        /// Human-readable detail.
        message: String,
    },
    /// 410: the endpoint is retired.
    #[error("{0}")]
    Gone(String),
    /// 413: the body exceeds the configured limit.
    #[error("{0}")]
    PayloadTooLarge(String),
    /// 415: a state-changing request whose body is not JSON.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// 422: well-formed but invalid content.
    #[error("{message}")]
    Validation {
        /// Stable code.
        code: &'static str,
        /// Human-readable detail.
        message: String,
    },
    /// 503: a dependency (an actor, the database) is not available now.
    /// The cause is logged, never answered.
    #[error("{cause}")]
    Unavailable {
        /// Stable code.
        code: &'static str,
        /// What went wrong, for the log only.
        cause: String,
    },
    /// 202, not a failure: the write was flagged on uncertain evidence and
    /// is held in the quarantine for a person to release or drop (issue
    /// 41). The body is `{"outcome": "quarantined", "id", "rule",
    /// "category", "message"}`; it is an `ApiError` so every writer route
    /// answers it from the store's error without a second path.
    #[error("{message}")]
    Quarantined {
        /// The quarantine item's id.
        id: i64,
        /// The rule (or layer) that flagged it.
        rule: &'static str,
        /// The rule's attack category, when it has one.
        category: Option<&'static str>,
        /// Human-readable detail.
        message: String,
    },
    /// 500: our fault. The cause is logged, never answered.
    #[error("{cause}")]
    Internal {
        /// Stable code.
        code: &'static str,
        /// What went wrong, for the log only.
        cause: String,
    },
}

impl ApiError {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::BadRequest { code, .. }
            | ApiError::Forbidden { code, .. }
            | ApiError::NotFound { code, .. }
            | ApiError::Conflict { code, .. }
            | ApiError::Validation { code, .. }
            | ApiError::Unavailable { code, .. }
            | ApiError::Internal { code, .. } => code,
            ApiError::Unauthorized(_) => "unauthorized",
            ApiError::MethodNotAllowed(_) => "method_not_allowed",
            ApiError::RequestTimeout(_) => "request_timeout",
            ApiError::PayloadTooLarge(_) => "payload_too_large",
            ApiError::UnsupportedMediaType(_) => "unsupported_media_type",
            ApiError::Gone(_) => "gone",
            ApiError::Quarantined { .. } => "quarantined",
        }
    }

    /// Whether this is the daemon's fault (a 5xx): its cause is logged,
    /// never shown.
    pub fn is_server_error(&self) -> bool {
        self.status_code().is_server_error()
    }

    /// Shorthand for a 422.
    pub fn validation(code: &'static str, message: impl Into<String>) -> Self {
        ApiError::Validation {
            code,
            message: message.into(),
        }
    }

    /// Shorthand for a 400.
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        ApiError::BadRequest {
            code,
            message: message.into(),
        }
    }

    /// A 500 whose cause is `err` with its whole source chain.
    pub fn internal(code: &'static str, err: &(dyn std::error::Error + 'static)) -> Self {
        ApiError::Internal {
            code,
            cause: cause_chain(err),
        }
    }

    /// A 503 whose cause is `err` with its whole source chain.
    pub fn unavailable(code: &'static str, err: &(dyn std::error::Error + 'static)) -> Self {
        ApiError::Unavailable {
            code,
            cause: cause_chain(err),
        }
    }

    /// The message a client gets: the detail for 4xx; for 5xx a generic
    /// text with the request id, since the detail may name files, SQL or
    /// system errors.
    pub fn public_message(&self, request_id: Option<&str>) -> String {
        // By status, not variant, so a future 5xx variant is opaque too.
        let status = self.status_code();
        if !status.is_server_error() {
            return self.to_string();
        }
        let what = if status == StatusCode::SERVICE_UNAVAILABLE {
            "temporarily unavailable, retry later"
        } else {
            "internal error"
        };
        match request_id {
            Some(id) => format!("{what}; the cause is in the daemon log under request id {id}"),
            None => format!("{what}; the cause is in the daemon log"),
        }
    }
}

/// `err` and each of its sources, joined with ": ". A source whose text its
/// parent already includes (thiserror's `{0}` with `#[from]`) is skipped.
pub fn cause_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let part = cause.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = cause.source();
    }
    text
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::BadRequest { .. } => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden { .. } => StatusCode::FORBIDDEN,
            ApiError::NotFound { .. } => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::RequestTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            ApiError::Conflict { .. } => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::Gone(_) => StatusCode::GONE,
            ApiError::Validation { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal { .. } => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Quarantined { .. } => StatusCode::ACCEPTED,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let status = self.status_code();
        let request_id = request_id::current();
        if status.is_server_error() {
            tracing::error!(
                code = self.code(),
                request_id = request_id.as_deref().unwrap_or("-"),
                cause = %self,
                "request failed"
            );
        }
        if let ApiError::Quarantined {
            id,
            rule,
            category,
            message,
        } = self
        {
            return HttpResponse::Accepted().json(json!({
                "outcome": "quarantined",
                "id": id,
                "rule": rule,
                "category": category,
                "message": message,
            }));
        }
        let mut response = HttpResponse::build(status);
        match self {
            ApiError::Unauthorized(_) => {
                response.insert_header((header::WWW_AUTHENTICATE, "Bearer"));
            }
            // The client is still sending a body nobody will read.
            ApiError::RequestTimeout(_) => {
                response.force_close();
            }
            _ => {}
        }
        let message = self.public_message(request_id.as_deref());
        response.json(json!({"error": {"code": self.code(), "message": message}}))
    }
}

impl From<VectorStoreError> for ApiError {
    fn from(err: VectorStoreError) -> Self {
        let message = err.to_string();
        match err {
            VectorStoreError::InvalidKey(_) => ApiError::validation("invalid_key", message),
            VectorStoreError::KeyNotAllowed { .. } => {
                ApiError::validation("key_not_allowed", message)
            }
            VectorStoreError::InvalidValue(_) => ApiError::validation("invalid_value", message),
            VectorStoreError::ValueTooLarge { .. } => {
                ApiError::validation("value_too_large", message)
            }
            VectorStoreError::InvalidConfidence(_) => {
                ApiError::validation("invalid_confidence", message)
            }
            VectorStoreError::BelowConfidenceThreshold { .. } => {
                ApiError::validation("confidence_below_threshold", message)
            }
            VectorStoreError::InvalidSource(_) => ApiError::validation("invalid_source", message),
            VectorStoreError::InjectionDetected { .. } => {
                ApiError::validation("injection_detected", message)
            }
            VectorStoreError::Quarantined { id, rule, category } => ApiError::Quarantined {
                id,
                rule,
                category,
                message,
            },
            VectorStoreError::QuarantineNotFound(_) => ApiError::NotFound {
                code: "quarantine_not_found",
                message,
            },
            VectorStoreError::ReleaseRefused { .. } => ApiError::Conflict {
                code: "release_refused",
                message,
            },
            VectorStoreError::ConflictSkipped { .. } => ApiError::Conflict {
                code: "conflict_skip",
                message,
            },
            VectorStoreError::NotFound(_) => ApiError::NotFound {
                code: "not_found",
                message,
            },
            VectorStoreError::UserOwned(_) => ApiError::Forbidden {
                code: "user_owned",
                message,
            },
            VectorStoreError::InvalidExport(_) => ApiError::validation("invalid_export", message),
            VectorStoreError::Database(_) | VectorStoreError::Migration(_) => {
                ApiError::internal("database_error", &err)
            }
            VectorStoreError::InvalidText(_) => ApiError::validation("invalid_text", message),
            VectorStoreError::DuplicateEpisode { .. } => ApiError::Conflict {
                code: "duplicate_memory",
                message,
            },
            VectorStoreError::EpisodicFull { .. } => ApiError::Conflict {
                code: "episodic_full",
                message,
            },
            VectorStoreError::EpisodeNotFound(_) => ApiError::NotFound {
                code: "not_found",
                message,
            },
            VectorStoreError::InvalidLesson(_) => ApiError::validation("invalid_lesson", message),
            VectorStoreError::DuplicateLesson { .. } => ApiError::Conflict {
                code: "duplicate_lesson",
                message,
            },
            VectorStoreError::LessonKeyReserved { .. } => {
                ApiError::validation("lesson_key_reserved", message)
            }
            VectorStoreError::ControlCharacter(_) => {
                ApiError::validation("control_characters", message)
            }
            VectorStoreError::ReembedBusy(_) => ApiError::Conflict {
                code: "reembed_in_progress",
                message,
            },
            VectorStoreError::Unavailable(_) => ApiError::unavailable("store_unavailable", &err),
        }
    }
}

impl From<MemoryFilesError> for ApiError {
    fn from(err: MemoryFilesError) -> Self {
        let message = err.to_string();
        match err {
            MemoryFilesError::InvalidText(_) => ApiError::validation("invalid_text", message),
            MemoryFilesError::ControlCharacter(_) => {
                ApiError::validation("control_characters", message)
            }
            MemoryFilesError::EmptyQuery => ApiError::validation("empty_query", message),
            MemoryFilesError::QueryTooLong { .. } => {
                ApiError::validation("query_too_long", message)
            }
            MemoryFilesError::InvalidDays(_) => ApiError::validation("invalid_days", message),
            MemoryFilesError::InvalidKeepDays(_) => {
                ApiError::validation("invalid_keep_days", message)
            }
            MemoryFilesError::Io { .. } => ApiError::internal("memory_files_io", &err),
            MemoryFilesError::Search(_) => ApiError::internal("memory_search_failed", &err),
            MemoryFilesError::Index(_) => ApiError::unavailable("index_unavailable", &err),
            MemoryFilesError::Unavailable(_) => {
                ApiError::unavailable("memory_files_unavailable", &err)
            }
        }
    }
}

impl From<HookError> for ApiError {
    fn from(err: HookError) -> Self {
        let message = err.to_string();
        match err {
            HookError::InvalidRequest(_) => ApiError::validation("invalid_hook_request", message),
            HookError::InvalidConfig(_) => ApiError::validation("invalid_hooks", message),
            HookError::NoSuchHook { .. } => ApiError::NotFound {
                code: "hook_not_found",
                message,
            },
            HookError::Io(_) => ApiError::internal("hooks_io", &err),
            HookError::Unavailable(_) => ApiError::unavailable("hooks_unavailable", &err),
        }
    }
}

impl From<TranscriptError> for ApiError {
    fn from(err: TranscriptError) -> Self {
        let message = err.to_string();
        match err {
            TranscriptError::InvalidKey(_) => ApiError::validation("invalid_session_key", message),
            TranscriptError::InvalidTurn(_) => ApiError::validation("invalid_turn", message),
            TranscriptError::Io(_) => ApiError::internal("transcript_io", &err),
            TranscriptError::Unavailable(_) => {
                ApiError::unavailable("transcripts_unavailable", &err)
            }
        }
    }
}

impl From<ConsolidatorError> for ApiError {
    fn from(err: ConsolidatorError) -> Self {
        let message = err.to_string();
        match err {
            ConsolidatorError::UnknownSession(_) => ApiError::NotFound {
                code: "session_not_found",
                message,
            },
            ConsolidatorError::AlreadyRunning(_) => ApiError::Conflict {
                code: "consolidation_running",
                message,
            },
            ConsolidatorError::Model(_) => ApiError::unavailable("model_unavailable", &err),
            ConsolidatorError::Answer(_) => ApiError::unavailable("model_answer_refused", &err),
            ConsolidatorError::Transcripts(_) => {
                ApiError::unavailable("transcripts_unavailable", &err)
            }
            ConsolidatorError::Files(_) => ApiError::internal("memory_files_io", &err),
            ConsolidatorError::Unavailable(_) => {
                ApiError::unavailable("consolidator_unavailable", &err)
            }
        }
    }
}

impl From<SecurityLogError> for ApiError {
    fn from(err: SecurityLogError) -> Self {
        match err {
            SecurityLogError::Io(_) | SecurityLogError::Encode(_) => {
                ApiError::internal("security_log_io", &err)
            }
            SecurityLogError::Unavailable(_) => {
                ApiError::unavailable("security_log_unavailable", &err)
            }
        }
    }
}

impl From<ChannelHistoryError> for ApiError {
    fn from(err: ChannelHistoryError) -> Self {
        let message = err.to_string();
        match err {
            ChannelHistoryError::InvalidChannelId(_) => {
                ApiError::validation("invalid_channel_id", message)
            }
            ChannelHistoryError::InvalidMessage(_) => {
                ApiError::validation("invalid_message", message)
            }
            ChannelHistoryError::ControlCharacter(_) => {
                ApiError::validation("control_characters", message)
            }
            // The id was valid but its file would land somewhere it must
            // not (a link planted in history/): refused, whoever asks.
            ChannelHistoryError::PathRefused { .. } => ApiError::Forbidden {
                code: "history_path_refused",
                message,
            },
            ChannelHistoryError::Io(_) => ApiError::internal("channel_history_io", &err),
            ChannelHistoryError::Unavailable(_) => {
                ApiError::unavailable("channel_history_unavailable", &err)
            }
        }
    }
}

impl From<HeartbeatError> for ApiError {
    fn from(err: HeartbeatError) -> Self {
        let message = err.to_string();
        match err {
            HeartbeatError::InvalidSetting { .. } => {
                ApiError::validation("invalid_setting", message)
            }
            HeartbeatError::Unavailable(_) => ApiError::unavailable("heartbeat_unavailable", &err),
        }
    }
}

impl From<SkillError> for ApiError {
    fn from(err: SkillError) -> Self {
        let message = err.to_string();
        match err {
            SkillError::InvalidName { .. } => ApiError::validation("invalid_skill_name", message),
            SkillError::NotFound(_) => ApiError::NotFound {
                code: "skill_not_found",
                message,
            },
            SkillError::AlreadyExists(_) => ApiError::Conflict {
                code: "skill_exists",
                message,
            },
            SkillError::NotOwned { .. } => ApiError::Forbidden {
                code: "not_owned",
                message,
            },
            SkillError::HasNestedSkills { .. } => ApiError::Conflict {
                code: "has_nested_skills",
                message,
            },
            SkillError::InvalidContent(_) => ApiError::validation("invalid_skill_content", message),
            SkillError::UnterminatedFrontmatter(_) => {
                ApiError::validation("unterminated_frontmatter", message)
            }
            SkillError::InvalidQuery(_) => ApiError::validation("invalid_query", message),
            SkillError::InvalidToolEvent(_) => ApiError::validation("invalid_tool_event", message),
            SkillError::InjectionBlocked { .. } => {
                ApiError::validation("injection_detected", message)
            }
            SkillError::Quarantined { id, rule, category } => ApiError::Quarantined {
                id,
                rule,
                category,
                message,
            },
            SkillError::ReviewUnavailable { .. } => {
                ApiError::unavailable("quarantine_unavailable", &err)
            }
            SkillError::Io { .. } => ApiError::internal("skills_io", &err),
            SkillError::Unavailable(_) => ApiError::unavailable("skills_unavailable", &err),
        }
    }
}

impl From<SafeReadError> for ApiError {
    /// A path the caller named: a policy refusal is 403 (recorded as
    /// `read_denied` by the reader), a file that is not there or not a
    /// regular file 422; the internal reads' failures are ours.
    fn from(err: SafeReadError) -> Self {
        let message = err.to_string();
        match err {
            SafeReadError::Sensitive { .. } | SafeReadError::PrivateKey(_) => ApiError::Forbidden {
                code: "sensitive_path",
                message,
            },
            SafeReadError::TooLarge { .. } => ApiError::validation("file_too_large", message),
            SafeReadError::NotAFile(_) => ApiError::validation("not_a_file", message),
            SafeReadError::Io { .. } => ApiError::validation("unreadable_file", message),
            SafeReadError::UnknownReadId(_) | SafeReadError::AuditFailed { .. } => {
                ApiError::internal("internal_read_failed", &err)
            }
        }
    }
}

impl From<MigrationBusy> for ApiError {
    fn from(err: MigrationBusy) -> Self {
        ApiError::Conflict {
            code: "migration_in_progress",
            message: err.to_string(),
        }
    }
}

impl ApiError {
    /// A failed config.json update: a value the configuration refuses is
    /// 422 `invalid_setting`; an unreadable or unwritable file is 500.
    pub fn from_config(err: ConfigError) -> Self {
        let message = err.to_string();
        match err {
            ConfigError::UnknownKey(_)
            | ConfigError::WrongType { .. }
            | ConfigError::InvalidValue { .. }
            | ConfigError::Env { .. } => ApiError::validation("invalid_setting", message),
            ConfigError::Io { .. } | ConfigError::Parse { .. } => {
                ApiError::internal("config_write_failed", &err)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("opening /home/u/.kiro/crew/memory.db: {0}")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn cause_chain_names_every_source_once() {
        let err = Outer(std::io::Error::other("disk full"));
        assert_eq!(
            cause_chain(&err),
            "opening /home/u/.kiro/crew/memory.db: disk full"
        );
        #[derive(Debug, thiserror::Error)]
        #[error("write failed")]
        struct Terse(#[source] std::io::Error);
        let err = Terse(std::io::Error::other("disk full"));
        assert_eq!(cause_chain(&err), "write failed: disk full");
    }

    #[test]
    fn server_error_bodies_hide_the_cause() {
        let err = ApiError::internal("database_error", &Outer(std::io::Error::other("x")));
        let message = err.public_message(Some("abc123"));
        assert!(!message.contains("memory.db"), "{message}");
        assert!(message.contains("abc123"), "{message}");
        let err = ApiError::unavailable("not_ready", &Outer(std::io::Error::other("x")));
        assert!(!err.public_message(None).contains("memory.db"));
        let err = ApiError::validation("invalid_key", "key \"X\" is not valid");
        assert_eq!(err.public_message(Some("abc")), "key \"X\" is not valid");
    }
}
