//! The hook runner's error type.

/// Why a hook request could not be served.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// The request itself is invalid (empty tool name, text too long).
    #[error("{0}")]
    InvalidRequest(String),
    /// New hook configuration failed validation; nothing was changed.
    #[error("invalid hook configuration: {0}")]
    InvalidConfig(String),
    /// No script hook with that index for that event.
    #[error("no script hook #{index} for event {event}")]
    NoSuchHook {
        /// Event asked for.
        event: String,
        /// Index asked for.
        index: usize,
    },
    /// hooks.json could not be written.
    #[error("hook configuration could not be saved: {0}")]
    Io(String),
    /// The actor is gone (daemon shutting down).
    #[error("hook runner unavailable: {0}")]
    Unavailable(String),
}

impl From<actix::MailboxError> for HookError {
    fn from(err: actix::MailboxError) -> Self {
        Self::Unavailable(err.to_string())
    }
}
