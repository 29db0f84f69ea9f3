//! The transcripts' error type.

/// Why a transcript could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    /// A session key that cannot name a transcript.
    #[error("invalid session key: {0}")]
    InvalidKey(String),
    /// Turn text that cannot be stored (empty, too long, control characters).
    #[error("invalid turn: {0}")]
    InvalidTurn(String),
    /// The file system refused.
    #[error("transcript I/O failed: {0}")]
    Io(String),
    /// The actor is gone.
    #[error("transcripts unavailable: {0}")]
    Unavailable(String),
}

impl From<actix::MailboxError> for TranscriptError {
    fn from(err: actix::MailboxError) -> Self {
        Self::Unavailable(err.to_string())
    }
}

impl From<std::io::Error> for TranscriptError {
    fn from(err: std::io::Error) -> Self {
        Self::Io(err.to_string())
    }
}
