//! [`ApiError`]: the one error type of the HTTP layer, and the mapping from
//! every actor error to an HTTP status and a stable, snake_case error code.
//!
//! Every error body is `{"error": {"code": "...", "message": "..."}}`. Codes
//! are part of the API: clients branch on them, so they never change meaning.
//! The `From` impls match exhaustively, so a new actor error variant does not
//! compile until it has a status here.

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use serde_json::json;

use crate::config::ConfigError;
use crate::migration::MigrationBusy;
use kirocrew_actors::heartbeat::HeartbeatError;
use kirocrew_actors::memory_files::MemoryFilesError;
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
    /// 422: well-formed but invalid content.
    #[error("{message}")]
    Validation {
        /// Stable code.
        code: &'static str,
        /// Human-readable detail.
        message: String,
    },
    /// 503: a dependency (an actor, the database) is not available now.
    #[error("{message}")]
    Unavailable {
        /// Stable code.
        code: &'static str,
        /// Human-readable detail.
        message: String,
    },
    /// 500: our fault. The detail is logged; the client gets the message.
    #[error("{message}")]
    Internal {
        /// Stable code.
        code: &'static str,
        /// Human-readable detail.
        message: String,
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
            ApiError::PayloadTooLarge(_) => "payload_too_large",
            ApiError::Gone(_) => "gone",
        }
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
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::BadRequest { .. } => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden { .. } => StatusCode::FORBIDDEN,
            ApiError::NotFound { .. } => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Conflict { .. } => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Gone(_) => StatusCode::GONE,
            ApiError::Validation { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal { .. } => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let status = self.status_code();
        if status.is_server_error() {
            tracing::error!(code = self.code(), error = %self, "request failed");
        }
        let mut response = HttpResponse::build(status);
        if let ApiError::Unauthorized(_) = self {
            response.insert_header((header::WWW_AUTHENTICATE, "Bearer"));
        }
        response.json(json!({"error": {"code": self.code(), "message": self.to_string()}}))
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
            VectorStoreError::ConflictSkipped { .. } => ApiError::Conflict {
                code: "conflict_skip",
                message,
            },
            VectorStoreError::NotFound(_) => ApiError::NotFound {
                code: "not_found",
                message,
            },
            VectorStoreError::InvalidExport(_) => ApiError::validation("invalid_export", message),
            VectorStoreError::Database(_) | VectorStoreError::Migration(_) => ApiError::Internal {
                code: "database_error",
                message,
            },
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
            VectorStoreError::ReembedBusy(_) => ApiError::Conflict {
                code: "reembed_in_progress",
                message,
            },
            VectorStoreError::Unavailable(_) => ApiError::Unavailable {
                code: "store_unavailable",
                message,
            },
        }
    }
}

impl From<MemoryFilesError> for ApiError {
    fn from(err: MemoryFilesError) -> Self {
        let message = err.to_string();
        match err {
            MemoryFilesError::InvalidText(_) => ApiError::validation("invalid_text", message),
            MemoryFilesError::EmptyQuery => ApiError::validation("empty_query", message),
            MemoryFilesError::QueryTooLong { .. } => {
                ApiError::validation("query_too_long", message)
            }
            MemoryFilesError::InvalidDays(_) => ApiError::validation("invalid_days", message),
            MemoryFilesError::InvalidKeepDays(_) => {
                ApiError::validation("invalid_keep_days", message)
            }
            MemoryFilesError::Io { .. } => ApiError::Internal {
                code: "memory_files_io",
                message,
            },
            MemoryFilesError::Index(_) => ApiError::Unavailable {
                code: "index_unavailable",
                message,
            },
            MemoryFilesError::Unavailable(_) => ApiError::Unavailable {
                code: "memory_files_unavailable",
                message,
            },
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
            HeartbeatError::Unavailable(_) => ApiError::Unavailable {
                code: "heartbeat_unavailable",
                message,
            },
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
            ConfigError::Io { .. } | ConfigError::Parse { .. } => ApiError::Internal {
                code: "config_write_failed",
                message,
            },
        }
    }
}
