//! The security log's error type.

/// Why a security event could not be recorded or read.
#[derive(Debug, thiserror::Error)]
pub enum SecurityLogError {
    /// The log file could not be opened, written, rotated or read.
    #[error("security log I/O failed: {0}")]
    Io(String),
    /// The event could not be encoded as JSON.
    #[error("security event could not be encoded: {0}")]
    Encode(String),
    /// The actor is gone (daemon shutting down).
    #[error("security log unavailable: {0}")]
    Unavailable(String),
}

impl From<actix::MailboxError> for SecurityLogError {
    fn from(err: actix::MailboxError) -> Self {
        Self::Unavailable(err.to_string())
    }
}

impl From<std::io::Error> for SecurityLogError {
    fn from(err: std::io::Error) -> Self {
        Self::Io(err.to_string())
    }
}
