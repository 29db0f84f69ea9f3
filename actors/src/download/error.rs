//! The one error type of the `DownloadManager` actor.
//!
//! `Clone` because one failed download is reported to every caller that
//! waited on it (the start-up task and any dashboard click share a transfer).

use super::types::SKIP_DOWNLOAD_ENV;

/// Everything a model download request can fail with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DownloadError {
    /// Downloads are switched off (`KIROCREW_SKIP_MODEL_DOWNLOAD=1`) and the
    /// model is not installed.
    #[error(
        "model download is disabled ({}=1) and the model is not installed",
        SKIP_DOWNLOAD_ENV
    )]
    Disabled,
    /// The server answered with a non-success HTTP status.
    #[error("the model server answered HTTP {0}")]
    Http(u16),
    /// The connection failed or broke off (DNS, TLS, reset, timeout, short body).
    #[error("model transfer failed: {0}")]
    Transport(String),
    /// The finished file is too small to be the model.
    #[error("downloaded model is truncated: {bytes} bytes, expected at least {min}")]
    Truncated {
        /// Bytes received.
        bytes: u64,
        /// The minimum a real model file has.
        min: u64,
    },
    /// The finished file does not hash to the pinned digest.
    #[error("model checksum mismatch: expected sha256 {expected}, got {actual}")]
    ChecksumMismatch {
        /// The pinned digest (lowercase hex).
        expected: String,
        /// The digest of the bytes received (lowercase hex).
        actual: String,
    },
    /// A local file operation failed (staging file, rename, models directory).
    #[error("model file error: {0}")]
    Io(String),
    /// The actor is not running (stopped, or its mailbox is gone).
    #[error("model download manager is unavailable: {0}")]
    Unavailable(String),
}

impl From<actix::MailboxError> for DownloadError {
    fn from(e: actix::MailboxError) -> Self {
        DownloadError::Unavailable(e.to_string())
    }
}
